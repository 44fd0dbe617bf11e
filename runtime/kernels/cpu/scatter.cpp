// Scatters, the adjoints of gathers and slices that gradient formulas are built from:
// sum_to_size, scatter_add, index_add, index_put, slice_scatter and select_scatter.
// Each returns a new tensor; accumulation runs in a fixed order, so results repeat.
#include <algorithm>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/kernels/cpu/scatter.h"
#include "runtime/kernels/cpu/shape_kernels.h"
#include "runtime/kernels/cpu/strided.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/grad_mode.h"
#include "runtime/tensor/memory_overlap.h"

namespace tsl::cpu {
namespace {

// a + b as PyTorch adds tensors: int64 wraps around, bool is a logical or.
template <typename T>
inline T add_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else if constexpr (std::is_integral_v<T>)
    return wrapping_add(a, b);
  else
    return a + b;
}

template <typename T>
inline T mul_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a && b;
  else if constexpr (std::is_integral_v<T>)
    return wrapping_mul(a, b);
  else
    return a * b;
}

// Whether a tensor of shape `from` broadcasts to shape `to` (right-aligned, each size
// equal or 1), the test behind PyTorch's is_expandable_to.
bool expandable_to(std::span<const int64_t> from, std::span<const int64_t> to) {
  if (from.size() > to.size()) return false;
  size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != to[lead + d] && from[d] != 1) return false;
  }
  return true;
}

// The strides of a tensor of `sizes`/`strides` read as a tensor of `shape`, which it
// broadcasts to (stride 0 on size-1 and missing leading dims).
DimVector expanded_strides(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                           std::span<const int64_t> shape) {
  DimVector out(shape.size(), 0);
  size_t lead = shape.size() - sizes.size();
  for (size_t d = 0; d < sizes.size(); ++d) out[lead + d] = sizes[d] == 1 ? 0 : strides[d];
  return out;
}

// Calls fn(offsets, n) for every position of `shape`, in row-major order, where n
// elements from `offsets` on form a run along the last dim. When each operand k has
// stride run_strides[k] on the last dim (1 for data, 0 for a per-row offset) the runs
// are whole rows, so fn's loop over them vectorizes; otherwise n is 1.
template <size_t N, typename Fn>
void for_each_run(std::span<const int64_t> shape, const std::span<const int64_t> (&strides)[N],
                  const int64_t (&run_strides)[N], Fn&& fn) {
  size_t nd = shape.size();
  bool rows = nd > 0;
  for (size_t k = 0; k < N && rows; ++k) rows = strides[k][nd - 1] == run_strides[k];
  if (!rows) {
    for_each_offset<N>(shape, strides, [&](const int64_t* off) { fn(off, int64_t{1}); });
    return;
  }
  std::span<const int64_t> outer[N];
  for (size_t k = 0; k < N; ++k) outer[k] = strides[k].first(nd - 1);
  int64_t run = shape[nd - 1];
  if (run == 0) return;
  for_each_offset<N>(shape.first(nd - 1), outer, [&](const int64_t* off) { fn(off, run); });
}

void check_cpu(const char* op, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) TSL_CHECK(t->device().is_cpu(), op, ": expected CPU tensors");
}

// Sizes and strides with a 0-dim tensor read as a 1-element vector, as PyTorch's
// scatter and gather do (ensure_nonempty_size).
struct NonEmptyGeometry {
  DimVector sizes;
  DimVector strides;
  explicit NonEmptyGeometry(const Tensor& t)
      : sizes(t.dim() == 0 ? DimVector{1} : t.sizes()),
        strides(t.dim() == 0 ? DimVector{1} : t.strides()) {}
};

// ---- sum_to_size -----------------------------------------------------------------------

// PyTorch's sum_to: the leading dims that `size` lacks and the dims where `size` has 1
// and self does not are summed by the sum kernel; the result is reshaped to `size`.
Tensor sum_to_size(const Tensor& self, std::vector<int64_t> size) {
  // The common case on every gradient path: nothing to sum.
  if (std::ranges::equal(self.sizes().span(), size)) return self;
  TSL_CHECK(expandable_to(size, self.sizes()), "size {", shape_str(size),
            "} is not expandable to size {", shape_str(self.sizes()), "}.");
  TSL_CHECK(self.dim() <= 64, "sum_to_size: tensors of at most 64 dims, got ", self.dim());
  int64_t lead = self.dim() - static_cast<int64_t>(size.size());
  DimMask mask = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d < lead || (size[d - lead] == 1 && self.sizes()[d] != 1)) mask |= DimMask{1} << d;
  }
  // expandable_to and unequal sizes leave at least one dim to sum.
  TSL_INTERNAL_ASSERT(mask != 0, "sum_to_size: nothing to sum from ", shape_str(self.sizes()),
                      " to ", shape_str(size));
  Tensor out = sum_over(self, mask, /*keepdim=*/true);
  if (lead == 0) return out;
  return make_view(out, size, contiguous_strides(size), out.storage_offset());
}

