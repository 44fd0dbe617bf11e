// Kernels that build a new tensor by rearranging whole blocks of their inputs: cat,
// stack, repeat and flip.
#include <cstring>

#include "runtime/kernels/cpu/shape_kernels.h"
#include "runtime/kernels/cpu/strided.h"
#include "runtime/kernels/kernel.h"

namespace tsl::cpu {
namespace {

// PyTorch keeps accepting 1-D empty tensors in cat whatever the other shapes are
// (a legacy rule); they contribute nothing.
bool skipped_in_cat(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

// Checks that `t` matches `ref` in every dim but `d`, with PyTorch's wording.
void check_cat_shape(const Tensor& ref, const Tensor& t, int64_t d, size_t position) {
  TSL_CHECK(t.dim() == ref.dim(), "Tensors must have same number of dimensions: got ", ref.dim(),
            " and ", t.dim());
  for (int64_t k = 0; k < ref.dim(); ++k) {
    if (k == d) continue;
    TSL_CHECK(t.sizes()[k] == ref.sizes()[k], "Sizes of tensors must match except in dimension ", d,
              ". Expected size ", ref.sizes()[k], " but got size ", t.sizes()[k],
              " for tensor number ", position, " in the list.");
  }
}

// Copies a contiguous `src` of the output's dtype into the output's slab starting at
// `dim_offset` along `d`: one memcpy per outer index.
void copy_block(const Tensor& out, const Tensor& src, int64_t d, int64_t dim_offset) {
  size_t esize = element_size(out.dtype());
  int64_t outer = 1;
  for (int64_t k = 0; k < d; ++k) outer *= out.sizes()[k];
  int64_t inner = 1;
  for (int64_t k = d + 1; k < out.dim(); ++k) inner *= out.sizes()[k];
  size_t src_row = static_cast<size_t>(src.sizes()[d] * inner) * esize;
  size_t out_row = static_cast<size_t>(out.sizes()[d] * inner) * esize;
  const char* in = static_cast<const char*>(src.raw_data());
  char* dst = static_cast<char*>(out.raw_data()) + static_cast<size_t>(dim_offset * inner) * esize;
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + static_cast<size_t>(o) * out_row, in + static_cast<size_t>(o) * src_row,
                src_row);
  }
}

// Copies `src` into `dst` (same sizes). When both have the same dtype and are dense
// along the last dim, one memcpy per row instead of an element loop.
void copy_rows_or_elements(const Tensor& dst, const Tensor& src) {
  size_t nd = dst.sizes().size();
  if (nd == 0 || dst.dtype() != src.dtype() || dst.strides()[nd - 1] != 1 ||
      src.strides()[nd - 1] != 1 || !dst.device().is_cpu() || !src.device().is_cpu()) {
    copy_into(dst, src);
    return;
  }
  size_t esize = element_size(dst.dtype());
  size_t row_bytes = static_cast<size_t>(dst.sizes()[nd - 1]) * esize;
  char* out = static_cast<char*>(dst.raw_data());
  const char* in = static_cast<const char*>(src.raw_data());
  const std::span<const int64_t> strides[2] = {{dst.strides().data(), nd - 1},
                                               {src.strides().data(), nd - 1}};
  for_each_offset<2>(std::span<const int64_t>(dst.sizes().data(), nd - 1), strides,
                     [&](const int64_t* o) {
                       std::memcpy(out + static_cast<size_t>(o[0]) * esize,
                                   in + static_cast<size_t>(o[1]) * esize, row_bytes);
                     });
}

}  // namespace

Tensor cat(std::vector<Tensor> tensors, int64_t dim) {
  TSL_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  DType dtype = tensors[0].dtype();
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TSL_CHECK(t.defined(), "torch.cat(): tensor at position ", i, " is undefined");
    TSL_CHECK(t.dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    TSL_CHECK(t.device() == tensors[0].device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              tensors[0].device().str(), " and ", t.device().str(), "!");
    dtype = promote_types(dtype, t.dtype());
    if (!ref && !skipped_in_cat(t)) ref = &t;
  }
  if (!ref) return Tensor::empty(std::vector<int64_t>{0}, dtype, tensors[0].device());
  int64_t d = wrap_dim(dim, ref->dim());
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (skipped_in_cat(tensors[i])) continue;
    check_cat_shape(*ref, tensors[i], d, i);
    total += tensors[i].sizes()[d];
  }
  DimVector sizes = ref->sizes();
  sizes[d] = total;
  Tensor out = Tensor::empty(sizes, dtype, ref->device());
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped_in_cat(t)) continue;
    int64_t length = t.sizes()[d];
    if (t.numel() > 0) {
      if (out.device().is_cpu() && t.dtype() == dtype && t.is_contiguous()) {
        copy_block(out, t, d, offset);
      } else {
        DimVector part = out.sizes();
        part[d] = length;
        copy_into(make_view(out, part, out.strides(), offset * out.strides()[d]), t);
      }
    }
    offset += length;
  }
  return out;
}

