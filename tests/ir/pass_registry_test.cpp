// The pass driver: names, unknown-pass errors, the verifier after each pass, and the
// dead-code elimination pass on graphs built through the API.
#include "ir/passes/pass_registry.h"

#include <gtest/gtest.h>

#include "ir/ir_parser.h"
#include "ir/passes/dead_code_elimination.h"

namespace tsl {
namespace {

TEST(PassRegistry, UnknownPassNamesTheKnownOnes) {
  auto g = parse_graph("graph f(%x : Tensor):\n  return (%x)\n");
  try {
    run_passes(*g, {"dce", "frobnicate"}, true);
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(
        what.find(
            "unknown pass 'frobnicate'; the known passes are: canonicalize, specialize-undefined"),
        std::string::npos)
        << what;
  }
  EXPECT_NE(find_pass("dce"), nullptr);
  EXPECT_EQ(find_pass("nope"), nullptr);
}

TEST(PassRegistry, VerifiesAfterEachPass) {
  // A broken pass: it leaves a node whose input is defined after it.
  register_pass("test-break-order", "moves the last node first (for this test)", [](Graph& g) {
    Node* last = g.block()->return_node()->prev();
    last->move_before(g.block()->param_node()->next());
  });
  auto g = parse_graph(
      "graph f(%x : Tensor):\n  %a : Tensor = relu(%x)\n  %b : Tensor = neg(%a)\n"
      "  return (%b)\n");
  EXPECT_NO_THROW(run_passes(*g, {"test-break-order"}, false));
  auto h = parse_graph(
      "graph f(%x : Tensor):\n  %a : Tensor = relu(%x)\n  %b : Tensor = neg(%a)\n"
      "  return (%b)\n");
  try {
    run_passes(*h, {"dce", "test-break-order"}, true);
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("after pass 'test-break-order'"), std::string::npos)
        << e.what();
  }
}

TEST(DeadCodeElimination, ReportsWhetherItChangedTheGraph) {
  auto g = parse_graph(
      "graph f(%x : Tensor):\n  %a : Tensor = relu(%x)\n  %b : Tensor = neg(%x)\n"
      "  return (%b)\n");
  size_t before = g->num_nodes();
  EXPECT_TRUE(eliminate_dead_code(*g));
  EXPECT_EQ(g->num_nodes(), before - 1);
  EXPECT_FALSE(eliminate_dead_code(*g));
  verify(*g);
}

}  // namespace
}  // namespace tsl
