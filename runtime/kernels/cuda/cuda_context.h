// The CUDA backend's process state: whether a GPU is usable, the one stream every
// kernel and copy is queued on, CUDA errors as TSL errors, and the caching allocator.
// See Note [The CUDA backend].
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/op_info.h"

#include "runtime/tensor/device.h"
#include "runtime/tensor/device_backend.h"
#include "runtime/tensor/storage.h"

namespace tsl::cuda {

// Note [The CUDA backend]
// * One device (cuda:0) and one stream, created at first use. Kernels and copies are
//   queued on it and the host goes on; it waits only where it reads a value (printing,
//   .item(), .tolist(), a copy to the CPU), so an error inside a kernel surfaces there
//   or at the next launch and names that op: CUDA reports faults late. A sticky fault
//   (an illegal address) leaves the context unusable; every later op reports it.
// * Memory comes from a caching allocator (cuda_allocator.cpp), as PyTorch's: sizes
//   rounded up to 512 bytes, small requests (up to 1 MiB) carved from 2 MiB segments,
//   larger ones from 20 MiB segments or their own, freed blocks kept per pool (best
//   fit, split, merged with free neighbours) and handed out again. Since every use of
//   a block is ordered on the one stream, a block freed by the host can be reused at
//   once. cudaMalloc runs only when the cache has no block that fits (zero times in a
//   steady-state training step); when it fails the cache is released and it is tried
//   once more before "CUDA out of memory".
// * A build with CUDA runs without a GPU: device_count() is 0 and every use of a CUDA
//   tensor says why.

// Number of usable GPUs (0 with no driver or no device); asked once.
int device_count();
// "no CUDA driver was found", ...: why device_count() is 0.
std::string unavailable_reason();
// Fails with a clear error when no GPU is usable, else selects cuda:0.
void ensure_available();

// The stream TSL queues its work on.
cudaStream_t stream();
// Throws "CUDA error: <description> (<what>)" unless err is cudaSuccess.
void check(cudaError_t err, const char* what);
// Checks the launch of a kernel just queued (a bad configuration, a sticky fault).
void check_launch(const char* what);
// Waits for the stream; reports an error a kernel raised meanwhile.
void synchronize(const char* what);

// The caching allocator.
Storage allocate(size_t nbytes, Device device);
struct AllocatorStats {
  int64_t device_mallocs = 0;  // cudaMalloc calls so far
  int64_t device_frees = 0;    // cudaFree calls so far
  size_t allocated_bytes = 0;  // in blocks held by tensors
  size_t reserved_bytes = 0;   // in segments from cudaMalloc
  size_t peak_allocated_bytes = 0;
};
AllocatorStats allocator_stats();
// Returns every unused cached segment to the driver (torch.cuda.empty_cache()).
void empty_cache();

// Kernels compiled at run time (cuda_jit.cpp).
// The GPU's compute capability as a number (90 for 9.0).
int device_arch();
// The NVRTC release and the target it compiles for on a GPU of `device_arch`.
std::string nvrtc_identity(int device_arch);
// The image of `source` for a GPU of `device_arch` (NVRTC needs no GPU); empty, with
// NVRTC's message in `error`, when it does not compile or NVRTC is missing.
std::string nvrtc_compile(const std::string& source, const std::string& name, int device_arch,
                          std::string& error);
std::shared_ptr<DeviceKernel> load_kernel(const std::string& image, const std::string& name,
                                          std::string& error);
void launch_kernel(const DeviceKernel& kernel, int64_t blocks, int threads, const void* params,
                   size_t bytes);

// The ops with a CPU tensor kernel and no CUDA kernel yet (cuda_register.cpp): the
// backend's backlog in one list, kept true by a test (CudaCoverage).
const std::vector<OpId>& ops_without_cuda_kernel();

}  // namespace tsl::cuda
