// The parser's fast path against the ANTLR path (Note [Two parsers]): on every .tsl
// file of the repository and on snippets of each construct, the same AST with the same
// source ranges; on errors, the fast path gives up and the message and location are
// the ANTLR path's.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "antlr4-runtime.h"
#include "frontend/fast_parser.h"
#include "frontend/parser.h"
#include "tests/common/repository_files.h"

namespace tsl {
namespace {

// ---- A dump of every field of the AST, ranges included -------------------------------

std::string where(const SourceRange& r) {
  return std::to_string(r.line) + ":" + std::to_string(r.col) + "-" + std::to_string(r.end_line) +
         ":" + std::to_string(r.end_col);
}

class Dumper {
 public:
  std::string out;

  void body(const ast::Body& b, int indent) {
    for (const ast::StmtPtr& s : b) stmt(*s, indent);
  }

 private:
  void line(int indent, const std::string& text) {
    out += std::string(indent * 2, ' ') + text + "\n";
  }

  void opt(const ast::ExprPtr& e, int indent, const char* label) {
    line(indent, label);
    if (e) expr(*e, indent + 1);
  }

  void exprs(const std::vector<ast::ExprPtr>& es, int indent) {
    for (const ast::ExprPtr& e : es) expr(*e, indent);
  }

  void expr(const ast::Expr& e, int in) {
    std::string head = "expr" + std::to_string(static_cast<int>(e.kind)) + " " + where(e.range);
    switch (e.kind) {
      case ast::ExprKind::Name:
        return line(in, head + " " + ast::as<ast::Name>(e).id);
      case ast::ExprKind::Int:
        return line(in, head + " " + std::to_string(ast::as<ast::IntLit>(e).value));
      case ast::ExprKind::Float: {
        std::ostringstream s;
        s.precision(17);
        s << ast::as<ast::FloatLit>(e).value;
        return line(in, head + " " + s.str());
      }
      case ast::ExprKind::Str:
        return line(in, head + " '" + ast::as<ast::StrLit>(e).value + "'");
      case ast::ExprKind::FString:
        line(in, head);
        for (const ast::FStringPart& p : ast::as<ast::FString>(e).parts) {
          line(in + 1, "part '" + p.literal + "' !" + p.conversion + " :" + p.format_spec);
          if (p.expr) expr(*p.expr, in + 2);
        }
        return;
      case ast::ExprKind::Bool:
        return line(in, head + (ast::as<ast::BoolLit>(e).value ? " True" : " False"));
      case ast::ExprKind::None:
      case ast::ExprKind::Ellipsis:
        return line(in, head);
      case ast::ExprKind::List:
        line(in, head);
        return exprs(ast::as<ast::ListExpr>(e).elts, in + 1);
      case ast::ExprKind::Tuple:
        line(in, head);
        return exprs(ast::as<ast::TupleExpr>(e).elts, in + 1);
      case ast::ExprKind::Dict:
        line(in, head);
        exprs(ast::as<ast::DictExpr>(e).keys, in + 1);
        return exprs(ast::as<ast::DictExpr>(e).values, in + 1);
      case ast::ExprKind::ListComp: {
        const auto& c = ast::as<ast::ListComp>(e);
        line(in, head);
        opt(c.elt, in + 1, "elt");
        opt(c.target, in + 1, "target");
        opt(c.iter, in + 1, "iter");
        return opt(c.cond, in + 1, "cond");
      }
      case ast::ExprKind::DictComp: {
        const auto& c = ast::as<ast::DictComp>(e);
        line(in, head);
        opt(c.key, in + 1, "key");
        opt(c.value, in + 1, "value");
        opt(c.target, in + 1, "target");
        opt(c.iter, in + 1, "iter");
        return opt(c.cond, in + 1, "cond");
      }
      case ast::ExprKind::Unary: {
        const auto& u = ast::as<ast::Unary>(e);
        line(in, head + " op" + std::to_string(static_cast<int>(u.op)));
        return expr(*u.operand, in + 1);
      }
      case ast::ExprKind::Binary: {
        const auto& b = ast::as<ast::Binary>(e);
        line(in, head + " " + ast::binop_symbol(b.op));
        expr(*b.lhs, in + 1);
        return expr(*b.rhs, in + 1);
      }
      case ast::ExprKind::BoolOp: {
        const auto& b = ast::as<ast::BoolOp>(e);
        line(in, head + (b.op == ast::BoolOpKind::And ? " and" : " or"));
        expr(*b.lhs, in + 1);
        return expr(*b.rhs, in + 1);
      }
      case ast::ExprKind::Compare: {
        const auto& c = ast::as<ast::Compare>(e);
        for (ast::CmpOp op : c.ops) head += std::string(" ") + ast::cmpop_symbol(op);
        line(in, head);
        return exprs(c.operands, in + 1);
      }
      case ast::ExprKind::IfExp: {
        const auto& c = ast::as<ast::IfExp>(e);
        line(in, head);
        opt(c.cond, in + 1, "cond");
        opt(c.then_expr, in + 1, "then");
        return opt(c.else_expr, in + 1, "else");
      }
      case ast::ExprKind::Call: {
        const auto& c = ast::as<ast::Call>(e);
        line(in, head);
        expr(*c.func, in + 1);
        exprs(c.args, in + 1);
        for (const ast::Keyword& k : c.keywords) {
          line(in + 1, "keyword " + k.name + " " + where(k.range));
          expr(*k.value, in + 2);
        }
        return;
      }
      case ast::ExprKind::Attribute: {
        const auto& a = ast::as<ast::Attribute>(e);
        line(in, head + " ." + a.attr + " " + where(a.attr_range));
        return expr(*a.value, in + 1);
      }
      case ast::ExprKind::Subscript: {
        const auto& s = ast::as<ast::Subscript>(e);
        line(in, head);
        expr(*s.value, in + 1);
        return exprs(s.indices, in + 1);
      }
      case ast::ExprKind::Slice: {
        const auto& s = ast::as<ast::Slice>(e);
        line(in, head);
        opt(s.lower, in + 1, "lower");
        opt(s.upper, in + 1, "upper");
        return opt(s.step, in + 1, "step");
      }
      case ast::ExprKind::Starred:
        line(in, head);
        return expr(*ast::as<ast::Starred>(e).value, in + 1);
    }
  }

