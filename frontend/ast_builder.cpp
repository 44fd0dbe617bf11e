// Builds the AST (frontend/ast.h) from the ANTLR parse tree of grammar/TSLParser.g4:
// statements here, expressions in expr_builder.cpp. Every node gets a source range;
// what parses but is not TSL (`while ... else`, assignment to a literal, ...) is a
// compile error.
#include "frontend/ast_builder.h"

namespace tsl::parse_detail {
namespace {

using antlr4::ParserRuleContext;
using antlr4::tree::ParseTree;
using antlr4::tree::TerminalNode;
using P = grammar::TSLParser;

class Builder {
 public:
  explicit Builder(SourcePtr source) : source_(source), exprs_(std::move(source)) {}

  // file_input : ( NEWLINE | simple_stmts | compound_stmt )* EOF ;
  ast::Body file(ParserRuleContext* ctx) {
    ast::Body body;
    statements(ctx->children, 0, body);
    return body;
  }

  // eval_input : testlist NEWLINE* EOF ;
  ast::ExprPtr eval(ParserRuleContext* ctx) { return exprs_.build(rule(ctx->children[0])); }

 private:
  SourcePtr source_;
  ExprBuilder exprs_;

  SourceRange range(ParseTree* c) const { return node_range(source_, c, c); }
  SourceRange range(ParseTree* a, ParseTree* b) const { return node_range(source_, a, b); }

  // The `n`th child of `ctx` if it is a rule (not a token, not past the end), else null.
  static ParserRuleContext* rule_at(ParserRuleContext* ctx, size_t n) {
    return n < ctx->children.size() ? rule(ctx->children[n]) : nullptr;
  }
  // The first rule child of `ctx` of rule `rule_index` from child `from` on, or null.
  static ParserRuleContext* find_rule(ParserRuleContext* ctx, size_t rule_index, size_t from = 0) {
    for (size_t i = from; i < ctx->children.size(); ++i) {
      ParserRuleContext* r = rule(ctx->children[i]);
      if (r && r->getRuleIndex() == rule_index) return r;
    }
    return nullptr;
  }

  // ---- Statements ---------------------------------------------------------------------------

  // The statements (simple_stmts and compound_stmt) among children[from...].
  void statements(const std::vector<ParseTree*>& children, size_t from, ast::Body& out) {
    for (size_t i = from; i < children.size(); ++i) {
      ParserRuleContext* s = rule(children[i]);
      if (!s) continue;  // NEWLINE, INDENT, DEDENT, EOF
      if (s->getRuleIndex() == P::RuleSimple_stmts) {
        simple_stmts(s, out);
      } else {
        out.push_back(compound_stmt(s));
      }
    }
  }

  // simple_stmts : simple_stmt ( SEMI simple_stmt )* SEMI? NEWLINE ;
  void simple_stmts(ParserRuleContext* ctx, ast::Body& out) {
    for (ParseTree* c : ctx->children) {
      if (ParserRuleContext* s = rule(c)) out.push_back(simple_stmt(s));
    }
  }

  // simple_stmt : expr_stmt | pass_stmt | break_stmt | continue_stmt | return_stmt
  //             | raise_stmt | assert_stmt | import_name | import_from ;
  ast::StmtPtr simple_stmt(ParserRuleContext* ctx) {
    ParserRuleContext* c = rule(ctx->children[0]);
    SourceRange r = range(c);
    switch (c->getRuleIndex()) {
      case P::RuleExpr_stmt:
        return expr_stmt(c);
      case P::RulePass_stmt:
        return std::make_unique<ast::Pass>(r);
      case P::RuleBreak_stmt:
        return std::make_unique<ast::Break>(r);
      case P::RuleContinue_stmt:
        return std::make_unique<ast::Continue>(r);
      case P::RuleReturn_stmt:
        return return_stmt(c);
      case P::RuleRaise_stmt:
        return raise_stmt(c);
      case P::RuleAssert_stmt:
        return assert_stmt(c);
      case P::RuleImport_name:
        return import_name(c);
      default:
        return import_from(c);
    }
  }

