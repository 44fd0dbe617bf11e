// The optimization passes on what the .ir files cannot say: dtype-refined tensor
// types (the simplify rules), source positions of folded constants, return values,
// the exactness claims checked on real kernels, and the pipeline's fixed point.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "ir/ir_parser.h"
#include "ir/passes/canonicalize.h"
#include "ir/passes/common_subexpression_elimination.h"
#include "ir/passes/constant_folding.h"
#include "ir/passes/loop_invariant_code_motion.h"
#include "ir/passes/pass_utils.h"
#include "ir/passes/pipeline.h"
#include "ir/passes/simplify.h"
#include "runtime/kernels/kernel.h"

namespace tsl {
namespace {

int count_ops(const Block* b, OpId op) {
  int n = 0;
  for (const Node* node : *b) {
    n += node->op() == op;
    for (const Block* nb : node->blocks()) n += count_ops(nb, op);
  }
  return n;
}

int count_ops(const Graph& g, OpId op) { return count_ops(g.block(), op); }

// Parses `text` and refines the type of input `i` to a tensor of `dtype`.
std::unique_ptr<Graph> typed(const std::string& text, DType dtype, size_t i = 0) {
  auto g = parse_graph(text);
  g->inputs()[i]->set_type(Type::tensor(dtype));
  return g;
}

// ---- constant-fold

TEST(ConstantFold, ReturnsWhetherItChangedAndKeepsNamesAndPositions) {
  auto g = parse_graph(
      "graph f():\n"
      "  %a : int = Constant[value=20]()\n"
      "  %b : int = add.int(%a, %a)  # 7:9\n"
      "  return (%b)\n");
  EXPECT_TRUE(fold_constants(*g));
  const Value* out = g->outputs()[0];
  ASSERT_EQ(out->node()->op(), OpId::Constant);
  EXPECT_EQ(out->node()->attr("value").to_int(), 40);
  EXPECT_EQ(out->debug_name(), "b");
  EXPECT_EQ(out->node()->range().line, 7u);
  verify(*g);
  EXPECT_FALSE(fold_constants(*g));  // nothing left to fold
}

TEST(ConstantFold, ARaisingKernelLeavesTheNode) {
  const char* text =
      "graph f():\n"
      "  %one : int = Constant[value=1]()\n"
      "  %zero : int = Constant[value=0]()\n"
      "  %q : int = remainder.int(%one, %zero)\n"
      "  %l : List[int] = ListConstruct(%one)\n"
      "  %e : int = getitem.t(%l, %one)\n"
      "  return (%q, %e)\n";
  // The kernels do raise on these inputs ...
  EXPECT_THROW(call_op(OpId::remainder_int, {IValue(int64_t{1}), IValue(int64_t{0})}), Error);
  // ... yet folding succeeds and leaves both nodes for run time.
  auto g = parse_graph(text);
  EXPECT_NO_THROW(fold_constants(*g));
  verify(*g);
  EXPECT_EQ(count_ops(*g, OpId::remainder_int), 1);
  EXPECT_EQ(count_ops(*g, OpId::getitem_list), 1);
  // The list, read by getitem only, did fold.
  EXPECT_EQ(count_ops(*g, OpId::ListConstruct), 0);
}

TEST(ConstantFold, FoldedFloatsReadBackBitForBit) {
  auto g = parse_graph(
      "graph f():\n"
      "  %a : float = Constant[value=0.1]()\n"
      "  %b : float = Constant[value=0.2]()\n"
      "  %c : float = add.float(%a, %b)\n"
      "  %d : float = Constant[value=-1e-320]()\n"
      "  %e : float = mul.float(%d, %a)\n"
      "  return (%c, %e)\n");
  ASSERT_TRUE(fold_constants(*g));
  auto h = parse_graph(print_graph(*g));
  for (size_t i = 0; i < 2; ++i) {
    double folded = constant_value(g->outputs()[i])->to_double();
    double reread = constant_value(h->outputs()[i])->to_double();
    EXPECT_EQ(std::bit_cast<uint64_t>(folded), std::bit_cast<uint64_t>(reread));
  }
  EXPECT_EQ(constant_value(g->outputs()[0])->to_double(), 0.1 + 0.2);
  EXPECT_EQ(constant_value(g->outputs()[1])->to_double(), -1e-320 * 0.1);
}

TEST(ConstantFold, HugeRangesAreNotBuilt) {
  auto g = parse_graph(
      "graph f():\n"
      "  %zero : int = Constant[value=0]()\n"
      "  %one : int = Constant[value=1]()\n"
      "  %big : int = Constant[value=4000000000000]()\n"
      "  %r : List[int] = range_list(%zero, %big, %one)\n"
      "  %n : int = len.t(%r)\n"
      "  return (%n)\n");
  fold_constants(*g);
  EXPECT_EQ(count_ops(*g, OpId::range_list), 1);
}

// ---- simplify: the tensor rules need dtypes, which only the API can give

const char* kBinaryWithConst =
    "graph f(%x : Tensor):\n"
    "  %c : CTYPE = Constant[value=CVAL]()\n"
    "  %one : int = Constant[value=1]()\n"
    "  %y : Tensor = OP\n"
    "  %z : Tensor = relu(%y)\n"
    "  return (%z)\n";

std::string binary_graph(const std::string& ctype, const std::string& cval, const std::string& op) {
  std::string s = kBinaryWithConst;
  s.replace(s.find("CTYPE"), 5, ctype);
  s.replace(s.find("CVAL"), 4, cval);
  s.replace(s.find("OP"), 2, op);
  return s;
}

// Whether simplify replaced %y by %x (relu then reads %x).
bool simplifies(const std::string& text, DType dtype) {
  auto g = typed(text, dtype);
  simplify_arithmetic(*g);
  verify(*g);
  const Node* relu = g->outputs()[0]->node();
  return relu->input(0) == g->inputs()[0];
}

TEST(Simplify, MulByOneNeedsAKnownDtypeThatKeeps) {
  std::string int_one = binary_graph("int", "1", "mul(%x, %c)");
  std::string float_one = binary_graph("float", "1.0", "mul(%c, %x)");
  EXPECT_TRUE(simplifies(int_one, DType::Float32));
  EXPECT_TRUE(simplifies(int_one, DType::Int64));
  EXPECT_FALSE(simplifies(int_one, DType::Bool));  // bool * 1 is int64
  EXPECT_TRUE(simplifies(float_one, DType::Float64));
  EXPECT_FALSE(simplifies(float_one, DType::Int64));  // int * 1.0 is float
  auto unknown = parse_graph(int_one);                // plain Tensor: dtype unknown
  EXPECT_FALSE(simplify_arithmetic(*unknown));
}

TEST(Simplify, AddAndSubOfZeroOnlyWhereSignedZeroCannotChange) {
  EXPECT_TRUE(simplifies(binary_graph("float", "-0.0", "add(%x, %c, %one)"), DType::Float32));
  EXPECT_FALSE(simplifies(binary_graph("float", "0.0", "add(%x, %c, %one)"), DType::Float32));
  EXPECT_TRUE(simplifies(binary_graph("int", "0", "add(%c, %x, %one)"), DType::Int64));
  EXPECT_FALSE(simplifies(binary_graph("int", "0", "add(%x, %c, %one)"), DType::Float32));
  EXPECT_TRUE(simplifies(binary_graph("float", "0.0", "sub(%x, %c, %one)"), DType::Float32));
  EXPECT_FALSE(simplifies(binary_graph("float", "-0.0", "sub(%x, %c, %one)"), DType::Float32));
  EXPECT_TRUE(simplifies(binary_graph("int", "0", "sub(%x, %c, %one)"), DType::Float64));
  EXPECT_FALSE(simplifies(binary_graph("int", "0", "sub(%x, %c, %one)"), DType::Bool));
  EXPECT_FALSE(simplifies(binary_graph("int", "0", "sub(%c, %x, %one)"), DType::Float32));
  EXPECT_FALSE(simplifies(binary_graph("int", "0", "mul(%x, %c)"), DType::Float32));
}

TEST(Simplify, DivByOneOnlyForFloatingTrueDivision) {
  const char* text =
      "graph f(%x : Tensor):\n"
      "  %c : int = Constant[value=1]()\n"
      "  %mode : MTYPE = Constant[value=MODE]()\n"
      "  %y : Tensor = div(%x, %c, %mode)\n"
      "  %z : Tensor = relu(%y)\n"
      "  return (%z)\n";
  auto with_mode = [&](const std::string& type, const std::string& mode) {
    std::string s = text;
    s.replace(s.find("MTYPE"), 5, type);
    s.replace(s.find("MODE"), 4, mode);
    return s;
  };
  EXPECT_TRUE(simplifies(with_mode("None", "None"), DType::Float32));
  EXPECT_FALSE(simplifies(with_mode("None", "None"), DType::Int64));  // 3 / 1 is 3.0
  EXPECT_FALSE(simplifies(with_mode("Optional[str]", "'floor'"), DType::Float32));
}

TEST(Simplify, NegNegAndToTheSameDtype) {
  const char* negneg =
      "graph f(%x : Tensor):\n"
      "  %a : Tensor = neg(%x)\n"
      "  %y : Tensor = neg(%a)\n"
      "  %z : Tensor = relu(%y)\n"
      "  return (%z)\n";
  EXPECT_TRUE(simplifies(negneg, DType::Float32));
  EXPECT_TRUE(simplifies(negneg, DType::Int64));
  EXPECT_FALSE(simplifies(negneg, DType::Bool));  // neg of bool raises
  const char* to =
      "graph f(%x : Tensor):\n"
      "  %d : dtype = Constant[value=torch.float32]()\n"
      "  %y : Tensor = to(%x, %d)\n"
      "  %z : Tensor = relu(%y)\n"
      "  return (%z)\n";
  EXPECT_TRUE(simplifies(to, DType::Float32));
  EXPECT_FALSE(simplifies(to, DType::Float64));
}

TEST(Simplify, NoAliasingBetweenAnInputAndAResultOrAWrittenTensor) {
  // `return x * 1` would hand the caller its own input back.
  auto returned = typed(
      "graph f(%x : Tensor):\n"
      "  %c : int = Constant[value=1]()\n"
      "  %y : Tensor = mul(%x, %c)\n"
      "  return (%y)\n",
      DType::Float32);
  EXPECT_FALSE(simplify_arithmetic(*returned));
  // y is written in place: it must stay a tensor of its own.
  auto written = typed(
      "graph f(%x : Tensor):\n"
      "  %c : int = Constant[value=1]()\n"
      "  %y : Tensor = mul(%x, %c)\n"
      "  %w : Tensor = add_(%y, %c, %c)\n"
      "  %z : Tensor = relu(%x)\n"
      "  return (%z)\n",
      DType::Float32);
  EXPECT_FALSE(simplify_arithmetic(*written));
}

// The claims simplify.h rests on, checked on the CPU kernels with the values where
// IEEE arithmetic is subtle.
TEST(Simplify, ExactnessClaimsHoldOnTheKernels) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> special = {-0.0, 0.0, std::nan(""), inf, -inf, 1.5, -2.25, 5e-324, 1e308};
  Tensor x = Tensor::from_vector(special);
  auto same_bits = [&](const IValue& r) {
    Tensor t = r.to_tensor();
    if (t.dtype() != DType::Float64 || t.numel() != x.numel()) return false;
    for (int64_t i = 0; i < x.numel(); ++i) {
      double a = x.data_ptr<double>()[i], b = t.data_ptr<double>()[i];
      if (std::bit_cast<uint64_t>(a) != std::bit_cast<uint64_t>(b)) return false;
    }
    return true;
  };
  IValue one(int64_t{1}), fone(1.0), izero(int64_t{0}), pz(0.0), nz(-0.0), none;
  EXPECT_TRUE(same_bits(call_op(OpId::mul, {IValue(x), one})[0]));
  EXPECT_TRUE(same_bits(call_op(OpId::mul, {IValue(x), fone})[0]));
  EXPECT_TRUE(same_bits(call_op(OpId::div, {IValue(x), one, none})[0]));
  EXPECT_TRUE(same_bits(call_op(OpId::sub, {IValue(x), izero, one})[0]));
  EXPECT_TRUE(same_bits(call_op(OpId::sub, {IValue(x), pz, one})[0]));
  EXPECT_TRUE(same_bits(call_op(OpId::add, {IValue(x), nz, one})[0]));
  Tensor n = call_op(OpId::neg, {IValue(x)})[0].to_tensor();
  EXPECT_TRUE(same_bits(call_op(OpId::neg, {IValue(n)})[0]));
  // And why the other rules are absent: -0 + 0 = +0, -0 - (-0) = +0, x * 0 is not 0.
  EXPECT_FALSE(same_bits(call_op(OpId::add, {IValue(x), pz, one})[0]));
  EXPECT_FALSE(same_bits(call_op(OpId::add, {IValue(x), izero, one})[0]));
  EXPECT_FALSE(same_bits(call_op(OpId::sub, {IValue(x), nz, one})[0]));
  // Scalars: the same facts for add.float / sub.float.
  auto fbits = [](const IValue& v) { return std::bit_cast<uint64_t>(v.to_double()); };
  for (double v : special) {
    IValue a(v);
    EXPECT_EQ(fbits(call_op(OpId::add_float, {a, nz})[0]), std::bit_cast<uint64_t>(v));
    EXPECT_EQ(fbits(call_op(OpId::sub_float, {a, pz})[0]), std::bit_cast<uint64_t>(v));
    EXPECT_EQ(fbits(call_op(OpId::mul_float, {a, fone})[0]), std::bit_cast<uint64_t>(v));
  }
  EXPECT_NE(fbits(call_op(OpId::add_float, {nz, pz})[0]), std::bit_cast<uint64_t>(-0.0));
}

// ---- cse, licm, canonicalize

TEST(Cse, MergesAcrossTheGraphOnlyFromDominatingNodes) {
  auto g = parse_graph(
      "graph f(%x : Tensor, %c : bool):\n"
      "  %y : Tensor = If(%c)\n"
      "    block0():\n"
      "      %a : Tensor = exp(%x)\n"
      "      -> (%a)\n"
      "    block1():\n"
      "      %b : Tensor = exp(%x)\n"
      "      -> (%b)\n"
      "  %d : Tensor = exp(%x)\n"
      "  %e : Tensor = exp(%x)\n"
      "  %s : Tensor = mul(%d, %e)\n"
      "  %t : Tensor = mul(%s, %y)\n"
      "  return (%t)\n");
  EXPECT_TRUE(eliminate_common_subexpressions(*g));
  verify(*g);
  EXPECT_EQ(count_ops(*g, OpId::exp), 3);  // one per branch, one after the If
  EXPECT_FALSE(eliminate_common_subexpressions(*g));
}

TEST(Licm, HoistsNonRaisingTensorOpsOnlyOnKnownFloatingDtypes) {
  const char* text =
      "graph f(%w : Tensor, %x : Tensor, %n : int):\n"
      "  %true : bool = Constant[value=True]()\n"
      "  %y : Tensor = Loop(%n, %true, %x)\n"
      "    block0(%i : int, %y.1 : Tensor):\n"
      "      %t : Tensor = tanh(%w)\n"
      "      %y.2 : Tensor = mul(%y.1, %t)\n"
      "      -> (%true, %y.2)\n"
      "  return (%y)\n";
  auto floating = typed(text, DType::Float32);
  EXPECT_TRUE(hoist_loop_invariants(*floating));
  verify(*floating);
  EXPECT_EQ(count_ops(floating->block(), OpId::tanh), 1);
  EXPECT_EQ(floating->block()->param_node()->next()->next()->op(), OpId::tanh);
  auto unknown = parse_graph(text);               // tanh of an int64 tensor would still not raise,
  EXPECT_FALSE(hoist_loop_invariants(*unknown));  // but unknown dtypes are not trusted
}

TEST(Canonicalize, PutsConstantsSecondSoThatSimplifyMatches) {
  auto g = typed(
      "graph f(%x : Tensor):\n"
      "  %one : int = Constant[value=1]()\n"
      "  %y : Tensor = mul(%one, %x)\n"
      "  %z : Tensor = relu(%y)\n"
      "  return (%z)\n",
      DType::Float32);
  EXPECT_TRUE(canonicalize(*g));
  const Node* mul = g->outputs()[0]->node()->input(0)->node();
  EXPECT_EQ(mul->input(0), g->inputs()[0]);
  EXPECT_FALSE(canonicalize(*g));
  EXPECT_TRUE(simplify_arithmetic(*g));
  verify(*g);
  EXPECT_EQ(count_ops(*g, OpId::mul), 0);
}

// ---- the pipeline

const char* kPipelineInput =
    "graph net(%x : Tensor, %w : Tensor, %n : int):\n"
    "  %one : int = Constant[value=1]()\n"
    "  %two : int = Constant[value=2]()\n"
    "  %true : bool = Constant[value=True]()\n"
    "  %k : int = mul.int(%two, %one)\n"
    "  %big : bool = gt.int(%k, %one)\n"
    "  %h : Tensor = If(%big)\n"
    "    block0():\n"
    "      %p : Tensor = mul(%w, %x)\n"
    "      -> (%p)\n"
    "    block1():\n"
    "      -> (%x)\n"
    "  %q : Tensor = mul(%x, %w)\n"
    "  %y : Tensor = Loop(%n, %true, %h)\n"
    "    block0(%i : int, %y.1 : Tensor):\n"
    "      %s : int = add.int(%k, %k)\n"
    "      %y.2 : Tensor = add(%y.1, %q, %s)\n"
    "      -> (%true, %y.2)\n"
    "  return (%y)\n";

TEST(Pipeline, ReachesAFixedPointDeterministically) {
  auto g = parse_graph(kPipelineInput);
  auto h = parse_graph(kPipelineInput);
  size_t before = g->num_nodes();
  EXPECT_TRUE(optimize(*g));
  EXPECT_TRUE(optimize(*h));
  verify(*g);
  EXPECT_EQ(print_graph(*g), print_graph(*h));
  EXPECT_LT(g->num_nodes(), before);
  EXPECT_FALSE(optimize(*g));  // a fixed point: nothing more to do
  EXPECT_EQ(count_ops(*g, OpId::If), 0);
  EXPECT_EQ(count_ops(*g, OpId::mul), 1);  // mul(%w, %x) and mul(%x, %w) merged
  EXPECT_EQ(count_ops(*g, OpId::add_int), 0);
  // The folded alpha (k + k = 4) reached the loop body.
  std::string text = print_graph(*g);
  EXPECT_NE(text.find("Constant[value=4]"), std::string::npos) << text;
  // The printed result reads back (the pipeline only makes printable constants).
  EXPECT_EQ(print_graph(*parse_graph(text)), text);
}

}  // namespace
}  // namespace tsl
