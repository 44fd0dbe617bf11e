// The IR text parser: print(parse(print(g))) == print(g) for hand-built graphs of every
// shape (blocks, tuples, constants of each kind, colliding names), and located errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/ir.h"
#include "ir/ir_parser.h"

namespace tsl {
namespace {

// Prints `g`, parses the text, prints again: both texts must be equal.
void expect_round_trip(const Graph& g, PrintOptionsIR options = {}) {
  verify(g);
  std::string text = print_graph(g, options);
  std::unique_ptr<Graph> parsed = parse_graph(text);
  EXPECT_EQ(print_graph(*parsed, options), text);
  EXPECT_EQ(parsed->name(), g.name());
}

// The text must parse and print back unchanged.
void expect_text_round_trip(const std::string& text) {
  std::unique_ptr<Graph> g = parse_graph(text);
  EXPECT_EQ(print_graph(*g, {.with_lines = true}), text);
}

// The compile error parsing `text` reports, rendered.
std::string parse_error(const std::string& text) {
  try {
    parse_graph(text, "t.ir");
  } catch (const SourceError& e) {
    EXPECT_EQ(e.kind(), SourceError::Kind::Compile);
    return e.render();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

// graph f(%x : Tensor, %n : int): a loop whose carried value shares its name.
std::unique_ptr<Graph> make_loop_graph() {
  auto g = std::make_unique<Graph>();
  g->set_name("f");
  Value* x = g->add_input(Type::tensor(), "x");
  Value* n = g->add_input(Type::int_(), "n");
  Value* yes = g->insert_constant(IValue(true), Type::bool_());
  Node* loop = g->insert(g->create(OpId::Loop, {n, yes, x}, 1));
  loop->output()->set_type(Type::tensor())->set_debug_name("x");
  Block* body = loop->add_block();
  body->add_param(Type::int_(), "i");
  Value* carried = body->add_param(Type::tensor(), "x");
  {
    InsertPointGuard guard(*g, body);
    Value* r = g->insert_op(OpId::relu, {carried}, Type::tensor());
    r->set_debug_name("x");
    body->add_return(yes);
    body->add_return(r);
  }
  g->add_output(loop->output());
  return g;
}

TEST(IRParser, RoundTripsALoop) {
  auto g = make_loop_graph();
  expect_round_trip(*g);
  auto parsed = parse_graph(print_graph(*g));
  // %x.2 is the value named x again: the suffix is only the printer's.
  Node* loop = parsed->outputs()[0]->node();
  ASSERT_EQ(loop->op(), OpId::Loop);
  EXPECT_EQ(loop->output()->debug_name(), "x");
  EXPECT_EQ(loop->block(0)->params()[1]->debug_name(), "x");
  EXPECT_EQ(loop->input(1)->debug_name(), "");  // %0, a temporary
  EXPECT_EQ(loop->block(0)->returns()[0], loop->input(1));
}

TEST(IRParser, RoundTripsNestedIfsWithSeveralOutputs) {
  auto g = std::make_unique<Graph>();
  g->set_name("classify");
  Value* x = g->add_input(Type::tensor(), "x");
  Value* c = g->add_input(Type::bool_(), "c");
  Node* outer = g->insert(g->create(OpId::If, {c}, 2));
  outer->output(0)->set_type(Type::tensor())->set_debug_name("y");
  outer->output(1)->set_type(Type::optional(Type::int_()));
  Block* then_b = outer->add_block();
  Block* else_b = outer->add_block();
  {
    InsertPointGuard guard(*g, then_b);
    Node* inner = g->insert(g->create(OpId::If, {c}, 1));
    inner->output()->set_type(Type::tensor())->set_debug_name("y");
    for (int i = 0; i < 2; ++i) {
      Block* b = inner->add_block();
      InsertPointGuard inner_guard(*g, b);
      b->add_return(
          g->insert_op(i ? OpId::neg : OpId::relu, {x}, Type::tensor())->set_debug_name("y"));
    }
    then_b->add_return(inner->output());
    then_b->add_return(g->insert_constant(IValue(int64_t{3}), Type::optional(Type::int_())));
  }
  {
    InsertPointGuard guard(*g, else_b);
    else_b->add_return(x);
    else_b->add_return(g->insert_constant(IValue(), Type::none()));
  }
  g->add_output(outer->output(0));
  g->add_output(outer->output(1));
  expect_round_trip(*g);
}

TEST(IRParser, RoundTripsMultiOutputNodesTuplesAndLists) {
  auto g = std::make_unique<Graph>();
  g->set_name("stats");
  Value* x = g->add_input(Type::tensor(), "x");
  Value* dim = g->insert_constant(IValue(int64_t{1}), Type::int_());
  Value* keep = g->insert_constant(IValue(false), Type::bool_());
  Node* mx = g->insert(g->create(*find_op("max.dim"), {x, dim, keep}, 2));
  mx->output(0)->set_type(Type::tensor())->set_debug_name("values");
  mx->output(1)->set_type(Type::tensor())->set_debug_name("indices");
  TypePtr tt = Type::tuple({Type::tensor(), Type::tensor()});
  Node* tup = g->insert(g->create(OpId::TupleConstruct, mx->outputs(), 1));
  tup->output()->set_type(tt);
  Node* unpack = g->insert(g->create(OpId::TupleUnpack, {tup->output()}, 2));
  unpack->output(0)->set_type(Type::tensor())->set_debug_name("a");
  unpack->output(1)->set_type(Type::tensor())->set_debug_name("b");
  Node* index = g->insert(g->create(OpId::TupleIndex, {tup->output()}, 1));
  index->set_attr("index", IValue(int64_t{1}))->output()->set_type(Type::tensor());
  Node* list = g->insert(g->create(OpId::ListConstruct, {unpack->output(0), index->output()}, 1));
  list->output()->set_type(Type::list(Type::tensor()))->set_debug_name("xs");
  g->insert(g->create(OpId::append_list, {list->output(), unpack->output(1)}, 0));
  Value* sep = g->insert_constant(IValue(" "), Type::str_());
  Value* end = g->insert_constant(IValue("\n"), Type::str_());
  g->insert(g->create(OpId::print, {list->output(), x, sep, end}, 0));
  Node* call = g->insert(g->create(OpId::CallFunction, {x}, 1));
  call->set_attr("name", IValue("helper"))->output()->set_type(Type::tensor());
  g->add_output(call->output());
  g->add_output(tup->output());
  expect_round_trip(*g);
}

// Dict types print as Python writes them and read back; the ops of each key type
// check their keys and values against `Dict(str, t)` / `Dict(int, t)`.
TEST(IRParser, RoundTripsDicts) {
  auto g = std::make_unique<Graph>();
  g->set_name("dicts");
  Value* x = g->add_input(Type::tensor(), "x");
  g->add_input(Type::optional(Type::dict(Type::int_(), Type::list(Type::float_()))), "opt");
  TypePtr dt = Type::dict(Type::str_(), Type::tensor());
  Value* key = g->insert_constant(IValue("w"), Type::str_());
  Node* lit = g->insert(g->create(OpId::DictConstruct, {key, x}, 1));
  Value* d = lit->output()->set_type(dt)->set_debug_name("d");
  Value* y = g->insert_op(OpId::relu, {x}, Type::tensor());
  Value* b = g->insert_constant(IValue("b"), Type::str_());
  g->insert(g->create(OpId::setitem_dict_str, {d, b, y}, 0));
  Value* read = g->insert_op(OpId::getitem_dict_str, {d, b}, Type::tensor());
  g->insert_op(OpId::get_dict_str, {d, key}, Type::optional(Type::tensor()));
  g->insert_op(OpId::items_dict_str, {d}, Type::list(Type::tuple({Type::str_(), Type::tensor()})));
  g->insert_op(OpId::contains_dict_str, {d, key}, Type::bool_());
  g->insert_op(OpId::keys_dict_str, {d}, Type::list(Type::str_()));
  g->add_output(read);
  g->add_output(d);
  expect_round_trip(*g);
  // Text written by hand reads back with the same types.
  std::unique_ptr<Graph> h = parse_graph(
      "graph h(%d : Dict[int, Tensor], %k : int):\n"
      "  %v : Tensor = getitem.Dict_int(%d, %k)\n"
      "  %n : int = len.Dict_int(%d)\n"
      "  return (%v, %n)\n");
  EXPECT_EQ(h->inputs()[0]->type()->str(), "Dict[int, Tensor]");
}

TEST(IRParser, ReportsDictKeysOfTheWrongType) {
  std::string e = parse_error(
      "graph f(%d : Dict[str, Tensor], %k : int):\n"
      "  %v : Tensor = getitem.Dict_str(%d, %k)\n  return (%v)\n");
  EXPECT_NE(e.find("input 1 of getitem.Dict_str ('key') must be str, not int"), std::string::npos)
      << e;
  e = parse_error("graph f(%d : Dict[float, int]):\n  return (%d)\n");
  EXPECT_NE(e.find("t.ir:1:19: error: Dict keys must be str or int, not float"), std::string::npos)
      << e;
  e = parse_error(
      "graph f(%d : Dict[str, int]):\n"
      "  %v : float = getitem.Dict_str(%d, %d)\n  return (%v)\n");
  EXPECT_NE(e.find("must be str, not Dict[str, int]"), std::string::npos) << e;
  e = parse_error(
      "graph f(%x : Tensor):\n"
      "  %k : int = Constant[value=1]()\n"
      "  %d : Dict[str, Tensor] = DictConstruct(%k, %x)\n  return (%d)\n");
  EXPECT_NE(e.find("t.ir:3:42: error: input 0 of DictConstruct must be str, not int"),
            std::string::npos)
      << e;
}

TEST(IRParser, RoundTripsConstantsOfEveryKind) {
  auto g = std::make_unique<Graph>();
  g->set_name("constants");
  double inf = std::numeric_limits<double>::infinity();
  std::vector<std::pair<IValue, TypePtr>> constants = {
      {IValue(int64_t{0}), Type::int_()},
      {IValue(int64_t{-100}), Type::int_()},
      {IValue(std::numeric_limits<int64_t>::max()), Type::int_()},
      {IValue(std::numeric_limits<int64_t>::min()), Type::int_()},
      {IValue(2.0), Type::float_()},
      {IValue(0.1), Type::float_()},
      {IValue(-1e-05), Type::float_()},
      {IValue(1e16), Type::float_()},
      {IValue(-0.0), Type::float_()},
      {IValue(5e-324), Type::float_()},
      {IValue(inf), Type::float_()},
      {IValue(-inf), Type::float_()},
      {IValue(std::nan("")), Type::float_()},
      {IValue(true), Type::bool_()},
      {IValue(false), Type::bool_()},
      {IValue(), Type::none()},
      {IValue(), Type::optional(Type::tensor())},
      {IValue("mean"), Type::str_()},
      {IValue(""), Type::str_()},
      {IValue("it's"), Type::str_()},
      {IValue("say \"hi\""), Type::str_()},
      {IValue("both ' and \""), Type::str_()},
      {IValue("back\\slash\nnew\tline\r# not a comment"), Type::str_()},
      {IValue("caf\xC3\xA9 \xE2\x88\x82"), Type::str_()},
      {IValue::int_list(std::vector<int64_t>{2, -3}), Type::list(Type::int_())},
      {IValue::list({}), Type::list(Type::int_())},
      {IValue::list({IValue(1.5), IValue(inf)}), Type::list(Type::float_())},
      {IValue::list({IValue("a"), IValue("b,c]")}), Type::list(Type::str_())},
      {IValue::tuple({IValue(int64_t{1})}), Type::tuple({Type::int_()})},
      {IValue::tuple({}), Type::tuple({})},
      {IValue::tuple({IValue(int64_t{1}), IValue("x"), IValue::list({IValue(true)})}),
       Type::tuple({Type::int_(), Type::str_(), Type::list(Type::bool_())})},
      {IValue(DType::Float32), Type::dtype()},
      {IValue(DType::Int64), Type::dtype()},
      {IValue(DType::Bool), Type::dtype()},
      {IValue(DType::Float64), Type::dtype()},
      {IValue(kCPU), Type::device()},
      {IValue(Device(DeviceType::CUDA, 1)), Type::device()},
  };
  for (auto& [value, type] : constants) g->add_output(g->insert_constant(value, type));
  expect_round_trip(*g);
  // The values themselves come back, not just their text.
  auto parsed = parse_graph(print_graph(*g));
  ASSERT_EQ(parsed->outputs().size(), constants.size());
  for (size_t i = 0; i < constants.size(); ++i) {
    const IValue& v = parsed->outputs()[i]->node()->attr("value");
    EXPECT_EQ(v.tag(), constants[i].first.tag()) << i;
    EXPECT_EQ(v.repr(), constants[i].first.repr()) << i;
    EXPECT_TRUE(parsed->outputs()[i]->type()->equals(*constants[i].second)) << i;
  }
  EXPECT_TRUE(std::signbit(parsed->outputs()[8]->node()->attr("value").to_double()));
  EXPECT_EQ(parsed->outputs()[3]->node()->attr("value").to_int(),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(parsed->outputs()[22]->node()->attr("value").to_str(),
            "back\\slash\nnew\tline\r# not a comment");
}

TEST(IRParser, KeepsNamesThatCollideWithThePrintersSuffixes) {
  // Debug names "x", "x.1" (a real name with a dot) and temporaries interleaved: the
  // printer must number them the same way after parsing.
  auto g = std::make_unique<Graph>();
  g->set_name("names");
  Value* x = g->add_input(Type::tensor(), "x");
  Value* a = g->insert_op(OpId::relu, {x}, Type::tensor())->set_debug_name("x.1");
  Value* b = g->insert_op(OpId::relu, {a}, Type::tensor())->set_debug_name("x");
  Value* t = g->insert_op(OpId::relu, {b}, Type::tensor());
  Value* c = g->insert_op(OpId::relu, {t}, Type::tensor())->set_debug_name("x");
  Value* d = g->insert_op(OpId::relu, {c}, Type::tensor())->set_debug_name("x.grad");
  Value* e = g->insert_op(OpId::relu, {d}, Type::tensor())->set_debug_name("x.grad");
  g->add_output(e);
  expect_round_trip(*g);
  EXPECT_NE(print_graph(*g).find("%x.2 : Tensor = relu(%x.1)"), std::string::npos)
      << print_graph(*g);
}

TEST(IRParser, RoundTripsGraphNames) {
  for (std::string name :
       {"<module>", "f", "grad(f)", "grad(grad(f))", "", "vjp(f, 1)", "grad of f", "f.backward"}) {
    auto g = std::make_unique<Graph>();
    g->set_name(name);
    g->add_output(g->add_input(Type::tensor(), "x"));
    expect_round_trip(*g);
    auto empty = std::make_unique<Graph>();
    empty->set_name(name);
    expect_round_trip(*empty);
  }
}

TEST(IRParser, RoundTripsSourcePositions) {
  auto source = std::make_shared<Source>("prog.tsl", "x\n");
  auto g = make_loop_graph();
  int line = 3;
  for (Node* n : *g->block()) n->set_range({source, static_cast<uint32_t>(line++), 4, 0, 0});
  expect_round_trip(*g, {.with_lines = true});
  auto parsed = parse_graph(print_graph(*g, {.with_lines = true}));
  EXPECT_EQ(parsed->outputs()[0]->node()->range().line, 4u);
  EXPECT_EQ(parsed->outputs()[0]->node()->range().col, 4u);
}

TEST(IRParser, ReadsHandWrittenText) {
  // Comments, free indentation and any temporary numbers are accepted.
  auto g = parse_graph(
      "# a comment before the graph\n"
      "graph f(%x : Tensor, %w : float):   # the header\n"
      "    %7 : Tensor = mul(%x, %w)\n"
      "# a comment between nodes\n"
      "    %one : int = Constant[value=1]()\n"
      "    %y : Tensor = add(%7, %x, %one)  # 3:5\n"
      "      %s : str = Constant[value=' ']()   # any indentation\n"
      "    print(%y, %one, %s, %s)\n"
      "    return (%y)\n");
  EXPECT_EQ(print_graph(*g, {.with_lines = true}),
            "graph f(%x : Tensor, %w : float):\n"
            "  %0 : Tensor = mul(%x, %w)\n"
            "  %one : int = Constant[value=1]()\n"
            "  %y : Tensor = add(%0, %x, %one)  # 3:5\n"
            "  %s : str = Constant[value=' ']()\n"
            "  print(%y, %one, %s, %s)\n"
            "  return (%y)\n");
}

TEST(IRParser, ParsesSeveralGraphs) {
  std::string text =
      "graph f(%x : Tensor):\n  return (%x)\n\n"
      "graph grad(f)(%x : Tensor, %g : Tensor):\n  return (%g)\n\n";
  auto graphs = parse_graphs(text);
  ASSERT_EQ(graphs.size(), 2u);
  EXPECT_EQ(graphs[1]->name(), "grad(f)");
  EXPECT_EQ(print_graph(*graphs[0]) + "\n" + print_graph(*graphs[1]) + "\n", text);
  EXPECT_TRUE(parse_graphs("# nothing\n").empty());
  EXPECT_NE(parse_error(text).find("t.ir:1:1: error: expected one graph, found 2"),
            std::string::npos);
}

TEST(IRParser, GenericOverOpsWithBlocksAndAttributes) {
  // Structural ops other than If/Loop keep their blocks and attributes (GradOf-like).
  expect_text_round_trip(
      "graph g(%x : Tensor, %c : bool):\n"
      "  %0 : Tensor = If[op='relu', line=7, scale=0.5, dims=[0, 1]](%c)  # 7:3\n"
      "    block0():\n"
      "      -> (%x)\n"
      "    block1():\n"
      "      %1 : Tensor = Undefined()\n"
      "      -> (%1)\n"
      "  return (%0)\n");
}

TEST(IRParser, RoundTripsGradientGraphs) {
  // What --dump=grad prints: GradOf nodes with a block and op/line attributes.
  if (!find_op("GradOf")) GTEST_SKIP() << "no GradOf op in this build";
  expect_text_round_trip(
      "graph f.backward(%0 : Tensor, %h : Tensor):\n"
      "  %dh : Tensor = GradOf[op='relu', line=11](%0)  # 11:9\n"
      "    block0():\n"
      "      %1 : float = Constant[value=0.0]()  # 11:9\n"
      "      %2 : Tensor = gt(%h, %1)  # 11:9\n"
      "      %3 : Tensor = where(%2, %0, %1)  # 11:9\n"
      "      -> (%3)\n"
      "  return (%dh)\n");
}

TEST(IRParser, RoundTripsFusionGroups) {
  // What `--passes=fuse` prints: a closed block whose parameters are the inputs.
  expect_text_round_trip(
      "graph f(%x : Tensor, %a : float):\n"
      "  %y : Tensor, %t : Tensor = FusionGroup(%x, %a)\n"
      "    block0(%x.1 : Tensor, %a.1 : float):\n"
      "      %t.1 : Tensor = tanh(%x.1)\n"
      "      %m : Tensor = mul(%t.1, %a.1)\n"
      "      %one : int = Constant[value=1]()\n"
      "      %y.1 : Tensor = add(%m, %x.1, %one)\n"
      "      -> (%y.1, %t.1)\n"
      "  return (%y, %t)\n");
}

TEST(IRParser, ReportsMalformedFusionGroups) {
  std::string e = parse_error(
      "graph f(%x : Tensor):\n"
      "  %y : Tensor = FusionGroup(%x)\n"
      "    block0():\n"
      "      -> (%x)\n"
      "  return (%y)\n");
  EXPECT_NE(e.find("the FusionGroup block takes 0 parameters for 1 inputs"), std::string::npos)
      << e;
  e = parse_error(
      "graph f(%x : Tensor):\n"
      "  %y : Tensor = FusionGroup(%x)\n"
      "    block0(%x.1 : Tensor):\n"
      "      %z : Tensor = neg(%x.1)\n"
      "      -> (%z, %z)\n"
      "  return (%y)\n");
  EXPECT_NE(e.find("returns 2 values for 1 outputs"), std::string::npos) << e;
}

TEST(IRParser, ReportsUnknownOps) {
  std::string e =
      parse_error("graph f(%x : Tensor):\n  %y : Tensor = frobnicate(%x)\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:2:17: error: unknown op 'frobnicate'"), std::string::npos) << e;
  EXPECT_NE(e.find("      %y : Tensor = frobnicate(%x)\n"
                   "                    ^~~~~~~~~~\n"),
            std::string::npos)
      << e;
  e = parse_error("graph f(%x : Tensor):\n  Return(%x)\n  return (%x)\n");
  EXPECT_NE(e.find("t.ir:2:3: error: 'Return' is a block sentinel"), std::string::npos) << e;
}

TEST(IRParser, ReportsUndefinedAndOutOfScopeValues) {
  std::string e = parse_error("graph f(%x : Tensor):\n  %y : Tensor = relu(%z)\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:2:22: error: undefined value %z"), std::string::npos) << e;
  e = parse_error(
      "graph f(%x : Tensor):\n  %y : Tensor = relu(%z)\n  %z : Tensor = relu(%x)\n"
      "  return (%y)\n");
  EXPECT_NE(e.find("t.ir:2:22: error: %z is used before its definition at 3:3"), std::string::npos)
      << e;
  e = parse_error(
      "graph f(%x : Tensor, %c : bool):\n"
      "  %y : Tensor = If(%c)\n"
      "    block0():\n"
      "      %in : Tensor = relu(%x)\n"
      "      -> (%in)\n"
      "    block1():\n"
      "      -> (%in)\n"
      "  return (%y)\n");
  EXPECT_NE(e.find("t.ir:7:11: error: %in is not visible here: it is defined at 4:7"),
            std::string::npos)
      << e;
  e = parse_error(
      "graph f(%x : Tensor):\n  %y : Tensor = relu(%x)\n  %y : Tensor = relu(%x)\n"
      "  return (%y)\n");
  EXPECT_NE(e.find("t.ir:3:3: error: %y is already defined at 2:3"), std::string::npos) << e;
}

TEST(IRParser, ReportsWrongArityAndTypes) {
  std::string e =
      parse_error("graph f(%x : Tensor):\n  %y : Tensor = add(%x, %x)\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:2:17: error: add takes 3 inputs, got 2: add(Tensor self, Tensor other"),
            std::string::npos)
      << e;
  e = parse_error("graph f(%n : int):\n  %y : Tensor = relu(%n)\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:2:22: error: input 0 of relu ('self') must be Tensor, not int"),
            std::string::npos)
      << e;
  e = parse_error("graph f(%x : Tensor):\n  %y : int = relu(%x)\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:2:14: error: output 0 of relu must be Tensor, not int"), std::string::npos)
      << e;
  e = parse_error("graph f(%x : Tensor):\n  %y : Tensor, %z : Tensor = relu(%x)\n  return (%y)\n");
  EXPECT_NE(e.find("error: relu has 1 outputs, got 2"), std::string::npos) << e;
  e = parse_error("graph f():\n  %c : int = Constant[value='a']()\n  return (%c)\n");
  EXPECT_NE(e.find("t.ir:2:14: error: Constant of type int holds a value of type str: 'a'"),
            std::string::npos)
      << e;
  e = parse_error(
      "graph f(%n : int):\n  %y : int = If(%n)\n    block0():\n      -> (%n)\n"
      "    block1():\n      -> (%n)\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:2:14: error: If takes one bool input"), std::string::npos) << e;
  e = parse_error(
      "graph f(%n : int, %b : bool):\n  %y : int = Loop(%n, %b, %n)\n"
      "    block0(%i : int, %k : int):\n      -> (%b, %b)\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:2:14: error: a block of this Loop returns bool for output 0 of type int"),
            std::string::npos)
      << e;
}

