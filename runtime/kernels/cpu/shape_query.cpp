// Queries about a tensor: its shape, rank and element count, and its elements as
// Python numbers (item, tolist).
#include "runtime/kernels/cpu/shape_kernels.h"
#include "runtime/kernels/kernel.h"

namespace tsl::cpu {
namespace {

// `t` on the CPU (a copy when it lives elsewhere).
Tensor to_cpu(const Tensor& t) {
  if (t.device().is_cpu()) return t;
  Tensor out = Tensor::empty(t.sizes(), t.dtype(), kCPU);
  copy_into(out, t);
  return out;
}

template <typename T>
IValue number(T v) {
  if constexpr (std::is_same_v<T, bool>)
    return IValue(v);
  else if constexpr (std::is_integral_v<T>)
    return IValue(static_cast<int64_t>(v));
  else
    return IValue(static_cast<double>(v));
}

// The elements of dims d.. of `t` starting at element offset `offset`, as nested lists.
template <typename T>
IValue nested_list(const Tensor& t, const T* data, int64_t d, int64_t offset) {
  if (d == t.dim()) return number(data[offset]);
  int64_t n = t.sizes()[d];
  std::vector<IValue> elements;
  elements.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    elements.push_back(nested_list(t, data, d + 1, offset + i * t.strides()[d]));
  }
  return IValue::list(std::move(elements));
}

}  // namespace

std::vector<int64_t> size(const Tensor& self) { return self.sizes().vec(); }

// The op `size` (x.shape, x.size()): a list that prints as torch.Size.
IValue shape_value(const Tensor& self) {
  IValue out = IValue::int_list(self.sizes().span());
  out.to_list().torch_size = true;
  return out;
}

int64_t size_dim(const Tensor& self, int64_t dim) {
  TSL_CHECK(self.dim() > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  return self.size(dim);
}

int64_t dim(const Tensor& self) { return self.dim(); }

int64_t numel(const Tensor& self) { return self.numel(); }

bool is_floating_point(const Tensor& self) { return is_floating(self.dtype()); }

int64_t len_tensor(const Tensor& self) {
  TSL_CHECK(self.dim() > 0, "len() of a 0-d tensor");
  return self.sizes()[0];
}

Scalar item(const Tensor& self) { return self.item(); }

double item_float(const Tensor& self) { return self.item().to_double(); }

int64_t item_int(const Tensor& self) { return self.item().to_int(); }

bool item_bool(const Tensor& self) { return self.item().to_bool(); }

IValue tolist(const Tensor& self) {
  Tensor cpu = to_cpu(self);
  return TSL_DISPATCH_ALL(cpu.dtype(), "tolist",
                          [&] { return nested_list(cpu, cpu.data_ptr<scalar_t>(), 0, 0); });
}

void register_shape_query_kernels() {
  TSL_REGISTER_GENERIC(size, shape_value);
  TSL_REGISTER_GENERIC(size_dim, size_dim);
  TSL_REGISTER_GENERIC(dim, dim);
  TSL_REGISTER_GENERIC(numel, numel);
  TSL_REGISTER_GENERIC(is_floating_point, is_floating_point);
  TSL_REGISTER_GENERIC(len_tensor, len_tensor);
  TSL_REGISTER_GENERIC(item, item);
  TSL_REGISTER_GENERIC(item_float, item_float);
  TSL_REGISTER_GENERIC(item_int, item_int);
  TSL_REGISTER_GENERIC(item_bool, item_bool);
  TSL_REGISTER_GENERIC(tolist, tolist);
}

}  // namespace tsl::cpu
