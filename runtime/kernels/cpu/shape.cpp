// Shape kernels that only rewrite a tensor's header (transpose, permute, view,
// reshape when the strides allow it, squeeze, expand) plus contiguous / clone /
// detach, and the registration of every shape, indexing and query kernel.
#include <algorithm>
#include <optional>

#include "runtime/kernels/cpu/shape_kernels.h"
#include "runtime/kernels/kernel.h"

namespace tsl::cpu {
namespace {

// "[2, 3]" for messages about int lists given by the user.
std::string list_str(std::span<const int64_t> values) { return shape_str(values); }

// The shape `shape` with its one -1 replaced so that it holds `numel` elements, as
// ATen's infer_size; a user error worded as PyTorch's when that is impossible.
DimVector infer_size(std::span<const int64_t> shape, int64_t numel) {
  DimVector result(shape);
  std::optional<size_t> inferred;
  bool has_zero = false;
  int64_t product = 1;  // saturates: an overflowing product matches no numel anyway
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      TSL_CHECK(!inferred, "only one dimension can be inferred");
      inferred = i;
    } else {
      TSL_CHECK(shape[i] >= 0, "invalid shape dimension ", shape[i]);
      if (shape[i] == 0) has_zero = true;
      if (__builtin_mul_overflow(product, shape[i], &product)) product = INT64_MAX;
    }
  }
  if (has_zero) product = 0;
  if (numel == product || (inferred && product > 0 && numel % product == 0)) {
    if (inferred) {
      TSL_CHECK(product != 0, "cannot reshape tensor of 0 elements into shape ", list_str(shape),
                " because the unspecified dimension size -1 can be any value and is ambiguous");
      result[*inferred] = numel / product;
    }
    return result;
  }
  TSL_ERROR("shape '", list_str(shape), "' is invalid for input of size ", numel);
}

