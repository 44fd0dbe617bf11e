// Device code of the unary elementwise ops: one kernel per (op, dtypes, walk) over the
// strided Loop of launch.h. See Note [Elementwise loops on CUDA]. (Binary ops, where and
// copies are in elementwise.cu: two files that nvcc compiles side by side.)
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "runtime/kernels/cuda/formulas.cuh"
#include "runtime/kernels/cuda/launch.h"
#include "runtime/kernels/cuda/launch_common.cuh"

namespace tsl::cuda {
namespace {

// ---- Unary formulas ----------------------------------------------------------------

// Whether unary op kOp is defined on compute type T (others are never launched: the
// host converts or rejects first).
template <OpId kOp, typename T>
constexpr bool unary_supports() {
  switch (kOp) {
    case OpId::neg:
    case OpId::abs:
    case OpId::square:
    case OpId::relu:
    case OpId::clamp:
    case OpId::clip:
    case OpId::hardtanh:
    case OpId::floor:
    case OpId::ceil:
    case OpId::round:
    case OpId::trunc:
      return !std::is_same_v<T, bool>;
    case OpId::sign:
    case OpId::isnan:
    case OpId::isinf:
    case OpId::isfinite:
    case OpId::logical_not:
      return true;
    case OpId::bitwise_not:
      return !kFloat<T>;
    default:
      return kFloat<T>;
  }
}

template <OpId kOp, typename T>
__host__ __device__ __forceinline__ auto unary_fn(T v, const UnaryParams& p) {
  if constexpr (kOp == OpId::neg)
    return wrap_neg(v);
  else if constexpr (kOp == OpId::abs) {
    if constexpr (kFloat<T>)
      return tsl_abs(v);
    else
      return v < 0 ? wrap_neg(v) : v;
  } else if constexpr (kOp == OpId::square) {
    if constexpr (kFloat<T>)
      return v * v;
    else
      return static_cast<T>(static_cast<uint64_t>(v) * static_cast<uint64_t>(v));
  } else if constexpr (kOp == OpId::relu)
    return tsl_relu(v);
  else if constexpr (kOp == OpId::sign) {
    if constexpr (std::is_same_v<T, bool>)
      return v;
    else
      return static_cast<T>((T(0) < v) - (v < T(0)));
  } else if constexpr (kOp == OpId::floor) {
    if constexpr (kFloat<T>)
      return std::floor(v);
    else
      return v;
  } else if constexpr (kOp == OpId::ceil) {
    if constexpr (kFloat<T>)
      return std::ceil(v);
    else
      return v;
  } else if constexpr (kOp == OpId::round) {
    if constexpr (kFloat<T>)
      return std::nearbyint(v);
    else
      return v;
  } else if constexpr (kOp == OpId::trunc) {
    if constexpr (kFloat<T>)
      return std::trunc(v);
    else
      return v;
  } else if constexpr (kOp == OpId::clamp || kOp == OpId::clip || kOp == OpId::hardtanh) {
    if constexpr (kFloat<T>)
      return tsl_clamp(v, p.has_a, T(p.a), p.has_b, T(p.b));
    else
      return tsl_clamp(v, p.has_a, T(p.ia), p.has_b, T(p.ib));
  } else if constexpr (kOp == OpId::isnan) {
    if constexpr (kFloat<T>)
      return v != v;
    else
      return false;
  } else if constexpr (kOp == OpId::isinf) {
    if constexpr (kFloat<T>)
      return std::isinf(v);
    else
      return false;
  } else if constexpr (kOp == OpId::isfinite) {
    if constexpr (kFloat<T>)
      return std::isfinite(v);
    else
      return true;
  } else if constexpr (kOp == OpId::logical_not)
    return !(v != T(0));
  else if constexpr (kOp == OpId::bitwise_not) {
    if constexpr (std::is_same_v<T, bool>)
      return !v;
    else
      return ~v;
  } else if constexpr (kOp == OpId::exp)
    return tsl_exp(v);
  else if constexpr (kOp == OpId::exp2)
    return std::exp2(v);
  else if constexpr (kOp == OpId::log)
    return tsl_log(v);
  else if constexpr (kOp == OpId::log2)
    return std::log2(v);
  else if constexpr (kOp == OpId::log10)
    return std::log10(v);
  else if constexpr (kOp == OpId::log1p)
    return tsl_log1p(v);
  else if constexpr (kOp == OpId::expm1)
    return tsl_expm1(v);
  else if constexpr (kOp == OpId::sqrt)
    return tsl_sqrt(v);
  else if constexpr (kOp == OpId::rsqrt)
    return tsl_rsqrt(v);
  else if constexpr (kOp == OpId::sin)
    return tsl_sin(v);
  else if constexpr (kOp == OpId::cos)
    return tsl_cos(v);
  else if constexpr (kOp == OpId::tan)
    return std::tan(v);
  else if constexpr (kOp == OpId::asin)
    return std::asin(v);
  else if constexpr (kOp == OpId::acos)
    return std::acos(v);
  else if constexpr (kOp == OpId::atan)
    return std::atan(v);
  else if constexpr (kOp == OpId::sinh)
    return std::sinh(v);
  else if constexpr (kOp == OpId::cosh)
    return std::cosh(v);
  else if constexpr (kOp == OpId::tanh)
    return tsl_tanh(v);
  else if constexpr (kOp == OpId::erf)
    return std::erf(v);
  else if constexpr (kOp == OpId::reciprocal)
    return tsl_reciprocal(v);
  else if constexpr (kOp == OpId::frac)
    return v - std::trunc(v);
  else if constexpr (kOp == OpId::sigmoid)
    return tsl_sigmoid(v);
  else if constexpr (kOp == OpId::silu)
    return tsl_silu(v);
  else if constexpr (kOp == OpId::gelu) {
    if (p.has_a) {  // approximate='tanh'
      constexpr T kBeta = T(M_SQRT2 * M_2_SQRTPI * 0.5), kKappa = T(0.044715);
      return T(0.5) * v * (T(1) + std::tanh(kBeta * (v + kKappa * v * v * v)));
    }
    return v * T(0.5) * (T(1) + std::erf(v * T(M_SQRT1_2)));
  } else if constexpr (kOp == OpId::softplus) {
    T b = T(p.a);
    return v * b > T(p.b) ? v : T(std::log1p(std::exp(v * b)) / b);
  } else if constexpr (kOp == OpId::elu)
    return v > T(0) ? v : T(std::expm1(v) * T(p.a));
  else if constexpr (kOp == OpId::leaky_relu)
    return tsl_leaky_relu(v, T(p.a));
  else if constexpr (kOp == OpId::logit)
    return tsl_logit(v, p.has_a, T(p.a));
  else {
    static_assert(kOp == OpId::neg, "unary_fn: an op without a CUDA formula");
    return v;
  }
}

template <OpId kOp, typename T, typename Out, Walk kWalk>
__global__ void unary_kernel(const __grid_constant__ Loop<2> l,
                             const __grid_constant__ UnaryParams p) {
  elementwise<kWalk, Out, T>(l, [&](T v) { return static_cast<Out>(unary_fn<kOp>(v, p)); });
}

template <OpId kOp, typename T>
void unary_typed(DType out, const Loop<2>& l, const UnaryParams& p) {
  if constexpr (unary_supports<kOp, T>()) {
    using R = decltype(unary_fn<kOp>(T{}, p));
    if (out == dtype_of<R>) {
      const Walk w = walk_for<R, T>(l);
      auto* kernel = w == Walk::Vector ? unary_kernel<kOp, T, R, Walk::Vector>
                                       : unary_kernel<kOp, T, R, Walk::Strided>;
      kernel<<<grid_for_walk(w, l.numel), kBlock, 0, stream()>>>(l, p);
      return;
    }
  }
  unsupported("unary", kOp);
}

template <OpId kOp>
void unary_op(DType compute, DType out, const Loop<2>& l, const UnaryParams& p) {
  switch (compute) {
    case DType::Bool:
      return unary_typed<kOp, bool>(out, l, p);
    case DType::Int64:
      return unary_typed<kOp, int64_t>(out, l, p);
    case DType::Float32:
      return unary_typed<kOp, float>(out, l, p);
    case DType::Float64:
      return unary_typed<kOp, double>(out, l, p);
  }
}

}  // namespace

void launch_unary(OpId op, DType compute, DType out, const Loop<2>& loop, const UnaryParams& p) {
  if (loop.numel == 0) return;
  switch (op) {
#define TSL_CASE(name)                           \
  case OpId::name:                               \
    unary_op<OpId::name>(compute, out, loop, p); \
    break;
    TSL_CUDA_UNARY_OPS(TSL_CASE)
#undef TSL_CASE
    default:
      unsupported("unary", op);
  }
  check_launch("an elementwise kernel");
}

bool has_unary_formula(OpId op) {
  switch (op) {
#define TSL_CASE(name) case OpId::name:
    TSL_CUDA_UNARY_OPS(TSL_CASE)
#undef TSL_CASE
    return true;
    default:
      return false;
  }
}

}  // namespace tsl::cuda
