// The eager autograd engine observed directly: the order nodes run in (sequence_nr,
// AccumulateGrad as soon as a leaf is complete), pruning by topological_nr with
// backward(inputs=...), gradient sums for values used twice, retain_graph and the
// release of saved values after backward.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "runtime/autograd/engine.h"
#include "runtime/autograd/node.h"
#include "runtime/autograd/record.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/storage.h"

namespace tsl::autograd {
namespace {

// Passes its one incoming gradient, times `scale`, to every next edge.
class PassNode : public Node {
 public:
  PassNode(std::string name, double scale = 1.0)
      : Node(next_sequence_nr()), name_(std::move(name)), scale_(scale) {}
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    Tensor g = call_op(OpId::mul, {IValue(grads.at(0)), IValue(scale_)}).at(0).to_tensor();
    return std::vector<Tensor>(next_edges().size(), g);
  }
  std::string name() const override { return name_; }
  uint32_t num_inputs() const override { return 1; }

 private:
  std::string name_;
  double scale_;
};

Tensor leaf(std::vector<float> v) {
  Tensor t = Tensor::from_vector(v);
  t.impl()->set_requires_grad(true);
  return t;
}

// A tensor that is output 0 of `node`.
Tensor output_of(const std::shared_ptr<Node>& node, std::vector<float> v) {
  Tensor t = Tensor::from_vector(v);
  set_history(t, node, 0);
  return t;
}

std::vector<std::string> names(const std::vector<const Node*>& nodes) {
  std::vector<std::string> out;
  for (const Node* n : nodes) out.push_back(n->name());
  return out;
}

float grad_at(const Tensor& t, int64_t i) {
  AutogradMeta* m = meta_of(t);
  EXPECT_TRUE(m && m->grad.defined());
  return m && m->grad.defined() ? m->grad.data_ptr<float>()[i] : -1.f;
}

struct TraceGuard {
  explicit TraceGuard(BackwardTrace* t) { set_backward_trace(t); }
  ~TraceGuard() { set_backward_trace(nullptr); }
};

TEST(AutogradEngine, RunsLaterNodesFirstAndAccumulatesAsSoonAsALeafIsComplete) {
  ensure_kernels_registered();
  Tensor a = leaf({1.f}), b = leaf({1.f});
  auto first = std::make_shared<PassNode>("first", 2.0);
  first->set_next_edges({gradient_edge(a)});
  auto second = std::make_shared<PassNode>("second", 3.0);
  second->set_next_edges({gradient_edge(b)});
  auto root = std::make_shared<PassNode>("root");
  root->set_next_edges({{first, 0}, {second, 0}});
  EXPECT_LT(first->sequence_nr(), second->sequence_nr());
  EXPECT_LT(second->sequence_nr(), root->sequence_nr());
  Tensor out = output_of(root, {5.f});
  BackwardTrace trace;
  {
    TraceGuard guard(&trace);
    backward({out}, {Tensor()}, {});
  }
  // second was made after first, so it runs first; b's AccumulateGrad has the
  // highest priority and runs as soon as its gradient is complete.
  EXPECT_EQ(names(trace.executed), (std::vector<std::string>{"root", "second", "AccumulateGrad",
                                                             "first", "AccumulateGrad"}));
  EXPECT_EQ(grad_at(a, 0), 2.f);
  EXPECT_EQ(grad_at(b, 0), 3.f);
}

TEST(AutogradEngine, TopologicalNumbersAreLongestPathsToALeaf) {
  Tensor x = leaf({1.f});
  auto n1 = std::make_shared<PassNode>("n1");
  n1->set_next_edges({gradient_edge(x)});
  auto n2 = std::make_shared<PassNode>("n2");
  n2->set_next_edges({{n1, 0}});
  auto n3 = std::make_shared<PassNode>("n3");
  n3->set_next_edges({{n2, 0}, gradient_edge(x)});
  EXPECT_EQ(gradient_edge(x).function->topological_nr(), 0u);
  EXPECT_EQ(n1->topological_nr(), 1u);
  EXPECT_EQ(n2->topological_nr(), 2u);
  EXPECT_EQ(n3->topological_nr(), 3u);
}

TEST(AutogradEngine, PrunesNodesThatCannotReachTheRequestedInputs) {
  ensure_kernels_registered();
  Tensor x = leaf({1.f}), y = leaf({1.f});
  // root <- mid (made from below <- x) and root <- side <- y.
  auto below = std::make_shared<PassNode>("below");
  below->set_next_edges({gradient_edge(x)});
  auto mid = std::make_shared<PassNode>("mid", 4.0);
  mid->set_next_edges({{below, 0}});
  Tensor h = output_of(mid, {1.f});
  auto side = std::make_shared<PassNode>("side");
  side->set_next_edges({gradient_edge(y)});
  auto root = std::make_shared<PassNode>("root", 5.0);
  root->set_next_edges({gradient_edge(h), {side, 0}});
  Tensor out = output_of(root, {1.f});
  BackwardTrace trace;
  BackwardOptions options;
  options.inputs = {h};
  {
    TraceGuard guard(&trace);
    backward({out}, {Tensor()}, options);
  }
  // topo(h's node) = 2: `below` and `side` (1) and the AccumulateGrads (0) cannot
  // reach it and are never walked.
  EXPECT_EQ(mid->topological_nr(), 2u);
  EXPECT_EQ(side->topological_nr(), 1u);
  std::vector<std::string> seen = names(trace.discovered);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"mid", "root"}));
  // Only root runs: h's gradient is taken where it arrives at mid.
  EXPECT_EQ(names(trace.executed), std::vector<std::string>{"root"});
  EXPECT_EQ(grad_at(h, 0), 5.f);
  EXPECT_FALSE(meta_of(x) && meta_of(x)->grad.defined());
  EXPECT_FALSE(meta_of(y) && meta_of(y)->grad.defined());
}

TEST(AutogradEngine, SumsTheGradientsOfAValueUsedTwice) {
  ensure_kernels_registered();
  Tensor x = leaf({1.f, 1.f});
  auto left = std::make_shared<PassNode>("left", 2.0);
  left->set_next_edges({gradient_edge(x)});
  auto right = std::make_shared<PassNode>("right", 3.0);
  right->set_next_edges({gradient_edge(x)});
  auto root = std::make_shared<PassNode>("root");
  root->set_next_edges({{left, 0}, {right, 0}});
  Tensor out = output_of(root, {1.f, 1.f});
  BackwardTrace trace;
  {
    TraceGuard guard(&trace);
    backward({out}, {Tensor::from_vector(std::vector<float>{1.f, 10.f})}, {});
  }
  // One AccumulateGrad run with the sum, not two.
  EXPECT_EQ(
      std::count(trace.executed.begin(), trace.executed.end(), gradient_edge(x).function.get()), 1);
  EXPECT_EQ(grad_at(x, 0), 5.f);
  EXPECT_EQ(grad_at(x, 1), 50.f);
}

TEST(AutogradEngine, ScalarRootsOnlyGetAnImplicitGradient) {
  ensure_kernels_registered();
  Tensor x = leaf({1.f, 2.f});
  auto root = std::make_shared<PassNode>("root");
  root->set_next_edges({gradient_edge(x)});
  Tensor out = output_of(root, {1.f, 2.f});
  EXPECT_THROW(backward({out}, {Tensor()}, {}), Error);
  Tensor plain = Tensor::from_vector(std::vector<float>{1.f});
  EXPECT_THROW(backward({plain}, {Tensor()}, {}), Error);
}

}  // namespace
}  // namespace tsl::autograd
