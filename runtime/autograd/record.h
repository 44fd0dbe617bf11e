// Recording eager ops and compiled-function calls on the tape: each runs as the
// forward of its symbolic gradient and leaves one node whose apply() runs the
// backward. See Note [Recording an eager op].
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "ir/ir.h"
#include "runtime/kernels/kernel.h"

namespace tsl {
class Function;
class Code;
}  // namespace tsl

namespace tsl::autograd {

// Note [Recording an eager op]
// An op of top-level code whose inputs require grad is differentiated on its own: a
// small graph holds a copy of the node (a FusionGroup's body, a called function's
// graph with its calls inlined), the input tensors that require grad are the `wrt`
// inputs, and ir/autodiff's build_joint + split turn it into `f` (the op, then the
// values the backward reads) and `df`. Running `f` computes the op's results and the
// saved values; the node keeps the saved values, and its apply() runs `df`. So the
// eager tape and `grad(f)` share every formula. Inputs the node reads as constants
// in the graph stay constants (rules may look at them); a list of tensors becomes one
// input per element. Each (node, dtypes, which inputs require grad, list lengths)
// is differentiated and compiled once and cached at the instruction.

// The compiled gradient of one node or function for one input pattern.
struct CompiledGradient;

// One instruction's cache of compiled gradients, owned by the Code.
class EagerSite {
 public:
  std::shared_ptr<const CompiledGradient> lookup(const std::vector<int64_t>& key) const;
  void store(std::vector<int64_t> key, std::shared_ptr<const CompiledGradient> g);
  // The two-stage Codes compiled so far, one per input pattern (for `:memplan f`).
  std::vector<std::shared_ptr<const Code>> codes() const;

 private:
  std::map<std::vector<int64_t>, std::shared_ptr<const CompiledGradient>> entries_;
};

// Whether an instruction with these input registers must be recorded: grad mode is
// on and some input is a tensor (or a list holding one) that requires grad.
bool needs_recording(const KernelArgs& args);

// Runs `node` (an op with a derivative rule or a FusionGroup) on args' inputs through
// its gradient, writes its outputs with their history.
void record_op(const Node& node, EagerSite& site, KernelArgs& args);
// An in-place update (add_, sub_, mul_, div_, copy_, fill_, zero_) of a tensor, when
// an input requires grad: computed out of place through its gradient, written into
// self, whose history becomes the new node (PyTorch's rebase). Errors as PyTorch's
// for a leaf that requires grad; an update of a view is an error too.
void record_inplace(const Node& node, EagerSite& site, KernelArgs& args);
// The same for a call of a compiled function; `call` is the CallFunction node.
void record_call(Function& callee, const Node& call, EagerSite& site, KernelArgs& args);

// Installs the tape behind the kernels of backward(), .grad, ... (idempotent).
void install_eager_autograd();

}  // namespace tsl::autograd
