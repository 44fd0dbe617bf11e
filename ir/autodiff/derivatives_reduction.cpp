// Derivative rules of the reductions. A reduction's gradient is the output gradient
// broadcast back over the reduced dims: reshaped to the keepdim shape (whatever
// keepdim was), then expanded to the input's shape; selections (max, amax, ...)
// route it to the selected elements, sharing it evenly between ties.
#include <cmath>
#include <limits>

#include "ir/autodiff/derivatives.h"
#include "ir/schema.h"

namespace tsl::autodiff {
namespace {

// g of a reduction over `dims` (an int[]? value or None: all dims) as x's shape.
Sym expand_back(Sym g, Sym x, Arg dims) {
  Sym keep = call(OpId::keepdim_size, {size(x), dims});
  return expand(reshape(g, keep), size(x));
}

// An int[] value holding one int value (a `dim` argument given to an int[] param).
Sym int_list(Sym dim) {
  Node* n = FormulaScope::graph().insert(FormulaScope::graph().create(OpId::ListConstruct, {dim}));
  n->set_range(FormulaScope::range());
  return n->output()->set_type(Type::list(Type::int_()));
}

std::vector<Sym> sum_vjp(const RuleContext& c) {
  return {expand_back(c.grad(), c.input(0), c.input(1))};
}
std::vector<Sym> linear_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? apply_with_input(c, 0, t) : Sym()};
}
std::vector<Sym> mean_vjp(const RuleContext& c) {
  return {expand_back(c.grad(), c.input(0), c.input(1)) / reduced_count(c.input(0), c.output())};
}

