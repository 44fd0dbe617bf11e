// Tests of the CPU elementwise kernels: values against numbers printed by PyTorch 1.13
// (python3-torch), PyTorch's type promotion table, broadcasting, strided and
// zero-size inputs, in-place updates and the errors PyTorch raises.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "runtime/kernels/cpu/loops.h"
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
Tensor unary(OpId op, const Tensor& x) { return call(op, {IValue(x)}); }
Tensor binary(OpId op, const Tensor& a, const Tensor& b) {
  return call(op, {IValue(a), IValue(b)});
}
Tensor add(const IValue& a, const IValue& b) { return call(OpId::add, {a, b, IValue(int64_t{1})}); }

Tensor f32(std::vector<float> v) { return Tensor::from_vector(v); }
Tensor f64(std::vector<double> v) { return Tensor::from_vector(v); }
Tensor i64(std::vector<int64_t> v) { return Tensor::from_vector(v); }
Tensor shaped(Tensor t, std::vector<int64_t> sizes) {
  return t.as_strided(sizes, contiguous_strides(sizes), 0);
}

// Float32 results may differ from PyTorch's by an ulp or two (different libm).
void expect_values(const Tensor& t, const std::vector<double>& expected, double rel = 5e-7) {
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " = " << got[i];
    } else if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], rel * std::abs(expected[i]) + 1e-12) << "element " << i;
    }
  }
}

#define EXPECT_ERROR(stmt, text) \
  EXPECT_NE(error_of([&] { stmt; }).find(text), std::string::npos) << error_of([&] { stmt; })

const std::vector<float> kUnaryInput = {-2.5f, -1.0f, -0.5f, 0.0f, 0.3f, 0.5f, 1.5f, 2.5f, 3.7f};

// torch.OP(torch.tensor([-2.5, -1.0, -0.5, 0.0, 0.3, 0.5, 1.5, 2.5, 3.7])).tolist()
const std::vector<std::pair<OpId, std::vector<double>>> kUnaryExpected = {
    {OpId::neg, {2.5, 1.0, 0.5, -0.0, -0.30000001192092896, -0.5, -1.5, -2.5, -3.700000047683716}},
    {OpId::abs, {2.5, 1.0, 0.5, 0.0, 0.30000001192092896, 0.5, 1.5, 2.5, 3.700000047683716}},
    {OpId::exp,
     {0.08208499848842621, 0.3678794503211975, 0.6065306663513184, 1.0, 1.3498587608337402,
      1.6487212181091309, 4.481688976287842, 12.182494163513184, 40.44730758666992}},
    {OpId::exp2,
     {0.1767766922712326, 0.5, 0.7071067690849304, 1.0, 1.2311444282531738, 1.4142135381698608,
      2.8284270763397217, 5.656854152679443, 12.996038436889648}},
    {OpId::log,
     {NAN, NAN, NAN, -INFINITY, -1.2039728164672852, -0.6931471824645996, 0.40546509623527527,
      0.9162907600402832, 1.3083328008651733}},
    {OpId::log2,
     {NAN, NAN, NAN, -INFINITY, -1.736965537071228, -1.0, 0.5849624872207642, 1.3219281435012817,
      1.8875253200531006}},
    {OpId::log10,
     {NAN, NAN, NAN, -INFINITY, -0.5228787064552307, -0.3010300099849701, 0.1760912537574768,
      0.3979400098323822, 0.5682017207145691}},
    {OpId::log1p,
     {NAN, -INFINITY, -0.6931471824645996, 0.0, 0.2623642683029175, 0.40546509623527527,
      0.9162907600402832, 1.2527629137039185, 1.5475624799728394}},
    {OpId::expm1,
     {-0.9179149866104126, -0.6321205496788025, -0.39346933364868164, 0.0, 0.349858820438385,
      0.6487212777137756, 3.481688976287842, 11.182494163513184, 39.44730758666992}},
    {OpId::sqrt,
     {NAN, NAN, NAN, 0.0, 0.547722578048706, 0.7071067690849304, 1.2247449159622192,
      1.5811388492584229, 1.9235384464263916}},
    {OpId::rsqrt,
     {NAN, NAN, NAN, INFINITY, 1.8257417678833008, 1.4142135381698608, 0.8164965510368347,
      0.6324555277824402, 0.5198752284049988}},
    {OpId::sin,
     {-0.5984721183776855, -0.8414709568023682, -0.4794255495071411, 0.0, 0.29552021622657776,
      0.4794255495071411, 0.9974949955940247, 0.5984721183776855, -0.5298361778259277}},
    {OpId::cos,
     {-0.8011435866355896, 0.5403023362159729, 0.8775825500488281, 1.0, 0.9553365111351013,
      0.8775825500488281, 0.07073719799518585, -0.8011435866355896, -0.8481000065803528}},
    {OpId::tan,
     {0.7470223307609558, -1.5574077367782593, -0.5463024973869324, 0.0, 0.30933627486228943,
      0.5463024973869324, 14.101420402526855, -0.7470223307609558, 0.6247331500053406}},
    {OpId::asin,
     {NAN, -1.5707963705062866, -0.5235987901687622, 0.0, 0.30469265580177307, 0.5235987901687622,
      NAN, NAN, NAN}},
    {OpId::acos,
     {NAN, 3.1415927410125732, 2.094395160675049, 1.5707963705062866, 1.2661036252975464,
      1.0471975803375244, NAN, NAN, NAN}},
    {OpId::atan,
     {-1.1902899742126465, -0.7853981256484985, -0.46364760398864746, 0.0, 0.29145681858062744,
      0.46364760398864746, 0.9827937483787537, 1.1902899742126465, 1.3068325519561768}},
    {OpId::sinh,
     {-6.050204753875732, -1.175201177597046, -0.5210952758789062, 0.0, 0.30452030897140503,
      0.5210952758789062, 2.129279375076294, 6.050204753875732, 20.211292266845703}},
    {OpId::cosh,
     {6.132289409637451, 1.5430805683135986, 1.1276259422302246, 1.0, 1.04533851146698,
      1.1276259422302246, 2.352409601211548, 6.132289409637451, 20.23601531982422}},
    {OpId::erf,
     {-0.9995930194854736, -0.8427007794380188, -0.5204998850822449, 0.0, 0.3286267817020416,
      0.5204998850822449, 0.9661051630973816, 0.9995930194854736, 0.9999998211860657}},
    {OpId::reciprocal,
     {-0.4000000059604645, -1.0, -2.0, INFINITY, 3.3333332538604736, 2.0, 0.6666666865348816,
      0.4000000059604645, 0.2702702581882477}},
    {OpId::square,
     {6.25, 1.0, 0.25, 0.0, 0.09000000357627869, 0.25, 2.25, 6.25, 13.690000534057617}},
    {OpId::sign, {-1.0, -1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0}},
    {OpId::floor, {-3.0, -1.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0}},
    {OpId::ceil, {-2.0, -1.0, -0.0, 0.0, 1.0, 1.0, 2.0, 3.0, 4.0}},
    {OpId::round, {-2.0, -1.0, -0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 4.0}},
    {OpId::trunc, {-2.0, -1.0, -0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0}},
    {OpId::frac, {-0.5, 0.0, -0.5, 0.0, 0.30000001192092896, 0.5, 0.5, 0.5, 0.7000000476837158}},
    {OpId::tanh,
     {-0.9866142868995667, -0.7615941762924194, -0.46211716532707214, 0.0, 0.29131263494491577,
      0.46211716532707214, 0.9051482677459717, 0.9866142868995667, 0.998778223991394}},
    {OpId::sigmoid,
     {0.07585817575454712, 0.2689414322376251, 0.3775406777858734, 0.5, 0.5744425058364868,
      0.622459352016449, 0.8175744414329529, 0.9241418242454529, 0.9758729934692383}},
    {OpId::relu, {0.0, 0.0, 0.0, 0.0, 0.30000001192092896, 0.5, 1.5, 2.5, 3.700000047683716}},
    {OpId::silu,
     {-0.189645454287529, -0.2689414322376251, -0.1887703388929367, 0.0, 0.172332763671875,
      0.3112296760082245, 1.226361632347107, 2.310354471206665, 3.6107301712036133}},
};

