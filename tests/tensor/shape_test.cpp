// The shape, view, indexing and query kernels, called through call_op as the
// interpreter calls them. Expected values were worked out with PyTorch 1.13.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/ivalue.h"
#include "runtime/tensor/tensor.h"

namespace tsl {
namespace {

IValue I(int64_t v) { return IValue(v); }
IValue Ints(std::vector<int64_t> v) { return IValue::int_list(v); }

Tensor run(OpId op, std::vector<IValue> args) {
  return call_op(op, std::move(args))[0].to_tensor();
}

std::vector<Tensor> run_list(OpId op, std::vector<IValue> args) {
  return call_op(op, std::move(args))[0].to_tensor_vector();
}

// 0, 1, 2, ... as float32 in the given shape: torch.arange(n.).reshape(shape).
Tensor arange(std::vector<int64_t> shape) {
  int64_t n = checked_numel(shape);
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(i));
  return Tensor::from_vector<float>(v, shape);
}

Tensor longs(std::vector<int64_t> v, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return Tensor::from_vector<int64_t>(v, shape);
}

// The elements in row-major order, whatever the strides.
std::vector<double> values(const Tensor& t) {
  Tensor c = Tensor::empty(t.sizes(), DType::Float64);
  copy_into(c, t);
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }

bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.storage()->data() == b.storage()->data();
}

