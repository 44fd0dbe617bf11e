// The device backend registry and the device-neutral helpers built on it.
#include "runtime/tensor/device_backend.h"

#include <atomic>

#include "runtime/kernels/cpu/strided.h"

namespace tsl {
namespace {

DeviceBackend* g_cuda = nullptr;
std::atomic<bool> g_device_tensors{false};

}  // namespace

DeviceBackend* cuda_backend() { return g_cuda; }
void set_cuda_backend(DeviceBackend* backend) { g_cuda = backend; }

bool device_tensors_created() { return g_device_tensors.load(std::memory_order_relaxed); }
void note_device_tensor_created() { g_device_tensors.store(true, std::memory_order_relaxed); }

Tensor copy_to_device(const Tensor& t, Device device) {
  if (t.device() == device) return t;
  Tensor out = Tensor::empty(t.sizes(), t.dtype(), device);
  copy_into(out, t);
  return out;
}

void fill_tensor(const Tensor& t, Scalar value) {
  if (!t.device().is_cpu()) {
    TSL_INTERNAL_ASSERT(g_cuda != nullptr, "a CUDA tensor without the CUDA backend");
    g_cuda->fill(t, value);
    return;
  }
  TSL_DISPATCH_ALL(t.dtype(), "fill", [&] {
    scalar_t v = value.to<scalar_t>();
    scalar_t* data = t.data_ptr<scalar_t>();
    const std::span<const int64_t> strides[1] = {t.strides().span()};
    cpu::for_each_offset<1>(t.sizes().span(), strides, [&](const int64_t* o) { data[o[0]] = v; });
  });
}

}  // namespace tsl
