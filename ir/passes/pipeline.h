// The pipeline: every step a graph goes through between the emitter (or autodiff) and
// the interpreter, listed once in pipeline.cpp. The interpreter, the REPL's views, the
// `--passes` registry and the benchmarks all run or name it from here.
#pragma once

#include <functional>
#include <span>
#include <string_view>

#include "ir/ir.h"

namespace tsl {

// One named step of the pipeline.
struct PipelineStep {
  std::string_view name;         // as `--passes` and `:passes` name it
  std::string_view description;  // one line for --help and error messages
  bool (*run)(Graph&);           // returns whether it changed the graph
  // Whether it runs on eager (top-level) code, where every run of a differentiable op
  // may put a new node on the autograd tape. cse and licm do not: they would make two
  // runs (two statements, two loop iterations) share one node, and a second backward()
  // would then meet a graph the first one freed.
  bool eager;
};

// The optimization steps, in the order one round runs them; rounds repeat until one
// changes nothing (at most kMaxOptimizeRounds). specialize-undefined decides AnyDefined
// tests before constant folding picks the branches; propagate-shapes runs after
// simplify, whose `to(x, d)` rule it extends.
std::span<const PipelineStep> optimization_steps();
// The steps after the rounds: fuse.
std::span<const PipelineStep> final_steps();
constexpr int kMaxOptimizeRounds = 8;

// Which pipeline: a compiled function's, or top-level code's (Note in PipelineStep::eager).
enum class PipelineKind { Function, Eager };

// Told after every step: its name, the round (from 1; 0 for the final steps), whether it
// changed the graph, and the graph as it left it.
using PassObserver =
    std::function<void(std::string_view pass, int round, bool changed, const Graph& g)>;

// The whole pipeline: the optimization rounds, then the final steps (fusion), then the
// verifier, which also runs after every step in debug builds. The result depends only on
// the graph (every pass walks it in program order). Inlining comes before it: it needs
// the callees (runtime/exec/function.h: inline_function_calls).
void run_pipeline(Graph& g, PipelineKind kind, const PassObserver& observer = nullptr);

// The optimization rounds alone (the `optimize` pass of --passes, tests). Returns whether
// they changed g.
bool optimize(Graph& g, const PassObserver& observer = nullptr);

// The number of nodes of g, those inside If/Loop/GradOf blocks included.
size_t count_nodes(const Graph& g);

}  // namespace tsl
