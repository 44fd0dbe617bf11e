// Whether tensor operations are recorded on the eager autograd tape. Per thread, as
// in PyTorch: `with no_grad():` turns it off for its body (runtime/autograd).
#pragma once

namespace tsl {

bool grad_mode_enabled();
void set_grad_mode_enabled(bool enabled);

// Turns recording off for a C++ scope (the engine runs backward graphs under one).
class NoGradGuard {
 public:
  NoGradGuard() : previous_(grad_mode_enabled()) { set_grad_mode_enabled(false); }
  ~NoGradGuard() { set_grad_mode_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace tsl

namespace tsl {
class Tensor;
// In-place updates are allowed only off the tape (LANGUAGE.md §8.2): a user error, as
// PyTorch gives for leaves, when `self` requires grad and grad mode is on.
void check_inplace_allowed(const Tensor& self, const char* op);
}  // namespace tsl