// prod: the product of the other elements. Written so that it is also correct to
// differentiate again where elements are zero: a nonzero element's gradient is
// y / x (0 once some element is 0, with the right derivative with respect to that
// zero); a zero element's is the product of the others (the nonzero product when it
// is the only zero; the other zero times it when there are two; 0 with three).
Sym prod_grad(const RuleContext& c, Sym g) {
  Sym x = c.input(0);
  bool all_dims = c.input(1).value()->type()->kind() == TypeKind::None ||
                  (c.constant_input(1) && c.constant_input(1)->is_none());
  Sym dims = all_dims ? Sym() : int_list(c.input(1));
  Arg dims_arg = all_dims ? Arg(std::nullopt) : Arg(dims);
  Sym keep = call(OpId::keepdim_size, {size(x), dims_arg});
  auto back = [&](Sym reduced) { return expand(reshape(reduced, keep), size(x)); };
  Sym is_zero = eq(x, 0.0);
  Sym safe = where(is_zero, 1.0, x);
  Sym zeros = all_dims ? sum_all(is_zero) : sum(is_zero, dims, true);
  Sym prod_nonzero =
      all_dims ? call(OpId::prod, {safe}) : call(OpId::prod, {safe, c.input(1), true});
  Sym zero_sum =
      all_dims ? sum_all(where(is_zero, x, 0.0)) : sum(where(is_zero, x, 0.0), dims, true);
  Sym zeros_e = back(zeros);
  Sym others_nonzero = back(prod_nonzero);
  Sym other_zero = back(zero_sum) - x;  // with two zeros: the other one (value 0)
  Sym zero_grad = where(eq(zeros_e, 1), others_nonzero,
                        where(eq(zeros_e, 2), other_zero * others_nonzero, 0.0));
  Sym nonzero_grad = back(c.output()) / safe;
  Sym factor = where(is_zero, zero_grad, nonzero_grad);
  // Note [prod at infinities and NaN]
  // Where a slice holds an infinity or a NaN and the tensor a zero, PyTorch multiplies
  // the other elements out (prod_safe_zeros_backward: exclusive products from both
  // ends), and y / x or the formulas above give NaN where it does not: [0, inf, 3]
  // has the gradient [inf, 0, nan], not [inf, nan, nan]. The product of the others is
  // NaN when they hold a NaN or both a zero and an infinity, whatever their order;
  // else a zero or an infinity with the sign of their signs' product; else (the element
  // is the slice's one infinity or NaN) the product of the finite others. Without a
  // zero PyTorch's eager backward takes y / x, as above (functorch's grad multiplies
  // the others out there too: TSL follows the eager one). Not matched: the second
  // derivative there (these branch values are constants of x: 0 where PyTorch's
  // differentiated cumulative products give NaN or a number).
  auto reduce = [&](Sym v, OpId op) {
    if (op == OpId::prod) return all_dims ? call(op, {v}) : call(op, {v, c.input(1), true});
    return all_dims ? sum_all(v) : sum(v, dims, true);
  };
  auto others = [&](Sym mask) {  // how many of the other elements of its slice are `mask`
    Sym m = where(mask, 1.0, 0.0);
    return back(reduce(m, OpId::sum)) - m;
  };
  Sym is_nan = call(OpId::isnan, {x});
  Sym is_inf = call(OpId::isinf, {x});
  // The zeros are counted above already; the other masks are counted here.
  Sym zeros_o = zeros_e - where(is_zero, 1, 0);
  Sym infs_o = others(is_inf), nans_o = others(is_nan);
  Sym negative = call(OpId::logical_or, {lt(x, 0.0), logical_and(is_zero, lt(reciprocal(x), 0.0))});
  Sym sign_each = where(negative, -1.0, 1.0);
  Sym sign_others = back(reduce(sign_each, OpId::prod)) * sign_each;  // / ±1
  Sym finite_nonzero = logical_and(call(OpId::isfinite, {x}), call(OpId::logical_not, {is_zero}));
  Sym finite_others = back(reduce(where(finite_nonzero, x, 1.0), OpId::prod));
  Sym nan_result =
      gt(nans_o + where(logical_and(gt(zeros_o, 0.0), gt(infs_o, 0.0)), 1.0, 0.0), 0.0);
  Sym multiplied =
      where(nan_result, std::numeric_limits<double>::quiet_NaN(),
            where(gt(zeros_o, 0.0), sign_others * 0.0,
                  where(gt(infs_o, 0.0), sign_others * std::numeric_limits<double>::infinity(),
                        finite_others)));
  Sym nonfinite = call(OpId::logical_or, {is_nan, is_inf});
  Sym slice_nonfinite = gt(back(reduce(where(nonfinite, 1.0, 0.0), OpId::sum)), 0.0);
  Sym tensor_has_zero = gt(sum_all(zeros), 0);  // the slices' counts: no pass over x
  // Not an If around this branch (it is needed only where both a zero and a nonfinite
  // element occur): under vmap (jacrev, hessian) its condition would be batched data,
  // which control flow cannot take.
  // The masks count in the default dtype: back to x's (a float16 x keeps float16).
  factor = where(logical_and(slice_nonfinite, tensor_has_zero), to_dtype(multiplied, dtype_of(x)),
                 factor);
  return back(g) * factor;
}
std::vector<Sym> prod_vjp(const RuleContext& c) { return {prod_grad(c, c.grad())}; }
std::vector<Sym> prod_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  // d prod = sum over the reduced dims of (product of the others) * t.
  Sym ones = ones_like(c.output());
  Sym weights = prod_grad(c, ones);
  bool all_dims = c.input(1).value()->type()->kind() == TypeKind::None ||
                  (c.constant_input(1) && c.constant_input(1)->is_none());
  if (all_dims) return {sum_all(weights * t)};
  Sym s = sum(weights * t, int_list(c.input(1)), true);
  return {reshape(s, size(c.output()))};
}