TEST(Unary, ValuesMatchPyTorch) {
  Tensor x = f32(kUnaryInput);
  for (const auto& [op, expected] : kUnaryExpected) {
    SCOPED_TRACE(std::string(op_info(op).name));
    Tensor y = unary(op, x);
    EXPECT_EQ(y.dtype(), DType::Float32);
    expect_values(y, expected);
  }
}

TEST(Unary, ActivationsWithArguments) {
  Tensor x = f32(kUnaryInput);
  // F.gelu(x), F.gelu(x, approximate='tanh'), F.softplus(x, beta=2, threshold=3),
  // F.elu(x, alpha=0.7), F.leaky_relu(x, 0.1), torch.clamp(x, -1, 2).
  expect_values(
      call(OpId::gelu, {IValue(x), IValue("none")}),
      {-0.015524178743362427, -0.1586552858352661, -0.1542687863111496, 0.0, 0.1853734254837036,
       0.3457311987876892, 1.3997890949249268, 2.48447585105896, 3.699601173400879});
  expect_values(
      call(OpId::gelu, {IValue(x), IValue("tanh")}),
      {-0.015084296464920044, -0.15880799293518066, -0.1542859971523285, 0.0, 0.18537093698978424,
       0.3457140028476715, 1.3995715379714966, 2.4849157333374023, 3.69972825050354},
      2e-6);
  expect_values(call(OpId::softplus, {IValue(x), IValue(int64_t{2}), IValue(int64_t{3})}),
                {0.003357674228027463, 0.06346400082111359, 0.15663084387779236, 0.3465735912322998,
                 0.5187439918518066, 0.65663081407547, 1.5242936611175537, 2.5, 3.700000047683716});
  expect_values(call(OpId::elu, {IValue(x), IValue(0.7)}),
                {-0.642540454864502, -0.44248437881469727, -0.27542853355407715, 0.0,
                 0.30000001192092896, 0.5, 1.5, 2.5, 3.700000047683716});
  expect_values(call(OpId::leaky_relu, {IValue(x), IValue(0.1)}),
                {-0.25, -0.10000000149011612, -0.05000000074505806, 0.0, 0.30000001192092896, 0.5,
                 1.5, 2.5, 3.700000047683716});
  expect_values(call(OpId::clamp, {IValue(x), IValue(int64_t{-1}), IValue(int64_t{2})}),
                {-1.0, -1.0, -0.5, 0.0, 0.30000001192092896, 0.5, 1.5, 2.0, 2.0});
  EXPECT_ERROR(call(OpId::gelu, {IValue(x), IValue("fast")}), "approximate");
  // F.hardtanh(x, -1.0, 2.0); an int64 tensor keeps its dtype, its bounds truncated.
  expect_values(call(OpId::hardtanh, {IValue(x), IValue(-1.0), IValue(2.0)}),
                {-1.0, -1.0, -0.5, 0.0, 0.30000001192092896, 0.5, 1.5, 2.0, 2.0});
  Tensor h = call(OpId::hardtanh, {IValue(i64({-3, 0, 3})), IValue(-2.5), IValue(2.5)});
  EXPECT_EQ(h.dtype(), DType::Int64);
  expect_values(h, {-2, 0, 2});
  EXPECT_ERROR(call(OpId::hardtanh, {IValue(unary(OpId::isnan, x)), IValue(-1.0), IValue(1.0)}),
               "Bool inputs not supported for hardtanh");
  // torch.logit(p) and torch.logit(p, 0.2); int64 inputs compute in float32.
  Tensor p = f32({0.0f, 1e-7f, 0.1f, 0.25f, 0.5f, 0.7f, 0.9f, 0.999f, 1.0f});
  expect_values(call(OpId::logit, {IValue(p), IValue()}),
                {-INFINITY, -16.11809539794922, -2.1972246170043945, -1.0986123085021973, 0.0,
                 0.8472978472709656, 2.1972243785858154, 6.906767845153809, INFINITY});
  expect_values(
      call(OpId::logit, {IValue(p), IValue(0.2)}),
      {-1.3862943649291992, -1.3862943649291992, -1.3862943649291992, -1.0986123085021973, 0.0,
       0.8472978472709656, 1.3862944841384888, 1.3862944841384888, 1.3862944841384888});
  Tensor q = call(OpId::logit, {IValue(i64({0, 1, 2})), IValue()});
  EXPECT_EQ(q.dtype(), DType::Float32);
  expect_values(q, {-INFINITY, INFINITY, NAN});
}

