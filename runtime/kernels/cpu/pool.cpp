// CPU kernels of 2-D pooling: max_pool2d (and where its maxima are, for its gradient),
// avg_pool2d and avg_pool2d's adjoint, following PyTorch 1.13's window rules.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/window2d.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/parallel.h"

namespace tsl::cpu {
namespace {

struct PoolGeometry {
  Planes in;
  Pair kernel{}, stride{}, padding{}, dilation{1, 1};
  int64_t out_h = 0, out_w = 0;

  int64_t planes() const { return in.batch * in.channels; }
  int64_t in_plane() const { return in.height * in.width; }
  int64_t out_plane() const { return out_h * out_w; }
  DimVector out_shape() const { return planes_shape(in, in.channels, out_h, out_w); }
};

// Checks a pooling's parameters with PyTorch's messages. `max_pool` chooses the
// padding rule: at most half the dilated window (max) or half the window (avg).
PoolGeometry pool_geometry(const char* op, std::span<const int64_t> sizes,
                           const std::vector<int64_t>& kernel_size,
                           const std::optional<std::vector<int64_t>>& stride,
                           const std::vector<int64_t>& padding,
                           const std::vector<int64_t>& dilation, bool ceil_mode, bool max_pool) {
  PoolGeometry g;
  g.in = planes_of(op, sizes);
  g.kernel = pair_param(op, "kernel_size", kernel_size);
  g.stride = stride && !stride->empty() ? pair_param(op, "stride", *stride) : g.kernel;
  g.padding = pair_param(op, "padding", padding);
  g.dilation = pair_param(op, "dilation", dilation);
  TSL_CHECK(g.kernel[0] > 0 && g.kernel[1] > 0,
            "kernel size should be greater than zero, but got kH: ", g.kernel[0],
            " kW: ", g.kernel[1]);
  TSL_CHECK(g.stride[0] > 0 && g.stride[1] > 0,
            "stride should be greater than zero, but got dH: ", g.stride[0], " dW: ", g.stride[1]);
  TSL_CHECK(g.dilation[0] > 0 && g.dilation[1] > 0,
            "dilation should be greater than zero, but got dilationH: ", g.dilation[0],
            " dilationW: ", g.dilation[1]);
  for (int d = 0; d < 2; ++d) {
    int64_t span = g.dilation[d] * (g.kernel[d] - 1) + 1;
    int64_t limit = max_pool ? span / 2 : g.kernel[d] / 2;
    TSL_CHECK(g.padding[d] >= 0, op, ": padding must be non-negative, but got pad=", g.padding[d]);
    if (g.dilation[d] == 1) {
      TSL_CHECK(g.padding[d] <= limit,
                "pad should be at most half of kernel size, but got pad=", g.padding[d],
                " and kernel_size=", g.kernel[d]);
    }
    TSL_CHECK(g.padding[d] <= limit,
              "pad should be at most half of effective kernel size, but got pad=", g.padding[d],
              ", kernel_size=", g.kernel[d], " and dilation=", g.dilation[d]);
  }
  g.out_h = pool_output_size(g.in.height, g.kernel[0], g.stride[0], g.padding[0], g.dilation[0],
                             ceil_mode);
  g.out_w = pool_output_size(g.in.width, g.kernel[1], g.stride[1], g.padding[1], g.dilation[1],
                             ceil_mode);
  TSL_CHECK(g.out_h >= 1 && g.out_w >= 1, "Given input size: (", g.in.channels, "x", g.in.height,
            "x", g.in.width, "). Calculated output size: (", g.in.channels, "x", g.out_h, "x",
            g.out_w, "). Output size is too small");
  return g;
}

void check_floating(const char* op, const Tensor& t) {
  TSL_CHECK(is_floating(t.dtype()), "\"", op, "\" not implemented for '",
            scalar_type_name(t.dtype()), "'");
}

// Calls fn(begin, end) over the planes, in parallel when there is enough work.
template <typename Fn>
void over_planes(const PoolGeometry& g, int64_t work_per_plane, Fn&& fn) {
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work_per_plane));
  parallel_for(g.planes(), grain, fn);
}

// ---- max_pool2d ----

// The first valid tap at or after `start` and the end of the window, along one dim.
struct Taps {
  int64_t begin, end, step;
};
Taps taps(int64_t o, int64_t stride, int64_t padding, int64_t kernel, int64_t dilation,
          int64_t size) {
  int64_t begin = o * stride - padding;
  int64_t end = std::min(begin + (kernel - 1) * dilation + 1, size);
  while (begin < 0) begin += dilation;
  return {begin, end, dilation};
}

