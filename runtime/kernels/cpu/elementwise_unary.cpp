// CPU kernels of the one-input elementwise ops (exp, relu, gelu, clamp, isnan, ...),
// with PyTorch's dtype rules: float math on int/bool inputs computes in float32,
// sign-like ops keep int64, and the ops PyTorch rejects for a dtype are errors here.
#include <cmath>
#include <limits>
#include <optional>
#include <string>

// GCC 12 reports false -W(maybe-)uninitialized warnings inside its own AVX-512 intrinsics
// (_mm512_undefined_*, GCC bug 105593) when Eigen's packet math is inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>

#include "runtime/kernels/cpu/formulas.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/simd_map.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/cpu_capability.h"

namespace tsl {
namespace {

[[noreturn]] void not_implemented(const char* op, DType t) {
  TSL_ERROR(op, ": not implemented for '", scalar_type_name(t), "'");
}

// out = op(x) with x of element type In (checked) and a new contiguous output.
template <typename In, typename Out, typename Op>
Tensor map_unary(const Tensor& x, Op op) {
  Tensor out = Tensor::empty(x.sizes(), dtype_of<Out>);
  if (x.is_contiguous() && x.numel() < 2 * kParallelGrain) {
    // The one row the loop shape would make, without building it (small ops).
    Out* o = out.data_ptr<Out>();
    const In* a = x.data_ptr<In>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = op(a[i]);
    return out;
  }
  cpu::unary_strided<In, Out>(x.sizes(), out.data_ptr<Out>(), out.strides(), x.data_ptr<In>(),
                              x.strides(), op);
  return out;
}

// Float math: int and bool inputs compute in float32, as in PyTorch.
template <typename Op>
Tensor float_unary(const Tensor& x, Op op) {
  if (x.dtype() == DType::Float64) return map_unary<double, double>(x, op);
  return map_unary<float, float>(cpu::to_dtype_copy(x, DType::Float32), op);
}

// dst[0, n) from src over contiguous data, in chunks split between threads: `map(dst,
// src, n)` computes a chunk through SIMD functions exact for |x| < bound; elements
// outside it and NaNs are redone with the scalar `op`.
template <typename T, typename Op, typename MapChunk>
Tensor map_contiguous(const Tensor& in, Op op, MapChunk map, T bound) {
  Tensor out = Tensor::empty(in.sizes(), dtype_of<T>);
  const T* src = in.data_ptr<T>();
  T* dst = out.data_ptr<T>();
  auto chunk = [&](int64_t b, int64_t e) {
    map(dst + b, src + b, e - b);
    bool any_outside = false;
    for (int64_t i = b; i < e; ++i) any_outside |= !(std::abs(src[i]) < bound);
    if (!any_outside) return;
    for (int64_t i = b; i < e; ++i) {
      if (!(std::abs(src[i]) < bound)) dst[i] = op(src[i]);
    }
  };
  int64_t n = in.numel();
  if (n < 2 * kParallelGrain) {
    chunk(0, n);
  } else {
    parallel_for(n, kParallelGrain, chunk);
  }
  return out;
}

// Float math on contiguous data through Eigen's SIMD array functions: `aop` maps a
// chunk (an Eigen array) to an expression. Eigen's exp flushes results that are
// denormal or near overflow (|x| > ~87.3 in float32), so elements with |x| >= `limit`
// (scaled by 8 for float64) and NaNs are redone with the scalar `op`. Strided inputs
// take the scalar `op` throughout.
template <typename Op, typename ArrayOp>
Tensor float_unary_vec(const Tensor& x, Op op, ArrayOp aop, double limit) {
  Tensor in = x.dtype() == DType::Float64 ? x : cpu::to_dtype_copy(x, DType::Float32);
  if (!in.is_contiguous()) return float_unary(in, op);
  auto map = [&aop](auto* dst, const auto* src, int64_t n) { cpu::simd_map(dst, src, n, aop); };
  if (in.dtype() == DType::Float64) return map_contiguous<double>(in, op, map, limit * 8);
  return map_contiguous<float>(in, op, map, static_cast<float>(limit));
}

// The kernel of a Simd formula F of formulas.h (the fused ops' own, Note [CPU
// formulas]): F's packet function (SLEEF's or Eigen's, Note [Vector math]) for
// contiguous data, as the fused chunk loop and compiled kernels compute it.
template <typename F>
Tensor map_formula(const Tensor& x) {
  Tensor in = x.dtype() == DType::Float64 ? x : cpu::to_dtype_copy(x, DType::Float32);
  auto op = [](auto v) { return F::scalar(v); };
  if (!in.is_contiguous()) return float_unary(in, op);
  auto map = [](auto* dst, const auto* src, int64_t n) {
    cpu::simd_map_packets(dst, src, n, [](const auto& p) { return F::vector(p); });
  };
  if (in.dtype() == DType::Float64) {
    return map_contiguous<double>(in, op, map, formulas::simd_bound<F, double>());
  }
  return map_contiguous<float>(in, op, map, formulas::simd_bound<F, float>());
}

// Activations PyTorch defines for floating tensors only.
template <typename Op>
Tensor floating_only_unary(const Tensor& x, const char* name, Op op) {
  if (!is_floating(x.dtype())) not_implemented(name, x.dtype());
  return float_unary(x, op);
}

// Ops that keep the dtype of int64 and floating inputs and reject bool.
template <typename Op>
Tensor numeric_unary(const Tensor& x, const char* name, Op op) {
  if (x.dtype() == DType::Bool) not_implemented(name, x.dtype());
  return TSL_DISPATCH_NUMERIC(x.dtype(), name,
                              [&] { return map_unary<scalar_t, scalar_t>(x, op); });
}

// A bool result for any input dtype.
template <typename Op>
Tensor predicate_unary(const Tensor& x, const char* name, Op op) {
  switch (x.dtype()) {
    case DType::Bool:
      return map_unary<bool, bool>(x, op);
    case DType::Int64:
      return map_unary<int64_t, bool>(x, op);
    case DType::Float32:
      return map_unary<float, bool>(x, op);
    case DType::Float64:
      return map_unary<double, bool>(x, op);
  }
  not_implemented(name, x.dtype());
}

// ---- Float math -----------------------------------------------------------------------

#define TSL_FLOAT_UNARY(name, expr)       \
  Tensor name##_kernel(const Tensor& x) { \
    return float_unary(x, [](auto v) {    \
      using T = decltype(v);              \
      (void)sizeof(T);                    \
      return static_cast<T>(expr);        \
    });                                   \
  }

#define TSL_FLOAT_UNARY_FORMULA(name) \
  Tensor name##_kernel(const Tensor& x) { return map_formula<formulas::name>(x); }

TSL_FLOAT_UNARY_FORMULA(exp)
TSL_FLOAT_UNARY(exp2, std::exp2(v))
TSL_FLOAT_UNARY_FORMULA(log)
TSL_FLOAT_UNARY(log2, std::log2(v))
TSL_FLOAT_UNARY(log10, std::log10(v))
TSL_FLOAT_UNARY_FORMULA(log1p)
TSL_FLOAT_UNARY_FORMULA(expm1)
TSL_FLOAT_UNARY(sqrt, formulas::sqrt::scalar(v))
TSL_FLOAT_UNARY(rsqrt, formulas::rsqrt::scalar(v))
TSL_FLOAT_UNARY_FORMULA(sin)
TSL_FLOAT_UNARY_FORMULA(cos)
TSL_FLOAT_UNARY(tan, std::tan(v))
TSL_FLOAT_UNARY(asin, std::asin(v))
TSL_FLOAT_UNARY(acos, std::acos(v))
TSL_FLOAT_UNARY(atan, std::atan(v))
TSL_FLOAT_UNARY(sinh, std::sinh(v))
TSL_FLOAT_UNARY(cosh, std::cosh(v))
TSL_FLOAT_UNARY(erf, std::erf(v))
TSL_FLOAT_UNARY_FORMULA(reciprocal)
TSL_FLOAT_UNARY_FORMULA(tanh)
TSL_FLOAT_UNARY_FORMULA(sigmoid)
#undef TSL_FLOAT_UNARY_FORMULA
#undef TSL_FLOAT_UNARY

// ---- Activations (floating only) ------------------------------------------------------

// The floating-only activations with a vectorized form for contiguous data.
template <typename Op, typename ArrayOp>
Tensor floating_only_unary_vec(const Tensor& x, const char* name, Op op, ArrayOp aop,
                               double limit) {
  if (!is_floating(x.dtype())) not_implemented(name, x.dtype());
  return float_unary_vec(x, op, aop, limit);
}

Tensor silu_kernel(const Tensor& x) {
  if (!is_floating(x.dtype())) not_implemented("silu", x.dtype());
  return map_formula<formulas::silu>(x);
}

// x * Phi(x) for contiguous float32 data, as PyTorch's vectorized kernel computes it:
// erf by Abramowitz-Stegun 7.1.26 (PyTorch's Vectorized<float>::erf, abs. error
// < 1.5e-7) around a SIMD exp, in blocks so the loops vectorize.
void gelu_erf_float(const float* x, float* out, int64_t n) {
  constexpr int64_t kBlock = 256;
  constexpr float kP = 0.3275911f, kP1 = 0.254829592f, kP2 = -0.284496736f;
  constexpr float kP3 = 1.421413741f, kP4 = -1.453152027f, kP5 = 1.061405429f;
  const float kAlpha = static_cast<float>(M_SQRT1_2);
  alignas(64) float e[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    int64_t m = std::min(kBlock, n - b);
    const float* xb = x + b;
    for (int64_t i = 0; i < m; ++i) e[i] = -(xb[i] * kAlpha) * (xb[i] * kAlpha);
    Eigen::Map<Eigen::ArrayXf> em(e, m);
    em = em.exp();
    for (int64_t i = 0; i < m; ++i) {
      float u = xb[i] * kAlpha;
      float t = 1.0f / (kP * std::abs(u) + 1.0f);
      float r = (((kP5 * t + kP4) * t + kP3) * t + kP2) * t + kP1;
      float erf_abs = 1.0f - r * t * e[i];
      float erf = u < 0 ? -erf_abs : erf_abs;
      out[b + i] = xb[i] * 0.5f * (1.0f + erf);
    }
  }
}

Tensor gelu_none(const Tensor& x) {
  if (!is_floating(x.dtype())) not_implemented("gelu", x.dtype());
  if (x.dtype() == DType::Float32 && x.is_contiguous()) {
    Tensor out = Tensor::empty(x.sizes(), DType::Float32);
    const float* src = x.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    auto chunk = [&](int64_t b, int64_t e) { gelu_erf_float(src + b, dst + b, e - b); };
    if (x.numel() < 2 * kParallelGrain) {
      chunk(0, x.numel());
    } else {
      parallel_for(x.numel(), kParallelGrain, chunk);
    }
    return out;
  }
  return float_unary(x, [](auto v) {
    using T = decltype(v);
    return static_cast<T>(v * T(0.5) * (T(1) + std::erf(v * T(M_SQRT1_2))));
  });
}

// The constants of gelu's tanh approximation, as PyTorch spells them.
constexpr double kGeluBeta = M_SQRT2 * M_2_SQRTPI * 0.5;
constexpr double kGeluKappa = 0.044715;

// gelu as PyTorch defines it: x * Phi(x), or the tanh approximation.
Tensor gelu_kernel(const Tensor& x, const std::string& approximate) {
  if (approximate == "tanh") {
    return floating_only_unary_vec(
        x, "gelu",
        [](auto v) {
          using T = decltype(v);
          T inner = T(kGeluBeta) * (v + T(kGeluKappa) * v * v * v);
          return static_cast<T>(T(0.5) * v * (T(1) + std::tanh(inner)));
        },
        [](const auto& a) {
          using T = typename std::decay_t<decltype(a)>::Scalar;
          return T(0.5) * a * (T(1) + (T(kGeluBeta) * (a + T(kGeluKappa) * a.cube())).tanh());
        },
        INFINITY);
  }
  TSL_CHECK(approximate == "none", "gelu: approximate must be 'none' or 'tanh', got '", approximate,
            "'");
  return gelu_none(x);
}

Tensor softplus_kernel(const Tensor& x, Scalar beta_s, Scalar threshold_s) {
  double beta = beta_s.to_double();
  double threshold = threshold_s.to_double();
  // exp(x * beta) is exact in the SIMD path while |x * beta| < 87.
  double limit = beta == 0 ? INFINITY : 87.0 / std::abs(beta);
  return floating_only_unary_vec(
      x, "softplus",
      [beta, threshold](auto v) {
        using T = decltype(v);
        T b = static_cast<T>(beta);
        return v * b > static_cast<T>(threshold) ? v
                                                 : static_cast<T>(std::log1p(std::exp(v * b)) / b);
      },
      [beta, threshold](const auto& a) {
        using T = typename std::decay_t<decltype(a)>::Scalar;
        T b = static_cast<T>(beta);
        return (a * b > static_cast<T>(threshold)).select(a, (a * b).exp().log1p() / b);
      },
      limit);
}

Tensor elu_kernel(const Tensor& x, Scalar alpha_s) {
  double alpha = alpha_s.to_double();
  return floating_only_unary_vec(
      x, "elu",
      [alpha](auto v) {
        using T = decltype(v);
        return v > T(0) ? v : static_cast<T>(std::expm1(v) * static_cast<T>(alpha));
      },
      [alpha](const auto& a) {
        using T = typename std::decay_t<decltype(a)>::Scalar;
        return (a > T(0)).select(a, a.expm1() * static_cast<T>(alpha));
      },
      87.0);
}

Tensor leaky_relu_kernel(const Tensor& x, Scalar slope_s) {
  double slope = slope_s.to_double();
  return floating_only_unary(x, "leaky_relu", [slope](auto v) {
    return formulas::leaky_relu::scalar(v, static_cast<decltype(v)>(slope));
  });
}

// ---- Ops that keep the dtype ----------------------------------------------------------

// Negation that wraps for the most negative int64 instead of overflowing.
template <typename T>
T negate(T v) {
  if constexpr (std::is_same_v<T, int64_t>)
    return static_cast<int64_t>(0 - static_cast<uint64_t>(v));
  else
    return -v;
}

Tensor neg_kernel(const Tensor& x) {
  TSL_CHECK(x.dtype() != DType::Bool,
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead.");
  return numeric_unary(x, "neg", [](auto v) { return negate(v); });
}

Tensor abs_kernel(const Tensor& x) {
  return numeric_unary(x, "abs", [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T>)
      return v < 0 ? negate(v) : v;
    else
      return std::abs(v);
  });
}

Tensor square_kernel(const Tensor& x) {
  // bool squares in int64, as torch.square (pow(x, 2)) does.
  Tensor in = x.dtype() == DType::Bool ? cpu::to_dtype_copy(x, DType::Int64) : x;
  return numeric_unary(in, "square", [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<uint64_t>(v) * static_cast<uint64_t>(v));
    } else {
      return v * v;
    }
  });
}

