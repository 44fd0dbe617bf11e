// The abstract syntax tree: what the parser (frontend/parser.h) builds from the
// ANTLR parse tree and the checker/emitter (frontend/emitter.h) turns into IR. Every
// node carries the source range it came from.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/source.h"

namespace tsl::ast {

// ---- Expressions ------------------------------------------------------------------------

enum class ExprKind {
  Name,       // x
  Int,        // 42, 0x2A, 1_000
  Float,      // 1.0, .5, 1e-3, 2.
  Str,        // 'a', "a", """doc""" (adjacent literals already joined)
  FString,    // f"{x} {y:.3f}"
  Bool,       // True, False
  None,       // None
  Ellipsis,   // ... (in subscripts)
  List,       // [a, b]
  Dict,       // {k: v, ...}
  Tuple,      // (a, b), a, b
  ListComp,   // [elt for target in iter]
  DictComp,   // {key: value for target in iter}
  Unary,      // -x, +x, ~x, not x
  Binary,     // x + y, x @ y, ...
  BoolOp,     // x and y, x or y (short-circuit)
  Compare,    // a < b <= c (chains), is, is not, in, not in
  IfExp,      // a if c else b
  Call,       // f(a, k=v)
  Attribute,  // x.shape, torch.relu
  Subscript,  // x[0], x[:, 1:3], x[..., None]
  Slice,      // lower:upper:step, only inside Subscript
  Starred,    // *xs, only as a call argument
};

struct Expr {
  ExprKind kind;
  SourceRange range;
  explicit Expr(ExprKind k, SourceRange r) : kind(k), range(std::move(r)) {}
  virtual ~Expr() = default;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Name : Expr {
  std::string id;
  Name(SourceRange r, std::string id) : Expr(ExprKind::Name, std::move(r)), id(std::move(id)) {}
};

struct IntLit : Expr {
  int64_t value;
  IntLit(SourceRange r, int64_t v) : Expr(ExprKind::Int, std::move(r)), value(v) {}
};

struct FloatLit : Expr {
  double value;
  FloatLit(SourceRange r, double v) : Expr(ExprKind::Float, std::move(r)), value(v) {}
};

struct StrLit : Expr {
  std::string value;  // escapes already processed
  StrLit(SourceRange r, std::string v) : Expr(ExprKind::Str, std::move(r)), value(std::move(v)) {}
};

// f"text {expr:spec} more": literal pieces and replacement fields, in order.
struct FStringPart {
  std::string literal;      // used when expr is null
  ExprPtr expr;             // a replacement field
  std::string conversion;   // "", "r" or "s" (from !r / !s)
  std::string format_spec;  // ".3f", "" when absent
};
struct FString : Expr {
  std::vector<FStringPart> parts;
  explicit FString(SourceRange r) : Expr(ExprKind::FString, std::move(r)) {}
};

struct BoolLit : Expr {
  bool value;
  BoolLit(SourceRange r, bool v) : Expr(ExprKind::Bool, std::move(r)), value(v) {}
};

struct NoneLit : Expr {
  explicit NoneLit(SourceRange r) : Expr(ExprKind::None, std::move(r)) {}
};

struct EllipsisLit : Expr {
  explicit EllipsisLit(SourceRange r) : Expr(ExprKind::Ellipsis, std::move(r)) {}
};

struct ListExpr : Expr {
  std::vector<ExprPtr> elts;
  explicit ListExpr(SourceRange r) : Expr(ExprKind::List, std::move(r)) {}
};

// {k0: v0, k1: v1}: keys[i] maps to values[i], in the order written.
struct DictExpr : Expr {
  std::vector<ExprPtr> keys;
  std::vector<ExprPtr> values;
  explicit DictExpr(SourceRange r) : Expr(ExprKind::Dict, std::move(r)) {}
};

struct TupleExpr : Expr {
  std::vector<ExprPtr> elts;
  explicit TupleExpr(SourceRange r) : Expr(ExprKind::Tuple, std::move(r)) {}
};

// [elt for target in iter if cond]; one `for` clause, optional `if`.
struct ListComp : Expr {
  ExprPtr elt;
  ExprPtr target;  // a Name or a Tuple of Names
  ExprPtr iter;
  ExprPtr cond;  // may be null
  explicit ListComp(SourceRange r) : Expr(ExprKind::ListComp, std::move(r)) {}
};

struct DictComp : Expr {
  ExprPtr key;
  ExprPtr value;
  ExprPtr target;  // a Name or a Tuple of Names
  ExprPtr iter;
  ExprPtr cond;  // may be null
  explicit DictComp(SourceRange r) : Expr(ExprKind::DictComp, std::move(r)) {}
};

enum class UnaryOp { Neg, Pos, Invert, Not };
struct Unary : Expr {
  UnaryOp op;
  ExprPtr operand;
  Unary(SourceRange r, UnaryOp op, ExprPtr e)
      : Expr(ExprKind::Unary, std::move(r)), op(op), operand(std::move(e)) {}
};

enum class BinOp {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  MatMul,
  BitAnd,
  BitOr,
  BitXor,
  LShift,
  RShift
};
const char* binop_symbol(BinOp op);  // "+", "@", ...
struct Binary : Expr {
  BinOp op;
  ExprPtr lhs, rhs;
  Binary(SourceRange r, BinOp op, ExprPtr l, ExprPtr rr)
      : Expr(ExprKind::Binary, std::move(r)), op(op), lhs(std::move(l)), rhs(std::move(rr)) {}
};

enum class BoolOpKind { And, Or };
struct BoolOp : Expr {
  BoolOpKind op;
  ExprPtr lhs, rhs;  // `a and b and c` nests to the left
  BoolOp(SourceRange r, BoolOpKind op, ExprPtr l, ExprPtr rr)
      : Expr(ExprKind::BoolOp, std::move(r)), op(op), lhs(std::move(l)), rhs(std::move(rr)) {}
};

enum class CmpOp { Lt, Le, Gt, Ge, Eq, Ne, Is, IsNot, In, NotIn };
const char* cmpop_symbol(CmpOp op);
// a < b <= c: operands {a, b, c}, ops {Lt, Le}.
struct Compare : Expr {
  std::vector<ExprPtr> operands;
  std::vector<CmpOp> ops;
  explicit Compare(SourceRange r) : Expr(ExprKind::Compare, std::move(r)) {}
};

struct IfExp : Expr {
  ExprPtr cond, then_expr, else_expr;
  explicit IfExp(SourceRange r) : Expr(ExprKind::IfExp, std::move(r)) {}
};

struct Keyword {
  SourceRange range;  // of `name=value`
  std::string name;
  ExprPtr value;
};
struct Call : Expr {
  ExprPtr func;
  std::vector<ExprPtr> args;  // may contain Starred
  std::vector<Keyword> keywords;
  explicit Call(SourceRange r) : Expr(ExprKind::Call, std::move(r)) {}
};

struct Attribute : Expr {
  ExprPtr value;
  std::string attr;
  SourceRange attr_range;  // of the name after the dot
  Attribute(SourceRange r, ExprPtr v, std::string a, SourceRange ar)
      : Expr(ExprKind::Attribute, std::move(r)),
        value(std::move(v)),
        attr(std::move(a)),
        attr_range(std::move(ar)) {}
};

// x[i], x[a, b:c] (indices has one entry per comma-separated item).
struct Subscript : Expr {
  ExprPtr value;
  std::vector<ExprPtr> indices;  // expressions, Slice, Ellipsis, None
  explicit Subscript(SourceRange r) : Expr(ExprKind::Subscript, std::move(r)) {}
};

struct Slice : Expr {
  ExprPtr lower, upper, step;  // each may be null
  explicit Slice(SourceRange r) : Expr(ExprKind::Slice, std::move(r)) {}
};

struct Starred : Expr {
  ExprPtr value;
  Starred(SourceRange r, ExprPtr v) : Expr(ExprKind::Starred, std::move(r)), value(std::move(v)) {}
};

// ---- Statements ------------------------------------------------------------------------

enum class StmtKind {
  Expr,       // f(x)
  Assign,     // a = b = e; a, b = e
  AugAssign,  // x += e
  AnnAssign,  // x: int = 1
  If,         // if / elif / else (elif nests in orelse)
  While,
  For,
  Break,
  Continue,
  Return,
  Pass,
  Assert,
  Raise,  // raise Exception("message")
  With,   // with no_grad():
  FunctionDef,
  Import,      // import a.b as c
  ImportFrom,  // from a import b as c
};

struct Stmt {
  StmtKind kind;
  SourceRange range;  // the whole statement (for compound ones, the header line)
  explicit Stmt(StmtKind k, SourceRange r) : kind(k), range(std::move(r)) {}
  virtual ~Stmt() = default;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct ExprStmt : Stmt {
  ExprPtr value;
  ExprStmt(SourceRange r, ExprPtr v) : Stmt(StmtKind::Expr, std::move(r)), value(std::move(v)) {}
};

// targets = value; `a = b = 1` has two targets. A target is a Name, Tuple/List of
// targets, Attribute (x.grad = None) or Subscript (rejected by the checker).
struct Assign : Stmt {
  std::vector<ExprPtr> targets;
  ExprPtr value;
  explicit Assign(SourceRange r) : Stmt(StmtKind::Assign, std::move(r)) {}
};

struct AugAssign : Stmt {
  ExprPtr target;
  BinOp op;
  ExprPtr value;
  SourceRange op_range;
  explicit AugAssign(SourceRange r) : Stmt(StmtKind::AugAssign, std::move(r)) {}
};

struct AnnAssign : Stmt {
  ExprPtr target;
  ExprPtr annotation;
  ExprPtr value;  // may be null (`x: int`)
  explicit AnnAssign(SourceRange r) : Stmt(StmtKind::AnnAssign, std::move(r)) {}
};

struct If : Stmt {
  ExprPtr cond;
  Body body;
  Body orelse;  // `elif` becomes a single If here
  explicit If(SourceRange r) : Stmt(StmtKind::If, std::move(r)) {}
};

struct While : Stmt {
  ExprPtr cond;
  Body body;
  explicit While(SourceRange r) : Stmt(StmtKind::While, std::move(r)) {}
};

struct For : Stmt {
  ExprPtr target;  // Name or Tuple of Names
  ExprPtr iter;
  Body body;
  explicit For(SourceRange r) : Stmt(StmtKind::For, std::move(r)) {}
};

struct Break : Stmt {
  explicit Break(SourceRange r) : Stmt(StmtKind::Break, std::move(r)) {}
};
struct Continue : Stmt {
  explicit Continue(SourceRange r) : Stmt(StmtKind::Continue, std::move(r)) {}
};
struct Pass : Stmt {
  explicit Pass(SourceRange r) : Stmt(StmtKind::Pass, std::move(r)) {}
};

struct Return : Stmt {
  ExprPtr value;  // may be null
  explicit Return(SourceRange r) : Stmt(StmtKind::Return, std::move(r)) {}
};

struct Assert : Stmt {
  ExprPtr test;
  ExprPtr msg;  // may be null
  explicit Assert(SourceRange r) : Stmt(StmtKind::Assert, std::move(r)) {}
};

struct Raise : Stmt {
  ExprPtr exc;  // may be null (bare raise)
  explicit Raise(SourceRange r) : Stmt(StmtKind::Raise, std::move(r)) {}
};

struct WithItem {
  ExprPtr context;
  ExprPtr target;  // `as x`, may be null
};
struct With : Stmt {
  std::vector<WithItem> items;
  Body body;
  explicit With(SourceRange r) : Stmt(StmtKind::With, std::move(r)) {}
};

struct Param {
  SourceRange range;
  std::string name;
  ExprPtr annotation;     // may be null: Tensor
  ExprPtr default_value;  // may be null
};

struct FunctionDef : Stmt {
  std::string name;
  SourceRange name_range;
  std::vector<Param> params;
  ExprPtr returns;  // may be null: inferred
  Body body;
  std::vector<ExprPtr> decorators;
  explicit FunctionDef(SourceRange r) : Stmt(StmtKind::FunctionDef, std::move(r)) {}
};

struct ImportAlias {
  SourceRange range;
  std::string name;    // dotted: "torch.nn.functional"
  std::string asname;  // "" when absent
};

struct Import : Stmt {
  std::vector<ImportAlias> names;
  explicit Import(SourceRange r) : Stmt(StmtKind::Import, std::move(r)) {}
};

struct ImportFrom : Stmt {
  std::string module;              // dotted
  std::vector<ImportAlias> names;  // a single "*" for `from m import *`
  explicit ImportFrom(SourceRange r) : Stmt(StmtKind::ImportFrom, std::move(r)) {}
};

// A parsed source text.
struct Module {
  SourcePtr source;
  Body body;
};

// Downcast helper: `as<Call>(expr)`; checks the kind in debug builds.
template <typename T, typename B>
T& as(B& node) {
  return static_cast<T&>(node);
}
template <typename T, typename B>
const T& as(const B& node) {
  return static_cast<const T&>(node);
}

}  // namespace tsl::ast