// Maximum of every window of one plane and its offset in the plane. A NaN wins (and
// the last NaN's offset is kept), as in PyTorch.
template <typename T>
void max_pool_plane(const T* x, const PoolGeometry& g, T* out, int64_t* offsets) {
  const int64_t W = g.in.width;
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    Taps th = taps(oh, g.stride[0], g.padding[0], g.kernel[0], g.dilation[0], g.in.height);
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      Taps tw = taps(ow, g.stride[1], g.padding[1], g.kernel[1], g.dilation[1], W);
      TSL_CHECK(th.begin < th.end && tw.begin < tw.end, "max_pool2d: the window at output (", oh,
                ", ", ow, ") covers only padding; use less padding or dilation");
      T best = -std::numeric_limits<T>::infinity();
      int64_t at = th.begin * W + tw.begin;
      for (int64_t ih = th.begin; ih < th.end; ih += th.step) {
        for (int64_t iw = tw.begin; iw < tw.end; iw += tw.step) {
          T v = x[ih * W + iw];
          if (v > best || std::isnan(v)) {
            best = v;
            at = ih * W + iw;
          }
        }
      }
      int64_t o = oh * g.out_w + ow;
      if (out) out[o] = best;
      if (offsets) offsets[o] = at;
    }
  }
}

// ---- On a device (Note [Windows on a device] in window2d.h) ----

// The input's planes as [planes, H, W], contiguous.
Tensor as_planes(const Tensor& input, const PoolGeometry& g) {
  Tensor x = input.contiguous();
  return x.as_strided(DimVector{g.planes(), g.in.height, g.in.width},
                      DimVector{g.in_plane(), g.in.width, 1}, x.storage_offset());
}

// A [rows, cols] int64 or float tensor from the host, on `device`.
template <typename T, typename Fn>
Tensor host_grid(int64_t rows, int64_t cols, DType dtype, Device device, Fn&& value) {
  Tensor t = Tensor::empty(DimVector{rows, cols}, dtype);
  T* p = t.data_ptr<T>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) p[r * cols + c] = static_cast<T>(value(r, c));
  }
  return copy_to_device(t, device);
}

// max_pool on a device: the maximum of each window of the input padded with -inf, and
// its offset: max.dim's position in the window, turned into the input's (i, j). A
// window whose maximum is -inf reports its first valid tap, as the CPU loop does (no
// element is larger than its starting -inf). Where a window holds several NaNs, the
// first one's offset is reported (the CPU keeps the last).
void max_pool_on_device(const Tensor& input, const PoolGeometry& g, Tensor* out, Tensor* offsets) {
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    Taps th = taps(oh, g.stride[0], g.padding[0], g.kernel[0], g.dilation[0], g.in.height);
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      Taps tw = taps(ow, g.stride[1], g.padding[1], g.kernel[1], g.dilation[1], g.in.width);
      TSL_CHECK(th.begin < th.end && tw.begin < tw.end, "max_pool2d: the window at output (", oh,
                ", ", ow, ") covers only padding; use less padding or dilation");
    }
  }
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  Tensor padded = padded_planes(
      as_planes(input, g), g.padding[0], g.padding[1],
      padded_extent(g.in.height, g.padding[0], g.out_h, kh, g.stride[0], g.dilation[0]),
      padded_extent(g.in.width, g.padding[1], g.out_w, kw, g.stride[1], g.dilation[1]),
      Scalar(-std::numeric_limits<double>::infinity()));
  Tensor windows = reshaped(window_view(padded, g.out_h, g.out_w, g.kernel, g.stride, g.dilation),
                            DimVector{g.planes(), g.out_h, g.out_w, kh * kw});
  std::vector<IValue> best =
      call_op(OpId::max_dim, {IValue(windows), IValue(int64_t{-1}), IValue(false)}, 2);
  Tensor values = best[0].to_tensor();
  if (out) *out = reshaped(values, g.out_shape());
  if (!offsets) return;
  const Device dev = input.device();
  const IValue one(int64_t{1});
  Tensor tap = best[1].to_tensor();
  Tensor tap_row = op1(OpId::floor_divide, {IValue(tap), IValue(kw)});
  Tensor tap_col = op1(OpId::remainder, {IValue(tap), IValue(kw)});
  // Input row and column of each output's tap: start of the window plus the tap.
  Tensor row0 = host_grid<int64_t>(g.out_h, 1, DType::Int64, dev, [&](int64_t r, int64_t) {
    return r * g.stride[0] - g.padding[0];
  });
  Tensor col0 = host_grid<int64_t>(1, g.out_w, DType::Int64, dev, [&](int64_t, int64_t c) {
    return c * g.stride[1] - g.padding[1];
  });
  Tensor ih =
      op1(OpId::add,
          {IValue(row0), IValue(op1(OpId::mul, {IValue(tap_row), IValue(g.dilation[0])})), one});
  Tensor iw =
      op1(OpId::add,
          {IValue(col0), IValue(op1(OpId::mul, {IValue(tap_col), IValue(g.dilation[1])})), one});
  Tensor at =
      op1(OpId::add, {IValue(op1(OpId::mul, {IValue(ih), IValue(g.in.width)})), IValue(iw), one});
  Tensor first_valid =
      host_grid<int64_t>(g.out_h, g.out_w, DType::Int64, dev, [&](int64_t r, int64_t c) {
        Taps th = taps(r, g.stride[0], g.padding[0], kh, g.dilation[0], g.in.height);
        Taps tw = taps(c, g.stride[1], g.padding[1], kw, g.dilation[1], g.in.width);
        return th.begin * g.in.width + tw.begin;
      });
  Tensor none_larger =
      op1(OpId::eq, {IValue(values), IValue(-std::numeric_limits<double>::infinity())});
  *offsets = reshaped(op1(OpId::where, {IValue(none_larger), IValue(first_valid), IValue(at)}),
                      g.out_shape());
}

