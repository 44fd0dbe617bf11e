// Device detection, the stream and CUDA errors. See Note [The CUDA backend].
#include "runtime/kernels/cuda/cuda_context.h"

#include <mutex>

#include "runtime/tensor/error.h"

namespace tsl::cuda {
namespace {

struct DeviceState {
  int count = 0;
  std::string reason;
};

const DeviceState& device_state() {
  static const DeviceState state = [] {
    DeviceState s;
    cudaError_t err = cudaGetDeviceCount(&s.count);
    if (err != cudaSuccess) {
      s.count = 0;
      s.reason =
          err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver
              ? std::string("no NVIDIA GPU or driver was found (") + cudaGetErrorString(err) + ")"
              : std::string("CUDA failed to start: ") + cudaGetErrorString(err);
      cudaGetLastError();  // not sticky: clear it
    } else if (s.count == 0) {
      s.reason = "no NVIDIA GPU was found";
    }
    return s;
  }();
  return state;
}

}  // namespace

int device_count() { return device_state().count; }
std::string unavailable_reason() { return device_state().reason; }

void ensure_available() {
  const DeviceState& s = device_state();
  TSL_CHECK(s.count > 0, "CUDA is not available: ", s.reason);
}

void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clears a non-sticky error so the session can go on
  TSL_ERROR("CUDA error: ", cudaGetErrorString(err), " (", what, ")");
}

void check_launch(const char* what) { check(cudaGetLastError(), what); }

cudaStream_t stream() {
  static cudaStream_t s = [] {
    ensure_available();
    check(cudaSetDevice(0), "selecting cuda:0");
    cudaStream_t created = nullptr;
    check(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "creating a stream");
    return created;
  }();
  return s;
}

void synchronize(const char* what) { check(cudaStreamSynchronize(stream()), what); }

}  // namespace tsl::cuda
