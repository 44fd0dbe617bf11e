// Dicts in the emitter: literals, `d[k]`, `d[k] = v`, `k in d`, methods, `dict()`,
// `list(...)` and iteration. See Note [Dicts] in runtime/kernels/dict_ops.cpp.
#include "frontend/emitter.h"

namespace tsl {
namespace {

bool is_dict(const Value* v) { return v->type()->kind() == TypeKind::Dict; }
bool int_keys(const Value* dict) { return dict->type()->key()->kind() == TypeKind::Int; }

bool holds_tensor(const TypePtr& t) {
  if (t->is_tensor() || t->kind() == TypeKind::Any) return true;
  for (const TypePtr& c : t->contained()) {
    if (holds_tensor(c)) return true;
  }
  return false;
}

// Whether `v` goes into a place of type `target` as the same Python value. An int
// stored into a Dict[str, float] stays an int in Python (and prints as one), a tuple
// stays a tuple: TSL does not convert them (IntToFloat, TupleToList, IntToList) but
// says so.
bool keeps_value(Value* v, const TypePtr& target) {
  TypePtr var;
  Conversion c = conversion_for(v->type(), target, var, false, v);
  return c == Conversion::None || c == Conversion::UnwrapGrad || c == Conversion::RetypeEmptyList ||
         c == Conversion::RetypeEmptyDict;
}

// Why a Dict[str, Tensor] may not take a value: it may be an untyped `{}`, which
// TorchScript types so.
std::string empty_literal_hint(const Value* dict) {
  if (!dict->type()->equals(*Type::dict(Type::str_(), Type::tensor()))) return "";
  return " (a `{}` without a declared type is a Dict[str, Tensor], as in TorchScript: "
         "declare another, e.g. `d: Dict[str, int] = {}`)";
}

void check_key_type(const TypePtr& key_type, const Value* key, const SourceRange& range,
                    const TypePtr& dict_type) {
  if (key->type()->equals(*key_type)) return;
  compile_error(range, "dict key must be " + key_type->str() + ", not " + key->type()->str() +
                           " (the dict is " + dict_type->str() + ")");
}

// The key type of a literal without a declared type: its first key's, str or int.
TypePtr literal_key_type(const ast::DictExpr& d, const std::vector<Value*>& keys) {
  TypePtr k = keys[0]->type();
  if (k->kind() != TypeKind::Str && k->kind() != TypeKind::Int) {
    compile_error(d.keys[0]->range,
                  "dict keys must be str or int in TSL (as in TorchScript), not " + k->str());
  }
  for (size_t i = 1; i < keys.size(); ++i) {
    if (!keys[i]->type()->equals(*k)) {
      compile_error(d.keys[i]->range, "dict keys must have one type, but this dict mixes " +
                                          k->str() + " and " + keys[i]->type()->str());
    }
  }
  return k;
}

// The value type of a literal without a declared type: one type for all values (None
// and T make Optional[T]); int and float do not mix, as TorchScript requires.
TypePtr literal_value_type(const ast::DictExpr& d, const std::vector<Value*>& values) {
  TypePtr v = strip_refinements(values[0]->type());
  for (size_t i = 1; i < values.size(); ++i) {
    TypePtr t = strip_refinements(values[i]->type());
    TypePtr u = unify_types(v, t);
    if (!u) {
      compile_error(d.values[i]->range, "dict values must have one type, but this dict mixes " +
                                            v->str() + " and " + t->str());
    }
    v = u;
  }
  return v;
}

}  // namespace

// ---- Literals -----------------------------------------------------------------------

Value* Emitter::empty_dict(const TypePtr& type, const SourceRange& range) {
  Node* n = graph_.insert(graph_.create(OpId::DictConstruct, {}, 1));
  n->set_range(range);
  return n->output()->set_type(type);
}

// {k0: v0, k1: v1}: keys and values evaluated in the order written, as Python does.
// Without a declared type (`d: Dict[str, int] = {...}`, a parameter's or a return's),
// the first entry's types are the hint for the others' empty literals; `{}` alone is
// a Dict[str, Tensor], TorchScript's default.
Value* Emitter::emit_dict(const ast::DictExpr& d, const TypePtr& hint) {
  TypePtr declared = hint && hint->kind() == TypeKind::Optional ? hint->element() : hint;
  if (declared && declared->kind() != TypeKind::Dict) declared = nullptr;
  if (d.keys.empty())
    return empty_dict(declared ? declared : Type::dict(Type::str_(), Type::tensor()), d.range);
  TypePtr key_hint = declared ? declared->key() : nullptr;
  TypePtr value_hint = declared ? declared->value() : nullptr;
  std::vector<Value*> keys, values;
  for (size_t i = 0; i < d.keys.size(); ++i) {
    keys.push_back(emit_expr(*d.keys[i], key_hint));
    values.push_back(emit_expr(*d.values[i], value_hint));
    if (!declared && i == 0) value_hint = strip_refinements(values[0]->type());
  }
  TypePtr key_type = declared ? declared->key() : literal_key_type(d, keys);
  TypePtr value_type = declared ? declared->value() : literal_value_type(d, values);
  TypePtr type = Type::dict(key_type, value_type);
  std::vector<Value*> inputs;
  for (size_t i = 0; i < keys.size(); ++i) {
    check_key_type(key_type, keys[i], d.keys[i]->range, type);
    if (!keeps_value(values[i], value_type)) {
      compile_error(d.values[i]->range, "dict value must be " + value_type->str() + ", not " +
                                            values[i]->type()->str() + " (the dict is " +
                                            type->str() + ")");
    }
    inputs.push_back(keys[i]);
    inputs.push_back(convert_to(values[i], value_type, d.values[i]->range, "dict value"));
  }
  Node* n = graph_.insert(graph_.create(OpId::DictConstruct, inputs, 1));
  n->set_range(d.range);
  return n->output()->set_type(type);
}

// dict() is an empty dict of the declared type (Dict[str, Tensor] without one);
// dict(d) a copy of d.
Value* Emitter::emit_dict_call(const ast::Call& c, const TypePtr& hint) {
  if (!c.keywords.empty()) {
    compile_error(c.keywords[0].range,
                  "dict(key=value) is not supported in TSL (write {'key': value})");
  }
  if (c.args.size() > 1) compile_error(c.range, "dict() takes at most one argument");
  if (c.args.empty()) {
    TypePtr declared = hint && hint->kind() == TypeKind::Optional ? hint->element() : hint;
    bool typed = declared && declared->kind() == TypeKind::Dict;
    return empty_dict(typed ? declared : Type::dict(Type::str_(), Type::tensor()), c.range);
  }
  Value* other = emit_expr(*c.args[0]);
  if (!is_dict(other))
    compile_error(c.args[0]->range, "dict() copies a dict, not a " + other->type()->str());
  return graph_.insert_op(dict_op_id(DictOp::Copy, int_keys(other)), {other}, other->type(),
                          c.range);
}

// list(xs) is a new list with the elements of xs; list(d) the keys of d.
Value* Emitter::emit_list_call(const std::vector<CallArg>& args, const SourceRange& range) {
  if (args.size() != 1 || !args[0].name.empty())
    compile_error(range, "list() takes one list or dict in TSL");
  Value* v = args[0].value;
  if (is_dict(v)) {
    v = graph_.insert_op(dict_op_id(DictOp::Keys, int_keys(v)), {v}, Type::list(v->type()->key()),
                         range);
  }
  if (v->type()->kind() != TypeKind::List)
    compile_error(args[0].range, "list() takes a list or a dict in TSL, not " + v->type()->str());
  if (v->type()->element()->kind() == TypeKind::Int) {
    // A plain list even of a torch.Size (`list(x.shape)` prints [2, 3]), which a slice
    // would keep (`x.shape[1:]` is a torch.Size in PyTorch).
    Value* empty = graph_.insert_op(OpId::ListConstruct, {}, v->type(), range);
    return graph_.insert_op(OpId::add_list, {v, empty}, v->type(), range);
  }
  Value* none_v = none(range);
  Value* step = constant(IValue(int64_t{1}), Type::int_(), range);
  return graph_.insert_op(OpId::slice_list, {v, none_v, none_v, step}, v->type(), range);
}

// ---- Keys, values and item access ----------------------------------------------------

// The key of `dict[key]`: exactly the key type (TorchScript's rule; Python would raise
// KeyError for a key of another type, TSL says so at compile time).
Value* Emitter::dict_key(Value* dict, Value* key, const SourceRange& range) {
  check_key_type(dict->type()->key(), key, range, dict->type());
  return key;
}

Value* Emitter::dict_value(Value* dict, Value* v, const SourceRange& range,
                           const std::string& what) {
  const TypePtr& value_type = dict->type()->value();
  if (!keeps_value(v, value_type)) {
    compile_error(range, what + " must be " + value_type->str() + ", not " + v->type()->str() +
                             empty_literal_hint(dict));
  }
  return convert_to(v, value_type, range, what);
}

// `d[k]`. Inside `with no_grad():` in a function a tensor read out of a dict is read
// detached, as a tensor variable is (emit_expr), so what the block computes from it,
// and updates through it (`d[k] -= lr * d[k].grad`), are not differentiated.
Value* Emitter::emit_dict_getitem(Value* dict, const ast::Subscript& s) {
  if (s.indices.size() != 1 || s.indices[0]->kind == ast::ExprKind::Slice)
    compile_error(s.range, "a dict is indexed by one key: d[key]");
  Value* key = dict_key(dict, emit_expr(*s.indices[0]), s.indices[0]->range);
  Value* v = graph_.insert_op(dict_op_id(DictOp::Getitem, int_keys(dict)), {dict, key},
                              dict->type()->value(), s.range);
  return read_under_no_grad(v, s.range);
}

void Emitter::emit_dict_setitem(Value* dict, const ast::Subscript& target, Value* v,
                                const SourceRange& range) {
  if (target.indices.size() != 1 || target.indices[0]->kind == ast::ExprKind::Slice)
    compile_error(target.range, "a dict is indexed by one key: d[key] = value");
  Value* key = dict_key(dict, emit_expr(*target.indices[0]), target.indices[0]->range);
  Value* value = dict_value(dict, v, range, "dict value");
  graph_.insert(graph_.create(dict_op_id(DictOp::Setitem, int_keys(dict)), {dict, key, value}, 0))
      ->set_range(range);
}

// `d[k] += v`: Python reads d[k], updates it and stores the result under k. A tensor
// is updated in place (`tmp = d[k]; tmp += v`), so what it stores is the tensor d[k]
// already holds: no write, which also keeps a dict that is only updated so (an
// optimizer step) a dict that is only read (Note [Dict arguments on the tape]).
void Emitter::emit_dict_aug_setitem(Value* dict, const ast::Subscript& target, ast::BinOp op,
                                    const ast::Expr& value, const SourceRange& range) {
  Value* current = emit_dict_getitem(dict, target);
  Value* rhs = emit_expr(value);
  if (current->type()->is_tensor() && op != ast::BinOp::MatMul) {
    emit_inplace(op, current, rhs, range);
    return;
  }
  Value* key = current->node()->input(1);
  Value* updated = emit_binary(op, current, rhs, range);
  Value* stored = dict_value(dict, updated, range, "dict value");
  graph_.insert(graph_.create(dict_op_id(DictOp::Setitem, int_keys(dict)), {dict, key, stored}, 0))
      ->set_range(range);
}

// `k in d`, `k not in d`, and `k in d.keys()` (which needs no list of the keys).
Value* Emitter::emit_dict_contains(Value* key, Value* dict, bool negate, const SourceRange& range) {
  if (!is_dict(dict)) dict = dict->node()->input(0);  // d.keys()
  key = dict_key(dict, key, range);
  Value* found = graph_.insert_op(dict_op_id(DictOp::Contains, int_keys(dict)), {dict, key},
                                  Type::bool_(), range);
  return negate ? graph_.insert_op(OpId::not_bool, {found}, Type::bool_(), range) : found;
}

// `a == b`, `a != b`: the same keys with equal values. A dict of tensors has no such
// ==: a tensor's == is elementwise, and Python's bool() of it raises.
Value* Emitter::emit_dict_equal(Value* a, Value* b, bool negate, const SourceRange& range) {
  if (!a->type()->equals(*b->type())) {
    compile_error(range, std::string("'") + (negate ? "!=" : "==") + "' is not supported between " +
                             a->type()->str() + " and " + b->type()->str());
  }
  if (holds_tensor(a->type()->value())) {
    compile_error(range, "== of dicts holding " + a->type()->value()->str() +
                             " values is not supported in TSL");
  }
  Value* same = graph_.insert_op(dict_op_id(DictOp::Eq, int_keys(a)), {a, b}, Type::bool_(), range);
  return negate ? graph_.insert_op(OpId::not_bool, {same}, Type::bool_(), range) : same;
}

// ---- Methods ------------------------------------------------------------------------

namespace {
// The methods emit_dict_method handles.
const char* const kDictMethods[] = {"clear", "copy", "get",    "items",
                                    "keys",  "pop",  "update", "values"};
}  // namespace

std::vector<std::string> dict_method_names() {
  return {std::begin(kDictMethods), std::end(kDictMethods)};
}

Value* Emitter::emit_dict_method(Value* self, const std::string& name,
                                 const std::vector<CallArg>& args, const ast::Call& c) {
  const SourceRange& range = c.range;
  bool ik = int_keys(self);
  const TypePtr& key_type = self->type()->key();
  const TypePtr& value_type = self->type()->value();
  auto arity = [&](size_t lo, size_t hi) {
    for (const CallArg& a : args) {
      if (!a.name.empty()) compile_error(a.range, "dict." + name + "() takes no keyword arguments");
    }
    if (args.size() < lo || args.size() > hi) {
      std::string count = lo == hi ? std::to_string(lo) : str(lo, " or ", hi);
      compile_error(range, "dict." + name + "() takes " + count + " argument(s), got " +
                               std::to_string(args.size()));
    }
  };
  auto op = [&](DictOp o) { return dict_op_id(o, ik); };
  auto effect = [&](DictOp o, std::vector<Value*> inputs) {
    graph_.insert(graph_.create(op(o), inputs, 0))->set_range(range);
    return none(range);
  };
  if (name == "keys" || name == "values" || name == "items" || name == "copy" || name == "clear") {
    arity(0, 0);
    if (name == "keys")
      return graph_.insert_op(op(DictOp::Keys), {self}, Type::list(key_type), range);
    if (name == "values")
      return graph_.insert_op(op(DictOp::Values), {self}, Type::list(value_type), range);
    if (name == "items") {
      return graph_.insert_op(op(DictOp::Items), {self},
                              Type::list(Type::tuple({key_type, value_type})), range);
    }
    if (name == "copy") return graph_.insert_op(op(DictOp::Copy), {self}, self->type(), range);
    return effect(DictOp::Clear, {self});
  }
  if (name == "get" || name == "pop") {
    arity(1, 2);
    Value* key = dict_key(self, args[0].value, args[0].range);
    bool get = name == "get";
    // d.get(k, None) is d.get(k): Optional[V].
    bool default_none = args.size() == 2 && args[1].value->type()->kind() == TypeKind::None;
    if (args.size() == 1 || (get && default_none)) {
      return get ? graph_.insert_op(op(DictOp::Get), {self, key}, Type::optional(value_type), range)
                 : graph_.insert_op(op(DictOp::Pop), {self, key}, value_type, range);
    }
    Value* dflt =
        dict_value(self, args[1].value, args[1].range, "the default of dict." + name + "()");
    return graph_.insert_op(op(get ? DictOp::GetDefault : DictOp::PopDefault), {self, key, dflt},
                            value_type, range);
  }
  if (name == "update") {
    arity(1, 1);
    Value* other = args[0].value;
    if (!other->type()->equals(*self->type())) {
      compile_error(args[0].range, "dict.update() takes a " + self->type()->str() + ", not " +
                                       other->type()->str());
    }
    return effect(DictOp::Update, {self, other});
  }
  std::string names;
  for (const char* m : kDictMethods) names += (names.empty() ? "" : ", ") + std::string(m);
  compile_error(c.func->range, "dict has no method '" + name + "' in TSL (it has " + names + ")");
}

// ---- Iteration ----------------------------------------------------------------------

// A for loop over `d`, `d.keys()`, `d.values()` or `d.items()` (the call just emitted
// is taken apart): iterates a snapshot of the keys and reads each value when its turn
// comes, as Python's dict iterators walk the live dict; nullopt for other iterables.
std::optional<Emitter::DictIteration> Emitter::dict_iteration(Value* seq,
                                                              const SourceRange& range) {
  DictIteration it{seq, nullptr, nullptr, DictOp::Keys};
  if (!is_dict(seq)) {
    std::optional<DictOp> view = dict_op_of(seq->node()->op());
    if (view != DictOp::Keys && view != DictOp::Values && view != DictOp::Items)
      return std::nullopt;
    it.dict = seq->node()->input(0);
    it.yields = *view;
    if (!seq->has_uses()) seq->node()->destroy();
  }
  bool ik = int_keys(it.dict);
  it.keys = graph_.insert_op(dict_op_id(DictOp::Keys, ik), {it.dict},
                             Type::list(it.dict->type()->key()), range);
  it.size = graph_.insert_op(OpId::len_list, {it.keys}, Type::int_(), range);
  return it;
}

// What iteration `index` yields: the key, the value or the (key, value) tuple. Python's
// dict iterators check first that the dict kept its size.
Value* Emitter::dict_iteration_item(const DictIteration& it, Value* index,
                                    const SourceRange& range) {
  check_dict_size(it, range);
  const TypePtr& key_type = it.dict->type()->key();
  const TypePtr& value_type = it.dict->type()->value();
  Value* key = graph_.insert_op(OpId::getitem_list, {it.keys, index}, key_type, range);
  if (it.yields == DictOp::Keys) return key;
  Value* value = graph_.insert_op(dict_op_id(DictOp::Getitem, int_keys(it.dict)), {it.dict, key},
                                  value_type, range);
  if (it.yields == DictOp::Values) return value;
  Node* pair = graph_.insert(graph_.create(OpId::TupleConstruct, {key, value}, 1));
  pair->set_range(range);
  return pair->output()->set_type(Type::tuple({key_type, value_type}));
}

// RuntimeError "dictionary changed size during iteration" when the loop body added or
// removed a key (checked as Python's next() does: before each item and at the end).
void Emitter::check_dict_size(const DictIteration& it, const SourceRange& range) {
  graph_
      .insert(
          graph_.create(dict_op_id(DictOp::CheckSize, int_keys(it.dict)), {it.dict, it.size}, 0))
      ->set_range(range);
}

}  // namespace tsl
