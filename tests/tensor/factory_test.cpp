// Tests of the CPU factory kernels: dtype inference, argument checks, values, and the
// random streams, compared with numbers printed by PyTorch 1.13 (python3-torch).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/ivalue.h"
#include "runtime/tensor/tensor.h"
#include "tests/tensor/kernel_test_util.h"

namespace tsl {
namespace {

using test::error_of;
using test::values;

const IValue kNone;

Tensor call(OpId op, std::vector<IValue> args) {
  return call_op(op, std::move(args))[0].to_tensor();
}

// dtype=None, device=None, requires_grad=False.
std::vector<IValue> with_defaults(std::vector<IValue> args) {
  args.insert(args.end(), {kNone, kNone, IValue(false)});
  return args;
}

IValue ints(std::vector<int64_t> v) { return IValue::int_list(v); }

void expect_values(const Tensor& t, const std::vector<double>& expected, double tol = 0) {
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
  }
}

#define EXPECT_ERROR(stmt, text) \
  EXPECT_NE(error_of([&] { stmt; }).find(text), std::string::npos) << error_of([&] { stmt; })

TEST(Factory, ZerosOnesFullEmpty) {
  Tensor z = call(OpId::zeros, with_defaults({ints({2, 3})}));
  EXPECT_EQ(z.dtype(), DType::Float32);
  EXPECT_EQ(z.sizes(), DimVector({2, 3}));
  expect_values(z, std::vector<double>(6, 0.0));
  Tensor o = call(OpId::ones, {ints({3}), IValue(DType::Int64), kNone, IValue(false)});
  EXPECT_EQ(o.dtype(), DType::Int64);
  expect_values(o, {1, 1, 1});
  Tensor e = call(OpId::empty, with_defaults({ints({0, 4})}));
  EXPECT_EQ(e.numel(), 0);
  // full takes its dtype from the fill value, as torch.full does.
  EXPECT_EQ(call(OpId::full, with_defaults({ints({2}), IValue(int64_t{7})})).dtype(), DType::Int64);
  EXPECT_EQ(call(OpId::full, with_defaults({ints({2}), IValue(true)})).dtype(), DType::Bool);
  Tensor f = call(OpId::full, with_defaults({ints({2}), IValue(1.5)}));
  EXPECT_EQ(f.dtype(), DType::Float32);
  expect_values(f, {1.5, 1.5});
  Tensor s = call(OpId::scalar_tensor, with_defaults({IValue(int64_t{3})}));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.dtype(), DType::Float32);
}

TEST(Factory, ArgumentErrors) {
  EXPECT_ERROR(call(OpId::zeros, with_defaults({ints({-1, 2})})), "negative dimension -1");
  EXPECT_ERROR(call(OpId::zeros, {ints({2}), IValue(DType::Int64), kNone, IValue(true)}),
               "Only Tensors of floating point and complex dtype can require gradients");
  EXPECT_ERROR(
      call(OpId::zeros, {ints({2}), kNone, IValue(Device(DeviceType::CUDA)), IValue(false)}),
      "CUDA is not available");
  // Too large to allocate: a clean user error, not std::bad_alloc.
  EXPECT_ERROR(call(OpId::zeros, with_defaults({ints({1LL << 40, 1LL << 30})})), "cannot allocate");
  EXPECT_ERROR(call(OpId::zeros, with_defaults({ints({1LL << 62, 4})})), "cannot allocate");
  Tensor g = call(OpId::ones, {ints({2}), kNone, kNone, IValue(true)});
  EXPECT_TRUE(g.requires_grad());
}