Tensor stack(std::vector<Tensor> tensors, int64_t dim) {
  TSL_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1);
  for (size_t i = 1; i < tensors.size(); ++i) {
    TSL_CHECK(tensors[i].sizes() == tensors[0].sizes(),
              "stack expects each tensor to be equal size, but got ", shape_str(tensors[0].sizes()),
              " at entry 0 and ", shape_str(tensors[i].sizes()), " at entry ", i);
  }
  for (Tensor& t : tensors) t = unsqueeze(t, d);
  return cat(std::move(tensors), d);
}

// Viewing the output of shape [r0*s0, r1*s1, ...] as [r0, s0, r1, s1, ...] and the
// input as the same shape with stride 0 on every r, one strided copy tiles it.
Tensor repeat(const Tensor& self, std::vector<int64_t> repeats) {
  int64_t ndim = static_cast<int64_t>(repeats.size());
  TSL_CHECK(ndim >= self.dim(),
            "Number of dimensions of repeat dims can not be smaller than "
            "number of dimensions of tensor");
  int64_t lead = ndim - self.dim();
  DimVector out_sizes(static_cast<size_t>(ndim));
  DimVector split_sizes;
  DimVector src_strides;
  for (int64_t i = 0; i < ndim; ++i) {
    TSL_CHECK(repeats[i] >= 0, "Trying to create tensor with negative dimension ", repeats[i], ": ",
              shape_str(repeats));
    int64_t s = i < lead ? 1 : self.sizes()[i - lead];
    TSL_CHECK(!__builtin_mul_overflow(s, repeats[i], &out_sizes[i]), "repeat: ", shape_str(repeats),
              " makes too many elements");
    split_sizes.push_back(repeats[i]);
    split_sizes.push_back(s);
    src_strides.push_back(0);
    src_strides.push_back(i < lead ? 0 : self.strides()[i - lead]);
  }
  Tensor out = Tensor::empty(out_sizes, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  DimVector out_strides;
  for (int64_t i = 0; i < ndim; ++i) {
    int64_t stride = out.strides()[i];
    out_strides.push_back(stride * split_sizes[2 * i + 1]);
    out_strides.push_back(stride);
  }
  copy_rows_or_elements(make_view(out, split_sizes, out_strides, 0),
                        make_view(self, split_sizes, src_strides, self.storage_offset()));
  return out;
}

// Walks the output in order with the flipped dims' strides negated, starting from the
// last element along those dims, so each input element lands in its mirrored place.
Tensor flip(const Tensor& self, std::vector<int64_t> dims) {
  Tensor out = Tensor::empty(self.sizes(), self.dtype(), self.device());
  DimVector out_strides = out.strides();
  int64_t base = 0;
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  for (int64_t dim : dims) {
    int64_t d = wrap_dim(dim, self.dim());
    TSL_CHECK(!seen[d], "dims has duplicates, original flip dims size=", dims.size(),
              ", but unique flip dims size=", dims.size() - 1);
    seen[d] = true;
    if (self.dim() == 0) continue;
    base += (self.sizes()[d] - 1) * out_strides[d];
    out_strides[d] = -out_strides[d];
  }
  if (!self.device().is_cpu()) {
    // On a device: a copy from self read backwards along the flipped dims (the one
    // place a view has negative strides: only the device's copy walks it).
    if (self.numel() == 0) return out;
    DimVector strides = self.strides();
    int64_t offset = self.storage_offset();
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!seen[d]) continue;
      offset += (self.sizes()[d] - 1) * strides[d];
      strides[d] = -strides[d];
    }
    copy_into(out, self.as_strided(self.sizes(), strides, offset));
    return out;
  }
  const std::span<const int64_t> strides[2] = {out_strides.span(), self.strides().span()};
  TSL_DISPATCH_ALL(self.dtype(), "flip", [&] {
    scalar_t* dst = out.data_ptr<scalar_t>() + base;
    const scalar_t* src = self.data_ptr<scalar_t>();
    for_each_offset<2>(self.sizes().span(), strides,
                       [&](const int64_t* o) { dst[o[0]] = src[o[1]]; });
  });
  return out;
}

void register_shape_join_kernels() {
  TSL_REGISTER_CPU(cat, cat);
  TSL_REGISTER_CPU(stack, stack);
  TSL_REGISTER_CPU(repeat, repeat);
  TSL_REGISTER_CPU(flip, flip);
}

}  // namespace tsl::cpu
