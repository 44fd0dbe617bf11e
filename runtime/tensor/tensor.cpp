// Tensor headers, views and the shape helpers every layer uses.
#include "runtime/tensor/tensor.h"

#include <limits>

namespace tsl {
namespace {

bool compute_contiguous(const DimVector& sizes, const DimVector& strides) {
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 0) return true;
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

}  // namespace

TensorImpl::TensorImpl(Storage storage, int64_t offset, DimVector sizes, DimVector strides,
                       DType dtype)
    : storage_(std::move(storage)),
      offset_(offset),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      dtype_(dtype) {
  TSL_INTERNAL_ASSERT(sizes_.size() == strides_.size(), "sizes and strides differ in rank");
  numel_ = 1;
  for (int64_t s : sizes_) numel_ *= s;
  contiguous_ = compute_contiguous(sizes_, strides_);
}

Tensor Tensor::empty(std::span<const int64_t> sizes, DType dtype, Device device) {
  int64_t n = checked_numel(sizes);
  size_t esize = element_size(dtype);
  if (n > 0 && static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / esize) {
    TSL_ERROR("cannot allocate a tensor of shape ", shape_str(sizes), ": too many bytes");
  }
  Storage storage = allocate_storage(static_cast<size_t>(n) * esize, device);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), 0, DimVector(sizes),
                                           contiguous_strides(sizes), dtype));
}

Tensor Tensor::scalar(Scalar value, DType dtype, Device device) {
  Tensor cpu = empty({}, dtype, kCPU);
  TSL_DISPATCH_ALL(dtype, "scalar", [&] { *cpu.data_ptr<scalar_t>() = value.to<scalar_t>(); });
  if (device.is_cpu()) return cpu;
  Tensor out = empty({}, dtype, device);
  copy_into(out, cpu);
  return out;
}

// wrap_dim lets a 0-dim tensor take dim 0 or -1 (reductions treat it as one
// element); a 0-dim tensor still has no size or stride to read.
int64_t Tensor::size(int64_t d) const {
  TSL_CHECK(dim() > 0, "Dimension specified as ", d, " but tensor has no dimensions");
  return sizes()[wrap_dim(d, dim())];
}
int64_t Tensor::stride(int64_t d) const {
  TSL_CHECK(dim() > 0, "Dimension specified as ", d, " but tensor has no dimensions");
  return strides()[wrap_dim(d, dim())];
}

Tensor Tensor::as_strided(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                          int64_t storage_offset) const {
  return Tensor(make_intrusive<TensorImpl>(storage(), storage_offset, DimVector(sizes),
                                           DimVector(strides), dtype()));
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  Tensor out = empty(sizes(), dtype(), device());
  copy_into(out, *this);
  return out;
}

Scalar Tensor::item() const {
  TSL_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  Tensor cpu = *this;
  if (!device().is_cpu()) {
    cpu = empty(sizes(), dtype(), kCPU);
    copy_into(cpu, *this);
  }
  return TSL_DISPATCH_ALL(dtype(), "item", [&]() -> Scalar {
    scalar_t v = *cpu.data_ptr<scalar_t>();
    if constexpr (std::is_same_v<scalar_t, bool>)
      return Scalar(v);
    else if constexpr (std::is_integral_v<scalar_t>)
      return Scalar(static_cast<int64_t>(v));
    else
      return Scalar(static_cast<double>(v));
  });
}

DimVector contiguous_strides(std::span<const int64_t> sizes) {
  DimVector strides(sizes.size());
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

int64_t checked_numel(std::span<const int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    TSL_CHECK(s >= 0, "negative dimension ", s, " in shape ", shape_str(sizes));
    if (s != 0 && n > std::numeric_limits<int64_t>::max() / s) {
      TSL_ERROR("cannot allocate a tensor of shape ", shape_str(sizes), ": too many elements");
    }
    n *= s;
  }
  return n;
}

std::string shape_str(std::span<const int64_t> sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(sizes[i]);
  }
  return out + "]";
}

DimVector broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      TSL_ERROR(op ? op : "broadcast", ": shapes ", shape_str(a), " and ", shape_str(b),
                " cannot be broadcast (size ", da, " vs ", db, " at dimension ", i, ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-dim tensor accepts dims -1 and 0
  if (dim < -n || dim >= n) {
    TSL_ERROR("Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
              "], but got ", dim, ")");
  }
  return dim < 0 ? dim + n : dim;
}

}  // namespace tsl
