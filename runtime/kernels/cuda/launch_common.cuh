// What the .cu files share: launch geometry, strided offsets and operand loads.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/kernels/cuda/cuda_context.h"
#include "runtime/kernels/cuda/launch.h"

namespace tsl::cuda {

constexpr int kBlock = 256;

// Enough blocks to fill the GPU several times over; the grid-stride loops take the rest.
inline unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

// The element offset of flat output index `i` in each operand.
template <int N>
__device__ __forceinline__ void offsets(const Loop<N>& l, int64_t i, int64_t (&off)[N]) {
  if (l.flat) {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = i;
    return;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = l.ndim - 1; d >= 0; --d) {
    int64_t size = l.sizes[d];
    int64_t idx = i % size;
    i /= size;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += idx * l.op[k].strides[d];
  }
}

template <typename T>
__device__ __forceinline__ T load(const Operand& o, int64_t off) {
  if (o.data) return reinterpret_cast<const T*>(o.data)[off];
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(o.scalar);
  else if constexpr (std::is_same_v<T, bool>)
    return o.int_scalar != 0;
  else
    return static_cast<T>(o.int_scalar);
}

}  // namespace tsl::cuda
