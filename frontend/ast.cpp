// Operator spellings and `dump_ast`, the readable tree that `tsl --dump=ast` prints:
// one node per line, indented by depth, each with `@line:col` (1-based column, as in
// error messages); child roles that are not obvious get a `role:` line of their own.
#include <charconv>

#include "frontend/ast.h"
#include "frontend/parser.h"

namespace tsl {
namespace ast {

const char* binop_symbol(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "+";
    case BinOp::Sub:
      return "-";
    case BinOp::Mul:
      return "*";
    case BinOp::Div:
      return "/";
    case BinOp::FloorDiv:
      return "//";
    case BinOp::Mod:
      return "%";
    case BinOp::Pow:
      return "**";
    case BinOp::MatMul:
      return "@";
    case BinOp::BitAnd:
      return "&";
    case BinOp::BitOr:
      return "|";
    case BinOp::BitXor:
      return "^";
    case BinOp::LShift:
      return "<<";
    case BinOp::RShift:
      return ">>";
  }
  return "?";
}

const char* cmpop_symbol(CmpOp op) {
  switch (op) {
    case CmpOp::Lt:
      return "<";
    case CmpOp::Le:
      return "<=";
    case CmpOp::Gt:
      return ">";
    case CmpOp::Ge:
      return ">=";
    case CmpOp::Eq:
      return "==";
    case CmpOp::Ne:
      return "!=";
    case CmpOp::Is:
      return "is";
    case CmpOp::IsNot:
      return "is not";
    case CmpOp::In:
      return "in";
    case CmpOp::NotIn:
      return "not in";
  }
  return "?";
}

}  // namespace ast

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string float_text(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  return std::string(buf, end);
}

class Dumper {
 public:
  std::string out;

  void body(const ast::Body& b, int indent) {
    for (const ast::StmtPtr& s : b) stmt(*s, indent);
  }

 private:
  void line(int indent, const std::string& label, const SourceRange* r = nullptr) {
    out.append(static_cast<size_t>(indent) * 2, ' ');
    out += label;
    if (r && r->valid()) out += " @" + std::to_string(r->line) + ":" + std::to_string(r->col + 1);
    out += '\n';
  }
  void role(int indent, const char* name, const ast::ExprPtr& e) {
    if (!e) return;
    line(indent, std::string(name) + ":");
    expr(*e, indent + 1);
  }
  void role(int indent, const char* name, const ast::Body& b) {
    if (b.empty()) return;
    line(indent, std::string(name) + ":");
    body(b, indent + 1);
  }
  void exprs(int indent, const std::vector<ast::ExprPtr>& es) {
    for (const ast::ExprPtr& e : es) expr(*e, indent);
  }

