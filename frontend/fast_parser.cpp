// The parser's fast path (Note [Two parsers] in fast_parser.h): grammar/TSLParser.g4
// parsed by recursive descent, building the same AST and ranges as the ANTLR parse
// tree plus ast_builder.cpp/expr_builder.cpp, and bailing out to ANTLR on anything else.
#include "frontend/fast_parser.h"

#include <algorithm>

#include "TSLLexer.h"
#include "antlr4-runtime.h"
#include "frontend/ast_builder.h"

namespace tsl::parse_detail {
namespace {

using antlr4::Token;
using L = grammar::TSLLexer;

// Thrown to leave the whole text to the ANTLR parser.
struct Bail {};

// The precedence of each alternative of the left-recursive `expr` rule, numbered as
// ANTLR numbers them (the first alternative binds tightest): a binary operator's right
// operand is parsed at its level + 1, `not`'s operand at its own level.
enum Level : int {
  kOr = 1,
  kAnd,
  kNot,
  kCompare,
  kBitOr,
  kBitXor,
  kBitAnd,
  kShift,
  kArith,
  kTerm,
};

// An expression and the depth of its tree (a leaf is 1), which the ANTLR path's
// builder bounds by kMaxExpressionDepth.
struct Built {
  ast::ExprPtr e;
  uint32_t depth = 1;
};

// A binary operator's level, or 0 for any other token (`not` alone is not one).
int binary_level(size_t type, size_t next) {
  switch (type) {
    case L::STAR:
    case L::DIV:
    case L::IDIV:
    case L::MOD:
    case L::AT:
      return kTerm;
    case L::ADD:
    case L::MINUS:
      return kArith;
    case L::LEFT_SHIFT:
    case L::RIGHT_SHIFT:
      return kShift;
    case L::AND_OP:
      return kBitAnd;
    case L::XOR:
      return kBitXor;
    case L::OR_OP:
      return kBitOr;
    case L::LESS_THAN:
    case L::GREATER_THAN:
    case L::EQUALS:
    case L::GT_EQ:
    case L::LT_EQ:
    case L::NOT_EQ:
    case L::IN:
    case L::IS:
      return kCompare;
    case L::NOT:
      return next == L::IN ? kCompare : 0;
    case L::AND:
      return kAnd;
    case L::OR:
      return kOr;
    default:
      return 0;
  }
}

bool is_number(size_t t) {
  return t == L::DECIMAL_INTEGER || t == L::HEX_INTEGER || t == L::OCT_INTEGER ||
         t == L::BIN_INTEGER || t == L::FLOAT_NUMBER;
}

// The first tokens of `atom`, `factor` and `test`: where an optional list goes on.
bool starts_atom(size_t t) {
  return t == L::NAME || t == L::STRING || is_number(t) || t == L::ELLIPSIS || t == L::NONE ||
         t == L::TRUE || t == L::FALSE || t == L::OPEN_PAREN || t == L::OPEN_BRACK ||
         t == L::OPEN_BRACE;
}
bool starts_factor(size_t t) {
  return starts_atom(t) || t == L::ADD || t == L::MINUS || t == L::NOT_OP;
}
bool starts_test(size_t t) { return starts_factor(t) || t == L::NOT; }

bool is_augassign(size_t t) {
  switch (t) {
    case L::ADD_ASSIGN:
    case L::SUB_ASSIGN:
    case L::MULT_ASSIGN:
    case L::AT_ASSIGN:
    case L::DIV_ASSIGN:
    case L::MOD_ASSIGN:
    case L::AND_ASSIGN:
    case L::OR_ASSIGN:
    case L::XOR_ASSIGN:
    case L::LEFT_SHIFT_ASSIGN:
    case L::RIGHT_SHIFT_ASSIGN:
    case L::POWER_ASSIGN:
    case L::IDIV_ASSIGN:
      return true;
    default:
      return false;
  }
}

// What ExprBuilder::check_target accepts: names, attributes, subscripts and
// tuples/lists of them.
bool valid_target(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::Name:
    case ast::ExprKind::Attribute:
    case ast::ExprKind::Subscript:
      return true;
    case ast::ExprKind::Tuple:
      return std::all_of(ast::as<ast::TupleExpr>(e).elts.begin(),
                         ast::as<ast::TupleExpr>(e).elts.end(),
                         [](const ast::ExprPtr& x) { return valid_target(*x); });
    case ast::ExprKind::List:
      return std::all_of(ast::as<ast::ListExpr>(e).elts.begin(),
                         ast::as<ast::ListExpr>(e).elts.end(),
                         [](const ast::ExprPtr& x) { return valid_target(*x); });
    default:
      return false;
  }
}

bool single_target(const ast::Expr& e) {
  return e.kind == ast::ExprKind::Name || e.kind == ast::ExprKind::Attribute ||
         e.kind == ast::ExprKind::Subscript;
}

ast::CmpOp compare_op(size_t type, size_t next) {
  switch (type) {
    case L::LESS_THAN:
      return ast::CmpOp::Lt;
    case L::GREATER_THAN:
      return ast::CmpOp::Gt;
    case L::EQUALS:
      return ast::CmpOp::Eq;
    case L::GT_EQ:
      return ast::CmpOp::Ge;
    case L::LT_EQ:
      return ast::CmpOp::Le;
    case L::NOT_EQ:
      return ast::CmpOp::Ne;
    case L::IN:
      return ast::CmpOp::In;
    case L::NOT:
      return ast::CmpOp::NotIn;
    default:
      return next == L::NOT ? ast::CmpOp::IsNot : ast::CmpOp::Is;
  }
}

class FastParser {
 public:
  FastParser(const SourcePtr& source, const TokenizedText& text)
      : source_(source), tokens_(text.tokens) {}

