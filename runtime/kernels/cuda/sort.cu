// Device code of the radix sorts: sort (and topk, a sorted prefix) by CUB's radix sort of
// each row, on keys made canonical first (launch_sort_rows in launch.h); index_put's
// last-write-wins order (launch_put_last).
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "runtime/kernels/cuda/launch_common.cuh"

namespace tsl::cuda {
namespace {

// The radix sort orders the bits of its keys: -0.0 before 0.0 and NaNs by sign and
// payload. Sorting compares values (-0.0 == 0.0, every NaN after every number), so the
// keys are the elements with zeros made +0.0 and NaNs one positive quiet NaN, which
// orders after +inf. The sorted elements are then read back from the input.
template <typename T>
__global__ void canonical_keys(const T* in, T* keys, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    T v = in[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (v != v)
        v = std::is_same_v<T, float> ? T(__int_as_float(0x7fc00000))
                                     : T(__longlong_as_double(0x7ff8000000000000LL));
      else if (v == T(0))
        v = T(0);
    }
    keys[i] = v;
  }
}

__global__ void iota_rows(int64_t* idx, int64_t total, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x)
    idx[i] = i % n;
}

template <typename T>
__global__ void take_rows(const T* in, const int64_t* idx, T* out, int64_t total, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x)
    out[i] = in[(i / n) * n + idx[i]];
}

// bool keys sort as their bytes (0 and 1).
template <typename T>
using KeyOf = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// With a null `temp`, only sets temp_bytes to the scratch the sort needs (CUB's query).
template <typename T>
void radix_sort(void* temp, size_t& temp_bytes, const T* keys_in, T* keys_out,
                const int64_t* idx_in, int64_t* idx_out, int64_t rows, int64_t n,
                const int64_t* offsets, bool descending) {
  using K = KeyOf<T>;
  const K* kin = reinterpret_cast<const K*>(keys_in);
  K* kout = reinterpret_cast<K*>(keys_out);
  const int64_t total = rows * n;
  cudaError_t err;
  if (rows == 1) {
    err = descending
              ? cub::DeviceRadixSort::SortPairsDescending(
                    temp, temp_bytes, kin, kout, idx_in, idx_out, total, 0, sizeof(K) * 8, stream())
              : cub::DeviceRadixSort::SortPairs(temp, temp_bytes, kin, kout, idx_in, idx_out, total,
                                                0, sizeof(K) * 8, stream());
  } else {
    const int items = static_cast<int>(total), segments = static_cast<int>(rows);
    err = descending ? cub::DeviceSegmentedRadixSort::SortPairsDescending(
                           temp, temp_bytes, kin, kout, idx_in, idx_out, items, segments, offsets,
                           offsets + 1, 0, sizeof(K) * 8, stream())
                     : cub::DeviceSegmentedRadixSort::SortPairs(
                           temp, temp_bytes, kin, kout, idx_in, idx_out, items, segments, offsets,
                           offsets + 1, 0, sizeof(K) * 8, stream());
  }
  check(err, "sort");
}

// ---- The last write wins: a put without accumulation --------------------------------

// targets[p] = the element of out that position p writes; positions[p] = p.
__global__ void put_targets(const __grid_constant__ Loop<3> l, int64_t* targets,
                            int64_t* positions) {
  const int64_t* shift = reinterpret_cast<const int64_t*>(l.op[1].data);
  for (int64_t p = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; p < l.numel;
       p += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[3];
    offsets(l, p, off);
    targets[p] = off[0] + shift[off[1]];
    positions[p] = p;
  }
}

// Over the positions sorted by target (stably: in position order within a target),
// the last of each run of equal targets writes.
template <typename T>
__global__ void put_last(const __grid_constant__ Loop<3> l, const int64_t* targets,
                         const int64_t* positions) {
  T* out = reinterpret_cast<T*>(l.op[0].data);
  const T* values = reinterpret_cast<const T*>(l.op[2].data);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < l.numel;
       i += int64_t{gridDim.x} * blockDim.x) {
    if (i + 1 < l.numel && targets[i + 1] == targets[i]) continue;
    int64_t off[3];
    offsets(l, positions[i], off);
    out[targets[i]] = values[off[2]];
  }
}

}  // namespace

size_t put_last_temp_bytes(int64_t positions, int key_bits) {
  size_t bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(
            nullptr, bytes, static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr),
            static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr), positions, 0,
            key_bits, stream()),
        "index_put");
  return bytes;
}

void launch_put_last(DType dtype, const Loop<3>& l, const PutBuffers& b) {
  if (l.numel == 0) return;
  put_targets<<<grid_for(l.numel), kBlock, 0, stream()>>>(l, b.targets, b.positions);
  size_t temp_bytes = b.temp_bytes;
  check(
      cub::DeviceRadixSort::SortPairs(b.temp, temp_bytes, b.targets, b.sorted_targets, b.positions,
                                      b.sorted_positions, l.numel, 0, b.key_bits, stream()),
      "index_put");
  with_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    put_last<T>
        <<<grid_for(l.numel), kBlock, 0, stream()>>>(l, b.sorted_targets, b.sorted_positions);
  });
  check_launch("index_put");
}

size_t sort_rows_temp_bytes(DType dtype, int64_t rows, int64_t n, bool descending) {
  size_t bytes = 0;
  with_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    radix_sort<T>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, rows, n, nullptr, descending);
  });
  return bytes;
}

void launch_sort_rows(DType dtype, const void* input, int64_t rows, int64_t n, bool descending,
                      const SortBuffers& b, void* values, int64_t* indices) {
  const int64_t total = rows * n;
  if (total == 0) return;
  with_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(input);
    T* keys = static_cast<T*>(b.keys);
    canonical_keys<T><<<grid_for(total), kBlock, 0, stream()>>>(in, keys, total);
    iota_rows<<<grid_for(total), kBlock, 0, stream()>>>(b.positions, total, n);
    size_t temp_bytes = b.temp_bytes;
    radix_sort<T>(b.temp, temp_bytes, keys, static_cast<T*>(b.sorted_keys), b.positions, indices,
                  rows, n, b.offsets, descending);
    take_rows<T>
        <<<grid_for(total), kBlock, 0, stream()>>>(in, indices, static_cast<T*>(values), total, n);
  });
  check_launch("sort");
}

}  // namespace tsl::cuda
