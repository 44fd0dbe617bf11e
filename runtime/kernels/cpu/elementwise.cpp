// CPU elementwise kernels: PyTorch's type promotion shared by every elementwise
// kernel, and the one registration function that lists the elementwise_*.cpp files.
#include <optional>

#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/kernel.h"

namespace tsl {

// Defined in elementwise_unary.cpp, elementwise_binary.cpp and elementwise_fill_copy.cpp.
void register_cpu_unary_kernels();
void register_cpu_binary_kernels();
void register_cpu_fill_copy_kernels();

namespace cpu {
namespace {

// Note [Type promotion]
// PyTorch's result_type ranks operands in three groups: tensors with dims, 0-dim
// tensors, and wrapped numbers (Python numbers given for a tensor, `x * 2.0`). Within
// a group dtypes promote as usual (bool < int64 < float32 < float64). A lower group
// only matters when its category (bool < integral < floating) is higher than the
// result so far: then a 0-dim tensor brings its own dtype and a wrapped number the
// default dtype of its category (a Python float counts as float32). So
// float32[3] + float64 0-dim -> float32, int64[3] + float64 0-dim -> float64,
// int64[3] * 2.5 -> float32, bool[3] + 1 -> int64.
using Slot = std::optional<DType>;

void update(Slot& slot, DType t) { slot = slot ? promote_types(*slot, t) : t; }

Slot combine_categories(Slot higher, Slot lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_floating(*higher)) return higher;
  if (*higher == DType::Bool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}

}  // namespace

DType result_type(std::initializer_list<const Tensor*> operands) {
  Slot dim_result, zero_dim_result, wrapped_result;
  for (const Tensor* t : operands) {
    if (t == nullptr || !t->defined()) continue;
    DType d = t->dtype();
    if (t->is_wrapped_number()) {
      update(wrapped_result, is_floating(d) ? DType::Float32 : d);
    } else if (t->dim() == 0) {
      update(zero_dim_result, d);
    } else {
      update(dim_result, d);
    }
  }
  Slot result = combine_categories(dim_result, combine_categories(zero_dim_result, wrapped_result));
  TSL_INTERNAL_ASSERT(result.has_value(), "result_type: no tensor operands");
  return *result;
}

Tensor to_dtype_copy(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = Tensor::empty(t.sizes(), dtype, t.device());
  copy_into(out, t);
  return out;
}

DimVector broadcast_strides(const Tensor& t, std::span<const int64_t> shape) {
  TSL_INTERNAL_ASSERT(static_cast<size_t>(t.dim()) <= shape.size(), "broadcast_strides: rank");
  DimVector strides(shape.size(), 0);
  size_t lead = shape.size() - static_cast<size_t>(t.dim());
  for (size_t d = 0; d < static_cast<size_t>(t.dim()); ++d) {
    strides[lead + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d];
  }
  return strides;
}

void register_masked_fill_kernels();

}  // namespace cpu

void register_cpu_elementwise_kernels() {
  register_cpu_unary_kernels();
  register_cpu_binary_kernels();
  register_cpu_fill_copy_kernels();
  cpu::register_masked_fill_kernels();
}

}  // namespace tsl
