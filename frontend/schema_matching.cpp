// Overload resolution and argument matching against op schemas.
#include "frontend/schema_matching.h"

#include <algorithm>
#include <unordered_set>

#include "ir/dtype_rules.h"

namespace tsl {
namespace {

// Where a schema argument gets its value from.
struct ArgSource {
  // Packed: positional arguments gathered into the list parameter they start at.
  enum Kind { Positional, Keyword, Default, Packed, Variadic } kind = Default;
  size_t first = 0;  // index into the call's args
  size_t count = 0;  // Packed / Variadic
  Conversion conversion = Conversion::None;
};

// One schema's plan for a call; the scratch vectors are reused from candidate to
// candidate (a call's overloads are tried in turn, each costing no allocation).
struct Plan {
  std::vector<ArgSource> sources;
  TypePtr var;                     // binding of `t`
  std::vector<size_t> positional;  // the indices of the call's positional arguments
  std::vector<bool> filled;        // per schema argument
};

bool is_int_list(const TypePtr& t) {
  return t->kind() == TypeKind::List && t->element()->kind() == TypeKind::Int;
}

bool is_tensor_list(const TypePtr& t) {
  return t->kind() == TypeKind::List && t->element()->kind() == TypeKind::Tensor;
}

// TorchScript's varargsCanBeUsedAsList for tensors: tensors given one by one where the
// last positional parameter is a Tensor[] (`torch.einsum('ij,jk', a, b)`) are that list.
bool packs_tensors(const Argument& a, size_t index, size_t num_positional_params,
                   const TypePtr& first_actual) {
  return index + 1 == num_positional_params && is_tensor_list(a.type) && a.fixed_size == 0 &&
         first_actual->is_tensor();
}

// The element type of a list packed from arguments: int, or Tensor refined with the
// elements' dtype when they share one (the list is the call's own, never appended to,
// so dtype inference may rely on it).
TypePtr packed_element_type(const std::vector<Value*>& elements) {
  if (!elements[0]->type()->is_tensor()) return Type::int_();
  std::optional<DType> d = elements[0]->type()->tensor_dtype();
  for (const Value* v : elements) {
    if (v->type()->tensor_dtype() != d) return Type::tensor();
  }
  return d ? Type::tensor(*d) : Type::tensor();
}

const Value* constant_string(const Value* v) {
  const Node* n = v->node();
  if (n->op() == OpId::Constant && n->attr("value").is_str()) return v;
  return nullptr;
}

std::string arg_type_list(const std::vector<CallArg>& args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out += ", ";
    if (!args[i].name.empty()) out += args[i].name + "=";
    out += args[i].value->type()->str();
  }
  return out;
}

// How arguments may fill a schema's parameters.
struct Matching {
  // Tensors given one by one may fill a Tensor[] parameter (tried only when no overload
  // accepts the call without, so `sum(x)` stays the reduction rather than
  // sum.tensor_list of [x]).
  bool pack_tensors = false;
  // An operator's operands (match_operator): no packing into lists, and only the
  // conversions Python's operators make.
  bool operands = false;
};

// The conversions an operator's operands may take: an int where a float is expected, a
// read of `x.grad` where a Tensor is (a number where a Tensor is is no conversion: NUMS).
bool operand_conversion(Conversion c) {
  return c == Conversion::None || c == Conversion::IntToFloat || c == Conversion::UnwrapGrad;
}

// The plan the matchers fill, kept from call to call so that matching allocates
// nothing once its vectors have grown (a match neither nests nor runs on two threads:
// emit_plan only inserts nodes).
Plan& scratch_plan() {
  static thread_local Plan plan;
  return plan;
}

// Checks one schema against the call, filling `plan`; on failure, says why in `why`
// when given (a call tries overloads until one fits: the text is made only for the
// error).
bool plan_call(const FunctionSchema& s, const std::vector<CallArg>& args, Matching matching,
               std::string* why, Plan& plan) {
  bool nums = op_info(s.op).has(opflags::NUMS);
  plan.sources.assign(s.arguments.size(), ArgSource{});
  plan.var.reset();
  std::vector<bool>& filled = plan.filled;
  filled.assign(s.arguments.size(), false);
  std::vector<size_t>& positional = plan.positional;
  positional.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].name.empty()) positional.push_back(i);
  }
  size_t num_positional_params = 0;
  for (const Argument& a : s.arguments) {
    if (!a.kwarg_only) ++num_positional_params;
  }

  // Positional arguments, with sizes given as varargs (`zeros(2, 3)`) packed into
  // the int[] parameter they start at.
  size_t p = 0;
  for (size_t ai = 0; ai < s.arguments.size() && p < positional.size(); ++ai) {
    const Argument& a = s.arguments[ai];
    if (a.kwarg_only) break;
    if (a.variadic) {
      plan.sources[ai] = {ArgSource::Variadic, p, positional.size() - p};
      filled[ai] = true;
      p = positional.size();
      break;
    }
    size_t remaining_params = num_positional_params - ai;
    size_t remaining_args = positional.size() - p;
    TypePtr formal = a.type->kind() == TypeKind::Optional ? a.type->element() : a.type;
    if (!matching.operands && is_int_list(formal) && remaining_args > remaining_params &&
        args[positional[p]].value->type()->kind() == TypeKind::Int) {
      size_t count = remaining_args - remaining_params + 1;
      for (size_t k = 0; k < count; ++k) {
        if (args[positional[p + k]].value->type()->kind() != TypeKind::Int) {
          if (why)
            *why = "argument '" + a.name + "' takes a list of ints or ints as separate arguments";
          return false;
        }
      }
      plan.sources[ai] = {ArgSource::Packed, p, count};
      filled[ai] = true;
      p += count;
      continue;
    }
    if (matching.pack_tensors &&
        packs_tensors(a, ai, num_positional_params, args[positional[p]].value->type())) {
      for (size_t k = p; k < positional.size(); ++k) {
        if (!args[positional[k]].value->type()->is_tensor()) {
          if (why)
            *why = "argument '" + a.name + "' takes a list of tensors or tensors as separate " +
                   "arguments, not " + args[positional[k]].value->type()->str();
          return false;
        }
      }
      plan.sources[ai] = {ArgSource::Packed, p, positional.size() - p};
      filled[ai] = true;
      p = positional.size();
      continue;
    }
    plan.sources[ai] = {ArgSource::Positional, positional[p], 1};
    filled[ai] = true;
    ++p;
  }
  if (p < positional.size()) {
    if (why)
      *why = "takes " + std::to_string(num_positional_params) + " positional argument" +
             (num_positional_params == 1 ? "" : "s") + " but " + std::to_string(positional.size()) +
             " were given";
    return false;
  }

  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].name.empty()) continue;
    size_t ai = 0;
    for (; ai < s.arguments.size(); ++ai) {
      if (s.arguments[ai].name == args[i].name && !s.arguments[ai].variadic) break;
    }
    // PyTorch's Python names for the same parameters: `input` for the schema's
    // `self` (torch.sum(input=x)), NumPy's `axis` / `keepdims` for `dim` / `keepdim`.
    if (ai == s.arguments.size()) {
      static const std::pair<const char*, const char*> aliases[] = {
          {"input", "self"}, {"axis", "dim"}, {"keepdims", "keepdim"}};
      for (const auto& [alias, canonical] : aliases) {
        if (args[i].name != alias) continue;
        for (ai = 0; ai < s.arguments.size(); ++ai) {
          if (s.arguments[ai].name == canonical && !s.arguments[ai].variadic) break;
        }
      }
    }
    if (ai == s.arguments.size()) {
      if (why) *why = "got an unexpected keyword argument '" + args[i].name + "'";
      return false;
    }
    if (filled[ai]) {
      if (why) *why = "got multiple values for argument '" + args[i].name + "'";
      return false;
    }
    plan.sources[ai] = {ArgSource::Keyword, i, 1};
    filled[ai] = true;
  }

  for (size_t ai = 0; ai < s.arguments.size(); ++ai) {
    const Argument& a = s.arguments[ai];
    if (filled[ai]) continue;
    if (a.variadic) {
      plan.sources[ai] = {ArgSource::Variadic, 0, 0};
      continue;
    }
    if (!a.default_value) {
      if (why) *why = "missing required argument '" + a.name + "'";
      return false;
    }
    plan.sources[ai] = {ArgSource::Default, 0, 0};
  }

  // Types.
  bool saw_tensor = false;
  bool has_tensor_param = false;
  for (size_t ai = 0; ai < s.arguments.size(); ++ai) {
    const Argument& a = s.arguments[ai];
    ArgSource& src = plan.sources[ai];
    if (a.type->kind() == TypeKind::Tensor) has_tensor_param = true;
    if (src.kind == ArgSource::Default || src.kind == ArgSource::Packed) continue;
    if (src.kind == ArgSource::Variadic) {
      for (size_t k = 0; k < src.count; ++k) {
        const Value* v = args[positional[src.first + k]].value;
        TypePtr var = plan.var;
        if (conversion_for(v->type(), a.type, var, false, v) != Conversion::None) {
          if (why)
            *why =
                "argument '" + a.name + "' must be " + a.type->str() + ", not " + v->type()->str();
          return false;
        }
      }
      continue;
    }
    const Value* v = args[src.first].value;
    if (a.type->kind() == TypeKind::Tensor && v->type()->kind() == TypeKind::Tensor)
      saw_tensor = true;
    Conversion c = conversion_for(v->type(), a.type, plan.var, nums, v);
    if (matching.operands && !operand_conversion(c)) c = Conversion::Reject;
    if (c == Conversion::Reject) {
      // Name the type the type variable is bound to (list.append's `t`), and say
      // where an empty list's element type came from.
      if (why) {
        std::string formal = substitute_var(a.type, plan.var)->str();
        *why = "argument '" + a.name + "' must be " + formal + ", not " + v->type()->str();
        if (s.op == OpId::append_list && plan.var && plan.var->kind() == TypeKind::Tensor) {
          *why += " (a list made by `[]` holds Tensors: declare others, e.g. `xs: List[int] = []`)";
        }
      }
      return false;
    }
    src.conversion = c;
  }
  // Python numbers stand in for tensors only next to a real tensor: max(2, 3) is
  // max.int, not max.other.
  if (nums && has_tensor_param && !saw_tensor) {
    if (why) *why = "expects at least one Tensor argument";
    return false;
  }
  return true;
}

