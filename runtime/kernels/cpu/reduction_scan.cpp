// CPU kernel: cumsum, the running sum along one dim. Floats accumulate in double as
// PyTorch's CPU scan does; integers and bools sum to int64.
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/tensor/device_backend.h"

namespace tsl::cpu {
namespace {

// x and out are contiguous [outer, n, inner].
template <typename In, typename Out>
void scan(const In* x, Out* out, int64_t outer, int64_t n, int64_t inner) {
  using Acc = acc_t<In>;
  if (inner == 1) {
    parallel_units(outer, n, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        Acc acc = 0;
        for (int64_t i = 0; i < n; ++i) {
          acc = SumOp<In>{}.combine(acc, static_cast<Acc>(x[o * n + i]));
          out[o * n + i] = static_cast<Out>(acc);
        }
      }
    });
    return;
  }
  int64_t tiles = (inner + kColumnTile - 1) / kColumnTile;
  parallel_units(outer * tiles, n * kColumnTile, [&](int64_t b, int64_t e) {
    Acc acc[kColumnTile];
    for (int64_t u = b; u < e; ++u) {
      int64_t o = u / tiles;
      int64_t t0 = (u % tiles) * kColumnTile;
      int64_t w = std::min(kColumnTile, inner - t0);
      for (int64_t j = 0; j < w; ++j) acc[j] = 0;
      for (int64_t r = 0; r < n; ++r) {
        int64_t at = (o * n + r) * inner + t0;
        for (int64_t j = 0; j < w; ++j) {
          acc[j] = SumOp<In>{}.combine(acc[j], static_cast<Acc>(x[at + j]));
          out[at + j] = static_cast<Out>(acc[j]);
        }
      }
    }
  });
}

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  int64_t d = wrap_dim(dim, self.dim());
  Tensor x = self.contiguous();
  if (dtype && *dtype != x.dtype()) {
    Tensor cast = Tensor::empty(x.sizes(), *dtype, x.device());
    copy_into(cast, x);
    x = cast;
  }
  DType out_dtype = dtype.value_or(is_floating(x.dtype()) ? x.dtype() : DType::Int64);
  Tensor out = Tensor::empty(x.sizes(), out_dtype, x.device());
  if (x.numel() == 0) return out;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= x.sizes()[i];
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.sizes()[i];
  int64_t n = x.dim() == 0 ? 1 : x.sizes()[d];
  if (!x.device().is_cpu()) {  // Note [Reductions on every device] in reduction.cpp
    cuda_backend()->cumsum(x, outer, n, inner, out);
    return out;
  }
  TSL_DISPATCH_ALL(x.dtype(), "cumsum", [&] {
    using In = scalar_t;
    if constexpr (std::is_floating_point_v<In>) {
      scan(x.data_ptr<In>(), out.data_ptr<In>(), outer, n, inner);
    } else if (out_dtype == DType::Bool) {
      scan(x.data_ptr<In>(), out.data_ptr<bool>(), outer, n, inner);
    } else {
      scan(x.data_ptr<In>(), out.data_ptr<int64_t>(), outer, n, inner);
    }
  });
  return out;
}

}  // namespace

void register_reduction_scan_kernels() { TSL_REGISTER_CPU(cumsum, cumsum); }

}  // namespace tsl::cpu
