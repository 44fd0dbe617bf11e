// Indexing by tensors: advanced indexing x[idx] (int64 and bool tensors, one per dim,
// broadcast together), index_select and gather. The results are copies.
//
// On a device (Note [Reductions on every device] in reduction.cpp) the same checks and
// plan, with the offsets computed by the device's kernels and the elements moved by
// the DeviceBackend's gather and put. As PyTorch's CUDA indexing, a bool mask waits for
// the device (the result's size depends on its values: its coordinates are found on
// the CPU), and so does the range check of int64 indices (their min and max).
#include <cstring>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/shape_kernels.h"
#include "runtime/kernels/cpu/strided.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/device_backend.h"

namespace tsl::cpu {
namespace {

// The coordinates of the true elements of `mask` (k dims): k int64 vectors, as
// PyTorch turns a bool index into `mask.nonzero()` columns.
std::vector<Tensor> mask_to_indices(const Tensor& mask) {
  Tensor m = mask.contiguous();
  const bool* data = m.data_ptr<bool>();
  int64_t count = 0;
  for (int64_t i = 0; i < m.numel(); ++i) count += data[i] ? 1 : 0;
  int64_t k = m.dim();
  std::vector<Tensor> columns;
  std::vector<int64_t*> out;
  for (int64_t j = 0; j < k; ++j) {
    columns.push_back(Tensor::empty(std::vector<int64_t>{count}, DType::Int64));
    out.push_back(columns.back().data_ptr<int64_t>());
  }
  int64_t row = 0;
  for (int64_t i = 0; i < m.numel(); ++i) {
    if (!data[i]) continue;
    int64_t rest = i;
    for (int64_t j = k - 1; j >= 0; --j) {
      out[j][row] = rest % m.sizes()[j];
      rest /= m.sizes()[j];
    }
    ++row;
  }
  return columns;
}

}  // namespace

std::vector<Tensor> expand_index_list(const Tensor& self,
                                      const std::vector<std::optional<Tensor>>& indices) {
  std::vector<Tensor> result;
  for (const std::optional<Tensor>& index : indices) {
    if (!index || !index->defined()) {
      result.emplace_back();
      continue;
    }
    const Tensor& idx = *index;
    // PyTorch takes CPU index tensors for a tensor on any device.
    TSL_CHECK(idx.device().is_cpu() || idx.device() == self.device(),
              "indices should be either on cpu or on the same device as the indexed tensor (",
              self.device().str(), ")");
    auto on_self_device = [&](const Tensor& t) {
      return t.device() == self.device() ? t : copy_to_device(t, self.device());
    };
    if (idx.dtype() == DType::Bool) {
      int64_t first = static_cast<int64_t>(result.size());
      TSL_CHECK(idx.dim() > 0, "index: a 0-dim bool index is not supported");
      for (int64_t j = 0; j < idx.dim(); ++j) {
        TSL_CHECK(first + j < self.dim(), "too many indices for tensor of dimension ", self.dim());
        TSL_CHECK(idx.sizes()[j] == self.sizes()[first + j], "The shape of the mask ",
                  shape_str(idx.sizes()), " at index ", j,
                  " does not match the shape of the indexed tensor ", shape_str(self.sizes()),
                  " at index ", first + j);
      }
      Tensor mask = idx.device().is_cpu() ? idx : copy_to_device(idx, kCPU);
      for (Tensor& column : mask_to_indices(mask)) result.push_back(on_self_device(column));
      continue;
    }
    TSL_CHECK(idx.dtype() == DType::Int64,
              "tensors used as indices must be long, int, byte or bool tensors, got ",
              dtype_name(idx.dtype()));
    result.push_back(on_self_device(idx));
  }
  TSL_CHECK(static_cast<int64_t>(result.size()) <= self.dim(),
            "too many indices for tensor of "
            "dimension ",
            self.dim(), " (got ", result.size(), ")");
  result.resize(static_cast<size_t>(self.dim()));
  return result;
}

namespace {

// The broadcast shape of the defined index tensors, with PyTorch's message.
DimVector broadcast_indices(const std::vector<Tensor>& indices) {
  DimVector shape;
  bool first = true;
  for (const Tensor& idx : indices) {
    if (!idx.defined()) continue;
    if (first) {
      shape = idx.sizes();
      first = false;
      continue;
    }
    try {
      shape = broadcast_shapes(shape, idx.sizes());
    } catch (const Error&) {
      std::string shapes;
      for (const Tensor& i : indices) {
        if (!i.defined()) continue;
        if (!shapes.empty()) shapes += ", ";
        shapes += shape_str(i.sizes());
      }
      TSL_ERROR("shape mismatch: indexing tensors could not be broadcast together with shapes ",
                shapes);
    }
  }
  return shape;
}

// The strides of `t` seen as a tensor of `shape` (right-aligned broadcasting).
DimVector broadcast_strides(const Tensor& t, const DimVector& shape) {
  DimVector strides(shape.size(), 0);
  size_t lead = shape.size() - t.sizes().size();
  for (size_t d = 0; d < t.sizes().size(); ++d) {
    strides[lead + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d];
  }
  return strides;
}

// On a device: `idx` with negative indices wrapped, after checking that each lies in
// [-size, size). One wait for the min and max; an index out of range is looked for on
// the CPU, for the CPU's message naming the first one.
Tensor wrapped_on_device(const Tensor& idx, int64_t size, int64_t dim) {
  if (idx.numel() == 0) return idx;
  const int64_t lo =
      check_device_indices(idx, -size, size, [&](int64_t i) { checked_index(i, size, dim); }).first;
  return lo >= 0 ? idx : op1(OpId::remainder, {IValue(idx), IValue(size)});
}

// For each position of the broadcast index shape, the element offset in `self` that
// the indexed dims select: sum over k of wrap(index_k) * stride_k.
Tensor index_offsets(const Tensor& self, const std::vector<Tensor>& indices,
                     const DimVector& shape) {
  if (!self.device().is_cpu()) {
    Tensor offsets = Tensor::empty(shape, DType::Int64, self.device());
    fill_tensor(offsets, Scalar(int64_t{0}));
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!indices[d].defined()) continue;
      Tensor w = wrapped_on_device(indices[d], self.sizes()[d], d);
      Tensor step = op1(OpId::mul, {IValue(w), IValue(self.strides()[d])});
      offsets = op1(OpId::add, {IValue(offsets), IValue(step), IValue(int64_t{1})});
    }
    return offsets;
  }
  Tensor offsets = Tensor::empty(shape, DType::Int64);
  int64_t* off = offsets.data_ptr<int64_t>();
  std::fill(off, off + offsets.numel(), 0);
  for (int64_t d = 0; d < self.dim(); ++d) {
    const Tensor& idx = indices[d];
    if (!idx.defined()) continue;
    DimVector strides = broadcast_strides(idx, shape);
    const std::span<const int64_t> all[2] = {offsets.strides().span(), strides.span()};
    const int64_t* in = idx.data_ptr<int64_t>();
    int64_t size = self.sizes()[d];
    int64_t stride = self.strides()[d];
    for_each_offset<2>(shape.span(), all, [&](const int64_t* o) {
      off[o[0]] += checked_index(in[o[1]], size, d) * stride;
    });
  }
  return offsets;
}

