// Dead-code elimination: removes nodes whose results nothing uses and whose removal
// nobody can observe.
#pragma once

#include "ir/ir.h"

namespace tsl {

// Removes, in every block:
//  * nodes whose outputs are all unused and that have no side effects;
//  * unused outputs of If nodes (with the matching returns of both blocks);
//  * loop-carried values of Loop nodes whose output is unused and whose body value
//    feeds nothing but its own next iteration (a counter nobody reads).
//
//   %a : Tensor = relu(%x)          # removed: %a is unused
//   %s : Tensor = randn(...)        # removed when unused: RANDOM is not an effect here
//   print(%x, %sep, %end)           # kept: EFFECT
//
// Side effects: ops marked EFFECT in runtime/ops.def (print, save, append, in-place
// ops, RaiseException, ...), CallFunction (a user function may print) and any
// structural op without a known meaning; a node with blocks has the effects of the
// nodes inside them. The order of the remaining nodes does not change.
// Precondition: a verified graph; the result verifies. Returns whether it changed g.
bool eliminate_dead_code(Graph& g);

}  // namespace tsl
