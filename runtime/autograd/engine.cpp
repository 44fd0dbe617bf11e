// The backward engine; see Note [Running backward] in engine.h.
#include "runtime/autograd/engine.h"

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/grad_mode.h"

namespace tsl::autograd {
namespace {

thread_local BackwardTrace* t_trace = nullptr;

Tensor add_grads(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return call_op(OpId::add, {IValue(a), IValue(b), IValue(int64_t{1})}).at(0).to_tensor();
}

Tensor root_gradient(const Tensor& root, const Tensor& grad, size_t i) {
  if (!grad.defined()) {
    TSL_CHECK(root.numel() == 1, "grad can be implicitly created only for scalar outputs (output ",
              i, " has shape ", shape_str(root.sizes()), "); pass backward(gradient)");
    return call_op(OpId::ones_like, {IValue(root), IValue(), IValue(), IValue(false)})
        .at(0)
        .to_tensor();
  }
  TSL_CHECK(grad.sizes() == root.sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of ",
            shape_str(grad.sizes()), " and output[", i, "] has a shape of ",
            shape_str(root.sizes()));
  return grad;
}

struct ByPriority {
  bool operator()(Node* a, Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

class GraphTask {
 public:
  GraphTask(const BackwardOptions& options) : options_(options) {}

  void run(const std::vector<Tensor>& roots, std::vector<Tensor> grads) {
    std::vector<Edge> root_edges;
    for (size_t i = 0; i < roots.size(); ++i) {
      TSL_CHECK(roots[i].defined() && roots[i].requires_grad(), "element ", i,
                " of tensors does not require grad and does not have a grad_fn");
      root_edges.push_back(gradient_edge(roots[i]));
      grads[i] = root_gradient(roots[i], grads[i], i);
    }
    set_targets();
    for (const Edge& e : root_edges) discover(e.function.get());
    mark_needed();
    count_dependencies();
    for (size_t i = 0; i < roots.size(); ++i) {
      Node* fn = root_edges[i].function.get();
      if (!needed_.count(fn)) continue;
      deliver(fn, root_edges[i].input_nr, std::move(grads[i]));
    }
    for (const Edge& e : root_edges) {
      Node* fn = e.function.get();
      if (needed_.count(fn) && dependencies_[fn] == 0 && queued_.insert(fn).second) ready_.push(fn);
    }
    while (!ready_.empty()) {
      Node* n = ready_.top();
      ready_.pop();
      execute(n);
    }
  }

 private:
  void set_targets() {
    min_topo_ = 0;
    if (options_.inputs.empty()) return;
    min_topo_ = UINT64_MAX;
    for (size_t i = 0; i < options_.inputs.size(); ++i) {
      const Tensor& t = options_.inputs[i];
      TSL_CHECK(t.defined() && t.requires_grad(), "backward(inputs=...): input ", i,
                " does not require grad");
      Edge e = gradient_edge(t);
      min_topo_ = std::min(min_topo_, e.function->topological_nr());
      if (dynamic_cast<AccumulateGrad*>(e.function.get())) {
        accumulate_targets_.insert(e.function.get());
      } else {
        captures_[e.function.get()].push_back({e.input_nr, t});
      }
      holders_.push_back(e.function);
    }
  }

  void discover(Node* root) {
    std::vector<Node*> stack;
    if (seen_.insert(root).second) stack.push_back(root);
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      order_.push_back(n);
      if (t_trace) t_trace->discovered.push_back(n);
      for (const Edge& e : n->next_edges()) {
        Node* child = e.function.get();
        if (!child || child->topological_nr() < min_topo_) continue;
        if (seen_.insert(child).second) stack.push_back(child);
      }
    }
  }

  // A node is needed when it is a target or leads to one; without inputs, all are.
  void mark_needed() {
    if (options_.inputs.empty()) {
      needed_.insert(order_.begin(), order_.end());
      return;
    }
    // Children have smaller topological numbers: visiting in increasing order sees
    // every child before its parents.
    std::vector<Node*> by_topo = order_;
    std::sort(by_topo.begin(), by_topo.end(),
              [](Node* a, Node* b) { return a->topological_nr() < b->topological_nr(); });
    for (Node* n : by_topo) {
      bool need = accumulate_targets_.count(n) || captures_.count(n);
      for (const Edge& e : n->next_edges()) need |= e.function && needed_.count(e.function.get());
      if (need) needed_.insert(n);
    }
  }

  void count_dependencies() {
    for (Node* n : order_) {
      if (!needed_.count(n)) continue;
      for (const Edge& e : n->next_edges()) {
        if (e.function && needed_.count(e.function.get())) ++dependencies_[e.function.get()];
      }
    }
  }

  void deliver(Node* fn, uint32_t input_nr, Tensor grad) {
    std::vector<Tensor>& buffer = buffers_[fn];
    if (buffer.empty()) buffer.resize(fn->num_inputs());
    TSL_INTERNAL_ASSERT(input_nr < buffer.size(), "gradient for input ", input_nr, " of ",
                        fn->name(), " which takes ", buffer.size());
    buffer[input_nr] = add_grads(buffer[input_nr], grad);
  }

  // Whether the node's own apply must run (it leads to a needed node or is a leaf).
  bool runs(Node* n) const {
    if (options_.inputs.empty()) return true;
    if (accumulate_targets_.count(n)) return true;
    for (const Edge& e : n->next_edges()) {
      if (e.function && needed_.count(e.function.get())) return true;
    }
    return false;
  }

  void execute(Node* n) {
    std::vector<Tensor> grads = std::move(buffers_[n]);
    buffers_.erase(n);
    grads.resize(n->num_inputs());
    auto captured = captures_.find(n);
    if (captured != captures_.end()) {
      for (auto& [slot, tensor] : captured->second) {
        AutogradMeta& meta = ensure_meta(tensor);
        meta.grad = add_grads(meta.grad, grads[slot]);
      }
    }
    if (!runs(n)) return;
    if (t_trace) t_trace->executed.push_back(n);
    std::vector<Tensor> outputs = n->apply_and_release(std::move(grads), !options_.retain_graph);
    const std::vector<Edge>& edges = n->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      Node* child = edges[i].function.get();
      if (!child || !needed_.count(child)) continue;
      if (i < outputs.size() && outputs[i].defined())
        deliver(child, edges[i].input_nr, std::move(outputs[i]));
      if (--dependencies_[child] == 0 && queued_.insert(child).second) ready_.push(child);
    }
  }

  const BackwardOptions& options_;
  uint64_t min_topo_ = 0;
  std::unordered_set<const Node*> accumulate_targets_;
  std::unordered_map<const Node*, std::vector<std::pair<uint32_t, Tensor>>> captures_;
  std::vector<std::shared_ptr<Node>> holders_;
  std::unordered_set<Node*> seen_;
  std::vector<Node*> order_;
  std::unordered_set<const Node*> needed_;
  std::unordered_map<Node*, size_t> dependencies_;
  std::unordered_map<Node*, std::vector<Tensor>> buffers_;
  std::unordered_set<Node*> queued_;
  std::priority_queue<Node*, std::vector<Node*>, ByPriority> ready_;
};

}  // namespace

void backward(const std::vector<Tensor>& roots, std::vector<Tensor> grads,
              const BackwardOptions& options) {
  TSL_INTERNAL_ASSERT(roots.size() == grads.size(), "backward: one gradient per root");
  NoGradGuard no_grad;
  GraphTask(options).run(roots, std::move(grads));
}

void set_backward_trace(BackwardTrace* trace) { t_trace = trace; }

}  // namespace tsl::autograd
