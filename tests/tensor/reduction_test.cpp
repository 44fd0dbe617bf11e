// CPU reduction kernels against values computed with PyTorch 1.13 (the python3 line
// that produced each expectation is quoted beside it).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
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
using test::run;
using test::values;

void expect_tensor(const Tensor& t, std::vector<int64_t> shape, DType dtype,
                   std::vector<double> expected, double rtol = 2e-7) {
  test::expect_close(t, shape, dtype, expected, rtol, /*floor=*/1.0);
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// x = torch.tensor([((i*7)%11-5)*0.25 for i in range(24)]).reshape(2,3,4)
Tensor sample(DType dtype = DType::Float32) {
  std::vector<float> v;
  for (int i = 0; i < 24; ++i) v.push_back(static_cast<float>(((i * 7) % 11 - 5) * 0.25));
  int64_t shape[] = {2, 3, 4};
  Tensor f = Tensor::from_vector(v, shape);
  if (dtype == DType::Float32) return f;
  Tensor out = Tensor::empty(f.sizes(), dtype);
  copy_into(out, f);
  return out;
}

// x.permute(2, 0, 1): a [4, 2, 3] view with strides [1, 12, 4].
Tensor permuted(const Tensor& x) {
  int64_t sizes[] = {4, 2, 3};
  int64_t strides[] = {1, 12, 4};
  return x.as_strided(sizes, strides, x.storage_offset());
}

IValue dims(std::vector<int64_t> d) { return IValue::int_list(d); }

TEST(Reduction, SumOverDims) {
  Tensor x = sample();
  // x.sum()
  expect_tensor(run(OpId::sum, {x, IValue(), false, IValue()}), {}, DType::Float32, {-0.75});
  // x.sum(1)
  expect_tensor(run(OpId::sum, {x, IValue(int64_t{1}), false, IValue()}), {2, 4}, DType::Float32,
                {-2.0, 0.5, 0.25, 0.0, 0.5, 0.25, 0.0, -0.25});
  // x.sum(-1, keepdim=True)
  expect_tensor(run(OpId::sum, {x, dims({-1}), true, IValue()}), {2, 3, 1}, DType::Float32,
                {0.0, 0.5, -1.75, 1.5, -0.75, -0.25});
  // x.sum([0, 2])
  expect_tensor(run(OpId::sum, {x, dims({0, 2}), false, IValue()}), {3}, DType::Float32,
                {1.5, -0.25, -2.0});
  // x.sum([]) sums everything in torch 1.13
  expect_tensor(run(OpId::sum, {x, dims({}), false, IValue()}), {}, DType::Float32, {-0.75});
  // x.sum([0, 1, 2], keepdim=True)
  expect_tensor(run(OpId::sum, {x, dims({0, 1, 2}), true, IValue()}), {1, 1, 1}, DType::Float32,
                {-0.75});
}

TEST(Reduction, SumDtypes) {
  Tensor x = sample(DType::Float64);
  expect_tensor(run(OpId::sum, {x, dims({1}), false, IValue()}), {2, 4}, DType::Float64,
                {-2.0, 0.5, 0.25, 0.0, 0.5, 0.25, 0.0, -0.25});
  // torch.tensor([[1, 2, 3], [4, 5, 6]]).sum(0) -> int64 [5, 7, 9]
  int64_t shape[] = {2, 3};
  Tensor i = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, shape);
  expect_tensor(run(OpId::sum, {i, dims({0}), false, IValue()}), {3}, DType::Int64, {5, 7, 9});
  // torch.tensor([True, False, True]).sum() -> tensor(2)
  Tensor b = Tensor::from_vector<bool>({true, false, true});
  expect_tensor(run(OpId::sum, {b, IValue(), false, IValue()}), {}, DType::Int64, {2});
  // torch.tensor([[1, 2, 3], [4, 5, 6]]).sum(1, dtype=torch.float64)
  expect_tensor(run(OpId::sum, {i, dims({1}), false, DType::Float64}), {2}, DType::Float64,
                {6, 15});
}