// Selections: the elements equal to the result share its gradient, as PyTorch's
// (g / count) * mask. amax and amin select no NaN (a NaN result gives NaN
// gradients: 0 / 0); max() and min() of a whole tensor let a NaN result select the
// NaNs (PyTorch's evenly_distribute_backward).
Sym selection_grad(Sym g, Sym x, Sym y, Arg dims, bool nan_selects) {
  Sym keep = call(OpId::keepdim_size, {size(x), dims});
  Sym yk = reshape(y, keep);
  Sym mask = eq(x, yk);
  if (nan_selects) {
    mask = call(OpId::logical_or,
                {mask, logical_and(call(OpId::isnan, {x}), call(OpId::isnan, {yk}))});
  }
  Sym count = call(OpId::sum, {mask, dims, true});
  return expand(reshape(g, keep), size(x)) / count * mask;
}
std::vector<Sym> amax_vjp(const RuleContext& c) {
  return {selection_grad(c.grad(), c.input(0), c.output(), c.input(1), false)};
}
std::vector<Sym> amax_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym x = c.input(0);
  Sym keep = call(OpId::keepdim_size, {size(x), c.input(1)});
  Sym mask = eq(x, reshape(c.output(), keep));
  Sym num = call(OpId::sum, {where(mask, t, 0.0), c.input(1), true});
  Sym den = call(OpId::sum, {mask, c.input(1), true});
  return {reshape(num / den, size(c.output()))};
}
std::vector<Sym> max_all_vjp(const RuleContext& c) {
  return {selection_grad(c.grad(), c.input(0), c.output(), std::nullopt, true)};
}
std::vector<Sym> max_all_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym x = c.input(0), y = c.output();
  Sym mask = call(OpId::logical_or,
                  {eq(x, y), logical_and(call(OpId::isnan, {x}), call(OpId::isnan, {y}))});
  return {sum_all(where(mask, t, 0.0)) / sum_all(mask)};
}

// max.dim / min.dim: the gradient of the values goes to the selected index.
std::vector<Sym> max_dim_vjp(const RuleContext& c) {
  Sym x = c.input(0), g = c.grad(0), idx = c.output(1);
  Sym dim = c.input(1);
  Sym keep = call(OpId::keepdim_size, {size(x), int_list(dim)});
  return {call(OpId::scatter_add, {zeros_like(x), dim, reshape(idx, keep), reshape(g, keep)})};
}
std::vector<Sym> max_dim_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym(), Sym()};
  Sym x = c.input(0), idx = c.output(1), dim = c.input(1);
  Sym keep = call(OpId::keepdim_size, {size(x), int_list(dim)});
  Sym picked = call(OpId::gather, {t, dim, reshape(idx, keep)});
  return {reshape(picked, size(c.output(0))), Sym()};
}

// logsumexp: softmax of x over the dims.
std::vector<Sym> logsumexp_vjp(const RuleContext& c) {
  Sym x = c.input(0);
  Sym keep = call(OpId::keepdim_size, {size(x), c.input(1)});
  Sym soft = exp(x - reshape(c.output(), keep));
  return {expand_back(c.grad(), x, c.input(1)) * soft};
}
std::vector<Sym> logsumexp_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym x = c.input(0);
  Sym keep = call(OpId::keepdim_size, {size(x), c.input(1)});
  Sym soft = exp(x - reshape(c.output(), keep));
  return {reshape(call(OpId::sum, {soft * t, c.input(1), true}), size(c.output()))};
}

