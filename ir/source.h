// Source text, ranges into it, and user errors that point at a range: the
// `file:line:col: error: message`, source line and caret of LANGUAGE.md §10.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor/error.h"

namespace tsl {

// One source text: a file, `-c` code, one REPL input, a stdlib module.
class Source {
 public:
  Source(std::string name, std::string text);
  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // Line `line` (1-based) without its line end; "" past the end.
  std::string_view line_text(uint32_t line) const;
  uint32_t num_lines() const { return static_cast<uint32_t>(line_starts_.size()); }

 private:
  std::string name_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

using SourcePtr = std::shared_ptr<const Source>;

// A range of source: lines are 1-based, columns 0-based and counted in code points
// (ANTLR's convention). The end is exclusive. An empty range (no source) prints no
// location.
struct SourceRange {
  SourcePtr source;
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t end_line = 0;
  uint32_t end_col = 0;

  bool valid() const { return source != nullptr && line > 0; }
  // The range from the start of this one to the end of `other`.
  SourceRange to(const SourceRange& other) const;
  // "file:3:5" (1-based column), or "" without a source.
  std::string location() const;
  // The source line, then a caret line marking the range ("    ^~~~"), each ending
  // in a newline; "" without a source. A line of more than 160 columns shows 140 of
  // them around the caret, cut ends marked "...".
  std::string excerpt() const;
};

// One TSL frame of a runtime traceback: the call site in the caller.
struct TracebackFrame {
  std::string function;  // "<module>" for top-level code
  SourceRange call_site;
};

// A user error with a location: compile errors (exit status 2) and runtime errors
// (exit status 1). `message` is the bare message; `what()` is the full report.
class SourceError : public Error {
 public:
  enum class Kind { Compile, Runtime };

  SourceError(Kind kind, SourceRange range, std::string message,
              std::vector<TracebackFrame> traceback = {});

  Kind kind() const { return kind_; }
  const SourceRange& range() const { return range_; }
  const std::string& message() const { return message_; }
  const std::vector<TracebackFrame>& traceback() const { return traceback_; }
  // Further notes printed after the main error ("note: previous definition here").
  void add_note(SourceRange range, std::string text);
  const std::vector<std::pair<SourceRange, std::string>>& notes() const { return notes_; }

  // Builds the full report: the traceback (outermost call first), then
  // `file:line:col: error: message`, the line and the caret, then the notes.
  std::string render() const;

 private:
  Kind kind_;
  SourceRange range_;
  std::string message_;
  std::vector<TracebackFrame> traceback_;
  std::vector<std::pair<SourceRange, std::string>> notes_;
  std::string rendered_;
  void refresh();

 public:
  const char* what() const noexcept override { return rendered_.c_str(); }
  // Adds an outer frame (the interpreter unwinding through a call).
  void push_frame(TracebackFrame frame);
};

// Prints `file:line:col: warning: message`, the line and a caret to stderr, once per
// process for each distinct warning. Warnings never change what a program computes.
void warning(const SourceRange& range, const std::string& message);

// Note [Colors]
// Diagnostics and the REPL's prompt are colored as compilers color theirs (the
// location bold, `error:` red, `warning:` magenta, `note:` cyan, the message bold,
// the caret line green; the prompt green), on a terminal only: the stream is a tty,
// TERM is not `dumb`, and NO_COLOR is unset or empty (no-color.org). Pipes, files and
// the tests that read them get plain text.
// Whether file descriptor `fd` gets colors (asked once per fd).
bool colors_on(int fd);
// `text` (diagnostics as SourceError::render writes them) with ANSI colors.
std::string colored_diagnostics(const std::string& text);
// `text` colored when stderr gets colors.
std::string for_stderr(const std::string& text);

[[noreturn]] void compile_error(const SourceRange& range, std::string message);
[[noreturn]] void runtime_error(const SourceRange& range, std::string message);

}  // namespace tsl
