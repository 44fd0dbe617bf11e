// Parser tests: statement and expression forms (checked through dump_ast), precedence,
// literals, layout (INDENT/DEDENT, line joining, CRLF, BOM), source ranges.
#include <gtest/gtest.h>

#include "frontend/parser.h"

namespace tsl {
namespace {

SourcePtr src(const std::string& code) { return std::make_shared<Source>("t.tsl", code); }

// The dump of a whole module, without the first "Module t.tsl" line.
std::string dump(const std::string& code) {
  std::string d = dump_ast(parse_module(src(code)));
  return d.substr(d.find('\n') + 1);
}

// The dump of one expression statement's expression, unindented, without locations.
std::string tree(const std::string& code) {
  std::string d = dump(code);
  std::string out;
  size_t pos = d.find('\n') + 1;  // skip "  Expr @1:1"
  while (pos < d.size()) {
    size_t end = d.find('\n', pos);
    std::string line = d.substr(pos, end - pos);
    size_t at = line.rfind(" @");
    if (at != std::string::npos) line.erase(at);
    out += line.substr(std::min<size_t>(4, line.size())) + "\n";
    pos = end + 1;
  }
  return out;
}

const ast::Stmt& first_stmt(const ast::Module& m) { return *m.body.at(0); }
const ast::Expr& first_expr(const ast::Module& m) {
  return *ast::as<ast::ExprStmt>(first_stmt(m)).value;
}

TEST(Parser, EmptyAndCommentOnlyFiles) {
  EXPECT_TRUE(parse_module(src("")).body.empty());
  EXPECT_TRUE(parse_module(src("\n\n   \n")).body.empty());
  EXPECT_TRUE(parse_module(src("# only a comment")).body.empty());
  EXPECT_TRUE(parse_module(src("  # indented comment\n\t# tab comment\n")).body.empty());
}

TEST(Parser, Assignments) {
  EXPECT_EQ(dump("a = b = 1\n"),
            "  Assign @1:1\n    targets:\n      Name a @1:1\n      Name b @1:5\n    value:\n      "
            "Int 1 @1:9\n");
  EXPECT_EQ(
      dump("a, b = e"),
      "  Assign @1:1\n    targets:\n      Tuple @1:1\n        Name a @1:1\n        Name b @1:4\n"
      "    value:\n      Name e @1:8\n");
  EXPECT_EQ(
      dump("(a, b) = [c, d] = e, f"),
      "  Assign @1:1\n    targets:\n      Tuple @1:1\n        Name a @1:2\n        Name b @1:5\n"
      "      List @1:10\n        Name c @1:11\n        Name d @1:14\n    value:\n      Tuple "
      "@1:19\n"
      "        Name e @1:19\n        Name f @1:22\n");
  EXPECT_EQ(dump("x.grad = None"),
            "  Assign @1:1\n    targets:\n      Attribute grad @1:1\n        Name x @1:1\n    "
            "value:\n      None @1:10\n");
  EXPECT_EQ(
      dump("x: int = 1"),
      "  AnnAssign @1:1\n    target:\n      Name x @1:1\n    annotation:\n      Name int @1:4\n"
      "    value:\n      Int 1 @1:10\n");
  EXPECT_EQ(
      dump("x: List[int]"),
      "  AnnAssign @1:1\n    target:\n      Name x @1:1\n    annotation:\n      Subscript @1:4\n"
      "        value:\n          Name List @1:4\n        indices:\n          Name int @1:9\n");
}

TEST(Parser, AugmentedAssignments) {
  const char* ops[] = {"+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>"};
  for (const char* op : ops) {
    std::string code = std::string("x ") + op + "= y";
    ast::Module m = parse_module(src(code));
    const auto& a = ast::as<ast::AugAssign>(first_stmt(m));
    EXPECT_EQ(std::string(ast::binop_symbol(a.op)), op) << code;
    EXPECT_EQ(a.op_range.col, 2u);
    EXPECT_EQ(a.op_range.end_col, 2u + std::string(op).size() + 1);
  }
}

TEST(Parser, SimpleStatements) {
  EXPECT_EQ(dump("pass; break; continue;"), "  Pass @1:1\n  Break @1:7\n  Continue @1:14\n");
  EXPECT_EQ(dump("return"), "  Return @1:1\n");
  EXPECT_EQ(dump("return a, b"),
            "  Return @1:1\n    Tuple @1:8\n      Name a @1:8\n      Name b @1:11\n");
  EXPECT_EQ(dump("assert x, 'm'"),
            "  Assert @1:1\n    test:\n      Name x @1:8\n    msg:\n      Str \"m\" @1:11\n");
  EXPECT_EQ(dump("assert x"), "  Assert @1:1\n    test:\n      Name x @1:8\n");
  EXPECT_EQ(dump("raise"), "  Raise @1:1\n");
  EXPECT_EQ(dump("raise E('m')"),
            "  Raise @1:1\n    Call @1:7\n      func:\n        Name E @1:7\n      args:\n        "
            "Str \"m\" @1:9\n");
}

TEST(Parser, Imports) {
  EXPECT_EQ(dump("import torch.nn.functional as F, math"),
            "  Import @1:1\n    Alias torch.nn.functional as F @1:8\n    Alias math @1:34\n");
  EXPECT_EQ(dump("from typing import List, Tuple as T"),
            "  ImportFrom typing @1:1\n    Alias List @1:20\n    Alias Tuple as T @1:26\n");
  EXPECT_EQ(dump("from a.b import (x,\n  y as z,)"),
            "  ImportFrom a.b @1:1\n    Alias x @1:18\n    Alias y as z @2:3\n");
  EXPECT_EQ(dump("from m import *"), "  ImportFrom m @1:1\n    Alias * @1:15\n");
}

TEST(Parser, IfElifElse) {
  std::string code =
      "if a:\n"
      "    x = 1\n"
      "elif b:\n"
      "    pass\n"
      "else:\n"
      "    y = 2\n";
  EXPECT_EQ(
      dump(code),
      "  If @1:1\n    cond:\n      Name a @1:4\n    body:\n      Assign @2:5\n        targets:\n"
      "          Name x @2:5\n        value:\n          Int 1 @2:9\n    orelse:\n      If @3:1\n"
      "        cond:\n          Name b @3:6\n        body:\n          Pass @4:5\n        orelse:\n"
      "          Assign @6:5\n            targets:\n              Name y @6:5\n            value:\n"
      "              Int 2 @6:9\n");
  // A compound statement's range is its header line.
  ast::Module m = parse_module(src(code));
  const SourceRange& r = first_stmt(m).range;
  EXPECT_EQ(r.line, 1u);
  EXPECT_EQ(r.col, 0u);
  EXPECT_EQ(r.end_line, 1u);
  EXPECT_EQ(r.end_col, 5u);
}

TEST(Parser, Loops) {
  EXPECT_EQ(dump("while x < 3: x += 1"),
            "  While @1:1\n    cond:\n      Compare < @1:7\n        Name x @1:7\n        Int 3 "
            "@1:11\n    body:\n"
            "      AugAssign += @1:14\n        target:\n          Name x @1:14\n        value:\n   "
            "       Int 1 @1:19\n");
  EXPECT_EQ(dump("for i, (a, b) in pairs:\n  continue\n"),
            "  For @1:1\n    target:\n      Tuple @1:5\n        Name i @1:5\n        Tuple @1:8\n"
            "          Name a @1:9\n          Name b @1:12\n    iter:\n      Name pairs @1:18\n    "
            "body:\n"
            "      Continue @2:3\n");
}

TEST(Parser, With) {
  EXPECT_EQ(
      dump("with no_grad(), a() as x:\n  pass"),
      "  With @1:1\n    item:\n      Call @1:6\n        func:\n          Name no_grad @1:6\n    "
      "item:\n"
      "      Call @1:17\n        func:\n          Name a @1:17\n      as:\n        Name x @1:24\n"
      "    body:\n      Pass @2:3\n");
}

TEST(Parser, FunctionDef) {
  std::string code =
      "@torch.jit.script\n"
      "def f(x: Tensor, n: int = 3, y=None,) -> Tuple[Tensor, int]:\n"
      "    return x, n\n";
  ast::Module m = parse_module(src(code));
  const auto& f = ast::as<ast::FunctionDef>(first_stmt(m));
  EXPECT_EQ(f.name, "f");
  EXPECT_EQ(f.range.line, 2u);
  EXPECT_EQ(f.name_range.col, 4u);
  EXPECT_EQ(f.name_range.end_col, 5u);
  ASSERT_EQ(f.decorators.size(), 1u);
  EXPECT_EQ(f.decorators[0]->kind, ast::ExprKind::Attribute);
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[0].name, "x");
  EXPECT_EQ(ast::as<ast::Name>(*f.params[0].annotation).id, "Tensor");
  EXPECT_EQ(f.params[0].default_value, nullptr);
  EXPECT_EQ(ast::as<ast::IntLit>(*f.params[1].default_value).value, 3);
  EXPECT_EQ(f.params[2].annotation, nullptr);
  EXPECT_EQ(f.params[2].default_value->kind, ast::ExprKind::None);
  EXPECT_EQ(f.params[1].range.col, 17u);  // `n: int = 3`
  EXPECT_EQ(f.params[1].range.end_col, 27u);
  ASSERT_NE(f.returns, nullptr);
  EXPECT_EQ(f.returns->kind, ast::ExprKind::Subscript);
  EXPECT_EQ(ast::as<ast::Subscript>(*f.returns).indices.size(), 2u);
  ASSERT_EQ(f.body.size(), 1u);
  EXPECT_EQ(f.body[0]->kind, ast::StmtKind::Return);
  EXPECT_EQ(dump("def g(): pass"), "  FunctionDef g @1:1\n    body:\n      Pass @1:10\n");
}

TEST(Parser, Precedence) {
  EXPECT_EQ(tree("a + b * c"), "Binary +\n  Name a\n  Binary *\n    Name b\n    Name c\n");
  EXPECT_EQ(tree("a - b - c"), "Binary -\n  Binary -\n    Name a\n    Name b\n  Name c\n");
  EXPECT_EQ(tree("-2**2"), "Unary -\n  Binary **\n    Int 2\n    Int 2\n");
  EXPECT_EQ(tree("2**-1"), "Binary **\n  Int 2\n  Unary -\n    Int 1\n");
  EXPECT_EQ(tree("2**3**2"), "Binary **\n  Int 2\n  Binary **\n    Int 3\n    Int 2\n");
  EXPECT_EQ(tree("a @ b // c % d / e"),
            "Binary /\n  Binary %\n    Binary //\n      Binary @\n        Name a\n        Name b\n "
            "     Name c\n"
            "    Name d\n  Name e\n");
  EXPECT_EQ(
      tree("a | b ^ c & d << e + f"),
      "Binary |\n  Name a\n  Binary ^\n    Name b\n    Binary &\n      Name c\n      Binary <<\n"
      "        Name d\n        Binary +\n          Name e\n          Name f\n");
  EXPECT_EQ(tree("~a >> -b"), "Binary >>\n  Unary ~\n    Name a\n  Unary -\n    Name b\n");
  EXPECT_EQ(tree("not a == b"), "Unary not\n  Compare ==\n    Name a\n    Name b\n");
  EXPECT_EQ(tree("a or b and not c"),
            "BoolOp or\n  Name a\n  BoolOp and\n    Name b\n    Unary not\n      Name c\n");
  EXPECT_EQ(tree("a and b and c"), "BoolOp and\n  BoolOp and\n    Name a\n    Name b\n  Name c\n");
  EXPECT_EQ(tree("a if c else b if d else e"),
            "IfExp\n  cond:\n    Name c\n  then:\n    Name a\n  else:\n    IfExp\n      cond:\n    "
            "    Name d\n"
            "      then:\n        Name b\n      else:\n        Name e\n");
  EXPECT_EQ(tree("(a + b) * c"), "Binary *\n  Binary +\n    Name a\n    Name b\n  Name c\n");
  EXPECT_EQ(tree("+x"), "Unary +\n  Name x\n");
}

TEST(Parser, Comparisons) {
  EXPECT_EQ(tree("a < b <= c > d >= e == f != g"),
            "Compare < <= > >= == !=\n  Name a\n  Name b\n  Name c\n  Name d\n  Name e\n  Name f\n "
            " Name g\n");
  EXPECT_EQ(tree("a is not None"), "Compare is not\n  Name a\n  None\n");
  EXPECT_EQ(tree("a is b"), "Compare is\n  Name a\n  Name b\n");
  EXPECT_EQ(tree("a not in xs"), "Compare not in\n  Name a\n  Name xs\n");
  EXPECT_EQ(tree("a in xs"), "Compare in\n  Name a\n  Name xs\n");
  EXPECT_EQ(tree("a < b + 1"), "Compare <\n  Name a\n  Binary +\n    Name b\n    Int 1\n");
}

TEST(Parser, LongFlatChainsAreNotDeep) {
  // A comparison chain is one node however long; so is a tuple or a call's argument list.
  std::string chain = "x = 0";
  for (int i = 0; i < 2000; ++i) chain += " < " + std::to_string(i);
  ast::Module m = parse_module(src(chain));
  EXPECT_EQ(ast::as<ast::Compare>(*ast::as<ast::Assign>(first_stmt(m)).value).operands.size(),
            2001u);
  std::string args = "f(0";
  for (int i = 0; i < 5000; ++i) args += ", " + std::to_string(i);
  ast::Module c = parse_module(src(args + ")"));
  EXPECT_EQ(ast::as<ast::Call>(first_expr(c)).args.size(), 5001u);
  std::string sum = "x = 1";
  for (int i = 0; i < 900; ++i) sum += " + 1";
  EXPECT_NO_THROW(parse_module(src(sum)));
}

TEST(Parser, Calls) {
  EXPECT_EQ(tree("f(a, k=v, *xs)"),
            "Call\n  func:\n    Name f\n  args:\n    Name a\n    Starred\n      Name xs\n  Keyword "
            "k\n    Name v\n");
  EXPECT_EQ(tree("x.sum(dim=1)"),
            "Call\n  func:\n    Attribute sum\n      Name x\n  Keyword dim\n    Int 1\n");
  EXPECT_EQ(tree("f()"), "Call\n  func:\n    Name f\n");
  EXPECT_EQ(tree("f(a,)"), "Call\n  func:\n    Name f\n  args:\n    Name a\n");
  ast::Module m = parse_module(src("torch.nn.functional.relu(x)"));
  const auto& c = ast::as<ast::Call>(first_expr(m));
  const auto& a = ast::as<ast::Attribute>(*c.func);
  EXPECT_EQ(a.attr, "relu");
  EXPECT_EQ(a.attr_range.col, 20u);
  EXPECT_EQ(a.attr_range.end_col, 24u);
  EXPECT_EQ(c.range.col, 0u);
  EXPECT_EQ(c.range.end_col, 27u);
}

TEST(Parser, Subscripts) {
  EXPECT_EQ(tree("x[0]"), "Subscript\n  value:\n    Name x\n  indices:\n    Int 0\n");
  EXPECT_EQ(tree("x[-1]"),
            "Subscript\n  value:\n    Name x\n  indices:\n    Unary -\n      Int 1\n");
  EXPECT_EQ(tree("x[:, 1:3]"),
            "Subscript\n  value:\n    Name x\n  indices:\n    Slice\n    Slice\n      lower:\n     "
            "   Int 1\n"
            "      upper:\n        Int 3\n");
  EXPECT_EQ(tree("x[::2]"),
            "Subscript\n  value:\n    Name x\n  indices:\n    Slice\n      step:\n        Int 2\n");
  EXPECT_EQ(
      tree("x[1::]"),
      "Subscript\n  value:\n    Name x\n  indices:\n    Slice\n      lower:\n        Int 1\n");
  EXPECT_EQ(tree("x[:n:-1]"),
            "Subscript\n  value:\n    Name x\n  indices:\n    Slice\n      upper:\n        Name "
            "n\n      step:\n"
            "        Unary -\n          Int 1\n");
  EXPECT_EQ(tree("x[..., None]"),
            "Subscript\n  value:\n    Name x\n  indices:\n    Ellipsis\n    None\n");
  // x[a, b] has two indices; x[(a, b)] one, a tuple.
  ast::Module two = parse_module(src("x[a, b]"));
  EXPECT_EQ(ast::as<ast::Subscript>(first_expr(two)).indices.size(), 2u);
  ast::Module one = parse_module(src("x[(a, b)]"));
  const auto& s = ast::as<ast::Subscript>(first_expr(one));
  ASSERT_EQ(s.indices.size(), 1u);
  EXPECT_EQ(s.indices[0]->kind, ast::ExprKind::Tuple);
  EXPECT_EQ(tree("x[i][j]"),
            "Subscript\n  value:\n    Subscript\n      value:\n        Name x\n      indices:\n    "
            "    Name i\n"
            "  indices:\n    Name j\n");
}

TEST(Parser, ListsTuplesComprehensions) {
  EXPECT_EQ(tree("()"), "Tuple\n");
  EXPECT_EQ(tree("(a,)"), "Tuple\n  Name a\n");
  EXPECT_EQ(tree("(a)"), "Name a\n");
  EXPECT_EQ(tree("[]"), "List\n");
  EXPECT_EQ(tree("[a, b,]"), "List\n  Name a\n  Name b\n");
  EXPECT_EQ(tree("a, b"), "Tuple\n  Name a\n  Name b\n");
  EXPECT_EQ(tree("[f(v) for v in xs]"),
            "ListComp\n  elt:\n    Call\n      func:\n        Name f\n      args:\n        Name "
            "v\n  target:\n"
            "    Name v\n  iter:\n    Name xs\n");
  EXPECT_EQ(
      tree("[i * j for i, j in p if i > 0]"),
      "ListComp\n  elt:\n    Binary *\n      Name i\n      Name j\n  target:\n    Tuple\n      "
      "Name i\n"
      "      Name j\n  iter:\n    Name p\n  cond:\n    Compare >\n      Name i\n      Int 0\n");
  EXPECT_EQ(tree("[a if c else b for x in y]").substr(0, 26), "ListComp\n  elt:\n    IfExp\n");
}

TEST(Parser, NumericLiterals) {
  EXPECT_EQ(tree("42"), "Int 42\n");
  EXPECT_EQ(tree("0x2A"), "Int 42\n");
  EXPECT_EQ(tree("0o17"), "Int 15\n");
  EXPECT_EQ(tree("0b101"), "Int 5\n");
  EXPECT_EQ(tree("1_000"), "Int 1000\n");
  EXPECT_EQ(tree("0"), "Int 0\n");
  EXPECT_EQ(tree("00"), "Int 0\n");
  EXPECT_EQ(tree("9223372036854775807"), "Int 9223372036854775807\n");
  EXPECT_EQ(tree("-9223372036854775808"), "Int -9223372036854775808\n");
  EXPECT_EQ(tree("1.0"), "Float 1\n");
  EXPECT_EQ(tree(".5"), "Float 0.5\n");
  EXPECT_EQ(tree("1e-3"), "Float 0.001\n");
  EXPECT_EQ(tree("2."), "Float 2\n");
  EXPECT_EQ(tree("1_0.2_5E1_0"), "Float 1.025e+11\n");
  EXPECT_EQ(tree("1e400"), "Float inf\n");
  ast::Module m = parse_module(src("x = 3.25"));
  const auto& f = ast::as<ast::FloatLit>(*ast::as<ast::Assign>(first_stmt(m)).value);
  EXPECT_DOUBLE_EQ(f.value, 3.25);
  EXPECT_EQ(f.range.col, 4u);
  EXPECT_EQ(f.range.end_col, 8u);
}

TEST(Parser, ConstantsAndNames) {
  EXPECT_EQ(tree("True"), "Bool True\n");
  EXPECT_EQ(tree("False"), "Bool False\n");
  EXPECT_EQ(tree("None"), "None\n");
  EXPECT_EQ(tree("..."), "Ellipsis\n");
  EXPECT_EQ(tree("_x1"), "Name _x1\n");
  EXPECT_EQ(tree("größe"), "Name größe\n");
  EXPECT_EQ(tree("match"), "Name match\n");  // soft keywords are names
}

TEST(Parser, StringLiterals) {
  EXPECT_EQ(tree("'a'"), "Str \"a\"\n");
  EXPECT_EQ(tree("\"a\""), "Str \"a\"\n");
  EXPECT_EQ(tree(R"('\n\t\\\'\"\r\0')"), "Str \"\\n\\t\\\\'\\\"\\r\\x00\"\n");
  EXPECT_EQ(tree(R"('\x41\u00e9\U0001F600\101')"), "Str \"Aé😀A\"\n");
  EXPECT_EQ(tree(R"(r'\n\d')"), "Str \"\\\\n\\\\d\"\n");
  EXPECT_EQ(tree(R"('\d')"), "Str \"\\\\d\"\n");  // unknown escapes keep the backslash
  EXPECT_EQ(tree("'a' \"b\" '''c'''"), "Str \"abc\"\n");
  EXPECT_EQ(tree("('a'\n 'b')"), "Str \"ab\"\n");
  EXPECT_EQ(tree("'''x\ny'''"), "Str \"x\\ny\"\n");
  EXPECT_EQ(tree("\"\"\"it's \"quoted\" \"\"\""), "Str \"it's \\\"quoted\\\" \"\n");
  EXPECT_EQ(tree("'a\\\nb'"), "Str \"ab\"\n");
  EXPECT_EQ(tree("u'x'"), "Str \"x\"\n");
  EXPECT_EQ(tree("''"), "Str \"\"\n");
  // A multi-line string's range ends on its last line.
  ast::Module m = parse_module(src("x = '''a\nbc'''\n"));
  const SourceRange& r = ast::as<ast::Assign>(first_stmt(m)).value->range;
  EXPECT_EQ(r.line, 1u);
  EXPECT_EQ(r.end_line, 2u);
  EXPECT_EQ(r.end_col, 5u);
}

TEST(Parser, FStrings) {
  EXPECT_EQ(
      tree("f\"{x} {y:.3f} {z!r}\""),
      "FString\n  Field\n    Name x\n  Literal \" \"\n  Field :.3f\n    Name y\n  Literal \" \"\n"
      "  Field !r\n    Name z\n");
  EXPECT_EQ(tree("f'{{a}} {b!s:>10}'"),
            "FString\n  Literal \"{a} \"\n  Field !s :>10\n    Name b\n");
  EXPECT_EQ(tree("f'{a[1:2]} {f(x, y=2)}'").substr(0, 30), "FString\n  Field\n    Subscript\n");
  EXPECT_EQ(tree("'x=' f'{x}' '!'"),
            "FString\n  Literal \"x=\"\n  Field\n    Name x\n  Literal \"!\"\n");
  EXPECT_EQ(tree("f'{x=}'"), "FString\n  Literal \"x=\"\n  Field !r\n    Name x\n");
  EXPECT_EQ(tree("f'{a != b}'"), "FString\n  Field\n    Compare !=\n      Name a\n      Name b\n");
  EXPECT_EQ(tree("f'\\n{x}'"), "FString\n  Literal \"\\n\"\n  Field\n    Name x\n");
  EXPECT_EQ(tree("f'{ x + 1 }'"), "FString\n  Field\n    Binary +\n      Name x\n      Int 1\n");
  // Field expressions have ranges in the original source, also on later lines.
  ast::Module m = parse_module(src("s = f'ab{xy + 1}'\nt = f'''\n  {zz}'''\n"));
  const auto& f = ast::as<ast::FString>(*ast::as<ast::Assign>(*m.body[0]).value);
  ASSERT_EQ(f.parts.size(), 2u);
  const SourceRange& r = f.parts[1].expr->range;
  EXPECT_EQ(r.line, 1u);
  EXPECT_EQ(r.col, 9u);
  EXPECT_EQ(r.end_col, 15u);
  const auto& lhs = ast::as<ast::Binary>(*f.parts[1].expr).lhs;
  EXPECT_EQ(lhs->range.col, 9u);
  EXPECT_EQ(lhs->range.end_col, 11u);
  const auto& g = ast::as<ast::FString>(*ast::as<ast::Assign>(*m.body[1]).value);
  ASSERT_EQ(g.parts.size(), 2u);
  EXPECT_EQ(g.parts[1].expr->range.line, 3u);
  EXPECT_EQ(g.parts[1].expr->range.col, 3u);
}

TEST(Layout, IndentationWithCommentsAndBlankLines) {
  std::string code =
      "def f(x):\n"
      "\n"
      "        # a comment deeper than the block\n"
      "    y = x\n"
      "# a comment at column 0\n"
      "   \n"
      "    if y:\n"
      "      return y\n"
      "  # between\n"
      "    return x\n"
      "z = 1\n";
  EXPECT_EQ(
      dump(code),
      "  FunctionDef f @1:1\n    Param x @1:7\n    body:\n      Assign @4:5\n        targets:\n"
      "          Name y @4:5\n        value:\n          Name x @4:9\n      If @7:5\n        cond:\n"
      "          Name y @7:8\n        body:\n          Return @8:7\n            Name y @8:14\n"
      "      Return @10:5\n        Name x @10:12\n  Assign @11:1\n    targets:\n      Name z "
      "@11:1\n"
      "    value:\n      Int 1 @11:5\n");
}

// An indented blank or comment-only line before a line at column 0 (no whitespace
// token of its own) does not lend it its indentation.
TEST(Layout, IndentedBlankLineBeforeColumnZero) {
  for (const char* code : {"x = 1\n  \ny = 2\n", "x = 1\n  # c\ny = 2\n",
                           "if a:\n    x = 1\n    \ny = 2\n", "if a:\n    x = 1\n\t# c\ny = 2\n"}) {
    ast::Module m = parse_module(src(code));
    ASSERT_EQ(m.body.size(), 2u) << code;
    EXPECT_EQ(m.body[1]->kind, ast::StmtKind::Assign) << code;
    EXPECT_EQ(m.body[1]->range.col, 0u) << code;
  }
}

TEST(Layout, SeveralDedentsAtOnceAndAtEnd) {
  std::string code = "if a:\n  if b:\n    if c:\n      x = 1\ny = 2\nif d:\n  if e:\n    pass";
  ast::Module m = parse_module(src(code));
  ASSERT_EQ(m.body.size(), 3u);
  EXPECT_EQ(m.body[1]->kind, ast::StmtKind::Assign);
  EXPECT_EQ(m.body[2]->kind, ast::StmtKind::If);
}

TEST(Layout, TabsAreConsistentWithinABlock) {
  EXPECT_EQ(dump("if a:\n\tx = 1\n\tif b:\n\t\ty = 2\n").substr(0, 8), "  If @1:");
  // Tab then spaces consistently.
  EXPECT_NO_THROW(parse_module(src("if a:\n\t  x = 1\n\t  y = 2\n")));
}

TEST(Layout, LineEndsBomAndFinalNewline) {
  std::string expected =
      "  Assign @1:1\n    targets:\n      Name x @1:1\n    value:\n      Int 1 @1:5\n"
      "  If @2:1\n    cond:\n      Name x @2:4\n    body:\n      Pass @3:3\n";
  EXPECT_EQ(dump("x = 1\nif x:\n  pass\n"), expected);
  EXPECT_EQ(dump("x = 1\r\nif x:\r\n  pass\r\n"), expected);
  EXPECT_EQ(dump("x = 1\rif x:\r  pass\r"), expected);
  EXPECT_EQ(dump("\xEF\xBB\xBFx = 1\nif x:\n  pass"), expected);
  EXPECT_EQ(dump("x = 1\nif x:\n  pass   # no final newline"), expected);
}

TEST(Layout, LineJoining) {
  EXPECT_EQ(tree("f(a,\n      b)"), "Call\n  func:\n    Name f\n  args:\n    Name a\n    Name b\n");
  EXPECT_EQ(tree("[1,\n# comment\n\n 2]"), "List\n  Int 1\n  Int 2\n");
  EXPECT_EQ(dump("x = 1 + \\\n    2\n"),
            "  Assign @1:1\n    targets:\n      Name x @1:1\n    value:\n      Binary + @1:5\n     "
            "   Int 1 @1:5\n"
            "        Int 2 @2:5\n");
  EXPECT_EQ(dump("if a:\n  x = (1 +\n2)\n  y = 3\n").find("Assign @4:3") != std::string::npos,
            true);
  EXPECT_EQ(dump("x = 1; y = 2\n"),
            "  Assign @1:1\n    targets:\n      Name x @1:1\n    value:\n      Int 1 @1:5\n  "
            "Assign @1:8\n"
            "    targets:\n      Name y @1:8\n    value:\n      Int 2 @1:12\n");
}

TEST(Parser, ParseExpression) {
  ast::ExprPtr e = parse_expression(src("a + b"));
  EXPECT_EQ(e->kind, ast::ExprKind::Binary);
  EXPECT_EQ(parse_expression(src("a, b\n"))->kind, ast::ExprKind::Tuple);
  EXPECT_THROW(parse_expression(src("x = 1")), SourceError);
}

TEST(Parser, Performance300LineFunctionParses) {
  // Not a timing test: a long function with every common form parses to the right size.
  std::string code = "def big(x: Tensor, w: Tensor, n: int = 3) -> Tensor:\n";
  for (int i = 0; i < 300; ++i)
    code += "    x = torch.relu(x @ w + " + std::to_string(i) + ".5)[:, 1:3].sum(dim=1)\n";
  code += "    return x\n";
  ast::Module m = parse_module(src(code));
  EXPECT_EQ(ast::as<ast::FunctionDef>(first_stmt(m)).body.size(), 301u);
}

}  // namespace
}  // namespace tsl
