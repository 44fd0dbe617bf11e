// What a split gradient captures (Note [Capturing sizes and dtypes] in
// ir/autodiff/differentiate.cpp): the tensors its formulas compute with, and only the
// size or dtype of a tensor the backward asks nothing else of.
#include <gtest/gtest.h>

#include <string>

#include "ir/autodiff/differentiate.h"
#include "ir/ir_parser.h"

namespace tsl::autodiff {
namespace {

// The types of the values f computes and captures for df, in order. (Its inputs are
// captured too where the backward makes zeros of their shape for a gradient that does
// not flow: AutogradZeros.)
std::vector<std::string> captured_types(const Gradient& g) {
  std::vector<std::string> types;
  const auto& outs = g.f->outputs();
  for (size_t k = g.num_real_outputs; k < outs.size(); ++k) {
    if (outs[k]->node() != g.f->block()->param_node()) types.push_back(outs[k]->type()->str());
  }
  return types;
}

TEST(Captures, SizesAndDtypesInsteadOfTensors) {
  // d(a - b)/da and /db need only the operands' sizes and dtypes (to undo broadcasting
  // and promotion); sigmoid's gradient needs its result.
  std::shared_ptr<Graph> fwd = parse_graph(
      "graph f(%a : Tensor, %b : Tensor):\n"
      "  %one : int = Constant[value=1]()\n"
      "  %s : Tensor = sigmoid(%a)\n"
      "  %y : Tensor = sub(%s, %b, %one)\n"
      "  return (%y)\n",
      "capture_test.ir");
  JointGraph joint = build_joint(*fwd, {0, 1}, JointOptions{});
  Gradient g = split(joint);
  std::vector<std::string> types = captured_types(g);
  int tensors = 0, sizes = 0, dtypes = 0;
  for (const std::string& t : types) {
    tensors += t == "Tensor";
    sizes += t == "List[int]";
    dtypes += t == "dtype";
  }
  EXPECT_EQ(tensors, 1) << "only sigmoid's result";
  EXPECT_EQ(sizes, 2) << "the sizes of s and b";
  EXPECT_EQ(dtypes, 2) << "the dtypes of s and b";
  // The queries are the forward's now: none is left in the backward.
  std::string df = print_graph(*g.df);
  EXPECT_EQ(df.find("= size("), std::string::npos) << df;
  EXPECT_EQ(df.find("= dtype("), std::string::npos) << df;
}

// A value the backward computes with is still captured whole, with its size asked
// once in the forward.
TEST(Captures, TensorsTheFormulasReadStayWhole) {
  std::shared_ptr<Graph> fwd = parse_graph(
      "graph f(%a : Tensor, %b : Tensor):\n"
      "  %s : Tensor = sigmoid(%a)\n"
      "  %y : Tensor = mul(%s, %b)\n"
      "  return (%y)\n",
      "capture_test.ir");
  Gradient g = split(build_joint(*fwd, {0, 1}, JointOptions{}));
  int tensors = 0;
  for (const std::string& t : captured_types(g)) tensors += t == "Tensor";
  // s: d/db = g * s, and sigmoid's gradient reads its result.
  EXPECT_EQ(tensors, 1) << print_graph(*g.f);
}

}  // namespace
}  // namespace tsl::autodiff
