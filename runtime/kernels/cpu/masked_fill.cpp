// The kernels of masked_fill: self with one value where a bool mask is True. Out of
// place, as torch.masked_fill: self and mask broadcast to the result's shape, and the
// value is converted to self's dtype (5.7 fills an int64 tensor with 5). On a device
// it is that device's `where` (so the CUDA backend shares these kernels).
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/kernel.h"

namespace tsl::cpu {
namespace {

// `value` is a 0-dim tensor of self's dtype.
Tensor masked_fill_with(const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_same_device(mask, self.device());
  // PyTorch 1.13 also takes int64 masks of zeros and ones (a deprecated path); TSL keeps
  // to the bool masks that comparisons make (docs/language.md).
  TSL_CHECK(mask.dtype() == DType::Bool,
            "masked_fill_ only supports boolean masks, but got mask with dtype ",
            dtype_name(mask.dtype()));
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill");
  if (!self.device().is_cpu()) {
    return call_op(OpId::where, {IValue(mask), IValue(value), IValue(self)}).at(0).to_tensor();
  }
  Tensor out = Tensor::empty(shape, self.dtype());
  TSL_DISPATCH_ALL(self.dtype(), "masked_fill",
                   [&] { where_into<scalar_t>(out, mask, value, self); });
  return out;
}

Tensor masked_fill_scalar(const Tensor& self, const Tensor& mask, Scalar value) {
  return masked_fill_with(self, mask, Tensor::scalar(value, self.dtype()));
}

Tensor masked_fill_tensor(const Tensor& self, const Tensor& mask, const Tensor& value) {
  TSL_CHECK(value.dim() == 0,
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
            value.dim(), " dimension(s).");
  return masked_fill_with(self, mask, Tensor::scalar(value.item(), self.dtype()));
}

}  // namespace

void register_masked_fill_kernels() {
  TSL_REGISTER_CPU(masked_fill_scalar, masked_fill_scalar);
  TSL_REGISTER_CPU(masked_fill_tensor, masked_fill_tensor);
}

}  // namespace tsl::cpu
