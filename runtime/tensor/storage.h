// Reference-counted memory that tensors view. A storage knows its device and how
// to give its bytes back (the CPU heap, a CUDA allocator or an arena slice).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/tensor/device.h"
#include "runtime/tensor/intrusive_ptr.h"
#include "runtime/tensor/object_cache.h"

namespace tsl {

class StorageImpl : public RefCounted {
 public:
  using Deleter = void (*)(void* context, void* data, size_t nbytes);

  StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter, void* context)
      : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), context_(context) {}
  ~StorageImpl() override {
    if (deleter_) deleter_(context_, data_, nbytes_);
  }

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  // Bumped by every in-place op, shared by all views: autograd compares it with
  // the version it saved to detect a saved tensor modified in place.
  uint32_t version() const { return version_; }
  void bump_version() { ++version_; }

  // See Note [Header caches].
  static void* operator new(size_t n) { return ObjectCache<StorageImpl>::take(n); }
  static void operator delete(void* p, size_t n) { ObjectCache<StorageImpl>::give(p, n); }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Deleter deleter_;
  void* context_;
  uint32_t version_ = 0;
};

using Storage = IntrusivePtr<StorageImpl>;

// Allocates `nbytes` on `device` (64-byte aligned on the CPU). Throws a user error
// "cannot allocate N bytes on DEVICE" when the memory is not there.
Storage allocate_storage(size_t nbytes, Device device);

// The most bytes one CPU block may take (default: no limit but the machine's): a
// larger request fails as memory that is not there does. The fuzz targets set it, so
// that a program asking for gigabytes is an error, not a fuzzer's out-of-memory.
void set_allocation_limit(size_t max_bytes);

// Bytes held by live CPU storages (the allocator's cache of freed blocks is not
// counted), now and at most since the last reset. Relaxed atomics, cheap enough for
// every allocation: tests check with them that values die at their last use and
// after backward, and the benchmarks report peak memory.
size_t live_storage_bytes();
size_t peak_live_storage_bytes();
// Starts a new peak at the bytes live now.
void reset_peak_live_storage_bytes();

// The older names of the same counters.
inline size_t cpu_live_bytes() { return live_storage_bytes(); }
inline size_t cpu_peak_bytes() { return peak_live_storage_bytes(); }
inline void reset_cpu_peak_bytes() { reset_peak_live_storage_bytes(); }

// ---- Planned allocations ---------------------------------------------------------------
// See Note [Memory planning] in runtime/memory/planner.h: while compiled code runs on a
// thread, the memory planner may serve that thread's CPU allocations from an arena.

// Serves CPU allocations in place of the allocator while installed on a thread.
class CpuAllocationInterceptor {
 public:
  // A storage of `nbytes`, or an empty Storage to let the allocator serve it.
  virtual Storage allocate(size_t nbytes) = 0;

 protected:
  ~CpuAllocationInterceptor() = default;
};

// Installs `interceptor` (or none) for this thread's CPU allocations and returns the one
// installed before; the interpreter installs a run's own and restores the previous one.
CpuAllocationInterceptor* set_cpu_allocation_interceptor(CpuAllocationInterceptor* interceptor);

// Raw 64-byte aligned CPU blocks from the allocator (its caches, then the heap), not
// counted in live_storage_bytes(): for arenas, which count the storages they hand out.
void* allocate_cpu_block(size_t nbytes);
void free_cpu_block(void* data, size_t nbytes);
// Adds or removes bytes from the live count (and its peak), for storages an arena serves.
void count_live_storage_bytes(size_t nbytes);
void uncount_live_storage_bytes(size_t nbytes);

// Called with the size of every CPU block the allocator serves (allocate_cpu_block and
// every storage not served by an interceptor), from any thread: the tests count heap
// traffic with it. One observer at a time; nullptr removes it.
using CpuAllocationObserver = void (*)(size_t nbytes);
void set_cpu_allocation_observer(CpuAllocationObserver observer);

// Hook for devices other than the CPU (the CUDA backend installs one).
using DeviceAllocator = Storage (*)(size_t nbytes, Device device);
void set_device_allocator(DeviceType type, DeviceAllocator allocator);

}  // namespace tsl
