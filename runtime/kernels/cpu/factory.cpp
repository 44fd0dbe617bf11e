// CPU factory kernels: tensor(), zeros, ones, full, arange, linspace, eye and the
// *_like forms, with PyTorch's dtype inference and argument checks. The random
// factories are in factory_random.cpp.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/kernels/cpu/factory_common.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {

void register_cpu_random_kernels();  // factory_random.cpp

namespace cpu {

Device factory_device(const std::optional<Device>& device) {
  return device.value_or(default_device());
}

void check_factory_grad(DType dtype, bool requires_grad) {
  TSL_CHECK(!requires_grad || is_floating(dtype),
            "Only Tensors of floating point and complex dtype can require gradients");
}

Tensor new_factory_tensor(std::span<const int64_t> sizes, DType dtype,
                          const std::optional<Device>& device, bool requires_grad,
                          const char* name) {
  check_factory_grad(dtype, requires_grad);
  return Tensor::empty(sizes, dtype);
}

Tensor finish_factory(Tensor t, const std::optional<Device>& device, bool requires_grad) {
  Device target = factory_device(device);
  if (target != t.device()) t = copy_to_device(t, target);
  if (requires_grad) t.impl()->set_requires_grad(true);
  return t;
}

}  // namespace cpu

namespace {

using cpu::finish_factory;
using cpu::new_factory_tensor;

using Sizes = std::vector<int64_t>;
using OptDType = std::optional<DType>;
using OptDevice = std::optional<Device>;

// A contiguous tensor every element of which is `value`.
Tensor filled(std::span<const int64_t> sizes, DType dtype, Scalar value, const OptDevice& device,
              bool requires_grad, const char* name) {
  Device target = cpu::factory_device(device);
  if (!target.is_cpu()) {
    cpu::check_factory_grad(dtype, requires_grad);
    Tensor t = Tensor::empty(sizes, dtype, target);
    fill_tensor(t, value);
    return finish_factory(t, device, requires_grad);
  }
  Tensor t = new_factory_tensor(sizes, dtype, device, requires_grad, name);
  TSL_DISPATCH_ALL(dtype, "full", [&] {
    scalar_t v = value.to<scalar_t>();
    scalar_t* data = t.data_ptr<scalar_t>();
    if (v == scalar_t(0)) {
      std::memset(static_cast<void*>(data), 0, t.nbytes());  // all-zero bits in every dtype
    } else {
      std::fill_n(data, t.numel(), v);
    }
  });
  return finish_factory(t, device, requires_grad);
}

Tensor zeros_kernel(Sizes size, OptDType dtype, OptDevice device, bool requires_grad) {
  return filled(size, dtype.value_or(DType::Float32), Scalar(int64_t{0}), device, requires_grad,
                "zeros");
}

Tensor ones_kernel(Sizes size, OptDType dtype, OptDevice device, bool requires_grad) {
  return filled(size, dtype.value_or(DType::Float32), Scalar(int64_t{1}), device, requires_grad,
                "ones");
}

// TSL's empty() is zero-filled, so programs never see uninitialized memory.
Tensor empty_kernel(Sizes size, OptDType dtype, OptDevice device, bool requires_grad) {
  return filled(size, dtype.value_or(DType::Float32), Scalar(int64_t{0}), device, requires_grad,
                "empty");
}

// full's dtype comes from the fill value as in PyTorch: int -> int64, float -> float32.
Tensor full_kernel(Sizes size, Scalar value, OptDType dtype, OptDevice device, bool requires_grad) {
  return filled(size, dtype.value_or(value.default_dtype()), value, device, requires_grad, "full");
}

// scalar_tensor uses the default dtype (float32) whatever the value, as PyTorch.
Tensor scalar_tensor_kernel(Scalar value, OptDType dtype, OptDevice device, bool requires_grad) {
  return filled({}, dtype.value_or(DType::Float32), value, device, requires_grad, "scalar_tensor");
}

// ---- *_like ---------------------------------------------------------------------------

Tensor like(const Tensor& self, Scalar value, OptDType dtype, OptDevice device, bool requires_grad,
            const char* name) {
  return filled(self.sizes(), dtype.value_or(self.dtype()), value, device.value_or(self.device()),
                requires_grad, name);
}

Tensor zeros_like_kernel(const Tensor& self, OptDType dtype, OptDevice device, bool rg) {
  return like(self, Scalar(int64_t{0}), dtype, device, rg, "zeros_like");
}
Tensor ones_like_kernel(const Tensor& self, OptDType dtype, OptDevice device, bool rg) {
  return like(self, Scalar(int64_t{1}), dtype, device, rg, "ones_like");
}
Tensor empty_like_kernel(const Tensor& self, OptDType dtype, OptDevice device, bool rg) {
  return like(self, Scalar(int64_t{0}), dtype, device, rg, "empty_like");
}
Tensor full_like_kernel(const Tensor& self, Scalar value, OptDType dtype, OptDevice device,
                        bool rg) {
  return like(self, value, dtype, device, rg, "full_like");
}

// ---- tensor(data) ---------------------------------------------------------------------

// The numbers of nested lists, their shape and the dtype PyTorch would infer.
struct NestedData {
  DimVector shape;
  std::vector<const IValue*> leaves;
  bool any_float = false, any_int = false;
};

bool is_sequence(const IValue& v) { return v.is_list() || v.is_tuple(); }

const std::vector<IValue>& elements(const IValue& v) {
  return v.is_list() ? v.to_list().elements : v.to_tuple();
}

// The shape, read along the first elements.
DimVector nested_shape(const IValue& data) {
  DimVector shape;
  const IValue* v = &data;
  while (is_sequence(*v)) {
    const std::vector<IValue>& elems = elements(*v);
    shape.push_back(static_cast<int64_t>(elems.size()));
    if (elems.empty()) break;
    v = &elems[0];
  }
  return shape;
}

void collect(const IValue& v, size_t dim, NestedData& out) {
  if (dim == out.shape.size()) {
    TSL_CHECK(!is_sequence(v), "tensor(): expected a number at dim ", dim, ", got a sequence (",
              "the data is ragged; its first elements give the shape ", shape_str(out.shape), ")");
    TSL_CHECK(v.is_number(), "tensor(): expected a number or nested lists of numbers, got ",
              v.tag_name());
    out.any_float |= v.is_double();
    out.any_int |= v.is_int();
    out.leaves.push_back(&v);
    return;
  }
  TSL_CHECK(is_sequence(v), "tensor(): expected a sequence of length ", out.shape[dim], " at dim ",
            dim, " (got a number); the first elements give the shape ", shape_str(out.shape));
  const std::vector<IValue>& elems = elements(v);
  TSL_CHECK(static_cast<int64_t>(elems.size()) == out.shape[dim], "expected sequence of length ",
            out.shape[dim], " at dim ", dim, " (got ", elems.size(),
            "): the data is ragged; its first elements give the shape ", shape_str(out.shape));
  for (const IValue& e : elems) collect(e, dim + 1, out);
}

// Float to int64 without undefined behaviour for NaN, inf and huge values.
int64_t saturating_int(double d) {
  if (!(d > -9.3e18 && d < 9.3e18)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

template <typename T>
T leaf_value(const IValue& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v.is_double() ? v.to_double() != 0.0 : (v.is_bool() ? v.to_bool() : v.to_int() != 0);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    if (v.is_double()) return saturating_int(v.to_double());
    return v.is_bool() ? (v.to_bool() ? 1 : 0) : v.to_int();
  } else {
    return static_cast<T>(v.to_double());
  }
}

Tensor tensor_from_tensor(const Tensor& data, OptDType dtype, OptDevice device, bool rg) {
  Tensor t = new_factory_tensor(data.sizes(), dtype.value_or(data.dtype()), device, rg, "tensor");
  copy_into(t, data);
  return finish_factory(t, device, rg);
}

Tensor tensor_kernel(IValue data, OptDType dtype, OptDevice device, bool requires_grad) {
  if (data.is_tensor()) return tensor_from_tensor(data.to_tensor(), dtype, device, requires_grad);
  NestedData nested;
  nested.shape = nested_shape(data);
  collect(data, 0, nested);
  DType inferred = nested.any_float        ? DType::Float32
                   : nested.any_int        ? DType::Int64
                   : nested.leaves.empty() ? DType::Float32
                                           : DType::Bool;
  DType t = dtype.value_or(inferred);
  Tensor out = new_factory_tensor(nested.shape, t, device, requires_grad, "tensor");
  TSL_DISPATCH_ALL(t, "tensor", [&] {
    scalar_t* p = out.data_ptr<scalar_t>();
    for (size_t i = 0; i < nested.leaves.size(); ++i)
      p[i] = leaf_value<scalar_t>(*nested.leaves[i]);
  });
  return finish_factory(out, device, requires_grad);
}

// ---- arange, linspace, eye ------------------------------------------------------------

// PyTorch fills arange and linspace 2 x 8 floats (2 x 4 doubles) at a time with
// AVX2: each group of 8 counts from its first value (base + k * step), the remainder
// element by element. Reproducing the grouping reproduces PyTorch's rounding.
template <typename T>
constexpr int64_t kTorchVecSize = 32 / static_cast<int64_t>(sizeof(T));

// The number of leading elements PyTorch's vectorized loop covers.
template <typename T>
int64_t torch_vector_span(int64_t n) {
  return n / (2 * kTorchVecSize<T>)*(2 * kTorchVecSize<T>);
}

// The number of elements of arange(start, end, step), computed as PyTorch does: exact
// integer arithmetic for int64 results, ceil((end - start) / step) in double otherwise.
int64_t arange_length(Scalar start, Scalar end, Scalar step, DType dtype) {
  double xs = start.to_double(), xe = end.to_double(), xst = step.to_double();
  TSL_CHECK(std::isfinite(xs) && std::isfinite(xe), "unsupported range: ", xs, " -> ", xe);
  if (dtype == DType::Int64) {
    __int128 s = start.to_int(), e = end.to_int(), st = step.to_int();
    TSL_CHECK(st != 0, "step must be nonzero");
    TSL_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
              "upper bound and larger bound inconsistent with step sign");
    __int128 sgn = st > 0 ? 1 : -1;
    return static_cast<int64_t>((e - s + st - sgn) / st);
  }
  TSL_CHECK(xst != 0, "step must be nonzero");
  TSL_CHECK((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs),
            "upper bound and larger bound inconsistent with step sign");
  double size = std::ceil((xe - xs) / xst);
  TSL_CHECK(size >= 0 && size <= 9.2e18, "invalid size, possible overflow?");
  return static_cast<int64_t>(size);
}

Tensor arange_start_kernel(Scalar start, Scalar end, Scalar step, OptDType dtype, OptDevice device,
                           bool requires_grad) {
  bool all_int = start.is_integral() && end.is_integral() && step.is_integral();
  DType t = dtype.value_or(all_int ? DType::Int64 : DType::Float32);
  TSL_CHECK(t != DType::Bool, "arange: not implemented for 'Bool'");
  int64_t n = arange_length(start, end, step, t);
  Tensor out =
      new_factory_tensor(std::span<const int64_t>(&n, 1), t, device, requires_grad, "arange");
  if (t == DType::Int64) {
    int64_t s = start.to_int(), st = step.to_int();
    int64_t* p = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      p[i] = static_cast<int64_t>(uint64_t(s) + uint64_t(st) * uint64_t(i));  // no UB on overflow
    }
  } else {
    // PyTorch accumulates in double for both float dtypes: start + step * i, in groups
    // counting from their first value (see kTorchVecSize).
    double s = start.to_double(), st = step.to_double();
    TSL_DISPATCH_FLOATING(t, "arange", [&] {
      scalar_t* p = out.data_ptr<scalar_t>();
      const int64_t vec = kTorchVecSize<scalar_t>, covered = torch_vector_span<scalar_t>(n);
      for (int64_t i = 0; i < covered; i += vec) {
        const scalar_t base = static_cast<scalar_t>(s + st * static_cast<double>(i));
        for (int64_t k = 0; k < vec; ++k) {
          p[i + k] = static_cast<scalar_t>(static_cast<double>(base) + static_cast<double>(k) * st);
        }
      }
      for (int64_t i = covered; i < n; ++i)
        p[i] = static_cast<scalar_t>(s + st * static_cast<double>(i));
    });
  }
  return finish_factory(out, device, requires_grad);
}

