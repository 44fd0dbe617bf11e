// The two-stage Code of a gradient (stage 0: forward, stage 1: backward on one register
// file), cloning a state between the stages, and the live-bytes counters that show
// every value freed at its last use.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "ir/autodiff/differentiate.h"
#include "ir/ir_parser.h"
#include "runtime/exec/function.h"
#include "runtime/exec/interpreter.h"
#include "runtime/tensor/storage.h"

namespace tsl {
namespace {

// s = sum(tanh(x) * y + exp(x)); it returns s and e = exp(x). exp's derivative reads
// its result, so e is a real output and a capture at once.
constexpr const char* kForward = R"IR(
graph f(%x : Tensor, %y : Tensor):
  %none : None = Constant[value=None]()
  %false : bool = Constant[value=False]()
  %one : int = Constant[value=1]()
  %t : Tensor = tanh(%x)
  %p : Tensor = mul(%t, %y)
  %e : Tensor = exp(%x)
  %q : Tensor = add(%p, %e, %one)
  %s : Tensor = sum(%q, %none, %false, %none)
  return (%s, %e)
)IR";

autodiff::Gradient gradient_of(const char* ir) {
  std::unique_ptr<Graph> forward = parse_graph(ir);
  autodiff::JointGraph joint = autodiff::build_joint(*forward, {0, 1}, {});
  autodiff::Gradient g = autodiff::split(joint);
  verify(*g.f);
  verify(*g.df);
  return g;
}

Tensor vec(std::vector<float> v) { return Tensor::from_vector(v); }

std::vector<float> values(const IValue& v) {
  const Tensor& t = v.to_tensor();
  const float* p = t.contiguous().data_ptr<float>();
  return std::vector<float>(p, p + t.numel());
}

void expect_near(const IValue& got, const std::vector<float>& want) {
  std::vector<float> g = values(got);
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-5f * (1 + std::abs(want[i])));
}

// The example's inputs and output gradients; want_* from PyTorch 1.13:
//   x, y = [0.5, -1, 2], [1.5, 2, -0.5]; e = exp(x); s = (tanh(x) * y + e).sum()
//   torch.autograd.grad([s, e], [x, y], [tensor(2.), tensor([1., -1., .5])])
std::vector<IValue> forward_inputs() { return {vec({0.5f, -1.f, 2.f}), vec({1.5f, 2.f, -0.5f})}; }
std::vector<IValue> output_grads() {
  return {Tensor::scalar(2.0, DType::Float32), vec({1.f, -1.f, .5f})};
}
const std::vector<float> want_s = {8.09363079f};
const std::vector<float> want_e = {1.64872122f, 0.36787945f, 7.38905621f};
const std::vector<float> want_dx = {7.30550671f, 2.04777670f, 18.40199089f};
const std::vector<float> want_dy = {0.92423433f, -1.52318835f, 1.92805517f};

std::vector<IValue> with_captures(std::vector<IValue> grads, const std::vector<IValue>& f_out,
                                  size_t num_real) {
  grads.insert(grads.end(), f_out.begin() + static_cast<long>(num_real), f_out.end());
  return grads;
}

TEST(StagedCode, MatchesFAndDfRunSeparatelyAndPyTorch) {
  autodiff::Gradient g = gradient_of(kForward);
  ASSERT_EQ(g.num_real_outputs, 2u);
  ASSERT_GT(g.num_captures, 0u);
  // f and df as two Functions, the captures handed over by hand.
  Function f("f", g.f), df("df", g.df);
  std::vector<IValue> f_out = f.run(forward_inputs());
  std::vector<IValue> df_out = df.run(with_captures(output_grads(), f_out, g.num_real_outputs));

  std::shared_ptr<const Code> code = compile_gradient(g);
  ASSERT_EQ(code->num_stages(), 2u);
  InterpreterState state(*code);
  EXPECT_EQ(state.next_stage(), 0u);
  std::vector<IValue> out = state.run_stage(forward_inputs());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(state.next_stage(), 1u);
  std::vector<IValue> grads = state.run_stage(output_grads());
  ASSERT_EQ(grads.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(values(out[i]), values(f_out[i])) << i;
    EXPECT_EQ(values(grads[i]), values(df_out[i])) << i;
  }
  expect_near(out[0], want_s);
  expect_near(out[1], want_e);
  expect_near(grads[0], want_dx);
  expect_near(grads[1], want_dy);
}

TEST(StagedCode, CloneRunsTheBackwardAgainAndAThirdRunIsAnInternalError) {
  std::shared_ptr<const Code> code = compile_gradient(gradient_of(kForward));
  InterpreterState state(*code);
  state.run_stage(forward_inputs());
  InterpreterState kept(state);  // retain_graph=True
  std::vector<IValue> first = state.run_stage(output_grads());
  std::vector<IValue> second = kept.run_stage(output_grads());
  expect_near(first[0], want_dx);
  expect_near(second[0], want_dx);
  expect_near(second[1], want_dy);
  EXPECT_THROW(state.run_stage(output_grads()), InternalError);
  EXPECT_THROW(kept.run_stage(output_grads()), InternalError);
  // run() is for one-stage Code.
  InterpreterState fresh(*code);
  EXPECT_THROW(fresh.run(forward_inputs()), InternalError);
}

