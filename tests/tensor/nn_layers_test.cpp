// layer_norm, embedding and one_hot against values computed with PyTorch 1.13, with
// transposed inputs, 0-dim and zero-size ones, and PyTorch's messages.
#include <gtest/gtest.h>

#include "tests/tensor/kernel_test_util.h"

namespace tsl {
namespace {

using test::error_of;
using test::expect_close;
using test::ramp;
using test::run;
using test::values;

Tensor transposed(const Tensor& t) {
  std::vector<int64_t> sizes{t.sizes()[1], t.sizes()[0]};
  std::vector<int64_t> strides{t.strides()[1], t.strides()[0]};
  return t.as_strided(sizes, strides, t.storage_offset());
}
IValue ints(std::vector<int64_t> v) { return IValue::int_list(v); }
Tensor longs(std::vector<int64_t> v, std::vector<int64_t> shape) {
  return Tensor::from_vector<int64_t>(v, shape);
}

Tensor layer_norm(const Tensor& x, std::vector<int64_t> shape, IValue w = IValue(),
                  IValue b = IValue(), double eps = 1e-5) {
  return run(OpId::layer_norm, {x, ints(shape), w, b, eps, true});
}
Tensor embedding(const Tensor& ids, const Tensor& w, IValue padding_idx = IValue()) {
  return run(OpId::embedding, {ids, w, padding_idx, IValue(), 2.0, false, false});
}

TEST(LayerNorm, LastDimsWithWeightAndBias) {
  // F.layer_norm(ramp(2,3,4), [4], ramp(4,k=5,m=9), ramp(4,k=2,m=5))
  expect_close(
      layer_norm(ramp({2, 3, 4}), {4}, ramp({4}, 5, 9), ramp({4}, 2, 5)), {2, 3, 4}, DType::Float32,
      {0.4052478075027466,  -0.3845304250717163, -1.0011043548583984,  -1.5196130275726318,
       -3.3190085887908936, -1.2276034355163574, -0.22760343551635742, -2.8190085887908936,
       -0.5513243079185486, 0.7649009227752686,  1.7649009227752686,   -0.051324307918548584,
       -0.5513242483139038, 0.7649009227752686,  1.7649009227752686,   -0.05132439732551575,
       -3.3190085887908936, -1.2276034355163574, -0.22760343551635742, -2.8190085887908936,
       -2.019613027572632,  -2.0011043548583984, 0.6154695749282837,   0.9052478075027466},
      1e-6, 1);
  // F.layer_norm(ramp(2,3,4).double(), [3,4], eps=0.1)
  expect_close(
      layer_norm(ramp({2, 3, 4}, 3, 7, DType::Float64), {3, 4}, IValue(), IValue(), 0.1), {2, 3, 4},
      DType::Float64,
      {-1.4309304909732714,  -0.03867379705333163, 1.3535828968666084,  -0.5027593616933116,
       0.8894973322266283,   -0.9668449263332916,  0.42541176758664834, -1.4309304909732714,
       -0.03867379705333163, 1.3535828968666084,   -0.5027593616933116, 0.8894973322266283,
       -0.8894973322266283,  0.5027593616933116,   -1.3535828968666082, 0.03867379705333167,
       1.4309304909732716,   -0.4254117675866483,  0.9668449263332916,  -0.8894973322266283,
       0.5027593616933116,   -1.3535828968666082,  0.03867379705333167, 1.4309304909732716},
      1e-12, 1);
  // A transposed input: F.layer_norm(ramp(4,3).t(), [4])
  expect_close(layer_norm(transposed(ramp({4, 3})), {4}), {3, 4}, DType::Float32,
               {-1.3416354656219482, -0.4472118318080902, 0.4472118318080902, 1.3416354656219482,
                0.2773483991622925, 1.3867419958114624, -1.3867419958114624, -0.2773483991622925,
                1.1716938018798828, -1.4320701360702515, -0.39056459069252014, 0.650941014289856},
               1e-6, 1);
  // Zero-size rows or a zero-size normalized shape: empty results.
  EXPECT_EQ(layer_norm(Tensor::empty(std::vector<int64_t>{0, 3}, DType::Float32), {3}).sizes(),
            DimVector({0, 3}));
  EXPECT_EQ(layer_norm(Tensor::empty(std::vector<int64_t>{2, 0}, DType::Float32), {0}).sizes(),
            DimVector({2, 0}));
}

TEST(LayerNorm, Errors) {
  EXPECT_EQ(error_of([&] {
              layer_norm(ramp({2, 3}), {4});
            }),
            "Given normalized_shape=[4], expected input with shape [*, 4], but got input of "
            "size[2, 3]");
  EXPECT_EQ(error_of([&] {
              layer_norm(ramp({2, 3}), {3}, ramp({4}));
            }),
            "Expected weight to be of same shape as normalized_shape, but got weight of shape [4] "
            "and normalized_shape = [3]");
  EXPECT_EQ(error_of([&] {
              layer_norm(ramp({2, 3}), {3}, IValue(), ramp({4}));
            }),
            "Expected bias to be of same shape as normalized_shape, but got bias of shape [4] and "
            "normalized_shape = [3]");
  EXPECT_EQ(error_of([&] {
              layer_norm(ramp({2, 3}), {});
            }),
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            "one element, but got normalized_shape = []");
  EXPECT_EQ(error_of([&] {
              layer_norm(run(OpId::to_dtype, {ramp({2, 3}), DType::Int64}), {3});
            }),
            "\"LayerNormKernelImpl\" not implemented for 'Long'");
  EXPECT_EQ(error_of([&] {
              layer_norm(ramp({2, 3}), {3}, ramp({3}, 3, 7, DType::Float64));
            }),
            "expected scalar type Float but found Double");
}

TEST(Embedding, RowsOfTheWeight) {
  // F.embedding(tensor([[2, 0], [1, 2]]), ramp(3, 2))
  Tensor e = embedding(longs({2, 0, 1, 2}, {2, 2}), ramp({3, 2}));
  EXPECT_EQ(e.sizes(), DimVector({2, 2, 2}));
  EXPECT_EQ(values(e), std::vector<double>({1, -1, -1.5, 0, 1.5, -0.5, 1, -1}));
  // A transposed weight and a 0-dim index: F.embedding(tensor([2, 0]), ramp(2, 3).t())
  EXPECT_EQ(values(embedding(longs({2, 0}, {2}), transposed(ramp({2, 3})))),
            std::vector<double>({1.5, -1, -1.5, -0.5}));
  Tensor row = embedding(Tensor::scalar(int64_t{1}, DType::Int64), ramp({3, 2}));
  EXPECT_EQ(row.sizes(), DimVector({2}));
  // padding_idx changes only the gradient.
  EXPECT_EQ(values(embedding(longs({2, 0}, {2}), ramp({3, 2}), int64_t{-1})),
            values(embedding(longs({2, 0}, {2}), ramp({3, 2}))));
  EXPECT_EQ(embedding(longs({}, {0}), ramp({3, 2})).sizes(), DimVector({0, 2}));
}

TEST(Embedding, Errors) {
  EXPECT_EQ(error_of([&] {
              embedding(longs({1, 3}, {2}), ramp({3, 2}));
            }),
            "index out of range in self");
  EXPECT_EQ(error_of([&] {
              embedding(longs({-1}, {1}), ramp({3, 2}));
            }),
            "index out of range in self");
  EXPECT_EQ(error_of([&] {
              embedding(ramp({2}), ramp({3, 2}));
            }),
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            "types: Long, Int; but got torch.FloatTensor instead (while checking arguments for "
            "embedding)");
  EXPECT_EQ(error_of([&] { embedding(longs({0}, {1}), ramp({6})); }), "'weight' must be 2-D");
  EXPECT_EQ(error_of([&] {
              embedding(longs({0}, {1}), ramp({3, 2}), int64_t{5});
            }),
            "Padding_idx must be within num_embeddings");
  EXPECT_EQ(error_of([&] {
              embedding(longs({0}, {1}), ramp({3, 2}), int64_t{-4});
            }),
            "Padding_idx must be within num_embeddings");
}

TEST(OneHot, ClassesAndErrors) {
  // F.one_hot(tensor([[0, 3], [1, 1]]))
  Tensor h = run(OpId::one_hot, {longs({0, 3, 1, 1}, {2, 2}), int64_t{-1}});
  EXPECT_EQ(h.sizes(), DimVector({2, 2, 4}));
  EXPECT_EQ(h.dtype(), DType::Int64);
  EXPECT_EQ(values(h), std::vector<double>({1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0}));
  // F.one_hot(tensor(2), 3); F.one_hot(tensor([], dtype=long), 3)
  EXPECT_EQ(values(run(OpId::one_hot, {Tensor::scalar(int64_t{2}, DType::Int64), int64_t{3}})),
            std::vector<double>({0, 0, 1}));
  EXPECT_EQ(run(OpId::one_hot, {longs({}, {0}), int64_t{3}}).sizes(), DimVector({0, 3}));
  // A transposed index tensor.
  Tensor ids = transposed(longs({0, 1, 2, 0}, {2, 2}));
  EXPECT_EQ(values(run(OpId::one_hot, {ids, int64_t{3}})),
            std::vector<double>({1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0}));
  auto err = [&](Tensor t, int64_t n) { return error_of([&] { run(OpId::one_hot, {t, n}); }); };
  EXPECT_EQ(err(longs({0, -1}, {2}), -1), "Class values must be non-negative.");
  EXPECT_EQ(err(longs({0, 5}, {2}), 3), "Class values must be smaller than num_classes.");
  EXPECT_EQ(err(longs({1, 0}, {2}), 0), "Class values must be smaller than num_classes.");
  EXPECT_EQ(err(ramp({2}), -1), "one_hot is only applicable to index tensor.");
  EXPECT_EQ(err(longs({}, {0}), -1), "Can not infer total number of classes from empty tensor.");
}

}  // namespace
}  // namespace tsl