// Runs `fn`, expecting a tsl::Error whose message contains `needle`.
template <typename Fn>
void expect_error(Fn&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

using V = std::vector<double>;
using S = std::vector<int64_t>;

// ---- Views ------------------------------------------------------------------------------

TEST(ShapeKernels, TransposeIsAViewThatSharesStorage) {
  Tensor x = arange({2, 3});
  Tensor y = run(OpId::transpose, {IValue(x), I(0), I(-1)});
  EXPECT_EQ(shape(y), S({3, 2}));
  EXPECT_EQ(values(y), V({0, 3, 1, 4, 2, 5}));
  EXPECT_TRUE(shares_storage(x, y));
  EXPECT_FALSE(y.is_same(x));
  // Writing through the view shows in the base.
  // y[1] is column 1 of x.
  copy_into(run(OpId::select, {IValue(y), I(0), I(1)}), Tensor::from_vector<float>({7, 8}));
  EXPECT_EQ(values(x), V({0, 7, 2, 3, 8, 5}));
}

TEST(ShapeKernels, TOfSmallTensorsAndErrors) {
  EXPECT_EQ(values(run(OpId::t, {IValue(arange({2, 3}))})), V({0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(shape(run(OpId::t, {IValue(arange({3}))})), S({3}));
  EXPECT_EQ(shape(run(OpId::t, {IValue(arange({}))})), S({}));
  expect_error(
      [] {
        run(OpId::t, {IValue(arange({2, 2, 2}))});
      },
      "t() expects a tensor with <= 2 dimensions, but self is 3D");
  expect_error(
      [] {
        run(OpId::transpose, {IValue(arange({2, 2})), I(0), I(2)});
      },
      "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

TEST(ShapeKernels, Permute) {
  Tensor x = arange({2, 3, 4});
  Tensor y = run(OpId::permute, {IValue(x), Ints({2, 0, -2})});
  EXPECT_EQ(shape(y), S({4, 2, 3}));
  EXPECT_EQ(y.strides(), DimVector({1, 12, 4}));
  EXPECT_EQ(values(y)[1], 4);   // y[0, 0, 1] = x[0, 1, 0]
  EXPECT_EQ(values(y)[3], 12);  // y[0, 1, 0] = x[1, 0, 0]
  expect_error([&] { run(OpId::permute, {IValue(x), Ints({0, 0, 1})}); }, "duplicate dims");
  expect_error([&] { run(OpId::permute, {IValue(x), Ints({0, 1})}); }, "number of dims");
}

TEST(ShapeKernels, ReshapeViewsWhenStridesAllow) {
  Tensor x = arange({2, 3, 4});
  Tensor y = run(OpId::reshape, {IValue(x), Ints({6, -1})});
  EXPECT_EQ(shape(y), S({6, 4}));
  EXPECT_TRUE(shares_storage(x, y));
  // A transposed matrix whose merged dims are not adjacent in memory needs a copy.
  Tensor t = run(OpId::transpose, {IValue(arange({2, 3})), I(0), I(1)});
  Tensor flat = run(OpId::reshape, {IValue(t), Ints({-1})});
  EXPECT_FALSE(shares_storage(t, flat));
  EXPECT_EQ(values(flat), V({0, 3, 1, 4, 2, 5}));
  // Splitting one dim of a non-contiguous tensor is still a view (computeStride).
  Tensor tt = run(OpId::transpose, {IValue(arange({4, 6})), I(0), I(1)});  // [6, 4]
  Tensor split = run(OpId::reshape, {IValue(tt), Ints({2, 3, 4})});
  EXPECT_TRUE(shares_storage(tt, split));
  EXPECT_EQ(split.strides(), DimVector({3, 1, 6}));
  EXPECT_EQ(values(split), values(tt));
}

TEST(ShapeKernels, ReshapeErrorsAsPyTorch) {
  Tensor x = arange({2, 3});
  expect_error(
      [&] {
        run(OpId::reshape, {IValue(x), Ints({2, 5})});
      },
      "shape '[2, 5]' is invalid for input of size 6");
  expect_error(
      [&] {
        run(OpId::reshape, {IValue(x), Ints({-1, -1})});
      },
      "only one dimension can be inferred");
  expect_error(
      [&] {
        run(OpId::reshape, {IValue(x), Ints({-2, 3})});
      },
      "invalid shape dimension -2");
  expect_error(
      [&] {
        run(OpId::reshape, {IValue(x), Ints({4, -1})});
      },
      "shape '[4, -1]' is invalid for input of size 6");
  expect_error([] { run(OpId::reshape, {IValue(arange({0, 3})), Ints({0, -1})}); }, "ambiguous");
}

TEST(ShapeKernels, ReshapeZeroSizeAndScalars) {
  EXPECT_EQ(shape(run(OpId::reshape, {IValue(arange({0, 3})), Ints({3, -1, 2})})), S({3, 0, 2}));
  expect_error(
      [] {
        run(OpId::reshape, {IValue(arange({0, 3})), Ints({3, 0, -1})});
      },
      "cannot reshape tensor of 0 elements into shape [3, 0, -1] because the "
      "unspecified dimension size -1 can be any value and is ambiguous");
  Tensor s = run(OpId::reshape, {IValue(arange({1, 1})), Ints({})});
  EXPECT_EQ(shape(s), S({}));
  EXPECT_EQ(shape(run(OpId::reshape, {IValue(arange({})), Ints({1, -1})})), S({1, 1}));
}

TEST(ShapeKernels, ViewRefusesToCopy) {
  Tensor t = run(OpId::t, {IValue(arange({2, 3}))});
  expect_error(
      [&] {
        run(OpId::view, {IValue(t), Ints({6})});
      },
      "view size is not compatible with input tensor's size and stride (at least one "
      "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  Tensor x = arange({2, 3});
  Tensor v = run(OpId::view, {IValue(x), Ints({3, 2})});
  EXPECT_TRUE(shares_storage(x, v));
  EXPECT_EQ(shape(run(OpId::view_as, {IValue(x), IValue(arange({6}))})), S({6}));
  EXPECT_EQ(shape(run(OpId::reshape_as, {IValue(t), IValue(arange({6}))})), S({6}));
}

TEST(ShapeKernels, Flatten) {
  Tensor x = arange({2, 3, 4});
  EXPECT_EQ(shape(run(OpId::flatten, {IValue(x), I(0), I(-1)})), S({24}));
  EXPECT_EQ(shape(run(OpId::flatten, {IValue(x), I(1), I(2)})), S({2, 12}));
  EXPECT_EQ(shape(run(OpId::flatten, {IValue(x), I(1), I(1)})), S({2, 3, 4}));
  EXPECT_EQ(shape(run(OpId::flatten, {IValue(arange({})), I(0), I(-1)})), S({1}));
  expect_error(
      [&] {
        run(OpId::flatten, {IValue(x), I(2), I(1)});
      },
      "start_dim cannot come after end_dim");
}

TEST(ShapeKernels, SqueezeAndUnsqueeze) {
  Tensor x = arange({1, 3, 1, 2});
  EXPECT_EQ(shape(run(OpId::squeeze, {IValue(x)})), S({3, 2}));
  EXPECT_EQ(shape(run(OpId::squeeze_dim, {IValue(x), I(-2)})), S({1, 3, 2}));
  EXPECT_EQ(shape(run(OpId::squeeze_dim, {IValue(x), I(1)})), S({1, 3, 1, 2}));
  EXPECT_EQ(shape(run(OpId::squeeze, {IValue(arange({}))})), S({}));
  EXPECT_EQ(shape(run(OpId::squeeze_dim, {IValue(arange({})), I(0)})), S({}));
  Tensor y = arange({2, 3});
  EXPECT_EQ(shape(run(OpId::unsqueeze, {IValue(y), I(0)})), S({1, 2, 3}));
  EXPECT_EQ(shape(run(OpId::unsqueeze, {IValue(y), I(-1)})), S({2, 3, 1}));
  EXPECT_EQ(shape(run(OpId::unsqueeze, {IValue(y), I(1)})), S({2, 1, 3}));
  EXPECT_TRUE(run(OpId::unsqueeze, {IValue(y), I(1)}).is_contiguous());
  EXPECT_EQ(shape(run(OpId::unsqueeze, {IValue(arange({})), I(0)})), S({1}));
  expect_error([&] { run(OpId::unsqueeze, {IValue(y), I(3)}); }, "Dimension out of range");
}

TEST(ShapeKernels, ExpandBroadcastsWithStrideZero) {
  Tensor x = arange({3, 1});
  Tensor y = run(OpId::expand, {IValue(x), Ints({2, -1, 4})});
  EXPECT_EQ(shape(y), S({2, 3, 4}));
  EXPECT_EQ(y.strides(), DimVector({0, 1, 0}));
  EXPECT_EQ(values(y)[5], 1);
  EXPECT_TRUE(shares_storage(x, y));
  EXPECT_EQ(shape(run(OpId::broadcast_to, {IValue(arange({})), Ints({2, 2})})), S({2, 2}));
  EXPECT_EQ(shape(run(OpId::expand_as, {IValue(x), IValue(arange({3, 5}))})), S({3, 5}));
  expect_error(
      [] {
        run(OpId::expand, {IValue(arange({2, 3})), Ints({2, 4})});
      },
      "The expanded size of the tensor (4) must match the existing size (3) at "
      "non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]");
  expect_error(
      [] {
        run(OpId::expand, {IValue(arange({2, 3})), Ints({3})});
      },
      "the number of sizes provided (1) must be greater or equal to the number of "
      "dimensions in the tensor (2)");
  expect_error(
      [] {
        run(OpId::expand, {IValue(arange({1, 1})), Ints({INT64_MAX, 4})});
      },
      "too many elements");
  expect_error(
      [] {
        run(OpId::expand, {IValue(arange({3})), Ints({-1, 3})});
      },
      "isn't allowed in a leading, non-existing dimension 0");
}

// ---- Slicing ----------------------------------------------------------------------------

TEST(ShapeKernels, NarrowSharesStorage) {
  Tensor x = arange({3, 4});
  Tensor y = run(OpId::narrow, {IValue(x), I(1), I(-3), I(2)});
  EXPECT_EQ(shape(y), S({3, 2}));
  EXPECT_EQ(values(y), V({1, 2, 5, 6, 9, 10}));
  copy_into(y, Tensor::scalar(Scalar(-1.0), DType::Float32));
  EXPECT_EQ(values(x)[1], -1);
  EXPECT_EQ(values(x)[0], 0);
  expect_error(
      [&] {
        run(OpId::narrow, {IValue(x), I(0), I(2), I(2)});
      },
      "start (2) + length (2) exceeds dimension size (3).");
  expect_error([&] { run(OpId::narrow, {IValue(x), I(0), I(5), I(0)}); }, "start out of range");
  expect_error(
      [] {
        run(OpId::narrow, {IValue(arange({})), I(0), I(0), I(1)});
      },
      "narrow() cannot be applied to a 0-dim tensor.");
}

TEST(ShapeKernels, SelectWrapsAndChecks) {
  Tensor x = arange({3, 2});
  EXPECT_EQ(values(run(OpId::select, {IValue(x), I(0), I(-1)})), V({4, 5}));
  Tensor s = run(OpId::select, {IValue(run(OpId::select, {IValue(x), I(0), I(1)})), I(0), I(1)});
  EXPECT_EQ(shape(s), S({}));
  EXPECT_EQ(values(s), V({3}));
  expect_error(
      [&] {
        run(OpId::select, {IValue(x), I(0), I(5)});
      },
      "index 5 is out of bounds for dimension 0 with size 3");
  expect_error(
      [&] {
        run(OpId::select, {IValue(x), I(-1), I(-3)});
      },
      "index -3 is out of bounds for dimension 1 with size 2");
}

TEST(ShapeKernels, SliceFollowsPython) {
  Tensor x = arange({10});
  auto sl = [&](IValue start, IValue end, int64_t step) {
    return values(run(OpId::slice, {IValue(x), I(0), start, end, I(step)}));
  };
  EXPECT_EQ(sl(I(2), I(5), 1), V({2, 3, 4}));
  EXPECT_EQ(sl(IValue(), IValue(), 3), V({0, 3, 6, 9}));
  EXPECT_EQ(sl(I(-3), IValue(), 1), V({7, 8, 9}));
  EXPECT_EQ(sl(I(-100), I(2), 1), V({0, 1}));
  EXPECT_EQ(sl(I(5), I(100), 2), V({5, 7, 9}));
  EXPECT_EQ(sl(I(7), I(3), 1), V({}));
  EXPECT_EQ(sl(I(1), I(-1), 4), V({1, 5}));
  Tensor m = arange({3, 4});
  Tensor cols = run(OpId::slice, {IValue(m), I(-1), I(1), IValue(), I(2)});
  EXPECT_EQ(shape(cols), S({3, 2}));
  EXPECT_EQ(values(cols), V({1, 3, 5, 7, 9, 11}));
  EXPECT_TRUE(shares_storage(m, cols));
  EXPECT_EQ(sl(I(1), IValue(), INT64_MAX), V({1}));  // no overflow in the length
  expect_error([&] { sl(IValue(), IValue(), 0); }, "slice step must be positive");
  expect_error([&] { sl(IValue(), IValue(), -1); }, "slice step must be positive");
}

TEST(ShapeKernels, SplitAndChunk) {
  Tensor x = arange({5, 2});
  std::vector<Tensor> parts = run_list(OpId::split, {IValue(x), I(2), I(0)});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(shape(parts[2]), S({1, 2}));
  EXPECT_EQ(values(parts[1]), V({4, 5, 6, 7}));
  EXPECT_TRUE(shares_storage(parts[1], x));
  parts = run_list(OpId::split_sizes, {IValue(x), Ints({1, 4}), I(0)});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(shape(parts[1]), S({4, 2}));
  expect_error(
      [&] {
        run_list(OpId::split_sizes, {IValue(x), Ints({2, 2}), I(0)});
      },
      "split_with_sizes expects split_sizes to sum exactly to 5");
  parts = run_list(OpId::chunk, {IValue(x), I(3), I(0)});
  ASSERT_EQ(parts.size(), 3u);  // sizes 2, 2, 1
  EXPECT_EQ(shape(parts[2]), S({1, 2}));
  parts = run_list(OpId::chunk, {IValue(arange({6})), I(4), I(-1)});
  ASSERT_EQ(parts.size(), 3u);  // torch.arange(6).chunk(4): sizes 2, 2, 2
  parts = run_list(OpId::chunk, {IValue(arange({0, 2})), I(3), I(0)});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(shape(parts[0]), S({0, 2}));
  EXPECT_EQ(run_list(OpId::split, {IValue(x), I(INT64_MAX), I(0)}).size(), 1u);
  EXPECT_EQ(run_list(OpId::chunk, {IValue(x), I(INT64_MAX), I(0)}).size(), 5u);
  parts = run_list(OpId::split, {IValue(arange({0})), I(2), I(0)});
  ASSERT_EQ(parts.size(), 1u);
  expect_error(
      [&] {
        run_list(OpId::chunk, {IValue(x), I(0), I(0)});
      },
      "chunk expects `chunks` to be greater than 0, got: 0");
  expect_error(
      [&] {
        run_list(OpId::split, {IValue(x), I(0), I(0)});
      },
      "split_size can only be 0 if dimension size is 0");
}

// ---- Joining and copying ------------------------------------------------------------------

TEST(ShapeKernels, CatPromotesAndSkipsEmptyVectors) {
  Tensor a = arange({2, 2});
  Tensor b = longs({7, 8}, {1, 2});
  Tensor c = run(OpId::cat, {IValue::list({IValue(a), IValue(b)}), I(0)});
  EXPECT_EQ(c.dtype(), DType::Float32);
  EXPECT_EQ(shape(c), S({3, 2}));
  EXPECT_EQ(values(c), V({0, 1, 2, 3, 7, 8}));
  Tensor d = run(OpId::cat, {IValue::list({IValue(a), IValue(arange({0})), IValue(a)}), I(-1)});
  EXPECT_EQ(shape(d), S({2, 4}));
  EXPECT_EQ(values(d), V({0, 1, 0, 1, 2, 3, 2, 3}));
  // Non-contiguous inputs.
  Tensor t = run(OpId::t, {IValue(a)});
  EXPECT_EQ(values(run(OpId::cat, {IValue::list({IValue(t), IValue(a)}), I(1)})),
            V({0, 2, 0, 1, 1, 3, 2, 3}));
  Tensor bools = Tensor::from_vector<bool>({true, false});
  Tensor mixed = run(OpId::cat, {IValue::list({IValue(bools), IValue(longs({5}))}), I(0)});
  EXPECT_EQ(mixed.dtype(), DType::Int64);
  EXPECT_EQ(values(mixed), V({1, 0, 5}));
}

TEST(ShapeKernels, CatErrors) {
  Tensor a = arange({2, 2});
  expect_error(
      [&] {
        run(OpId::cat, {IValue::list({IValue(a), IValue(arange({2, 3}))}), I(0)});
      },
      "Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 "
      "for tensor number 1 in the list.");
  expect_error(
      [&] {
        run(OpId::cat, {IValue::list({IValue(a), IValue(arange({2}))}), I(0)});
      },
      "Tensors must have same number of dimensions: got 2 and 1");
  expect_error(
      [&] {
        run(OpId::cat, {IValue::list({IValue(arange({}))}), I(0)});
      },
      "zero-dimensional tensor (at position 0) cannot be concatenated");
  expect_error([&] { run(OpId::cat, {IValue::list({}), I(0)}); }, "non-empty list");
}

TEST(ShapeKernels, Stack) {
  Tensor a = arange({2});
  Tensor b = Tensor::from_vector<float>({5, 6});
  Tensor s0 = run(OpId::stack, {IValue::list({IValue(a), IValue(b)}), I(0)});
  EXPECT_EQ(shape(s0), S({2, 2}));
  EXPECT_EQ(values(s0), V({0, 1, 5, 6}));
  Tensor s1 = run(OpId::stack, {IValue::list({IValue(a), IValue(b)}), I(-1)});
  EXPECT_EQ(values(s1), V({0, 5, 1, 6}));
  Tensor scalars = run(OpId::stack, {IValue::list({IValue(arange({})), IValue(arange({}))}), I(0)});
  EXPECT_EQ(shape(scalars), S({2}));
  expect_error(
      [&] {
        run(OpId::stack, {IValue::list({IValue(a), IValue(arange({3}))}), I(0)});
      },
      "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at "
      "entry 1");
}

TEST(ShapeKernels, Repeat) {
  Tensor r = run(OpId::repeat, {IValue(arange({2, 3})), Ints({2, 1, 2})});
  EXPECT_EQ(shape(r), S({2, 2, 6}));
  EXPECT_EQ(values(r), V({0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(shape(run(OpId::repeat, {IValue(arange({2})), Ints({0, 2})})), S({0, 4}));
  EXPECT_EQ(values(run(OpId::repeat, {IValue(arange({})), Ints({3})})), V({0, 0, 0}));
  expect_error(
      [] {
        run(OpId::repeat, {IValue(arange({2, 3})), Ints({2})});
      },
      "Number of dimensions of repeat dims can not be smaller than number of dimensions "
      "of tensor");
}

TEST(ShapeKernels, FlipCopies) {
  Tensor x = arange({2, 3});
  Tensor f = run(OpId::flip, {IValue(x), Ints({0, 1})});
  EXPECT_EQ(values(f), V({5, 4, 3, 2, 1, 0}));
  EXPECT_FALSE(shares_storage(x, f));
  Tensor t = run(OpId::t, {IValue(x)});
  EXPECT_EQ(values(run(OpId::flip, {IValue(t), Ints({-1})})), V({3, 0, 4, 1, 5, 2}));
  EXPECT_EQ(values(run(OpId::flip, {IValue(arange({})), Ints({})})), V({0}));
  expect_error([&] { run(OpId::flip, {IValue(x), Ints({0, 0})}); }, "dims has duplicates");
}

TEST(ShapeKernels, CloneContiguousDetach) {
  Tensor x = arange({2, 3});
  Tensor c = run(OpId::clone, {IValue(x)});
  EXPECT_FALSE(shares_storage(x, c));
  EXPECT_EQ(values(c), values(x));
  EXPECT_TRUE(run(OpId::contiguous, {IValue(x)}).is_same(x));
  Tensor t = run(OpId::t, {IValue(x)});
  Tensor tc = run(OpId::contiguous, {IValue(t)});
  EXPECT_TRUE(tc.is_contiguous());
  EXPECT_EQ(values(tc), V({0, 3, 1, 4, 2, 5}));
  Tensor ct = run(OpId::clone, {IValue(t)});
  EXPECT_TRUE(ct.is_contiguous());
  x.impl()->set_requires_grad(true);
  Tensor d = run(OpId::detach, {IValue(x)});
  EXPECT_FALSE(d.requires_grad());
  EXPECT_FALSE(d.is_same(x));
  EXPECT_TRUE(shares_storage(d, x));
}

// ---- Indexing -----------------------------------------------------------------------------

IValue idx_list(std::vector<IValue> v) { return IValue::list(std::move(v)); }

TEST(IndexKernels, OneIndexTensorWithNegatives) {
  Tensor x = arange({3, 4});
  Tensor r = run(OpId::index, {IValue(x), idx_list({IValue(longs({2, -3, 2}))})});
  EXPECT_EQ(shape(r), S({3, 4}));
  EXPECT_EQ(values(r), V({8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  expect_error(
      [&] {
        run(OpId::index, {IValue(x), idx_list({IValue(longs({3}))})});
      },
      "index 3 is out of bounds for dimension 0 with size 3");
}

TEST(IndexKernels, SkippedDimAndAdjacentIndices) {
  Tensor x = arange({2, 3, 4});
  // x[:, [2, -1]]
  Tensor r = run(OpId::index, {IValue(x), idx_list({IValue(), IValue(longs({2, -1}))})});
  EXPECT_EQ(shape(r), S({2, 2, 4}));
  EXPECT_EQ(values(r), V({8, 9, 10, 11, 8, 9, 10, 11, 20, 21, 22, 23, 20, 21, 22, 23}));
  // x[[0, 1], [1, 2]]
  Tensor p =
      run(OpId::index, {IValue(x), idx_list({IValue(longs({0, 1})), IValue(longs({1, 2}))})});
  EXPECT_EQ(shape(p), S({2, 4}));
  EXPECT_EQ(values(p), V({4, 5, 6, 7, 20, 21, 22, 23}));
}

TEST(IndexKernels, SeparatedIndicesGoFirstAndBroadcast) {
  Tensor x = arange({2, 3, 4});
  // x[[1, 0], :, [[0], [3]]]
  Tensor r =
      run(OpId::index,
          {IValue(x), idx_list({IValue(longs({1, 0})), IValue(), IValue(longs({0, 3}, {2, 1}))})});
  EXPECT_EQ(shape(r), S({2, 2, 3}));
  EXPECT_EQ(values(r), V({12, 16, 20, 0, 4, 8, 15, 19, 23, 3, 7, 11}));
  expect_error(
      [&] {
        run(OpId::index, {IValue(x), idx_list({IValue(longs({0, 1})), IValue(longs({0, 1, 2}))})});
      },
      "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]");
}

TEST(IndexKernels, BoolMasks) {
  Tensor x = arange({2, 3, 4});
  Tensor m = Tensor::from_vector<bool>({true, false, true, false, true, false}, S{2, 3});
  Tensor r = run(OpId::index, {IValue(x), idx_list({IValue(m)})});
  EXPECT_EQ(shape(r), S({3, 4}));
  EXPECT_EQ(values(r), V({0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19}));
  Tensor cols = Tensor::from_vector<bool>({true, false, true});
  Tensor c = run(OpId::index, {IValue(x), idx_list({IValue(), IValue(cols)})});
  EXPECT_EQ(shape(c), S({2, 2, 4}));
  EXPECT_EQ(values(c), V({0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23}));
  Tensor none = Tensor::from_vector<bool>({false, false});
  EXPECT_EQ(shape(run(OpId::index, {IValue(x), idx_list({IValue(none)})})), S({0, 3, 4}));
  expect_error(
      [&] {
        run(OpId::index, {IValue(x), idx_list({IValue(cols)})});
      },
      "The shape of the mask [3] at index 0 does not match the shape of the indexed "
      "tensor [2, 3, 4] at index 0");
}

TEST(IndexKernels, IndexErrors) {
  Tensor x = arange({2, 2});
  expect_error(
      [&] {
        run(OpId::index,
            {IValue(x), idx_list({IValue(longs({0})), IValue(longs({0})), IValue(longs({0}))})});
      },
      "too many indices for tensor of dimension 2");
  expect_error(
      [&] {
        run(OpId::index, {IValue(x), idx_list({IValue(arange({1}))})});
      },
      "tensors used as indices must be long, int, byte or bool tensors");
}

TEST(IndexKernels, IndexSelect) {
  Tensor x = arange({3, 4});
  Tensor rows = run(OpId::index_select, {IValue(x), I(0), IValue(longs({2, 0}))});
  EXPECT_EQ(values(rows), V({8, 9, 10, 11, 0, 1, 2, 3}));
  Tensor t = run(OpId::t, {IValue(x)});  // non-contiguous [4, 3]
  Tensor cols = run(OpId::index_select, {IValue(t), I(-1), IValue(longs({1}))});
  EXPECT_EQ(shape(cols), S({4, 1}));
  EXPECT_EQ(values(cols), V({4, 5, 6, 7}));
  EXPECT_EQ(shape(run(OpId::index_select, {IValue(x), I(1), IValue(longs({}))})), S({3, 0}));
  expect_error(
      [&] {
        run(OpId::index_select, {IValue(x), I(0), IValue(longs({3}))});
      },
      "out of range");
  expect_error(
      [&] {
        run(OpId::index_select, {IValue(x), I(0), IValue(longs({0}, {1, 1}))});
      },
      "Index is supposed to be a vector");
}

TEST(IndexKernels, Gather) {
  Tensor y = arange({3, 3});
  Tensor g1 = run(OpId::gather, {IValue(y), I(1), IValue(longs({2, 0, 1, 1, 0, 2}, {3, 2}))});
  EXPECT_EQ(values(g1), V({2, 0, 4, 4, 6, 8}));
  Tensor g0 = run(OpId::gather, {IValue(y), I(0), IValue(longs({0, 1, 2, 0}, {2, 2}))});
  EXPECT_EQ(values(g0), V({0, 4, 6, 1}));
  expect_error(
      [&] {
        run(OpId::gather, {IValue(y), I(0), IValue(longs({3}, {1, 1}))});
      },
      "index 3 is out of bounds for dimension 0 with size 3");
  expect_error(
      [&] {
        run(OpId::gather, {IValue(y), I(0), IValue(longs({0}))});
      },
      "Index tensor must have the same number of dimensions as input tensor");
}

// ---- Queries ------------------------------------------------------------------------------

TEST(QueryKernels, SizesAndCounts) {
  Tensor x = arange({2, 3});
  EXPECT_EQ(call_op(OpId::size, {IValue(x)})[0].to_int_vector(), S({2, 3}));
  EXPECT_EQ(call_op(OpId::size_dim, {IValue(x), I(-1)})[0].to_int(), 3);
  EXPECT_EQ(call_op(OpId::dim, {IValue(x)})[0].to_int(), 2);
  EXPECT_EQ(call_op(OpId::numel, {IValue(x)})[0].to_int(), 6);
  EXPECT_EQ(call_op(OpId::len_tensor, {IValue(x)})[0].to_int(), 2);
  expect_error([] { call_op(OpId::len_tensor, {IValue(arange({}))}); }, "len() of a 0-d tensor");
  expect_error([&] { call_op(OpId::size_dim, {IValue(x), I(2)}); }, "Dimension out of range");
  expect_error(
      [] {
        call_op(OpId::size_dim, {IValue(arange({})), I(0)});
      },
      "Dimension specified as 0 but tensor has no dimensions");
  EXPECT_EQ(call_op(OpId::size, {IValue(arange({}))})[0].to_int_vector(), S({}));
  EXPECT_EQ(call_op(OpId::numel, {IValue(arange({0, 4}))})[0].to_int(), 0);
}

TEST(QueryKernels, Items) {
  Tensor f = Tensor::scalar(Scalar(2.5), DType::Float32);
  EXPECT_EQ(call_op(OpId::item, {IValue(f)})[0].to_double(), 2.5);
  EXPECT_EQ(call_op(OpId::item_float, {IValue(f)})[0].to_double(), 2.5);
  EXPECT_EQ(call_op(OpId::item_int, {IValue(longs({-4}))})[0].to_int(), -4);
  EXPECT_TRUE(call_op(OpId::item_bool, {IValue(Tensor::from_vector<bool>({true}))})[0].to_bool());
  EXPECT_TRUE(call_op(OpId::item, {IValue(longs({-4}))})[0].is_int());
  expect_error([] { call_op(OpId::item, {IValue(arange({2}))}); },
               "a Tensor with 2 elements cannot be converted to Scalar");
}

TEST(QueryKernels, ToList) {
  Tensor t = run(OpId::t, {IValue(arange({2, 3}))});
  EXPECT_EQ(call_op(OpId::tolist, {IValue(t)})[0].repr(), "[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]");
  EXPECT_EQ(call_op(OpId::tolist, {IValue(longs({1, -2}))})[0].repr(), "[1, -2]");
  EXPECT_EQ(call_op(OpId::tolist, {IValue(Tensor::from_vector<bool>({true}))})[0].repr(), "[True]");
  IValue scalar = call_op(OpId::tolist, {IValue(Tensor::scalar(Scalar(1.5), DType::Float64))})[0];
  EXPECT_TRUE(scalar.is_double());
  EXPECT_EQ(call_op(OpId::tolist, {IValue(arange({0, 2}))})[0].repr(), "[]");
  EXPECT_EQ(call_op(OpId::tolist, {IValue(arange({2, 0}))})[0].repr(), "[[], []]");
}

}  // namespace
}  // namespace tsl
