// Shared by the reduction, linear-algebra and neural-net CPU kernels: turning `dim`
// arguments into a [outer, reduce, inner] view of the input, and the loops that walk
// such a view in memory order. See Note [Reduction layout].
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics when
// Eigen's packet code is inlined (GCC bug 105593); silence it for Eigen only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/parallel.h"

namespace tsl::cpu {

// Note [Reduction layout]
// Every reduction reads its input as a contiguous [outer, reduce, inner] block: the
// reduced dims are merged into one run `reduce` with the kept dims before it
// (`outer`) and after it (`inner`). inner == 1 is a reduction along contiguous rows
// (fast, vectorized lanes); inner > 1 accumulates whole rows of `inner` elements, so
// memory is read in order rather than with a stride per output element. Inputs whose
// reduced dims are not one run after dropping size-1 dims are permuted (kept dims
// first) and copied; a transposed input is read through its contiguous permutation
// when that keeps the kept dims in order, so x.t().sum(1) copies nothing.
struct ReducePlan {
  Tensor input;  // contiguous data read as [outer, reduce, inner]
  int64_t outer = 1;
  int64_t reduce = 1;
  int64_t inner = 1;
  DimVector out_sizes;  // the result's shape (keepdim applied)
};

// A set of dims as bits. TSL tensors have at most 64 dims for reductions.
using DimMask = uint64_t;

// The dims to reduce: None or an empty list means every dim. Negative dims wrap; a
// repeated dim is an error ("dim 1 appears multiple times in the list of dims").
DimMask reduce_mask(const std::optional<std::vector<int64_t>>& dims, int64_t ndim);
DimMask single_dim_mask(int64_t dim, int64_t ndim);
DimMask all_dims_mask(int64_t ndim);

ReducePlan plan_reduction(const Tensor& x, DimMask mask, bool keepdim);

// The sum kernel over the dims in `mask` (none: a copy in the summed dtype); int and bool
// sum to int64. For kernels that sum as part of their work (sum_to_size).
Tensor sum_over(const Tensor& self, DimMask mask, bool keepdim);

// The first reduced dim of size 0, or -1 (for "Expected reduction dim 1 to have
// non-zero size").
int64_t first_empty_reduced_dim(const Tensor& x, DimMask mask);

// Checks a reduction string and returns 0 none, 1 mean, 2 sum.
enum class Reduction { None, Mean, Sum };
Reduction parse_reduction(const std::string& reduction);

// Accumulator types: float sums accumulate in double (PyTorch's cascade sum is as
// accurate), integers in int64 with wrap-around.
template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, double,
                                 std::conditional_t<std::is_same_v<T, bool>, int64_t, T>>;

inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Width of the columns accumulated at once when inner > 1 (accumulators on the stack).
constexpr int64_t kColumnTile = 256;
// Independent accumulators along a contiguous row: lets the compiler vectorize
// reductions without reassociating (no -ffast-math).
constexpr int kLanes = 16;

// Reduces x[0..n) with an Op providing Acc, identity(), map(In) -> Acc and
// combine(Acc, Acc).
// An Op may provide reduce_contiguous(x, n) when it has a faster way (Eigen's
// vectorized max with NaN propagation; GCC does not vectorize the lanes below for it).
template <typename Op, typename In>
typename Op::Acc reduce_row(const Op& op, const In* x, int64_t n) {
  using Acc = typename Op::Acc;
  if constexpr (requires { op.reduce_contiguous(x, n); }) {
    return op.reduce_contiguous(x, n);
  }
  Acc lanes[kLanes];
  for (int j = 0; j < kLanes; ++j) lanes[j] = op.identity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] = op.combine(lanes[j], op.map(x[i + j]));
  }
  Acc acc = op.identity();
  for (int j = 0; j < kLanes; ++j) acc = op.combine(acc, lanes[j]);
  for (; i < n; ++i) acc = op.combine(acc, op.map(x[i]));
  return acc;
}

// A whole-tensor reduction of n elements: fixed blocks reduced in parallel and
// combined in order, so the result does not depend on the thread count.
template <typename Op, typename In>
typename Op::Acc reduce_all(const Op& op, const In* x, int64_t n) {
  constexpr int64_t kMaxBlocks = 64;
  // Blocked whatever the thread count, so results do not depend on it.
  if (n < 2 * kParallelGrain) return reduce_row(op, x, n);
  int64_t blocks = std::min<int64_t>(kMaxBlocks, n / kParallelGrain);
  int64_t block = (n + blocks - 1) / blocks;
  typename Op::Acc partial[kMaxBlocks];
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      int64_t begin = b * block;
      int64_t end = std::min(n, begin + block);
      partial[b] = begin < end ? reduce_row(op, x + begin, end - begin) : op.identity();
    }
  });
  typename Op::Acc acc = op.identity();
  for (int64_t b = 0; b < blocks; ++b) acc = op.combine(acc, partial[b]);
  return acc;
}