  void stmt(const ast::Stmt& s, int d) {
    using K = ast::StmtKind;
    const SourceRange* r = &s.range;
    switch (s.kind) {
      case K::Expr:
        line(d, "Expr", r);
        expr(*ast::as<ast::ExprStmt>(s).value, d + 1);
        break;
      case K::Assign: {
        const auto& a = ast::as<ast::Assign>(s);
        line(d, "Assign", r);
        line(d + 1, "targets:");
        exprs(d + 2, a.targets);
        role(d + 1, "value", a.value);
        break;
      }
      case K::AugAssign: {
        const auto& a = ast::as<ast::AugAssign>(s);
        line(d, std::string("AugAssign ") + ast::binop_symbol(a.op) + "=", r);
        role(d + 1, "target", a.target);
        role(d + 1, "value", a.value);
        break;
      }
      case K::AnnAssign: {
        const auto& a = ast::as<ast::AnnAssign>(s);
        line(d, "AnnAssign", r);
        role(d + 1, "target", a.target);
        role(d + 1, "annotation", a.annotation);
        role(d + 1, "value", a.value);
        break;
      }
      case K::If: {
        const auto& i = ast::as<ast::If>(s);
        line(d, "If", r);
        role(d + 1, "cond", i.cond);
        role(d + 1, "body", i.body);
        role(d + 1, "orelse", i.orelse);
        break;
      }
      case K::While: {
        const auto& w = ast::as<ast::While>(s);
        line(d, "While", r);
        role(d + 1, "cond", w.cond);
        role(d + 1, "body", w.body);
        break;
      }
      case K::For: {
        const auto& f = ast::as<ast::For>(s);
        line(d, "For", r);
        role(d + 1, "target", f.target);
        role(d + 1, "iter", f.iter);
        role(d + 1, "body", f.body);
        break;
      }
      case K::Break:
        line(d, "Break", r);
        break;
      case K::Continue:
        line(d, "Continue", r);
        break;
      case K::Pass:
        line(d, "Pass", r);
        break;
      case K::Return: {
        line(d, "Return", r);
        if (const auto& v = ast::as<ast::Return>(s).value) expr(*v, d + 1);
        break;
      }
      case K::Assert: {
        const auto& a = ast::as<ast::Assert>(s);
        line(d, "Assert", r);
        role(d + 1, "test", a.test);
        role(d + 1, "msg", a.msg);
        break;
      }
      case K::Raise: {
        line(d, "Raise", r);
        if (const auto& v = ast::as<ast::Raise>(s).exc) expr(*v, d + 1);
        break;
      }
      case K::With: {
        const auto& w = ast::as<ast::With>(s);
        line(d, "With", r);
        for (const ast::WithItem& item : w.items) {
          line(d + 1, "item:");
          expr(*item.context, d + 2);
          role(d + 2, "as", item.target);
        }
        role(d + 1, "body", w.body);
        break;
      }
      case K::FunctionDef:
        function(ast::as<ast::FunctionDef>(s), d);
        break;
      case K::Import: {
        line(d, "Import", r);
        for (const ast::ImportAlias& a : ast::as<ast::Import>(s).names) alias(a, d + 1);
        break;
      }
      case K::ImportFrom: {
        const auto& f = ast::as<ast::ImportFrom>(s);
        line(d, "ImportFrom " + f.module, r);
        for (const ast::ImportAlias& a : f.names) alias(a, d + 1);
        break;
      }
    }
  }

  void alias(const ast::ImportAlias& a, int d) {
    line(d, "Alias " + a.name + (a.asname.empty() ? "" : " as " + a.asname), &a.range);
  }

  void function(const ast::FunctionDef& f, int d) {
    line(d, "FunctionDef " + f.name, &f.range);
    if (!f.decorators.empty()) {
      line(d + 1, "decorators:");
      exprs(d + 2, f.decorators);
    }
    for (const ast::Param& p : f.params) {
      line(d + 1, "Param " + p.name, &p.range);
      role(d + 2, "annotation", p.annotation);
      role(d + 2, "default", p.default_value);
    }
    role(d + 1, "returns", f.returns);
    role(d + 1, "body", f.body);
  }

