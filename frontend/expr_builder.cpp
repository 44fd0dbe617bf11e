// Builds AST expressions from the expression rules of the ANTLR parse tree: the
// precedence-climbing `expr` rule, unary operators, `power` (an atom, its trailers —
// calls, subscripts, attributes — and an exponent), each node with its source range
// and a bound on the depth of the tree. Atoms and displays: display_builder.cpp.
#include <algorithm>

#include "frontend/expr_builder.h"

namespace tsl::parse_detail {

ast::BinOp binop_of_token(size_t type) {
  switch (type) {
    case P::ADD:
    case P::ADD_ASSIGN:
      return ast::BinOp::Add;
    case P::MINUS:
    case P::SUB_ASSIGN:
      return ast::BinOp::Sub;
    case P::STAR:
    case P::MULT_ASSIGN:
      return ast::BinOp::Mul;
    case P::DIV:
    case P::DIV_ASSIGN:
      return ast::BinOp::Div;
    case P::IDIV:
    case P::IDIV_ASSIGN:
      return ast::BinOp::FloorDiv;
    case P::MOD:
    case P::MOD_ASSIGN:
      return ast::BinOp::Mod;
    case P::POWER:
    case P::POWER_ASSIGN:
      return ast::BinOp::Pow;
    case P::AT:
    case P::AT_ASSIGN:
      return ast::BinOp::MatMul;
    case P::AND_OP:
    case P::AND_ASSIGN:
      return ast::BinOp::BitAnd;
    case P::OR_OP:
    case P::OR_ASSIGN:
      return ast::BinOp::BitOr;
    case P::XOR:
    case P::XOR_ASSIGN:
      return ast::BinOp::BitXor;
    case P::LEFT_SHIFT:
    case P::LEFT_SHIFT_ASSIGN:
      return ast::BinOp::LShift;
    default:
      return ast::BinOp::RShift;
  }
}

// What CPython calls an expression in "cannot assign to ...".
const char* describe_for_assignment(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::Int:
    case ast::ExprKind::Float:
    case ast::ExprKind::Str:
      return "literal";
    case ast::ExprKind::FString:
      return "f-string expression";
    case ast::ExprKind::Bool:
      return ast::as<ast::BoolLit>(e).value ? "True" : "False";
    case ast::ExprKind::None:
      return "None";
    case ast::ExprKind::Ellipsis:
      return "ellipsis";
    case ast::ExprKind::Call:
      return "function call";
    case ast::ExprKind::Compare:
      return "comparison";
    case ast::ExprKind::IfExp:
      return "conditional expression";
    case ast::ExprKind::ListComp:
      return "list comprehension";
    case ast::ExprKind::DictComp:
      return "dict comprehension";
    case ast::ExprKind::Dict:
      return "dict literal";
    case ast::ExprKind::Starred:
      return "starred";
    default:
      return "expression";
  }
}

SourceRange node_range(const SourcePtr& source, ParseTree* a, ParseTree* b) {
  Token* first = is_token(a) ? terminal(a)->getSymbol() : rule(a)->getStart();
  Token* last = is_token(b) ? terminal(b)->getSymbol() : rule(b)->getStop();
  return token_range(source, first, last);
}

void ExprBuilder::Impl::check_target(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::Name:
    case ast::ExprKind::Attribute:
    case ast::ExprKind::Subscript:
      return;
    case ast::ExprKind::Tuple:
      for (const ast::ExprPtr& x : ast::as<ast::TupleExpr>(e).elts) check_target(*x);
      return;
    case ast::ExprKind::List:
      for (const ast::ExprPtr& x : ast::as<ast::ListExpr>(e).elts) check_target(*x);
      return;
    default:
      compile_error(e.range, std::string("cannot assign to ") + describe_for_assignment(e));
  }
}

// ---- Expressions --------------------------------------------------------------------------

// Any expression rule. An operand is wrapped in single-child rules (test -> expr ->
// power); those are skipped in a loop, so recursion follows the real nesting of the
// expression.
Built ExprBuilder::Impl::expr(ParserRuleContext* ctx) {
  check_stack(source_, ctx->getStart());
  while (ctx->children.size() == 1 && !is_token(ctx->children[0])) {
    ctx = rule(ctx->children[0]);
  }
  switch (ctx->getRuleIndex()) {
    case P::RuleTest:
      return conditional(ctx);
    case P::RuleExpr:
      return operator_expr(ctx);
    case P::RuleFactor:
      return factor(ctx);
    case P::RulePower:
      return power(ctx);
    case P::RuleTestlist:
    case P::RuleExprlist:
      return tuple(ctx);
    default:
      TSL_INTERNAL_ASSERT(false,
                          "unexpected parse tree rule " + std::to_string(ctx->getRuleIndex()));
      return {};
  }
}