TEST(Factory, TensorFromNestedLists) {
  IValue rows = IValue::list({IValue::list({IValue(int64_t{1}), IValue(int64_t{2})}),
                              IValue::list({IValue(int64_t{3}), IValue(int64_t{4})})});
  Tensor t = call(OpId::tensor, with_defaults({rows}));
  EXPECT_EQ(t.dtype(), DType::Int64);
  EXPECT_EQ(t.sizes(), DimVector({2, 2}));
  expect_values(t, {1, 2, 3, 4});
  // Any float makes float32; bools alone make bool; ints and bools make int64.
  Tensor mixed =
      call(OpId::tensor, with_defaults({IValue::list({IValue(int64_t{1}), IValue(2.5)})}));
  EXPECT_EQ(mixed.dtype(), DType::Float32);
  expect_values(mixed, {1, 2.5});
  EXPECT_EQ(
      call(OpId::tensor, with_defaults({IValue::list({IValue(true), IValue(false)})})).dtype(),
      DType::Bool);
  EXPECT_EQ(
      call(OpId::tensor, with_defaults({IValue::list({IValue(true), IValue(int64_t{2})})})).dtype(),
      DType::Int64);
  Tensor scalar = call(OpId::tensor, with_defaults({IValue(2.5)}));
  EXPECT_EQ(scalar.dim(), 0);
  Tensor empty = call(OpId::tensor, with_defaults({IValue::list({})}));
  EXPECT_EQ(empty.dtype(), DType::Float32);
  EXPECT_EQ(empty.sizes(), DimVector({0}));
  Tensor as_f64 = call(OpId::tensor, {IValue::list({IValue(int64_t{1})}), IValue(DType::Float64),
                                      kNone, IValue(true)});
  EXPECT_EQ(as_f64.dtype(), DType::Float64);
  EXPECT_TRUE(as_f64.requires_grad());
  // torch.tensor([1.7, -1.7], dtype=torch.int64) truncates: [1, -1].
  expect_values(call(OpId::tensor, {IValue::list({IValue(1.7), IValue(-1.7)}), IValue(DType::Int64),
                                    kNone, IValue(false)}),
                {1, -1});
}

TEST(Factory, TensorRaggedNamesTheShape) {
  IValue ragged = IValue::list(
      {IValue::list({IValue(int64_t{1}), IValue(int64_t{2})}), IValue::list({IValue(int64_t{3})})});
  std::string msg = error_of([&] { call(OpId::tensor, with_defaults({ragged})); });
  EXPECT_NE(msg.find("expected sequence of length 2 at dim 1 (got 1)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2, 2]"), std::string::npos) << msg;
  IValue deep = IValue::list({IValue(int64_t{1}), IValue::list({IValue(int64_t{2})})});
  EXPECT_ERROR(call(OpId::tensor, with_defaults({deep})), "expected a number at dim 1");
  EXPECT_ERROR(call(OpId::tensor, with_defaults({IValue("x")})), "expected a number");
}

TEST(Factory, Arange) {
  Tensor a = call(OpId::arange, with_defaults({IValue(int64_t{5})}));
  EXPECT_EQ(a.dtype(), DType::Int64);
  expect_values(a, {0, 1, 2, 3, 4});
  // torch.arange(0, 1, 0.3) -> float32 [0.0, 0.30000001192092896, 0.6000000238418579,
  // 0.8999999761581421].
  Tensor f = call(OpId::arange_start,
                  with_defaults({IValue(int64_t{0}), IValue(int64_t{1}), IValue(0.3)}));
  EXPECT_EQ(f.dtype(), DType::Float32);
  expect_values(f, {0.0, 0.30000001192092896, 0.6000000238418579, 0.8999999761581421});
  Tensor down = call(OpId::arange_start,
                     with_defaults({IValue(int64_t{5}), IValue(int64_t{0}), IValue(int64_t{-2})}));
  expect_values(down, {5, 3, 1});
  Tensor f64 = call(OpId::arange_start, {IValue(0.0), IValue(1.0), IValue(0.25),
                                         IValue(DType::Float64), kNone, IValue(false)});
  expect_values(f64, {0, 0.25, 0.5, 0.75});
  EXPECT_ERROR(call(OpId::arange_start,
                    with_defaults({IValue(int64_t{0}), IValue(int64_t{1}), IValue(int64_t{0})})),
               "step must be nonzero");
  EXPECT_ERROR(call(OpId::arange_start,
                    with_defaults({IValue(int64_t{5}), IValue(int64_t{1}), IValue(int64_t{1})})),
               "upper bound and larger bound inconsistent with step sign");
  EXPECT_EQ(call(OpId::arange, with_defaults({IValue(int64_t{0})})).numel(), 0);
}

TEST(Factory, LinspaceAndEye) {
  // torch.linspace(0, 10, 5) -> float32 [0.0, 2.5, 5.0, 7.5, 10.0]
  Tensor l = call(OpId::linspace,
                  with_defaults({IValue(int64_t{0}), IValue(int64_t{10}), IValue(int64_t{5})}));
  EXPECT_EQ(l.dtype(), DType::Float32);
  expect_values(l, {0, 2.5, 5, 7.5, 10});
  expect_values(call(OpId::linspace, with_defaults({IValue(2.0), IValue(3.0), IValue(int64_t{1})})),
                {2.0});
  EXPECT_ERROR(call(OpId::linspace, with_defaults({IValue(0.0), IValue(1.0), IValue(int64_t{-1})})),
               "number of steps must be non-negative");
  Tensor e = call(OpId::eye, with_defaults({IValue(int64_t{2}), IValue(int64_t{3})}));
  EXPECT_EQ(e.sizes(), DimVector({2, 3}));
  expect_values(e, {1, 0, 0, 0, 1, 0});
  EXPECT_ERROR(call(OpId::eye, with_defaults({IValue(int64_t{-1}), kNone})),
               "n must be greater or equal to 0, got -1");
}

