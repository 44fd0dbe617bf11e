// The pipeline, in order; see pipeline.h.
#include "ir/passes/pipeline.h"

#include "ir/passes/canonicalize.h"
#include "ir/passes/common_subexpression_elimination.h"
#include "ir/passes/constant_folding.h"
#include "ir/passes/dead_code_elimination.h"
#include "ir/passes/fuse_elementwise.h"
#include "ir/passes/loop_invariant_code_motion.h"
#include "ir/passes/propagate_shapes.h"
#include "ir/passes/simplify.h"
#include "ir/passes/specialize_undefined.h"
#include "runtime/tensor/interrupt.h"

namespace tsl {
namespace {

constexpr PipelineStep kOptimizationSteps[] = {
    {"canonicalize", "canonical forms: commutative operand order, tuple build/take apart",
     canonicalize, true},
    {"specialize-undefined",
     "undefined (zero) gradients: AutogradAdd(x, Undefined) -> x, GradOf(Undefined...) removed",
     specialize_undefined, true},
    {"constant-fold", "constant folding: runs pure ops on constant inputs, If/Loop on constants",
     fold_constants, true},
    {"simplify", "algebraic simplification exact in IEEE arithmetic (x * 1, x - 0, ...)",
     simplify_arithmetic, true},
    {"propagate-shapes",
     "shape and dtype classes: removes sum_to_size/expand/to that provably change nothing",
     propagate_shapes, true},
    {"cse", "common-subexpression elimination: reuses equal pure nodes that dominate",
     eliminate_common_subexpressions, false},
    {"licm", "loop-invariant code motion: moves invariant pure nodes before their Loop",
     hoist_loop_invariants, false},
    {"dce", "dead-code elimination: removes unused nodes without side effects", eliminate_dead_code,
     true},
};

constexpr PipelineStep kFinalSteps[] = {
    {"fuse", "elementwise fusion: chains and trees of EW ops become one FusionGroup",
     fuse_elementwise, true},
};

bool run_step(Graph& g, const PipelineStep& step, int round, const PassObserver& observer) {
  check_interrupt();  // Ctrl-C or --timeout during a long compilation
  bool changed = step.run(g);
#ifndef NDEBUG
  verify(g);
#endif
  if (observer) observer(step.name, round, changed, g);
  return changed;
}

bool run_rounds(Graph& g, PipelineKind kind, const PassObserver& observer) {
  bool any = false;
  for (int round = 1; round <= kMaxOptimizeRounds; ++round) {
    bool changed = false;
    for (const PipelineStep& step : kOptimizationSteps) {
      if (kind == PipelineKind::Eager && !step.eager) continue;
      changed |= run_step(g, step, round, observer);
    }
    if (!changed) break;
    any = true;
  }
  return any;
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

std::span<const PipelineStep> optimization_steps() { return kOptimizationSteps; }

std::span<const PipelineStep> final_steps() { return kFinalSteps; }

void run_pipeline(Graph& g, PipelineKind kind, const PassObserver& observer) {
  run_rounds(g, kind, observer);
  for (const PipelineStep& step : kFinalSteps) {
    if (kind == PipelineKind::Eager && !step.eager) continue;
    run_step(g, step, 0, observer);
  }
  verify(g);
}

bool optimize(Graph& g, const PassObserver& observer) {
  return run_rounds(g, PipelineKind::Function, observer);
}

size_t count_nodes(const Graph& g) { return count_block_nodes(g.block()); }

}  // namespace tsl
