// Derivative rules of convolution and pooling. conv2d and its two gradient ops are
// bilinear and adjoint to one another, avg_pool2d and its gradient op are linear
// adjoints, and max_pool2d's gradient is a scatter: every rule is built from ops of
// this family (or scatter/gather), so gradients of any order exist.
#include "ir/autodiff/derivatives.h"

namespace tsl::autodiff {
namespace {

// conv2d(input, weight, bias, stride, padding, dilation, groups) and its gradient ops
// (grad, tensor, size, stride, padding, dilation, groups) share the trailing four
// parameters, at inputs 3..6 of each.
Sym conv_op(const RuleContext& c, OpId op, Sym a, Sym b, Arg third) {
  return call(op, {a, b, third, c.input(3), c.input(4), c.input(5), c.input(6)});
}

// out = conv(x, w) + b: dx is the transposed convolution of g with w, dw correlates g
// with x, db sums g over the batch and the positions.
std::vector<Sym> conv2d_vjp(const RuleContext& c) {
  Sym x = c.input(0), w = c.input(1), g = c.grad();
  Sym gx, gw, gb;
  if (c.needs(0)) gx = conv_op(c, OpId::conv2d_input_backward, g, w, size(x));
  if (c.needs(1)) gw = conv_op(c, OpId::conv2d_weight_backward, g, x, size(w));
  if (c.needs(2) && has_optional_input(c, 2)) {
    gb = sum_to(sum(g, std::vector<int64_t>{-2, -1}, false), optional_tensor(c, 2));
  }
  return {gx, gw, gb};
}
std::vector<Sym> conv2d_jvp(const RuleContext& c) {
  Sym tx = c.tangent(0), tw = c.tangent(1), tb = c.tangent(2);
  Sym out;
  if (tx) out = conv_op(c, OpId::conv2d, tx, c.input(1), std::nullopt);
  if (tw) out = add_tangents(out, conv_op(c, OpId::conv2d, c.input(0), tw, std::nullopt));
  if (tb) {
    Sym planes = reshape(tb, std::vector<int64_t>{-1, 1, 1});
    out = out ? out + planes : planes + zeros_like(c.output());
  }
  return {out};
}

// dx = conv2d_input_backward(g, w) is A_w^T g for A_w x = conv2d(x, w). With gradient
// h of dx: <h, A_w^T g> = <conv2d(h, w), g>, so g gets conv2d(h, w) and w gets
// conv2d_weight_backward(g, h).
std::vector<Sym> conv2d_input_backward_vjp(const RuleContext& c) {
  Sym g = c.input(0), w = c.input(1), h = c.grad();
  return {c.needs(0) ? conv_op(c, OpId::conv2d, h, w, std::nullopt) : Sym(),
          c.needs(1) ? conv_op(c, OpId::conv2d_weight_backward, g, h, size(w)) : Sym()};
}
// dw = conv2d_weight_backward(g, x) satisfies <v, dw> = <conv2d(x, v), g>, so with
// gradient v of dw, g gets conv2d(x, v) and x gets conv2d_input_backward(g, v).
std::vector<Sym> conv2d_weight_backward_vjp(const RuleContext& c) {
  Sym g = c.input(0), x = c.input(1), v = c.grad();
  return {c.needs(0) ? conv_op(c, OpId::conv2d, x, v, std::nullopt) : Sym(),
          c.needs(1) ? conv_op(c, OpId::conv2d_input_backward, g, v, size(x)) : Sym()};
}
// Both gradient ops are bilinear in their first two inputs.
std::vector<Sym> conv_backward_jvp(const RuleContext& c) {
  Sym t0 = c.tangent(0), t1 = c.tangent(1);
  return {add_tangents(t0 ? apply_with_input(c, 0, t0) : Sym(),
                       t1 ? apply_with_input(c, 1, t1) : Sym())};
}

// max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
// each output is one input element (the first maximum of its window, or a NaN), so
// the gradient scatters g there and the tangent gathers from there. Offsets index
// the flattened H*W plane.
Sym max_offsets(const RuleContext& c) {
  return call(OpId::max_pool2d_indices,
              {c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), c.input(5)});
}
Sym planes(Sym x) { return call(OpId::flatten, {x, -2}); }

std::vector<Sym> max_pool2d_vjp(const RuleContext& c) {
  Sym x = c.input(0);
  Sym scattered = call(OpId::scatter_add,
                       {planes(zeros_like(x)), -1, planes(max_offsets(c)), planes(c.grad())});
  return {reshape(scattered, size(x))};
}
std::vector<Sym> max_pool2d_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym picked = call(OpId::gather, {planes(t), -1, planes(max_offsets(c))});
  return {reshape(picked, size(c.output()))};
}

// avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override) is linear; its adjoint avg_pool2d_backward(grad, input, the same
// parameters) reads `input` for its shape only.
std::vector<Sym> avg_pool2d_vjp(const RuleContext& c) {
  return {call(OpId::avg_pool2d_backward, {c.grad(), c.input(0), c.input(1), c.input(2), c.input(3),
                                           c.input(4), c.input(5), c.input(6)})};
}
std::vector<Sym> avg_pool2d_backward_vjp(const RuleContext& c) {
  if (!c.needs(0)) return {Sym(), Sym()};
  return {call(OpId::avg_pool2d,
               {c.grad(), c.input(2), c.input(3), c.input(4), c.input(5), c.input(6), c.input(7)}),
          Sym()};
}
// Both are linear in input 0.
std::vector<Sym> linear_in_first_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? apply_with_input(c, 0, t) : Sym()};
}

}  // namespace

void register_conv_pool_derivatives(DerivativeTable& table) {
  TSL_DERIVATIVE(conv2d, conv2d_vjp, conv2d_jvp);
  TSL_DERIVATIVE(conv2d_input_backward, conv2d_input_backward_vjp, conv_backward_jvp);
  TSL_DERIVATIVE(conv2d_weight_backward, conv2d_weight_backward_vjp, conv_backward_jvp);
  TSL_DERIVATIVE(max_pool2d, max_pool2d_vjp, max_pool2d_jvp);
  TSL_DERIVATIVE(avg_pool2d, avg_pool2d_vjp, linear_in_first_jvp);
  TSL_DERIVATIVE(avg_pool2d_backward, avg_pool2d_backward_vjp, linear_in_first_jvp);
}

}  // namespace tsl::autodiff
