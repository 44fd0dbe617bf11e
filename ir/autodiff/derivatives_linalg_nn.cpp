// Derivative rules of the products (matmul and friends, linear) and the neural-net
// ops (softmax, log_softmax, the losses, dropout).
#include "ir/autodiff/derivatives.h"

namespace tsl::autodiff {
namespace {

Sym mT(Sym x) { return transpose(x, -2, -1); }

// matmul: with 1-D operands seen as matrices ([n] on the left is [1, n], on the right
// [n, 1]) and batch dims broadcast, the gradients are g @ b^T and a^T @ g, summed
// over the broadcast batch dims and reshaped back to the operands.
std::vector<Sym> matmul_vjp(const RuleContext& c) {
  Sym a = c.input(0), b = c.input(1);
  Sym am = reshape(a, call(OpId::matmul_operand_size, {size(a), true}));
  Sym bm = reshape(b, call(OpId::matmul_operand_size, {size(b), false}));
  Sym gm = reshape(c.grad(), call(OpId::matmul_full_size, {size(a), size(b)}));
  Sym ga, gb;
  if (c.needs(0)) ga = reshape(sum_to(matmul(gm, mT(bm)), am), size(a));
  if (c.needs(1)) gb = reshape(sum_to(matmul(mT(am), gm), bm), size(b));
  return {ga, gb};
}
// Products are bilinear: d(a b) = da b + a db.
std::vector<Sym> bilinear_jvp(const RuleContext& c) {
  Sym ta = c.tangent(0), tb = c.tangent(1);
  OpId op = c.node()->op();
  return {add_tangents(ta ? call(op, {ta, c.input(1)}) : Sym(),
                       tb ? call(op, {c.input(0), tb}) : Sym())};
}
std::vector<Sym> mm_vjp(const RuleContext& c) {
  Sym g = c.grad();
  return {c.needs(0) ? call(OpId::mm, {g, call(OpId::t, {c.input(1)})}) : Sym(),
          c.needs(1) ? call(OpId::mm, {call(OpId::t, {c.input(0)}), g}) : Sym()};
}
std::vector<Sym> bmm_vjp(const RuleContext& c) {
  Sym g = c.grad();
  return {c.needs(0) ? call(OpId::bmm, {g, transpose(c.input(1), 1, 2)}) : Sym(),
          c.needs(1) ? call(OpId::bmm, {transpose(c.input(0), 1, 2), g}) : Sym()};
}
std::vector<Sym> mv_vjp(const RuleContext& c) {
  Sym g = c.grad();
  return {c.needs(0) ? call(OpId::outer, {g, c.input(1)}) : Sym(),
          c.needs(1) ? call(OpId::mv, {call(OpId::t, {c.input(0)}), g}) : Sym()};
}
std::vector<Sym> dot_vjp(const RuleContext& c) {
  Sym g = c.grad();
  return {c.needs(0) ? g * c.input(1) : Sym(), c.needs(1) ? g * c.input(0) : Sym()};
}
std::vector<Sym> outer_vjp(const RuleContext& c) {
  Sym g = c.grad();
  return {c.needs(0) ? call(OpId::mv, {g, c.input(1)}) : Sym(),
          c.needs(1) ? call(OpId::mv, {call(OpId::t, {g}), c.input(0)}) : Sym()};
}

// linear(x, w, b) = x @ w^T + b, x of any rank >= 1.
std::vector<Sym> linear_vjp(const RuleContext& c) {
  Sym x = c.input(0), w = c.input(1), g = c.grad();
  Sym gx, gw, gb;
  if (c.needs(0)) gx = matmul(g, w);
  if (c.needs(1)) {
    Graph& graph = FormulaScope::graph();
    auto rows = [&](Sym v, Sym cols) {
      Sym minus_one = constant(IValue(int64_t{-1}), Type::int_());
      Node* l = graph.insert(graph.create(OpId::ListConstruct, {minus_one, cols}));
      l->set_range(FormulaScope::range());
      return reshape(v, Sym(l->output()->set_type(Type::list(Type::int_()))));
    };
    Sym out_features = call(OpId::size_dim, {w, 0});
    Sym in_features = call(OpId::size_dim, {w, 1});
    gw = call(OpId::mm, {call(OpId::t, {rows(g, out_features)}), rows(x, in_features)});
  }
  if (c.needs(2) && has_optional_input(c, 2)) gb = sum_to(g, optional_tensor(c, 2));
  return {gx, gw, gb};
}
std::vector<Sym> linear_jvp(const RuleContext& c) {
  Sym tx = c.tangent(0), tw = c.tangent(1), tb = c.tangent(2);
  Sym out;
  if (tx) out = call(OpId::linear, {tx, c.input(1), std::nullopt});
  if (tw) out = add_tangents(out, call(OpId::linear, {c.input(0), tw, std::nullopt}));
  if (tb) out = add_tangents(out, tb + zeros_like(c.output()));
  return {out};
}

// baddbmm(self, b1, b2, beta, alpha) = beta self + alpha b1 @ b2; self broadcasts.
std::vector<Sym> baddbmm_vjp(const RuleContext& c) {
  Sym g = c.grad(), beta = c.input(3), alpha = c.input(4);
  Sym gself, g1, g2;
  if (c.needs(0)) gself = c.reduce_to(g * beta, 0);
  if (c.needs(1)) g1 = call(OpId::bmm, {g, transpose(c.input(2), 1, 2)}) * alpha;
  if (c.needs(2)) g2 = call(OpId::bmm, {transpose(c.input(1), 1, 2), g}) * alpha;
  return {gself, g1, g2};
}
// Linear in self and b1 together (baddbmm of their tangents), plus b1 @ t2.
std::vector<Sym> baddbmm_jvp(const RuleContext& c) {
  Sym ts = c.tangent(0), t1 = c.tangent(1), t2 = c.tangent(2);
  Sym out;
  if (ts || t1) {
    out = call(OpId::baddbmm, {ts ? ts : zeros_like(c.input(0)), t1 ? t1 : zeros_like(c.input(1)),
                               c.input(2), c.input(3), c.input(4)});
  }
  if (t2) out = add_tangents(out, call(OpId::bmm, {c.input(1), t2}) * c.input(4));
  return {out};
}

// softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g).
Sym dim_list(Sym dim) {
  Graph& g = FormulaScope::graph();
  Node* l = g.insert(g.create(OpId::ListConstruct, {dim}));
  l->set_range(FormulaScope::range());
  return l->output()->set_type(Type::list(Type::int_()));
}
std::vector<Sym> softmax_vjp(const RuleContext& c) {
  Sym y = c.output(), g = c.grad();
  Sym dim = dim_list(c.input(1));
  return {to_dtype(y * (g - sum(g * y, dim, true)), dtype_of(c.input(0)))};
}
std::vector<Sym> softmax_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym y = c.output();
  Sym dim = dim_list(c.input(1));
  return {y * (t - sum(t * y, dim, true))};
}
std::vector<Sym> log_softmax_vjp(const RuleContext& c) {
  Sym y = c.output(), g = c.grad();
  Sym dim = dim_list(c.input(1));
  return {to_dtype(g - exp(y) * sum(g, dim, true), dtype_of(c.input(0)))};
}
std::vector<Sym> log_softmax_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym dim = dim_list(c.input(1));
  return {t - sum(exp(c.output()) * t, dim, true)};
}

