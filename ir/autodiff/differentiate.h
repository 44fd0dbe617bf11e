// Reverse-mode symbolic differentiation of a graph: the gradient graph that the
// transforms (grad, vjp, hessian, ...) run and that `--dump=grad` prints.
// See Note [Gradient graphs].
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tsl::autodiff {

// Note [Gradient graphs]
// `build_joint` walks the forward graph backwards and, for each node whose outputs
// received a gradient, emits a `GradOf` node labelled with the forward op and its
// source line; its block is the op's rule (ir/autodiff/derivatives*.cpp) and runs
// only when some incoming gradient is defined, so an undefined tensor is the zero
// gradient and costs nothing. A value used several times sums its gradients with
// AutogradAdd (undefined-aware). Control flow is differentiated structurally:
//  * If: a backward If on the same condition, whose branches differentiate the
//    forward branches; forward values a backward branch reads become outputs of the
//    forward If (the other branch returns a placeholder).
//  * Loop: the forward loop counts its iterations and pushes every value the
//    backward body reads onto a list; the backward loop runs as many iterations,
//    reading the lists from the end, carrying the gradients of the loop-carried
//    values and accumulating those of outer values.
// The joint graph (forward, then backward) is what `grad(f)` runs; `split` cuts it
// into `f` (real outputs, then the captured values the backward reads) and `df`
// (output gradients, then the captures), the pieces of the seed's Gradient.
//
// Preconditions: no CallFunction nodes (the frontend inlines calls first).

struct JointGraph {
  std::shared_ptr<Graph> graph;
  // The forward outputs come first; then one gradient per `wrt` input.
  size_t num_forward_outputs = 0;
  // With seeds as inputs: the graph's inputs are the forward inputs, then one
  // gradient input per differentiable output (listed here by output index).
  std::vector<size_t> seeded_outputs;
  Node* first_backward_node = nullptr;  // null when the backward is empty
};

struct JointOptions {
  // Seed each differentiable output with ones_like(output) (grad of a scalar
  // function) instead of taking its gradient as a graph input (vjp).
  bool seed_with_ones = false;
  // For error messages: the function's name ("loss").
  std::string function_name;
  // An input no gradient reaches gets zeros, as functorch's transforms return. The
  // eager tape turns this off: there such a gradient stays undefined, so the input's
  // `.grad` stays None, as PyTorch's autograd leaves it.
  bool zeros_for_unreached_inputs = true;
};

// The forward graph followed by its backward for the inputs in `wrt`.
// Compile errors (SourceError) name non-differentiable ops on a gradient path.
JointGraph build_joint(const Graph& forward, const std::vector<size_t>& wrt,
                       const JointOptions& options);

struct Gradient {
  std::shared_ptr<Graph> f;   // inputs: forward inputs; outputs: real outputs, captures
  std::shared_ptr<Graph> df;  // inputs: output gradients, captures; outputs: input grads
  size_t num_real_outputs = 0;
  size_t num_captures = 0;
};

// Splits a joint graph built with seeds as inputs into f and df.
Gradient split(const JointGraph& joint);

// Note [A backward for a defined gradient]
// A split backward's incoming gradients are graph inputs, so they may be undefined (a
// zero gradient) and every GradOf block may be skipped: specialize-undefined keeps the
// blocks, and fusion stops at each one. Eager backward() almost always hands in a
// defined gradient. So for a backward with one incoming gradient, the graph that runs
// is `If(AnyDefined(g))` with the backward twice: with g read through AssumeDefined
// (certainly defined: the GradOf blocks inline and the backward fuses as the joint
// graph of grad(f) does) and with g Undefined (the blocks are removed; the inputs'
// AutogradZeros remain). Both give what the backward as written gives. Returns the
// new graph, or null when it would change nothing (several incoming gradients, or no
// GradOf reading it).
std::shared_ptr<Graph> branch_on_defined_seed(const Graph& df, size_t num_seeds);

// Removes nodes whose outputs are unused and that have no side effects, in every
// block (autodiff's own cleanup; see also ir/passes).
void remove_dead_nodes(Graph& g);

}  // namespace tsl::autodiff