TEST(Unary, SpecialValues) {
  // torch.round([0.5, 1.5, 2.5, -0.5, -1.5]) rounds half to even.
  expect_values(unary(OpId::round, f32({0.5f, 1.5f, 2.5f, -0.5f, -1.5f})), {0, 2, 2, -0.0, -2});
  expect_values(unary(OpId::relu, f32({NAN})), {NAN});
  expect_values(unary(OpId::sign, f32({NAN, -0.0f})), {0, 0});
  // torch.clamp([nan, 5], 0, 1) -> [nan, 1]; clamp(x, 2, 1) -> max wins: [1, 1].
  expect_values(call(OpId::clamp, {IValue(f32({NAN, 5})), IValue(int64_t{0}), IValue(int64_t{1})}),
                {NAN, 1});
  expect_values(call(OpId::clip, {IValue(f32({0.5, 5})), IValue(int64_t{2}), IValue(int64_t{1})}),
                {1, 1});
  expect_values(call(OpId::clamp, {IValue(f32({-3, 3})), kNone, IValue(0.5)}), {-3, 0.5});
  Tensor flags = f32({NAN, INFINITY, -INFINITY, 1.0f});
  expect_values(unary(OpId::isnan, flags), {1, 0, 0, 0});
  expect_values(unary(OpId::isinf, flags), {0, 1, 1, 0});
  expect_values(unary(OpId::isfinite, flags), {0, 0, 0, 1});
  EXPECT_EQ(unary(OpId::isnan, flags).dtype(), DType::Bool);
  expect_values(unary(OpId::logical_not, f32({0.0f, 2.0f, NAN})), {1, 0, 0});
  // exp near float32 overflow and in the denormal range stays exact (the SIMD path
  // hands these to std::exp).
  std::vector<float> edge = {88.5f, -87.6846542f, 100.0f, -200.0f, 88.3762741f};
  std::vector<double> want;
  for (float v : edge) want.push_back(std::exp(v));
  expect_values(unary(OpId::exp, f32(edge)), want, 0);
}

TEST(Unary, IntAndBoolDtypes) {
  Tensor i = i64({-3, 0, 4});
  // torch.exp(torch.tensor([-3, 0, 4])) is float32.
  Tensor e = unary(OpId::exp, i);
  EXPECT_EQ(e.dtype(), DType::Float32);
  expect_values(e, {0.049787066876888275, 1.0, 54.59815216064453});
  expect_values(unary(OpId::sqrt, i), {NAN, 0, 2});
  for (OpId op : {OpId::neg, OpId::abs, OpId::sign, OpId::floor, OpId::ceil, OpId::round,
                  OpId::trunc, OpId::square, OpId::relu}) {
    EXPECT_EQ(unary(op, i).dtype(), DType::Int64) << op_info(op).name;
  }
  expect_values(unary(OpId::sign, i), {-1, 0, 1});
  expect_values(unary(OpId::abs, i), {3, 0, 4});
  expect_values(unary(OpId::relu, i), {0, 0, 4});
  expect_values(unary(OpId::bitwise_not, i), {2, -1, -5});
  // torch.clamp(int, 0.5) is float32; clamp(int, max=2) stays int64.
  Tensor c = call(OpId::clamp, {IValue(i), IValue(0.5), kNone});
  EXPECT_EQ(c.dtype(), DType::Float32);
  expect_values(c, {0.5, 0.5, 4});
  EXPECT_EQ(call(OpId::clamp, {IValue(i), kNone, IValue(int64_t{2})}).dtype(), DType::Int64);

  Tensor b = Tensor::from_vector<bool>({true, false});
  EXPECT_EQ(unary(OpId::sigmoid, b).dtype(), DType::Float32);
  EXPECT_EQ(unary(OpId::square, b).dtype(), DType::Int64);
  EXPECT_EQ(unary(OpId::sign, b).dtype(), DType::Bool);
  expect_values(unary(OpId::bitwise_not, b), {0, 1});
  EXPECT_ERROR(unary(OpId::neg, b),
               "Negation, the `-` operator, on a bool tensor is not supported");
  EXPECT_ERROR(unary(OpId::abs, b), "not implemented for 'Bool'");
  EXPECT_ERROR(unary(OpId::floor, b), "not implemented for 'Bool'");
  EXPECT_ERROR(unary(OpId::relu, b), "Boolean inputs not supported for relu");
  EXPECT_ERROR(unary(OpId::frac, i), "not implemented for 'Long'");
  EXPECT_ERROR(unary(OpId::silu, i), "not implemented for 'Long'");
  EXPECT_ERROR(unary(OpId::bitwise_not, f32({1})), "not implemented for 'Float'");
  EXPECT_ERROR(call(OpId::clamp, {IValue(i), kNone, kNone}),
               "At least one of 'min' or 'max' must not be None");
}

TEST(Unary, StridedZeroSizeAndZeroDim) {
  // A transposed [3, 2] view of [[1, 2, 3], [4, 5, 6]].
  Tensor base = f32({1, 2, 3, 4, 5, 6});
  int64_t sizes[] = {3, 2}, strides[] = {1, 3};
  Tensor t = base.as_strided(sizes, strides, 0);
  Tensor y = unary(OpId::neg, t);
  EXPECT_TRUE(y.is_contiguous());
  expect_values(y, {-1, -4, -2, -5, -3, -6});
  int64_t zero[] = {0, 3};
  EXPECT_EQ(unary(OpId::exp, Tensor::empty(zero, DType::Float32)).sizes(), DimVector({0, 3}));
  Tensor s = unary(OpId::exp, Tensor::scalar(Scalar(1.0), DType::Float64));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.dtype(), DType::Float64);
  expect_values(s, {std::exp(1.0)}, 0);
}

TEST(Unary, LargeParallelMatchesSerial) {
  // Above 2 * kParallelGrain elements the loop is split across threads.
  std::vector<float> v(100003);
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(k % 97) * 0.1f - 4.0f;
  Tensor y = unary(OpId::tanh, f32(v));
  const float* p = y.data_ptr<float>();
  for (size_t k = 0; k < v.size(); k += 997) {
    EXPECT_NEAR(p[k], std::tanh(v[k]), 1e-6 * std::abs(std::tanh(v[k])) + 1e-12) << k;
  }
  // gelu's vectorized float32 path in chunks, against the scalar formula (erf within
  // PyTorch's approximation error).
  Tensor g = call(OpId::gelu, {IValue(f32(v)), IValue("none")});
  const float* q = g.data_ptr<float>();
  for (size_t k = 0; k < v.size(); k += 991) {
    double ref = v[k] * 0.5 * (1 + std::erf(v[k] * M_SQRT1_2));
    EXPECT_NEAR(q[k], ref, 1e-6 * std::abs(v[k]) + 1e-7) << k;
  }
}