  // file_input : ( NEWLINE | stmt )* EOF ;
  ast::Body file() {
    ast::Body body;
    while (peek() != Token::EOF) {
      if (accept(L::NEWLINE)) continue;
      stmt(body);
    }
    return body;
  }

  // eval_input : testlist NEWLINE* EOF ;
  ast::ExprPtr eval() {
    Built e = testlist();
    while (accept(L::NEWLINE)) {
    }
    if (peek() != Token::EOF) throw Bail{};
    return std::move(e.e);
  }

 private:
  const SourcePtr& source_;
  const std::vector<ScannedToken>& tokens_;
  size_t pos_ = 0;
  size_t nesting_ = 0;  // expression recursion, bounded like the ANTLR path's stack guard

  // ---- Tokens ------------------------------------------------------------------------------

  size_t peek(size_t k = 0) const {
    size_t i = pos_ + k;
    return i < tokens_.size() ? tokens_[i].type : Token::EOF;
  }
  bool accept(size_t type) {
    if (peek() != type) return false;
    ++pos_;
    return true;
  }
  void expect(size_t type) {
    if (!accept(type)) throw Bail{};
  }
  std::string text(size_t i) const { return std::string(tokens_[i].text); }
  // From token `first` to the last token consumed: a rule's range in the ANTLR tree.
  SourceRange range(size_t first) const { return range(first, pos_ - 1); }
  SourceRange range(size_t first, size_t last) const {
    return token_range(source_, tokens_[first], tokens_[last]);
  }

  // A composite expression node, with the builder's bound on the depth of the tree.
  static Built made(ast::ExprPtr e, uint32_t children_depth) {
    if (children_depth + 1 > kMaxExpressionDepth) throw Bail{};
    return {std::move(e), children_depth + 1};
  }

  // Counts the recursion of expressions; deep input goes to the ANTLR path, which
  // reports "too complex" where it applies.
  struct Nest {
    explicit Nest(FastParser& p) : p_(p) {
      if (++p_.nesting_ > 2 * kMaxExpressionDepth) throw Bail{};
      check_stack(p_.source_, nullptr);
    }
    ~Nest() { --p_.nesting_; }
    FastParser& p_;
  };

  // ---- Statements --------------------------------------------------------------------------

  // stmt : simple_stmts | compound_stmt ;
  void stmt(ast::Body& out) {
    switch (peek()) {
      case L::IF:
        out.push_back(if_stmt());
        return;
      case L::WHILE:
        out.push_back(while_stmt());
        return;
      case L::FOR:
        out.push_back(for_stmt());
        return;
      case L::WITH:
        out.push_back(with_stmt());
        return;
      case L::DEF:
        out.push_back(funcdef({}));
        return;
      case L::AT:
        out.push_back(decorated());
        return;
      default:
        simple_stmts(out);
    }
  }

