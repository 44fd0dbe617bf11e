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

  // file_input : ( NEWLINE | stmt )* EOF ;
  ast::Body file(P::File_inputContext* ctx) {
    ast::Body body;
    for (P::StmtContext* s : ctx->stmt()) stmt(s, body);
    return body;
  }

  // eval_input : testlist NEWLINE* EOF ;
  ast::ExprPtr eval(P::Eval_inputContext* ctx) { return exprs_.build(ctx->testlist()); }

 private:
  SourcePtr source_;
  ExprBuilder exprs_;

  SourceRange range(ParseTree* c) const { return node_range(source_, c, c); }
  SourceRange range(ParseTree* a, ParseTree* b) const { return node_range(source_, a, b); }

  // ---- Statements ---------------------------------------------------------------------------

  // stmt : simple_stmts | compound_stmt ;
  void stmt(P::StmtContext* ctx, ast::Body& out) {
    if (P::Simple_stmtsContext* s = ctx->simple_stmts()) return simple_stmts(s, out);
    out.push_back(compound_stmt(ctx->compound_stmt()));
  }

  // simple_stmts : simple_stmt ( SEMI simple_stmt )* SEMI? NEWLINE ;
  void simple_stmts(P::Simple_stmtsContext* ctx, ast::Body& out) {
    for (P::Simple_stmtContext* s : ctx->simple_stmt()) out.push_back(simple_stmt(s));
  }

  // simple_stmt : expr_stmt | pass_stmt | break_stmt | continue_stmt | return_stmt
  //             | raise_stmt | assert_stmt | import_name | import_from ;
  ast::StmtPtr simple_stmt(P::Simple_stmtContext* ctx) {
    ParserRuleContext* c = rule(ctx->children[0]);
    SourceRange r = range(c);
    switch (c->getRuleIndex()) {
      case P::RuleExpr_stmt:
        return expr_stmt(static_cast<P::Expr_stmtContext*>(c));
      case P::RulePass_stmt:
        return std::make_unique<ast::Pass>(r);
      case P::RuleBreak_stmt:
        return std::make_unique<ast::Break>(r);
      case P::RuleContinue_stmt:
        return std::make_unique<ast::Continue>(r);
      case P::RuleReturn_stmt:
        return return_stmt(static_cast<P::Return_stmtContext*>(c));
      case P::RuleRaise_stmt:
        return raise_stmt(static_cast<P::Raise_stmtContext*>(c));
      case P::RuleAssert_stmt:
        return assert_stmt(static_cast<P::Assert_stmtContext*>(c));
      case P::RuleImport_name:
        return import_name(static_cast<P::Import_nameContext*>(c));
      default:
        return import_from(static_cast<P::Import_fromContext*>(c));
    }
  }

  // expr_stmt : testlist ( annassign | augassign testlist | ( ASSIGN testlist )* ) ;
  ast::StmtPtr expr_stmt(P::Expr_stmtContext* ctx) {
    SourceRange r = range(ctx);
    std::vector<P::TestlistContext*> lists = ctx->testlist();
    if (P::AnnassignContext* ann = ctx->annassign()) return annotated_assign(r, lists[0], ann);
    if (P::AugassignContext* aug = ctx->augassign()) {
      auto s = std::make_unique<ast::AugAssign>(r);
      s->target = exprs_.build(lists[0]);
      check_aug_target(*s->target);
      s->op = binop_of_token(aug->getStart()->getType());
      s->op_range = range(aug);
      s->value = exprs_.build(lists[1]);
      return s;
    }
    if (lists.size() == 1) return std::make_unique<ast::ExprStmt>(r, exprs_.build(lists[0]));
    auto s = std::make_unique<ast::Assign>(r);
    for (size_t i = 0; i + 1 < lists.size(); ++i) {
      s->targets.push_back(exprs_.build(lists[i]));
      exprs_.check_target(*s->targets.back());
    }
    s->value = exprs_.build(lists.back());
    return s;
  }

  // annassign : COLON test ( ASSIGN testlist )? ;
  ast::StmtPtr annotated_assign(const SourceRange& r, P::TestlistContext* target,
                                P::AnnassignContext* ann) {
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
    s->annotation = exprs_.build(ann->test());
    if (P::TestlistContext* v = ann->testlist()) s->value = exprs_.build(v);
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
  ast::StmtPtr return_stmt(P::Return_stmtContext* ctx) {
    auto s = std::make_unique<ast::Return>(range(ctx));
    if (P::TestlistContext* v = ctx->testlist()) s->value = exprs_.build(v);
    return s;
  }

  // raise_stmt : RAISE ( test ( FROM test )? )? ;
  ast::StmtPtr raise_stmt(P::Raise_stmtContext* ctx) {
    if (TerminalNode* from = ctx->FROM())
      compile_error(range(from), "`raise ... from` is not supported in TSL");
    auto s = std::make_unique<ast::Raise>(range(ctx));
    if (P::TestContext* e = ctx->test(0)) s->exc = exprs_.build(e);
    return s;
  }

  // assert_stmt : ASSERT test ( COMMA test )? ;
  ast::StmtPtr assert_stmt(P::Assert_stmtContext* ctx) {
    auto s = std::make_unique<ast::Assert>(range(ctx));
    s->test = exprs_.build(ctx->test(0));
    if (P::TestContext* m = ctx->test(1)) s->msg = exprs_.build(m);
    return s;
  }

  // import_name : IMPORT dotted_as_name ( COMMA dotted_as_name )* ;
  // dotted_as_name : dotted_name ( AS NAME )? ;
  ast::StmtPtr import_name(P::Import_nameContext* ctx) {
    auto s = std::make_unique<ast::Import>(range(ctx));
    for (P::Dotted_as_nameContext* d : ctx->dotted_as_name()) {
      TerminalNode* as = d->NAME();
      s->names.push_back({range(d), d->dotted_name()->getText(), as ? as->getText() : ""});
    }
    return s;
  }

  // import_from : FROM dotted_name IMPORT
  //               ( STAR | OPEN_PAREN import_as_names COMMA? CLOSE_PAREN | import_as_names ) ;
  // import_as_name : NAME ( AS NAME )? ;
  ast::StmtPtr import_from(P::Import_fromContext* ctx) {
    auto s = std::make_unique<ast::ImportFrom>(range(ctx));
    s->module = ctx->dotted_name()->getText();
    if (TerminalNode* star = ctx->STAR()) {
      s->names.push_back({range(star), "*", ""});
      return s;
    }
    for (P::Import_as_nameContext* a : ctx->import_as_names()->import_as_name()) {
      TerminalNode* as = a->NAME(1);
      s->names.push_back({range(a), a->NAME(0)->getText(), as ? as->getText() : ""});
    }
    return s;
  }

  // compound_stmt : if_stmt | while_stmt | for_stmt | with_stmt | funcdef | decorated ;
  ast::StmtPtr compound_stmt(P::Compound_stmtContext* ctx) {
    ParserRuleContext* c = rule(ctx->children[0]);
    switch (c->getRuleIndex()) {
      case P::RuleIf_stmt:
        return if_stmt(static_cast<P::If_stmtContext*>(c));
      case P::RuleWhile_stmt:
        return while_stmt(static_cast<P::While_stmtContext*>(c));
      case P::RuleFor_stmt:
        return for_stmt(static_cast<P::For_stmtContext*>(c));
      case P::RuleWith_stmt:
        return with_stmt(static_cast<P::With_stmtContext*>(c));
      case P::RuleFuncdef:
        return funcdef(static_cast<P::FuncdefContext*>(c), {});
      default:
        return decorated(static_cast<P::DecoratedContext*>(c));
    }
  }

  // block : simple_stmts | NEWLINE INDENT stmt+ DEDENT ;
  void block(P::BlockContext* ctx, ast::Body& out) {
    if (P::Simple_stmtsContext* s = ctx->simple_stmts()) return simple_stmts(s, out);
    for (P::StmtContext* s : ctx->stmt()) stmt(s, out);
  }

  // if_stmt : IF test COLON block elif_clause* else_clause? ;
  // elif_clause : ELIF test COLON block ;   else_clause : ELSE COLON block ;
  ast::StmtPtr if_stmt(P::If_stmtContext* ctx) {
    auto root = std::make_unique<ast::If>(range(ctx->IF(), ctx->COLON()));
    root->cond = exprs_.build(ctx->test());
    block(ctx->block(), root->body);
    ast::If* tail = root.get();
    for (P::Elif_clauseContext* e : ctx->elif_clause()) {
      auto next = std::make_unique<ast::If>(range(e->ELIF(), e->COLON()));
      next->cond = exprs_.build(e->test());
      block(e->block(), next->body);
      ast::If* n = next.get();
      tail->orelse.push_back(std::move(next));
      tail = n;
    }
    if (P::Else_clauseContext* e = ctx->else_clause()) block(e->block(), tail->orelse);
    return root;
  }

  // while_stmt : WHILE test COLON block else_clause? ;
  ast::StmtPtr while_stmt(P::While_stmtContext* ctx) {
    if (P::Else_clauseContext* e = ctx->else_clause()) {
      compile_error(range(e->ELSE()), "`while ... else` is not supported in TSL");
    }
    auto s = std::make_unique<ast::While>(range(ctx->WHILE(), ctx->COLON()));
    s->cond = exprs_.build(ctx->test());
    block(ctx->block(), s->body);
    return s;
  }

  // for_stmt : FOR exprlist IN testlist COLON block else_clause? ;
  ast::StmtPtr for_stmt(P::For_stmtContext* ctx) {
    if (P::Else_clauseContext* e = ctx->else_clause()) {
      compile_error(range(e->ELSE()), "`for ... else` is not supported in TSL");
    }
    auto s = std::make_unique<ast::For>(range(ctx->FOR(), ctx->COLON()));
    s->target = exprs_.build(ctx->exprlist());
    exprs_.check_target(*s->target);
    s->iter = exprs_.build(ctx->testlist());
    block(ctx->block(), s->body);
    return s;
  }

  // with_stmt : WITH with_item ( COMMA with_item )* COLON block ;
  // with_item : test ( AS factor )? ;
  ast::StmtPtr with_stmt(P::With_stmtContext* ctx) {
    auto s = std::make_unique<ast::With>(range(ctx->WITH(), ctx->COLON()));
    for (P::With_itemContext* item : ctx->with_item()) {
      ast::WithItem w;
      w.context = exprs_.build(item->test());
      if (P::FactorContext* t = item->factor()) {
        w.target = exprs_.build(t);
        exprs_.check_target(*w.target);
      }
      s->items.push_back(std::move(w));
    }
    block(ctx->block(), s->body);
    return s;
  }

  // decorated : decorator+ funcdef ;   decorator : AT test NEWLINE ;
  ast::StmtPtr decorated(P::DecoratedContext* ctx) {
    std::vector<ast::ExprPtr> decorators;
    for (P::DecoratorContext* d : ctx->decorator()) decorators.push_back(exprs_.build(d->test()));
    return funcdef(ctx->funcdef(), std::move(decorators));
  }

  // funcdef : DEF NAME parameters ( ARROW test )? COLON block ;
  // parameters : OPEN_PAREN ( param ( COMMA param )* COMMA? )? CLOSE_PAREN ;
  // param : NAME ( COLON test )? ( ASSIGN test )? ;
  ast::StmtPtr funcdef(P::FuncdefContext* ctx, std::vector<ast::ExprPtr> decorators) {
    auto f = std::make_unique<ast::FunctionDef>(range(ctx->DEF(), ctx->COLON()));
    f->name = ctx->NAME()->getText();
    f->name_range = range(ctx->NAME());
    f->decorators = std::move(decorators);
    for (P::ParamContext* p : ctx->parameters()->param()) {
      ast::Param param;
      param.range = range(p);
      param.name = p->NAME()->getText();
      // The annotation follows COLON, the default follows ASSIGN.
      for (size_t i = 1; i + 1 < p->children.size(); i += 2) {
        ast::ExprPtr e = exprs_.build(rule(p->children[i + 1]));
        (token_type(p->children[i]) == P::COLON ? param.annotation : param.default_value) =
            std::move(e);
      }
      f->params.push_back(std::move(param));
    }
    if (P::TestContext* r = ctx->test()) f->returns = exprs_.build(r);
    block(ctx->block(), f->body);
    return f;
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
