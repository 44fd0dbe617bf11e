// The loop engine of the elementwise CPU kernels: PyTorch's type promotion, output
// allocation, and loops over broadcast, strided or contiguous operands that hand the
// innermost rows to small typed bodies the compiler vectorizes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "runtime/tensor/dim_vector.h"
#include "runtime/tensor/parallel.h"
#include "runtime/tensor/tensor.h"

namespace tsl::cpu {

// ---- Type promotion (defined in elementwise.cpp) --------------------------------------

// PyTorch's result_type over the defined tensors among `operands`. See Note [Type
// promotion] in elementwise.cpp.
DType result_type(std::initializer_list<const Tensor*> operands);
// `t` converted to `dtype` (t itself when it already has it).
Tensor to_dtype_copy(const Tensor& t, DType dtype);
// The strides that make `t` address `shape` (which t broadcasts to): 0 on broadcast dims.
DimVector broadcast_strides(const Tensor& t, std::span<const int64_t> shape);

// ---- Strided loops --------------------------------------------------------------------

// N operands walked together over one shape; strides are in elements. Size-1 dims are
// dropped and dims that are contiguous for every operand are merged, so most loops end
// up with one long innermost row.
template <size_t N>
struct LoopShape {
  DimVector sizes;
  DimVector strides[N];
  int64_t numel = 1;
};

template <size_t N>
LoopShape<N> make_loop_shape(std::span<const int64_t> sizes, const DimVector (&strides)[N]) {
  LoopShape<N> s;
  for (size_t d = 0; d < sizes.size(); ++d) {
    s.numel *= sizes[d];
    if (sizes[d] == 1) continue;
    size_t last = s.sizes.size();
    bool merge = last > 0;
    for (size_t k = 0; k < N && merge; ++k) {
      merge = s.strides[k][last - 1] == strides[k][d] * sizes[d];
    }
    if (merge) {
      s.sizes[last - 1] *= sizes[d];
      for (size_t k = 0; k < N; ++k) s.strides[k][last - 1] = strides[k][d];
      continue;
    }
    s.sizes.push_back(sizes[d]);
    for (size_t k = 0; k < N; ++k) s.strides[k].push_back(strides[k][d]);
  }
  return s;
}

// Calls row(offsets, n, inner_strides) for the innermost rows covering the row-major
// element range [begin, end): offsets[k] is the element offset of the row's first
// element in operand k.
template <size_t N, typename Row>
void loop_range(const LoopShape<N>& s, int64_t begin, int64_t end, Row& row) {
  int64_t ndim = static_cast<int64_t>(s.sizes.size());
  int64_t off[N] = {};
  if (ndim == 0) {
    int64_t zero[N] = {};
    if (begin < end) row(off, 1, zero);
    return;
  }
  DimVector index(static_cast<size_t>(ndim), 0);
  int64_t rem = begin;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    index[d] = rem % s.sizes[d];
    rem /= s.sizes[d];
    for (size_t k = 0; k < N; ++k) off[k] += index[d] * s.strides[k][d];
  }
  int64_t inner = s.sizes[ndim - 1];
  int64_t inner_strides[N];
  for (size_t k = 0; k < N; ++k) inner_strides[k] = s.strides[k][ndim - 1];
  for (int64_t pos = begin; pos < end;) {
    int64_t n = std::min(inner - index[ndim - 1], end - pos);
    row(off, n, inner_strides);
    pos += n;
    index[ndim - 1] += n;
    for (size_t k = 0; k < N; ++k) off[k] += n * inner_strides[k];
    if (index[ndim - 1] < inner) continue;
    // Carry into the outer dims like an odometer.
    index[ndim - 1] = 0;
    for (size_t k = 0; k < N; ++k) off[k] -= inner * inner_strides[k];
    for (int64_t d = ndim - 2; d >= 0; --d) {
      ++index[d];
      for (size_t k = 0; k < N; ++k) off[k] += s.strides[k][d];
      if (index[d] < s.sizes[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= s.strides[k][d] * s.sizes[d];
      index[d] = 0;
    }
  }
}

// Runs `row` over every element, on several threads when the work is large. Small
// loops call loop_range directly (no std::function, no allocation).
template <size_t N, typename Row>
void run_loop(const LoopShape<N>& s, Row&& row) {
  if (s.numel == 0) return;
  if (s.numel < 2 * kParallelGrain) {
    loop_range(s, 0, s.numel, row);
    return;
  }
  parallel_for(s.numel, kParallelGrain, [&](int64_t b, int64_t e) { loop_range(s, b, e, row); });
}

// The stride of an operand in one row over all of a contiguous `out`: 1 when its
// strides are out's (on every dim of more than one element), 0 when it is one value
// broadcast everywhere, -1 otherwise. Small contiguous ops skip the loop shape with it.
inline int64_t row_stride(const Tensor& out, std::span<const int64_t> strides) {
  std::span<const int64_t> sizes = out.sizes(), contiguous = out.strides();
  bool same = true, zero = true;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    same = same && strides[d] == contiguous[d];
    zero = zero && strides[d] == 0;
  }
  return same ? 1 : zero ? 0 : -1;
}

// ---- Typed bodies ---------------------------------------------------------------------

// out = op(a) over `shape`; a and out have the given strides and element types.
template <typename In, typename Out, typename Op>
void unary_strided(std::span<const int64_t> shape, Out* out, const DimVector& out_strides,
                   const In* in, const DimVector& in_strides, Op op) {
  const DimVector strides[2] = {out_strides, in_strides};
  LoopShape<2> s = make_loop_shape<2>(shape, strides);
  run_loop(s, [&](const int64_t* off, int64_t n, const int64_t* st) {
    Out* o = out + off[0];
    const In* a = in + off[1];
    if (st[0] == 1 && st[1] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = op(a[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * st[0]] = op(a[i * st[1]]);
    }
  });
}

// out = op(a, b) with the row shapes that matter for speed spelled out: all
// contiguous, and one side a broadcast scalar (`x * 2.0`, a bias row).
template <typename In, typename Out, typename Op>
void binary_row(Out* o, const In* a, const In* b, int64_t n, const int64_t* st, Op& op) {
  if (st[0] == 1 && st[1] == 1 && st[2] == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], b[i]);
  } else if (st[0] == 1 && st[1] == 1 && st[2] == 0) {
    const In bv = *b;
    for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], bv);
  } else if (st[0] == 1 && st[1] == 0 && st[2] == 1) {
    const In av = *a;
    for (int64_t i = 0; i < n; ++i) o[i] = op(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * st[0]] = op(a[i * st[1]], b[i * st[2]]);
  }
}

