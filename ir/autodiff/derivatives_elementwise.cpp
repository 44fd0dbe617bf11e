// Derivative rules of the elementwise ops. Most are written once as the partial
// derivative dy/dx (from x = input(0) and y = output()), from which both modes
// follow: reverse g * dy/dx, forward t * dy/dx. Formulas follow PyTorch's
// derivatives.yaml, including its choices at kinks.
#include <cmath>

#include "ir/autodiff/derivatives.h"

namespace tsl::autodiff {
namespace {

using Partial = Sym (*)(const RuleContext&);

template <Partial P>
std::vector<Sym> unary_vjp(const RuleContext& c) {
  return {c.grad() * P(c)};
}
template <Partial P>
std::vector<Sym> unary_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? t * P(c) : Sym()};
}

// Ops whose result is piecewise constant (floor, sign, ...): a zero gradient of the
// right shape, as PyTorch gives.
std::vector<Sym> zero_vjp(const RuleContext& c) { return {zeros_like(c.grad())}; }
std::vector<Sym> zero_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? zeros_like(c.output()) : Sym()};
}

std::vector<Sym> neg_vjp(const RuleContext& c) { return {-c.grad()}; }
std::vector<Sym> neg_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? -t : Sym()};
}

Sym x_of(const RuleContext& c) { return c.input(0); }
Sym y_of(const RuleContext& c) { return c.output(); }

Sym d_abs(const RuleContext& c) { return sign(x_of(c)); }
Sym d_exp(const RuleContext& c) { return y_of(c); }
Sym d_exp2(const RuleContext& c) { return y_of(c) * std::log(2.0); }
Sym d_log(const RuleContext& c) { return reciprocal(x_of(c)); }
Sym d_log2(const RuleContext& c) { return reciprocal(x_of(c) * std::log(2.0)); }
Sym d_log10(const RuleContext& c) { return reciprocal(x_of(c) * std::log(10.0)); }
Sym d_log1p(const RuleContext& c) { return reciprocal(x_of(c) + 1.0); }
Sym d_expm1(const RuleContext& c) { return y_of(c) + 1.0; }
Sym d_sqrt(const RuleContext& c) { return reciprocal(y_of(c) * 2.0); }
Sym d_rsqrt(const RuleContext& c) { return pow(y_of(c), 3.0) * -0.5; }
Sym d_sin(const RuleContext& c) { return cos(x_of(c)); }
Sym d_cos(const RuleContext& c) { return -sin(x_of(c)); }
Sym d_tan(const RuleContext& c) { return square(y_of(c)) + 1.0; }
Sym d_asin(const RuleContext& c) { return rsqrt(1.0 - square(x_of(c))); }
Sym d_acos(const RuleContext& c) { return -rsqrt(1.0 - square(x_of(c))); }
Sym d_atan(const RuleContext& c) { return reciprocal(square(x_of(c)) + 1.0); }
Sym d_sinh(const RuleContext& c) { return call(OpId::cosh, {x_of(c)}); }
Sym d_cosh(const RuleContext& c) { return call(OpId::sinh, {x_of(c)}); }
Sym d_erf(const RuleContext& c) { return exp(-square(x_of(c))) * (2.0 / std::sqrt(M_PI)); }
Sym d_reciprocal(const RuleContext& c) { return -square(y_of(c)); }
Sym d_square(const RuleContext& c) { return x_of(c) * 2.0; }
Sym d_one(const RuleContext& c) { return ones_like(y_of(c)); }
Sym d_tanh(const RuleContext& c) { return 1.0 - square(y_of(c)); }
Sym d_sigmoid(const RuleContext& c) { return y_of(c) * (1.0 - y_of(c)); }
Sym d_silu(const RuleContext& c) {
  Sym s = sigmoid(x_of(c));
  return s * (x_of(c) * (1.0 - s) + 1.0);
}