TEST(Factory, LikeForms) {
  Tensor x = Tensor::from_vector<int64_t>({1, 2, 3});
  Tensor z = call(OpId::zeros_like, with_defaults({IValue(x)}));
  EXPECT_EQ(z.dtype(), DType::Int64);
  expect_values(z, {0, 0, 0});
  Tensor f = call(OpId::full_like, with_defaults({IValue(x), IValue(2.5)}));
  EXPECT_EQ(f.dtype(), DType::Int64);  // torch.full_like(int tensor, 2.5) -> [2, 2, 2]
  expect_values(f, {2, 2, 2});
  Tensor o = call(OpId::ones_like, {IValue(x), IValue(DType::Float64), kNone, IValue(false)});
  EXPECT_EQ(o.dtype(), DType::Float64);
  EXPECT_ERROR(call(OpId::rand_like, with_defaults({IValue(x)})), "not implemented for 'Long'");
}

void seed(int64_t s) { call_op(OpId::manual_seed, {IValue(s)}); }

// All expected numbers below: torch.manual_seed(0) then the same call in PyTorch 1.13.
TEST(Random, RandMatchesPyTorch) {
  seed(0);
  expect_values(call(OpId::rand, with_defaults({ints({5})})),
                {0.49625658988952637, 0.7682217955589294, 0.08847743272781372, 0.13203048706054688,
                 0.30742281675338745});
  seed(0);
  expect_values(call(OpId::rand, {ints({3}), IValue(DType::Float64), kNone, IValue(false)}),
                {0.9700530018065531, 0.707819864399788, 0.45938294312745087});
  // torch.manual_seed(123456789012); torch.rand(2) (seeds use their low 32 bits).
  seed(123456789012);
  expect_values(call(OpId::rand, with_defaults({ints({2})})),
                {0.19758015871047974, 0.0434032678604126});
}

TEST(Random, RandnSmallUsesCachedPairs) {
  seed(0);
  expect_values(call(OpId::randn, with_defaults({ints({3})})),
                {1.5409960746765137, -0.293428897857666, -2.1787893772125244});
  seed(0);
  expect_values(call(OpId::randn, {ints({3}), IValue(DType::Float64), kNone, IValue(false)}),
                {1.5409961082440433, -0.2934289057609464, -2.1787893820745574}, 1e-15);
  // The cached second sample carries over between calls: randn(2) then randn(3).
  seed(0);
  call(OpId::randn, with_defaults({ints({2})}));
  expect_values(call(OpId::randn, with_defaults({ints({3})})),
                {-2.1787893772125244, 0.5684312582015991, -1.0845223665237427});
}

TEST(Random, RandnLargeUsesBlocksOf16) {
  seed(0);
  // float32: PyTorch uses vectorized log/sin/cos here, so allow a few ulps.
  expect_values(
      call(OpId::randn, with_defaults({ints({20})})),
      {-1.1258398294448853, -1.152360200881958,  -0.2505785822868347, -0.4338788092136383,
       0.5988394618034363,  -1.5550950765609741, -0.3413603901863098, 1.85300612449646,
       0.46809640526771545, -0.1577124446630478, 1.4436601400375366,  0.26604941487312317,
       1.3893661499023438,  1.586334228515625,   0.946298360824585,   -0.843676745891571,
       0.9318265914916992,  1.2590092420578003,  2.0049805641174316,  0.05373690277338028},
      1e-6);
  seed(0);
  expect_values(call(OpId::randn, {ints({17}), IValue(DType::Float64), kNone, IValue(false)}),
                {-2.310411800234176, -0.6332746088675096, -1.2609246557194385, -0.726951062065411,
                 -0.019964750907762653, 0.2102998901016947, 0.17718935139366584, -0.830510051008449,
                 0.23871805816817063, -0.2426793824588577, -0.7730112772958181, -1.5951814880783068,
                 -0.6870036940435463, 1.4880743158106724, -0.4484158047114511, -0.8910030351707375,
                 0.6748575435940039},
                1e-14);
}