Value* emit_default(Graph& graph, const Argument& a, const TypePtr& var, const SourceRange& range) {
  const IValue& d = *a.default_value;
  TypePtr t = substitute_var(a.type, var);
  if (d.is_none()) return graph.insert_constant(IValue(), Type::none(), range);
  if (d.is_list()) return graph.insert_constant(d, Type::list(Type::int_()), range);
  TypePtr ct = d.is_bool()     ? Type::bool_()
               : d.is_int()    ? Type::int_()
               : d.is_double() ? Type::float_()
               : d.is_str()    ? Type::str_()
                               : t;
  return graph.insert_constant(d, ct, range);
}

MatchedOp emit_plan(Graph& graph, const FunctionSchema& s, const Plan& plan,
                    const std::vector<CallArg>& args, const SourceRange& range) {
  MatchedOp m;
  m.op = s.op;
  const std::vector<size_t>& positional = plan.positional;
  for (size_t ai = 0; ai < s.arguments.size(); ++ai) {
    const Argument& a = s.arguments[ai];
    const ArgSource& src = plan.sources[ai];
    switch (src.kind) {
      case ArgSource::Positional:
      case ArgSource::Keyword:
        m.inputs.push_back(apply_conversion(graph, args[src.first].value, src.conversion,
                                            substitute_var(a.type, plan.var), args[src.first].range,
                                            a.fixed_size));
        break;
      case ArgSource::Default:
        m.inputs.push_back(emit_default(graph, a, plan.var, range));
        break;
      case ArgSource::Packed: {
        std::vector<Value*> elements;
        for (size_t k = 0; k < src.count; ++k)
          elements.push_back(args[positional[src.first + k]].value);
        Node* list = graph.insert(graph.create(OpId::ListConstruct, elements, 1));
        list->set_range(range);
        list->output()->set_type(Type::list(packed_element_type(elements)));
        m.inputs.push_back(list->output());
        break;
      }
      case ArgSource::Variadic:
        for (size_t k = 0; k < src.count; ++k)
          m.inputs.push_back(args[positional[src.first + k]].value);
        break;
    }
  }
  for (const Argument& r : s.returns) m.result_types.push_back(substitute_var(r.type, plan.var));
  infer_result_dtypes(s, m.inputs, m.result_types);
  return m;
}

}  // namespace