// An operand of binary_into given by its elements and its strides over out's shape
// (0 where it broadcasts): a tensor's, or one value held by the caller.
template <typename In>
struct Operand {
  const In* data;
  DimVector strides;
};

// out = op(a, b) elementwise. a and b have element type In and broadcast to out's
// shape; out may be strided (in-place ops write through views).
template <typename In, typename Out, typename Op>
void binary_into(const Tensor& out, const Operand<In>& a, const Operand<In>& b, Op op) {
  Out* out_data = static_cast<Out*>(out.raw_data());
  // One row, as the loop shape would make it (same results), without building it.
  if (out.is_contiguous() && out.numel() < 2 * kParallelGrain) {
    const int64_t st[3] = {1, row_stride(out, a.strides), row_stride(out, b.strides)};
    if (st[1] >= 0 && st[2] >= 0) {
      if (out.numel() > 0) binary_row<In, Out>(out_data, a.data, b.data, out.numel(), st, op);
      return;
    }
  }
  const DimVector strides[3] = {out.strides(), a.strides, b.strides};
  LoopShape<3> s = make_loop_shape<3>(out.sizes(), strides);
  run_loop(s, [&](const int64_t* off, int64_t n, const int64_t* st) {
    binary_row<In, Out>(out_data + off[0], a.data + off[1], b.data + off[2], n, st, op);
  });
}

template <typename In, typename Out, typename Op>
void binary_into(const Tensor& out, const Tensor& a, const Tensor& b, Op op) {
  std::span<const int64_t> shape = out.sizes();
  binary_into<In, Out>(
      out, Operand<In>{static_cast<const In*>(a.raw_data()), broadcast_strides(a, shape)},
      Operand<In>{static_cast<const In*>(b.raw_data()), broadcast_strides(b, shape)}, op);
}

// out = cond ? a : b elementwise, all broadcast to out's shape.
template <typename T>
void where_into(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  std::span<const int64_t> shape = out.sizes();
  const DimVector strides[4] = {out.strides(), broadcast_strides(cond, shape),
                                broadcast_strides(a, shape), broadcast_strides(b, shape)};
  LoopShape<4> s = make_loop_shape<4>(shape, strides);
  T* o = static_cast<T*>(out.raw_data());
  const bool* c = static_cast<const bool*>(cond.raw_data());
  const T* x = static_cast<const T*>(a.raw_data());
  const T* y = static_cast<const T*>(b.raw_data());
  run_loop(s, [&](const int64_t* off, int64_t n, const int64_t* st) {
    T* oo = o + off[0];
    const bool* cc = c + off[1];
    const T* xx = x + off[2];
    const T* yy = y + off[3];
    for (int64_t i = 0; i < n; ++i) oo[i * st[0]] = cc[i * st[1]] ? xx[i * st[2]] : yy[i * st[3]];
  });
}

}  // namespace tsl::cpu