Tensor sign_kernel(const Tensor& x) {
  if (x.dtype() == DType::Bool) return map_unary<bool, bool>(x, [](bool v) { return v; });
  return numeric_unary(x, "sign", [](auto v) {
    using T = decltype(v);
    return static_cast<T>((T(0) < v) - (v < T(0)));
  });
}

// floor, ceil, round and trunc: identity on int64 (a copy), rejected for bool.
template <typename FloatOp>
Tensor rounding_unary(const Tensor& x, const char* name, FloatOp op) {
  return numeric_unary(x, name, [op](auto v) {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T>)
      return v;
    else
      return static_cast<T>(op(v));
  });
}

Tensor floor_kernel(const Tensor& x) {
  return rounding_unary(x, "floor", [](auto v) { return std::floor(v); });
}
Tensor ceil_kernel(const Tensor& x) {
  return rounding_unary(x, "ceil", [](auto v) { return std::ceil(v); });
}
// Half to even: nearbyint in the default rounding mode.
Tensor round_kernel(const Tensor& x) {
  return rounding_unary(x, "round", [](auto v) { return std::nearbyint(v); });
}
Tensor trunc_kernel(const Tensor& x) {
  return rounding_unary(x, "trunc", [](auto v) { return std::trunc(v); });
}

Tensor frac_kernel(const Tensor& x) {
  return floating_only_unary(x, "frac", [](auto v) { return v - std::trunc(v); });
}

