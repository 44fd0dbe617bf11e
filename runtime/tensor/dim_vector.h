// A vector of int64 with room for six entries inline: the sizes and strides of a
// tensor, copied on every op, so the common case must not touch the heap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <vector>

namespace tsl {

class DimVector {
 public:
  static constexpr size_t kInline = 6;

  DimVector() = default;
  explicit DimVector(size_t n, int64_t value = 0) { resize(n, value); }
  DimVector(std::initializer_list<int64_t> values) { assign(values.begin(), values.size()); }
  DimVector(std::span<const int64_t> values) { assign(values.data(), values.size()); }
  DimVector(const std::vector<int64_t>& values) { assign(values.data(), values.size()); }
  DimVector(const DimVector& o) { assign(o.data(), o.size()); }
  DimVector(DimVector&& o) noexcept { take(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o.data(), o.size());
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) {
      free_heap();
      take(o);
    }
    return *this;
  }
  ~DimVector() { free_heap(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t back() const { return data()[size_ - 1]; }
  int64_t& back() { return data()[size_ - 1]; }

  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void push_back(int64_t v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    int64_t* d = data();
    std::memmove(d + pos + 1, d + pos, (size_ - pos) * sizeof(int64_t));
    d[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    std::memmove(d + pos, d + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
    --size_;
  }
  void clear() { size_ = 0; }

  std::span<const int64_t> span() const { return {data(), size_}; }
  operator std::span<const int64_t>() const { return span(); }
  std::vector<int64_t> vec() const { return {begin(), end()}; }

  bool operator==(const DimVector& o) const {
    return size_ == o.size_ && std::equal(begin(), end(), o.begin());
  }

 private:
  void reserve(size_t n) {
    if (n <= capacity_) return;
    size_t cap = std::max(n, capacity_ * 2);
    auto* fresh = new int64_t[cap];
    std::memcpy(fresh, data(), size_ * sizeof(int64_t));
    free_heap();
    heap_ = fresh;
    capacity_ = cap;
  }
  void assign(const int64_t* values, size_t n) {
    size_ = 0;
    reserve(n);
    // An empty source may be a null pointer, which memcpy must not see even for 0 bytes.
    if (n > 0) std::memcpy(data(), values, n * sizeof(int64_t));
    size_ = n;
  }
  void free_heap() {
    delete[] heap_;
    heap_ = nullptr;
    capacity_ = kInline;
  }
  void take(DimVector& o) {
    size_ = o.size_;
    capacity_ = o.capacity_;
    heap_ = o.heap_;
    if (!heap_) std::memcpy(inline_, o.inline_, size_ * sizeof(int64_t));
    o.heap_ = nullptr;
    o.size_ = 0;
    o.capacity_ = kInline;
  }

  int64_t* heap_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = kInline;
  int64_t inline_[kInline];
};

}  // namespace tsl
