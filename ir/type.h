// Static types of TSL values (LANGUAGE.md §3): Tensor, int, float, bool, str, None,
// List[T], Tuple[...], Optional[T], Dict[K, V], dtype, device, functions, and the type variable
// `t` of generic op schemas. Types are immutable and shared.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/tensor/dtype.h"
#include "runtime/tensor/ivalue.h"

namespace tsl {

class Type;
using TypePtr = std::shared_ptr<const Type>;

enum class TypeKind {
  Tensor,
  Int,
  Float,
  Bool,
  Str,
  None,
  DType,
  Device,
  List,
  Tuple,
  Optional,
  Dict,      // Dict[K, V]: contained() is {K, V}, K is str or int (or `t` in schemas)
  Function,  // a user function or transform result; see FunctionSignature
  Node,      // an eager tape node, `x.grad_fn` (torch.autograd.graph.Node)
  Any,       // schemas only: accepts every type (print, tensor(data))
  Var,       // schemas only: the type variable `t`
  Number,    // schemas only: Scalar, an int, float or bool
};

// The signature of a function value (`grad(f)`, a def): parameter and result types.
struct FunctionSignature {
  std::vector<TypePtr> params;
  TypePtr result;
  // What a call of a value of this type runs (the frontend's FunctionDecl): function
  // values are resolved statically, so each function value has a type of its own.
  const void* target = nullptr;
  std::string name;  // "grad(f)", for printing the value
};

class Type {
 public:
  TypeKind kind() const { return kind_; }
  const std::vector<TypePtr>& contained() const { return contained_; }
  // The element type of List/Optional.
  const TypePtr& element() const { return contained_.at(0); }
  // The key and value types of a Dict.
  const TypePtr& key() const { return contained_.at(0); }
  const TypePtr& value() const { return contained_.at(1); }
  const std::shared_ptr<const FunctionSignature>& signature() const { return signature_; }
  // A Tensor type may know its dtype (top-level values, refined by shape propagation).
  // Refinements never take part in equality: Tensor(float32) equals Tensor.
  std::optional<DType> tensor_dtype() const { return dtype_; }

  bool is_tensor() const { return kind_ == TypeKind::Tensor; }
  bool is_number() const {
    return kind_ == TypeKind::Int || kind_ == TypeKind::Float || kind_ == TypeKind::Bool;
  }

  // Python's spelling: "Tensor", "int", "List[int]", "Tuple[int, Tensor]",
  // "Optional[Tensor]", "Dict[str, Tensor]", "dtype", "device", "None".
  std::string str() const;
  bool equals(const Type& other) const;

  static TypePtr tensor();
  static TypePtr tensor(DType dtype);
  static TypePtr int_();
  static TypePtr float_();
  static TypePtr bool_();
  static TypePtr str_();
  static TypePtr none();
  static TypePtr dtype();
  static TypePtr device();
  static TypePtr any();
  static TypePtr node();
  static TypePtr var();
  static TypePtr number();
  static TypePtr list(TypePtr element);
  static TypePtr tuple(std::vector<TypePtr> elements);
  static TypePtr optional(TypePtr element);
  static TypePtr dict(TypePtr key, TypePtr value);
  static TypePtr function(std::shared_ptr<const FunctionSignature> signature);

  Type(TypeKind kind, std::vector<TypePtr> contained,
       std::shared_ptr<const FunctionSignature> signature = nullptr)
      : kind_(kind), contained_(std::move(contained)), signature_(std::move(signature)) {}

 private:
  TypeKind kind_;
  std::vector<TypePtr> contained_;
  std::shared_ptr<const FunctionSignature> signature_;
  std::optional<DType> dtype_;
};

inline bool operator==(const TypePtr& a, const Type& b) { return a->equals(b); }

// Whether a value of type `a` may be used where `b` is expected without conversion:
// equal types, T and None into Optional[T], anything into Any.
bool is_subtype(const TypePtr& a, const TypePtr& b);

// The static type of a runtime value (for top-level variables and REPL inputs):
// tensors are refined with their dtype. Empty lists get List[Tensor] and empty dicts
// Dict[str, Tensor] (TorchScript's defaults) unless `hint` says otherwise.
TypePtr type_of_value(const IValue& v, const TypePtr& hint = nullptr);

// The type both branches of an `if` agree on, or null when they do not: equal types,
// None and T (-> Optional[T]), T and Optional[T].
// Where the two differ only in refinements (a Tensor's dtype), what both guarantee.
TypePtr unify_types(const TypePtr& a, const TypePtr& b);
// Whether a and b, equal up to refinements, also have the same ones.
bool same_refinements(const TypePtr& a, const TypePtr& b);

// The type without refinements (Tensor(float32) -> Tensor), also inside containers.
TypePtr strip_refinements(const TypePtr& t);

}  // namespace tsl