  // simple_stmts : simple_stmt ( SEMI simple_stmt )* SEMI? NEWLINE ;
  void simple_stmts(ast::Body& out) {
    out.push_back(simple_stmt());
    while (accept(L::SEMI) && peek() != L::NEWLINE) out.push_back(simple_stmt());
    expect(L::NEWLINE);
  }

  ast::StmtPtr simple_stmt() {
    size_t start = pos_;
    switch (peek()) {
      case L::PASS:
        ++pos_;
        return std::make_unique<ast::Pass>(range(start));
      case L::BREAK:
        ++pos_;
        return std::make_unique<ast::Break>(range(start));
      case L::CONTINUE:
        ++pos_;
        return std::make_unique<ast::Continue>(range(start));
      case L::RETURN:
        return return_stmt();
      case L::RAISE:
        return raise_stmt();
      case L::ASSERT:
        return assert_stmt();
      case L::IMPORT:
        return import_name();
      case L::FROM:
        return import_from();
      default:
        return expr_stmt();
    }
  }

  // expr_stmt : testlist ( annassign | augassign testlist | ( ASSIGN testlist )* ) ;
  // annassign : COLON test ( ASSIGN testlist )? ;
  ast::StmtPtr expr_stmt() {
    size_t start = pos_;
    Built first = testlist();
    if (accept(L::COLON)) {
      if (!single_target(*first.e)) throw Bail{};
      Built annotation = test();
      ast::ExprPtr value;
      if (accept(L::ASSIGN)) value = testlist().e;
      auto s = std::make_unique<ast::AnnAssign>(range(start));
      s->target = std::move(first.e);
      s->annotation = std::move(annotation.e);
      s->value = std::move(value);
      return s;
    }
    if (is_augassign(peek())) {
      if (!single_target(*first.e)) throw Bail{};
      size_t op = pos_++;
      Built value = testlist();
      auto s = std::make_unique<ast::AugAssign>(range(start));
      s->target = std::move(first.e);
      s->op = binop_of_token(tokens_[op].type);
      s->op_range = range(op, op);
      s->value = std::move(value.e);
      return s;
    }
    if (peek() != L::ASSIGN)
      return std::make_unique<ast::ExprStmt>(range(start), std::move(first.e));
    std::vector<ast::ExprPtr> lists;
    lists.push_back(std::move(first.e));
    while (accept(L::ASSIGN)) lists.push_back(testlist().e);
    auto s = std::make_unique<ast::Assign>(range(start));
    s->value = std::move(lists.back());
    lists.pop_back();
    for (ast::ExprPtr& t : lists) {
      if (!valid_target(*t)) throw Bail{};
      s->targets.push_back(std::move(t));
    }
    return s;
  }

  // return_stmt : RETURN testlist? ;
  ast::StmtPtr return_stmt() {
    size_t start = pos_++;
    ast::ExprPtr value;
    if (starts_test(peek())) value = testlist().e;
    auto s = std::make_unique<ast::Return>(range(start));
    s->value = std::move(value);
    return s;
  }

  // raise_stmt : RAISE ( test ( FROM test )? )? ;   (`from` is an error)
  ast::StmtPtr raise_stmt() {
    size_t start = pos_++;
    ast::ExprPtr exc;
    if (starts_test(peek())) exc = test().e;
    if (peek() == L::FROM) throw Bail{};
    auto s = std::make_unique<ast::Raise>(range(start));
    s->exc = std::move(exc);
    return s;
  }

  // assert_stmt : ASSERT test ( COMMA test )? ;
  ast::StmtPtr assert_stmt() {
    size_t start = pos_++;
    Built cond = test();
    ast::ExprPtr msg;
    if (accept(L::COMMA)) msg = test().e;
    auto s = std::make_unique<ast::Assert>(range(start));
    s->test = std::move(cond.e);
    s->msg = std::move(msg);
    return s;
  }

  // dotted_name : NAME ( DOT NAME )* ;   (its text, as ANTLR's getText joins it)
  std::string dotted_name() {
    expect(L::NAME);
    std::string name = text(pos_ - 1);
    while (accept(L::DOT)) {
      expect(L::NAME);
      name += "." + text(pos_ - 1);
    }
    return name;
  }