// Gathers out[p] = self[p . self_strides + offsets[p . offset_strides]] over the plan.
void gather_by_offsets(const Tensor& out, const Tensor& self, const IndexPlan& plan) {
  const std::span<const int64_t> all[3] = {out.strides().span(), plan.self_strides.span(),
                                           plan.offset_strides.span()};
  const int64_t* off = plan.offsets.data_ptr<int64_t>();
  TSL_DISPATCH_ALL(self.dtype(), "index", [&] {
    scalar_t* dst = out.data_ptr<scalar_t>();
    const scalar_t* src = self.data_ptr<scalar_t>();
    for_each_offset<3>(out.sizes().span(), all,
                       [&](const int64_t* o) { dst[o[0]] = src[o[1] + off[o[2]]]; });
  });
}

// out[o, i, :] = src[o, ids[i], :] for a contiguous `src` split at dim `d`: one
// memcpy per row, the common case of x[idx] and index_select. `ids` are in range.
void copy_rows(const Tensor& out, const Tensor& src, int64_t d, const int64_t* ids, int64_t n) {
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= src.sizes()[k];
  for (int64_t k = d + 1; k < src.dim(); ++k) inner *= src.sizes()[k];
  int64_t size = src.dim() == 0 ? 1 : src.sizes()[d];
  size_t row = static_cast<size_t>(inner) * element_size(src.dtype());
  const char* in = static_cast<const char*>(src.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(dst + static_cast<size_t>(o * n + i) * row,
                  in + static_cast<size_t>(o * size + ids[i]) * row, row);
    }
  }
}

