// Device code of softmax, the class losses and scatter_add (see launch.h).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "runtime/kernels/cuda/launch_common.cuh"

namespace tsl::cuda {
namespace {

constexpr int kRowBlock = 256;

template <typename T, typename Op>
__device__ T block_reduce(T v, T* shared, Op op) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kRowBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  T r = shared[0];
  __syncthreads();
  return r;
}

template <typename T>
__global__ void softmax_rows(const T* in, T* out, int64_t n, bool log) {
  __shared__ T shared[kRowBlock];
  const T* x = in + blockIdx.x * n;
  T* y = out + blockIdx.x * n;
  T m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += kRowBlock) m = x[i] > m || x[i] != x[i] ? x[i] : m;
  m = block_reduce(m, shared, [](T a, T b) { return a > b || a != a ? a : b; });
  // A row of -inf (or all NaN) keeps the max at 0, as PyTorch's kernels do.
  T shift = isinf(m) ? T(0) : m;
  T s = 0;
  for (int64_t i = threadIdx.x; i < n; i += kRowBlock) s += std::exp(x[i] - shift);
  s = block_reduce(s, shared, [](T a, T b) { return a + b; });
  if (log) {
    T ls = std::log(s);
    for (int64_t i = threadIdx.x; i < n; i += kRowBlock) y[i] = x[i] - shift - ls;
  } else {
    for (int64_t i = threadIdx.x; i < n; i += kRowBlock) y[i] = std::exp(x[i] - shift) / s;
  }
}

__device__ void note_bad(int64_t* bad, int64_t v) {
  atomicCAS(reinterpret_cast<unsigned long long*>(bad), static_cast<unsigned long long>(INT64_MIN),
            static_cast<unsigned long long>(v));
}

template <typename T>
__global__ void class_nll(const T* logp, const int64_t* target, const T* weight, int64_t batch,
                          int64_t classes, int64_t spatial, int64_t ignore, T* nll, T* wsum,
                          int64_t* bad) {
  int64_t n = batch * spatial;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n;
       e += int64_t{gridDim.x} * blockDim.x) {
    int64_t t = target[e];
    T loss = 0, w = 0;
    if (t != ignore) {
      if (t < 0 || t >= classes) {
        note_bad(bad, t);
      } else {
        int64_t b = e / spatial, s = e % spatial;
        w = weight ? weight[t] : T(1);
        loss = -w * logp[(b * classes + t) * spatial + s];
      }
    }
    nll[e] = loss;
    wsum[e] = w;
  }
}

template <typename T>
__device__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, int64_t>)
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  else
    atomicAdd(p, v);
}

template <typename T>
__global__ void scatter_add_kernel(const __grid_constant__ Loop<3> l, int64_t dim_stride,
                                   int64_t dim_size, int64_t* bad) {
  const int64_t* index = reinterpret_cast<const int64_t*>(l.op[0].data);
  const T* src = reinterpret_cast<const T*>(l.op[1].data);
  T* out = reinterpret_cast<T*>(l.op[2].data);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < l.numel;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[3];
    offsets(l, i, off);
    int64_t k = index[off[0]];
    if (k < 0 || k >= dim_size) {
      note_bad(bad, k);
      continue;
    }
    atomic_add(out + off[2] + k * dim_stride, src[off[1]]);
  }
}

template <typename T>
__global__ void gather_kernel(const __grid_constant__ Loop<3> l, int64_t dim_stride,
                              int64_t dim_size, int64_t* bad) {
  T* out = reinterpret_cast<T*>(l.op[0].data);
  const int64_t* index = reinterpret_cast<const int64_t*>(l.op[1].data);
  const T* src = reinterpret_cast<const T*>(l.op[2].data);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < l.numel;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[3];
    offsets(l, i, off);
    int64_t k = index[off[1]];
    if (k < 0 || k >= dim_size) {
      note_bad(bad, k);
      continue;
    }
    out[off[0]] = src[off[2] + k * dim_stride];
  }
}

template <typename T>
__global__ void put_accumulate_kernel(const __grid_constant__ Loop<3> l) {
  T* out = reinterpret_cast<T*>(l.op[0].data);
  const int64_t* shift = reinterpret_cast<const int64_t*>(l.op[1].data);
  const T* values = reinterpret_cast<const T*>(l.op[2].data);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < l.numel;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[3];
    offsets(l, i, off);
    T* target = out + off[0] + shift[off[1]];
    const T v = values[off[2]];
    if constexpr (std::is_same_v<T, bool>) {
      if (v) *target = true;  // every writer writes the same value: no race to lose
    } else {
      atomic_add(target, v);
    }
  }
}

}  // namespace

