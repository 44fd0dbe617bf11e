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
  // Deletes the object when the last reference goes. The sole owner (a count of 1 is
  // the caller's own reference, so no other thread can be copying or dropping one)
  // deletes without an atomic read-modify-write: most tensors die that way, and the
  // lock-prefixed decrement was a tenth of a small op's time. The acquire load orders
  // the delete after other threads' earlier releases, as the decrement's did.
  void release() const {
    if (refcount_.load(std::memory_order_acquire) == 1 ||
        refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete this;
    }
  }
  uint32_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  template <typename T>
  friend class IntrusivePtr;
  // A new object's first reference: a plain store, as no other thread can see it yet.
  void set_first_reference() const { refcount_.store(1, std::memory_order_relaxed); }
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
  // Takes a new object (no reference yet) as its first owner.
  static IntrusivePtr take_new(T* p) {
    p->set_first_reference();
    return adopt(p);
  }

 private:
  T* ptr_ = nullptr;
};

template <typename T, typename... Args>
IntrusivePtr<T> make_intrusive(Args&&... args) {
  return IntrusivePtr<T>::take_new(new T(std::forward<Args>(args)...));
}

}  // namespace tsl