// ---- Binary ops -----------------------------------------------------------------------

const std::vector<float> kA = {-3.5f, -2.0f, 0.0f, 1.5f, 7.0f, 2.0f};
const std::vector<float> kB = {2.0f, -1.5f, 3.0f, 0.0f, -2.0f, 2.0f};

TEST(Binary, FloatValuesMatchPyTorch) {
  Tensor a = f32(kA), b = f32(kB);
  // torch.add(a, b, alpha=2), torch.sub(a, b, alpha=0.5), ...
  expect_values(call(OpId::add, {IValue(a), IValue(b), IValue(int64_t{2})}),
                {0.5, -5.0, 6.0, 1.5, 3.0, 6.0});
  expect_values(call(OpId::sub, {IValue(a), IValue(b), IValue(0.5)}),
                {-4.5, -1.25, -1.5, 1.5, 8.0, 1.0});
  expect_values(binary(OpId::mul, a, b), {-7.0, 3.0, 0.0, 0.0, -14.0, 4.0});
  expect_values(call(OpId::div, {IValue(a), IValue(b), kNone}),
                {-1.75, 1.3333333730697632, 0.0, INFINITY, -3.5, 1.0});
  expect_values(call(OpId::div, {IValue(a), IValue(b), IValue("trunc")}),
                {-1.0, 1.0, 0.0, INFINITY, -3.0, 1.0});
  expect_values(call(OpId::div, {IValue(a), IValue(b), IValue("floor")}),
                {-2.0, 1.0, 0.0, INFINITY, -4.0, 1.0});
  expect_values(binary(OpId::floor_divide, a, b), {-2.0, 1.0, 0.0, INFINITY, -4.0, 1.0});
  expect_values(binary(OpId::remainder, a, b), {0.5, -0.5, 0.0, NAN, -1.0, 0.0});
  expect_values(binary(OpId::atan2, a, b),
                {-1.0516501665115356, -2.2142975330352783, 0.0, 1.5707963705062866,
                 1.8490959405899048, 0.7853981852531433});
  expect_values(binary(OpId::maximum, a, b), {2.0, -1.5, 3.0, 1.5, 7.0, 2.0});
  expect_values(binary(OpId::minimum, a, b), {-3.5, -2.0, 0.0, 0.0, -2.0, 2.0});
  expect_values(binary(OpId::max_other, a, b), {2.0, -1.5, 3.0, 1.5, 7.0, 2.0});
  expect_values(binary(OpId::min_other, a, b), {-3.5, -2.0, 0.0, 0.0, -2.0, 2.0});
  expect_values(binary(OpId::pow, a, b), {12.25, NAN, 0.0, 1.0, 0.020408162847161293, 4.0});
  expect_values(binary(OpId::maximum, f32({NAN, 1}), f32({1, NAN})), {NAN, NAN});
  EXPECT_ERROR(call(OpId::div, {IValue(a), IValue(b), IValue("round")}),
               "rounding_mode to be one of None, 'trunc', or 'floor'");
}

TEST(Binary, PowWithScalarExponents) {
  Tensor x = f32({0.5, 2.0, 9.0});
  // torch.pow(x, 0.5), torch.pow(x, -2), torch.pow(x, 1.7)
  expect_values(binary(OpId::pow, x, wrap_number(IValue(0.5))),
                {0.7071067690849304, 1.4142135381698608, 3.0});
  expect_values(binary(OpId::pow, x, wrap_number(IValue(int64_t{-2}))),
                {4.0, 0.25, 0.012345679104328156});
  expect_values(binary(OpId::pow, x, wrap_number(IValue(1.7))),
                {0.30778610706329346, 3.249009609222412, 41.89982986450195});
  // 2 ** tensor: torch.pow(2, [0.5, 3.0]); int base and int exponents stay int64.
  expect_values(binary(OpId::pow, wrap_number(IValue(int64_t{2})), f32({0.5, 3.0})),
                {1.4142135381698608, 8.0});
  EXPECT_EQ(binary(OpId::pow, wrap_number(IValue(int64_t{2})), i64({1, 3})).dtype(), DType::Int64);
  EXPECT_ERROR(binary(OpId::pow, i64({2}), wrap_number(IValue(int64_t{-1}))),
               "Integers to negative integer powers are not allowed.");
}

TEST(Binary, IntValuesMatchPyTorch) {
  Tensor a = i64({-7, -3, 0, 5, 7, 9}), b = i64({2, 2, 3, -4, -2, 4});
  Tensor s = call(OpId::add, {IValue(a), IValue(b), IValue(int64_t{2})});
  EXPECT_EQ(s.dtype(), DType::Int64);
  expect_values(s, {-3, 1, 6, -3, 3, 17});
  expect_values(call(OpId::sub, {IValue(a), IValue(b), IValue(int64_t{3})}),
                {-13, -9, -9, 17, 13, -3});
  expect_values(binary(OpId::mul, a, b), {-14, -6, 0, -20, -14, 36});
  Tensor d = call(OpId::div, {IValue(a), IValue(b), kNone});
  EXPECT_EQ(d.dtype(), DType::Float32);
  expect_values(d, {-3.5, -1.5, 0.0, -1.25, -3.5, 2.25});
  Tensor t = call(OpId::div, {IValue(a), IValue(b), IValue("trunc")});
  EXPECT_EQ(t.dtype(), DType::Int64);
  expect_values(t, {-3, -1, 0, -1, -3, 2});
  expect_values(call(OpId::div, {IValue(a), IValue(b), IValue("floor")}), {-4, -2, 0, -2, -4, 2});
  expect_values(binary(OpId::floor_divide, a, b), {-4, -2, 0, -2, -4, 2});
  expect_values(binary(OpId::remainder, a, b), {1, 1, 0, -3, -1, 1});
  // torch.pow(a, b) with tensor exponents: negative powers follow powi.
  expect_values(binary(OpId::pow, a, b), {49, 9, 0, 0, 0, 6561});
  expect_values(binary(OpId::bitwise_and, a, b), {0, 0, 0, 4, 6, 0});
  expect_values(binary(OpId::bitwise_or, a, b), {-5, -1, 3, -3, -1, 13});
  expect_values(binary(OpId::bitwise_xor, a, b), {-5, -1, 3, -7, -7, 13});
  EXPECT_ERROR(binary(OpId::floor_divide, a, i64({0, 1, 1, 1, 1, 1})), "ZeroDivisionError");
  EXPECT_ERROR(binary(OpId::remainder, a, i64({0, 1, 1, 1, 1, 1})), "ZeroDivisionError");
  // INT64_MIN // -1 wraps as in PyTorch instead of trapping.
  int64_t lowest = std::numeric_limits<int64_t>::min();
  expect_values(binary(OpId::floor_divide, i64({lowest}), i64({-1})), {double(lowest)});
  expect_values(binary(OpId::remainder, i64({lowest}), i64({-1})), {0});
}

