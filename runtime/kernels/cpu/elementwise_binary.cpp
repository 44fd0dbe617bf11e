// CPU kernels of the two- and three-input elementwise ops (add, div, pow, eq, where,
// ...): NumPy broadcasting, PyTorch's type promotion (See Note [Type promotion]) and
// PyTorch's integer semantics (Python-style floor division and remainder, wrapping
// overflow, errors for division by zero).
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "runtime/kernels/cpu/elementwise_math.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/products.h"
#include "runtime/kernels/cpu/strided.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/cpu_capability.h"
#include "runtime/tensor/grad_mode.h"
#include "runtime/tensor/memory_overlap.h"

namespace tsl {
namespace {

using cpu::result_type;
using namespace cpu::math;  // wrap_add, div_floor_int, ...

[[noreturn]] void not_implemented(const char* op, DType t) {
  TSL_ERROR(op, ": not implemented for '", scalar_type_name(t), "'");
}

// Calls fn(T{}) with T the C++ type of `t`; kWithBool = false rejects bool.
template <bool kWithBool, typename Fn>
Tensor dispatch_compute(DType t, const char* name, Fn&& fn) {
  switch (t) {
    case DType::Bool:
      if constexpr (kWithBool) return fn(bool{});
      break;
    case DType::Int64:
      return fn(int64_t{});
    case DType::Float32:
      return fn(float{});
    case DType::Float64:
      return fn(double{});
  }
  not_implemented(name, t);
}

// The CPU kernels read every operand from host memory.
void check_cpu(const Tensor& a, const Tensor& b) {
  TSL_CHECK(a.device().is_cpu() && b.device().is_cpu(),
            "Expected all tensors to be on the same device, but found at least two devices, ",
            a.device().str(), " and ", b.device().str(), "!");
}

// A 0-dim operand of another dtype than the computation's, as one converted value:
// mostly a Python number's wrapped tensor (`x * 1.5` on float32 x), which would
// otherwise be copied into a new tensor on every call (a third of a small op's time).
template <typename T>
bool convert_as_value(const Tensor& t) {
  return t.dim() == 0 && t.dtype() != dtype_of<T> && t.device().is_cpu();
}
template <typename T>
T value_as(const Tensor& t) {
  T v{};
  TSL_DISPATCH_ALL(t.dtype(), "convert",
                   [&] { v = cpu::convert_value<T>(*static_cast<const scalar_t*>(t.raw_data())); });
  return v;
}

// out[i] = op(a[i], b[i]) computed in T, stored as Out: in a new tensor, or through
// the strides of `into` (in-place ops; its shape is the broadcast shape, checked).
// Each operand is converted to T: a 0-dim one of another dtype as one value, any
// other as a tensor (itself when it has T already).
template <typename T, typename Out, typename Op>
Tensor binary_typed(const Tensor& a, const Tensor& b, const char* name, Op op,
                    const Tensor* into = nullptr) {
  check_cpu(a, b);
  DimVector shape =
      a.sizes() == b.sizes() ? a.sizes() : broadcast_shapes(a.sizes(), b.sizes(), name);
  T values[2] = {};
  Tensor kept[2];
  auto operand = [&](const Tensor& t, int k) {
    if (convert_as_value<T>(t)) {
      values[k] = value_as<T>(t);
      return cpu::Operand<T>{&values[k], DimVector(shape.size(), 0)};
    }
    kept[k] = cpu::to_dtype_copy(t, dtype_of<T>);
    return cpu::Operand<T>{static_cast<const T*>(kept[k].raw_data()),
                           cpu::broadcast_strides(kept[k], shape)};
  };
  cpu::Operand<T> first = operand(a, 0), second = operand(b, 1);
  Tensor out = into ? *into : Tensor::empty(shape, dtype_of<Out>);
  cpu::binary_into<T, Out>(out, first, second, op);
  return out;
}

// binary_typed for a generic `op`, computed in `compute`; the result has dtype Out, or
// the compute dtype when Out is void.
template <typename Out, bool kWithBool, typename Op>
Tensor binary_op(const Tensor& a, const Tensor& b, DType compute, const char* name, Op op,
                 const Tensor* into = nullptr) {
  return dispatch_compute<kWithBool>(compute, name, [&](auto tag) {
    using T = decltype(tag);
    using O = std::conditional_t<std::is_void_v<Out>, T, Out>;
    return binary_typed<T, O>(a, b, name, op, into);
  });
}

// ---- add, sub, mul, div ---------------------------------------------------------------

// PyTorch's alpha_check.
void check_alpha(DType result, Scalar alpha) {
  TSL_CHECK(!alpha.is_bool() || result == DType::Bool,
            "Boolean alpha only supported for Boolean results.");
  TSL_CHECK(is_floating(result) || alpha.is_integral(),
            "For integral input tensors, argument alpha must not be a floating point number.");
}

bool is_one(Scalar s) { return s.is_floating() ? s.to_double() == 1.0 : s.to_int() == 1; }

// `into`, when given, receives the result (it has dtype t); see the in-place ops.
Tensor add_impl(const Tensor& a, const Tensor& b, Scalar alpha, DType t, const Tensor* into) {
  check_alpha(t, alpha);
  if (is_one(alpha)) {
    return binary_op<void, true>(
        a, b, t, "add", [](auto x, auto y) { return wrap_add(x, y); }, into);
  }
  return dispatch_compute<true>(t, "add", [&](auto tag) {
    using T = decltype(tag);
    T al = alpha.to<T>();
    return binary_typed<T, T>(
        a, b, "add", [al](T x, T y) { return wrap_add(x, wrap_mul(al, y)); }, into);
  });
}

Tensor add_kernel(const Tensor& a, const Tensor& b, Scalar alpha) {
  return add_impl(a, b, alpha, result_type({&a, &b}), nullptr);
}

void check_sub_bool(const Tensor& a, const Tensor& b) {
  TSL_CHECK(a.dtype() != DType::Bool || b.dtype() != DType::Bool,
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.");
  TSL_CHECK(a.dtype() != DType::Bool && b.dtype() != DType::Bool,
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}

Tensor sub_impl(const Tensor& a, const Tensor& b, Scalar alpha, DType t, const Tensor* into) {
  check_alpha(t, alpha);
  if (is_one(alpha)) {
    return binary_op<void, false>(
        a, b, t, "sub", [](auto x, auto y) { return wrap_sub(x, y); }, into);
  }
  return dispatch_compute<false>(t, "sub", [&](auto tag) {
    using T = decltype(tag);
    T al = alpha.to<T>();
    return binary_typed<T, T>(
        a, b, "sub", [al](T x, T y) { return wrap_sub(x, wrap_mul(al, y)); }, into);
  });
}

Tensor sub_kernel(const Tensor& a, const Tensor& b, Scalar alpha) {
  check_sub_bool(a, b);
  return sub_impl(a, b, alpha, result_type({&a, &b}), nullptr);
}

Tensor mul_impl(const Tensor& a, const Tensor& b, DType t, const Tensor* into) {
  return binary_op<void, true>(
      a, b, t, "mul", [](auto x, auto y) { return wrap_mul(x, y); }, into);
}

Tensor mul_kernel(const Tensor& a, const Tensor& b) {
  return mul_impl(a, b, result_type({&a, &b}), nullptr);
}

// True division computes in floating point: int operands give float32.
DType true_divide_type(const Tensor& a, const Tensor& b) {
  DType t = result_type({&a, &b});
  return is_floating(t) ? t : DType::Float32;
}

Tensor true_divide_impl(const Tensor& a, const Tensor& b, DType t, const Tensor* into) {
  return dispatch_compute<false>(t, "div", [&](auto tag) {
    using T = decltype(tag);
    return binary_typed<T, T>(
        a, b, "div", [](T x, T y) { return x / y; }, into);
  });
}

Tensor true_divide(const Tensor& a, const Tensor& b) {
  return true_divide_impl(a, b, true_divide_type(a, b), nullptr);
}

Tensor div_trunc(const Tensor& a, const Tensor& b) {
  DType t = result_type({&a, &b});
  if (t == DType::Int64) {
    ZeroDivision z;
    Tensor out = binary_typed<int64_t, int64_t>(
        a, b, "div", [&z](int64_t x, int64_t y) { return div_trunc_int(x, y, z); });
    z.check();
    return out;
  }
  return dispatch_compute<false>(t, "div", [&](auto tag) {
    using T = decltype(tag);
    return binary_typed<T, T>(a, b, "div", [](T x, T y) { return std::trunc(x / y); });
  });
}

Tensor div_floor(const Tensor& a, const Tensor& b, const char* name) {
  DType t = result_type({&a, &b});
  if (t == DType::Int64) {
    ZeroDivision z;
    Tensor out = binary_typed<int64_t, int64_t>(
        a, b, name, [&z](int64_t x, int64_t y) { return div_floor_int(x, y, z); });
    z.check();
    return out;
  }
  return dispatch_compute<false>(t, name, [&](auto tag) {
    using T = decltype(tag);
    return binary_typed<T, T>(a, b, name, [](T x, T y) { return div_floor_float(x, y); });
  });
}

Tensor div_kernel(const Tensor& a, const Tensor& b, std::optional<std::string> rounding_mode) {
  if (!rounding_mode) return true_divide(a, b);
  if (*rounding_mode == "trunc") return div_trunc(a, b);
  if (*rounding_mode == "floor") return div_floor(a, b, "div");
  TSL_ERROR("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
            *rounding_mode, "'");
}

Tensor floor_divide_kernel(const Tensor& a, const Tensor& b) {
  return div_floor(a, b, "floor_divide");
}

Tensor remainder_kernel(const Tensor& a, const Tensor& b) {
  DType t = result_type({&a, &b});
  if (t == DType::Int64) {
    ZeroDivision z;
    Tensor out = binary_typed<int64_t, int64_t>(
        a, b, "remainder", [&z](int64_t x, int64_t y) { return remainder_int(x, y, z); });
    z.check();
    return out;
  }
  return dispatch_compute<false>(t, "remainder", [&](auto tag) {
    using T = decltype(tag);
    return binary_typed<T, T>(a, b, "remainder", [](T x, T y) { return remainder_float(x, y); });
  });
}

// ---- pow ------------------------------------------------------------------------------

// x ** e for a floating x and one exponent: the exponents PyTorch special-cases.
template <typename T>
Tensor pow_float_scalar(const Tensor& a, const Tensor& b, DType t, double e) {
  const char* n = "pow";
  if (e == 2.0) return binary_typed<T, T>(a, b, n, [](T x, T) { return x * x; });
  if (e == 3.0) return binary_typed<T, T>(a, b, n, [](T x, T) { return x * x * x; });
  if (e == 0.5) return binary_typed<T, T>(a, b, n, [](T x, T) { return std::sqrt(x); });
  if (e == -0.5) {
    return binary_typed<T, T>(a, b, n, [](T x, T) { return T(1) / std::sqrt(x); });
  }
  if (e == -1.0) return binary_typed<T, T>(a, b, n, [](T x, T) { return T(1) / x; });
  if (e == -2.0) return binary_typed<T, T>(a, b, n, [](T x, T) { return T(1) / (x * x); });
  return binary_typed<T, T>(a, b, n, [](T x, T y) { return static_cast<T>(std::pow(x, y)); });
}

Tensor pow_kernel(const Tensor& a, const Tensor& b) {
  DType t = result_type({&a, &b});
  if (t == DType::Bool) not_implemented("pow", t);
  if (t == DType::Int64) {
    // A Python int exponent is checked up front, as PyTorch's pow(Tensor, Scalar) does;
    // tensor exponents follow powi (2 ** -1 == 0).
    if (b.is_wrapped_number()) {
      TSL_CHECK(b.item().to_int() >= 0, "Integers to negative integer powers are not allowed.");
    }
    return binary_typed<int64_t, int64_t>(a, b, "pow",
                                          [](int64_t x, int64_t y) { return pow_int(x, y); });
  }
  if (b.numel() == 1) {
    double e = b.item().to_double();
    if (t == DType::Float32) return pow_float_scalar<float>(a, b, t, e);
    return pow_float_scalar<double>(a, b, t, e);
  }
  return dispatch_compute<false>(t, "pow", [&](auto tag) {
    using T = decltype(tag);
    return binary_typed<T, T>(a, b, "pow", [](T x, T y) { return static_cast<T>(std::pow(x, y)); });
  });
}

Tensor atan2_kernel(const Tensor& a, const Tensor& b) {
  DType t = result_type({&a, &b});
  if (!is_floating(t)) t = DType::Float32;
  return dispatch_compute<false>(t, "atan2", [&](auto tag) {
    using T = decltype(tag);
    return binary_typed<T, T>(a, b, "atan2", [](T x, T y) { return std::atan2(x, y); });
  });
}

// ---- maximum, minimum -----------------------------------------------------------------

// NaN in either operand gives NaN, as torch.maximum does.
Tensor maximum_kernel(const Tensor& a, const Tensor& b) {
  DType t = result_type({&a, &b});
  return binary_op<void, true>(a, b, t, "maximum", [](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      if (x != x || y != y) return std::numeric_limits<T>::quiet_NaN();
    }
    return x < y ? y : x;
  });
}

Tensor minimum_kernel(const Tensor& a, const Tensor& b) {
  DType t = result_type({&a, &b});
  return binary_op<void, true>(a, b, t, "minimum", [](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      if (x != x || y != y) return std::numeric_limits<T>::quiet_NaN();
    }
    return y < x ? y : x;
  });
}

// ---- Comparisons and logical ops: bool results ---------------------------------------

#define TSL_BOOL_BINARY(name, expr)                                           \
  Tensor name##_kernel(const Tensor& a, const Tensor& b) {                    \
    DType t = result_type({&a, &b});                                          \
    return binary_op<bool, true>(a, b, t, #name, [](auto x, auto y) -> bool { \
      using T = decltype(x);                                                  \
      (void)sizeof(T);                                                        \
      return expr;                                                            \
    });                                                                       \
  }