// var and std, over all elements (var, std) or over dims (var.dim, std.dim).
struct Moments {
  Sym dims;      // int[]? value, or null for all
  Sym unbiased;  // bool value
};
Moments moments_of(const RuleContext& c) {
  bool over_dims = c.node()->op() == OpId::var_dim || c.node()->op() == OpId::std_dim;
  return over_dims ? Moments{c.input(1), c.input(2)} : Moments{Sym(), c.input(1)};
}
// d var / dx = 2 (x - mean) / (N - ddof), as a tensor shaped like x.
Sym var_partial(const RuleContext& c) {
  Sym x = c.input(0);
  Moments m = moments_of(c);
  Arg dims = m.dims ? Arg(m.dims) : Arg(std::nullopt);
  Sym mean = call(OpId::mean, {x, dims, true});
  Sym n = reduced_count(x, c.output());
  Sym ddof = call(OpId::Float_bool, {m.unbiased});
  Sym denom = call(OpId::sub_float, {n, ddof});
  return (x - mean) * call(OpId::div_float, {2.0, denom});
}
Sym reduced_dims_arg(const RuleContext& c) {
  Moments m = moments_of(c);
  return m.dims;
}
std::vector<Sym> var_vjp(const RuleContext& c) {
  Sym dims = reduced_dims_arg(c);
  Arg d = dims ? Arg(dims) : Arg(std::nullopt);
  return {expand_back(c.grad(), c.input(0), d) * var_partial(c)};
}
std::vector<Sym> var_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym dims = reduced_dims_arg(c);
  Arg d = dims ? Arg(dims) : Arg(std::nullopt);
  return {reshape(call(OpId::sum, {var_partial(c) * t, d, true}), size(c.output()))};
}
// std = sqrt(var): d std = d var / (2 std); 0 where std is 0, as PyTorch.
Sym std_scale(const RuleContext& c) {
  Sym dims = reduced_dims_arg(c);
  Arg d = dims ? Arg(dims) : Arg(std::nullopt);
  Sym x = c.input(0);
  Sym keep = call(OpId::keepdim_size, {size(x), d});
  Sym y = reshape(c.output(), keep);
  return where(eq(y, 0.0), 0.0, reciprocal(y * 2.0));
}
std::vector<Sym> std_vjp(const RuleContext& c) {
  Sym dims = reduced_dims_arg(c);
  Arg d = dims ? Arg(dims) : Arg(std::nullopt);
  return {expand_back(c.grad(), c.input(0), d) * var_partial(c) * std_scale(c)};
}
std::vector<Sym> std_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym dims = reduced_dims_arg(c);
  Arg d = dims ? Arg(dims) : Arg(std::nullopt);
  Sym dx = var_partial(c) * std_scale(c) * t;
  return {reshape(call(OpId::sum, {dx, d, true}), size(c.output()))};
}

// norm(x, p, dim): p = 2 (default) x / ||x||, p = 1 sign(x), other finite p
// x |x|^(p-2) / ||x||^(p-1); 0 where the norm is 0, as PyTorch.
// With p known only when the program runs (norm(x, float('inf')), a p passed in), every
// case is built and the value of p picks one.
Sym norm_partial(const RuleContext& c) {
  Sym x = c.input(0);
  Sym keep = call(OpId::keepdim_size, {size(x), c.input(2)});
  Sym y = reshape(c.output(), keep);
  auto l1 = [&] { return sign(x); };
  auto l2 = [&] { return where(eq(y, 0.0), 0.0, x / y); };
  auto extreme = [&] {  // p = +-inf: the elements whose magnitude is the norm
    Sym mask = eq(abs(x), y);
    Sym count = call(OpId::sum, {mask, c.input(2), true});
    return where(mask, sign(x) / count, 0.0);
  };
  // Other p, as PyTorch's norm_backward by range: below 1, sgn(x) |x|^(p-1) (0 at
  // x = 0, where the power is infinite) times y^(1-p); from 1 to 2, sgn(x) |x|^(p-1)
  // / y^(p-1); from 2, x |x|^(p-2) / y^(p-1); the last two 0 where y is 0.
  auto below_1 = [&](Arg p_minus_1, Arg one_minus_p) {
    return sign(x) * where(eq(x, 0.0), 0.0, pow(abs(x), p_minus_1)) * pow(y, one_minus_p);
  };
  auto below_2 = [&](Arg p_minus_1) {
    return where(eq(y, 0.0), 0.0, sign(x) * pow(abs(x), p_minus_1) / pow(y, p_minus_1));
  };
  auto from_2 = [&](Arg p_minus_2, Arg p_minus_1) {
    return where(eq(y, 0.0), 0.0, x * pow(abs(x), p_minus_2) / pow(y, p_minus_1));
  };
  const IValue* p = c.constant_input(1);
  const bool default_p =
      c.input(1).value()->type()->kind() == TypeKind::None || (p && p->is_none());
  if (default_p || (p && p->is_number())) {
    double pv = default_p ? 2.0 : p->to_double();
    if (pv == 1.0) return l1();
    if (pv == 2.0) return l2();
    if (std::isinf(pv)) return extreme();
    if (pv < 1.0) return below_1(pv - 1.0, 1.0 - pv);
    if (pv < 2.0) return below_2(pv - 1.0);
    return from_2(pv - 2.0, pv - 1.0);
  }
  Sym pt = ones_like(y) * c.input(1);  // p as a tensor of y's shape and dtype
  Sym other = where(lt(pt, 1.0), below_1(pt - 1.0, 1.0 - pt),
                    where(lt(pt, 2.0), below_2(pt - 1.0), from_2(pt - 2.0, pt - 1.0)));
  return where(eq(pt, 1.0), l1(),
               where(eq(pt, 2.0), l2(), where(call(OpId::isinf, {pt}), extreme(), other)));
}
std::vector<Sym> norm_vjp(const RuleContext& c) {
  return {expand_back(c.grad(), c.input(0), c.input(2)) * norm_partial(c)};
}
std::vector<Sym> norm_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  return {reshape(call(OpId::sum, {norm_partial(c) * t, c.input(2), true}), size(c.output()))};
}