Tensor relu_kernel(const Tensor& x) {
  TSL_CHECK(x.dtype() != DType::Bool, "Boolean inputs not supported for relu");
  return numeric_unary(x, "relu", [](auto v) { return formulas::relu::scalar(v); });
}

// ---- clamp ----------------------------------------------------------------------------

// clamp's dtype: a floating self keeps its dtype; otherwise the bounds take part in
// promotion as Python numbers (an int64 tensor clamped by 0.5 becomes float32).
DType clamp_dtype(const Tensor& x, const std::optional<Scalar>& lo,
                  const std::optional<Scalar>& hi) {
  if (is_floating(x.dtype())) return x.dtype();
  Tensor lo_t, hi_t;
  if (lo) lo_t = wrap_number(IValue(*lo));
  if (hi) hi_t = wrap_number(IValue(*hi));
  return cpu::result_type({&x, &lo_t, &hi_t});
}

// formulas::clamp: min(max(v, lo), hi) as PyTorch. An absent bound is the type's
// lowest or highest value (an infinity for floats): it clamps nothing.
template <typename T>
Tensor clamp_typed(const Tensor& x, const std::optional<Scalar>& lo_s,
                   const std::optional<Scalar>& hi_s) {
  using Limits = std::numeric_limits<T>;
  T lo = lo_s ? lo_s->to<T>() : Limits::has_infinity ? -Limits::infinity() : Limits::lowest();
  T hi = hi_s ? hi_s->to<T>() : Limits::has_infinity ? Limits::infinity() : Limits::max();
  return map_unary<T, T>(x, [lo, hi](T v) { return formulas::clamp::scalar(v, lo, hi); });
}