// ---- scatter_add -----------------------------------------------------------------------

}  // namespace

void check_scatter_shapes(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  NonEmptyGeometry s(self), i(index), x(src);
  TSL_CHECK(i.sizes.size() == s.sizes.size(),
            "Index tensor must have the same number of dimensions as self tensor (index ",
            shape_str(index.sizes()), ", self ", shape_str(self.sizes()), ")");
  TSL_CHECK(i.sizes.size() == x.sizes.size(),
            "Index tensor must have the same number of dimensions as src tensor (index ",
            shape_str(index.sizes()), ", src ", shape_str(src.sizes()), ")");
  bool fits = true;
  for (size_t d = 0; d < i.sizes.size(); ++d) {
    if (static_cast<int64_t>(d) != dim && i.sizes[d] > s.sizes[d]) fits = false;
    if (i.sizes[d] > x.sizes[d]) fits = false;
  }
  TSL_CHECK(fits, "Expected index ", shape_str(index.sizes()), " to be smaller than self ",
            shape_str(self.sizes()), " apart from dimension ", dim,
            " and to be smaller size than src ", shape_str(src.sizes()));
}

void check_scatter_add_args(const Tensor& self, int64_t dim, const Tensor& index,
                            const Tensor& src) {
  TSL_CHECK(index.dtype() == DType::Int64, "scatter(): Expected dtype int64 for index, got ",
            dtype_name(index.dtype()));
  TSL_CHECK(self.dtype() == src.dtype(),
            "scatter(): Expected self.dtype to be equal to src.dtype, got ",
            dtype_name(self.dtype()), " and ", dtype_name(src.dtype()));
  // PyTorch checks no shapes for an empty index.
  if (index.numel() > 0) check_scatter_shapes(self, dim, index, src);
}

