// Walking the elements of strided tensors in row-major order. The building block
// for copies and for kernels on non-contiguous inputs; contiguous fast paths skip it.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "runtime/tensor/dim_vector.h"

namespace tsl::cpu {

// One element converted between dtypes as copy_into converts it: to bool by `!= 0`,
// else by static_cast.
template <typename To, typename From>
To convert_value(From v) {
  if constexpr (std::is_same_v<To, bool>)
    return v != From(0);
  else
    return static_cast<To>(v);
}

// Calls fn(offsets) for every index of `sizes` in row-major order, where offsets[k]
// is the element offset of that index in operand k (sum of index * strides[k]).
// The innermost dimension is a tight loop.
template <size_t N, typename Fn>
void for_each_offset(std::span<const int64_t> sizes, const std::span<const int64_t> (&strides)[N],
                     Fn&& fn) {
  int64_t ndim = static_cast<int64_t>(sizes.size());
  int64_t offsets[N] = {};
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  if (ndim == 0) {
    fn(offsets);
    return;
  }
  DimVector index(static_cast<size_t>(ndim), 0);
  int64_t inner = sizes[ndim - 1];
  int64_t inner_stride[N];
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][ndim - 1];
  for (;;) {
    int64_t o[N];
    for (size_t k = 0; k < N; ++k) o[k] = offsets[k];
    for (int64_t i = 0; i < inner; ++i) {
      fn(o);
      for (size_t k = 0; k < N; ++k) o[k] += inner_stride[k];
    }
    // Advance the outer index like an odometer.
    int64_t d = ndim - 2;
    for (; d >= 0; --d) {
      ++index[d];
      for (size_t k = 0; k < N; ++k) offsets[k] += strides[k][d];
      if (index[d] < sizes[d]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= strides[k][d] * sizes[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace tsl::cpu
