// Batching rules of elementwise ops (every EW row of runtime/ops.def: operands aligned,
// then the op as is), of ops that act elementwise without being marked EW (masked_fill,
// conversions, the *_like factories) and of in-place updates.
#include "ir/batching/batching_rules.h"

namespace tsl::batching {
namespace {

using namespace autodiff;

// masked_fill(self, mask, value): the result has self's shape, so a batched mask makes
// self batched; a batched 0-dim value becomes a where.
std::vector<BVal> masked_fill_rule(BatchRuleContext& c) {
  Sym self = c.materialize(c.in(0));
  Sym mask = c.align(c.in(1), c.logical_rank(batched(self)));
  if (c.op() == OpId::masked_fill_tensor && c.batched(2)) {
    Sym value = c.align(c.in(2), c.logical_rank(batched(self)));
    return {batched(where(mask, value, self))};
  }
  return all_batched(c.call_with({{0, self}, {1, mask}}));
}

// Ops of one tensor whose other arguments are not tensors (dtype conversions, copies,
// the *_like factories): the op on the batched tensor.
std::vector<BVal> unary_rule(BatchRuleContext& c) { return all_batched(c.call_with({})); }

// add_(self, other), copy_(self, src), ...: writes into self, so self must be batched
// (functorch cannot write a batch into an unbatched tensor either); the other tensor
// operands broadcast against self's logical shape.
std::vector<BVal> inplace_rule(BatchRuleContext& c) {
  if (!c.batched(0)) {
    c.error("vmap: `" + c.op_name() +
            "` would write values that differ across the batch into a tensor that does not "
            "(its `self` is not batched, another operand is); use the out-of-place op");
  }
  Sym rank = c.logical_rank(c.in(0));
  std::vector<std::pair<size_t, Arg>> r;
  for (size_t i = 1; i < c.num_inputs(); ++i) {
    if (c.input(i).value()->type()->is_tensor() && c.batched(i))
      r.emplace_back(i, c.align(c.in(i), rank));
  }
  return all_batched(c.call_with(r));
}

// index_put_(self, indices, values, accumulate): as index_put, in place.
std::vector<BVal> index_put_inplace_rule(BatchRuleContext& c) {
  if (!c.batched(0)) {
    c.error(
        "vmap: index assignment would write values that differ across the batch into a "
        "tensor that does not (the indexed tensor is not batched); build the result out of "
        "place, with torch.where or index_put");
  }
  BVal r = c.apply(OpId::index_put, {c.in(0), c.in(1), c.in(2), c.in(3)});
  return {batched(call(OpId::copy_, {c.input(0), r.value}))};
}

}  // namespace

void register_pointwise_batching(BatchingTable& table) {
  // Every elementwise op of the table (its EW flag) broadcasts as NumPy does.
  for (int op = 0; op < kNumOps; ++op) {
    if (op_info(static_cast<OpId>(op)).has(opflags::EW))
      table[static_cast<size_t>(op)] = &pointwise_rule;
  }
  TSL_BATCHING(max_other, pointwise_rule);
  TSL_BATCHING(min_other, pointwise_rule);
  TSL_BATCHING(masked_fill_scalar, masked_fill_rule);
  TSL_BATCHING(masked_fill_tensor, masked_fill_rule);
  TSL_BATCHING(to_dtype, unary_rule);
  TSL_BATCHING(to_device, unary_rule);
  TSL_BATCHING(clone, unary_rule);
  TSL_BATCHING(contiguous, unary_rule);
  TSL_BATCHING(detach, unary_rule);
  TSL_BATCHING(zeros_like, unary_rule);
  TSL_BATCHING(ones_like, unary_rule);
  TSL_BATCHING(empty_like, unary_rule);
  TSL_BATCHING(full_like, unary_rule);
  // Every in-place update writes into a batched self (index_put_ below has its own).
  for (int op = 0; op < kNumOps; ++op) {
    if (op_info(static_cast<OpId>(op)).has(opflags::INPLACE))
      table[static_cast<size_t>(op)] = &inplace_rule;
  }
  TSL_BATCHING(index_put_, index_put_inplace_rule);
}

}  // namespace tsl::batching
