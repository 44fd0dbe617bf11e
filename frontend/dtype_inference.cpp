// Static result dtypes from PyTorch's dtype rules; see dtype_inference.h.
#include "frontend/dtype_inference.h"

#include <optional>

namespace tsl {
namespace {

// What an argument contributes to type promotion.
struct Operand {
  enum Kind { Unknown, TensorOf, Number } kind = Unknown;
  DType dtype = DType::Float32;         // TensorOf
  ScalarKind scalar = ScalarKind::Int;  // Number
};

Operand operand_of(const Value* v) {
  const TypePtr& t = v->type();
  switch (t->kind()) {
    case TypeKind::Tensor:
      if (t->tensor_dtype()) return {Operand::TensorOf, *t->tensor_dtype(), ScalarKind::Int};
      return {};
    case TypeKind::Int:
      return {Operand::Number, DType::Int64, ScalarKind::Int};
    case TypeKind::Float:
      return {Operand::Number, DType::Float32, ScalarKind::Float};
    case TypeKind::Bool:
      return {Operand::Number, DType::Bool, ScalarKind::Bool};
    default:
      return {};
  }
}

// PyTorch's result_type over operands whose tensor dtypes agree (different tensor
// dtypes would need the 0-dim rule, which depends on shapes).
std::optional<DType> promote(const std::vector<Operand>& operands) {
  std::optional<DType> tensor;
  for (const Operand& o : operands) {
    if (o.kind == Operand::Unknown) return std::nullopt;
    if (o.kind != Operand::TensorOf) continue;
    if (tensor && *tensor != o.dtype) return std::nullopt;
    tensor = o.dtype;
  }
  if (!tensor) return std::nullopt;
  DType result = *tensor;
  for (const Operand& o : operands) {
    if (o.kind == Operand::Number) result = promote_with_scalar(result, o.scalar);
  }
  return result;
}

// The constant `dtype=` argument of a call, if it has one.
std::optional<DType> dtype_argument(const FunctionSchema& schema,
                                    const std::vector<Value*>& inputs) {
  for (size_t i = 0; i < schema.arguments.size() && i < inputs.size(); ++i) {
    if (schema.arguments[i].name != "dtype") continue;
    const Node* n = inputs[i]->node();
    if (n->op() == OpId::Constant && n->attr("value").is_dtype())
      return n->attr("value").to_dtype();
  }
  return std::nullopt;
}

// The dtype torch.tensor(data) infers from the static type of `data`.
std::optional<DType> data_dtype(TypePtr t) {
  while (t->kind() == TypeKind::List) t = t->element();
  switch (t->kind()) {
    case TypeKind::Int:
      return DType::Int64;
    case TypeKind::Float:
      return DType::Float32;
    case TypeKind::Bool:
      return DType::Bool;
    default:
      return std::nullopt;
  }
}

bool all_int(const std::vector<Value*>& inputs, size_t n) {
  for (size_t i = 0; i < n && i < inputs.size(); ++i) {
    TypeKind k = inputs[i]->type()->kind();
    if (k != TypeKind::Int && k != TypeKind::Bool) return false;
  }
  return true;
}

std::optional<DType> floating(std::optional<DType> d) {
  if (!d) return d;
  return is_floating(*d) ? *d : DType::Float32;
}

std::optional<DType> integral_to_long(std::optional<DType> d) {
  if (!d) return d;
  return is_floating(*d) ? *d : DType::Int64;
}

std::optional<DType> self_dtype(const std::vector<Value*>& inputs) {
  if (inputs.empty()) return std::nullopt;
  Operand o = operand_of(inputs[0]);
  if (o.kind != Operand::TensorOf) return std::nullopt;
  return o.dtype;
}

std::optional<DType> binary_dtype(const std::vector<Value*>& inputs, size_t first, size_t count) {
  std::vector<Operand> ops;
  for (size_t i = first; i < first + count && i < inputs.size(); ++i)
    ops.push_back(operand_of(inputs[i]));
  return promote(ops);
}

// einsum of operands of one dtype (known for tensors passed one by one, see
// packed_element_type): float and int64 keep it (sums and products alike); bools stay
// bool in products but sum to int64, which the equation decides.
std::optional<DType> einsum_dtype(const std::vector<Value*>& inputs) {
  if (inputs.size() < 2) return std::nullopt;
  const TypePtr& t = inputs[1]->type();
  if (t->kind() != TypeKind::List || !t->element()->is_tensor()) return std::nullopt;
  std::optional<DType> d = t->element()->tensor_dtype();
  return d == DType::Bool ? std::nullopt : d;
}

// The dtype of the first result, by op.
std::optional<DType> first_result_dtype(const FunctionSchema& schema,
                                        const std::vector<Value*>& inputs) {
  OpId op = schema.op;
  // dtype= sets a factory's result and converts a reduction's input first.
  if (std::optional<DType> d = dtype_argument(schema, inputs)) return d;
  switch (op) {
    // Always bool or always int64.
    case OpId::eq:
    case OpId::ne:
    case OpId::lt:
    case OpId::le:
    case OpId::gt:
    case OpId::ge:
    case OpId::logical_and:
    case OpId::logical_or:
    case OpId::logical_xor:
    case OpId::logical_not:
    case OpId::isnan:
    case OpId::isinf:
    case OpId::isfinite:
    case OpId::all:
    case OpId::any:
      return DType::Bool;
    case OpId::argmax:
    case OpId::argmin:
    case OpId::one_hot:
    case OpId::randint:
    case OpId::randint_high:
    case OpId::randperm:
      return DType::Int64;
    // Factories without dtype=.
    case OpId::zeros:
    case OpId::ones:
    case OpId::empty:
    case OpId::rand:
    case OpId::randn:
    case OpId::normal:
    case OpId::linspace:
    case OpId::eye:
    case OpId::scalar_tensor:  // the default dtype whatever the number (PyTorch's rule)
      return DType::Float32;
    case OpId::arange:
      return all_int(inputs, 1) ? DType::Int64 : DType::Float32;
    case OpId::arange_start:
      return all_int(inputs, 3) ? DType::Int64 : DType::Float32;
    case OpId::full:
      return inputs.size() > 1 ? data_dtype(inputs[1]->type()) : std::nullopt;
    case OpId::tensor:
      return inputs.empty() ? std::nullopt : data_dtype(inputs[0]->type());
    case OpId::zeros_like:
    case OpId::ones_like:
    case OpId::empty_like:
    case OpId::full_like:
    case OpId::rand_like:
    case OpId::randn_like:
    case OpId::normal_tensors:
      return self_dtype(inputs);
    // Elementwise with promotion.
    case OpId::add:
    case OpId::sub:
    case OpId::mul:
    case OpId::maximum:
    case OpId::minimum:
    case OpId::remainder:
    case OpId::floor_divide:
    case OpId::pow:
    case OpId::atan2:
    case OpId::bitwise_and:
    case OpId::bitwise_or:
    case OpId::bitwise_xor:
    case OpId::max_other:
    case OpId::min_other:
      return op == OpId::atan2 ? floating(binary_dtype(inputs, 0, 2)) : binary_dtype(inputs, 0, 2);
    case OpId::div: {
      // True division of integers is floating; a rounding mode keeps the type.
      bool rounding = inputs.size() > 2 && inputs[2]->type()->kind() != TypeKind::None;
      std::optional<DType> d = binary_dtype(inputs, 0, 2);
      return rounding ? d : floating(d);
    }
    case OpId::where:
      return binary_dtype(inputs, 1, 2);
    case OpId::matmul:
    case OpId::mm:
    case OpId::bmm:
    case OpId::mv:
    case OpId::dot:
    case OpId::outer:
      return binary_dtype(inputs, 0, 2);
    // baddbmm computes in batch1's dtype; embedding gives rows of weight.
    case OpId::baddbmm:
    case OpId::embedding:
      return inputs.size() > 1 ? self_dtype({inputs[1]}) : std::nullopt;
    case OpId::einsum:
      return einsum_dtype(inputs);
    // Reductions: integers sum to int64.
    case OpId::sum:
    case OpId::prod:
    case OpId::cumsum:
      return integral_to_long(self_dtype(inputs));
    default:
      break;
  }
  const OpInfo& info = op_info(op);
  if (info.has(opflags::VIEW) || info.has(opflags::EW)) {
    // Elementwise math on integers computes in float32; the rest keep the dtype.
    switch (op) {
      case OpId::neg:
      case OpId::abs:
      case OpId::sign:
      case OpId::floor:
      case OpId::ceil:
      case OpId::round:
      case OpId::trunc:
      case OpId::square:
      case OpId::relu:
      case OpId::clamp:
      case OpId::clip:
      case OpId::bitwise_not:
        return self_dtype(inputs);
      default:
        break;
    }
    if (info.has(opflags::EW)) return floating(self_dtype(inputs));
    return op == OpId::to_dtype || op == OpId::to_device ? std::nullopt : self_dtype(inputs);
  }
  switch (op) {
    case OpId::clone:
    case OpId::flip:
    case OpId::repeat:
    case OpId::index_select:
    case OpId::gather:
    case OpId::index:
    case OpId::max_dim:
    case OpId::min_dim:
    case OpId::amax:
    case OpId::amin:
    case OpId::max:
    case OpId::min:
    case OpId::mean:
    case OpId::var:
    case OpId::var_dim:
    case OpId::std:
    case OpId::std_dim:
    case OpId::norm:
    case OpId::logsumexp:
    case OpId::softmax:
    case OpId::log_softmax:
    case OpId::dropout:
    case OpId::mse_loss:
    case OpId::binary_cross_entropy:
    case OpId::cross_entropy:
    case OpId::nll_loss:
    case OpId::linear:
    case OpId::masked_fill_scalar:
    case OpId::masked_fill_tensor:
    case OpId::tril:
    case OpId::triu:
    case OpId::diag:
    case OpId::sort:
    case OpId::sort_stable:
    case OpId::topk:
    case OpId::layer_norm:
      return self_dtype(inputs);
    case OpId::cat:
    case OpId::stack: {
      const TypePtr& t = inputs.empty() ? nullptr : inputs[0]->type();
      if (t && t->kind() == TypeKind::List && t->element()->kind() == TypeKind::Tensor) {
        return t->element()->tensor_dtype();
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

void infer_result_dtypes(const FunctionSchema& schema, const std::vector<Value*>& inputs,
                         std::vector<TypePtr>& results) {
  if (results.empty() || results[0]->kind() != TypeKind::Tensor) return;
  if (std::optional<DType> d = first_result_dtype(schema, inputs)) results[0] = Type::tensor(*d);
  // max(x, dim), min(x, dim), sort, topk: the second result holds int64 indices.
  bool indices = schema.op == OpId::max_dim || schema.op == OpId::min_dim ||
                 schema.op == OpId::sort || schema.op == OpId::sort_stable ||
                 schema.op == OpId::topk;
  if (indices && results.size() > 1) {
    results[1] = Type::tensor(DType::Int64);
  }
}

}  // namespace tsl
