// Tensors printed exactly as PyTorch prints them (torch/_tensor_str.py's rules):
// precision 4, shared width per tensor, scientific notation when the range calls for
// it, summarised with `...` above 1000 elements, and the dtype / device /
// requires_grad / grad_fn suffixes.
#pragma once

#include <string>

#include "runtime/tensor/tensor.h"

namespace tsl {

struct PrintOptions {
  int precision = 4;
  int64_t threshold = 1000;  // summarise tensors with more elements than this
  int64_t edgeitems = 3;     // elements shown at each end of a summarised dim
  int linewidth = 80;
  // -1: choose as PyTorch does; 0: never scientific; 1: always.
  int sci_mode = -1;
};

PrintOptions& print_options();

// `tensor([1., 2.])`, `tensor([1, 2])`, `tensor(3.5000, dtype=torch.float64)`,
// `tensor([], size=(0, 3))`, `tensor([0.5], requires_grad=True)`.
std::string format_tensor(const Tensor& t);

}  // namespace tsl
