// CPU kernel of layer_norm: each row of the last dims (normalized_shape) shifted to mean
// 0 and scaled to variance 1 (the biased variance, plus eps), then times weight plus
// bias. Mean and variance are accumulated in double, in two passes. Built per CPU
// capability (runtime/kernels/cpu/dispatch.cpp).
#include <cmath>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/tensor/cpu_capability.h"

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

// Note [layer_norm's statistic]
// A row's mean and 1 / sqrt(var + eps) are accumulated in double, in two passes, so
// float32 rows whose squares overflow (1e20) or underflow keep a finite, nonzero
// rstd. layer_norm's gradient rule reads the same rstd through the op layer_norm_rstd
// (PyTorch's native_layer_norm saves it for its backward) rather than recomputing it
// from float32 ops, whose variance is inf there and whose gradient was then 0.
//
// Each pass keeps kLanes partial sums (element i goes to lane i % kLanes), so that the
// loops vectorize (the compiler may not reorder one running sum); the lanes are added
// pairwise at the end. Rows are short enough that the second and third passes read
// them from the cache.
struct RowStats {
  double mean;
  double rstd;
};
constexpr int64_t kLanes = 8;
template <typename T, typename F>
double lane_sum(const T* x, int64_t n, F term) {
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) acc[j] += term(static_cast<double>(x[i + j]));
  }
  for (int64_t j = 0; i < n; ++i, ++j) acc[j] += term(static_cast<double>(x[i]));
  for (int64_t width = kLanes / 2; width > 0; width /= 2) {
    for (int64_t j = 0; j < width; ++j) acc[j] += acc[j + width];
  }
  return acc[0];
}
template <typename T>
RowStats row_stats(const T* x, int64_t n, double eps) {
  double mean = lane_sum(x, n, [](double v) { return v; }) / static_cast<double>(n);
  double squares = lane_sum(x, n, [mean](double v) { return (v - mean) * (v - mean); });
  return {mean, 1.0 / std::sqrt(squares / static_cast<double>(n) + eps)};
}

// One row of n elements; w and b may be null (a loop for each case, so each vectorizes).
template <typename T>
void normalize_row(const T* x, T* out, int64_t n, const T* w, const T* b, double eps) {
  RowStats s = row_stats(x, n, eps);
  auto scaled = [&](int64_t i) { return (static_cast<double>(x[i]) - s.mean) * s.rstd; };
  if (w && b) {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<T>(scaled(i) * static_cast<double>(w[i]) + static_cast<double>(b[i]));
    }
  } else if (w) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(scaled(i) * static_cast<double>(w[i]));
  } else if (b) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(scaled(i) + static_cast<double>(b[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(scaled(i));
  }
}

// On a device: the same two passes as compositions of the device's kernels, in the
// input's dtype (PyTorch's CUDA kernel accumulates float32 in float32 too). x is
// contiguous and not empty; viewed as [rows, n].
struct DeviceStats {
  Tensor centered;  // [rows, n]
  Tensor rstd;      // [rows, 1]
};
DeviceStats device_stats(const Tensor& x, int64_t n, double eps) {
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
  return {centered, rstd};
}

Tensor layer_norm_on_device(const Tensor& input, int64_t n, const std::optional<Tensor>& weight,
                            const std::optional<Tensor>& bias, double eps) {
  for (const std::optional<Tensor>* t : {&weight, &bias}) {
    if (*t) check_same_device(**t, input.device());
  }
  Tensor x = input.contiguous();
  if (x.numel() == 0) return Tensor::empty(x.sizes(), x.dtype(), x.device());
  DeviceStats stats = device_stats(x, n, eps);
  Tensor y = op1(OpId::mul, {IValue(stats.centered), IValue(stats.rstd)});
  const IValue one(int64_t{1});
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

// The rstd of layer_norm's rows, shaped as input with the normalized dims 1.
Tensor layer_norm_rstd(const Tensor& input, std::vector<int64_t> normalized_shape, double eps) {
  int64_t n = check_layer_norm(input, normalized_shape, std::nullopt, std::nullopt);
  DimVector sizes = input.sizes();
  for (size_t i = 0; i < normalized_shape.size(); ++i) sizes[sizes.size() - 1 - i] = 1;
  Tensor x = input.contiguous();
  if (x.numel() == 0) return Tensor::empty(sizes, x.dtype(), x.device());
  if (!x.device().is_cpu()) {
    Tensor rstd = device_stats(x, n, eps).rstd;
    return rstd.as_strided(sizes, contiguous_strides(sizes), rstd.storage_offset());
  }
  Tensor out = Tensor::empty(sizes, x.dtype());
  int64_t rows = x.numel() / n;
  TSL_DISPATCH_FLOATING(x.dtype(), "layer_norm_rstd", [&] {
    using T = scalar_t;
    const T* xp = x.data_ptr<T>();
    T* op = out.data_ptr<T>();
    parallel_units(rows, 2 * n, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        op[r] = static_cast<T>(row_stats(xp + r * n, n, eps).rstd);
    });
  });
  return out;
}

}  // namespace

// Built per capability (Note [One binary for every x86-64]).
namespace TSL_CAPABILITY_NAMESPACE {

void register_layer_norm_kernels() {
  TSL_REGISTER_CPU(layer_norm, layer_norm);
  TSL_REGISTER_CPU(layer_norm_rstd, layer_norm_rstd);
}

}  // namespace TSL_CAPABILITY_NAMESPACE

}  // namespace tsl::cpu
