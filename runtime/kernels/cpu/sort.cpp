// CPU kernels of sort and topk: the values along one dim in order, with the index each
// came from. NaN counts as the largest value (NumPy's order). Equal values come out in
// the order PyTorch 1.13's CPU kernels leave them, by running the same standard
// algorithms on (value, index) pairs with the same comparisons: std::sort for sort
// (not stable: beyond 16 elements ties are shuffled), std::stable_sort for
// sort(stable=True), and topk's partial sort / nth_element.
#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/kernels/cpu/shape_kernels.h"
#include "runtime/tensor/device_backend.h"

namespace tsl::cpu {
namespace {

template <typename T>
bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(x);
  else
    return false;
}

// PyTorch's comparators: `before(a, b)` when a goes first.
template <typename T>
bool ascending_before(T a, T b) {
  return (!is_nan(a) && is_nan(b)) || (a < b);
}
template <typename T>
bool descending_before(T a, T b) {
  return (is_nan(a) && !is_nan(b)) || (a > b);
}

// The lines along `dim` of a contiguous tensor seen as [outer, n, inner]: line u starts
// at (u / inner) * n * inner + u % inner and steps by inner.
struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t count() const { return outer * inner; }
  int64_t start(int64_t u) const { return (u / inner) * n * inner + u % inner; }
};
Lines lines_of(const Tensor& x, int64_t dim) {
  Lines l;
  if (x.dim() == 0) return l;
  for (int64_t i = 0; i < dim; ++i) l.outer *= x.sizes()[i];
  l.n = x.sizes()[dim];
  for (int64_t i = dim + 1; i < x.dim(); ++i) l.inner *= x.sizes()[i];
  return l;
}

// Sorts (value, index) pairs by value with std::sort or std::stable_sort.
template <typename Elem, typename Before>
void sort_line(std::vector<Elem>& line, bool stable, const Before& before) {
  auto cmp = [&](const Elem& a, const Elem& b) { return before(a.first, b.first); };
  if (stable)
    std::stable_sort(line.begin(), line.end(), cmp);
  else
    std::sort(line.begin(), line.end(), cmp);
}

template <typename T>
void sort_lines(const T* x, T* values, int64_t* indices, const Lines& l, bool stable,
                bool descending) {
  using Elem = std::pair<T, int64_t>;
  parallel_units(l.count(), l.n * 8, [&](int64_t begin, int64_t end) {
    std::vector<Elem> line(static_cast<size_t>(l.n));
    for (int64_t u = begin; u < end; ++u) {
      int64_t at = l.start(u);
      for (int64_t j = 0; j < l.n; ++j) line[j] = {x[at + j * l.inner], j};
      if (descending)
        sort_line(line, stable, descending_before<T>);
      else
        sort_line(line, stable, ascending_before<T>);
      for (int64_t j = 0; j < l.n; ++j) {
        values[at + j * l.inner] = line[j].first;
        indices[at + j * l.inner] = line[j].second;
      }
    }
  });
}

// On a device: the DeviceBackend's stable sort of rows, over a copy with `d` moved last;
// the first k of each row when k >= 0 (topk). Equal values keep their order, which
// PyTorch's CPU kernels (and so TSL's) do not promise beyond 16 elements: indices of
// ties can differ between the devices, as in PyTorch.
std::tuple<Tensor, Tensor> sort_on_device(const Tensor& self, int64_t d, bool descending,
                                          int64_t k = -1) {
  if (self.dim() == 0) {
    Tensor indices = Tensor::empty({}, DType::Int64, self.device());
    fill_tensor(indices, Scalar(int64_t{0}));
    return {clone(self), indices};
  }
  // The permutation that moves d last, and its sizes and strides.
  const int64_t nd = self.dim();
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nd; ++i) {
    if (i != d) perm.push_back(i);
  }
  perm.push_back(d);
  DimVector sizes, strides;
  for (int64_t p : perm) {
    sizes.push_back(self.sizes()[p]);
    strides.push_back(self.strides()[p]);
  }
  Tensor x = self.as_strided(sizes, strides, self.storage_offset()).contiguous();
  const int64_t n = sizes.back(), rows = n == 0 ? 0 : x.numel() / n;
  Tensor values = Tensor::empty(sizes, x.dtype(), x.device());
  Tensor indices = Tensor::empty(sizes, DType::Int64, x.device());
  cuda_backend()->sort_rows(x, rows, n, descending, values, indices);
  // Back to self's dim order (the first k along d), contiguous.
  const int64_t kept = k >= 0 ? k : n;
  DimVector out_sizes = self.sizes(), moved_strides(static_cast<size_t>(nd), 0);
  out_sizes[d] = kept;
  const DimVector perm_strides = contiguous_strides(sizes);
  for (int64_t i = 0; i < nd; ++i) moved_strides[perm[i]] = perm_strides[i];
  auto back = [&](const Tensor& t) {
    Tensor out = Tensor::empty(out_sizes, t.dtype(), t.device());
    copy_into(out, t.as_strided(out_sizes, moved_strides, 0));
    return out;
  };
  return {back(values), back(indices)};
}

