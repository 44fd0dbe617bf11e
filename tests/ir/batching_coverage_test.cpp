// Coverage of the batching rule table (ir/batching): the test walks the op table, and
// every op that can take a tensor has a batching rule, is handled by the vmap rewrite
// itself (blocks, tuples, lists), or is listed below among the ops without a rule yet,
// with the reason. vmap names such an op in a compile error; it never computes it
// wrongly. The list is printed, and docs/language.md repeats it.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <string>

#include "ir/batching/batching_rules.h"
#include "ir/batching/vmap.h"
#include "ir/schema.h"

namespace tsl::batching {
namespace {

// The ops that take a tensor and have no batching rule yet, by full name.
const std::map<std::string, std::string>& without_rule() {
  static const std::map<std::string, std::string> ops = {
      {"sum.tensor_list",
       "Python's sum of a list of tensors never reaches vmap: it becomes a chain of adds first "
       "(ir/autodiff/prepare.h)"},
      {"mod.str", "%-formatting of Python values: a batched tensor there is a compile error"},
      {"eq.seq", "== of lists and tuples compares Python values, not batched tensors"},
      {"ne.seq", "!= of lists and tuples compares Python values, not batched tensors"},
      {"contains.seq", "`in` on lists and tuples compares Python values, not batched tensors"},
      {"DictConstruct",
       "a dict holding batched tensors is not batched: vmap forwards the reads of a dict literal "
       "and refuses the rest (compile error)"},
      {"setitem.Dict_str",
       "a dict holding batched tensors is not batched: vmap forwards the reads of a dict literal "
       "and refuses the rest (compile error)"},
      {"setitem.Dict_int",
       "a dict holding batched tensors is not batched: vmap forwards the reads of a dict literal "
       "and refuses the rest (compile error)"},
      {"get.Dict_str_default",
       "a dict holding batched tensors is not batched: vmap forwards the reads of a dict literal "
       "and refuses the rest (compile error)"},
      {"get.Dict_int_default",
       "a dict holding batched tensors is not batched: vmap forwards the reads of a dict literal "
       "and refuses the rest (compile error)"},
      {"pop.Dict_str_default",
       "a dict holding batched tensors is not batched: vmap forwards the reads of a dict literal "
       "and refuses the rest (compile error)"},
      {"pop.Dict_int_default",
       "a dict holding batched tensors is not batched: vmap forwards the reads of a dict literal "
       "and refuses the rest (compile error)"},
      {"normal.Tensor", "random: functorch refuses random ops under vmap by default"},
      {"plot", "draws a picture (a side effect): vmap of a function that plots is an error"},
      {"plot.list", "draws a picture (a side effect): vmap of a function that plots is an error"},
      {"PublishGlobal", "only in top-level statements, which no transform sees"},
  };
  return ops;
}

bool can_hold_tensor(const TypePtr& t) {
  switch (t->kind()) {
    case TypeKind::Tensor:
    case TypeKind::Any:
    case TypeKind::Var:
      return true;
    case TypeKind::List:
    case TypeKind::Optional:
      return can_hold_tensor(t->element());
    case TypeKind::Tuple:
      for (const TypePtr& e : t->contained()) {
        if (can_hold_tensor(e)) return true;
      }
      return false;
    default:
      return false;
  }
}

bool takes_tensor(OpId op) {
  for (const Argument& a : schema_of(op).arguments) {
    if (can_hold_tensor(a.type)) return true;
  }
  return false;
}

TEST(BatchingRules, EveryOpTakingATensorHasARuleOrIsListed) {
  std::string listed;
  for (int i = 0; i < kNumOps; ++i) {
    OpId op = static_cast<OpId>(i);
    std::string name(op_info(op).name);
    if (!takes_tensor(op) || is_structural_for_vmap(op)) continue;
    auto it = without_rule().find(name);
    if (it != without_rule().end()) {
      EXPECT_EQ(batching_rule(op), nullptr)
          << name << " has a batching rule now: take it off the list of ops without one";
      listed += "  " + name + ": " + it->second + "\n";
      continue;
    }
    EXPECT_NE(batching_rule(op), nullptr)
        << name << " takes a tensor but has no batching rule (ir/batching/rules_*.cpp); add "
        << "one, or list it here with the reason";
  }
  std::cout << "ops without a batching rule:\n" << listed;
}

TEST(BatchingRules, ListedOpsExist) {
  for (const auto& [name, reason] : without_rule())
    EXPECT_TRUE(find_op(name).has_value()) << name << " is not an op of runtime/ops.def";
}

// The rewrite handles the structural ops itself; none of them has a rule as well.
TEST(BatchingRules, StructuralOpsHaveNoRule) {
  for (int i = 0; i < kNumOps; ++i) {
    OpId op = static_cast<OpId>(i);
    if (is_structural_for_vmap(op)) {
      EXPECT_EQ(batching_rule(op), nullptr) << op_info(op).name;
    }
  }
}

}  // namespace
}  // namespace tsl::batching