  // import_name : IMPORT dotted_as_name ( COMMA dotted_as_name )* ;
  // dotted_as_name : dotted_name ( AS NAME )? ;
  ast::StmtPtr import_name() {
    size_t start = pos_++;
    std::vector<ast::ImportAlias> names;
    do {
      size_t item = pos_;
      std::string name = dotted_name();
      std::string asname;
      if (accept(L::AS)) {
        expect(L::NAME);
        asname = text(pos_ - 1);
      }
      names.push_back({range(item), std::move(name), std::move(asname)});
    } while (accept(L::COMMA));
    auto s = std::make_unique<ast::Import>(range(start));
    s->names = std::move(names);
    return s;
  }

  // import_from : FROM dotted_name IMPORT
  //               ( STAR | OPEN_PAREN import_as_names COMMA? CLOSE_PAREN | import_as_names ) ;
  // import_as_names : import_as_name ( COMMA import_as_name )* ;
  // import_as_name : NAME ( AS NAME )? ;
  ast::StmtPtr import_from() {
    size_t start = pos_++;
    std::string module = dotted_name();
    expect(L::IMPORT);
    std::vector<ast::ImportAlias> names;
    if (accept(L::STAR)) {
      names.push_back({range(pos_ - 1), "*", ""});
    } else {
      bool parens = accept(L::OPEN_PAREN);
      do {
        if (parens && peek() == L::CLOSE_PAREN && !names.empty()) break;
        size_t item = pos_;
        expect(L::NAME);
        std::string name = text(item), asname;
        if (accept(L::AS)) {
          expect(L::NAME);
          asname = text(pos_ - 1);
        }
        names.push_back({range(item), std::move(name), std::move(asname)});
      } while (accept(L::COMMA));
      if (parens) expect(L::CLOSE_PAREN);
    }
    auto s = std::make_unique<ast::ImportFrom>(range(start));
    s->module = std::move(module);
    s->names = std::move(names);
    return s;
  }

  // block : simple_stmts | NEWLINE INDENT stmt+ DEDENT ;
  void block(ast::Body& out) {
    if (!accept(L::NEWLINE)) return simple_stmts(out);
    expect(L::INDENT);
    do {
      stmt(out);
    } while (peek() != L::DEDENT && peek() != Token::EOF);
    expect(L::DEDENT);
  }

  // `KEYWORD test COLON`: a compound statement's header; returns the test.
  Built header(size_t* start) {
    *start = pos_++;
    Built cond = test();
    expect(L::COLON);
    return cond;
  }

  // if_stmt : IF test COLON block elif_clause* else_clause? ;
  // elif_clause : ELIF test COLON block ;   else_clause : ELSE COLON block ;
  ast::StmtPtr if_stmt() {
    size_t start;
    Built cond = header(&start);
    auto root = std::make_unique<ast::If>(range(start));
    root->cond = std::move(cond.e);
    block(root->body);
    ast::If* tail = root.get();
    while (peek() == L::ELIF) {
      Built c = header(&start);
      auto next = std::make_unique<ast::If>(range(start));
      next->cond = std::move(c.e);
      block(next->body);
      ast::If* n = next.get();
      tail->orelse.push_back(std::move(next));
      tail = n;
    }
    if (accept(L::ELSE)) {
      expect(L::COLON);
      block(tail->orelse);
    }
    return root;
  }

  // while_stmt : WHILE test COLON block else_clause? ;   (`else` is an error)
  ast::StmtPtr while_stmt() {
    size_t start;
    Built cond = header(&start);
    auto s = std::make_unique<ast::While>(range(start));
    s->cond = std::move(cond.e);
    block(s->body);
    if (peek() == L::ELSE) throw Bail{};
    return s;
  }

  // for_stmt : FOR exprlist IN testlist COLON block else_clause? ;   (`else` is an error)
  ast::StmtPtr for_stmt() {
    size_t start = pos_++;
    Built target = exprlist();
    if (!valid_target(*target.e)) throw Bail{};
    expect(L::IN);
    Built iter = testlist();
    expect(L::COLON);
    auto s = std::make_unique<ast::For>(range(start));
    s->target = std::move(target.e);
    s->iter = std::move(iter.e);
    block(s->body);
    if (peek() == L::ELSE) throw Bail{};
    return s;
  }

  // with_stmt : WITH with_item ( COMMA with_item )* COLON block ;
  // with_item : test ( AS factor )? ;
  ast::StmtPtr with_stmt() {
    size_t start = pos_++;
    std::vector<ast::WithItem> items;
    do {
      ast::WithItem w;
      w.context = test().e;
      if (accept(L::AS)) {
        w.target = factor().e;
        if (!valid_target(*w.target)) throw Bail{};
      }
      items.push_back(std::move(w));
    } while (accept(L::COMMA));
    expect(L::COLON);
    auto s = std::make_unique<ast::With>(range(start));
    s->items = std::move(items);
    block(s->body);
    return s;
  }