// A `[]` written in place: an empty ListConstruct nothing else reads yet.
bool is_empty_list_literal(const Value* v) {
  return v && v->node() && v->node()->op() == OpId::ListConstruct && v->node()->inputs().empty() &&
         v->uses().empty();
}

// A `{}` written in place: an empty DictConstruct nothing else reads yet.
bool is_empty_dict_literal(const Value* v) {
  return v && v->node() && v->node()->op() == OpId::DictConstruct && v->node()->inputs().empty() &&
         v->uses().empty();
}

namespace {
bool contains_var(const Type& t) {
  if (t.kind() == TypeKind::Var) return true;
  for (const TypePtr& c : t.contained()) {
    if (contains_var(*c)) return true;
  }
  return false;
}
}  // namespace

TypePtr substitute_var(const TypePtr& t, const TypePtr& var) {
  // Most schema types have no `t`: they are their own substitution, without a copy.
  if (!contains_var(*t)) return t;
  switch (t->kind()) {
    case TypeKind::Var:
      return var ? var : Type::any();
    case TypeKind::List:
      return Type::list(substitute_var(t->element(), var));
    case TypeKind::Optional:
      return Type::optional(substitute_var(t->element(), var));
    case TypeKind::Dict:
      return Type::dict(t->key(), substitute_var(t->value(), var));
    case TypeKind::Tuple: {
      std::vector<TypePtr> elems;
      for (const TypePtr& c : t->contained()) elems.push_back(substitute_var(c, var));
      return Type::tuple(std::move(elems));
    }
    default:
      return t;
  }
}

