// CPU kernels of 2-D pooling: max_pool2d (and where its maxima are, for its gradient),
// avg_pool2d and avg_pool2d's adjoint, following PyTorch 1.13's window rules.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

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

// Values (out) and/or offsets of max pooling over all planes.
void max_pool(const Tensor& input, const PoolGeometry& g, Tensor* out, Tensor* offsets) {
  check_floating("max_pool2d", input);
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
  Tensor out = Tensor::empty(g.out_shape(), input.dtype());
  max_pool(input, g, &out, nullptr);
  return out;
}

Tensor max_pool2d_indices(const Tensor& input, const std::vector<int64_t>& kernel_size,
                          const std::optional<std::vector<int64_t>>& stride,
                          const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                          bool ceil_mode) {
  PoolGeometry g = pool_geometry("max_pool2d", input.sizes(), kernel_size, stride, padding,
                                 dilation, ceil_mode, true);
  Tensor offsets = Tensor::empty(g.out_shape(), DType::Int64);
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