  // decorated : decorator+ funcdef ;   decorator : AT test NEWLINE ;
  ast::StmtPtr decorated() {
    std::vector<ast::ExprPtr> decorators;
    while (accept(L::AT)) {
      decorators.push_back(test().e);
      expect(L::NEWLINE);
    }
    if (peek() != L::DEF) throw Bail{};
    return funcdef(std::move(decorators));
  }

  // funcdef : DEF NAME parameters ( ARROW test )? COLON block ;
  // parameters : OPEN_PAREN ( param ( COMMA param )* COMMA? )? CLOSE_PAREN ;
  ast::StmtPtr funcdef(std::vector<ast::ExprPtr> decorators) {
    size_t start = pos_++;
    size_t name = pos_;
    expect(L::NAME);
    expect(L::OPEN_PAREN);
    std::vector<ast::Param> params;
    while (peek() != L::CLOSE_PAREN) {
      params.push_back(param());
      if (!accept(L::COMMA)) break;
    }
    expect(L::CLOSE_PAREN);
    ast::ExprPtr returns;
    if (accept(L::ARROW)) returns = test().e;
    expect(L::COLON);
    auto f = std::make_unique<ast::FunctionDef>(range(start));
    f->name = text(name);
    f->name_range = range(name, name);
    f->decorators = std::move(decorators);
    f->params = std::move(params);
    f->returns = std::move(returns);
    block(f->body);
    return f;
  }

  // param : NAME ( COLON test )? ( ASSIGN test )? ;
  ast::Param param() {
    size_t start = pos_;
    expect(L::NAME);
    ast::Param p;
    p.name = text(start);
    if (accept(L::COLON)) p.annotation = test().e;
    if (accept(L::ASSIGN)) p.default_value = test().e;
    p.range = range(start);
    return p;
  }

  // ---- Expressions -------------------------------------------------------------------------

  // testlist : test ( COMMA test )* COMMA? ;   exprlist : factor ( COMMA factor )* COMMA? ;
  // With a comma, a tuple whose range takes in a trailing comma.
  Built testlist() { return sequence(false); }
  Built exprlist() { return sequence(true); }
  Built sequence(bool factors) {
    size_t start = pos_;
    Built first = factors ? factor() : test();
    if (peek() != L::COMMA) return first;
    std::vector<ast::ExprPtr> elts;
    uint32_t d = first.depth;
    elts.push_back(std::move(first.e));
    while (accept(L::COMMA) && (factors ? starts_factor(peek()) : starts_test(peek()))) {
      Built x = factors ? factor() : test();
      d = std::max(d, x.depth);
      elts.push_back(std::move(x.e));
    }
    auto t = std::make_unique<ast::TupleExpr>(range(start));
    t->elts = std::move(elts);
    return made(std::move(t), d);
  }

  // test : expr ( IF expr ELSE test )? ;
  Built test() {
    Nest nest(*this);
    size_t start = pos_;
    Built then = expr(0);
    if (!accept(L::IF)) return then;
    Built cond = expr(0);
    expect(L::ELSE);
    Built other = test();
    auto e = std::make_unique<ast::IfExp>(range(start));
    uint32_t d = std::max({then.depth, cond.depth, other.depth});
    e->then_expr = std::move(then.e);
    e->cond = std::move(cond.e);
    e->else_expr = std::move(other.e);
    return made(std::move(e), d);
  }