Tensor clamp_kernel(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  TSL_CHECK(lo || hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  DType t = clamp_dtype(x, lo, hi);
  if (t == DType::Bool) not_implemented("clamp", t);
  Tensor in = cpu::to_dtype_copy(x, t);
  return TSL_DISPATCH_NUMERIC(t, "clamp", [&] { return clamp_typed<scalar_t>(in, lo, hi); });
}

// hardtanh is clamp with both bounds, in self's dtype: an int64 tensor's bounds are
// truncated to ints, as PyTorch converts them.
Tensor hardtanh_kernel(const Tensor& x, Scalar lo, Scalar hi) {
  TSL_CHECK(x.dtype() != DType::Bool, "Bool inputs not supported for hardtanh");
  return TSL_DISPATCH_NUMERIC(x.dtype(), "hardtanh",
                              [&] { return clamp_typed<scalar_t>(x, lo, hi); });
}

// ---- logit ----------------------------------------------------------------------------

// log(x / (1 - x)) as PyTorch's kernel computes it, x clamped to [eps, 1 - eps] first
// when eps is given (a NaN stays NaN); the log is the log kernel's, on the quotient.
template <typename T>
Tensor logit_quotient(const Tensor& x, std::optional<double> eps) {
  const T lo = eps ? static_cast<T>(*eps) : T(0), hi = T(1) - lo;
  const bool clamped = eps.has_value();
  return map_unary<T, T>(x, [=](T v) {
    if (clamped) v = v < lo ? lo : (v > hi ? hi : v);
    return v / (T(1) - v);
  });
}

Tensor logit_kernel(const Tensor& x, std::optional<double> eps) {
  Tensor in = x.dtype() == DType::Float64 ? x : cpu::to_dtype_copy(x, DType::Float32);
  return log_kernel(in.dtype() == DType::Float64 ? logit_quotient<double>(in, eps)
                                                 : logit_quotient<float>(in, eps));
}

// ---- Predicates and logical ops -------------------------------------------------------

Tensor isnan_kernel(const Tensor& x) {
  return predicate_unary(x, "isnan", [](auto v) {
    if constexpr (std::is_floating_point_v<decltype(v)>)
      return v != v;
    else
      return false;
  });
}

Tensor isinf_kernel(const Tensor& x) {
  return predicate_unary(x, "isinf", [](auto v) {
    if constexpr (std::is_floating_point_v<decltype(v)>)
      return std::isinf(v);
    else
      return false;
  });
}

Tensor isfinite_kernel(const Tensor& x) {
  return predicate_unary(x, "isfinite", [](auto v) {
    if constexpr (std::is_floating_point_v<decltype(v)>)
      return std::isfinite(v);
    else
      return true;
  });
}

Tensor logical_not_kernel(const Tensor& x) {
  return predicate_unary(x, "logical_not", [](auto v) { return v == decltype(v)(0); });
}

Tensor bitwise_not_kernel(const Tensor& x) {
  if (x.dtype() == DType::Bool) return map_unary<bool, bool>(x, [](bool v) { return !v; });
  if (x.dtype() != DType::Int64) not_implemented("bitwise_not", x.dtype());
  return map_unary<int64_t, int64_t>(x, [](int64_t v) { return ~v; });
}

}  // namespace