TEST(Binary, ComparisonsAndLogical) {
  Tensor a = f32({1.0f, 2.0f, NAN}), b = i64({1, 3, 0});
  struct Case {
    OpId op;
    std::vector<double> expected;
  };
  for (const Case& c : std::vector<Case>{{OpId::eq, {1, 0, 0}},
                                         {OpId::ne, {0, 1, 1}},
                                         {OpId::lt, {0, 1, 0}},
                                         {OpId::le, {1, 1, 0}},
                                         {OpId::gt, {0, 0, 0}},
                                         {OpId::ge, {1, 0, 0}},
                                         {OpId::logical_and, {1, 1, 0}},
                                         {OpId::logical_or, {1, 1, 1}},
                                         {OpId::logical_xor, {0, 0, 1}}}) {
    Tensor r = binary(c.op, a, b);
    EXPECT_EQ(r.dtype(), DType::Bool) << op_info(c.op).name;
    expect_values(r, c.expected);
  }
  // Comparisons compute in the promoted type: 0.1 (float32) == 0.1 (float64 0-dim)
  // compares in float32.
  expect_values(binary(OpId::eq, f32({0.1f}), Tensor::scalar(Scalar(0.1), DType::Float64)), {1});
  Tensor t = Tensor::from_vector<bool>({true, true, false});
  Tensor f = Tensor::from_vector<bool>({true, false, false});
  expect_values(binary(OpId::bitwise_and, t, f), {1, 0, 0});
  expect_values(binary(OpId::bitwise_xor, t, f), {0, 1, 0});
  EXPECT_EQ(binary(OpId::bitwise_or, t, f).dtype(), DType::Bool);
  EXPECT_ERROR(binary(OpId::bitwise_and, f32({1}), f32({1})), "not implemented for 'Float'");
}

TEST(Binary, BoolArithmetic) {
  Tensor t = Tensor::from_vector<bool>({true, true, false});
  Tensor f = Tensor::from_vector<bool>({true, false, false});
  Tensor s = add(IValue(t), IValue(f));
  EXPECT_EQ(s.dtype(), DType::Bool);
  expect_values(s, {1, 1, 0});
  expect_values(binary(OpId::mul, t, f), {1, 0, 0});
  expect_values(binary(OpId::maximum, t, f), {1, 1, 0});
  EXPECT_ERROR(call(OpId::sub, {IValue(t), IValue(f), IValue(int64_t{1})}),
               "Subtraction, the `-` operator, with two bool tensors is not supported");
  EXPECT_ERROR(call(OpId::sub, {IValue(t), IValue(int64_t{1}), IValue(int64_t{1})}),
               "Subtraction, the `-` operator, with a bool tensor is not supported");
  EXPECT_ERROR(binary(OpId::pow, t, f), "not implemented for 'Bool'");
  EXPECT_ERROR(call(OpId::add, {IValue(i64({1})), IValue(i64({1})), IValue(0.5)}),
               "For integral input tensors, argument alpha must not be a floating point number.");
  EXPECT_ERROR(call(OpId::add, {IValue(i64({1})), IValue(i64({1})), IValue(true)}),
               "Boolean alpha only supported for Boolean results.");
}

// torch.result_type for every pair of operand kinds: tensors with dims (D), 0-dim
// tensors (Z) and Python numbers (W), printed by PyTorch 1.13.
TEST(Binary, PromotionTableMatchesPyTorch) {
  std::vector<IValue> kinds = {
      IValue(Tensor::from_vector<bool>({true, false})),
      IValue(i64({1, 2})),
      IValue(f32({1, 2})),
      IValue(f64({1, 2})),
      IValue(Tensor::scalar(Scalar(true), DType::Bool)),
      IValue(Tensor::scalar(Scalar(int64_t{1}), DType::Int64)),
      IValue(Tensor::scalar(Scalar(1.0), DType::Float32)),
      IValue(Tensor::scalar(Scalar(1.0), DType::Float64)),
      IValue(true),
      IValue(int64_t{2}),
      IValue(2.5),
  };
  using D = DType;
  const D B = D::Bool, I = D::Int64, F = D::Float32, G = D::Float64;
  const std::vector<std::vector<D>> expected = {
      {B, I, F, G, B, I, F, G, B, I, F},  // D_bool
      {I, I, F, G, I, I, F, G, I, I, F},  // D_int
      {F, F, F, G, F, F, F, F, F, F, F},  // D_f32
      {G, G, G, G, G, G, G, G, G, G, G},  // D_f64
      {B, I, F, G, B, I, F, G, B, I, F},  // Z_bool
      {I, I, F, G, I, I, F, G, I, I, F},  // Z_int
      {F, F, F, G, F, F, F, G, F, F, F},  // Z_f32
      {G, G, F, G, G, G, G, G, G, G, G},  // Z_f64
      {B, I, F, G, B, I, F, G, B, I, F},  // W_bool
      {I, I, F, G, I, I, F, G, I, I, F},  // W_int
      {F, F, F, G, F, F, F, G, F, F, F},  // W_float
  };
  for (size_t i = 0; i < kinds.size(); ++i) {
    for (size_t j = 0; j < kinds.size(); ++j) {
      EXPECT_EQ(add(kinds[i], kinds[j]).dtype(), expected[i][j]) << "row " << i << " col " << j;
      EXPECT_EQ(call(OpId::lt, {kinds[i], kinds[j]}).dtype(), D::Bool);
    }
  }
}