  void expr(const ast::Expr& e, int d) {
    using K = ast::ExprKind;
    const SourceRange* r = &e.range;
    switch (e.kind) {
      case K::Name:
        line(d, "Name " + ast::as<ast::Name>(e).id, r);
        break;
      case K::Int:
        line(d, "Int " + std::to_string(ast::as<ast::IntLit>(e).value), r);
        break;
      case K::Float:
        line(d, "Float " + float_text(ast::as<ast::FloatLit>(e).value), r);
        break;
      case K::Str:
        line(d, "Str " + quoted(ast::as<ast::StrLit>(e).value), r);
        break;
      case K::FString:
        fstring(ast::as<ast::FString>(e), d);
        break;
      case K::Bool:
        line(d, ast::as<ast::BoolLit>(e).value ? "Bool True" : "Bool False", r);
        break;
      case K::None:
        line(d, "None", r);
        break;
      case K::Ellipsis:
        line(d, "Ellipsis", r);
        break;
      case K::List:
        line(d, "List", r);
        exprs(d + 1, ast::as<ast::ListExpr>(e).elts);
        break;
      case K::Dict: {
        const auto& dict = ast::as<ast::DictExpr>(e);
        line(d, "Dict", r);
        for (size_t i = 0; i < dict.keys.size(); ++i) {
          role(d + 1, "key", dict.keys[i]);
          role(d + 1, "value", dict.values[i]);
        }
        break;
      }
      case K::Tuple:
        line(d, "Tuple", r);
        exprs(d + 1, ast::as<ast::TupleExpr>(e).elts);
        break;
      case K::ListComp: {
        const auto& c = ast::as<ast::ListComp>(e);
        line(d, "ListComp", r);
        role(d + 1, "elt", c.elt);
        role(d + 1, "target", c.target);
        role(d + 1, "iter", c.iter);
        role(d + 1, "cond", c.cond);
        break;
      }
      case K::DictComp: {
        const auto& c = ast::as<ast::DictComp>(e);
        line(d, "DictComp", r);
        role(d + 1, "key", c.key);
        role(d + 1, "value", c.value);
        role(d + 1, "target", c.target);
        role(d + 1, "iter", c.iter);
        role(d + 1, "cond", c.cond);
        break;
      }
      case K::Unary: {
        const auto& u = ast::as<ast::Unary>(e);
        static const char* kOps[] = {"-", "+", "~", "not"};
        line(d, std::string("Unary ") + kOps[static_cast<int>(u.op)], r);
        expr(*u.operand, d + 1);
        break;
      }
      case K::Binary: {
        const auto& b = ast::as<ast::Binary>(e);
        line(d, std::string("Binary ") + ast::binop_symbol(b.op), r);
        expr(*b.lhs, d + 1);
        expr(*b.rhs, d + 1);
        break;
      }
      case K::BoolOp: {
        const auto& b = ast::as<ast::BoolOp>(e);
        line(d, b.op == ast::BoolOpKind::And ? "BoolOp and" : "BoolOp or", r);
        expr(*b.lhs, d + 1);
        expr(*b.rhs, d + 1);
        break;
      }
      case K::Compare: {
        const auto& c = ast::as<ast::Compare>(e);
        std::string label = "Compare";
        for (ast::CmpOp op : c.ops) label += std::string(" ") + ast::cmpop_symbol(op);
        line(d, label, r);
        exprs(d + 1, c.operands);
        break;
      }
      case K::IfExp: {
        const auto& i = ast::as<ast::IfExp>(e);
        line(d, "IfExp", r);
        role(d + 1, "cond", i.cond);
        role(d + 1, "then", i.then_expr);
        role(d + 1, "else", i.else_expr);
        break;
      }
      case K::Call:
        call(ast::as<ast::Call>(e), d);
        break;
      case K::Attribute: {
        const auto& a = ast::as<ast::Attribute>(e);
        line(d, "Attribute " + a.attr, r);
        expr(*a.value, d + 1);
        break;
      }
      case K::Subscript: {
        const auto& s = ast::as<ast::Subscript>(e);
        line(d, "Subscript", r);
        role(d + 1, "value", s.value);
        line(d + 1, "indices:");
        exprs(d + 2, s.indices);
        break;
      }
      case K::Slice: {
        const auto& s = ast::as<ast::Slice>(e);
        line(d, "Slice", r);
        role(d + 1, "lower", s.lower);
        role(d + 1, "upper", s.upper);
        role(d + 1, "step", s.step);
        break;
      }
      case K::Starred:
        line(d, "Starred", r);
        expr(*ast::as<ast::Starred>(e).value, d + 1);
        break;
    }
  }

  void call(const ast::Call& c, int d) {
    line(d, "Call", &c.range);
    role(d + 1, "func", c.func);
    if (!c.args.empty()) {
      line(d + 1, "args:");
      exprs(d + 2, c.args);
    }
    for (const ast::Keyword& k : c.keywords) {
      line(d + 1, "Keyword " + k.name, &k.range);
      expr(*k.value, d + 2);
    }
  }

  void fstring(const ast::FString& f, int d) {
    line(d, "FString", &f.range);
    for (const ast::FStringPart& p : f.parts) {
      if (!p.expr) {
        line(d + 1, "Literal " + quoted(p.literal));
        continue;
      }
      std::string label = "Field";
      if (!p.conversion.empty()) label += " !" + p.conversion;
      if (!p.format_spec.empty()) label += " :" + p.format_spec;
      line(d + 1, label);
      expr(*p.expr, d + 2);
    }
  }
};

}  // namespace

std::string dump_ast(const ast::Module& m) {
  Dumper d;
  d.out = "Module" + (m.source ? " " + m.source->name() : std::string()) + "\n";
  d.body(m.body, 1);
  return d.out;
}

}  // namespace tsl