// x[idx] with one 1-D index on a contiguous tensor: wrap and check the indices, then
// copy whole rows.
Tensor index_rows(const Tensor& self, int64_t d, const Tensor& idx) {
  Tensor ids = Tensor::empty(idx.sizes(), DType::Int64);
  int64_t n = idx.numel();
  int64_t* out_ids = ids.data_ptr<int64_t>();
  const int64_t* in_ids = idx.data_ptr<int64_t>();
  int64_t stride = idx.strides()[0];
  for (int64_t i = 0; i < n; ++i)
    out_ids[i] = checked_index(in_ids[i * stride], self.sizes()[d], d);
  DimVector out_sizes = self.sizes();
  out_sizes[d] = n;
  Tensor out = Tensor::empty(out_sizes, self.dtype());
  if (out.numel() > 0) copy_rows(out, self, d, out_ids, n);
  return out;
}

}  // namespace

IndexPlan plan_index(const Tensor& self, const std::vector<Tensor>& indices) {
  int64_t first = -1;
  int64_t last = -1;
  bool adjacent = true;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!indices[d].defined()) continue;
    if (first < 0)
      first = d;
    else if (last != d - 1)
      adjacent = false;
    last = d;
  }
  IndexPlan plan;
  if (first < 0) {
    plan.shape = self.sizes();
    plan.self_strides = self.strides();
    plan.offsets = Tensor::scalar(Scalar(int64_t{0}), DType::Int64);
    plan.offset_strides = DimVector(self.sizes().size(), 0);
    return plan;
  }
  DimVector bshape = broadcast_indices(indices);
  plan.offsets = index_offsets(self, indices, bshape);
  auto add_kept = [&](int64_t d) {
    plan.shape.push_back(self.sizes()[d]);
    plan.self_strides.push_back(self.strides()[d]);
    plan.offset_strides.push_back(0);
  };
  auto add_index_dims = [&] {
    for (size_t k = 0; k < bshape.size(); ++k) {
      plan.shape.push_back(bshape[k]);
      plan.self_strides.push_back(0);
      plan.offset_strides.push_back(plan.offsets.strides()[k]);
    }
  };
  if (!adjacent) add_index_dims();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (indices[d].defined()) {
      if (adjacent && d == first) add_index_dims();
      continue;
    }
    add_kept(d);
  }
  return plan;
}