TEST(Binary, ScalarOperandsKeepTensorWidth) {
  // float32 tensor * 2.0 -> float32; int64 tensor * 2.5 -> float32 [2.5, 5.0].
  EXPECT_EQ(binary(OpId::mul, f32({1, 2}), wrap_number(IValue(2.0))).dtype(), DType::Float32);
  Tensor r = binary(OpId::mul, i64({1, 2}), wrap_number(IValue(2.5)));
  EXPECT_EQ(r.dtype(), DType::Float32);
  expect_values(r, {2.5, 5.0});
  // int64 tensor + float64 0-dim -> float64; float32 tensor + float64 0-dim -> float32.
  EXPECT_EQ(add(IValue(i64({1})), IValue(Tensor::scalar(Scalar(1.5), DType::Float64))).dtype(),
            DType::Float64);
  EXPECT_EQ(add(IValue(f32({1})), IValue(Tensor::scalar(Scalar(1.5), DType::Float64))).dtype(),
            DType::Float32);
}

// A Python float kept as a float64 wrapped number (as PyTorch keeps it) promotes like
// a float32 one but keeps its double value for float64 tensors.
TEST(Binary, Float64WrappedNumber) {
  Tensor w = Tensor::scalar(Scalar(2.1), DType::Float64);
  w.impl()->set_wrapped_number(true);
  Tensor r32 = binary(OpId::mul, f32({1, 2}), w);
  EXPECT_EQ(r32.dtype(), DType::Float32);
  expect_values(r32, {double(2.1f), double(2.0f * 2.1f)}, 0);
  Tensor r64 = binary(OpId::mul, f64({1, 2}), w);
  EXPECT_EQ(r64.dtype(), DType::Float64);
  expect_values(r64, {2.1, 4.2}, 0);
  EXPECT_EQ(binary(OpId::mul, i64({1, 2}), w).dtype(), DType::Float32);
}

TEST(Binary, Broadcasting) {
  Tensor col = shaped(f32({1, 2, 3}), {3, 1});
  Tensor row = shaped(f32({10, 20}), {1, 2});
  Tensor r = add(IValue(col), IValue(row));
  EXPECT_EQ(r.sizes(), DimVector({3, 2}));
  expect_values(r, {11, 21, 12, 22, 13, 23});
  Tensor m = shaped(f32({1, 2, 3, 4, 5, 6}), {2, 3});
  expect_values(binary(OpId::mul, m, f32({1, 10, 100})), {1, 20, 300, 4, 50, 600});
  expect_values(call(OpId::sub, {IValue(m), IValue(Tensor::scalar(Scalar(1.0), DType::Float32)),
                                 IValue(int64_t{1})}),
                {0, 1, 2, 3, 4, 5});
  std::string msg = error_of([&] { binary(OpId::mul, m, f32({1, 2, 3, 4})); });
  EXPECT_NE(msg.find("[2, 3] and [4]"), std::string::npos) << msg;
  int64_t zero[] = {0, 3};
  Tensor z = add(IValue(Tensor::empty(zero, DType::Float32)), IValue(f32({1, 2, 3})));
  EXPECT_EQ(z.sizes(), DimVector({0, 3}));
  Tensor s = add(IValue(Tensor::scalar(Scalar(1.0), DType::Float32)), IValue(2.0));
  EXPECT_EQ(s.dim(), 0);
  expect_values(s, {3});
}

TEST(Binary, StridedAndExpandedInputs) {
  Tensor base = f32({1, 2, 3, 4, 5, 6});
  int64_t sizes[] = {3, 2}, t_strides[] = {1, 3};
  Tensor t = base.as_strided(sizes, t_strides, 0);  // [[1, 4], [2, 5], [3, 6]]
  int64_t e_strides[] = {0, 1};
  Tensor e = f32({10, 20}).as_strided(sizes, e_strides, 0);  // expanded row, stride 0
  expect_values(add(IValue(t), IValue(e)), {11, 24, 12, 25, 13, 26});
  expect_values(binary(OpId::mul, t, t), {1, 16, 4, 25, 9, 36});
  // Mixed dtypes with a strided operand: int64 view * float32.
  Tensor ib = i64({1, 2, 3, 4, 5, 6});
  expect_values(binary(OpId::mul, ib.as_strided(sizes, t_strides, 0), f32({1, 0.5})),
                {1, 2, 2, 2.5, 3, 3});
}

TEST(Binary, LargeBroadcastSplitsAcrossThreads) {
  // 300 x 257 elements: parallel chunks start in the middle of rows.
  const int64_t rows = 300, cols = 257;
  std::vector<float> m(rows * cols), bias(cols), col(rows);
  for (int64_t k = 0; k < rows * cols; ++k) m[k] = static_cast<float>(k % 1000);
  for (int64_t j = 0; j < cols; ++j) bias[j] = static_cast<float>(j) * 0.5f;
  for (int64_t i = 0; i < rows; ++i) col[i] = static_cast<float>(i) * 2.0f;
  Tensor mt = shaped(f32(m), {rows, cols});
  Tensor r = add(IValue(mt), IValue(f32(bias)));
  Tensor c = binary(OpId::mul, mt, shaped(f32(col), {rows, 1}));
  // The transposed matrix minus 1: a strided input walked in the output's order.
  int64_t t_sizes[] = {cols, rows}, t_strides[] = {1, cols};
  Tensor t = call(OpId::sub,
                  {IValue(mt.as_strided(t_sizes, t_strides, 0)), IValue(1.0), IValue(int64_t{1})});
  const float* rp = r.data_ptr<float>();
  const float* cp = c.data_ptr<float>();
  const float* tp = t.data_ptr<float>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      ASSERT_EQ(rp[i * cols + j], m[i * cols + j] + bias[j]) << i << ", " << j;
      ASSERT_EQ(cp[i * cols + j], m[i * cols + j] * col[i]) << i << ", " << j;
      ASSERT_EQ(tp[j * rows + i], m[i * cols + j] - 1.0f) << i << ", " << j;
    }
  }
}

TEST(Binary, Where) {
  Tensor c = Tensor::from_vector<bool>({true, false, true});
  Tensor r = call(OpId::where, {IValue(c), IValue(i64({1, 2, 3})), IValue(2.5)});
  EXPECT_EQ(r.dtype(), DType::Float32);  // torch.where(c, int tensor, 2.5) -> float32
  expect_values(r, {1, 2.5, 3});
  Tensor b =
      call(OpId::where, {IValue(shaped(c, {3, 1})), IValue(f32({1, 2})), IValue(f32({-1, -2}))});
  EXPECT_EQ(b.sizes(), DimVector({3, 2}));
  expect_values(b, {1, 2, -1, -2, 1, 2});
  EXPECT_ERROR(
      call(OpId::where, {IValue(f32({1})), IValue(f32({1})), IValue(f32({1}))}),
      "where expected condition to be a boolean tensor, but got a tensor with dtype Float");
}

