// The eager autograd surface as the kernel layer sees it. The tape itself lives in
// runtime/autograd (a layer above the kernels); it installs its implementation here
// when the interpreter starts, so the kernels of `backward()`, `.grad` and friends
// can reach it without depending upward (as PyTorch's VariableHooks do).
#pragma once

#include <vector>

#include "runtime/tensor/ivalue.h"

namespace tsl {

class EagerAutogradHooks {
 public:
  virtual ~EagerAutogradHooks() = default;
  // roots[i].backward(grads[i]) for all i at once; `inputs` empty means every leaf.
  virtual void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads,
                        bool retain_graph, const std::vector<Tensor>& inputs) = 0;
  virtual Tensor grad(const Tensor& t) = 0;  // undefined when there is none
  virtual void set_grad(const Tensor& t, const Tensor& grad) = 0;
  virtual bool is_leaf(const Tensor& t) = 0;
  virtual IValue grad_fn(const Tensor& t) = 0;  // None for leaves
  // Of a node grad_fn() returned: its name (MulBackward0), and its next edges as
  // (node or None, input_nr) tuples, as PyTorch's next_functions.
  virtual std::string node_name(const IValue& node) = 0;
  virtual std::vector<IValue> next_functions(const IValue& node) = 0;
  virtual void set_requires_grad(const Tensor& t, bool value) = 0;
};

void set_eager_autograd_hooks(EagerAutogradHooks* hooks);
// The installed hooks; an internal error when no tape is linked in.
EagerAutogradHooks& eager_autograd_hooks();

}  // namespace tsl
