// Elementwise fusion: chains and trees of elementwise ops become one FusionGroup node
// that the interpreter runs as one pass over memory (runtime/fusion/fusion.h).
#pragma once

#include "ir/ir.h"

namespace tsl {

// Note [Elementwise fusion]
// A node is fusible when the runtime can run its op fused: the op has a row in
// runtime/fused_ops.def (Note [Fused ops] in runtime/fused_ops.h), and the node's
// scalar arguments are of the kinds that row reads (alpha and clamp's bounds numbers,
// div's rounding_mode None). An elementwise op without a row (erf, gelu, pow, ...)
// stays out of groups, which would otherwise run op by op as a whole. The op is also
// marked EW in runtime/ops.def (and not EFFECT, RANDOM or PRIM), its outputs are
// tensors, it has a tensor input, and its other inputs are numbers or None.
// Walking each block in order, a fusible node joins the groups of the fusible nodes
// that produce its inputs; a group sits where its last node was, so it may only
// grow while no node outside it, before that place, reads one of its values. Nodes
// that may have effects or draw random numbers (or hold such nodes in their blocks)
// end every open group: nothing moves across them. Groups of one node stay as they
// are. Each group becomes
//
//   %y : Tensor, %t : Tensor = FusionGroup(%x, %a)
//     block0(%x.1 : Tensor, %a.1 : float):
//       %c : float = Constant[value=0.5]()
//       %t.1 : Tensor = tanh(%x.1)
//       %m : Tensor = mul(%x.1, %a.1)
//       %y.1 : Tensor = sub(%t.1, %m)
//       -> (%y.1, %t.1)
//
// whose block is closed: its parameters are the values the group reads from outside
// (one per input), number constants are copied inside (so the runtime sees them),
// and it returns the values used after the group. Blocks of If, Loop and GradOf
// nodes are fused too, each on its own (gradient graphs fuse inside their GradOf
// blocks); groups never span blocks.
// Precondition: a verified graph; the result verifies. Returns whether it changed g.
bool fuse_elementwise(Graph& g);

}  // namespace tsl
