// The CPU allocator (with a cache of large freed blocks) and the per-device allocator
// table.
#include "runtime/tensor/storage.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/device_backend.h"
#include "runtime/tensor/error.h"
#include "runtime/tensor/sanitizer.h"

namespace tsl {
namespace {

std::atomic<size_t> g_live_bytes{0};
std::atomic<size_t> g_peak_bytes{0};
DeviceAllocator g_allocators[kNumDeviceTypes] = {nullptr, nullptr};

constexpr size_t kAlignment = 64;

size_t padded_size(size_t nbytes) {
  size_t padded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  return padded == 0 ? kAlignment : padded;
}

// Freed blocks of kCacheMinBytes and more, by size, up to kCacheMaxBytes in all: the
// next tensor of the same size takes one back. Memory fresh from the kernel costs a
// page fault per 4 KiB on first write (a 16 MiB result: ~4,000, more time than an
// elementwise op's math); glibc gives large freed blocks back to the kernel.
constexpr size_t kCacheMinBytes = size_t{1} << 20;
constexpr size_t kCacheMaxBytes = size_t{256} << 20;

struct BlockCache {
  std::mutex mutex;
  std::unordered_multimap<size_t, void*> blocks;
  size_t bytes = 0;
};

BlockCache& block_cache() {
  static auto* cache = new BlockCache();  // never destroyed: tensors may outlive statics
  return *cache;
}

// Freed blocks of up to kSmallMaxBytes, per thread and per size (in steps of the
// alignment): small ops (the dispatch benchmark's 64-element tensors) allocate and
// free one result per op, and aligned_alloc + free of small chunks costs glibc about
// as much as the op's math (memalign, consolidation of fast bins). Off under the
// sanitizers, which must see every block freed.
#if defined(TSL_ADDRESS_SANITIZER)
constexpr size_t kSmallMaxBytes = 0;
#else
constexpr size_t kSmallMaxBytes = 4096;
#endif
constexpr size_t kSmallClasses = 4096 / kAlignment;
constexpr size_t kSmallPerClass = 16;

struct SmallCache {
  void* blocks[kSmallClasses][kSmallPerClass];
  uint8_t count[kSmallClasses] = {};
  ~SmallCache();
};

thread_local SmallCache t_small;
// Set when this thread's cache is gone (a tensor freed during thread exit after it).
thread_local bool t_small_gone = false;

SmallCache::~SmallCache() {
  for (size_t c = 0; c < kSmallClasses; ++c) {
    for (uint8_t i = 0; i < count[c]; ++i) std::free(blocks[c][i]);
  }
  t_small_gone = true;
}

void* take_small(size_t padded) {
  if (padded > kSmallMaxBytes || t_small_gone) return nullptr;
  size_t c = padded / kAlignment - 1;
  if (t_small.count[c] == 0) return nullptr;
  return t_small.blocks[c][--t_small.count[c]];
}

bool keep_small(void* data, size_t padded) {
  if (padded > kSmallMaxBytes || t_small_gone) return false;
  size_t c = padded / kAlignment - 1;
  if (t_small.count[c] == kSmallPerClass) return false;
  t_small.blocks[c][t_small.count[c]++] = data;
  return true;
}

void* take_cached(size_t padded) {
  if (padded <= kSmallMaxBytes) return take_small(padded);
  if (padded < kCacheMinBytes) return nullptr;
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.blocks.find(padded);
  if (it == c.blocks.end()) return nullptr;
  void* data = it->second;
  c.blocks.erase(it);
  c.bytes -= padded;
  return data;
}

// Gives every cached block back (before reporting that memory ran out).
void release_cached() {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [size, data] : c.blocks) std::free(data);
  c.blocks.clear();
  c.bytes = 0;
}

bool keep_cached(void* data, size_t padded) {
  if (padded <= kSmallMaxBytes) return keep_small(data, padded);
  if (padded < kCacheMinBytes) return false;
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.bytes + padded > kCacheMaxBytes) return false;
  c.blocks.emplace(padded, data);
  c.bytes += padded;
  return true;
}

std::atomic<CpuAllocationObserver> g_observer{nullptr};
thread_local CpuAllocationInterceptor* t_interceptor = nullptr;

void note_allocation(size_t nbytes) {
  size_t live = g_live_bytes.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
  size_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live)) {
  }
}

void free_cpu(void*, void* data, size_t nbytes) {
  free_cpu_block(data, nbytes);
  uncount_live_storage_bytes(nbytes);
}

size_t g_allocation_limit = SIZE_MAX;  // set_allocation_limit

Storage allocate_cpu(size_t nbytes) {
  if (t_interceptor != nullptr) {
    if (Storage s = t_interceptor->allocate(nbytes)) return s;
  }
  void* data = allocate_cpu_block(nbytes);
  note_allocation(nbytes);
  return make_intrusive<StorageImpl>(data, nbytes, kCPU, &free_cpu, nullptr);
}

}  // namespace

void set_allocation_limit(size_t max_bytes) { g_allocation_limit = max_bytes; }

void* allocate_cpu_block(size_t nbytes) {
  // aligned_alloc needs a size that is a multiple of the alignment; a zero-size
  // tensor still gets a distinct, valid pointer.
  size_t padded = padded_size(nbytes);
  if (padded < nbytes || nbytes > g_allocation_limit)
    TSL_ERROR("cannot allocate ", nbytes, " bytes on cpu");
  if (CpuAllocationObserver observer = g_observer.load(std::memory_order_relaxed)) {
    observer(nbytes);
  }
  void* data = take_cached(padded);
  if (data == nullptr) data = std::aligned_alloc(kAlignment, padded);
  if (data == nullptr) {
    release_cached();
    data = std::aligned_alloc(kAlignment, padded);
  }
  if (data == nullptr) TSL_ERROR("cannot allocate ", nbytes, " bytes on cpu");
  return data;
}

void free_cpu_block(void* data, size_t nbytes) {
  if (!keep_cached(data, padded_size(nbytes))) std::free(data);
}

void count_live_storage_bytes(size_t nbytes) { note_allocation(nbytes); }

void uncount_live_storage_bytes(size_t nbytes) {
  g_live_bytes.fetch_sub(nbytes, std::memory_order_relaxed);
}

CpuAllocationInterceptor* set_cpu_allocation_interceptor(CpuAllocationInterceptor* interceptor) {
  CpuAllocationInterceptor* previous = t_interceptor;
  t_interceptor = interceptor;
  return previous;
}

void set_cpu_allocation_observer(CpuAllocationObserver observer) {
  g_observer.store(observer, std::memory_order_relaxed);
}

Storage allocate_storage(size_t nbytes, Device device) {
  if (device.is_cpu()) return allocate_cpu(nbytes);
  ensure_kernels_registered();  // the CUDA backend installs its allocator there
  DeviceAllocator allocator = g_allocators[static_cast<int>(device.type)];
  TSL_CHECK(allocator != nullptr, "cannot use device ", device.str(),
            ": CUDA is not available: this build of TSL has no CUDA backend");
  Storage s = allocator(nbytes, device);
  note_device_tensor_created();
  return s;
}

size_t live_storage_bytes() { return g_live_bytes.load(std::memory_order_relaxed); }
size_t peak_live_storage_bytes() { return g_peak_bytes.load(std::memory_order_relaxed); }
void reset_peak_live_storage_bytes() {
  g_peak_bytes.store(live_storage_bytes(), std::memory_order_relaxed);
}

void set_device_allocator(DeviceType type, DeviceAllocator allocator) {
  g_allocators[static_cast<int>(type)] = allocator;
}

}  // namespace tsl
