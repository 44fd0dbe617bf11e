// The parser's ASTs with every field and source range, against goldens of tricky
// constructs and invalid code (parser_ast_golden.txt); and the SLL-only parse of every
// valid program of the repository (Note [One parser] in frontend/parser.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/ast_builder.h"
#include "frontend/parser.h"
#include "tests/common/repository_files.h"

namespace tsl {
namespace {

// ---- A dump of every field of the AST, ranges included -------------------------------

std::string where(const SourceRange& r) {
  return std::to_string(r.line) + ":" + std::to_string(r.col) + "-" + std::to_string(r.end_line) +
         ":" + std::to_string(r.end_col);
}

const char* unary_name(ast::UnaryOp op) {
  switch (op) {
    case ast::UnaryOp::Neg:
      return "-";
    case ast::UnaryOp::Pos:
      return "+";
    case ast::UnaryOp::Invert:
      return "~";
    case ast::UnaryOp::Not:
      return "not";
  }
  return "?";
}

class Dumper {
 public:
  std::string out;

  void body(const ast::Body& b, int indent) {
    for (const ast::StmtPtr& s : b) stmt(*s, indent);
  }

 private:
  void line(int indent, const std::string& text) {
    out += std::string(static_cast<size_t>(indent) * 2, ' ') + text + "\n";
  }

  void opt(const ast::ExprPtr& e, int indent, const char* label) {
    line(indent, label);
    if (e) expr(*e, indent + 1);
  }

  void exprs(const std::vector<ast::ExprPtr>& es, int indent) {
    for (const ast::ExprPtr& e : es) expr(*e, indent);
  }

  void comprehension(const ast::Expr& target, const ast::Expr& iter, const ast::ExprPtr& cond,
                     int in) {
    line(in, "target");
    expr(target, in + 1);
    line(in, "iter");
    expr(iter, in + 1);
    opt(cond, in, "cond");
  }

  void expr(const ast::Expr& e, int in) {
    std::string at = " " + where(e.range);
    switch (e.kind) {
      case ast::ExprKind::Name:
        return line(in, "Name" + at + " " + ast::as<ast::Name>(e).id);
      case ast::ExprKind::Int:
        return line(in, "Int" + at + " " + std::to_string(ast::as<ast::IntLit>(e).value));
      case ast::ExprKind::Float: {
        std::ostringstream s;
        s.precision(17);
        s << ast::as<ast::FloatLit>(e).value;
        return line(in, "Float" + at + " " + s.str());
      }
      case ast::ExprKind::Str:
        return line(in, "Str" + at + " '" + ast::as<ast::StrLit>(e).value + "'");
      case ast::ExprKind::FString:
        line(in, "FString" + at);
        for (const ast::FStringPart& p : ast::as<ast::FString>(e).parts) {
          line(in + 1, "part '" + p.literal + "' !" + p.conversion + " :" + p.format_spec);
          if (p.expr) expr(*p.expr, in + 2);
        }
        return;
      case ast::ExprKind::Bool:
        return line(in, "Bool" + at + (ast::as<ast::BoolLit>(e).value ? " True" : " False"));
      case ast::ExprKind::None:
        return line(in, "None" + at);
      case ast::ExprKind::Ellipsis:
        return line(in, "Ellipsis" + at);
      case ast::ExprKind::List:
        line(in, "List" + at);
        return exprs(ast::as<ast::ListExpr>(e).elts, in + 1);
      case ast::ExprKind::Tuple:
        line(in, "Tuple" + at);
        return exprs(ast::as<ast::TupleExpr>(e).elts, in + 1);
      case ast::ExprKind::Dict:
        line(in, "Dict" + at);
        exprs(ast::as<ast::DictExpr>(e).keys, in + 1);
        return exprs(ast::as<ast::DictExpr>(e).values, in + 1);
      case ast::ExprKind::ListComp: {
        const auto& c = ast::as<ast::ListComp>(e);
        line(in, "ListComp" + at);
        opt(c.elt, in + 1, "elt");
        return comprehension(*c.target, *c.iter, c.cond, in + 1);
      }
      case ast::ExprKind::DictComp: {
        const auto& c = ast::as<ast::DictComp>(e);
        line(in, "DictComp" + at);
        opt(c.key, in + 1, "key");
        opt(c.value, in + 1, "value");
        return comprehension(*c.target, *c.iter, c.cond, in + 1);
      }
      case ast::ExprKind::Unary: {
        const auto& u = ast::as<ast::Unary>(e);
        line(in, "Unary" + at + " " + unary_name(u.op));
        return expr(*u.operand, in + 1);
      }
      case ast::ExprKind::Binary: {
        const auto& b = ast::as<ast::Binary>(e);
        line(in, "Binary" + at + " " + ast::binop_symbol(b.op));
        expr(*b.lhs, in + 1);
        return expr(*b.rhs, in + 1);
      }
      case ast::ExprKind::BoolOp: {
        const auto& b = ast::as<ast::BoolOp>(e);
        line(in, "BoolOp" + at + (b.op == ast::BoolOpKind::And ? " and" : " or"));
        expr(*b.lhs, in + 1);
        return expr(*b.rhs, in + 1);
      }
      case ast::ExprKind::Compare: {
        const auto& c = ast::as<ast::Compare>(e);
        std::string ops;
        for (ast::CmpOp op : c.ops) ops += std::string(" ") + ast::cmpop_symbol(op);
        line(in, "Compare" + at + ops);
        return exprs(c.operands, in + 1);
      }
      case ast::ExprKind::IfExp: {
        const auto& c = ast::as<ast::IfExp>(e);
        line(in, "IfExp" + at);
        opt(c.cond, in + 1, "cond");
        opt(c.then_expr, in + 1, "then");
        return opt(c.else_expr, in + 1, "else");
      }
      case ast::ExprKind::Call: {
        const auto& c = ast::as<ast::Call>(e);
        line(in, "Call" + at);
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
        line(in, "Attribute" + at + " ." + a.attr + " " + where(a.attr_range));
        return expr(*a.value, in + 1);
      }
      case ast::ExprKind::Subscript: {
        const auto& s = ast::as<ast::Subscript>(e);
        line(in, "Subscript" + at);
        expr(*s.value, in + 1);
        return exprs(s.indices, in + 1);
      }
      case ast::ExprKind::Slice: {
        const auto& s = ast::as<ast::Slice>(e);
        line(in, "Slice" + at);
        opt(s.lower, in + 1, "lower");
        opt(s.upper, in + 1, "upper");
        return opt(s.step, in + 1, "step");
      }
      case ast::ExprKind::Starred:
        line(in, "Starred" + at);
        return expr(*ast::as<ast::Starred>(e).value, in + 1);
    }
  }