TSL_BOOL_BINARY(eq, x == y)
TSL_BOOL_BINARY(ne, x != y)
TSL_BOOL_BINARY(lt, x < y)
TSL_BOOL_BINARY(le, x <= y)
TSL_BOOL_BINARY(gt, x > y)
TSL_BOOL_BINARY(ge, x >= y)
TSL_BOOL_BINARY(logical_and, (x != T(0)) && (y != T(0)))
TSL_BOOL_BINARY(logical_or, (x != T(0)) || (y != T(0)))
TSL_BOOL_BINARY(logical_xor, (x != T(0)) != (y != T(0)))
#undef TSL_BOOL_BINARY

// Bitwise ops take bool and int64 tensors only.
#define TSL_BITWISE_BINARY(name, op)                                                             \
  Tensor name##_kernel(const Tensor& a, const Tensor& b) {                                       \
    DType t = result_type({&a, &b});                                                             \
    if (is_floating(t)) not_implemented(#name, t);                                               \
    if (t == DType::Bool) {                                                                      \
      return binary_typed<bool, bool>(a, b, #name,                                               \
                                      [](bool x, bool y) { return static_cast<bool>(x op y); }); \
    }                                                                                            \
    return binary_typed<int64_t, int64_t>(a, b, #name,                                           \
                                          [](int64_t x, int64_t y) { return x op y; });          \
  }