// Runs fn(begin, end) over `units` work items of `cost` elements each, in parallel
// when the whole is large.
template <typename Fn>
void parallel_units(int64_t units, int64_t cost, const Fn& fn) {
  if (units * cost < kParallelGrain || units < 2) {
    fn(int64_t{0}, units);
    return;
  }
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cost, 1));
  parallel_for(units, grain, [&](int64_t b, int64_t e) { fn(b, e); });
}

// Combines `rows` rows of a block of `w` <= kColumnTile contiguous columns (row stride
// w) into acc[0..w). Narrow blocks (w < kLanes) run as one flat vectorized loop whose
// lane count is a multiple of w, so lane j always sees column j % w.
template <typename Op, typename In>
void accumulate_block(const Op& op, const In* x, int64_t rows, int64_t w, typename Op::Acc* acc) {
  using Acc = typename Op::Acc;
  if (w >= kLanes) {
    for (int64_t r = 0; r < rows; ++r) {
      const In* row = x + r * w;
      for (int64_t j = 0; j < w; ++j) acc[j] = op.combine(acc[j], op.map(row[j]));
    }
    return;
  }
  constexpr int64_t kMaxLanes = 4 * kLanes;
  int64_t lanes_n = (kMaxLanes / w) * w;
  Acc lanes[kMaxLanes];
  for (int64_t j = 0; j < lanes_n; ++j) lanes[j] = op.identity();
  int64_t n = rows * w, i = 0;
  for (; i + lanes_n <= n; i += lanes_n) {
    for (int64_t j = 0; j < lanes_n; ++j) lanes[j] = op.combine(lanes[j], op.map(x[i + j]));
  }
  for (int64_t j = 0; i + j < n; ++j) lanes[j] = op.combine(lanes[j], op.map(x[i + j]));
  for (int64_t j = 0; j < lanes_n; ++j) acc[j % w] = op.combine(acc[j % w], lanes[j]);
}

// outer == 1, few columns, many rows: fixed row chunks reduced in parallel into
// partial accumulators, combined in order (independent of the thread count).
template <typename Op, typename In, typename Out, typename Finish>
void reduce_columns_split(const Op& op, const In* x, int64_t rows, int64_t w, Out* out,
                          const Finish& finish) {
  using Acc = typename Op::Acc;
  constexpr int64_t kMaxChunks = 16;
  int64_t chunks = std::clamp<int64_t>(rows * w / kParallelGrain, 1, kMaxChunks);
  int64_t chunk = (rows + chunks - 1) / chunks;
  Acc partial[kMaxChunks * kColumnTile];  // 32 KB at most
  for (int64_t j = 0; j < chunks * w; ++j) partial[j] = op.identity();
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      int64_t r0 = std::min(rows, c * chunk), r1 = std::min(rows, r0 + chunk);
      accumulate_block(op, x + r0 * w, r1 - r0, w, partial + c * w);
    }
  });
  for (int64_t j = 0; j < w; ++j) {
    Acc acc = op.identity();
    for (int64_t c = 0; c < chunks; ++c) acc = op.combine(acc, partial[c * w + j]);
    out[j] = finish(acc);
  }
}

// The associative reduction of a plan: out[o, i] = finish(combine over r of
// map(x[o, r, i])). `finish(Acc) -> Out`.
template <typename Op, typename In, typename Out, typename Finish>
void reduce_plan(const Op& op, const ReducePlan& p, Out* out, const Finish& finish) {
  const In* x = p.input.data_ptr<In>();
  using Acc = typename Op::Acc;
  if (p.outer * p.inner == 0) return;
  if (p.inner == 1) {
    if (p.outer == 1) {
      out[0] = finish(reduce_all(op, x, p.reduce));
      return;
    }
    parallel_units(p.outer, p.reduce, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) out[o] = finish(reduce_row(op, x + o * p.reduce, p.reduce));
    });
    return;
  }
  // Taken whatever the thread count, so results do not depend on it.
  if (p.outer == 1 && p.inner <= kColumnTile && p.reduce * p.inner >= 2 * kParallelGrain) {
    reduce_columns_split(op, x, p.reduce, p.inner, out, finish);
    return;
  }
  int64_t tiles = (p.inner + kColumnTile - 1) / kColumnTile;
  parallel_units(p.outer * tiles, p.reduce * kColumnTile, [&](int64_t b, int64_t e) {
    Acc acc[kColumnTile];
    for (int64_t u = b; u < e; ++u) {
      int64_t o = u / tiles;
      int64_t t0 = (u % tiles) * kColumnTile;
      int64_t w = std::min(kColumnTile, p.inner - t0);
      for (int64_t j = 0; j < w; ++j) acc[j] = op.identity();
      const In* base = x + o * p.reduce * p.inner + t0;
      if (tiles == 1) {
        accumulate_block(op, base, p.reduce, w, acc);
      } else {
        for (int64_t r = 0; r < p.reduce; ++r) {
          const In* row = base + r * p.inner;
          for (int64_t j = 0; j < w; ++j) acc[j] = op.combine(acc[j], op.map(row[j]));
        }
      }
      Out* dst = out + o * p.inner + t0;
      for (int64_t j = 0; j < w; ++j) dst[j] = finish(acc[j]);
    }
  });
}

