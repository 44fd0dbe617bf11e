// Type construction, printing, subtyping and the types of runtime values.
#include "ir/type.h"

namespace tsl {
namespace {

TypePtr make(TypeKind kind) { return std::make_shared<Type>(kind, std::vector<TypePtr>{}); }

}  // namespace

TypePtr Type::tensor() {
  static TypePtr t = make(TypeKind::Tensor);
  return t;
}
TypePtr Type::tensor(DType dtype) {
  static const TypePtr refined[kNumDTypes] = {
      [] {
        auto t = std::make_shared<Type>(TypeKind::Tensor, std::vector<TypePtr>{});
        t->dtype_ = DType::Bool;
        return t;
      }(),
      [] {
        auto t = std::make_shared<Type>(TypeKind::Tensor, std::vector<TypePtr>{});
        t->dtype_ = DType::Int64;
        return t;
      }(),
      [] {
        auto t = std::make_shared<Type>(TypeKind::Tensor, std::vector<TypePtr>{});
        t->dtype_ = DType::Float32;
        return t;
      }(),
      [] {
        auto t = std::make_shared<Type>(TypeKind::Tensor, std::vector<TypePtr>{});
        t->dtype_ = DType::Float64;
        return t;
      }(),
  };
  return refined[static_cast<int>(dtype)];
}
TypePtr Type::int_() {
  static TypePtr t = make(TypeKind::Int);
  return t;
}
TypePtr Type::float_() {
  static TypePtr t = make(TypeKind::Float);
  return t;
}
TypePtr Type::bool_() {
  static TypePtr t = make(TypeKind::Bool);
  return t;
}
TypePtr Type::str_() {
  static TypePtr t = make(TypeKind::Str);
  return t;
}
TypePtr Type::none() {
  static TypePtr t = make(TypeKind::None);
  return t;
}
TypePtr Type::dtype() {
  static TypePtr t = make(TypeKind::DType);
  return t;
}
TypePtr Type::device() {
  static TypePtr t = make(TypeKind::Device);
  return t;
}
TypePtr Type::any() {
  static TypePtr t = make(TypeKind::Any);
  return t;
}
TypePtr Type::node() {
  static TypePtr t = make(TypeKind::Node);
  return t;
}
TypePtr Type::var() {
  static TypePtr t = make(TypeKind::Var);
  return t;
}
TypePtr Type::number() {
  static TypePtr t = make(TypeKind::Number);
  return t;
}

TypePtr Type::list(TypePtr element) {
  return std::make_shared<Type>(TypeKind::List, std::vector<TypePtr>{std::move(element)});
}
TypePtr Type::tuple(std::vector<TypePtr> elements) {
  return std::make_shared<Type>(TypeKind::Tuple, std::move(elements));
}
TypePtr Type::optional(TypePtr element) {
  if (element->kind() == TypeKind::Optional || element->kind() == TypeKind::None) return element;
  return std::make_shared<Type>(TypeKind::Optional, std::vector<TypePtr>{std::move(element)});
}
TypePtr Type::dict(TypePtr key, TypePtr value) {
  return std::make_shared<Type>(TypeKind::Dict,
                                std::vector<TypePtr>{std::move(key), std::move(value)});
}
TypePtr Type::function(std::shared_ptr<const FunctionSignature> signature) {
  return std::make_shared<Type>(TypeKind::Function, std::vector<TypePtr>{}, std::move(signature));
}

std::string Type::str() const {
  switch (kind_) {
    case TypeKind::Tensor:
      return "Tensor";
    case TypeKind::Int:
      return "int";
    case TypeKind::Float:
      return "float";
    case TypeKind::Bool:
      return "bool";
    case TypeKind::Str:
      return "str";
    case TypeKind::None:
      return "None";
    case TypeKind::DType:
      return "dtype";
    case TypeKind::Device:
      return "device";
    case TypeKind::Any:
      return "Any";
    case TypeKind::Var:
      return "t";
    case TypeKind::Number:
      return "Scalar";
    case TypeKind::Node:
      return "Node";
    case TypeKind::List:
      return "List[" + element()->str() + "]";
    case TypeKind::Optional:
      return "Optional[" + element()->str() + "]";
    case TypeKind::Dict:
      return "Dict[" + key()->str() + ", " + value()->str() + "]";
    case TypeKind::Tuple: {
      std::string out = "Tuple[";
      for (size_t i = 0; i < contained_.size(); ++i) {
        if (i) out += ", ";
        out += contained_[i]->str();
      }
      return out + "]";
    }
    case TypeKind::Function: {
      std::string out = "Callable[[";
      if (signature_) {
        for (size_t i = 0; i < signature_->params.size(); ++i) {
          if (i) out += ", ";
          out += signature_->params[i]->str();
        }
        return out + "], " + (signature_->result ? signature_->result->str() : "None") + "]";
      }
      return out + "...], Any]";
    }
  }
  return "?";
}

bool Type::equals(const Type& other) const {
  if (kind_ != other.kind_ || contained_.size() != other.contained_.size()) return false;
  for (size_t i = 0; i < contained_.size(); ++i) {
    if (!contained_[i]->equals(*other.contained_[i])) return false;
  }
  if (kind_ == TypeKind::Function) return signature_ == other.signature_;
  return true;
}

bool is_subtype(const TypePtr& a, const TypePtr& b) {
  if (b->kind() == TypeKind::Any) return true;
  if (a->equals(*b)) return true;
  if (b->kind() == TypeKind::Optional) {
    if (a->kind() == TypeKind::None) return true;
    if (a->kind() == TypeKind::Optional) return is_subtype(a->element(), b->element());
    return is_subtype(a, b->element());
  }
  if (a->kind() == TypeKind::Tuple && b->kind() == TypeKind::Tuple &&
      a->contained().size() == b->contained().size()) {
    for (size_t i = 0; i < a->contained().size(); ++i) {
      if (!is_subtype(a->contained()[i], b->contained()[i])) return false;
    }
    return true;
  }
  if (a->kind() == TypeKind::Function && b->kind() == TypeKind::Function) {
    const auto& sa = a->signature();
    const auto& sb = b->signature();
    if (!sa || !sb || sa->params.size() != sb->params.size()) return false;
    for (size_t i = 0; i < sa->params.size(); ++i) {
      if (!sa->params[i]->equals(*sb->params[i])) return false;
    }
    return sa->result->equals(*sb->result);
  }
  return false;
}

TypePtr type_of_value(const IValue& v, const TypePtr& hint) {
  switch (v.tag()) {
    case IValue::Tag::None:
      return Type::none();
    case IValue::Tag::Bool:
      return Type::bool_();
    case IValue::Tag::Int:
      return Type::int_();
    case IValue::Tag::Double:
      return Type::float_();
    case IValue::Tag::DType:
      return Type::dtype();
    case IValue::Tag::Device:
      return Type::device();
    case IValue::Tag::Str:
      return Type::str_();
    case IValue::Tag::Tensor:
      return v.tensor_impl() ? Type::tensor(v.tensor_impl()->dtype()) : Type::tensor();
    case IValue::Tag::List: {
      const auto& elems = v.to_list().elements;
      if (hint && hint->kind() == TypeKind::List) return hint;
      if (elems.empty()) return Type::list(Type::tensor());
      return Type::list(type_of_value(elems[0]));
    }
    case IValue::Tag::Tuple: {
      std::vector<TypePtr> elems;
      const auto& values = v.to_tuple();
      for (size_t i = 0; i < values.size(); ++i) {
        TypePtr h = hint && hint->kind() == TypeKind::Tuple && i < hint->contained().size()
                        ? hint->contained()[i]
                        : nullptr;
        elems.push_back(type_of_value(values[i], h));
      }
      return Type::tuple(std::move(elems));
    }
    case IValue::Tag::Dict: {
      if (hint && hint->kind() == TypeKind::Dict) return hint;
      const auto& entries = v.to_dict().entries();
      if (entries.empty()) return Type::dict(Type::str_(), Type::tensor());
      return Type::dict(type_of_value(entries[0].first), type_of_value(entries[0].second));
    }
    case IValue::Tag::Object:
      return hint ? hint : Type::any();
  }
  return Type::any();
}

namespace {

// What two types equal up to refinements (equals() ignores a Tensor's dtype) both
// guarantee: a dtype only where both have the same one, element by element.
TypePtr join_refinements(const TypePtr& a, const TypePtr& b) {
  switch (a->kind()) {
    case TypeKind::Tensor:
      return a->tensor_dtype() == b->tensor_dtype() ? a : Type::tensor();
    case TypeKind::List:
      return Type::list(join_refinements(a->element(), b->element()));
    case TypeKind::Optional:
      return Type::optional(join_refinements(a->element(), b->element()));
    case TypeKind::Dict:
      return Type::dict(a->key(), join_refinements(a->value(), b->value()));
    case TypeKind::Tuple: {
      std::vector<TypePtr> elems;
      for (size_t i = 0; i < a->contained().size(); ++i)
        elems.push_back(join_refinements(a->contained()[i], b->contained()[i]));
      return Type::tuple(std::move(elems));
    }
    default:
      return a;
  }
}

}  // namespace

bool same_refinements(const TypePtr& a, const TypePtr& b) {
  if (a->kind() == TypeKind::Tensor && b->kind() == TypeKind::Tensor)
    return a->tensor_dtype() == b->tensor_dtype();
  if (a->contained().size() != b->contained().size()) return true;
  for (size_t i = 0; i < a->contained().size(); ++i) {
    if (!same_refinements(a->contained()[i], b->contained()[i])) return false;
  }
  return true;
}

namespace {

// Optional o and a value type v that it admits: Optional of what both guarantee.
TypePtr join_optional(const TypePtr& o, const TypePtr& v) {
  if (v->kind() == TypeKind::None) return o;
  if (v->kind() == TypeKind::Optional) return v->equals(*o) ? join_refinements(o, v) : o;
  return v->equals(*o->element()) ? Type::optional(join_refinements(o->element(), v)) : o;
}

}  // namespace

// Where two paths meet (the branches of an `if`, a loop's carried value, the returns of
// a function), the type holds what both paths guarantee: `x = a.long() if c else a` is a
// Tensor of unknown dtype, not the first path's int64 (which made `x.item()` an int and
// every gradient through x zero).
TypePtr unify_types(const TypePtr& a, const TypePtr& b) {
  if (a->equals(*b)) return join_refinements(a, b);
  if (a->kind() == TypeKind::None && b->kind() != TypeKind::None) return Type::optional(b);
  if (b->kind() == TypeKind::None && a->kind() != TypeKind::None) return Type::optional(a);
  if (a->kind() == TypeKind::Optional && is_subtype(b, a)) return join_optional(a, b);
  if (b->kind() == TypeKind::Optional && is_subtype(a, b)) return join_optional(b, a);
  return nullptr;
}

}  // namespace tsl

namespace tsl {

TypePtr strip_refinements(const TypePtr& t) {
  switch (t->kind()) {
    case TypeKind::Tensor:
      return t->tensor_dtype() ? Type::tensor() : t;
    case TypeKind::List:
      return Type::list(strip_refinements(t->element()));
    case TypeKind::Optional:
      return Type::optional(strip_refinements(t->element()));
    case TypeKind::Dict:
      return Type::dict(t->key(), strip_refinements(t->value()));
    case TypeKind::Tuple: {
      std::vector<TypePtr> elems;
      for (const TypePtr& e : t->contained()) elems.push_back(strip_refinements(e));
      return Type::tuple(std::move(elems));
    }
    default:
      return t;
  }
}

}  // namespace tsl