Tensor arange_kernel(Scalar end, OptDType dtype, OptDevice device, bool requires_grad) {
  return arange_start_kernel(Scalar(int64_t{0}), end, Scalar(int64_t{1}), dtype, device,
                             requires_grad);
}

// PyTorch's linspace: the first half counts up from start, the second half down from
// end, so both ends are exact.
template <typename T, typename Step>
void linspace_fill(T* p, Step start, Step end, int64_t steps) {
  if (steps == 1) {
    p[0] = static_cast<T>(start);
    return;
  }
  const Step step = (end - start) / static_cast<Step>(steps - 1);
  const int64_t halfway = steps / 2;
  auto at = [&](int64_t i) {
    return i < halfway ? static_cast<T>(start + step * static_cast<Step>(i))
                       : static_cast<T>(end - step * static_cast<Step>(steps - i - 1));
  };
  const int64_t vec = kTorchVecSize<T>, covered = torch_vector_span<T>(steps);
  for (int64_t i = 0; i < covered; i += vec) {
    const T base = at(i);
    for (int64_t k = 0; k < vec; ++k) {
      p[i + k] = static_cast<T>(static_cast<Step>(base) + static_cast<Step>(k) * step);
    }
  }
  for (int64_t i = covered; i < steps; ++i) p[i] = at(i);
}

