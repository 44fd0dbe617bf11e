// The REPL: prompts, blocks that end at a blank line, echoed values, and a session
// that survives every kind of error with its variables and functions intact.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "frontend/compilation_unit.h"
#include "frontend/repl/repl.h"

namespace tsl {
namespace {

struct Session {
  std::string out, err;
};

// A file's whole text ("" when it cannot be read).
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
  // Each input is a cell: the second is In[2].
  EXPECT_NE(s.err.find("In[2]:1:5: error: "), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("integer division or modulo by zero"), std::string::npos) << s.err;
}

TEST(Repl, MetaCommands) {
  Session s =
      run("x = 1.5\ndef g(t: Tensor) -> Tensor:\n    return t * 2.0\n\n:vars\n:type x + 1\n:graph "
          "g\n:frob\n");
  EXPECT_NE(s.out.find("x : float = 1.5\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("g(t: Tensor) -> Tensor\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("float\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("graph g(%t : Tensor)"), std::string::npos) << s.out;
  EXPECT_NE(s.err.find("unknown command :frob"), std::string::npos) << s.err;
}

// :vars shows each variable's type and what matters of its value, names aligned; the
// names of imported modules stay out.
TEST(Repl, VarsShowShapesDtypesAndValues) {
  Session s =
      run("import torch\nw = torch.ones(3, 4, requires_grad=True)\nn = 7\nlabel = 'run'\n"
          "xs = [w, w]\nd = torch.zeros(2, dtype=torch.float64)\n:vars\n");
  EXPECT_EQ(s.err, "");
  EXPECT_NE(s.out.find("w     : Tensor[3, 4] float32, requires grad\n"), std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("d     : Tensor[2] float64\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("n     : int = 7\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("label : str = 'run'\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("xs    : List[Tensor] (2 items)\n"), std::string::npos) << s.out;
}

// :help CMD shows one command's help, with or without its colon.
TEST(Repl, HelpOfOneCommand) {
  Session s = run(":help grad\n:help :time\n:help frob\n");
  EXPECT_EQ(s.out.rfind("  :grad NAME", 0), 0u) << s.out;
  EXPECT_NE(s.out.find("  :time STMT"), std::string::npos) << s.out;
  EXPECT_EQ(s.out.find(":vars"), std::string::npos) << s.out;  // not the whole list
  EXPECT_NE(s.err.find("no command :frob (:help lists them)"), std::string::npos) << s.err;
  Session all = run(":help\n");
  EXPECT_NE(all.out.find(":reload MODULE"), std::string::npos) << all.out;
}

// :time runs the statement repeatedly (%timeit) and reports min, median and max; an
// error stops it after one report.
TEST(Repl, TimeRepeatsTheStatement) {
  Session s = run("n = 0\n:time n += 1\nn\n:time m = 1 + 'a'\n");
  EXPECT_NE(s.out.find("first run "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find(" runs: min "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find(", median "), std::string::npos) << s.out;
  // The statement ran the first time and at least 3 more.
  size_t at = s.out.find("\n", s.out.find("max "));
  ASSERT_NE(at, std::string::npos) << s.out;
  EXPECT_GE(std::stoi(s.out.substr(at + 1)), 4) << s.out;
  EXPECT_NE(s.err.find("unsupported operand types for +: int and str"), std::string::npos) << s.err;
  EXPECT_EQ(s.err.find("unsupported", s.err.find("unsupported") + 1), std::string::npos) << s.err;
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

// :dot writes the picture's files and names them; the DOT goes to the file, not the
// terminal (it was 250 lines there).
TEST(Repl, DotDrawsGraphsAndGradientGraphs) {
  std::string dir = ::testing::TempDir();
  Session s = run("def f(x):\n    y = x * x\n    return y.sum()\n\n:dot f " + dir +
                  "f_fwd\n:dot grad f " + dir + "f_grad\n");
  EXPECT_EQ(s.err, "");
  EXPECT_NE(s.out.find("the graph of f: " + dir + "f_fwd.dot"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("the gradient graph of f: " + dir + "f_grad.dot"), std::string::npos)
      << s.out;
  EXPECT_EQ(s.out.find("digraph"), std::string::npos) << s.out;
  EXPECT_NE(read_text(dir + "f_fwd.dot").find("digraph \"f\""), std::string::npos);
  std::string grad = read_text(dir + "f_grad.dot");
  // Drawn as the specialized view is (Note [The gradient picture]): each rule a
  // cluster titled with its line, the backward laid out bottom-up, captured values
  // as stubs beside their readers.
  EXPECT_NE(grad.find("subgraph cluster_bwd"), std::string::npos) << grad;
  EXPECT_NE(grad.find("= GradOf[op='mul', line=2](%"), std::string::npos) << grad;
  EXPECT_NE(grad.find("[dir=back]"), std::string::npos) << grad;
  EXPECT_NE(grad.find("(forward)"), std::string::npos) << grad;
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

// f as written has `a + a` twice and `a * 2.0` inside its loop; the pipeline keeps
// one `a + a` (cse) and moves `a * 2.0` before the loop (licm).
const char* kLoopFunction =
    "def f(a: Tensor) -> Tensor:\n"
    "    b = a + a\n"
    "    for i in range(10):\n"
    "        b = b + a * 2.0\n"
    "    return b * (a + a)\n\n";

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Repl, OptShowsTheGraphAfterThePipeline) {
  Session s = run(std::string(kLoopFunction) + ":graph f\n:opt f\n:opt nothing\n");
  size_t opt = s.out.find("# f after the optimization pipeline: ");
  ASSERT_NE(opt, std::string::npos) << s.out;
  std::string written = s.out.substr(0, opt), optimized = s.out.substr(opt);
  EXPECT_EQ(count_of(written, "= add(%a, %a"), 2u) << written;
  EXPECT_EQ(count_of(optimized, "= add(%a, %a"), 1u) << optimized;
  EXPECT_LT(optimized.find("mul(%a"), optimized.find("Loop(")) << optimized;
  EXPECT_LT(written.find("Loop("), written.find("mul(%a")) << written;
  EXPECT_NE(s.err.find("no function named 'nothing'"), std::string::npos) << s.err;
}

TEST(Repl, PassesShowsEachPassThatChangedTheGraphAsADiff) {
  Session s = run(std::string(kLoopFunction) + ":passes f\n");
  EXPECT_EQ(s.err, "");
  const std::string& o = s.out;
  EXPECT_EQ(o.rfind("# f: ", 0), 0u) << o;
  EXPECT_NE(o.find("# round 1\n# canonicalize: "), std::string::npos) << o;
  // cse merged the second `a + a` into the first: its line is gone, and the use of
  // its value now names the first (%b), which keeps its name.
  size_t cse = o.find("# cse: ");
  size_t licm = o.find("# licm: ");
  ASSERT_NE(cse, std::string::npos) << o;
  ASSERT_NE(licm, std::string::npos) << o;
  std::string cse_diff = o.substr(cse, licm - cse);
  EXPECT_NE(cse_diff.find("\n-   %"), std::string::npos) << cse_diff;
  EXPECT_NE(cse_diff.find(" = add(%a, %a"), std::string::npos) << cse_diff;
  EXPECT_NE(cse_diff.find("\n+ "), std::string::npos) << cse_diff;
  EXPECT_NE(cse_diff.find("\n    %b : Tensor = add(%a, %a"), std::string::npos) << cse_diff;
  // licm: the mul leaves the loop body (deeper indentation) for the top level.
  std::string licm_diff = o.substr(licm, o.find("\n# ", licm) - licm);
  // The value keeps its name (%7) as it moves.
  EXPECT_NE(licm_diff.find("\n-       %7 : Tensor = mul(%a, %6)  # 4:17\n"), std::string::npos)
      << licm_diff;
  EXPECT_NE(licm_diff.find("\n+   %7 : Tensor = mul(%a, %6)  # 4:17\n"), std::string::npos)
      << licm_diff;
  // The last round changes nothing; every pass is listed as unchanged. Fusion comes
  // after the rounds (nothing to fuse here: the loop keeps the adds apart).
  EXPECT_NE(o.find("# dce: unchanged\n# after the rounds\n# fuse: unchanged\n# f: "),
            std::string::npos)
      << o;
  EXPECT_NE(o.find("nodes after the pipeline ("), std::string::npos) << o;
}

// :opt and :passes show what runs: the graph after fusion.
TEST(Repl, OptAndPassesShowTheFusedGraph) {
  Session s =
      run("import torch\ndef h(x: Tensor) -> Tensor:\n    return torch.tanh(x) * x\n\n"
          ":opt h\n:passes h\n");
  EXPECT_EQ(s.err, "");
  size_t passes = s.out.find("# h: ");
  ASSERT_NE(passes, std::string::npos) << s.out;
  std::string opt = s.out.substr(0, passes), trace = s.out.substr(passes);
  EXPECT_NE(opt.find("= FusionGroup(%x)"), std::string::npos) << opt;
  size_t fuse = trace.find("# after the rounds\n# fuse: ");
  ASSERT_NE(fuse, std::string::npos) << trace;
  EXPECT_NE(trace.find("+   %", fuse), std::string::npos) << trace;
  EXPECT_NE(trace.find("= FusionGroup(%x)", fuse), std::string::npos) << trace;
}

TEST(Repl, OptAndPassesTakeGradientTransforms) {
  Session s =
      run("import torch\nfrom functorch import grad\ndef f(x):\n    h = torch.tanh(x)\n"
          "    return (h * h).sum()\n\ng = grad(f)\n:opt g\n:opt grad f\n:passes g\n");
  EXPECT_EQ(s.err, "");
  // :opt g and :passes g show the graph g runs; :opt grad f the gradient split of f.
  EXPECT_EQ(count_of(s.out, "# grad(f) after the optimization pipeline: "), 1u) << s.out;
  EXPECT_NE(s.out.find("graph grad(f)(%x : Tensor):"), std::string::npos) << s.out;
  EXPECT_EQ(count_of(s.out, "# f.forward after the optimization pipeline: "), 1u) << s.out;
  EXPECT_EQ(count_of(s.out, "# f.backward after the optimization pipeline: "), 1u) << s.out;
  EXPECT_NE(s.out.find("# grad(f): "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("nodes before the pipeline"), std::string::npos) << s.out;
}

TEST(Repl, TimeRunsAStatementAndShowsItsWallTime) {
  Session s = run("x = 3\n:time y = x * 2\ny\n:time\n");
  EXPECT_EQ(s.out.rfind("first run ", 0), 0u) << s.out;
  EXPECT_NE(s.out.find(" ms (compile and run); "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find(" ms\n6\n"), std::string::npos) << s.out;
  EXPECT_NE(s.err.find(":time needs a statement"), std::string::npos) << s.err;
}

TEST(Repl, ProfileRunsAStatementAndShowsItsKernels) {
  Session s =
      run("import torch\nx = torch.ones(8)\n:profile y = torch.exp(x) + x.sum()\nprint(y[0].item() "
          "> 10)\n:profile\n");
  EXPECT_NE(s.out.find("ms in kernels"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("\nsum "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("True\n"), std::string::npos) << s.out;  // y was assigned
  EXPECT_NE(s.err.find(":profile needs a statement"), std::string::npos) << s.err;
}

// Issue 4's session: a two-layer net trained in the REPL by eager backward() and
// in-place SGD steps under no_grad. The expected lines are PyTorch 1.13's output for
// the same program (the random streams are PyTorch's), as tests/autodiff_torch/
// eager_training.tsl checks against a live PyTorch.
TEST(Repl, TrainsATwoLayerNetWithBackwardAndSub) {
  Session s =
      run("import torch\n"
          "import torch.nn.functional as F\n"
          "torch.manual_seed(11)\n"
          "x = torch.randn(16, 4)\n"
          "y = torch.randn(16, 1)\n"
          "w1 = (torch.randn(4, 8) * 0.5).requires_grad_()\n"
          "b1 = torch.zeros(8, requires_grad=True)\n"
          "w2 = (torch.randn(8, 1) * 0.5).requires_grad_()\n"
          "lr = 0.05\n"
          "for step in range(30):\n"
          "    h = torch.relu(x @ w1 + b1)\n"
          "    loss = F.mse_loss(h @ w2, y)\n"
          "    loss.backward()\n"
          "    with torch.no_grad():\n"
          "        w1.sub_(lr * w1.grad)\n"
          "        b1.sub_(lr * b1.grad)\n"
          "        w2.sub_(lr * w2.grad)\n"
          "    w1.grad.zero_()\n"
          "    b1.grad.zero_()\n"
          "    w2.grad.zero_()\n"
          "    if step % 10 == 0:\n"
          "        print(f\"{step} {loss.item():.5f}\")\n"
          "\n"
          "loss\n"
          "\n");
  EXPECT_EQ(s.err, "");
  EXPECT_EQ(s.out,
            "0 2.45108\n"
            "10 0.99276\n"
            "20 0.87856\n"
            "tensor(0.8198, grad_fn=<MseLossBackward0>)\n");
}

// Functions no path of which returns (`while True: pass`, only `raise`) are valid
// TorchScript: they compile, and every REPL command on them answers without losing the
// session (an InternalError escaped from the meta-commands: SIGABRT, every variable lost).
constexpr const char* kNeverReturns =
    "import torch\n"
    "def spin() -> int:\n"
    "    while True:\n"
    "        pass\n"
    "\n"
    "def fail(x):\n"
    "    raise ValueError(\"m\")\n"
    "\n"
    "y = 5\n";

TEST(ReplNeverReturns, MetaCommandsAnswerAndTheSessionSurvives) {
  for (const char* command :
       {":graph spin", ":ir spin", ":opt spin", ":code spin", ":type spin", ":graph fail",
        ":opt fail", ":code fail", ":grad fail", ":code grad fail", ":dot fail", ":memplan fail"}) {
    Session s = run(std::string(kNeverReturns) + command + "\nprint(y)\n");
    EXPECT_EQ(s.err.find("internal error"), std::string::npos) << command << "\n" << s.err;
    EXPECT_NE(s.out.find("5\n"), std::string::npos) << command << "\n" << s.out << s.err;
  }
}

TEST(ReplNeverReturns, CallingOneThatRaisesRaises) {
  Session s = run(std::string(kNeverReturns) + "fail(torch.ones(2))\nprint(y)\n");
  EXPECT_NE(s.err.find("ValueError: m"), std::string::npos) << s.err;
  EXPECT_EQ(s.err.find("internal error"), std::string::npos) << s.err;
  EXPECT_NE(s.out.find("5\n"), std::string::npos) << s.out;
}

// ---- :grad f(args): the gradient specialized to example arguments ------------------------

constexpr const char* kTwoLayerNet =
    "import torch\n"
    "def loss(x, w1, w2, y):\n"
    "    h = torch.tanh(x @ w1)\n"
    "    out = h @ w2\n"
    "    return ((out - y) ** 2).mean()\n"
    "\n"
    "x = torch.ones(4, 3)\nw1 = torch.ones(3, 5) * 0.1\nw2 = torch.ones(5, 2) * 0.2\n"
    "y = torch.zeros(4, 2)\n";

size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

// The two-layer net's gradient fits on one screen: shapes known, the shape bookkeeping
// of the general graph gone, names kept, constants in place, each rule labelled.
TEST(ReplGradView, TwoLayerNetOnOneScreen) {
  Session s = run(std::string(kTwoLayerNet) + ":grad loss(x, w1, w2, y)\n");
  EXPECT_EQ(s.err, "");
  const std::string expected =
      "loss.forward(%x : Tensor[4, 3], %w1 : Tensor[3, 5], %w2 : Tensor[5, 2], %y : Tensor[4, "
      "2]):  # the result, and what the backward reads\n"
      "  %0 : Tensor[4, 5] = matmul(%x, %w1)  # 2:20\n"
      "  %h : Tensor[4, 5] = tanh(%0)  # 2:9\n"
      "  %out : Tensor[4, 2] = matmul(%h, %w2)  # 3:11\n"
      "  %1 : Tensor[4, 2] = sub(%out, %y)  # 4:14\n"
      "  %2 : Tensor[4, 2] = pow(%1, 2)  # 4:13\n"
      "  %3 : Tensor[] = mean(%2)  # 4:12\n"
      "  return (%3)  # kept for the backward: %1, %h, %w2, %x, %w1\n"
      "loss.backward(%dloss : Tensor[]):  # from the result's gradient (ones)\n"
      "  %4 : Tensor[4, 2] = GradOf[op='mean', line=4](%dloss)\n"
      "      %5 : Tensor[1, 1] = reshape(%dloss, [1, 1])  # 4:12\n"
      "      %6 : Tensor[4, 2] = expand(%5, [4, 2])  # 4:12\n"
      "      %7 : Tensor[4, 2] = div(%6, 8.0)  # 4:12\n"
      "      -> (%7)\n"
      "  %8 : Tensor[4, 2] = GradOf[op='pow', line=4](%4)\n"
      "      %9 : Tensor[4, 2] = mul(%1, 2.0)  # 4:13\n"
      "      %10 : Tensor[4, 2] = mul(%4, %9)  # 4:13\n"
      "      -> (%10)\n"
      "  %dout : Tensor[4, 2], %dy : Tensor[4, 2] = GradOf[op='sub', line=4](%8)\n"
      "      %11 : Tensor[4, 2] = neg(%8)  # 4:14\n"
      "      -> (%8, %11)\n"
      "  %dh : Tensor[4, 5], %dw2 : Tensor[5, 2] = GradOf[op='matmul', line=3](%dout)\n"
      "      %12 : Tensor[2, 5] = transpose(%w2, -2, -1)  # 3:11\n"
      "      %13 : Tensor[4, 5] = matmul(%dout, %12)  # 3:11\n"
      "      %14 : Tensor[5, 4] = transpose(%h, -2, -1)  # 3:11\n"
      "      %15 : Tensor[5, 2] = matmul(%14, %dout)  # 3:11\n"
      "      -> (%13, %15)\n"
      "  %16 : Tensor[4, 5] = GradOf[op='tanh', line=2](%dh)\n"
      "      %17 : Tensor[4, 5] = square(%h)  # 2:9\n"
      "      %18 : Tensor[4, 5] = neg(%17)  # 2:9\n"
      "      %19 : Tensor[4, 5] = add(%18, 1.0)  # 2:9\n"
      "      %20 : Tensor[4, 5] = mul(%dh, %19)  # 2:9\n"
      "      -> (%20)\n"
      "  %dx : Tensor[4, 3], %dw1 : Tensor[3, 5] = GradOf[op='matmul', line=2](%16)\n"
      "      %21 : Tensor[5, 3] = transpose(%w1, -2, -1)  # 2:20\n"
      "      %22 : Tensor[4, 3] = matmul(%16, %21)  # 2:20\n"
      "      %23 : Tensor[3, 4] = transpose(%x, -2, -1)  # 2:20\n"
      "      %24 : Tensor[3, 5] = matmul(%23, %16)  # 2:20\n"
      "      -> (%22, %24)\n"
      "  return (%dx, %dw1, %dw2, %dy)  # the gradients of x, w1, w2, y\n";
  EXPECT_EQ(s.out, expected);
  EXPECT_LE(count_lines(s.out), 40u);
  // The general view keeps the bookkeeping that fits every shape.
  Session general = run(std::string(kTwoLayerNet) + ":grad loss\n");
  EXPECT_NE(general.out.find("matmul_operand_size"), std::string::npos) << general.out;
}

// :dot grad f(args) draws that view (Note [The gradient picture]): each line of the
// text labels a box (a rule's line titles its cluster), the backward is laid out
// bottom-up beside the forward, values it captures are stubs beside their readers;
// Graphviz (which the suite installs) renders it narrower than the general drawing.
TEST(ReplGradView, PictureIsLabelledAsTheText) {
  std::string dir = ::testing::TempDir();
  Session text = run(std::string(kTwoLayerNet) + ":grad loss(x, w1, w2, y)\n");
  Session s = run(std::string(kTwoLayerNet) + ":dot grad loss(x, w1, w2, y) " + dir + "net_grad\n");
  EXPECT_EQ(s.err, "");
  EXPECT_NE(s.out.find("the gradient graph of loss(x, w1, w2, y): " + dir + "net_grad.dot"),
            std::string::npos)
      << s.out;
  std::string dot = read_text(dir + "net_grad.dot");
  std::istringstream lines(text.out);
  size_t labels = 0;
  for (std::string line; std::getline(lines, line);) {
    line = line.substr(line.find_first_not_of(' '));
    if (line.starts_with("->") || line.starts_with("return") || line.starts_with("loss.")) continue;
    std::string code = line.substr(0, line.find("  # "));
    EXPECT_NE(dot.find("label=\"" + code), std::string::npos) << code << "\n" << dot;
    ++labels;
  }
  EXPECT_EQ(labels, 30u);  // 6 forward ops, 7 rules, 17 ops inside them
  EXPECT_GE(static_cast<size_t>(std::count(dot.begin(), dot.end(), '\n')), 50u);
  EXPECT_NE(dot.find("[dir=back]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"%h (forward)\""), std::string::npos) << dot;
  EXPECT_EQ(dot.find("captured"), std::string::npos) << dot;
  if (std::system("command -v dot >/dev/null 2>&1") != 0) GTEST_SKIP() << "no Graphviz";
  std::string svg = read_text(dir + "net_grad.svg");
  size_t at = svg.find("<svg width=\"");
  ASSERT_NE(at, std::string::npos) << "no SVG drawn";
  int width = std::atoi(svg.c_str() + at + 12);
  EXPECT_GT(width, 300);
  EXPECT_LT(width, 1800);  // the general graph's drawing of this net: ~4700pt
}

// --values shows each value: here sin's gradient is cos(x) (0.8776, 0.5403, -0.4161).
TEST(ReplGradView, ValuesFollowTheNumbersThroughTheBackward) {
  Session s =
      run("import torch\ndef f(x):\n    return torch.sin(x).sum()\n\n"
          "x = torch.tensor([0.5, 1.0, 2.0])\n:grad f(x) --values\n");
  EXPECT_EQ(s.err, "");
  EXPECT_NE(s.out.find("%0 : Tensor[3] = sin(%x)  # 2:12  = [0.4794, 0.8415, 0.9093]\n"),
            std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("%1 : Tensor[] = sum(%0)  # 2:12  = 2.23\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("%dx : Tensor[3] = GradOf[op='sin', line=2](%2)  # = [0.8776, 0.5403, "
                       "-0.4161]\n"),
            std::string::npos)
      << s.out;
}

// Grad of grad: the forward computes the first gradient (its values named as in f's
// backward, its rules shown as GradOf blocks again), the backward differentiates it;
// both levels' rules are labelled.
TEST(ReplGradView, GradOfGradFitsItsBudget) {
  Session s =
      run("import torch\nfrom functorch import grad\ndef f(x):\n    return torch.sin(x).sum()\n\n"
          "df = grad(f)\n"
          "def g(x):\n    return df(x).sum()\n\n"
          "x = torch.tensor([0.5, 1.0, 2.0])\n:grad g(x)\n:grad df(x)\n");
  EXPECT_EQ(s.err, "");
  size_t second = s.out.find("df.forward(");
  ASSERT_NE(second, std::string::npos) << s.out;
  std::string of_g = s.out.substr(0, second), of_df = s.out.substr(second);
  EXPECT_LE(count_lines(of_g), 60u) << of_g;
  // Each level's rules are labelled: f's in the forward (the gradient g computes),
  // g's in the backward.
  EXPECT_NE(of_g.find("level 1: the gradient it computes"), std::string::npos) << of_g;
  EXPECT_NE(of_g.find("= GradOf[op='sin', line=2](%3)  # level 1\n"), std::string::npos) << of_g;
  EXPECT_NE(of_g.find(" = cos(%x)  # 2:12\n"), std::string::npos) << of_g;
  EXPECT_NE(of_g.find("= GradOf[op='cos', line=2](%12)  # level 2\n"), std::string::npos) << of_g;
  EXPECT_NE(of_g.find("g.backward(%dg : Tensor[]):"), std::string::npos) << of_g;
  EXPECT_NE(of_g.find("GradOf[op='cos', line=2]"), std::string::npos) << of_g;
  EXPECT_NE(of_df.find("df.backward(%ddf : Tensor[3]):"), std::string::npos) << of_df;
  EXPECT_EQ(of_g.find("AnyDefined"), std::string::npos) << of_g;
}

// A while loop: the forward keeps its loop (values inside it vary), the backward of
// the three iterations it ran is unrolled, each step with its shapes.
TEST(ReplGradView, AWhileLoopRunsItsIterations) {
  Session s =
      run("import torch\ndef p(x, n: int):\n    y = x\n    i = 0\n    while i < n:\n"
          "        y = y * x\n        i += 1\n    return y.sum()\n\n"
          "x = torch.tensor([0.5, 1.0, 2.0])\n:grad p(x, 3)\n");
  EXPECT_EQ(s.err, "");
  EXPECT_NE(s.out.find("p.forward(%x : Tensor[3], %n : int = 3):"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("= Loop("), std::string::npos) << s.out;
  size_t backward = s.out.find("p.backward(%dp : Tensor[])");
  ASSERT_NE(backward, std::string::npos) << s.out;
  std::string b = s.out.substr(backward);
  size_t rules = 0;
  for (size_t at = b.find("GradOf[op='mul', line=5]"); at != std::string::npos;
       at = b.find("GradOf[op='mul', line=5]", at + 1))
    ++rules;
  EXPECT_EQ(rules, 3u) << b;
  EXPECT_EQ(b.find("sum_to_size"), std::string::npos) << b;
}

// `:grad --full f` (arguments or not) is the general view, for every shape.
TEST(ReplGradView, FullIsTheGeneralView) {
  Session s =
      run("import torch\ndef f(x):\n    return torch.sin(x).sum()\n\nx = torch.ones(2)\n"
          ":grad --full f(x)\n:grad --full f\n");
  EXPECT_EQ(s.err, "");
  size_t first = s.out.find("graph f.forward(%x : Tensor):");
  ASSERT_NE(first, std::string::npos) << s.out;
  EXPECT_NE(s.out.find("graph f.forward(%x : Tensor):", first + 1), std::string::npos) << s.out;
  EXPECT_EQ(s.out.find("Tensor[2]"), std::string::npos) << s.out;
}

TEST(ReplGradView, BadCallsAreErrorsAndTheSessionGoesOn) {
  Session s =
      run("import torch\ndef f(x):\n    return torch.sin(x).sum()\n\nx = torch.ones(2)\n"
          ":grad f(1)\n:grad f(x, x)\n:grad f(x\n:grad f(zz)\n:grad nope(x)\nprint(x.sum())\n");
  EXPECT_NE(s.err.find("error: f(...): no argument is a floating-point tensor"), std::string::npos)
      << s.err;
  EXPECT_NE(s.err.find("error: f() takes 1 argument(s), given 2"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("error: expected a call NAME(ARGS), as in loss(x, w), not 'f(x'"),
            std::string::npos)
      << s.err;
  EXPECT_NE(s.err.find("name 'zz' is not defined"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("no function named 'nope'"), std::string::npos) << s.err;
  EXPECT_NE(s.out.find("tensor(2.)"), std::string::npos) << s.out;
}

// :doc NAME and NAME? (IPython's): a def's source where it was defined, a transform
// and the function it transforms, a builtin's signatures; errors keep the session.
TEST(Repl, DocShowsSourceTransformsAndBuiltins) {
  Session s =
      run("import torch\nfrom functorch import grad\n"
          "def f(x, n: int = 2):\n    # a comment inside\n    return torch.sin(x).sum() * n\n\n"
          "g = grad(f)\n:doc f\ng?\ntorch.sin?\n:doc max\n:doc nope\n:doc\nprint(1)\n");
  EXPECT_NE(s.out.find("# f, defined at In[3]:1:1\ndef f(x, n: int = 2):\n    # a comment "
                       "inside\n    return torch.sin(x).sum() * n\n"),
            std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("g = grad(f): a transform (grad) of f for argnums (0)\n# f, defined at"),
            std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("# torch.sin: a builtin (1 signature)\nsin(Tensor self) -> Tensor\n"),
            std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor, Tensor)"),
            std::string::npos)
      << s.out;
  EXPECT_NE(s.err.find("error: no function or builtin named 'nope'"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find(":doc needs a name"), std::string::npos) << s.err;
  EXPECT_NE(s.out.find("\n1\n"), std::string::npos) << s.out;
}

// Python keeps what a top-level loop assigned before it failed (Note [Top-level
// assignments survive errors]): n counted to 501 and i reached 500 when the loop raised;
// the tensor updated six times survives a shape error in the seventh iteration.
TEST(Repl, AssignmentsOfAFailedTopLevelLoopAreKept) {
  Session s =
      run("n = 0\nfor i in range(1000):\n    n += 1\n    if i == 500:\n"
          "        raise ValueError('stop')\n\nprint(n, i)\n"
          "import torch\nw = torch.zeros(2)\nk = 0\nwhile True:\n    w = w + 1.0\n    k = k + 1\n"
          "    if k == 7:\n        bad = torch.ones(2) @ torch.ones(3)\n\nprint(w, k)\n"
          "if k > 0:\n    flag = True\n    z = 1 // 0\n\nprint(flag)\n");
  EXPECT_NE(s.out.find("501 500\n"), std::string::npos) << s.out << s.err;
  EXPECT_NE(s.out.find("tensor([7., 7.]) 7\n"), std::string::npos) << s.out << s.err;
  EXPECT_NE(s.out.find("True\n"), std::string::npos) << s.out << s.err;
  EXPECT_NE(s.err.find("ValueError: stop"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("integer division or modulo by zero"), std::string::npos) << s.err;
}

}  // namespace
}  // namespace tsl
