// A device other than the CPU as the tensor layer sees it (PyTorch's CUDAHooks): the
// CUDA backend (runtime/kernels/cuda) installs one when TSL is built with CUDA. The
// layers above reach device memory only through kernels and these few functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runtime/tensor/tensor.h"

namespace tsl {

// The reductions a device runs for the shared reduction kernels (cpu/reduction.cpp):
// what the CPU's SumOp, ProdOp, MaxOp, MinOp, AnyOp and AllOp compute.
enum class ReduceKind : uint8_t { Sum, Prod, Max, Min, Any, All };

// A kernel compiled at run time and loaded on a device (DeviceBackend::load_kernel).
class DeviceKernel {
 public:
  virtual ~DeviceKernel() = default;
};

class DeviceBackend {
 public:
  // GPUs usable now; 0 with no GPU or no driver (then `unavailable_reason` says why).
  virtual int device_count() = 0;
  virtual std::string unavailable_reason() = 0;
  // dst = src element by element, converting dtypes, between any two devices (one of
  // them this backend's); same sizes, any strides (src may have stride-0 dims).
  virtual void copy(const Tensor& dst, const Tensor& src) = 0;
  // Every element of dst (on this device, any strides) = value.
  virtual void fill(const Tensor& dst, Scalar value) = 0;
  // out[o, i] = the reduction over r of input[o, r, i], for a contiguous `input` read
  // as [outer, reduce, inner] and a contiguous `out` of outer * inner elements (sums
  // divided by `divisor`: means). out's dtype is the result's (int64 for sums of ints).
  virtual void reduce(ReduceKind kind, const Tensor& input, int64_t outer, int64_t reduce,
                      int64_t inner, const Tensor& out, double divisor) = 0;
  // The position of the first max (or min) along r into `indices` (int64), the value
  // into `values` when it is defined; NaN counts as the extreme.
  virtual void arg_reduce(bool max, const Tensor& input, int64_t outer, int64_t reduce,
                          int64_t inner, const Tensor& values, const Tensor& indices) = 0;
  // The running sums along `n` of a contiguous input read as [outer, n, inner] into a
  // contiguous `out` of the same sizes (cumsum; out's dtype is the result's).
  virtual void cumsum(const Tensor& input, int64_t outer, int64_t n, int64_t inner,
                      const Tensor& out) = 0;
  // Sorts each row of a contiguous [rows, n] input, stably (NaN after every number,
  // before when descending; -0.0 equal to 0.0), into contiguous values and indices.
  virtual void sort_rows(const Tensor& input, int64_t rows, int64_t n, bool descending,
                         const Tensor& values, const Tensor& indices) = 0;
  // out[p] = src[p + index[p] * dim_stride] for every position p of out, where `index`
  // and `src` are views over out's shape (src with stride 0 along the gathered dim).
  // Returns an index outside [0, dim_size) if one was met (then waits for the device).
  virtual std::optional<int64_t> gather(const Tensor& out, const Tensor& index, const Tensor& src,
                                        int64_t dim_stride, int64_t dim_size) = 0;
  // out[p + offsets[p]] = values[p] (or += when accumulating) for every position p of
  // `out`, a view over the written positions; `offsets` (int64, in range) and `values`
  // are views over the same shape. Where positions share an element, the last one in
  // row-major order wins, as on the CPU, or all are summed (in no fixed order).
  virtual void put(const Tensor& out, const Tensor& offsets, const Tensor& values,
                   bool accumulate) = 0;
  // Waits for the device's queued work; reports a device fault that happened in it.
  virtual void synchronize() = 0;

  // Kernels compiled at run time from generated source (the CUDA kernels of
  // FusionGroups, runtime/fusion/device_kernels.cpp); the caller keeps the compiled images.
  // What decides the code compiled from one source here (the compiler's version, the
  // device's architecture): part of the key under which an image is kept.
  virtual std::string kernel_compiler_identity() = 0;
  // Compiles `source`, which defines the kernel extern "C" `name` taking one struct
  // parameter; returns its image, or an empty one with the compiler's message in `error`.
  virtual std::string compile_kernel(const std::string& source, const std::string& name,
                                     std::string& error) = 0;
  // Loads an image of compile_kernel; null (and `error`) when it does not load.
  virtual std::shared_ptr<DeviceKernel> load_kernel(const std::string& image,
                                                    const std::string& name,
                                                    std::string& error) = 0;
  // Queues `kernel` on the stream: `blocks` blocks of kKernelBlock threads, its
  // parameter the `bytes` bytes at `params`.
  virtual void launch_kernel(const DeviceKernel& kernel, int64_t blocks, const void* params,
                             size_t bytes) = 0;
  static constexpr int kKernelBlock = 256;

 protected:
  ~DeviceBackend() = default;
};

// The CUDA backend, or nullptr in a build without CUDA.
DeviceBackend* cuda_backend();
void set_cuda_backend(DeviceBackend* backend);

// True once any storage was allocated on a device other than the CPU: until then the
// interpreter skips dispatching by device (see Note [Dispatch by device]).
bool device_tensors_created();
void note_device_tensor_created();

// `t` copied to `device` (or `t` itself when it is there already).
Tensor copy_to_device(const Tensor& t, Device device);
// Every element of `t` = value, on any device.
void fill_tensor(const Tensor& t, Scalar value);

}  // namespace tsl
