// Tensor: a typed, strided view of reference-counted storage. Copying a Tensor
// copies a handle; views (reshape of contiguous data, transpose, slicing) share
// storage. See Note [Tensor layout].
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/tensor/device.h"
#include "runtime/tensor/dim_vector.h"
#include "runtime/tensor/dtype.h"
#include "runtime/tensor/error.h"
#include "runtime/tensor/intrusive_ptr.h"
#include "runtime/tensor/object_cache.h"
#include "runtime/tensor/scalar.h"
#include "runtime/tensor/storage.h"

namespace tsl {

// Note [Tensor layout]
// Element (i0, ..., in) of a tensor lives at
//   storage.data + (offset + i0*stride0 + ... + in*striden) * element_size.
// Strides are in elements and may be 0 (broadcast, expand) but never negative
// (flip copies). A tensor is contiguous when its strides are the row-major strides
// of its sizes, ignoring dims of size 1. Zero-size tensors are contiguous.

// Autograd state hangs off a tensor but is defined by runtime/autograd (a layer
// above this one), so the tensor sees only this base.
class AutogradMetaBase {
 public:
  virtual ~AutogradMetaBase() = default;
  // The name of the node that made this tensor ("MulBackward0"), or "" for a leaf;
  // printed as PyTorch prints `grad_fn=<MulBackward0>`.
  virtual std::string grad_fn_name() const { return ""; }
};

class TensorImpl : public RefCounted {
 public:
  TensorImpl(Storage storage, int64_t offset, DimVector sizes, DimVector strides, DType dtype);

  const DimVector& sizes() const { return sizes_; }
  const DimVector& strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  const Storage& storage() const { return storage_; }
  int64_t storage_offset() const { return offset_; }
  bool is_contiguous() const { return contiguous_; }
  void* data() const {
    return static_cast<char*>(storage_->data()) +
           offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  bool requires_grad() const { return requires_grad_; }
  void set_requires_grad(bool value) { requires_grad_ = value; }
  // A 0-dim tensor made from a Python number for a tensor op (`x * 2.0`): in type
  // promotion it counts as a Python scalar, as PyTorch's wrapped numbers do.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool value) { wrapped_number_ = value; }
  AutogradMetaBase* autograd_meta() const { return autograd_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaBase> meta) { autograd_ = std::move(meta); }

  // See Note [Header caches].
  static void* operator new(size_t n) { return ObjectCache<TensorImpl>::take(n); }
  static void operator delete(void* p, size_t n) { ObjectCache<TensorImpl>::give(p, n); }

 private:
  Storage storage_;
  int64_t offset_;
  DimVector sizes_;
  DimVector strides_;
  int64_t numel_;
  DType dtype_;
  bool contiguous_;
  bool requires_grad_ = false;
  bool wrapped_number_ = false;
  std::unique_ptr<AutogradMetaBase> autograd_;
};

class Tensor {
 public:
  Tensor() = default;  // undefined: the zero gradient, an absent optional tensor
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Uninitialized contiguous memory.
  static Tensor empty(std::span<const int64_t> sizes, DType dtype, Device device = kCPU);
  // A 0-dim tensor holding `value` converted to `dtype`.
  static Tensor scalar(Scalar value, DType dtype, Device device = kCPU);
  // A CPU tensor of the given sizes filled from `values` (row-major); for tests.
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, std::span<const int64_t> sizes);
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values) {
    int64_t n = static_cast<int64_t>(values.size());
    return from_vector(values, std::span<const int64_t>(&n, 1));
  }

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  uint32_t use_count() const { return impl_ ? impl_->use_count() : 0; }

  const DimVector& sizes() const { return impl_->sizes(); }
  const DimVector& strides() const { return impl_->strides(); }
  int64_t size(int64_t dim) const;  // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  DType dtype() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  const Storage& storage() const { return impl_->storage(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(dtype()); }

  void* raw_data() const { return impl_->data(); }
  // Typed pointer to the first element; checks the dtype.
  template <typename T>
  T* data_ptr() const {
    TSL_INTERNAL_ASSERT(dtype() == dtype_of<T>, "data_ptr: tensor is ", dtype_name(dtype()));
    return static_cast<T*>(impl_->data());
  }

  // A new tensor header over the same storage (no copy). The caller guarantees
  // that every addressed element lies inside the storage.
  Tensor as_strided(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                    int64_t storage_offset) const;
  // This tensor if it is contiguous, else a contiguous copy.
  Tensor contiguous() const;
  // The value of a one-element tensor.
  Scalar item() const;

  bool requires_grad() const { return impl_ && impl_->requires_grad(); }
  bool is_wrapped_number() const { return impl_->is_wrapped_number(); }

 private:
  IntrusivePtr<TensorImpl> impl_;
};

// ---- Shape helpers shared by kernels, shape inference and the frontend ----

// Row-major strides for `sizes`.
DimVector contiguous_strides(std::span<const int64_t> sizes);
// Product of sizes; a user error when a size is negative or the product overflows.
int64_t checked_numel(std::span<const int64_t> sizes);
// "[2, 3]", the way TSL's messages name shapes.
std::string shape_str(std::span<const int64_t> sizes);
// NumPy broadcasting of two shapes; a user error naming both shapes when they do not
// broadcast ("`op`: shapes [2, 3] and [4] cannot be broadcast").
DimVector broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b,
                           const char* op = nullptr);
// Turns a possibly negative dim into [0, ndim); a user error like PyTorch's
// "Dimension out of range (expected to be in range of [-2, 1], but got 2)".
int64_t wrap_dim(int64_t dim, int64_t ndim);

// Copies `src` into `dst` element by element (same sizes, any strides, dtype cast).
// Defined with the CPU kernels.
void copy_into(const Tensor& dst, const Tensor& src);

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, std::span<const int64_t> sizes) {
  Tensor t = empty(sizes, dtype_of<T>);
  TSL_INTERNAL_ASSERT(static_cast<int64_t>(values.size()) == t.numel(), "from_vector: size");
  T* out = t.data_ptr<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace tsl