TSL_BITWISE_BINARY(bitwise_and, &)
TSL_BITWISE_BINARY(bitwise_or, |)
TSL_BITWISE_BINARY(bitwise_xor, ^)
#undef TSL_BITWISE_BINARY

// ---- where ----------------------------------------------------------------------------

Tensor where_kernel(const Tensor& cond, const Tensor& a, const Tensor& b) {
  TSL_CHECK(cond.dtype() == DType::Bool,
            "where expected condition to be a boolean tensor, but got a tensor with dtype ",
            scalar_type_name(cond.dtype()));
  check_cpu(cond, a);
  check_cpu(cond, b);
  DType t = result_type({&a, &b});
  DimVector shape = broadcast_shapes(cond.sizes(), a.sizes(), "where");
  shape = broadcast_shapes(shape, b.sizes(), "where");
  Tensor x = cpu::to_dtype_copy(a, t);
  Tensor y = cpu::to_dtype_copy(b, t);
  Tensor out = Tensor::empty(shape, t);
  TSL_DISPATCH_ALL(t, "where", [&] { cpu::where_into<scalar_t>(out, cond, x, y); });
  return out;
}

// ---- In-place forms: self = op(self, other) ------------------------------------------

// Checks that `result` (the dtype of op(self, other)) can be stored in self and that
// other broadcasts to self's shape.
void check_inplace(const Tensor& self, const Tensor& other, DType result, const char* name) {
  check_inplace_allowed(self, name);
  TSL_CHECK(can_cast(result, self.dtype()), "result type ", scalar_type_name(result),
            " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
  if (self.sizes() == other.sizes()) return;
  DimVector shape = broadcast_shapes(self.sizes(), other.sizes(), name);
  TSL_CHECK(shape == self.sizes(), name, ": output with shape ", shape_str(self.sizes()),
            " doesn't match the broadcast shape ", shape_str(shape));
}

// Writes op(self, other) into self: straight through self's strides when the result
// has self's dtype, else through a temporary copied back (converting).
template <typename Impl>
Tensor inplace(const Tensor& self, const Tensor& other, DType result, const char* name, Impl impl) {
  TSL_CHECK(self.device().is_cpu(), name, ": expected a CPU tensor, got ", self.device().str());
  check_inplace(self, other, result, name);
  assert_no_internal_overlap(self);
  assert_no_partial_overlap(self, other);
  // Writing straight into self is safe when other is not another view of self's
  // memory (x.add_(x) is fine; a layout with gaps that meets self's, such as
  // x[0].add_(x[:, 0]), is computed through a temporary).
  bool other_aliases = other.storage().get() == self.storage().get() &&
                       !(other.storage_offset() == self.storage_offset() &&
                         other.sizes() == self.sizes() && other.strides() == self.strides());
  if (result == self.dtype() && !other_aliases) {
    impl(&self);
  } else {
    copy_into(self, impl(nullptr));
  }
  self.storage()->bump_version();
  return self;
}

Tensor add_inplace(const Tensor& self, const Tensor& other, Scalar alpha) {
  DType t = result_type({&self, &other});
  return inplace(self, other, t, "add_",
                 [&](const Tensor* into) { return add_impl(self, other, alpha, t, into); });
}

Tensor sub_inplace(const Tensor& self, const Tensor& other, Scalar alpha) {
  check_sub_bool(self, other);
  DType t = result_type({&self, &other});
  return inplace(self, other, t, "sub_",
                 [&](const Tensor* into) { return sub_impl(self, other, alpha, t, into); });
}

Tensor mul_inplace(const Tensor& self, const Tensor& other) {
  DType t = result_type({&self, &other});
  return inplace(self, other, t, "mul_",
                 [&](const Tensor* into) { return mul_impl(self, other, t, into); });
}

Tensor div_inplace(const Tensor& self, const Tensor& other) {
  DType t = true_divide_type(self, other);
  return inplace(self, other, t, "div_",
                 [&](const Tensor* into) { return true_divide_impl(self, other, t, into); });
}

}  // namespace

