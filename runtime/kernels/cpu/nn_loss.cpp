// CPU kernels: the losses (nll_loss, cross_entropy with class or probability targets
// and label smoothing, mse_loss, binary_cross_entropy), following PyTorch 1.13's
// formulas, reductions and messages.
#include "runtime/kernels/cpu/nn_loss.h"
#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/nn_softmax.h"
#include "runtime/kernels/cpu/reduction_common.h"

namespace tsl::cpu {

// ---- nll_loss and cross_entropy with class targets ----

ClassLayout class_layout(const Tensor& input, const Tensor& target) {
  TSL_CHECK(input.dim() >= 1, "Expected 1 or more dimensions (got ", input.dim(), ")");
  TSL_CHECK(target.dtype() == DType::Int64, "expected scalar type Long but found ",
            scalar_type_name(target.dtype()));
  ClassLayout l;
  if (input.dim() == 1) {
    TSL_CHECK(target.dim() <= 1 && target.numel() == 1,
              "0D or 1D target tensor expected, multi-target not supported");
    l.classes = input.sizes()[0];
    l.none_shape = target.sizes();
    return l;
  }
  l.batch = input.sizes()[0];
  l.classes = input.sizes()[1];
  if (input.dim() == 2) {
    TSL_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
    TSL_CHECK(target.dim() == 1 && target.sizes()[0] == l.batch, "Expected input batch_size (",
              l.batch, ") to match target batch_size (", target.dim() == 1 ? target.sizes()[0] : 1,
              ").");
  } else {
    DimVector expected{l.batch};
    for (int64_t d = 2; d < input.dim(); ++d) expected.push_back(input.sizes()[d]);
    TSL_CHECK(target.sizes() == expected, "Expected target size ", shape_str(expected), ", got ",
              shape_str(target.sizes()));
    for (int64_t d = 2; d < input.dim(); ++d) l.spatial *= input.sizes()[d];
  }
  l.none_shape = target.sizes();
  return l;
}

std::optional<Tensor> checked_weight(const std::optional<Tensor>& weight, const Tensor& input,
                                     int64_t classes) {
  if (!weight || !weight->defined()) return std::nullopt;
  TSL_CHECK(weight->dim() == 1 && weight->numel() == classes,
            "weight tensor should be defined either for all ", classes,
            " classes or no classes but got weight tensor of shape: ", shape_str(weight->sizes()));
  TSL_CHECK(weight->dtype() == input.dtype(), "expected scalar type ",
            scalar_type_name(input.dtype()), " but found ", scalar_type_name(weight->dtype()));
  return weight->contiguous();
}

namespace {

Tensor cast_contiguous(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x.contiguous();
  Tensor out = Tensor::empty(x.sizes(), dtype);
  copy_into(out, x);
  return out;
}

// A contiguous copy of x broadcast to `shape` (x itself when it already is).
Tensor broadcast_contiguous(const Tensor& x, std::span<const int64_t> shape, DType dtype) {
  if (x.sizes() == DimVector(shape)) return cast_contiguous(x, dtype);
  Tensor out = Tensor::empty(shape, dtype);
  copy_into(out, x);
  return out;
}

// Per element (n, s): nll = -w[t] * logp[n, t, s] and, for label smoothing,
// smooth = -sum_c w[c] * logp[n, c, s]; both 0 where t == ignore_index.
template <typename T>
struct ClassLoss {
  const ClassLayout& l;
  const T* logp;
  const int64_t* target;
  const T* weight;  // null: all ones
  int64_t ignore_index;
  bool smoothing;

