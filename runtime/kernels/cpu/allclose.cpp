// CPU kernel of allclose: whether two tensors (broadcast together, one dtype) are
// elementwise equal within atol + rtol * |other|, computed as torch.isclose does, in
// the tensors' own floating type (float32 for int64 and bool tensors).
#include <cmath>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/strided.h"
#include "runtime/kernels/kernel.h"

namespace tsl::cpu {
namespace {

// |a - b| as PyTorch computes it: in T for floats, wrapping int64 for integers, then
// compared in float32 (an int64 tensor against a float32 tolerance promotes).
template <typename T, typename C>
C abs_difference(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return static_cast<C>(a != b);
  } else if constexpr (std::is_integral_v<T>) {
    int64_t d = static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
    return static_cast<C>(d < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(d)) : d);
  } else {
    return std::abs(a - b);
  }
}

template <typename T>
bool close_typed(const Tensor& a, const Tensor& b, std::span<const int64_t> shape, double rtol,
                 double atol, bool equal_nan) {
  using C = std::conditional_t<std::is_floating_point_v<T>, T, float>;
  const DimVector sa = broadcast_strides(a, shape), sb = broadcast_strides(b, shape);
  const std::span<const int64_t> strides[2] = {sa.span(), sb.span()};
  const T* x = a.data_ptr<T>();
  const T* y = b.data_ptr<T>();
  C r = static_cast<C>(rtol), t = static_cast<C>(atol);
  bool exact = rtol == 0 && atol == 0;  // isclose's short-circuit: equality only
  bool all = true;
  for_each_offset<2>(shape, strides, [&](const int64_t* o) {
    T u = x[o[0]], v = y[o[1]];
    bool close = u == v;
    if constexpr (std::is_floating_point_v<T>) close |= equal_nan && std::isnan(u) && std::isnan(v);
    if (!close && !exact) {
      C actual = abs_difference<T, C>(u, v);
      C allowed = t + std::abs(r * static_cast<C>(v));
      close = std::isfinite(actual) && actual <= allowed;
    }
    all &= close;
  });
  return all;
}

// On a device, for floats: close_typed's test as the device's elementwise kernels in
// T, then all(). Ints and bools (their difference is taken wrapping, then compared in
// float32) are compared on the CPU, on copies.
bool allclose_on_device(const Tensor& self, const Tensor& other, double rtol, double atol,
                        bool equal_nan) {
  if (!is_floating(self.dtype()))
    return call_op(OpId::allclose,
                   {IValue(copy_to_device(self, kCPU)), IValue(copy_to_device(other, kCPU)),
                    IValue(rtol), IValue(atol), IValue(equal_nan)})
        .at(0)
        .to_bool();
  auto both = [](OpId op, const Tensor& a, const Tensor& b) {
    return op1(op, {IValue(a), IValue(b)});
  };
  Tensor close = both(OpId::eq, self, other);
  if (equal_nan) {
    Tensor nans = both(OpId::logical_and, op1(OpId::isnan, {IValue(self)}),
                       op1(OpId::isnan, {IValue(other)}));
    close = both(OpId::logical_or, close, nans);
  }
  if (rtol != 0 || atol != 0) {
    Tensor diff =
        op1(OpId::abs, {IValue(op1(OpId::sub, {IValue(self), IValue(other), IValue(int64_t{1})}))});
    Tensor scaled = op1(OpId::abs, {IValue(op1(OpId::mul, {IValue(other), IValue(rtol)}))});
    Tensor allowed = op1(OpId::add, {IValue(scaled), IValue(atol), IValue(int64_t{1})});
    Tensor within =
        both(OpId::logical_and, op1(OpId::isfinite, {IValue(diff)}), both(OpId::le, diff, allowed));
    close = both(OpId::logical_or, close, within);
  }
  return op1(OpId::all, {IValue(close), IValue(), IValue(false)}).item().to_bool();
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  if (!self.device().is_cpu() || !other.device().is_cpu()) check_same_device(other, self.device());
  TSL_CHECK(self.dtype() == other.dtype(), scalar_type_name(self.dtype()), " did not match ",
            scalar_type_name(other.dtype()));
  TSL_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got ", rtol);
  TSL_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got ", atol);
  DimVector shape = broadcast_shapes(self.sizes(), other.sizes(), "allclose");
  if (!self.device().is_cpu()) return allclose_on_device(self, other, rtol, atol, equal_nan);
  bool result = true;
  TSL_DISPATCH_ALL(self.dtype(), "allclose", [&] {
    result = close_typed<scalar_t>(self, other, shape, rtol, atol, equal_nan);
  });
  return result;
}

}  // namespace

void register_allclose_kernels() { TSL_REGISTER_CPU(allclose, allclose); }

}  // namespace tsl::cpu
