// The default optimization pipeline: the optimization passes repeated, in a fixed
// order, until nothing changes.
#pragma once

#include <functional>
#include <string_view>

#include "ir/ir.h"

namespace tsl {

// Told after every pass of optimize(): the pass's name (as in pass_registry.h), the
// round (from 1), whether the pass changed the graph, and the graph as it left it.
using PassObserver =
    std::function<void(std::string_view pass, int round, bool changed, const Graph& g)>;

// Runs canonicalize, specialize-undefined, constant-fold, simplify, propagate-shapes,
// cse, licm and dce in this order, again and again until a round changes nothing (at
// most kMaxOptimizeRounds rounds). The result depends only on the graph (every pass walks it in
// program order). Inlining is separate: it needs the callees. In debug builds the verifier runs
// after every pass. `observer`, when given, sees the graph after each pass (`:passes f`). Returns
// whether it changed g.
constexpr int kMaxOptimizeRounds = 8;
bool optimize(Graph& g, const PassObserver& observer = nullptr);

// The pipeline for eager (top-level) code, where every run of a differentiable op may
// put a new node on the autograd tape: without cse and licm, which would make two runs
// (two statements, two loop iterations) share one node, and a second backward() would
// then meet a graph the first one freed.
bool optimize_eager(Graph& g);

// The number of nodes of g, those inside If/Loop/GradOf blocks included.
size_t count_nodes(const Graph& g);

}  // namespace tsl
