// Strided copies with dtype conversion: copy_into, the primitive behind
// contiguous(), clone(), to(dtype) and copy_.
#include "runtime/kernels/cpu/strided.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {
namespace {

template <typename To, typename From>
void copy_typed(const Tensor& dst, const Tensor& src) {
  To* out = dst.data_ptr<To>();
  const From* in = src.data_ptr<From>();
  if (dst.is_contiguous() && src.is_contiguous() && dst.sizes() == src.sizes()) {
    int64_t n = dst.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = cpu::convert_value<To>(in[i]);
    return;
  }
  const std::span<const int64_t> strides[2] = {dst.strides().span(), src.strides().span()};
  cpu::for_each_offset<2>(dst.sizes().span(), strides,
                          [&](const int64_t* o) { out[o[0]] = cpu::convert_value<To>(in[o[1]]); });
}

}  // namespace

// Copies src into dst, which have the same number of elements per dim except that
// src may broadcast (stride-0 expansion of size-1 or missing leading dims).
void copy_into(const Tensor& dst, const Tensor& src) {
  Tensor source = src;
  if (src.sizes() != dst.sizes()) {
    DimVector shape = broadcast_shapes(dst.sizes(), src.sizes(), "copy");
    TSL_CHECK(shape == dst.sizes(), "copy: cannot copy a tensor of shape ", shape_str(src.sizes()),
              " into one of shape ", shape_str(dst.sizes()));
    DimVector strides(dst.sizes().size(), 0);
    size_t lead = dst.sizes().size() - src.sizes().size();
    for (size_t d = 0; d < src.sizes().size(); ++d) {
      strides[lead + d] = src.sizes()[d] == 1 ? 0 : src.strides()[d];
    }
    source = src.as_strided(dst.sizes(), strides, src.storage_offset());
  }
  if (!dst.device().is_cpu() || !source.device().is_cpu()) {
    DeviceBackend* backend = cuda_backend();
    TSL_INTERNAL_ASSERT(backend != nullptr, "a CUDA tensor without the CUDA backend");
    backend->copy(dst, source);
    return;
  }
  TSL_DISPATCH_ALL(dst.dtype(), "copy", [&] {
    using To = scalar_t;
    TSL_DISPATCH_ALL(source.dtype(), "copy", [&] { copy_typed<To, scalar_t>(dst, source); });
  });
}

}  // namespace tsl
