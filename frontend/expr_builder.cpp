// Builds AST expressions from the expression rules of the ANTLR parse tree: the
// precedence-climbing `expr` rule, unary operators, `power` (an atom, its trailers —
// calls, subscripts, attributes — and an exponent), displays and comprehensions, each
// node with its source range and a bound on the depth of the tree.
#include <algorithm>

#include "frontend/ast_builder.h"

namespace tsl::parse_detail {

using antlr4::ParserRuleContext;
using antlr4::Token;
using antlr4::tree::ParseTree;
using antlr4::tree::TerminalNode;
using P = grammar::TSLParser;

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

namespace {

// An expression and the depth of its tree: a leaf is 1, a node one more than its
// deepest child (Note [One parser]: the builder bounds it by kMaxExpressionDepth).
struct Built {
  ast::ExprPtr e;
  uint32_t depth = 1;
};

uint32_t max_depth(const std::vector<Built>& es) {
  uint32_t d = 0;
  for (const Built& b : es) d = std::max(d, b.depth);
  return d;
}

// The expressions of `built`, without their depths.
std::vector<ast::ExprPtr> exprs_of(std::vector<Built>&& built) {
  std::vector<ast::ExprPtr> out;
  out.reserve(built.size());
  for (Built& b : built) out.push_back(std::move(b.e));
  return out;
}

}  // namespace

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
  void check_target(const ast::Expr& e) {
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
  Built expr(ParserRuleContext* ctx) {
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
  Built conditional(ParserRuleContext* ctx) {
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
  Built unary(ParserRuleContext* ctx, ast::UnaryOp op) {
    Built operand = expr(rule(ctx->children[1]));
    return composite(std::make_unique<ast::Unary>(range(ctx), op, std::move(operand.e)),
                     operand.depth);
  }

  // expr : power | ( ADD | MINUS | NOT_OP ) factor | expr OP expr | expr comp_op expr
  //      | NOT expr | expr AND expr | expr OR expr ;
  // ANTLR nests `a - b - c` to the left: ((a - b) - c). The left spine is walked in a
  // loop, so long chains do not recurse; `a < b <= c` (not parenthesized) becomes one
  // Compare with three operands.
  Built operator_expr(ParserRuleContext* ctx) {
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

  // One comparison of a chain: a new Compare, or `lhs` (the Compare of the comparison
  // before, `open`) extended. Extending keeps it flat: its depth is that of its deepest
  // operand.
  Built compare(ParserRuleContext* node, Built lhs, bool open, Built rhs, ParserRuleContext* op) {
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
  static ast::CmpOp compare_op(ParserRuleContext* c) {
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
  Built factor(ParserRuleContext* ctx) {
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
  Built tuple(ParserRuleContext* ctx) {
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
  Built power(ParserRuleContext* ctx) {
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
            std::make_unique<ast::Attribute>(r, std::move(value.e), name->getText(), range(name)),
            d);
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
  Built call(const SourceRange& r, Built func, ParserRuleContext* args) {
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
  Built subscript(const SourceRange& r, Built value, ParserRuleContext* list) {
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
  Built slice(ParserRuleContext* ctx) {
    if (ctx->children.size() == 1 && !is_token(ctx->children[0]))
      return expr(rule(ctx->children[0]));
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

  // atom : OPEN_PAREN testlist_comp? CLOSE_PAREN | OPEN_BRACK testlist_comp? CLOSE_BRACK
  //      | OPEN_BRACE dictorsetmaker? CLOSE_BRACE
  //      | NAME | number | STRING+ | ELLIPSIS | NONE | TRUE | FALSE ;
  // The atom that starts `power`'s children; `i` is left at the child after it.
  Built atom(ParserRuleContext* power, size_t& i) {
    const std::vector<ParseTree*>& c = power->children;
    Token* first = terminal(c[0])->getSymbol();
    size_t type = first->getType();
    if (type == P::OPEN_PAREN || type == P::OPEN_BRACK || type == P::OPEN_BRACE) {
      // The middle child is a testlist_comp inside ( ) and [ ], a dictorsetmaker inside { }.
      ParserRuleContext* inner = rule(c[1]);
      i = inner ? 3 : 2;
      SourceRange r = range(c[0], c[i - 1]);
      if (type == P::OPEN_PAREN) return parenthesized(r, inner);
      if (type == P::OPEN_BRACK) return bracketed(r, inner);
      return braced(r, inner);
    }
    i = 1;
    SourceRange r = range(c[0]);
    switch (type) {
      case P::NAME:
        return {std::make_unique<ast::Name>(r, first->getText())};
      case P::ELLIPSIS:
        return {std::make_unique<ast::EllipsisLit>(r)};
      case P::NONE:
        return {std::make_unique<ast::NoneLit>(r)};
      case P::TRUE:
        return {std::make_unique<ast::BoolLit>(r, true)};
      case P::FALSE:
        return {std::make_unique<ast::BoolLit>(r, false)};
      case P::STRING: {
        std::vector<Token*> strings{first};
        for (; i < c.size() && token_type(c[i]) == P::STRING; ++i)
          strings.push_back(terminal(c[i])->getSymbol());
        return {build_strings(strings, source_)};
      }
      default:
        return {build_number(first, source_, false)};
    }
  }

  // The comp_for of `test comp_for`, or null for `test ( COMMA test )* COMMA?`.
  static ParserRuleContext* comprehension_of(ParserRuleContext* tc) {
    if (tc->children.size() != 2 || is_token(tc->children[1])) return nullptr;
    return rule(tc->children[1]);
  }

  // The elements of `test ( COMMA test )* COMMA?`.
  std::vector<Built> elements(ParserRuleContext* tc) {
    std::vector<Built> elts;
    for (size_t i = 0; i < tc->children.size(); i += 2) elts.push_back(expr(rule(tc->children[i])));
    return elts;
  }

  // testlist_comp : test ( comp_for | ( COMMA test )* COMMA? ) ;   inside ( )
  Built parenthesized(const SourceRange& r, ParserRuleContext* tc) {
    if (!tc) return {std::make_unique<ast::TupleExpr>(r)};
    if (comprehension_of(tc)) compile_error(r, "generator expressions are not supported in TSL");
    if (tc->children.size() == 1) return expr(rule(tc->children[0]));  // (x) is x
    auto t = std::make_unique<ast::TupleExpr>(r);
    std::vector<Built> elts = elements(tc);
    uint32_t d = max_depth(elts);
    t->elts = exprs_of(std::move(elts));
    return composite(std::move(t), d);
  }

  // testlist_comp : test ( comp_for | ( COMMA test )* COMMA? ) ;   inside [ ]
  Built bracketed(const SourceRange& r, ParserRuleContext* tc) {
    if (!tc) return {std::make_unique<ast::ListExpr>(r)};
    if (ParserRuleContext* cf = comprehension_of(tc)) {
      return list_comprehension(r, rule(tc->children[0]), cf);
    }
    auto l = std::make_unique<ast::ListExpr>(r);
    std::vector<Built> elts = elements(tc);
    uint32_t d = max_depth(elts);
    l->elts = exprs_of(std::move(elts));
    return composite(std::move(l), d);
  }

  // dictorsetmaker : test ( COLON test )? ( comp_for | ( COMMA test ( COLON test )? )*
  //                  COMMA? ) ;   inside { }: a dict; sets and comprehensions are errors
  Built braced(const SourceRange& r, ParserRuleContext* dm) {
    auto d = std::make_unique<ast::DictExpr>(r);
    if (!dm) return {std::move(d)};
    const std::vector<ParseTree*>& items = dm->children;
    bool dict = has_colon(dm);
    if (ParserRuleContext* cf = rule(items.back()); cf && cf->getRuleIndex() == P::RuleComp_for) {
      if (!dict) compile_error(r, "set comprehensions are not supported in TSL");
      return dict_comprehension(r, rule(items[0]), rule(items[2]), cf);
    }
    if (!dict) compile_error(r, "set literals are not supported in TSL (use a list)");
    uint32_t dk = 0, dv = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      if (is_token(items[i])) continue;  // a COMMA
      bool has_value = i + 1 < items.size() && token_type(items[i + 1]) == P::COLON;
      if (!has_value) compile_error(range(items[i]), "':' expected after dictionary key");
      Built key = expr(rule(items[i]));
      Built value = expr(rule(items[i + 2]));
      dk = std::max(dk, key.depth);
      dv = std::max(dv, value.depth);
      d->keys.push_back(std::move(key.e));
      d->values.push_back(std::move(value.e));
      i += 2;
    }
    return composite(std::move(d), std::max(dk, dv));
  }

  static bool has_colon(ParserRuleContext* dm) {
    for (ParseTree* c : dm->children) {
      if (token_type(c) == P::COLON) return true;
    }
    return false;
  }

  // comp_for : FOR exprlist IN expr comp_iter? ;   comp_iter : comp_for | comp_if ;
  // comp_if : IF expr comp_iter? ;
  // The comprehension's target, iterable and condition (at most one `for` and one
  // `if`), their deepest depth added to `d`; `kind` names it in the error.
  struct Clauses {
    ast::ExprPtr target, iter, cond;
  };
  Clauses clauses(ParserRuleContext* cf, const char* kind, uint32_t& d) {
    Clauses out;
    Built target = expr(rule(cf->children[1]));
    check_target(*target.e);
    Built iter = expr(rule(cf->children[3]));
    d = std::max({d, target.depth, iter.depth});
    out.target = std::move(target.e);
    out.iter = std::move(iter.e);
    if (cf->children.size() == 5) {
      ParserRuleContext* it = rule(cf->children[4]);
      ParserRuleContext* ci = rule(it->children[0]);
      bool is_if = ci->getRuleIndex() == P::RuleComp_if;
      if (!is_if || ci->children.size() == 3) {
        compile_error(range(is_if ? ci->children[2] : it),
                      std::string(kind) +
                          " comprehensions with more than one `for` or `if` clause are not "
                          "supported in TSL");
      }
      Built cond = expr(rule(ci->children[1]));
      d = std::max(d, cond.depth);
      out.cond = std::move(cond.e);
    }
    return out;
  }

  // {key: value comp_for}: one `for` and at most one `if`, as list comprehensions.
  Built dict_comprehension(const SourceRange& r, ParserRuleContext* key, ParserRuleContext* value,
                           ParserRuleContext* cf) {
    auto c = std::make_unique<ast::DictComp>(r);
    Built k = expr(key);
    Built v = expr(value);
    uint32_t d = std::max(k.depth, v.depth);
    c->key = std::move(k.e);
    c->value = std::move(v.e);
    Clauses cl = clauses(cf, "dict", d);
    c->target = std::move(cl.target);
    c->iter = std::move(cl.iter);
    c->cond = std::move(cl.cond);
    return composite(std::move(c), d);
  }

  Built list_comprehension(const SourceRange& r, ParserRuleContext* elt, ParserRuleContext* cf) {
    auto c = std::make_unique<ast::ListComp>(r);
    Built e = expr(elt);
    uint32_t d = e.depth;
    c->elt = std::move(e.e);
    Clauses cl = clauses(cf, "list", d);
    c->target = std::move(cl.target);
    c->iter = std::move(cl.iter);
    c->cond = std::move(cl.cond);
    return composite(std::move(c), d);
  }
};

ExprBuilder::ExprBuilder(SourcePtr source) : impl_(std::make_unique<Impl>(std::move(source))) {}
ExprBuilder::~ExprBuilder() = default;
ast::ExprPtr ExprBuilder::build(ParserRuleContext* ctx) { return impl_->expr(ctx).e; }
void ExprBuilder::check_target(const ast::Expr& e) const { impl_->check_target(e); }

}  // namespace tsl::parse_detail
