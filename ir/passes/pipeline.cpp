// The default optimization pipeline; see pipeline.h.
#include "ir/passes/pipeline.h"

#include "ir/passes/canonicalize.h"
#include "ir/passes/common_subexpression_elimination.h"
#include "ir/passes/constant_folding.h"
#include "ir/passes/dead_code_elimination.h"
#include "ir/passes/loop_invariant_code_motion.h"
#include "ir/passes/simplify.h"

namespace tsl {
namespace {

bool run_one(Graph& g, bool (*pass)(Graph&)) {
  bool changed = pass(g);
#ifndef NDEBUG
  verify(g);
#endif
  return changed;
}

}  // namespace

bool optimize(Graph& g) {
  static constexpr bool (*kPasses[])(Graph&) = {
      canonicalize,          fold_constants,
      simplify_arithmetic,   eliminate_common_subexpressions,
      hoist_loop_invariants, eliminate_dead_code,
  };
  bool any = false;
  for (int round = 0; round < kMaxOptimizeRounds; ++round) {
    bool changed = false;
    for (auto pass : kPasses) changed |= run_one(g, pass);
    if (!changed) break;
    any = true;
  }
  return any;
}

}  // namespace tsl
