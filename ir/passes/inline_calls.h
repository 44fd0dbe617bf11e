// Inlining of user-function calls: every CallFunction node is replaced by the body
// of the callee, recursively, so that autodiff and the optimizer see one graph.
#pragma once

#include <functional>

#include "ir/ir.h"

namespace tsl {

// The graph a CallFunction node calls (the IR does not know the runtime's Function
// objects, so the caller says how to find it).
using CalleeGraph = std::function<const Graph*(const Node* call)>;

// Replaces every CallFunction in `g` (in nested blocks too) by a copy of the callee's
// body, whose inputs are the call's inputs (parameters, then hidden globals), and
// every CallClosure whose MakeClosure is in `g` by its function's body on the
// arguments, then the captures (`callee` is asked with the MakeClosure node). The
// copied nodes keep their source ranges; values keep their source names.
// Precondition: no recursion (the frontend rejects it).
void inline_calls(Graph& g, const CalleeGraph& callee);

}  // namespace tsl