  // expr_stmt : testlist ( annassign | augassign testlist | ( ASSIGN testlist )* ) ;
  ast::StmtPtr expr_stmt(ParserRuleContext* ctx) {
    SourceRange r = range(ctx);
    const std::vector<ParseTree*>& c = ctx->children;
    ParserRuleContext* first = rule(c[0]);
    if (c.size() == 1) return std::make_unique<ast::ExprStmt>(r, exprs_.build(first));
    ParserRuleContext* second = rule(c[1]);
    if (second && second->getRuleIndex() == P::RuleAnnassign) {
      return annotated_assign(r, first, second);
    }
    if (second) {  // augassign
      auto s = std::make_unique<ast::AugAssign>(r);
      s->target = exprs_.build(first);
      check_aug_target(*s->target);
      s->op = binop_of_token(second->getStart()->getType());
      s->op_range = range(second);
      s->value = exprs_.build(rule(c[2]));
      return s;
    }
    auto s = std::make_unique<ast::Assign>(r);
    for (size_t i = 0; i + 1 < c.size(); i += 2) {
      s->targets.push_back(exprs_.build(rule(c[i])));
      exprs_.check_target(*s->targets.back());
    }
    s->value = exprs_.build(rule(c.back()));
    return s;
  }

  // annassign : COLON test ( ASSIGN testlist )? ;
  ast::StmtPtr annotated_assign(const SourceRange& r, ParserRuleContext* target,
                                ParserRuleContext* ann) {
    auto s = std::make_unique<ast::AnnAssign>(r);
    s->target = exprs_.build(target);
    ast::ExprKind k = s->target->kind;
    if (k == ast::ExprKind::Tuple || k == ast::ExprKind::List) {
      compile_error(s->target->range, "only single target (not tuple) can be annotated");
    }
    if (k != ast::ExprKind::Name && k != ast::ExprKind::Attribute &&
        k != ast::ExprKind::Subscript) {
      compile_error(s->target->range, "illegal target for annotation");
    }
    s->annotation = exprs_.build(rule(ann->children[1]));
    if (ParserRuleContext* v = rule_at(ann, 3)) s->value = exprs_.build(v);
    return s;
  }

  void check_aug_target(const ast::Expr& e) {
    if (e.kind == ast::ExprKind::Name || e.kind == ast::ExprKind::Attribute ||
        e.kind == ast::ExprKind::Subscript) {
      return;
    }
    const char* what = e.kind == ast::ExprKind::Tuple  ? "tuple"
                       : e.kind == ast::ExprKind::List ? "list"
                                                       : describe_for_assignment(e);
    compile_error(e.range,
                  std::string("'") + what + "' is an illegal expression for augmented assignment");
  }

  // return_stmt : RETURN testlist? ;
  ast::StmtPtr return_stmt(ParserRuleContext* ctx) {
    auto s = std::make_unique<ast::Return>(range(ctx));
    if (ParserRuleContext* v = rule_at(ctx, 1)) s->value = exprs_.build(v);
    return s;
  }

  // raise_stmt : RAISE ( test ( FROM test )? )? ;
  ast::StmtPtr raise_stmt(ParserRuleContext* ctx) {
    if (ctx->children.size() == 4)
      compile_error(range(ctx->children[2]), "`raise ... from` is not supported in TSL");
    auto s = std::make_unique<ast::Raise>(range(ctx));
    if (ParserRuleContext* e = rule_at(ctx, 1)) s->exc = exprs_.build(e);
    return s;
  }

  // assert_stmt : ASSERT test ( COMMA test )? ;
  ast::StmtPtr assert_stmt(ParserRuleContext* ctx) {
    auto s = std::make_unique<ast::Assert>(range(ctx));
    s->test = exprs_.build(rule(ctx->children[1]));
    if (ParserRuleContext* m = rule_at(ctx, 3)) s->msg = exprs_.build(m);
    return s;
  }

