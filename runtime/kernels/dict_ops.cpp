// Kernels of the dict ops (`d[k]`, `d[k] = v`, `k in d`, `len(d)`, `d.get(k)`,
// `d.keys()`, ...): Python's semantics and messages on the DictImpl of ivalue.h.
#include "runtime/kernels/dict_ops.h"

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/py_equal.h"

namespace tsl {

// Note [Dicts]
// A TSL dict is Python's: a mutable mapping shared by reference (a write through one
// name is seen through every other), iterated in insertion order, whose keys are
// `str` or `int` (TorchScript's rule, checked by the type checker). At run time it is
// a DictImpl (runtime/tensor/ivalue.h): the entries in insertion order and an index
// by key. Every op has one row per key type in runtime/ops.def (`getitem.Dict_str`,
// `getitem.Dict_int`), as TorchScript's overloads, and both rows share the kernels
// here. Ops that change a dict are EFFECT: the optimizer never drops, moves or
// merges them, and its alias classes (ir/passes/pass_utils.h) keep reads of a dict
// that is written from being merged across the write.
// Where the pieces are:
//  * types: TypeKind::Dict in ir/type.h, `Dict[str, Tensor]` in annotations
//    (frontend/emit_expr.cpp: resolve_type), the IR text and the op schemas
//    (`Dict(str, t)`);
//  * literals, subscripts, `in`, methods and iteration: frontend/emit_dict.cpp;
//  * DictConstruct (PRIM): the interpreter's prim kernels (runtime/exec/interpreter.cpp);
//  * autodiff: Note [Dicts under differentiation] in ir/autodiff/forward_containers.h.
// Iterating over a dict (`for k in d`, `.items()`, `.values()`) walks a snapshot of
// its keys and reads each value when its turn comes, and raises Python's
// "dictionary changed size during iteration" when the body adds or removes a key.

namespace {

[[noreturn]] void key_error(const IValue& key) { TSL_ERROR("KeyError: ", key.repr()); }

void len_dict(KernelArgs& a) { a.out(0) = IValue(static_cast<int64_t>(a.in(0).to_dict().size())); }

void getitem_dict(KernelArgs& a) {
  const IValue* v = a.in(0).to_dict().find(a.in(1));
  if (!v) key_error(a.in(1));
  a.out(0) = *v;
}

void setitem_dict(KernelArgs& a) {
  a.in(0).to_dict().set(a.in(1), a.in(2));
  if (a.num_outputs() > 0) a.out(0) = IValue();
}

void contains_dict(KernelArgs& a) { a.out(0) = IValue(a.in(0).to_dict().find(a.in(1)) != nullptr); }

// get(key) and get(key, default): None (or the default) for a missing key.
void get_dict(KernelArgs& a) {
  const IValue* v = a.in(0).to_dict().find(a.in(1));
  a.out(0) = v ? *v : a.num_inputs() > 2 ? a.in(2) : IValue();
}

// keys(), values() and items() return lists (TorchScript's types) that print as
// Python's views do.
IValue view_list(std::vector<IValue> elements, ListImpl::View view) {
  auto list = make_intrusive<ListImpl>(std::move(elements));
  list->view = view;
  return IValue(std::move(list));
}

void keys_dict(KernelArgs& a) {
  std::vector<IValue> out;
  for (const auto& entry : a.in(0).to_dict().entries()) out.push_back(entry.first);
  a.out(0) = view_list(std::move(out), ListImpl::View::DictKeys);
}

void values_dict(KernelArgs& a) {
  std::vector<IValue> out;
  for (const auto& entry : a.in(0).to_dict().entries()) out.push_back(entry.second);
  a.out(0) = view_list(std::move(out), ListImpl::View::DictValues);
}

void items_dict(KernelArgs& a) {
  std::vector<IValue> out;
  for (const auto& [key, value] : a.in(0).to_dict().entries())
    out.push_back(IValue::tuple({key, value}));
  a.out(0) = view_list(std::move(out), ListImpl::View::DictItems);
}

// pop(key) and pop(key, default).
void pop_dict(KernelArgs& a) {
  IValue value;
  if (a.in(0).to_dict().erase(a.in(1), &value)) {
    a.out(0) = std::move(value);
    return;
  }
  if (a.num_inputs() < 3) key_error(a.in(1));
  a.out(0) = a.in(2);
}

void update_dict(KernelArgs& a) {
  DictImpl& self = a.in(0).to_dict();
  // A copy first: `d.update(d)` must not walk entries it is writing.
  std::vector<DictImpl::Entry> entries = a.in(1).to_dict().entries();
  for (auto& [key, value] : entries) self.set(std::move(key), std::move(value));
  if (a.num_outputs() > 0) a.out(0) = IValue();
}

void copy_dict(KernelArgs& a) {
  auto copy = make_intrusive<DictImpl>();
  for (const auto& [key, value] : a.in(0).to_dict().entries()) copy->set(key, value);
  a.out(0) = IValue(std::move(copy));
}

void clear_dict(KernelArgs& a) {
  a.in(0).to_dict().clear();
  if (a.num_outputs() > 0) a.out(0) = IValue();
}

void eq_dict(KernelArgs& a) { a.out(0) = IValue(py_equal(a.in(0), a.in(1))); }

void index_dict(KernelArgs& a) {
  std::optional<size_t> at = a.in(0).to_dict().position(a.in(1));
  if (!at) key_error(a.in(1));
  a.out(0) = IValue(static_cast<int64_t>(*at));
}

void dict_check_size(KernelArgs& a) {
  TSL_CHECK(static_cast<int64_t>(a.in(0).to_dict().size()) == a.in(1).to_int(),
            "RuntimeError: dictionary changed size during iteration");
  if (a.num_outputs() > 0) a.out(0) = IValue();
}

// The rows of each DictOp: {str keys, int keys}, in DictOp's order.
#define TSL_DICT_ROWS(name) \
  { OpId::name##_dict_str, OpId::name##_dict_int }
constexpr OpId kRows[][2] = {
    TSL_DICT_ROWS(len),
    TSL_DICT_ROWS(getitem),
    TSL_DICT_ROWS(setitem),
    TSL_DICT_ROWS(contains),
    TSL_DICT_ROWS(get),
    TSL_DICT_ROWS(get_default),
    TSL_DICT_ROWS(keys),
    TSL_DICT_ROWS(values),
    TSL_DICT_ROWS(items),
    TSL_DICT_ROWS(pop),
    TSL_DICT_ROWS(pop_default),
    TSL_DICT_ROWS(update),
    TSL_DICT_ROWS(copy),
    TSL_DICT_ROWS(clear),
    TSL_DICT_ROWS(eq),
    TSL_DICT_ROWS(index),
    {OpId::dict_check_size_str, OpId::dict_check_size_int},
};
#undef TSL_DICT_ROWS
static_assert(std::size(kRows) == static_cast<size_t>(DictOp::CheckSize) + 1,
              "one row pair per DictOp");

}  // namespace

std::optional<DictOp> dict_op_of(OpId op) {
  // The rows are one block of the table (ops.def's TSL_DICT_OPS): most ops are not.
  if (op < OpId::len_dict_str || op > OpId::dict_check_size_int) return std::nullopt;
  for (size_t i = 0; i < std::size(kRows); ++i) {
    if (kRows[i][0] == op || kRows[i][1] == op) return static_cast<DictOp>(i);
  }
  return std::nullopt;
}

OpId dict_op_id(DictOp op, bool int_keys) {
  return kRows[static_cast<size_t>(op)][int_keys ? 1 : 0];
}

void register_dict_kernels() {
#define TSL_REGISTER_DICT_KERNELS(K)                          \
  TSL_REGISTER_GENERIC_RAW(len_dict_##K, len_dict);           \
  TSL_REGISTER_GENERIC_RAW(getitem_dict_##K, getitem_dict);   \
  TSL_REGISTER_GENERIC_RAW(setitem_dict_##K, setitem_dict);   \
  TSL_REGISTER_GENERIC_RAW(contains_dict_##K, contains_dict); \
  TSL_REGISTER_GENERIC_RAW(get_dict_##K, get_dict);           \
  TSL_REGISTER_GENERIC_RAW(get_default_dict_##K, get_dict);   \
  TSL_REGISTER_GENERIC_RAW(keys_dict_##K, keys_dict);         \
  TSL_REGISTER_GENERIC_RAW(values_dict_##K, values_dict);     \
  TSL_REGISTER_GENERIC_RAW(items_dict_##K, items_dict);       \
  TSL_REGISTER_GENERIC_RAW(pop_dict_##K, pop_dict);           \
  TSL_REGISTER_GENERIC_RAW(pop_default_dict_##K, pop_dict);   \
  TSL_REGISTER_GENERIC_RAW(update_dict_##K, update_dict);     \
  TSL_REGISTER_GENERIC_RAW(copy_dict_##K, copy_dict);         \
  TSL_REGISTER_GENERIC_RAW(clear_dict_##K, clear_dict);       \
  TSL_REGISTER_GENERIC_RAW(eq_dict_##K, eq_dict);             \
  TSL_REGISTER_GENERIC_RAW(index_dict_##K, index_dict);       \
  TSL_REGISTER_GENERIC_RAW(dict_check_size_##K, dict_check_size)
  TSL_REGISTER_DICT_KERNELS(str);
  TSL_REGISTER_DICT_KERNELS(int);
#undef TSL_REGISTER_DICT_KERNELS
}

}  // namespace tsl
