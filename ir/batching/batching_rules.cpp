// The batching rule table (see Note [Batching rules]) and what the rules share: the
// context's dim, size and layout helpers.
#include "ir/batching/batching_rules.h"

#include <functional>

#include "ir/schema.h"

namespace tsl::batching {

using namespace autodiff;

std::string BatchRuleContext::op_name() const { return std::string(op_info(op_).base_name()); }

const IValue* BatchRuleContext::constant_input(size_t i) const {
  const Node* def = input(i).value()->node();
  return def->op() == OpId::Constant ? &def->attr("value") : nullptr;
}

bool BatchRuleContext::is_none(size_t i) const {
  if (input(i).value()->type()->kind() == TypeKind::None) return true;
  const IValue* k = constant_input(i);
  return k && k->is_none();
}

std::optional<std::vector<int64_t>> BatchRuleContext::constant_ints(size_t i) const {
  if (const IValue* k = constant_input(i)) {
    if (k->is_int()) return std::vector<int64_t>{k->to_int()};
    if (k->is_list()) return k->to_int_vector();
    return std::nullopt;
  }
  const Node* def = input(i).value()->node();
  if (def->op() != OpId::ListConstruct) return std::nullopt;
  std::vector<int64_t> out;
  for (const Value* e : def->inputs()) {
    const Node* k = e->node();
    if (k->op() != OpId::Constant || !k->attr("value").is_int()) return std::nullopt;
    out.push_back(k->attr("value").to_int());
  }
  return out;
}

void BatchRuleContext::error(const std::string& message) const { compile_error(range_, message); }

// ---- Dims and sizes

Sym BatchRuleContext::dim_arg(size_t i) const {
  if (const IValue* k = constant_input(i); k && k->is_int()) {
    int64_t d = k->to_int();
    return constant(IValue(d >= 0 ? d + 1 : d), Type::int_());
  }
  Sym d = call(OpId::batched_dim, {input(i)});
  return d;
}

Sym BatchRuleContext::dims_arg(size_t i) const {
  if (std::optional<std::vector<int64_t>> dims = constant_ints(i)) {
    for (int64_t& d : *dims) d = d >= 0 ? d + 1 : d;
    return int_list(*dims);
  }
  return call(OpId::batched_dims, {input(i)});
}

Sym BatchRuleContext::logical_rank(const BVal& v) const {
  Sym r = call(OpId::dim, {v.value});
  return v.batched ? call(OpId::sub_int, {r, 1}) : r;
}

Sym BatchRuleContext::logical_size(const BVal& v) const {
  Sym s = size(v.value);
  if (!v.batched) return s;
  Sym tail = call(OpId::slice_list, {s, 1, std::nullopt, 1});
  tail.value()->set_type(Type::list(Type::int_()));
  return tail;
}

Sym BatchRuleContext::batched_size(Sym sizes) const {
  Node* list = FormulaScope::graph().insert(
      FormulaScope::graph().create(OpId::ListConstruct, {batch_size().value()}, 1));
  list->set_range(range_);
  list->output()->set_type(Type::list(Type::int_()));
  Sym joined = call(OpId::add_list, {list->output(), sizes});
  joined.value()->set_type(Type::list(Type::int_()));
  return joined;
}

// ---- Layouts

Sym BatchRuleContext::align(const BVal& v, Sym rank) const {
  if (!v.batched) return v.value;
  return reshape(v.value, call(OpId::batched_align_size, {size(v.value), rank}));
}

std::vector<Sym> BatchRuleContext::aligned(const std::vector<size_t>& which) const {
  // The largest logical rank among the operands; only batched operands move.
  std::vector<Sym> out;
  size_t num_batched = 0;
  for (size_t i : which) num_batched += batched(i) ? 1 : 0;
  if (which.size() < 2 || num_batched == 0) {
    for (size_t i : which) out.push_back(input(i));
    return out;
  }
  Sym rank;
  for (size_t i : which) {
    Sym r = logical_rank(in(i));
    rank = rank ? call(OpId::max_int, {rank, r}) : r;
  }
  for (size_t i : which) out.push_back(align(in(i), rank));
  return out;
}

Sym BatchRuleContext::materialize(const BVal& v) const {
  if (v.batched) return v.value;
  return expand(unsqueeze(v.value, 0), batched_size(size(v.value)));
}

// ---- Emitting

std::vector<Sym> BatchRuleContext::call_op(std::vector<Arg> args) const {
  std::vector<Sym> outs = call_multi(op_, std::move(args), output_types_.size());
  for (size_t i = 0; i < outs.size(); ++i) outs[i].value()->set_type(output_types_[i]);
  return outs;
}

std::vector<Sym> BatchRuleContext::call_with(
    const std::vector<std::pair<size_t, Arg>>& replacements) const {
  std::vector<Arg> args;
  for (size_t i = 0; i < num_inputs(); ++i) args.emplace_back(input(i));
  for (const auto& [i, a] : replacements) args.at(i) = a;
  return call_op(std::move(args));
}

namespace {

// The type of a literal given for a parameter of type `param` (as Sym's call does).
TypePtr literal_type(const IValue& v, const TypePtr& param) {
  if (v.is_none()) return param && param->kind() == TypeKind::Optional ? param : Type::none();
  if (v.is_bool()) return Type::bool_();
  if (v.is_int()) return Type::int_();
  if (v.is_double()) return Type::float_();
  if (v.is_dtype()) return Type::dtype();
  if (v.is_str()) return Type::str_();
  return Type::list(Type::int_());
}

TypePtr schema_result_type(const FunctionSchema& s, size_t i) {
  if (i >= s.returns.size()) return Type::tensor();
  const TypePtr& t = s.returns[i].type;
  if (t->kind() == TypeKind::Var || t->kind() == TypeKind::Any) return Type::any();
  if (t->kind() == TypeKind::Number) return Type::float_();
  return t;
}

}  // namespace

std::vector<BVal> BatchRuleContext::apply_multi(OpId op, std::vector<BArg> args,
                                                size_t num_outputs) const {
  const FunctionSchema& schema = schema_of(op);
  std::vector<BVal> inputs;
  for (size_t i = 0; i < schema.arguments.size() || i < args.size(); ++i) {
    const TypePtr& param = schema.arguments.at(std::min(i, schema.arguments.size() - 1)).type;
    if (i < args.size() && !args[i].has_literal) {
      inputs.push_back(args[i].value);
      continue;
    }
    IValue v;
    if (i < args.size()) {
      v = args[i].literal;
    } else {
      const Argument& a = schema.arguments[i];
      TSL_INTERNAL_ASSERT(a.default_value.has_value(), "batching rule omits argument '", a.name,
                          "' of ", schema.name);
      v = *a.default_value;
    }
    TypePtr t = literal_type(v, param);
    inputs.push_back(unbatched(constant(std::move(v), t)));
  }
  std::vector<TypePtr> types;
  for (size_t i = 0; i < num_outputs; ++i) types.push_back(schema_result_type(schema, i));
  return emitter_.apply(op, std::move(inputs), std::move(types), range_);
}

Value* if_then_else(Value* cond, const TypePtr& type, const std::function<Value*()>& then,
                    const std::function<Value*()>& otherwise) {
  Graph& g = FormulaScope::graph();
  Node* branch = g.insert(g.create(OpId::If, {cond}, 1));
  branch->set_range(FormulaScope::range());
  Block* then_block = branch->add_block();
  Block* else_block = branch->add_block();
  {
    InsertPointGuard in(g, then_block);
    then_block->add_return(then());
  }
  {
    InsertPointGuard in(g, else_block);
    else_block->add_return(otherwise());
  }
  return branch->output()->set_type(type);
}

namespace {

// If(cond) { then() } else { Undefined }, typed `type`.
Value* if_defined(Value* cond, const TypePtr& type, const std::function<Value*()>& then) {
  return if_then_else(cond, type, then,
                      [&] { return call(OpId::Undefined, {}).value()->set_type(type); });
}

}  // namespace

Value* batched_list(Value* list, Value* batch_size, bool copy) {
  Graph& g = FormulaScope::graph();
  const TypePtr& type = list->type();
  return if_defined(call(OpId::AnyDefined, {list}), type, [&]() -> Value* {
    Node* out = g.insert(g.create(OpId::ListConstruct, {}, 1));
    out->set_range(FormulaScope::range());
    out->output()->set_type(type);
    Sym n = call(OpId::len_list, {list});
    Node* loop = g.insert(g.create(OpId::Loop, {n, constant(IValue(true), Type::bool_())}, 0));
    loop->set_range(FormulaScope::range());
    Block* body = loop->add_block();
    Value* i = body->add_param(Type::int_());
    InsertPointGuard in(g, body);
    Value* e = call(OpId::getitem_list, {list, i}).value()->set_type(Type::tensor());
    Value* b = if_defined(call(OpId::AnyDefined, {e}), Type::tensor(), [&]() -> Value* {
      Node* lead = g.insert(g.create(OpId::ListConstruct, {batch_size}, 1));
      lead->output()->set_type(Type::list(Type::int_()));
      Sym full = call(OpId::add_list, {lead->output(), size(e)});
      full.value()->set_type(Type::list(Type::int_()));
      Sym x = expand(unsqueeze(e, 0), full);
      return copy ? call(OpId::clone, {x}).value() : x.value();
    });
    g.insert(g.create(OpId::append_list, {out->output(), b}, 0));
    body->add_return(constant(IValue(true), Type::bool_()));
    return out->output();
  });
}

Sym int_list(std::vector<int64_t> v) {
  return constant(IValue::int_list(v), Type::list(Type::int_()));
}

std::vector<BVal> all_batched(const std::vector<Sym>& outs) {
  std::vector<BVal> r;
  for (Sym s : outs) r.push_back(batched(s));
  return r;
}

std::vector<BVal> pointwise_rule(BatchRuleContext& c) {
  std::vector<size_t> tensors;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (c.input(i).value()->type()->is_tensor()) tensors.push_back(i);
  }
  std::vector<Sym> phys = c.aligned(tensors);
  std::vector<std::pair<size_t, Arg>> r;
  for (size_t k = 0; k < tensors.size(); ++k) r.emplace_back(tensors[k], phys[k]);
  return all_batched(c.call_with(r));
}

BatchRule batching_rule(OpId op) {
  static const BatchingTable* table = [] {
    auto* t = new BatchingTable();
    register_pointwise_batching(*t);
    register_reduction_batching(*t);
    register_shape_batching(*t);
    register_index_batching(*t);
    register_linalg_batching(*t);
    register_nn_batching(*t);
    register_autograd_batching(*t);
    register_unbatchable_ops(*t);
    return t;
  }();
  return (*table)[static_cast<size_t>(op)];
}

}  // namespace tsl::batching