namespace {

// out[..., index[p], ...] += src[p] for every position p of index (row-major order).
template <typename T>
void scatter_add_loop(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  NonEmptyGeometry o(out), i(index), s(src);
  int64_t size = o.sizes[dim];
  int64_t stride = o.strides[dim];
  DimVector out_strides = o.strides;
  out_strides[dim] = 0;  // the index supplies the position along dim
  const std::span<const int64_t> all[3] = {i.strides.span(), s.strides.span(), out_strides.span()};
  const int64_t* ids = index.data_ptr<int64_t>();
  const T* in = src.data_ptr<T>();
  T* dst = out.data_ptr<T>();
  for_each_offset<3>(i.sizes.span(), all, [&](const int64_t* off) {
    int64_t k = ids[off[0]];
    if (k < 0 || k >= size) [[unlikely]] {
      TSL_ERROR("index ", k, " is out of bounds for dimension ", dim, " with size ", size);
    }
    T& target = dst[off[2] + k * stride];
    target = add_values(target, in[off[1]]);
  });
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  check_cpu("scatter_add", {&self, &index, &src});
  int64_t d = wrap_dim(dim, self.dim());
  check_scatter_add_args(self, d, index, src);
  Tensor out = clone(self);
  if (index.numel() == 0) return out;
  TSL_DISPATCH_ALL(self.dtype(), "scatter_add",
                   [&] { scatter_add_loop<scalar_t>(out, d, index, src); });
  return out;
}

// ---- index_add -------------------------------------------------------------------------

void check_index_add_args(const Tensor& self, int64_t d, const Tensor& index,
                          const Tensor& source) {
  TSL_CHECK(
      index.dim() <= 1, "index_add(): Index is supposed to be a vector, but got dim: ", index.dim(),
      " with type: ", scalar_type_name(index.dtype()), " and size: ", shape_str(index.sizes()));
  TSL_CHECK(index.dtype() == DType::Int64, "index_add(): Expected dtype int64 for index but got: ",
            scalar_type_name(index.dtype()));
  TSL_CHECK(self.dtype() == source.dtype(), "index_add(): self (", scalar_type_name(self.dtype()),
            ") and source (", scalar_type_name(source.dtype()), ") must have the same scalar type");
  TSL_CHECK(d == 0 || d < source.dim(), "index_add(): Indexing dim ", d,
            " is out of bounds of the source tensor with dim ", source.dim());
  int64_t source_size = source.dim() == 0 ? 1 : source.sizes()[d];
  TSL_CHECK(index.numel() == source_size, "index_add(): Number of indices (", index.numel(),
            ") should be equal to source.size(dim): (", source_size, "), for dim: ", d);
  // A self of 2+ dims adds source.select(d, i) to self.select(d, index[i]); smaller
  // selves add single elements.
  TSL_CHECK(self.dim() <= 1 || source.dim() > 0, "index_add(): source of shape ",
            shape_str(source.sizes()), " has no dim ", d, " to select slices of self ",
            shape_str(self.sizes()), " from");
  TSL_CHECK(self.dim() > 1 || source.dim() <= 1, "index_add(): source.dim() (", source.dim(),
            ") must one or zero for given self.dim() (", self.dim(), ")");
}

// The geometry of the slices of one tensor along dim `d`: the sizes and strides of
// x.select(d, i) and the step between consecutive slices (a 0-dim tensor is its own
// only slice).
struct Slices {
  DimVector sizes;
  DimVector strides;
  int64_t step = 0;
  Slices(const Tensor& t, int64_t d) {
    if (t.dim() == 0) return;
    sizes = t.sizes();
    strides = t.strides();
    step = strides[d];
    sizes.erase(static_cast<size_t>(d));
    strides.erase(static_cast<size_t>(d));
  }
};

// out.select(d, index[i]) += alpha * source.select(d, i) for i in order. The source
// slice broadcasts to out's slice, as PyTorch's add_ of the two slices does.
template <typename T>
void index_add_loop(const Tensor& out, int64_t d, const Tensor& index, const Tensor& source,
                    T alpha) {
  Slices o(out, d), s(source, d);
  int64_t size = out.dim() == 0 ? 1 : out.sizes()[d];
  DimVector src_strides = expanded_strides(s.sizes, s.strides, o.sizes);
  const std::span<const int64_t> all[2] = {o.strides.span(), src_strides.span()};
  const int64_t* ids = index.data_ptr<int64_t>();
  int64_t id_stride = index.dim() == 0 ? 0 : index.strides()[0];
  T* dst = out.data_ptr<T>();
  const T* in = source.data_ptr<T>();
  for (int64_t i = 0; i < index.numel(); ++i) {
    int64_t k = ids[i * id_stride];
    TSL_CHECK(k >= 0 && k < size, "index_add(): index ", k, " is out of range for dimension ", d,
              " with size ", size);
    T* row = dst + k * o.step;
    const T* from = in + i * s.step;
    for_each_run<2>(o.sizes.span(), all, {1, 1}, [&](const int64_t* off, int64_t n) {
      T* target = row + off[0];
      const T* source_run = from + off[1];
      for (int64_t j = 0; j < n; ++j)
        target[j] = add_values(target[j], mul_values(source_run[j], alpha));
    });
  }
}

// index_add on a device: index_add_loop's writes as one accumulating put over the
// positions of out's shape with `dim` resized to the index's length.
void index_add_on_device(const Tensor& out, int64_t d, const Tensor& index, const Tensor& source,
                         Scalar alpha) {
  int64_t size = out.dim() == 0 ? 1 : out.sizes()[d];
  check_device_indices(index, 0, size, [&](int64_t k) {
    TSL_CHECK(k >= 0 && k < size, "index_add(): index ", k, " is out of range for dimension ", d,
              " with size ", size);
  });
  Slices o(out, d), s(source, d);
  const int64_t n = index.numel();
  // Over `shape` (out's, with dim d of length n): out's strides with 0 along d, the
  // offsets index[i] * step along d only, and source's slices broadcast (right-aligned).
  DimVector shape, out_strides, offset_strides, source_strides;
  const size_t lead = o.sizes.size() - s.sizes.size();
  for (int64_t j = 0; j < std::max<int64_t>(out.dim(), 1); ++j) {
    if (j == d) {
      shape.push_back(n);
      out_strides.push_back(0);
      offset_strides.push_back(index.dim() == 0 ? 0 : index.strides()[0]);
      source_strides.push_back(source.dim() == 0 ? 0 : s.step);
      continue;
    }
    const size_t js = static_cast<size_t>(j < d ? j : j - 1);
    shape.push_back(o.sizes[js]);
    out_strides.push_back(o.strides[js]);
    offset_strides.push_back(0);
    source_strides.push_back(js < lead || s.sizes[js - lead] == 1 ? 0 : s.strides[js - lead]);
  }
  Tensor offsets = op1(OpId::mul, {IValue(index), IValue(o.step)});
  // alpha in out's dtype, as the CPU loop's alpha.to<T>() (2.5 is 2 for int64).
  Tensor values = source;
  if (out.dtype() == DType::Bool) {
    if (!alpha.to<bool>()) return;  // or-ing false changes nothing
  } else if (is_floating(out.dtype()) ? alpha.to_double() != 1 : alpha.to<int64_t>() != 1) {
    IValue a = is_floating(out.dtype()) ? IValue(alpha.to_double()) : IValue(alpha.to<int64_t>());
    values = op1(OpId::mul, {IValue(source), a});
  }
  cuda_backend()->put(out.as_strided(shape, out_strides, out.storage_offset()),
                      offsets.as_strided(shape, offset_strides, offsets.storage_offset()),
                      values.as_strided(shape, source_strides, values.storage_offset()), true);
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha) {
  if (!self.device().is_cpu()) {
    check_same_device(index, self.device());
    check_same_device(source, self.device());
  } else {
    check_cpu("index_add", {&self, &index, &source});
  }
  int64_t d = wrap_dim(dim, self.dim());
  check_index_add_args(self, d, index, source);
  Tensor out = clone(self);
  Slices o(out, d), s(source, d);
  TSL_CHECK(expandable_to(s.sizes, o.sizes), "index_add(): the slices of source ",
            shape_str(source.sizes()), " along dim ", d, " (", shape_str(s.sizes),
            ") cannot be broadcast to the slices of self ", shape_str(self.sizes()), " (",
            shape_str(o.sizes), ")");
  if (out.numel() == 0 || index.numel() == 0) return out;
  if (!out.device().is_cpu()) {
    index_add_on_device(out, d, index, source, alpha);
    return out;
  }
  TSL_DISPATCH_ALL(self.dtype(), "index_add",
                   [&] { index_add_loop<scalar_t>(out, d, index, source, alpha.to<scalar_t>()); });
  return out;
}

// ---- index_put -------------------------------------------------------------------------

// out[plan position p] = values[p] (or += when accumulating), p in row-major order, so
// duplicate indices sum in a fixed order and the last write wins otherwise.
template <typename T, bool kAccumulate>
void index_put_loop(const Tensor& out, const IndexPlan& plan, const Tensor& values) {
  DimVector value_strides = expanded_strides(values.sizes(), values.strides(), plan.shape);
  const std::span<const int64_t> all[3] = {plan.self_strides.span(), plan.offset_strides.span(),
                                           value_strides.span()};
  const int64_t* offsets = plan.offsets.data_ptr<int64_t>();
  const T* in = values.data_ptr<T>();
  T* dst = out.data_ptr<T>();
  for_each_run<3>(plan.shape.span(), all, {1, 0, 1}, [&](const int64_t* off, int64_t n) {
    T* target = dst + off[0] + offsets[off[1]];
    const T* from = in + off[2];
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (kAccumulate)
        target[j] = add_values(target[j], from[j]);
      else
        target[j] = from[j];
    }
  });
}