// Strides that let a tensor of `old_sizes`/`old_strides` be seen as `new_sizes`
// without copying, or nothing when a merged dim would span two separate chunks of
// memory. ATen's computeStride: walk the old dims from the back, grouping those that
// are laid out contiguously with each other, and split each group into new dims.
std::optional<DimVector> compute_view_strides(const DimVector& old_sizes,
                                              const DimVector& old_strides,
                                              std::span<const int64_t> new_sizes) {
  int64_t new_ndim = static_cast<int64_t>(new_sizes.size());
  if (old_sizes.empty()) return DimVector(new_sizes.size(), 1);
  int64_t numel = 1;
  for (int64_t s : old_sizes) numel *= s;
  if (numel == 0) {
    if (old_sizes == DimVector(new_sizes)) return old_strides;
    return contiguous_strides(new_sizes);
  }
  DimVector new_strides(new_sizes.size());
  int64_t view_d = new_ndim - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    bool chunk_ends =
        tensor_d == 0 || (old_sizes[tensor_d - 1] != 1 &&
                          old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
      new_strides[view_d] = view_numel * chunk_base_stride;
      view_numel *= new_sizes[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (tensor_d > 0) {
      chunk_base_stride = old_strides[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

// expand's geometry (ATen's inferExpandGeometry): new leading dims and size-1 dims
// get stride 0; -1 keeps a dim's size.
void expand_geometry(const Tensor& self, std::span<const int64_t> sizes, DimVector& out_sizes,
                     DimVector& out_strides) {
  int64_t ndim = static_cast<int64_t>(sizes.size());
  int64_t tensor_dim = self.dim();
  TSL_CHECK(ndim >= tensor_dim, "expand: the number of sizes provided (", ndim,
            ") must be greater or equal to the number of dimensions in the tensor (", tensor_dim,
            ")");
  out_sizes = DimVector(static_cast<size_t>(ndim));
  out_strides = DimVector(static_cast<size_t>(ndim));
  for (int64_t i = ndim - 1; i >= 0; --i) {
    int64_t d = tensor_dim - (ndim - i);
    int64_t size = d >= 0 ? self.sizes()[d] : 1;
    int64_t stride = d >= 0 ? self.strides()[d] : 0;
    int64_t target = sizes[i];
    if (target == -1) {
      TSL_CHECK(d >= 0,
                "The expanded size of the tensor (-1) isn't allowed in a leading, "
                "non-existing dimension ",
                i);
      target = size;
    }
    TSL_CHECK(target >= 0, "expand: invalid size ", target, " in ", list_str(sizes));
    if (size != target) {
      TSL_CHECK(size == 1, "The expanded size of the tensor (", target,
                ") must match the existing size (", size, ") at non-singleton dimension ", i,
                ".  Target sizes: ", list_str(sizes), ".  Tensor sizes: ", shape_str(self.sizes()));
      size = target;
      stride = 0;
    }
    out_sizes[i] = size;
    out_strides[i] = stride;
  }
  checked_numel(out_sizes);  // a user error when the sizes overflow
}

}  // namespace

Tensor make_view(const Tensor& self, std::span<const int64_t> sizes,
                 std::span<const int64_t> strides, int64_t storage_offset) {
  return self.as_strided(sizes, strides, storage_offset);
}

Tensor t(const Tensor& self) {
  TSL_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(),
            "D");
  if (self.dim() < 2) return make_view(self, self.sizes(), self.strides(), self.storage_offset());
  return transpose(self, 0, 1);
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  int64_t a = wrap_dim(dim0, self.dim());
  int64_t b = wrap_dim(dim1, self.dim());
  DimVector sizes = self.sizes();
  DimVector strides = self.strides();
  if (self.dim() > 0) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor permute(const Tensor& self, std::vector<int64_t> dims) {
  int64_t ndim = self.dim();
  TSL_CHECK(static_cast<int64_t>(dims.size()) == ndim,
            "permute(): number of dims don't match in permute: input.dim() = ", ndim,
            " is not equal to len(dims) = ", dims.size());
  DimVector sizes(static_cast<size_t>(ndim));
  DimVector strides(static_cast<size_t>(ndim));
  std::vector<bool> seen(static_cast<size_t>(ndim), false);
  for (int64_t i = 0; i < ndim; ++i) {
    int64_t d = wrap_dim(dims[i], ndim);
    TSL_CHECK(!seen[d], "permute(): duplicate dims are not allowed: ", list_str(dims));
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor reshape(const Tensor& self, std::vector<int64_t> shape) {
  DimVector sizes = infer_size(shape, self.numel());
  if (auto strides = compute_view_strides(self.sizes(), self.strides(), sizes)) {
    return make_view(self, sizes, *strides, self.storage_offset());
  }
  Tensor copy = clone(self);
  return make_view(copy, sizes, contiguous_strides(sizes), copy.storage_offset());
}

Tensor view(const Tensor& self, std::vector<int64_t> size) {
  DimVector sizes = infer_size(size, self.numel());
  auto strides = compute_view_strides(self.sizes(), self.strides(), sizes);
  TSL_CHECK(strides.has_value(),
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(self, sizes, *strides, self.storage_offset());
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  int64_t start = wrap_dim(start_dim, self.dim());
  int64_t end = wrap_dim(end_dim, self.dim());
  TSL_CHECK(start <= end, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (self.dim() == 0) return reshape(self, {1});
  if (start == end) return make_view(self, self.sizes(), self.strides(), self.storage_offset());
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < start; ++d) shape.push_back(self.sizes()[d]);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= self.sizes()[d];
  shape.push_back(merged);
  for (int64_t d = end + 1; d < self.dim(); ++d) shape.push_back(self.sizes()[d]);
  return reshape(self, std::move(shape));
}

Tensor squeeze(const Tensor& self) {
  DimVector sizes;
  DimVector strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.sizes()[d] == 1) continue;
    sizes.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor squeeze_dim(const Tensor& self, int64_t dim) {
  int64_t d = wrap_dim(dim, self.dim());
  DimVector sizes = self.sizes();
  DimVector strides = self.strides();
  if (self.dim() > 0 && sizes[d] == 1) {
    sizes.erase(static_cast<size_t>(d));
    strides.erase(static_cast<size_t>(d));
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  int64_t d = wrap_dim(dim, self.dim() + 1);
  DimVector sizes = self.sizes();
  DimVector strides = self.strides();
  // The new dim's stride is irrelevant (size 1); PyTorch's choice keeps the result
  // contiguous when the input is.
  int64_t stride = d >= self.dim() ? 1 : sizes[d] * strides[d];
  sizes.insert(static_cast<size_t>(d), 1);
  strides.insert(static_cast<size_t>(d), stride);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor expand(const Tensor& self, std::vector<int64_t> size) {
  DimVector sizes;
  DimVector strides;
  expand_geometry(self, size, sizes, strides);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor broadcast_to(const Tensor& self, std::vector<int64_t> size) {
  return expand(self, std::move(size));
}

Tensor expand_as(const Tensor& self, const Tensor& other) {
  return expand(self, other.sizes().vec());
}

Tensor view_as(const Tensor& self, const Tensor& other) { return view(self, other.sizes().vec()); }

Tensor reshape_as(const Tensor& self, const Tensor& other) {
  return reshape(self, other.sizes().vec());
}

Tensor contiguous(const Tensor& self) { return self.contiguous(); }

Tensor clone(const Tensor& self) {
  Tensor out = Tensor::empty(self.sizes(), self.dtype(), self.device());
  copy_into(out, self);
  return out;
}

Tensor detach(const Tensor& self) {
  return make_view(self, self.sizes(), self.strides(), self.storage_offset());
}

}  // namespace tsl::cpu

namespace tsl {

void register_cpu_shape_kernels() {
  // Header-only views work on any device's tensors.
  TSL_REGISTER_GENERIC(t, cpu::t);
  TSL_REGISTER_GENERIC(transpose, cpu::transpose);
  TSL_REGISTER_GENERIC(permute, cpu::permute);
  TSL_REGISTER_GENERIC(view, cpu::view);
  TSL_REGISTER_GENERIC(squeeze, cpu::squeeze);
  TSL_REGISTER_GENERIC(squeeze_dim, cpu::squeeze_dim);
  TSL_REGISTER_GENERIC(unsqueeze, cpu::unsqueeze);
  TSL_REGISTER_GENERIC(expand, cpu::expand);
  TSL_REGISTER_GENERIC(broadcast_to, cpu::broadcast_to);
  TSL_REGISTER_GENERIC(expand_as, cpu::expand_as);
  TSL_REGISTER_GENERIC(view_as, cpu::view_as);
  TSL_REGISTER_GENERIC(detach, cpu::detach);
  // These copy through copy_into and Tensor::empty on the tensor's own device.
  TSL_REGISTER_GENERIC(reshape, cpu::reshape);
  TSL_REGISTER_GENERIC(reshape_as, cpu::reshape_as);
  TSL_REGISTER_GENERIC(flatten, cpu::flatten);
  TSL_REGISTER_GENERIC(contiguous, cpu::contiguous);
  TSL_REGISTER_GENERIC(clone, cpu::clone);
  cpu::register_shape_slice_kernels();
  cpu::register_shape_join_kernels();
  cpu::register_index_kernels();
  cpu::register_shape_query_kernels();
}

}  // namespace tsl
