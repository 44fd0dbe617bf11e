// The REPL's :code command: the register program of a function and of its gradient.
#include <gtest/gtest.h>

#include <sstream>

#include "frontend/compilation_unit.h"
#include "frontend/repl/repl.h"

namespace tsl {
namespace {

struct Session {
  std::string out, err;
};

Session run(const std::string& input) {
  CompilationUnit unit;
  std::istringstream in(input);
  std::ostringstream out, err;
  run_repl(unit, in, out, err, {.prompts = false});
  return {out.str(), err.str()};
}

constexpr const char* kDef =
    "import torch\n"
    "def f(x: Tensor) -> Tensor:\n"
    "    return torch.tanh(x).sum()\n"
    "\n";

TEST(ReplCode, ShowsTheRegisterProgram) {
  Session s = run(std::string(kDef) + ":code f\n");
  EXPECT_EQ(s.err, "");
  EXPECT_NE(s.out.find("code f: "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("  inputs: r0(%x)\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find(" = tanh(r0(%x))   ; free r0(%x)\n"), std::string::npos) << s.out;
  EXPECT_EQ(s.out.find("stage 1"), std::string::npos) << s.out;  // :code f alone
}

TEST(ReplCode, GradShowsTheTwoStages) {
  Session s = run(std::string(kDef) + ":code grad f\n");
  EXPECT_EQ(s.err, "");
  EXPECT_NE(s.out.find("# f for the gradients of x: stage 0 runs the forward"), std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("2 stages\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("stage 0 (f.forward)"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("stage 1 (f.backward)"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("  captures: r"), std::string::npos) << s.out;
  // The backward runs with its GradOf blocks inlined when its gradient is defined.
  EXPECT_NE(s.out.find("# a defined incoming gradient: the backward"), std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find(" = AssumeDefined("), std::string::npos) << s.out;
}

TEST(ReplCode, UnknownFunctionsAndNonDifferentiableOnesAreMessages) {
  Session s = run("def n(k: int) -> int:\n    return k * 2\n\n:code nothing\n:code grad n\n");
  EXPECT_NE(s.err.find("no function named 'nothing'"), std::string::npos) << s.err;
  EXPECT_NE(s.out.find("# n: no gradient Code"), std::string::npos) << s.out;
}

TEST(ReplCode, MemplanShowsThePlanOnceTheFunctionHasRun) {
  Session before = run(std::string(kDef) + ":memplan f\n");
  EXPECT_EQ(before.err, "");
  EXPECT_NE(before.out.find("f has not run yet"), std::string::npos) << before.out;
  Session s =
      run("import torch\n"
          "def g(x: Tensor) -> Tensor:\n"
          "    return (torch.tanh(x @ x) @ x).sum()\n"
          "\n"
          "x = torch.ones(8, 8)\n"
          "y = g(x)\n"
          "y = g(x)\n"
          ":memplan g\n"
          ":memplan nothing\n");
  EXPECT_NE(s.out.find("memory plan of g (1 stage, traced over"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("arena 512 B for 3 intermediates"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("  b   %2            tanh                   256         256  [."),
            std::string::npos)
      << s.out;
  EXPECT_NE(s.err.find("nothing"), std::string::npos) << s.err;
}

TEST(ReplCode, IsInTheHelp) {
  Session s = run(":help\n");
  EXPECT_NE(s.out.find(":code NAME"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find(":code grad NAME"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find(":memplan NAME"), std::string::npos) << s.out;
}

}  // namespace
}  // namespace tsl