// One incoming gradient: the backward that runs is branched on it (Note [A backward
// for a defined gradient]). Defined, it gives the split backward's results with its
// GradOf blocks inlined and fused; undefined, the split backward's zeros.
TEST(StagedCode, OneIncomingGradientBranchesOnWhetherItIsDefined) {
  std::unique_ptr<Graph> forward = parse_graph(R"IR(
graph f(%x : Tensor, %y : Tensor):
  %one : int = Constant[value=1]()
  %t : Tensor = tanh(%x)
  %p : Tensor = mul(%t, %y)
  %q : Tensor = sub(%p, %x, %one)
  return (%q)
)IR");
  autodiff::Gradient g = autodiff::split(autodiff::build_joint(*forward, {0, 1}, {}));
  std::shared_ptr<Graph> branched = autodiff::branch_on_defined_seed(*g.df, 1);
  ASSERT_NE(branched, nullptr);
  verify(*branched);
  std::string text = print_graph(*branched);
  EXPECT_NE(text.find("= AnyDefined(%"), std::string::npos) << text;
  EXPECT_NE(text.find("= AssumeDefined(%"), std::string::npos) << text;
  std::shared_ptr<const Code> code = compile_gradient(g);  // branched and optimized
  Function f("f", g.f), df("df", g.df);                    // as split, unoptimized branches
  std::vector<IValue> in = forward_inputs();
  std::vector<IValue> f_out = f.run(in);
  for (bool defined : {true, false}) {
    IValue seed = defined ? IValue(vec({1.f, -2.f, 0.5f})) : IValue(Tensor());
    std::vector<IValue> want = df.run(with_captures({seed}, f_out, g.num_real_outputs));
    InterpreterState state(*code);
    state.run_stage(in);
    std::vector<IValue> got = state.run_stage({seed});
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(values(got[i]), values(want[i])) << "defined " << defined << " output " << i;
  }
  // Several incoming gradients, or none read by a GradOf: nothing to branch on.
  EXPECT_EQ(autodiff::branch_on_defined_seed(*gradient_of(kForward).df, 2), nullptr);
}

// The distinct storages of the tensors in `vs` that are not in `exclude`.
size_t distinct_bytes(const std::vector<IValue>& vs, const std::vector<Tensor>& exclude) {
  std::set<const StorageImpl*> seen;
  for (const Tensor& t : exclude) seen.insert(t.storage().get());
  size_t bytes = 0;
  for (const IValue& v : vs) {
    if (!v.is_tensor() || !v.to_tensor().defined()) continue;
    const StorageImpl* s = v.to_tensor().storage().get();
    if (seen.insert(s).second) bytes += s->nbytes();
  }
  return bytes;
}

TEST(StagedCode, StageZeroKeepsExactlyTheCapturesAndStageOneFreesThem) {
  constexpr size_t kElems = size_t{1} << 20;
  autodiff::Gradient g = gradient_of(kForward);
  Tensor x = Tensor::from_vector(std::vector<float>(kElems, 0.25f));
  Tensor y = Tensor::from_vector(std::vector<float>(kElems, -2.f));
  // What the captures weigh: f run alone returns them.
  std::vector<IValue> f_out = Function("f", g.f).run({x, y});
  std::vector<IValue> captures(f_out.begin() + static_cast<long>(g.num_real_outputs), f_out.end());
  const size_t capture_bytes = distinct_bytes(captures, {x, y});
  ASSERT_GE(capture_bytes, kElems * sizeof(float));  // at least tanh(x) or exp(x)
  f_out.clear();
  captures.clear();

  std::shared_ptr<const Code> code = compile_gradient(g);
  InterpreterState state(*code);
  Tensor gs = Tensor::scalar(1.0, DType::Float32);
  Tensor ge = Tensor::from_vector(std::vector<float>(kElems, 1.f));
  const size_t baseline = live_storage_bytes();
  std::vector<IValue> out = state.run_stage({x, y});
  out.clear();
  EXPECT_EQ(live_storage_bytes() - baseline, capture_bytes);
  const size_t seed_bytes = sizeof(float) + kElems * sizeof(float);
  std::vector<IValue> grads = state.run_stage({gs, ge});
  gs = Tensor();
  ge = Tensor();
  // Alive: the gradients (the seeds and every capture died in stage 1).
  EXPECT_EQ(live_storage_bytes() + seed_bytes - baseline, distinct_bytes(grads, {x, y}));
  grads.clear();
  EXPECT_EQ(live_storage_bytes() + seed_bytes, baseline);
}

