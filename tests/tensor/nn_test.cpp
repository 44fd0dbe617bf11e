// CPU neural-net kernels (softmax, log_softmax, losses) against values computed with
// PyTorch 1.13 (`import torch.nn.functional as F`; ramp as in linalg_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/ivalue.h"
#include "runtime/tensor/tensor.h"
#include "tests/tensor/kernel_test_util.h"

namespace tsl {
namespace {

using test::error_of;
using test::ramp;
using test::run;
using test::values;

void expect_tensor(const Tensor& t, std::vector<int64_t> shape, DType dtype,
                   std::vector<double> expected, double rtol = 1e-6) {
  test::expect_close(t, shape, dtype, expected, rtol, /*floor=*/1e-30);
}

Tensor longs(std::vector<int64_t> v, std::vector<int64_t> shape) {
  return Tensor::from_vector(v, shape);
}
Tensor longs(std::vector<int64_t> v) { return Tensor::from_vector(v); }

TEST(NN, Softmax) {
  Tensor x = ramp({2, 3, 4});
  // F.softmax(x, 2)
  expect_tensor(
      run(OpId::softmax, {x, int64_t{2}, IValue()}), {2, 3, 4}, DType::Float32,
      {0.03535379096865654, 0.15844470262527466,  0.7100998759269714,  0.09610156714916229,
       0.5482603311538696,  0.07419896870851517,  0.3325366973876953,  0.045003946870565414,
       0.11355246603488922, 0.5089068412780762,   0.06887304782867432, 0.3086676001548767,
       0.11355246603488922, 0.5089068412780762,   0.06887304782867432, 0.3086676001548767,
       0.5482603311538696,  0.07419896870851517,  0.3325366973876953,  0.045003946870565414,
       0.2242078334093094,  0.030343228951096535, 0.13598892092704773, 0.6094600558280945});
  // F.softmax(x, 1) (columns)
  expect_tensor(
      run(OpId::softmax, {x, int64_t{-2}, IValue()}), {2, 3, 4}, DType::Float32,
      {0.05661172792315483, 0.17095279693603516, 0.6652409434318542,  0.17095279693603516,
       0.68967205286026,    0.06289001554250717, 0.2447284758090973,  0.06289001554250717,
       0.2537161707878113,  0.7661572098731995,  0.09003057330846786, 0.7661572098731995,
       0.05661172792315483, 0.6652409434318542,  0.05661172792315483, 0.17095279693603516,
       0.68967205286026,    0.2447284758090973,  0.68967205286026,    0.06289001554250717,
       0.2537161707878113,  0.09003057330846786, 0.2537161707878113,  0.7661572098731995});
  // F.softmax(torch.tensor([1000., 999., -1000.]), 0)
  expect_tensor(
      run(OpId::softmax, {Tensor::from_vector<float>({1000, 999, -1000}), int64_t{0}, IValue()}),
      {3}, DType::Float32, {0.7310585975646973, 0.2689414322376251, 0.0});
  // F.softmax(ramp(3), 0, dtype=torch.float64)
  expect_tensor(run(OpId::softmax, {ramp({3}), int64_t{0}, DType::Float64}), {3}, DType::Float64,
                {0.039112573270687456, 0.1752903921400367, 0.7855970345892759}, 1e-14);
  // All -inf gives nan, as in PyTorch.
  expect_tensor(run(OpId::softmax,
                    {Tensor::from_vector<float>({-INFINITY, -INFINITY}), int64_t{0}, IValue()}),
                {2}, DType::Float32, {NAN, NAN});
  expect_tensor(run(OpId::softmax, {Tensor::scalar(3.0, DType::Float32), int64_t{0}, IValue()}), {},
                DType::Float32, {1});
  EXPECT_EQ(error_of([&] {
              run(OpId::softmax, {longs({1, 2}), int64_t{0}, IValue()});
            }),
            "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'");
  EXPECT_EQ(error_of([&] {
              run(OpId::softmax, {x, int64_t{3}, IValue()});
            }),
            "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
}

TEST(NN, LogSoftmax) {
  // F.log_softmax(ramp(2,3,4), 0)
  expect_tensor(
      run(OpId::log_softmax, {ramp({2, 3, 4}), int64_t{0}, IValue()}), {2, 3, 4}, DType::Float32,
      {-0.9740769863128662, -0.9740769863128662,  -0.04858732968568802, -0.9740769863128662,
       -0.9740769863128662, -0.9740769863128662,  -0.9740769863128662,  -0.9740769863128662,
       -0.9740769863128662, -0.04858732968568802, -0.9740769863128662,  -0.9740769863128662,
       -0.4740769863128662, -0.4740769863128662,  -3.0485873222351074,  -0.4740769863128662,
       -0.4740769863128662, -0.4740769863128662,  -0.4740769863128662,  -0.4740769863128662,
       -0.4740769863128662, -3.0485873222351074,  -0.4740769863128662,  -0.4740769863128662});
  // F.log_softmax(torch.tensor([1000., 0., -1000.]), 0) -> [0, -1000, -2000]
  expect_tensor(
      run(OpId::log_softmax, {Tensor::from_vector<float>({1000, 0, -1000}), int64_t{0}, IValue()}),
      {3}, DType::Float32, {0.0, -1000.0, -2000.0});
  // A non-contiguous input: ramp(4, 3).t() along dim 1
  Tensor base = ramp({4, 3});
  Tensor t = base.as_strided(std::vector<int64_t>{3, 4}, std::vector<int64_t>{1, 3}, 0);
  // F.log_softmax(ramp(4,3).t(), 1)
  Tensor got = run(OpId::log_softmax, {t, int64_t{1}, IValue()});
  Tensor ref = run(OpId::log_softmax, {t.contiguous(), int64_t{1}, IValue()});
  EXPECT_EQ(values(got), values(ref));
}

TEST(NN, CrossEntropyClassTargets) {
  Tensor logits = ramp({3, 4}, 5, 9);
  Tensor t = longs({1, 3, 0});
  Tensor w = Tensor::from_vector<float>({0.5f, 1.0f, 2.0f, 0.25f});
  auto ce = [&](Tensor target, IValue weight, int64_t ignore, const char* red, double ls) {
    return run(OpId::cross_entropy, {logits, target, weight, ignore, red, ls});
  };
  // F.cross_entropy(logits, t) and with reduction='none', weight=w
  expect_tensor(ce(t, IValue(), -100, "mean", 0.0), {}, DType::Float32, {0.9023128151893616});
  expect_tensor(ce(t, IValue(), -100, "none", 0.0), {3}, DType::Float32,
                {1.0529667139053345, 0.5529667139053345, 1.1010050773620605});
  expect_tensor(ce(t, w, -100, "mean", 0.0), {}, DType::Float32, {0.995263397693634});
  // ignore_index: F.cross_entropy(logits, torch.tensor([1, -100, 0]))
  expect_tensor(ce(longs({1, -100, 0}), IValue(), -100, "mean", 0.0), {}, DType::Float32,
                {1.0769858360290527});
  // label_smoothing=0.1: mean, none, sum
  expect_tensor(ce(t, IValue(), -100, "mean", 0.1), {}, DType::Float32, {1.010646104812622});
  expect_tensor(ce(t, IValue(), -100, "none", 0.1), {3}, DType::Float32,
                {1.1529667377471924, 0.7029666900634766, 1.1760051250457764});
  expect_tensor(ce(t, IValue(), -100, "sum", 0.1), {}, DType::Float32, {3.031938314437866});
  // F.cross_entropy(logits, torch.tensor([1, 2, -100]), weight=w, label_smoothing=0.2)
  expect_tensor(ce(longs({1, 2, -100}), w, -100, "mean", 0.2), {}, DType::Float32,
                {2.211493968963623});
  // [N, C, d]: F.cross_entropy(ramp(2,3,2,k=5,m=9), torch.tensor([[0,2],[1,1]]))
  Tensor x3 = ramp({2, 3, 2}, 5, 9);
  Tensor t3 = longs({0, 2, 1, 1}, {2, 2});
  expect_tensor(run(OpId::cross_entropy, {x3, t3, IValue(), int64_t{-100}, "mean", 0.0}), {},
                DType::Float32, {1.8970454931259155});
  expect_tensor(run(OpId::cross_entropy, {x3, t3, IValue(), int64_t{-100}, "none", 0.0}), {2, 2},
                DType::Float32,
                {1.680269718170166, 0.6802696585655212, 1.180269718170166, 4.047372817993164});
  // [C] input, 0-dim target: F.cross_entropy(ramp(4), torch.tensor(2))
  expect_tensor(run(OpId::cross_entropy, {ramp({4}), Tensor::scalar(int64_t{2}, DType::Int64),
                                          IValue(), int64_t{-100}, "mean", 0.0}),
                {}, DType::Float32, {0.342349648475647});
}

TEST(NN, CrossEntropyProbabilityTargets) {
  Tensor logits = ramp({3, 4}, 5, 9);
  // probs = torch.softmax(ramp(3,4,k=2,m=5), 1)
  Tensor probs = Tensor::from_vector<float>(
      {0.07839412242174149f, 0.21309731900691986f, 0.5792585611343384f, 0.12925006449222565f,
       0.28748998045921326f, 0.06414768099784851f, 0.17437148094177246f, 0.4739908277988434f,
       0.16740509867668152f, 0.45505422353744507f, 0.101536326110363f, 0.2760043442249298f},
      std::vector<int64_t>{3, 4});
  Tensor w = Tensor::from_vector<float>({0.5f, 1.0f, 2.0f, 0.25f});
  // F.cross_entropy(logits, probs)
  expect_tensor(run(OpId::cross_entropy, {logits, probs, IValue(), int64_t{-100}, "mean", 0.0}), {},
                DType::Float32, {2.200211763381958});
  // F.cross_entropy(logits, probs, weight=w, label_smoothing=0.3, reduction='sum')
  expect_tensor(run(OpId::cross_entropy, {logits, probs, w, int64_t{-100}, "sum", 0.3}), {},
                DType::Float32, {6.976034641265869});
}

TEST(NN, NllLoss) {
  Tensor lp = ramp({3, 4}, 5, 9);
  Tensor t = longs({1, 3, 0});
  Tensor w = Tensor::from_vector<float>({0.5f, 1.0f, 2.0f, 0.25f});
  // F.nll_loss(lp, t); weight=w with sum and mean; reduction='none', ignore_index=3
  expect_tensor(run(OpId::nll_loss, {lp, t, IValue(), int64_t{-100}, "mean"}), {}, DType::Float32,
                {-1.3333333730697632});
  expect_tensor(run(OpId::nll_loss, {lp, t, w, int64_t{-100}, "sum"}), {}, DType::Float32,
                {-1.875});
  expect_tensor(run(OpId::nll_loss, {lp, t, w, int64_t{-100}, "mean"}), {}, DType::Float32,
                {-1.0714285373687744});
  expect_tensor(run(OpId::nll_loss, {lp, t, IValue(), int64_t{3}, "none"}), {3}, DType::Float32,
                {-1.0, 0.0, -0.5});
  // Every target ignored: mean is 0/0 = nan
  expect_tensor(
      run(OpId::nll_loss, {lp, longs({-100, -100, -100}), IValue(), int64_t{-100}, "mean"}), {},
      DType::Float32, {NAN});
  // F.nll_loss(torch.ones(3), torch.tensor(1)) -> -1
  expect_tensor(run(OpId::nll_loss,
                    {Tensor::from_vector<float>({1, 1, 1}),
                     Tensor::scalar(int64_t{1}, DType::Int64), IValue(), int64_t{-100}, "mean"}),
                {}, DType::Float32, {-1});
}

TEST(NN, ClassLossErrors) {
  Tensor x = ramp({2, 3});
  auto nll = [&](Tensor input, Tensor target, IValue weight, const char* red) {
    return run(OpId::nll_loss, {input, target, weight, int64_t{-100}, red});
  };
  EXPECT_EQ(error_of([&] {
              nll(x, longs({0, 5}), IValue(), "mean");
            }),
            "Target 5 is out of bounds.");
  EXPECT_EQ(error_of([&] {
              nll(x, longs({0, -1}), IValue(), "mean");
            }),
            "Target -1 is out of bounds.");
  EXPECT_EQ(error_of([&] {
              run(OpId::cross_entropy, {x, longs({0, 5}), IValue(), int64_t{-100}, "mean", 0.0});
            }),
            "Target 5 is out of bounds.");
  EXPECT_EQ(error_of([&] {
              nll(x, Tensor::from_vector<float>({0, 1}), IValue(), "mean");
            }),
            "expected scalar type Long but found Float");
  EXPECT_EQ(error_of([&] {
              nll(x, longs({0, 1, 1}), IValue(), "mean");
            }),
            "Expected input batch_size (2) to match target batch_size (3).");
  EXPECT_EQ(error_of([&] {
              nll(x, longs({0, 1}), Tensor::from_vector<float>({1, 1}), "mean");
            }),
            "weight tensor should be defined either for all 3 classes or no classes but got "
            "weight tensor of shape: [2]");
  EXPECT_EQ(error_of([&] {
              nll(x, longs({0, 1}), IValue(), "avg");
            }),
            "avg is not a valid value for reduction");
  EXPECT_EQ(error_of([&] {
              nll(ramp({2, 3, 4}), longs({0, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {2, 5}), IValue(), "mean");
            }),
            "Expected target size [2, 4], got [2, 5]");
  EXPECT_EQ(
      error_of([&] { nll(Tensor::scalar(1.0, DType::Float32), longs({1}), IValue(), "mean"); }),
      "Expected 1 or more dimensions (got 0)");
  EXPECT_EQ(error_of([&] {
              run(OpId::cross_entropy,
                  {longs({1, 2}, {1, 2}), longs({0}), IValue(), int64_t{-100}, "mean", 0.0});
            }),
            "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'");
}

TEST(NN, MseLoss) {
  Tensor a = ramp({2, 3});
  Tensor b = ramp({3}, 5, 9);  // broadcast over rows
  // F.mse_loss(a, b.expand(2, 3)) with mean, none, sum
  expect_tensor(run(OpId::mse_loss, {a, b, "mean"}), {}, DType::Float32, {1.375});
  expect_tensor(run(OpId::mse_loss, {a, b, "none"}), {2, 3}, DType::Float32,
                {0.0, 1.0, 6.25, 1.0, 0.0, 0.0});
  expect_tensor(run(OpId::mse_loss, {a, b, "sum"}), {}, DType::Float32, {8.25});
  // F.mse_loss(torch.ones(3), torch.ones(3, dtype=torch.float64)) is float64
  EXPECT_EQ(run(OpId::mse_loss, {a, ramp({2, 3}, 3, 7, DType::Float64), "mean"}).dtype(),
            DType::Float64);
  EXPECT_EQ(error_of([&] {
              run(OpId::mse_loss, {longs({1}), longs({1}), "mean"});
            }),
            "\"mse_cpu\" not implemented for 'Long'");
  EXPECT_EQ(error_of([&] {
              run(OpId::mse_loss, {a, b, "bad"});
            }),
            "bad is not a valid value for reduction");
}

TEST(NN, BinaryCrossEntropy) {
  std::vector<int64_t> shape{2, 3};
  Tensor p = Tensor::from_vector<float>({0.1f, 0.5f, 0.9f, 0.0f, 1.0f, 0.3f}, shape);
  Tensor t = Tensor::from_vector<float>({0.f, 1.f, 1.f, 0.f, 0.f, 0.7f}, shape);
  // F.binary_cross_entropy(p, t): mean, none (logs clamped at -100), weighted sum
  expect_tensor(run(OpId::binary_cross_entropy, {p, t, IValue(), "mean"}), {}, DType::Float32,
                {16.975608825683594});
  expect_tensor(run(OpId::binary_cross_entropy, {p, t, IValue(), "none"}), {2, 3}, DType::Float32,
                {0.10536054521799088, 0.6931471824645996, 0.10536054521799088, 0.0, 100.0,
                 0.949783444404602});
  expect_tensor(
      run(OpId::binary_cross_entropy, {p, t, Tensor::from_vector<float>({1.f, 2.f, 0.5f}), "sum"}),
      {}, DType::Float32, {202.01922607421875});
  // F.binary_cross_entropy(torch.tensor([0.999, 0.9999]), zeros(2), reduction='none')
  expect_tensor(
      run(OpId::binary_cross_entropy, {Tensor::from_vector<float>({0.999f, 0.9999f}),
                                       Tensor::from_vector<float>({0.f, 0.f}), IValue(), "none"}),
      {2}, DType::Float32, {6.907768249511719, 9.210174560546875});
  EXPECT_EQ(error_of([&] {
              run(OpId::binary_cross_entropy,
                  {Tensor::from_vector<float>({0.5f, 1.5f}), Tensor::from_vector<float>({1.f, 0.f}),
                   IValue(), "mean"});
            }),
            "all elements of input should be between 0 and 1");
  EXPECT_EQ(error_of([&] {
              run(OpId::binary_cross_entropy,
                  {Tensor::from_vector<float>({0.5f, 0.5f}), longs({1, 0}), IValue(), "mean"});
            }),
            "Found dtype Long but expected Float");
  EXPECT_EQ(error_of([&] {
              run(OpId::binary_cross_entropy,
                  {Tensor::from_vector<float>({0.5f, 0.5f}),
                   Tensor::from_vector<float>({1.f, 0.f, 1.f}), IValue(), "mean"});
            }),
            "Using a target size ([3]) that is different to the input size ([2]) is deprecated. "
            "Please ensure they have the same size.");
}

// Large rows and columns take the vectorized and tiled paths; rows must sum to 1.
TEST(NN, LargeSoftmaxRowsSumToOne) {
  Tensor x = ramp({64, 1000}, 37, 101);
  for (int64_t dim : {0, 1}) {
    Tensor s = run(OpId::softmax, {x, dim, IValue()});
    Tensor sums =
        call_op(OpId::sum, {s, IValue::int_list(std::vector<int64_t>{dim}), false, IValue()})[0]
            .to_tensor();
    for (double v : values(sums)) EXPECT_NEAR(v, 1.0, 1e-5);
  }
}

}  // namespace
}  // namespace tsl
