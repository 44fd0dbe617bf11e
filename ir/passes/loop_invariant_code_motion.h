// Loop-invariant code motion: pure nodes of a Loop body that compute the same value
// on every trip move before the Loop, so they run once.
#pragma once

#include "ir/ir.h"

namespace tsl {

// A node of a Loop body (not of a block nested in it) moves before the Loop when
//  * it is pure (no effect, not RANDOM, no blocks; the structural ops CSE accepts),
//  * all its inputs are defined outside the loop (or by nodes already moved), and no
//    input or output may be mutated in place (Note [Mutation and aliasing in the
//    passes]): a tensor written in the body is not invariant, and
//  * moving it cannot introduce an error or change which error comes first. Policy:
//    a node that cannot raise (constants, tuple and list building, the non-raising
//    scalar ops such as add.float or lt.int, size/dim/numel, one-input elementwise
//    ops on a tensor known to be floating) always moves; one that may raise (almost
//    every tensor op: shapes may mismatch) moves only when the loop surely runs
//    (constant trip count >= 1 and start condition True) and every node left before
//    it in the body neither raises nor has an effect, so that it would have run
//    first on the first trip anyway.
// Inner loops are treated first, so an invariant can leave several loops. A hoisted
// node of a loop that runs zero times costs its run time, never its errors.
// Returns whether it changed g.
bool hoist_loop_invariants(Graph& g);

}  // namespace tsl
