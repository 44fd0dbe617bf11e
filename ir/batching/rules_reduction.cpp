// Batching rules of reductions and of ops along one dim (softmax, cumsum, sort, topk):
// the logical dims shift by one. A reduction over all dims (dim=None) reduces the
// batched value viewed as [B, -1] along dim 1, then restores keepdim's shape.
#include "ir/batching/batching_rules.h"

namespace tsl::batching {
namespace {

using namespace autodiff;

constexpr size_t kNoKeepdim = SIZE_MAX;

enum class DimKind { Int, IntList };

// [B] + keepdim's logical shape after reducing all dims: [] or [1, 1, ...].
Sym reduce_all_size(const BatchRuleContext& c, size_t keepdim) {
  if (keepdim == kNoKeepdim) return c.batched_size(int_list({}));
  const IValue* k = c.constant_input(keepdim);
  if (k && k->is_bool() && !k->to_bool()) return c.batched_size(int_list({}));
  Sym ones = call(OpId::keepdim_size, {c.logical_size(c.in(0)), std::nullopt});
  ones.value()->set_type(Type::list(Type::int_()));
  // keepdim=False keeps none of them: the first keepdim * len(ones).
  Sym n =
      call(OpId::mul_int, {call(OpId::Int_bool, {c.input(keepdim)}), call(OpId::len_list, {ones})});
  Sym kept = call(OpId::slice_list, {ones, 0, n, 1});
  kept.value()->set_type(Type::list(Type::int_()));
  return c.batched_size(kept);
}

// Whether input d (a dim or dims argument) means every dim: None, or an empty list.
bool reduces_all(const BatchRuleContext& c, size_t d) {
  if (c.is_none(d)) return true;
  const IValue* k = c.constant_input(d);
  if (k && k->is_int()) return false;
  std::optional<std::vector<int64_t>> dims = c.constant_ints(d);
  return dims && dims->empty();
}

template <size_t D, DimKind Kind, size_t Keepdim>
std::vector<BVal> reduce_rule(BatchRuleContext& c) {
  Sym x = c.input(0);
  if (reduces_all(c, D)) {
    Sym flat = reshape(x, c.batched_size(int_list({-1})));
    Arg dim = Kind == DimKind::Int ? Arg(int64_t{1}) : Arg(std::vector<int64_t>{1});
    std::vector<std::pair<size_t, Arg>> r = {{0, flat}, {D, dim}};
    if (Keepdim != kNoKeepdim) r.emplace_back(Keepdim, false);
    std::vector<Sym> outs = c.call_with(r);
    std::vector<BVal> result;
    Sym shape = reduce_all_size(c, Keepdim);
    for (Sym s : outs) result.push_back(batched(reshape(s, shape)));
    return result;
  }
  bool known = c.constant_ints(D).has_value();
  if (!known && c.input(D).value()->type()->kind() == TypeKind::Optional) {
    c.error("vmap: `" + c.op_name() +
            "` with dims that may be None at run time is not supported (write the dims, or None, "
            "where vmap can see them)");
  }
  Sym dims;
  if (Kind == DimKind::Int) {
    dims = c.dim_arg(D);
  } else if (known) {
    dims = c.dims_arg(D);
  } else {
    dims = call(OpId::batched_reduce_dims, {c.input(D), call(OpId::dim, {x})});
  }
  return all_batched(c.call_with({{D, dims}}));
}

// max(x), min(x), var(x), std(x): reductions of every element, as their dim overloads
// of x viewed as [B, -1].
std::vector<BVal> whole_tensor_rule(BatchRuleContext& c) {
  Sym flat = reshape(c.input(0), c.batched_size(int_list({-1})));
  std::vector<int64_t> one = {1};
  switch (c.op()) {
    case OpId::max:
      return {batched(call(OpId::amax, {flat, one, false}))};
    case OpId::min:
      return {batched(call(OpId::amin, {flat, one, false}))};
    case OpId::var:
      return {batched(call(OpId::var_dim, {flat, one, c.input(1), false}))};
    case OpId::std:
      return {batched(call(OpId::std_dim, {flat, one, c.input(1), false}))};
    default:
      TSL_INTERNAL_ASSERT(false, "whole_tensor_rule of ", c.op_name());
  }
}

}  // namespace

void register_reduction_batching(BatchingTable& table) {
  TSL_BATCHING(sum, (reduce_rule<1, DimKind::IntList, 2>));
  TSL_BATCHING(mean, (reduce_rule<1, DimKind::IntList, 2>));
  TSL_BATCHING(prod, (reduce_rule<1, DimKind::Int, 2>));
  TSL_BATCHING(amax, (reduce_rule<1, DimKind::IntList, 2>));
  TSL_BATCHING(amin, (reduce_rule<1, DimKind::IntList, 2>));
  TSL_BATCHING(argmax, (reduce_rule<1, DimKind::Int, 2>));
  TSL_BATCHING(argmin, (reduce_rule<1, DimKind::Int, 2>));
  TSL_BATCHING(all, (reduce_rule<1, DimKind::Int, 2>));
  TSL_BATCHING(any, (reduce_rule<1, DimKind::Int, 2>));
  TSL_BATCHING(logsumexp, (reduce_rule<1, DimKind::IntList, 2>));
  TSL_BATCHING(var_dim, (reduce_rule<1, DimKind::IntList, 3>));
  TSL_BATCHING(std_dim, (reduce_rule<1, DimKind::IntList, 3>));
  TSL_BATCHING(norm, (reduce_rule<2, DimKind::IntList, 3>));
  TSL_BATCHING(max, whole_tensor_rule);
  TSL_BATCHING(min, whole_tensor_rule);
  TSL_BATCHING(var, whole_tensor_rule);
  TSL_BATCHING(std, whole_tensor_rule);
  TSL_BATCHING(max_dim, dim_rule<1>);
  TSL_BATCHING(min_dim, dim_rule<1>);
  TSL_BATCHING(cumsum, dim_rule<1>);
  TSL_BATCHING(sort, dim_rule<1>);
  TSL_BATCHING(sort_stable, dim_rule<2>);
  TSL_BATCHING(topk, dim_rule<2>);
  TSL_BATCHING(softmax, dim_rule<1>);
  TSL_BATCHING(log_softmax, dim_rule<1>);
}

}  // namespace tsl::batching