// index_put_loop on a device: one put over the plan's positions.
void index_put_on_device(const Tensor& out, const IndexPlan& plan, const Tensor& values,
                         bool accumulate) {
  if (plan.offsets.numel() == 0) return;
  Tensor v = values.device() == out.device() ? values : copy_to_device(values, out.device());
  DimVector value_strides = expanded_strides(v.sizes(), v.strides(), plan.shape);
  cuda_backend()->put(
      out.as_strided(plan.shape, plan.self_strides, out.storage_offset()),
      plan.offsets.as_strided(plan.shape, plan.offset_strides, plan.offsets.storage_offset()),
      v.as_strided(plan.shape, value_strides, v.storage_offset()), accumulate);
}

// Where index_put's tensors may live: self's device, and the CPU for a 0-dim value.
void check_index_put_devices(const char* op, const Tensor& self, const Tensor& values) {
  if (self.device().is_cpu())
    check_cpu(op, {&self, &values});
  else
    check_same_device(values, self.device());
}

// PyTorch's index_put (x[indices] = values without changing x): the indices are those
// of `index`; values broadcast to the shape of x[indices].
Tensor index_put(const Tensor& self, std::vector<std::optional<Tensor>> index_list,
                 const Tensor& values, bool accumulate) {
  check_index_put_devices("index_put", self, values);
  TSL_CHECK(self.dtype() == values.dtype(),
            "Index put requires the source and destination dtypes match, got ",
            scalar_type_name(self.dtype()), " for the destination and ",
            scalar_type_name(values.dtype()), " for the source.");
  Tensor out = clone(self);
  std::vector<Tensor> indices = expand_index_list(out, index_list);
  IndexPlan plan = plan_index(out, indices);
  TSL_CHECK(expandable_to(values.sizes(), plan.shape), "shape mismatch: value tensor of shape ",
            shape_str(values.sizes()), " cannot be broadcast to indexing result of shape ",
            shape_str(plan.shape));
  if (!out.device().is_cpu()) {
    index_put_on_device(out, plan, values, accumulate);
    return out;
  }
  TSL_DISPATCH_ALL(self.dtype(), "index_put", [&] {
    if (accumulate)
      index_put_loop<scalar_t, true>(out, plan, values);
    else
      index_put_loop<scalar_t, false>(out, plan, values);
  });
  return out;
}