// test : expr ( IF expr ELSE test )? ;
Built ExprBuilder::Impl::conditional(ParserRuleContext* ctx) {
  auto e = std::make_unique<ast::IfExp>(range(ctx));
  Built then_expr = expr(rule(ctx->children[0]));
  Built cond = expr(rule(ctx->children[2]));
  Built else_expr = expr(rule(ctx->children[4]));
  uint32_t d = std::max({then_expr.depth, cond.depth, else_expr.depth});
  e->then_expr = std::move(then_expr.e);
  e->cond = std::move(cond.e);
  e->else_expr = std::move(else_expr.e);
  return composite(std::move(e), d);
}

// expr : NOT expr ;   expr, factor : ( ADD | MINUS | NOT_OP ) factor ;
Built ExprBuilder::Impl::unary(ParserRuleContext* ctx, ast::UnaryOp op) {
  Built operand = expr(rule(ctx->children[1]));
  return composite(std::make_unique<ast::Unary>(range(ctx), op, std::move(operand.e)),
                   operand.depth);
}

// expr : power | ( ADD | MINUS | NOT_OP ) factor | expr OP expr | expr comp_op expr
//      | NOT expr | expr AND expr | expr OR expr ;
// ANTLR nests `a - b - c` to the left: ((a - b) - c). The left spine is walked in a
// loop, so long chains do not recurse; `a < b <= c` (not parenthesized) becomes one
// Compare with three operands.
Built ExprBuilder::Impl::operator_expr(ParserRuleContext* ctx) {
  if (ctx->children.size() == 2) {
    return token_type(ctx->children[0]) == P::NOT ? unary(ctx, ast::UnaryOp::Not) : factor(ctx);
  }
  // The spine is this call's part of spine_, from `base` on (the operands' calls use
  // the part after it, and give it back).
  size_t base = spine_.size();
  for (ParserRuleContext* node = ctx;;) {
    spine_.push_back(node);
    node = rule(node->children[0]);
    if (node->getRuleIndex() != P::RuleExpr || node->children.size() != 3) break;
  }
  Built lhs = expr(rule(spine_.back()->children[0]));
  bool open_compare = false;  // lhs is a Compare this chain is still extending
  for (size_t i = spine_.size(); i-- > base;) {
    ParserRuleContext* node = spine_[i];
    ParseTree* op = node->children[1];
    reject_not_operand(op, rule(node->children[2]));
    Built rhs = expr(rule(node->children[2]));
    if (!is_token(op)) {
      lhs = compare(node, std::move(lhs), open_compare, std::move(rhs), rule(op));
      open_compare = true;
      continue;
    }
    open_compare = false;
    size_t type = token_type(op);
    uint32_t d = std::max(lhs.depth, rhs.depth);
    if (type == P::AND || type == P::OR) {
      ast::BoolOpKind k = type == P::AND ? ast::BoolOpKind::And : ast::BoolOpKind::Or;
      lhs = composite(
          std::make_unique<ast::BoolOp>(range(node), k, std::move(lhs.e), std::move(rhs.e)), d);
    } else {
      lhs = composite(std::make_unique<ast::Binary>(range(node), binop_of_token(type),
                                                    std::move(lhs.e), std::move(rhs.e)),
                      d);
    }
  }
  spine_.resize(base);
  return lhs;
}

// `a == not b`, `a * not b`: the grammar's `NOT expr` alternative may stand right of any
// binary operator, but Python's grammar has `not` bind looser than comparisons and
// arithmetic, so only `and`/`or` may take it unparenthesized (CPython: invalid syntax,
// at the `not`).
void ExprBuilder::Impl::reject_not_operand(ParseTree* op, ParserRuleContext* operand) {
  if (is_token(op) && (token_type(op) == P::AND || token_type(op) == P::OR)) return;
  if (operand->children.size() == 2 && token_type(operand->children[0]) == P::NOT)
    compile_error(range(operand->children[0]), "invalid syntax");
}

