// Views of part of one dim: narrow, select (x[i]), slice (x[a:b:c]) and the pieces
// of split / chunk. Each is a new header over the same storage.
#include <algorithm>
#include <limits>

#include "runtime/kernels/cpu/shape_kernels.h"
#include "runtime/kernels/kernel.h"

namespace tsl::cpu {
namespace {

// `self` with dim `d` restricted to `length` elements from `start` (all in range).
Tensor narrow_unchecked(const Tensor& self, int64_t d, int64_t start, int64_t length) {
  DimVector sizes = self.sizes();
  sizes[d] = length;
  int64_t offset = self.storage_offset() + (length > 0 ? start * self.strides()[d] : 0);
  return make_view(self, sizes, self.strides(), offset);
}

}  // namespace

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  TSL_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  TSL_CHECK(length >= 0, "narrow(): length must be non-negative.");
  int64_t d = wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[d];
  TSL_CHECK(start >= -size && start <= size, "start out of range (expected to be in range of [",
            -size, ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  TSL_CHECK(start <= size - length, "start (", start, ") + length (", length,
            ") exceeds dimension size (", size, ").");
  return narrow_unchecked(self, d, start, length);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  TSL_CHECK(self.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[d];
  TSL_CHECK(index >= -size && index < size, "index ", index, " is out of bounds for dimension ", d,
            " with size ", size);
  if (index < 0) index += size;
  DimVector sizes = self.sizes();
  DimVector strides = self.strides();
  int64_t offset = self.storage_offset() + index * strides[d];
  sizes.erase(static_cast<size_t>(d));
  strides.erase(static_cast<size_t>(d));
  return make_view(self, sizes, strides, offset);
}

// Python slice semantics: negative bounds count from the end, then both clamp to
// [0, size]; an empty result when end <= start.
Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start_arg,
             std::optional<int64_t> end_arg, int64_t step) {
  TSL_CHECK(self.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  TSL_CHECK(step > 0, "slice step must be positive");
  int64_t d = wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[d];
  int64_t start = start_arg.value_or(0);
  int64_t end = end_arg.value_or(std::numeric_limits<int64_t>::max());
  if (start < 0) start = std::max<int64_t>(start + size, 0);
  if (end < 0) end = std::max<int64_t>(end + size, 0);
  start = std::min(start, size);
  end = std::clamp(end, start, size);
  int64_t length = end > start ? (end - start - 1) / step + 1 : 0;  // no overflow for huge steps
  DimVector sizes = self.sizes();
  DimVector strides = self.strides();
  sizes[d] = length;
  int64_t offset = self.storage_offset() + (length > 0 ? start * strides[d] : 0);
  // With two or more elements step < size, so the product stays inside the storage.
  if (length > 1) strides[d] *= step;
  return make_view(self, sizes, strides, offset);
}

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  TSL_CHECK(self.dim() > 0, "split expects at least a 1-dimensional tensor");
  TSL_CHECK(split_size >= 0,
            "split expects split_size be non-negative, but got split_size=", split_size);
  int64_t d = wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[d];
  TSL_CHECK(split_size > 0 || size == 0,
            "split_size can only be 0 if dimension size is 0, but got dimension size of ", size);
  int64_t pieces = size == 0 ? 1 : (size - 1) / split_size + 1;
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(pieces));
  for (int64_t i = 0; i < pieces; ++i) {
    int64_t start = i * split_size;
    out.push_back(narrow_unchecked(self, d, start, std::min(split_size, size - start)));
  }
  return out;
}

std::vector<Tensor> split_sizes(const Tensor& self, std::vector<int64_t> sizes, int64_t dim) {
  TSL_CHECK(self.dim() > 0, "split expects at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[d];
  int64_t total = 0;
  for (int64_t s : sizes) {
    TSL_CHECK(s >= 0,
              "split_with_sizes expects split_sizes have only non-negative entries, but "
              "got split_sizes=",
              shape_str(sizes));
    TSL_CHECK(!__builtin_add_overflow(total, s, &total), "split_with_sizes: sizes overflow");
  }
  TSL_CHECK(total == size, "split_with_sizes expects split_sizes to sum exactly to ", size,
            " (input tensor's size at dimension ", d, "), but got split_sizes=", shape_str(sizes));
  std::vector<Tensor> out;
  out.reserve(sizes.size());
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(narrow_unchecked(self, d, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  TSL_CHECK(self.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  TSL_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  int64_t d = wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[d];
  int64_t split_size = size == 0 ? 0 : (size - 1) / chunks + 1;
  // A zero-size dim splits into `chunks` empty pieces, as PyTorch does.
  if (split_size == 0 && size == 0) {
    return split_sizes(self, std::vector<int64_t>(static_cast<size_t>(chunks), 0), d);
  }
  return split(self, split_size, d);
}

void register_shape_slice_kernels() {
  TSL_REGISTER_GENERIC(narrow, narrow);
  TSL_REGISTER_GENERIC(select, select);
  TSL_REGISTER_GENERIC(slice, slice);
  TSL_REGISTER_GENERIC(split, split);
  TSL_REGISTER_GENERIC(split_sizes, split_sizes);
  TSL_REGISTER_GENERIC(chunk, chunk);
}

}  // namespace tsl::cpu