void launch_put_accumulate(DType dtype, const Loop<3>& l) {
  if (l.numel == 0) return;
  switch (dtype) {
    case DType::Bool:
      put_accumulate_kernel<bool><<<grid_for(l.numel), kBlock, 0, stream()>>>(l);
      break;
    case DType::Int64:
      put_accumulate_kernel<int64_t><<<grid_for(l.numel), kBlock, 0, stream()>>>(l);
      break;
    case DType::Float32:
      put_accumulate_kernel<float><<<grid_for(l.numel), kBlock, 0, stream()>>>(l);
      break;
    case DType::Float64:
      put_accumulate_kernel<double><<<grid_for(l.numel), kBlock, 0, stream()>>>(l);
      break;
  }
  check_launch("index_put");
}

void launch_gather(DType dtype, const Loop<3>& l, int64_t dim_stride, int64_t dim_size,
                   int64_t* bad) {
  if (l.numel == 0) return;
  switch (dtype) {
    case DType::Bool:
      gather_kernel<bool><<<grid_for(l.numel), kBlock, 0, stream()>>>(l, dim_stride, dim_size, bad);
      break;
    case DType::Int64:
      gather_kernel<int64_t>
          <<<grid_for(l.numel), kBlock, 0, stream()>>>(l, dim_stride, dim_size, bad);
      break;
    case DType::Float32:
      gather_kernel<float>
          <<<grid_for(l.numel), kBlock, 0, stream()>>>(l, dim_stride, dim_size, bad);
      break;
    case DType::Float64:
      gather_kernel<double>
          <<<grid_for(l.numel), kBlock, 0, stream()>>>(l, dim_stride, dim_size, bad);
      break;
  }
  check_launch("gather");
}

void launch_softmax_rows(DType dtype, const void* in, void* out, int64_t rows, int64_t n,
                         bool log) {
  if (rows == 0 || n == 0) return;
  if (dtype == DType::Float32) {
    softmax_rows<float><<<static_cast<unsigned>(rows), kRowBlock, 0, stream()>>>(
        static_cast<const float*>(in), static_cast<float*>(out), n, log);
  } else {
    softmax_rows<double><<<static_cast<unsigned>(rows), kRowBlock, 0, stream()>>>(
        static_cast<const double*>(in), static_cast<double*>(out), n, log);
  }
  check_launch("softmax");
}

void launch_class_nll(DType dtype, const void* logp, const int64_t* target, const void* weight,
                      int64_t batch, int64_t classes, int64_t spatial, int64_t ignore_index,
                      void* nll, void* wsum, int64_t* bad) {
  int64_t n = batch * spatial;
  if (n == 0) return;
  if (dtype == DType::Float32) {
    class_nll<float><<<grid_for(n), kBlock, 0, stream()>>>(
        static_cast<const float*>(logp), target, static_cast<const float*>(weight), batch, classes,
        spatial, ignore_index, static_cast<float*>(nll), static_cast<float*>(wsum), bad);
  } else {
    class_nll<double><<<grid_for(n), kBlock, 0, stream()>>>(
        static_cast<const double*>(logp), target, static_cast<const double*>(weight), batch,
        classes, spatial, ignore_index, static_cast<double*>(nll), static_cast<double*>(wsum), bad);
  }
  check_launch("nll_loss");
}

void launch_scatter_add(DType dtype, const Loop<3>& l, int64_t dim_stride, int64_t dim_size,
                        int64_t* bad) {
  if (l.numel == 0) return;
  switch (dtype) {
    case DType::Int64:
      scatter_add_kernel<int64_t>
          <<<grid_for(l.numel), kBlock, 0, stream()>>>(l, dim_stride, dim_size, bad);
      break;
    case DType::Float32:
      scatter_add_kernel<float>
          <<<grid_for(l.numel), kBlock, 0, stream()>>>(l, dim_stride, dim_size, bad);
      break;
    case DType::Float64:
      scatter_add_kernel<double>
          <<<grid_for(l.numel), kBlock, 0, stream()>>>(l, dim_stride, dim_size, bad);
      break;
    default:
      unsupported("scatter_add", OpId::scatter_add);
  }
  check_launch("scatter_add");
}

}  // namespace tsl::cuda
