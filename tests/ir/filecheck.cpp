// The FileCheck subset of filecheck.h: directives are read from the check text, then
// matched in order against the output's lines.
#include "tests/ir/filecheck.h"

#include <vector>

namespace tsl::testing {
namespace {

enum class Kind { Check, Next, Not, Label };

struct Directive {
  Kind kind;
  std::string pattern;  // whitespace-normalized
  size_t line;          // 1-based line in the check text
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Trims the ends and turns each run of blanks into one space.
std::string normalize(std::string_view s) {
  std::string out;
  bool blank = false;
  for (char c : s) {
    if (is_blank(c)) {
      blank = true;
      continue;
    }
    if (blank && !out.empty()) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

const char* name_of(Kind k) {
  switch (k) {
    case Kind::Check:
      return "CHECK";
    case Kind::Next:
      return "CHECK-NEXT";
    case Kind::Not:
      return "CHECK-NOT";
    case Kind::Label:
      return "CHECK-LABEL";
  }
  return "?";
}

std::vector<Directive> parse_directives(std::string_view check_text) {
  static const std::pair<const char*, Kind> kPrefixes[] = {{"CHECK-NEXT:", Kind::Next},
                                                           {"CHECK-NOT:", Kind::Not},
                                                           {"CHECK-LABEL:", Kind::Label},
                                                           {"CHECK:", Kind::Check}};
  std::vector<Directive> out;
  std::vector<std::string_view> lines = split_lines(check_text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    size_t hash = l.find('#');
    if (hash == std::string_view::npos) continue;
    std::string_view rest = l.substr(hash + 1);
    while (!rest.empty() && is_blank(rest.front())) rest.remove_prefix(1);
    for (const auto& [prefix, kind] : kPrefixes) {
      if (rest.starts_with(prefix)) {
        out.push_back({kind, normalize(rest.substr(std::string_view(prefix).size())), i + 1});
        break;
      }
    }
  }
  return out;
}

class Checker {
 public:
  Checker(std::string_view check_text, std::string_view output)
      : directives_(parse_directives(check_text)) {
    for (std::string_view l : split_lines(output)) lines_.push_back(normalize(l));
    output_ = std::string(output);
  }

  std::string run() {
    if (directives_.empty()) return "no CHECK directives found";
    std::vector<const Directive*> nots;
    for (const Directive& d : directives_) {
      if (d.pattern.empty()) return where(d) + " has an empty pattern";
      if (d.kind == Kind::Not) {
        nots.push_back(&d);
        continue;
      }
      Pos from = pos_;
      std::string error = match(d);
      if (!error.empty()) return error;
      if (std::string e = check_nots(nots, from, start_); !e.empty()) return e;
      nots.clear();
    }
    return check_nots(nots, pos_, {lines_.size(), 0});
  }

 private:
  struct Pos {
    size_t line = 0;
    size_t col = 0;
  };

  std::string where(const Directive& d) const {
    return std::string(name_of(d.kind)) + " at check line " + std::to_string(d.line) + " (`" +
           d.pattern + "`)";
  }

  std::string failure(const std::string& what) const {
    return what + "\n--- output ---\n" + output_;
  }

  // Finds a positive directive's pattern and moves past it.
  std::string match(const Directive& d) {
    if (d.kind == Kind::Next) {
      if (!matched_once_) return failure(where(d) + ": no previous match to follow");
      size_t line = last_line_ + 1;
      size_t col = line < lines_.size() ? lines_[line].find(d.pattern) : std::string::npos;
      if (col == std::string::npos) {
        std::string found = line < lines_.size() ? "`" + lines_[line] + "`" : "the end";
        return failure(where(d) + ": not on the line after the previous match; found " + found);
      }
      return accept(line, col, d);
    }
    for (size_t line = pos_.line; line < lines_.size(); ++line) {
      size_t from = line == pos_.line ? pos_.col : 0;
      size_t col = lines_[line].find(d.pattern, from);
      if (col != std::string::npos) return accept(line, col, d);
    }
    return failure(where(d) + ": not found after output line " + std::to_string(pos_.line + 1));
  }

  std::string accept(size_t line, size_t col, const Directive& d) {
    start_ = {line, col};
    pos_ = {line, col + d.pattern.size()};
    last_line_ = line;
    matched_once_ = true;
    return "";
  }

  // No CHECK-NOT pattern may occur in [from, to).
  std::string check_nots(const std::vector<const Directive*>& nots, Pos from, Pos to) const {
    for (const Directive* d : nots) {
      for (size_t line = from.line; line <= to.line && line < lines_.size(); ++line) {
        std::string_view text = lines_[line];
        size_t begin = line == from.line ? from.col : 0;
        size_t end = line == to.line ? to.col : text.size();
        if (begin >= end) continue;
        if (text.substr(begin, end - begin).find(d->pattern) != std::string_view::npos) {
          return failure(where(*d) + ": found on output line " + std::to_string(line + 1) + ": `" +
                         lines_[line] + "`");
        }
      }
    }
    return "";
  }

  std::vector<Directive> directives_;
  std::vector<std::string> lines_;
  std::string output_;
  Pos pos_;
  Pos start_;
  size_t last_line_ = 0;
  bool matched_once_ = false;
};

}  // namespace

std::string filecheck(std::string_view check_text, std::string_view output) {
  return Checker(check_text, output).run();
}

}  // namespace tsl::testing
