// The per-thread grad mode flag; see grad_mode.h.
#include "runtime/tensor/grad_mode.h"

namespace tsl {
namespace {
thread_local bool t_grad_mode = true;
}  // namespace

bool grad_mode_enabled() { return t_grad_mode; }
void set_grad_mode_enabled(bool enabled) { t_grad_mode = enabled; }

}  // namespace tsl

#include "runtime/tensor/tensor.h"

namespace tsl {

void check_inplace_allowed(const Tensor& self, const char* op) {
  if (!self.requires_grad() || !grad_mode_enabled()) return;
  const AutogradMetaBase* meta = self.impl()->autograd_meta();
  bool leaf = !meta || meta->grad_fn_name().empty();
  if (leaf) {
    TSL_ERROR("a leaf Variable that requires grad is being used in an in-place operation (", op,
              "); update it under `with no_grad():`");
  }
  TSL_ERROR(op,
            ": in-place operations on a tensor that requires grad are not recorded by "
            "TSL's tape; write `y = y + ...` instead, or update it under `with no_grad():`");
}

}  // namespace tsl
