// Device code of the binary elementwise ops, where and copies: one kernel per (op,
// dtypes, walk) over the strided Loop of launch.h. See Note [Elementwise loops on CUDA].
// (Unary ops are in elementwise_unary.cu.)
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "runtime/kernels/cuda/launch.h"
#include "runtime/kernels/cuda/launch_common.cuh"

namespace tsl::cuda {
namespace {

// ---- Binary formulas ---------------------------------------------------------------

template <OpId kOp, typename T>
constexpr bool binary_supports() {
  switch (kOp) {
    case OpId::add:
    case OpId::add_:
    case OpId::mul:
    case OpId::mul_:
    case OpId::maximum:
    case OpId::minimum:
    case OpId::max_other:
    case OpId::min_other:
    case OpId::eq:
    case OpId::ne:
    case OpId::lt:
    case OpId::le:
    case OpId::gt:
    case OpId::ge:
    case OpId::logical_and:
    case OpId::logical_or:
    case OpId::logical_xor:
      return true;
    case OpId::sub:
    case OpId::sub_:
      return !std::is_same_v<T, bool>;
    case OpId::pow:
      return !std::is_same_v<T, bool>;
    case OpId::bitwise_and:
    case OpId::bitwise_or:
    case OpId::bitwise_xor:
      return !kFloat<T>;
    case OpId::floor_divide:
    case OpId::remainder:
    case OpId::div:  // int64: only div(rounding_mode='trunc') gets here
      return !std::is_same_v<T, bool>;
    default:  // div, atan2: floating (ints are converted first)
      return kFloat<T>;
  }
}

template <typename T>
__host__ __device__ __forceinline__ T wrap_add(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>)
    return static_cast<int64_t>(uint64_t(x) + uint64_t(y));
  else if constexpr (std::is_same_v<T, bool>)
    return x || y;
  else
    return x + y;
}
template <typename T>
__host__ __device__ __forceinline__ T wrap_sub(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>)
    return static_cast<int64_t>(uint64_t(x) - uint64_t(y));
  else
    return x - y;
}
template <typename T>
__host__ __device__ __forceinline__ T wrap_mul(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>)
    return static_cast<int64_t>(uint64_t(x) * uint64_t(y));
  else if constexpr (std::is_same_v<T, bool>)
    return x && y;
  else
    return x * y;
}