// gelu: Phi(x) + x phi(x); with approximate='tanh', the derivative of the tanh form
// as PyTorch's GeluBackward computes it.
Sym d_gelu(const RuleContext& c) {
  Sym x = x_of(c);
  if (constant_mode(c, 1, "approximate") == "tanh") {
    const double beta = std::sqrt(2.0) * 2.0 / std::sqrt(M_PI) * 0.5;
    const double kappa = 0.044715;
    Sym inner = (x + pow(x, 3.0) * kappa) * beta;
    Sym th = tanh(inner);
    Sym left_derivative = (th + 1.0) * 0.5;
    Sym inner_derivative = (square(x) * (3.0 * kappa) + 1.0) * beta;
    return left_derivative + x * 0.5 * (1.0 - square(th)) * inner_derivative;
  }
  Sym cdf = (erf(x * M_SQRT1_2) + 1.0) * 0.5;
  Sym pdf = exp(square(x) * -0.5) * (1.0 / std::sqrt(2.0 * M_PI));
  return cdf + x * pdf;
}

// softplus(x, beta, threshold): linear above the threshold.
Sym d_softplus(const RuleContext& c) {
  Sym bx = x_of(c) * c.input(1);
  return where(gt(bx, c.input(2)), 1.0, sigmoid(bx));
}

// The piecewise activations test their branch as PyTorch's backward kernels do, so a
// NaN input takes the same side: elu and relu ask `x <= 0` (NaN: the linear side,
// slope 1), leaky_relu asks `x > 0` (NaN: the negative slope).
Sym d_elu(const RuleContext& c) { return where(le(x_of(c), 0.0), exp(x_of(c)) * c.input(1), 1.0); }

// grad * slope, as PyTorch: a derivative built as where(x > 0, 1.0, slope) from two
// numbers would be a float32 tensor, and a float64 gradient would get 0.1f.
std::vector<Sym> leaky_relu_vjp(const RuleContext& c) {
  Sym g = c.grad();
  return {where(gt(x_of(c), 0.0), g, g * c.input(1))};
}
std::vector<Sym> leaky_relu_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? where(gt(x_of(c), 0.0), t, t * c.input(1)) : Sym()};
}

// relu passes the gradient unless the result is <= 0 (relu'(0) = 0; a NaN passes it,
// as PyTorch's threshold_backward); `where` rather than a product keeps an infinite
// gradient from turning into NaN.
std::vector<Sym> relu_vjp(const RuleContext& c) {
  return {where(le(c.output(), 0.0), 0.0, c.grad())};
}
std::vector<Sym> relu_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? where(le(c.output(), 0.0), 0.0, t) : Sym()};
}

// clamp(x, min, max): the gradient passes where min <= x <= max.
Sym clamp_mask(const RuleContext& c) {
  Sym mask;
  auto bound = [&](size_t i, bool lower) {
    if (c.input(i).value()->type()->kind() == TypeKind::None) return;
    const IValue* k = c.constant_input(i);
    if (k && k->is_none()) return;
    Sym m = lower ? ge(c.input(0), c.input(i)) : le(c.input(0), c.input(i));
    mask = mask ? logical_and(mask, m) : m;
  };
  bound(1, true);
  bound(2, false);
  return mask;
}
std::vector<Sym> clamp_vjp(const RuleContext& c) {
  Sym mask = clamp_mask(c);
  return {mask ? where(mask, c.grad(), 0.0) : c.grad()};
}
std::vector<Sym> clamp_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym mask = clamp_mask(c);
  return {mask ? where(mask, t, 0.0) : t};
}

// hardtanh(x, min_val, max_val): the gradient passes strictly inside the bounds, and at
// NaN, which is neither at nor beyond them (PyTorch's hardtanh_backward); 0 at the bounds,
// where clamp's passes.
Sym hardtanh_outside(const RuleContext& c) {
  return call(OpId::logical_or, {le(x_of(c), c.input(1)), ge(x_of(c), c.input(2))});
}
std::vector<Sym> hardtanh_vjp(const RuleContext& c) {
  return {where(hardtanh_outside(c), 0.0, c.grad())};
}
std::vector<Sym> hardtanh_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? where(hardtanh_outside(c), 0.0, t) : Sym()};
}

