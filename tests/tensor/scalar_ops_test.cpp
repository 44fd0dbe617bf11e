// Python scalar, string and list kernels: Python's rules for //, %, rounding,
// conversions, math domain errors, slices, and str.format specs.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/kernels/format_spec.h"
#include "runtime/kernels/kernel.h"

namespace tsl {
namespace {

IValue call1(OpId op, std::vector<IValue> in) { return call_op(op, std::move(in))[0]; }

std::string error_of(OpId op, std::vector<IValue> in) {
  try {
    call_op(op, std::move(in));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ScalarOps, FloorDivisionAndModuloFollowPython) {
  EXPECT_EQ(call1(OpId::floor_divide_int, {int64_t{7}, int64_t{2}}).to_int(), 3);
  EXPECT_EQ(call1(OpId::floor_divide_int, {int64_t{-7}, int64_t{2}}).to_int(), -4);
  EXPECT_EQ(call1(OpId::floor_divide_int, {int64_t{7}, int64_t{-2}}).to_int(), -4);
  EXPECT_EQ(call1(OpId::remainder_int, {int64_t{-7}, int64_t{2}}).to_int(), 1);
  EXPECT_EQ(call1(OpId::remainder_int, {int64_t{7}, int64_t{-2}}).to_int(), -1);
  EXPECT_DOUBLE_EQ(call1(OpId::remainder_float, {-7.5, 2.0}).to_double(), 0.5);
  EXPECT_DOUBLE_EQ(call1(OpId::floor_divide_float, {-7.5, 2.0}).to_double(), -4.0);
  EXPECT_EQ(error_of(OpId::floor_divide_int, {int64_t{1}, int64_t{0}}),
            "integer division or modulo by zero");
  EXPECT_EQ(error_of(OpId::div_float, {1.0, 0.0}), "float division by zero");
}

TEST(ScalarOps, IntegerOverflowIsAnErrorNotWraparound) {
  int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_NE(error_of(OpId::add_int, {big, int64_t{1}}).find("integer overflow"), std::string::npos);
  EXPECT_NE(error_of(OpId::mul_int, {big, int64_t{2}}).find("integer overflow"), std::string::npos);
  EXPECT_NE(error_of(OpId::pow_int, {int64_t{2}, int64_t{64}}).find("integer overflow"),
            std::string::npos);
  EXPECT_EQ(call1(OpId::pow_int, {int64_t{2}, int64_t{10}}).to_int(), 1024);
  EXPECT_EQ(call1(OpId::pow_int, {int64_t{-3}, int64_t{3}}).to_int(), -27);
}

TEST(ScalarOps, RoundingAndConversions) {
  EXPECT_EQ(call1(OpId::round_float, {2.5}).to_int(), 2);  // half to even
  EXPECT_EQ(call1(OpId::round_float, {3.5}).to_int(), 4);
  EXPECT_EQ(call1(OpId::round_float, {-2.5}).to_int(), -2);
  EXPECT_EQ(call1(OpId::floor_float, {-1.5}).to_int(), -2);
  // Python: round(2.675, 2) == 2.67 (2.675 is 2.67499999...), round(0.125, 2) == 0.12.
  EXPECT_EQ(call1(OpId::round_ndigits, {2.675, int64_t{2}}).to_double(), 2.67);
  EXPECT_EQ(call1(OpId::round_ndigits, {0.125, int64_t{2}}).to_double(), 0.12);
  EXPECT_EQ(call1(OpId::round_ndigits, {13.4322137, int64_t{4}}).to_double(), 13.4322);
  EXPECT_EQ(call1(OpId::round_ndigits, {1250.0, int64_t{-2}}).to_double(), 1200.0);
  EXPECT_EQ(call1(OpId::ceil_float, {-1.5}).to_int(), -1);
  EXPECT_EQ(call1(OpId::Int_float, {-1.9}).to_int(), -1);
  EXPECT_EQ(call1(OpId::Int_str, {IValue(" 1_000 ")}).to_int(), 1000);
  EXPECT_DOUBLE_EQ(call1(OpId::Float_str, {IValue("1e-3")}).to_double(), 1e-3);
  EXPECT_TRUE(std::isinf(call1(OpId::Float_str, {IValue("-inf")}).to_double()));
  EXPECT_EQ(error_of(OpId::Int_str, {IValue("abc")}),
            "invalid literal for int() with base 10: 'abc'");
  EXPECT_EQ(error_of(OpId::Float_str, {IValue("1.2.3")}),
            "could not convert string to float: '1.2.3'");
  EXPECT_EQ(error_of(OpId::Int_float, {std::nan("")}), "cannot convert float NaN to integer");
}

TEST(ScalarOps, MathDomainErrors) {
  EXPECT_EQ(error_of(OpId::log_float, {0.0}), "math domain error");
  EXPECT_EQ(error_of(OpId::sqrt_float, {-1.0}), "math domain error");
  EXPECT_EQ(error_of(OpId::exp_float, {1000.0}), "math range error");
  EXPECT_DOUBLE_EQ(call1(OpId::log_base_float, {8.0, 2.0}).to_double(), 3.0);
}

TEST(ScalarOps, ListIndexingAndSlicing) {
  IValue xs = IValue::int_list(std::vector<int64_t>{0, 1, 2, 3, 4});
  EXPECT_EQ(call1(OpId::getitem_list, {xs, int64_t{-1}}).to_int(), 4);
  EXPECT_EQ(error_of(OpId::getitem_list, {xs, int64_t{5}}),
            "list index 5 out of range for a list of length 5");
  auto slice = [&](IValue a, IValue b, int64_t step) {
    return call1(OpId::slice_list, {xs, a, b, step}).repr();
  };
  EXPECT_EQ(slice(int64_t{1}, int64_t{3}, 1), "[1, 2]");
  EXPECT_EQ(slice(IValue(), IValue(), -1), "[4, 3, 2, 1, 0]");
  EXPECT_EQ(slice(int64_t{-2}, IValue(), 1), "[3, 4]");
  EXPECT_EQ(slice(IValue(), IValue(), 2), "[0, 2, 4]");
  EXPECT_EQ(slice(int64_t{10}, int64_t{20}, 1), "[]");
  EXPECT_EQ(slice(int64_t{3}, int64_t{0}, -2), "[3, 1]");
  EXPECT_EQ(error_of(OpId::slice_list, {xs, IValue(), IValue(), int64_t{0}}),
            "slice step cannot be zero");
  EXPECT_EQ(call1(OpId::range_length, {int64_t{10}, int64_t{0}, int64_t{-3}}).to_int(), 4);
  EXPECT_EQ(call1(OpId::range_list, {int64_t{10}, int64_t{0}, int64_t{-3}}).repr(),
            "[10, 7, 4, 1]");
}

TEST(ScalarOps, AppendMutatesTheSharedList) {
  IValue xs = IValue::list({});
  IValue alias = xs;
  call_op(OpId::append_list, {xs, int64_t{7}});
  EXPECT_EQ(alias.repr(), "[7]");
}

TEST(ScalarOps, StrLengthCountsCodePoints) {
  EXPECT_EQ(call1(OpId::len_str, {IValue("h\xC3\xA9llo")}).to_int(), 5);
}

TEST(FormatSpec, IntsFloatsAndStringsAsPython) {
  // Expected strings are Python 3's format() results.
  EXPECT_EQ(format_value(IValue(3.14159), ".3f"), "3.142");
  EXPECT_EQ(format_value(IValue(3.14159), "8.2f"), "    3.14");
  EXPECT_EQ(format_value(IValue(-3.14159), "<8.2f"), "-3.14   ");
  EXPECT_EQ(format_value(IValue(-3.5), "08.2f"), "-0003.50");
  EXPECT_EQ(format_value(IValue(1234567.891), ",.2f"), "1,234,567.89");
  EXPECT_EQ(format_value(IValue(0.000123), ".2e"), "1.23e-04");
  EXPECT_EQ(format_value(IValue(0.5), ".1%"), "50.0%");
  EXPECT_EQ(format_value(IValue(1e-7), "g"), "1e-07");
  EXPECT_EQ(format_value(IValue(2.0), ".3"), "2.0");
  EXPECT_EQ(format_value(IValue(2.5), ""), "2.5");
  EXPECT_EQ(format_value(IValue(std::nan("")), ".2f"), "nan");
  EXPECT_EQ(format_value(IValue(int64_t{42}), "5d"), "   42");
  EXPECT_EQ(format_value(IValue(int64_t{42}), "+d"), "+42");
  EXPECT_EQ(format_value(IValue(int64_t{255}), "#x"), "0xff");
  EXPECT_EQ(format_value(IValue(int64_t{5}), "b"), "101");
  EXPECT_EQ(format_value(IValue(int64_t{1234567}), "_"), "1_234_567");
  EXPECT_EQ(format_value(IValue(int64_t{3}), ".2f"), "3.00");
  EXPECT_EQ(format_value(IValue(int64_t{7}), "*^7"), "***7***");
  EXPECT_EQ(format_value(IValue("ab"), ">4"), "  ab");
  EXPECT_EQ(format_value(IValue("abcdef"), ".3"), "abc");
  EXPECT_EQ(format_value(IValue(true), ""), "True");
  EXPECT_EQ(format_value(IValue(true), ">3"), "  1");
}

TEST(FormatSpec, ZeroDimTensorsFormatTheirItem) {
  Tensor t = Tensor::scalar(Scalar(0.25), DType::Float32);
  EXPECT_EQ(format_value(IValue(t), ".3f"), "0.250");
}

TEST(FormatSpec, BadSpecsAreUserErrors) {
  EXPECT_THROW(format_value(IValue(int64_t{1}), "q"), Error);
  EXPECT_THROW(format_value(IValue(int64_t{1}), ".2d"), Error);
  EXPECT_THROW(format_value(IValue("s"), "+"), Error);
  EXPECT_THROW(format_value(IValue::list({}), ">3"), Error);
}

}  // namespace
}  // namespace tsl
