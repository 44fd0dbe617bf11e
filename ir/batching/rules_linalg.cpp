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

// The positions of diagonal `d` of an n-long diagonal: rows arange(n) + max(-d, 0),
// columns arange(n) + max(d, 0), as an index list for [B, rows, columns].
Value* diagonal_index(const BatchRuleContext& c, Sym n, Sym d) {
  Sym zero = constant(IValue(int64_t{0}), Type::int_());
  Sym r = call(OpId::arange, {n, std::nullopt, std::nullopt, false});
  Sym rows = r + Sym(call(OpId::max_int, {call(OpId::neg_int, {d}), zero}));
  Sym cols = r + Sym(call(OpId::max_int, {d, zero}));
  auto entry = [](Sym t) {
    return unbatched(
        call(OpId::to_optional, {t}).value()->set_type(Type::optional(Type::tensor())));
  };
  Value* none = constant(IValue(), Type::optional(Type::tensor()));
  return c.emitter().literal_list({unbatched(none), entry(rows), entry(cols)},
                                  Type::list(Type::optional(Type::tensor())));
}

// Diagonal d of a batch of [r, c] matrices: [B, k].
Sym batched_diagonal(const BatchRuleContext& c, Sym m, Sym d) {
  Sym rows = call(OpId::size_dim, {m, 1});
  Sym cols = call(OpId::size_dim, {m, 2});
  Sym zero = constant(IValue(int64_t{0}), Type::int_());
  Sym k = call(OpId::min_int,
               {call(OpId::sub_int, {rows, call(OpId::max_int, {call(OpId::neg_int, {d}), zero})}),
                call(OpId::sub_int, {cols, call(OpId::max_int, {d, zero})})});
  k = call(OpId::max_int, {k, zero});
  return call(OpId::index, {m, diagonal_index(c, k, d)});
}

// A batch of vectors [B, n] on diagonal d of zero matrices of `size` ([B, rows, cols]).
Sym batched_diag_embed(const BatchRuleContext& c, Sym v, Sym size, Sym d) {
  Sym dt = call(OpId::dtype, {v});
  dt.value()->set_type(Type::dtype());
  Sym dt_opt = call(OpId::to_optional, {dt});
  dt_opt.value()->set_type(Type::optional(Type::dtype()));
  Sym zeros = call(OpId::zeros, {size, dt_opt, std::nullopt, false});
  Sym index = diagonal_index(c, call(OpId::size_dim, {v, 1}), d);
  return call(OpId::index_put, {zeros, index, v, false});
}

// diag(x, d): a vector's diagonal matrix or a matrix's diagonal, decided by x's rank at
// run time.
std::vector<BVal> diag_rule(BatchRuleContext& c) {
  Sym x = c.input(0);
  Sym d = c.input(1);
  Sym is_vector = call(OpId::eq_int, {c.logical_rank(c.in(0)), 1});
  Value* r = if_then_else(
      is_vector, Type::tensor(),
      [&]() -> Value* {
        Sym m = call(OpId::add_int, {call(OpId::size_dim, {x, 1}), call(OpId::abs_int, {d})});
        Graph& g = FormulaScope::graph();
        Node* size = g.insert(
            g.create(OpId::ListConstruct, {c.batch_size().value(), m.value(), m.value()}, 1));
        size->output()->set_type(Type::list(Type::int_()));
        return batched_diag_embed(c, x, size->output(), d);
      },
      [&]() -> Value* { return batched_diagonal(c, x, d); });
  return {batched(r)};
}

// diag_backward(grad, input_size, d): diag's adjoint, for the input's rank.
std::vector<BVal> diag_backward_rule(BatchRuleContext& c) {
  Sym g = c.materialize(c.in(0));
  Sym d = c.input(2);
  Sym was_vector = call(OpId::eq_int, {call(OpId::len_list, {c.input(1)}), 1});
  Value* r = if_then_else(
      was_vector, Type::tensor(), [&]() -> Value* { return batched_diagonal(c, g, d); },
      [&]() -> Value* { return batched_diag_embed(c, g, c.batched_size(c.input(1)), d); });
  return {batched(r)};
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
  TSL_BATCHING(diag, diag_rule);
  TSL_BATCHING(diag_backward, diag_backward_rule);
  TSL_BATCHING(tril, last_dims_rule);
  TSL_BATCHING(triu, last_dims_rule);
}

}  // namespace tsl::batching
