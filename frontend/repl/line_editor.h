// Line editing for the interactive REPL on a terminal: libedit (BSD-licensed, the
// library LLDB uses) with history across sessions, Ctrl-R, tab completion and
// auto-indent. See Note [Line editing] in line_editor.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tsl {

class CompilationUnit;

class LineEditor {
 public:
  enum class Status { Line, EndOfInput, Interrupted };

  // An editor on the terminal, or null where the REPL reads plain lines: stdin or stdout
  // is not a terminal, TERM is unset or "dumb", TSL_LINE_EDITING=0, or the build has no
  // libedit.
  static std::unique_ptr<LineEditor> open(CompilationUnit& unit);
  virtual ~LineEditor() = default;

  // Reads one line (without its newline) after `prompt`, with `indent` already typed.
  // Interrupted: Ctrl-C (the line is dropped); EndOfInput: Ctrl-D on an empty line.
  virtual Status read(const std::string& prompt, const std::string& indent, std::string& line) = 0;
  // Adds an entered line to the history (written to the history file as it goes).
  virtual void remember(const std::string& line) = 0;
  // What a paste of several lines brought after the line read() returned (its first
  // line): the text that follows it, which the REPL takes as typed (Note [Pasting a
  // block] in line_editor.cpp). Empty when the line was typed; cleared by the call.
  virtual std::string take_paste() = 0;
};

// What TAB offers for `before` (the line up to the cursor): the word being completed
// starts at `start`, and each candidate replaces it. Variables, functions, modules,
// keywords and builtins; after `torch.`, `F.`, `math.` or a module's name, its members;
// after any other expression's `.` (`xs[0].`, `f(x).`), the members of its static type
// (member_names in emitter.h), found without running it; inside a call, its keyword arguments
// (`reduction=`); meta-commands after `:`, and file paths after `:load `. Sorted,
// without duplicates.
struct Completions {
  size_t start = 0;
  std::vector<std::string> candidates;
};
Completions complete(CompilationUnit& unit, const std::string& before);

// Waits until stdin is readable, with SIGINT unblocked only while waiting (Note [Ctrl-C
// at the prompt] in repl.cpp); false when Ctrl-C came first (the flag is cleared).
bool wait_for_input();

// The indentation the next line of a block starts with: the last line's, one level
// deeper after a line ending in ':'.
std::string next_indent(const std::string& last_line);

}  // namespace tsl
