// The eager tape driven by TSL source: what backward() leaves behind (saved values
// freed, .grad accumulated), compiled-function calls as one node among eager ones,
// no_grad, and retain_graph. The numbers are checked against PyTorch in
// tests/autodiff_torch/eager_*.tsl; these tests observe the tape itself.
#include <gtest/gtest.h>

#include "frontend/compilation_unit.h"
#include "runtime/autograd/engine.h"
#include "runtime/autograd/node.h"
#include "runtime/tensor/storage.h"

namespace tsl {
namespace {

Tensor global_tensor(CompilationUnit& unit, const std::string& name) {
  return unit.globals().at(name).value.to_tensor();
}

void run(CompilationUnit& unit, const std::string& code) {
  unit.run_source(std::make_shared<Source>("<test>", code), false);
}

TEST(EagerTape, FreesSavedValuesAfterBackward) {
  CompilationUnit unit;
  run(unit,
      "import torch\n"
      "x = torch.ones(256, 1024, requires_grad=True)\n");  // 1 MiB
  size_t before = cpu_live_bytes();
  // The recorded ops save 1 MiB intermediates for the backward (how many depends on
  // fusion: the elementwise chain is one node).
  run(unit, "y = (torch.tanh(torch.exp(x) * x) * 3.0).sum()\n");
  size_t recorded = cpu_live_bytes();
  EXPECT_GE(recorded - before, 2u << 20);
  run(unit, "y.backward()\n");
  // All that is left: x.grad (1 MiB) and y (one float).
  size_t after = cpu_live_bytes();
  EXPECT_LE(after - before, (1u << 20) + 4096);
  EXPECT_TRUE(autograd::meta_of(global_tensor(unit, "x"))->grad.defined());
}

// A node that saves its own result (exp) must not be kept alive by it: the graph dies
// with the last tensor that reaches it, backward or not (caught by LeakSanitizer, and
// here by the live bytes).
TEST(EagerTape, FreesTheGraphWhenItsTensorsDie) {
  CompilationUnit unit;
  run(unit,
      "import torch\n"
      "x = torch.ones(256, 1024, requires_grad=True)\n");
  size_t before = cpu_live_bytes();
  run(unit, "y = torch.exp(torch.tanh(x))\n");
  EXPECT_GE(cpu_live_bytes() - before, 2u << 20);
  run(unit, "y = 0\n");
  EXPECT_EQ(cpu_live_bytes(), before);
}

TEST(EagerTape, RetainGraphKeepsSavedValuesForASecondBackward) {
  CompilationUnit unit;
  run(unit,
      "import torch\n"
      "x = torch.ones(256, 1024, requires_grad=True)\n"
      "y = (torch.exp(x) * x).sum()\n");
  size_t before = cpu_live_bytes();
  run(unit, "y.backward(retain_graph=True)\n");
  // The saved values stay (only x.grad is new).
  EXPECT_GE(cpu_live_bytes(), before + (1u << 20));
  run(unit, "y.backward()\n");
  Tensor g = autograd::meta_of(global_tensor(unit, "x"))->grad;
  EXPECT_FLOAT_EQ(g.data_ptr<float>()[0], 2 * 2 * 2.718281828f);
  EXPECT_THROW(run(unit, "y.backward()\n"), SourceError);
}

TEST(EagerTape, ACompiledCallIsOneNodeAmongEagerOnes) {
  CompilationUnit unit;
  run(unit,
      "import torch\n"
      "def f(a: Tensor, b: Tensor) -> Tensor:\n"
      "    c = a * b\n"
      "    for i in range(3):\n"
      "        c = torch.sin(c) + a\n"
      "    return c\n"
      "w = torch.tensor([0.5, -1.0], requires_grad=True)\n"
      "v = torch.tensor([2.0, 3.0], requires_grad=True)\n"
      "out = (f(w * 2.0, v).exp() + w).sum()\n");
  autograd::BackwardTrace trace;
  autograd::set_backward_trace(&trace);
  run(unit, "out.backward()\n");
  autograd::set_backward_trace(nullptr);
  std::vector<std::string> names;
  for (const autograd::Node* n : trace.executed) names.push_back(n->name());
  // `.exp() + w` is one fused node, named after its last op as PyTorch names the
  // result's grad_fn; the call of f is one node.
  EXPECT_EQ(names,
            (std::vector<std::string>{"SumBackward0", "AddBackward0", "DifferentiableGraphBackward",
                                      "AccumulateGrad", "MulBackward0", "AccumulateGrad"}));
  // Against the same math written out (checked with PyTorch): w.grad, v.grad.
  run(unit,
      "w2 = torch.tensor([0.5, -1.0], requires_grad=True)\n"
      "v2 = torch.tensor([2.0, 3.0], requires_grad=True)\n"
      "c = (w2 * 2.0) * v2\n"
      "for i in range(3):\n"
      "    c = torch.sin(c) + w2 * 2.0\n"
      "(c.exp() + w2).sum().backward()\n"
      "same = bool(((w.grad - w2.grad).abs().max() + (v.grad - v2.grad).abs().max()) < 1e-6)\n");
  EXPECT_TRUE(unit.globals().at("same").value.to_bool());
}

TEST(EagerTape, NoGradRecordsNothingAndRestoresTheModeAfterAnError) {
  CompilationUnit unit;
  run(unit,
      "import torch\n"
      "x = torch.ones(3, requires_grad=True)\n"
      "with torch.no_grad():\n"
      "    y = x * 2.0\n");
  EXPECT_FALSE(global_tensor(unit, "y").requires_grad());
  EXPECT_THROW(run(unit,
                   "with torch.no_grad():\n"
                   "    z = x @ torch.ones(4)\n"),
               SourceError);
  run(unit, "z = x * 2.0\n");
  EXPECT_TRUE(global_tensor(unit, "z").requires_grad());
}

}  // namespace
}  // namespace tsl
