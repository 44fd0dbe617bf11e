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
                                 "counter = 3\nx = torch.ones(2)\n"
                                 "xs = [torch.ones(2), torch.zeros(2)]\n"
                                 "d = {'a': 1.0}\nname = 'tsl'\n"
                                 "def make(n: int):\n    return torch.ones(n)\n"),
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

// After a '.', the members of the value's static type, whatever expression gives it:
// an element of a list, a call's result, a method's, a bracketed expression, a
// tensor's Optional gradient; a list's, a dict's and a str's methods; nothing for an
// int or an expression that does not compile.
TEST(Completion, MembersByStaticType) {
  CompilationUnit& unit = session();
  Completions c = complete(unit, "y = xs[0].su");
  EXPECT_TRUE(offers(c, "sum")) << listed(c);
  EXPECT_EQ(c.start, std::string("y = xs[0].").size());
  EXPECT_TRUE(offers(complete(unit, "make(3).me"), "mean"));
  EXPECT_TRUE(offers(complete(unit, "x.t().resh"), "reshape"));
  EXPECT_TRUE(offers(complete(unit, "(x + 1).ab"), "abs"));
  EXPECT_TRUE(offers(complete(unit, "x.grad.ze"), "zero_"));
  EXPECT_TRUE(offers(complete(unit, "x.requires"), "requires_grad"));
  EXPECT_TRUE(offers(complete(unit, "x.it"), "item"));  // a method outside the op table
  EXPECT_TRUE(offers(complete(unit, "x.sh"), "shape"));
  Completions of_list = complete(unit, "xs.");
  EXPECT_TRUE(offers(of_list, "append")) << listed(of_list);
  EXPECT_FALSE(offers(of_list, "sum")) << listed(of_list);
  EXPECT_TRUE(offers(complete(unit, "d.ke"), "keys"));
  EXPECT_TRUE(offers(complete(unit, "name.fo"), "format"));
  EXPECT_TRUE(offers(complete(unit, "'{}'.fo"), "format"));
  EXPECT_TRUE(complete(unit, "counter.").candidates.empty());
  EXPECT_TRUE(complete(unit, "nope(x).su").candidates.empty());
  EXPECT_TRUE(complete(unit, "x[.su").candidates.empty());
  // Modules keep their members.
  EXPECT_TRUE(offers(complete(unit, "torch.nn.functional.rel"), "relu"));
}

// A "has no method" error lists the methods the type has (the names completion offers).
TEST(Completion, MethodErrorsListTheMethods) {
  CompilationUnit unit;
  try {
    unit.run_source(std::make_shared<Source>("<test>", "xs = [1, 2]\nxs.pop()\n"), false);
    FAIL() << "no error";
  } catch (const SourceError& e) {
    EXPECT_NE(e.render().find("list has no method 'pop' in TSL (it has append, sort)"),
              std::string::npos)
        << e.render();
  }
}

}  // namespace
}  // namespace tsl
