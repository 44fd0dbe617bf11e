// The CPU formulas of the fused ops (one struct per row of runtime/fused_ops.def), in one
// place for the programs that must compute them alike: the unfused kernels
// (elementwise_unary.cpp), the fused chunk loop (runtime/fusion/chunk_loop.cpp) and the C++
// generated per FusionGroup (runtime/fusion/codegen.cpp), which embeds this file's text.
// So it includes nothing of TSL's, and no line of it may contain the delimiter of the
// raw string CMake wraps it in (CMakeLists.txt: cpu_formulas_text.cpp). See Note [CPU
// formulas].
#pragma once

#include <cmath>
#include <cstring>

// GCC 12 reports false -W(maybe-)uninitialized warnings inside its own AVX-512 intrinsics
// (GCC bug 105593) when Eigen's packet math is inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

namespace tsl::formulas {

// Note [CPU formulas]
// The struct of a fused op holds its formulas, on values of the run's dtype T (float or
// double; bools as T(0) or T(1), see Note [Bool values in the fused program]):
// * `scalar(v, ...)`: the operands, then the step's values (the slope; clamp's bounds,
//   -inf and +inf where absent), to the result. The chunk loop runs it over a chunk,
//   and the compiler vectorizes that loop.
// * `packet(x, ...)`: the same on one Eigen packet, the form the compiled kernels run.
//   An Exact form (Note [Fused ops]) is the same IEEE operations as its scalar form,
//   lane by lane, so both give the same bits on any element.
// * A Simd form derives from SimdForm and gives instead `array(e)`, the Eigen array
//   expression whose SIMD functions the unfused kernel runs (map_contiguous in
//   elementwise_unary.cpp), and `kLimit`, the magnitude from which (and NaN) those
//   functions are not exact: the kernels redo such elements with `scalar` (float64 from
//   eight times the limit). Its packet form runs `array` on one packet as a fixed-size
//   array, so that Eigen picks the same functions as for the unfused kernel's arrays.
// Where the unfused kernel computes the same thing it calls the same struct (exp, tanh,
// relu, clamp, ...), so a formula is written once.

namespace ei = Eigen::internal;

template <typename P>
using Lane = typename ei::unpacket_traits<P>::type;
template <typename P>
inline constexpr int kLanes = ei::unpacket_traits<P>::size;

// The bound below which (in magnitude) the Simd form F is exact, in T.
template <typename F, typename T>
constexpr T simd_bound() {
  return static_cast<T>(sizeof(T) == 8 ? F::kLimit * 8 : F::kLimit);
}

// Eigen's form of F::array on one packet.
template <typename F, typename P>
inline P simd_array(const P& x) {
  using T = Lane<P>;
  using Lanes = Eigen::Array<T, kLanes<P>, 1>;
  alignas(64) T in[kLanes<P>], out[kLanes<P>];
  ei::pstore(in, x);
  Eigen::Map<Lanes, Eigen::Aligned64> result(out);
  result = F::array(Eigen::Map<const Lanes, Eigen::Aligned64>(in));
  return ei::pload<P>(out);
}

// r, with the lanes where !(|x| < bound) (NaN included) redone by F::scalar.
template <typename F, typename P>
inline P redo_outside(const P& x, const P& r) {
  using T = Lane<P>;
  P inside = ei::pcmp_lt(ei::pabs(x), ei::pset1<P>(simd_bound<F, T>()));
  if (!ei::predux_any(ei::pandnot(ei::ptrue(x), inside))) return r;
  alignas(64) T xs[kLanes<P>], rs[kLanes<P>], ins[kLanes<P>];
  ei::pstore(xs, x);
  ei::pstore(rs, r);
  ei::pstore(ins, inside);
  for (int l = 0; l < kLanes<P>; ++l) {
    T zero = T(0);
    if (std::memcmp(&ins[l], &zero, sizeof(T)) == 0) rs[l] = F::scalar(xs[l]);
  }
  return ei::pload<P>(rs);
}

template <typename F>
struct SimdForm {
  template <typename P>
  static P packet(const P& x) {
    return redo_outside<F>(x, simd_array<F>(x));
  }
};

// The scalar formula op on each lane (vectorized by the compiler).
template <typename P, typename Op>
inline P each_lane(const P& x, Op op) {
  alignas(64) Lane<P> xs[kLanes<P>];
  ei::pstore(xs, x);
  for (int l = 0; l < kLanes<P>; ++l) xs[l] = op(xs[l]);
  return ei::pload<P>(xs);
}

template <typename P>
inline P zero_of() {
  return ei::pset1<P>(Lane<P>(0));
}
// A comparison's mask as 1 where it holds (as01) or where it does not (not01), else 0.
template <typename P>
inline P as01(const P& mask) {
  return ei::pand(mask, ei::pset1<P>(Lane<P>(1)));
}
template <typename P>
inline P not01(const P& mask) {
  return ei::pandnot(ei::pset1<P>(Lane<P>(1)), mask);
}

// ---- Simd forms ---------------------------------------------------------------------

// The C library's function and Eigen's array function of the same name.
#define TSL_SIMD_MATH(name, limit)          \
  struct name : SimdForm<name> {            \
    static constexpr double kLimit = limit; \
    template <typename T>                   \
    static T scalar(T v) {                  \
      return std::name(v);                  \
    }                                       \
    template <typename A>                   \
    static auto array(const A& e) {         \
      return e.name();                      \
    }                                       \
  };
TSL_SIMD_MATH(exp, 87.0)
TSL_SIMD_MATH(log, INFINITY)
TSL_SIMD_MATH(log1p, INFINITY)
TSL_SIMD_MATH(expm1, 87.0)
TSL_SIMD_MATH(sin, INFINITY)
TSL_SIMD_MATH(cos, INFINITY)
TSL_SIMD_MATH(tanh, INFINITY)
#undef TSL_SIMD_MATH

struct reciprocal : SimdForm<reciprocal> {
  static constexpr double kLimit = INFINITY;
  template <typename T>
  static T scalar(T v) {
    return T(1) / v;
  }
  template <typename A>
  static auto array(const A& e) {
    return e.inverse();
  }
};

struct sigmoid : SimdForm<sigmoid> {
  static constexpr double kLimit = 87.0;
  template <typename T>
  static T scalar(T v) {
    return T(1) / (T(1) + std::exp(-v));
  }
  template <typename A>
  static auto array(const A& e) {
    using T = typename A::Scalar;
    return (T(1) + (-e).exp()).inverse();
  }
};

struct silu : SimdForm<silu> {
  static constexpr double kLimit = 87.0;
  template <typename T>
  static T scalar(T v) {
    return v / (T(1) + std::exp(-v));
  }
  template <typename A>
  static auto array(const A& e) {
    using T = typename A::Scalar;
    return e / (T(1) + (-e).exp());
  }
};

// ---- Exact forms: float results -----------------------------------------------------

struct neg {
  template <typename T>
  static T scalar(T v) {
    return -v;
  }
  template <typename P>
  static P packet(const P& v) {
    return ei::pxor(v, ei::pset1<P>(Lane<P>(-0.0)));
  }
};

struct abs {
  template <typename T>
  static T scalar(T v) {
    return std::abs(v);
  }
  template <typename P>
  static P packet(const P& v) {
    return ei::pabs(v);
  }
};

// Not Eigen's psqrt: with EIGEN_FAST_MATH it is an approximation.
struct sqrt {
  template <typename T>
  static T scalar(T v) {
    return std::sqrt(v);
  }
  template <typename P>
  static P packet(const P& v) {
    return each_lane(v, [](Lane<P> x) { return scalar(x); });
  }
};

struct rsqrt {
  template <typename T>
  static T scalar(T v) {
    return T(1) / std::sqrt(v);
  }
  template <typename P>
  static P packet(const P& v) {
    return each_lane(v, [](Lane<P> x) { return scalar(x); });
  }
};

struct square {
  template <typename T>
  static T scalar(T v) {
    return v * v;
  }
  template <typename P>
  static P packet(const P& v) {
    return ei::pmul(v, v);
  }
};

// v < 0 ? 0 : v keeps NaN, as PyTorch's relu does.
struct relu {
  template <typename T>
  static T scalar(T v) {
    return v < T(0) ? T(0) : v;
  }
  template <typename P>
  static P packet(const P& v) {
    return ei::pselect(ei::pcmp_lt(v, zero_of<P>()), zero_of<P>(), v);
  }
};

struct leaky_relu {
  template <typename T>
  static T scalar(T v, T slope) {
    return v > T(0) ? v : v * slope;
  }
  template <typename P>
  static P packet(const P& v, const P& slope) {
    return ei::pselect(ei::pcmp_lt(zero_of<P>(), v), v, ei::pmul(v, slope));
  }
};

// min(max(v, lo), hi) as PyTorch: when lo > hi every element becomes hi; NaN stays NaN
// (comparisons with NaN are false). An absent bound is -inf or +inf: it clamps nothing.
struct clamp {
  template <typename T>
  static T scalar(T v, T lo, T hi) {
    T t = v < lo ? lo : v;
    return t > hi ? hi : t;
  }
  template <typename P>
  static P packet(const P& v, const P& lo, const P& hi) {
    P t = ei::pselect(ei::pcmp_lt(v, lo), lo, v);
    return ei::pselect(ei::pcmp_lt(hi, t), hi, t);
  }
};

// alpha is the chunk loop's: it computes add(x, alpha * y) (Note [Fused ops]).
struct add {
  template <typename T>
  static T scalar(T x, T y) {
    return x + y;
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return ei::padd(x, y);
  }
};

struct sub {
  template <typename T>
  static T scalar(T x, T y) {
    return x - y;
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return ei::psub(x, y);
  }
};

struct mul {
  template <typename T>
  static T scalar(T x, T y) {
    return x * y;
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return ei::pmul(x, y);
  }
};

struct div {
  template <typename T>
  static T scalar(T x, T y) {
    return x / y;
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return ei::pdiv(x, y);
  }
};

// ---- Exact forms: bool results, as T(0) or T(1) -------------------------------------

struct eq {
  template <typename T>
  static T scalar(T x, T y) {
    return T(x == y);
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return as01(ei::pcmp_eq(x, y));
  }
};

struct ne {
  template <typename T>
  static T scalar(T x, T y) {
    return T(x != y);
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return not01(ei::pcmp_eq(x, y));
  }
};

struct lt {
  template <typename T>
  static T scalar(T x, T y) {
    return T(x < y);
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return as01(ei::pcmp_lt(x, y));
  }
};

struct le {
  template <typename T>
  static T scalar(T x, T y) {
    return T(x <= y);
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return as01(ei::pcmp_le(x, y));
  }
};

struct gt {
  template <typename T>
  static T scalar(T x, T y) {
    return T(x > y);
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return as01(ei::pcmp_lt(y, x));
  }
};

struct ge {
  template <typename T>
  static T scalar(T x, T y) {
    return T(x >= y);
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return as01(ei::pcmp_le(y, x));
  }
};

// Neither is zero.
struct logical_and {
  template <typename T>
  static T scalar(T x, T y) {
    return T(x != T(0) && y != T(0));
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return not01(ei::por(ei::pcmp_eq(x, zero_of<P>()), ei::pcmp_eq(y, zero_of<P>())));
  }
};

// Not both zero.
struct logical_or {
  template <typename T>
  static T scalar(T x, T y) {
    return T(x != T(0) || y != T(0));
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return not01(ei::pand(ei::pcmp_eq(x, zero_of<P>()), ei::pcmp_eq(y, zero_of<P>())));
  }
};

struct logical_xor {
  template <typename T>
  static T scalar(T x, T y) {
    return T((x != T(0)) != (y != T(0)));
  }
  template <typename P>
  static P packet(const P& x, const P& y) {
    return as01(ei::pxor(ei::pcmp_eq(x, zero_of<P>()), ei::pcmp_eq(y, zero_of<P>())));
  }
};

struct logical_not {
  template <typename T>
  static T scalar(T v) {
    return T(v == T(0));
  }
  template <typename P>
  static P packet(const P& v) {
    return as01(ei::pcmp_eq(v, zero_of<P>()));
  }
};

struct isnan {
  template <typename T>
  static T scalar(T v) {
    return T(v != v);
  }
  template <typename P>
  static P packet(const P& v) {
    return not01(ei::pcmp_eq(v, v));
  }
};

struct isinf {
  template <typename T>
  static T scalar(T v) {
    return T(std::isinf(v));
  }
  template <typename P>
  static P packet(const P& v) {
    return as01(ei::pcmp_eq(ei::pabs(v), ei::pset1<P>(Lane<P>(INFINITY))));
  }
};

struct isfinite {
  template <typename T>
  static T scalar(T v) {
    return T(std::isfinite(v));
  }
  template <typename P>
  static P packet(const P& v) {
    return as01(ei::pcmp_lt(ei::pabs(v), ei::pset1<P>(Lane<P>(INFINITY))));
  }
};

// ---- Selection and conversion -------------------------------------------------------

// cond (0 or 1) != 0 ? self : other.
struct where {
  template <typename T>
  static T scalar(T cond, T self, T other) {
    return cond != T(0) ? self : other;
  }
  template <typename P>
  static P packet(const P& cond, const P& self, const P& other) {
    return ei::pselect(ei::pcmp_eq(cond, zero_of<P>()), other, self);
  }
};

// `to` the value's own dtype: the value.
struct identity {
  template <typename T>
  static T scalar(T v) {
    return v;
  }
  template <typename P>
  static P packet(const P& v) {
    return v;
  }
};

}  // namespace tsl::formulas
