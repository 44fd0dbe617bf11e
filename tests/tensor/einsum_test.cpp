// einsum and einsum_backward against values computed with PyTorch 1.13: the
// contractions tutorials use, the implicit output, ellipses, broadcasting size-1
// dims, transposed operands, dtypes, 0-dim and zero-size operands, and PyTorch's
// messages for bad equations.
#include <gtest/gtest.h>

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

Tensor einsum(const std::string& eq, std::vector<Tensor> operands) {
  std::vector<IValue> list(operands.begin(), operands.end());
  return test::run(OpId::einsum, {IValue(eq), IValue::list(std::move(list)), IValue()});
}

void expect_tensor(const Tensor& t, std::vector<int64_t> shape, DType dtype,
                   std::vector<double> expected) {
  EXPECT_EQ(t.sizes(), DimVector(shape));
  EXPECT_EQ(t.dtype(), dtype);
  EXPECT_EQ(values(t), expected);
}

Tensor to(const Tensor& t, DType dtype) { return test::run(OpId::to_dtype, {t, dtype}); }

TEST(Einsum, TutorialContractions) {
  Tensor a = ramp({2, 3}), b = ramp({3, 4}, 5, 9);
  std::vector<double> mm = {3, -3.75, 3, -3.75, -0.25, 3, -0.5, 2.75};
  expect_tensor(einsum("ij,jk->ik", {a, b}), {2, 4}, DType::Float32, mm);
  expect_tensor(einsum("bij,bjk->bik", {ramp({2, 2, 3}), ramp({2, 3, 2}, 5, 9)}), {2, 2, 2},
                DType::Float32, {1.5, 1.5, 0.25, -1, -0.75, 3.5, 0.75, 3.5});
  expect_tensor(einsum("i,i->", {ramp({3}), ramp({3}, 5, 9)}), {}, DType::Float32, {0.75});
  expect_tensor(einsum("ij->ji", {a}), {3, 2}, DType::Float32, {-1.5, -0.5, 0, 1, 1.5, -1});
  expect_tensor(einsum("ii->i", {ramp({3, 3}, 5, 11)}), {3}, DType::Float32, {-1.5, 3, 2});
  expect_tensor(einsum("bi,bi->b", {a, ramp({2, 3}, 5, 9)}), {2}, DType::Float32, {0.75, -3.25});
  expect_tensor(einsum("ij->", {a}), {}, DType::Float32, {-0.5});
  expect_tensor(einsum("bij,bkj->bik", {ramp({2, 2, 3}), ramp({2, 2, 3}, 5, 9)}), {2, 2, 2},
                DType::Float32, {0.75, 0.75, 2.75, -3.25, -3.75, -2.25, -0.75, -3.75});
  expect_tensor(einsum("ij,jk,kl->il", {a, ramp({3, 2}, 5, 9), ramp({2, 2}, 2, 5)}), {2, 2},
                DType::Float32, {-1.5, -2.25, -0.875, 0.875});
}

TEST(Einsum, ImplicitOutputsAndEllipses) {
  Tensor a = ramp({2, 3}), b = ramp({3, 4}, 5, 9);
  std::vector<double> mm = {3, -3.75, 3, -3.75, -0.25, 3, -0.5, 2.75};
  // The implicit output lists the subscripts seen once, in order: 'ba,ac' is '->bc'.
  expect_tensor(einsum("ij,jk", {a, b}), {2, 4}, DType::Float32, mm);
  expect_tensor(einsum("ba,ac", {a, b}), {2, 4}, DType::Float32, mm);
  expect_tensor(einsum("ii", {ramp({3, 3}, 5, 11)}), {}, DType::Float32, {3.5});
  expect_tensor(einsum("i,j", {ramp({2}), ramp({3}, 5, 9)}), {2, 3}, DType::Float32,
                {2.25, -1.5, 1.5, 0, 0, 0});
  // Spaces are ignored; upper case sorts before lower case.
  EXPECT_EQ(einsum(" i j -> j i ", {a}).sizes(), DimVector({3, 2}));
  EXPECT_EQ(einsum("aB", {a}).sizes(), DimVector({3, 2}));
  expect_tensor(einsum("...ij,...jk->...ik", {ramp({2, 2, 3}), ramp({3, 2}, 5, 9)}), {2, 2, 2},
                DType::Float32, {1.5, 1.5, 0.25, -1, 0.75, -1.75, -2.25, 2.75});
  // Ellipsis dims broadcast (size 1 against 3) and may be summed away.
  expect_tensor(einsum("i...,i...->...", {ramp({2, 3, 2}), ramp({2, 1, 2}, 5, 9)}), {3, 2},
                DType::Float32, {1.75, -2.25, -2.25, 1.75, -1, 0.5});
  EXPECT_EQ(einsum("ij->...", {a}).dim(), 0);
}

