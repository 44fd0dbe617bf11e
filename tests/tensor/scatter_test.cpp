// The scatter kernels (sum_to_size, scatter_add, index_add, index_put, slice_scatter,
// select_scatter), called through call_op as the interpreter calls them. Expected
// values were computed with PyTorch 1.13 (torch.ops.aten.* where torch.* differs).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/ivalue.h"
#include "runtime/tensor/tensor.h"

namespace tsl {
namespace {

using V = std::vector<double>;
using S = std::vector<int64_t>;

IValue I(int64_t v) { return IValue(v); }
IValue Ints(std::vector<int64_t> v) { return IValue::int_list(v); }
IValue T(const Tensor& t) { return IValue(t); }
IValue None() { return IValue(); }

Tensor run(OpId op, std::vector<IValue> args) {
  return call_op(op, std::move(args))[0].to_tensor();
}

// torch.arange(start, start + numel, dtype=float32).reshape(shape).
Tensor arange(std::vector<int64_t> shape, float start = 0) {
  int64_t n = checked_numel(shape);
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + static_cast<float>(i));
  return Tensor::from_vector<float>(v, shape);
}

Tensor filled(std::vector<int64_t> shape, float value) {
  std::vector<float> v(static_cast<size_t>(checked_numel(shape)), value);
  return Tensor::from_vector<float>(v, shape);
}

Tensor longs(std::vector<int64_t> v, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return Tensor::from_vector<int64_t>(v, shape);
}

Tensor as_dtype(const Tensor& t, DType dtype) {
  Tensor out = Tensor::empty(t.sizes(), dtype);
  copy_into(out, t);
  return out;
}

std::vector<double> values(const Tensor& t) {
  Tensor c = Tensor::empty(t.sizes(), DType::Float64);
  copy_into(c, t);
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }

Tensor transposed(const Tensor& t) { return run(OpId::t, {T(t)}); }

// Runs `fn`, expecting a tsl::Error whose message contains `needle`.
template <typename Fn>
void expect_error(Fn&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing: " << needle;
  } catch (const InternalError& e) {
    ADD_FAILURE() << "internal error: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// ---- sum_to_size ------------------------------------------------------------------------

Tensor sum_to_size(const Tensor& x, std::vector<int64_t> size) {
  return run(OpId::sum_to_size, {T(x), Ints(size)});
}

TEST(ScatterKernels, SumToSizeReturnsSelfWhenTheShapeMatches) {
  Tensor x = arange({2, 3});
  EXPECT_TRUE(sum_to_size(x, {2, 3}).is_same(x));
  Tensor b = as_dtype(x, DType::Bool);  // no int64 promotion when nothing is summed
  EXPECT_TRUE(sum_to_size(b, {2, 3}).is_same(b));
  Tensor s = Tensor::scalar(Scalar(5.0), DType::Float32);
  EXPECT_TRUE(sum_to_size(s, {}).is_same(s));
}

TEST(ScatterKernels, SumToSizeSumsLeadingAndSizeOneDims) {
  Tensor x = arange({2, 3, 4});
  Tensor a = sum_to_size(x, {3, 1});
  EXPECT_EQ(shape(a), S({3, 1}));
  EXPECT_EQ(values(a), V({60, 92, 124}));
  EXPECT_EQ(values(sum_to_size(x, {1, 4})), V({60, 66, 72, 78}));
  EXPECT_EQ(shape(sum_to_size(x, {1, 4})), S({1, 4}));
  EXPECT_EQ(values(sum_to_size(x, {2, 1, 1})), V({66, 210}));
  Tensor all = sum_to_size(x, {});
  EXPECT_EQ(shape(all), S({}));
  EXPECT_EQ(values(all), V({276}));
  EXPECT_EQ(values(sum_to_size(arange({2, 3}), {3})), V({3, 5, 7}));
  EXPECT_EQ(values(sum_to_size(arange({2, 3}), {2, 1})), V({3, 12}));
}

TEST(ScatterKernels, SumToSizeDtypesLayoutsAndZeroSize) {
  // torch: int and bool sums are int64 as in sum().
  Tensor i = sum_to_size(as_dtype(arange({2, 3}), DType::Int64), {3});
  EXPECT_EQ(i.dtype(), DType::Int64);
  EXPECT_EQ(values(i), V({3, 5, 7}));
  Tensor b = sum_to_size(as_dtype(filled({2, 3}, 1), DType::Bool), {1, 3});
  EXPECT_EQ(b.dtype(), DType::Int64);
  EXPECT_EQ(values(b), V({2, 2, 2}));
  Tensor d = sum_to_size(as_dtype(arange({2, 3}), DType::Float64), {1, 1});
  EXPECT_EQ(d.dtype(), DType::Float64);
  EXPECT_EQ(values(d), V({15}));
  // arange(6).reshape(3, 2).t() is [2, 3] and not contiguous.
  EXPECT_EQ(values(sum_to_size(transposed(arange({3, 2})), {1, 3})), V({1, 5, 9}));
  Tensor z = sum_to_size(arange({0, 3}), {1, 3});
  EXPECT_EQ(shape(z), S({1, 3}));
  EXPECT_EQ(values(z), V({0, 0, 0}));
  EXPECT_EQ(shape(sum_to_size(arange({0, 3}), {3})), S({3}));
}

TEST(ScatterKernels, SumToSizeErrors) {
  Tensor x = arange({2, 3});
  expect_error([&] { sum_to_size(x, {4}); }, "size {[4]} is not expandable to size {[2, 3]}.");
  expect_error([&] { sum_to_size(x, {2, 2, 3}); }, "size {[2, 2, 3]} is not expandable");
  expect_error([&] { sum_to_size(x, {3, 2}); }, "size {[3, 2]} is not expandable");
  expect_error([&] { sum_to_size(x, {-1, 3}); }, "size {[-1, 3]} is not expandable");
  expect_error(
      [&] {
        sum_to_size(arange({1, 3}), {2, 3});
      },
      "size {[2, 3]} is not expandable to size {[1, 3]}.");
  expect_error([&] { sum_to_size(arange({1, 3}), {0, 3}); }, "is not expandable");
}

// ---- scatter_add ------------------------------------------------------------------------

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return run(OpId::scatter_add, {T(self), I(dim), T(index), T(src)});
}

TEST(ScatterKernels, ScatterAddAlongEachDim) {
  Tensor zeros = filled({3, 4}, 0);
  Tensor index = longs({0, 1, 2, 0, 2, 0, 0, 1}, {2, 4});
  Tensor src = arange({3, 4}, 1);
  Tensor a = scatter_add(zeros, 0, index, src);
  EXPECT_EQ(shape(a), S({3, 4}));
  EXPECT_EQ(values(a), V({1, 6, 7, 4, 0, 2, 0, 8, 5, 0, 3, 0}));
  Tensor b = scatter_add(filled({3, 4}, 1), -1, index, src);
  EXPECT_EQ(values(b), V({6, 3, 4, 1, 14, 9, 6, 1, 1, 1, 1, 1}));
  EXPECT_EQ(values(zeros), V(12, 0.0));  // the input is not modified
}

TEST(ScatterKernels, ScatterAddNonContiguousAndDtypes) {
  // index = tensor([[0,2],[1,1],[2,0]]).t(); src = arange(1., 13).reshape(4, 3)[::2]
  Tensor index = transposed(longs({0, 2, 1, 1, 2, 0}, {3, 2}));
  Tensor rows = arange({4, 3}, 1);
  int64_t sizes[] = {2, 3};
  int64_t strides[] = {6, 1};
  Tensor src = rows.as_strided(sizes, strides, 0);
  Tensor out = scatter_add(arange({3, 3}), 0, index, src);
  EXPECT_EQ(values(out), V({1, 1, 11, 3, 14, 5, 13, 7, 11}));
  // int64 sums; bool adds as logical or.
  Tensor l = scatter_add(longs({0, 0, 0}), 0, longs({0, 0}), longs({4, 5}));
  EXPECT_EQ(l.dtype(), DType::Int64);
  EXPECT_EQ(values(l), V({9, 0, 0}));
  Tensor t = as_dtype(filled({2}, 1), DType::Bool);
  Tensor b = scatter_add(as_dtype(filled({3}, 0), DType::Bool), 0, longs({0, 0}), t);
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(values(b), V({1, 0, 0}));
}

TEST(ScatterKernels, ScatterAddZeroDimAndZeroSize) {
  Tensor one = Tensor::scalar(Scalar(1.0), DType::Float32);
  Tensor five = Tensor::scalar(Scalar(5.0), DType::Float32);
  Tensor r = scatter_add(one, 0, Tensor::scalar(Scalar(int64_t{0}), DType::Int64), five);
  EXPECT_EQ(shape(r), S({}));
  EXPECT_EQ(values(r), V({6}));
  // A 0-dim index counts as one element: torch gives [1., 7.].
  Tensor v = scatter_add(arange({2}, 1), 0, Tensor::scalar(Scalar(int64_t{1}), DType::Int64),
                         Tensor::from_vector<float>({5, 3}));
  EXPECT_EQ(values(v), V({1, 7}));
  EXPECT_EQ(values(scatter_add(one, 0, longs({0, 0}), Tensor::from_vector<float>({5, 2}))), V({8}));
  // An empty index changes nothing and checks no shapes.
  Tensor e = scatter_add(arange({3, 4}), 0, longs({}, {0, 4}), filled({3}, 1));
  EXPECT_EQ(values(e), values(arange({3, 4})));
  EXPECT_EQ(shape(scatter_add(arange({0, 4}), 0, longs({}, {0, 4}), arange({3, 4}))), S({0, 4}));
}

TEST(ScatterKernels, ScatterAddErrors) {
  Tensor x = filled({3, 4}, 0);
  Tensor src = arange({3, 4});
  Tensor index = longs({0, 1, 2, 0, 2, 0, 0, 1}, {2, 4});
  expect_error([&] { scatter_add(x, 0, index, as_dtype(src, DType::Float64)); },
               "scatter(): Expected self.dtype to be equal to src.dtype");
  expect_error([&] { scatter_add(x, 0, as_dtype(index, DType::Float32), src); },
               "scatter(): Expected dtype int64 for index");
  expect_error(
      [&] {
        scatter_add(x, 0, longs({3}, {1, 1}), src);
      },
      "index 3 is out of bounds for dimension 0 with size 3");
  expect_error(
      [&] {
        scatter_add(x, 0, longs({-1}, {1, 1}), src);
      },
      "index -1 is out of bounds for dimension 0 with size 3");
  expect_error(
      [&] {
        scatter_add(x, 0, longs(S(16, 0), {4, 4}), src);
      },
      "Expected index [4, 4] to be smaller than self [3, 4] apart from dimension 0 and "
      "to be smaller size than src [3, 4]");
  expect_error(
      [&] {
        scatter_add(x, 0, longs(S(10, 0), {2, 5}), filled({2, 5}, 1));
      },
      "Expected index [2, 5] to be smaller than self [3, 4]");
  expect_error(
      [&] {
        scatter_add(x, 0, longs({0, 0, 0, 0}), src);
      },
      "Index tensor must have the same number of dimensions as self tensor");
  expect_error(
      [&] {
        scatter_add(x, 0, index, filled({3, 4, 1}, 1));
      },
      "Index tensor must have the same number of dimensions as src tensor");
  expect_error([&] { scatter_add(x, 2, index, src); },
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

// ---- index_add --------------------------------------------------------------------------

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha = Scalar(int64_t{1})) {
  return run(OpId::index_add, {T(self), I(dim), T(index), T(source), IValue(alpha)});
}

TEST(ScatterKernels, IndexAddRowsWithAlpha) {
  Tensor ones = filled({5, 3}, 1);
  Tensor source = arange({3, 3}, 1);
  Tensor a = index_add(ones, 0, longs({0, 4, 2}), source);
  EXPECT_EQ(values(a), V({2, 3, 4, 1, 1, 1, 8, 9, 10, 1, 1, 1, 5, 6, 7}));
  Tensor b = index_add(ones, 0, longs({0, 0, 2}), source, Scalar(int64_t{2}));
  EXPECT_EQ(values(b), V({11, 15, 19, 1, 1, 1, 15, 17, 19, 1, 1, 1, 1, 1, 1}));
  Tensor c = index_add(ones, 0, longs({0, 0, 2}), source, Scalar(2.5));
  EXPECT_EQ(values(c), V({13.5, 18.5, 23.5, 1, 1, 1, 18.5, 21, 23.5, 1, 1, 1, 1, 1, 1}));
  // int64 converts alpha to an integer: torch gives 2 * source for alpha=2.5.
  Tensor i = index_add(as_dtype(ones, DType::Int64), 0, longs({0, 0, 2}),
                       as_dtype(source, DType::Int64), Scalar(2.5));
  EXPECT_EQ(i.dtype(), DType::Int64);
  EXPECT_EQ(values(i), values(b));
  EXPECT_EQ(values(ones), V(15, 1.0));
}

TEST(ScatterKernels, IndexAddAlongInnerDimsAndBroadcastSlices) {
  Tensor a = index_add(filled({2, 4}, 0), 1, longs({3, 0, 3}), arange({2, 3}, 1));
  EXPECT_EQ(values(a), V({2, 0, 0, 4, 5, 0, 0, 10}));
  Tensor b = index_add(filled({5, 3}, 1), -1, longs({2, 1}), filled({5, 2}, 1));
  EXPECT_EQ(values(b), V({1, 2, 2, 1, 2, 2, 1, 2, 2, 1, 2, 2, 1, 2, 2}));
  // Source slices broadcast to self's slices: torch adds a [1] slice to a [2] slice.
  Tensor c = index_add(filled({2, 4}, 1), 1, longs({3, 0, 3}), arange({1, 3}, 1));
  EXPECT_EQ(values(c), V({3, 1, 1, 5, 3, 1, 1, 5}));
  Tensor d = index_add(filled({5, 3}, 1), 0, longs({0, 4, 1}), filled({3}, 1));
  EXPECT_EQ(values(d), V({2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 2, 2, 2}));
  // Non-contiguous source: arange(1., 10).reshape(3, 3).t()
  Tensor e = index_add(filled({3, 3}, 0), 0, longs({2, 1, 0}), transposed(arange({3, 3}, 1)));
  EXPECT_EQ(values(e), V({3, 6, 9, 2, 5, 8, 1, 4, 7}));
}

TEST(ScatterKernels, IndexAddSmallSelvesAndEmpty) {
  Tensor one = Tensor::scalar(Scalar(1.0), DType::Float32);
  Tensor four = Tensor::scalar(Scalar(4.0), DType::Float32);
  Tensor zero_index = Tensor::scalar(Scalar(int64_t{0}), DType::Int64);
  EXPECT_EQ(values(index_add(one, 0, zero_index, four)), V({5}));
  EXPECT_EQ(values(index_add(one, 0, longs({0, 0}), Tensor::from_vector<float>({4, 2}))), V({7}));
  EXPECT_EQ(values(index_add(arange({1}, 1), 0, zero_index, four)), V({5}));
  Tensor b = index_add(as_dtype(filled({3}, 0), DType::Bool), 0, longs({1}),
                       as_dtype(filled({1}, 1), DType::Bool));
  EXPECT_EQ(values(b), V({0, 1, 0}));
  EXPECT_EQ(values(index_add(filled({2, 3}, 1), 0, longs({}), filled({0, 3}, 1))), V(6, 1.0));
  EXPECT_EQ(shape(index_add(filled({3, 0}, 1), 0, longs({1, 1}), filled({2, 0}, 1))), S({3, 0}));
}

TEST(ScatterKernels, IndexAddErrors) {
  Tensor x = filled({5, 3}, 1);
  Tensor source = arange({3, 3});
  expect_error(
      [&] {
        index_add(x, 0, longs({0, 4, 2}), as_dtype(source, DType::Float64));
      },
      "index_add(): self (Float) and source (Double) must have the same scalar type");
  expect_error(
      [&] {
        index_add(x, 0, longs({0, 4, 2}, {1, 3}), source);
      },
      "index_add(): Index is supposed to be a vector, but got dim: 2");
  expect_error(
      [&] {
        index_add(x, 0, longs({0, 4}), source);
      },
      "index_add(): Number of indices (2) should be equal to source.size(dim): (3), for "
      "dim: 0");
  expect_error([&] { index_add(x, 0, longs({0, 5, 1}), source); }, "index 5 is out of range");
  expect_error([&] { index_add(x, 0, longs({0, -1, 1}), source); }, "index -1 is out of range");
  expect_error(
      [&] {
        index_add(x, 0, as_dtype(longs({0, 1, 1}), DType::Float32), source);
      },
      "Expected dtype int64 for index");
  expect_error(
      [&] {
        index_add(x, 0, longs({0, 4, 1}), filled({3, 2}, 1));
      },
      "cannot be broadcast to the slices of self [5, 3]");
  expect_error([&] { index_add(x, 2, longs({0}), source); }, "Dimension out of range");
  expect_error(
      [&] {
        index_add(arange({3}), 0, longs({0, 1}), arange({2, 2}));
      },
      "source.dim() (2) must one or zero for given self.dim() (1)");
}

// ---- index_put --------------------------------------------------------------------------

Tensor index_put(const Tensor& self, std::vector<IValue> indices, const Tensor& values,
                 bool accumulate = false) {
  return run(OpId::index_put,
             {T(self), IValue::list(std::move(indices)), T(values), IValue(accumulate)});
}

TEST(ScatterKernels, IndexPutWritesAndAccumulates) {
  Tensor x = filled({3, 4}, 0);
  Tensor rows = longs({0, 2, 0});
  EXPECT_EQ(values(index_put(x, {T(rows)}, Tensor::scalar(Scalar(1.0), DType::Float32))),
            V({1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(values(index_put(x, {T(rows)}, Tensor::from_vector<float>({1, 2, 3, 4}))),
            V({1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4}));
  Tensor column = Tensor::from_vector<float>({1, 2, 3}, S{3, 1});
  // Duplicates: the last write wins, or they sum when accumulating.
  EXPECT_EQ(values(index_put(x, {T(rows)}, column)), V({3, 3, 3, 3, 0, 0, 0, 0, 2, 2, 2, 2}));
  EXPECT_EQ(values(index_put(x, {T(rows)}, column, true)), V({4, 4, 4, 4, 0, 0, 0, 0, 2, 2, 2, 2}));
  Tensor two =
      index_put(x, {T(rows), T(longs({1, 3, 1}))}, Tensor::from_vector<float>({1, 2, 3}), true);
  EXPECT_EQ(values(two), V({0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}));
  // Whole rows (the vectorized path): torch gives [[8, 10, 12, 14], [0] * 4, [4, 5, 6, 7]].
  EXPECT_EQ(values(index_put(x, {T(rows)}, arange({3, 4}), true)),
            V({8, 10, 12, 14, 0, 0, 0, 0, 4, 5, 6, 7}));
  EXPECT_EQ(values(index_put(x, {T(rows)}, arange({3, 4}))),
            V({8, 9, 10, 11, 0, 0, 0, 0, 4, 5, 6, 7}));
  // Negative indices count from the end.
  EXPECT_EQ(values(index_put(x, {T(longs({0, -1, 0}))}, Tensor::scalar(Scalar(1.0), DType::Float32),
                             true)),
            V({2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(values(x), V(12, 0.0));
}

TEST(ScatterKernels, IndexPutNoneMasksAndSeparatedIndices) {
  Tensor x = filled({3, 4}, 0);
  Tensor column = Tensor::from_vector<float>({1, 2, 3}, S{3, 1});
  EXPECT_EQ(values(index_put(x, {None(), T(longs({1, 3, 1}))}, column, true)),
            V({0, 2, 0, 1, 0, 4, 0, 2, 0, 6, 0, 3}));
  Tensor mask = as_dtype(Tensor::from_vector<float>({1, 0, 1}), DType::Bool);
  EXPECT_EQ(values(index_put(arange({3, 4}), {T(mask)}, Tensor::from_vector<float>({5, 6, 7, 8}))),
            V({5, 6, 7, 8, 4, 5, 6, 7, 5, 6, 7, 8}));
  // Index tensors separated by None: the index dims come first ([2, 3] here).
  Tensor sep = index_put(filled({2, 3, 4}, 0), {T(longs({0, 1})), None(), T(longs({1, 2}))},
                         Tensor::from_vector<float>({1, 2}, S{2, 1}), true);
  EXPECT_EQ(values(sep),
            V({0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0}));
  // Adjacent index tensors stay in place: the indexed shape is [3, 2].
  Tensor adj = index_put(filled({2, 3, 4}, 0), {T(longs({0, 1})), T(longs({1, 2}))},
                         Tensor::from_vector<float>({1, 2}, S{2, 1}), true);
  EXPECT_EQ(values(adj),
            V({0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2}));
  // No index tensor: values fill (or add to) all of self, as x[...] = v. PyTorch's
  // index_put raises here; TSL defines it so that index() without index tensors (a
  // copy of self) has index_put as its adjoint too.
  EXPECT_EQ(values(index_put(arange({2}), {None()}, Tensor::from_vector<float>({5, 6}), true)),
            V({5, 7}));
}

TEST(ScatterKernels, IndexPutDtypesNonContiguousAndEmpty) {
  Tensor l = index_put(longs({0, 0, 0}), {T(longs({0, 0}))}, longs({4, 5}), true);
  EXPECT_EQ(values(l), V({9, 0, 0}));
  Tensor t = as_dtype(filled({2}, 1), DType::Bool);
  Tensor b = index_put(as_dtype(filled({3}, 0), DType::Bool), {T(longs({0, 0}))}, t, true);
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(values(b), V({1, 0, 0}));
  // self = arange(6.).reshape(2, 3).t() (non-contiguous [3, 2]).
  Tensor self = transposed(arange({2, 3}));
  Tensor r = index_put(self, {T(longs({2, 0}))}, Tensor::from_vector<float>({7, 8}));
  EXPECT_EQ(values(r), V({7, 8, 1, 4, 7, 8}));
  Tensor e =
      index_put(filled({3, 4}, 0), {T(longs({}))}, Tensor::scalar(Scalar(1.0), DType::Float32));
  EXPECT_EQ(values(e), V(12, 0.0));
  EXPECT_EQ(shape(index_put(filled({0, 3}, 0), {T(longs({}))}, arange({3}))), S({0, 3}));
}

TEST(ScatterKernels, IndexPutErrors) {
  Tensor x = filled({3, 4}, 0);
  Tensor rows = longs({0, 2, 0});
  expect_error(
      [&] {
        index_put(x, {T(rows)}, Tensor::from_vector<float>({1, 2}));
      },
      "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result "
      "of shape [3, 4]");
  expect_error(
      [&] {
        index_put(x, {T(rows)}, filled({1, 3, 4}, 1));
      },
      "value tensor of shape [1, 3, 4] cannot be broadcast");
  expect_error([&] { index_put(x, {T(rows)}, longs({1})); },
               "Index put requires the source and destination dtypes match, got Float for the "
               "destination and Long for the source.");
  expect_error(
      [&] {
        index_put(x, {T(longs({0, 3, 0}))}, filled({4}, 1));
      },
      "index 3 is out of bounds for dimension 0 with size 3");
  expect_error([&] { index_put(x, {T(longs({-4}))}, filled({4}, 1), true); },
               "index -4 is out of bounds for dimension 0 with size 3");
  expect_error(
      [&] {
        index_put(x, {T(rows), T(rows), T(rows)}, filled({4}, 1));
      },
      "too many indices for tensor of dimension 2");
  expect_error(
      [&] {
        index_put(x, {T(longs({0, 1})), T(longs({0, 1, 2}))}, filled({1}, 1));
      },
      "shape mismatch: indexing tensors could not be broadcast together with shapes [2], "
      "[3]");
  expect_error([&] { index_put(x, {T(arange({2}))}, filled({1}, 1)); },
               "tensors used as indices must be long");
}

// ---- slice_scatter and select_scatter ---------------------------------------------------

Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim, IValue start, IValue end,
                     int64_t step = 1) {
  return run(OpId::slice_scatter, {T(self), T(src), I(dim), start, end, I(step)});
}

TEST(ScatterKernels, SliceScatter) {
  Tensor x = filled({4, 3}, 0);
  EXPECT_EQ(values(slice_scatter(x, arange({2, 3}, 1), 0, I(1), I(3))),
            V({0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0}));
  EXPECT_EQ(values(slice_scatter(x, filled({2, 3}, 1), 0, None(), None(), 2)),
            V({1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(values(slice_scatter(x, filled({2, 3}, 1), 0, I(-3), None(), 2)),
            V({0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(values(slice_scatter(x, filled({4, 2}, 1), -1, I(1), None())),
            V({0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(values(slice_scatter(x, filled({2, 3}, 1), 0, I(-100), I(2))),
            V({1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(values(slice_scatter(x, filled({4, 0}, 1), 1, I(5), None())), V(12, 0.0));
  // src may be non-contiguous or of another dtype (copied as copy_ does).
  Tensor src = transposed(arange({3, 4}));  // [4, 3]
  EXPECT_EQ(values(slice_scatter(x, src, 0, None(), None())), values(src));
  Tensor ints = slice_scatter(as_dtype(x, DType::Int64), filled({4, 3}, 1), 0, None(), None());
  EXPECT_EQ(ints.dtype(), DType::Int64);
  EXPECT_EQ(values(ints), V(12, 1.0));
  EXPECT_EQ(values(x), V(12, 0.0));
}

TEST(ScatterKernels, SliceScatterErrors) {
  Tensor x = filled({4, 3}, 0);
  expect_error(
      [&] {
        slice_scatter(x, filled({4, 2}, 1), 1, I(2), None());
      },
      "expected src to have a size equal to the slice of self. src size = [4, 2], slice "
      "size = [4, 1]");
  expect_error([&] { slice_scatter(x, filled({3}, 1), 1, I(0), I(3)); },
               "src size = [3], slice size = [4, 3]");
  expect_error([&] { slice_scatter(x, x, 0, None(), None(), 0); }, "slice step must be positive");
  expect_error([&] { slice_scatter(x, x, 2, None(), None()); }, "Dimension out of range");
  Tensor s = Tensor::scalar(Scalar(1.0), DType::Float32);
  expect_error([&] { slice_scatter(s, s, 0, None(), None()); },
               "slice() cannot be applied to a 0-dim tensor.");
}

Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  return run(OpId::select_scatter, {T(self), T(src), I(dim), I(index)});
}

TEST(ScatterKernels, SelectScatter) {
  Tensor x = filled({4, 3}, 0);
  EXPECT_EQ(values(select_scatter(x, arange({3}, 1), 0, 1)),
            V({0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(values(select_scatter(x, filled({3}, 1), 0, -1)),
            V({0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(values(select_scatter(x, arange({4}, 1), -1, 2)),
            V({0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4}));
  Tensor two = Tensor::scalar(Scalar(2.0), DType::Float32);
  EXPECT_EQ(values(select_scatter(filled({3}, 1), two, 0, 1)), V({1, 2, 1}));
  EXPECT_EQ(shape(select_scatter(filled({2, 0}, 1), filled({0}, 1), 0, 1)), S({2, 0}));
  Tensor ints = select_scatter(as_dtype(x, DType::Int64), filled({4}, 1), 1, 0);
  EXPECT_EQ(values(ints), V({1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0}));
}

TEST(ScatterKernels, SelectScatterErrors) {
  Tensor x = filled({4, 3}, 0);
  expect_error([&] { select_scatter(x, filled({3}, 1), 1, 0); },
               "expected src to have a size equal to the slice of self. src size = [3], slice "
               "size = [4]");
  expect_error([&] { select_scatter(x, Tensor::scalar(Scalar(1.0), DType::Float32), 1, 0); },
               "src size = [], slice size = [4]");
  expect_error([&] { select_scatter(x, filled({4}, 1), 1, 3); },
               "index 3 is out of bounds for dimension 1 with size 3");
  expect_error([&] { select_scatter(x, filled({4}, 1), 2, 0); }, "Dimension out of range");
  Tensor s = Tensor::scalar(Scalar(1.0), DType::Float32);
  expect_error([&] { select_scatter(s, s, 0, 0); },
               "select() cannot be applied to a 0-dim tensor.");
}

}  // namespace
}  // namespace tsl
