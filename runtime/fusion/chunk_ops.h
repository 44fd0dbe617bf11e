// The loops of the fused program over one chunk (chunk_loop.cpp): each op over a
// whole chunk with the formulas of the unfused CPU kernels (runtime/kernels/cpu/
// formulas.h), and the gather of broadcast or strided inputs. Included by
// chunk_loop.cpp only.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

// GCC 12 reports false -W(maybe-)uninitialized warnings inside its own AVX-512 intrinsics
// (_mm512_undefined_*, GCC bug 105593) when Eigen's packet math is inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>

#include "runtime/kernels/cpu/formulas.h"
#include "runtime/kernels/cpu/simd_map.h"
#include "runtime/tensor/dim_vector.h"

namespace tsl::fusion {

// A chunk-wide operand: `p` points at m elements, or is null and `s` is the value.
template <typename T>
struct Src {
  const T* p;
  T s;
};

// Whether some element is NaN or has |x| >= bound (a positive float): !(|x| < bound)
// compared on the bits, which order like the values for positive floats (NaNs above
// infinity), so that the loop vectorizes.
template <typename T>
bool any_outside(const T* src, int64_t m, T bound) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const U magnitude = std::numeric_limits<U>::max() >> 1;
  const U limit = std::bit_cast<U>(bound);
  U seen = 0;
  for (int64_t i = 0; i < m; ++i) seen |= U((std::bit_cast<U>(src[i]) & magnitude) >= limit);
  return seen != 0;
}

// dst = F's packet function of src (SLEEF's or Eigen's), redoing |x| >= bound and NaN
// with F::scalar, exactly as map_formula in elementwise_unary.cpp (See Note [CPU
// formulas]).
template <typename F, typename T>
void simd_unary(T* dst, const T* src, int64_t m) {
  cpu::simd_map_packets(dst, src, m, [](const auto& p) { return F::vector(p); });
  const T bound = formulas::simd_bound<F, T>();
  if (!any_outside(src, m, bound)) return;
  for (int64_t i = 0; i < m; ++i) {
    if (!(std::abs(src[i]) < bound)) dst[i] = F::scalar(src[i]);
  }
}

template <typename T>
void fill(T* dst, int64_t m, T v) {
  for (int64_t i = 0; i < m; ++i) dst[i] = v;
}

// dst = op(a); a scalar operand (a single element broadcast) is spread over dst first.
template <typename T, typename Op>
void scalar_unary(T* dst, Src<T> a, int64_t m, Op op) {
  const T* x = a.p;
  if (!x) {
    fill(dst, m, a.s);
    x = dst;
  }
  for (int64_t i = 0; i < m; ++i) dst[i] = op(x[i]);
}

template <typename T, typename Op>
void scalar_binary(T* dst, Src<T> a, Src<T> b, int64_t m, Op op) {
  if (a.p && b.p) {
    for (int64_t i = 0; i < m; ++i) dst[i] = op(a.p[i], b.p[i]);
  } else if (a.p) {
    T s = b.s;
    for (int64_t i = 0; i < m; ++i) dst[i] = op(a.p[i], s);
  } else if (b.p) {
    T s = a.s;
    for (int64_t i = 0; i < m; ++i) dst[i] = op(s, b.p[i]);
  } else {
    fill(dst, m, static_cast<T>(op(a.s, b.s)));
  }
}

// Calls f with an accessor i -> element i of the operand, specialized for a pointer
// and for a scalar so that the loops stay simple.
template <typename T, typename F>
void with_reader(Src<T> s, F f) {
  if (s.p) {
    const T* p = s.p;
    f([p](int64_t i) { return p[i]; });
  } else {
    T v = s.s;
    f([v](int64_t) { return v; });
  }
}

// dst = op(a, b, c) (where's cond, self and other).
template <typename T, typename Op>
void scalar_ternary(T* dst, Src<T> a, Src<T> b, Src<T> c, int64_t m, Op op) {
  with_reader(a, [&](auto x) {
    with_reader(b, [&](auto y) {
      with_reader(c, [&](auto z) {
        for (int64_t i = 0; i < m; ++i) dst[i] = op(x(i), y(i), z(i));
      });
    });
  });
}

// Copies elements [c, c + m) of the result from a broadcast, strided or bool input
// into dst (bools as 0 or 1), walking the result's index space row by row.
template <typename T, typename U>
void gather_typed(T* dst, const U* base, const DimVector& sizes, const DimVector& strides,
                  int64_t c, int64_t m) {
  size_t r = sizes.size();
  DimVector idx(r, 0);
  int64_t off = 0, rem = c;
  for (size_t d = r; d-- > 0;) {
    idx.data()[d] = rem % sizes[d];
    rem /= sizes[d];
    off += idx[d] * strides[d];
  }
  const int64_t inner = sizes[r - 1], step = strides[r - 1];
  for (int64_t done = 0;;) {
    int64_t run = std::min(inner - idx[r - 1], m - done);
    const U* src = base + off;
    T* out = dst + done;
    if (step == 0) {
      fill(out, run, static_cast<T>(src[0]));
    } else if (step == 1) {
      for (int64_t i = 0; i < run; ++i) out[i] = static_cast<T>(src[i]);
    } else {
      for (int64_t i = 0; i < run; ++i) out[i] = static_cast<T>(src[i * step]);
    }
    done += run;
    if (done == m) return;
    // The row is done: carry into the outer dims.
    off -= idx[r - 1] * step;  // back to the row's start
    idx.data()[r - 1] = 0;
    for (size_t d = r - 1; d-- > 0;) {
      off += strides[d];
      if (++idx.data()[d] < sizes[d]) break;
      off -= sizes[d] * strides[d];
      idx.data()[d] = 0;
    }
  }
}

}  // namespace tsl::fusion
