// Specialization of undefined (zero) gradients: propagates `Undefined` through the
// gradient ops of a graph and decides the `AnyDefined` tests whose answer is known.
#pragma once

#include "ir/ir.h"

namespace tsl {

// Note [Specializing undefined gradients]
// An undefined tensor is a zero gradient (docs/autodiff.md). Backward rules are linear
// in the incoming gradients (the seed's linearity note), so a GradOf block whose
// incoming gradients are all zero produces zero gradients: its outputs are undefined,
// exactly what the interpreter gives when it skips the block. The rules, where "U" is
// a value made by the `Undefined` op and "D" a value that is certainly defined:
//
//   AutogradAdd(a, U), AutogradAdd(U, a)  -> a        the kernel returns a itself
//   AutogradAdd(D1, D2) (tensors)         -> add(D1, D2, 1)   what the kernel runs
//   AutogradZeros(D, like)                -> D        the kernel returns D itself
//   AnyDefined(..., U, ...)               -> AnyDefined(...)  U never answers True
//   AnyDefined(U...) / AnyDefined()       -> False    (constant folding then picks
//   AnyDefined(..., D, ...)               -> True      the branch of an If)
//   GradOf(U...) { ... }                  -> U per output, the block removed
//   GradOf(..., D, ...) { ... }           -> the block's nodes in its place (it surely
//                                            runs; fusion then sees across blocks)
//
// Certainly defined are: results of ordinary ops whose schema returns a Tensor (a
// kernel never returns an undefined tensor, and none is handed one), `AssumeDefined`
// (see Note [A backward for a defined gradient]), new lists,
// AutogradAdd and AutogradZeros with a certainly defined operand, and the outputs of
// a GradOf that certainly runs whose block returns a certainly defined value (before
// the GradOf is inlined).
// Everything else may be undefined at run time: graph and block parameters (a
// gradient graph's incoming gradients among them), the outputs of If, Loop, tuple and
// list ops, and the other autodiff ops. `AutogradZeros(U, like)` stays: it makes
// zeros (or U when `like` is undefined).
// Returns whether it changed g.
bool specialize_undefined(Graph& g);
// The same, except that a GradOf that certainly runs keeps its block: the specialized
// gradient view shows each rule as one (Note [The specialized gradient view] in
// frontend/gradient_view.cpp).
bool specialize_undefined_keeping_rules(Graph& g);

}  // namespace tsl