  void aliases(const std::vector<ast::ImportAlias>& names, int in) {
    for (const ast::ImportAlias& a : names)
      line(in, a.name + " as " + a.asname + " " + where(a.range));
  }

  void stmt(const ast::Stmt& s, int in) {
    line(in, "stmt" + std::to_string(static_cast<int>(s.kind)) + " " + where(s.range));
    in += 1;
    switch (s.kind) {
      case ast::StmtKind::Expr:
        return expr(*ast::as<ast::ExprStmt>(s).value, in);
      case ast::StmtKind::Assign:
        exprs(ast::as<ast::Assign>(s).targets, in);
        return opt(ast::as<ast::Assign>(s).value, in, "value");
      case ast::StmtKind::AugAssign: {
        const auto& a = ast::as<ast::AugAssign>(s);
        line(in, std::string(ast::binop_symbol(a.op)) + " " + where(a.op_range));
        expr(*a.target, in);
        return expr(*a.value, in);
      }
      case ast::StmtKind::AnnAssign: {
        const auto& a = ast::as<ast::AnnAssign>(s);
        opt(a.target, in, "target");
        opt(a.annotation, in, "annotation");
        return opt(a.value, in, "value");
      }
      case ast::StmtKind::If: {
        const auto& i = ast::as<ast::If>(s);
        expr(*i.cond, in);
        body(i.body, in);
        line(in, "else");
        return body(i.orelse, in);
      }
      case ast::StmtKind::While:
        expr(*ast::as<ast::While>(s).cond, in);
        return body(ast::as<ast::While>(s).body, in);
      case ast::StmtKind::For: {
        const auto& f = ast::as<ast::For>(s);
        expr(*f.target, in);
        expr(*f.iter, in);
        return body(f.body, in);
      }
      case ast::StmtKind::Break:
      case ast::StmtKind::Continue:
      case ast::StmtKind::Pass:
        return;
      case ast::StmtKind::Return:
        return opt(ast::as<ast::Return>(s).value, in, "value");
      case ast::StmtKind::Assert:
        opt(ast::as<ast::Assert>(s).test, in, "test");
        return opt(ast::as<ast::Assert>(s).msg, in, "msg");
      case ast::StmtKind::Raise:
        return opt(ast::as<ast::Raise>(s).exc, in, "exc");
      case ast::StmtKind::With:
        for (const ast::WithItem& w : ast::as<ast::With>(s).items) {
          opt(w.context, in, "context");
          opt(w.target, in, "as");
        }
        return body(ast::as<ast::With>(s).body, in);
      case ast::StmtKind::FunctionDef: {
        const auto& f = ast::as<ast::FunctionDef>(s);
        line(in, "def " + f.name + " " + where(f.name_range));
        exprs(f.decorators, in);
        for (const ast::Param& p : f.params) {
          line(in, "param " + p.name + " " + where(p.range));
          opt(p.annotation, in + 1, "annotation");
          opt(p.default_value, in + 1, "default");
        }
        opt(f.returns, in, "returns");
        return body(f.body, in);
      }
      case ast::StmtKind::Import:
        return aliases(ast::as<ast::Import>(s).names, in);
      case ast::StmtKind::ImportFrom:
        line(in, "from " + ast::as<ast::ImportFrom>(s).module);
        return aliases(ast::as<ast::ImportFrom>(s).names, in);
    }
  }
};

std::string dump(const ast::Body& body) {
  Dumper d;
  d.body(body, 0);
  return d.out;
}

// ---- The two paths -------------------------------------------------------------------

// The ANTLR path's dump, or "error L:C: message".
std::string antlr_result(const SourcePtr& source) {
  try {
    return dump(parse_detail::parse_module_antlr(source).body);
  } catch (const SourceError& e) {
    return "error " + std::to_string(e.range().line) + ":" + std::to_string(e.range().col) + ": " +
           e.message();
  }
}

// parse_module's result (fast path first) in the same form.
std::string default_result(const SourcePtr& source) {
  try {
    return dump(parse_module(source).body);
  } catch (const SourceError& e) {
    return "error " + std::to_string(e.range().line) + ":" + std::to_string(e.range().col) + ": " +
           e.message();
  }
}

// The fast path alone: its dump, "bail" when it leaves the text to ANTLR, or the token
// pass's error.
std::string fast_result(const SourcePtr& source) {
  try {
    std::string prepared = prepare_text(source, source->text(), {});
    TokenizedText tokens = tokenize(source, prepared, {});
    std::optional<ast::Body> body = parse_detail::fast_parse_file(source, tokens);
    return body ? dump(*body) : "bail";
  } catch (const SourceError& e) {
    return "error " + std::to_string(e.range().line) + ":" + std::to_string(e.range().col) + ": " +
           e.message();
  }
}

SourcePtr source_of(const std::string& code) { return std::make_shared<Source>("t.tsl", code); }

// Both paths accept `code` and build the same AST.
void expect_same(const std::string& code) {
  SCOPED_TRACE(code);
  SourcePtr s = source_of(code);
  std::string antlr = antlr_result(s);
  ASSERT_EQ(antlr.rfind("error", 0), std::string::npos) << antlr;
  EXPECT_EQ(fast_result(s), antlr);
}

// The fast path gives up on `code`, and parse_module reports the ANTLR path's error.
void expect_bail(const std::string& code) {
  SCOPED_TRACE(code);
  SourcePtr s = source_of(code);
  EXPECT_EQ(fast_result(s), "bail");
  EXPECT_EQ(default_result(s), antlr_result(s));
}

TEST(FastParser, Statements) {
  expect_same("x = 1\n");
  expect_same("a = b = 1; c = 2;\n");
  expect_same("a, b = 1, 2\n[a, (b, c)] = f(x)\nx.y = 1\nx[0] = 2\n");
  expect_same("x += 1\nx.y -= 2\nx[i] @= w\ny //= 3\nz **= 2\nw <<= 1\n");
  expect_same("x: int = 1\ny: List[int]\nz.w: float = 2.0\n");
  expect_same("pass\nbreak\ncontinue\nreturn\nreturn x\nreturn x, y\nreturn x,\n");
  expect_same("raise\nraise ValueError('bad')\nassert x\nassert x > 0, 'msg'\n");
  expect_same("import torch\nimport torch.nn.functional as F, math\n");
  expect_same("from torch import nn\nfrom a.b import c as d, e\nfrom m import *\n");
  expect_same("from m import (a, b as c,)\nfrom m import (a)\n");
  expect_same("if a:\n    x = 1\nelif b:\n    x = 2\nelif c: x = 3\nelse:\n    x = 4\n");
  expect_same("while i < 10:\n    i += 1\n    if i == 5:\n        break\n");
  expect_same(
      "for i in range(3):\n    pass\nfor a, b in zip(x, y): pass\nfor (a, b), c in z:\n"
      "    pass\n");
  expect_same("with torch.no_grad():\n    y = x * 2\nwith a as b, c:\n    pass\n");
  expect_same("def f(x: Tensor, n: int = 3, ) -> Tensor:\n    return x\n");
}

TEST(FastParser, Functions) {
  expect_same("def f():\n    pass\n");
  expect_same(
      "def f(x, y: int, z=2, w: float = 1.0,) -> Tuple[Tensor, int]:\n"
      "    '''doc'''\n    return x, 1\n");
  expect_same("@torch.jit.script\ndef f(x):\n    return x\n");
  expect_same("@a\n@b.c(1)\ndef f(x): return x\n");
  expect_same("def f(x):\n    def g(y):\n        return y\n    return g(x)\n");
}

TEST(FastParser, Expressions) {
  expect_same("x = a + b * c - d / e // f % g @ h\n");
  expect_same("x = a << 1 >> 2 & 3 ^ 4 | 5\n");
  expect_same("x = a < b <= c > d >= e == f != g\ny = a in b\nz = a not in b\n");
  expect_same("x = a is b\ny = a is not None\nz = (a < b) < c\nw = a < b + c < d\n");
  expect_same("x = a and b or c and not d\ny = not a == b\nz = not not a\n");
  expect_same("x = -a ** -b\ny = +a\nz = ~a\nw = - - 1\nv = 2 ** 3 ** 4\n");
  expect_same("x = a if b else c if d else e\n");
  expect_same("x = f(a, *b, k=1, j=g(2))\ny = f()\nz = f(a,)\n");
  expect_same("x = a.b.c(d).e[f]\n");
  expect_same("x = a[1]\ny = a[1:2]\nz = a[:, ::2, 1:]\nw = a[..., None, :-1:]\nv = a[0,]\n");
  expect_same("x = ()\ny = (1,)\nz = (1, 2)\nw = (a)\nv = ((a, b),)\n");
  expect_same("x = []\ny = [1]\nz = [1, 2,]\nw = [[1, 2], [3]]\n");
  expect_same("x = [i * 2 for i in range(3)]\ny = [a for a, b in z if a > b]\n");
  expect_same("x = [a if c else b for a in xs]\n");
  expect_same("x = 1\ny = 0x1F\nz = 0o17\nw = 0b101\nv = 1_000\nu = 1.5e-3\nt = .5\ns = 2.\n");
  expect_same("x = -9223372036854775807\ny = True\nz = False\nw = None\n");
  expect_same("x = 'a' \"b\"\ny = '''long\ntext'''\nz = r'\\n'\n");
  expect_same("x = f'{a} and {b!r:>10}'\ny = f\"{x + 1:.3f}\"\n");
  expect_same("x = (a +\n     b)\ny = [1,\n     2]\nz = a + \\\n    b\n");
  expect_same("print(x, end='')\n# comment\n\nx = 1  # trailing\n");
}

TEST(FastParser, Dicts) {
  expect_same("x = {}\ny = {'a': 1}\nz = {'a': [1, 2], 'b': f(x),}\n");
  expect_same("d = {\n    1: {'x': a + b},\n    2: {},\n}\nw = {'k': v}['k']\n");
}

TEST(FastParser, Unicode) { expect_same("π = 3.14\nnaïve_x = π * 2\nprint(naïve_x, 'é')\n"); }

// Anything the ANTLR path reports an error for, the fast path leaves to it, so the
// error is the same; a later syntax error still wins over an earlier builder error.
TEST(FastParser, ErrorsAreTheAntlrPaths) {
  expect_bail("x = (1 2)\n");
  expect_bail("f(a b)\n");
  expect_bail("x = \n");
  expect_bail("if x\n    pass\n");
  expect_bail("def f(x):\nreturn x\n");
  expect_bail("1 = x\n");
  expect_bail("f() = 1\nx = (\n1 2)\n");
  expect_bail("(a, b): int = 1\n");
  expect_bail("(a, b) += 1\n");
  expect_bail("for 1 in x:\n    pass\n");
  expect_bail("while x:\n    pass\nelse:\n    pass\n");
  expect_bail("for x in y:\n    pass\nelse:\n    pass\n");
  expect_bail("raise E from e\n");
  expect_bail("f(k=1, k=2)\n");
  expect_bail("f(k=1, 2)\n");
  expect_bail("f(**k)\n");
  expect_bail("f(x for x in y)\n");
  expect_bail("x = (x for x in y)\n");
  expect_bail("x = [a for a in b for c in d]\n");
  expect_bail("x = [a for a in b if c if d]\n");
  expect_bail("x = a == not b\n");
  expect_bail("x = 9223372036854775808\n");
  expect_bail("x = -9223372036854775808\n");
  expect_bail("x = lambda: 1\n");
  expect_bail("class A:\n    pass\n");
  expect_bail("x = {1, 2}\n");
  expect_bail("x = {1: 2, 3}\n");
  expect_bail("x = {k: v for k in a}\n");
  expect_bail("x := 1\n");
  expect_bail("from m import a,\n");
  expect_bail("import a.\n");
  expect_bail("x[] = 1\n");
  expect_bail("x = f'{a b}'\n");
}

// Deep input goes to the ANTLR path, which has the stack and depth guards.
TEST(FastParser, DeepInputGoesToAntlr) {
  expect_bail("x = " + std::string(5000, '-') + "1\n");
  std::string power = "x = ", nots = "x = ";
  for (int i = 0; i < 5000; ++i) power += "2**", nots += "not ";
  expect_bail(power + "2\n");
  expect_bail(nots + "a\n");
  std::string chain = "x = 1";
  for (int i = 0; i < 1100; ++i) chain += " + 1";
  SourcePtr s = source_of(chain + "\n");
  EXPECT_EQ(fast_result(s), "bail");  // a left chain is deep in the AST too
  EXPECT_EQ(default_result(s), antlr_result(s));
}

// Every .tsl file of the repository: the fast path builds the ANTLR path's AST (or
// gives up, and parse_module gives the ANTLR path's result).
TEST(FastParser, EveryRepositoryFile) {
  int files = 0, accepted = 0;
  for (const auto& [path, text] : repository_tsl_files()) {
    SourcePtr s = std::make_shared<Source>(path, text);
    SCOPED_TRACE(path);
    std::string antlr = antlr_result(s), fast = fast_result(s);
    ++files;
    if (fast != "bail") {
      ++accepted;
      EXPECT_EQ(fast, antlr);
    }
    EXPECT_EQ(default_result(s), antlr);
  }
  EXPECT_GT(files, 50);
  // Only files with syntax errors (tests/scripts/errors) may go to the ANTLR path.
  EXPECT_GT(accepted, files * 8 / 10) << accepted << " of " << files;
  std::cout << accepted << " of " << files << " files took the fast path\n";
}

// The compile-latency benchmark's function takes the fast path.
TEST(FastParser, BenchmarkFunction) {
  std::string code =
      "import torch\n\ndef big0(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n";
  for (int i = 0; i < 50; ++i) {
    std::string v = "v" + std::to_string(i), p = i ? "v" + std::to_string(i - 1) : "x";
    code += "    " + v + " = torch.tanh(" + p + " * 0.5 + y) - " + p +
            ".sum(dim=1, keepdim=True) * 0.25\n";
  }
  code += "    return torch.tanh(v49 + v48)\n";
  expect_same(code);
}

}  // namespace
}  // namespace tsl
