// The eager backward pass: runs the tape's nodes from the roots towards the leaves in
// priority order. See Note [Running backward].
#pragma once

#include <vector>

#include "runtime/autograd/node.h"

namespace tsl::autograd {

// Note [Running backward]
// 1. Discovery: a walk from the roots' nodes collects the graph. When `inputs` are
//    given, a node whose topological_nr is below the smallest of the inputs' nodes
//    cannot reach any of them (see Note [The eager tape]) and is not walked into.
// 2. Only needed nodes run: with `inputs`, those that lie on a path to one of them;
//    else all, every leaf's AccumulateGrad included. Each needed node counts the
//    needed edges into it.
// 3. Ready nodes (all their gradients arrived, summed undefined-aware per input)
//    run highest sequence_nr first: later forward ops first, AccumulateGrad as soon
//    as a leaf's gradient is complete. A non-leaf in `inputs` gets the gradient that
//    arrives for it in its .grad.
// 4. Without retain_graph every node that ran drops its saved values; running it
//    again is the error PyTorch gives.
struct BackwardOptions {
  bool retain_graph = false;
  std::vector<Tensor> inputs;  // empty: every leaf
};

// roots[i] gets gradient grads[i]; an undefined grad means ones for a one-element
// root (an error for other roots, as in PyTorch). Runs with grad mode off.
void backward(const std::vector<Tensor>& roots, std::vector<Tensor> grads,
              const BackwardOptions& options);

// What a backward pass did, for tests and `:tape`: the nodes discovered and the
// nodes that ran, in order. Recorded while a trace is installed on this thread.
struct BackwardTrace {
  std::vector<const Node*> discovered;
  std::vector<const Node*> executed;
};
void set_backward_trace(BackwardTrace* trace);

}  // namespace tsl::autograd