// Hand-written f and df: f captures tanh(x) twice (as CSE can leave it), so df's two
// capture parameters share one register; the copy keeps each freeing its own.
TEST(StagedCode, ACaptureTakenTwiceOrNeverReadIsFreedInStageOne) {
  auto f = std::shared_ptr<const Graph>(parse_graph(R"IR(
graph f(%x : Tensor):
  %t : Tensor = tanh(%x)
  %s : Tensor = neg(%t)
  return (%s, %t, %t)
)IR"));
  auto both = std::shared_ptr<const Graph>(parse_graph(R"IR(
graph df(%g : Tensor, %a : Tensor, %b : Tensor):
  %one : int = Constant[value=1]()
  %m : Tensor = mul(%g, %a)
  %r : Tensor = add(%m, %b, %one)
  return (%r)
)IR"));
  auto first_only = std::shared_ptr<const Graph>(parse_graph(R"IR(
graph df(%g : Tensor, %a : Tensor, %b : Tensor):
  %r : Tensor = mul(%g, %a)
  return (%r)
)IR"));
  constexpr size_t kElems = size_t{1} << 16;
  const size_t bytes = kElems * sizeof(float);
  for (const auto& df : {both, first_only}) {
    Code code(f, df, 1, 2);
    InterpreterState state(code);
    const size_t baseline = live_storage_bytes();
    std::vector<IValue> s =
        state.run_stage({Tensor::from_vector(std::vector<float>(kElems, 0.5f))});
    EXPECT_EQ(live_storage_bytes() - baseline, 2 * bytes);  // -tanh(x) and tanh(x)
    s.clear();
    std::vector<IValue> r = state.run_stage({Tensor::from_vector(std::vector<float>(kElems, 2.f))});
    const float t = std::tanh(0.5f);
    EXPECT_FLOAT_EQ(values(r[0])[kElems - 1], df == both ? 2.f * t + t : 2.f * t);
    EXPECT_EQ(live_storage_bytes() - baseline, bytes) << code.dump();  // r alone
  }
}

// graph(%x): `length` unary ops in a chain (neg, sin, exp, tanh in turn), then return.
std::shared_ptr<Graph> unary_chain(int length) {
  const OpId ops[] = {OpId::neg, OpId::sin, OpId::exp, OpId::tanh};
  auto g = std::make_shared<Graph>();
  Value* v = g->add_input(Type::tensor(), "x");
  for (int i = 0; i < length; ++i) v = g->insert_op(ops[i % 4], {v}, Type::tensor());
  g->add_output(v);
  verify(*g);
  return g;
}

TEST(StagedCode, PeakOfALongChainStaysAtAboutTwoIntermediates) {
  constexpr int64_t kElems = 1 << 20;  // 4 MiB of float32
  const size_t bytes = kElems * sizeof(float);
  Code code(unary_chain(50));
  InterpreterState state(code);
  std::vector<IValue> inputs{Tensor::from_vector(std::vector<float>(kElems, 0.5f))};
  const size_t baseline = live_storage_bytes();
  reset_peak_live_storage_bytes();
  std::vector<IValue> out = state.run(std::move(inputs));
  // The input was counted in the baseline; at any time one op's input and result.
  EXPECT_LE(peak_live_storage_bytes() - baseline, bytes);
  EXPECT_EQ(live_storage_bytes(), baseline);  // the input died, the result lives
  out.clear();
  EXPECT_EQ(live_storage_bytes() + bytes, baseline);
}

TEST(StagedCode, UnusedInputsAndDeadOutputsDieAtOnce) {
  // max.dim's indices are never read: freed right after max runs.
  auto g = parse_graph(R"IR(
graph f(%x : Tensor, %unused : Tensor):
  %zero : int = Constant[value=0]()
  %false : bool = Constant[value=False]()
  %v : Tensor, %i : Tensor = max.dim(%x, %zero, %false)
  %n : Tensor = neg(%v)
  return (%n)
)IR");
  Code code(std::shared_ptr<const Graph>(std::move(g)));
  constexpr int64_t kRows = 4, kCols = 1 << 16;
  std::vector<float> data(kRows * kCols, 1.f);
  const int64_t sizes[] = {kRows, kCols};
  const size_t baseline = live_storage_bytes();
  {
    InterpreterState state(code);
    std::vector<IValue> out =
        state.run({Tensor::from_vector(data, sizes), Tensor::from_vector(data, sizes)});
    // Alive: the result only (not x, the unused input or the indices).
    EXPECT_EQ(live_storage_bytes() - baseline, kCols * sizeof(float));
  }
  EXPECT_EQ(live_storage_bytes(), baseline);
}

TEST(StagedCode, DumpShowsStagesCapturesAndFrees) {
  std::shared_ptr<const Code> code = compile_gradient(gradient_of(kForward));
  std::string text = code->dump();
  EXPECT_NE(text.find("2 stages"), std::string::npos) << text;
  EXPECT_NE(text.find("stage 0 ("), std::string::npos) << text;
  EXPECT_NE(text.find("stage 1 ("), std::string::npos) << text;
  EXPECT_NE(text.find("for stage 1"), std::string::npos) << text;
  EXPECT_NE(text.find("  captures: r"), std::string::npos) << text;
  EXPECT_NE(text.find("; free r"), std::string::npos) << text;
}

}  // namespace
}  // namespace tsl
