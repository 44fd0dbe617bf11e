// Dim arguments of reductions and the [outer, reduce, inner] view of their input.
// See Note [Reduction layout] in reduction_common.h.
#include <algorithm>
#include <numeric>

#include "runtime/kernels/cpu/reduction_common.h"

namespace tsl::cpu {
namespace {

bool in_mask(DimMask mask, int64_t d) { return ((mask >> d) & 1) != 0; }

// Whether sizes/strides describe row-major dense memory (size-1 dims ignored).
bool is_row_major(std::span<const int64_t> sizes, std::span<const int64_t> strides) {
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// The dims of x ordered by decreasing stride, when that order is dense and keeps the
// kept dims (size > 1) in their original order; else empty.
DimVector dense_permutation(const Tensor& x, DimMask mask) {
  int64_t ndim = x.dim();
  DimVector perm(static_cast<size_t>(ndim));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return x.strides()[a] > x.strides()[b]; });
  DimVector sizes, strides;
  int64_t last_kept = -1;
  for (int64_t d : perm) {
    sizes.push_back(x.sizes()[d]);
    strides.push_back(x.strides()[d]);
    if (x.sizes()[d] == 1 || in_mask(mask, d)) continue;
    if (d < last_kept) return {};
    last_kept = d;
  }
  if (!is_row_major(sizes, strides)) return {};
  return perm;
}

// Fills outer/reduce/inner from dims in `order` when the reduced ones form one run.
bool merge_runs(const Tensor& x, std::span<const int64_t> order, DimMask mask, ReducePlan& p) {
  int state = 0;  // 0: outer kept dims, 1: reduced run, 2: inner kept dims
  for (int64_t d : order) {
    int64_t s = x.sizes()[d];
    if (s == 1) continue;
    bool reduced = in_mask(mask, d);
    if (reduced && state == 2) return false;
    if (reduced)
      state = 1;
    else if (state == 1)
      state = 2;
    (state == 0 ? p.outer : state == 1 ? p.reduce : p.inner) *= s;
  }
  return true;
}

}  // namespace

DimMask all_dims_mask(int64_t ndim) {
  TSL_CHECK(ndim <= 64, "reductions support tensors of at most 64 dims, got ", ndim);
  return ndim == 64 ? ~DimMask{0} : ((DimMask{1} << ndim) - 1);
}

DimMask single_dim_mask(int64_t dim, int64_t ndim) {
  TSL_CHECK(ndim <= 64, "reductions support tensors of at most 64 dims, got ", ndim);
  int64_t d = wrap_dim(dim, ndim);
  return ndim == 0 ? 0 : DimMask{1} << d;
}

DimMask reduce_mask(const std::optional<std::vector<int64_t>>& dims, int64_t ndim) {
  if (!dims || dims->empty()) return all_dims_mask(ndim);
  TSL_CHECK(ndim <= 64, "reductions support tensors of at most 64 dims, got ", ndim);
  DimMask mask = 0;
  for (int64_t dim : *dims) {
    int64_t d = wrap_dim(dim, ndim);
    TSL_CHECK(!in_mask(mask, d), "dim ", d, " appears multiple times in the list of dims");
    mask |= DimMask{1} << d;
  }
  return ndim == 0 ? 0 : mask;
}

int64_t first_empty_reduced_dim(const Tensor& x, DimMask mask) {
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (in_mask(mask, d) && x.sizes()[d] == 0) return d;
  }
  return -1;
}

ReducePlan plan_reduction(const Tensor& x, DimMask mask, bool keepdim) {
  ReducePlan p;
  int64_t ndim = x.dim();
  for (int64_t d = 0; d < ndim; ++d) {
    if (!in_mask(mask, d))
      p.out_sizes.push_back(x.sizes()[d]);
    else if (keepdim)
      p.out_sizes.push_back(1);
  }
  DimVector order(static_cast<size_t>(ndim));
  std::iota(order.begin(), order.end(), 0);
  if (x.numel() == 0 || x.is_contiguous()) {
    p.input = x;
    if (x.numel() == 0 || merge_runs(x, order, mask, p)) {
      if (x.numel() == 0) {
        p.outer = p.reduce = p.inner = 1;
        for (int64_t d = 0; d < ndim; ++d) (in_mask(mask, d) ? p.reduce : p.outer) *= x.sizes()[d];
      }
      return p;
    }
  } else {
    DimVector perm = dense_permutation(x, mask);
    if (!perm.empty() && merge_runs(x, perm, mask, p)) {
      // The data is dense in `perm` order: read it in place.
      p.input = x.as_strided(DimVector{x.numel()}, DimVector{1}, x.storage_offset());
      return p;
    }
  }
  // General case: kept dims first, reduced dims last, copied into that order.
  p.outer = p.reduce = p.inner = 1;
  DimVector sizes, strides;
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t d = 0; d < ndim; ++d) {
      if (in_mask(mask, d) != (pass == 1)) continue;
      sizes.push_back(x.sizes()[d]);
      strides.push_back(x.strides()[d]);
      (pass == 0 ? p.outer : p.reduce) *= x.sizes()[d];
    }
  }
  p.input = x.as_strided(sizes, strides, x.storage_offset()).contiguous();
  return p;
}

Reduction parse_reduction(const std::string& reduction) {
  if (reduction == "mean") return Reduction::Mean;
  if (reduction == "sum") return Reduction::Sum;
  if (reduction == "none") return Reduction::None;
  TSL_ERROR(reduction, " is not a valid value for reduction");
}

}  // namespace tsl::cpu