  // import_name : IMPORT dotted_as_name ( COMMA dotted_as_name )* ;
  // dotted_as_name : dotted_name ( AS NAME )? ;
  ast::StmtPtr import_name(ParserRuleContext* ctx) {
    auto s = std::make_unique<ast::Import>(range(ctx));
    for (size_t i = 1; i < ctx->children.size(); i += 2) {
      ParserRuleContext* d = rule(ctx->children[i]);
      std::string as = d->children.size() == 3 ? d->children[2]->getText() : "";
      s->names.push_back({range(d), d->children[0]->getText(), as});
    }
    return s;
  }

  // import_from : FROM dotted_name IMPORT
  //               ( STAR | OPEN_PAREN import_as_names COMMA? CLOSE_PAREN | import_as_names ) ;
  // import_as_names : import_as_name ( COMMA import_as_name )* ;
  // import_as_name : NAME ( AS NAME )? ;
  ast::StmtPtr import_from(ParserRuleContext* ctx) {
    auto s = std::make_unique<ast::ImportFrom>(range(ctx));
    s->module = ctx->children[1]->getText();
    ParseTree* what = ctx->children[3];
    if (token_type(what) == P::STAR) {
      s->names.push_back({range(what), "*", ""});
      return s;
    }
    ParserRuleContext* names = find_rule(ctx, P::RuleImport_as_names, 3);
    for (size_t i = 0; i < names->children.size(); i += 2) {
      ParserRuleContext* a = rule(names->children[i]);
      std::string as = a->children.size() == 3 ? a->children[2]->getText() : "";
      s->names.push_back({range(a), a->children[0]->getText(), as});
    }
    return s;
  }

  // compound_stmt : if_stmt | while_stmt | for_stmt | with_stmt | funcdef | decorated ;
  ast::StmtPtr compound_stmt(ParserRuleContext* ctx) {
    ParserRuleContext* c = rule(ctx->children[0]);
    switch (c->getRuleIndex()) {
      case P::RuleIf_stmt:
        return if_stmt(c);
      case P::RuleWhile_stmt:
        return while_stmt(c);
      case P::RuleFor_stmt:
        return for_stmt(c);
      case P::RuleWith_stmt:
        return with_stmt(c);
      case P::RuleFuncdef:
        return funcdef(c, {});
      default:
        return decorated(c);
    }
  }

  // block : simple_stmts | NEWLINE INDENT ( simple_stmts | compound_stmt )+ DEDENT ;
  void block(ParserRuleContext* ctx, ast::Body& out) { statements(ctx->children, 0, out); }

  // A header `KEYWORD test COLON block` (if, elif, while): the If or While node of the
  // header's range, its condition and its body.
  template <typename Node>
  std::unique_ptr<Node> header_and_block(ParserRuleContext* ctx, size_t keyword) {
    auto s = std::make_unique<Node>(range(ctx->children[keyword], ctx->children[keyword + 2]));
    s->cond = exprs_.build(rule(ctx->children[keyword + 1]));
    block(rule(ctx->children[keyword + 3]), s->body);
    return s;
  }

  // if_stmt : IF test COLON block elif_clause* else_clause? ;
  // elif_clause : ELIF test COLON block ;   else_clause : ELSE COLON block ;
  ast::StmtPtr if_stmt(ParserRuleContext* ctx) {
    std::unique_ptr<ast::If> root = header_and_block<ast::If>(ctx, 0);
    ast::If* tail = root.get();
    for (size_t i = 4; i < ctx->children.size(); ++i) {
      ParserRuleContext* clause = rule(ctx->children[i]);
      if (clause->getRuleIndex() == P::RuleElse_clause) {
        block(rule(clause->children[2]), tail->orelse);
        break;
      }
      std::unique_ptr<ast::If> next = header_and_block<ast::If>(clause, 0);
      ast::If* n = next.get();
      tail->orelse.push_back(std::move(next));
      tail = n;
    }
    return root;
  }