  void aliases(const std::vector<ast::ImportAlias>& names, int in) {
    for (const ast::ImportAlias& a : names)
      line(in, a.name + " as " + a.asname + " " + where(a.range));
  }

  void stmt(const ast::Stmt& s, int in) {
    std::string at = " " + where(s.range);
    switch (s.kind) {
      case ast::StmtKind::Expr:
        line(in, "Expr" + at);
        return expr(*ast::as<ast::ExprStmt>(s).value, in + 1);
      case ast::StmtKind::Assign:
        line(in, "Assign" + at);
        exprs(ast::as<ast::Assign>(s).targets, in + 1);
        return opt(ast::as<ast::Assign>(s).value, in + 1, "value");
      case ast::StmtKind::AugAssign: {
        const auto& a = ast::as<ast::AugAssign>(s);
        line(in, "AugAssign" + at + " " + ast::binop_symbol(a.op) + "= " + where(a.op_range));
        expr(*a.target, in + 1);
        return expr(*a.value, in + 1);
      }
      case ast::StmtKind::AnnAssign: {
        const auto& a = ast::as<ast::AnnAssign>(s);
        line(in, "AnnAssign" + at);
        opt(a.target, in + 1, "target");
        opt(a.annotation, in + 1, "annotation");
        return opt(a.value, in + 1, "value");
      }
      case ast::StmtKind::If: {
        const auto& i = ast::as<ast::If>(s);
        line(in, "If" + at);
        expr(*i.cond, in + 1);
        body(i.body, in + 1);
        line(in + 1, "else");
        return body(i.orelse, in + 2);
      }
      case ast::StmtKind::While:
        line(in, "While" + at);
        expr(*ast::as<ast::While>(s).cond, in + 1);
        return body(ast::as<ast::While>(s).body, in + 1);
      case ast::StmtKind::For: {
        const auto& f = ast::as<ast::For>(s);
        line(in, "For" + at);
        expr(*f.target, in + 1);
        expr(*f.iter, in + 1);
        return body(f.body, in + 1);
      }
      case ast::StmtKind::Break:
        return line(in, "Break" + at);
      case ast::StmtKind::Continue:
        return line(in, "Continue" + at);
      case ast::StmtKind::Pass:
        return line(in, "Pass" + at);
      case ast::StmtKind::Return:
        line(in, "Return" + at);
        return opt(ast::as<ast::Return>(s).value, in + 1, "value");
      case ast::StmtKind::Assert:
        line(in, "Assert" + at);
        opt(ast::as<ast::Assert>(s).test, in + 1, "test");
        return opt(ast::as<ast::Assert>(s).msg, in + 1, "msg");
      case ast::StmtKind::Raise:
        line(in, "Raise" + at);
        return opt(ast::as<ast::Raise>(s).exc, in + 1, "exc");
      case ast::StmtKind::With:
        line(in, "With" + at);
        for (const ast::WithItem& w : ast::as<ast::With>(s).items) {
          opt(w.context, in + 1, "context");
          opt(w.target, in + 1, "as");
        }
        return body(ast::as<ast::With>(s).body, in + 1);
      case ast::StmtKind::FunctionDef: {
        const auto& f = ast::as<ast::FunctionDef>(s);
        line(in, "FunctionDef" + at + " " + f.name + " " + where(f.name_range));
        exprs(f.decorators, in + 1);
        for (const ast::Param& p : f.params) {
          line(in + 1, "param " + p.name + " " + where(p.range));
          opt(p.annotation, in + 2, "annotation");
          opt(p.default_value, in + 2, "default");
        }
        opt(f.returns, in + 1, "returns");
        return body(f.body, in + 1);
      }
      case ast::StmtKind::Import:
        line(in, "Import" + at);
        return aliases(ast::as<ast::Import>(s).names, in + 1);
      case ast::StmtKind::ImportFrom:
        line(in, "ImportFrom" + at + " " + ast::as<ast::ImportFrom>(s).module);
        return aliases(ast::as<ast::ImportFrom>(s).names, in + 1);
    }
  }
};

// parse_module's AST dump, or "error L:C-L:C: message".
std::string result_of(const std::string& code) {
  try {
    Dumper d;
    d.body(parse_module(std::make_shared<Source>("t.tsl", code)).body, 0);
    return d.out;
  } catch (const SourceError& e) {
    return "error " + where(e.range()) + ": " + e.message() + "\n";
  }
}

// ---- The golden file -----------------------------------------------------------------

struct GoldenCase {
  std::string name, code, expected;
};

std::filesystem::path golden_path() {
  const char* root = std::getenv("TSL_SOURCE_DIR");
  return std::filesystem::path(root ? root : TSL_SOURCE_DIR) / "tests/frontend" /
         "parser_ast_golden.txt";
}

// The file's comment header and its cases (format in the header).
std::vector<GoldenCase> read_goldens(std::string* header) {
  std::ifstream in(golden_path(), std::ios::binary);
  std::vector<GoldenCase> cases;
  bool in_code = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("=== ")) {
      cases.push_back({line.substr(4), "", ""});
      in_code = true;
    } else if (cases.empty()) {
      *header += line + "\n";
    } else if (in_code && line == "---") {
      in_code = false;
    } else if (in_code && line == "\\ no newline at end") {
      cases.back().code.pop_back();
    } else if (in_code) {
      cases.back().code += line.substr(std::min<size_t>(2, line.size())) + "\n";
    } else {
      cases.back().expected += line + "\n";
    }
  }
  return cases;
}

