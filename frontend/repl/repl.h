// The interactive REPL: prompts, blocks ending at a blank line, values echoed,
// errors printed without losing the session, meta-commands.
#pragma once

#include <istream>
#include <ostream>

namespace tsl {

class CompilationUnit;

struct ReplOptions {
  bool prompts = true;  // false when input is not a terminal (tests)
};

// Runs a REPL session reading `in` until end of input or :quit. Returns the exit status.
int run_repl(CompilationUnit& unit, std::istream& in, std::ostream& out, std::ostream& err,
             ReplOptions options = {});

}  // namespace tsl
