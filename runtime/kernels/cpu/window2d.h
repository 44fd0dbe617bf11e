// Shared by the convolution and pooling kernels: `int[2]` parameters (one int stands
// for both dims), NCHW shapes with an optional batch, and output sizes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/tensor/device_backend.h"
#include "runtime/tensor/error.h"
#include "runtime/tensor/tensor.h"

namespace tsl::cpu {

using Pair = std::array<int64_t, 2>;

// `values` as (height, width): one value is used for both, as PyTorch's
// BroadcastingList2 does; any other length is a user error naming the parameter in
// conv's words or in pooling's.
inline Pair pair_param(const char* op, const char* name, const std::vector<int64_t>& values) {
  bool conv = std::string_view(op) == "conv2d";
  TSL_CHECK(values.size() == 1 || values.size() == 2 || !conv, "expected ", name,
            " to be a single integer value or a list of 2 values to match the convolution "
            "dimensions, but got ",
            name, "=", shape_str(values));
  TSL_CHECK(values.size() == 1 || values.size() == 2, op, ": ", name,
            " must either be a single int, or a tuple of two ints");
  return values.size() == 1 ? Pair{values[0], values[0]} : Pair{values[0], values[1]};
}

// An input seen as planes: [batch, channels, height, width]; an unbatched [C, H, W]
// input has batch 1 and `batched` false (the result drops the batch dim again).
struct Planes {
  int64_t batch = 1;
  int64_t channels = 0;
  int64_t height = 0;
  int64_t width = 0;
  bool batched = true;
};

inline Planes planes_of(const char* op, std::span<const int64_t> sizes) {
  TSL_CHECK(sizes.size() == 3 || sizes.size() == 4,
            "Expected 3D (unbatched) or 4D (batched) input to ", op,
            ", but got input of size: ", shape_str(sizes));
  Planes p;
  p.batched = sizes.size() == 4;
  size_t d = p.batched ? 1 : 0;
  if (p.batched) p.batch = sizes[0];
  p.channels = sizes[d];
  p.height = sizes[d + 1];
  p.width = sizes[d + 2];
  return p;
}

// The shape of a result with `channels` planes of out_h x out_w, batched like `p`.
inline DimVector planes_shape(const Planes& p, int64_t channels, int64_t out_h, int64_t out_w) {
  DimVector shape;
  if (p.batched) shape.push_back(p.batch);
  shape.push_back(channels);
  shape.push_back(out_h);
  shape.push_back(out_w);
  return shape;
}

// Positions a window of `kernel` taps `dilation` apart can take, `stride` apart, over
// `size` elements padded by `padding` on both sides (floor division, as conv does).
inline int64_t conv_output_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding,
                                int64_t dilation) {
  return (size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1;
}

// Pooling's output size: with ceil_mode, a last window may start past the end of the
// input, but never wholly inside the right padding (PyTorch's pooling_output_shape).
inline int64_t pool_output_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding,
                                int64_t dilation, bool ceil_mode) {
  int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // Floor division that rounds towards -inf (span may be negative).
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= size + padding) --out;
  return out;
}

// ---- On a device (Note [Windows on a device]) ----------------------------------------

// Note [Windows on a device]
// The convolution and pooling kernels run on a device as views and the device's
// kernels: the input is copied into a padded tensor (zeros, or -inf for max pooling)
// large enough for every window, whose windows are then one strided view
// [planes..., out_h, out_w, kH, kW] (or with the taps first); a contiguous copy of it is
// im2col, and a put that accumulates into it is col2im. GEMMs go to the device's matmul.

// The planes of x ([..., H, W]) in a new tensor [..., total_h, total_w] on x's device,
// filled with `fill` around them, their top left corner at (top, left).
inline Tensor padded_planes(const Tensor& x, int64_t top, int64_t left, int64_t total_h,
                            int64_t total_w, Scalar fill) {
  DimVector sizes = x.sizes();
  const size_t nd = sizes.size();
  sizes[nd - 2] = total_h;
  sizes[nd - 1] = total_w;
  Tensor out = Tensor::empty(sizes, x.dtype(), x.device());
  fill_tensor(out, fill);
  copy_into(out.as_strided(x.sizes(), out.strides(), top * total_w + left), x);
  return out;
}

// t's elements in order (a copy only when t is not contiguous) seen with `sizes`.
inline Tensor reshaped(const Tensor& t, const DimVector& sizes) {
  Tensor c = t.contiguous();
  return c.as_strided(sizes, contiguous_strides(sizes), c.storage_offset());
}

// The planes of padded planes p ([lead, total_h, total_w], contiguous) without their
// padding: [lead, h, w] from (top, left).
inline Tensor unpadded_planes(const Tensor& p, int64_t top, int64_t left, int64_t h, int64_t w) {
  const int64_t th = p.sizes()[1], tw = p.sizes()[2];
  return p.as_strided(DimVector{p.sizes()[0], h, w}, DimVector{th * tw, tw, 1},
                      p.storage_offset() + top * tw + left);
}

// col2im on a device: adds each element of `values` (a view with the shape of
// `windows`, a view of padded planes) into the element its window tap covers. An
// accumulating put whose offsets are all 0: the view itself says where.
inline void add_into_windows(const Tensor& windows, const Tensor& values) {
  Tensor zero = Tensor::empty(DimVector{1}, DType::Int64, windows.device());
  fill_tensor(zero, Scalar(int64_t{0}));
  const DimVector& shape = windows.sizes();
  cuda_backend()->put(windows, zero.as_strided(shape, DimVector(shape.size(), 0), 0), values, true);
}

// The windows of the padded planes p ([lead, total_h, total_w], contiguous) as a view
// [lead, out_h, out_w, kH, kW]: window (oh, ow) starts at (oh * stride, ow * stride).
inline Tensor window_view(const Tensor& p, int64_t out_h, int64_t out_w, const Pair& kernel,
                          const Pair& stride, const Pair& dilation) {
  const int64_t sh = p.strides()[1], sw = p.strides()[2];
  return p.as_strided(
      DimVector{p.sizes()[0], out_h, out_w, kernel[0], kernel[1]},
      DimVector{p.strides()[0], stride[0] * sh, stride[1] * sw, dilation[0] * sh, dilation[1] * sw},
      p.storage_offset());
}

// The padded extent one dim needs: `padding` before, and room for every window.
inline int64_t padded_extent(int64_t size, int64_t padding, int64_t out, int64_t kernel,
                             int64_t stride, int64_t dilation) {
  return std::max(size + 2 * padding, (out - 1) * stride + (kernel - 1) * dilation + 1);
}

}  // namespace tsl::cpu
