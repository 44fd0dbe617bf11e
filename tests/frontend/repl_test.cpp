// The REPL: prompts, blocks that end at a blank line, echoed values, and a session
// that survives every kind of error with its variables and functions intact.
#include <gtest/gtest.h>

#include <sstream>

#include "frontend/compilation_unit.h"
#include "frontend/repl/repl.h"

namespace tsl {
namespace {

struct Session {
  std::string out, err;
};

Session run(const std::string& input, bool prompts = false) {
  CompilationUnit unit;
  std::istringstream in(input);
  std::ostringstream out, err;
  run_repl(unit, in, out, err, {.prompts = prompts});
  return {out.str(), err.str()};
}

TEST(Repl, EchoesExpressionValuesButNotNone) {
  Session s = run("1 + 2\nx = 5\nx * 2\nprint('hi')\nNone\n'text'\n");
  EXPECT_EQ(s.out, "3\n10\nhi\n'text'\n");
  EXPECT_EQ(s.err, "");
}

TEST(Repl, ShowsPromptsAndContinuationPrompts) {
  Session s = run("def f(x: int) -> int:\n    return x + 1\n\nf(1)\n", true);
  EXPECT_NE(s.out.find(">>> ... ... >>> 2\n"), std::string::npos) << s.out;
}

TEST(Repl, BlocksEndAtABlankLine) {
  Session s = run("for i in range(3):\n    print(i)\n\nprint('done')\n");
  EXPECT_EQ(s.out, "0\n1\n2\ndone\n");
}

TEST(Repl, KeepsTheSessionAfterErrors) {
  Session s =
      run("x = 10\n"
          "y = undefined_name + 1\n"  // compile error
          "z = x // 0\n"              // runtime error
          "w = (1 +\n"                // syntax error once the block closes
          "\n"
          ")\n"
          "def f(a: int) -> int:\n    return a * x\n\n"
          "f(4)\n");
  EXPECT_EQ(s.out, "40\n");
  EXPECT_NE(s.err.find("<stdin>:1:5: error: "), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("integer division or modulo by zero"), std::string::npos) << s.err;
}

TEST(Repl, MetaCommands) {
  Session s =
      run("x = 1.5\ndef g(t: Tensor) -> Tensor:\n    return t * 2.0\n\n:vars\n:type x + 1\n:graph "
          "g\n:frob\n");
  EXPECT_NE(s.out.find("x : float\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("g(t: Tensor) -> Tensor\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("float\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("graph g(%t : Tensor)"), std::string::npos) << s.out;
  EXPECT_NE(s.err.find("unknown command :frob"), std::string::npos) << s.err;
}

TEST(Repl, GradShowsTheForwardAndBackwardGraphs) {
  Session s =
      run("import torch\nfrom functorch import grad\ndef f(x):\n    h = torch.tanh(x)\n"
          "    return (h * h).sum()\n\ng = grad(f)\n:grad f\n:graph g\n:grad nothing\n");
  // The forward with its captures, then the backward with one GradOf per op,
  // labelled with the op and its line, gradients named after the variables.
  EXPECT_NE(s.out.find("graph f.forward(%x : Tensor):"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("value(s) captured for the backward"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("  # captured for the backward: %"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("graph f.backward("), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("GradOf[op='tanh', line=2]"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("%dh : Tensor"), std::string::npos) << s.out;
  // :graph of a transform value shows its gradient graph too.
  EXPECT_NE(s.out.find("graph f.forward"), s.out.rfind("graph f.forward")) << s.out;
  EXPECT_NE(s.err.find("no function named 'nothing'"), std::string::npos) << s.err;
}

TEST(Repl, DotDrawsGraphsAndGradientGraphs) {
  Session s = run("def f(x):\n    y = x * x\n    return y.sum()\n\n:dot f\n:dot grad f\n");
  EXPECT_EQ(s.err, "");
  EXPECT_NE(s.out.find("digraph \"f\""), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("subgraph cluster_bwd"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("label=\"grad of mul (line 2)\""), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("label=\"captured\""), std::string::npos) << s.out;
}

TEST(Repl, ResetForgetsEverything) {
  Session s = run("x = 1\n:reset\nx\n");
  EXPECT_NE(s.err.find("name 'x' is not defined"), std::string::npos) << s.err;
}

TEST(Repl, RedefiningAFunctionTakesEffectInCallers) {
  Session s =
      run("def inner(a: int) -> int:\n    return a + 1\n\n"
          "def outer(a: int) -> int:\n    return inner(a) * 10\n\n"
          "outer(1)\n"
          "def inner(a: int) -> int:\n    return a + 2\n\n"
          "outer(1)\n");
  EXPECT_EQ(s.out, "20\n30\n");
}

}  // namespace
}  // namespace tsl