  // expr (the left-recursive rule) by precedence climbing: operators of level `min` and
  // above. Like the builder, a chain `a < b <= c` is one Compare.
  Built expr(int min) {
    Nest nest(*this);
    size_t start = pos_;
    Built lhs = peek() == L::NOT ? not_expr(min) : factor();
    bool open_compare = false;   // lhs is a Compare this loop is still extending
    uint32_t compare_depth = 0;  // the deepest operand of that Compare
    for (;;) {
      size_t type = peek(), next = peek(1);
      int level = binary_level(type, next);
      if (level == 0 || level < min) return lhs;
      bool two_tokens = (type == L::NOT) || (type == L::IS && next == L::NOT);
      pos_ += two_tokens ? 2 : 1;
      Built rhs = expr(level + 1);
      if (level == kCompare) {
        if (!open_compare) {
          auto c = std::make_unique<ast::Compare>(SourceRange{});
          compare_depth = lhs.depth;
          c->operands.push_back(std::move(lhs.e));
          lhs.e = std::move(c);
          open_compare = true;
        }
        auto& c = ast::as<ast::Compare>(*lhs.e);
        c.range = range(start);
        c.ops.push_back(compare_op(type, next));
        compare_depth = std::max(compare_depth, rhs.depth);
        c.operands.push_back(std::move(rhs.e));
        lhs = made(std::move(lhs.e), compare_depth);
        continue;
      }
      open_compare = false;
      uint32_t d = std::max(lhs.depth, rhs.depth);
      if (type == L::AND || type == L::OR) {
        ast::BoolOpKind k = type == L::AND ? ast::BoolOpKind::And : ast::BoolOpKind::Or;
        lhs = made(
            std::make_unique<ast::BoolOp>(range(start), k, std::move(lhs.e), std::move(rhs.e)), d);
      } else {
        lhs = made(std::make_unique<ast::Binary>(range(start), binop_of_token(type),
                                                 std::move(lhs.e), std::move(rhs.e)),
                   d);
      }
    }
  }

  // expr : NOT expr ;   ANTLR also takes `not` as an operand of a tighter operator
  // (`a == not b`), which Python rejects: those go to the ANTLR path.
  Built not_expr(int min) {
    if (min > kNot) throw Bail{};
    size_t start = pos_++;
    Built operand = expr(kNot);
    uint32_t d = operand.depth;
    return made(std::make_unique<ast::Unary>(range(start), ast::UnaryOp::Not, std::move(operand.e)),
                d);
  }

  // factor : ( ADD | MINUS | NOT_OP ) factor | power ;
  // (-9223372036854775808 fails to decode as a lone literal and goes to the ANTLR path.)
  Built factor() {
    size_t type = peek();
    if (type != L::ADD && type != L::MINUS && type != L::NOT_OP) return power();
    Nest nest(*this);
    size_t start = pos_++;
    Built operand = factor();
    ast::UnaryOp op = type == L::MINUS ? ast::UnaryOp::Neg
                      : type == L::ADD ? ast::UnaryOp::Pos
                                       : ast::UnaryOp::Invert;
    uint32_t d = operand.depth;
    return made(std::make_unique<ast::Unary>(range(start), op, std::move(operand.e)), d);
  }

  // power : atom_expr ( POWER factor )? ;
  Built power() {
    size_t start = pos_;
    Built base = atom_expr();
    if (!accept(L::POWER)) return base;
    Nest nest(*this);  // 2**2**2...: right-nested, so recursive
    Built exponent = factor();
    uint32_t d = std::max(base.depth, exponent.depth);
    return made(std::make_unique<ast::Binary>(range(start), ast::BinOp::Pow, std::move(base.e),
                                              std::move(exponent.e)),
                d);
  }

  // atom_expr : atom trailer* ;
  // trailer : OPEN_PAREN arglist? CLOSE_PAREN | OPEN_BRACK subscriptlist CLOSE_BRACK | DOT NAME ;
  Built atom_expr() {
    size_t start = pos_;
    Built value = atom();
    for (;;) {
      switch (peek()) {
        case L::OPEN_PAREN:
          value = call(start, std::move(value));
          break;
        case L::OPEN_BRACK:
          value = subscript(start, std::move(value));
          break;
        case L::DOT: {
          ++pos_;
          size_t name = pos_;
          expect(L::NAME);
          uint32_t d = value.depth;
          value = made(std::make_unique<ast::Attribute>(range(start), std::move(value.e),
                                                        text(name), range(name, name)),
                       d);
          break;
        }
        default:
          return value;
      }
    }
  }

