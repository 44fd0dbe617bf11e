// CPU kernels of conv2d and of its two gradients (input and weight), by im2col and
// GEMM. See Note [conv2d on CPU].
#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/linalg_gemm.h"
#include "runtime/kernels/cpu/window2d.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/parallel.h"

namespace tsl::cpu {
namespace {

// Note [conv2d on CPU]
// For one batch item and one group, the group's Cg input planes unfold ("im2col")
// into a matrix cols [Cg*kH*kW, Ho*Wo] whose column l holds the input under the
// window of output position l, zeros where the window covers padding. Then
//   forward      out[Og, L]  = W[Og, Cg*kH*kW] @ cols  (+ bias)
//   input grad   cols        = W^T @ grad[Og, L], summed back into the planes ("col2im")
//   weight grad  gW         += grad[Og, L] @ cols^T, over the whole batch
// A 1x1 kernel with stride 1 and no padding needs no unfolding: the planes are cols.
// Batch items run in parallel, each thread with its own cols buffer; a single item
// lets the GEMM use the threads instead. Weight gradients are summed per chunk of
// items, then the chunks in order, so results do not depend on thread timing.

struct ConvGeometry {
  Planes in;
  int64_t out_channels = 0;
  int64_t groups = 1;
  Pair kernel{}, stride{}, padding{}, dilation{};
  int64_t out_h = 0, out_w = 0;

