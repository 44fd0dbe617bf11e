// The default optimization pipeline: the optimization passes repeated, in a fixed
// order, until nothing changes.
#pragma once

#include "ir/ir.h"

namespace tsl {

// Runs canonicalize, constant-fold, simplify, cse, licm and dce in this order, again
// and again until a round changes nothing (at most kMaxOptimizeRounds rounds). The
// result depends only on the graph (every pass walks it in program order). Inlining
// is separate: it needs the callees. In debug builds the verifier runs after every
// pass. Returns whether it changed g.
constexpr int kMaxOptimizeRounds = 8;
bool optimize(Graph& g);

}  // namespace tsl
