// CPU convolution and pooling kernels: values against PyTorch 1.13 (`F.conv2d`, ...,
// ramp as in kernel_test_util.h), conv2d against a direct reference loop over many
// geometries, its two gradient kernels against it by adjointness, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/ivalue.h"
#include "runtime/tensor/parallel.h"
#include "runtime/tensor/tensor.h"
#include "tests/tensor/kernel_test_util.h"

namespace tsl {
namespace {

using test::error_of;
using test::ramp;
using test::run;
using test::values;

IValue ints(std::vector<int64_t> v) { return IValue::int_list(std::move(v)); }

Tensor conv2d(const Tensor& x, const Tensor& w, IValue b, std::vector<int64_t> stride,
              std::vector<int64_t> padding, std::vector<int64_t> dilation = {1},
              int64_t groups = 1) {
  return run(OpId::conv2d, {x, w, std::move(b), ints(std::move(stride)), ints(std::move(padding)),
                            ints(std::move(dilation)), groups});
}

TEST(Conv2d, MatchesPyTorch) {
  // F.conv2d(ramp(1,2,4,5), ramp(3,2,2,3, k=5, m=11), ramp(3, k=2, m=5), (1,2), (1,1))
  Tensor out = conv2d(ramp({1, 2, 4, 5}), ramp({3, 2, 2, 3}, 5, 11), ramp({3}, 2, 5), {1, 2}, {1});
  test::expect_close(
      out, {1, 3, 5, 3}, DType::Float32,
      {-3.0, 2.25,  -1.0,  -6.25, -2.75, 10.25, -1.75, -8.5, -6.25, -2.5,  -3.75, -7.0,
       4.5,  -2.5,  -5.75, -2.75, -2.5,  1.0,   -4.5,  1.5,  -1.5,  -1.0,  -1.25, 4.75,
       7.75, 4.75,  -3.0,  -2.75, 3.25,  -0.75, -8.0,  12.0, 0.25,  -8.25, -8.0,  8.75,
       -3.0, -7.75, -3.5,  -1.25, -0.5,  -1.75, 6.5,   6.25, 1.5},
      1e-6, 1.0);
}

// ---- A direct reference: out[n][o][y][x] = b[o] + sum over the window ----

struct Geometry {
  std::vector<int64_t> input;  // [N, C, H, W] or [C, H, W]
  std::vector<int64_t> weight;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
};

std::vector<double> reference_conv(const std::vector<double>& x, const std::vector<double>& w,
                                   const std::vector<double>& b, const Geometry& g,
                                   std::vector<int64_t>& out_shape) {
  bool batched = g.input.size() == 4;
  int64_t N = batched ? g.input[0] : 1, C = g.input[batched ? 1 : 0];
  int64_t H = g.input[batched ? 2 : 1], W = g.input[batched ? 3 : 2];
  int64_t O = g.weight[0], Cg = g.weight[1], kh = g.weight[2], kw = g.weight[3];
  auto at = [](const std::vector<int64_t>& v, size_t i) { return v.size() == 1 ? v[0] : v[i]; };
  int64_t sh = at(g.stride, 0), sw = at(g.stride, 1), ph = at(g.padding, 0), pw = at(g.padding, 1),
          dh = at(g.dilation, 0), dw = at(g.dilation, 1);
  int64_t Ho = (H + 2 * ph - dh * (kh - 1) - 1) / sh + 1;
  int64_t Wo = (W + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  out_shape = batched ? std::vector<int64_t>{N, O, Ho, Wo} : std::vector<int64_t>{O, Ho, Wo};
  int64_t Og = O / g.groups;
  std::vector<double> out(static_cast<size_t>(N * O * Ho * Wo));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < Ho; ++y)
        for (int64_t z = 0; z < Wo; ++z) {
          double s = b.empty() ? 0.0 : b[o];
          int64_t grp = o / Og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t ih = y * sh - ph + i * dh, iw = z * sw - pw + j * dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                int64_t ci = grp * Cg + c;
                s += x[((n * C + ci) * H + ih) * W + iw] * w[((o * Cg + c) * kh + i) * kw + j];
              }
          out[((n * O + o) * Ho + y) * Wo + z] = s;
        }
  return out;
}

Tensor random_tensor(const std::vector<int64_t>& shape, std::mt19937& rng) {
  std::normal_distribution<double> d;
  Tensor t = Tensor::empty(shape, DType::Float64);
  double* p = t.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = d(rng);
  return t;
}

double inner(const Tensor& a, const Tensor& b) {
  std::vector<double> x = values(a), y = values(b);
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

class ConvGeometries : public ::testing::TestWithParam<Geometry> {};

// The forward against the reference; then the gradient kernels by adjointness:
// <conv(x, w), g> = <x, input_backward(g, w)> = <w, weight_backward(g, x)>.
TEST_P(ConvGeometries, ForwardAndAdjoints) {
  const Geometry& g = GetParam();
  std::mt19937 rng(7);
  Tensor x = random_tensor(g.input, rng), w = random_tensor(g.weight, rng);
  Tensor b = random_tensor({g.weight[0]}, rng);
  std::vector<int64_t> out_shape;
  std::vector<double> expected = reference_conv(values(x), values(w), values(b), g, out_shape);
  Tensor out = conv2d(x, w, b, g.stride, g.padding, g.dilation, g.groups);
  test::expect_close(out, out_shape, DType::Float64, expected, 1e-12, 1.0);

  Tensor grad = random_tensor(out_shape, rng);
  Tensor plain = conv2d(x, w, IValue(), g.stride, g.padding, g.dilation, g.groups);
  Tensor gx = run(OpId::conv2d_input_backward, {grad, w, ints(g.input), ints(g.stride),
                                                ints(g.padding), ints(g.dilation), g.groups});
  Tensor gw = run(OpId::conv2d_weight_backward, {grad, x, ints(g.weight), ints(g.stride),
                                                 ints(g.padding), ints(g.dilation), g.groups});
  EXPECT_EQ(gx.sizes(), DimVector(g.input));
  EXPECT_EQ(gw.sizes(), DimVector(g.weight));
  double lhs = inner(plain, grad);
  EXPECT_NEAR(inner(x, gx), lhs, 1e-9 * (1 + std::abs(lhs)));
  EXPECT_NEAR(inner(w, gw), lhs, 1e-9 * (1 + std::abs(lhs)));
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, ConvGeometries,
    ::testing::Values(Geometry{{2, 3, 7, 6}, {4, 3, 3, 3}, {1}, {1}, {1}, 1},
                      Geometry{{1, 2, 8, 9}, {3, 2, 3, 2}, {2, 3}, {1, 0}, {1}, 1},
                      Geometry{{2, 4, 9, 9}, {6, 2, 2, 3}, {1}, {2, 1}, {2, 3}, 2},
                      Geometry{{3, 5, 5}, {2, 3, 1, 1}, {1}, {0}, {1}, 1},     // direct, unbatched
                      Geometry{{2, 6, 4, 4}, {6, 1, 3, 3}, {1}, {1}, {1}, 6},  // depthwise
                      Geometry{{1, 1, 3, 3}, {1, 1, 3, 3}, {2}, {2}, {1}, 1},  // padding > half
                      // enough work per item for the batch to run on threads
                      Geometry{{8, 16, 18, 18}, {32, 16, 3, 3}, {1}, {1}, {1}, 1}));

TEST(Conv2d, ThreadsGiveTheSameResult) {
  std::mt19937 rng(11);
  Tensor x = random_tensor({6, 16, 20, 20}, rng), w = random_tensor({32, 16, 3, 3}, rng);
  Tensor grad = random_tensor({6, 32, 20, 20}, rng);
  auto all = [&] {
    std::vector<double> r = values(conv2d(x, w, IValue(), {1}, {1}));
    for (double v :
         values(run(OpId::conv2d_weight_backward,
                    {grad, x, ints({32, 16, 3, 3}), ints({1}), ints({1}), ints({1}), int64_t{1}})))
      r.push_back(v);
    return r;
  };
  int threads = num_threads();
  std::vector<double> parallel = all();
  set_num_threads(1);
  std::vector<double> serial = all();
  set_num_threads(threads);
  ASSERT_EQ(parallel.size(), serial.size());
  for (size_t i = 0; i < serial.size(); ++i) ASSERT_NEAR(parallel[i], serial[i], 1e-9) << i;
}

TEST(Conv2d, Errors) {
  Tensor x = Tensor::empty(std::vector<int64_t>{1, 4, 5, 5}, DType::Float32);
  Tensor w = Tensor::empty(std::vector<int64_t>{3, 2, 3, 3}, DType::Float32);
  EXPECT_EQ(error_of([&] { conv2d(x, w, IValue(), {1}, {0}); }),
            "Given groups=1, weight of size [3, 2, 3, 3], expected input[1, 4, 5, 5] to have 2 "
            "channels, but got 4 channels instead");
  Tensor small = Tensor::empty(std::vector<int64_t>{1, 2, 2, 2}, DType::Float32);
  EXPECT_EQ(error_of([&] { conv2d(small, w, IValue(), {1}, {0}); }),
            "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size "
            "can't be greater than actual input size");
  Tensor x2 = Tensor::empty(std::vector<int64_t>{1, 2, 5, 5}, DType::Float32);
  EXPECT_EQ(error_of([&] {
              conv2d(x2, w, IValue(), {1, 1, 1}, {0});
            }),
            "expected stride to be a single integer value or a list of 2 values to match the "
            "convolution dimensions, but got stride=[1, 1, 1]");
  Tensor b4 = Tensor::empty(std::vector<int64_t>{4}, DType::Float32);
  EXPECT_EQ(error_of([&] { conv2d(x2, w, b4, {1}, {0}); }),
            "Given weight of size [3, 2, 3, 3], expected bias to be 1-dimensional with 3 "
            "elements, but got bias of size [4] instead");
  Tensor flat = Tensor::empty(std::vector<int64_t>{2, 5}, DType::Float32);
  EXPECT_EQ(error_of([&] { conv2d(flat, w, IValue(), {1}, {0}); }),
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            "[2, 5]");
  EXPECT_EQ(error_of([&] { conv2d(x2, w, IValue(), {1}, {0}, {1}, 2); }),
            "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight "
            "of size [3, 2, 3, 3] instead");
  EXPECT_EQ(error_of([&] { conv2d(x2, w, IValue(), {0}, {0}); }),
            "non-positive stride is not supported");
  EXPECT_EQ(error_of([&] { conv2d(x2, w, IValue(), {1}, {-1}); }),
            "negative padding is not supported");
  Tensor xl = Tensor::empty(std::vector<int64_t>{1, 2, 5, 5}, DType::Int64);
  EXPECT_EQ(error_of([&] { conv2d(xl, w, IValue(), {1}, {0}); }),
            "\"slow_conv2d_cpu\" not implemented for 'Long'");
  Tensor wd = Tensor::empty(std::vector<int64_t>{3, 2, 3, 3}, DType::Float64);
  EXPECT_EQ(error_of([&] { conv2d(x2, wd, IValue(), {1}, {0}); }),
            "expected scalar type Float but found Double");
}

// ---- Pooling ----

Tensor max_pool(const Tensor& x, std::vector<int64_t> k, IValue stride, std::vector<int64_t> pad,
                std::vector<int64_t> dilation, bool ceil) {
  return run(OpId::max_pool2d, {x, ints(std::move(k)), std::move(stride), ints(std::move(pad)),
                                ints(std::move(dilation)), ceil, false});
}

TEST(MaxPool2d, NaNWinsAndPaddingIsMinusInfinity) {
  Tensor x = ramp({1, 1, 4, 5});
  float* p = x.data_ptr<float>();
  p[1 * 5 + 2] = std::numeric_limits<float>::quiet_NaN();
  p[3 * 5 + 4] = -std::numeric_limits<float>::infinity();
  // F.max_pool2d(x, 2, 2, 1, 1, True)
  double nan = std::numeric_limits<double>::quiet_NaN();
  test::expect_close(max_pool(x, {2}, ints({2}), {1}, {1}, true), {1, 1, 3, 3}, DType::Float32,
                     {-1.5, 1.5, 1.0, -0.5, nan, 1.5, 0.0, 1.5, 1.0}, 0, 1.0);
  // Offsets, as F.max_pool2d(..., return_indices=True) gives them: the first maximum
  // of each window, the NaN at offset 7.
  Tensor offsets =
      run(OpId::max_pool2d_indices, {x, ints({2}), ints({2}), ints({1}), ints({1}), true});
  EXPECT_EQ(offsets.dtype(), DType::Int64);
  EXPECT_EQ(values(offsets), (std::vector<double>{0, 2, 4, 10, 7, 9, 15, 16, 18}));
}

TEST(MaxPool2d, StrideDefaultsToKernelSize) {
  Tensor x = ramp({2, 3, 6, 6}, 5, 13);
  Tensor a = max_pool(x, {3, 2}, IValue(), {0}, {1}, false);
  Tensor b = max_pool(x, {3, 2}, ints({3, 2}), {0}, {1}, false);
  EXPECT_EQ(a.sizes(), DimVector({2, 3, 2, 3}));
  EXPECT_EQ(values(a), values(b));
}

TEST(AvgPool2d, MatchesPyTorch) {
  Tensor x = ramp({1, 2, 5, 5}, 4, 9);
  auto avg = [&](bool count_include_pad, IValue divisor) {
    return run(OpId::avg_pool2d,
               {x, ints({3}), ints({2}), ints({1}), true, count_include_pad, std::move(divisor)});
  };
  // F.avg_pool2d(x, 3, 2, 1, True, False)
  test::expect_close(avg(false, IValue()), {1, 2, 3, 3}, DType::Float32,
                     {0.0, 0.75, 0.375, 0.75, 0.5, 0.0, 0.75, 0.0, 0.0, 0.5, 0.5, 0.875, 0.5, 0.5,
                      0.5, 0.125, 0.5, 0.5},
                     1e-6, 1.0);
  // F.avg_pool2d(x, 3, 2, 1, True, True): the last window reaches past the padding,
  // which it does not count.
  test::expect_close(
      avg(true, IValue()), {1, 2, 3, 3}, DType::Float32,
      {0.0, 0.5, 0.1666666716337204, 0.5, 0.5, 0.0, 0.3333333432674408, 0.0, 0.0,
       0.2222222238779068, 0.3333333432674408, 0.3888888955116272, 0.3333333432674408, 0.5,
       0.3333333432674408, 0.0555555559694767, 0.3333333432674408, 0.2222222238779068},
      1e-6, 1.0);
}

TEST(AvgPool2d, BackwardIsTheAdjoint) {
  std::mt19937 rng(3);
  Tensor x = random_tensor({2, 3, 7, 6}, rng);
  for (bool cip : {false, true}) {
    for (IValue div : {IValue(), IValue(int64_t{5})}) {
      std::vector<IValue> params{ints({3, 2}), ints({2, 1}), ints({1}), true, cip, div};
      std::vector<IValue> fwd{x};
      fwd.insert(fwd.end(), params.begin(), params.end());
      Tensor y = run(OpId::avg_pool2d, fwd);
      Tensor g = random_tensor({y.sizes().begin(), y.sizes().end()}, rng);
      std::vector<IValue> bwd{g, x};
      bwd.insert(bwd.end(), params.begin(), params.end());
      Tensor gx = run(OpId::avg_pool2d_backward, bwd);
      EXPECT_NEAR(inner(y, g), inner(x, gx), 1e-10);
    }
  }
}

TEST(Pool2d, Errors) {
  Tensor x = Tensor::empty(std::vector<int64_t>{1, 1, 4, 4}, DType::Float32);
  EXPECT_EQ(error_of([&] { max_pool(x, {2}, ints({2}), {2}, {1}, false); }),
            "pad should be at most half of kernel size, but got pad=2 and kernel_size=2");
  Tensor one = Tensor::empty(std::vector<int64_t>{1, 1, 1, 1}, DType::Float32);
  EXPECT_EQ(error_of([&] { max_pool(one, {2}, IValue(), {0}, {1}, false); }),
            "Given input size: (1x1x1). Calculated output size: (1x0x0). Output size is too small");
  EXPECT_EQ(error_of([&] { max_pool(x, {0}, IValue(), {0}, {1}, false); }),
            "kernel size should be greater than zero, but got kH: 0 kW: 0");
  EXPECT_EQ(error_of([&] {
              max_pool(x, {2, 2, 2}, IValue(), {0}, {1}, false);
            }),
            "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  EXPECT_EQ(error_of([&] {
              run(OpId::max_pool2d, {x, ints({2}), IValue(), ints({0}), ints({1}), false, true});
            }),
            "max_pool2d: return_indices=True is not supported; TSL's max_pool2d returns the "
            "values only");
  EXPECT_EQ(error_of([&] {
              run(OpId::avg_pool2d, {x, ints({2}), IValue(), ints({0}), false, true, int64_t{0}});
            }),
            "divisor must be not zero");
  Tensor xl = Tensor::empty(std::vector<int64_t>{1, 1, 4, 4}, DType::Int64);
  EXPECT_EQ(error_of([&] { max_pool(xl, {2}, IValue(), {0}, {1}, false); }),
            "\"max_pool2d\" not implemented for 'Long'");
  // Every tap of this window falls outside the 1-wide input (dilation 2, padding 1).
  Tensor thin = Tensor::empty(std::vector<int64_t>{1, 1, 3, 1}, DType::Float32);
  EXPECT_EQ(error_of([&] {
              max_pool(thin, {1, 2}, ints({1}), {0, 1}, {1, 2}, false);
            }),
            "max_pool2d: the window at output (0, 0) covers only padding; use less padding or "
            "dilation");
}

}  // namespace
}  // namespace tsl