TEST(Einsum, BroadcastDiagonalsAndLayouts) {
  // A size-1 subscript broadcasts: torch.einsum('ij,jk->ik', ramp(2,1), ramp(3,4))
  expect_tensor(einsum("ij,jk->ik", {ramp({2, 1}), ramp({3, 4}, 5, 9)}), {2, 4}, DType::Float32,
                {2.25, -2.25, 0, -4.5, 0, 0, 0, 0});
  expect_tensor(einsum("iij->ji", {ramp({2, 2, 3}, 5, 11)}), {3, 2}, DType::Float32,
                {-1.5, -1, 1, 1.5, 3.5, -1.5});
  // Transposed operands: ramp(3,2).t() and ramp(4,3).t()
  expect_tensor(einsum("ij,jk->ik", {transposed(ramp({3, 2})), transposed(ramp({4, 3}, 5, 9))}),
                {2, 4}, DType::Float32, {2.75, -1, 4.25, 2.75, 0.5, -1.75, -1.75, 0.5});
  // The result never aliases an operand.
  Tensor a = ramp({2, 3});
  Tensor same = einsum("ij->ij", {a});
  EXPECT_NE(same.raw_data(), a.raw_data());
  EXPECT_EQ(values(same), values(a));
}

TEST(Einsum, DtypesZeroDimAndZeroSize) {
  // Sums of int64 and bool give int64 (as sum); products promote (as mul).
  expect_tensor(einsum("ij->j", {to(ramp({2, 3}), DType::Int64)}), {3}, DType::Int64, {-1, 1, 0});
  Tensor mask = test::run(OpId::gt, {ramp({2, 3}), 0.0});
  expect_tensor(einsum("ij->i", {mask}), {2}, DType::Int64, {1, 1});
  expect_tensor(einsum("i,i->i", {to(ramp({3}), DType::Int64), ramp({3}, 5, 9, DType::Float64)}),
                {3}, DType::Float64, {1.5, 0, -1});
  expect_tensor(
      einsum("ij,jk->ik", {to(ramp({2, 3}), DType::Int64), to(ramp({3, 2}), DType::Int64)}), {2, 2},
      DType::Int64, {2, -1, 0, 1});
  expect_tensor(einsum("->", {Tensor::scalar(3.0, DType::Float64)}), {}, DType::Float64, {3});
  expect_tensor(
      einsum(",->", {Tensor::scalar(3.0, DType::Float32), Tensor::scalar(2.0, DType::Float32)}), {},
      DType::Float32, {6});
  Tensor e20 = Tensor::empty(std::vector<int64_t>{2, 0}, DType::Float32);
  Tensor e03 = Tensor::empty(std::vector<int64_t>{0, 3}, DType::Float32);
  expect_tensor(einsum("ij,jk->ik", {e20, e03}), {2, 3}, DType::Float32, {0, 0, 0, 0, 0, 0});
  expect_tensor(einsum("ij->j", {e03}), {3}, DType::Float32, {0, 0, 0});
}