// ---- Vectorizable math ----

// exp(x) for float in plain branch-free arithmetic that the compiler vectorizes
// (std::exp is a libm call per element). Cephes' expf: x = n ln2 + r, |r| <= ln2/2,
// a degree-6 polynomial for exp(r), and 2^n applied in two halves so that results in
// the subnormal range round once more but never overflow. Within 2 ulp of the
// correctly rounded value; exact 0 for x below -104, inf above 88.72, NaN kept.
inline float vec_exp(float x) {
  float xc = x < -104.0f ? -104.0f : (x > 88.72283f ? 88.72283f : x);
  // Round to nearest by adding 1.5 * 2^23 (no libm call, vectorizes).
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  int32_t ni = static_cast<int32_t>(n);
  int32_t n1 = ni >> 1;
  int32_t n2 = ni - n1;
  float s1 = std::bit_cast<float>((n1 + 127) << 23);
  float s2 = std::bit_cast<float>((n2 + 127) << 23);
  float result = y * s1 * s2;
  result = x > 88.72283f ? std::numeric_limits<float>::infinity() : result;
  return x != x ? x : result;
}
inline double vec_exp(double x) { return std::exp(x); }

// ---- Ops for reduce_plan ----

template <typename In>
struct SumOp {
  using Acc = acc_t<In>;
  Acc identity() const { return Acc(0); }
  Acc map(In v) const { return static_cast<Acc>(v); }
  Acc combine(Acc a, Acc b) const {
    if constexpr (std::is_integral_v<Acc>)
      return wrapping_add(a, b);
    else
      return a + b;
  }
};

template <typename In>
struct ProdOp {
  using Acc = acc_t<In>;
  Acc identity() const { return Acc(1); }
  Acc map(In v) const { return static_cast<Acc>(v); }
  Acc combine(Acc a, Acc b) const {
    if constexpr (std::is_integral_v<Acc>)
      return wrapping_mul(a, b);
    else
      return a * b;
  }
};

// NaN propagates: once an accumulator is NaN it stays NaN, as in PyTorch.
template <typename In>
struct MaxOp {
  using Acc = In;
  Acc identity() const {
    if constexpr (std::is_same_v<In, bool>)
      return false;
    else
      return std::numeric_limits<In>::lowest();
  }
  Acc map(In v) const { return v; }
  Acc combine(Acc a, Acc b) const { return (b > a || b != b) ? b : a; }
};

template <typename In>
struct MinOp {
  using Acc = In;
  Acc identity() const {
    if constexpr (std::is_same_v<In, bool>)
      return true;
    else
      return std::numeric_limits<In>::max();
  }
  Acc map(In v) const { return v; }
  Acc combine(Acc a, Acc b) const { return (b < a || b != b) ? b : a; }
};

// Floats: start from +-inf so that a row of -inf still reduces to -inf.
template <typename In>
struct FloatMaxBase : MaxOp<In> {
  In identity() const { return -std::numeric_limits<In>::infinity(); }
};
template <typename In>
struct FloatMinBase : MinOp<In> {
  In identity() const { return std::numeric_limits<In>::infinity(); }
};

template <typename In>
using EigenRow = Eigen::Map<const Eigen::Array<In, Eigen::Dynamic, 1>>;

template <typename In>
struct FloatMaxOp : FloatMaxBase<In> {
  In reduce_contiguous(const In* x, int64_t n) const {
    return n == 0 ? this->identity() : EigenRow<In>(x, n).template maxCoeff<Eigen::PropagateNaN>();
  }
};
template <typename In>
struct FloatMinOp : FloatMinBase<In> {
  In reduce_contiguous(const In* x, int64_t n) const {
    return n == 0 ? this->identity() : EigenRow<In>(x, n).template minCoeff<Eigen::PropagateNaN>();
  }
};

template <typename In>
using MaxFor = std::conditional_t<std::is_floating_point_v<In>, FloatMaxOp<In>, MaxOp<In>>;
template <typename In>
using MinFor = std::conditional_t<std::is_floating_point_v<In>, FloatMinOp<In>, MinOp<In>>;

// exp(x - shift) summed in double; exp itself in T (vectorized), as PyTorch computes it.
template <typename T>
struct ExpSumOp {
  using Acc = double;
  T shift;
  Acc identity() const { return 0; }
  Acc map(T v) const { return static_cast<double>(vec_exp(v - shift)); }
  Acc combine(Acc a, Acc b) const { return a + b; }
};

}  // namespace tsl::cpu
