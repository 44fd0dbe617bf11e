// The subscripts of an einsum equation ('ij,jk->ik', '...ij->...ji', the implicit form
// 'ij,jk'), parsed with PyTorch's checks and messages. The CPU kernel reads them, and
// einsum's gradient rule (ir/autodiff) writes the equations of the gradients.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tsl {

// A subscript: a letter as 0..51 (A-Z, then a-z, the order of an implicit output), or
// kEllipsis for "...".
constexpr int kEllipsis = -1;
constexpr int kEinsumLetters = 52;

struct EinsumEquation {
  std::vector<std::vector<int>> operands;  // one term per operand
  std::vector<int> output;                 // as written, or the implicit output
};

// Parses `equation`. With `checked_output` the output follows einsum's rules (each
// subscript at most once, each found in an operand); einsum_backward's output may
// repeat a subscript (a diagonal) or hold one no operand has (a broadcast).
EinsumEquation parse_einsum_equation(std::string_view equation, bool checked_output);

// The equation in its explicit form: "ij,jk->ik".
std::string einsum_equation_str(const EinsumEquation& e);

// The letter of subscript `s` (not kEllipsis).
char einsum_letter(int s);

}  // namespace tsl