// Built per capability (Note [One binary for every x86-64]).
namespace cpu::TSL_CAPABILITY_NAMESPACE {
Tensor mul(const Tensor& self, const Tensor& other) { return mul_kernel(self, other); }
}  // namespace cpu::TSL_CAPABILITY_NAMESPACE

namespace TSL_CAPABILITY_NAMESPACE {

void register_cpu_binary_kernels() {
  TSL_REGISTER_CPU(add_, add_inplace);
  TSL_REGISTER_CPU(sub_, sub_inplace);
  TSL_REGISTER_CPU(mul_, mul_inplace);
  TSL_REGISTER_CPU(div_, div_inplace);
  TSL_REGISTER_CPU(add, add_kernel);
  TSL_REGISTER_CPU(sub, sub_kernel);
  TSL_REGISTER_CPU(mul, mul_kernel);
  TSL_REGISTER_CPU(div, div_kernel);
  TSL_REGISTER_CPU(floor_divide, floor_divide_kernel);
  TSL_REGISTER_CPU(remainder, remainder_kernel);
  TSL_REGISTER_CPU(pow, pow_kernel);
  TSL_REGISTER_CPU(atan2, atan2_kernel);
  TSL_REGISTER_CPU(maximum, maximum_kernel);
  TSL_REGISTER_CPU(minimum, minimum_kernel);
  TSL_REGISTER_CPU(max_other, maximum_kernel);
  TSL_REGISTER_CPU(min_other, minimum_kernel);
  TSL_REGISTER_CPU(eq, eq_kernel);
  TSL_REGISTER_CPU(ne, ne_kernel);
  TSL_REGISTER_CPU(lt, lt_kernel);
  TSL_REGISTER_CPU(le, le_kernel);
  TSL_REGISTER_CPU(gt, gt_kernel);
  TSL_REGISTER_CPU(ge, ge_kernel);
  TSL_REGISTER_CPU(logical_and, logical_and_kernel);
  TSL_REGISTER_CPU(logical_or, logical_or_kernel);
  TSL_REGISTER_CPU(logical_xor, logical_xor_kernel);
  TSL_REGISTER_CPU(bitwise_and, bitwise_and_kernel);
  TSL_REGISTER_CPU(bitwise_or, bitwise_or_kernel);
  TSL_REGISTER_CPU(bitwise_xor, bitwise_xor_kernel);
  TSL_REGISTER_CPU(where, where_kernel);
}

}  // namespace TSL_CAPABILITY_NAMESPACE
}  // namespace tsl