__host__ __device__ __forceinline__ int64_t pow_int(int64_t x, int64_t y) {
  if (y < 0) return x == 1 ? 1 : x == -1 ? (y % 2 == 0 ? 1 : -1) : 0;
  uint64_t result = 1, base = static_cast<uint64_t>(x);
  for (uint64_t e = static_cast<uint64_t>(y); e != 0; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return static_cast<int64_t>(result);
}

// Python's // and % for int64 (the host has checked that no divisor is 0); INT64_MIN
// // -1 wraps, as on the CPU.
__host__ __device__ __forceinline__ int64_t div_floor_int(int64_t x, int64_t y) {
  if (y == 0) return 0;
  if (y == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
  int64_t q = x / y;
  if (x % y != 0 && ((x < 0) != (y < 0))) --q;
  return q;
}
__host__ __device__ __forceinline__ int64_t remainder_int(int64_t x, int64_t y) {
  if (y == 0 || y == -1) return 0;
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

template <typename T>
__host__ __device__ __forceinline__ T div_floor_float(T x, T y) {
  if (y == 0) return x / y;
  T mod = std::fmod(x, y);
  T div = (x - mod) / y;
  if (mod != 0 && ((y < 0) != (mod < 0))) div -= T(1);
  if (div == 0) return std::copysign(T(0), x / y);
  T floordiv = std::floor(div);
  if (div - floordiv > T(0.5)) floordiv += T(1);
  return floordiv;
}

template <typename T>
__host__ __device__ __forceinline__ T remainder_float(T x, T y) {
  T mod = std::fmod(x, y);
  if (mod != 0 && ((y < 0) != (mod < 0))) mod += y;
  return mod;
}

template <OpId kOp, typename T>
__host__ __device__ __forceinline__ auto binary_fn(T x, T y, T alpha, bool has_alpha) {
  if constexpr (kOp == OpId::add || kOp == OpId::add_)
    return has_alpha ? wrap_add(x, wrap_mul(alpha, y)) : wrap_add(x, y);
  else if constexpr (kOp == OpId::sub || kOp == OpId::sub_)
    return has_alpha ? wrap_sub(x, wrap_mul(alpha, y)) : wrap_sub(x, y);
  else if constexpr (kOp == OpId::mul || kOp == OpId::mul_)
    return wrap_mul(x, y);
  else if constexpr (kOp == OpId::div || kOp == OpId::div_) {
    if constexpr (kFloat<T>)
      return x / y;
    else  // C's truncation (the host has checked that no divisor is 0)
      return y == 0 ? T(0) : (y == -1 ? wrap_neg(x) : T(x / y));
  } else if constexpr (kOp == OpId::maximum || kOp == OpId::max_other) {
    if constexpr (kFloat<T>)
      return (x != x || x > y) ? x : (y != y ? y : (x > y ? x : y));
    else
      return x > y ? x : y;
  } else if constexpr (kOp == OpId::minimum || kOp == OpId::min_other) {
    if constexpr (kFloat<T>)
      return (x != x || x < y) ? x : (y != y ? y : (x < y ? x : y));
    else
      return x < y ? x : y;
  } else if constexpr (kOp == OpId::pow) {
    if constexpr (kFloat<T>)
      return y == T(2) ? x * x : y == T(0.5) ? std::sqrt(x) : T(std::pow(x, y));
    else
      return pow_int(x, y);
  } else if constexpr (kOp == OpId::atan2)
    return std::atan2(x, y);
  else if constexpr (kOp == OpId::floor_divide) {
    if constexpr (kFloat<T>)
      return div_floor_float(x, y);
    else
      return div_floor_int(x, y);
  } else if constexpr (kOp == OpId::remainder) {
    if constexpr (kFloat<T>)
      return remainder_float(x, y);
    else
      return remainder_int(x, y);
  } else if constexpr (kOp == OpId::eq)
    return x == y;
  else if constexpr (kOp == OpId::ne)
    return x != y;
  else if constexpr (kOp == OpId::lt)
    return x < y;
  else if constexpr (kOp == OpId::le)
    return x <= y;
  else if constexpr (kOp == OpId::gt)
    return x > y;
  else if constexpr (kOp == OpId::ge)
    return x >= y;
  else if constexpr (kOp == OpId::logical_and)
    return (x != T(0)) && (y != T(0));
  else if constexpr (kOp == OpId::logical_or)
    return (x != T(0)) || (y != T(0));
  else if constexpr (kOp == OpId::logical_xor)
    return (x != T(0)) != (y != T(0));
  else if constexpr (kOp == OpId::bitwise_and) {
    if constexpr (std::is_same_v<T, bool>)
      return x && y;
    else
      return x & y;
  } else if constexpr (kOp == OpId::bitwise_or) {
    if constexpr (std::is_same_v<T, bool>)
      return x || y;
    else
      return x | y;
  } else if constexpr (kOp == OpId::bitwise_xor) {
    if constexpr (std::is_same_v<T, bool>)
      return x != y;
    else
      return x ^ y;
  } else {
    static_assert(kOp == OpId::add, "binary_fn: an op without a CUDA formula");
    return x;
  }
}

template <OpId kOp, typename T, typename Out, Walk kWalk>
__global__ void binary_kernel(const __grid_constant__ Loop<3> l, T alpha, bool has_alpha) {
  elementwise<kWalk, Out, T, T>(
      l, [&](T a, T b) { return static_cast<Out>(binary_fn<kOp>(a, b, alpha, has_alpha)); });
}

template <OpId kOp, typename T>
void binary_typed(DType out, const Loop<3>& l, double alpha, int64_t int_alpha) {
  if constexpr (binary_supports<kOp, T>()) {
    using R = decltype(binary_fn<kOp>(T{}, T{}, T{}, false));
    T a = kFloat<T> ? static_cast<T>(alpha) : static_cast<T>(int_alpha);
    bool has_alpha = kFloat<T> ? alpha != 1.0 : int_alpha != 1;
    if (out == dtype_of<R>) {
      const Walk w = walk_for<R, T, T>(l);
      auto* kernel = w == Walk::Vector ? binary_kernel<kOp, T, R, Walk::Vector>
                                       : binary_kernel<kOp, T, R, Walk::Strided>;
      kernel<<<grid_for_walk(w, l.numel), kBlock, 0, stream()>>>(l, a, has_alpha);
      return;
    }
  }
  unsupported("binary", kOp);
}

template <OpId kOp>
void binary_op(DType compute, DType out, const Loop<3>& l, double alpha, int64_t int_alpha) {
  switch (compute) {
    case DType::Bool:
      return binary_typed<kOp, bool>(out, l, alpha, int_alpha);
    case DType::Int64:
      return binary_typed<kOp, int64_t>(out, l, alpha, int_alpha);
    case DType::Float32:
      return binary_typed<kOp, float>(out, l, alpha, int_alpha);
    case DType::Float64:
      return binary_typed<kOp, double>(out, l, alpha, int_alpha);
  }
}

// ---- where, copy ---------------------------------------------------------------------

template <typename T, Walk kWalk>
__global__ void where_kernel(const __grid_constant__ Loop<4> l) {
  elementwise<kWalk, T, bool, T, T>(l, [](bool c, T a, T b) { return c ? a : b; });
}

template <typename T>
void where_typed(const Loop<4>& l) {
  const Walk w = walk_for<T, bool, T, T>(l);
  auto* kernel = w == Walk::Vector ? where_kernel<T, Walk::Vector> : where_kernel<T, Walk::Strided>;
  kernel<<<grid_for_walk(w, l.numel), kBlock, 0, stream()>>>(l);
}

template <typename To, typename From, Walk kWalk>
__global__ void copy_kernel(const __grid_constant__ Loop<2> l) {
  elementwise<kWalk, To, From>(l, [](From v) {
    if constexpr (std::is_same_v<To, bool>)
      return static_cast<To>(v != From(0));
    else
      return static_cast<To>(v);
  });
}

template <typename To, typename From>
void copy_typed(const Loop<2>& l) {
  const Walk w = walk_for<To, From>(l);
  auto* kernel = w == Walk::Vector ? copy_kernel<To, From, Walk::Vector>
                                   : copy_kernel<To, From, Walk::Strided>;
  kernel<<<grid_for_walk(w, l.numel), kBlock, 0, stream()>>>(l);
}

template <typename To>
void copy_from(DType in, const Loop<2>& l) {
  switch (in) {
    case DType::Bool:
      copy_typed<To, bool>(l);
      break;
    case DType::Int64:
      copy_typed<To, int64_t>(l);
      break;
    case DType::Float32:
      copy_typed<To, float>(l);
      break;
    case DType::Float64:
      copy_typed<To, double>(l);
      break;
  }
}

}  // namespace

void launch_binary(OpId op, DType compute, DType out, const Loop<3>& loop, double alpha,
                   int64_t int_alpha) {
  if (loop.numel == 0) return;
  switch (op) {
#define TSL_CASE(name)                                           \
  case OpId::name:                                               \
    binary_op<OpId::name>(compute, out, loop, alpha, int_alpha); \
    break;
    TSL_CUDA_BINARY_OPS(TSL_CASE)
#undef TSL_CASE
    default:
      unsupported("binary", op);
  }
  check_launch("an elementwise kernel");
}

bool has_binary_formula(OpId op) {
  switch (op) {
#define TSL_CASE(name) case OpId::name:
    TSL_CUDA_BINARY_OPS(TSL_CASE)
#undef TSL_CASE
    return true;
    default:
      return false;
  }
}

void launch_where(DType dtype, const Loop<4>& l) {
  if (l.numel == 0) return;
  switch (dtype) {
    case DType::Bool:
      where_typed<bool>(l);
      break;
    case DType::Int64:
      where_typed<int64_t>(l);
      break;
    case DType::Float32:
      where_typed<float>(l);
      break;
    case DType::Float64:
      where_typed<double>(l);
      break;
  }
  check_launch("where");
}

void launch_copy(DType out, DType in, const Loop<2>& l) {
  if (l.numel == 0) return;
  switch (out) {
    case DType::Bool:
      copy_from<bool>(in, l);
      break;
    case DType::Int64:
      copy_from<int64_t>(in, l);
      break;
    case DType::Float32:
      copy_from<float>(in, l);
      break;
    case DType::Float64:
      copy_from<double>(in, l);
      break;
  }
  check_launch("a copy");
}

}  // namespace tsl::cuda
