// The register interpreter: values freed at their last use, If/Loop run without
// re-compiling, user errors carry the failing node's location.
#include <gtest/gtest.h>

#include "runtime/exec/function.h"
#include "runtime/exec/interpreter.h"
#include "runtime/tensor/storage.h"

namespace tsl {
namespace {

Tensor filled(int64_t n, float v) {
  return Tensor::from_vector(std::vector<float>(static_cast<size_t>(n), v));
}

// graph(%x): 20 x neg in a chain, then return.
std::shared_ptr<Graph> neg_chain(int length) {
  auto g = std::make_shared<Graph>();
  Value* v = g->add_input(Type::tensor(), "x");
  for (int i = 0; i < length; ++i) v = g->insert_op(OpId::neg, {v}, Type::tensor());
  g->add_output(v);
  verify(*g);
  return g;
}

TEST(Interpreter, FreesEachIntermediateAtItsLastUse) {
  constexpr int64_t kElems = 1 << 18;  // 1 MiB of float32
  const size_t bytes = kElems * sizeof(float);
  Code code(neg_chain(20));
  InterpreterState state(code);
  std::vector<IValue> inputs{IValue(filled(kElems, 2.f))};
  size_t before = cpu_live_bytes();
  reset_cpu_peak_bytes();
  std::vector<IValue> out = state.run(std::move(inputs));
  // The input is consumed (moved in) and freed after its one use; at any time at
  // most the input of an op and its result are alive.
  EXPECT_LE(cpu_peak_bytes() - before, 2 * bytes);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_tensor().data_ptr<float>()[0], 2.f);  // 20 negations
  out.clear();
  EXPECT_LE(cpu_live_bytes(), before);
}

TEST(Interpreter, RunsLoopsAndBranches) {
  // graph(%n : int): sum of i for i in range(n) where i is odd.
  auto g = std::make_shared<Graph>();
  Value* n = g->add_input(Type::int_(), "n");
  Value* yes = g->insert_constant(IValue(true), Type::bool_());
  Value* zero = g->insert_constant(IValue(int64_t{0}), Type::int_());
  Node* loop = g->insert(g->create(OpId::Loop, {n, yes, zero}, 1));
  loop->output()->set_type(Type::int_());
  Block* body = loop->add_block();
  Value* i = body->add_param(Type::int_(), "i");
  Value* acc = body->add_param(Type::int_(), "acc");
  {
    InsertPointGuard guard(*g, body);
    Value* two = g->insert_constant(IValue(int64_t{2}), Type::int_());
    Value* one = g->insert_constant(IValue(int64_t{1}), Type::int_());
    Value* rem = g->insert_op(OpId::remainder_int, {i, two}, Type::int_());
    Value* odd = g->insert_op(OpId::eq_int, {rem, one}, Type::bool_());
    Node* branch = g->insert(g->create(OpId::If, {odd}, 1));
    branch->output()->set_type(Type::int_());
    Block* then_b = branch->add_block();
    Block* else_b = branch->add_block();
    {
      InsertPointGuard inner(*g, then_b);
      then_b->add_return(g->insert_op(OpId::add_int, {acc, i}, Type::int_()));
    }
    else_b->add_return(acc);
    body->add_return(yes);
    body->add_return(branch->output());
  }
  g->add_output(loop->output());
  verify(*g);
  Code code(g);
  for (int64_t trips : {0, 1, 10, 1001}) {
    InterpreterState state(code);
    int64_t expected = 0;
    for (int64_t k = 0; k < trips; ++k) expected += (k % 2 == 1) ? k : 0;
    EXPECT_EQ(state.run({IValue(trips)})[0].to_int(), expected) << trips;
  }
}

TEST(Interpreter, ConstantNumbersForTensorParametersAreWrappedOnce) {
  // graph(%x): mul(%x, 2.1) — the 2.1 becomes a wrapped 0-dim tensor constant when the
  // Code is built, and promotion still treats it as a Python number.
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input(Type::tensor(), "x");
  Value* c = g->insert_constant(IValue(2.1), Type::float_());
  g->add_output(g->insert_op(OpId::mul, {x, c}, Type::tensor()));
  Code code(g);
  EXPECT_NE(code.dump().find("= tensor(2.1000, dtype=torch.float64)"), std::string::npos)
      << code.dump();
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor in = Tensor::empty(std::vector<int64_t>{2}, dtype);
    copy_into(in, Tensor::from_vector(std::vector<double>{1.0, 3.0}));
    for (int run = 0; run < 2; ++run) {
      InterpreterState state(code);
      Tensor out = state.run({IValue(in)})[0].to_tensor();
      // float64 keeps 2.1 exactly; float32 and int64 compute in float32 (PyTorch).
      DType want = dtype == DType::Float64 ? DType::Float64 : DType::Float32;
      ASSERT_EQ(out.dtype(), want);
      Tensor d = Tensor::empty(std::vector<int64_t>{2}, DType::Float64);
      copy_into(d, out);
      double expected = want == DType::Float64 ? 3.0 * 2.1 : double(3.0f * 2.1f);
      EXPECT_EQ(d.data_ptr<double>()[1], expected);
    }
  }
}

TEST(Interpreter, KernelErrorsCarryTheNodeLocation) {
  auto source = std::make_shared<Source>("t.tsl", "x = 1 // 0\n");
  SourceRange range{source, 1, 4, 1, 10};
  auto g = std::make_shared<Graph>();
  Value* a = g->insert_constant(IValue(int64_t{1}), Type::int_());
  Value* b = g->insert_constant(IValue(int64_t{0}), Type::int_());
  g->add_output(g->insert_op(OpId::floor_divide_int, {a, b}, Type::int_(), range));
  Code code(g);
  InterpreterState state(code);
  try {
    state.run({});
    FAIL() << "expected a runtime error";
  } catch (const SourceError& e) {
    EXPECT_EQ(e.kind(), SourceError::Kind::Runtime);
    EXPECT_EQ(e.message(), "integer division or modulo by zero");
    EXPECT_EQ(e.range().line, 1u);
    EXPECT_EQ(e.range().col, 4u);
  }
}

TEST(Interpreter, ChecksResultsAgainstTheirStaticDtypes) {
  // A result typed Tensor(float64) whose kernel returns float32: a dtype rule gone wrong
  // (Note [Result rules]) is an internal error, not a wrong number later.
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input(Type::tensor(), "x");
  g->add_output(g->insert_op(OpId::relu, {x}, Type::tensor(DType::Float64)));
  Code code(g);
  bool was = result_type_checks_enabled();
  set_result_type_checks(true);
  InterpreterState state(code);
  try {
    state.run({IValue(filled(3, 1.f))});
    ADD_FAILURE() << "expected the static dtype check to fail";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("static type says"), std::string::npos) << e.what();
  }
  set_result_type_checks(false);
  InterpreterState unchecked(code);
  EXPECT_EQ(unchecked.run({IValue(filled(3, 1.f))})[0].to_tensor().dtype(), DType::Float32);
  set_result_type_checks(was);
}

}  // namespace
}  // namespace tsl
