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
#include <type_traits>

// GCC 12 reports false -W(maybe-)uninitialized warnings inside its own AVX-512 intrinsics
// (GCC bug 105593) when Eigen's packet math is inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

// SLEEF's vector functions (Note [Vector math]), where the build has them: CMake's
// TSL_SLEEF (cmake/sleef.cmake) defines TSL_HAVE_SLEEF for TSL's code and for the
// compiled fusion kernels alike.
#if defined(TSL_HAVE_SLEEF)
#include <sleef.h>
#endif

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
// * A Simd form derives from SimdForm and gives instead its packet function
//   (`vector(P)`: SLEEF's or Eigen's, Note [Vector math]) and the bounds from which (and
//   NaN) that function is not exact: every kernel (the unfused one, the chunk loop, a
//   compiled one) runs `vector` on whole packets and redoes such elements with `scalar`.
//   Its packet form is `vector` with those lanes redone.
// Where the unfused kernel computes the same thing it calls the same struct (exp, tanh,
// relu, clamp, ...), so a formula is written once.

namespace ei = Eigen::internal;

template <typename P>
using Lane = typename ei::unpacket_traits<P>::type;
template <typename P>
inline constexpr int kLanes = ei::unpacket_traits<P>::size;

// Note [Vector math]
// A Simd form's packet function, `vector(P)`, is one of two:
// * F::simd(P), where F has one for packets P, chosen for accuracy first (within 1 ulp
//   of the correctly rounded result; PyTorch's CPU kernels use SLEEF's 1-ulp functions)
//   and then speed:
//   - float32 exp: Eigen's generic exp, inlined (its AVX-512 one is 4-5 ulps off);
//     tanh: TSL's own formula on Eigen's exp (SLEEF's is 5.5x slower than Eigen's tanh,
//     which is 5 ulps off); sigmoid, silu, reciprocal: formulas of those and IEEE
//     operations;
//   - log, log1p, expm1, sin, cos in float32, and every function in float64: SLEEF's
//     1.0-ulp function (u10) where the build has SLEEF (TSL_HAVE_SLEEF), chosen at
//     compile time for the packet's width and the capability's instruction set (the
//     sleef_<f> overloads below: Sleef_logf8_u10avx2, ...).
//   Its bound is kSimdLimit (float32) or kSimdLimit64 (float64). Lanes at or beyond it,
//   and NaNs, are replaced by 0 before the call and redone by F::scalar, so every lane's
//   bits depend on its own value only: SLEEF's sin and cos take a slower range reduction
//   for the whole packet when any lane is >= 125 (float32) or >= 1e14 (float64), NaN
//   included, which changes the last bit of the other lanes (their bounds); Eigen's exp
//   flushes denormal results (its bound: 87).
// * Otherwise (log1p, expm1, sin and cos in a build without SLEEF, float64 functions
//   there) Eigen's array function on one packet (simd_array); its bound is kLimit in
//   float32 and eight times kLimit in float64.
// tests/numerics/transcendental_ulp.py measures the distance to the correctly rounded
// result per capability (Numerics.TranscendentalWithin1Ulp): 1 ulp for each function,
// 2 for sigmoid (an exp, then a division). Eigen's log1p and sin are 2 ulps off, expm1
// 3-4: a build without SLEEF keeps those.

template <typename F, typename P>
concept HasSimd = requires(const P& x) {
  F::simd(x);
};

// The bound below which (in magnitude) F's packet function on packets P is exact, in
// P's lane type.
template <typename F, typename P>
constexpr Lane<P> packet_bound() {
  using T = Lane<P>;
  if constexpr (HasSimd<F, P>) {
    return static_cast<T>(sizeof(T) == 8 ? F::kSimdLimit64 : F::kSimdLimit);
  } else {
    return static_cast<T>(sizeof(T) == 8 ? F::kLimit * 8 : F::kLimit);
  }
}

