// Common-subexpression elimination: a pure node that repeats an earlier one (same op,
// inputs and attributes) reuses the earlier node's outputs.
#pragma once

#include "ir/ir.h"

namespace tsl {

// A node is replaced by an earlier node when both have the same op, the same inputs
// in the same order (either order for commutative ops: mul(%x, %y) and mul(%y, %x);
// see is_commutative in pass_utils.h), equal attributes and equal output types, and the earlier one
// dominates it: it comes before it in the same block, or in a block enclosing it
// (a node inside an If branch or a Loop body reuses one computed before the If or
// Loop; nothing is reused out of a branch or body, nor across the two branches).
// Constants with equal values (floats compared by bits: 0.0 and -0.0 differ) and
// equal types merge the same way.
//
//   %a : Tensor = mul(%x, %y)
//   %b : Tensor = mul(%x, %y)     # removed; uses of %b now use %a
//
// Never merged: nodes with effects (print, in-place ops, append.t), RANDOM ops
// (two draws differ), nodes with blocks, CallFunction and other structural ops
// with unknown meaning, tensor constants, and nodes with an input or output that may
// be mutated in place or escape (Note [Mutation and aliasing in the passes]):
// `b.add_(1)` must not change `a`. Returns whether it changed g.
bool eliminate_common_subexpressions(Graph& g);

}  // namespace tsl