  // Fills per-element losses (when non-null) and returns the totals.
  void run(T* nll_out, T* smooth_out, double& nll_total, double& smooth_total,
           double& weight_total) const {
    int64_t c_stride = l.spatial;
    for (int64_t n = 0; n < l.batch; ++n) {
      for (int64_t s = 0; s < l.spatial; ++s) {
        int64_t e = n * l.spatial + s;
        int64_t t = target[e];
        T nll = 0, smooth = 0;
        if (t != ignore_index) {
          TSL_CHECK(t >= 0 && t < l.classes, "Target ", t, " is out of bounds.");
          const T* base = logp + n * l.classes * l.spatial + s;
          T w = weight ? weight[t] : T(1);
          nll = -w * base[t * c_stride];
          weight_total += static_cast<double>(w);
          if (smoothing) {
            double acc = 0;
            for (int64_t c = 0; c < l.classes; ++c) {
              acc += static_cast<double>(base[c * c_stride]) * (weight ? weight[c] : 1.0);
            }
            smooth = static_cast<T>(-acc);
          }
        }
        nll_total += static_cast<double>(nll);
        smooth_total += static_cast<double>(smooth);
        if (nll_out) nll_out[e] = nll;
        if (smooth_out) smooth_out[e] = smooth;
      }
    }
  }
};

// nll_loss on log-probabilities; with label_smoothing > 0 as cross_entropy computes it:
// (1 - ls) * nll + ls / C * smooth, each reduced on its own.
Tensor class_loss(const Tensor& logp_in, const Tensor& target_in,
                  const std::optional<Tensor>& weight_in, int64_t ignore_index, Reduction reduction,
                  double label_smoothing) {
  ClassLayout l = class_layout(logp_in, target_in);
  std::optional<Tensor> weight = checked_weight(weight_in, logp_in, l.classes);
  Tensor logp = logp_in.contiguous();
  Tensor target = target_in.contiguous();
  bool smoothing = label_smoothing > 0;
  Tensor out;
  TSL_DISPATCH_FLOATING(logp.dtype(), "nll_loss", [&] {
    using T = scalar_t;
    ClassLoss<T> loss{l,
                      logp.data_ptr<T>(),
                      target.data_ptr<int64_t>(),
                      weight ? weight->data_ptr<T>() : nullptr,
                      ignore_index,
                      smoothing};
    double nll_total = 0, smooth_total = 0, weight_total = 0;
    T ls = static_cast<T>(label_smoothing);
    T smooth_scale = static_cast<T>(label_smoothing / static_cast<double>(l.classes));
    if (reduction == Reduction::None) {
      out = Tensor::empty(l.none_shape, logp.dtype());
      int64_t count = out.numel();
      std::vector<T> smooth(smoothing ? static_cast<size_t>(count) : 0);
      loss.run(out.data_ptr<T>(), smoothing ? smooth.data() : nullptr, nll_total, smooth_total,
               weight_total);
      T* o = out.data_ptr<T>();
      if (smoothing) {
        for (int64_t e = 0; e < count; ++e) o[e] = (T(1) - ls) * o[e] + smooth[e] * smooth_scale;
      }
      return;
    }
    loss.run(nullptr, nullptr, nll_total, smooth_total, weight_total);
    double divisor = reduction == Reduction::Mean ? weight_total : 1.0;
    T nll = static_cast<T>(nll_total / divisor);
    T value = nll;
    if (smoothing) {
      T smooth = static_cast<T>(smooth_total / divisor);
      value = (T(1) - ls) * nll + smooth * smooth_scale;
    }
    out = Tensor::scalar(static_cast<double>(value), logp.dtype());
  });
  return out;
}

Tensor nll_loss(const Tensor& input, const Tensor& target, std::optional<Tensor> weight,
                int64_t ignore_index, std::string reduction) {
  Reduction r = parse_reduction(reduction);
  TSL_CHECK(is_floating(input.dtype()), "\"nll_loss_out_frame\" not implemented for '",
            scalar_type_name(input.dtype()), "'");
  return class_loss(input, target, weight, ignore_index, r, 0.0);
}

// ---- cross_entropy with probability targets ----

// -sum_c w[c] * p[n, c, s] * logp[n, c, s], with p smoothed towards uniform.
template <typename T>
Tensor probability_loss(const Tensor& logp, const Tensor& target, const T* weight,
                        Reduction reduction, double label_smoothing) {
  int64_t class_dim = logp.dim() == 1 ? 0 : 1;
  int64_t classes = logp.sizes()[class_dim];
  int64_t batch = class_dim == 0 ? 1 : logp.sizes()[0];
  int64_t spatial = 1;
  DimVector none_shape;
  for (int64_t d = 0; d < logp.dim(); ++d) {
    if (d == class_dim) continue;
    none_shape.push_back(logp.sizes()[d]);
    if (d > class_dim) spatial *= logp.sizes()[d];
  }
  Tensor out_none = Tensor::empty(none_shape, logp.dtype());
  const T* lp = logp.data_ptr<T>();
  const T* p = target.data_ptr<T>();
  T* o = out_none.data_ptr<T>();
  T keep = static_cast<T>(1.0 - label_smoothing);
  T uniform = static_cast<T>(label_smoothing / static_cast<double>(classes));
  double total = 0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t s = 0; s < spatial; ++s) {
      double acc = 0;
      for (int64_t c = 0; c < classes; ++c) {
        int64_t at = (n * classes + c) * spatial + s;
        T prob = label_smoothing > 0 ? p[at] * keep + uniform : p[at];
        acc += static_cast<double>(lp[at] * prob) * (weight ? weight[c] : 1.0);
      }
      o[n * spatial + s] = static_cast<T>(-acc);
      total -= acc;
    }
  }
  if (reduction == Reduction::None) return out_none;
  double count = static_cast<double>(batch * spatial);
  return Tensor::scalar(reduction == Reduction::Mean ? total / count : total, logp.dtype());
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, std::optional<Tensor> weight,
                     int64_t ignore_index, std::string reduction, double label_smoothing) {
  Reduction r = parse_reduction(reduction);
  TSL_CHECK(input.dim() >= 1, "Expected 1 or more dimensions (got ", input.dim(), ")");
  TSL_CHECK(is_floating(input.dtype()), "\"log_softmax_lastdim_kernel_impl\" not implemented for '",
            scalar_type_name(input.dtype()), "'");
  TSL_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
            "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  int64_t class_dim = input.dim() == 1 ? 0 : 1;
  Tensor logp = softmax_along(input, class_dim, true);
  if (is_floating(target.dtype()) && target.sizes() == input.sizes()) {
    TSL_CHECK(target.dtype() == input.dtype(), "expected scalar type ",
              scalar_type_name(input.dtype()), " but found ", scalar_type_name(target.dtype()));
    std::optional<Tensor> w = checked_weight(weight, input, input.sizes()[class_dim]);
    Tensor t = target.contiguous();
    return TSL_DISPATCH_FLOATING(input.dtype(), "cross_entropy", [&] {
      return probability_loss<scalar_t>(logp, t, w ? w->data_ptr<scalar_t>() : nullptr, r,
                                        label_smoothing);
    });
  }
  return class_loss(logp, target, weight, ignore_index, r, label_smoothing);
}

