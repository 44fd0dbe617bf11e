// The memory planner on real programs (issue 6): on a set of graphs — a training step, a
// tanh RNN, a conv net, loops and branches, a two-stage Code on the eager tape — plans
// stay within 1.1x of the liveness lower bound, no two simultaneously live values share
// bytes (checked statically on the plan and at run time by the sentinel debug mode), and
// planned runs give the very bits of unplanned ones. Also: a shape change re-plans, a
// wrong plan is caught (debug mode) or survived (the live-range guard), and values that
// escape a run are never planned.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "frontend/compilation_unit.h"
#include "runtime/autograd/record.h"
#include "runtime/exec/function.h"
#include "runtime/memory/planner.h"
#include "runtime/tensor/error.h"
#include "tests/common/programs.h"

namespace tsl {
namespace {

void run(CompilationUnit& unit, const std::string& code) {
  unit.run_source(std::make_shared<Source>("<test>", code), false);
}

// Sets planning and debug mode for one test and restores the defaults after.
class PlanningMode {
 public:
  PlanningMode(bool planning, bool debug) {
    set_memory_planning_enabled(planning);
    set_memory_plan_debug(debug);
  }
  ~PlanningMode() {
    set_memory_planning_enabled(true);
    set_memory_plan_debug(false);
  }
};

// Every Code reachable from `f`: its own, its callees', and the gradient Codes the
// eager tape compiled for them.
void collect_codes(Function& f, std::set<Function*>& seen, std::vector<const Code*>& out) {
  if (!seen.insert(&f).second) return;
  out.push_back(&f.code());
  for (const auto& code : f.gradient_cache().codes()) out.push_back(code.get());
  for (const Instruction& inst : f.code().instructions()) {
    if (inst.kind == Instruction::Kind::Call && inst.callee) collect_codes(*inst.callee, seen, out);
  }
}

std::vector<const Code*> codes_of(CompilationUnit& unit, const std::string& name) {
  std::set<Function*> seen;
  std::vector<const Code*> out;
  FunctionDecl* decl = unit.resolve_function(name);
  EXPECT_NE(decl, nullptr) << name;
  if (decl == nullptr) return out;
  for (auto& c : decl->compiled) collect_codes(*c.function, seen, out);
  return out;
}

// No two planned blocks whose lifetimes meet share a byte.
void expect_no_overlap(const MemoryPlan& plan) {
  std::vector<const PlannedBlock*> blocks;
  for (const PlannedBlock& b : plan.blocks) {
    if (b.planned) blocks.push_back(&b);
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    for (size_t j = i + 1; j < blocks.size(); ++j) {
      const PlannedBlock& a = *blocks[i];
      const PlannedBlock& b = *blocks[j];
      bool live_together = a.alloc_event < b.free_event && b.alloc_event < a.free_event;
      bool share_bytes = a.offset < b.offset + b.size && b.offset < a.offset + a.size;
      EXPECT_FALSE(live_together && share_bytes)
          << plan.function << ": " << a.name << " and " << b.name;
    }
    EXPECT_LE(blocks[i]->offset + blocks[i]->size, plan.arena_bytes);
  }
}

bool same_bits(const IValue& a, const IValue& b) {
  if (a.is_tensor() != b.is_tensor()) return false;
  if (!a.is_tensor()) {
    if (a.is_tuple() && b.is_tuple()) {
      const auto& x = a.to_tuple();
      const auto& y = b.to_tuple();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!same_bits(x[i], y[i])) return false;
      }
      return true;
    }
    return a.repr() == b.repr();
  }
  Tensor x = a.to_tensor().contiguous(), y = b.to_tensor().contiguous();
  return x.sizes() == y.sizes() && x.dtype() == y.dtype() &&
         std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) == 0;
}

struct Case {
  const char* name;
  const char* program;   // defines the functions and inputs
  const char* repeat;    // run several times; leaves `out`
  const char* function;  // whose Codes are checked
};

