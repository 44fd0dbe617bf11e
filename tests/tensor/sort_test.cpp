// sort and topk against PyTorch 1.13: values and indices along any dim, transposed
// inputs, NaN, ties (in the order PyTorch's std::sort, stable_sort, partial sort and
// nth_element leave them), int64 and bool, 0-dim and zero-size inputs, and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/tensor/kernel_test_util.h"

namespace tsl {
namespace {

using test::error_of;
using test::ramp;
using test::values;

Tensor transposed(const Tensor& t) {
  std::vector<int64_t> sizes{t.sizes()[1], t.sizes()[0]};
  std::vector<int64_t> strides{t.strides()[1], t.strides()[0]};
  return t.as_strided(sizes, strides, t.storage_offset());
}

void expect_tensor(const Tensor& t, std::vector<int64_t> shape, DType dtype,
                   std::vector<double> expected) {
  EXPECT_EQ(t.sizes(), DimVector(shape));
  EXPECT_EQ(t.dtype(), dtype);
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    else
      EXPECT_EQ(got[i], expected[i]) << "at " << i;
  }
}

Tensor run_to_long(const Tensor& t) { return test::run(OpId::to_dtype, {t, DType::Int64}); }

std::vector<Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  std::vector<IValue> r = call_op(OpId::sort, {x, dim, descending}, 2);
  return {r[0].to_tensor(), r[1].to_tensor()};
}
std::vector<Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  std::vector<IValue> r = call_op(OpId::topk, {x, k, dim, largest, sorted}, 2);
  return {r[0].to_tensor(), r[1].to_tensor()};
}

// [float((i * 37 % 11) % 4) for i in range(200)]: four values, many ties.
Tensor ties() {
  std::vector<float> v;
  for (int i = 0; i < 200; ++i) v.push_back(static_cast<float>((i * 37 % 11) % 4));
  return Tensor::from_vector<float>(v);
}

TEST(Sort, AlongDimsWithNaNFirstWhenDescending) {
  // ramp(2,3,4).sort(1)
  std::vector<Tensor> s = sort(ramp({2, 3, 4}), 1, false);
  expect_tensor(s[0], {2, 3, 4}, DType::Float32,
                {-1.5, -1,   -0.5, -1.5, 0,   0,    0.5, -0.5, 1,   1.5, 1.5, 1,
                 -1,   -1.5, -1.5, -1,   0.5, -0.5, 0,   0,    1.5, 0.5, 1,   1.5});
  expect_tensor(s[1], {2, 3, 4}, DType::Int64,
                {0, 1, 2, 1, 2, 0, 1, 0, 1, 2, 0, 2, 0, 2, 0, 1, 2, 1, 2, 0, 1, 0, 1, 2});
  // ramp(4,3).t().sort(0, descending=True)
  s = sort(transposed(ramp({4, 3})), 0, true);
  expect_tensor(s[0], {3, 4}, DType::Float32,
                {1.5, 1, 0.5, 1.5, 0, -0.5, 0, 1, -1.5, -1, -1.5, -0.5});
  expect_tensor(s[1], {3, 4}, DType::Int64, {2, 1, 0, 0, 1, 0, 2, 2, 0, 2, 1, 1});
  // torch.tensor([3., 1., 3., nan, 1., 2., 3., nan]).sort(descending=True)
  Tensor x = Tensor::from_vector<float>({3, 1, 3, NAN, 1, 2, 3, NAN});
  s = sort(x, -1, true);
  expect_tensor(s[0], {8}, DType::Float32, {NAN, NAN, 3, 3, 3, 2, 1, 1});
  expect_tensor(s[1], {8}, DType::Int64, {3, 7, 0, 2, 6, 5, 1, 4});
  s = sort(x, 0, false);
  expect_tensor(s[0], {8}, DType::Float32, {1, 1, 2, 3, 3, 3, NAN, NAN});
  expect_tensor(s[1], {8}, DType::Int64, {1, 4, 5, 0, 2, 6, 3, 7});
}

// PyTorch 1.13's CPU sort is not stable (std::sort: ties beyond 16 elements are
// shuffled); sort(stable=True) is. Both orders are PyTorch's.
TEST(Sort, TiesAsPyTorchLeavesThem) {
  Tensor first20 = ties().as_strided(std::vector<int64_t>{20}, std::vector<int64_t>{1}, 0);
  // torch.sort(ties()[:20], descending=True).indices
  expect_tensor(sort(first20, 0, true)[1], {20}, DType::Int64,
                {10, 9, 19, 18, 17, 8, 7, 6, 5, 4, 3, 14, 15, 16, 11, 12, 13, 2, 1, 0});
  // torch.sort(ties()[:20], descending=True, stable=True).indices
  std::vector<IValue> st = call_op(OpId::sort_stable, {first20, IValue(true), int64_t{0}, true}, 2);
  expect_tensor(st[1].to_tensor(), {20}, DType::Int64,
                {9, 10, 6, 7, 8, 17, 18, 19, 3, 4, 5, 14, 15, 16, 0, 1, 2, 11, 12, 13});
  // torch.sort(ties()).indices[:12]
  std::vector<double> got = values(sort(ties(), 0, false)[1]);
  got.resize(12);
  EXPECT_EQ(got, std::vector<double>({79, 121, 112, 111, 110, 101, 0, 99, 90, 89, 88, 122}));
  // torch.tensor([True, False, True, False]).sort()
  std::vector<Tensor> s = sort(Tensor::from_vector<bool>({true, false, true, false}), 0, false);
  expect_tensor(s[0], {4}, DType::Bool, {0, 0, 1, 1});
  expect_tensor(s[1], {4}, DType::Int64, {1, 3, 0, 2});
}

