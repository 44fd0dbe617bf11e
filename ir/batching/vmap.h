// vmap as an IR-to-IR transform: the graph of f becomes the graph of vmap(f), which
// computes f for every slice of its inputs along their mapped dims at once, with no
// loop over the batch. See Note [Batching at compile time].
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tsl::batching {

// Note [Batching at compile time]
// functorch's vmap wraps each input in a BatchedTensor (a tensor with one dim marked
// as the batch dim) and runs f once, each op dispatching to a batching rule that
// computes the op for the whole batch. TSL does the same to the graph, at compile
// time: every value of f's graph is either unbatched (the same for each batch element:
// weights, constants, sizes, ints) or batched, and then it carries the batch dim
// first; its physical shape is [B] + the logical shape f's code sees. The transform
//  1. prepares a copy of f (calls inlined by the caller, gradient blocks lowered to
//     If, tuples forwarded: ir/autodiff/prepare.h);
//  2. finds which values are batched (ir/batching/batched_values.h): a forward
//     analysis to a fixed point through If, Loop and lists;
//  3. rewrites the graph in order: the mapped inputs are moved to dim 0 (after
//     functorch's checks of in_dims and of the batch sizes); a node none of whose
//     inputs is batched is copied unchanged; any other runs its op's batching rule
//     (ir/batching/batching_rules.h), which emits ordinary ops: `x + y` aligns the
//     operands and adds, `x.sum(1)` sums dim 2, `x @ w` views operands so that matmul
//     broadcasts the batch dim. Where a batched value meets an unbatched one (an If's
//     branches, a Loop's carried value, a list's elements) the unbatched one is
//     expanded to B and copied;
//  4. moves each result's batch dim to its out_dim (an unbatched result is expanded).
// Control flow on unbatched values (ints, shapes, flags) is ordinary control flow of
// the batched graph; control flow on a batched value (`if x.sum() > 0`, `x.item()`)
// has no meaning for a whole batch and is functorch's error, at compile time. The
// result is an ordinary graph: it runs, prints, optimizes, and can be differentiated
// (grad of vmap) or batched again (nested vmap); vmap of grad batches the gradient
// graph. Ops without a batching rule are a compile error naming the op.
struct VmapSpec {
  // One per graph input: the dim of that input vmap maps over (nullopt: not mapped).
  std::vector<std::optional<int64_t>> in_dims;
  // Where each result gets the batch dim, in order: one per graph output, or one per
  // element for an output that is a tuple (nullopt: returned as is, not batched).
  std::vector<std::optional<int64_t>> out_dims;
  // The start of functorch's messages: "vmap(f, in_dims=(0, None), ...)".
  std::string where;
  std::string function_name;  // "f"
  // Where vmap is used: the location of the checks and moves vmap adds.
  SourceRange range;
};

// The graph of vmap(f), with f's inputs and outputs. Precondition: no CallFunction
// nodes. Compile errors (SourceError) name the op and line where batching is not
// possible.
std::shared_ptr<Graph> vmap_graph(const Graph& f, const VmapSpec& spec);

// The `vmap` pass of `tsl --ir` and the IR tests (tests/ir/passes/vmap): g replaced by
// vmap(g) over dim 0 of every Tensor input, each result's batch dim at 0.
void vmap_every_tensor_input(Graph& g);

// Whether the vmap rewrite handles `op` itself (blocks, tuples, lists, constants)
// rather than through a batching rule; for the coverage test of the rule table.
bool is_structural_for_vmap(OpId op);

}  // namespace tsl::batching
