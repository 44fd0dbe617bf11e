// A reference-counted pointer whose count lives in the object (one allocation per
// tensor, one atomic add per copy), as tensors and IValues are copied on every op.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace tsl {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  void retain() const { refcount_.fetch_add(1, std::memory_order_relaxed); }
  // Deletes the object when the last reference goes.
  void release() const {
    if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  uint32_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint32_t> refcount_{0};
};

template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  IntrusivePtr(std::nullptr_t) {}
  explicit IntrusivePtr(T* p) : ptr_(p) {
    if (ptr_) ptr_->retain();
  }
  IntrusivePtr(const IntrusivePtr& o) : ptr_(o.ptr_) {
    if (ptr_) ptr_->retain();
  }
  IntrusivePtr(IntrusivePtr&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  template <typename U>
  IntrusivePtr(const IntrusivePtr<U>& o) : IntrusivePtr(static_cast<T*>(o.get())) {}
  ~IntrusivePtr() {
    if (ptr_) ptr_->release();
  }
  IntrusivePtr& operator=(const IntrusivePtr& o) {
    IntrusivePtr(o).swap(*this);
    return *this;
  }
  IntrusivePtr& operator=(IntrusivePtr&& o) noexcept {
    IntrusivePtr(std::move(o)).swap(*this);
    return *this;
  }
  void swap(IntrusivePtr& o) noexcept { std::swap(ptr_, o.ptr_); }
  void reset() { IntrusivePtr().swap(*this); }

  T* get() const { return ptr_; }
  T* operator->() const { return ptr_; }
  T& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool operator==(const IntrusivePtr& o) const { return ptr_ == o.ptr_; }

  // Hands the reference to the caller (used by IValue, which stores raw pointers).
  T* release_ownership() {
    T* p = ptr_;
    ptr_ = nullptr;
    return p;
  }
  // Adopts a pointer whose reference was already counted for us.
  static IntrusivePtr adopt(T* p) {
    IntrusivePtr r;
    r.ptr_ = p;
    return r;
  }

 private:
  T* ptr_ = nullptr;
};

template <typename T, typename... Args>
IntrusivePtr<T> make_intrusive(Args&&... args) {
  return IntrusivePtr<T>(new T(std::forward<Args>(args)...));
}

}  // namespace tsl
