// The batching rule of every op vmap can batch: how the op runs on values that carry a
// batch dim, built from ordinary ops (functorch's batching rules, at compile time).
// One row per op, declared with TSL_BATCHING beside the op's family (rules_*.cpp), as
// derivative rules are declared with TSL_DERIVATIVE. See Note [Batching rules].
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/autodiff/sym.h"

namespace tsl::batching {

using autodiff::Arg;
using autodiff::Sym;

// A value of the batched graph: `batched` when it carries the batch dim first (its
// physical shape is [B] + the logical shape the program sees), else the same value for
// every batch element.
struct BVal {
  Value* value = nullptr;
  bool batched = false;
};
inline BVal batched(Sym s) { return {s.value(), true}; }
inline BVal unbatched(Sym s) { return {s.value(), false}; }

// An argument of a logical call (BatchRuleContext::apply): a value with its layout, or
// a literal (an unbatched constant typed for its parameter).
struct BArg {
  BArg(BVal v) : value(v) {}                                                    // NOLINT
  BArg(Sym s) : value(unbatched(s)) {}                                          // NOLINT
  BArg(Value* v) : value({v, false}) {}                                         // NOLINT
  BArg(int v) : literal(IValue(static_cast<int64_t>(v))), has_literal(true) {}  // NOLINT
  BArg(int64_t v) : literal(IValue(v)), has_literal(true) {}                    // NOLINT
  BArg(double v) : literal(IValue(v)), has_literal(true) {}                     // NOLINT
  BArg(bool v) : literal(IValue(v)), has_literal(true) {}                       // NOLINT
  BArg(std::nullopt_t) : literal(IValue()), has_literal(true) {}                // NOLINT
  BArg(const char* s) : literal(IValue(s)), has_literal(true) {}                // NOLINT
  BArg(const std::vector<int64_t>& v)
      : literal(IValue::int_list(v)), has_literal(true) {}  // NOLINT
  BVal value;
  IValue literal;
  bool has_literal = false;
};

// What the vmap rewrite (vmap.cpp) offers the rules.
class BatchEmitter {
 public:
  virtual ~BatchEmitter() = default;
  // B, the size of the mapped dim (an int value of the batched graph).
  virtual Value* batch_size() = 0;
  // `op` on logical values, every input given (defaults included): emitted as is when
  // no input is batched, else by op's batching rule.
  virtual std::vector<BVal> apply(OpId op, std::vector<BVal> inputs,
                                  std::vector<TypePtr> output_types, const SourceRange& range) = 0;
  // The elements of a list value written out as a literal (`[x, w]`, the indices of
  // `x[i, j]`), each with its own layout; nullopt for any other list.
  virtual std::optional<std::vector<BVal>> list_elements(const Value* list) = 0;
  // A list literal of `elements` (of type `type`) at the insertion point, whose
  // elements list_elements gives back.
  virtual Value* literal_list(const std::vector<BVal>& elements, const TypePtr& type) = 0;
};

// Note [Batching rules]
// A rule runs only when some input of its op is batched. It sees the op's inputs as
// values of the batched graph with their layouts (`in(i)`; `input(i)` is the value,
// `batched(i)` its layout) and emits ops at the insertion point, through `Sym`, to
// compute the op's outputs for every batch element at once; it returns them with
// their layouts (a tensor result is normally batched; ints, bools, dtypes and sizes
// never are). Dims the program names are logical: `dim_arg(i)` turns input i into the
// physical dim. Operands that broadcast are aligned first (`align`: a batched [B, 3]
// against an unbatched [2, 3] becomes [B, 1, 3]). A rule may decompose its op into
// other ops on logical values with `apply`, which batches each by its own rule. An op
// that cannot be batched (data-dependent control flow, random numbers, printing) has a
// rule that raises functorch's error; an op without a rule is a compile error that
// names it (ir/batching/vmap.cpp), never a wrong result.
class BatchRuleContext {
 public:
  BatchRuleContext(BatchEmitter& emitter, OpId op, std::vector<BVal> inputs,
                   std::vector<TypePtr> output_types, SourceRange range)
      : emitter_(emitter),
        op_(op),
        inputs_(std::move(inputs)),
        output_types_(std::move(output_types)),
        range_(std::move(range)) {}

  OpId op() const { return op_; }
  std::string op_name() const;
  const SourceRange& range() const { return range_; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return output_types_.size(); }
  const TypePtr& output_type(size_t i) const { return output_types_.at(i); }
  const BVal& in(size_t i) const { return inputs_.at(i); }
  Sym input(size_t i) const { return inputs_.at(i).value; }
  bool batched(size_t i) const { return inputs_.at(i).batched; }
  // The value of input i when it is a Constant, else null.
  const IValue* constant_input(size_t i) const;
  bool is_none(size_t i) const;  // input i is None (a None constant)
  // Input i as ints known at compile time: a constant int or int list, or a list
  // literal of constant ints; nullopt otherwise.
  std::optional<std::vector<int64_t>> constant_ints(size_t i) const;
  Sym batch_size() const { return emitter_.batch_size(); }
  BatchEmitter& emitter() const { return emitter_; }

