// Derivative rules of einsum and einsum_backward. See Note [einsum gradients].
#include "ir/autodiff/derivatives.h"
#include "runtime/kernels/einsum_equation.h"

namespace tsl::autodiff {
namespace {

// Note [einsum gradients]
// einsum is linear in each operand: <g, einsum(x_1, ..., x_n)> is the sum, over every
// value of every subscript, of g[O] x_1[S_1] ... x_n[S_n], which is symmetric in g and
// the operands. So the gradient for x_k is the same sum with g in x_k's place:
//
//   einsum_backward("O,S_1,...(without S_k)...->S_k", [g, x_j for j != k], size(x_k))
//
// where S_k as an output may repeat a subscript ('ii->i': the gradient fills a
// diagonal), hold one no other term has ('ij->': the gradient broadcasts) or be 1 where
// the subscript is larger elsewhere (x_k was broadcast: the gradient sums it).
// einsum_backward is einsum with those three allowed and its output's sizes given. It
// is linear in each operand too, so its gradients are einsum_backward again and
// gradients of any order stay in the family; its tangent is the sum of the op with one
// operand replaced by its tangent.

// The parsed equation (input 0), which must be a constant to be differentiated.
EinsumEquation equation_of(const RuleContext& c) {
  const IValue* eq = c.constant_input(0);
  if (!eq || !eq->is_str()) {
    compile_error(c.node()->range(), "no gradient for " + std::string(c.node()->info().name) +
                                         " with an equation known only at run time (pass a "
                                         "literal, also through a str parameter of the "
                                         "function: grad(f)(x, 'i,i->'))");
  }
  try {
    return parse_einsum_equation(eq->to_str(), /*checked_output=*/false);
  } catch (const Error& e) {
    compile_error(c.node()->range(), e.what());
  }
}

// The elements of the operand list: those of a list written out, else read by index.
std::vector<Sym> operands_of(Sym list, size_t n) {
  const Node* def = list.value()->node();
  bool literal = def->op() == OpId::ListConstruct && def->inputs().size() == n;
  for (const Use& u : list.value()->uses()) literal &= u.user->op() != OpId::append_list;
  std::vector<Sym> out;
  for (size_t k = 0; k < n; ++k) {
    out.push_back(literal ? Sym(def->input(k))
                          : call(OpId::getitem_list, {list, static_cast<int64_t>(k)}));
  }
  return out;
}

Sym tensor_list(const std::vector<Sym>& elements) {
  Graph& g = FormulaScope::graph();
  std::vector<Value*> values(elements.begin(), elements.end());
  Node* l = g.insert(g.create(OpId::ListConstruct, values));
  l->set_range(FormulaScope::range());
  return l->output()->set_type(Type::list(Type::tensor()));
}

std::vector<Sym> einsum_vjp(const RuleContext& c) {
  EinsumEquation e = equation_of(c);
  std::vector<Sym> x = operands_of(c.input(1), e.operands.size());
  std::vector<Sym> grads;
  for (size_t k = 0; k < x.size(); ++k) {
    if (!c.needs_element(1, k)) {
      grads.push_back(undefined());  // an operand without a gradient (data, a constant)
      continue;
    }
    EinsumEquation back;
    back.operands.push_back(e.output);
    std::vector<Sym> args{c.grad()};
    for (size_t j = 0; j < x.size(); ++j) {
      if (j == k) continue;
      back.operands.push_back(e.operands[j]);
      args.push_back(x[j]);
    }
    back.output = e.operands[k];
    grads.push_back(call(OpId::einsum_backward,
                         {einsum_equation_str(back).c_str(), tensor_list(args), size(x[k])}));
  }
  return {Sym(), tensor_list(grads), Sym()};
}

std::vector<Sym> einsum_jvp(const RuleContext& c) {
  Sym tangents = c.tangent(1);  // a list of tangents, zeros for constant operands
  if (!tangents) return {Sym()};
  EinsumEquation e = equation_of(c);
  size_t n = e.operands.size();
  std::vector<Sym> x = operands_of(c.input(1), n), t = operands_of(tangents, n);
  Sym out;
  for (size_t k = 0; k < n; ++k) {
    std::vector<Sym> args = x;
    args[k] = t[k];
    std::vector<Arg> call_args{c.input(0), tensor_list(args)};
    for (size_t i = 2; i < c.num_inputs(); ++i) call_args.emplace_back(c.input(i));
    out = add_tangents(out, call(c.node()->op(), std::move(call_args)));
  }
  return {out};
}

}  // namespace

void register_einsum_derivatives(DerivativeTable& table) {
  TSL_DERIVATIVE(einsum, einsum_vjp, einsum_jvp);
  TSL_DERIVATIVE(einsum_backward, einsum_vjp, einsum_jvp);
}

}  // namespace tsl::autodiff