// ---- Elementwise losses ----

// Sum of a contiguous array in double lanes (vectorized).
template <typename T>
double sum_of(const T* x, int64_t n) {
  return reduce_all(SumOp<T>{}, x, n);
}

template <typename T>
Tensor reduce_elementwise(Tensor none, Reduction reduction) {
  if (reduction == Reduction::None) return none;
  double total = sum_of(none.data_ptr<T>(), none.numel());
  if (reduction == Reduction::Mean) total /= static_cast<double>(none.numel());
  return Tensor::scalar(total, none.dtype());
}

// sum((a - b)^2) in double lanes, without a temporary tensor.
template <typename T>
double squared_error_sum(const T* a, const T* b, int64_t n) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      T d = a[i + j] - b[i + j];
      lanes[j] += static_cast<double>(d * d);
    }
  }
  double total = 0;
  for (int j = 0; j < kLanes; ++j) total += lanes[j];
  for (; i < n; ++i) {
    T d = a[i] - b[i];
    total += static_cast<double>(d * d);
  }
  return total;
}

Tensor mse_loss(const Tensor& input, const Tensor& target, std::string reduction) {
  Reduction r = parse_reduction(reduction);
  DType t = promote_types(input.dtype(), target.dtype());
  TSL_CHECK(is_floating(t), "\"mse_cpu\" not implemented for '", scalar_type_name(t), "'");
  DimVector shape = broadcast_shapes(input.sizes(), target.sizes(), "mse_loss");
  if (!input.device().is_cpu() || !target.device().is_cpu()) {
    // On a device: its kernels, (x - y)^2 then the reduction.
    check_same_device(target, input.device());
    Tensor d = op1(OpId::sub, {IValue(input), IValue(target), IValue(int64_t{1})});
    Tensor sq = op1(OpId::to_dtype, {IValue(op1(OpId::mul, {IValue(d), IValue(d)})), IValue(t)});
    if (r == Reduction::None) return sq;
    return op1(r == Reduction::Mean ? OpId::mean : OpId::sum,
               {IValue(sq), IValue(), IValue(false), IValue()});
  }
  Tensor x = broadcast_contiguous(input, shape, t);
  Tensor y = broadcast_contiguous(target, shape, t);
  return TSL_DISPATCH_FLOATING(t, "mse_loss", [&] {
    using T = scalar_t;
    const T* a = x.data_ptr<T>();
    const T* b = y.data_ptr<T>();
    int64_t n = x.numel();
    if (r != Reduction::None) {
      double total = squared_error_sum(a, b, n);
      if (r == Reduction::Mean) total /= static_cast<double>(n);
      return Tensor::scalar(total, t);
    }
    Tensor out = Tensor::empty(shape, t);
    T* o = out.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) {
      T d = a[i] - b[i];
      o[i] = d * d;
    }
    return reduce_elementwise<T>(out, r);
  });
}

