// Internal to the parser (parser.cpp, ast_builder.cpp, literals.cpp): the ANTLR parse
// tree to AST builder, literal decoding, and the stack guard shared by both.
#pragma once

#include <string>
#include <vector>

#include "TSLParser.h"
#include "frontend/ast.h"
#include "frontend/lexer.h"

namespace tsl::parse_detail {

// The deepest expression tree the builder makes: deeper trees would overflow the stack
// of the recursive passes after the parser (emitter, destructors).
inline constexpr uint32_t kMaxExpressionDepth = 1000;

// file_input / eval_input to the AST. Throw compile errors (bad assignment targets,
// unsupported constructs, bad literals).
ast::Body build_file(grammar::TSLParser::File_inputContext* ctx, const SourcePtr& source);
ast::ExprPtr build_eval(grammar::TSLParser::Eval_inputContext* ctx, const SourcePtr& source);

// STRING+ (adjacent literals, joined) to a Str or FString expression.
ast::ExprPtr build_strings(const std::vector<antlr4::Token*>& strings, const SourcePtr& source);
// number : DECIMAL_INTEGER | HEX_INTEGER | OCT_INTEGER | BIN_INTEGER | FLOAT_NUMBER ;
// `negated`: the literal is the operand of a unary minus (so 9223372036854775808 fits).
ast::ExprPtr build_number(antlr4::Token* token, const SourcePtr& source, bool negated);

// Parse-tree helpers. Every rule of the grammar matches at least one token, so a node
// without children is a token: this avoids dynamic_cast (slow across the shared
// library), which the ANTLR accessors (ctx->test()) use on every child.
inline bool is_token(antlr4::tree::ParseTree* t) { return t->children.empty(); }
inline antlr4::tree::TerminalNode* terminal(antlr4::tree::ParseTree* t) {
  return is_token(t) ? static_cast<antlr4::tree::TerminalNode*>(t) : nullptr;
}
inline antlr4::ParserRuleContext* rule(antlr4::tree::ParseTree* t) {
  return is_token(t) ? nullptr : static_cast<antlr4::ParserRuleContext*>(t);
}
inline size_t token_type(antlr4::tree::ParseTree* t) {
  antlr4::tree::TerminalNode* n = terminal(t);
  return n ? n->getSymbol()->getType() : 0;
}
// The range from the first token of `a` to the last token of `b`.
SourceRange node_range(const SourcePtr& source, antlr4::tree::ParseTree* a,
                       antlr4::tree::ParseTree* b);

// The operator of a binary or augmented-assignment token (`+`, `+=` -> Add).
ast::BinOp binop_of_token(size_t type);
// What CPython calls an expression in "cannot assign to ..." ("literal", "function call").
const char* describe_for_assignment(const ast::Expr& e);

// The expression rules of the parse tree to AST expressions (expr_builder.cpp); the
// statement builder (ast_builder.cpp) uses one for every expression it meets.
class ExprBuilder {
 public:
  explicit ExprBuilder(SourcePtr source);
  ~ExprBuilder();
  // Any expression rule: test, expr, factor, atom, testlist, exprlist, ...
  ast::ExprPtr build(antlr4::ParserRuleContext* ctx);
  // A target of `=`, `for` or `as`: names, attributes, subscripts, tuples/lists of them.
  void check_target(const ast::Expr& e) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses the expression of an f-string replacement field (defined in parser.cpp).
ast::ExprPtr parse_fstring_field(const SourcePtr& source, const std::string& text,
                                 TextOrigin origin);

// How many parses of this process have needed full LL prediction (parser.cpp): every
// text with a syntax error, and no valid one (Note [One parser]).
size_t full_ll_parses();

// Throws "too deeply nested" at `at` when the thread's stack is nearly used up, so that
// pathological input (10,000 unary minus signs) is an error, not a crash.
void check_stack(const SourcePtr& source, const antlr4::Token* at);

}  // namespace tsl::parse_detail
