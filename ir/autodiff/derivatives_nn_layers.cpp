// Derivative rules of the neural-net layers layer_norm (and its statistic
// layer_norm_rstd) and embedding, built from reductions, elementwise ops and
// index_add, so they differentiate again.
#include "ir/autodiff/derivatives.h"

namespace tsl::autodiff {
namespace {

Sym int_list(std::vector<Sym> elements) {
  Graph& g = FormulaScope::graph();
  std::vector<Value*> values(elements.begin(), elements.end());
  Node* l = g.insert(g.create(OpId::ListConstruct, values));
  l->set_range(FormulaScope::range());
  return l->output()->set_type(Type::list(Type::int_()));
}

// layer_norm(x, normalized_shape, w, b, eps): with xhat = (x - mean) * rstd over the
// last len(normalized_shape) dims,
//   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),  dxhat = g * w,
//   dw = sum of g * xhat over the leading dims,  db = sum of g over them.
// rstd is the op layer_norm_rstd, the kernel's own statistic (Note [layer_norm's
// statistic] in runtime/kernels/cpu/nn_layer_norm.cpp): recomputed from float32 ops it
// is 0 for rows whose squares overflow, and so was every gradient of such a row. The
// rest is ops, so the rule differentiates again.
struct Normalized {
  Sym dims;  // int[]: [-k, ..., -1]
  Sym rstd;  // 1 / sqrt(var + eps), keepdim
  Sym xhat;
};
Sym normalized_dims(Sym normalized_shape) {
  Sym k = call(OpId::len_list, {normalized_shape});
  return call(OpId::range_list, {call(OpId::neg_int, {k}), 0, 1});
}
// xhat of x over dims, given its rstd.
Sym centered_scaled(Sym x, Sym dims, Sym rstd) {
  return (x - call(OpId::mean, {x, dims, true})) * rstd;
}
Normalized normalize(const RuleContext& c) {
  Normalized n;
  n.dims = normalized_dims(c.input(1));
  n.rstd = call(OpId::layer_norm_rstd, {c.input(0), c.input(1), c.input(4)});
  n.xhat = centered_scaled(c.input(0), n.dims, n.rstd);
  return n;
}
// The input's part of the gradient (or tangent) for dxhat.
Sym input_part(const Normalized& n, Sym dxhat) {
  Sym mean_d = call(OpId::mean, {dxhat, n.dims, true});
  Sym mean_dx = call(OpId::mean, {dxhat * n.xhat, n.dims, true});
  return n.rstd * (dxhat - mean_d - n.xhat * mean_dx);
}
std::vector<Sym> layer_norm_vjp(const RuleContext& c) {
  Normalized n = normalize(c);
  Sym g = c.grad();
  bool has_w = has_optional_input(c, 2), has_b = has_optional_input(c, 3);
  Sym gx, gw, gb;
  if (c.needs(0)) gx = input_part(n, has_w ? g * optional_tensor(c, 2) : g);
  if (has_w && c.needs(2)) gw = sum_to(g * n.xhat, optional_tensor(c, 2));
  if (has_b && c.needs(3)) gb = sum_to(g, optional_tensor(c, 3));
  return {gx, Sym(), gw, gb, Sym(), Sym()};
}
std::vector<Sym> layer_norm_jvp(const RuleContext& c) {
  Sym tx = c.tangent(0), tw = c.tangent(2), tb = c.tangent(3);
  if (!tx && !tw && !tb) return {Sym()};
  Normalized n = normalize(c);
  Sym out;
  if (tx) {
    Sym d = input_part(n, tx);
    out = has_optional_input(c, 2) ? d * optional_tensor(c, 2) : d;
  }
  if (tw) out = add_tangents(out, tw * n.xhat);
  if (tb) out = add_tangents(out, tb + zeros_like(c.output()));
  return {out};
}

// layer_norm_rstd(x, normalized_shape, eps) = r = (var + eps)^(-1/2) per row: with
// xhat = (x - mean) * r, dr = -r^2 mean(xhat * dx). Written as (g r) (r xhat) and
// r mean(xhat dx) r, never r^2 or r^3 alone, which under- or overflow where r does not.
std::vector<Sym> layer_norm_rstd_vjp(const RuleContext& c) {
  Sym x = c.input(0), r = c.output();
  Sym xhat = centered_scaled(x, normalized_dims(c.input(1)), r);
  Sym scale = call(OpId::div_float, {-1.0, reduced_count(x, r)});
  return {(c.grad() * r) * (r * xhat) * scale, Sym(), Sym()};
}
std::vector<Sym> layer_norm_rstd_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym r = c.output(), dims = normalized_dims(c.input(1));
  Sym xhat = centered_scaled(c.input(0), dims, r);
  return {-(r * call(OpId::mean, {xhat * t, dims, true}) * r)};
}

// embedding(input, weight, padding_idx, ...): the rows of the gradient added into the
// rows of weight the indices picked; none for the padding row.
std::optional<int64_t> constant_padding(const RuleContext& c) {
  if (!has_optional_input(c, 2)) return std::nullopt;
  const IValue* p = c.constant_input(2);
  if (!p || !p->is_int()) {
    compile_error(c.node()->range(),
                  "no gradient for embedding with a padding_idx that is not a constant");
  }
  return p->to_int();
}
void check_no_scale_by_freq(const RuleContext& c) {
  const IValue* s = c.constant_input(5);
  if (!s || !s->is_bool() || s->to_bool()) {
    compile_error(c.node()->range(),
                  "no gradient for embedding with scale_grad_by_freq in this version of TSL");
  }
}
std::vector<Sym> embedding_vjp(const RuleContext& c) {
  check_no_scale_by_freq(c);
  Sym w = c.input(1);
  Sym ids = reshape(c.input(0), std::vector<int64_t>{-1});
  Sym minus_one = constant(IValue(int64_t{-1}), Type::int_());
  Sym rows = reshape(c.grad(), int_list({minus_one, call(OpId::size_dim, {w, 1})}));
  if (std::optional<int64_t> p = constant_padding(c)) {
    Sym pad = constant(IValue(*p), Type::int_());
    // A negative padding_idx counts from the end, as F.embedding wraps it.
    if (*p < 0) pad = call(OpId::add_int, {pad, call(OpId::size_dim, {w, 0})});
    rows = where(unsqueeze(ne(ids, pad), 1), rows, 0.0);
  }
  return {Sym(), call(OpId::index_add, {zeros_like(w), 0, ids, rows})};
}
std::vector<Sym> embedding_jvp(const RuleContext& c) {
  Sym t = c.tangent(1);
  return {t ? apply_with_input(c, 1, t) : Sym()};
}

}  // namespace

void register_nn_layer_derivatives(DerivativeTable& table) {
  TSL_DERIVATIVE(layer_norm, layer_norm_vjp, layer_norm_jvp);
  TSL_DERIVATIVE(layer_norm_rstd, layer_norm_rstd_vjp, layer_norm_rstd_jvp);
  TSL_DERIVATIVE(embedding, embedding_vjp, embedding_jvp);
}

}  // namespace tsl::autodiff
