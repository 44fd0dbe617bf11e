// Batching rules of indexing: basic indexing (select, slice, narrow) shifts its dim;
// advanced indexing (x[idx], x[mask], index_put) indexes the batch dim with a full
// slice, or with arange(B) where the indices are batched too; gathers and scatters
// make every operand batched and shift their dim.
#include "ir/batching/batching_rules.h"

namespace tsl::batching {
namespace {

using namespace autodiff;

// One entry of an index list (x[i, :, j] has [i, None, j]): None, or a tensor with its
// layout.
struct IndexEntry {
  bool none = true;
  BVal tensor;
};

std::vector<IndexEntry> index_entries(const BatchRuleContext& c, size_t list) {
  std::optional<std::vector<BVal>> elems = c.emitter().list_elements(c.input(list).value());
  if (!elems)
    c.error("vmap: `" + c.op_name() + "` with indices built at run time is not supported");
  std::vector<IndexEntry> out;
  for (const BVal& e : *elems) {
    const Value* v = e.value;
    IndexEntry entry;
    if (v->type()->kind() == TypeKind::None ||
        (v->node()->op() == OpId::Constant && v->node()->attr("value").is_none())) {
      out.push_back(entry);
      continue;
    }
    if (v->type()->kind() == TypeKind::Optional) {
      if (v->node()->op() != OpId::to_optional) {
        c.error("vmap: an index that may be None at run time is not supported");
      }
      v = v->node()->input(0);
    }
    entry.none = false;
    entry.tensor = {const_cast<Value*>(v), e.batched};
    out.push_back(entry);
  }
  return out;
}

// The position of the first tensor entry; an error unless the tensor entries are
// adjacent (PyTorch moves the indexed dims to the front otherwise).
size_t first_advanced(const BatchRuleContext& c, const std::vector<IndexEntry>& entries) {
  size_t first = SIZE_MAX, last = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].none) continue;
    first = std::min(first, i);
    last = i;
  }
  if (first == SIZE_MAX) c.error("vmap: `" + c.op_name() + "` without index tensors");
  for (size_t i = first; i <= last; ++i) {
    if (entries[i].none) {
      c.error(
          "vmap: advanced indexing whose index tensors are not next to each other (as "
          "x[i, :, j]) is not supported under vmap");
    }
  }
  return first;
}

// A runtime error unless index tensor t is not a bool mask (a batched mask would give
// each batch element a result of its own length).
void check_not_mask(const BatchRuleContext& c, Sym t) {
  Sym is_bool =
      call(OpId::eq_dtype, {autodiff::dtype_of(t), constant(IValue(DType::Bool), Type::dtype())});
  Graph& g = FormulaScope::graph();
  Node* branch = g.insert(g.create(OpId::If, {is_bool}, 0));
  branch->set_range(c.range());
  Block* raise = branch->add_block();
  branch->add_block();
  InsertPointGuard in(g, raise);
  Sym message = constant(IValue("vmap: indexing with a bool mask together with batched indices "
                                "is not supported (the result's size would depend on the data)"),
                         Type::str_());
  g.insert(g.create(OpId::RaiseException, {message}, 0))->set_range(c.range());
}

Value* none_entry() { return constant(IValue(), Type::optional(Type::tensor())); }

Value* optional_entry(Sym t) {
  return call(OpId::to_optional, {t}).value()->set_type(Type::optional(Type::tensor()));
}

struct BatchedIndex {
  Value* list = nullptr;  // the physical index list
  size_t position = 0;    // where the indexed dims land in the result (with B first when 0)
  bool batch_in_front = true;
};