// nll_loss(input, target, weight, ignore_index, reduction): input is [N, C] (or [C]
// without a batch), target [N] class indices. The loss of row i is -w[t_i] x[i, t_i];
// its gradient puts -w[t_i] (scaled by the reduction) at [i, t_i].
struct NllParts {
  Sym class_dim;  // int: 1, or 0 for an unbatched [C] input
  Sym weights;    // per-row weight w[t_i] (0 for ignored rows), shaped like target
  Sym safe_target;
};
NllParts nll_parts(Sym input, Sym target, Sym weight, Sym ignore_index, bool has_weight) {
  NllParts p;
  p.class_dim = call(OpId::min_int, {call(OpId::sub_int, {call(OpId::dim, {input}), 1}), 1});
  Sym keep = ne(target, ignore_index);
  p.safe_target = where(keep, target, 0);
  Sym w = has_weight ? call(OpId::index_select,
                            {weight, 0, reshape(p.safe_target, std::vector<int64_t>{-1})})
                     : Sym();
  Sym kept = to_dtype(keep, dtype_of(input));
  p.weights = has_weight ? reshape(w, size(target)) * kept : kept;
  return p;
}
// The gradient of nll_loss with respect to its input, for output gradient g.
Sym nll_input_grad(Sym g, Sym input, Sym target, Sym weight, Sym ignore_index, bool has_weight,
                   const std::string& red) {
  NllParts p = nll_parts(input, target, weight, ignore_index, has_weight);
  Sym scale = -p.weights;
  if (red == "mean") {
    scale = scale / sum_all(p.weights);
  }
  scale = scale * g;  // g is 0-dim for mean/sum, shaped like target for 'none'
  Sym idx = unsqueeze(p.safe_target, p.class_dim);
  return call(OpId::scatter_add,
              {zeros_like(input), p.class_dim, idx, unsqueeze(scale, p.class_dim)});
}
std::vector<Sym> nll_loss_vjp(const RuleContext& c) {
  return {nll_input_grad(c.grad(), c.input(0), c.input(1), c.input(2), c.input(3),
                         has_optional_input(c, 2), constant_mode(c, 4, "reduction"))};
}
std::vector<Sym> nll_loss_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  // Linear in the input: the loss of the tangent.
  return {apply_with_input(c, 0, t)};
}
// cross_entropy = nll_loss(log_softmax(input, class dim)), and with label smoothing e
// PyTorch's (1 - e) nll + (e / C) R, where R reduces each kept row's
// -sum_c w_c log p_c (w_c = 1 without class weights; ignored rows are 0; 'mean'
// divides by the kept rows' target weights, as nll_loss does). The smoothing's
// gradient is built for class-index targets. e is a constant (0: no smoothing nodes)
// or a float known at run time.
struct LabelSmoothing {
  bool present = false;  // a constant 0 builds none of the smoothing's nodes
  std::optional<double> constant;
  Sym value;  // when not a constant
  // (1 - e) a + e b
  Sym mix(Sym a, Sym b) const {
    if (constant) return a * (1.0 - *constant) + b * *constant;
    return a - a * value + b * value;
  }
};
LabelSmoothing label_smoothing(const RuleContext& c) {
  LabelSmoothing e;
  const IValue* ls = c.constant_input(5);
  if (ls && ls->is_number()) {
    e.constant = ls->to_double();
    e.present = *e.constant != 0.0;
  } else {
    e.present = true;
    e.value = c.input(5);
  }
  return e;
}
struct CrossEntropyParts {
  Sym cdim, lsm, classes, kept;  // kept: 1.0 for rows whose target is not ignored
  Sym class_weights;             // w_c along the class dim, shaped like lsm
  Sym mean_divisor;              // the kept rows' target weights, summed
  std::string reduction;
};
// The smoothing's parts are built only with smoothing, so that the gradient graph of a
// plain cross_entropy (which `:grad` shows) has no node it does not use.
CrossEntropyParts cross_entropy_parts(const RuleContext& c, bool smoothing) {
  CrossEntropyParts p;
  Sym x = c.input(0);
  p.cdim = call(OpId::min_int, {call(OpId::sub_int, {call(OpId::dim, {x}), 1}), 1});
  p.lsm = call(OpId::log_softmax, {x, p.cdim});
  if (!smoothing) return p;
  p.classes = call(OpId::Float_int, {call(OpId::size_dim, {x, p.cdim})});
  p.kept = to_dtype(ne(c.input(1), c.input(3)), dtype_of(x));
  p.reduction = constant_mode(c, 4, "reduction");
  const bool has_weight = has_optional_input(c, 2);
  // w along the class dim: broadcast on the last dim, moved to the class dim.
  p.class_weights =
      has_weight
          ? call(OpId::transpose,
                 {call(OpId::transpose, {ones_like(p.lsm), p.cdim, -1}) * c.input(2), p.cdim, -1})
          : ones_like(p.lsm);
  p.mean_divisor =
      sum_all(nll_parts(p.lsm, c.input(1), c.input(2), c.input(3), has_weight).weights);
  return p;
}
std::vector<Sym> cross_entropy_vjp(const RuleContext& c) {
  const LabelSmoothing e = label_smoothing(c);
  CrossEntropyParts p = cross_entropy_parts(c, e.present);
  Sym glsm = nll_input_grad(c.grad(), p.lsm, c.input(1), c.input(2), c.input(3),
                            has_optional_input(c, 2), constant_mode(c, 4, "reduction"));
  if (e.present) {
    // d R / d log p[i, c] = -kept_i g_i (over the kept rows' count for 'mean').
    Sym rows = p.kept * c.grad();
    if (p.reduction == "mean") rows = rows / p.mean_divisor;
    Sym smooth = -unsqueeze(rows, p.cdim) * p.class_weights;
    glsm = e.mix(glsm, smooth / p.classes);
  }
  return {glsm - exp(p.lsm) * sum(glsm, dim_list(p.cdim), true)};
}
std::vector<Sym> cross_entropy_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  const LabelSmoothing e = label_smoothing(c);
  CrossEntropyParts p = cross_entropy_parts(c, e.present);
  Sym tl = t - sum(exp(p.lsm) * t, dim_list(p.cdim), true);
  Sym out = call(OpId::nll_loss, {tl, c.input(1), c.input(2), c.input(3), c.input(4)});
  if (!e.present) return {out};
  Sym rows = -sum(tl * p.class_weights, dim_list(p.cdim), false) * p.kept;
  Sym r = p.reduction == "none"  ? rows
          : p.reduction == "sum" ? sum_all(rows)
                                 : sum_all(rows) / p.mean_divisor;
  return {e.mix(out, r / p.classes)};
}