  int64_t in_group() const { return in.channels / groups; }
  int64_t out_group() const { return out_channels / groups; }
  int64_t col_rows() const { return in_group() * kernel[0] * kernel[1]; }
  int64_t col_cols() const { return out_h * out_w; }
  int64_t plane() const { return in.height * in.width; }
  bool direct() const {
    return kernel == Pair{1, 1} && stride == Pair{1, 1} && padding == Pair{0, 0};
  }
  // Multiply-adds of one batch item (for the parallel split).
  int64_t item_work() const { return std::max<int64_t>(1, out_channels * col_rows() * col_cols()); }
};

// Checks conv2d's parameters against an input of shape `input` and a weight of shape
// `weight`, with PyTorch's messages, and computes the output size.
ConvGeometry conv_geometry(std::span<const int64_t> input, std::span<const int64_t> weight,
                           const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                           const std::vector<int64_t>& dilation, int64_t groups) {
  ConvGeometry g;
  g.in = planes_of("conv2d", input);
  TSL_CHECK(weight.size() == 4,
            "conv2d: expected a 4-D weight [out_channels, in_channels/groups, "
            "kH, kW], but got weight of size ",
            shape_str(weight));
  g.stride = pair_param("conv2d", "stride", stride);
  g.padding = pair_param("conv2d", "padding", padding);
  g.dilation = pair_param("conv2d", "dilation", dilation);
  TSL_CHECK(g.stride[0] > 0 && g.stride[1] > 0, "non-positive stride is not supported");
  TSL_CHECK(g.padding[0] >= 0 && g.padding[1] >= 0, "negative padding is not supported");
  TSL_CHECK(g.dilation[0] > 0 && g.dilation[1] > 0, "dilation should be greater than zero");
  TSL_CHECK(groups > 0, "non-positive groups is not supported");
  g.groups = groups;
  g.out_channels = weight[0];
  g.kernel = {weight[2], weight[3]};
  TSL_CHECK(g.out_channels % groups == 0, "Given groups=", groups,
            ", expected weight to be divisible by ", groups,
            " at dimension 0, but got weight of size ", shape_str(weight), " instead");
  TSL_CHECK(g.in.channels == weight[1] * groups, "Given groups=", groups, ", weight of size ",
            shape_str(weight), ", expected input", shape_str(input), " to have ",
            weight[1] * groups, " channels, but got ", g.in.channels, " channels instead");
  int64_t padded_h = g.in.height + 2 * g.padding[0], padded_w = g.in.width + 2 * g.padding[1];
  int64_t span_h = g.dilation[0] * (g.kernel[0] - 1) + 1;
  int64_t span_w = g.dilation[1] * (g.kernel[1] - 1) + 1;
  TSL_CHECK(padded_h >= span_h && padded_w >= span_w, "Calculated padded input size per channel: (",
            padded_h, " x ", padded_w, "). Kernel size: (", span_h, " x ", span_w,
            "). Kernel size can't be greater than actual input size");
  g.out_h = conv_output_size(g.in.height, g.kernel[0], g.stride[0], g.padding[0], g.dilation[0]);
  g.out_w = conv_output_size(g.in.width, g.kernel[1], g.stride[1], g.padding[1], g.dilation[1]);
  return g;
}

DimVector output_shape(const ConvGeometry& g) {
  return planes_shape(g.in, g.out_channels, g.out_h, g.out_w);
}
DimVector input_shape(const ConvGeometry& g) {
  return planes_shape(g.in, g.in.channels, g.in.height, g.in.width);
}

// The output positions ow in [lo, hi) whose tap at input column iw0 + ow * stride lies
// inside [0, size).
std::pair<int64_t, int64_t> valid_range(int64_t iw0, int64_t stride, int64_t size, int64_t n) {
  int64_t lo = iw0 >= 0 ? 0 : (-iw0 + stride - 1) / stride;
  int64_t hi = iw0 >= size ? 0 : std::min(n, (size - 1 - iw0) / stride + 1);
  lo = std::min(lo, n);
  return {lo, std::max(lo, hi)};
}

// Calls fn(row, ih, iw0, lo, hi) for every (input channel, kernel tap, output row) of
// one group: cols row `row` + output row oh reads input row ih (skipped when outside)
// at columns iw0 + ow * stride for ow in [lo, hi).
template <typename Fn>
void for_each_tap(const ConvGeometry& g, Fn&& fn) {
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  for (int64_t c = 0; c < g.in_group(); ++c) {
    for (int64_t ki = 0; ki < kh; ++ki) {
      for (int64_t kj = 0; kj < kw; ++kj) {
        int64_t row = (c * kh + ki) * kw + kj;
        int64_t iw0 = kj * g.dilation[1] - g.padding[1];
        auto [lo, hi] = valid_range(iw0, g.stride[1], g.in.width, g.out_w);
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          int64_t ih = oh * g.stride[0] - g.padding[0] + ki * g.dilation[0];
          fn(c, row, oh, ih, iw0, lo, hi);
        }
      }
    }
  }
}

// cols [col_rows, L] from the group's planes x.
template <typename T>
void im2col(const T* x, const ConvGeometry& g, T* cols) {
  const int64_t L = g.col_cols(), sw = g.stride[1];
  for_each_tap(
      g, [&](int64_t c, int64_t row, int64_t oh, int64_t ih, int64_t iw0, int64_t lo, int64_t hi) {
        T* dst = cols + row * L + oh * g.out_w;
        if (ih < 0 || ih >= g.in.height) {
          std::fill(dst, dst + g.out_w, T(0));
          return;
        }
        const T* src = x + c * g.plane() + ih * g.in.width;
        std::fill(dst, dst + lo, T(0));
        if (sw == 1) {
          std::copy(src + iw0 + lo, src + iw0 + hi, dst + lo);
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[iw0 + ow * sw];
        }
        std::fill(dst + hi, dst + g.out_w, T(0));
      });
}

// The adjoint of im2col: adds each entry of cols into the planes x it was read from.
template <typename T>
void col2im(const T* cols, const ConvGeometry& g, T* x) {
  const int64_t L = g.col_cols(), sw = g.stride[1];
  for_each_tap(
      g, [&](int64_t c, int64_t row, int64_t oh, int64_t ih, int64_t iw0, int64_t lo, int64_t hi) {
        if (ih < 0 || ih >= g.in.height) return;
        const T* src = cols + row * L + oh * g.out_w;
        T* dst = x + c * g.plane() + ih * g.in.width;
        for (int64_t ow = lo; ow < hi; ++ow) dst[iw0 + ow * sw] += src[ow];
      });
}

// Runs fn(begin, end, gemm_threads) over the batch: chunks of items on the threads
// when there is enough work, else one call that lets GEMM use them.
template <typename Fn>
void over_batch(const ConvGeometry& g, Fn&& fn) {
  int64_t n = g.in.batch;
  int64_t grain = std::max<int64_t>(1, kGemmParallelWork / g.item_work());
  if (n >= 2 && n >= 2 * grain && num_threads() > 1) {
    parallel_for(n, grain, [&](int64_t b, int64_t e) { fn(b, e, false); });
  } else {
    fn(0, n, true);
  }
}

template <typename T>
void conv_forward(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                  const ConvGeometry& g, const Tensor& out) {
  const T* xd = x.data_ptr<T>();
  const T* wd = w.data_ptr<T>();
  const T* bd = bias ? bias->data_ptr<T>() : nullptr;
  T* od = out.data_ptr<T>();
  const int64_t K = g.col_rows(), L = g.col_cols(), Og = g.out_group();
  over_batch(g, [&](int64_t begin, int64_t end, bool threads) {
    std::vector<T> cols(g.direct() ? 0 : static_cast<size_t>(K * L));
    for (int64_t n = begin; n < end; ++n) {
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const T* xin = xd + (n * g.in.channels + grp * g.in_group()) * g.plane();
        T* o = od + (n * g.out_channels + grp * Og) * L;
        for (int64_t r = 0; r < Og; ++r) {
          std::fill(o + r * L, o + (r + 1) * L, bd ? bd[grp * Og + r] : T(0));
        }
        if (K == 0 || L == 0) continue;
        const T* c = xin;
        if (!g.direct()) {
          im2col(xin, g, cols.data());
          c = cols.data();
        }
        gemm(MatView<T>{wd + grp * Og * K, Og, K, K, 1}, MatView<T>{c, K, L, L, 1}, o, L,
             /*accumulate=*/true, threads);
      }
    }
  });
}

