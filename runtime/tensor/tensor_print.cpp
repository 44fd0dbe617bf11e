// Tensor printing (placeholder until the PyTorch-format printer lands).
#include "runtime/tensor/tensor_print.h"

namespace tsl {

PrintOptions& print_options() {
  static PrintOptions options;
  return options;
}

std::string format_tensor(const Tensor& t) { return "tensor(<" + shape_str(t.sizes()) + ">)"; }

}  // namespace tsl
