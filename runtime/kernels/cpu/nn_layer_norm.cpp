// CPU kernel of layer_norm: each row of the last dims (normalized_shape) shifted to mean
// 0 and scaled to variance 1 (the biased variance, plus eps), then times weight plus
// bias. Mean and variance are accumulated in double, in two passes.
#include <cmath>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/reduction_common.h"

namespace tsl::cpu {
namespace {

// PyTorch's checks of the shapes (_check_layer_norm_inputs); returns the row length.
int64_t check_layer_norm(const Tensor& input, const std::vector<int64_t>& normalized_shape,
                         const std::optional<Tensor>& weight, const std::optional<Tensor>& bias) {
  TSL_CHECK(!normalized_shape.empty(),
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            "one element, but got normalized_shape = ",
            shape_str(normalized_shape));
  for (const auto& [t, name] : {std::pair{&weight, "weight"}, std::pair{&bias, "bias"}}) {
    if (!*t) continue;
    TSL_CHECK((*t)->sizes() == DimVector(normalized_shape), "Expected ", name,
              " to be of same shape as normalized_shape, but got ", name, " of shape ",
              shape_str((*t)->sizes()), " and normalized_shape = ", shape_str(normalized_shape));
    TSL_CHECK((*t)->dtype() == input.dtype(), "expected scalar type ",
              scalar_type_name(input.dtype()), " but found ", scalar_type_name((*t)->dtype()));
  }
  int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool matches = input.dim() >= k;
  for (int64_t i = 0; matches && i < k; ++i)
    matches = input.sizes()[input.dim() - k + i] == normalized_shape[i];
  TSL_CHECK(matches, "Given normalized_shape=", shape_str(normalized_shape),
            ", expected input with shape [*, ", shape_str(normalized_shape).substr(1),
            ", but got input of size", shape_str(input.sizes()));
  TSL_CHECK(is_floating(input.dtype()), "\"LayerNormKernelImpl\" not implemented for '",
            scalar_type_name(input.dtype()), "'");
  int64_t n = 1;
  for (int64_t s : normalized_shape) n *= s;
  return n;
}

// One row of n elements; w and b may be null.
template <typename T>
void normalize_row(const T* x, T* out, int64_t n, const T* w, const T* b, double eps) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]);
  double mean = sum / static_cast<double>(n);
  double squares = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = static_cast<double>(x[i]) - mean;
    squares += d * d;
  }
  double rstd = 1.0 / std::sqrt(squares / static_cast<double>(n) + eps);
  for (int64_t i = 0; i < n; ++i) {
    double y = (static_cast<double>(x[i]) - mean) * rstd;
    if (w) y *= static_cast<double>(w[i]);
    if (b) y += static_cast<double>(b[i]);
    out[i] = static_cast<T>(y);
  }
}

// On a device: the same two passes as compositions of the device's kernels, in the
// input's dtype (PyTorch's CUDA kernel accumulates float32 in float32 too).
Tensor layer_norm_on_device(const Tensor& input, int64_t n, const std::optional<Tensor>& weight,
                            const std::optional<Tensor>& bias, double eps) {
  for (const std::optional<Tensor>* t : {&weight, &bias}) {
    if (*t) check_same_device(**t, input.device());
  }
  Tensor x = input.contiguous();
  if (x.numel() == 0) return Tensor::empty(x.sizes(), x.dtype(), x.device());
  const int64_t rows = x.numel() / n;
  Tensor rows_view = x.as_strided(DimVector{rows, n}, DimVector{n, 1}, x.storage_offset());
  const IValue last = IValue::int_list(std::vector<int64_t>{1});
  auto row_mean = [&](const Tensor& t) {
    return op1(OpId::mean, {IValue(t), last, IValue(true), IValue()});
  };
  const IValue one(int64_t{1});  // add's and sub's alpha
  Tensor centered = op1(OpId::sub, {IValue(rows_view), IValue(row_mean(rows_view)), one});
  Tensor var = row_mean(op1(OpId::mul, {IValue(centered), IValue(centered)}));
  Tensor rstd = op1(OpId::rsqrt, {IValue(op1(OpId::add, {IValue(var), IValue(eps), one}))});
  Tensor y = op1(OpId::mul, {IValue(centered), IValue(rstd)});
  auto as_row = [&](const Tensor& t) {
    Tensor c = t.contiguous();
    return c.as_strided(DimVector{1, n}, DimVector{n, 1}, c.storage_offset());
  };
  if (weight) y = op1(OpId::mul, {IValue(y), IValue(as_row(*weight))});
  if (bias) y = op1(OpId::add, {IValue(y), IValue(as_row(*bias)), one});
  return y.as_strided(x.sizes(), contiguous_strides(x.sizes()), y.storage_offset());
}

Tensor layer_norm(const Tensor& input, std::vector<int64_t> normalized_shape,
                  std::optional<Tensor> weight, std::optional<Tensor> bias, double eps,
                  bool cudnn_enable) {
  (void)cudnn_enable;  // a CUDA switch in PyTorch's signature
  int64_t n = check_layer_norm(input, normalized_shape, weight, bias);
  if (!input.device().is_cpu()) return layer_norm_on_device(input, n, weight, bias, eps);
  Tensor x = input.contiguous();
  Tensor out = Tensor::empty(x.sizes(), x.dtype());
  if (x.numel() == 0) return out;
  int64_t rows = x.numel() / n;
  Tensor w = weight ? weight->contiguous() : Tensor();
  Tensor b = bias ? bias->contiguous() : Tensor();
  TSL_DISPATCH_FLOATING(x.dtype(), "layer_norm", [&] {
    using T = scalar_t;
    const T* xp = x.data_ptr<T>();
    T* op = out.data_ptr<T>();
    const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
    const T* bp = b.defined() ? b.data_ptr<T>() : nullptr;
    parallel_units(rows, 3 * n, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) normalize_row(xp + r * n, op + r * n, n, wp, bp, eps);
    });
  });
  return out;
}

}  // namespace

void register_layer_norm_kernels() { TSL_REGISTER_CPU(layer_norm, layer_norm); }

}  // namespace tsl::cpu