// logit(x, eps): 1 / (x (1 - x)); with eps, 0 where x was clamped (outside [eps, 1 - eps]),
// without, NaN outside [0, 1], as PyTorch's logit_backward.
Sym logit_partial(const RuleContext& c, Sym g) {
  Sym x = x_of(c);
  Sym d = g / (x * (1.0 - x));
  if (!has_optional_input(c, 1)) {
    return where(call(OpId::logical_or, {lt(x, 0.0), gt(x, 1.0)}), NAN, d);
  }
  Sym eps = optional_tensor(c, 1);  // unwrapped when the graph holds an Optional[float]
  Sym hi = call(OpId::sub_float, {1.0, eps});
  return where(call(OpId::logical_or, {lt(x, eps), gt(x, hi)}), 0.0, d);
}
std::vector<Sym> logit_vjp(const RuleContext& c) { return {logit_partial(c, c.grad())}; }
std::vector<Sym> logit_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? logit_partial(c, t) : Sym()};
}

// ---- Binary ops: partials with respect to self (input 0) and other (input 1).

template <Partial PA, Partial PB>
std::vector<Sym> binary_vjp(const RuleContext& c) {
  Sym g = c.grad();
  return {c.needs(0) ? c.reduce_to(g * PA(c), 0) : Sym(),
          c.needs(1) ? c.reduce_to(g * PB(c), 1) : Sym()};
}
template <Partial PA, Partial PB>
std::vector<Sym> binary_jvp(const RuleContext& c) {
  Sym ta = c.tangent(0), tb = c.tangent(1);
  return {add_tangents(ta ? ta * PA(c) : Sym(), tb ? tb * PB(c) : Sym())};
}

bool alpha_is_one(const RuleContext& c) {
  const IValue* a = c.constant_input(2);
  return a && a->is_number() && a->to_double() == 1.0;
}

std::vector<Sym> add_vjp(const RuleContext& c) {
  Sym g = c.grad();
  Sym gb = c.needs(1) ? (alpha_is_one(c) ? g : g * c.input(2)) : Sym();
  return {c.needs(0) ? c.reduce_to(g, 0) : Sym(), c.reduce_to(gb, 1)};
}
// One tangent alone keeps its input's shape and dtype: broadcast_from widens it.
Sym sum_of_tangents(const RuleContext& c, Sym ta, Sym tb) {
  if (ta && tb) return ta + tb;
  return ta ? c.broadcast_from(ta, 0) : c.broadcast_from(tb, 1);
}
std::vector<Sym> add_jvp(const RuleContext& c) {
  Sym tb = c.tangent(1);
  if (tb && !alpha_is_one(c)) tb = tb * c.input(2);
  return {sum_of_tangents(c, c.tangent(0), tb)};
}
std::vector<Sym> sub_vjp(const RuleContext& c) {
  Sym g = c.grad();
  Sym gb = c.needs(1) ? (alpha_is_one(c) ? -g : g * -1.0 * c.input(2)) : Sym();
  return {c.needs(0) ? c.reduce_to(g, 0) : Sym(), c.reduce_to(gb, 1)};
}
std::vector<Sym> sub_jvp(const RuleContext& c) {
  Sym tb = c.tangent(1);
  if (tb) tb = alpha_is_one(c) ? -tb : tb * -1.0 * c.input(2);
  return {sum_of_tangents(c, c.tangent(0), tb)};
}

Sym d_mul_self(const RuleContext& c) { return c.input(1); }
Sym d_mul_other(const RuleContext& c) { return c.input(0); }