TEST(Reduction, SumZeroDimAndEmpty) {
  Tensor s = Tensor::scalar(3.0, DType::Float32);
  // torch.tensor(3.).sum(0, keepdim=True) -> tensor(3.)
  expect_tensor(run(OpId::sum, {s, dims({0}), true, IValue()}), {}, DType::Float32, {3});
  expect_tensor(run(OpId::sum, {s, dims({-1}), false, IValue()}), {}, DType::Float32, {3});
  EXPECT_EQ(error_of([&] {
              run(OpId::sum, {s, dims({1}), false, IValue()});
            }),
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  int64_t shape[] = {0, 3};
  Tensor e = Tensor::empty(shape, DType::Float32);
  // torch.empty(0, 3).sum(0) -> zeros(3); .sum(1) -> empty [0]
  expect_tensor(run(OpId::sum, {e, dims({0}), false, IValue()}), {3}, DType::Float32, {0, 0, 0});
  expect_tensor(run(OpId::sum, {e, dims({1}), false, IValue()}), {0}, DType::Float32, {});
  // torch.empty(0, 3).mean() -> nan; .prod() -> 1
  expect_tensor(run(OpId::mean, {e, IValue(), false, IValue()}), {}, DType::Float32, {kNaN});
  expect_tensor(run(OpId::prod, {e, IValue(), false, IValue()}), {}, DType::Float32, {1});
}

TEST(Reduction, DimErrors) {
  Tensor x = sample();
  EXPECT_EQ(error_of([&] {
              run(OpId::sum, {x, dims({1, 1}), false, IValue()});
            }),
            "dim 1 appears multiple times in the list of dims");
  EXPECT_EQ(error_of([&] {
              run(OpId::sum, {x, dims({-1, 2}), false, IValue()});
            }),
            "dim 2 appears multiple times in the list of dims");
  EXPECT_EQ(error_of([&] {
              run(OpId::sum, {x, dims({3}), false, IValue()});
            }),
            "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
}

TEST(Reduction, MeanAndProd) {
  Tensor x = sample();
  // x.mean(0)
  expect_tensor(run(OpId::mean, {x, dims({0}), false, IValue()}), {3, 4}, DType::Float32,
                {-0.375, 0.0, 0.375, 0.75, -0.25, 0.125, 0.5, -0.5, -0.125, 0.25, -0.75, -0.375});
  // x.prod(2)
  expect_tensor(run(OpId::prod, {x, IValue(int64_t{2}), false, IValue()}), {2, 3}, DType::Float32,
                {0.390625, -0.0, -0.234375, -0.078125, 0.0, 0.1171875});
  int64_t shape[] = {2};
  Tensor i = Tensor::from_vector<int64_t>({1, 2}, shape);
  EXPECT_EQ(error_of([&] {
              run(OpId::mean, {i, IValue(), false, IValue()});
            }),
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            "complex dtype. Got: Long");
  EXPECT_EQ(error_of([&] {
              run(OpId::mean, {i, IValue(), false, DType::Int64});
            }),
            "mean(): could not infer output dtype. Optional dtype must be either a floating point "
            "or complex dtype. Got: Long");
  // torch.tensor([1, 2]).mean(dtype=torch.float32) -> 1.5
  expect_tensor(run(OpId::mean, {i, IValue(), false, DType::Float32}), {}, DType::Float32, {1.5});
  // torch.tensor([True, True]).prod() -> tensor(1)
  Tensor b = Tensor::from_vector<bool>({true, true});
  expect_tensor(run(OpId::prod, {b, IValue(), false, IValue()}), {}, DType::Int64, {1});
  // Integer overflow wraps as in PyTorch: torch.tensor([2**62, 4]).prod() -> 0
  Tensor big = Tensor::from_vector<int64_t>({int64_t{1} << 62, 4}, shape);
  expect_tensor(run(OpId::prod, {big, IValue(), false, IValue()}), {}, DType::Int64, {0});
}

TEST(Reduction, Extrema) {
  Tensor x = sample();
  // x.amax(1)
  expect_tensor(run(OpId::amax, {x, dims({1}), false}), {2, 4}, DType::Float32,
                {0.25, 0.75, 1.0, 1.25, 0.75, 1.0, 1.25, 0.5});
  // x.amin([0, 2])
  expect_tensor(run(OpId::amin, {x, dims({0, 2}), false}), {3}, DType::Float32,
                {-1.25, -1.0, -1.25});
  expect_tensor(run(OpId::max, {x}), {}, DType::Float32, {1.25});
  expect_tensor(run(OpId::min, {x}), {}, DType::Float32, {-1.25});
  // torch.tensor([1., nan, 3.]).max() -> nan; .amin(0) -> nan
  Tensor n = Tensor::from_vector<float>({1.0f, NAN, 3.0f});
  expect_tensor(run(OpId::max, {n}), {}, DType::Float32, {kNaN});
  expect_tensor(run(OpId::amin, {n, dims({0}), false}), {}, DType::Float32, {kNaN});
  // torch.tensor([-inf, -inf]).amax(0) -> -inf
  Tensor ninf = Tensor::from_vector<float>({-INFINITY, -INFINITY});
  expect_tensor(run(OpId::amax, {ninf, dims({0}), false}), {}, DType::Float32, {-kInf});
  // torch.tensor([True, False]).amax(0) -> True
  Tensor b = Tensor::from_vector<bool>({true, false});
  expect_tensor(run(OpId::amax, {b, dims({0}), false}), {}, DType::Bool, {1});
  int64_t shape[] = {0, 3};
  Tensor e = Tensor::empty(shape, DType::Float32);
  EXPECT_EQ(error_of([&] { run(OpId::max, {e}); }),
            "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument.");
  EXPECT_EQ(error_of([&] {
              run(OpId::amax, {e, dims({0}), false});
            }),
            "amax(): Expected reduction dim 0 to have non-zero size.");
  // torch.empty(0, 3).amax(1) -> empty [0]
  expect_tensor(run(OpId::amax, {e, dims({1}), false}), {0}, DType::Float32, {});
}

TEST(Reduction, MaxMinDimWithIndices) {
  Tensor x = sample();
  auto r = call_op(OpId::max_dim, {x, int64_t{1}, false}, 2);
  // x.max(1)
  expect_tensor(r[0].to_tensor(), {2, 4}, DType::Float32,
                {0.25, 0.75, 1.0, 1.25, 0.75, 1.0, 1.25, 0.5});
  expect_tensor(r[1].to_tensor(), {2, 4}, DType::Int64, {1, 2, 1, 0, 2, 1, 0, 2});
  // x.min(2, keepdim=True)
  r = call_op(OpId::min_dim, {x, int64_t{2}, true}, 2);
  expect_tensor(r[0].to_tensor(), {2, 3, 1}, DType::Float32,
                {-1.25, -0.75, -1.25, -0.5, -1.0, -1.25});
  expect_tensor(r[1].to_tensor(), {2, 3, 1}, DType::Int64, {0, 1, 3, 1, 3, 2});
  // torch.tensor([[1., 3., 3.], [nan, 2., nan]]).max(1) -> ([3, nan], [1, 0])
  int64_t shape[] = {2, 3};
  Tensor t = Tensor::from_vector<float>({1, 3, 3, NAN, 2, NAN}, shape);
  r = call_op(OpId::max_dim, {t, int64_t{1}, false}, 2);
  expect_tensor(r[0].to_tensor(), {2}, DType::Float32, {3, kNaN});
  expect_tensor(r[1].to_tensor(), {2}, DType::Int64, {1, 0});
  // Column form: t.min(0) -> ([nan, 2, nan], [1, 1, 1])
  r = call_op(OpId::min_dim, {t, int64_t{0}, false}, 2);
  expect_tensor(r[0].to_tensor(), {3}, DType::Float32, {kNaN, 2, kNaN});
  expect_tensor(r[1].to_tensor(), {3}, DType::Int64, {1, 1, 1});
  int64_t eshape[] = {0, 3};
  Tensor e = Tensor::empty(eshape, DType::Float32);
  EXPECT_EQ(error_of([&] {
              call_op(OpId::max_dim, {e, int64_t{0}, false}, 2);
            }),
            "max(): Expected reduction dim 0 to have non-zero size.");
  // torch.empty(0, 3).max(1) -> empty values and indices
  r = call_op(OpId::max_dim, {e, int64_t{1}, false}, 2);
  expect_tensor(r[1].to_tensor(), {0}, DType::Int64, {});
  // 0-dim: torch.tensor(5.).max(0) -> (5., 0)
  r = call_op(OpId::max_dim, {Tensor::scalar(5.0, DType::Float32), int64_t{0}, false}, 2);
  expect_tensor(r[0].to_tensor(), {}, DType::Float32, {5});
  expect_tensor(r[1].to_tensor(), {}, DType::Int64, {0});
}

TEST(Reduction, ArgmaxArgmin) {
  Tensor x = sample();
  // x.argmax() -> 3; x.argmin(0)
  expect_tensor(run(OpId::argmax, {x, IValue(), false}), {}, DType::Int64, {3});
  expect_tensor(run(OpId::argmin, {x, int64_t{0}, false}), {3, 4}, DType::Int64,
                {0, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0});
  // torch.ones(2, 3).argmax(keepdim=True) -> [[0]]
  int64_t shape[] = {2, 3};
  Tensor ones = Tensor::from_vector<float>({1, 1, 1, 1, 1, 1}, shape);
  expect_tensor(run(OpId::argmax, {ones, IValue(), true}), {1, 1}, DType::Int64, {0});
  Tensor b = Tensor::from_vector<bool>({true, false});
  EXPECT_EQ(error_of([&] {
              run(OpId::argmax, {b, IValue(), false});
            }),
            "\"argmax_cpu\" not implemented for 'Bool'");
  int64_t eshape[] = {0, 3};
  Tensor e = Tensor::empty(eshape, DType::Float32);
  EXPECT_EQ(error_of([&] {
              run(OpId::argmax, {e, IValue(), false});
            }),
            "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  // torch.tensor([3, 1, 1, 7]).argmin() -> 1 (first of ties)
  Tensor i = Tensor::from_vector<int64_t>({3, 1, 1, 7});
  expect_tensor(run(OpId::argmin, {i, IValue(), false}), {}, DType::Int64, {1});
}

TEST(Reduction, NonContiguousInputs) {
  Tensor xt = permuted(sample());
  // xt = x.permute(2, 0, 1); xt.sum(0), xt.sum(2), xt.sum(1)
  expect_tensor(run(OpId::sum, {xt, dims({0}), false, IValue()}), {2, 3}, DType::Float32,
                {0.0, 0.5, -1.75, 1.5, -0.75, -0.25});
  expect_tensor(run(OpId::sum, {xt, dims({2}), false, IValue()}), {4, 2}, DType::Float32,
                {-2.0, 0.5, 0.5, 0.25, 0.25, 0.0, 0.0, -0.25});
  expect_tensor(run(OpId::sum, {xt, dims({1}), false, IValue()}), {4, 3}, DType::Float32,
                {-0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, -1.5, 1.5, -1.0, -0.75});
  // xt.var([0, 2])
  expect_tensor(run(OpId::var_dim, {xt, dims({0, 2}), true, false}), {2}, DType::Float32,
                {0.7552083134651184, 0.6458333134651184});
  // xt.max(0).indices
  auto r = call_op(OpId::max_dim, {xt, int64_t{0}, false}, 2);
  expect_tensor(r[1].to_tensor(), {2, 3}, DType::Int64, {3, 2, 1, 2, 1, 0});
  // xt.cumsum(0)
  expect_tensor(run(OpId::cumsum, {xt, int64_t{0}, IValue()}), {4, 2, 3}, DType::Float32,
                {-1.25, 0.25, -1.0, 0.5,  -0.75, 0.75,  -0.75, -0.5, -0.25, 0.0, 0.25,  0.5,
                 -1.25, 0.5,  -0.5, 1.25, 0.25,  -0.75, 0.0,   0.5,  -1.75, 1.5, -0.75, -0.25});
  // An expanded view: torch.tensor([1., 2.]).expand(3, 2).sum(0) -> [3, 6]
  Tensor v = Tensor::from_vector<float>({1, 2});
  int64_t sizes[] = {3, 2};
  int64_t strides[] = {0, 1};
  Tensor ex = v.as_strided(sizes, strides, 0);
  expect_tensor(run(OpId::sum, {ex, dims({0}), false, IValue()}), {2}, DType::Float32, {3, 6});
  expect_tensor(run(OpId::sum, {ex, dims({1}), false, IValue()}), {3}, DType::Float32, {3, 3, 3});
}

TEST(Reduction, LogSumExpIsStable) {
  Tensor s = sample();
  Tensor s10 = Tensor::empty(s.sizes(), DType::Float32);
  for (int i = 0; i < 24; ++i) s10.data_ptr<float>()[i] = s.data_ptr<float>()[i] * 10;
  // torch.logsumexp(x * 10, 2)
  expect_tensor(run(OpId::logsumexp, {s10, dims({2}), false}), {2, 3}, DType::Float32,
                {12.500553131103516, 10.000597953796387, 7.500045299530029, 12.500597953796387,
                 10.000045776367188, 7.57893180847168});
  // torch.logsumexp(x * 10, [0, 1])
  expect_tensor(run(OpId::logsumexp, {s10, dims({0, 1}), false}), {4}, DType::Float32,
                {7.585097789764404, 10.085101127624512, 12.578893661499023, 12.500601768493652});
  // torch.logsumexp(torch.tensor([1000., 1000.]), 0) -> 1000.6931
  Tensor big = Tensor::from_vector<float>({1000, 1000});
  expect_tensor(run(OpId::logsumexp, {big, dims({0}), false}), {}, DType::Float32,
                {1000.6931471805599});
  // torch.logsumexp(torch.tensor([-inf, -inf]), 0) -> -inf; with +inf -> inf
  Tensor ninf = Tensor::from_vector<float>({-INFINITY, -INFINITY});
  expect_tensor(run(OpId::logsumexp, {ninf, dims({0}), false}), {}, DType::Float32, {-kInf});
  Tensor pinf = Tensor::from_vector<float>({INFINITY, 1});
  expect_tensor(run(OpId::logsumexp, {pinf, dims({0}), false}), {}, DType::Float32, {kInf});
  // torch.logsumexp(torch.tensor([1, 2]), 0) -> 2.3133 (float32)
  Tensor i = Tensor::from_vector<int64_t>({1, 2});
  expect_tensor(run(OpId::logsumexp, {i, dims({0}), false}), {}, DType::Float32,
                {2.3132617473602295});
}

TEST(Reduction, VarAndStd) {
  Tensor x = sample();
  // x.var(); x.var(1); x.std(2, unbiased=False); x.std([0, 2])
  expect_tensor(run(OpId::var, {x, true}), {}, DType::Float32, {0.6756114363670349});
  expect_tensor(run(OpId::var_dim, {x, dims({1}), true, false}), {2, 4}, DType::Float32,
                {0.6458333134651184, 0.6458333134651184, 0.6458333134651184, 1.5625,
                 0.6458333134651184, 0.6458333134651184, 1.5625, 0.6458333134651184});
  expect_tensor(run(OpId::std_dim, {x, dims({2}), false, false}), {2, 3}, DType::Float32,
                {0.9519716501235962, 0.625, 0.7781187295913696, 0.625, 0.7781187295913696,
                 0.7781187295913696});
  expect_tensor(run(OpId::std_dim, {x, dims({0, 2}), true, true}), {1, 3, 1}, DType::Float32,
                {0.8838834762573242, 0.7727212905883789, 0.8556534647941589});
  // torch.tensor([1.]).std() -> nan; torch.empty(0).var() -> nan
  expect_tensor(run(OpId::std, {Tensor::from_vector<float>({1}), true}), {}, DType::Float32,
                {kNaN});
  int64_t zero[] = {0};
  expect_tensor(run(OpId::var, {Tensor::empty(zero, DType::Float64), true}), {}, DType::Float64,
                {kNaN});
  Tensor i = Tensor::from_vector<int64_t>({1, 2});
  EXPECT_EQ(error_of([&] {
              run(OpId::var, {i, true});
            }),
            "std and var only support floating point and complex dtypes");
}

TEST(Reduction, Norms) {
  Tensor x = sample();
  auto norm1 = [&](Scalar p) { return run(OpId::norm, {x, IValue(p), dims({1}), false}); };
  // torch.norm(x, p, dim=[1]) for p in 2, 1, inf, -inf, 0, 3, 0.5
  expect_tensor(norm1(2.0), {2, 4}, DType::Float32,
                {1.620185136795044, 1.172603964805603, 1.145643949508667, 1.7677669525146484,
                 1.172603964805603, 1.145643949508667, 1.7677669525146484, 1.145643949508667});
  expect_tensor(norm1(int64_t{1}), {2, 4}, DType::Float32,
                {2.5, 2.0, 1.75, 2.5, 2.0, 1.75, 2.5, 1.75});
  expect_tensor(norm1(kInf), {2, 4}, DType::Float32, {1.25, 0.75, 1.0, 1.25, 0.75, 1.0, 1.25, 1.0});
  expect_tensor(norm1(-kInf), {2, 4}, DType::Float32, {0.25, 0.5, 0.25, 0.0, 0.5, 0.25, 0.0, 0.25});
  expect_tensor(norm1(0.0), {2, 4}, DType::Float32, {3, 3, 3, 2, 3, 3, 2, 3});
  expect_tensor(norm1(3.0), {2, 4}, DType::Float32,
                {1.437224268913269, 0.9894729256629944, 1.044834852218628, 1.5749013423919678,
                 0.9894729256629944, 1.044834852218628, 1.5749013423919678, 1.044834852218628});
  expect_tensor(norm1(0.5), {2, 4}, DType::Float32,
                {6.854101657867432, 5.949489116668701, 4.871320724487305, 5.0, 5.949489116668701,
                 4.871320724487305, 5.0, 4.871320724487305});
  // torch.norm(x) -> 3.9449334144592285
  expect_tensor(run(OpId::norm, {x, IValue(int64_t{2}), IValue(), false}), {}, DType::Float32,
                {3.9449334144592285});
  // torch.norm(torch.empty(0), inf) -> 0
  int64_t zero[] = {0};
  expect_tensor(run(OpId::norm, {Tensor::empty(zero, DType::Float32), kInf, IValue(), false}), {},
                DType::Float32, {0});
  Tensor i = Tensor::from_vector<int64_t>({1, 2});
  EXPECT_EQ(error_of([&] {
              run(OpId::norm, {i, 2.0, IValue(), false});
            }),
            "norm(): input dtype should be either floating point or complex. Got Long instead.");
}

TEST(Reduction, AllAny) {
  int64_t shape[] = {2, 3};
  Tensor x = Tensor::from_vector<float>({1, 0, 2, 3, 4, NAN}, shape);
  // x.all() -> False; x.all(1) -> [False, True]; x.any(0) -> [True, True, True]
  expect_tensor(run(OpId::all, {x, IValue(), false}), {}, DType::Bool, {0});
  expect_tensor(run(OpId::all, {x, int64_t{1}, true}), {2, 1}, DType::Bool, {0, 1});
  expect_tensor(run(OpId::any, {x, int64_t{0}, false}), {3}, DType::Bool, {1, 1, 1});
  int64_t zero[] = {0};
  Tensor e = Tensor::empty(zero, DType::Int64);
  expect_tensor(run(OpId::all, {e, IValue(), false}), {}, DType::Bool, {1});
  expect_tensor(run(OpId::any, {e, IValue(), false}), {}, DType::Bool, {0});
}

TEST(Reduction, Cumsum) {
  Tensor x = sample();
  // x.cumsum(2)
  expect_tensor(run(OpId::cumsum, {x, int64_t{2}, IValue()}), {2, 3, 4}, DType::Float32,
                {-1.25, -0.75, -1.25, 0.0, 0.25,  -0.5, 0.5,  0.5,   -1.0, -0.25, -0.5,  -1.75,
                 0.5,   0.0,   1.25,  1.5, -0.75, 0.25, 0.25, -0.75, 0.75, 0.5,   -0.75, -0.25});
  // x.cumsum(1)
  expect_tensor(run(OpId::cumsum, {x, int64_t{-2}, IValue()}), {2, 3, 4}, DType::Float32,
                {-1.25, 0.5,  -0.5, 1.25, -1.0,  -0.25, 0.5,  1.25,  -2.0, 0.5,  0.25, 0.0,
                 0.5,   -0.5, 1.25, 0.25, -0.25, 0.5,   1.25, -0.75, 0.5,  0.25, 0.0,  -0.25});
  // torch.tensor([True, True]).cumsum(0) -> int64 [1, 2]
  Tensor b = Tensor::from_vector<bool>({true, true});
  expect_tensor(run(OpId::cumsum, {b, int64_t{0}, IValue()}), {2}, DType::Int64, {1, 2});
  expect_tensor(run(OpId::cumsum, {b, int64_t{0}, DType::Float64}), {2}, DType::Float64, {1, 2});
  expect_tensor(run(OpId::cumsum, {Tensor::scalar(2.0, DType::Float32), int64_t{0}, IValue()}), {},
                DType::Float32, {2});
}

// Large inputs take the parallel and tiled paths; sums stay close to the exact value.
TEST(Reduction, LargeSumsAreAccurate) {
  int64_t n = 1 << 22;
  int64_t shape[] = {n};
  Tensor x = Tensor::empty(shape, DType::Float32);
  float* p = x.data_ptr<float>();
  double exact = 0;
  for (int64_t i = 0; i < n; ++i) {
    p[i] = 0.1f + static_cast<float>(i % 1000) * 1e-4f;
    exact += static_cast<double>(p[i]);
  }
  std::vector<double> got = values(run(OpId::sum, {x, IValue(), false, IValue()}));
  EXPECT_NEAR(got[0], exact, exact * 1e-7);
  // As [2048, 2048] summed over dim 0 (column tiles) and dim 1 (rows).
  int64_t sq[] = {2048, 2048};
  Tensor m = x.as_strided(sq, std::vector<int64_t>{2048, 1}, 0);
  std::vector<double> cols = values(run(OpId::sum, {m, dims({0}), false, IValue()}));
  std::vector<double> rows = values(run(OpId::sum, {m, dims({1}), false, IValue()}));
  double col_total = 0, row_total = 0;
  for (double v : cols) col_total += v;
  for (double v : rows) row_total += v;
  EXPECT_NEAR(col_total, exact, exact * 1e-6);
  EXPECT_NEAR(row_total, exact, exact * 1e-6);
  // Column 7 holds 2048 copies of p[7]; row 3 the values p[3*2048 ...].
  double col7 = 0, row3 = 0;
  for (int64_t r = 0; r < 2048; ++r) col7 += p[r * 2048 + 7];
  for (int64_t c = 0; c < 2048; ++c) row3 += p[3 * 2048 + c];
  EXPECT_NEAR(cols[7], col7, col7 * 1e-7);
  EXPECT_NEAR(rows[3], row3, row3 * 1e-7);
  auto mx = call_op(OpId::max_dim, {m, int64_t{0}, false}, 2);
  int64_t best = 0;
  for (int64_t r = 1; r < 2048; ++r) {
    if (p[r * 2048 + 5] > p[best * 2048 + 5]) best = r;
  }
  EXPECT_EQ(values(mx[1].to_tensor())[5], static_cast<double>(best));
}

// Few columns and many rows: the flat-lanes path (outer > 1) and the row-split
// parallel path (outer == 1), against sums computed here.
TEST(Reduction, NarrowColumns) {
  for (int64_t width : {1, 3, 5, 17}) {
    int64_t rows = 50000;
    Tensor x = Tensor::empty(std::vector<int64_t>{2, rows, width}, DType::Float32);
    float* p = x.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) p[i] = static_cast<float>((i * 7) % 23) - 11.0f;
    p[2 * width + 1 % width] = NAN;  // outer 0, row 2
    std::vector<double> sums = values(run(OpId::sum, {x, dims({1}), false, IValue()}));
    std::vector<double> maxes = values(run(OpId::amax, {x, dims({1}), false}));
    Tensor second = x.as_strided(std::vector<int64_t>{rows, width}, std::vector<int64_t>{width, 1},
                                 rows * width);
    std::vector<double> split = values(run(OpId::sum, {second, dims({0}), false, IValue()}));
    for (int64_t o = 0; o < 2; ++o) {
      for (int64_t c = 0; c < width; ++c) {
        double sum = 0, mx = -INFINITY;
        for (int64_t r = 0; r < rows; ++r) {
          double v = p[(o * rows + r) * width + c];
          sum += v;
          mx = std::isnan(v) || std::isnan(mx) ? NAN : std::max(mx, v);
        }
        if (std::isnan(sum)) {
          EXPECT_TRUE(std::isnan(sums[o * width + c]));
        } else {
          EXPECT_EQ(sums[o * width + c], sum) << width << " " << o << " " << c;
        }
        if (std::isnan(mx)) {
          EXPECT_TRUE(std::isnan(maxes[o * width + c]));
        } else {
          EXPECT_EQ(maxes[o * width + c], mx);
        }
        if (o == 1) {
          EXPECT_EQ(split[c], sum) << width << " " << c;
        }
      }
    }
  }
}

// Large reductions split into fixed blocks, so one thread and two give the same bits.
TEST(Reduction, ResultsDoNotDependOnThreadCount) {
  int64_t n = 3 << 20;
  Tensor x = Tensor::empty(std::vector<int64_t>{n}, DType::Float32);
  float* p = x.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>((i * 7919) % 10007) * 1e-3f;
  Tensor cols = x.as_strided(std::vector<int64_t>{n / 3, 3}, std::vector<int64_t>{3, 1}, 0);
  auto compute = [&] {
    std::vector<double> out = values(run(OpId::sum, {x, IValue(), false, IValue()}));
    for (double v : values(run(OpId::sum, {cols, dims({0}), false, IValue()}))) out.push_back(v);
    for (double v : values(run(OpId::var, {x, true}))) out.push_back(v);
    return out;
  };
  int saved = num_threads();
  set_num_threads(1);
  std::vector<double> one = compute();
  set_num_threads(2);
  std::vector<double> two = compute();
  set_num_threads(saved);
  EXPECT_EQ(one, two);
}

}  // namespace
}  // namespace tsl
