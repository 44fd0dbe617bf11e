// First checks of the tensor core: construction, views, shapes, IValue printing.
#include <gtest/gtest.h>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/ivalue.h"
#include "runtime/tensor/tensor.h"

namespace tsl {
namespace {

TEST(TensorCore, EmptyHasContiguousStrides) {
  int64_t sizes[] = {2, 3, 4};
  Tensor t = Tensor::empty(sizes, DType::Float32);
  EXPECT_EQ(t.strides(), DimVector({12, 4, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.numel(), 24);
}

TEST(TensorCore, BroadcastShapesNamesBothShapes) {
  int64_t a[] = {2, 3};
  int64_t b[] = {4};
  try {
    broadcast_shapes(a, b, "add");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3] and [4]"), std::string::npos) << e.what();
  }
}

TEST(TensorCore, PythonFloatRepr) {
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(1e-5), "1e-05");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(python_float_repr(-2.5), "-2.5");
  EXPECT_EQ(python_float_repr(123.456), "123.456");
}

TEST(TensorCore, IValueReprs) {
  EXPECT_EQ(IValue(std::string("a'b")).repr(), "\"a'b\"");
  EXPECT_EQ(IValue::tuple({IValue(int64_t{1})}).repr(), "(1,)");
  EXPECT_EQ(IValue::list({IValue(1.5), IValue(true)}).repr(), "[1.5, True]");
}

TEST(TensorCore, OpTableLookup) {
  auto id = find_op("max.dim");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(op_info(*id).base_name(), "max");
  EXPECT_TRUE(op_info(OpId::relu).has(opflags::EW));
}

}  // namespace
}  // namespace tsl