// Values (out) and/or offsets of max pooling over all planes.
void max_pool(const Tensor& input, const PoolGeometry& g, Tensor* out, Tensor* offsets) {
  check_floating("max_pool2d", input);
  if (!input.device().is_cpu()) return max_pool_on_device(input, g, out, offsets);
  Tensor x = input.contiguous();
  int64_t work = g.out_plane() * g.kernel[0] * g.kernel[1];
  TSL_DISPATCH_FLOATING(x.dtype(), "max_pool2d", [&] {
    const scalar_t* xd = x.data_ptr<scalar_t>();
    scalar_t* od = out ? out->data_ptr<scalar_t>() : nullptr;
    int64_t* id = offsets ? offsets->data_ptr<int64_t>() : nullptr;
    over_planes(g, work, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        max_pool_plane(xd + p * g.in_plane(), g, od ? od + p * g.out_plane() : nullptr,
                       id ? id + p * g.out_plane() : nullptr);
      }
    });
  });
}

Tensor max_pool2d(const Tensor& input, const std::vector<int64_t>& kernel_size,
                  const std::optional<std::vector<int64_t>>& stride,
                  const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                  bool ceil_mode, bool return_indices) {
  TSL_CHECK(!return_indices,
            "max_pool2d: return_indices=True is not supported; TSL's max_pool2d returns the values "
            "only");
  PoolGeometry g = pool_geometry("max_pool2d", input.sizes(), kernel_size, stride, padding,
                                 dilation, ceil_mode, true);
  Tensor out = Tensor::empty(g.out_shape(), input.dtype(), input.device());
  max_pool(input, g, &out, nullptr);
  return out;
}

Tensor max_pool2d_indices(const Tensor& input, const std::vector<int64_t>& kernel_size,
                          const std::optional<std::vector<int64_t>>& stride,
                          const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                          bool ceil_mode) {
  PoolGeometry g = pool_geometry("max_pool2d", input.sizes(), kernel_size, stride, padding,
                                 dilation, ceil_mode, true);
  Tensor offsets = Tensor::empty(g.out_shape(), DType::Int64, input.device());
  max_pool(input, g, nullptr, &offsets);
  return offsets;
}

// ---- avg_pool2d ----

// One window of avg_pool2d: the input rows/cols it sums and what it divides by.
struct AvgWindow {
  int64_t h0, h1, w0, w1;
  int64_t divisor;
  bool empty() const { return h0 >= h1 || w0 >= w1; }
};

struct AvgOptions {
  bool count_include_pad;
  std::optional<int64_t> divisor_override;
};