// mse_loss(a, b, reduction): 2 (a - b) scaled by the reduction.
Sym mse_partial(const RuleContext& c) {
  Sym d = (c.input(0) - c.input(1)) * 2.0;
  if (constant_mode(c, 2, "reduction") == "mean") {
    d = d / call(OpId::Float_int, {numel(d)});
  }
  return d;
}
std::vector<Sym> mse_loss_vjp(const RuleContext& c) {
  Sym ga = mse_partial(c) * c.grad();
  return {c.needs(0) ? c.reduce_to(ga, 0) : Sym(), c.needs(1) ? c.reduce_to(-ga, 1) : Sym()};
}
std::vector<Sym> mse_loss_jvp(const RuleContext& c) {
  Sym ta = c.tangent(0), tb = c.tangent(1);
  Sym t = ta && tb ? ta - tb : ta ? ta : tb ? -tb : Sym();
  if (!t) return {Sym()};
  Sym dt = mse_partial(c) * t;
  if (constant_mode(c, 2, "reduction") == "none") return {dt};
  return {sum_all(dt)};
}

// binary_cross_entropy(p, t, weight, reduction), PyTorch's formulas:
// d/dp = (p - t) / max((1 - p) p, 1e-12); d/dt = log(1 - p) - log(p), logs >= -100.
Sym bce_scale(const RuleContext& c, Sym g) {
  Sym s = g;
  if (has_optional_input(c, 2)) s = s * c.input(2);
  if (constant_mode(c, 3, "reduction") == "mean") {
    s = s / call(OpId::Float_int, {numel(c.input(0))});
  }
  return s;
}
std::vector<Sym> bce_vjp(const RuleContext& c) {
  Sym p = c.input(0), t = c.input(1);
  Sym s = bce_scale(c, c.grad());
  Sym gp, gt;
  if (c.needs(0)) {
    Sym denom = call(OpId::clamp, {(1.0 - p) * p, 1e-12, std::nullopt});
    gp = c.reduce_to(s * (p - t) / denom, 0);
  }
  if (c.needs(1)) {
    Sym l1 = call(OpId::clamp, {log(1.0 - p), -100.0, std::nullopt});
    Sym l0 = call(OpId::clamp, {log(p), -100.0, std::nullopt});
    gt = c.reduce_to(s * (l1 - l0), 1);
  }
  return {gp, gt};
}
std::vector<Sym> bce_jvp(const RuleContext& c) {
  Sym tp = c.tangent(0), tt = c.tangent(1);
  if (!tp && !tt) return {Sym()};
  Sym p = c.input(0), t = c.input(1);
  Sym ones = ones_like(p);
  Sym d;
  if (tp) {
    Sym denom = call(OpId::clamp, {(1.0 - p) * p, 1e-12, std::nullopt});
    d = tp * (p - t) / denom;
  }
  if (tt) {
    Sym l1 = call(OpId::clamp, {log(1.0 - p), -100.0, std::nullopt});
    Sym l0 = call(OpId::clamp, {log(p), -100.0, std::nullopt});
    d = add_tangents(d, tt * (l1 - l0));
  }
  Sym scaled = bce_scale(c, ones) * d;
  if (constant_mode(c, 3, "reduction") == "none") return {scaled};
  return {sum_all(scaled)};
}

