// tril, triu, diag and diag_backward against values computed with PyTorch 1.13, on
// batched, transposed, integer, bool, 0-dim and zero-size inputs.
#include <gtest/gtest.h>

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

void expect_tensor(const Tensor& t, std::vector<int64_t> shape, DType dtype,
                   std::vector<double> expected) {
  EXPECT_EQ(t.sizes(), DimVector(shape));
  EXPECT_EQ(t.dtype(), dtype);
  EXPECT_EQ(values(t), expected);
}

Tensor to(const Tensor& t, DType dtype) { return run(OpId::to_dtype, {t, dtype}); }
IValue ints(std::vector<int64_t> v) { return IValue::int_list(v); }

TEST(Triangle, LowerAndUpperOfBatchedMatrices) {
  Tensor x = ramp({2, 3, 4});
  // ramp(2,3,4).tril()
  expect_tensor(
      run(OpId::tril, {x, int64_t{0}}), {2, 3, 4}, DType::Float32,
      {-1.5, 0, 0, 0, 1, -1, 0, 0, 0, 1.5, -0.5, 0, -1, 0, 0, 0, 1.5, -0.5, 0, 0, 0.5, -1.5, 0, 0});
  // ramp(2,3,4).triu(1)
  expect_tensor(
      run(OpId::triu, {x, int64_t{1}}), {2, 3, 4}, DType::Float32,
      {0, 0, 1.5, -0.5, 0, 0, 0.5, -1.5, 0, 0, 0, 1, 0, 0.5, -1.5, 0, 0, 0, 1, -1, 0, 0, 0, 1.5});
  // A transposed (non-contiguous) input: ramp(4,3).t().tril(-1)
  expect_tensor(run(OpId::tril, {transposed(ramp({4, 3})), int64_t{-1}}), {3, 4}, DType::Float32,
                {0, 0, 0, 0, 0, 0, 0, 0, 1.5, -1, 0, 0});
  // int64 and bool keep their dtype: ramp(3,2).long().triu(-1)
  expect_tensor(run(OpId::triu, {to(ramp({3, 2}), DType::Int64), int64_t{-1}}), {3, 2},
                DType::Int64, {-1, 0, 1, 0, 0, -1});
  Tensor ones = run(OpId::ones, {ints({2, 2}), DType::Bool, IValue(), false});
  expect_tensor(run(OpId::triu, {ones, int64_t{0}}), {2, 2}, DType::Bool, {1, 1, 0, 1});
  // Diagonals beyond the matrix keep everything or nothing.
  expect_tensor(run(OpId::tril, {ramp({2, 3}), int64_t{10}}), {2, 3}, DType::Float32,
                values(ramp({2, 3})));
  expect_tensor(run(OpId::tril, {ramp({2, 3}), int64_t{-10}}), {2, 3}, DType::Float32,
                {0, 0, 0, 0, 0, 0});
}

TEST(Triangle, ZeroSizeAndErrors) {
  Tensor empty = Tensor::empty(std::vector<int64_t>{0, 3}, DType::Float32);
  expect_tensor(run(OpId::tril, {empty, int64_t{0}}), {0, 3}, DType::Float32, {});
  EXPECT_EQ(error_of([&] {
              run(OpId::tril, {ramp({3}), int64_t{0}});
            }),
            "tril: input tensor must have at least 2 dimensions, got 1");
  EXPECT_EQ(error_of([&] {
              run(OpId::triu, {Tensor::scalar(1.0, DType::Float32), int64_t{0}});
            }),
            "triu: input tensor must have at least 2 dimensions, got 0");
}

TEST(Diag, VectorToMatrixAndBack) {
  // torch.diag(ramp(3), -1)
  expect_tensor(run(OpId::diag, {ramp({3}), int64_t{-1}}), {4, 4}, DType::Float32,
                {0, 0, 0, 0, -1.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1.5, 0});
  // torch.diag(ramp(3, 4), 1) and a transposed matrix: torch.diag(ramp(4, 3).t(), -1)
  expect_tensor(run(OpId::diag, {ramp({3, 4}), int64_t{1}}), {3}, DType::Float32, {0, 0.5, 1});
  expect_tensor(run(OpId::diag, {transposed(ramp({4, 3})), int64_t{-1}}), {2}, DType::Float32,
                {0, -1});
  // An expanded vector (stride 0) and int64 values.
  Tensor v = Tensor::from_vector<int64_t>({7});
  Tensor expanded = v.as_strided(std::vector<int64_t>{2}, std::vector<int64_t>{0}, 0);
  expect_tensor(run(OpId::diag, {expanded, int64_t{0}}), {2, 2}, DType::Int64, {7, 0, 0, 7});
  // The diagonal just past the corner is empty (PyTorch: tensor([])).
  expect_tensor(run(OpId::diag, {ramp({3, 4}), int64_t{4}}), {0}, DType::Float32, {});
  expect_tensor(
      run(OpId::diag, {Tensor::empty(std::vector<int64_t>{0}, DType::Float32), int64_t{0}}), {0, 0},
      DType::Float32, {});
}

TEST(Diag, Errors) {
  EXPECT_EQ(error_of([&] {
              run(OpId::diag, {ramp({2, 2, 2}), int64_t{0}});
            }),
            "matrix or a vector expected");
  EXPECT_EQ(error_of([&] {
              run(OpId::diag, {Tensor::scalar(2.0, DType::Float32), int64_t{0}});
            }),
            "matrix or a vector expected");
  // PyTorch fails here too (with "numel: integer multiplication overflow").
  EXPECT_EQ(error_of([&] {
              run(OpId::diag, {ramp({3, 4}), int64_t{5}});
            }),
            "diag(): diagonal 5 is outside a matrix of size [3, 4]");
}

// diag_backward is diag's adjoint: <diag(x), g> == <x, diag_backward(g)>.
TEST(Diag, BackwardIsTheAdjoint) {
  auto inner = [](const Tensor& a, const Tensor& b) {
    std::vector<double> x = values(a), y = values(b);
    double s = 0;
    for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
    return s;
  };
  for (int64_t d : {-2, 0, 1}) {
    Tensor m = ramp({3, 4}, 5, 11, DType::Float64);
    Tensor g = ramp({run(OpId::diag, {m, d}).numel()}, 2, 5, DType::Float64);
    Tensor back = run(OpId::diag_backward, {g, ints({3, 4}), d});
    EXPECT_EQ(back.sizes(), DimVector({3, 4}));
    EXPECT_DOUBLE_EQ(inner(run(OpId::diag, {m, d}), g), inner(m, back)) << "diagonal " << d;
    Tensor v = ramp({3}, 5, 11, DType::Float64);
    Tensor gm = ramp({3 + (d < 0 ? -d : d), 3 + (d < 0 ? -d : d)}, 2, 5, DType::Float64);
    Tensor vback = run(OpId::diag_backward, {gm, ints({3}), d});
    EXPECT_DOUBLE_EQ(inner(run(OpId::diag, {v, d}), gm), inner(v, vback)) << "diagonal " << d;
  }
}

}  // namespace
}  // namespace tsl