const Case kCases[] = {
    {"mlp_step", kMlpTrainingStep,
     "for i in range(4):\n"
     "    w1, b1, w2, b2, value = step(w1, b1, w2, b2, x, t, 0.1)\n"
     "out = (w1, b1, w2, b2, value)\n",
     "step"},
    {"rnn",
     "import torch\n"
     "from functorch import grad_and_value\n"
     "def rnn_loss(wx, wh, b, xs):\n"
     "    h = torch.zeros(xs.shape[1], wh.shape[0])\n"
     "    for i in range(xs.shape[0]):\n"
     "        h = torch.tanh(xs[i] @ wx + h @ wh + b)\n"
     "    return (h * h).mean()\n"
     "torch.manual_seed(1)\n"
     "xs = torch.randn(20, 8, 16)\n"
     "wx = torch.randn(16, 32) * 0.1\n"
     "wh = torch.randn(32, 32) * 0.1\n"
     "b = torch.zeros(32)\n"
     "fb = grad_and_value(rnn_loss, argnums=(0, 1, 2))\n",
     "for i in range(4):\n"
     "    out = fb(wx, wh, b, xs)\n",
     "fb"},
    {"conv",
     "import torch\n"
     "import torch.nn.functional as F\n"
     "from functorch import grad\n"
     "def net(w, v, x):\n"
     "    y = F.max_pool2d(F.relu(F.conv2d(x, w, padding=1)), 2)\n"
     "    return (y.reshape(x.shape[0], -1) @ v).logsumexp(1).mean()\n"
     "torch.manual_seed(2)\n"
     "x = torch.randn(4, 3, 16, 16)\n"
     "w = torch.randn(8, 3, 3, 3) * 0.2\n"
     "v = torch.randn(512, 10) * 0.05\n"
     "g = grad(net, argnums=(0, 1))\n",
     "for i in range(4):\n"
     "    out = g(w, v, x)\n",
     "g"},
    {"loop_and_branch",
     "import torch\n"
     "def f(x, w, n: int):\n"
     "    h = x\n"
     "    for i in range(n):\n"
     "        if i % 2 == 0:\n"
     "            h = torch.tanh(h @ w) + x\n"
     "        else:\n"
     "            h = torch.sigmoid(h @ w) * 2.0 - h\n"
     "    return h.softmax(1).sum(0)\n"
     "torch.manual_seed(3)\n"
     "x = torch.randn(32, 48)\n"
     "w = torch.randn(48, 48) * 0.1\n",
     "for i in range(4):\n"
     "    out = f(x, w, 7)\n",
     "f"},
    {"views",
     "import torch\n"
     "def f(x, w):\n"
     "    y = x @ w\n"
     "    flat = y.reshape(-1)\n"
     "    z = torch.tanh(y.t() @ w)\n"
     "    u = torch.relu(z @ w)\n"
     "    return u.sum() + flat[3:40].sum() * 0.5\n"
     "torch.manual_seed(6)\n"
     "x = torch.randn(24, 24)\n"
     "w = torch.randn(24, 24) * 0.2\n",
     "for i in range(4):\n"
     "    out = f(x, w)\n",
     "f"},
    {"eager_tape",
     "import torch\n"
     "def f(x, w):\n"
     "    h = torch.tanh(x @ w)\n"
     "    return (torch.exp(h) * h).sum()\n"
     "torch.manual_seed(4)\n"
     "x = torch.randn(16, 32)\n"
     "w = torch.randn(32, 32, requires_grad=True)\n",
     "for i in range(4):\n"
     "    w.grad = None\n"
     "    loss = f(x, w)\n"
     "    loss.backward()\n"
     "out = (loss, w.grad)\n",
     "f"},
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

IValue run_case(const Case& c, CompilationUnit& unit) {
  run(unit, c.program);
  run(unit, c.repeat);
  return unit.globals().at("out").value;
}

class PlannedGraphs : public ::testing::TestWithParam<Case> {};

TEST_P(PlannedGraphs, PlansAreTightDisjointAndExact) {
  const Case& c = GetParam();
  IValue expected;
  {
    PlanningMode off(false, false);
    CompilationUnit unit;
    expected = run_case(c, unit);
  }
  PlanningMode debug(true, true);
  CompilationUnit unit;
  IValue got = run_case(c, unit);
  EXPECT_TRUE(same_bits(got, expected)) << got.repr() << "\nvs\n" << expected.repr();
  size_t plans = 0, sharing = 0;
  for (const Code* code : codes_of(unit, c.function)) {
    std::shared_ptr<const MemoryPlan> plan = code->memory_planner()->plan();
    if (!plan || plan->num_planned == 0) continue;
    ++plans;
    MemoryPlannerStats stats = code->memory_planner()->stats();
    EXPECT_GE(stats.planned_runs, 1u) << plan->function;
    EXPECT_EQ(stats.departed_runs, 0u) << plan->function;
    EXPECT_GE(plan->arena_bytes, plan->lower_bound_bytes);
    EXPECT_LE(static_cast<double>(plan->arena_bytes),
              1.1 * static_cast<double>(plan->lower_bound_bytes))
        << plan->chart();
    sharing += plan->arena_bytes < plan->planned_bytes;
    expect_no_overlap(*plan);
  }
  EXPECT_GE(plans, 1u) << "nothing planned for " << c.function;
  EXPECT_GE(sharing, 1u) << "no plan of " << c.function << " shares bytes";
}

INSTANTIATE_TEST_SUITE_P(MemoryPlan, PlannedGraphs, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

const char* kChain =
    "import torch\n"
    "def f(x, w):\n"
    "    h = torch.relu(x @ w)\n"
    "    y = torch.tanh(h @ w) * 2.0\n"
    "    return (y @ w).sum(0)\n"
    "torch.manual_seed(5)\n"
    "w = torch.randn(64, 64) * 0.1\n";

MemoryPlanner& planner_of(CompilationUnit& unit, const std::string& name) {
  return *unit.find_function(name)->compiled.at(0).function->code().memory_planner();
}

TEST(MemoryPlan, AShapeChangeReplans) {
  PlanningMode debug(true, true);
  CompilationUnit unit;
  run(unit, kChain);
  run(unit, "x = torch.randn(32, 64)\nfor i in range(3):\n    y = f(x, w)\n");
  MemoryPlanner& planner = planner_of(unit, "f");
  std::shared_ptr<const MemoryPlan> small = planner.plan();
  ASSERT_TRUE(small);
  EXPECT_EQ(planner.stats().departed_runs, 0u);
  run(unit, "x = torch.randn(128, 64)\nfor i in range(3):\n    y = f(x, w)\nref = (x @ w)\n");
  MemoryPlannerStats stats = planner.stats();
  EXPECT_EQ(stats.departed_runs, 1u);  // the first run with the new shape
  EXPECT_EQ(stats.traced_runs, 2u);    // which makes the next one trace
  std::shared_ptr<const MemoryPlan> large = planner.plan();
  ASSERT_TRUE(large);
  EXPECT_NE(large, small);
  EXPECT_EQ(large->arena_bytes, 4 * small->arena_bytes);
  expect_no_overlap(*large);
}

// A plan that puts every block at offset 0 (as if all lifetimes were disjoint).
std::shared_ptr<MemoryPlan> collapsed(const MemoryPlan& plan) {
  auto wrong = std::make_shared<MemoryPlan>(plan);
  wrong->arena_bytes = 0;
  for (PlannedBlock& b : wrong->blocks) {
    b.offset = 0;
    wrong->arena_bytes = std::max(wrong->arena_bytes, b.size);
  }
  return wrong;
}

// kChain run twice (traced, then planned), then given the collapsed plan.
MemoryPlanner& collapse_chain_plan(CompilationUnit& unit) {
  run(unit, kChain);
  run(unit, "x = torch.randn(32, 64)\nfor i in range(2):\n    y = f(x, w)\nexpected = y\n");
  MemoryPlanner& planner = planner_of(unit, "f");
  planner.set_plan_for_testing(collapsed(*planner.plan()));
  return planner;
}

TEST(MemoryPlan, DebugModeCatchesLiveValuesSharingBytes) {
  PlanningMode debug(true, true);
  CompilationUnit unit;
  collapse_chain_plan(unit);
  try {
    run(unit, "y = f(x, w)\n");
    FAIL() << "the collapsed plan was not caught";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("two live values share bytes"), std::string::npos)
        << e.what();
  }
}

TEST(MemoryPlan, TheGuardSurvivesAWrongPlan) {
  PlanningMode on(true, false);
  CompilationUnit unit;
  MemoryPlanner& planner = collapse_chain_plan(unit);
  run(unit, "y = f(x, w)\n");
  EXPECT_TRUE(same_bits(unit.globals().at("y").value, unit.globals().at("expected").value));
  EXPECT_EQ(planner.stats().departed_runs, 1u);
}

// A tensor stored into a list that outlives the call is never planned: its bytes must
// survive the next runs.
TEST(MemoryPlan, ValuesThatEscapeAreNotPlanned) {
  PlanningMode debug(true, true);
  CompilationUnit unit;
  run(unit,
      "import torch\n"
      "from typing import List\n"
      "def f(x, keep: List[torch.Tensor]):\n"
      "    h = x * 2.0\n"
      "    keep.append(torch.tanh(h))\n"
      "    return (h + 1.0).sum()\n"
      "keep: List[torch.Tensor] = []\n"
      "for i in range(5):\n"
      "    s = f(torch.full([64], float(i)), keep)\n"
      "firsts = [k[0].item() for k in keep]\n");
  std::vector<IValue> firsts = unit.globals().at("firsts").value.to_list().elements;
  ASSERT_EQ(firsts.size(), 5u);
  for (size_t i = 0; i < firsts.size(); ++i) {
    EXPECT_FLOAT_EQ(static_cast<float>(firsts[i].to_double()), std::tanh(2.0f * i));
  }
}

// A traced run that fails leaves no trace behind: the next run traces again.
TEST(MemoryPlan, AFailedTraceIsRetried) {
  PlanningMode debug(true, true);
  CompilationUnit unit;
  run(unit,
      "import torch\n"
      "def f(x, n: int):\n"
      "    y = torch.tanh(x @ x)\n"
      "    if n < 0:\n"
      "        raise ValueError('negative')\n"
      "    return (y @ x).sum()\n"
      "x = torch.ones(8, 8) * 0.1\n");
  EXPECT_THROW(run(unit, "s = f(x, -1)\n"), SourceError);
  run(unit, "for i in range(3):\n    s = f(x, 1)\n");
  MemoryPlanner& planner = planner_of(unit, "f");
  ASSERT_TRUE(planner.plan());
  EXPECT_EQ(planner.stats().traced_runs, 2u);
  EXPECT_EQ(planner.stats().planned_runs, 2u);
}

TEST(MemoryPlan, TwoStageCodesPlanCapturesAcrossStages) {
  PlanningMode debug(true, true);
  CompilationUnit unit;
  run(unit, kCases[5].program);
  run(unit, kCases[5].repeat);
  bool found = false;
  for (const auto& code :
       unit.find_function("f")->compiled.at(0).function->gradient_cache().codes()) {
    std::shared_ptr<const MemoryPlan> plan = code->memory_planner()->plan();
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->num_stages, 2u);
    ASSERT_EQ(plan->stage_steps.size(), 2u);
    for (const PlannedBlock& b : plan->blocks) {
      // Saved by the forward, freed by the backward: planned across the stages.
      if (b.planned && b.stage == 0 && b.free_step >= plan->stage_steps[1]) found = true;
    }
    bool stage1 = false;
    for (const PlannedBlock& b : plan->blocks) stage1 |= b.planned && b.stage == 1;
    EXPECT_TRUE(stage1) << plan->chart();
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace tsl
