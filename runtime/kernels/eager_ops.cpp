// Kernels of the eager autograd ops (ops.def, "Eager autograd"): thin calls into the
// tape through EagerAutogradHooks, plus the grad-mode switch `with no_grad():` uses.
#include <optional>

#include "runtime/kernels/eager_hooks.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/grad_mode.h"

namespace tsl {
namespace {

EagerAutogradHooks* g_hooks = nullptr;

bool requires_grad_attr(const Tensor& self) { return self.requires_grad(); }

void set_requires_grad_attr(const Tensor& self, bool value) {
  eager_autograd_hooks().set_requires_grad(self, value);
}

void grad_attr(KernelArgs& a) {
  Tensor g = eager_autograd_hooks().grad(a.in(0).to_tensor());
  a.out(0) = g.defined() ? IValue(std::move(g)) : IValue();
}

void set_grad_attr(const Tensor& self, const std::optional<Tensor>& value) {
  if (value && value->defined()) {
    TSL_CHECK(value->sizes() == self.sizes(),
              "assigned grad has data of a different size: ", shape_str(value->sizes()),
              " for a tensor of shape ", shape_str(self.sizes()));
    TSL_CHECK(value->dtype() == self.dtype(),
              "assigned grad has data of a different type: ", dtype_name(value->dtype()),
              " for a tensor of type ", dtype_name(self.dtype()));
  }
  eager_autograd_hooks().set_grad(self, value ? *value : Tensor());
}

bool is_leaf_attr(const Tensor& self) { return eager_autograd_hooks().is_leaf(self); }

void grad_fn_attr(KernelArgs& a) { a.out(0) = eager_autograd_hooks().grad_fn(a.in(0).to_tensor()); }

// A node's attributes; Python's error for None (a leaf's grad_fn).
const IValue& node_or_error(KernelArgs& a, const char* attribute) {
  TSL_CHECK(!a.in(0).is_none(), "'NoneType' object has no attribute '", attribute, "'");
  return a.in(0);
}

void node_name(KernelArgs& a) {
  a.out(0) = IValue(eager_autograd_hooks().node_name(node_or_error(a, "name")));
}

void next_functions_attr(KernelArgs& a) {
  a.out(0) =
      IValue::list(eager_autograd_hooks().next_functions(node_or_error(a, "next_functions")));
}

Tensor requires_grad_method(const Tensor& self, bool requires_grad) {
  eager_autograd_hooks().set_requires_grad(self, requires_grad);
  return self;
}

void backward_kernel(KernelArgs& a) {
  Tensor self = a.in(0).to_tensor();
  Tensor gradient = a.in(1).is_none() ? Tensor() : a.in(1).to_tensor();
  bool retain_graph = !a.in(2).is_none() && a.in(2).to_bool();
  bool create_graph = a.in(3).to_bool();
  TSL_CHECK(!create_graph,
            "backward(create_graph=True) is not supported by TSL's eager tape; for higher "
            "derivatives use the function transforms (grad of grad, hessian)");
  std::vector<Tensor> inputs;
  if (!a.in(4).is_none()) inputs = a.in(4).to_tensor_vector();
  eager_autograd_hooks().backward({self}, {gradient}, retain_graph, inputs);
}

bool set_grad_enabled_kernel(bool mode) {
  bool previous = grad_mode_enabled();
  set_grad_mode_enabled(mode);
  return previous;
}

bool is_grad_enabled_kernel() { return grad_mode_enabled(); }

}  // namespace

void set_eager_autograd_hooks(EagerAutogradHooks* hooks) { g_hooks = hooks; }

EagerAutogradHooks& eager_autograd_hooks() {
  // Kernels called outside the interpreter (constant folding, op-table tests) run
  // without the tape.
  TSL_CHECK(g_hooks != nullptr, "eager autograd is not available here (no tape is installed)");
  return *g_hooks;
}

void register_eager_kernels() {
  TSL_REGISTER_GENERIC(requires_grad_attr, requires_grad_attr);
  TSL_REGISTER_GENERIC(set_requires_grad_attr, set_requires_grad_attr);
  TSL_REGISTER_GENERIC_RAW(grad_attr, grad_attr);
  TSL_REGISTER_GENERIC(set_grad_attr, set_grad_attr);
  TSL_REGISTER_GENERIC(is_leaf_attr, is_leaf_attr);
  TSL_REGISTER_GENERIC_RAW(grad_fn_attr, grad_fn_attr);
  TSL_REGISTER_GENERIC_RAW(node_name, node_name);
  TSL_REGISTER_GENERIC_RAW(next_functions_attr, next_functions_attr);
  TSL_REGISTER_GENERIC(requires_grad_, requires_grad_method);
  TSL_REGISTER_GENERIC_RAW(backward, backward_kernel);
  TSL_REGISTER_GENERIC(set_grad_enabled, set_grad_enabled_kernel);
  TSL_REGISTER_GENERIC(is_grad_enabled, is_grad_enabled_kernel);
}

}  // namespace tsl