  // ---- Dims and sizes
  // Input i, a logical dim (int) of a batched value, as its physical dim.
  Sym dim_arg(size_t i) const;
  // Input i, a list of logical dims (int[]), as physical dims.
  Sym dims_arg(size_t i) const;
  // The rank and the shape the program sees.
  Sym logical_rank(const BVal& v) const;
  Sym logical_size(const BVal& v) const;
  // [B] + sizes (a size the program gave, for a batched result).
  Sym batched_size(Sym sizes) const;

  // ---- Layouts
  // v's physical value, with 1s after the batch dim when it is batched and has fewer
  // than `rank` logical dims (so it broadcasts as the logical value would).
  Sym align(const BVal& v, Sym rank) const;
  // The physical values of tensor inputs `which`, aligned for broadcasting together.
  std::vector<Sym> aligned(const std::vector<size_t>& which) const;
  // v with the batch dim: itself when batched, else expanded to B (a view).
  Sym materialize(const BVal& v) const;

  // ---- Emitting
  // This op on the given physical arguments (outputs typed as the original's).
  std::vector<Sym> call_op(std::vector<Arg> args) const;
  // The op on its inputs with the ones listed replaced (physical values).
  std::vector<Sym> call_with(const std::vector<std::pair<size_t, Arg>>& replacements) const;
  // `op` on logical values (batched by its own rule when some input is batched);
  // omitted trailing arguments take the schema's defaults.
  std::vector<BVal> apply_multi(OpId op, std::vector<BArg> args, size_t num_outputs) const;
  BVal apply(OpId op, std::vector<BArg> args) const { return apply_multi(op, args, 1).at(0); }

  [[noreturn]] void error(const std::string& message) const;

 private:
  BatchEmitter& emitter_;
  OpId op_;
  std::vector<BVal> inputs_;
  std::vector<TypePtr> output_types_;
  SourceRange range_;
};

using BatchRule = std::vector<BVal> (*)(BatchRuleContext&);

// The rule of `op`, or null when the op has none.
BatchRule batching_rule(OpId op);

// Each rules_*.cpp file fills its part of the table, one row per op:
//   TSL_BATCHING(relu, pointwise_rule);
#define TSL_BATCHING(op, rule) table[static_cast<size_t>(::tsl::OpId::op)] = &rule
using BatchingTable = std::array<BatchRule, kNumOps>;
void register_pointwise_batching(BatchingTable& table);
void register_reduction_batching(BatchingTable& table);
void register_shape_batching(BatchingTable& table);
void register_index_batching(BatchingTable& table);
void register_linalg_batching(BatchingTable& table);
void register_nn_batching(BatchingTable& table);
void register_autograd_batching(BatchingTable& table);
void register_unbatchable_ops(BatchingTable& table);

// ---- Rules shared by the rule files
// Elementwise and broadcasting ops: every tensor input aligned, the op applied as is.
std::vector<BVal> pointwise_rule(BatchRuleContext& c);
// Ops whose input DimIndex is a dim of input 0 (softmax, cumsum, ...): the dim
// shifted, the op applied to the batched input 0 (other tensor inputs materialized).
template <size_t DimIndex>
std::vector<BVal> dim_rule(BatchRuleContext& c) {
  std::vector<std::pair<size_t, Arg>> r = {{0, c.materialize(c.in(0))},
                                           {DimIndex, c.dim_arg(DimIndex)}};
  std::vector<BVal> out;
  for (Sym s : c.call_with(r)) out.push_back(batched(s));
  return out;
}
// A list of tensors (or a list gradient) that is the same for every batch element, with
// the batch dim: a new list of each element expanded to `batch_size` (copied when
// `copy`: the list may be written to); undefined elements, and an undefined list
// gradient, stay undefined. Emitted as a loop at the insertion point.
Value* batched_list(Value* list, Value* batch_size, bool copy);

// If(cond) { then() } else { otherwise() } at the insertion point, its one result typed
// `type`.
Value* if_then_else(Value* cond, const TypePtr& type, const std::function<Value*()>& then,
                    const std::function<Value*()>& otherwise);

// A constant int list.
Sym int_list(std::vector<int64_t> v);

// functorch's error for random numbers under vmap (its default randomness="error").
const char* randomness_error();

// The results of an op whose outputs are all batched.
std::vector<BVal> all_batched(const std::vector<Sym>& outs);

}  // namespace tsl::batching