AvgWindow avg_window(const PoolGeometry& g, const AvgOptions& o, int64_t oh, int64_t ow) {
  int64_t h0 = oh * g.stride[0] - g.padding[0], w0 = ow * g.stride[1] - g.padding[1];
  int64_t h1 = std::min(h0 + g.kernel[0], g.in.height + g.padding[0]);
  int64_t w1 = std::min(w0 + g.kernel[1], g.in.width + g.padding[1]);
  int64_t padded_size = (h1 - h0) * (w1 - w0);
  AvgWindow win{std::max<int64_t>(h0, 0), std::min(h1, g.in.height), std::max<int64_t>(w0, 0),
                std::min(w1, g.in.width), 0};
  win.divisor = o.divisor_override    ? *o.divisor_override
                : o.count_include_pad ? padded_size
                                      : (win.h1 - win.h0) * (win.w1 - win.w0);
  return win;
}

PoolGeometry avg_geometry(std::span<const int64_t> sizes, const std::vector<int64_t>& kernel_size,
                          const std::optional<std::vector<int64_t>>& stride,
                          const std::vector<int64_t>& padding, bool ceil_mode,
                          const std::optional<int64_t>& divisor_override) {
  TSL_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  return pool_geometry("avg_pool2d", sizes, kernel_size, stride, padding, {1}, ceil_mode, false);
}

// ---- avg_pool2d on a device ----

// Each output's divisor as a [out_h, out_w] tensor of `dtype` on `device` (1 for a
// window over padding only, whose sum is 0 and which the CPU writes as 0).
Tensor avg_divisors(const PoolGeometry& g, const AvgOptions& o, DType dtype, Device device) {
  auto divisor = [&](int64_t r, int64_t c) {
    AvgWindow w = avg_window(g, o, r, c);
    return w.empty() ? 1.0 : static_cast<double>(w.divisor);
  };
  return dtype == DType::Float32 ? host_grid<float>(g.out_h, g.out_w, dtype, device, divisor)
                                 : host_grid<double>(g.out_h, g.out_w, dtype, device, divisor);
}

int64_t avg_padded_rows(const PoolGeometry& g) {
  return padded_extent(g.in.height, g.padding[0], g.out_h, g.kernel[0], g.stride[0], 1);
}
int64_t avg_padded_cols(const PoolGeometry& g) {
  return padded_extent(g.in.width, g.padding[1], g.out_w, g.kernel[1], g.stride[1], 1);
}

// The window sums of the zero-padded input (padding adds nothing) over the divisors.
Tensor avg_pool_on_device(const Tensor& input, const PoolGeometry& g, const AvgOptions& o) {
  Tensor padded = padded_planes(as_planes(input, g), g.padding[0], g.padding[1], avg_padded_rows(g),
                                avg_padded_cols(g), Scalar(0.0));
  Tensor windows = window_view(padded, g.out_h, g.out_w, g.kernel, g.stride, Pair{1, 1});
  Tensor sums = op1(OpId::sum, {IValue(windows), IValue::int_list(std::vector<int64_t>{3, 4}),
                                IValue(false), IValue()});
  Tensor out =
      op1(OpId::div,
          {IValue(sums), IValue(avg_divisors(g, o, input.dtype(), input.device())), IValue()});
  return reshaped(out, g.out_shape());
}

// The adjoint: grad / divisor added into every tap of each window (a put that
// accumulates into the padded planes), the padding cut off.
Tensor avg_pool_backward_on_device(const Tensor& grad, const PoolGeometry& g, const AvgOptions& o) {
  Tensor share =
      op1(OpId::div, {IValue(reshaped(grad, DimVector{g.planes(), g.out_h, g.out_w})),
                      IValue(avg_divisors(g, o, grad.dtype(), grad.device())), IValue()});
  const int64_t th = avg_padded_rows(g), tw = avg_padded_cols(g);
  Tensor padded = Tensor::empty(DimVector{g.planes(), th, tw}, grad.dtype(), grad.device());
  fill_tensor(padded, Scalar(0.0));
  Tensor windows = window_view(padded, g.out_h, g.out_w, g.kernel, g.stride, Pair{1, 1});
  add_into_windows(windows,
                   share.as_strided(windows.sizes(), DimVector{g.out_plane(), g.out_w, 1, 0, 0},
                                    share.storage_offset()));
  Tensor inner = unpadded_planes(padded, g.padding[0], g.padding[1], g.in.height, g.in.width);
  return reshaped(inner, g.in.batched
                             ? DimVector{g.in.batch, g.in.channels, g.in.height, g.in.width}
                             : DimVector{g.in.channels, g.in.height, g.in.width});
}