// One comparison of a chain: a new Compare, or `lhs` (the Compare of the comparison
// before, `open`) extended. Extending keeps it flat: its depth is that of its deepest
// operand.
Built ExprBuilder::Impl::compare(ParserRuleContext* node, Built lhs, bool open, Built rhs,
                                 ParserRuleContext* op) {
  uint32_t d0 = open ? lhs.depth - 1 : lhs.depth;
  if (!open) {
    auto c = std::make_unique<ast::Compare>(range(node));
    c->operands.push_back(std::move(lhs.e));
    lhs.e = std::move(c);
  }
  auto& c = ast::as<ast::Compare>(*lhs.e);
  c.range = range(node);
  c.ops.push_back(compare_op(op));
  c.operands.push_back(std::move(rhs.e));
  return composite(std::move(lhs.e), std::max(d0, rhs.depth));
}

// comp_op : LESS_THAN | GREATER_THAN | EQUALS | GT_EQ | LT_EQ | NOT_EQ | IN | NOT IN | IS NOT? ;
ast::CmpOp ExprBuilder::Impl::compare_op(ParserRuleContext* c) {
  switch (c->getStart()->getType()) {
    case P::LESS_THAN:
      return ast::CmpOp::Lt;
    case P::GREATER_THAN:
      return ast::CmpOp::Gt;
    case P::EQUALS:
      return ast::CmpOp::Eq;
    case P::GT_EQ:
      return ast::CmpOp::Ge;
    case P::LT_EQ:
      return ast::CmpOp::Le;
    case P::NOT_EQ:
      return ast::CmpOp::Ne;
    case P::IN:
      return ast::CmpOp::In;
    case P::NOT:
      return ast::CmpOp::NotIn;
    default:
      return c->children.size() == 2 ? ast::CmpOp::IsNot : ast::CmpOp::Is;
  }
}

// expr, factor : ( ADD | MINUS | NOT_OP ) factor ;
Built ExprBuilder::Impl::factor(ParserRuleContext* ctx) {
  size_t type = token_type(ctx->children[0]);
  if (type == P::MINUS) {
    // -9223372036854775808 is the one int literal whose magnitude alone overflows.
    ParserRuleContext* operand = rule(ctx->children[1]);
    while (operand->children.size() == 1 && rule(operand->children[0]))
      operand = rule(operand->children[0]);
    Token* t = operand->getStart();
    if (operand->children.size() == 1 && t->getType() == P::DECIMAL_INTEGER &&
        t->getText() == "9223372036854775808") {
      ast::ExprPtr e = build_number(t, source_, true);
      e->range = range(ctx);  // the minus sign belongs to the literal
      return {std::move(e), 1};
    }
  }
  ast::UnaryOp op = type == P::MINUS ? ast::UnaryOp::Neg
                    : type == P::ADD ? ast::UnaryOp::Pos
                                     : ast::UnaryOp::Invert;
  return unary(ctx, op);
}

// testlist : test ( COMMA test )* COMMA? ;   exprlist : factor ( COMMA factor )* COMMA? ;
// (with a comma: a tuple without parentheses)
Built ExprBuilder::Impl::tuple(ParserRuleContext* ctx) {
  auto t = std::make_unique<ast::TupleExpr>(range(ctx));
  uint32_t d = 0;
  for (ParseTree* c : ctx->children) {
    if (ParserRuleContext* r = rule(c)) {
      Built e = expr(r);
      d = std::max(d, e.depth);
      t->elts.push_back(std::move(e.e));
    }
  }
  return composite(std::move(t), d);
}

// power : atom trailer* ( POWER factor )? ;
// trailer : OPEN_PAREN arglist? CLOSE_PAREN | OPEN_BRACK subscriptlist CLOSE_BRACK | DOT NAME ;
// (the grammar writes atom and trailer out in power)
Built ExprBuilder::Impl::power(ParserRuleContext* ctx) {
  const std::vector<ParseTree*>& c = ctx->children;
  size_t i = 0;
  Built value = atom(ctx, i);
  Token* start = ctx->getStart();
  while (i < c.size() && token_type(c[i]) != P::POWER) {
    size_t type = token_type(c[i]);
    ParserRuleContext* inner = i + 1 < c.size() ? rule(c[i + 1]) : nullptr;
    size_t last = i + (type == P::DOT || !inner ? 1 : 2);
    SourceRange r = range(start, terminal(c[last])->getSymbol());
    if (type == P::OPEN_PAREN) {
      value = call(r, std::move(value), inner);
    } else if (type == P::OPEN_BRACK) {
      value = subscript(r, std::move(value), inner);
    } else {
      TerminalNode* name = terminal(c[i + 1]);
      uint32_t d = value.depth;
      value = composite(
          std::make_unique<ast::Attribute>(r, std::move(value.e), name->getText(), range(name)), d);
    }
    i = last + 1;
  }
  if (i == c.size()) return value;
  Built exponent = expr(rule(c[i + 1]));
  uint32_t d = std::max(value.depth, exponent.depth);
  return composite(std::make_unique<ast::Binary>(range(ctx), ast::BinOp::Pow, std::move(value.e),
                                                 std::move(exponent.e)),
                   d);
}

