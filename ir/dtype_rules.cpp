// The dtype rules of the op table evaluated on a call; see dtype_rules.h and Note
// [Result rules] in runtime/ops.def.
#include "ir/dtype_rules.h"

#include "ir/passes/pass_utils.h"

namespace tsl {
namespace {

bool is_tensor_type(const TypePtr& t) { return t->kind() == TypeKind::Tensor; }

bool is_scalar_type(const TypePtr& t) {
  if (t->kind() == TypeKind::Optional) return is_scalar_type(t->element());
  return t->kind() == TypeKind::Number;
}

std::optional<ScalarKind> number_kind(const TypePtr& t) {
  switch (t->kind()) {
    case TypeKind::Int:
      return ScalarKind::Int;
    case TypeKind::Float:
      return ScalarKind::Float;
    case TypeKind::Bool:
      return ScalarKind::Bool;
    default:
      return std::nullopt;
  }
}

std::optional<DType> floating(std::optional<DType> d) {
  if (!d) return d;
  return is_floating(*d) ? *d : DType::Float32;
}

DtypeFact known_dtype(std::optional<DType> d) { return {d, {}}; }

DtypeFact same_as(const Value* v, const DtypeKnowledge& known) { return {known.dtype(v), {v}}; }

// The operands PyTorch's result_type promotes over: the Tensor arguments (a Python
// number passed for one counts as a number) and the Scalar ones, but for the alpha of
// add/sub (which must fit the result, never widens it) and where's bool condition.
DtypeFact promote(const FunctionSchema& schema, std::span<Value* const> inputs,
                  const DtypeKnowledge& known) {
  std::vector<const Value*> tensors;
  std::vector<ScalarKind> numbers;
  for (size_t i = 0; i < schema.arguments.size() && i < inputs.size(); ++i) {
    const Argument& a = schema.arguments[i];
    if (a.name == "alpha" || a.name == "condition") continue;
    if (!is_tensor_type(a.type) && !is_scalar_type(a.type)) continue;
    const Value* v = inputs[i];
    const TypePtr& t = v->type();
    if (t->kind() == TypeKind::None) continue;  // an absent bound of clamp
    if (t->is_tensor()) {
      tensors.push_back(v);
    } else if (std::optional<ScalarKind> k = number_kind(t)) {
      numbers.push_back(*k);
    } else {
      return {};  // a number of unknown kind, an Optional: decided at run time
    }
  }
  if (tensors.empty()) return {};
  // The tensors' one dtype when every one is known and equal (a plain DType and a flag:
  // GCC 12 sees an optional here as maybe uninitialized).
  bool all_known = true, one_class = true;
  DType common = known.dtype(tensors[0]).value_or(DType::Float32);
  for (const Value* t : tensors) {
    std::optional<DType> d = known.dtype(t);
    one_class &= known.same_dtype(tensors[0], t);
    all_known &= d.has_value() && *d == common;
  }
  // Tensors of different dtypes promote by PyTorch's 0-dim rule, which shapes decide.
  if (!all_known) {
    if (!one_class || !numbers.empty()) return {};
    return {std::nullopt, tensors};
  }
  DType result = common;
  for (ScalarKind k : numbers) result = promote_with_scalar(result, k);
  DtypeFact fact{result, {}};
  if (result == common) fact.same_as = tensors;
  return fact;
}

DtypeFact promote_float(const FunctionSchema& schema, std::span<Value* const> inputs,
                        const DtypeKnowledge& known) {
  DtypeFact p = promote(schema, inputs, known);
  if (!p.dtype) return {};  // whether the shared dtype is floating is not known
  DType d = *floating(p.dtype);
  if (d != *p.dtype) p.same_as.clear();
  p.dtype = d;
  return p;
}

// The operands of a product must have one dtype, the result's (an error otherwise).
DtypeFact match(const FunctionSchema& schema, std::span<Value* const> inputs,
                const DtypeKnowledge& known) {
  DtypeFact fact;
  for (size_t i = 0; i < schema.arguments.size() && i < inputs.size(); ++i) {
    if (!is_tensor_type(schema.arguments[i].type) || !inputs[i]->type()->is_tensor()) continue;
    fact.same_as.push_back(inputs[i]);
    if (!fact.dtype) fact.dtype = known.dtype(inputs[i]);
  }
  return fact;
}

// The dtype torch.tensor(data) and full(size, value) infer from the data's static type.
std::optional<DType> data_dtype(TypePtr t) {
  while (t->kind() == TypeKind::List) t = t->element();
  if (std::optional<ScalarKind> k = number_kind(t)) {
    switch (*k) {
      case ScalarKind::Int:
        return DType::Int64;
      case ScalarKind::Float:
        return DType::Float32;
      case ScalarKind::Bool:
        return DType::Bool;
    }
  }
  return std::nullopt;
}

std::optional<DType> data_argument_dtype(const FunctionSchema& schema,
                                         std::span<Value* const> inputs) {
  for (size_t i = 0; i < schema.arguments.size() && i < inputs.size(); ++i) {
    TypeKind k = schema.arguments[i].type->kind();
    if (k == TypeKind::Any || k == TypeKind::Number) return data_dtype(inputs[i]->type());
  }
  return std::nullopt;
}

// arange: int64 when every number is an int (or bool), float32 when one is a float.
std::optional<DType> int_or_float(const FunctionSchema& schema, std::span<Value* const> inputs) {
  bool any_float = false;
  for (size_t i = 0; i < schema.arguments.size() && i < inputs.size(); ++i) {
    if (schema.arguments[i].type->kind() != TypeKind::Number) continue;
    std::optional<ScalarKind> k = number_kind(inputs[i]->type());
    if (!k) return std::nullopt;
    any_float |= *k == ScalarKind::Float;
  }
  return any_float ? DType::Float32 : DType::Int64;
}

std::optional<DType> list_element_dtype(std::span<Value* const> inputs) {
  if (inputs.empty()) return std::nullopt;
  const TypePtr& t = inputs[0]->type();
  if (t->kind() != TypeKind::List || !t->element()->is_tensor()) return std::nullopt;
  return t->element()->tensor_dtype();
}

// einsum of operands of one dtype (known for tensors passed one by one): float and int64
// keep it, in sums and products alike; bools stay bool in products but sum to int64, which
// the equation decides.
std::optional<DType> einsum_dtype(std::span<Value* const> inputs) {
  if (inputs.size() < 2) return std::nullopt;
  const TypePtr& t = inputs[1]->type();
  if (t->kind() != TypeKind::List || !t->element()->is_tensor()) return std::nullopt;
  std::optional<DType> d = t->element()->tensor_dtype();
  return d == DType::Bool ? std::nullopt : d;
}

DtypeFact by_rule(const FunctionSchema& schema, std::span<Value* const> inputs,
                  const DtypeKnowledge& known) {
  auto self = [&]() -> const Value* {
    return !inputs.empty() && inputs[0]->type()->is_tensor() ? inputs[0] : nullptr;
  };
  switch (op_info(schema.op).dtype_rule()) {
    case DtypeRule::Undeclared:
    case DtypeRule::Dynamic:
      return {};
    case DtypeRule::Bool:
      return known_dtype(DType::Bool);
    case DtypeRule::Int64:
      return known_dtype(DType::Int64);
    case DtypeRule::DefaultFloat:
      return known_dtype(DType::Float32);
    case DtypeRule::IntOrFloat:
      return known_dtype(int_or_float(schema, inputs));
    case DtypeRule::Data:
      return known_dtype(data_argument_dtype(schema, inputs));
    case DtypeRule::Self:
      return self() ? same_as(self(), known) : DtypeFact{};
    case DtypeRule::FloatMath: {
      if (!self()) return {};
      std::optional<DType> d = known.dtype(self());
      if (!d) return {};
      return is_floating(*d) ? same_as(self(), known) : known_dtype(DType::Float32);
    }
    case DtypeRule::Promote:
      return promote(schema, inputs, known);
    case DtypeRule::PromoteFloat:
      return promote_float(schema, inputs, known);
    case DtypeRule::TrueDivide: {
      // True division of integers is floating; a rounding mode keeps the promoted type.
      bool rounding = inputs.size() > 2 && inputs[2]->type()->kind() != TypeKind::None;
      return rounding ? promote(schema, inputs, known) : promote_float(schema, inputs, known);
    }
    case DtypeRule::Match:
      return match(schema, inputs, known);
    case DtypeRule::Second:
      return inputs.size() > 1 && inputs[1]->type()->is_tensor() ? same_as(inputs[1], known)
                                                                 : DtypeFact{};
    case DtypeRule::ListElement:
      return known_dtype(list_element_dtype(inputs));
    case DtypeRule::IntegralToInt64: {
      if (!self()) return {};
      std::optional<DType> d = known.dtype(self());
      if (!d) return {};
      return is_floating(*d) ? same_as(self(), known) : known_dtype(DType::Int64);
    }
    case DtypeRule::Einsum:
      return known_dtype(einsum_dtype(inputs));
  }
  return {};
}

// The static type checker's knowledge: a Tensor[dtype] type names its dtype.
class StaticTypes : public DtypeKnowledge {
 public:
  std::optional<DType> dtype(const Value* v) const override { return v->type()->tensor_dtype(); }
  bool same_dtype(const Value* a, const Value* b) const override {
    if (a == b) return true;
    std::optional<DType> da = dtype(a), db = dtype(b);
    return da && db && *da == *db;
  }
};

}  // namespace

DtypeFact result_dtype(const FunctionSchema& schema, std::span<Value* const> inputs,
                       const DtypeKnowledge& known) {
  // dtype= sets a factory's result, converts a reduction's input first and is to()'s
  // target; the rule applies when it is None.
  for (size_t i = 0; i < schema.arguments.size() && i < inputs.size(); ++i) {
    if (schema.arguments[i].name != "dtype") continue;
    const Value* d = inputs[i];
    if (const IValue* c = constant_value(d)) {
      if (c->is_dtype()) return known_dtype(c->to_dtype());
      if (!c->is_none()) return {};
    } else if (d->node()->op() == OpId::dtype) {
      return same_as(d->node()->input(0), known);
    } else {
      return {};
    }
  }
  return by_rule(schema, inputs, known);
}

void infer_result_dtypes(const FunctionSchema& schema, const std::vector<Value*>& inputs,
                         std::vector<TypePtr>& results) {
  if (results.empty() || results[0]->kind() != TypeKind::Tensor) return;
  if (std::optional<DType> d = result_dtype(schema, inputs, StaticTypes()).dtype)
    results[0] = Type::tensor(*d);
  for (size_t i = 1; i < results.size() && i < schema.returns.size(); ++i) {
    if (schema.returns[i].name == "indices" && results[i]->is_tensor())
      results[i] = Type::tensor(DType::Int64);
  }
}

}  // namespace tsl