// ---- In-place updates -----------------------------------------------------------------

TEST(InPlace, AddSubMulDivWriteIntoSelf) {
  Tensor x = f32({1, 2, 3});
  uint32_t version = x.storage()->version();
  Tensor r = call(OpId::add_, {IValue(x), IValue(f32({1, 1, 1})), IValue(int64_t{2})});
  EXPECT_TRUE(r.is_same(x));
  EXPECT_GT(x.storage()->version(), version);
  expect_values(x, {3, 4, 5});
  call(OpId::sub_, {IValue(x), IValue(1.0), IValue(int64_t{1})});
  expect_values(x, {2, 3, 4});
  call(OpId::mul_, {IValue(x), IValue(f64({2, 2, 2}))});  // float64 result cast back
  EXPECT_EQ(x.dtype(), DType::Float32);
  expect_values(x, {4, 6, 8});
  call(OpId::div_, {IValue(x), IValue(int64_t{4})});
  expect_values(x, {1, 1.5, 2});
  // Into a transposed view: only the viewed elements change.
  Tensor base = f32({1, 2, 3, 4, 5, 6});
  int64_t sizes[] = {3, 2}, strides[] = {1, 3};
  Tensor t = base.as_strided(sizes, strides, 0);
  call(OpId::add_, {IValue(t), IValue(f32({10, 100})), IValue(int64_t{1})});
  expect_values(base, {11, 12, 13, 104, 105, 106});
  // other a transposed view of self: PyTorch's partial overlap error (memory_overlap.h),
  // nothing written; self itself as other is fine.
  Tensor sq = f32({1, 2, 3, 4});
  int64_t sq_sizes[] = {2, 2}, sq_t[] = {1, 2}, sq_c[] = {2, 1};
  Tensor m = sq.as_strided(sq_sizes, sq_c, 0);
  EXPECT_ERROR(
      call(OpId::add_, {IValue(m), IValue(sq.as_strided(sq_sizes, sq_t, 0)), IValue(int64_t{1})}),
      "some elements of the input tensor and the written-to tensor refer to a single memory "
      "location");
  expect_values(m, {1, 2, 3, 4});
  call(OpId::mul_, {IValue(m), IValue(m)});
  expect_values(m, {1, 4, 9, 16});
}

TEST(InPlace, Errors) {
  Tensor i = i64({1, 2});
  EXPECT_ERROR(call(OpId::add_, {IValue(i), IValue(f32({1, 1})), IValue(int64_t{1})}),
               "result type Float can't be cast to the desired output type Long");
  EXPECT_ERROR(call(OpId::div_, {IValue(i), IValue(int64_t{2})}),
               "result type Float can't be cast to the desired output type Long");
  EXPECT_ERROR(call(OpId::add_, {IValue(Tensor::from_vector<bool>({true})), IValue(i64({1})),
                                 IValue(int64_t{1})}),
               "result type Long can't be cast to the desired output type Bool");
  int64_t big[] = {2, 3};
  std::string msg = error_of([&] {
    call(OpId::add_,
         {IValue(f32({0, 0, 0})), IValue(Tensor::empty(big, DType::Float32)), IValue(int64_t{1})});
  });
  EXPECT_NE(msg.find("output with shape [3] doesn't match the broadcast shape [2, 3]"),
            std::string::npos)
      << msg;
}

TEST(InPlace, ZeroFillCopy) {
  Tensor x = f32({1, 2, 3});
  call(OpId::zero_, {IValue(x)});
  expect_values(x, {0, 0, 0});
  Tensor i = i64({1, 2});
  call(OpId::fill_, {IValue(i), IValue(2.5)});  // torch fills 2 (truncation)
  expect_values(i, {2, 2});
  call(OpId::copy_, {IValue(i), IValue(f32({1.7f, -2.5f}))});
  expect_values(i, {1, -2});
  Tensor m = Tensor::empty(std::vector<int64_t>{2, 2}, DType::Float64);
  call(OpId::copy_, {IValue(m), IValue(f32({5, 6}))});  // broadcasts
  expect_values(m, {5, 6, 5, 6});
}

TEST(Conversion, ToDtypeAndDevice) {
  Tensor x = f32({1.5f, -2.5f});
  EXPECT_TRUE(call(OpId::to_dtype, {IValue(x), IValue(DType::Float32)}).is_same(x));
  Tensor l = call(OpId::to_dtype, {IValue(x), IValue(DType::Int64)});
  EXPECT_EQ(l.dtype(), DType::Int64);
  expect_values(l, {1, -2});
  EXPECT_TRUE(call(OpId::to_device, {IValue(x), IValue(kCPU)}).is_same(x));
  EXPECT_ERROR(call(OpId::to_device, {IValue(x), IValue(Device(DeviceType::CUDA))}),
               "CUDA is not available");
}

}  // namespace
}  // namespace tsl

