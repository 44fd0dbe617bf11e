// Rules of ops that take a list of tensors see which elements need a gradient
// (RuleContext::needs_element): einsum differentiates only those operands.
#include <gtest/gtest.h>

#include <string>

#include "ir/autodiff/differentiate.h"
#include "ir/ir_parser.h"

namespace tsl::autodiff {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::shared_ptr<Graph> einsum_graph() {
  return parse_graph(
      "graph f(%x : Tensor, %w : Tensor):\n"
      "  %eq : str = Constant[value='bi,oi->bo']()\n"
      "  %l : List[Tensor] = ListConstruct(%x, %w)\n"
      "  %none : None = Constant[value=None]()\n"
      "  %y : Tensor = einsum(%eq, %l, %none)\n"
      "  return (%y)\n",
      "list_gradient_test.ir");
}

TEST(ListGradients, EinsumDifferentiatesOnlyTheOperandsThatNeedIt) {
  std::shared_ptr<Graph> fwd = einsum_graph();
  // The weight's gradient only: one einsum_backward, for w ('bo,bi->oi').
  JointGraph one = build_joint(*fwd, {1}, JointOptions{});
  std::string text = print_graph(*one.graph);
  EXPECT_EQ(count(text, "= einsum_backward("), 1u) << text;
  EXPECT_NE(text.find("'bo,bi->oi'"), std::string::npos) << text;
  // Both operands: two.
  JointGraph both = build_joint(*fwd, {0, 1}, JointOptions{});
  EXPECT_EQ(count(print_graph(*both.graph), "= einsum_backward("), 2u);
}

}  // namespace
}  // namespace tsl::autodiff
