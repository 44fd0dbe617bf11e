// Shape and dtype propagation without input shapes: which tensor values provably have
// the same shape (or dtype) as which others, and the no-op conversions of gradient
// graphs (`sum_to_size`, `expand`, `to`) that this makes removable.
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>

#include "ir/ir.h"

namespace tsl {

// Note [Shape classes]
// TSL compiles a function once for all input shapes, so a static analysis cannot
// know sizes; it can know that two values have equal sizes. ShapeFacts partitions
// the tensor values of a graph into classes "same shape as v" and, separately, "same
// dtype as v" (some dtype classes know their dtype). A fact holds whenever both
// values are defined tensors (a gradient may be undefined: a zero). The sources are the
// op table's result rules (Note [Result rules] in runtime/ops.def), one per row:
//
//  * shapes (ShapeRule): SH_BROADCAST, elementwise ops whose tensor operands are all
//    in one shape class, ignoring 0-dim ones (Python numbers, full reductions, 0-dim
//    constants): the result is in that class (broadcasting with a 0-dim tensor changes
//    nothing); SH_SAME (to, clone, softmax, the *_like factories, ...): self's class;
//    SH_AS_SECOND (expand_as, view_as, reshape_as): the second operand's; SH_SIZE_ARG
//    (sum_to_size, expand, reshape, zeros, ...) given `size(x)`: x's class, or the op
//    raised; SH_REDUCE, SH_LOSS and SH_SCALAR: the 0-dim class when the result is one;
//  * dtypes (DtypeRule, evaluated by ir/dtype_rules.h on the classes): a known dtype
//    (comparisons are bool, factories float32 or their constant `dtype=`), or the class
//    of the values the result shares its dtype with (views keep self's, add/where of
//    tensors of one class keep it, matmul's operands and result share one, `to(g,
//    dtype(x))` has x's); refined Tensor types (Tensor(float32)) are known dtypes;
//  * structure: AutogradZeros(g, like) has g's class when g and like share one, like's
//    when g is `Undefined`; AutogradAdd of two values of a class has it; GradOf and If
//    outputs join the classes their blocks return.
class ShapeFacts {
 public:
  explicit ShapeFacts(const Graph& g);
  ~ShapeFacts();
  ShapeFacts(const ShapeFacts&) = delete;
  ShapeFacts& operator=(const ShapeFacts&) = delete;

  // Whether `a` and `b` have the same sizes whenever both are defined tensors.
  bool same_shape(const Value* a, const Value* b) const;
  // Whether `v` is provably 0-dim.
  bool is_zero_dim(const Value* v) const;
  // Whether `a` and `b` have the same dtype whenever both are defined tensors.
  bool same_dtype(const Value* a, const Value* b) const;
  // The dtype of `v` when the analysis knows it.
  std::optional<DType> known_dtype(const Value* v) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Removes the conversions that ShapeFacts proves to be no-ops, each of which returns
// an operand with the same shape, dtype and values:
//
//   sum_to_size(g, size(x))   g has x's shape  -> g   the kernel returns g itself
//   to(g, dtype(x))           g has x's dtype  -> g   `to` returns g itself
//   to(g, d)                  g's dtype is d   -> g
//   expand(g, size(x))        g has x's shape  -> g   a view with g's sizes and strides;
//                                                     only when aliasing allows it (Note
//                                                     [Mutation and aliasing in the passes])
//
// It never rewrites what it cannot prove, e.g. sum_to_size(g, size(x)) where g comes
// from `x + b` with an unknown b (b may broadcast x), or to(g, dtype(x)) after a
// binary op with another tensor of unknown dtype. Returns whether it changed g.
bool propagate_shapes(Graph& g);

}  // namespace tsl