// self[indices] = values in place (x[mask] = v, x[idx] = v): index_put's loop run on
// self itself. Values that share self's memory are copied first (x[i] = x.flip(0)).
Tensor index_put_inplace(const Tensor& self, std::vector<std::optional<Tensor>> index_list,
                         const Tensor& values, bool accumulate) {
  check_index_put_devices("index_put_", self, values);
  check_inplace_allowed(self, "index_put_");
  TSL_CHECK(self.dtype() == values.dtype(),
            "Index put requires the source and destination dtypes match, got ",
            scalar_type_name(self.dtype()), " for the destination and ",
            scalar_type_name(values.dtype()), " for the source.");
  // PyTorch fills through masked_fill_ (no overlap check) for one bool mask and a
  // one-element value; otherwise values and indices must not share self's memory.
  size_t given = 0, masks = 0;
  for (const std::optional<Tensor>& i : index_list) {
    if (!i) continue;
    ++given;
    if (i->dtype() == DType::Bool) ++masks;
  }
  if (accumulate || values.numel() != 1 || given != 1 || masks != 1) {
    assert_no_overlap(self, values);
    for (const std::optional<Tensor>& i : index_list) {
      if (i) assert_no_overlap(self, *i);
    }
  }
  Tensor src = values.storage().get() == self.storage().get() ? clone(values) : values;
  std::vector<Tensor> indices = expand_index_list(self, index_list);
  IndexPlan plan = plan_index(self, indices);
  TSL_CHECK(expandable_to(src.sizes(), plan.shape), "shape mismatch: value tensor of shape ",
            shape_str(src.sizes()), " cannot be broadcast to indexing result of shape ",
            shape_str(plan.shape));
  if (!self.device().is_cpu()) {
    index_put_on_device(self, plan, src, accumulate);
  } else {
    TSL_DISPATCH_ALL(self.dtype(), "index_put_", [&] {
      if (accumulate)
        index_put_loop<scalar_t, true>(self, plan, src);
      else
        index_put_loop<scalar_t, false>(self, plan, src);
    });
  }
  self.storage()->bump_version();
  return self;
}

// ---- slice_scatter and select_scatter --------------------------------------------------

// Copies src into `part` (a view of a fresh copy of self), which must have its shape.
void write_part(const Tensor& part, const Tensor& src) {
  TSL_CHECK(std::ranges::equal(part.sizes().span(), src.sizes().span()),
            "expected src to have a size equal to the slice of self. src size = ",
            shape_str(src.sizes()), ", slice size = ", shape_str(part.sizes()));
  copy_into(part, src);
}

Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim,
                     std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  check_same_device(src, self.device());
  Tensor out = clone(self);
  write_part(slice(out, dim, start, end, step), src);
  return out;
}

Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  check_same_device(src, self.device());
  Tensor out = clone(self);
  write_part(select(out, dim, index), src);
  return out;
}

}  // namespace
}  // namespace tsl::cpu

namespace tsl {

void register_cpu_scatter_kernels() {
  TSL_REGISTER_CPU(sum_to_size, cpu::sum_to_size);
  TSL_REGISTER_CPU(scatter_add, cpu::scatter_add);
  TSL_REGISTER_CPU(index_add, cpu::index_add);
  TSL_REGISTER_CPU(index_put, cpu::index_put);
  TSL_REGISTER_CPU(index_put_, cpu::index_put_inplace);
  TSL_REGISTER_CPU(slice_scatter, cpu::slice_scatter);
  TSL_REGISTER_CPU(select_scatter, cpu::select_scatter);
}

}  // namespace tsl
