// The `:passes` view (ir/passes/pipeline_trace.h): the line diff, value names that stay
// put from pass to pass, and the pipeline's observer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/ir_parser.h"
#include "ir/passes/pipeline.h"
#include "ir/passes/pipeline_trace.h"

namespace tsl {
namespace {

TEST(LineDiff, MarksKeptRemovedAndAddedLines) {
  EXPECT_EQ(line_diff("a\nb\nc\n", "a\nc\nd\n"), "  a\n- b\n  c\n+ d\n");
  EXPECT_EQ(line_diff("x\n", "x\n"), "  x\n");
  EXPECT_EQ(line_diff("", "x\ny\n"), "+ x\n+ y\n");
  EXPECT_EQ(line_diff("x\ny\n", ""), "- x\n- y\n");
  // A changed line is the old one removed, then the new one added.
  EXPECT_EQ(line_diff("a\nb\nc\n", "a\nB\nc\n"), "  a\n- b\n+ B\n  c\n");
  // The longest common subsequence is kept: here "b c", not "a".
  EXPECT_EQ(line_diff("a\nb\nc\n", "b\nc\na\n"), "- a\n  b\n  c\n+ a\n");
}

// The second relu is the first one again: cse removes it. Printed normally, the
// values after it would be renumbered (%2 -> %1); in the trace they keep their names.
const char* kTwoRelus =
    "graph f(%x : Tensor):\n"
    "  %0 : Tensor = relu(%x)\n"
    "  %1 : Tensor = relu(%x)\n"
    "  %2 : Tensor = mul(%0, %1)\n"
    "  %3 : Tensor = sigmoid(%2)\n"
    "  return (%3)\n";

TEST(TraceOptimize, ShowsEachChangeWithTheNamesOfTheGraphBefore) {
  std::unique_ptr<Graph> g = parse_graph(kTwoRelus);
  std::string trace = trace_optimize(*g);
  EXPECT_EQ(
      trace.rfind("# f: 4 nodes before the pipeline\n# round 1\n# canonicalize: unchanged\n", 0),
      0u)
      << trace;
  EXPECT_NE(trace.find("# cse: 3 nodes after it\n"
                       "  graph f(%x : Tensor):\n"
                       "    %0 : Tensor = relu(%x)\n"
                       "-   %1 : Tensor = relu(%x)\n"
                       "-   %2 : Tensor = mul(%0, %1)\n"
                       "+   %2 : Tensor = mul(%0, %0)\n"
                       "    %3 : Tensor = sigmoid(%2)\n"
                       "    return (%3)\n"),
            std::string::npos)
      << trace;
  EXPECT_NE(trace.find("# round 2\n"), std::string::npos) << trace;
  // Fusion runs after the rounds (as Function::code() runs it); the values keep their
  // names inside the group.
  EXPECT_TRUE(
      trace.ends_with("# after the rounds\n"
                      "# fuse: 4 nodes after it\n"
                      "  graph f(%x : Tensor):\n"
                      "-   %0 : Tensor = relu(%x)\n"
                      "-   %2 : Tensor = mul(%0, %0)\n"
                      "-   %3 : Tensor = sigmoid(%2)\n"
                      "+   %3 : Tensor = FusionGroup(%x)\n"
                      "+     block0(%x.1 : Tensor):\n"
                      "+       %0 : Tensor = relu(%x.1)\n"
                      "+       %2 : Tensor = mul(%0, %0)\n"
                      "+       %3.1 : Tensor = sigmoid(%2)\n"
                      "+       -> (%3.1)\n"
                      "    return (%3)\n"
                      "# f: 4 nodes after the pipeline (4 nodes before)\n"))
      << trace;
  // The graph traced is a copy.
  EXPECT_EQ(print_graph(*g), kTwoRelus);
}

TEST(TraceOptimize, AnUnchangedGraphListsEveryPassOnce) {
  std::unique_ptr<Graph> g =
      parse_graph("graph g(%x : Tensor):\n  %0 : Tensor = relu(%x)\n  return (%0)\n");
  EXPECT_EQ(trace_optimize(*g),
            "# g: 1 node before the pipeline\n# round 1\n# canonicalize: unchanged\n"
            "# specialize-undefined: unchanged\n# constant-fold: unchanged\n"
            "# simplify: unchanged\n# propagate-shapes: unchanged\n# cse: unchanged\n"
            "# licm: unchanged\n# dce: unchanged\n# after the rounds\n# fuse: unchanged\n"
            "# g: 1 node after the pipeline (1 node before)\n");
}

TEST(Optimize, TheObserverSeesEveryPassOfEveryRound) {
  std::unique_ptr<Graph> g = parse_graph(kTwoRelus);
  std::vector<std::string> seen;
  bool changed = optimize(*g, [&](std::string_view pass, int round, bool pass_changed,
                                  const Graph&) {
    seen.push_back(std::to_string(round) + " " + std::string(pass) + (pass_changed ? " *" : ""));
  });
  EXPECT_TRUE(changed);
  std::vector<std::string> expected = {"1 canonicalize",
                                       "1 specialize-undefined",
                                       "1 constant-fold",
                                       "1 simplify",
                                       "1 propagate-shapes",
                                       "1 cse *",
                                       "1 licm",
                                       "1 dce",
                                       "2 canonicalize",
                                       "2 specialize-undefined",
                                       "2 constant-fold",
                                       "2 simplify",
                                       "2 propagate-shapes",
                                       "2 cse",
                                       "2 licm",
                                       "2 dce"};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(count_nodes(*g), 3u);
}

}  // namespace
}  // namespace tsl