// The code in the golden format: each line after "| ".
std::string quoted(const std::string& code) {
  std::string out;
  std::istringstream lines(code);
  for (std::string line; std::getline(lines, line);) out += "| " + line + "\n";
  if (!code.empty() && code.back() != '\n') out += "\\ no newline at end\n";
  return out;
}

// With TSL_WRITE_PARSER_GOLDEN=PATH, writes the results to PATH in the golden format
// instead of comparing (for a deliberate change of the AST; review the diff).
TEST(ParserAst, TrickyConstructsAndErrorsMatchTheGoldens) {
  std::string header;
  std::vector<GoldenCase> cases = read_goldens(&header);
  ASSERT_GT(cases.size(), 100u) << golden_path();
  const char* write_to = std::getenv("TSL_WRITE_PARSER_GOLDEN");
  std::string written = header;
  for (const GoldenCase& c : cases) {
    std::string actual = result_of(c.code);
    if (write_to) {
      written += "=== " + c.name + "\n" + quoted(c.code) + "---\n" + actual;
    } else {
      EXPECT_EQ(actual, c.expected) << c.name << ":\n" << c.code;
    }
  }
  if (write_to) std::ofstream(write_to, std::ios::binary) << written;
}

// ---- SLL prediction --------------------------------------------------------------------

// Whether parsing `code` needed full LL prediction, and whether it threw.
struct ParseOutcome {
  bool full_ll = false;
  bool error = false;
};
ParseOutcome parse_outcome(const std::string& path, const std::string& code) {
  size_t before = parse_detail::full_ll_parses();
  ParseOutcome o;
  try {
    parse_module(std::make_shared<Source>(path, code));
  } catch (const SourceError&) {
    o.error = true;
  }
  o.full_ll = parse_detail::full_ll_parses() != before;
  return o;
}

// The grammar lets SLL prediction parse every valid program: full LL runs only on a
// syntax error. Every repository program and golden case.
TEST(ParserAst, SllParsesEveryValidProgram) {
  std::vector<std::pair<std::string, std::string>> programs = repository_tsl_files();
  std::string header;
  for (GoldenCase& c : read_goldens(&header)) programs.emplace_back(c.name, c.code);
  size_t valid = 0, with_syntax_error = 0;
  for (const auto& [path, code] : programs) {
    ParseOutcome o = parse_outcome(path, code);
    if (!o.error) {
      ++valid;
      EXPECT_FALSE(o.full_ll) << path << " needed full LL prediction";
    }
    with_syntax_error += o.full_ll;
  }
  EXPECT_GT(valid, 300u);
  // A syntax error is reported by the full LL parse (so the counter counts).
  EXPECT_GT(with_syntax_error, 20u);
  EXPECT_TRUE(parse_outcome("bad.tsl", "x = (1 2)\n").full_ll);
}

}  // namespace
}  // namespace tsl
