// The gradient formula of every differentiable op (the DIFF rows of runtime/ops.def):
// one reverse-mode rule (vector-Jacobian product) and one forward-mode rule
// (Jacobian-vector product) per op, both built from ordinary ops with `Sym`.
// See Note [Derivative rules].
#pragma once

#include <array>
#include <map>
#include <vector>

#include "ir/autodiff/sym.h"

namespace tsl::autodiff {

// Note [Derivative rules]
// A rule sees the forward node through a context: `input(i)` and `output(i)` are the
// forward values (the backward may read them; autodiff captures what it reads),
// `grad(i)` the gradient arriving at output i, `tangent(i)` the tangent of input i.
// A reverse rule returns one gradient per input (a null Sym for "none": the input
// is not differentiable, or `needs(i)` is false); a forward rule returns one
// tangent per output (null: zero). Gradients have the shape and dtype of their
// input: binary ops sum broadcast dims away with `reduce_to(g, i)`; tangents have
// the output's, `broadcast_from(t, i)` where a term is input i's tangent alone. Rules never
// simplify (no `if alpha == 1`); the optimizer does. Subgradients follow PyTorch:
// relu'(0) = 0, abs'(0) = 0, max/min ties share the gradient evenly.
class RuleContext {
 public:
  RuleContext(const Node* node, std::vector<Sym> grads, std::vector<Sym> tangents,
              std::vector<bool> needs)
      : node_(node),
        grads_(std::move(grads)),
        tangents_(std::move(tangents)),
        needs_(std::move(needs)) {}

  const Node* node() const { return node_; }
  size_t num_inputs() const { return node_->inputs().size(); }
  Sym input(size_t i) const { return node_->input(i); }
  Sym output(size_t i = 0) const { return node_->output(i); }
  // The constant value of input i when it is a Constant node, else null.
  const IValue* constant_input(size_t i) const;
  // Whether input i is a tensor (not a Python number given to a NUMS op).
  bool is_tensor_input(size_t i) const { return node_->input(i)->type()->is_tensor(); }

  // ---- Reverse mode
  Sym grad(size_t i = 0) const { return grads_.at(i); }
  bool needs(size_t i) const { return i < needs_.size() && needs_[i]; }
  // For input i a list written out ([a, b], which autodiff hands its gradient
  // element by element): whether element k needs one. Else needs(i).
  bool needs_element(size_t i, size_t k) const {
    auto it = element_needs_.find(i);
    return it == element_needs_.end() ? needs(i) : k < it->second.size() && it->second[k];
  }
  void set_element_needs(size_t i, std::vector<bool> needs) {
    element_needs_[i] = std::move(needs);
  }
  // g summed to input i's shape and converted to its dtype (broadcasting, promotion).
  Sym reduce_to(Sym g, size_t i) const;

  // ---- Forward mode
  Sym tangent(size_t i) const { return i < tangents_.size() ? tangents_[i] : Sym(); }
  // A tangent that came from input i alone, expanded to the output's shape and
  // converted to its dtype (the adjoint of reduce_to: `x + y` with y broadcast
  // against x, or promoted, has a tangent of the output's shape and dtype).
  Sym broadcast_from(Sym t, size_t i) const;

 private:
  const Node* node_;
  std::vector<Sym> grads_;
  std::vector<Sym> tangents_;
  std::vector<bool> needs_;
  std::map<size_t, std::vector<bool>> element_needs_;
};

using VjpRule = std::vector<Sym> (*)(const RuleContext&);
using JvpRule = std::vector<Sym> (*)(const RuleContext&);

struct DerivativeRule {
  VjpRule vjp = nullptr;
  JvpRule jvp = nullptr;
};

// The rule of `op`, or null when the op has none.
const DerivativeRule* derivative_rule(OpId op);

// Per input of `n`: whether its reverse rule gives that input a gradient when every
// input wants one (PyTorch's differentiable arguments: not an index, a mask, a class
// target or a condition). Found by running the rule on a copy of `n` in a scratch
// graph; all false when `n` has no rule or the rule fails there.
std::vector<bool> differentiable_inputs(const Node& n);

// Each derivatives_*.cpp file fills its part of the table, one row per op:
//   TSL_DERIVATIVE(relu, relu_vjp, relu_jvp);
#define TSL_DERIVATIVE(op, vjp, jvp) table[static_cast<size_t>(::tsl::OpId::op)] = {&vjp, &jvp}
using DerivativeTable = std::array<DerivativeRule, kNumOps>;
void register_elementwise_derivatives(DerivativeTable& table);
void register_reduction_derivatives(DerivativeTable& table);
void register_shape_derivatives(DerivativeTable& table);
void register_linalg_nn_derivatives(DerivativeTable& table);
void register_conv_pool_derivatives(DerivativeTable& table);
void register_einsum_derivatives(DerivativeTable& table);
void register_nn_layer_derivatives(DerivativeTable& table);

// Helpers shared by the rule files.
// Adds tangents, treating null as zero.
Sym add_tangents(Sym a, Sym b);
// numel(x) / numel(y) as a float: how many elements of x each element of y, a
// reduction of x, reduces.
Sym reduced_count(Sym x, Sym y);
// The rule for `x` given `dx`, for tangents of ops linear in input `i`: the same op
// with input i replaced by its tangent (other inputs unchanged).
Sym apply_with_input(const RuleContext& c, size_t i, Sym replacement);
// Whether optional tensor input i (a bias, a weight) is given: not None.
bool has_optional_input(const RuleContext& c, size_t i);
// Optional tensor input i (given: has_optional_input) as a Tensor: unwrapped when the
// graph holds it as Optional[Tensor] (a `bias: Optional[Tensor]` parameter), so that
// size() and the ops a rule builds on it get a Tensor, as the IR's schemas require.
Sym optional_tensor(const RuleContext& c, size_t i);
// The value of input i, a str that selects what the op computes (reduction='sum',
// approximate='tanh'): each value has its own gradient formula, so it must be a
// constant (the eager tape makes it one, Note [Modes are constants on the tape] in
// runtime/autograd/record.cpp); otherwise a compile error naming `what`, never a
// guessed default.
std::string constant_mode(const RuleContext& c, size_t i, std::string_view what);

}  // namespace tsl::autodiff
