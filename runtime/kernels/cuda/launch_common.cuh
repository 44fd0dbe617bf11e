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

// Kernels take their Loop as `const __grid_constant__`: lambdas and helpers refer to it,
// and a kernel parameter whose address is taken is otherwise copied to local memory by
// every thread (hundreds of bytes each: the copy kernel ran at 40% of the bandwidth).
//
// Elements per thread and sweep in the elementwise kernels: each thread issues its
// loads (and computes) for all of them before it stores any, so that several loads are in
// flight per thread; a memory-bound kernel with one outstanding load per thread reaches
// about half of the GPU's bandwidth.
constexpr int kUnroll = 4;

inline unsigned grid_for_unrolled(int64_t n) { return grid_for((n + kUnroll - 1) / kUnroll); }

// For every flat index of the loop: v = compute(offsets), then store(offsets[0], v).
template <typename V, int N, typename Compute, typename Store>
__device__ __forceinline__ void for_each_unrolled(const Loop<N>& l, Compute compute, Store store) {
  const int64_t step = int64_t{gridDim.x} * blockDim.x * kUnroll;
  for (int64_t base = int64_t{blockIdx.x} * blockDim.x * kUnroll + threadIdx.x; base < l.numel;
       base += step) {
    V v[kUnroll];
    int64_t at[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t i = base + int64_t{u} * blockDim.x;
      if (i < l.numel) {
        int64_t off[N];
        offsets(l, i, off);
        at[u] = off[0];
        v[u] = compute(off);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + int64_t{u} * blockDim.x < l.numel) store(at[u], v[u]);
    }
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