template <typename T>
void conv_input_grad(const Tensor& grad, const Tensor& w, const ConvGeometry& g, const Tensor& gx) {
  const T* gd = grad.data_ptr<T>();
  const T* wd = w.data_ptr<T>();
  T* xd = gx.data_ptr<T>();
  const int64_t K = g.col_rows(), L = g.col_cols(), Og = g.out_group();
  std::fill(xd, xd + gx.numel(), T(0));
  if (K == 0 || L == 0 || Og == 0) return;
  over_batch(g, [&](int64_t begin, int64_t end, bool threads) {
    std::vector<T> cols(g.direct() ? 0 : static_cast<size_t>(K * L));
    for (int64_t n = begin; n < end; ++n) {
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        T* xin = xd + (n * g.in.channels + grp * g.in_group()) * g.plane();
        const T* gr = gd + (n * g.out_channels + grp * Og) * L;
        // W^T: the group's weight [Og, K] read column-major.
        MatView<T> wt{wd + grp * Og * K, K, Og, 1, K};
        if (g.direct()) {
          gemm(wt, MatView<T>{gr, Og, L, L, 1}, xin, L, /*accumulate=*/false, threads);
        } else {
          gemm(wt, MatView<T>{gr, Og, L, L, 1}, cols.data(), L, /*accumulate=*/false, threads);
          col2im(cols.data(), g, xin);
        }
      }
    }
  });
}