Conversion conversion_for(const TypePtr& actual, const TypePtr& formal, TypePtr& var, bool nums,
                          const Value* value) {
  switch (formal->kind()) {
    case TypeKind::Any:
      return Conversion::None;
    case TypeKind::Var:
      if (!var) {
        var = actual;
        return Conversion::None;
      }
      // A value where its Optional is bound (appending a refined `x` to a
      // List[Optional[T]]) is one already: the runtime value is the same.
      return actual->equals(*var) || (var->kind() == TypeKind::Optional && is_subtype(actual, var))
                 ? Conversion::None
                 : Conversion::Reject;
    case TypeKind::Number:
      return actual->is_number() ? Conversion::None : Conversion::Reject;
    case TypeKind::Tensor:
      if (actual->is_tensor()) return Conversion::None;
      if (is_grad_read(value)) return Conversion::UnwrapGrad;
      return nums && actual->is_number() ? Conversion::None : Conversion::Reject;
    case TypeKind::Float:
      if (actual->kind() == TypeKind::Float) return Conversion::None;
      return actual->kind() == TypeKind::Int ? Conversion::IntToFloat : Conversion::Reject;
    case TypeKind::Optional:
      if (actual->kind() == TypeKind::None) return Conversion::None;
      if (actual->kind() == TypeKind::Optional) {
        return is_subtype(actual, formal) ? Conversion::None : Conversion::Reject;
      }
      return conversion_for(actual, formal->element(), var, nums, value);
    case TypeKind::Device:
      if (actual->kind() == TypeKind::Device) return Conversion::None;
      if (actual->kind() == TypeKind::Str && value && constant_string(value)) {
        return Device::parse(value->node()->attr("value").to_str()) ? Conversion::StrToDevice
                                                                    : Conversion::Reject;
      }
      return Conversion::Reject;
    case TypeKind::List: {
      const TypePtr& elem = formal->element();
      if (actual->kind() == TypeKind::List && elem->kind() != TypeKind::Var &&
          is_empty_list_literal(value) && !actual->element()->equals(*elem)) {
        return Conversion::RetypeEmptyList;
      }
      if (actual->kind() == TypeKind::List) {
        if (elem->kind() == TypeKind::Var) {
          if (!var) var = actual->element();
          return actual->element()->equals(*var) ? Conversion::None : Conversion::Reject;
        }
        if (elem->kind() == TypeKind::Optional && actual->element()->is_tensor())
          return Conversion::None;
        return actual->element()->equals(*elem) ? Conversion::None : Conversion::Reject;
      }
      if (elem->kind() == TypeKind::Int && actual->kind() == TypeKind::Int)
        return Conversion::IntToList;
      if (actual->kind() == TypeKind::Tuple && elem->kind() != TypeKind::Var) {
        for (const TypePtr& e : actual->contained()) {
          if (!e->equals(*elem)) return Conversion::Reject;
        }
        return Conversion::TupleToList;
      }
      return Conversion::Reject;
    }
    case TypeKind::Dict: {
      if (actual->kind() == TypeKind::Dict && formal->value()->kind() != TypeKind::Var &&
          is_empty_dict_literal(value) && !actual->equals(*formal)) {
        return Conversion::RetypeEmptyDict;
      }
      // Dict(str, t): the key type exactly; the value type binds `t`.
      if (actual->kind() != TypeKind::Dict || !actual->key()->equals(*formal->key()))
        return Conversion::Reject;
      const TypePtr& formal_value = formal->value();
      if (formal_value->kind() == TypeKind::Var && !var) var = actual->value();
      const TypePtr& expected = formal_value->kind() == TypeKind::Var ? var : formal_value;
      return actual->value()->equals(*expected) ? Conversion::None : Conversion::Reject;
    }
    default:
      return is_subtype(actual, formal) ? Conversion::None : Conversion::Reject;
  }
}

