// The eager autograd graph: Nodes (one per recorded op or compiled-function call, one
// AccumulateGrad per leaf) joined by Edges, and the AutogradMeta each tensor that
// takes part carries. See Note [The eager tape].
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/tensor/tensor.h"

namespace tsl::autograd {

// Note [The eager tape]
// Top-level code and the REPL run eagerly: an op whose tensor inputs require grad
// (with grad mode on) runs as stage 0 of its symbolic gradient and leaves a Node
// whose apply() runs stage 1 (runtime/autograd/record.h), so every eager backward
// comes from the same formula as `grad(f)`. An output of that op points at the node
// through its AutogradMeta (grad_fn, output_nr); a leaf that requires grad has no
// grad_fn, and its gradients go to an AccumulateGrad node made on first use and kept
// weakly by the leaf. Edges (node, input_nr) point from a node to the nodes that made
// its inputs, so the graph is owned from the outputs towards the leaves and dies with
// the last tensor that can reach it.
//  * sequence_nr: a per-thread counter taken when a node is made. Later ops run
//    first in backward (the engine's priority); AccumulateGrad takes the largest
//    value so a leaf's gradient is stored as soon as all of it has arrived.
//  * topological_nr: the longest path from the node to a leaf (AccumulateGrad = 0),
//    fixed when the node gets its edges. A path X -> Y implies topo(X) > topo(Y), so
//    the engine prunes nodes whose topo is below every requested input's.

class Node;

struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool valid() const { return function != nullptr; }
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  explicit Node(uint64_t sequence_nr);
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Gradients of the forward outputs in, gradients of the forward inputs (one per
  // next edge) out; an undefined tensor is a zero gradient.
  virtual std::vector<Tensor> apply(std::vector<Tensor> grads) = 0;
  // The name PyTorch gives this kind of node ("MulBackward0").
  virtual std::string name() const = 0;
  // Drops the values saved for apply() (after a backward without retain_graph).
  virtual void release_variables() {}
  // apply(), then release_variables() when `release`: what the engine calls, so a node
  // that can compute in place of its saved values (a staged Code's stage 1) need not
  // copy them first.
  virtual std::vector<Tensor> apply_and_release(std::vector<Tensor> grads, bool release) {
    std::vector<Tensor> out = apply(std::move(grads));
    if (release) release_variables();
    return out;
  }
  // How many gradients apply() takes (the forward op's differentiable outputs).
  virtual uint32_t num_inputs() const = 0;

  uint64_t sequence_nr() const { return sequence_nr_; }
  uint64_t topological_nr() const { return topological_nr_; }
  const std::vector<Edge>& next_edges() const { return next_edges_; }
  // The edges as PyTorch's `grad_fn.next_functions` lists them: one per differentiable
  // input of the op, an invalid edge ((None, 0)) where that input takes no gradient.
  // next_edges() has only the inputs that do; by default they are the same.
  virtual std::vector<Edge> shown_edges() const { return next_edges_; }
  // The node PyTorch's tape has for output `output_nr` of this one, and which of its
  // outputs: this node, or one of the ShownNodes of a node that ran several of
  // PyTorch's (Note [The tape as PyTorch shows it] in record.cpp).
  virtual Edge shown_node(uint32_t output_nr) { return {shared_from_this(), output_nr}; }
  // Sets the edges once, updating topological_nr from them (as the seed does: a node
  // that already has a parent cannot change its number).
  void set_next_edges(std::vector<Edge> edges);
  void set_has_parent() { has_parent_ = true; }

 protected:
  void set_sequence_nr(uint64_t n) { sequence_nr_ = n; }

 private:
  uint64_t sequence_nr_;
  uint64_t topological_nr_ = 0;
  bool has_parent_ = false;
  std::vector<Edge> next_edges_;
};

// The next value of this thread's sequence counter.
uint64_t next_sequence_nr();
inline constexpr uint64_t kAccumulateGradSequenceNr = std::numeric_limits<uint64_t>::max();

// The autograd state of one TensorImpl.
class AutogradMeta : public AutogradMetaBase {
 public:
  std::string grad_fn_name() const override;

  Tensor grad;                      // accumulated gradient of a leaf
  std::shared_ptr<Node> grad_fn;    // null for leaves
  uint32_t output_nr = 0;           // which output of grad_fn this tensor is
  std::weak_ptr<Node> accumulator;  // the leaf's AccumulateGrad, while alive
};

// The tensor's AutogradMeta, or null.
AutogradMeta* meta_of(const Tensor& t);
// The tensor's AutogradMeta, made when missing.
AutogradMeta& ensure_meta(const Tensor& t);

// Sums gradients into a leaf's .grad (steals the incoming tensor when nothing else
// holds it, else copies: .grad must never alias another tensor).
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  std::vector<Tensor> apply(std::vector<Tensor> grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  uint32_t num_inputs() const override { return 1; }
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

// A node of PyTorch's tape that TSL ran inside another (a fused chain's op): a view
// with PyTorch's name and edges, never applied.
class ShownNode final : public Node {
 public:
  ShownNode(uint64_t sequence_nr, std::string name) : Node(sequence_nr), name_(std::move(name)) {}
  std::vector<Tensor> apply(std::vector<Tensor>) override;
  std::string name() const override { return name_; }
  uint32_t num_inputs() const override { return 1; }
  std::vector<Edge> shown_edges() const override { return edges_; }
  void set_shown_edges(std::vector<Edge> edges) { edges_ = std::move(edges); }

 private:
  std::string name_;
  std::vector<Edge> edges_;
};

// The edge a gradient for `t` flows along: (grad_fn, output_nr), or the leaf's
// AccumulateGrad; invalid when t does not require grad.
Edge gradient_edge(const Tensor& t);

// Makes `output` the `output_nr`-th result of `node`: requires_grad, grad_fn set.
// The caller made sure output's TensorImpl belongs to no other tensor's history.
void set_history(const Tensor& output, const std::shared_ptr<Node>& node, uint32_t output_nr);

}  // namespace tsl::autograd
