// The IR data structures: construction, use lists, printing, the verifier, cloning
// and destruction, and the op schemas parsed from runtime/ops.def.
#include <gtest/gtest.h>

#include "ir/ir.h"
#include "ir/schema.h"

namespace tsl {
namespace {

// graph f(%x : Tensor, %n : int): a loop of n relu's, then an If on n > 0.
std::unique_ptr<Graph> make_loop_graph() {
  auto g = std::make_unique<Graph>();
  g->set_name("f");
  Value* x = g->add_input(Type::tensor(), "x");
  Value* n = g->add_input(Type::int_(), "n");
  Value* yes = g->insert_constant(IValue(true), Type::bool_());
  Node* loop = g->insert(g->create(OpId::Loop, {n, yes, x}, 1));
  loop->output()->set_type(Type::tensor())->set_debug_name("y");
  Block* body = loop->add_block();
  body->add_param(Type::int_(), "i");
  Value* carried = body->add_param(Type::tensor(), "y");
  {
    InsertPointGuard guard(*g, body);
    Value* r = g->insert_op(OpId::relu, {carried}, Type::tensor());
    r->set_debug_name("y");
    Value* again = g->insert_constant(IValue(true), Type::bool_());
    body->add_return(again);
    body->add_return(r);
  }
  g->add_output(loop->output());
  return g;
}

TEST(IR, PrintsLoopWithBlocks) {
  auto g = make_loop_graph();
  verify(*g);
  std::string text = print_graph(*g);
  EXPECT_EQ(text,
            "graph f(%x : Tensor, %n : int):\n"
            "  %0 : bool = Constant[value=True]()\n"
            "  %y : Tensor = Loop(%n, %0, %x)\n"
            "    block0(%i : int, %y.1 : Tensor):\n"
            "      %y.2 : Tensor = relu(%y.1)\n"
            "      %1 : bool = Constant[value=True]()\n"
            "      -> (%1, %y.2)\n"
            "  return (%y)\n");
}

TEST(IR, UseListsFollowReplacement) {
  auto g = std::make_unique<Graph>();
  Value* a = g->add_input(Type::tensor(), "a");
  Value* b = g->add_input(Type::tensor(), "b");
  Value* s = g->insert_op(OpId::mul, {a, a}, Type::tensor());
  g->add_output(s);
  EXPECT_EQ(a->uses().size(), 2u);
  a->replace_all_uses_with(b);
  EXPECT_TRUE(a->uses().empty());
  EXPECT_EQ(b->uses().size(), 2u);
  s->node()->remove_input(0);
  EXPECT_EQ(b->uses().size(), 1u);
  EXPECT_EQ(b->uses()[0].offset, 0u);
}

TEST(IR, VerifierRejectsUseBeforeDefinition) {
  auto g = std::make_unique<Graph>();
  Value* a = g->add_input(Type::tensor(), "a");
  Value* r1 = g->insert_op(OpId::relu, {a}, Type::tensor());
  Value* r2 = g->insert_op(OpId::relu, {r1}, Type::tensor());
  g->add_output(r2);
  verify(*g);
  r2->node()->move_before(r1->node());  // now r2 uses r1 before r1 is defined
  EXPECT_THROW(verify(*g), InternalError);
}

TEST(IR, VerifierRejectsWrongArity) {
  auto g = std::make_unique<Graph>();
  Value* a = g->add_input(Type::tensor(), "a");
  Value* r = g->insert_op(OpId::add, {a}, Type::tensor());  // add needs self, other, alpha
  g->add_output(r);
  EXPECT_THROW(verify(*g), InternalError);
}

TEST(IR, CloneIsEqualAndIndependent) {
  auto g = make_loop_graph();
  auto copy = g->clone();
  verify(*copy);
  EXPECT_EQ(print_graph(*g), print_graph(*copy));
  copy->outputs()[0]->node()->block(0)->return_node()->prev()->set_attr("value", IValue(false));
  EXPECT_NE(print_graph(*g), print_graph(*copy));
}

TEST(IR, DestroyRemovesNestedBlocks) {
  auto g = make_loop_graph();
  size_t before = g->num_nodes();
  Node* loop = g->outputs()[0]->node();
  g->block()->return_node()->remove_all_inputs();
  loop->destroy();
  verify(*g);
  EXPECT_LT(g->num_nodes(), before);
}

TEST(Schema, EveryOpSchemaParses) {
  for (int i = 0; i < kNumOps; ++i) {
    const FunctionSchema& s = schema_of(static_cast<OpId>(i));
    EXPECT_EQ(s.name, op_info(static_cast<OpId>(i)).name);
  }
}

TEST(Schema, ArgumentsDefaultsAndReturns) {
  const FunctionSchema& s = schema_of(*find_op("max.dim"));
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[1].type->str(), "int");
  EXPECT_EQ(s.arguments[2].default_value->to_bool(), false);
  EXPECT_EQ(s.returns.size(), 2u);
  const FunctionSchema& z = schema_of(OpId::zeros);
  EXPECT_TRUE(z.arguments[1].kwarg_only);
  EXPECT_EQ(z.arguments[1].type->str(), "Optional[dtype]");
  EXPECT_EQ(schema_of(OpId::print).variadic_index(), 0);
  EXPECT_EQ(schema_of(OpId::print).arguments[2].default_value->to_str(), "\n");
  EXPECT_EQ(schema_of(OpId::index).arguments[1].type->str(), "List[Optional[Tensor]]");
}

// `int[2] stride=1` (PyTorch's fixed-size lists): a list of ints whose int default
// stands for both elements; `int[2]?` is optional.
TEST(Schema, FixedSizeIntLists) {
  const FunctionSchema& s = schema_of(OpId::conv2d);
  const Argument& stride = s.arguments[3];
  EXPECT_EQ(stride.name, "stride");
  EXPECT_EQ(stride.fixed_size, 2);
  EXPECT_EQ(stride.type->str(), "List[int]");
  EXPECT_EQ(stride.default_value->to_int_vector(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(s.arguments[6].fixed_size, 0);  // int groups
  const Argument& pool_stride = schema_of(OpId::max_pool2d).arguments[2];
  EXPECT_EQ(pool_stride.fixed_size, 2);
  EXPECT_EQ(pool_stride.type->str(), "Optional[List[int]]");
  EXPECT_TRUE(pool_stride.default_value->is_none());
  EXPECT_EQ(schema_of(OpId::zeros).arguments[0].fixed_size, 0);  // int[] size
}

TEST(Types, SubtypingAndUnification) {
  TypePtr opt = Type::optional(Type::tensor());
  EXPECT_TRUE(is_subtype(Type::none(), opt));
  EXPECT_TRUE(is_subtype(Type::tensor(), opt));
  EXPECT_FALSE(is_subtype(opt, Type::tensor()));
  EXPECT_TRUE(unify_types(Type::none(), Type::int_())->equals(*Type::optional(Type::int_())));
  EXPECT_EQ(unify_types(Type::int_(), Type::float_()), nullptr);
  EXPECT_TRUE(Type::tensor(DType::Float64)->equals(*Type::tensor()));
  EXPECT_EQ(Type::tuple({Type::int_(), Type::list(Type::tensor())})->str(),
            "Tuple[int, List[Tensor]]");
}

}  // namespace
}  // namespace tsl
