// CPU kernels: reductions that return positions: max.dim and min.dim (values and
// indices), argmax and argmin. Ties give the first position; NaN counts as the
// extreme value, as in PyTorch.
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/tensor/device_backend.h"

namespace tsl::cpu {
namespace {

// Whether v replaces the current best (strictly better, so ties keep the first).
template <bool kMax, typename T>
inline bool better(T v, T best) {
  if constexpr (kMax)
    return v > best || (v != v && best == best);
  else
    return v < best || (v != v && best == best);
}

// Row: the extreme value (vectorized), then the first position holding it.
template <bool kMax, typename T>
int64_t row_arg(const T* x, int64_t n, T* value) {
  using Op = std::conditional_t<kMax, MaxFor<T>, MinFor<T>>;
  T m = reduce_row(Op{}, x, n);
  bool nan = m != m;
  int64_t i = 0;
  while (i < n && !(x[i] == m || (nan && x[i] != x[i]))) ++i;
  *value = m;
  return i < n ? i : 0;
}

// Writes values (when non-null) and indices of a plan (reduce > 0).
template <bool kMax, typename T>
void arg_reduce(const ReducePlan& p, T* values, int64_t* indices) {
  const T* x = p.input.data_ptr<T>();
  if (p.outer * p.inner == 0) return;
  if (p.inner == 1) {
    parallel_units(p.outer, p.reduce, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        T v;
        indices[o] = row_arg<kMax>(x + o * p.reduce, p.reduce, &v);
        if (values) values[o] = v;
      }
    });
    return;
  }
  int64_t tiles = (p.inner + kColumnTile - 1) / kColumnTile;
  parallel_units(p.outer * tiles, p.reduce * kColumnTile, [&](int64_t b, int64_t e) {
    T best[kColumnTile];
    int64_t pos[kColumnTile];
    for (int64_t u = b; u < e; ++u) {
      int64_t o = u / tiles;
      int64_t t0 = (u % tiles) * kColumnTile;
      int64_t w = std::min(kColumnTile, p.inner - t0);
      const T* base = x + o * p.reduce * p.inner + t0;
      for (int64_t j = 0; j < w; ++j) {
        best[j] = base[j];
        pos[j] = 0;
      }
      for (int64_t r = 1; r < p.reduce; ++r) {
        const T* row = base + r * p.inner;
        for (int64_t j = 0; j < w; ++j) {
          bool take = better<kMax>(row[j], best[j]);
          best[j] = take ? row[j] : best[j];
          pos[j] = take ? r : pos[j];
        }
      }
      int64_t at = o * p.inner + t0;
      for (int64_t j = 0; j < w; ++j) indices[at + j] = pos[j];
      if (values) std::copy(best, best + w, values + at);
    }
  });
}

// The device's loop for a plan on a device (Note [Reductions on every device] in
// reduction.cpp); false on the CPU.
bool arg_on_device(bool max, const ReducePlan& p, const Tensor& values, const Tensor& indices) {
  if (p.input.device().is_cpu()) return false;
  DeviceBackend* backend = cuda_backend();
  TSL_INTERNAL_ASSERT(backend != nullptr, "a CUDA tensor without the CUDA backend");
  backend->arg_reduce(max, p.input.contiguous(), p.outer, p.reduce, p.inner, values, indices);
  return true;
}

template <bool kMax>
std::tuple<Tensor, Tensor> extremum_dim(const Tensor& self, int64_t dim, bool keepdim) {
  const char* name = kMax ? "max" : "min";
  DimMask mask = single_dim_mask(dim, self.dim());
  int64_t d = wrap_dim(dim, self.dim());
  TSL_CHECK(self.dim() == 0 || self.sizes()[d] != 0, name, "(): Expected reduction dim ", d,
            " to have non-zero size.");
  ReducePlan p = plan_reduction(self, mask, keepdim);
  Tensor values = Tensor::empty(p.out_sizes, self.dtype(), self.device());
  Tensor indices = Tensor::empty(p.out_sizes, DType::Int64, self.device());
  if (arg_on_device(kMax, p, values, indices)) return {values, indices};
  TSL_DISPATCH_ALL(self.dtype(), "max", [&] {
    arg_reduce<kMax, scalar_t>(p, values.data_ptr<scalar_t>(), indices.data_ptr<int64_t>());
  });
  return {values, indices};
}

template <bool kMax>
Tensor arg_extremum(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  const char* name = kMax ? "argmax" : "argmin";
  TSL_CHECK(self.dtype() != DType::Bool, "\"", name, "_cpu\" not implemented for 'Bool'");
  DimMask mask;
  if (dim) {
    mask = single_dim_mask(*dim, self.dim());
    int64_t d = wrap_dim(*dim, self.dim());
    TSL_CHECK(self.dim() == 0 || self.sizes()[d] != 0, name, "(): Expected reduction dim ", d,
              " to have non-zero size.");
  } else {
    TSL_CHECK(self.numel() > 0, name,
              "(): Expected reduction dim to be specified for input.numel() == 0.");
    mask = all_dims_mask(self.dim());
  }
  ReducePlan p = plan_reduction(self, mask, keepdim);
  Tensor indices = Tensor::empty(p.out_sizes, DType::Int64, self.device());
  if (arg_on_device(kMax, p, Tensor(), indices)) return indices;
  TSL_DISPATCH_ALL(self.dtype(), "max", [&] {
    arg_reduce<kMax, scalar_t>(p, static_cast<scalar_t*>(nullptr), indices.data_ptr<int64_t>());
  });
  return indices;
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim<true>(self, dim, keepdim);
}
std::tuple<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim<false>(self, dim, keepdim);
}
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_extremum<true>(self, dim, keepdim);
}
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_extremum<false>(self, dim, keepdim);
}

}  // namespace

void register_reduction_index_kernels() {
  TSL_REGISTER_CPU(max_dim, max_dim);
  TSL_REGISTER_CPU(min_dim, min_dim);
  TSL_REGISTER_CPU(argmax, argmax);
  TSL_REGISTER_CPU(argmin, argmin);
}

}  // namespace tsl::cpu