// The index list for the physical self (batched or not) when the logical indices are
// `entries`.
BatchedIndex batched_index(const BatchRuleContext& c, Sym self, bool self_batched,
                           const std::vector<IndexEntry>& entries) {
  size_t first = first_advanced(c, entries);
  bool any_index_batched = false;
  for (const IndexEntry& e : entries) any_index_batched |= !e.none && e.tensor.batched;
  std::vector<BVal> list;
  BatchedIndex r;
  TypePtr list_type = Type::list(Type::optional(Type::tensor()));
  if (!any_index_batched) {
    // Only self is batched: B is indexed by a full slice, the rest as written.
    list.push_back(unbatched(none_entry()));
    for (const IndexEntry& e : entries)
      list.push_back(unbatched(e.none ? none_entry() : optional_entry(e.tensor.value)));
    r.list = c.emitter().literal_list(list, list_type);
    return r;
  }
  // Batched index tensors are aligned to the largest logical rank among them; the
  // result has their broadcast shape, B first, where the first index tensor is.
  Sym rank;
  for (const IndexEntry& e : entries) {
    if (e.none) continue;
    check_not_mask(c, e.tensor.value);
    Sym rk = c.logical_rank(e.tensor);
    rank = rank ? call(OpId::max_int, {rank, rk}) : rk;
  }
  if (self_batched) {
    // B, and each full slice before the indices (x[:, idx]), are indexed by aranges
    // shaped to broadcast as dims of their own before the indices' dims: the result is
    // [B, the sliced dims..., the index dims..., the rest], x[:, idx] of each element.
    Sym total = call(OpId::add_int, {rank, static_cast<int64_t>(first)});
    Sym b = call(OpId::arange, {c.batch_size(), std::nullopt, std::nullopt, false});
    list.push_back(
        unbatched(optional_entry(reshape(b, call(OpId::batched_align_size, {size(b), total})))));
    for (size_t j = 0; j < first; ++j) {
      Sym n = call(OpId::size_dim, {self, static_cast<int64_t>(j + 1)});
      Sym trailing = call(OpId::add_int, {rank, static_cast<int64_t>(first - 1 - j)});
      Sym ones = call(OpId::keepdim_size, {call(OpId::range_list, {0, trailing, 1}), std::nullopt});
      ones.value()->set_type(Type::list(Type::int_()));
      Graph& g = FormulaScope::graph();
      Node* head = g.insert(g.create(OpId::ListConstruct, {n.value()}, 1));
      head->output()->set_type(Type::list(Type::int_()));
      Sym shape = call(OpId::add_list, {head->output(), ones});
      shape.value()->set_type(Type::list(Type::int_()));
      Sym positions = call(OpId::arange, {n, std::nullopt, std::nullopt, false});
      list.push_back(unbatched(optional_entry(reshape(positions, shape))));
    }
    for (size_t i = first; i < entries.size(); ++i) {
      const IndexEntry& e = entries[i];
      list.push_back(unbatched(e.none ? none_entry() : optional_entry(c.align(e.tensor, total))));
    }
  } else {
    for (const IndexEntry& e : entries) {
      list.push_back(unbatched(e.none ? none_entry() : optional_entry(c.align(e.tensor, rank))));
    }
  }
  r.list = c.emitter().literal_list(list, list_type);
  r.position = self_batched ? 0 : first;
  r.batch_in_front = self_batched || first == 0;
  return r;
}

// The batch dim of r, at `position`, moved to the front.
Sym batch_to_front(const BatchedIndex& index, Sym r) {
  if (index.batch_in_front) return r;
  Sym perm = call(OpId::movedim_permutation,
                  {call(OpId::dim, {r}), static_cast<int64_t>(index.position), 0});
  return call(OpId::permute, {r, perm});
}

std::vector<BVal> index_rule(BatchRuleContext& c) {
  std::vector<IndexEntry> entries = index_entries(c, 1);
  BatchedIndex index = batched_index(c, c.input(0), c.batched(0), entries);
  Sym r = call(OpId::index, {c.input(0), index.list});
  return {batched(batch_to_front(index, r))};
}

// index_put(self, indices, values, accumulate): self made batched; values aligned to
// the logical rank of self[indices].
std::vector<BVal> index_put_rule(BatchRuleContext& c) {
  std::vector<IndexEntry> entries = index_entries(c, 1);
  Sym self = c.materialize(c.in(0));
  BatchedIndex index = batched_index(c, self, true, entries);
  Sym values = c.input(2);
  if (c.batched(2)) {
    Sym indexed = call(OpId::index, {self, index.list});
    values = c.align(c.in(2), call(OpId::sub_int, {call(OpId::dim, {indexed}), 1}));
  }
  return {batched(call(OpId::index_put, {self, index.list, values, c.input(3)}))};
}