bool has_rounding_mode(const RuleContext& c) {
  if (c.input(2).value()->type()->kind() == TypeKind::None) return false;
  const IValue* m = c.constant_input(2);
  if (m && m->is_none()) return false;
  // A rounding mode known only at run time may be None there: no guess.
  if (!m) constant_mode(c, 2, "rounding_mode");
  return true;
}
std::vector<Sym> div_vjp(const RuleContext& c) {
  Sym g = c.grad();
  if (has_rounding_mode(c)) {
    return {c.needs(0) ? c.reduce_to(zeros_like(g), 0) : Sym(),
            c.needs(1) ? c.reduce_to(zeros_like(g), 1) : Sym()};
  }
  // PyTorch's div_tensor_other_backward: -g * ((a / b) / b). Dividing twice keeps
  // b * b from underflowing to 0 (or overflowing) where a / b is finite: at
  // a = b = 1e-300 the partial is -1e300, not -inf.
  Sym b = c.input(1);
  return {c.needs(0) ? c.reduce_to(g / b, 0) : Sym(),
          c.needs(1) ? c.reduce_to(-g * ((c.input(0) / b) / b), 1) : Sym()};
}
// PyTorch's formula: (ta - tb * result) / b.
std::vector<Sym> div_jvp(const RuleContext& c) {
  Sym ta = c.tangent(0), tb = c.tangent(1);
  if (has_rounding_mode(c)) return {zeros_like(c.output())};
  Sym b = c.input(1);
  if (!tb) return {ta / b};
  Sym shifted = tb * c.output();
  return {(ta ? ta - shifted : -shifted) / b};
}

// remainder(a, b) = a - floor(a / b) * b.
Sym d_remainder_other(const RuleContext& c) {
  return -call(OpId::div, {c.input(0), c.input(1), "floor"});
}

// pow: PyTorch's pow_backward_self and pow_backward_exponent, which define the
// gradient as 0 where the exponent is 0 (self) and where self is 0 with a
// nonnegative exponent (exponent).
Sym d_pow_self(const RuleContext& c) {
  Sym x = c.input(0), e = c.input(1);
  if (!c.is_tensor_input(1)) {
    if (const IValue* k = c.constant_input(1)) {
      double ev = k->to_double();
      if (ev == 0.0) return zeros_like(x);
      return pow(x, ev - 1.0) * ev;
    }
    Sym et = ones_like(x) * e;  // a Python number that is not a constant
    return where(eq(et, 0.0), 0.0, pow(x, et - 1.0) * et);
  }
  return where(eq(e, 0.0), 0.0, pow(x, e - 1.0) * e);
}
Sym d_pow_other(const RuleContext& c) {
  Sym x = c.input(0), y = c.output();
  if (!c.is_tensor_input(0)) {
    Sym xf = x.value()->type()->kind() == TypeKind::Int ? call(OpId::Float_int, {x}) : x;
    Sym lx = call(OpId::log_float, {xf});
    lx.value()->set_type(Type::float_());
    return y * lx;
  }
  Sym e = c.input(1);
  return where(logical_and(eq(x, 0.0), ge(e, 0.0)), 0.0, y * log(x));
}

Sym d_atan2_self(const RuleContext& c) {
  Sym a = c.input(0), b = c.input(1);
  return b / (square(a) + square(b));
}
Sym d_atan2_other(const RuleContext& c) {
  Sym a = c.input(0), b = c.input(1);
  return -a / (square(a) + square(b));
}

