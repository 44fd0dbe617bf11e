// Helpers shared by the optimization passes: which values may be mutated in place
// (so that merging or forwarding them would be visible), constants, and value keys.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"

namespace tsl {

// Note [Mutation and aliasing in the passes]
// CSE, simplification and LICM replace one value by another or compute it once where
// it was computed many times. That is invisible only when nobody writes into the
// storage of either value while the other is still read. MutationInfo groups values
// that may share storage (alias classes: a view and its base, a list and its
// elements, a dict and its values, the values passed through If/Loop blocks, the outputs of an op
// that may return an input such as `to` or `contiguous`; only elementwise (EW) non-view ops are
// known to return fresh storage, and a tensor never aliases a List[int]).
//  * A class is *written* when one of its values reaches an op that may write into
//    it: in-place ops, `append.t` and the dict writes (EFFECT ops other than print and
//    save), and
//    user-function calls and closures (they may do either).
//  * A class *escapes* when it holds a graph input or output: after the run, the
//    caller may write into one of those and read the others.
//  * A class is *observed* when `is` or `is_not` compares one of its values, whose
//    answer depends on which object it is.
// Replacing a value A by a value B is safe when neither class is written, not both
// escape (else the caller would see two results, or a result and an input, become
// one tensor) and not both are observed. Values of immutable types (int, float,
// bool, str, None, dtype, device) are in no class. Constant folding only cares
// about writes: `x is None` on a known x folds.
class MutationInfo {
 public:
  explicit MutationInfo(const Graph& g);
  // Whether `v` may share storage with a value that the graph writes in place.
  // False for values of immutable types.
  bool may_be_written(const Value* v) const;
  // Whether `v` may share storage with a graph input or output.
  bool escapes(const Value* v) const;
  // Whether `is` or `is_not` may compare `v` (or a value sharing its storage).
  bool identity_observed(const Value* v) const;
  // Whether uses of `a` may use `b` instead, as far as aliasing goes.
  bool may_replace(const Value* a, const Value* b) const {
    return !may_be_written(a) && !may_be_written(b) && !(escapes(a) && escapes(b)) &&
           !(identity_observed(a) && identity_observed(b));
  }

  // Keeps the analysis true as a pass adds nodes: `n` (and its blocks) joins it, and
  // `now`, which took over the uses of `old`, joins old's class (so writes and escapes
  // seen through old still count). Classes only grow: what a pass removes stays.
  void add(const Node* n);
  void replaced(const Value* old, const Value* now);

 private:
  // Values by Value::unique() (dense in a graph): vectors, not hash maps, as five
  // passes build this analysis in every pipeline round (issue 6's compile latency).
  // Values made after the analysis are classes of their own, with no flags.
  enum Flag : uint8_t { kWritten = 1, kEscaping = 2, kObserved = 4 };
  void visit_block(const Block* b);
  void visit_node(const Node* n);
  size_t find(size_t v) const;
  void unite(const Value* a, const Value* b);
  void mark(const Value* v, Flag f);
  bool root_has(const Value* v, Flag f) const;
  void resolve() const;

  mutable std::vector<size_t> parent_;       // by unique; a root is its own parent
  std::vector<uint8_t> flags_;               // the Flags of each value itself
  mutable std::vector<uint8_t> root_flags_;  // those of its class, when resolved
  mutable bool resolved_ = false;
};

// Whether `pred` holds for a node of `b` or of a block nested in it. Passes that act
// on a few ops only check for them first, before building their analyses.
bool any_node(const Block* b, bool (*pred)(const Node*));

// Whether a value of type `t` may hold storage that an in-place op can change or an
// identity that `is` can observe (tensors, lists, and what may contain them).
bool type_may_alias(const TypePtr& t);

// The value of `v` when a Constant node defines it, else null.
const IValue* constant_value(const Value* v);

// Whether `v` is fixed text that the IR printer writes and the parser reads back to
// an equal value: None, numbers, strings, dtypes, devices, and tuples and lists of
// them (no tensors, no objects).
bool is_printable_constant(const IValue& v);

// A string that is equal for two constants exactly when they are the same value of
// the same kind (floats by their bits, so 0.0 and -0.0 differ; tensors and objects
// have no key and return "").
std::string constant_key(const IValue& v);

// Inserts a Constant holding `value` before `n` with the type, source range and debug
// name of `old`, replaces `old` by it everywhere, and returns the new value.
Value* replace_with_constant(Graph& g, Node* n, Value* old, IValue value);

// Structural (PRIM) ops that only build values or take them apart (Constant, lists,
// tuples, optionals, dtype/device queries): the PURE rows of the op table.
bool is_value_structural(OpId op);

// Whether `n` is among the ops whose node has no effect, draws no random numbers and
// whose outputs depend only on its inputs and attributes (a "pure" op). Blocks make
// a node impure here (If, Loop and GradOf are handled by the passes themselves).
bool is_pure_op(const Node* n);

// Whether the two first inputs of `n` may be swapped without changing any result: an
// op marked COMMUTES in the op table whose other inputs are constants equal to their
// defaults (add with alpha 1; mul on tensors, add/mul.int/.float, eq/ne,
// maximum/minimum, min/max.int, and the logical and bitwise and/or/xor). Promotion and
// broadcasting are symmetric and IEEE + and * commute; only the payload of a NaN made
// from two NaNs may differ, which TSL cannot observe. min.float and max.float are not
// marked: Python's min(nan, 1.0) and min(1.0, nan) differ.
bool is_commutative(const Node* n);

}  // namespace tsl