  // while_stmt : WHILE test COLON block else_clause? ;
  ast::StmtPtr while_stmt(ParserRuleContext* ctx) {
    if (ParserRuleContext* e = rule_at(ctx, 4)) {
      compile_error(range(e->children[0]), "`while ... else` is not supported in TSL");
    }
    return header_and_block<ast::While>(ctx, 0);
  }

  // for_stmt : FOR exprlist IN testlist COLON block else_clause? ;
  ast::StmtPtr for_stmt(ParserRuleContext* ctx) {
    if (ParserRuleContext* e = rule_at(ctx, 6)) {
      compile_error(range(e->children[0]), "`for ... else` is not supported in TSL");
    }
    auto s = std::make_unique<ast::For>(range(ctx->children[0], ctx->children[4]));
    s->target = exprs_.build(rule(ctx->children[1]));
    exprs_.check_target(*s->target);
    s->iter = exprs_.build(rule(ctx->children[3]));
    block(rule(ctx->children[5]), s->body);
    return s;
  }

  // with_stmt : WITH with_item ( COMMA with_item )* COLON block ;
  // with_item : test ( AS factor )? ;
  ast::StmtPtr with_stmt(ParserRuleContext* ctx) {
    const std::vector<ParseTree*>& c = ctx->children;
    auto s = std::make_unique<ast::With>(range(c[0], c[c.size() - 2]));
    for (size_t i = 1; i + 2 < c.size(); i += 2) {
      ParserRuleContext* item = rule(c[i]);
      ast::WithItem w;
      w.context = exprs_.build(rule(item->children[0]));
      if (ParserRuleContext* t = rule_at(item, 2)) {
        w.target = exprs_.build(t);
        exprs_.check_target(*w.target);
      }
      s->items.push_back(std::move(w));
    }
    block(rule(c.back()), s->body);
    return s;
  }

  // decorated : decorator+ funcdef ;   decorator : AT test NEWLINE ;
  ast::StmtPtr decorated(ParserRuleContext* ctx) {
    std::vector<ast::ExprPtr> decorators;
    for (size_t i = 0; i + 1 < ctx->children.size(); ++i) {
      decorators.push_back(exprs_.build(rule(rule(ctx->children[i])->children[1])));
    }
    return funcdef(rule(ctx->children.back()), std::move(decorators));
  }

  // funcdef : DEF NAME parameters ( ARROW test )? COLON block ;
  // parameters : OPEN_PAREN ( param ( COMMA param )* COMMA? )? CLOSE_PAREN ;
  // param : NAME ( COLON test )? ( ASSIGN test )? ;
  ast::StmtPtr funcdef(ParserRuleContext* ctx, std::vector<ast::ExprPtr> decorators) {
    const std::vector<ParseTree*>& c = ctx->children;
    auto f = std::make_unique<ast::FunctionDef>(range(c[0], c[c.size() - 2]));
    f->name = c[1]->getText();
    f->name_range = range(c[1]);
    f->decorators = std::move(decorators);
    for (ParseTree* p : rule(c[2])->children) {
      if (ParserRuleContext* param = rule(p)) f->params.push_back(parameter(param));
    }
    if (c.size() == 7) f->returns = exprs_.build(rule(c[4]));
    block(rule(c.back()), f->body);
    return f;
  }

  ast::Param parameter(ParserRuleContext* p) {
    ast::Param param;
    param.range = range(p);
    param.name = p->children[0]->getText();
    // The annotation follows COLON, the default follows ASSIGN.
    for (size_t i = 1; i + 1 < p->children.size(); i += 2) {
      ast::ExprPtr e = exprs_.build(rule(p->children[i + 1]));
      (token_type(p->children[i]) == P::COLON ? param.annotation : param.default_value) =
          std::move(e);
    }
    return param;
  }
};

}  // namespace

ast::Body build_file(grammar::TSLParser::File_inputContext* ctx, const SourcePtr& source) {
  return Builder(source).file(ctx);
}

ast::ExprPtr build_eval(grammar::TSLParser::Eval_inputContext* ctx, const SourcePtr& source) {
  return Builder(source).eval(ctx);
}

}  // namespace tsl::parse_detail