std::tuple<Tensor, Tensor> sort_impl(const Tensor& self, bool stable, int64_t dim,
                                     bool descending) {
  int64_t d = wrap_dim(dim, self.dim());
  if (!self.device().is_cpu()) return sort_on_device(self, d, descending);
  Tensor x = self.contiguous();
  Tensor values = Tensor::empty(x.sizes(), x.dtype());
  Tensor indices = Tensor::empty(x.sizes(), DType::Int64);
  if (x.numel() == 0) return {values, indices};
  Lines l = lines_of(x, d);
  TSL_DISPATCH_ALL(x.dtype(), "sort", [&] {
    sort_lines(x.data_ptr<scalar_t>(), values.data_ptr<scalar_t>(), indices.data_ptr<int64_t>(), l,
               stable, descending);
  });
  return {values, indices};
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  return sort_impl(self, false, dim, descending);
}

std::tuple<Tensor, Tensor> sort_stable(const Tensor& self, std::optional<bool> stable, int64_t dim,
                                       bool descending) {
  return sort_impl(self, stable.value_or(false), dim, descending);
}

// PyTorch's topk_impl_loop for one line: `queue` holds (value, index) pairs; its first k
// entries become the result. Partial sort when k is small next to n, else nth_element
// (then a sort of the first k - 1 when sorted).
template <typename Acc, typename Before>
void select_top(std::vector<std::pair<Acc, int64_t>>& queue, int64_t k, bool sorted,
                const Before& before) {
  using Elem = std::pair<Acc, int64_t>;
  auto cmp = [&](const Elem& a, const Elem& b) { return before(a.first, b.first); };
  int64_t n = static_cast<int64_t>(queue.size());
  if (k * 64 <= n) {
    std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), cmp);
    return;
  }
  std::nth_element(queue.begin(), queue.begin() + k - 1, queue.end(), cmp);
  if (sorted) std::sort(queue.begin(), queue.begin() + k - 1, cmp);
}

template <typename T>
void topk_lines(const T* x, T* values, int64_t* indices, const Lines& l, int64_t k, bool largest,
                bool sorted) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  parallel_units(l.count(), l.n * 4, [&](int64_t begin, int64_t end) {
    std::vector<std::pair<Acc, int64_t>> queue(static_cast<size_t>(l.n));
    for (int64_t u = begin; u < end; ++u) {
      int64_t at = l.start(u);
      for (int64_t j = 0; j < l.n; ++j) queue[j] = {static_cast<Acc>(x[at + j * l.inner]), j};
      if (largest)
        select_top(queue, k, sorted, descending_before<Acc>);
      else
        select_top(queue, k, sorted, ascending_before<Acc>);
      int64_t out_at = (u / l.inner) * k * l.inner + u % l.inner;
      for (int64_t j = 0; j < k; ++j) {
        values[out_at + j * l.inner] = static_cast<T>(queue[j].first);
        indices[out_at + j * l.inner] = queue[j].second;
      }
    }
  });
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  int64_t d = wrap_dim(dim, self.dim());
  int64_t size = self.dim() == 0 ? 1 : self.sizes()[d];
  TSL_CHECK(k >= 0 && k <= size, "selected index k out of range");
  TSL_CHECK(self.dtype() != DType::Bool, "\"topk_cpu\" not implemented for 'Bool'");
  if (!self.device().is_cpu()) return sort_on_device(self, d, largest, k);
  Tensor x = self.contiguous();
  DimVector out_sizes = x.sizes();
  if (x.dim() > 0) out_sizes[d] = k;
  Tensor values = Tensor::empty(out_sizes, x.dtype());
  Tensor indices = Tensor::empty(out_sizes, DType::Int64);
  if (x.dim() == 0) {
    // PyTorch returns the element itself for k = 0 too.
    copy_into(values, x);
    *indices.data_ptr<int64_t>() = 0;
    return {values, indices};
  }
  if (values.numel() == 0) return {values, indices};
  Lines l = lines_of(x, d);
  TSL_DISPATCH_ALL(x.dtype(), "topk", [&] {
    if constexpr (!std::is_same_v<scalar_t, bool>) {
      topk_lines(x.data_ptr<scalar_t>(), values.data_ptr<scalar_t>(), indices.data_ptr<int64_t>(),
                 l, k, largest, sorted);
    }
  });
  return {values, indices};
}

}  // namespace

void register_sort_kernels() {
  TSL_REGISTER_CPU(sort, sort);
  TSL_REGISTER_CPU(sort_stable, sort_stable);
  TSL_REGISTER_CPU(topk, topk);
}

}  // namespace tsl::cpu
