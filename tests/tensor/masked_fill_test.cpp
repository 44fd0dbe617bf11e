// masked_fill and allclose against PyTorch 1.13: broadcasting between self and the
// mask, value conversion, transposed inputs, 0-dim values, tolerances computed in the
// tensors' own precision, and PyTorch's messages.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/tensor/kernel_test_util.h"

namespace tsl {
namespace {

using test::error_of;
using test::ramp;
using test::run;
using test::values;

Tensor transposed(const Tensor& t) {
  std::vector<int64_t> sizes{t.sizes()[1], t.sizes()[0]};
  std::vector<int64_t> strides{t.strides()[1], t.strides()[0]};
  return t.as_strided(sizes, strides, t.storage_offset());
}
Tensor gt0(const Tensor& t) { return run(OpId::gt, {t, 0.0}); }
Tensor lt0(const Tensor& t) { return run(OpId::lt, {t, 0.0}); }

void expect_tensor(const Tensor& t, std::vector<int64_t> shape, DType dtype,
                   std::vector<double> expected) {
  EXPECT_EQ(t.sizes(), DimVector(shape));
  EXPECT_EQ(t.dtype(), dtype);
  EXPECT_EQ(values(t), expected);
}

TEST(MaskedFill, ScalarValues) {
  Tensor x = ramp({2, 3});
  // x.masked_fill(x > 0, -7.5)
  expect_tensor(run(OpId::masked_fill_scalar, {x, gt0(x), -7.5}), {2, 3}, DType::Float32,
                {-1.5, 0, -7.5, -0.5, -7.5, -1});
  // The mask widens self: ramp(3).masked_fill(ramp(2,3,k=5,m=9) > 0, 2.)
  expect_tensor(run(OpId::masked_fill_scalar, {ramp({3}), gt0(ramp({2, 3}, 5, 9)), 2.0}), {2, 3},
                DType::Float32, {-1.5, 2, 1.5, 2, 0, 2});
  // A transposed int64 self takes 5.7 as 5: ramp(3,2).t().long().masked_fill(ramp(3) > 0, 5.7)
  Tensor longs = run(OpId::to_dtype, {transposed(ramp({3, 2})), DType::Int64});
  expect_tensor(run(OpId::masked_fill_scalar, {longs, gt0(ramp({3})), 5.7}), {2, 3}, DType::Int64,
                {-1, 1, 5, 0, 0, 5});
  // NaN fills; 0-dim self and mask; zero-size.
  std::vector<double> v =
      values(run(OpId::masked_fill_scalar, {ramp({2}), gt0(ramp({2})) /*none*/, NAN}));
  EXPECT_EQ(v, std::vector<double>({-1.5, 0}));
  Tensor mask = Tensor::from_vector<bool>({true});
  EXPECT_TRUE(std::isnan(values(run(OpId::masked_fill_scalar, {ramp({1}), mask, NAN}))[0]));
  expect_tensor(run(OpId::masked_fill_scalar,
                    {Tensor::scalar(1.0, DType::Float64), Tensor::scalar(true, DType::Bool), 3.0}),
                {}, DType::Float64, {3});
  expect_tensor(
      run(OpId::masked_fill_scalar, {Tensor::empty(std::vector<int64_t>{0, 2}, DType::Float32),
                                     Tensor::from_vector<bool>({true, false}), 1.0}),
      {0, 2}, DType::Float32, {});
}

TEST(MaskedFill, TensorValuesAndErrors) {
  Tensor x = ramp({2, 3});
  // x.masked_fill(x < 0, torch.tensor(4., dtype=torch.float64)) keeps x's dtype
  expect_tensor(run(OpId::masked_fill_tensor, {x, lt0(x), Tensor::scalar(4.0, DType::Float64)}),
                {2, 3}, DType::Float32, {4, 0, 1.5, 4, 1, 4});
  EXPECT_EQ(error_of([&] {
              run(OpId::masked_fill_tensor, {x, lt0(x), ramp({1})});
            }),
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
            "dimension(s).");
  EXPECT_EQ(error_of([&] {
              run(OpId::masked_fill_scalar, {x, x, 1.0});
            }),
            "masked_fill_ only supports boolean masks, but got mask with dtype float32");
  EXPECT_EQ(error_of([&] {
              run(OpId::masked_fill_scalar, {x, gt0(ramp({4})), 1.0});
            }),
            "masked_fill: shapes [2, 3] and [4] cannot be broadcast (size 3 vs 4 at dimension 1)");
}

bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false) {
  return call_op(OpId::allclose, {a, b, rtol, atol, equal_nan})[0].to_bool();
}
Tensor floats(std::vector<float> v) { return Tensor::from_vector<float>(v); }

TEST(AllClose, ToleranceInTheTensorsPrecision) {
  // float32: torch.allclose(tensor([1., 2.]), tensor([1.00001, 2.00002])) is False
  EXPECT_FALSE(allclose(floats({1, 2}), floats({1.00001f, 2.00002f})));
  EXPECT_FALSE(allclose(floats({1, 2}), floats({1.0001f, 2})));
  EXPECT_TRUE(allclose(floats({0}), floats({1e-8f})));
  EXPECT_FALSE(allclose(floats({0}), floats({2e-8f})));
  EXPECT_FALSE(allclose(floats({0}), floats({1.5e-8f}), 0.0));
  // int64 against a float32 tolerance: allclose(tensor([100, 200]), tensor([101, 200]), 0.01)
  Tensor a = Tensor::from_vector<int64_t>({100, 200});
  EXPECT_TRUE(allclose(a, Tensor::from_vector<int64_t>({101, 200}), 0.01));
  EXPECT_FALSE(allclose(a, Tensor::from_vector<int64_t>({103, 200}), 0.01));
  // NaN and infinities; bools; broadcasting and transposed operands; zero-size.
  EXPECT_FALSE(allclose(floats({1, NAN}), floats({1, NAN})));
  EXPECT_TRUE(allclose(floats({1, NAN}), floats({1, NAN}), 1e-5, 1e-8, true));
  EXPECT_TRUE(allclose(floats({INFINITY}), floats({INFINITY})));
  EXPECT_FALSE(allclose(floats({INFINITY}), floats({-INFINITY})));
  EXPECT_TRUE(
      allclose(Tensor::from_vector<bool>({true}), Tensor::from_vector<bool>({false}), 0, 1.0));
  EXPECT_TRUE(allclose(ramp({3, 2}), transposed(transposed(ramp({3, 2})))));
  EXPECT_TRUE(allclose(transposed(ramp({3, 2})), transposed(ramp({3, 2}))));
  EXPECT_TRUE(allclose(Tensor::scalar(2.0, DType::Float32), floats({2, 2})));
  EXPECT_TRUE(allclose(Tensor::empty(std::vector<int64_t>{0}, DType::Float32), floats({2})));
}

TEST(AllClose, Errors) {
  EXPECT_EQ(error_of([&] { allclose(floats({1}), ramp({1}, 3, 7, DType::Float64)); }),
            "Float did not match Double");
  EXPECT_EQ(error_of([&] {
              allclose(floats({1, 2}), floats({1, 2, 3}));
            }),
            "allclose: shapes [2] and [3] cannot be broadcast (size 2 vs 3 at dimension 0)");
  EXPECT_EQ(error_of([&] { allclose(floats({1}), floats({1}), -1.0); }),
            "rtol must be greater than or equal to zero, but got -1");
}

}  // namespace
}  // namespace tsl