namespace tsl {
namespace {

// An element's result depends on its value alone, not on where the array it sits in
// begins: Eigen's loop over a dynamic-size map computed an unaligned head and the tail
// with scalar functions whose last bit can differ from the SIMD form's, so a fused
// group (which splits arrays into chunks) and the unfused kernel disagreed by an ulp
// on AVX2 machines (see runtime/kernels/cpu/simd_map.h).
TEST(Unary, SimdFormsDoNotDependOnTheElementsPosition) {
  const int64_t n = 3 * 4096 + 5;
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t state = 12345;
  for (float& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 40.0f - 20.0f;
  }
  Tensor x = Tensor::from_vector(v, std::vector<int64_t>{n});
  for (OpId op : {OpId::sigmoid, OpId::exp, OpId::tanh, OpId::log1p, OpId::sin, OpId::silu}) {
    Tensor whole = call_op(op, {x})[0].to_tensor();
    const float* w = whole.data_ptr<float>();
    for (int64_t offset : {1, 3, 7, 13}) {
      Tensor part_in =
          x.as_strided(std::vector<int64_t>{n - offset}, std::vector<int64_t>{1}, offset);
      Tensor part = call_op(op, {part_in})[0].to_tensor();
      const float* p = part.data_ptr<float>();
      int64_t differ = 0;
      for (int64_t i = 0; i + offset < n; ++i) differ += std::memcmp(&p[i], &w[i + offset], 4) != 0;
      EXPECT_EQ(differ, 0) << op_info(op).name << " at offset " << offset;
    }
  }
}

// Nor on its neighbours: SLEEF's sin and cos reduce the whole packet by a slower method
// when any lane is >= 125 (float32) or >= 1e14 (float64), or NaN, which changed the last
// bit of the other lanes (Fusion.UnaryOpsMatchTheKernels failed at n = 98321). Values
// beyond every function's bound are put between ordinary ones, one every 5 elements so
// that each lands in a different lane of its packet; the ordinary ones must keep the
// bits they have without them. Both dtypes, every Simd formula (Note [Vector math]).
TEST(Unary, SimdFormsDoNotDependOnTheNeighbours) {
  const int64_t n = 4096 + 3;
  const double outside[] = {200.0,
                            1e15,
                            -3e5,
                            std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity(),
                            -1e30};
  auto as = [](const Tensor& t, DType d) {
    return call_op(OpId::to_dtype, {IValue(t), IValue(d)})[0].to_tensor();
  };
  for (DType dtype : {DType::Float32, DType::Float64}) {
    std::vector<double> v(static_cast<size_t>(n));
    uint32_t state = 777;
    for (double& x : v) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 240.0 - 120.0;
    }
    std::vector<double> mixed = v;
    for (int64_t i = 2, k = 0; i < n; i += 5, ++k) mixed[static_cast<size_t>(i)] = outside[k % 6];
    Tensor plain = as(Tensor::from_vector(v, std::vector<int64_t>{n}), dtype);
    Tensor with = as(Tensor::from_vector(mixed, std::vector<int64_t>{n}), dtype);
    for (OpId op : {OpId::exp, OpId::expm1, OpId::log, OpId::log1p, OpId::sin, OpId::cos,
                    OpId::tanh, OpId::sigmoid, OpId::silu, OpId::reciprocal}) {
      Tensor a = as(call_op(op, {plain})[0].to_tensor(), DType::Float64);
      Tensor b = as(call_op(op, {with})[0].to_tensor(), DType::Float64);
      const double* pa = a.data_ptr<double>();
      const double* pb = b.data_ptr<double>();
      int64_t differ = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (i % 5 == 2) continue;
        differ += std::memcmp(&pa[i], &pb[i], sizeof(double)) != 0 &&
                  !(std::isnan(pa[i]) && std::isnan(pb[i]));
      }
      EXPECT_EQ(differ, 0) << op_info(op).name << " in " << dtype_name(dtype);
    }
  }
}

// A 0-dim operand of another dtype than the computation's (a Python number's wrapped
// tensor, mostly) is read as one converted value instead of being copied into a new
// tensor: the same bits as converting it first, on either side, over contiguous,
// strided and empty tensors, and in place.
TEST(Elementwise, ZeroDimOperandsOfAnotherDtypeAreReadAsValues) {
  auto same_bits = [](const Tensor& got, const Tensor& want, const std::string& what) {
    ASSERT_EQ(got.dtype(), want.dtype()) << what;
    ASSERT_EQ(got.sizes(), want.sizes()) << what;
    std::vector<double> g = values(got), w = values(want);
    for (size_t i = 0; i < g.size(); ++i) {
      EXPECT_TRUE(std::memcmp(&g[i], &w[i], sizeof(double)) == 0 ||
                  (std::isnan(g[i]) && std::isnan(w[i])))
          << what << " element " << i << ": " << g[i] << " vs " << w[i];
    }
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor xf = f32({-2.5f, 0.1f, 0.0f, 3.0f, nan, 1e30f, -7.0f, 0.3f});
  const int64_t every_other_size[] = {4}, every_other_stride[] = {2};
  std::vector<std::pair<std::string, Tensor>> xs = {
      {"float32", xf},
      {"float64", f64({-2.5, 0.1, 0.0, 3.0, 1e300, -7.0})},
      {"int64", i64({-3, 0, 2, 7, 100, -1})},
      {"float32 strided", xf.as_strided(every_other_size, every_other_stride, 1)},
      {"float32 [2, 4]", shaped(xf, {2, 4})},
      {"float32 empty", f32({})},
  };
  std::vector<std::pair<std::string, Tensor>> scalars = {
      {"float64 0.1", Tensor::scalar(Scalar(0.1), DType::Float64)},
      {"float64 -1e39", Tensor::scalar(Scalar(-1e39), DType::Float64)},
      {"int64 3", Tensor::scalar(Scalar(int64_t{3}), DType::Int64)},
      {"bool", Tensor::scalar(Scalar(true), DType::Bool)},
      {"float32 2.5", Tensor::scalar(Scalar(2.5), DType::Float32)},
  };
  const OpId ops[] = {OpId::add, OpId::sub, OpId::mul, OpId::div,      OpId::maximum,
                      OpId::eq,  OpId::lt,  OpId::pow, OpId::remainder};
  for (const auto& [xname, x] : xs) {
    for (const auto& [sname, s] : scalars) {
      for (OpId op : ops) {
        std::vector<IValue> tail;
        if (op == OpId::add || op == OpId::sub) tail.emplace_back(int64_t{1});
        if (op == OpId::div) tail.emplace_back();
        auto run = [&](const Tensor& a, const Tensor& b) {
          std::vector<IValue> args = {IValue(a), IValue(b)};
          args.insert(args.end(), tail.begin(), tail.end());
          return call(op, args);
        };
        std::string what = std::string(op_info(op).name) + "(" + xname + ", " + sname + ")";
        // Converted first to the dtype the operands promote to. A combination that
        // raises (sub with a bool, an integer remainder by 0) is PyTorch's error.
        Tensor converted = call(OpId::to_dtype, {IValue(s), IValue(cpu::result_type({&x, &s}))});
        auto check = [&](const Tensor& a, const Tensor& b, const Tensor& a2, const Tensor& b2,
                         const std::string& where) {
          if (error_of([&] { run(a, b); }) == "<no error>") {
            same_bits(run(a, b), run(a2, b2), where);
          }
        };
        check(x, s, x, converted, what);
        check(s, x, converted, x, what + " swapped");
      }
    }
  }
  // In place: x *= s.
  Tensor a = f32({1.5f, -2.0f, 0.1f}), b = f32({1.5f, -2.0f, 0.1f});
  call(OpId::mul_, {IValue(a), IValue(Tensor::scalar(Scalar(0.1), DType::Float64))});
  call(OpId::mul_, {IValue(b), IValue(Tensor::scalar(Scalar(0.1), DType::Float32))});
  same_bits(a, b, "mul_");
}

}  // namespace
}  // namespace tsl