// backward = false: out[o] = sum of the window / divisor; true: every input of the
// window gets grad[o] / divisor added (the adjoint). `in` and `out` are one plane each.
template <typename T>
void avg_pool_plane(const PoolGeometry& g, const AvgOptions& o, const T* in, T* out,
                    bool backward) {
  const int64_t W = g.in.width;
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      AvgWindow win = avg_window(g, o, oh, ow);
      int64_t at = oh * g.out_w + ow;
      if (backward) {
        if (win.empty()) continue;
        T share = in[at] / static_cast<T>(win.divisor);
        for (int64_t ih = win.h0; ih < win.h1; ++ih) {
          for (int64_t iw = win.w0; iw < win.w1; ++iw) out[ih * W + iw] += share;
        }
        continue;
      }
      if (win.empty()) {
        out[at] = T(0);
        continue;
      }
      T sum = 0;
      for (int64_t ih = win.h0; ih < win.h1; ++ih) {
        for (int64_t iw = win.w0; iw < win.w1; ++iw) sum += in[ih * W + iw];
      }
      out[at] = sum / static_cast<T>(win.divisor);
    }
  }
}

Tensor avg_pool2d(const Tensor& input, const std::vector<int64_t>& kernel_size,
                  const std::optional<std::vector<int64_t>>& stride,
                  const std::vector<int64_t>& padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  PoolGeometry g =
      avg_geometry(input.sizes(), kernel_size, stride, padding, ceil_mode, divisor_override);
  check_floating("avg_pool2d", input);
  AvgOptions opts{count_include_pad, divisor_override};
  if (!input.device().is_cpu()) return avg_pool_on_device(input, g, opts);
  Tensor x = input.contiguous();
  Tensor out = Tensor::empty(g.out_shape(), input.dtype());
  int64_t work = g.out_plane() * g.kernel[0] * g.kernel[1];
  TSL_DISPATCH_FLOATING(x.dtype(), "avg_pool2d", [&] {
    const scalar_t* xd = x.data_ptr<scalar_t>();
    scalar_t* od = out.data_ptr<scalar_t>();
    over_planes(g, work, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        avg_pool_plane(g, opts, xd + p * g.in_plane(), od + p * g.out_plane(), false);
      }
    });
  });
  return out;
}

Tensor avg_pool2d_backward(const Tensor& grad, const Tensor& input,
                           const std::vector<int64_t>& kernel_size,
                           const std::optional<std::vector<int64_t>>& stride,
                           const std::vector<int64_t>& padding, bool ceil_mode,
                           bool count_include_pad, std::optional<int64_t> divisor_override) {
  PoolGeometry g =
      avg_geometry(input.sizes(), kernel_size, stride, padding, ceil_mode, divisor_override);
  check_floating("avg_pool2d_backward", grad);
  TSL_CHECK(grad.sizes() == g.out_shape(), "avg_pool2d backward: expected grad of size ",
            shape_str(g.out_shape()), ", but got ", shape_str(grad.sizes()));
  AvgOptions opts{count_include_pad, divisor_override};
  if (!grad.device().is_cpu()) return avg_pool_backward_on_device(grad, g, opts);
  Tensor gr = grad.contiguous();
  Tensor gx = Tensor::empty(input.sizes(), grad.dtype());
  int64_t work = g.out_plane() * g.kernel[0] * g.kernel[1];
  TSL_DISPATCH_FLOATING(gr.dtype(), "avg_pool2d_backward", [&] {
    const scalar_t* gd = gr.data_ptr<scalar_t>();
    scalar_t* xd = gx.data_ptr<scalar_t>();
    std::fill(xd, xd + gx.numel(), scalar_t(0));
    over_planes(g, work, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        avg_pool_plane(g, opts, gd + p * g.out_plane(), xd + p * g.in_plane(), true);
      }
    });
  });
  return gx;
}

}  // namespace

void register_pool_kernels() {
  TSL_REGISTER_CPU(max_pool2d, max_pool2d);
  TSL_REGISTER_CPU(max_pool2d_indices, max_pool2d_indices);
  TSL_REGISTER_CPU(avg_pool2d, avg_pool2d);
  TSL_REGISTER_CPU(avg_pool2d_backward, avg_pool2d_backward);
}

}  // namespace tsl::cpu
