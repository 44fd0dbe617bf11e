// Nodes, edges, AutogradMeta and AccumulateGrad; see Note [The eager tape] in node.h.
#include "runtime/autograd/node.h"

#include <algorithm>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/grad_mode.h"

namespace tsl::autograd {

namespace {
thread_local uint64_t t_sequence_nr = 0;
}  // namespace

uint64_t next_sequence_nr() { return t_sequence_nr++; }

Node::Node(uint64_t sequence_nr) : sequence_nr_(sequence_nr) {}

void Node::set_next_edges(std::vector<Edge> edges) {
  TSL_INTERNAL_ASSERT(!has_parent_, "cannot change a node's edges after it has a parent");
  next_edges_ = std::move(edges);
  for (const Edge& e : next_edges_) {
    if (!e.valid()) continue;
    topological_nr_ = std::max(topological_nr_, e.function->topological_nr() + 1);
    e.function->set_has_parent();
  }
}

std::string AutogradMeta::grad_fn_name() const { return grad_fn ? grad_fn->name() : ""; }

AutogradMeta* meta_of(const Tensor& t) {
  if (!t.defined()) return nullptr;
  return static_cast<AutogradMeta*>(t.impl()->autograd_meta());
}

AutogradMeta& ensure_meta(const Tensor& t) {
  AutogradMeta* m = meta_of(t);
  if (m) return *m;
  auto fresh = std::make_unique<AutogradMeta>();
  m = fresh.get();
  t.impl()->set_autograd_meta(std::move(fresh));
  return *m;
}

AccumulateGrad::AccumulateGrad(Tensor variable)
    : Node(kAccumulateGradSequenceNr), variable_(std::move(variable)) {}

namespace {

// A tensor .grad may keep: contiguous and sharing memory with nothing else.
Tensor own_gradient(Tensor g) {
  bool alone = g.use_count() == 1 && g.storage()->use_count() == 1;
  if (alone && g.is_contiguous() && !g.is_wrapped_number()) return g;
  return call_op(OpId::clone, {IValue(g)}).at(0).to_tensor();
}

}  // namespace

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor> grads) {
  Tensor incoming = std::move(grads.at(0));
  if (!incoming.defined()) return {};
  AutogradMeta& meta = ensure_meta(variable_);
  TSL_INTERNAL_ASSERT(incoming.sizes() == variable_.sizes(), "gradient of shape ",
                      shape_str(incoming.sizes()), " for a leaf of shape ",
                      shape_str(variable_.sizes()));
  if (incoming.dtype() != variable_.dtype()) {
    incoming =
        call_op(OpId::to_dtype, {IValue(incoming), IValue(variable_.dtype())}).at(0).to_tensor();
  }
  if (!meta.grad.defined()) {
    meta.grad = own_gradient(std::move(incoming));
  } else {
    meta.grad = call_op(OpId::add, {IValue(meta.grad), IValue(incoming), IValue(int64_t{1})})
                    .at(0)
                    .to_tensor();
  }
  return {};
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  AutogradMeta& meta = ensure_meta(t);
  if (meta.grad_fn) return {meta.grad_fn, meta.output_nr};
  std::shared_ptr<Node> acc = meta.accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    meta.accumulator = acc;
  }
  return {acc, 0};
}

void set_history(const Tensor& output, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  output.impl()->set_requires_grad(true);
  AutogradMeta& meta = ensure_meta(output);
  meta.grad_fn = node;
  meta.output_nr = output_nr;
}

std::vector<Tensor> ShownNode::apply(std::vector<Tensor>) {
  TSL_INTERNAL_ASSERT(false, "a ShownNode (", name_, ") is a view and never runs");
  return {};
}

}  // namespace tsl::autograd
