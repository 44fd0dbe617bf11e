// Compiled functions run an optimized copy of their graph while keeping the graph as
// written (Note [Optimizing compiled functions]); --no-opt compiles it as written.
#include <gtest/gtest.h>

#include "frontend/compilation_unit.h"
#include "frontend/repl/driver.h"
#include "runtime/exec/function.h"

namespace tsl {
namespace {

// `a + a` twice (cse keeps one) and `a * 2.0` inside the loop (licm moves it out).
const char* kProgram =
    "def f(a: Tensor) -> Tensor:\n"
    "    b = a + a\n"
    "    for i in range(10):\n"
    "        b = b + a * 2.0\n"
    "    return b * (a + a)\n"
    "\n"
    "y = f(ones(2))\n";

size_t count_op(const Block* b, OpId op) {
  size_t n = 0;
  for (const Node* node : *b) {
    n += node->op() == op;
    for (const Block* inner : node->blocks()) n += count_op(inner, op);
  }
  return n;
}

struct RestoreOptimization {
  bool saved = optimization_enabled();
  ~RestoreOptimization() { set_optimization_enabled(saved); }
};

// Runs kProgram in `unit` and returns f as compiled.
Function& run_program(CompilationUnit& unit) {
  unit.run_source(std::make_shared<Source>("<test>", kProgram), false);
  return *unit.compile_function(*unit.find_function("f"), {}).function;
}

TEST(Optimization, FunctionsRunAnOptimizedCopyOfTheirGraph) {
  RestoreOptimization restore;
  set_optimization_enabled(true);
  CompilationUnit unit;
  Function& f = run_program(unit);
  EXPECT_EQ(count_op(f.graph().block(), OpId::add), 3u);  // the graph as written
  EXPECT_EQ(count_op(f.code().graph().block(), OpId::add), 2u);
  EXPECT_NE(&f.code().graph(), &f.graph());
  // 1 + 1, plus 2 ten times, times 1 + 1.
  EXPECT_EQ(unit.globals().at("y").value.repr(), "tensor([44., 44.])");
}

TEST(Optimization, NoOptCompilesTheGraphAsWritten) {
  RestoreOptimization restore;
  set_optimization_enabled(true);
  CompilationUnit optimized;
  size_t optimized_instructions = run_program(optimized).code().instructions().size();
  set_optimization_enabled(false);
  CompilationUnit unit;
  Function& f = run_program(unit);
  EXPECT_EQ(&f.code().graph(), &f.graph());
  EXPECT_GT(f.code().instructions().size(), optimized_instructions);
  EXPECT_EQ(unit.globals().at("y").value.repr(), "tensor([44., 44.])");
}

TEST(Optimization, TheCommandLineOptionTurnsItOff) {
  RestoreOptimization restore;
  set_optimization_enabled(true);
  EXPECT_EQ(run_command_line({"-c", "pass"}), kExitOk);
  EXPECT_TRUE(optimization_enabled());
  EXPECT_EQ(run_command_line({"--no-opt", "-c", "pass"}), kExitOk);
  EXPECT_FALSE(optimization_enabled());
}

}  // namespace
}  // namespace tsl