TEST(IRParser, ReportsSyntaxErrors) {
  std::string e = parse_error("graph f(%x : Tensor):\n  %y : Tensor = relu(%x\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:3:3: error: expected ',' or ')' in the inputs of relu, got 'return'"),
            std::string::npos)
      << e;
  e = parse_error("graph f(%x : Tensor):\n  %y : Tensor = relu(%x)\n");
  EXPECT_NE(e.find("error: expected 'return' or a node, got the end of the input"),
            std::string::npos)
      << e;
  e = parse_error("graph f():\n  %s : str = Constant[value='abc]()\n  return (%s)\n");
  EXPECT_NE(e.find("t.ir:2:29: error: unterminated string literal"), std::string::npos) << e;
  e = parse_error("graph f(%x : Tensr):\n  return (%x)\n");
  EXPECT_NE(e.find("t.ir:1:14: error: unknown type 'Tensr'"), std::string::npos) << e;
  e = parse_error("graph f(%x : Tensor):\n  %y : ? = relu(%x)\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:2:8: error: a value needs a type"), std::string::npos) << e;
  e = parse_error("graph f(%x : Tensor):\n  %y : Tensor = relu(%x) $\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:2:26: error: unexpected character '$'"), std::string::npos) << e;
  e = parse_error(
      "graph f():\n  %c : int = Constant[value=99999999999999999999]()\n"
      "  return (%c)\n");
  EXPECT_NE(e.find("t.ir:2:29: error: integer 99999999999999999999 does not fit in int64"),
            std::string::npos)
      << e;
  e = parse_error(
      "graph f(%c : bool):\n  %y : int = If(%c)\n    block1():\n      -> (%c)\n  return (%y)\n");
  EXPECT_NE(e.find("t.ir:3:5: error: expected block0, got block1"), std::string::npos) << e;
}

TEST(IRParser, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string deep = "graph f():\n  %c : int = Constant[value=" + std::string(100000, '[') +
                     "]()\n  return (%c)\n";
  EXPECT_NE(parse_error(deep).find("t.ir:2:"), std::string::npos);
  std::string nested;
  for (int i = 0; i < 5000; ++i) nested += "List[";
  EXPECT_NE(
      parse_error("graph f(%x : " + nested + "int" + std::string(5000, ']') + "):\n  return (%x)\n")
          .find("error: nesting too deep"),
      std::string::npos);
}

TEST(IRParser, NeverCrashesOnTruncatedText) {
  // Every prefix of a valid graph is either valid or a located error.
  auto g = make_loop_graph();
  std::string text = print_graph(*g);
  for (size_t n = 0; n < text.size(); ++n) {
    try {
      parse_graphs(text.substr(0, n));
    } catch (const SourceError&) {
    }
  }
}

}  // namespace
}  // namespace tsl
