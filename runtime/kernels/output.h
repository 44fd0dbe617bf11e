// Where `print` writes: std::cout by default; the REPL and tests point it at their
// own stream so that program output and echoed values interleave in order.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/tensor/ivalue.h"

namespace tsl {

std::ostream& program_output();
// Sets the stream `print` writes to (nullptr restores std::cout); returns the old one.
std::ostream* set_program_output(std::ostream* out);

// Note [Top-level assignments survive errors]
// A top-level statement runs as one compiled graph whose outputs become globals when
// it ends. A loop or branch that fails or is interrupted (Ctrl-C) half way would lose
// every assignment it made, where Python keeps them: `n` counted to 1000 before the
// interrupt is 1000 afterwards. So inside a compound top-level statement each
// assignment to a variable also runs PublishGlobal(slot, value), which stores the value
// in the statement's slot for that variable, in the sink the CompilationUnit sets for
// the statement; when the statement fails, the stored values become the globals, then
// the error is reported. It costs a store per assignment: `for i in range(N): n += 1`
// at top level went from 21 to 35 ns per iteration (two assignments, i and n, on the
// 2-vCPU AVX-512 VM); nothing in functions.
struct PublishedGlobals {
  explicit PublishedGlobals(size_t n) : values(n), stored(n, 0) {}
  std::vector<IValue> values;  // per slot
  std::vector<char> stored;    // whether the slot was assigned
};
// Sets the sink of PublishGlobal (nullptr: none); returns the old one.
PublishedGlobals* set_published_globals(PublishedGlobals* sink);

}  // namespace tsl
