// The derivative rule table (see Note [Derivative rules]) and helpers the rule
// files share.
#include "ir/autodiff/derivatives.h"

#include <algorithm>

namespace tsl::autodiff {

const IValue* RuleContext::constant_input(size_t i) const {
  const Node* def = node_->input(i)->node();
  return def->op() == OpId::Constant ? &def->attr("value") : nullptr;
}

Sym RuleContext::reduce_to(Sym g, size_t i) const {
  if (!g || !is_tensor_input(i)) return Sym();
  Sym x = input(i);
  // Broadcasting can only have widened x when another tensor input is a different
  // value (x * x needs neither a sum nor a conversion).
  std::vector<const Value*> others;
  for (size_t k = 0; k < num_inputs(); ++k) {
    if (k != i && is_tensor_input(k) && node_->input(k) != x.value())
      others.push_back(node_->input(k));
  }
  Sym r = others.empty() ? g : sum_to(g, x);
  // Promotion (float32 x with a float64 y) makes the output's dtype differ from an
  // input's; the gradient takes the input's dtype back, unless both are known to be
  // the same. (A Python number never widens a floating tensor.)
  bool same_dtype = true;
  std::optional<DType> dx = x.value()->type()->tensor_dtype();
  for (const Value* o : others) same_dtype &= dx && o->type()->tensor_dtype() == dx;
  if (!same_dtype) r = to_dtype(r, dtype_of(x));
  return r;
}

Sym RuleContext::broadcast_from(Sym t, size_t i) const {
  if (!t || !is_tensor_input(i)) return t;
  Sym x = input(i);
  std::vector<const Value*> others;
  for (size_t k = 0; k < num_inputs(); ++k) {
    if (k != i && is_tensor_input(k) && node_->input(k) != x.value())
      others.push_back(node_->input(k));
  }
  if (others.empty()) return t;
  Sym out = output();
  Sym r = expand(t, size(out));
  bool same_dtype = true;
  std::optional<DType> dx = x.value()->type()->tensor_dtype();
  for (const Value* o : others) same_dtype &= dx && o->type()->tensor_dtype() == dx;
  if (!same_dtype) r = to_dtype(r, dtype_of(out));
  return r;
}

Sym reduced_count(Sym x, Sym y) {
  Sym nx = call(OpId::Float_int, {numel(x)});
  Sym ny = call(OpId::Float_int, {numel(y)});
  return call(OpId::div_float, {nx, ny});
}

Sym add_tangents(Sym a, Sym b) {
  if (!a) return b;
  if (!b) return a;
  return a + b;
}

Sym apply_with_input(const RuleContext& c, size_t i, Sym replacement) {
  std::vector<Arg> args;
  for (size_t k = 0; k < c.num_inputs(); ++k) args.emplace_back(k == i ? replacement : c.input(k));
  return call_multi(c.node()->op(), std::move(args), c.node()->outputs().size()).at(0);
}

std::string constant_mode(const RuleContext& c, size_t i, std::string_view what) {
  const IValue* k = c.constant_input(i);
  if (!k || !k->is_str()) {
    // A str parameter of a transformed function is a constant when the call passes a
    // literal (Note [Transforms of constant modes] in frontend/compile_transform.cpp).
    std::string w(what);
    compile_error(c.node()->range(), "no gradient for " +
                                         std::string(c.node()->info().base_name()) + " with a " +
                                         w + " known only at run time (pass a literal, " + w +
                                         "='...', also through a str parameter of the "
                                         "function: grad(f)(x, '...'))");
  }
  return k->to_str();
}

Sym optional_tensor(const RuleContext& c, size_t i) {
  Sym v = c.input(i);
  if (v.value()->type()->kind() != TypeKind::Optional) return v;
  Graph& graph = FormulaScope::graph();
  Node* u = graph.insert(graph.create(OpId::unwrap_optional, {v.value()}));
  u->set_range(FormulaScope::range());
  return Sym(u->output()->set_type(v.value()->type()->element()));
}

bool has_optional_input(const RuleContext& c, size_t i) {
  if (c.input(i).value()->type()->kind() == TypeKind::None) return false;
  const IValue* k = c.constant_input(i);
  return !(k && k->is_none());
}

const DerivativeRule* derivative_rule(OpId op) {
  static const DerivativeTable* table = [] {
    auto* t = new DerivativeTable();
    register_elementwise_derivatives(*t);
    register_reduction_derivatives(*t);
    register_shape_derivatives(*t);
    register_linalg_nn_derivatives(*t);
    register_conv_pool_derivatives(*t);
    register_einsum_derivatives(*t);
    register_nn_layer_derivatives(*t);
    return t;
  }();
  const DerivativeRule& r = (*table)[static_cast<size_t>(op)];
  return r.vjp ? &r : nullptr;
}

std::vector<bool> differentiable_inputs(const Node& n) {
  std::vector<bool> out(n.inputs().size(), false);
  const DerivativeRule* rule = derivative_rule(n.op());
  if (!rule) return out;
  try {
    // The copy reads the same constants (rules ask for modes and numbers) and values
    // of the same types otherwise; each output's gradient is an input of its own.
    Graph g;
    std::vector<Value*> ins;
    for (const Value* v : n.inputs()) {
      const Node* def = v->node();
      ins.push_back(def && def->op() == OpId::Constant
                        ? g.insert_constant(def->attr("value"), v->type())
                        : g.add_input(v->type()));
    }
    Node* copy = g.insert(g.create(n.op(), ins, n.outputs().size()));
    for (const Attribute& a : n.attributes()) copy->set_attr(a.name, a.value);
    std::vector<Sym> grads;
    for (size_t i = 0; i < n.outputs().size(); ++i) {
      copy->output(i)->set_type(n.output(i)->type());
      grads.emplace_back(g.add_input(n.output(i)->type()));
    }
    FormulaScope scope(g, n.range());
    RuleContext ctx(copy, grads, {}, std::vector<bool>(ins.size(), true));
    std::vector<Sym> res = rule->vjp(ctx);
    for (size_t i = 0; i < res.size() && i < out.size(); ++i) out[i] = static_cast<bool>(res[i]);
  } catch (const std::exception&) {
    std::fill(out.begin(), out.end(), false);
  }
  return out;
}

}  // namespace tsl::autodiff
