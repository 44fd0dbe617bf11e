// A per-thread cache of freed objects of one size, for the headers every op makes and
// drops (TensorImpl, StorageImpl): with it, a steady-state run of planned code takes
// neither its tensors' bytes nor their headers from the heap.
#pragma once

#include <cstddef>
#include <new>

#include "runtime/tensor/sanitizer.h"

namespace tsl {

// Note [Header caches]
// Every kernel result is a TensorImpl over a StorageImpl, two heap objects made and
// freed per op; at ~60 ns per op in fused code, glibc's malloc and free of them are a
// visible share. A class that declares
//   static void* operator new(size_t n) { return ObjectCache<Class>::take(n); }
//   static void operator delete(void* p, size_t n) { ObjectCache<Class>::give(p, n); }
// keeps up to kCapacity of its freed objects per thread and reuses them. An object may
// die on another thread than the one that made it: it joins that thread's cache (the
// blocks come from the global operator new, so any thread may free them). Off under
// AddressSanitizer, which must see every object freed.
template <typename T>
class ObjectCache {
 public:
  static void* take(size_t n) {
#if !defined(TSL_ADDRESS_SANITIZER)
    if (n == sizeof(T) && !gone()) {
      Slots& s = slots();
      if (s.count > 0) return s.items[--s.count];
    }
#endif
    return ::operator new(n);
  }

  static void give(void* p, size_t n) {
#if !defined(TSL_ADDRESS_SANITIZER)
    if (n == sizeof(T) && !gone()) {
      Slots& s = slots();
      if (s.count < kCapacity) {
        s.items[s.count++] = p;
        return;
      }
    }
#endif
    ::operator delete(p, n);
  }

 private:
  static constexpr size_t kCapacity = 256;
  struct Slots {
    void* items[kCapacity];
    size_t count = 0;
    ~Slots() {
      for (size_t i = 0; i < count; ++i) ::operator delete(items[i], sizeof(T));
      count = 0;
      gone() = true;
    }
  };
  // Set once this thread's cache is destroyed (objects freed later, during thread
  // exit, go straight to the heap). A trivial thread_local, valid to the end.
  static bool& gone() {
    thread_local bool g = false;
    return g;
  }
  static Slots& slots() {
    thread_local Slots s;
    return s;
  }
};

}  // namespace tsl