// On a device: the CPU loop's formula as the device's kernels, step by step in T (so
// with the same roundings), then the reduction.
Tensor binary_cross_entropy_on_device(const Tensor& x, const Tensor& y,
                                      const std::optional<Tensor>& weight, Reduction r) {
  auto in_range = op1(OpId::logical_and, {IValue(op1(OpId::ge, {IValue(x), IValue(0.0)})),
                                          IValue(op1(OpId::le, {IValue(x), IValue(1.0)}))});
  TSL_CHECK(op1(OpId::all, {IValue(in_range), IValue(), IValue(false)}).item().to_bool(),
            "all elements of input should be between 0 and 1");
  const IValue one(int64_t{1});  // add's and sub's alpha
  auto clamped_log = [&](const Tensor& t) {
    return op1(OpId::clamp, {IValue(op1(OpId::log, {IValue(t)})), IValue(-100.0), IValue()});
  };
  Tensor log_p = clamped_log(x);
  Tensor log_q =
      clamped_log(op1(OpId::add, {IValue(op1(OpId::neg, {IValue(x)})), IValue(1.0), one}));
  Tensor o =
      op1(OpId::sub, {IValue(op1(OpId::mul, {IValue(op1(OpId::sub, {IValue(y), IValue(1.0), one})),
                                             IValue(log_q)})),
                      IValue(op1(OpId::mul, {IValue(y), IValue(log_p)})), one});
  if (weight && weight->defined()) o = op1(OpId::mul, {IValue(o), IValue(*weight)});
  if (r == Reduction::None) return o;
  return op1(r == Reduction::Mean ? OpId::mean : OpId::sum,
             {IValue(o), IValue(), IValue(false), IValue()});
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, std::optional<Tensor> weight,
                            std::string reduction) {
  Reduction r = parse_reduction(reduction);
  TSL_CHECK(input.sizes() == target.sizes(), "Using a target size (", shape_str(target.sizes()),
            ") that is different to the input size (", shape_str(input.sizes()),
            ") is deprecated. Please ensure they have the same size.");
  TSL_CHECK(is_floating(input.dtype()), "\"binary_cross_entropy\" not implemented for '",
            scalar_type_name(input.dtype()), "'");
  TSL_CHECK(target.dtype() == input.dtype(), "Found dtype ", scalar_type_name(target.dtype()),
            " but expected ", scalar_type_name(input.dtype()));
  if (!input.device().is_cpu()) {
    check_same_device(target, input.device());
    if (weight && weight->defined()) {
      broadcast_shapes(input.sizes(), weight->sizes(), "binary_cross_entropy");
      check_same_device(*weight, input.device());
    }
    return binary_cross_entropy_on_device(input, target, weight, r);
  }
  Tensor x = input.contiguous();
  Tensor y = target.contiguous();
  std::optional<Tensor> w;
  if (weight && weight->defined()) {
    broadcast_shapes(input.sizes(), weight->sizes(), "binary_cross_entropy");
    w = broadcast_contiguous(*weight, input.sizes(), input.dtype());
  }
  Tensor out = Tensor::empty(input.sizes(), input.dtype());
  return TSL_DISPATCH_FLOATING(input.dtype(), "binary_cross_entropy", [&] {
    using T = scalar_t;
    const T* a = x.data_ptr<T>();
    const T* b = y.data_ptr<T>();
    const T* wt = w ? w->data_ptr<T>() : nullptr;
    T* o = out.data_ptr<T>();
    int64_t n = out.numel();
    bool in_range = true;
    for (int64_t i = 0; i < n; ++i) in_range &= a[i] >= T(0) && a[i] <= T(1);
    TSL_CHECK(in_range, "all elements of input should be between 0 and 1");
    // PyTorch's formula, logs clamped at -100 so that p = 0 or 1 stays finite.
    for (int64_t i = 0; i < n; ++i) {
      T log_p = std::max(std::log(a[i]), T(-100));
      T log_q = std::max(std::log(T(1) - a[i]), T(-100));
      o[i] = (b[i] - T(1)) * log_q - b[i] * log_p;
      if (wt) o[i] *= wt[i];
    }
    return reduce_elementwise<T>(out, r);
  });
}

}  // namespace

void register_nn_loss_kernels() {
  TSL_REGISTER_CPU(nll_loss, nll_loss);
  TSL_REGISTER_CPU(cross_entropy, cross_entropy);
  TSL_REGISTER_CPU(mse_loss, mse_loss);
  TSL_REGISTER_CPU(binary_cross_entropy, binary_cross_entropy);
}

}  // namespace tsl::cpu
