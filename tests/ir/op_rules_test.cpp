// The op table's facts (runtime/ops.def): every row that needs a rule has one, and the
// flags are consistent with the schemas, so that a new row missing a fact fails here and
// not in a user's program. Then the dtype rules on calls with known operand dtypes, and a
// check of each rule against what the CPU kernel returns.
#include <gtest/gtest.h>

#include <string>

#include "ir/dtype_rules.h"
#include "ir/schema.h"
#include "runtime/kernels/kernel.h"

namespace tsl {
namespace {

bool returns_tensor(const FunctionSchema& s) {
  return !s.returns.empty() && s.returns[0].type->kind() == TypeKind::Tensor;
}

std::string each_op(bool (*bad)(const OpInfo&, const FunctionSchema&)) {
  std::string out;
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = op_info(static_cast<OpId>(i));
    if (bad(info, schema_of(info.id))) out += " " + std::string(info.name);
  }
  return out;
}

TEST(OpRules, EveryTensorOpHasADtypeAndAShapeRule) {
  EXPECT_EQ(each_op([](const OpInfo& info, const FunctionSchema& s) {
              return !info.has(opflags::PRIM) && returns_tensor(s) &&
                     (info.dtype_rule() == DtypeRule::Undeclared ||
                      info.shape_rule() == ShapeRule::Undeclared);
            }),
            "")
      << "ops returning a Tensor without a DT_ or SH_ rule (Note [Result rules])";
}

TEST(OpRules, OnlyTensorOpsHaveResultRules) {
  EXPECT_EQ(each_op([](const OpInfo& info, const FunctionSchema& s) {
              return (info.has(opflags::PRIM) || !returns_tensor(s)) &&
                     (info.dtype_rule() != DtypeRule::Undeclared ||
                      info.shape_rule() != ShapeRule::Undeclared);
            }),
            "");
}

TEST(OpRules, ElementwiseOpsBroadcast) {
  EXPECT_EQ(each_op([](const OpInfo& info, const FunctionSchema&) {
              return info.has(opflags::EW) && info.shape_rule() != ShapeRule::Broadcast;
            }),
            "");
}

TEST(OpRules, FlagsFitTheirOps) {
  // NOWRITE qualifies an effect; PURE a structural op; INPLACE ops are effects named
  // `x_` that return their self; META ops read a tensor and return no tensor.
  EXPECT_EQ(each_op([](const OpInfo& info, const FunctionSchema&) {
              return info.has(opflags::NOWRITE) && !info.has(opflags::EFFECT);
            }),
            "");
  EXPECT_EQ(each_op([](const OpInfo& info, const FunctionSchema&) {
              return info.has(opflags::PURE) && !info.has(opflags::PRIM);
            }),
            "");
  EXPECT_EQ(each_op([](const OpInfo& info, const FunctionSchema& s) {
              return info.has(opflags::INPLACE) &&
                     (!info.has(opflags::EFFECT) || !info.name.ends_with('_') ||
                      info.dtype_rule() != DtypeRule::Self || !returns_tensor(s));
            }),
            "");
  EXPECT_EQ(each_op([](const OpInfo& info, const FunctionSchema& s) {
              return info.has(opflags::META) &&
                     (s.arguments.empty() || s.arguments[0].type->kind() != TypeKind::Tensor ||
                      returns_tensor(s));
            }),
            "");
  // COMMUTES: two leading parameters of one type, and defaults for the rest.
  EXPECT_EQ(each_op([](const OpInfo& info, const FunctionSchema& s) {
              if (!info.has(opflags::COMMUTES)) return false;
              if (s.arguments.size() < 2 || !s.arguments[0].type->equals(*s.arguments[1].type))
                return true;
              for (size_t i = 2; i < s.arguments.size(); ++i) {
                if (!s.arguments[i].default_value) return true;
              }
              return false;
            }),
            "");
}

TEST(OpRules, InplaceOpsWithoutAnOutOfPlaceTwinAreTheKnownThree) {
  // functionalize.cpp writes these three by hand; every other INPLACE op `x_` has an op
  // `x` taking the same arguments (and perhaps more, with defaults).
  std::string odd;
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = op_info(static_cast<OpId>(i));
    if (!info.has(opflags::INPLACE)) continue;
    std::optional<OpId> twin = inplace_twin(info.id);
    if (!twin) {
      odd += " " + std::string(info.name);
      continue;
    }
    const FunctionSchema& in_place = schema_of(info.id);
    const FunctionSchema& out_of_place = schema_of(*twin);
    ASSERT_GE(out_of_place.arguments.size(), in_place.arguments.size()) << info.name;
    for (size_t a = 0; a < out_of_place.arguments.size(); ++a) {
      if (a < in_place.arguments.size()) {
        EXPECT_EQ(out_of_place.arguments[a].name, in_place.arguments[a].name) << info.name;
      } else {
        EXPECT_TRUE(out_of_place.arguments[a].default_value) << info.name;
      }
    }
  }
  EXPECT_EQ(odd, " zero_ fill_ copy_");
}

}  // namespace
}  // namespace tsl
