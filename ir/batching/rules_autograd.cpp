// Batching rules of the ops autodiff builds gradient graphs from (vmap of grad, jacrev,
// hessian): undefined-aware sums, and the gradients of lists of tensors. A gradient may
// be undefined (zero) at run time, and an undefined gradient is the same for every
// batch element, so it counts as batched: a batched list gradient holds batched or
// undefined entries.
#include "ir/batching/batching_rules.h"

namespace tsl::batching {
namespace {

using namespace autodiff;

// A list gradient that is undefined or has only undefined entries where it is made.
bool all_undefined_list(const Value* v) {
  OpId op = v->node()->op();
  return op == OpId::Undefined || op == OpId::AutogradListZeros;
}

// Gradient operand v as a batched value: a tensor expanded to B where it is defined
// (an undefined one stays undefined), an Optional's tensor likewise, a list gradient
// only when all its entries are undefined.
Value* batched_gradient(const BatchRuleContext& c, const BVal& v) {
  if (v.batched || v.value->node()->op() == OpId::Undefined) return v.value;
  const TypePtr& type = v.value->type();
  if (type->kind() == TypeKind::List) {
    if (all_undefined_list(v.value)) return v.value;
    return batched_list(v.value, c.batch_size(), false);
  }
  BVal tensor = v;
  bool optional = type->kind() == TypeKind::Optional;
  if (optional) {
    if (v.value->node()->op() != OpId::to_optional) return v.value;  // None stays None
    tensor.value = v.value->node()->input(0);
  }
  Sym defined = call(OpId::AnyDefined, {tensor.value});
  Graph& g = FormulaScope::graph();
  Node* branch = g.insert(g.create(OpId::If, {defined}, 1));
  branch->set_range(c.range());
  Block* then_block = branch->add_block();
  Block* else_block = branch->add_block();
  {
    InsertPointGuard in(g, then_block);
    then_block->add_return(c.materialize(tensor));
  }
  {
    InsertPointGuard in(g, else_block);
    else_block->add_return(undefined());
  }
  Value* b = branch->output()->set_type(Type::tensor());
  if (!optional) return b;
  return call(OpId::to_optional, {b}).value()->set_type(type);
}

// AutogradAdd(a, b), AutogradZeros(grad, like): either may be undefined at run time,
// when the result is the other one, so both are made batched. Their logical shapes are
// equal: no alignment.
std::vector<BVal> gradient_sum_rule(BatchRuleContext& c) {
  return all_batched(
      c.call_with({{0, batched_gradient(c, c.in(0))}, {1, batched_gradient(c, c.in(1))}}));
}

// AutogradListZeros(like): undefined entries, the same for the batch.
std::vector<BVal> list_zeros_rule(BatchRuleContext& c) { return all_batched(c.call_with({})); }

// AutogradListAdd(grads, like, index, grad), AutogradListPush(grads, like, last): the
// list gradient and the new entry batched; `like` gives only a length.
template <size_t Entry>
std::vector<BVal> list_update_rule(BatchRuleContext& c) {
  return all_batched(
      c.call_with({{0, batched_gradient(c, c.in(0))}, {Entry, batched_gradient(c, c.in(Entry))}}));
}

// AutogradListPop(grads, like), AutogradListItem(grads, index, like): an entry reshaped
// to `like`, which gets the batch dim.
template <size_t Like>
std::vector<BVal> list_read_rule(BatchRuleContext& c) {
  return all_batched(
      c.call_with({{0, batched_gradient(c, c.in(0))}, {Like, c.materialize(c.in(Like))}}));
}

// AutogradListCat(grads, like, dim): undefined entries are zeros like the elements of
// `like`, which get the batch dim.
std::vector<BVal> list_cat_rule(BatchRuleContext& c) {
  Value* like = c.batched(1) ? c.input(1).value() : batched_list(c.input(1), c.batch_size(), false);
  return all_batched(
      c.call_with({{0, batched_gradient(c, c.in(0))}, {1, like}, {2, c.dim_arg(2)}}));
}

}  // namespace

void register_autograd_batching(BatchingTable& table) {
  TSL_BATCHING(AutogradAdd, gradient_sum_rule);
  TSL_BATCHING(AutogradZeros, gradient_sum_rule);
  TSL_BATCHING(AutogradListZeros, list_zeros_rule);
  TSL_BATCHING(AutogradListAdd, list_update_rule<3>);
  TSL_BATCHING(AutogradListPush, list_update_rule<2>);
  TSL_BATCHING(AutogradListPop, list_read_rule<1>);
  TSL_BATCHING(AutogradListItem, list_read_rule<2>);
  TSL_BATCHING(AutogradListCat, list_cat_rule);
}

}  // namespace tsl::batching