Tensor index(const Tensor& self, std::vector<std::optional<Tensor>> index_list) {
  std::vector<Tensor> indices = expand_index_list(self, index_list);
  int64_t first = -1;
  int64_t count = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!indices[d].defined()) continue;
    if (first < 0) first = d;
    ++count;
  }
  if (first < 0) return clone(self);
  if (!self.device().is_cpu()) {
    IndexPlan plan = plan_index(self, indices);
    Tensor out = Tensor::empty(plan.shape, self.dtype(), self.device());
    if (out.numel() == 0) return out;
    Tensor offsets =
        plan.offsets.as_strided(plan.shape, plan.offset_strides, plan.offsets.storage_offset());
    Tensor src = self.as_strided(plan.shape, plan.self_strides, self.storage_offset());
    cuda_backend()->gather(out, offsets, src, 1, INT64_MAX);  // offsets are in range
    return out;
  }
  if (count == 1 && indices[first].dim() == 1 && self.is_contiguous()) {
    return index_rows(self, first, indices[first]);
  }
  IndexPlan plan = plan_index(self, indices);
  Tensor out = Tensor::empty(plan.shape, self.dtype());
  if (out.numel() > 0) gather_by_offsets(out, self, plan);
  return out;
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  TSL_CHECK(index.device() == self.device(),
            "Expected all tensors to be on the same device, but found at least two devices, ",
            self.device().str(), " and ", index.device().str(), "!");
  TSL_CHECK(index.dim() <= 1, "index_select(): Index is supposed to be a vector, got a ",
            index.dim(), "-D tensor");
  TSL_CHECK(index.dtype() == DType::Int64, "index_select(): Expected dtype int64 for index, got ",
            dtype_name(index.dtype()));
  int64_t d = wrap_dim(dim, self.dim());
  Tensor src = self.contiguous();
  Tensor idx = index.contiguous();
  int64_t n = idx.numel();
  int64_t size = self.dim() == 0 ? 1 : self.sizes()[d];
  DimVector out_sizes = self.sizes();
  if (self.dim() > 0)
    out_sizes[d] = n;
  else
    TSL_CHECK(n == 1, "index_select(): Index to scalar can have only 1 value, got ", n,
              " value(s)");
  if (!self.device().is_cpu()) {
    // On a device: a gather whose index walks `dim` (Note [Reductions on every device]).
    Tensor out = Tensor::empty(out_sizes, self.dtype(), self.device());
    if (out.numel() == 0) return out;
    DimVector idx_strides(out_sizes.size(), 0), src_strides = self.strides();
    if (self.dim() > 0) {
      idx_strides[d] = idx.dim() == 0 ? 0 : idx.strides()[0];
      src_strides[d] = 0;
    }
    Tensor iv = idx.as_strided(out_sizes, idx_strides, idx.storage_offset());
    Tensor sv = self.as_strided(out_sizes, src_strides, self.storage_offset());
    if (std::optional<int64_t> bad =
            cuda_backend()->gather(out, iv, sv, self.dim() == 0 ? 0 : self.strides()[d], size)) {
      TSL_ERROR("index_select(): index ", *bad, " is out of range for dimension ", d, " with size ",
                size);
    }
    return out;
  }
  Tensor out = Tensor::empty(out_sizes, self.dtype());
  const int64_t* ids = idx.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    TSL_CHECK(ids[i] >= 0 && ids[i] < size, "index_select(): index ", ids[i],
              " is out of range for dimension ", d, " with size ", size);
  }
  if (out.numel() > 0) copy_rows(out, src, d, ids, n);
  return out;
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  TSL_CHECK(index.device() == self.device(),
            "Expected all tensors to be on the same device, but found at least two devices, ",
            self.device().str(), " and ", index.device().str(), "!");
  TSL_CHECK(index.dtype() == DType::Int64, "gather(): Expected dtype int64 for index, got ",
            dtype_name(index.dtype()));
  int64_t d = wrap_dim(dim, self.dim());
  TSL_CHECK(std::max<int64_t>(index.dim(), 1) == std::max<int64_t>(self.dim(), 1),
            "Index tensor must have the same number of dimensions as input tensor");
  for (int64_t k = 0; k < index.dim() && self.dim() > 0; ++k) {
    if (k == d) continue;
    TSL_CHECK(index.sizes()[k] <= self.sizes()[k], "Size does not match at dimension ", k,
              " expected index ", shape_str(index.sizes()), " to be smaller than self ",
              shape_str(self.sizes()), " apart from dimension ", d);
  }
  Tensor out = Tensor::empty(index.sizes(), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  int64_t size = self.dim() == 0 ? 1 : self.sizes()[d];
  int64_t stride = self.dim() == 0 ? 0 : self.strides()[d];
  // self's strides over the index shape, 0 along `dim` (the index supplies it).
  DimVector self_strides(static_cast<size_t>(index.dim()), 0);
  if (self.dim() > 0 && self.dim() == index.dim()) {
    self_strides = self.strides();
    self_strides[d] = 0;
  }
  if (!self.device().is_cpu()) {
    Tensor sv = self.as_strided(index.sizes(), self_strides, self.storage_offset());
    if (std::optional<int64_t> bad = cuda_backend()->gather(out, index, sv, stride, size)) {
      TSL_ERROR("index ", *bad, " is out of bounds for dimension ", d, " with size ", size);
    }
    return out;
  }
  const std::span<const int64_t> all[3] = {out.strides().span(), index.strides().span(),
                                           self_strides.span()};
  const int64_t* ids = index.data_ptr<int64_t>();
  TSL_DISPATCH_ALL(self.dtype(), "gather", [&] {
    scalar_t* dst = out.data_ptr<scalar_t>();
    const scalar_t* src = self.data_ptr<scalar_t>();
    for_each_offset<3>(index.sizes().span(), all, [&](const int64_t* o) {
      int64_t i = ids[o[1]];
      if (i < 0 || i >= size) [[unlikely]] {
        TSL_ERROR("index ", i, " is out of bounds for dimension ", d, " with size ", size);
      }
      dst[o[0]] = src[o[2] + i * stride];
    });
  });
  return out;
}

void register_index_kernels() {
  TSL_REGISTER_CPU(index, index);
  TSL_REGISTER_CPU(index_select, index_select);
  TSL_REGISTER_CPU(gather, gather);
}

}  // namespace tsl::cpu