TEST(Random, Randint) {
  seed(0);
  Tensor r =
      call(OpId::randint, with_defaults({IValue(int64_t{0}), IValue(int64_t{10}), ints({5})}));
  EXPECT_EQ(r.dtype(), DType::Int64);
  expect_values(r, {4, 9, 3, 0, 3});
  seed(0);
  // A range of 2^41 draws 64 bits per element.
  expect_values(call(OpId::randint, with_defaults({IValue(-(int64_t{1} << 40)),
                                                   IValue(int64_t{1} << 40), ints({3})})),
                {-358231004625.0, -593374360384.0, 291447657211.0});
  seed(0);
  expect_values(call(OpId::randint_high, with_defaults({IValue(int64_t{10}), ints({5})})),
                {4, 9, 3, 0, 3});
  EXPECT_ERROR(
      call(OpId::randint, with_defaults({IValue(int64_t{5}), IValue(int64_t{2}), ints({3})})),
      "random_ expects 'from' to be less than 'to', but got from=5 >= to=2");
  EXPECT_ERROR(call(OpId::rand, {ints({2}), IValue(DType::Int64), kNone, IValue(false)}),
               "not implemented for 'Long'");
}

TEST(Random, Dropout) {
  int64_t eight = 8;
  Tensor x = Tensor::empty(std::span<const int64_t>(&eight, 1), DType::Float32);
  for (int i = 0; i < 8; ++i) x.data_ptr<float>()[i] = 1.0f;
  // torch.manual_seed(0); F.dropout(torch.ones(8), 0.3)
  seed(0);
  Tensor d = call_op(OpId::dropout, {IValue(x), IValue(0.3), IValue(true)})[0].to_tensor();
  expect_values(d, {0.0, 0.0, 1.4285714626312256, 0.0, 1.4285714626312256, 0.0, 1.4285714626312256,
                    1.4285714626312256});
  Tensor same = call_op(OpId::dropout, {IValue(x), IValue(0.3), IValue(false)})[0].to_tensor();
  EXPECT_TRUE(same.is_same(x));
  expect_values(call_op(OpId::dropout, {IValue(x), IValue(1.0), IValue(true)})[0].to_tensor(),
                std::vector<double>(8, 0.0));
  EXPECT_ERROR(call_op(OpId::dropout, {IValue(x), IValue(1.5), IValue(true)}),
               "dropout probability has to be between 0 and 1, but got 1.5");
}

}  // namespace
}  // namespace tsl

namespace tsl {
namespace {

// PyTorch vectorizes these fills 8 floats at a time; these values pin its rounding.
TEST(Factory, LinspaceAndArangeRoundLikePyTorch) {
  // torch.linspace(-3.3, 7.1, 37).tolist(). Within one float32 ulp: whether the
  // compiler contracts `base + k * step` into an FMA (it does at -O3 with AVX-512, as
  // torch's build does; not in the -O2 sanitizer build) decides the last bit.
  expect_values(
      call(OpId::linspace, with_defaults({IValue(-3.3), IValue(7.1), IValue(int64_t{37})})),
      {-3.299999952316284,  -3.01111102104187,   -2.722222328186035,  -2.433333396911621,
       -2.144444465637207,  -1.855555534362793,  -1.5666667222976685, -1.277777910232544,
       -0.9888889789581299, -0.7000001072883606, -0.4111112356185913, -0.12222236394882202,
       0.16666650772094727, 0.45555543899536133, 0.7444442510604858,  1.0333330631256104,
       1.3222219944000244,  1.6111109256744385,  1.899999737739563,   2.1888885498046875,
       2.4777774810791016,  2.7666664123535156,  3.0555553436279297,  3.3444440364837646,
       3.633333444595337,   3.922222375869751,   4.211111068725586,   4.5,
       4.788888931274414,   5.077777862548828,   5.366666793823242,   5.655555725097656,
       5.94444465637207,    6.233333110809326,   6.52222204208374,    6.811110973358154,
       7.099999904632568},
      1e-6);
  // torch.arange(0.1, 5.3, 0.17).tolist()
  expect_values(call(OpId::arange_start, with_defaults({IValue(0.1), IValue(5.3), IValue(0.17)})),
                {0.10000000149011612, 0.27000001072883606, 0.4399999976158142,
                 0.6100000143051147,  0.7800000309944153,  0.949999988079071,
                 1.1200000047683716,  1.2899999618530273,  1.4600000381469727,
                 1.6299999952316284,  1.8000000715255737,  1.9700000286102295,
                 2.140000104904175,   2.309999942779541,   2.4800000190734863,
                 2.6500000953674316,  2.819999933242798,   2.990000009536743,
                 3.1600000858306885,  3.3299999237060547,  3.5,
                 3.6700000762939453,  3.8399999141693115,  4.010000228881836,
                 4.179999828338623,   4.349999904632568,   4.519999980926514,
                 4.690000057220459,   4.860000133514404,   5.03000020980835,
                 5.199999809265137});
}

}  // namespace
}  // namespace tsl
