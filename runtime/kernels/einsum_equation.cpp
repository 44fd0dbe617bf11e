// Parsing einsum equations; see einsum_equation.h.
#include "runtime/kernels/einsum_equation.h"

#include <algorithm>
#include <cctype>

#include "runtime/tensor/error.h"

namespace tsl {
namespace {

int subscript_of(char c) {
  return std::isupper(static_cast<unsigned char>(c)) ? c - 'A' : c - 'a' + 26;
}

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Reads one term from `text` (offset `base` in the whole equation, for messages):
// letters, spaces and one "...". `who` names the term ("operand 0", "output").
std::vector<int> parse_term(std::string_view text, size_t base, const std::string& who,
                            bool output) {
  std::vector<int> term;
  bool ellipsis = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (ellipsis) {
        TSL_ERROR("einsum(): found '.' for ", who,
                  output ? " but an ellipsis (...) was already found"
                         : " for which an ellipsis was already found");
      }
      TSL_CHECK(i + 2 < text.size() && text[i + 1] == '.' && text[i + 2] == '.',
                "einsum(): found '.' for ", who, " that is not part of any ellipsis",
                output ? " (...)" : "");
      ellipsis = true;
      term.push_back(kEllipsis);
      i += 2;
      continue;
    }
    TSL_CHECK(is_letter(c), "einsum(): invalid subscript given at index ", base + i,
              " in the equation string, subscripts must be in [a-zA-Z]");
    term.push_back(subscript_of(c));
  }
  return term;
}

// The implicit output: "..." when an operand has one, then the letters that appear
// exactly once, in order (A-Z before a-z).
std::vector<int> implicit_output(const std::vector<std::vector<int>>& operands) {
  int counts[kEinsumLetters] = {};
  bool ellipsis = false;
  for (const auto& term : operands) {
    for (int s : term) {
      if (s == kEllipsis)
        ellipsis = true;
      else
        ++counts[s];
    }
  }
  std::vector<int> out;
  if (ellipsis) out.push_back(kEllipsis);
  for (int s = 0; s < kEinsumLetters; ++s) {
    if (counts[s] == 1) out.push_back(s);
  }
  return out;
}

void check_output(const EinsumEquation& e) {
  bool seen[kEinsumLetters] = {};
  for (int s : e.output) {
    if (s == kEllipsis) continue;
    TSL_CHECK(!seen[s], "einsum(): output subscript ", einsum_letter(s),
              " appears more than once in the output");
    seen[s] = true;
    bool found = false;
    for (const auto& term : e.operands)
      found |= std::find(term.begin(), term.end(), s) != term.end();
    TSL_CHECK(found, "einsum(): output subscript ", einsum_letter(s),
              " does not appear in the equation for any input operand");
  }
}

}  // namespace

char einsum_letter(int s) { return static_cast<char>(s < 26 ? 'A' + s : 'a' + (s - 26)); }

EinsumEquation parse_einsum_equation(std::string_view equation, bool checked_output) {
  EinsumEquation e;
  size_t arrow = equation.find("->");
  std::string_view lhs = equation.substr(0, arrow);
  size_t start = 0;
  for (;;) {
    size_t comma = lhs.find(',', start);
    std::string_view text =
        lhs.substr(start, comma == std::string_view::npos ? comma : comma - start);
    e.operands.push_back(
        parse_term(text, start, "operand " + std::to_string(e.operands.size()), false));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (arrow == std::string_view::npos) {
    e.output = implicit_output(e.operands);
    return e;
  }
  e.output = parse_term(equation.substr(arrow + 2), arrow + 2, "output", true);
  if (checked_output) check_output(e);
  return e;
}

std::string einsum_equation_str(const EinsumEquation& e) {
  auto term = [](const std::vector<int>& t) {
    std::string out;
    for (int s : t) out += s == kEllipsis ? std::string("...") : std::string(1, einsum_letter(s));
    return out;
  };
  std::string out;
  for (size_t i = 0; i < e.operands.size(); ++i) out += (i ? "," : "") + term(e.operands[i]);
  return out + "->" + term(e.output);
}

}  // namespace tsl
