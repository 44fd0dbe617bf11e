// The CPU allocator and the per-device allocator table.
#include "runtime/tensor/storage.h"

#include <atomic>
#include <cstdlib>
#include <new>

#include "runtime/tensor/error.h"

namespace tsl {
namespace {

std::atomic<size_t> g_live_bytes{0};
std::atomic<size_t> g_peak_bytes{0};
DeviceAllocator g_allocators[kNumDeviceTypes] = {nullptr, nullptr};

constexpr size_t kAlignment = 64;

void free_cpu(void*, void* data, size_t nbytes) {
  std::free(data);
  g_live_bytes.fetch_sub(nbytes, std::memory_order_relaxed);
}

void note_allocation(size_t nbytes) {
  size_t live = g_live_bytes.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
  size_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live)) {
  }
}

Storage allocate_cpu(size_t nbytes) {
  // aligned_alloc needs a size that is a multiple of the alignment; a zero-size
  // tensor still gets a distinct, valid pointer.
  size_t padded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  if (padded == 0) padded = kAlignment;
  if (padded < nbytes) TSL_ERROR("cannot allocate ", nbytes, " bytes on cpu");
  void* data = std::aligned_alloc(kAlignment, padded);
  if (data == nullptr) TSL_ERROR("cannot allocate ", nbytes, " bytes on cpu");
  note_allocation(nbytes);
  return make_intrusive<StorageImpl>(data, nbytes, kCPU, &free_cpu, nullptr);
}

}  // namespace

Storage allocate_storage(size_t nbytes, Device device) {
  if (device.is_cpu()) return allocate_cpu(nbytes);
  DeviceAllocator allocator = g_allocators[static_cast<int>(device.type)];
  TSL_CHECK(allocator != nullptr, "device ", device.str(),
            " is not available: TSL was built without CUDA or no GPU was found");
  return allocator(nbytes, device);
}

size_t cpu_live_bytes() { return g_live_bytes.load(std::memory_order_relaxed); }
size_t cpu_peak_bytes() { return g_peak_bytes.load(std::memory_order_relaxed); }
void reset_cpu_peak_bytes() { g_peak_bytes.store(cpu_live_bytes(), std::memory_order_relaxed); }

void set_device_allocator(DeviceType type, DeviceAllocator allocator) {
  g_allocators[static_cast<int>(type)] = allocator;
}

}  // namespace tsl
