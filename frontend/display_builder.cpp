// Builds the atoms of `power` from the ANTLR parse tree: names, literals, and the
// displays in brackets, parentheses and braces (tuples, lists, dicts) with their
// comprehensions, rejecting those TSL does not have (sets, generators).
#include <algorithm>

#include "frontend/expr_builder.h"

namespace tsl::parse_detail {

// A TupleExpr or ListExpr of `elts`.
template <typename Display>
Built ExprBuilder::Impl::display(const SourceRange& r, std::vector<Built> elts) {
  auto node = std::make_unique<Display>(r);
  uint32_t d = 0;
  node->elts.reserve(elts.size());
  for (Built& b : elts) {
    d = std::max(d, b.depth);
    node->elts.push_back(std::move(b.e));
  }
  return composite(std::move(node), d);
}

// atom : OPEN_PAREN testlist_comp? CLOSE_PAREN | OPEN_BRACK testlist_comp? CLOSE_BRACK
//      | OPEN_BRACE dictorsetmaker? CLOSE_BRACE
//      | NAME | number | STRING+ | ELLIPSIS | NONE | TRUE | FALSE ;
// The atom that starts `power`'s children; `i` is left at the child after it.
Built ExprBuilder::Impl::atom(ParserRuleContext* power, size_t& i) {
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
ParserRuleContext* ExprBuilder::Impl::comprehension_of(ParserRuleContext* tc) {
  if (tc->children.size() != 2 || is_token(tc->children[1])) return nullptr;
  return rule(tc->children[1]);
}

// The elements of `test ( COMMA test )* COMMA?`.
std::vector<Built> ExprBuilder::Impl::elements(ParserRuleContext* tc) {
  std::vector<Built> elts;
  for (size_t i = 0; i < tc->children.size(); i += 2) elts.push_back(expr(rule(tc->children[i])));
  return elts;
}

// testlist_comp : test ( comp_for | ( COMMA test )* COMMA? ) ;   inside ( )
Built ExprBuilder::Impl::parenthesized(const SourceRange& r, ParserRuleContext* tc) {
  if (!tc) return {std::make_unique<ast::TupleExpr>(r)};
  if (comprehension_of(tc)) compile_error(r, "generator expressions are not supported in TSL");
  if (tc->children.size() == 1) return expr(rule(tc->children[0]));  // (x) is x
  return display<ast::TupleExpr>(r, elements(tc));
}

// testlist_comp : test ( comp_for | ( COMMA test )* COMMA? ) ;   inside [ ]
Built ExprBuilder::Impl::bracketed(const SourceRange& r, ParserRuleContext* tc) {
  if (!tc) return {std::make_unique<ast::ListExpr>(r)};
  if (ParserRuleContext* cf = comprehension_of(tc)) {
    return list_comprehension(r, rule(tc->children[0]), cf);
  }
  return display<ast::ListExpr>(r, elements(tc));
}

// dictorsetmaker : test ( COLON test )? ( comp_for | ( COMMA test ( COLON test )? )*
//                  COMMA? ) ;   inside { }: a dict; sets and comprehensions are errors
Built ExprBuilder::Impl::braced(const SourceRange& r, ParserRuleContext* dm) {
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

bool ExprBuilder::Impl::has_colon(ParserRuleContext* dm) {
  for (ParseTree* c : dm->children) {
    if (token_type(c) == P::COLON) return true;
  }
  return false;
}

// comp_for : FOR exprlist IN expr comp_iter? ;   comp_iter : comp_for | comp_if ;
// comp_if : IF expr comp_iter? ;
// The comprehension's target, iterable and condition (at most one `for` and one
// `if`) into `c`, their deepest depth added to `d`; `kind` names it in the error.
template <typename Comprehension>
void ExprBuilder::Impl::clauses(ParserRuleContext* cf, const char* kind, Comprehension& c,
                                uint32_t& d) {
  Built target = expr(rule(cf->children[1]));
  check_target(*target.e);
  Built iter = expr(rule(cf->children[3]));
  d = std::max({d, target.depth, iter.depth});
  c.target = std::move(target.e);
  c.iter = std::move(iter.e);
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
    c.cond = std::move(cond.e);
  }
}

// {key: value comp_for}: one `for` and at most one `if`, as list comprehensions.
Built ExprBuilder::Impl::dict_comprehension(const SourceRange& r, ParserRuleContext* key,
                                            ParserRuleContext* value, ParserRuleContext* cf) {
  auto c = std::make_unique<ast::DictComp>(r);
  Built k = expr(key);
  Built v = expr(value);
  uint32_t d = std::max(k.depth, v.depth);
  c->key = std::move(k.e);
  c->value = std::move(v.e);
  clauses(cf, "dict", *c, d);
  return composite(std::move(c), d);
}

Built ExprBuilder::Impl::list_comprehension(const SourceRange& r, ParserRuleContext* elt,
                                            ParserRuleContext* cf) {
  auto c = std::make_unique<ast::ListComp>(r);
  Built e = expr(elt);
  uint32_t d = e.depth;
  c->elt = std::move(e.e);
  clauses(cf, "list", *c, d);
  return composite(std::move(c), d);
}

}  // namespace tsl::parse_detail
