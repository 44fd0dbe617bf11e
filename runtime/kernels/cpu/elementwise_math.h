// Scalar arithmetic with PyTorch's semantics for the binary kernels: wrapping int64
// overflow (no undefined behaviour), Python-style floor division and remainder,
// integer division by zero reported after the loop, and PyTorch's pow for ints.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "runtime/tensor/error.h"

namespace tsl::cpu::math {

template <typename T>
T wrap_add(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>)
    return static_cast<int64_t>(uint64_t(x) + uint64_t(y));
  else if constexpr (std::is_same_v<T, bool>)
    return x || y;
  else
    return x + y;
}
template <typename T>
T wrap_sub(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>)
    return static_cast<int64_t>(uint64_t(x) - uint64_t(y));
  else
    return x - y;
}
template <typename T>
T wrap_mul(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>)
    return static_cast<int64_t>(uint64_t(x) * uint64_t(y));
  else if constexpr (std::is_same_v<T, bool>)
    return x && y;
  else
    return x * y;
}

// Integer division by zero is an error raised after the loop (a flag, since the
// loop bodies may run on several threads).
struct ZeroDivision {
  std::atomic<bool> seen{false};
  void check() const { TSL_CHECK(!seen.load(std::memory_order_relaxed), "ZeroDivisionError"); }
};

inline int64_t div_trunc_int(int64_t x, int64_t y, ZeroDivision& z) {
  if (y == 0) {
    z.seen.store(true, std::memory_order_relaxed);
    return 0;
  }
  if (y == -1) return wrap_sub<int64_t>(0, x);  // INT64_MIN / -1 wraps
  return x / y;
}

inline int64_t div_floor_int(int64_t x, int64_t y, ZeroDivision& z) {
  if (y == 0 || y == -1) return div_trunc_int(x, y, z);
  int64_t q = x / y;
  if (x % y != 0 && ((x < 0) != (y < 0))) --q;
  return q;
}

inline int64_t remainder_int(int64_t x, int64_t y, ZeroDivision& z) {
  if (y == 0) {
    z.seen.store(true, std::memory_order_relaxed);
    return 0;
  }
  if (y == -1) return 0;
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

// PyTorch's c10::div_floor_floating: Python's // for floats.
template <typename T>
T div_floor_float(T x, T y) {
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
T remainder_float(T x, T y) {
  T mod = std::fmod(x, y);
  if (mod != 0 && ((y < 0) != (mod < 0))) mod += y;
  return mod;
}

// x ** y for ints by squaring (wrapping); negative powers as PyTorch's powi.
inline int64_t pow_int(int64_t x, int64_t y) {
  if (y < 0) {
    if (x == 1) return 1;
    if (x == -1) return y % 2 == 0 ? 1 : -1;
    return 0;
  }
  uint64_t result = 1, base = static_cast<uint64_t>(x);
  for (uint64_t e = static_cast<uint64_t>(y); e != 0; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return static_cast<int64_t>(result);
}

}  // namespace tsl::cpu::math