TEST(Einsum, PyTorchErrors) {
  Tensor a = ramp({2, 3});
  auto err = [](const std::string& eq, std::vector<Tensor> ops) {
    return error_of([&] { einsum(eq, ops); });
  };
  EXPECT_EQ(err("ij,jk->ik", {a, ramp({2, 4})}),
            "einsum(): subscript j has size 2 for operand 1 which does not broadcast with "
            "previously seen size 3");
  EXPECT_EQ(err("ij,jk->ik", {a}),
            "einsum(): fewer operands were provided than specified in the equation");
  EXPECT_EQ(err("ij", {a, a}),
            "einsum(): more operands were provided than specified in the equation");
  EXPECT_EQ(err("ijk,jk->ik", {a, ramp({3, 4})}),
            "einsum(): the number of subscripts in the equation (3) does not match the number of "
            "dimensions (2) for operand 0 and no ellipsis was given");
  EXPECT_EQ(err("ijkl...", {a}),
            "einsum(): the number of subscripts in the equation (4) is more than the number of "
            "dimensions (2) for operand 0");
  EXPECT_EQ(err("ij->il", {a}),
            "einsum(): output subscript l does not appear in the equation for any input operand");
  EXPECT_EQ(err("ij->ii", {a}),
            "einsum(): output subscript i appears more than once in the output");
  EXPECT_EQ(err("i1->i", {a}),
            "einsum(): invalid subscript given at index 1 in the equation string, subscripts "
            "must be in [a-zA-Z]");
  EXPECT_EQ(err("ij->ij,", {a}),
            "einsum(): invalid subscript given at index 6 in the equation string, subscripts "
            "must be in [a-zA-Z]");
  EXPECT_EQ(err("i.j", {a}), "einsum(): found '.' for operand 0 that is not part of any ellipsis");
  EXPECT_EQ(err("...i...", {a}),
            "einsum(): found '.' for operand 0 for which an ellipsis was already found");
  EXPECT_EQ(err("...ij->.", {a}),
            "einsum(): found '.' for output that is not part of any ellipsis (...)");
  EXPECT_EQ(err("ii", {a}),
            "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2");
  EXPECT_EQ(err("ij,jk->ik", {a, ramp({3, 2}, 3, 7, DType::Float64)}),
            "expected scalar type Float but found Double");
  EXPECT_EQ(err("ij,jk->ik", {test::run(OpId::gt, {a, 0.0}), test::run(OpId::gt, {a, 0.0})}),
            "einsum(): subscript j has size 2 for operand 1 which does not broadcast with "
            "previously seen size 3");
  Tensor m = test::run(OpId::gt, {ramp({3, 3}), 0.0});
  EXPECT_EQ(err("ij,jk->ik", {m, m}), "\"bmm\" not implemented for 'Bool'");
  EXPECT_EQ(err("", {}),
            "einsum(): must specify the equation string and at least one operand, or at least "
            "one operand and its subscripts list");
}

// einsum_backward: the output may repeat a subscript (a diagonal), have one that no
// operand has (a broadcast) or be 1 where the operands are larger (summed).
TEST(Einsum, BackwardForms) {
  auto backward = [](const std::string& eq, std::vector<Tensor> ops, std::vector<int64_t> size) {
    std::vector<IValue> list(ops.begin(), ops.end());
    return test::run(OpId::einsum_backward,
                     {IValue(eq), IValue::list(std::move(list)), IValue::int_list(size)});
  };
  expect_tensor(backward("i->ii", {ramp({3})}, {3, 3}), {3, 3}, DType::Float32,
                {-1.5, 0, 0, 0, 0, 0, 0, 0, 1.5});
  expect_tensor(backward("i->ij", {ramp({2})}, {2, 3}), {2, 3}, DType::Float32,
                {-1.5, -1.5, -1.5, 0, 0, 0});
  // sum over j of a[i] b[j]: ramp(2) * sum(ramp(3, k=5, m=9)) kept as [2, 1]
  expect_tensor(backward("i,j->ij", {ramp({2}), ramp({3}, 5, 9)}, {2, 1}), {2, 1}, DType::Float32,
                {2.25, 0});
  expect_tensor(backward("->ij", {Tensor::scalar(2.0, DType::Float32)}, {2, 2}), {2, 2},
                DType::Float32, {2, 2, 2, 2});
  EXPECT_EQ(error_of([&] {
              backward("i->ij", {ramp({2})}, {3, 3});
            }),
            "einsum_backward: output size [3, 3] does not fit subscript i of size 2");
  EXPECT_EQ(error_of([&] {
              backward("i->ii", {ramp({3})}, {3, 1});
            }),
            "einsum_backward: output subscript i has sizes 3 and 1");
}

}  // namespace
}  // namespace tsl
