// Builds AST expressions from the expression rules of the ANTLR parse tree: the
// precedence-climbing `expr` rule, unary operators, trailers (calls, subscripts,
// attributes), atoms and comprehensions, each node with its source range and a bound
// on the depth of the tree.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "frontend/ast_builder.h"

namespace tsl::parse_detail {

using antlr4::ParserRuleContext;
using antlr4::Token;
using antlr4::tree::ParseTree;
using antlr4::tree::TerminalNode;
using P = grammar::TSLParser;

namespace {

bool is_number(size_t type) {
  return type == P::DECIMAL_INTEGER || type == P::HEX_INTEGER || type == P::OCT_INTEGER ||
         type == P::BIN_INTEGER || type == P::FLOAT_NUMBER;
}

}  // namespace

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

struct ExprBuilder::Impl {
  explicit Impl(SourcePtr source) : source_(std::move(source)) {}

  SourcePtr source_;
  // Depth of each composite expression built so far (leaves are 1 and not stored).
  std::unordered_map<const ast::Expr*, uint32_t> depth_;

  SourceRange range(ParseTree* c) const { return node_range(source_, c, c); }
  SourceRange range(Token* a, Token* b) const { return token_range(source_, a, b); }
  SourceRange range(ParseTree* a, ParseTree* b) const { return node_range(source_, a, b); }

