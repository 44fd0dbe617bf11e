// Kernels of the ops vmap inserts (ops.def, section "vmap"): its checks of the mapped
// dims, and the dim and size arithmetic of the batching rules (ir/batching). A batched
// value's physical shape is [B] + its logical shape. They work on every device.
#include <algorithm>

#include "runtime/kernels/kernel.h"

namespace tsl {
namespace {

std::string int_list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int64_t wrap_dim(int64_t d, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);
  TSL_CHECK(d >= -n && d < n, "Dimension out of range (expected to be in range of [", -n, ", ",
            n - 1, "], but got ", d, ")");
  return d < 0 ? d + ndim : d;
}

// functorch's check of an in_dim against the input's rank.
int64_t vmap_size(const Tensor& self, int64_t in_dim, std::string where) {
  int64_t n = static_cast<int64_t>(self.sizes().size());
  TSL_CHECK(in_dim >= -n && in_dim < n, where, ": Got in_dim=", in_dim,
            " for some input, but that input is a Tensor of dimensionality ", n,
            " so expected in_dim to satisfy -", n, " <= in_dim < ", n, ".");
  return self.sizes()[static_cast<size_t>(in_dim < 0 ? in_dim + n : in_dim)];
}

int64_t vmap_batch_size(std::vector<int64_t> sizes) {
  TSL_CHECK(!sizes.empty(), "vmap: Expected at least one Tensor to vmap over");
  for (int64_t s : sizes) {
    TSL_CHECK(s == sizes[0],
              "vmap: Expected all tensors to have the same size in the mapped dimension, got "
              "sizes ",
              int_list_str(sizes), " for the mapped dimension");
  }
  return sizes[0];
}

int64_t batched_dim(int64_t dim) { return dim >= 0 ? dim + 1 : dim; }

std::vector<int64_t> batched_dims(std::vector<int64_t> dims) {
  for (int64_t& d : dims) d = batched_dim(d);
  return dims;
}

std::vector<int64_t> batched_reduce_dims(std::vector<int64_t> dims, int64_t ndim) {
  if (!dims.empty()) return batched_dims(std::move(dims));
  TSL_CHECK(ndim > 1,
            "vmap: a reduction over an empty list of dims (all dims) of a 0-dim tensor is not "
            "supported when the list is not known at compile time; pass dim=None");
  for (int64_t d = 1; d < ndim; ++d) dims.push_back(d);
  return dims;
}

std::vector<int64_t> batched_align_size(std::vector<int64_t> size, int64_t rank) {
  TSL_CHECK(!size.empty(), "vmap: a batched value without its batch dim (a bug in TSL)");
  int64_t missing = rank + 1 - static_cast<int64_t>(size.size());
  if (missing > 0) size.insert(size.begin() + 1, static_cast<size_t>(missing), 1);
  return size;
}

std::vector<int64_t> batched_merge_size(std::vector<int64_t> size, int64_t keep) {
  TSL_CHECK(keep >= 0 && static_cast<int64_t>(size.size()) > keep,
            "vmap: expected a batched value of more than ", keep, " dims, got ", size.size());
  size_t lead = size.size() - static_cast<size_t>(keep);
  int64_t merged = 1;
  for (size_t i = 0; i < lead; ++i) merged *= size[i];
  std::vector<int64_t> out = {merged};
  out.insert(out.end(), size.begin() + static_cast<std::ptrdiff_t>(lead), size.end());
  return out;
}

std::vector<int64_t> batched_squeeze_size(std::vector<int64_t> size) {
  TSL_CHECK(!size.empty(), "vmap: a batched value without its batch dim (a bug in TSL)");
  std::vector<int64_t> out = {size[0]};
  for (size_t i = 1; i < size.size(); ++i) {
    if (size[i] != 1) out.push_back(size[i]);
  }
  return out;
}

// matmul of logical operands la and lb, with batched ones carrying B first: a batched
// vector is viewed as a matrix (a row on the left, a column on the right), and batched
// operands get 1s after B so that B lines up with no batch dim of the other operand.
// The result's physical shape is [B] + matmul's result shape for la and lb.
void batched_matmul_sizes(KernelArgs& args) {
  std::vector<int64_t> a = args.in(0).to_int_vector();
  std::vector<int64_t> b = args.in(2).to_int_vector();
  bool a_batched = args.in(1).to_bool();
  bool b_batched = args.in(3).to_bool();
  TSL_CHECK((!a_batched || !a.empty()) && (!b_batched || !b.empty()),
            "vmap: a batched value without its batch dim (a bug in TSL)");
  TSL_CHECK(a_batched || b_batched, "vmap: batched_matmul_sizes of unbatched operands");
  int64_t batch = a_batched ? a[0] : b[0];
  std::vector<int64_t> la(a.begin() + (a_batched ? 1 : 0), a.end());
  std::vector<int64_t> lb(b.begin() + (b_batched ? 1 : 0), b.end());
  TSL_CHECK(!la.empty() && !lb.empty(),
            "both arguments to matmul need to be at least 1D, but they are ", la.size(), "D and ",
            lb.size(), "D");
  // The logical result, by matmul's rules.
  std::vector<int64_t> ma = la.size() == 1 ? std::vector<int64_t>{1, la[0]} : la;
  std::vector<int64_t> mb = lb.size() == 1 ? std::vector<int64_t>{lb[0], 1} : lb;
  TSL_CHECK(ma.back() == mb[mb.size() - 2], "mat1 and mat2 shapes cannot be multiplied (",
            ma[ma.size() - 2], "x", ma.back(), " and ", mb[mb.size() - 2], "x", mb.back(), ")");
  std::span<const int64_t> batch_a(ma.data(), ma.size() - 2);
  std::span<const int64_t> batch_b(mb.data(), mb.size() - 2);
  DimVector common = broadcast_shapes(batch_a, batch_b, "matmul");
  std::vector<int64_t> result = {batch};
  result.insert(result.end(), common.begin(), common.end());
  if (la.size() > 1) result.push_back(ma[ma.size() - 2]);
  if (lb.size() > 1) result.push_back(mb.back());
  // The operands as matmul sees them.
  size_t rank = 2 + common.size();
  auto operand = [&](const std::vector<int64_t>& physical, bool batched,
                     const std::vector<int64_t>& matrix) {
    if (!batched) return physical;
    std::vector<int64_t> out = {batch};
    out.insert(out.end(), rank - matrix.size(), 1);
    out.insert(out.end(), matrix.begin(), matrix.end());
    return out;
  };
  args.out(0) = IValue::int_list(operand(a, a_batched, ma));
  args.out(1) = IValue::int_list(operand(b, b_batched, mb));
  args.out(2) = IValue::int_list(result);
}

std::vector<int64_t> movedim_permutation(int64_t ndim, int64_t source, int64_t destination) {
  int64_t s = wrap_dim(source, ndim);
  int64_t d = wrap_dim(destination, ndim);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < ndim; ++i) {
    if (i != s) dims.push_back(i);
  }
  if (ndim > 0) dims.insert(dims.begin() + d, s);
  return dims;
}

}  // namespace

void register_batching_kernels() {
  TSL_REGISTER_GENERIC(vmap_size, vmap_size);
  TSL_REGISTER_GENERIC(vmap_batch_size, vmap_batch_size);
  TSL_REGISTER_GENERIC(batched_dim, batched_dim);
  TSL_REGISTER_GENERIC(batched_dims, batched_dims);
  TSL_REGISTER_GENERIC(batched_reduce_dims, batched_reduce_dims);
  TSL_REGISTER_GENERIC(batched_align_size, batched_align_size);
  TSL_REGISTER_GENERIC(batched_merge_size, batched_merge_size);
  TSL_REGISTER_GENERIC(batched_squeeze_size, batched_squeeze_size);
  TSL_REGISTER_GENERIC_RAW(batched_matmul_sizes, batched_matmul_sizes);
  TSL_REGISTER_GENERIC(movedim_permutation, movedim_permutation);
}

}  // namespace tsl
