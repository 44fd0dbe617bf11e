// The op table's dtype rules (Note [Result rules] in runtime/ops.def) applied to a call:
// what is known of its Tensor result's dtype, for the type checker and propagate-shapes.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "ir/ir.h"
#include "ir/schema.h"

namespace tsl {

// What a caller knows of tensor dtypes: the type checker from static types, propagate-
// shapes from its dtype classes (which also know dtypes shared but not named).
class DtypeKnowledge {
 public:
  virtual ~DtypeKnowledge() = default;
  // The dtype of tensor value v, when known.
  virtual std::optional<DType> dtype(const Value* v) const = 0;
  // Whether tensor values a and b provably have one dtype.
  virtual bool same_dtype(const Value* a, const Value* b) const = 0;
};

// What the rule of an op says of its first result: its dtype when known, and the tensor
// inputs (or values a `dtype=` argument names) whose dtype it has, known or not.
struct DtypeFact {
  std::optional<DType> dtype;
  std::vector<const Value*> same_as;
};

// The fact for a call of `schema` on `inputs` (one per schema argument, as a node's).
// For example, add(x, y) of two values of one dtype class: same_as {x, y}; of two
// float32 tensors and a Python float: dtype float32.
DtypeFact result_dtype(const FunctionSchema& schema, std::span<Value* const> inputs,
                       const DtypeKnowledge& known);

// Refines the Tensor results in `results` (the schema's return types) of a call of
// `schema` on `inputs` to Tensor[dtype] where the rule fixes the dtype from static types:
// the dtypes of tensor arguments, the kinds of Python number arguments and constant
// `dtype=` arguments. A result named `indices` (max.dim, sort, topk) is int64.
void infer_result_dtypes(const FunctionSchema& schema, const std::vector<Value*>& inputs,
                         std::vector<TypePtr>& results);

}  // namespace tsl
