// Batching rules of shape ops (views, reshapes, joins and splits) and of the queries of
// a tensor's shape: logical dims shift by one, sizes the program gives get [B] in
// front, and queries answer for the logical value (x.shape of a batched [B, 3] is [3]).
#include "ir/batching/batching_rules.h"

namespace tsl::batching {
namespace {

using namespace autodiff;

// transpose(x, d0, d1), narrow, select, ...: every dim argument shifted.
template <size_t D0, size_t D1>
std::vector<BVal> two_dims_rule(BatchRuleContext& c) {
  return all_batched(
      c.call_with({{0, c.materialize(c.in(0))}, {D0, c.dim_arg(D0)}, {D1, c.dim_arg(D1)}}));
}

// t(x) of a logical 0-, 1- or 2-D x: dims -1 and min(ndim - 1, 1) swapped (the identity
// for fewer than two logical dims).
std::vector<BVal> t_rule(BatchRuleContext& c) {
  Sym x = c.input(0);
  Sym other = call(OpId::min_int, {call(OpId::sub_int, {call(OpId::dim, {x}), 1}), 1});
  return {batched(transpose(x, -1, other))};
}

std::vector<BVal> permute_rule(BatchRuleContext& c) {
  std::optional<std::vector<int64_t>> k = c.constant_ints(1);
  Sym dims;
  if (k) {
    std::vector<int64_t> d = {0};
    for (int64_t v : *k) d.push_back(v >= 0 ? v + 1 : v);
    dims = int_list(d);
  } else {
    dims = call(OpId::add_list, {int_list({0}), call(OpId::batched_dims, {c.input(1)})});
    dims.value()->set_type(Type::list(Type::int_()));
  }
  return {batched(call(OpId::permute, {c.input(0), dims}))};
}

// reshape(x, shape) and view (as reshape: the batched value need not be contiguous
// where the logical one is).
std::vector<BVal> reshape_rule(BatchRuleContext& c) {
  return {batched(reshape(c.input(0), c.batched_size(c.input(1))))};
}

// reshape_as, view_as, expand_as: the op with other's logical shape.
std::vector<BVal> as_other_rule(BatchRuleContext& c) {
  OpId op = c.op() == OpId::expand_as ? OpId::expand : OpId::reshape;
  BVal r = c.apply(op, {c.in(0), c.logical_size(c.in(1))});
  return {batched(c.materialize(r))};
}

// expand(x, size), broadcast_to: x gets 1s after B up to len(size) dims, then expands
// to [B] + size.
std::vector<BVal> expand_rule(BatchRuleContext& c) {
  Sym n = call(OpId::len_list, {c.input(1)});
  Sym x = c.align(c.in(0), n);
  return all_batched(c.call_with({{0, x}, {1, c.batched_size(c.input(1))}}));
}

std::vector<BVal> flatten_rule(BatchRuleContext& c) {
  const IValue* s = c.constant_input(1);
  const IValue* e = c.constant_input(2);
  if (s && e && s->is_int() && e->is_int() && s->to_int() == 0 && e->to_int() == -1)
    return {batched(reshape(c.input(0), c.batched_size(int_list({-1}))))};
  return two_dims_rule<1, 2>(c);
}

std::vector<BVal> squeeze_rule(BatchRuleContext& c) {
  Sym x = c.input(0);
  return {batched(reshape(x, call(OpId::batched_squeeze_size, {size(x)})))};
}

// cat, stack: a batched list holds batched elements only.
std::vector<BVal> list_dim_rule(BatchRuleContext& c) {
  if (!c.batched(0)) c.error("vmap: internal: " + c.op_name() + " of an unbatched list");
  return all_batched(c.call_with({{1, c.dim_arg(1)}}));
}

// repeat(x, repeats): x gets 1s up to len(repeats) logical dims; B repeats once.
std::vector<BVal> repeat_rule(BatchRuleContext& c) {
  Sym n = call(OpId::len_list, {c.input(1)});
  Sym x = c.align(c.in(0), n);
  Sym repeats = call(OpId::add_list, {int_list({1}), c.input(1)});
  repeats.value()->set_type(Type::list(Type::int_()));
  return {batched(call(OpId::repeat, {x, repeats}))};
}

std::vector<BVal> flip_rule(BatchRuleContext& c) {
  return {batched(call(OpId::flip, {c.input(0), c.dims_arg(1)}))};
}

// sum_to_size(g, size): the logical dims of g that size lacks are summed (as 1s after
// B), then the result is viewed as [B] + size.
std::vector<BVal> sum_to_size_rule(BatchRuleContext& c) {
  Sym full = c.batched_size(c.input(1));
  Sym target = call(OpId::batched_align_size, {full, c.logical_rank(c.in(0))});
  Sym summed = call(OpId::sum_to_size, {c.input(0), target});
  return {batched(reshape(summed, full))};
}

// ---- Queries: about the logical value; never batched.

std::vector<BVal> size_rule(BatchRuleContext& c) { return {unbatched(c.logical_size(c.in(0)))}; }

std::vector<BVal> size_dim_rule(BatchRuleContext& c) {
  return {unbatched(call(OpId::size_dim, {c.input(0), c.dim_arg(1)}))};
}

std::vector<BVal> dim_query_rule(BatchRuleContext& c) {
  return {unbatched(c.logical_rank(c.in(0)))};
}

std::vector<BVal> numel_rule(BatchRuleContext& c) {
  return {unbatched(call(OpId::floor_divide_int, {numel(c.input(0)), c.batch_size()}))};
}

std::vector<BVal> len_rule(BatchRuleContext& c) {
  return {unbatched(call(OpId::size_dim, {c.input(0), 1}))};
}

// dtype, device, is_floating_point, requires_grad: the same for the batch.
std::vector<BVal> same_for_batch_rule(BatchRuleContext& c) {
  std::vector<BVal> out;
  for (Sym s : c.call_with({})) out.push_back(unbatched(s));
  return out;
}

// list_sizes_along(tensors, dim), split_piece_range(pieces, index, dim): sizes along a
// logical dim.
template <size_t D>
std::vector<BVal> list_query_rule(BatchRuleContext& c) {
  return {unbatched(c.call_with({{D, c.dim_arg(D)}}).at(0))};
}

}  // namespace

void register_shape_batching(BatchingTable& table) {
  TSL_BATCHING(t, t_rule);
  TSL_BATCHING(transpose, (two_dims_rule<1, 2>));
  TSL_BATCHING(permute, permute_rule);
  TSL_BATCHING(reshape, reshape_rule);
  TSL_BATCHING(view, reshape_rule);
  TSL_BATCHING(reshape_as, as_other_rule);
  TSL_BATCHING(view_as, as_other_rule);
  TSL_BATCHING(expand_as, as_other_rule);
  TSL_BATCHING(expand, expand_rule);
  TSL_BATCHING(broadcast_to, expand_rule);
  TSL_BATCHING(flatten, flatten_rule);
  TSL_BATCHING(squeeze, squeeze_rule);
  TSL_BATCHING(squeeze_dim, dim_rule<1>);
  TSL_BATCHING(unsqueeze, dim_rule<1>);
  TSL_BATCHING(cat, list_dim_rule);
  TSL_BATCHING(stack, list_dim_rule);
  TSL_BATCHING(split, dim_rule<2>);
  TSL_BATCHING(split_sizes, dim_rule<2>);
  TSL_BATCHING(chunk, dim_rule<2>);
  TSL_BATCHING(repeat, repeat_rule);
  TSL_BATCHING(flip, flip_rule);
  TSL_BATCHING(sum_to_size, sum_to_size_rule);
  TSL_BATCHING(size, size_rule);
  TSL_BATCHING(size_dim, size_dim_rule);
  TSL_BATCHING(dim, dim_query_rule);
  TSL_BATCHING(numel, numel_rule);
  TSL_BATCHING(len_tensor, len_rule);
  TSL_BATCHING(dtype, same_for_batch_rule);
  TSL_BATCHING(device, same_for_batch_rule);
  TSL_BATCHING(is_floating_point, same_for_batch_rule);
  TSL_BATCHING(requires_grad_attr, same_for_batch_rule);
  TSL_BATCHING(is_leaf_attr, same_for_batch_rule);
  TSL_BATCHING(list_sizes_along, list_query_rule<1>);
  TSL_BATCHING(split_piece_range, list_query_rule<2>);
  TSL_BATCHING(vmap_size, list_query_rule<1>);
}

}  // namespace tsl::batching
