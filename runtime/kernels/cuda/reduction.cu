// Device code of the reductions: see launch_reduce in launch.h.
#include <cuda_runtime.h>

#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "runtime/kernels/cuda/launch_common.cuh"

namespace tsl::cuda {
namespace {

constexpr int kReduceBlock = 256;
constexpr int64_t kChunk = 16384;  // elements of a row one block reduces in a first pass

// The accumulator of each kind, as the CPU's ops (cpu/reduction_common.h) but with
// float sums in the float type, as PyTorch's CUDA kernels.
template <DeviceReduce K, typename Acc>
struct Combine {
  __device__ static Acc identity() {
    if constexpr (K == DeviceReduce::Sum)
      return Acc(0);
    else if constexpr (K == DeviceReduce::Prod)
      return Acc(1);
    else if constexpr (K == DeviceReduce::Any)
      return false;
    else if constexpr (K == DeviceReduce::All)
      return true;
    else if constexpr (K == DeviceReduce::Max) {
      if constexpr (std::is_same_v<Acc, bool>)
        return false;
      else if constexpr (std::is_floating_point_v<Acc>)
        return -INFINITY;
      else
        return Acc(INT64_MIN);  // int64, the one integral dtype
    } else {
      if constexpr (std::is_same_v<Acc, bool>)
        return true;
      else if constexpr (std::is_floating_point_v<Acc>)
        return INFINITY;
      else
        return Acc(INT64_MAX);
    }
  }
  template <typename In>
  __device__ static Acc map(In v) {
    if constexpr (K == DeviceReduce::Any || K == DeviceReduce::All)
      return v != In(0);
    else
      return static_cast<Acc>(v);
  }
  __device__ static Acc combine(Acc a, Acc b) {
    if constexpr (K == DeviceReduce::Sum) {
      if constexpr (std::is_same_v<Acc, int64_t>)
        return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
      else
        return a + b;
    } else if constexpr (K == DeviceReduce::Prod) {
      if constexpr (std::is_same_v<Acc, int64_t>)
        return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
      else
        return a * b;
    } else if constexpr (K == DeviceReduce::Any) {
      return a || b;
    } else if constexpr (K == DeviceReduce::All) {
      return a && b;
    } else if constexpr (K == DeviceReduce::Max) {
      return (b > a || b != b) ? b : a;
    } else {
      return (b < a || b != b) ? b : a;
    }
  }
};

// inner == 1: block b reduces chunk (b % chunks) of row (b / chunks).
template <DeviceReduce K, typename In, typename Acc>
__global__ void reduce_rows(const In* in, Acc* out, int64_t reduce, int64_t chunk, int64_t chunks,
                            double divisor) {
  using C = Combine<K, Acc>;
  __shared__ Acc partial[kReduceBlock];
  int64_t row = blockIdx.x / chunks, c = blockIdx.x % chunks;
  int64_t begin = c * chunk, end = begin + chunk < reduce ? begin + chunk : reduce;
  const In* p = in + row * reduce;
  Acc acc = C::identity();
  for (int64_t k = begin + threadIdx.x; k < end; k += kReduceBlock)
    acc = C::combine(acc, C::template map<In>(p[k]));
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = kReduceBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      partial[threadIdx.x] = C::combine(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    Acc r = partial[0];
    if constexpr (K == DeviceReduce::Sum && std::is_floating_point_v<Acc>)
      r = r / static_cast<Acc>(divisor);
    out[blockIdx.x] = r;
  }
}

// inner > 1: a thread per output (o, c, i) of out[outer, chunks, inner], walking rows
// [c * chunk, (c + 1) * chunk) of r in order; neighbouring threads read neighbouring
// elements. chunks == 1 is the whole reduction.
template <DeviceReduce K, typename In, typename Acc>
__global__ void reduce_columns(const In* in, Acc* out, int64_t outer, int64_t reduce, int64_t inner,
                               int64_t chunk, int64_t chunks, double divisor) {
  using C = Combine<K, Acc>;
  int64_t n = outer * chunks * inner;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n;
       e += int64_t{gridDim.x} * blockDim.x) {
    int64_t i = e % inner, oc = e / inner;
    int64_t o = oc / chunks, c = oc % chunks;
    int64_t begin = c * chunk, end = begin + chunk < reduce ? begin + chunk : reduce;
    const In* p = in + o * reduce * inner + i;
    Acc acc = C::identity();
    for (int64_t r = begin; r < end; ++r) acc = C::combine(acc, C::template map<In>(p[r * inner]));
    if constexpr (K == DeviceReduce::Sum && std::is_floating_point_v<Acc>)
      acc = acc / static_cast<Acc>(divisor);
    out[e] = acc;
  }
}

// Threads that keep the GPU's memory busy: below this many outputs, a reduction over
// columns is split into chunks of rows (a bias gradient: [512, 4096] summed over its
// 512 rows is 4096 threads of 512 loads each, 80-100 us on an H200; in chunks of 16
// rows and a second pass over the chunks, a few us).
constexpr int64_t kBusyThreads = int64_t{1} << 17;
constexpr int64_t kMinChunkRows = 16;

template <DeviceReduce K, typename In, typename Acc>
void reduce_typed(const In* in, Acc* out, int64_t outer, int64_t reduce, int64_t inner,
                  double divisor) {
  if (outer * inner == 0) return;
  if (inner > 1) {
    int64_t chunks = 1;
    if (outer * inner < kBusyThreads && reduce >= 2 * kMinChunkRows) {
      chunks =
          std::min((kBusyThreads + outer * inner - 1) / (outer * inner), reduce / kMinChunkRows);
    }
    if (chunks == 1) {
      reduce_columns<K, In, Acc><<<grid_for(outer * inner), kBlock, 0, stream()>>>(
          in, out, outer, reduce, inner, reduce, 1, divisor);
      return;
    }
    // Two passes, in fixed chunks (the same result on every run): the chunks into a
    // scratch [outer, chunks, inner], then its columns.
    const int64_t chunk = (reduce + chunks - 1) / chunks;
    chunks = (reduce + chunk - 1) / chunk;
    Storage scratch = allocate(static_cast<size_t>(outer * chunks * inner) * sizeof(Acc),
                               Device(DeviceType::CUDA));
    Acc* partial = static_cast<Acc*>(scratch->data());
    reduce_columns<K, In, Acc><<<grid_for(outer * chunks * inner), kBlock, 0, stream()>>>(
        in, partial, outer, reduce, inner, chunk, chunks, 1.0);
    check_launch("a reduction");
    reduce_typed<K, Acc, Acc>(partial, out, outer, chunks, inner, divisor);
    return;
  }
  int64_t chunks = reduce > kChunk && outer < 1024 ? (reduce + kChunk - 1) / kChunk : 1;
  if (chunks == 1) {
    reduce_rows<K, In, Acc><<<static_cast<unsigned>(outer), kReduceBlock, 0, stream()>>>(
        in, out, reduce, reduce > 0 ? reduce : 1, 1, divisor);
    return;
  }
  // Two passes: the chunks into a scratch [outer, chunks], then its rows.
  Storage scratch =
      allocate(static_cast<size_t>(outer * chunks) * sizeof(Acc), Device(DeviceType::CUDA));
  Acc* partial = static_cast<Acc*>(scratch->data());
  reduce_rows<K, In, Acc><<<static_cast<unsigned>(outer * chunks), kReduceBlock, 0, stream()>>>(
      in, partial, reduce, kChunk, chunks, 1.0);
  check_launch("a reduction");
  reduce_typed<K, Acc, Acc>(partial, out, outer, chunks, 1, divisor);
}

template <DeviceReduce K>
void reduce_kind(DType in, DType out, const void* input, void* output, int64_t outer,
                 int64_t reduce, int64_t inner, double divisor) {
  with_type(in, [&](auto i) {
    with_type(out, [&](auto o) {
      using In = decltype(i);
      using Out = decltype(o);
      constexpr bool kBool = K == DeviceReduce::Any || K == DeviceReduce::All;
      constexpr bool kSame = K == DeviceReduce::Max || K == DeviceReduce::Min;
      constexpr bool kWide = K == DeviceReduce::Sum || K == DeviceReduce::Prod;
      if constexpr ((kBool && std::is_same_v<Out, bool>) || (kSame && std::is_same_v<In, Out>) ||
                    (kWide && !std::is_same_v<Out, bool>)) {
        reduce_typed<K, In, Out>(static_cast<const In*>(input), static_cast<Out*>(output), outer,
                                 reduce, inner, divisor);
      } else {
        unsupported("reduction", OpId::sum);
      }
    });
  });
}

template <bool kMax, typename T>
__device__ bool better(T v, T best) {
  if constexpr (kMax)
    return v > best || (v != v && best == best);
  else
    return v < best || (v != v && best == best);
}

template <bool kMax, typename T>
__global__ void arg_rows(const T* in, T* values, int64_t* indices, int64_t reduce) {
  __shared__ T best_v[kReduceBlock];
  __shared__ int64_t best_i[kReduceBlock];
  const T* p = in + blockIdx.x * reduce;
  T bv = p[0];
  int64_t bi = 0;
  for (int64_t k = threadIdx.x; k < reduce; k += kReduceBlock) {
    if (better<kMax>(p[k], bv) || (k < bi && !better<kMax>(bv, p[k]))) {
      bv = p[k];
      bi = k;
    }
  }
  best_v[threadIdx.x] = bv;
  best_i[threadIdx.x] = bi;
  __syncthreads();
  for (int s = kReduceBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      T v = best_v[threadIdx.x + s];
      int64_t i = best_i[threadIdx.x + s];
      T cv = best_v[threadIdx.x];
      int64_t ci = best_i[threadIdx.x];
      // The better value, or the earlier position of an equal one (NaN equals NaN).
      bool equal = !better<kMax>(v, cv) && !better<kMax>(cv, v);
      if (better<kMax>(v, cv) || (equal && i < ci)) {
        best_v[threadIdx.x] = v;
        best_i[threadIdx.x] = i;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    indices[blockIdx.x] = best_i[0];
    if (values) values[blockIdx.x] = best_v[0];
  }
}

template <bool kMax, typename T>
__global__ void arg_columns(const T* in, T* values, int64_t* indices, int64_t outer, int64_t reduce,
                            int64_t inner) {
  int64_t n = outer * inner;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n;
       e += int64_t{gridDim.x} * blockDim.x) {
    int64_t o = e / inner, i = e % inner;
    const T* p = in + o * reduce * inner + i;
    T bv = p[0];
    int64_t bi = 0;
    for (int64_t r = 1; r < reduce; ++r) {
      if (better<kMax>(p[r * inner], bv)) {
        bv = p[r * inner];
        bi = r;
      }
    }
    indices[e] = bi;
    if (values) values[e] = bv;
  }
}

template <bool kMax, typename T>
void arg_typed(const T* in, T* values, int64_t* indices, int64_t outer, int64_t reduce,
               int64_t inner) {
  if (outer * inner == 0 || reduce == 0) return;
  if (inner == 1) {
    arg_rows<kMax, T>
        <<<static_cast<unsigned>(outer), kReduceBlock, 0, stream()>>>(in, values, indices, reduce);
  } else {
    arg_columns<kMax, T><<<grid_for(outer * inner), kBlock, 0, stream()>>>(in, values, indices,
                                                                           outer, reduce, inner);
  }
}

// ---- cumsum -------------------------------------------------------------------------

constexpr int kScanBlock = 256;
constexpr int kScanItems = 4;  // consecutive elements per thread and tile

template <typename Out, typename Acc>
__device__ __forceinline__ Out scan_out(Acc a) {
  if constexpr (std::is_same_v<Out, bool>)
    return a != Acc(0);
  else
    return static_cast<Out>(a);
}

// The running total of the tiles before, for BlockScan: called by the first warp, whose
// first lane's answer is the tile's prefix.
template <typename Acc>
struct RunningTotal {
  Acc total;
  __device__ Acc operator()(Acc tile_total) {
    Acc before = total;
    total += tile_total;
    return before;
  }
};

// One block per row (inner == 1): tiles of kScanBlock * kScanItems elements, each
// scanned by the block with the total of the tiles before as its prefix.
template <typename In, typename Out, typename Acc>
__global__ void scan_rows(const In* in, Out* out, int64_t n) {
  using Scan = cub::BlockScan<Acc, kScanBlock>;
  __shared__ typename Scan::TempStorage temp;
  const In* row = in + int64_t{blockIdx.x} * n;
  Out* dst = out + int64_t{blockIdx.x} * n;
  RunningTotal<Acc> prefix{Acc(0)};
  for (int64_t base = 0; base < n; base += kScanBlock * kScanItems) {
    Acc items[kScanItems];
#pragma unroll
    for (int j = 0; j < kScanItems; ++j) {
      const int64_t i = base + threadIdx.x * kScanItems + j;
      items[j] = i < n ? static_cast<Acc>(row[i]) : Acc(0);
    }
    Scan(temp).InclusiveSum(items, items, prefix);
    __syncthreads();  // temp is reused by the next tile
#pragma unroll
    for (int j = 0; j < kScanItems; ++j) {
      const int64_t i = base + threadIdx.x * kScanItems + j;
      if (i < n) dst[i] = scan_out<Out>(items[j]);
    }
  }
}

// One thread per column (inner > 1): neighbouring threads read neighbouring columns.
template <typename In, typename Out, typename Acc>
__global__ void scan_columns(const In* in, Out* out, int64_t outer, int64_t n, int64_t inner) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < outer * inner;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t at = (e / inner) * n * inner + e % inner;
    Acc acc = 0;
    for (int64_t r = 0; r < n; ++r) {
      acc += static_cast<Acc>(in[at + r * inner]);
      out[at + r * inner] = scan_out<Out>(acc);
    }
  }
}

}  // namespace

