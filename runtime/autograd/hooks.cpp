// The tape behind the kernels of backward(), .grad, .is_leaf, ... (EagerAutogradHooks).
#include <mutex>
#include <sstream>

#include "runtime/autograd/engine.h"
#include "runtime/autograd/node.h"
#include "runtime/autograd/record.h"
#include "runtime/kernels/eager_hooks.h"

namespace tsl::autograd {
namespace {

// `x.grad_fn` as a value: prints as PyTorch does, keeps the node alive.
class GradFnRef : public ObjectImpl {
 public:
  explicit GradFnRef(std::shared_ptr<Node> node) : node_(std::move(node)) {}
  std::string repr() const override {
    std::ostringstream out;
    out << "<" << node_->name() << " object at " << static_cast<const void*>(node_.get()) << ">";
    return out.str();
  }
  const std::shared_ptr<Node>& node() const { return node_; }

  static const Node& of(const IValue& v) {
    const auto* ref = v.is_object() ? dynamic_cast<const GradFnRef*>(&v.to_object()) : nullptr;
    TSL_INTERNAL_ASSERT(ref != nullptr, "not a tape node: ", v.tag_name());
    return *ref->node_;
  }

 private:
  std::shared_ptr<Node> node_;
};

class Hooks : public EagerAutogradHooks {
 public:
  void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads,
                bool retain_graph, const std::vector<Tensor>& inputs) override {
    BackwardOptions options;
    options.retain_graph = retain_graph;
    options.inputs = inputs;
    autograd::backward(roots, grads, options);
  }

  Tensor grad(const Tensor& t) override {
    AutogradMeta* m = meta_of(t);
    return m ? m->grad : Tensor();
  }

  void set_grad(const Tensor& t, const Tensor& grad) override { ensure_meta(t).grad = grad; }

  bool is_leaf(const Tensor& t) override {
    AutogradMeta* m = meta_of(t);
    return !m || !m->grad_fn;
  }

  IValue grad_fn(const Tensor& t) override {
    AutogradMeta* m = meta_of(t);
    if (!m || !m->grad_fn) return IValue();
    return IValue(
        IntrusivePtr<ObjectImpl>(new GradFnRef(m->grad_fn->shown_node(m->output_nr).function)));
  }

  // PyTorch's name() of its C++ node classes is qualified; its repr is not
  // (<AccumulateGrad object at ...>).
  std::string node_name(const IValue& node) override {
    const Node& n = GradFnRef::of(node);
    if (dynamic_cast<const AccumulateGrad*>(&n)) return "torch::autograd::" + n.name();
    return n.name();
  }

  std::vector<IValue> next_functions(const IValue& node) override {
    std::vector<IValue> out;
    for (const Edge& edge : GradFnRef::of(node).shown_edges()) {
      Edge e = edge.function ? edge.function->shown_node(edge.input_nr) : edge;
      IValue fn =
          e.function ? IValue(IntrusivePtr<ObjectImpl>(new GradFnRef(e.function))) : IValue();
      out.push_back(IValue::tuple({fn, IValue(static_cast<int64_t>(e.input_nr))}));
    }
    return out;
  }

  void set_requires_grad(const Tensor& t, bool value) override {
    AutogradMeta* m = meta_of(t);
    if (m && m->grad_fn) {
      TSL_CHECK(value,
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().");
      return;
    }
    TSL_CHECK(!value || is_floating(t.dtype()),
              "only Tensors of floating point dtype can require gradients (got ",
              dtype_name(t.dtype()), ")");
    t.impl()->set_requires_grad(value);
  }
};

}  // namespace

void install_eager_autograd() {
  static std::once_flag once;
  std::call_once(once, [] {
    static Hooks hooks;
    set_eager_autograd_hooks(&hooks);
  });
}

}  // namespace tsl::autograd