// dropout: autodiff rewrites dropout(x) into x * dropout(ones_like(x)) before
// differentiating (see rewrite_dropout in differentiate.cpp), so the mask is an
// ordinary value. This rule covers a dropout node met anyway: kept elements are
// nonzero in the output unless x itself was 0 there.
std::vector<Sym> dropout_vjp(const RuleContext& c) {
  Sym y = c.output(), x = c.input(0);
  return {where(ne(x, 0.0), c.grad() * y / where(ne(x, 0.0), x, 1.0), 0.0)};
}
std::vector<Sym> dropout_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym y = c.output(), x = c.input(0);
  return {where(ne(x, 0.0), t * y / where(ne(x, 0.0), x, 1.0), 0.0)};
}

}  // namespace

void register_linalg_nn_derivatives(DerivativeTable& table) {
  TSL_DERIVATIVE(matmul, matmul_vjp, bilinear_jvp);
  TSL_DERIVATIVE(mm, mm_vjp, bilinear_jvp);
  TSL_DERIVATIVE(bmm, bmm_vjp, bilinear_jvp);
  TSL_DERIVATIVE(mv, mv_vjp, bilinear_jvp);
  TSL_DERIVATIVE(dot, dot_vjp, bilinear_jvp);
  TSL_DERIVATIVE(outer, outer_vjp, bilinear_jvp);
  TSL_DERIVATIVE(linear, linear_vjp, linear_jvp);
  TSL_DERIVATIVE(baddbmm, baddbmm_vjp, baddbmm_jvp);
  TSL_DERIVATIVE(softmax, softmax_vjp, softmax_jvp);
  TSL_DERIVATIVE(log_softmax, log_softmax_vjp, log_softmax_jvp);
  TSL_DERIVATIVE(nll_loss, nll_loss_vjp, nll_loss_jvp);
  TSL_DERIVATIVE(cross_entropy, cross_entropy_vjp, cross_entropy_jvp);
  TSL_DERIVATIVE(mse_loss, mse_loss_vjp, mse_loss_jvp);
  TSL_DERIVATIVE(binary_cross_entropy, bce_vjp, bce_jvp);
  TSL_DERIVATIVE(dropout, dropout_vjp, dropout_jvp);
}

}  // namespace tsl::autodiff