Value* apply_conversion(Graph& graph, Value* v, Conversion c, const TypePtr& formal,
                        const SourceRange& range, int copies) {
  switch (c) {
    case Conversion::None:
    case Conversion::Reject:
      return v;
    case Conversion::IntToFloat:
      return graph.insert_op(OpId::Float_int, {v}, Type::float_(), range);
    case Conversion::RetypeEmptyList: {
      Node* n = graph.insert(graph.create(OpId::ListConstruct, {}, 1));
      n->set_range(range);
      return n->output()->set_type(formal);
    }
    case Conversion::RetypeEmptyDict: {
      Node* n = graph.insert(graph.create(OpId::DictConstruct, {}, 1));
      n->set_range(range);
      return n->output()->set_type(formal->kind() == TypeKind::Optional ? formal->element()
                                                                        : formal);
    }
    case Conversion::IntToList: {
      std::vector<Value*> elements(static_cast<size_t>(std::max(copies, 1)), v);
      Node* n = graph.insert(graph.create(OpId::ListConstruct, elements, 1));
      n->set_range(range);
      return n->output()->set_type(Type::list(Type::int_()));
    }
    case Conversion::TupleToList: {
      size_t count = v->type()->contained().size();
      Node* unpack = graph.insert(graph.create(OpId::TupleUnpack, {v}, count));
      unpack->set_range(range);
      for (size_t i = 0; i < count; ++i) unpack->output(i)->set_type(v->type()->contained()[i]);
      Node* list = graph.insert(graph.create(OpId::ListConstruct, unpack->outputs(), 1));
      list->set_range(range);
      TypePtr list_type = formal->kind() == TypeKind::Optional ? formal->element() : formal;
      return list->output()->set_type(list_type);
    }
    case Conversion::StrToDevice: {
      auto device = Device::parse(v->node()->attr("value").to_str());
      return graph.insert_constant(IValue(*device), Type::device(), range);
    }
    case Conversion::UnwrapGrad:
      return unwrap_grad_read(graph, v, range);
  }
  return v;
}

bool is_grad_read(const Value* v) { return v && v->node() && v->node()->op() == OpId::grad_attr; }

Value* unwrap_grad_read(Graph& graph, Value* v, const SourceRange& range) {
  if (!is_grad_read(v)) return v;
  return graph.insert_op(OpId::unwrap_optional, {v}, Type::tensor(), range);
}

MatchedOp match_and_emit(Graph& graph, const std::vector<OpId>& candidates,
                         const std::vector<CallArg>& args, const SourceRange& call_range,
                         const std::string& display_name) {
  Plan& plan = scratch_plan();
  for (bool pack_tensors : {false, true}) {
    for (OpId op : candidates) {
      const FunctionSchema& s = schema_of(op);
      if (plan_call(s, args, {.pack_tensors = pack_tensors}, nullptr, plan))
        return emit_plan(graph, s, plan, args, call_range);
    }
  }
  no_overload_error(candidates, args, call_range, display_name);
}

std::optional<MatchedOp> match_operator(Graph& graph, const std::vector<OpId>& candidates,
                                        const std::vector<CallArg>& operands,
                                        const SourceRange& range) {
  Plan& plan = scratch_plan();
  for (OpId op : candidates) {
    const FunctionSchema& s = schema_of(op);
    if (plan_call(s, operands, {.operands = true}, nullptr, plan))
      return emit_plan(graph, s, plan, operands, range);
  }
  return std::nullopt;
}

void no_overload_error(const std::vector<OpId>& candidates, const std::vector<CallArg>& args,
                       const SourceRange& call_range, const std::string& display_name) {
  // The checks of match_and_emit again, this time saying why each failed.
  std::vector<std::string> reasons;
  Plan& plan = scratch_plan();
  for (OpId op : candidates) {
    std::string why;
    plan_call(schema_of(op), args, {.pack_tensors = true}, &why, plan);
    reasons.push_back(why);
  }
  if (candidates.size() == 1) {
    compile_error(call_range, display_name + "() " + reasons[0]);
  }
  std::string msg = "no overload of " + display_name + "() accepts (" + arg_type_list(args) + ")";
  SourceError err(SourceError::Kind::Compile, call_range, msg);
  for (size_t i = 0; i < candidates.size(); ++i) {
    err.add_note({}, schema_of(candidates[i]).str() + ": " + reasons[i]);
  }
  throw err;
}

}  // namespace tsl