Tensor linspace_kernel(Scalar start, Scalar end, int64_t steps, OptDType dtype, OptDevice device,
                       bool requires_grad) {
  TSL_CHECK(steps >= 0, "number of steps must be non-negative");
  DType t = dtype.value_or(DType::Float32);
  Tensor out =
      new_factory_tensor(std::span<const int64_t>(&steps, 1), t, device, requires_grad, "linspace");
  if (steps > 0) {
    switch (t) {
      case DType::Float32:
        linspace_fill<float, float>(out.data_ptr<float>(), start.to<float>(), end.to<float>(),
                                    steps);
        break;
      case DType::Float64:
        linspace_fill<double, double>(out.data_ptr<double>(), start.to_double(), end.to_double(),
                                      steps);
        break;
      case DType::Int64:
        linspace_fill<int64_t, double>(out.data_ptr<int64_t>(), double(start.to_int()),
                                       double(end.to_int()), steps);
        break;
      case DType::Bool:
        TSL_ERROR("linspace: not implemented for 'Bool'");
    }
  }
  return finish_factory(out, device, requires_grad);
}

Tensor eye_kernel(int64_t n, std::optional<int64_t> m_opt, OptDType dtype, OptDevice device,
                  bool requires_grad) {
  TSL_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  int64_t m = m_opt.value_or(n);
  TSL_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  int64_t sizes[2] = {n, m};
  DType t = dtype.value_or(DType::Float32);
  // Made on the CPU, then moved (finish_factory), as the other factories.
  Tensor out = filled(sizes, t, Scalar(int64_t{0}), kCPU, false, "eye");
  TSL_DISPATCH_ALL(t, "eye", [&] {
    scalar_t* p = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = scalar_t(1);
  });
  cpu::check_factory_grad(t, requires_grad);
  return finish_factory(out, device, requires_grad);
}

}  // namespace

void register_cpu_factory_kernels() {
  TSL_REGISTER_CPU(tensor, tensor_kernel);
  TSL_REGISTER_CPU(scalar_tensor, scalar_tensor_kernel);
  TSL_REGISTER_CPU(zeros, zeros_kernel);
  TSL_REGISTER_CPU(ones, ones_kernel);
  TSL_REGISTER_CPU(empty, empty_kernel);
  TSL_REGISTER_CPU(full, full_kernel);
  TSL_REGISTER_CPU(arange, arange_kernel);
  TSL_REGISTER_CPU(arange_start, arange_start_kernel);
  TSL_REGISTER_CPU(linspace, linspace_kernel);
  TSL_REGISTER_CPU(eye, eye_kernel);
  TSL_REGISTER_CPU(zeros_like, zeros_like_kernel);
  TSL_REGISTER_CPU(ones_like, ones_like_kernel);
  TSL_REGISTER_CPU(empty_like, empty_like_kernel);
  TSL_REGISTER_CPU(full_like, full_like_kernel);
  register_cpu_random_kernels();
}

}  // namespace tsl
