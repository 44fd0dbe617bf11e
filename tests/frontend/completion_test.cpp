// The REPL's TAB completion (frontend/repl/line_editor.h), without a terminal: names,
// members after a dot, meta-commands and, inside a call, its keyword arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "frontend/compilation_unit.h"
#include "frontend/repl/line_editor.h"

namespace tsl {
namespace {

bool offers(const Completions& c, const std::string& s) {
  return std::find(c.candidates.begin(), c.candidates.end(), s) != c.candidates.end();
}

std::string listed(const Completions& c) {
  std::string s;
  for (const std::string& x : c.candidates) s += x + " ";
  return s;
}

CompilationUnit& session() {
  static CompilationUnit unit;
  static bool ready = [] {
    unit.run_source(
        std::make_shared<Source>("<test>",
                                 "import torch\nimport torch.nn.functional as F\n"
                                 "def loss(pred, target, reduction: str = 'mean'):\n"
                                 "    return F.mse_loss(pred, target, reduction=reduction)\n"
                                 "counter = 3\nx = torch.ones(2)\n"),
        false);
    return true;
  }();
  (void)ready;
  return unit;
}

TEST(Completion, KeywordArgumentsInsideACall) {
  CompilationUnit& unit = session();
  // A builtin of torch.nn.functional (in the op table).
  Completions c = complete(unit, "y = F.cross_entropy(x, t, red");
  EXPECT_TRUE(offers(c, "reduction=")) << listed(c);
  EXPECT_EQ(c.start, std::string("y = F.cross_entropy(x, t, ").size());
  // (Those written in TSL, stdlib/torch_functional.tsl, need the stdlib beside the
  // binary: tests/repl/repl_line_editing.py completes one.)
  // A def, a torch function, a Tensor method; the innermost open call counts.
  EXPECT_TRUE(offers(complete(unit, "loss(p, q, re"), "reduction="));
  EXPECT_TRUE(offers(complete(unit, "torch.sum(x, di"), "dim="));
  EXPECT_TRUE(offers(complete(unit, "x.sum(keep"), "keepdim="));
  Completions inner = complete(unit, "loss(torch.softmax(x, di");
  EXPECT_TRUE(offers(inner, "dim=")) << listed(inner);
  EXPECT_FALSE(offers(inner, "reduction=")) << listed(inner);
  // Closed calls and brackets in strings do not count; names still complete.
  EXPECT_FALSE(offers(complete(unit, "loss(p, q) + re"), "reduction="));
  EXPECT_TRUE(offers(complete(unit, "print(')', cou"), "counter"));
  EXPECT_FALSE(offers(complete(unit, "print(')', cou"), "sep="));
  EXPECT_TRUE(offers(complete(unit, "print(1, se"), "sep="));
}

TEST(Completion, NamesMembersAndCommands) {
  CompilationUnit& unit = session();
  EXPECT_TRUE(offers(complete(unit, "print(coun"), "counter"));
  EXPECT_TRUE(offers(complete(unit, "F.rel"), "relu"));
  EXPECT_TRUE(offers(complete(unit, "x.ab"), "abs"));
  EXPECT_TRUE(offers(complete(unit, ":gr"), ":grad"));
  EXPECT_TRUE(offers(complete(unit, ":do"), ":doc"));
}

}  // namespace
}  // namespace tsl
