// Which values of a graph vmap batches: the analysis that runs before the batching
// rewrite (ir/batching/vmap.h), so that an If's outputs and a Loop's carried values
// know their layout before their blocks are rewritten.
#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"

namespace tsl::batching {

// The layout of a value of the graph being batched. A tensor (or an Optional tensor,
// or a list of tensors: every element alike) is batched when it carries the batch dim
// first; a tuple has a layout per element. Numbers, strings, sizes are never batched.
struct Layout {
  bool batched = false;
  std::vector<Layout> elements;  // a tuple's, one per element; empty otherwise

  // Whether the value or some part of it is batched.
  bool any() const;
  // The layout of a value of type `t` whose batchable parts are all batched.
  static Layout batched_like(const TypePtr& t);
  // Batched where either is (both of the same type).
  static Layout join(const Layout& a, const Layout& b);
  bool operator==(const Layout&) const = default;
};

// Whether a value of type t may carry a batch dim: a tensor, an Optional tensor, a list
// of them.
bool is_batchable_type(const TypePtr& t);

// Note [Batched values]
// A forward dataflow analysis over the graph, to a fixed point: a node's outputs are
// batched when one of its inputs is (except in-place updates, whose result is their
// self); an If's output when either branch returns a batched value; a Loop's carried
// value when its initial value or the body's next value is. Lists are shared by
// reference, so a list is batched when any list it may be (the same list carried
// through a Loop or an If) gets a batched element appended or assigned; its literal
// then holds batched elements from the start. Index lists (Tensor?[] of `x[i, j]`)
// are never batched themselves: the indexing rules look at their elements.
class BatchedValues {
 public:
  BatchedValues(const Graph& g, const std::vector<bool>& batched_inputs);
  const Layout& layout(const Value* v) const;

 private:
  void run_block(const Block* b);
  void visit(const Node* n);
  void visit_if(const Node* n);
  void visit_loop(const Node* n);
  void set(const Value* v, Layout l);
  const Value* list_root(const Value* v);
  void unite_lists(const Value* a, const Value* b);
  bool list_marked(const Value* v);
  void mark_list(const Value* v);

  std::unordered_map<const Value*, Layout> layouts_;
  std::unordered_map<const Value*, const Value*> list_parent_;
  std::unordered_map<const Value*, bool> marked_roots_;
  bool changed_ = false;
};

// Values that may be an undefined tensor (a zero gradient) or a placeholder (None) at
// run time, in a gradient graph: where vmap expands one to the batch, it must stay
// undefined (If(AnyDefined(v)) around the expansion).
class MayBeUndefined {
 public:
  explicit MayBeUndefined(const Graph& g);
  bool operator()(const Value* v) const { return set_.count(v) != 0; }

 private:
  void run(const Block* b);
  void visit(const Node* n);
  std::unordered_set<const Value*> set_;
};

}  // namespace tsl::batching
