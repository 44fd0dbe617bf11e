// propagate-shapes and specialize-undefined on what the .ir files cannot say: the facts
// ShapeFacts answers, dtype-refined tensor types, the kernels' claims the rewrites rest
// on (sum_to_size and `to` return their operand itself), and return values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/ir_parser.h"
#include "ir/passes/pass_registry.h"
#include "ir/passes/pipeline.h"
#include "ir/passes/propagate_shapes.h"
#include "ir/passes/specialize_undefined.h"
#include "runtime/kernels/kernel.h"

namespace tsl {
namespace {

// The value named `name` (a node output) in the top block of g.
const Value* named(const Graph& g, const std::string& name) {
  for (const Node* n : *g.block()) {
    for (const Value* v : n->outputs()) {
      if (v->debug_name() == name) return v;
    }
  }
  for (const Value* v : g.inputs()) {
    if (v->debug_name() == name) return v;
  }
  ADD_FAILURE() << "no value %" << name;
  return nullptr;
}

size_t count_ops(const Graph& g, OpId op) {
  size_t n = 0;
  for (const Node* node : *g.block()) n += node->op() == op;
  return n;
}

constexpr const char* kFacts =
    "graph f(%x : Tensor, %y : Tensor, %b : Tensor):\n"
    "  %one : int = Constant[value=1]()\n"
    "  %none : None = Constant[value=None]()\n"
    "  %false : bool = Constant[value=False]()\n"
    "  %f64 : dtype = Constant[value=torch.float64]()\n"
    "  %sx : List[int] = size(%x)\n"
    "  %a : Tensor = tanh(%x)\n"
    "  %s : Tensor = sum(%y, %none, %false, %none)\n"
    "  %m : Tensor = mul(%a, %s)\n"
    "  %xb : Tensor = add(%x, %b, %one)\n"
    "  %z : Tensor = zeros(%sx, %f64, %none, %false)\n"
    "  %e : Tensor = exp(%x)\n"
    "  return (%m, %xb, %z, %e)\n";

TEST(ShapeFacts, ClassesOfShapes) {
  auto g = parse_graph(kFacts);
  ShapeFacts facts(*g);
  const Value* x = named(*g, "x");
  EXPECT_TRUE(facts.same_shape(named(*g, "a"), x));
  EXPECT_TRUE(facts.same_shape(named(*g, "m"), x));  // a 0-dim operand never widens
  EXPECT_TRUE(facts.same_shape(named(*g, "z"), x));  // zeros(size(x))
  EXPECT_TRUE(facts.is_zero_dim(named(*g, "s")));
  EXPECT_FALSE(facts.is_zero_dim(x));
  EXPECT_FALSE(facts.same_shape(named(*g, "xb"), x));  // b may broadcast x
  EXPECT_FALSE(facts.same_shape(named(*g, "y"), x));
  EXPECT_FALSE(facts.same_shape(named(*g, "sx"), x));  // not a tensor
}

TEST(ShapeFacts, DtypesFromConstantsAndRefinements) {
  auto g = parse_graph(kFacts);
  EXPECT_EQ(ShapeFacts(*g).known_dtype(named(*g, "z")), DType::Float64);
  EXPECT_EQ(ShapeFacts(*g).known_dtype(named(*g, "x")), std::nullopt);
  // exp of a tensor that may hold ints makes floats; of a floating one, its dtype.
  EXPECT_FALSE(ShapeFacts(*g).same_dtype(named(*g, "e"), named(*g, "x")));
  g->inputs()[0]->set_type(Type::tensor(DType::Float32));
  ShapeFacts refined(*g);
  EXPECT_TRUE(refined.same_dtype(named(*g, "e"), named(*g, "x")));
  EXPECT_EQ(refined.known_dtype(named(*g, "e")), DType::Float32);
  EXPECT_FALSE(refined.same_dtype(named(*g, "z"), named(*g, "x")));
}

TEST(PropagateShapes, RefinedDtypesRemoveConversions) {
  const char* text =
      "graph f(%x : Tensor):\n"
      "  %d : dtype = dtype(%x)\n"
      "  %e : Tensor = sigmoid(%x)\n"
      "  %r : Tensor = to(%e, %d)\n"
      "  return (%r)\n";
  auto plain = parse_graph(text);
  EXPECT_FALSE(propagate_shapes(*plain));  // x may be an int tensor
  auto g = parse_graph(text);
  g->inputs()[0]->set_type(Type::tensor(DType::Float64));
  EXPECT_TRUE(propagate_shapes(*g));
  verify(*g);
  EXPECT_EQ(count_ops(*g, OpId::to_dtype), 0u);
  EXPECT_EQ(g->outputs()[0]->node()->op(), OpId::sigmoid);
  EXPECT_EQ(g->outputs()[0]->debug_name(), "e");
  EXPECT_FALSE(propagate_shapes(*g));
}

// The rewrites replace sum_to_size and `to` by their operand because the kernels
// return that very tensor: check the claim on the kernels themselves.
TEST(PropagateShapes, TheKernelsReturnTheirOperandItself) {
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, std::vector<int64_t>{2, 3});
  IValue same =
      call_op(OpId::sum_to_size, {IValue(t), IValue::int_list(std::vector<int64_t>{2, 3})}).at(0);
  EXPECT_EQ(same.tensor_impl(), IValue(t).tensor_impl());
  IValue summed =
      call_op(OpId::sum_to_size, {IValue(t), IValue::int_list(std::vector<int64_t>{1, 3})}).at(0);
  EXPECT_NE(summed.tensor_impl(), IValue(t).tensor_impl());
  IValue converted = call_op(OpId::to_dtype, {IValue(t), IValue(DType::Float32)}).at(0);
  EXPECT_EQ(converted.tensor_impl(), IValue(t).tensor_impl());
}

TEST(SpecializeUndefined, ReturnsWhetherItChangedAndReachesAFixedPoint) {
  auto g = parse_graph(
      "graph f(%x : Tensor, %dy : Tensor):\n"
      "  %u : Tensor = Undefined()\n"
      "  %dx : Tensor = GradOf[op='exp', line=2](%u)\n"
      "    block0():\n"
      "      %0 : Tensor = exp(%x)\n"
      "      -> (%0)\n"
      "  %s : Tensor = AutogradAdd(%dx, %dy)\n"
      "  %t : bool = AnyDefined(%s)\n"
      "  return (%s, %t)\n");
  EXPECT_TRUE(specialize_undefined(*g));
  verify(*g);
  EXPECT_EQ(count_ops(*g, OpId::GradOf), 0u);
  EXPECT_EQ(count_ops(*g, OpId::AutogradAdd), 0u);
  EXPECT_EQ(g->outputs()[0], g->inputs()[1]);  // the incoming gradient itself
  // dy may be undefined at run time: the test stays.
  EXPECT_EQ(g->outputs()[1]->node()->op(), OpId::AnyDefined);
  EXPECT_FALSE(specialize_undefined(*g));
}

TEST(SpecializeUndefined, TheOptimizerRemovesTheZerosOfASeededGradient) {
  // grad(f) seeds with ones_like: every gradient is then certainly defined, and the
  // AutogradZeros that would make zeros for a missing one go.
  auto g = parse_graph(
      "graph f(%x : Tensor):\n"
      "  %nd : Optional[dtype] = Constant[value=None]()\n"
      "  %nv : Optional[device] = Constant[value=None]()\n"
      "  %no : bool = Constant[value=False]()\n"
      "  %y : Tensor = exp(%x)\n"
      "  %seed : Tensor = ones_like(%y, %nd, %nv, %no)\n"
      "  %dx : Tensor = GradOf[op='exp', line=2](%seed)\n"
      "    block0():\n"
      "      %0 : Tensor = mul(%seed, %y)\n"
      "      -> (%0)\n"
      "  %r : Tensor = AutogradZeros(%dx, %x)\n"
      "  return (%y, %r)\n");
  size_t before = count_nodes(*g);
  EXPECT_TRUE(optimize(*g));
  EXPECT_EQ(count_ops(*g, OpId::AutogradZeros), 0u);
  // The GradOf surely runs: its mul takes its place.
  EXPECT_EQ(count_nodes(*g), before - 2);
  EXPECT_EQ(count_ops(*g, OpId::GradOf), 0u);
  EXPECT_EQ(g->outputs()[1]->node()->op(), OpId::mul);
}

// The two-layer net's joint forward+backward graph (tests/ir/passes/optimize): the
// pipeline with the two passes leaves fewer nodes than the passes before them did.
TEST(SpecializeUndefined, TheTwoLayerNetsJointGraphShrinksFurther) {
  const char* env = std::getenv("TSL_SOURCE_DIR");
  std::filesystem::path path = std::filesystem::path(env ? env : TSL_SOURCE_DIR) /
                               "tests/ir/passes/optimize/two_layer_net_joint.ir";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto g = parse_graph(text.str(), path.string());
  auto older = g->clone();
  EXPECT_EQ(count_nodes(*g), 151u);
  optimize(*g);
  EXPECT_EQ(count_nodes(*g), 101u);  // 111 before GradOf blocks that surely run were inlined
  EXPECT_EQ(count_ops(*g, OpId::AutogradZeros), 1u);  // target's: no gradient path
  // The pipeline as it was before these passes, to its fixed point.
  const std::vector<std::string> before = {"canonicalize", "constant-fold", "simplify",
                                           "cse",          "licm",          "dce"};
  for (size_t n = 0; n != count_nodes(*older);) {
    n = count_nodes(*older);
    run_passes(*older, before);
  }
  EXPECT_EQ(count_nodes(*older), 116u);
  EXPECT_EQ(count_ops(*older, OpId::AutogradZeros), 6u);
}

}  // namespace
}  // namespace tsl
