// The shape, view, indexing and query kernels (rows of ops.def's "Shapes, views,
// indexing" and "Queries" sections), declared for the kernel files that build on each
// other (stack is unsqueeze + cat, flatten is reshape) and for their registration.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "runtime/tensor/ivalue.h"
#include "runtime/tensor/tensor.h"

namespace tsl::cpu {

// ---- Views: a new header over the same storage (shape.cpp) ----------------------------
Tensor t(const Tensor& self);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& self, std::vector<int64_t> dims);
Tensor reshape(const Tensor& self, std::vector<int64_t> shape);
Tensor view(const Tensor& self, std::vector<int64_t> size);
Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim);
Tensor squeeze(const Tensor& self);
Tensor squeeze_dim(const Tensor& self, int64_t dim);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor expand(const Tensor& self, std::vector<int64_t> size);
Tensor broadcast_to(const Tensor& self, std::vector<int64_t> size);
Tensor expand_as(const Tensor& self, const Tensor& other);
Tensor view_as(const Tensor& self, const Tensor& other);
Tensor reshape_as(const Tensor& self, const Tensor& other);
Tensor contiguous(const Tensor& self);
Tensor clone(const Tensor& self);
Tensor detach(const Tensor& self);

// ---- Slicing along one dim (shape_slice.cpp) ------------------------------------------
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step);
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim);
std::vector<Tensor> split_sizes(const Tensor& self, std::vector<int64_t> split_sizes, int64_t dim);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim);

// ---- Copies that rearrange (shape_join.cpp) -------------------------------------------
Tensor cat(std::vector<Tensor> tensors, int64_t dim);
Tensor stack(std::vector<Tensor> tensors, int64_t dim);
Tensor repeat(const Tensor& self, std::vector<int64_t> repeats);
Tensor flip(const Tensor& self, std::vector<int64_t> dims);

// ---- Indexing by tensors (index.cpp) --------------------------------------------------
Tensor index(const Tensor& self, std::vector<std::optional<Tensor>> indices);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);

// Checks index `i` against a dim of `size` and wraps a negative index.
inline int64_t checked_index(int64_t i, int64_t size, int64_t dim) {
  if (i < -size || i >= size) [[unlikely]] {
    TSL_ERROR("index ", i, " is out of bounds for dimension ", dim, " with size ", size);
  }
  return i < 0 ? i + size : i;
}

// One int64 index tensor (undefined where the dim is not indexed) per dim of `self`,
// bool masks turned into their coordinate vectors; checks dtypes, mask shapes and the
// number of indices. Shared by index (x[i]) and index_put (x[i] = v).
std::vector<Tensor> expand_index_list(const Tensor& self,
                                      const std::vector<std::optional<Tensor>>& indices);

// Where the elements of self[indices] live in `self`: element p of the result (a
// tensor of `shape`) is self's element at offset
//   p . self_strides + offsets[p . offset_strides]
// (dot products over `shape`). PyTorch's rule places the broadcast index shape where
// the indexed dims were when they are adjacent, else first. With no index tensor the
// plan covers all of self.
struct IndexPlan {
  DimVector shape;           // the shape of self[indices]
  DimVector self_strides;    // over `shape`; 0 on the index dims
  Tensor offsets;            // int64, the offsets the index tensors select
  DimVector offset_strides;  // over `shape`; 0 on the dims that were not indexed
};
IndexPlan plan_index(const Tensor& self, const std::vector<Tensor>& indices);

// ---- Queries (shape_query.cpp) --------------------------------------------------------
std::vector<int64_t> size(const Tensor& self);
int64_t size_dim(const Tensor& self, int64_t dim);
int64_t dim(const Tensor& self);
int64_t numel(const Tensor& self);
int64_t len_tensor(const Tensor& self);
Scalar item(const Tensor& self);
double item_float(const Tensor& self);
int64_t item_int(const Tensor& self);
bool item_bool(const Tensor& self);
IValue tolist(const Tensor& self);

// A view of `self` with the given geometry, always a fresh header (the eager tape
// attaches autograd state to outputs, so a view must never be the input's own impl).
Tensor make_view(const Tensor& self, std::span<const int64_t> sizes,
                 std::span<const int64_t> strides, int64_t storage_offset);

// Registration, one function per kernel file; register_cpu_shape_kernels calls them.
void register_shape_slice_kernels();
void register_shape_join_kernels();
void register_index_kernels();
void register_shape_query_kernels();

}  // namespace tsl::cpu