  uint32_t depth(const ast::ExprPtr& e) const {
    auto it = depth_.find(e.get());
    return it == depth_.end() ? 1 : it->second;
  }
  // Records the depth of a new composite node from its children's depths.
  void record(const ast::Expr& e, std::initializer_list<uint32_t> children) {
    uint32_t d = 1 + std::max(children);
    if (d > kMaxExpressionDepth) {
      compile_error(e.range, "expression too complex: nested more than " +
                                 std::to_string(kMaxExpressionDepth) + " levels deep");
    }
    depth_[&e] = d;
  }
  uint32_t max_depth(const std::vector<ast::ExprPtr>& es) const {
    uint32_t d = 0;
    for (const ast::ExprPtr& e : es) d = std::max(d, depth(e));
    return d;
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

  // Any expression rule. Every atom is wrapped in single-child rules (test -> expr ->
  // factor -> power -> atom_expr -> atom); those are skipped in a loop, so recursion
  // follows the real nesting of the expression.
  ast::ExprPtr expr(ParserRuleContext* ctx) {
    check_stack(source_, ctx->getStart());
    while (ctx->children.size() == 1 && !is_token(ctx->children[0]) &&
           ctx->getRuleIndex() != P::RuleAtom) {
      ctx = rule(ctx->children[0]);
    }
    switch (ctx->getRuleIndex()) {
      case P::RuleTest:
        return conditional(static_cast<P::TestContext*>(ctx));
      case P::RuleExpr:
        return operator_expr(ctx);
      case P::RuleFactor:
        return factor(ctx);
      case P::RulePower:
        return power(ctx);
      case P::RuleAtom_expr:
        return atom_expr(static_cast<P::Atom_exprContext*>(ctx));
      case P::RuleAtom:
        return atom(static_cast<P::AtomContext*>(ctx));
      case P::RuleTestlist:
      case P::RuleExprlist:
        return tuple(ctx);
      default:
        TSL_INTERNAL_ASSERT(false,
                            "unexpected parse tree rule " + std::to_string(ctx->getRuleIndex()));
        return nullptr;
    }
  }

  // test : expr ( IF expr ELSE test )? ;
  ast::ExprPtr conditional(P::TestContext* ctx) {
    auto e = std::make_unique<ast::IfExp>(range(ctx));
    e->then_expr = expr(rule(ctx->children[0]));
    e->cond = expr(rule(ctx->children[2]));
    e->else_expr = expr(rule(ctx->children[4]));
    record(*e, {depth(e->then_expr), depth(e->cond), depth(e->else_expr)});
    return e;
  }

  // expr : NOT expr ;   factor : ( ADD | MINUS | NOT_OP ) factor ;
  ast::ExprPtr unary(ParserRuleContext* ctx, ast::UnaryOp op) {
    ast::ExprPtr operand = expr(rule(ctx->children[1]));
    uint32_t d = depth(operand);
    auto e = std::make_unique<ast::Unary>(range(ctx), op, std::move(operand));
    record(*e, {d});
    return e;
  }

  // expr : factor | expr OP expr | expr comp_op expr | NOT expr | expr AND expr | expr OR expr ;
  // ANTLR nests `a - b - c` to the left: ((a - b) - c). The left spine is walked in a
  // loop, so long chains do not recurse; `a < b <= c` (not parenthesized) becomes one
  // Compare with three operands.
  ast::ExprPtr operator_expr(ParserRuleContext* ctx) {
    if (ctx->children.size() == 2) return unary(ctx, ast::UnaryOp::Not);
    std::vector<ParserRuleContext*> spine{ctx};
    for (;;) {
      ParserRuleContext* left = rule(spine.back()->children[0]);
      if (left->getRuleIndex() != P::RuleExpr || left->children.size() != 3) break;
      spine.push_back(left);
    }
    ast::ExprPtr lhs = expr(rule(spine.back()->children[0]));
    bool open_compare = false;  // lhs is a Compare this chain is still extending
    for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
      ParserRuleContext* node = *it;
      ParseTree* op = node->children[1];
      ast::ExprPtr rhs = expr(rule(node->children[2]));
      uint32_t d0 = depth(lhs), d1 = depth(rhs);
      if (!is_token(op)) {
        if (!open_compare) {
          auto c = std::make_unique<ast::Compare>(range(node));
          c->operands.push_back(std::move(lhs));
          lhs = std::move(c);
        }
        auto& c = ast::as<ast::Compare>(*lhs);
        c.range = range(node);
        c.ops.push_back(compare_op(rule(op)));
        c.operands.push_back(std::move(rhs));
        // Extending a chain keeps it flat: its depth is that of its deepest operand.
        record(c, {open_compare ? d0 - 1 : d0, d1});
        open_compare = true;
        continue;
      }
      open_compare = false;
      size_t type = token_type(op);
      if (type == P::AND || type == P::OR) {
        ast::BoolOpKind k = type == P::AND ? ast::BoolOpKind::And : ast::BoolOpKind::Or;
        lhs = std::make_unique<ast::BoolOp>(range(node), k, std::move(lhs), std::move(rhs));
      } else {
        lhs = std::make_unique<ast::Binary>(range(node), binop_of_token(type), std::move(lhs),
                                            std::move(rhs));
      }
      record(*lhs, {d0, d1});
    }
    return lhs;
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

  // factor : ( ADD | MINUS | NOT_OP ) factor | power ;
  ast::ExprPtr factor(ParserRuleContext* ctx) {
    size_t type = token_type(ctx->children[0]);
    if (type == P::MINUS) {
      // -9223372036854775808 is the one int literal whose magnitude alone overflows.
      ParserRuleContext* operand = rule(ctx->children[1]);
      while (operand->children.size() == 1 && rule(operand->children[0]))
        operand = rule(operand->children[0]);
      Token* t = operand->getStart();
      if (operand->getRuleIndex() == P::RuleNumber && t->getType() == P::DECIMAL_INTEGER &&
          t->getText() == "9223372036854775808") {
        ast::ExprPtr e = build_number(t, source_, true);
        e->range = range(ctx);  // the minus sign belongs to the literal
        return e;
      }
    }
    ast::UnaryOp op = type == P::MINUS ? ast::UnaryOp::Neg
                      : type == P::ADD ? ast::UnaryOp::Pos
                                       : ast::UnaryOp::Invert;
    return unary(ctx, op);
  }

  // power : atom_expr ( POWER factor )? ;   (right-associative through factor)
  ast::ExprPtr power(ParserRuleContext* ctx) {
    ast::ExprPtr base = expr(rule(ctx->children[0]));
    ast::ExprPtr exponent = expr(rule(ctx->children[2]));
    uint32_t d0 = depth(base), d1 = depth(exponent);
    auto e = std::make_unique<ast::Binary>(range(ctx), ast::BinOp::Pow, std::move(base),
                                           std::move(exponent));
    record(*e, {d0, d1});
    return e;
  }

  // testlist : test ( COMMA test )* COMMA? ;   exprlist : factor ( COMMA factor )* COMMA? ;
  // (with a comma: a tuple without parentheses)
  ast::ExprPtr tuple(ParserRuleContext* ctx) {
    auto t = std::make_unique<ast::TupleExpr>(range(ctx));
    for (ParseTree* c : ctx->children) {
      if (ParserRuleContext* r = rule(c)) t->elts.push_back(expr(r));
    }
    record(*t, {max_depth(t->elts)});
    return t;
  }

  // atom_expr : atom trailer* ;
  // trailer : OPEN_PAREN arglist? CLOSE_PAREN | OPEN_BRACK subscriptlist CLOSE_BRACK | DOT NAME ;
  ast::ExprPtr atom_expr(P::Atom_exprContext* ctx) {
    ast::ExprPtr value = expr(rule(ctx->children[0]));
    Token* start = ctx->getStart();
    for (size_t i = 1; i < ctx->children.size(); ++i) {
      ParserRuleContext* t = rule(ctx->children[i]);
      SourceRange r = range(start, t->getStop());
      uint32_t d = depth(value);
      bool empty = t->children.size() == 2;  // f() has no arglist
      switch (t->getStart()->getType()) {
        case P::OPEN_PAREN:
          value = call(r, std::move(value),
                       empty ? nullptr : static_cast<P::ArglistContext*>(t->children[1]));
          break;
        case P::OPEN_BRACK:
          value =
              subscript(r, std::move(value), static_cast<P::SubscriptlistContext*>(t->children[1]));
          break;
        default: {
          TerminalNode* name = terminal(t->children[1]);
          auto a =
              std::make_unique<ast::Attribute>(r, std::move(value), name->getText(), range(name));
          record(*a, {d});
          value = std::move(a);
        }
      }
    }
    return value;
  }

  // arglist : argument ( COMMA argument )* COMMA? ;
  // argument : NAME ASSIGN test | test comp_for? | STAR test | POWER test ;
  ast::ExprPtr call(const SourceRange& r, ast::ExprPtr func, P::ArglistContext* args) {
    auto c = std::make_unique<ast::Call>(r);
    uint32_t d = depth(func);
    c->func = std::move(func);
    std::unordered_set<std::string> seen;
    for (size_t i = 0; args && i < args->children.size(); i += 2) {
      auto* a = static_cast<P::ArgumentContext*>(args->children[i]);
      if (a->children.size() == 3) {  // NAME ASSIGN test
        std::string name = a->getStart()->getText();
        if (!seen.insert(name).second)
          compile_error(range(a), "keyword argument repeated: " + name);
        ast::Keyword k{range(a), name, expr(rule(a->children[2]))};
        d = std::max(d, depth(k.value));
        c->keywords.push_back(std::move(k));
      } else if (a->getStart()->getType() == P::POWER) {
        compile_error(range(a), "`**` arguments are not supported in TSL");
      } else if (a->getStart()->getType() == P::STAR) {
        ast::ExprPtr v = expr(rule(a->children[1]));
        auto s = std::make_unique<ast::Starred>(range(a), std::move(v));
        d = std::max(d, depth(s->value) + 1);
        c->args.push_back(std::move(s));
      } else {
        if (a->children.size() == 2)
          compile_error(range(a), "generator expressions are not supported in TSL");
        if (!c->keywords.empty())
          compile_error(range(a), "positional argument follows keyword argument");
        c->args.push_back(expr(rule(a->children[0])));
        d = std::max(d, depth(c->args.back()));
      }
    }
    record(*c, {d});
    return c;
  }

  // subscriptlist : subscript ( COMMA subscript )* COMMA? ;
  ast::ExprPtr subscript(const SourceRange& r, ast::ExprPtr value, P::SubscriptlistContext* list) {
    auto s = std::make_unique<ast::Subscript>(r);
    uint32_t d = depth(value);
    s->value = std::move(value);
    for (size_t i = 0; i < list->children.size(); i += 2) {
      s->indices.push_back(slice(static_cast<P::SubscriptContext*>(list->children[i])));
    }
    record(*s, {d, max_depth(s->indices)});
    return s;
  }

  // subscript : test ( COLON test? sliceop? )? | COLON test? sliceop? ;   sliceop : COLON test? ;
  ast::ExprPtr slice(P::SubscriptContext* ctx) {
    if (ctx->children.size() == 1 && !is_token(ctx->children[0]))
      return expr(rule(ctx->children[0]));
    auto s = std::make_unique<ast::Slice>(range(ctx));
    bool after_colon = false;
    for (ParseTree* c : ctx->children) {
      if (token_type(c) == P::COLON) {
        after_colon = true;
      } else if (rule(c)->getRuleIndex() == P::RuleSliceop) {
        if (c->children.size() == 2) s->step = expr(rule(c->children[1]));
      } else if (ParserRuleContext* t = rule(c)) {
        (after_colon ? s->upper : s->lower) = expr(t);
      }
    }
    uint32_t d = 0;
    for (const ast::ExprPtr* p : {&s->lower, &s->upper, &s->step}) {
      if (*p) d = std::max(d, depth(*p));
    }
    record(*s, {d});
    return s;
  }

  // atom : OPEN_PAREN testlist_comp? CLOSE_PAREN | OPEN_BRACK testlist_comp? CLOSE_BRACK
  //      | OPEN_BRACE dictorsetmaker? CLOSE_BRACE
  //      | NAME | number | STRING+ | ELLIPSIS | NONE | TRUE | FALSE ;
  ast::ExprPtr atom(P::AtomContext* ctx) {
    SourceRange r = range(ctx);
    size_t type = ctx->getStart()->getType();
    if (is_number(type)) return build_number(ctx->getStart(), source_, false);
    // The middle child is a testlist_comp inside ( ) and [ ], a dictorsetmaker inside { }.
    bool has_inner = ctx->children.size() == 3 && type != P::OPEN_BRACE;
    auto* inner = has_inner ? static_cast<P::Testlist_compContext*>(ctx->children[1]) : nullptr;
    switch (type) {
      case P::OPEN_PAREN:
        return parenthesized(r, inner);
      case P::OPEN_BRACK:
        return bracketed(r, inner);
      case P::OPEN_BRACE:
        return braced(r, ctx->children.size() == 3
                             ? static_cast<P::DictorsetmakerContext*>(ctx->children[1])
                             : nullptr);
      case P::NAME:
        return std::make_unique<ast::Name>(r, ctx->getStart()->getText());
      case P::ELLIPSIS:
        return std::make_unique<ast::EllipsisLit>(r);
      case P::NONE:
        return std::make_unique<ast::NoneLit>(r);
      case P::TRUE:
        return std::make_unique<ast::BoolLit>(r, true);
      case P::FALSE:
        return std::make_unique<ast::BoolLit>(r, false);
      default: {
        std::vector<Token*> strings;
        for (ParseTree* s : ctx->children) strings.push_back(terminal(s)->getSymbol());
        return build_strings(strings, source_);
      }
    }
  }

  // The comp_for of `test comp_for`, or null for `test ( COMMA test )* COMMA?`.
  static P::Comp_forContext* comprehension_of(P::Testlist_compContext* tc) {
    if (tc->children.size() != 2 || is_token(tc->children[1])) return nullptr;
    return static_cast<P::Comp_forContext*>(tc->children[1]);
  }

  // testlist_comp : test ( comp_for | ( COMMA test )* COMMA? ) ;   inside ( )
  ast::ExprPtr parenthesized(const SourceRange& r, P::Testlist_compContext* tc) {
    if (!tc) return std::make_unique<ast::TupleExpr>(r);
    if (comprehension_of(tc)) compile_error(r, "generator expressions are not supported in TSL");
    if (tc->children.size() == 1) return expr(rule(tc->children[0]));  // (x) is x
    auto t = std::make_unique<ast::TupleExpr>(r);
    for (size_t i = 0; i < tc->children.size(); i += 2)
      t->elts.push_back(expr(rule(tc->children[i])));
    record(*t, {max_depth(t->elts)});
    return t;
  }

  // testlist_comp : test ( comp_for | ( COMMA test )* COMMA? ) ;   inside [ ]
  ast::ExprPtr bracketed(const SourceRange& r, P::Testlist_compContext* tc) {
    if (!tc) return std::make_unique<ast::ListExpr>(r);
    if (P::Comp_forContext* cf = comprehension_of(tc)) {
      return list_comprehension(r, static_cast<P::TestContext*>(tc->children[0]), cf);
    }
    auto l = std::make_unique<ast::ListExpr>(r);
    for (size_t i = 0; i < tc->children.size(); i += 2)
      l->elts.push_back(expr(rule(tc->children[i])));
    record(*l, {max_depth(l->elts)});
    return l;
  }

  // dictorsetmaker : test ( COLON test )? ( comp_for | ( COMMA test ( COLON test )? )*
  //                  COMMA? ) ;   inside { }: a dict; sets and comprehensions are errors
  ast::ExprPtr braced(const SourceRange& r, P::DictorsetmakerContext* dm) {
    auto d = std::make_unique<ast::DictExpr>(r);
    if (!dm) return d;
    bool dict = dm->COLON().size() > 0;
    if (dm->comp_for()) {
      if (!dict) compile_error(r, "set comprehensions are not supported in TSL");
      return dict_comprehension(r, rule(dm->children[0]), rule(dm->children[2]), dm->comp_for());
    }
    if (!dict) compile_error(r, "set literals are not supported in TSL (use a list)");
    const auto& items = dm->children;
    for (size_t i = 0; i < items.size(); ++i) {
      if (is_token(items[i])) continue;  // a COMMA
      bool has_value = i + 1 < items.size() && is_token(items[i + 1]) &&
                       terminal(items[i + 1])->getSymbol()->getType() == P::COLON;
      if (!has_value) compile_error(range(items[i]), "':' expected after dictionary key");
      d->keys.push_back(expr(rule(items[i])));
      d->values.push_back(expr(rule(items[i + 2])));
      i += 2;
    }
    record(*d, {max_depth(d->keys), max_depth(d->values)});
    return d;
  }

  // {key: value comp_for}: one `for` and at most one `if`, as list comprehensions.
  ast::ExprPtr dict_comprehension(const SourceRange& r, ParserRuleContext* key,
                                  ParserRuleContext* value, P::Comp_forContext* cf) {
    auto c = std::make_unique<ast::DictComp>(r);
    c->key = expr(key);
    c->value = expr(value);
    c->target = expr(cf->exprlist());
    check_target(*c->target);
    c->iter = expr(cf->expr());
    uint32_t d = std::max({depth(c->key), depth(c->value), depth(c->target), depth(c->iter)});
    if (P::Comp_iterContext* it = cf->comp_iter()) {
      P::Comp_ifContext* ci = it->comp_if();
      if (!ci || ci->comp_iter()) {
        compile_error(
            range(ci ? rule(ci->comp_iter()) : rule(it)),
            "dict comprehensions with more than one `for` or `if` clause are not supported in TSL");
      }
      c->cond = expr(ci->expr());
      d = std::max(d, depth(c->cond));
    }
    record(*c, {d});
    return c;
  }

  // comp_for : FOR exprlist IN expr comp_iter? ;   comp_iter : comp_for | comp_if ;
  // comp_if : IF expr comp_iter? ;
  ast::ExprPtr list_comprehension(const SourceRange& r, P::TestContext* elt,
                                  P::Comp_forContext* cf) {
    auto c = std::make_unique<ast::ListComp>(r);
    c->elt = expr(elt);
    c->target = expr(cf->exprlist());
    check_target(*c->target);
    c->iter = expr(cf->expr());
    uint32_t d = std::max({depth(c->elt), depth(c->target), depth(c->iter)});
    if (P::Comp_iterContext* it = cf->comp_iter()) {
      P::Comp_ifContext* ci = it->comp_if();
      if (!ci || ci->comp_iter()) {
        compile_error(
            range(ci ? rule(ci->comp_iter()) : rule(it)),
            "list comprehensions with more than one `for` or `if` clause are not supported in TSL");
      }
      c->cond = expr(ci->expr());
      d = std::max(d, depth(c->cond));
    }
    record(*c, {d});
    return c;
  }
};

ExprBuilder::ExprBuilder(SourcePtr source) : impl_(std::make_unique<Impl>(std::move(source))) {}
ExprBuilder::~ExprBuilder() = default;
ast::ExprPtr ExprBuilder::build(ParserRuleContext* ctx) { return impl_->expr(ctx); }
void ExprBuilder::check_target(const ast::Expr& e) const { impl_->check_target(e); }

}  // namespace tsl::parse_detail