// cumsum: the gradient is the reversed cumulative sum of g.
std::vector<Sym> cumsum_vjp(const RuleContext& c) {
  Sym dim = int_list(c.input(1));
  Sym flipped = call(OpId::flip, {c.grad(), dim});
  Sym rev = call(OpId::flip, {call(OpId::cumsum, {flipped, c.input(1)}), dim});
  return {to_dtype(rev, dtype_of(c.input(0)))};
}

// sort and topk: each value's gradient goes back to the place it came from (the
// indices are distinct along dim, so scattering adds nothing up).
Sym dim_input(const RuleContext& c) {
  const FunctionSchema& s = schema_of(c.node()->op());
  for (size_t i = 0; i < s.arguments.size(); ++i) {
    if (s.arguments[i].name == "dim") return c.input(i);
  }
  TSL_INTERNAL_ASSERT(false, s.name, " has no dim argument");
}
std::vector<Sym> sort_vjp(const RuleContext& c) {
  Sym x = c.input(0);
  return {call(OpId::scatter_add, {zeros_like(x), dim_input(c), c.output(1), c.grad(0)})};
}
std::vector<Sym> sort_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym(), Sym()};
  return {call(OpId::gather, {t, dim_input(c), c.output(1)}), Sym()};
}

}  // namespace

void register_reduction_derivatives(DerivativeTable& table) {
  TSL_DERIVATIVE(sum, sum_vjp, linear_jvp);
  TSL_DERIVATIVE(mean, mean_vjp, linear_jvp);
  TSL_DERIVATIVE(prod, prod_vjp, prod_jvp);
  TSL_DERIVATIVE(amax, amax_vjp, amax_jvp);
  TSL_DERIVATIVE(amin, amax_vjp, amax_jvp);
  TSL_DERIVATIVE(max, max_all_vjp, max_all_jvp);
  TSL_DERIVATIVE(min, max_all_vjp, max_all_jvp);
  TSL_DERIVATIVE(max_dim, max_dim_vjp, max_dim_jvp);
  TSL_DERIVATIVE(min_dim, max_dim_vjp, max_dim_jvp);
  TSL_DERIVATIVE(logsumexp, logsumexp_vjp, logsumexp_jvp);
  TSL_DERIVATIVE(var, var_vjp, var_jvp);
  TSL_DERIVATIVE(var_dim, var_vjp, var_jvp);
  TSL_DERIVATIVE(std, std_vjp, std_jvp);
  TSL_DERIVATIVE(std_dim, std_vjp, std_jvp);
  TSL_DERIVATIVE(norm, norm_vjp, norm_jvp);
  TSL_DERIVATIVE(cumsum, cumsum_vjp, linear_jvp);
  TSL_DERIVATIVE(sort, sort_vjp, sort_jvp);
  TSL_DERIVATIVE(sort_stable, sort_vjp, sort_jvp);
  TSL_DERIVATIVE(topk, sort_vjp, sort_jvp);
}

}  // namespace tsl::autodiff