void launch_cumsum(DType in, DType out, const void* input, void* output, int64_t outer, int64_t n,
                   int64_t inner) {
  if (outer * n * inner == 0) return;
  with_type(in, [&](auto i) {
    with_type(out, [&](auto o) {
      using In = decltype(i);
      using Out = decltype(o);
      using Acc = std::conditional_t<std::is_floating_point_v<In>, double, int64_t>;
      const In* x = static_cast<const In*>(input);
      Out* y = static_cast<Out*>(output);
      if (inner == 1 && outer < (int64_t{1} << 31)) {
        scan_rows<In, Out, Acc><<<static_cast<unsigned>(outer), kScanBlock, 0, stream()>>>(x, y, n);
      } else {
        scan_columns<In, Out, Acc>
            <<<grid_for(outer * inner), kBlock, 0, stream()>>>(x, y, outer, n, inner);
      }
    });
  });
  check_launch("cumsum");
}

void launch_arg_reduce(bool max, DType dtype, const void* input, void* values, int64_t* indices,
                       int64_t outer, int64_t reduce, int64_t inner) {
  with_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (max) {
      arg_typed<true, T>(static_cast<const T*>(input), static_cast<T*>(values), indices, outer,
                         reduce, inner);
    } else {
      arg_typed<false, T>(static_cast<const T*>(input), static_cast<T*>(values), indices, outer,
                          reduce, inner);
    }
  });
  check_launch("an arg reduction");
}

void launch_reduce(DeviceReduce kind, DType in, DType out, const void* input, void* output,
                   int64_t outer, int64_t reduce, int64_t inner, double divisor) {
  switch (kind) {
    case DeviceReduce::Sum:
      reduce_kind<DeviceReduce::Sum>(in, out, input, output, outer, reduce, inner, divisor);
      break;
    case DeviceReduce::Prod:
      reduce_kind<DeviceReduce::Prod>(in, out, input, output, outer, reduce, inner, divisor);
      break;
    case DeviceReduce::Max:
      reduce_kind<DeviceReduce::Max>(in, out, input, output, outer, reduce, inner, divisor);
      break;
    case DeviceReduce::Min:
      reduce_kind<DeviceReduce::Min>(in, out, input, output, outer, reduce, inner, divisor);
      break;
    case DeviceReduce::Any:
      reduce_kind<DeviceReduce::Any>(in, out, input, output, outer, reduce, inner, divisor);
      break;
    case DeviceReduce::All:
      reduce_kind<DeviceReduce::All>(in, out, input, output, outer, reduce, inner, divisor);
      break;
  }
  check_launch("a reduction");
}

}  // namespace tsl::cuda
