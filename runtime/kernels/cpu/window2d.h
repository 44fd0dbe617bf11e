// Shared by the convolution and pooling kernels: `int[2]` parameters (one int stands
// for both dims), NCHW shapes with an optional batch, and output sizes.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

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

}  // namespace tsl::cpu
