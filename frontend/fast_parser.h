// Internal to the parser: the fast path of Note [Two parsers], a hand-written
// recursive-descent parser that builds the AST straight from the token pass's tokens
// and leaves every text it does not fully accept to the ANTLR parser.
#pragma once

#include <optional>

#include "frontend/ast.h"
#include "frontend/lexer.h"

namespace tsl::parse_detail {

// Note [Two parsers]
// ANTLR's C++ runtime spends most of a parse on its own bookkeeping (a context object
// per rule invocation, dynamic_casts, shared_ptrs, the prediction DFA), several times
// what the work needs: it was half of the compile latency of issue 6's 300-line
// function. So parse_module and parse_expression first run a recursive-descent parser
// of the same grammar (grammar/TSLParser.g4) that builds the AST directly, with the
// same nodes and source ranges as the ANTLR parse tree plus ast_builder.cpp would.
// It gives up (returns nullopt) at the first thing it does not accept: a syntax
// error, a construct TSL rejects, a literal that does not decode, an expression too
// deep. The ANTLR parser then parses the whole text again and reports the error
// exactly as before (the first syntax error of the file, then the builder's errors in
// order), so every message and location users see comes from one place. The fast
// path must never accept a text the ANTLR path rejects, nor build a different AST:
// tests/frontend/fast_parser_test.cpp compares the two on every script and example.

// The statements of a file (file_input), or nullopt to leave the text to ANTLR.
std::optional<ast::Body> fast_parse_file(const SourcePtr& source, const TokenizedText& text);
// One expression or tuple (eval_input), or nullopt to leave the text to ANTLR.
std::optional<ast::ExprPtr> fast_parse_eval(const SourcePtr& source, const TokenizedText& text);

// parse_module with the ANTLR parser only (no fast path): for the tests that compare
// the two paths.
ast::Module parse_module_antlr(SourcePtr source);

}  // namespace tsl::parse_detail