// The same for the full packets of T, the ones every kernel runs (simd_map.h).
template <typename F, typename T>
constexpr T simd_bound() {
  return packet_bound<F, typename ei::packet_traits<T>::type>();
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

// The lanes of x inside F's bound on packets P (|x| < bound, so not NaN).
template <typename F, typename P>
inline P inside_bound(const P& x) {
  return ei::pcmp_lt(ei::pabs(x), ei::pset1<P>(packet_bound<F, P>()));
}

// r, with the lanes where !(|x| < bound) (NaN included) redone by F::scalar.
template <typename F, typename P>
inline P redo_outside(const P& x, const P& r) {
  using T = Lane<P>;
  P inside = inside_bound<F>(x);
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
  // F's packet function, exact inside F's bound (lanes outside it are garbage: callers
  // redo them with F::scalar).
  template <typename P>
  static P vector(const P& x) {
    if constexpr (HasSimd<F, P>) {
      return F::simd(ei::pand(x, inside_bound<F>(x)));
    } else {
      return simd_array<F>(x);
    }
  }
  template <typename P>
  static P packet(const P& x) {
    return redo_outside<F>(x, vector(x));
  }
};

#if defined(TSL_HAVE_SLEEF) && defined(__SSE2__)
// sleef_<f>(packet): SLEEF's 1.0-ulp f for each packet type of the instruction set the
// file is compiled for (each CPU capability's kernels, and a compiled fusion kernel,
// get their own: cmake/cpu_capabilities.cmake).
#define TSL_SLEEF_CAT_(a, b) a##b
#define TSL_SLEEF_CAT(a, b) TSL_SLEEF_CAT_(a, b)
#if defined(__AVX2__) && defined(__FMA__)
#define TSL_SLEEF_ISA128 avx2128
#elif defined(__SSE4_1__)
#define TSL_SLEEF_ISA128 sse4
#else
#define TSL_SLEEF_ISA128 sse2
#endif
#define TSL_SLEEF_128(f)                                          \
  inline __m128 sleef_##f(__m128 x) {                             \
    return TSL_SLEEF_CAT(Sleef_##f##f4_u10, TSL_SLEEF_ISA128)(x); \
  }                                                               \
  inline __m128d sleef_##f(__m128d x) {                           \
    return TSL_SLEEF_CAT(Sleef_##f##d2_u10, TSL_SLEEF_ISA128)(x); \
  }
#if defined(__AVX2__) && defined(__FMA__)
#define TSL_SLEEF_256(f)                                                 \
  inline __m256 sleef_##f(__m256 x) { return Sleef_##f##f8_u10avx2(x); } \
  inline __m256d sleef_##f(__m256d x) { return Sleef_##f##d4_u10avx2(x); }
#elif defined(__AVX__)
#define TSL_SLEEF_256(f)                                                \
  inline __m256 sleef_##f(__m256 x) { return Sleef_##f##f8_u10avx(x); } \
  inline __m256d sleef_##f(__m256d x) { return Sleef_##f##d4_u10avx(x); }
#else
#define TSL_SLEEF_256(f)
#endif
#if defined(__AVX512F__)
#define TSL_SLEEF_512(f)                                                     \
  inline __m512 sleef_##f(__m512 x) { return Sleef_##f##f16_u10avx512f(x); } \
  inline __m512d sleef_##f(__m512d x) { return Sleef_##f##d8_u10avx512f(x); }
#else
#define TSL_SLEEF_512(f)
#endif
#define TSL_SLEEF(f) TSL_SLEEF_128(f) TSL_SLEEF_256(f) TSL_SLEEF_512(f)
TSL_SLEEF(exp)
TSL_SLEEF(expm1)
TSL_SLEEF(log)
TSL_SLEEF(log1p)
TSL_SLEEF(sin)
TSL_SLEEF(cos)
TSL_SLEEF(tanh)
#undef TSL_SLEEF
#undef TSL_SLEEF_512
#undef TSL_SLEEF_256
#undef TSL_SLEEF_128
#undef TSL_SLEEF_ISA128
#undef TSL_SLEEF_CAT
#undef TSL_SLEEF_CAT_
// A Simd form's F::simd: SLEEF's function of its name, for the packets it has one for.
#define TSL_SLEEF_SIMD(f)                                \
  template <typename P>                                  \
  static auto simd(const P& x)->decltype(sleef_##f(x)) { \
    return sleef_##f(x);                                 \
  }
#else
#define TSL_SLEEF_SIMD(f)
#endif

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

// The C library's function, Eigen's array function and SLEEF's function of the same
// name. limit: Eigen's bound in float32 (Note [Vector math]); simd_limit and
// simd_limit64: SLEEF's in float32 and float64.
#define TSL_SIMD_MATH(name, limit, simd_limit, simd_limit64) \
  struct name : SimdForm<name> {                             \
    static constexpr double kLimit = limit;                  \
    static constexpr double kSimdLimit = simd_limit;         \
    static constexpr double kSimdLimit64 = simd_limit64;     \
    template <typename T>                                    \
    static T scalar(T v) {                                   \
      return std::name(v);                                   \
    }                                                        \
    template <typename A>                                    \
    static auto array(const A& e) {                          \
      return e.name();                                       \
    }                                                        \
    TSL_SLEEF_SIMD(name)                                     \
  };
TSL_SIMD_MATH(log, INFINITY, INFINITY, INFINITY)
TSL_SIMD_MATH(log1p, INFINITY, INFINITY, INFINITY)
TSL_SIMD_MATH(expm1, 87.0, INFINITY, INFINITY)
TSL_SIMD_MATH(sin, INFINITY, 125.0, 1e14)
TSL_SIMD_MATH(cos, INFINITY, 125.0, 1e14)
#undef TSL_SIMD_MATH
#undef TSL_SLEEF_SIMD

// exp. float32: Eigen's generic exp (pexp_float), within 1 ulp wherever its result is a
// normal float (checked on every float below 87.5 in magnitude, on each capability), and
// inlined; Eigen's own AVX-512 exp is 4-5 ulps off beyond |x| > 20, SLEEF's is an
// out-of-line call. Below -87.5 the result is denormal and Eigen flushes it: such lanes,
// |x| >= 87, are redone by std::exp. float64: SLEEF's where the build has it.
struct exp : SimdForm<exp> {
  static constexpr double kLimit = 87.0;
  static constexpr double kSimdLimit = 87.0;
  static constexpr double kSimdLimit64 = INFINITY;
  template <typename T>
  static T scalar(T v) {
    return std::exp(v);
  }
  template <typename A>
  static auto array(const A& e) {
    return e.exp();
  }
  template <typename P>
  requires std::is_same_v < Lane<P>,
  float > static P simd(const P& x) { return ei::pexp_float(x); }
#if defined(TSL_HAVE_SLEEF) && defined(__SSE2__)
  template <typename P>
  requires std::is_same_v < Lane<P>,
  double > static auto simd(const P& x) -> decltype(sleef_exp(x)) { return sleef_exp(x); }
#endif
};

// tanh. float32: SLEEF's is 1 ulp but 5.5x slower than Eigen's, which is 5 ulps off; this
// one is within 1 ulp (checked against tanhl on every positive float below 12, with and
// without FMA) at about twice Eigen's time: Cephes's odd polynomial below 0.625, else
// 1 - 2 / (exp(2|x|) + 1), whose error the subtraction from 1 shrinks, with Eigen's
// fastest exp (its AVX-512 one is 1 ulp for the arguments that matter here, 2|x| < 20;
// beyond, the quotient is below half an ulp of 1 either way); the sign copied back.
// float64: SLEEF's where the build has it.
struct tanh : SimdForm<tanh> {
  static constexpr double kLimit = INFINITY;
  static constexpr double kSimdLimit = INFINITY;
  static constexpr double kSimdLimit64 = INFINITY;
  template <typename T>
  static T scalar(T v) {
    return std::tanh(v);
  }
  template <typename A>
  static auto array(const A& e) {
    return e.tanh();
  }
  template <typename P>
  requires std::is_same_v < Lane<P>,
  float > static P simd(const P& x) {
    const P a = ei::pabs(x);
    const P z = ei::pmul(a, a);
    P p = ei::pset1<P>(-5.70498872745e-3f);
    p = ei::pmadd(p, z, ei::pset1<P>(2.06390887954e-2f));
    p = ei::pmadd(p, z, ei::pset1<P>(-5.37397155531e-2f));
    p = ei::pmadd(p, z, ei::pset1<P>(1.33314422036e-1f));
    p = ei::pmadd(p, z, ei::pset1<P>(-3.33332819422e-1f));
    const P small = ei::pmadd(ei::pmul(p, z), a, a);
    const P one = ei::pset1<P>(1.0f);
    const P e = ei::pexp(ei::padd(a, a));
    const P big = ei::psub(one, ei::pdiv(ei::pset1<P>(2.0f), ei::padd(e, one)));
    const P r = ei::pselect(ei::pcmp_lt(a, ei::pset1<P>(0.625f)), small, big);
    return ei::por(r, ei::pand(x, ei::pset1<P>(-0.0f)));
  }
#if defined(TSL_HAVE_SLEEF) && defined(__SSE2__)
  template <typename P>
  requires std::is_same_v < Lane<P>,
  double > static auto simd(const P& x) -> decltype(sleef_tanh(x)) { return sleef_tanh(x); }
#endif
};

// 1 / v by IEEE division (Eigen's inverse is the same pdiv).
struct reciprocal : SimdForm<reciprocal> {
  static constexpr double kLimit = INFINITY;
  static constexpr double kSimdLimit = INFINITY;
  static constexpr double kSimdLimit64 = INFINITY;
  template <typename T>
  static T scalar(T v) {
    return T(1) / v;
  }
  template <typename A>
  static auto array(const A& e) {
    return e.inverse();
  }
  template <typename P>
  static P simd(const P& x) {
    return ei::pdiv(ei::pset1<P>(Lane<P>(1)), x);
  }
};

// 1 / (1 + exp(-v)). The packet function takes e = exp(-|v|) <= 1 (exp's, so its bounds)
// and computes e / (1 + e) for v < 0: 1 + exp(-v) there rounds a large number, and the
// result was 3 ulps off (at v = -16.7); this way 2. The scalar form, for the lanes
// outside the bound, is PyTorch's: where exp(-v) overflows (v < -88.7 in float32) the
// quotient is 0, as PyTorch's kernel gives.
struct sigmoid : SimdForm<sigmoid> {
  static constexpr double kLimit = 87.0;
  static constexpr double kSimdLimit = 87.0;
  static constexpr double kSimdLimit64 = INFINITY;
  template <typename T>
  static T scalar(T v) {
    return T(1) / (T(1) + std::exp(-v));
  }
  template <typename A>
  static auto array(const A& e) {
    using T = typename A::Scalar;
    return (T(1) + (-e).exp()).inverse();
  }
  template <typename P>
  static auto simd(const P& x) -> decltype(exp::simd(x)) {
    const P one = ei::pset1<P>(Lane<P>(1));
    const P e = exp::simd(ei::pnegate(ei::pabs(x)));
    return ei::pdiv(ei::pselect(ei::pcmp_lt(x, zero_of<P>()), e, one), ei::padd(one, e));
  }
};

// v / (1 + exp(-v)); the packet function v * e / (1 + e) for v < 0, as sigmoid's.
struct silu : SimdForm<silu> {
  static constexpr double kLimit = 87.0;
  static constexpr double kSimdLimit = 87.0;
  static constexpr double kSimdLimit64 = INFINITY;
  template <typename T>
  static T scalar(T v) {
    return v / (T(1) + std::exp(-v));
  }
  template <typename A>
  static auto array(const A& e) {
    using T = typename A::Scalar;
    return e / (T(1) + (-e).exp());
  }
  template <typename P>
  static auto simd(const P& x) -> decltype(exp::simd(x)) {
    const P one = ei::pset1<P>(Lane<P>(1));
    const P e = exp::simd(ei::pnegate(ei::pabs(x)));
    const P num = ei::pselect(ei::pcmp_lt(x, zero_of<P>()), ei::pmul(x, e), x);
    return ei::pdiv(num, ei::padd(one, e));
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