  // arglist : argument ( COMMA argument )* COMMA? ;
  // argument : NAME ASSIGN test | test comp_for? | STAR test | POWER test ;
  Built call(size_t start, Built func) {
    ++pos_;
    auto c = std::make_unique<ast::Call>(SourceRange{});
    uint32_t d = func.depth;
    c->func = std::move(func.e);
    while (peek() != L::CLOSE_PAREN) {
      size_t arg = pos_;
      if (peek() == L::NAME && peek(1) == L::ASSIGN) {
        std::string name = text(arg);
        for (const ast::Keyword& k : c->keywords) {
          if (k.name == name) throw Bail{};  // repeated
        }
        pos_ += 2;
        Built v = test();
        d = std::max(d, v.depth);
        c->keywords.push_back({range(arg), std::move(name), std::move(v.e)});
      } else if (accept(L::STAR)) {
        Built v = test();
        d = std::max(d, v.depth + 1);
        c->args.push_back(std::make_unique<ast::Starred>(range(arg), std::move(v.e)));
      } else {
        // `**kwargs`, a positional argument after a keyword, a generator: errors.
        if (peek() == L::POWER || !c->keywords.empty()) throw Bail{};
        Built v = test();
        if (peek() == L::FOR) throw Bail{};
        d = std::max(d, v.depth);
        c->args.push_back(std::move(v.e));
      }
      if (!accept(L::COMMA)) break;
    }
    expect(L::CLOSE_PAREN);
    c->range = range(start);
    return made(std::move(c), d);
  }

  // subscriptlist : subscript ( COMMA subscript )* COMMA? ;
  Built subscript(size_t start, Built value) {
    ++pos_;
    std::vector<ast::ExprPtr> indices;
    uint32_t d = value.depth;
    do {
      Built index = slice();
      d = std::max(d, index.depth);
      indices.push_back(std::move(index.e));
    } while (accept(L::COMMA) && peek() != L::CLOSE_BRACK);
    expect(L::CLOSE_BRACK);
    auto s = std::make_unique<ast::Subscript>(range(start));
    s->value = std::move(value.e);
    s->indices = std::move(indices);
    return made(std::move(s), d);
  }

  // subscript : test ( COLON test? sliceop? )? | COLON test? sliceop? ;   sliceop : COLON test? ;
  Built slice() {
    size_t start = pos_;
    Built lower;
    if (peek() != L::COLON) {
      lower = test();
      if (peek() != L::COLON) return lower;
    }
    ++pos_;
    Built upper, step;
    if (starts_test(peek())) upper = test();
    if (accept(L::COLON) && starts_test(peek())) step = test();
    uint32_t d = 0;
    for (const Built* p : {&lower, &upper, &step}) {
      if (p->e) d = std::max(d, p->depth);
    }
    auto s = std::make_unique<ast::Slice>(range(start));
    s->lower = std::move(lower.e);
    s->upper = std::move(upper.e);
    s->step = std::move(step.e);
    return made(std::move(s), d);
  }

  // atom : OPEN_PAREN testlist_comp? CLOSE_PAREN | OPEN_BRACK testlist_comp? CLOSE_BRACK
  //      | OPEN_BRACE dictorsetmaker? CLOSE_BRACE
  //      | NAME | number | STRING+ | ELLIPSIS | NONE | TRUE | FALSE ;
  Built atom() {
    size_t start = pos_;
    size_t type = peek();
    if (is_number(type)) {
      std::unique_ptr<antlr4::CommonToken> t = make_antlr_token(tokens_[pos_++]);
      return {build_number(t.get(), source_, false), 1};
    }
    switch (type) {
      case L::NAME:
        ++pos_;
        return {std::make_unique<ast::Name>(range(start), text(start)), 1};
      case L::STRING: {
        std::vector<std::unique_ptr<antlr4::CommonToken>> owners;
        std::vector<Token*> strings;
        while (peek() == L::STRING) {
          owners.push_back(make_antlr_token(tokens_[pos_++]));
          strings.push_back(owners.back().get());
        }
        return {build_strings(strings, source_), 1};
      }
      case L::ELLIPSIS:
        ++pos_;
        return {std::make_unique<ast::EllipsisLit>(range(start)), 1};
      case L::NONE:
        ++pos_;
        return {std::make_unique<ast::NoneLit>(range(start)), 1};
      case L::TRUE:
      case L::FALSE:
        ++pos_;
        return {std::make_unique<ast::BoolLit>(range(start), type == L::TRUE), 1};
      case L::OPEN_PAREN:
        return parenthesized();
      case L::OPEN_BRACK:
        return bracketed();
      case L::OPEN_BRACE:
        return braced();
      default:
        throw Bail{};
    }
  }