// maximum/minimum: the larger (smaller) side takes the gradient; ties split it. As
// PyTorch's, each side is masked out only where it is strictly beaten, so with a NaN
// operand both sides take the whole gradient. The partials are in the output's dtype:
// a where of Python floats is float32, and a 0-dim float64 tangent times it would
// promote to float32 (jvp of maximum(ones(2, float64), x.sum())).
Sym d_max_self(const RuleContext& c) {
  Sym a = c.input(0), b = c.input(1);
  return to_dtype(where(eq(a, b), 0.5, where(lt(a, b), 0.0, 1.0)), dtype_of(c.output()));
}
Sym d_max_other(const RuleContext& c) {
  Sym a = c.input(0), b = c.input(1);
  return to_dtype(where(eq(a, b), 0.5, where(gt(a, b), 0.0, 1.0)), dtype_of(c.output()));
}
Sym d_min_self(const RuleContext& c) { return d_max_other(c); }
Sym d_min_other(const RuleContext& c) { return d_max_self(c); }

// where(cond, a, b): the gradient goes to the side that was chosen.
std::vector<Sym> where_vjp(const RuleContext& c) {
  Sym g = c.grad(), cond = c.input(0);
  return {Sym(), c.needs(1) ? c.reduce_to(where(cond, g, 0.0), 1) : Sym(),
          c.needs(2) ? c.reduce_to(where(cond, 0.0, g), 2) : Sym()};
}
std::vector<Sym> where_jvp(const RuleContext& c) {
  Sym ta = c.tangent(1), tb = c.tangent(2);
  if (!ta && !tb) return {Sym()};
  Sym t = where(c.input(0), ta ? Arg(ta) : Arg(0.0), tb ? Arg(tb) : Arg(0.0));
  // where(cond, ta, 0.0) has the shape of cond and ta only: widen to the output.
  return {expand(t, size(c.output()))};
}

// masked_fill(self, mask, value): self's gradient where the mask is False; a tensor
// value (0-dim, masked_fill.Tensor) gets the sum of the gradient where it is True.
std::vector<Sym> masked_fill_vjp(const RuleContext& c) {
  Sym g = c.grad(), mask = c.input(1);
  Sym gself, gvalue;
  if (c.needs(0)) gself = c.reduce_to(call(OpId::masked_fill_scalar, {g, mask, 0.0}), 0);
  if (c.needs(2) && c.is_tensor_input(2)) {
    gvalue = to_dtype(sum_all(where(mask, g, 0.0)), dtype_of(c.input(2)));
  }
  return {gself, Sym(), gvalue};
}
std::vector<Sym> masked_fill_jvp(const RuleContext& c) {
  Sym ts = c.tangent(0), tv = c.is_tensor_input(2) ? c.tangent(2) : Sym();
  if (!ts && !tv) return {Sym()};
  Sym base = ts ? ts : zeros_like(c.input(0));
  if (!tv) return {call(OpId::masked_fill_scalar, {base, c.input(1), 0.0})};
  return {call(OpId::masked_fill_tensor, {base, c.input(1), tv})};
}

// Gradient sums: AutogradAdd(a, b) is linear in both.
std::vector<Sym> autograd_add_vjp(const RuleContext& c) { return {c.grad(), c.grad()}; }
std::vector<Sym> autograd_add_jvp(const RuleContext& c) {
  Sym ta = c.tangent(0), tb = c.tangent(1);
  if (!ta && !tb) return {Sym()};
  return {call(OpId::AutogradAdd, {ta ? ta : undefined(), tb ? tb : undefined()})};
}
std::vector<Sym> autograd_zeros_vjp(const RuleContext& c) { return {c.grad(), Sym()}; }
std::vector<Sym> autograd_zeros_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? call(OpId::AutogradZeros, {t, c.input(1)}) : Sym()};
}

}  // namespace

#define TSL_UNARY_RULE(op, partial) \
  table[static_cast<size_t>(OpId::op)] = {&unary_vjp<&partial>, &unary_jvp<&partial>}
#define TSL_BINARY_RULE(op, pa, pb) \
  table[static_cast<size_t>(OpId::op)] = {&binary_vjp<&pa, &pb>, &binary_jvp<&pa, &pb>}