// index_select(x, dim, idx): batched idx as x[(None,) * dim + (idx,)].
std::vector<BVal> index_select_rule(BatchRuleContext& c) {
  if (!c.batched(2)) return dim_rule<1>(c);
  const IValue* d = c.constant_input(1);
  if (!d || !d->is_int() || d->to_int() < 0) {
    c.error("vmap: index_select with a batched index needs a constant, nonnegative dim");
  }
  std::vector<BVal> entries;
  for (int64_t k = 0; k < d->to_int(); ++k) entries.push_back(unbatched(none_entry()));
  entries.push_back({optional_entry(c.input(2)), true});
  Value* list = c.emitter().literal_list(entries, Type::list(Type::optional(Type::tensor())));
  return {c.apply(OpId::index, {c.in(0), unbatched(list)})};
}

// gather(x, dim, index), scatter_add, select_scatter, slice_scatter: every tensor
// operand batched, the dim shifted.
template <size_t D>
std::vector<BVal> all_operands_rule(BatchRuleContext& c) {
  std::vector<std::pair<size_t, Arg>> r = {{D, c.dim_arg(D)}};
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (c.input(i).value()->type()->is_tensor()) r.emplace_back(i, c.materialize(c.in(i)));
  }
  return all_batched(c.call_with(r));
}

// index_add(self, dim, index, source, alpha): the index is a vector of positions along
// dim. A batched index becomes scatter_add's index: each batch element's positions
// placed along dim and expanded to the source's shape.
std::vector<BVal> index_add_rule(BatchRuleContext& c) {
  Sym self = c.materialize(c.in(0));
  Sym source = c.materialize(c.in(3));
  if (!c.batched(2)) return all_batched(c.call_with({{0, self}, {1, c.dim_arg(1)}, {3, source}}));
  const IValue* d = c.constant_input(1);
  if (!d || !d->is_int() || d->to_int() < 0) {
    c.error("vmap: index_add with a batched index needs a constant, nonnegative dim");
  }
  int64_t dim = d->to_int();
  // [B] + [1] * dim + [k] + [1] * (the source's logical dims after dim)
  Sym index = c.input(2);
  Sym k = call(OpId::size_dim, {index, 1});
  Graph& g = FormulaScope::graph();
  Node* mid = g.insert(g.create(OpId::ListConstruct, {k.value()}, 1));
  mid->output()->set_type(Type::list(Type::int_()));
  Sym after = call(OpId::slice_list, {c.logical_size(batched(source)), dim + 1, std::nullopt, 1});
  after.value()->set_type(Type::list(Type::int_()));
  Sym ones = call(OpId::keepdim_size, {after, std::nullopt});
  ones.value()->set_type(Type::list(Type::int_()));
  Sym shape = call(OpId::add_list,
                   {int_list(std::vector<int64_t>(static_cast<size_t>(dim), 1)), mid->output()});
  shape.value()->set_type(Type::list(Type::int_()));
  shape = call(OpId::add_list, {shape, ones});
  shape.value()->set_type(Type::list(Type::int_()));
  Sym positions = expand(reshape(index, c.batched_size(shape)), size(source));
  Sym scaled = source * Sym(c.input(4));
  return {batched(call(OpId::scatter_add, {self, dim + 1, positions, scaled}))};
}

}  // namespace

void register_index_batching(BatchingTable& table) {
  TSL_BATCHING(select, dim_rule<1>);
  TSL_BATCHING(slice, dim_rule<1>);
  TSL_BATCHING(narrow, dim_rule<1>);
  TSL_BATCHING(index, index_rule);
  TSL_BATCHING(index_put, index_put_rule);
  TSL_BATCHING(index_select, index_select_rule);
  TSL_BATCHING(gather, all_operands_rule<1>);
  TSL_BATCHING(scatter_add, all_operands_rule<1>);
  TSL_BATCHING(select_scatter, all_operands_rule<2>);
  TSL_BATCHING(slice_scatter, all_operands_rule<2>);
  TSL_BATCHING(index_add, index_add_rule);
}

}  // namespace tsl::batching
