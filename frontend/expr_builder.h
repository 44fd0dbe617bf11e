// Internal to the AST builder: the parts of the expression builder, ExprBuilder::Impl,
// shared by expr_builder.cpp (operators, `power`, calls, subscripts) and
// display_builder.cpp (atoms, displays, comprehensions).
#pragma once

#include <vector>

#include "frontend/ast_builder.h"

namespace tsl::parse_detail {

using antlr4::ParserRuleContext;
using antlr4::Token;
using antlr4::tree::ParseTree;
using antlr4::tree::TerminalNode;
using P = grammar::TSLParser;

// An expression and the depth of its tree: a leaf is 1, a node one more than its
// deepest child (Note [One parser]: the builder bounds it by kMaxExpressionDepth).
struct Built {
  ast::ExprPtr e;
  uint32_t depth = 1;
};

struct ExprBuilder::Impl {
  explicit Impl(SourcePtr source) : source_(std::move(source)) {}

  SourcePtr source_;
  // The left spines of the binary expressions being built (operator_expr).
  std::vector<ParserRuleContext*> spine_;

  SourceRange range(ParseTree* c) const { return node_range(source_, c, c); }
  SourceRange range(Token* a, Token* b) const { return token_range(source_, a, b); }
  SourceRange range(ParseTree* a, ParseTree* b) const { return node_range(source_, a, b); }

  // A new composite node whose deepest child is `child_depth` deep.
  static Built composite(ast::ExprPtr e, uint32_t child_depth) {
    uint32_t d = 1 + child_depth;
    if (d > kMaxExpressionDepth) {
      compile_error(e->range, "expression too complex: nested more than " +
                                  std::to_string(kMaxExpressionDepth) + " levels deep");
    }
    return {std::move(e), d};
  }

  // A target of `=`, `for` or `as`: names, attributes, subscripts, tuples/lists of them.
  void check_target(const ast::Expr& e);

  // expr_builder.cpp
  Built expr(ParserRuleContext* ctx);
  Built conditional(ParserRuleContext* ctx);
  Built unary(ParserRuleContext* ctx, ast::UnaryOp op);
  Built operator_expr(ParserRuleContext* ctx);
  Built compare(ParserRuleContext* node, Built lhs, bool open, Built rhs, ParserRuleContext* op);
  void reject_not_operand(ParseTree* op, ParserRuleContext* operand);
  static ast::CmpOp compare_op(ParserRuleContext* c);
  Built factor(ParserRuleContext* ctx);
  Built tuple(ParserRuleContext* ctx);
  Built power(ParserRuleContext* ctx);
  Built call(const SourceRange& r, Built func, ParserRuleContext* args);
  Built subscript(const SourceRange& r, Built value, ParserRuleContext* list);
  Built slice(ParserRuleContext* ctx);

  // display_builder.cpp
  Built atom(ParserRuleContext* power, size_t& i);
  static ParserRuleContext* comprehension_of(ParserRuleContext* tc);
  std::vector<Built> elements(ParserRuleContext* tc);
  template <typename Display>
  Built display(const SourceRange& r, std::vector<Built> elts);
  Built parenthesized(const SourceRange& r, ParserRuleContext* tc);
  Built bracketed(const SourceRange& r, ParserRuleContext* tc);
  Built braced(const SourceRange& r, ParserRuleContext* dm);
  static bool has_colon(ParserRuleContext* dm);
  template <typename Comprehension>
  void clauses(ParserRuleContext* cf, const char* kind, Comprehension& c, uint32_t& d);
  Built dict_comprehension(const SourceRange& r, ParserRuleContext* key, ParserRuleContext* value,
                           ParserRuleContext* cf);
  Built list_comprehension(const SourceRange& r, ParserRuleContext* elt, ParserRuleContext* cf);
};

}  // namespace tsl::parse_detail
