// The default optimization pipeline; see pipeline.h.
#include "ir/passes/pipeline.h"

#include "ir/passes/canonicalize.h"
#include "ir/passes/common_subexpression_elimination.h"
#include "ir/passes/constant_folding.h"
#include "ir/passes/dead_code_elimination.h"
#include "ir/passes/loop_invariant_code_motion.h"
#include "ir/passes/propagate_shapes.h"
#include "ir/passes/simplify.h"
#include "ir/passes/specialize_undefined.h"
#include "runtime/tensor/interrupt.h"

namespace tsl {
namespace {

struct PipelineStep {
  std::string_view name;  // the pass's name in pass_registry.h
  bool (*run)(Graph&);
};

// The pipeline, in order.
// specialize-undefined decides AnyDefined tests before constant folding picks the
// branches; propagate-shapes runs after simplify, whose `to(x, d)` rule it extends.
constexpr PipelineStep kPipeline[] = {
    {"canonicalize", canonicalize},         {"specialize-undefined", specialize_undefined},
    {"constant-fold", fold_constants},      {"simplify", simplify_arithmetic},
    {"propagate-shapes", propagate_shapes}, {"cse", eliminate_common_subexpressions},
    {"licm", hoist_loop_invariants},        {"dce", eliminate_dead_code},
};

bool run_one(Graph& g, const PipelineStep& step) {
  bool changed = step.run(g);
#ifndef NDEBUG
  verify(g);
#endif
  return changed;
}

size_t count_block_nodes(const Block* b) {
  size_t n = 0;
  for (const Node* node : *b) {
    ++n;
    for (const Block* inner : node->blocks()) n += count_block_nodes(inner);
  }
  return n;
}

}  // namespace

namespace {

bool run_pipeline(Graph& g, const PassObserver& observer, bool eager) {
  bool any = false;
  for (int round = 1; round <= kMaxOptimizeRounds; ++round) {
    bool changed = false;
    for (const PipelineStep& step : kPipeline) {
      if (eager && (step.name == "cse" || step.name == "licm")) continue;
      check_interrupt();  // Ctrl-C or --timeout during a long compilation
      bool step_changed = run_one(g, step);
      if (observer) observer(step.name, round, step_changed, g);
      changed |= step_changed;
    }
    if (!changed) break;
    any = true;
  }
  return any;
}

}  // namespace

bool optimize(Graph& g, const PassObserver& observer) { return run_pipeline(g, observer, false); }

bool optimize_eager(Graph& g) { return run_pipeline(g, nullptr, true); }

size_t count_nodes(const Graph& g) { return count_block_nodes(g.block()); }

}  // namespace tsl