// Built per capability (Note [One binary for every x86-64]).
namespace TSL_CAPABILITY_NAMESPACE {

void register_cpu_unary_kernels() {
  TSL_REGISTER_CPU(neg, neg_kernel);
  TSL_REGISTER_CPU(abs, abs_kernel);
  TSL_REGISTER_CPU(exp, exp_kernel);
  TSL_REGISTER_CPU(exp2, exp2_kernel);
  TSL_REGISTER_CPU(log, log_kernel);
  TSL_REGISTER_CPU(log2, log2_kernel);
  TSL_REGISTER_CPU(log10, log10_kernel);
  TSL_REGISTER_CPU(log1p, log1p_kernel);
  TSL_REGISTER_CPU(expm1, expm1_kernel);
  TSL_REGISTER_CPU(sqrt, sqrt_kernel);
  TSL_REGISTER_CPU(rsqrt, rsqrt_kernel);
  TSL_REGISTER_CPU(sin, sin_kernel);
  TSL_REGISTER_CPU(cos, cos_kernel);
  TSL_REGISTER_CPU(tan, tan_kernel);
  TSL_REGISTER_CPU(asin, asin_kernel);
  TSL_REGISTER_CPU(acos, acos_kernel);
  TSL_REGISTER_CPU(atan, atan_kernel);
  TSL_REGISTER_CPU(sinh, sinh_kernel);
  TSL_REGISTER_CPU(cosh, cosh_kernel);
  TSL_REGISTER_CPU(erf, erf_kernel);
  TSL_REGISTER_CPU(reciprocal, reciprocal_kernel);
  TSL_REGISTER_CPU(square, square_kernel);
  TSL_REGISTER_CPU(sign, sign_kernel);
  TSL_REGISTER_CPU(floor, floor_kernel);
  TSL_REGISTER_CPU(ceil, ceil_kernel);
  TSL_REGISTER_CPU(round, round_kernel);
  TSL_REGISTER_CPU(trunc, trunc_kernel);
  TSL_REGISTER_CPU(frac, frac_kernel);
  TSL_REGISTER_CPU(tanh, tanh_kernel);
  TSL_REGISTER_CPU(sigmoid, sigmoid_kernel);
  TSL_REGISTER_CPU(relu, relu_kernel);
  TSL_REGISTER_CPU(silu, silu_kernel);
  TSL_REGISTER_CPU(gelu, gelu_kernel);
  TSL_REGISTER_CPU(softplus, softplus_kernel);
  TSL_REGISTER_CPU(elu, elu_kernel);
  TSL_REGISTER_CPU(leaky_relu, leaky_relu_kernel);
  TSL_REGISTER_CPU(clamp, clamp_kernel);
  TSL_REGISTER_CPU(clip, clamp_kernel);
  TSL_REGISTER_CPU(hardtanh, hardtanh_kernel);
  TSL_REGISTER_CPU(logit, logit_kernel);
  TSL_REGISTER_CPU(isnan, isnan_kernel);
  TSL_REGISTER_CPU(isinf, isinf_kernel);
  TSL_REGISTER_CPU(isfinite, isfinite_kernel);
  TSL_REGISTER_CPU(logical_not, logical_not_kernel);
  TSL_REGISTER_CPU(bitwise_not, bitwise_not_kernel);
}

}  // namespace TSL_CAPABILITY_NAMESPACE
}  // namespace tsl