  // testlist_comp : test ( comp_for | ( COMMA test )* COMMA? ) ;   inside ( ): (x) is x
  Built parenthesized() {
    size_t start = pos_++;
    if (accept(L::CLOSE_PAREN)) return {std::make_unique<ast::TupleExpr>(range(start)), 1};
    Built first = test();
    if (accept(L::CLOSE_PAREN)) return first;
    if (peek() != L::COMMA) throw Bail{};  // a generator expression, or an error
    std::vector<ast::ExprPtr> elts;
    uint32_t d = items(std::move(first), L::CLOSE_PAREN, elts);
    auto t = std::make_unique<ast::TupleExpr>(range(start));
    t->elts = std::move(elts);
    return made(std::move(t), d);
  }

  // testlist_comp inside [ ]: a list or a list comprehension.
  Built bracketed() {
    size_t start = pos_++;
    if (accept(L::CLOSE_BRACK)) return {std::make_unique<ast::ListExpr>(range(start)), 1};
    Built first = test();
    if (peek() == L::FOR) return list_comprehension(start, std::move(first));
    std::vector<ast::ExprPtr> elts;
    uint32_t d = items(std::move(first), L::CLOSE_BRACK, elts);
    auto l = std::make_unique<ast::ListExpr>(range(start));
    l->elts = std::move(elts);
    return made(std::move(l), d);
  }

  // dictorsetmaker inside { }: a dict display. Sets and comprehensions bail (the
  // ANTLR path names them in its error).
  Built braced() {
    size_t start = pos_++;
    std::vector<ast::ExprPtr> keys, values;
    uint32_t d = 0;
    if (peek() != L::CLOSE_BRACE) {
      do {
        Built key = test();
        expect(L::COLON);
        Built value = test();
        d = std::max({d, key.depth, value.depth});
        keys.push_back(std::move(key.e));
        values.push_back(std::move(value.e));
      } while (accept(L::COMMA) && peek() != L::CLOSE_BRACE);
    }
    expect(L::CLOSE_BRACE);
    auto dict = std::make_unique<ast::DictExpr>(range(start));
    dict->keys = std::move(keys);
    dict->values = std::move(values);
    if (dict->keys.empty()) return {std::move(dict), 1};
    return made(std::move(dict), d);
  }

  // ( COMMA test )* COMMA? and the closing bracket, after the first test; returns the
  // deepest element's depth.
  uint32_t items(Built first, size_t close, std::vector<ast::ExprPtr>& elts) {
    uint32_t d = first.depth;
    elts.push_back(std::move(first.e));
    while (accept(L::COMMA) && peek() != close) {
      Built x = test();
      d = std::max(d, x.depth);
      elts.push_back(std::move(x.e));
    }
    expect(close);
    return d;
  }

  // comp_for : FOR exprlist IN expr comp_iter? ;   comp_if : IF expr comp_iter? ;
  // One `for` and at most one `if`; more clauses are an error.
  Built list_comprehension(size_t start, Built elt) {
    ++pos_;
    Built target = exprlist();
    if (!valid_target(*target.e)) throw Bail{};
    expect(L::IN);
    Built iter = expr(0);
    Built cond;
    if (accept(L::IF)) cond = expr(0);
    if (peek() == L::FOR || peek() == L::IF) throw Bail{};
    expect(L::CLOSE_BRACK);
    uint32_t d = std::max({elt.depth, target.depth, iter.depth});
    if (cond.e) d = std::max(d, cond.depth);
    auto c = std::make_unique<ast::ListComp>(range(start));
    c->elt = std::move(elt.e);
    c->target = std::move(target.e);
    c->iter = std::move(iter.e);
    c->cond = std::move(cond.e);
    return made(std::move(c), d);
  }
};

// Runs `parse` on a fresh FastParser; nullopt when it bails or hits a compile error
// (which the ANTLR path will report in its own order).
template <typename Result, typename Parse>
std::optional<Result> attempt(const SourcePtr& source, const TokenizedText& text, Parse parse) {
  try {
    FastParser p(source, text);
    return parse(p);
  } catch (const Bail&) {
  } catch (const SourceError&) {
  }
  return std::nullopt;
}

}  // namespace

std::optional<ast::Body> fast_parse_file(const SourcePtr& source, const TokenizedText& text) {
  return attempt<ast::Body>(source, text, [](FastParser& p) { return p.file(); });
}

std::optional<ast::ExprPtr> fast_parse_eval(const SourcePtr& source, const TokenizedText& text) {
  return attempt<ast::ExprPtr>(source, text, [](FastParser& p) { return p.eval(); });
}

}  // namespace tsl::parse_detail
