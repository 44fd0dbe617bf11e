// Source lines, ranges and the rendering of located errors.
#include "ir/source.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string_view>

namespace tsl {
namespace {

// The byte offset of code point `col` in a UTF-8 line (continuation bytes are 10xxxxxx).
size_t byte_offset_of_col(std::string_view line, uint32_t col) {
  size_t i = 0;
  uint32_t c = 0;
  while (i < line.size() && c < col) {
    ++i;
    while (i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) ++i;
    ++c;
  }
  return i;
}

}  // namespace

Source::Source(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n')
      line_starts_.push_back(i + 1);
    else if (text_[i] == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n'))
      line_starts_.push_back(i + 1);
  }
}

std::string_view Source::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  size_t start = line_starts_[line - 1];
  size_t end = line < line_starts_.size() ? line_starts_[line] : text_.size();
  std::string_view s(text_.data() + start, end - start);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  if (line == 1 && s.starts_with("\xEF\xBB\xBF")) s.remove_prefix(3);  // UTF-8 BOM
  return s;
}

SourceRange SourceRange::to(const SourceRange& other) const {
  SourceRange r = *this;
  if (!other.valid()) return r;
  if (!valid()) return other;
  r.end_line = other.end_line;
  r.end_col = other.end_col;
  return r;
}

std::string SourceRange::location() const {
  if (!valid()) return "";
  return source->name() + ":" + std::to_string(line) + ":" + std::to_string(col + 1);
}

std::string SourceRange::excerpt() const {
  if (!valid()) return "";
  std::string_view text = source->line_text(line);
  // A very long line (generated code, a pasted list) shows a window of it around
  // the caret, cut ends marked "...", so the caret is on the screen.
  constexpr uint32_t kMaxColumns = 160, kBefore = 60, kWindow = 140;
  uint32_t columns = 0;
  for (unsigned char ch : text) columns += (ch & 0xC0) != 0x80;
  uint32_t lo = 0, hi = columns;
  if (columns > kMaxColumns) {
    lo = col > kBefore ? col - kBefore : 0;
    hi = std::min(columns, lo + kWindow);
    lo = hi - std::min(hi, kWindow);
  }
  size_t first = byte_offset_of_col(text, lo), last_byte = byte_offset_of_col(text, hi);
  std::string shown = (lo > 0 ? "..." : "") + std::string(text.substr(first, last_byte - first)) +
                      (hi < columns ? "..." : "");
  // Tabs are kept in the caret line so that the caret lines up under the code.
  size_t start = byte_offset_of_col(text, col);
  std::string caret = lo > 0 ? "   " : "";
  for (size_t i = first; i < start && i < text.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(text[i]);
    if ((ch & 0xC0) == 0x80) continue;
    caret += text[i] == '\t' ? '\t' : ' ';
  }
  caret += '^';
  uint32_t last = end_line == line ? end_col : static_cast<uint32_t>(columns);
  for (uint32_t c = col + 1; c < last && c < hi; ++c) caret += '~';
  return "    " + shown + "\n    " + caret + "\n";
}

SourceError::SourceError(Kind kind, SourceRange range, std::string message,
                         std::vector<TracebackFrame> traceback)
    : Error(message),
      kind_(kind),
      range_(std::move(range)),
      message_(std::move(message)),
      traceback_(std::move(traceback)) {
  refresh();
}

void SourceError::add_note(SourceRange range, std::string text) {
  notes_.emplace_back(std::move(range), std::move(text));
  refresh();
}

void SourceError::push_frame(TracebackFrame frame) {
  traceback_.insert(traceback_.begin(), std::move(frame));
  refresh();
}

std::string SourceError::render() const { return rendered_; }

void SourceError::refresh() {
  std::string out;
  if (!traceback_.empty()) {
    out += "Traceback (most recent call last):\n";
    for (const TracebackFrame& f : traceback_) {
      out += "  " + (f.call_site.valid() ? f.call_site.location() : std::string("<unknown>")) +
             ", in " + f.function + "\n";
      if (f.call_site.valid()) out += f.call_site.excerpt();
    }
  }
  std::string loc = range_.location();
  out += (loc.empty() ? "" : loc + ": ") + "error: " + message_ + "\n";
  out += range_.excerpt();
  for (const auto& [r, text] : notes_) {
    std::string nloc = r.location();
    out += (nloc.empty() ? "" : nloc + ": ") + "note: " + text + "\n";
    out += r.excerpt();
  }
  rendered_ = std::move(out);
}

void warning(const SourceRange& range, const std::string& message) {
  // Each warning once per process: a loop or a recompiled function repeats none.
  static std::mutex mu;
  static std::set<std::string> said;
  std::string loc = range.location();
  std::string text = (loc.empty() ? "" : loc + ": ") + "warning: " + message + "\n";
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!said.insert(text).second) return;
  }
  text += range.excerpt();
  std::fputs(for_stderr(text).c_str(), stderr);
}

bool colors_on(int fd) {
  static const bool allowed = [] {
    const char* no_color = std::getenv("NO_COLOR");
    const char* term = std::getenv("TERM");
    return (!no_color || !*no_color) && term && *term && std::string_view(term) != "dumb";
  }();
  if (fd != 1 && fd != 2) return allowed && ::isatty(fd);
  static const bool out = allowed && ::isatty(1), err = allowed && ::isatty(2);
  return fd == 1 ? out : err;
}

std::string colored_diagnostics(const std::string& text) {
  static constexpr const char* kReset = "\033[0m";
  std::string out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    bool newline = end < text.size();
    // `LOCATION: KIND: message` or `KIND: message`.
    struct Kind {
      const char* word;
      const char* color;
    };
    static constexpr Kind kKinds[] = {{"internal error: ", "\033[1;31m"},
                                      {"error: ", "\033[1;31m"},
                                      {"warning: ", "\033[1;35m"},
                                      {"note: ", "\033[1;36m"}};
    bool done = false;
    for (const Kind& k : kKinds) {
      // KIND at the start, or after a location (no spaces in it) and ": ".
      size_t word = line.rfind(k.word, 0) == 0 ? 0 : line.find(std::string(": ") + k.word);
      if (word == std::string::npos) continue;
      if (word > 0) {
        if (line.find(' ') < word) continue;
        word += 2;
      }
      std::string w = k.word;
      out += (word > 0 ? "\033[1m" + line.substr(0, word) + kReset : std::string()) + k.color +
             w.substr(0, w.size() - 1) + kReset + " \033[1m" + line.substr(word + w.size()) +
             kReset;
      done = true;
      break;
    }
    if (!done) {
      bool caret =
          line.find('^') != std::string::npos && line.find_first_not_of(" ^~") == std::string::npos;
      out += caret ? "\033[32m" + line + kReset : line;
    }
    if (newline) out += '\n';
  }
  return out;
}

std::string for_stderr(const std::string& text) {
  return colors_on(2) ? colored_diagnostics(text) : text;
}

void compile_error(const SourceRange& range, std::string message) {
  throw SourceError(SourceError::Kind::Compile, range, std::move(message));
}

void runtime_error(const SourceRange& range, std::string message) {
  throw SourceError(SourceError::Kind::Runtime, range, std::move(message));
}

}  // namespace tsl
