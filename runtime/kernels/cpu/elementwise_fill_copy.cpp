// Kernels that overwrite a tensor or convert it: zero_, fill_, copy_ (in place,
// through any strides), and the conversion to(dtype). They reach memory only through
// fill_tensor and copy_into, which work on every device (and copy_into across two),
// so the CUDA backend registers them too. to(device) is the CUDA backend's.
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/device_backend.h"
#include "runtime/tensor/grad_mode.h"
#include "runtime/tensor/memory_overlap.h"

namespace tsl {
namespace {

// Every element of self (any strides) set to `value`.
template <typename T>
void fill_typed(const Tensor& self, T value) {
  T* data = self.data_ptr<T>();
  cpu::unary_strided<T, T>(self.sizes(), data, self.strides(), data, self.strides(),
                           [value](T) { return value; });
}

Tensor fill_kernel(const Tensor& self, Scalar value) {
  check_inplace_allowed(self, "fill_");
  if (self.device().is_cpu()) {
    TSL_DISPATCH_ALL(self.dtype(), "fill_",
                     [&] { fill_typed<scalar_t>(self, value.to<scalar_t>()); });
  } else {
    fill_tensor(self, value);  // through overlapping views too, as PyTorch's fill_
  }
  self.storage()->bump_version();
  return self;
}

Tensor zero_kernel(const Tensor& self) {
  check_inplace_allowed(self, "zero_");
  return fill_kernel(self, Scalar(int64_t{0}));
}

Tensor copy_kernel(const Tensor& self, const Tensor& src) {
  check_inplace_allowed(self, "copy_");
  if (self.impl() == src.impl()) return self;  // x.copy_(x)
  assert_no_internal_overlap(self);
  assert_no_partial_overlap(self, src);
  // A layout with gaps that meets self's (x[0] = x[:, 0]): PyTorch copies element by
  // element there; TSL copies through a temporary, so no element is read after it
  // was written.
  if (src.storage().get() == self.storage().get() &&
      overlap_status(self, src) == MemOverlapStatus::TooHard) {
    copy_into(self, src.contiguous());
  } else {
    copy_into(self, src);
  }
  self.storage()->bump_version();
  return self;
}

// Returns self when the dtype already matches, as PyTorch's `to` does.
Tensor to_dtype_kernel(const Tensor& self, DType dtype) { return cpu::to_dtype_copy(self, dtype); }

// Without the CUDA backend (a build without CUDA) a device other than the CPU is an
// error; the backend registers its own kernel in place of this one.
Tensor to_device_kernel(const Tensor& self, Device device) {
  if (device == self.device()) return self;
  TSL_ERROR("cannot move a tensor to ", device.str(),
            ": CUDA is not available: this build of TSL has no CUDA backend");
}

}  // namespace

void register_cpu_fill_copy_kernels() {
  TSL_REGISTER_CPU(zero_, zero_kernel);
  TSL_REGISTER_CPU(fill_, fill_kernel);
  TSL_REGISTER_CPU(copy_, copy_kernel);
  TSL_REGISTER_CPU(to_dtype, to_dtype_kernel);
  TSL_REGISTER_CPU(to_device, to_device_kernel);
}

}  // namespace tsl