// arglist : argument ( COMMA argument )* COMMA? ;
// argument : NAME ASSIGN test | test comp_for? | STAR test | POWER test ;
Built ExprBuilder::Impl::call(const SourceRange& r, Built func, ParserRuleContext* args) {
  auto c = std::make_unique<ast::Call>(r);
  uint32_t d = func.depth;
  c->func = std::move(func.e);
  for (size_t i = 0; args && i < args->children.size(); i += 2) {
    auto* a = rule(args->children[i]);
    if (a->children.size() == 3) {  // NAME ASSIGN test
      std::string name = a->getStart()->getText();
      for (const ast::Keyword& k : c->keywords) {
        if (k.name == name) compile_error(range(a), "keyword argument repeated: " + name);
      }
      Built value = expr(rule(a->children[2]));
      d = std::max(d, value.depth);
      c->keywords.push_back(ast::Keyword{range(a), name, std::move(value.e)});
    } else if (a->getStart()->getType() == P::POWER) {
      compile_error(range(a), "`**` arguments are not supported in TSL");
    } else if (a->getStart()->getType() == P::STAR) {
      Built v = expr(rule(a->children[1]));
      d = std::max(d, v.depth + 1);
      c->args.push_back(std::make_unique<ast::Starred>(range(a), std::move(v.e)));
    } else {
      if (a->children.size() == 2)
        compile_error(range(a), "generator expressions are not supported in TSL");
      if (!c->keywords.empty())
        compile_error(range(a), "positional argument follows keyword argument");
      Built v = expr(rule(a->children[0]));
      d = std::max(d, v.depth);
      c->args.push_back(std::move(v.e));
    }
  }
  return composite(std::move(c), d);
}

// subscriptlist : subscript ( COMMA subscript )* COMMA? ;
Built ExprBuilder::Impl::subscript(const SourceRange& r, Built value, ParserRuleContext* list) {
  auto s = std::make_unique<ast::Subscript>(r);
  uint32_t d = value.depth;
  s->value = std::move(value.e);
  uint32_t di = 0;
  for (size_t i = 0; i < list->children.size(); i += 2) {
    Built index = slice(rule(list->children[i]));
    di = std::max(di, index.depth);
    s->indices.push_back(std::move(index.e));
  }
  return composite(std::move(s), std::max(d, di));
}

// subscript : test ( COLON test? sliceop? )? | COLON test? sliceop? ;   sliceop : COLON test? ;
Built ExprBuilder::Impl::slice(ParserRuleContext* ctx) {
  if (ctx->children.size() == 1 && !is_token(ctx->children[0])) return expr(rule(ctx->children[0]));
  auto s = std::make_unique<ast::Slice>(range(ctx));
  bool after_colon = false;
  uint32_t d = 0;
  for (ParseTree* c : ctx->children) {
    if (token_type(c) == P::COLON) {
      after_colon = true;
      continue;
    }
    ParserRuleContext* part = rule(c);
    ast::ExprPtr* into = after_colon ? &s->upper : &s->lower;
    if (part->getRuleIndex() == P::RuleSliceop) {
      if (part->children.size() == 1) continue;  // `::` without a step
      part = rule(part->children[1]);
      into = &s->step;
    }
    Built e = expr(part);
    d = std::max(d, e.depth);
    *into = std::move(e.e);
  }
  return composite(std::move(s), d);
}

ExprBuilder::ExprBuilder(SourcePtr source) : impl_(std::make_unique<Impl>(std::move(source))) {}
ExprBuilder::~ExprBuilder() = default;
ast::ExprPtr ExprBuilder::build(ParserRuleContext* ctx) { return impl_->expr(ctx).e; }
void ExprBuilder::check_target(const ast::Expr& e) const { impl_->check_target(e); }

}  // namespace tsl::parse_detail