template <typename T>
void conv_weight_grad(const Tensor& grad, const Tensor& x, const ConvGeometry& g,
                      const Tensor& gw) {
  const T* gd = grad.data_ptr<T>();
  const T* xd = x.data_ptr<T>();
  const int64_t K = g.col_rows(), L = g.col_cols(), Og = g.out_group();
  const size_t total = static_cast<size_t>(g.out_channels * K);
  std::mutex mutex;
  std::vector<std::pair<int64_t, std::vector<T>>> partials;
  over_batch(g, [&](int64_t begin, int64_t end, bool threads) {
    std::vector<T> sum(total, T(0));
    std::vector<T> cols(g.direct() ? 0 : static_cast<size_t>(K * L));
    for (int64_t n = begin; n < end && K > 0 && L > 0; ++n) {
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const T* xin = xd + (n * g.in.channels + grp * g.in_group()) * g.plane();
        const T* gr = gd + (n * g.out_channels + grp * Og) * L;
        const T* c = xin;
        if (!g.direct()) {
          im2col(xin, g, cols.data());
          c = cols.data();
        }
        // cols^T: [L, K] read column-major.
        gemm(MatView<T>{gr, Og, L, L, 1}, MatView<T>{c, L, K, 1, L}, sum.data() + grp * Og * K, K,
             /*accumulate=*/true, threads);
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    partials.emplace_back(begin, std::move(sum));
  });
  std::sort(partials.begin(), partials.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  T* out = gw.data_ptr<T>();
  std::fill(out, out + total, T(0));
  for (const auto& [begin, sum] : partials) {
    for (size_t i = 0; i < total; ++i) out[i] += sum[i];
  }
}

// ---- On a device (Note [Windows on a device] in window2d.h) ----

// The padded input planes [B * C, th, tw] and the view of their windows, taps first:
// [B, G, Cg, kH, kW, Ho, Wo], whose contiguous copy is cols [B, G, K, L].
struct DeviceWindows {
  Tensor padded;
  DimVector shape, strides;
};
DeviceWindows device_windows(const Tensor& padded, const ConvGeometry& g) {
  const int64_t tw = padded.sizes()[2], plane = padded.sizes()[1] * tw;
  DeviceWindows w{padded, {}, {}};
  w.shape =
      DimVector{g.in.batch, g.groups, g.in_group(), g.kernel[0], g.kernel[1], g.out_h, g.out_w};
  w.strides = DimVector{g.in.channels * plane, g.in_group() * plane, plane,      g.dilation[0] * tw,
                        g.dilation[1],         g.stride[0] * tw,     g.stride[1]};
  return w;
}

int64_t padded_rows(const ConvGeometry& g) {
  return padded_extent(g.in.height, g.padding[0], g.out_h, g.kernel[0], g.stride[0], g.dilation[0]);
}
int64_t padded_cols(const ConvGeometry& g) {
  return padded_extent(g.in.width, g.padding[1], g.out_w, g.kernel[1], g.stride[1], g.dilation[1]);
}

// im2col of the whole batch: [B, G, K, L].
Tensor device_columns(const Tensor& input, const ConvGeometry& g) {
  const int64_t H = g.in.height, W = g.in.width;
  Tensor x = input.contiguous();
  x = x.as_strided(DimVector{g.in.batch * g.in.channels, H, W}, DimVector{H * W, W, 1},
                   x.storage_offset());
  DeviceWindows w = device_windows(
      padded_planes(x, g.padding[0], g.padding[1], padded_rows(g), padded_cols(g), Scalar(0.0)), g);
  return reshaped(w.padded.as_strided(w.shape, w.strides, 0),
                  DimVector{g.in.batch, g.groups, g.col_rows(), g.col_cols()});
}

Tensor conv2d_on_device(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, const ConvGeometry& g) {
  check_same_device(weight, input.device());
  if (bias) check_same_device(*bias, input.device());
  Tensor cols = device_columns(input, g);
  Tensor w = reshaped(weight, DimVector{g.groups, g.out_group(), g.col_rows()});
  Tensor out = op1(OpId::matmul, {IValue(w), IValue(cols)});  // [B, G, Og, L]
  out = reshaped(out, DimVector{g.in.batch, g.out_channels, g.out_h, g.out_w});
  if (bias) {
    Tensor b = bias->contiguous();
    b = b.as_strided(DimVector{g.out_channels, 1, 1}, DimVector{1, 0, 0}, b.storage_offset());
    out = op1(OpId::add, {IValue(out), IValue(b), IValue(int64_t{1})});
  }
  return reshaped(out, output_shape(g));
}

Tensor conv2d_input_backward_on_device(const Tensor& grad, const Tensor& weight,
                                       const ConvGeometry& g) {
  check_same_device(weight, grad.device());
  Tensor gr = reshaped(grad, DimVector{g.in.batch, g.groups, g.out_group(), g.col_cols()});
  Tensor w = weight.contiguous();
  // W^T per group: [G, K, Og].
  Tensor wt =
      w.as_strided(DimVector{g.groups, g.col_rows(), g.out_group()},
                   DimVector{g.out_group() * g.col_rows(), 1, g.col_rows()}, w.storage_offset());
  Tensor gcols = op1(OpId::matmul, {IValue(wt), IValue(gr)});  // [B, G, K, L]
  const int64_t th = padded_rows(g), tw = padded_cols(g);
  Tensor padded =
      Tensor::empty(DimVector{g.in.batch * g.in.channels, th, tw}, grad.dtype(), grad.device());
  fill_tensor(padded, Scalar(0.0));
  DeviceWindows win = device_windows(padded, g);
  add_into_windows(padded.as_strided(win.shape, win.strides, 0), reshaped(gcols, win.shape));
  return reshaped(unpadded_planes(padded, g.padding[0], g.padding[1], g.in.height, g.in.width),
                  input_shape(g));
}

Tensor conv2d_weight_backward_on_device(const Tensor& grad, const Tensor& input,
                                        const std::vector<int64_t>& weight_size,
                                        const ConvGeometry& g) {
  check_same_device(input, grad.device());
  Tensor cols = device_columns(input, g);  // [B, G, K, L]
  Tensor cols_t = cols.as_strided(DimVector{g.in.batch, g.groups, g.col_cols(), g.col_rows()},
                                  DimVector{g.groups * g.col_rows() * g.col_cols(),
                                            g.col_rows() * g.col_cols(), 1, g.col_cols()},
                                  cols.storage_offset());
  Tensor gr = reshaped(grad, DimVector{g.in.batch, g.groups, g.out_group(), g.col_cols()});
  Tensor per_item = op1(OpId::matmul, {IValue(gr), IValue(cols_t)});  // [B, G, Og, K]
  Tensor gw = op1(OpId::sum, {IValue(per_item), IValue::int_list(std::vector<int64_t>{0}),
                              IValue(false), IValue()});
  return reshaped(gw, DimVector(weight_size));
}

void check_floating(const Tensor& t) {
  TSL_CHECK(is_floating(t.dtype()), "\"slow_conv2d_cpu\" not implemented for '",
            scalar_type_name(t.dtype()), "'");
}
void check_same_dtype(const Tensor& a, const Tensor& b) {
  TSL_CHECK(a.dtype() == b.dtype(), "expected scalar type ", scalar_type_name(a.dtype()),
            " but found ", scalar_type_name(b.dtype()));
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
              const std::vector<int64_t>& dilation, int64_t groups) {
  ConvGeometry g = conv_geometry(input.sizes(), weight.sizes(), stride, padding, dilation, groups);
  check_floating(input);
  check_same_dtype(input, weight);
  if (bias) {
    TSL_CHECK(bias->dim() == 1 && bias->sizes()[0] == g.out_channels, "Given weight of size ",
              shape_str(weight.sizes()), ", expected bias to be 1-dimensional with ",
              g.out_channels, " elements, but got bias of size ", shape_str(bias->sizes()),
              " instead");
    check_same_dtype(input, *bias);
  }
  if (!input.device().is_cpu()) return conv2d_on_device(input, weight, bias, g);
  Tensor out = Tensor::empty(output_shape(g), input.dtype());
  Tensor x = input.contiguous(), w = weight.contiguous();
  std::optional<Tensor> b;
  if (bias) b = bias->contiguous();
  TSL_DISPATCH_FLOATING(input.dtype(), "conv2d", [&] { conv_forward<scalar_t>(x, w, b, g, out); });
  return out;
}

// grad must have the shape conv2d gives for these sizes (gradient formulas pass it).
void check_grad_shape(const Tensor& grad, const ConvGeometry& g) {
  DimVector expected = output_shape(g);
  TSL_CHECK(grad.sizes() == expected, "conv2d backward: expected grad of size ",
            shape_str(expected), ", but got ", shape_str(grad.sizes()));
}

Tensor conv2d_input_backward(const Tensor& grad, const Tensor& weight,
                             const std::vector<int64_t>& input_size,
                             const std::vector<int64_t>& stride,
                             const std::vector<int64_t>& padding,
                             const std::vector<int64_t>& dilation, int64_t groups) {
  ConvGeometry g = conv_geometry(input_size, weight.sizes(), stride, padding, dilation, groups);
  check_grad_shape(grad, g);
  check_floating(grad);
  check_same_dtype(grad, weight);
  if (!grad.device().is_cpu()) return conv2d_input_backward_on_device(grad, weight, g);
  Tensor gx = Tensor::empty(input_shape(g), grad.dtype());
  Tensor gr = grad.contiguous(), w = weight.contiguous();
  TSL_DISPATCH_FLOATING(grad.dtype(), "conv2d_input_backward",
                        [&] { conv_input_grad<scalar_t>(gr, w, g, gx); });
  return gx;
}

Tensor conv2d_weight_backward(const Tensor& grad, const Tensor& input,
                              const std::vector<int64_t>& weight_size,
                              const std::vector<int64_t>& stride,
                              const std::vector<int64_t>& padding,
                              const std::vector<int64_t>& dilation, int64_t groups) {
  ConvGeometry g = conv_geometry(input.sizes(), weight_size, stride, padding, dilation, groups);
  check_grad_shape(grad, g);
  check_floating(grad);
  check_same_dtype(grad, input);
  if (!grad.device().is_cpu()) return conv2d_weight_backward_on_device(grad, input, weight_size, g);
  Tensor gw = Tensor::empty(weight_size, grad.dtype());
  Tensor gr = grad.contiguous(), x = input.contiguous();
  TSL_DISPATCH_FLOATING(grad.dtype(), "conv2d_weight_backward",
                        [&] { conv_weight_grad<scalar_t>(gr, x, g, gw); });
  return gw;
}

}  // namespace

void register_conv_kernels() {
  TSL_REGISTER_CPU(conv2d, conv2d);
  TSL_REGISTER_CPU(conv2d_input_backward, conv2d_input_backward);
  TSL_REGISTER_CPU(conv2d_weight_backward, conv2d_weight_backward);
}

}  // namespace tsl::cpu