void register_elementwise_derivatives(DerivativeTable& table) {
  TSL_DERIVATIVE(neg, neg_vjp, neg_jvp);
  TSL_UNARY_RULE(abs, d_abs);
  TSL_UNARY_RULE(exp, d_exp);
  TSL_UNARY_RULE(exp2, d_exp2);
  TSL_UNARY_RULE(log, d_log);
  TSL_UNARY_RULE(log2, d_log2);
  TSL_UNARY_RULE(log10, d_log10);
  TSL_UNARY_RULE(log1p, d_log1p);
  TSL_UNARY_RULE(expm1, d_expm1);
  TSL_UNARY_RULE(sqrt, d_sqrt);
  TSL_UNARY_RULE(rsqrt, d_rsqrt);
  TSL_UNARY_RULE(sin, d_sin);
  TSL_UNARY_RULE(cos, d_cos);
  TSL_UNARY_RULE(tan, d_tan);
  TSL_UNARY_RULE(asin, d_asin);
  TSL_UNARY_RULE(acos, d_acos);
  TSL_UNARY_RULE(atan, d_atan);
  TSL_UNARY_RULE(sinh, d_sinh);
  TSL_UNARY_RULE(cosh, d_cosh);
  TSL_UNARY_RULE(erf, d_erf);
  TSL_UNARY_RULE(reciprocal, d_reciprocal);
  TSL_UNARY_RULE(square, d_square);
  TSL_UNARY_RULE(frac, d_one);
  TSL_UNARY_RULE(tanh, d_tanh);
  TSL_UNARY_RULE(sigmoid, d_sigmoid);
  TSL_UNARY_RULE(silu, d_silu);
  TSL_UNARY_RULE(gelu, d_gelu);
  TSL_UNARY_RULE(softplus, d_softplus);
  TSL_UNARY_RULE(elu, d_elu);
  TSL_DERIVATIVE(leaky_relu, leaky_relu_vjp, leaky_relu_jvp);
  for (OpId op : {OpId::sign, OpId::floor, OpId::ceil, OpId::round, OpId::trunc}) {
    table[static_cast<size_t>(op)] = {&zero_vjp, &zero_jvp};
  }
  TSL_DERIVATIVE(relu, relu_vjp, relu_jvp);
  TSL_DERIVATIVE(clamp, clamp_vjp, clamp_jvp);
  TSL_DERIVATIVE(clip, clamp_vjp, clamp_jvp);
  TSL_DERIVATIVE(hardtanh, hardtanh_vjp, hardtanh_jvp);
  TSL_DERIVATIVE(logit, logit_vjp, logit_jvp);

  TSL_DERIVATIVE(add, add_vjp, add_jvp);
  TSL_DERIVATIVE(sub, sub_vjp, sub_jvp);
  TSL_BINARY_RULE(mul, d_mul_self, d_mul_other);
  TSL_DERIVATIVE(div, div_vjp, div_jvp);
  TSL_BINARY_RULE(remainder, d_one, d_remainder_other);
  TSL_BINARY_RULE(pow, d_pow_self, d_pow_other);
  TSL_BINARY_RULE(atan2, d_atan2_self, d_atan2_other);
  TSL_BINARY_RULE(maximum, d_max_self, d_max_other);
  TSL_BINARY_RULE(max_other, d_max_self, d_max_other);
  TSL_BINARY_RULE(minimum, d_min_self, d_min_other);
  TSL_BINARY_RULE(min_other, d_min_self, d_min_other);
  TSL_DERIVATIVE(where, where_vjp, where_jvp);
  TSL_DERIVATIVE(masked_fill_scalar, masked_fill_vjp, masked_fill_jvp);
  TSL_DERIVATIVE(masked_fill_tensor, masked_fill_vjp, masked_fill_jvp);
  TSL_DERIVATIVE(AutogradAdd, autograd_add_vjp, autograd_add_jvp);
  TSL_DERIVATIVE(AutogradZeros, autograd_zeros_vjp, autograd_zeros_jvp);
}

}  // namespace tsl::autodiff
