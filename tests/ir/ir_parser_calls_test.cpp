// Calls between the graphs of one IR text (Note [Calls in IR text]): they print and
// parse back unchanged, inline through the `inline` pass, and the errors of linking
// (arity, recursion) and of inlining an unknown callee are located and worded.
#include <gtest/gtest.h>

#include "ir/ir_parser.h"
#include "ir/passes/pass_registry.h"

namespace tsl {
namespace {

const char* kTwoGraphs =
    "graph g(%a : Tensor, %s : float):\n"
    "  %b : Tensor = mul(%a, %s)\n"
    "  return (%b)\n"
    "\n"
    "graph f(%x : Tensor):\n"
    "  %half : float = Constant[value=0.5]()\n"
    "  %y : Tensor = CallFunction[name='g'](%x, %half)\n"
    "  return (%y)\n";

std::string print_all(const std::vector<std::unique_ptr<Graph>>& graphs) {
  std::string out;
  for (size_t i = 0; i < graphs.size(); ++i) out += (i ? "\n" : "") + print_graph(*graphs[i]);
  return out;
}

std::string parse_error(const std::string& text) {
  try {
    parse_graphs(text, "t.ir");
  } catch (const SourceError& e) {
    return e.render();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

TEST(IRTextCalls, PrintAndParseBackUnchanged) {
  auto graphs = parse_graphs(kTwoGraphs);
  ASSERT_EQ(graphs.size(), 2u);
  std::string printed = print_all(graphs);
  EXPECT_EQ(printed, kTwoGraphs);
  EXPECT_EQ(print_all(parse_graphs(printed)), printed);
  // The link is not text: a clone of the caller still inlines.
  std::unique_ptr<Graph> f = graphs[1]->clone();
  run_passes(*f, {"inline"});
  EXPECT_EQ(print_graph(*f),
            "graph f(%x : Tensor):\n"
            "  %half : float = Constant[value=0.5]()\n"
            "  %b : Tensor = mul(%x, %half)\n"
            "  return (%b)\n");
}

TEST(IRTextCalls, InliningAnUnknownCalleeIsAnError) {
  // Alone, the caller parses (a graph printed by itself) but cannot be inlined.
  std::string caller = std::string(kTwoGraphs).substr(std::string(kTwoGraphs).find("graph f"));
  std::unique_ptr<Graph> f = parse_graph(caller);
  try {
    run_passes(*f, {"inline"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot inline the call of 'g': the IR text defines "
                                         "no graph named 'g'"),
              std::string::npos)
        << e.what();
  }
}

TEST(IRTextCalls, ArityAndRecursionAreErrorsAtTheCall) {
  std::string arity = parse_error(
      "graph g(%a : Tensor):\n  return (%a)\n"
      "graph f(%x : Tensor):\n  %y : Tensor = CallFunction[name='g'](%x, %x)\n  return (%y)\n");
  EXPECT_NE(arity.find("t.ir:4:17: error: the call of 'g' has 2 inputs and 1 outputs, but graph "
                       "'g' has 1 parameters and 1 results"),
            std::string::npos)
      << arity;
  std::string recursion = parse_error(
      "graph f(%x : Tensor):\n  %y : Tensor = CallFunction[name='g'](%x)\n  return (%y)\n"
      "graph g(%x : Tensor):\n  %y : Tensor = CallFunction[name='f'](%x)\n  return (%y)\n");
  EXPECT_NE(recursion.find("error: recursive call of "), std::string::npos) << recursion;
}

}  // namespace
}  // namespace tsl
