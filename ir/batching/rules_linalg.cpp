// Batching rules of linear algebra: matmul views its operands so that matmul's own
// broadcasting carries the batch dim (batched_matmul_sizes); mm and bmm are matmuls of
// batched matrices; dot, mv, outer, linear and baddbmm decompose into matmul and
// elementwise ops; einsum gives the batch dim a subscript of its own.
#include "ir/batching/batching_rules.h"
#include "runtime/kernels/einsum_equation.h"

namespace tsl::batching {
namespace {

using namespace autodiff;

// matmul(a, b) with either batched: a batched vector becomes a row (a column on the
// right), batched operands get 1s after B to line B up with no batch dim of the other,
// and the product is viewed as [B] + matmul's logical result.
std::vector<BVal> matmul_rule(BatchRuleContext& c) {
  Sym a = c.input(0);
  Sym b = c.input(1);
  std::vector<Sym> sizes =
      call_multi(OpId::batched_matmul_sizes, {size(a), c.batched(0), size(b), c.batched(1)}, 3);
  Sym pa = c.batched(0) ? reshape(a, sizes[0]) : a;
  Sym pb = c.batched(1) ? reshape(b, sizes[1]) : b;
  return {batched(reshape(matmul(pa, pb), sizes[2]))};
}

// mm(a, b), bmm(a, b): operands of the same rank; matmul broadcasts B as a batch dim.
std::vector<BVal> matrix_product_rule(BatchRuleContext& c) {
  return {batched(matmul(c.input(0), c.input(1)))};
}

// dot(a, b), mv(m, v): matmul's cases for these ranks.
std::vector<BVal> as_matmul_rule(BatchRuleContext& c) {
  return {c.apply(OpId::matmul, {c.in(0), c.in(1)})};
}

// outer(a, b) = a[:, None] * b[None, :].
std::vector<BVal> outer_rule(BatchRuleContext& c) {
  BVal a = c.apply(OpId::unsqueeze, {c.in(0), -1});
  BVal b = c.apply(OpId::unsqueeze, {c.in(1), 0});
  return {c.apply(OpId::mul, {a, b})};
}

// linear(x, w, bias): with only x batched, linear itself (x's leading dims are batch
// dims to it); otherwise x @ w.T + bias.
std::vector<BVal> linear_rule(BatchRuleContext& c) {
  if (!c.batched(1) && !c.batched(2)) return all_batched(c.call_with({}));
  BVal wt = c.apply(OpId::t, {c.in(1)});
  BVal y = c.apply(OpId::matmul, {c.in(0), wt});
  if (c.is_none(2)) return {y};
  BVal bias = c.in(2);
  if (bias.value->type()->kind() == TypeKind::Optional) {
    if (bias.value->node()->op() != OpId::to_optional)
      c.error("vmap: linear with a bias that may be None at run time is not supported");
    bias.value = bias.value->node()->input(0);
  }
  return {c.apply(OpId::add, {y, bias})};
}

// baddbmm(self, b1, b2, beta, alpha) = beta * self + alpha * bmm(b1, b2) (self is
// ignored where beta is 0, as in PyTorch).
std::vector<BVal> baddbmm_rule(BatchRuleContext& c) {
  BVal product = c.apply(OpId::mul, {c.apply(OpId::bmm, {c.in(1), c.in(2)}), c.in(4)});
  const IValue* beta = c.constant_input(3);
  if (beta && beta->is_number() && beta->to_double() == 0.0)
    return {batched(c.materialize(product))};
  BVal scaled = c.apply(OpId::mul, {c.in(0), c.in(3)});
  return {c.apply(OpId::add, {scaled, product})};
}

// einsum(equation, operands), einsum_backward(equation, operands, size): the batch dim
// gets a subscript no term uses, first in each batched operand and in the result.
std::vector<BVal> einsum_rule(BatchRuleContext& c) {
  const IValue* eq = c.constant_input(0);
  if (!eq || !eq->is_str()) c.error("vmap: einsum needs its equation as a constant string");
  bool backward = c.op() == OpId::einsum_backward;
  EinsumEquation e = parse_einsum_equation(eq->to_str(), !backward);
  std::vector<bool> used(kEinsumLetters, false);
  for (const auto& term : e.operands) {
    for (int s : term) {
      if (s != kEllipsis) used[static_cast<size_t>(s)] = true;
    }
  }
  for (int s : e.output) {
    if (s != kEllipsis) used[static_cast<size_t>(s)] = true;
  }
  int letter = 0;
  while (letter < kEinsumLetters && used[static_cast<size_t>(letter)]) ++letter;
  if (letter == kEinsumLetters) c.error("vmap: einsum uses every subscript letter");
  std::optional<std::vector<BVal>> operands = c.emitter().list_elements(c.input(1).value());
  std::vector<bool> batched_operand(e.operands.size(), c.batched(1));
  Value* list = c.input(1);
  if (operands && operands->size() == e.operands.size()) {
    std::vector<BVal> unchanged;
    for (size_t i = 0; i < operands->size(); ++i) {
      batched_operand[i] = (*operands)[i].batched;
      unchanged.push_back(unbatched((*operands)[i].value));
    }
    list = c.emitter().literal_list(unchanged, c.input(1).value()->type());
  }
  for (size_t i = 0; i < e.operands.size(); ++i) {
    if (batched_operand[i]) e.operands[i].insert(e.operands[i].begin(), letter);
  }
  e.output.insert(e.output.begin(), letter);
  Sym equation = constant(IValue(einsum_equation_str(e)), Type::str_());
  if (backward)
    return all_batched(c.call_with({{0, equation}, {1, list}, {2, c.batched_size(c.input(2))}}));
  return all_batched(c.call_with({{0, equation}, {1, list}}));
}

// tril, triu: the last two dims, whatever comes before.
std::vector<BVal> last_dims_rule(BatchRuleContext& c) { return all_batched(c.call_with({})); }

}  // namespace

void register_linalg_batching(BatchingTable& table) {
  TSL_BATCHING(matmul, matmul_rule);
  TSL_BATCHING(mm, matrix_product_rule);
  TSL_BATCHING(bmm, matrix_product_rule);
  TSL_BATCHING(dot, as_matmul_rule);
  TSL_BATCHING(mv, as_matmul_rule);
  TSL_BATCHING(outer, outer_rule);
  TSL_BATCHING(linear, linear_rule);
  TSL_BATCHING(baddbmm, baddbmm_rule);
  TSL_BATCHING(einsum, einsum_rule);
  TSL_BATCHING(einsum_backward, einsum_rule);
  TSL_BATCHING(tril, last_dims_rule);
  TSL_BATCHING(triu, last_dims_rule);
}

}  // namespace tsl::batching
