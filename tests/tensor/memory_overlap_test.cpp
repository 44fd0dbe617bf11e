// Memory overlap of in-place writes (runtime/tensor/memory_overlap.h): the layouts
// classified as PyTorch's ATen classifies them, and the kernels that write in place
// refusing what PyTorch 1.13 refuses (each case below was run there).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/memory_overlap.h"
#include "runtime/tensor/tensor.h"
#include "tests/tensor/kernel_test_util.h"

namespace tsl {
namespace {

using test::error_of;
using test::values;

Tensor arange16() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  return Tensor::from_vector(v, std::vector<int64_t>{4, 4});
}

Tensor view(const Tensor& t, std::vector<int64_t> sizes, std::vector<int64_t> strides,
            int64_t offset) {
  return t.as_strided(sizes, strides, offset);
}

const std::string kShared =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation.";
const std::string kInternal =
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.";

TEST(MemoryOverlap, DenseLayouts) {
  Tensor x = arange16();
  EXPECT_TRUE(is_non_overlapping_and_dense(x));
  EXPECT_TRUE(is_non_overlapping_and_dense(view(x, {4, 4}, {1, 4}, 0)));   // x.t()
  EXPECT_TRUE(is_non_overlapping_and_dense(view(x, {3, 4}, {4, 1}, 4)));   // x[1:]
  EXPECT_TRUE(is_non_overlapping_and_dense(view(x, {1, 4}, {99, 1}, 0)));  // size-1 dim
  EXPECT_FALSE(is_non_overlapping_and_dense(view(x, {4}, {4}, 0)));        // x[:, 0]
  EXPECT_FALSE(is_non_overlapping_and_dense(view(x, {3, 4}, {0, 1}, 0)));  // expand
}

TEST(MemoryOverlap, InternalOverlap) {
  Tensor x = arange16();
  EXPECT_EQ(has_internal_overlap(x), MemOverlap::No);
  EXPECT_EQ(has_internal_overlap(view(x, {3, 4}, {0, 1}, 0)), MemOverlap::Yes);
  EXPECT_EQ(has_internal_overlap(view(x, {1, 4}, {0, 1}, 0)), MemOverlap::No);
  EXPECT_EQ(has_internal_overlap(view(x, {4}, {5}, 0)), MemOverlap::TooHard);  // diagonal
}

TEST(MemoryOverlap, Status) {
  Tensor x = arange16();
  Tensor y = arange16();
  EXPECT_EQ(overlap_status(x, x), MemOverlapStatus::Full);
  EXPECT_EQ(overlap_status(x, view(x, {4, 4}, {4, 1}, 0)), MemOverlapStatus::Full);
  EXPECT_EQ(overlap_status(x, y), MemOverlapStatus::No);
  EXPECT_EQ(overlap_status(x, view(x, {4, 4}, {1, 4}, 0)), MemOverlapStatus::Partial);
  EXPECT_EQ(overlap_status(view(x, {3, 4}, {4, 1}, 4), view(x, {3, 4}, {4, 1}, 0)),
            MemOverlapStatus::Partial);
  EXPECT_EQ(overlap_status(view(x, {4}, {1}, 0), view(x, {4}, {1}, 4)), MemOverlapStatus::No);
  EXPECT_EQ(overlap_status(view(x, {4}, {1}, 0), view(x, {4}, {4}, 0)), MemOverlapStatus::TooHard);
  EXPECT_EQ(overlap_status(view(x, {0}, {1}, 0), x), MemOverlapStatus::No);
}

TEST(MemoryOverlap, InPlaceArithmeticRefusesPartialOverlap) {
  Tensor x = arange16();
  IValue alpha{int64_t{1}};
  // x.add_(x.t()) and x[1:].add_(x[:3]): PyTorch raises.
  EXPECT_EQ(error_of([&] {
              call_op(OpId::add_, {x, view(x, {4, 4}, {1, 4}, 0), alpha});
            }),
            kShared);
  EXPECT_EQ(error_of([&] {
              call_op(OpId::add_, {view(x, {3, 4}, {4, 1}, 4), view(x, {3, 4}, {4, 1}, 0), alpha});
            }),
            kShared);
  // x.sub_(x[0]) broadcasts a row that lies inside x.
  EXPECT_EQ(error_of([&] { call_op(OpId::sub_, {x, view(x, {4}, {1}, 0), alpha}); }), kShared);
  // x[0:1].expand(3, 4).add_(1): one element written three times.
  EXPECT_EQ(error_of([&] {
              call_op(OpId::add_, {view(x, {3, 4}, {0, 1}, 0),
                                   Tensor::scalar(Scalar(1.0), DType::Float32), alpha});
            }),
            kInternal);
  EXPECT_EQ(values(x)[0], 0.0);  // nothing written by the refused ops
  // Allowed: x.add_(x), x[0].add_(x[1]), and x[0].mul_(x[:, 0]) (a layout with gaps).
  call_op(OpId::add_, {x, x, alpha});
  EXPECT_EQ(values(x)[1], 2.0);
  call_op(OpId::mul_, {view(x, {4}, {1}, 0), view(x, {4}, {4}, 0)});
  // x[0] * x[:, 0] = [0, 2, 4, 6] * [0, 8, 16, 24], the operands read before any write.
  std::vector<double> row = values(view(x, {4}, {1}, 0));
  EXPECT_EQ(row, (std::vector<double>{0, 16, 64, 144}));
}

TEST(MemoryOverlap, CopyRefusesPartialOverlapAndReadsGappyLayoutsFirst) {
  Tensor x = arange16();
  EXPECT_EQ(error_of([&] {
              call_op(OpId::copy_, {view(x, {3, 4}, {4, 1}, 4), view(x, {3, 4}, {4, 1}, 0)});
            }),
            kShared);
  EXPECT_EQ(error_of([&] { call_op(OpId::copy_, {x, view(x, {4, 4}, {1, 4}, 0)}); }), kShared);
  call_op(OpId::copy_, {x, x});
  // x[0] = x[:, 0]: PyTorch's result [0, 4, 8, 12].
  call_op(OpId::copy_, {view(x, {4}, {1}, 0), view(x, {4}, {4}, 0)});
  EXPECT_EQ(values(view(x, {4}, {1}, 0)), (std::vector<double>{0, 4, 8, 12}));
  // x[:, 1] = x[1] (shares x[1, 1]): each source element read before it is written.
  Tensor y = arange16();
  call_op(OpId::copy_, {view(y, {4}, {4}, 1), view(y, {4}, {1}, 4)});
  EXPECT_EQ(values(view(y, {4}, {4}, 1)), (std::vector<double>{4, 5, 6, 7}));
}

}  // namespace
}  // namespace tsl
