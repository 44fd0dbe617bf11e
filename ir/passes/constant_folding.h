// Constant propagation and folding: pure nodes whose inputs are all constants run at
// compile time and become Constant nodes; If and Loop with constant controls shrink.
#pragma once

#include "ir/ir.h"

namespace tsl {

// In every block, in order (so that folded results feed later folds):
//  * a pure node (no EFFECT, no RANDOM, no blocks; among the structural ops only
//    ListConstruct, TupleConstruct, TupleIndex, TupleUnpack, to_optional and
//    unwrap_optional) whose inputs are all Constants runs once, on the CPU kernel of
//    its op, and its outputs become Constants with the same types, names and source
//    range;
//  * `If` on a constant condition is replaced by the nodes of the taken block;
//  * `Loop` whose trip count is a constant <= 0 or whose start condition is False is
//    removed, its outputs being the initial carried values; a Loop with a constant
//    trip count from 1 to 8, a True start condition, a small body and (beyond one
//    trip) a constant True continue condition is unrolled.
//
//   %a : int = Constant[value=2]()
//   %b : int = mul.int(%a, %a)          ->   %b : int = Constant[value=4]()
//
// It does not fold:
//  * results that the IR text cannot hold (tensors, objects): the printer and the
//    parser must agree on every graph, so a tensor-valued node stays even when its
//    inputs are constants;
//  * nodes whose kernel raises (1 // 0, int('x'), an integer overflow): the node stays
//    and raises at run time with its source location, as it would have;
//  * list results that some use may mutate or let escape (append.t, a block return,
//    the graph's return): a Constant is one object shared by every run;
//  * inputs that may be mutated in place (Note [Mutation and aliasing in the passes]);
//  * `cuda_is_available`, which asks the machine rather than computing;
//  * `range_list` of more than 64 elements (a large constant helps nobody).
// The inputs of a folded node stay for dead-code elimination to remove.
// Precondition: a verified graph; the result verifies. Returns whether it changed g.
bool fold_constants(Graph& g);

}  // namespace tsl