TEST(Sort, ZeroDimAndZeroSize) {
  std::vector<Tensor> s = sort(Tensor::scalar(3.0, DType::Float64), -1, false);
  expect_tensor(s[0], {}, DType::Float64, {3});
  expect_tensor(s[1], {}, DType::Int64, {0});
  s = sort(Tensor::empty(std::vector<int64_t>{2, 0}, DType::Float32), 0, false);
  expect_tensor(s[1], {2, 0}, DType::Int64, {});
  EXPECT_EQ(error_of([&] {
              sort(ramp({2, 3}), 2, false);
            }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

TEST(TopK, TiesAsPyTorchBreaksThem) {
  // torch.topk(ties(), k, largest=, sorted=): partial sort (k * 64 <= n) and nth_element.
  Tensor x = ties();
  expect_tensor(topk(x, 3, 0, true, true)[1], {3}, DType::Int64, {20, 10, 9});
  std::vector<double> ten = {109, 86, 32, 31, 53, 108, 185, 21, 119, 153};
  expect_tensor(topk(x, 10, 0, true, true)[1], {10}, DType::Int64, ten);
  expect_tensor(topk(x, 10, 0, true, false)[1], {10}, DType::Int64, ten);
  expect_tensor(topk(x, 10, 0, false, true)[1], {10}, DType::Int64,
                {101, 88, 89, 90, 99, 0, 111, 121, 112, 79});
  expect_tensor(topk(x, 7, 0, false, false)[1], {7}, DType::Int64, {101, 88, 89, 90, 99, 0, 111});
}

TEST(TopK, AlongDimsNaNIntegersAndEdges) {
  // ramp(2,3,4).topk(2, dim=1)
  std::vector<Tensor> t = topk(ramp({2, 3, 4}), 2, 1, true, true);
  expect_tensor(t[0], {2, 2, 4}, DType::Float32,
                {1, 1.5, 1.5, 1, 0, 0, 0.5, -0.5, 1.5, 0.5, 1, 1.5, 0.5, -0.5, 0, 0});
  expect_tensor(t[1], {2, 2, 4}, DType::Int64, {1, 2, 0, 2, 2, 0, 1, 0, 1, 0, 1, 2, 2, 1, 2, 0});
  // ramp(2,5).long().topk(3, largest=False)
  t = topk(run_to_long(ramp({2, 5})), 3, -1, false, true);
  expect_tensor(t[0], {2, 3}, DType::Int64, {-1, 0, 0, -1, -1, 0});
  expect_tensor(t[1], {2, 3}, DType::Int64, {0, 3, 1, 0, 2, 1});
  // NaN is the largest: torch.topk(torch.tensor([3., 1., 3., nan, 1., 2., 3., nan]), 3)
  t = topk(Tensor::from_vector<float>({3, 1, 3, NAN, 1, 2, 3, NAN}), 3, 0, true, true);
  expect_tensor(t[0], {3}, DType::Float32, {NAN, NAN, 3});
  expect_tensor(t[1], {3}, DType::Int64, {7, 3, 0});
  // k = 0 and 0-dim inputs (PyTorch returns the element for k 0 and 1).
  expect_tensor(topk(ramp({2, 3}), 0, 1, true, true)[0], {2, 0}, DType::Float32, {});
  t = topk(Tensor::scalar(3.0, DType::Float32), 0, 0, true, true);
  expect_tensor(t[0], {}, DType::Float32, {3});
  expect_tensor(t[1], {}, DType::Int64, {0});
  expect_tensor(
      topk(Tensor::empty(std::vector<int64_t>{0, 4}, DType::Float32), 2, 1, true, true)[1], {0, 2},
      DType::Int64, {});
}

TEST(TopK, Errors) {
  EXPECT_EQ(error_of([&] { topk(ramp({4}), 5, 0, true, true); }), "selected index k out of range");
  EXPECT_EQ(error_of([&] { topk(ramp({4}), -1, 0, true, true); }), "selected index k out of range");
  EXPECT_EQ(error_of([&] { topk(Tensor::scalar(1.0, DType::Float32), 2, 0, true, true); }),
            "selected index k out of range");
  EXPECT_EQ(error_of([&] {
              topk(Tensor::from_vector<bool>({true, false}), 1, 0, true, true);
            }),
            "\"topk_cpu\" not implemented for 'Bool'");
}

}  // namespace
}  // namespace tsl
