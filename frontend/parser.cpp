// Source text to AST: the token pass (lexer.h) feeds the ANTLR parser of
// grammar/TSLParser.g4 (SLL prediction first, full LL only when SLL fails), whose parse
// tree ast_builder.h turns into the AST; Python-like syntax error messages; and the
// REPL's test for whether an input is complete. See Note [One parser].
#include "frontend/parser.h"

#include <pthread.h>

#include <atomic>

#include "TSLLexer.h"
#include "antlr4-runtime.h"
#include "frontend/ast_builder.h"
#include "frontend/lexer.h"
#include "frontend/token_stream.h"

namespace tsl {

// Note [One parser]
// Every text (a file, `-c` code, REPL input, an f-string field, `:type EXPR`) goes
// through one parser, the one ANTLR generates from grammar/TSLParser.g4:
//  - Tokens: the token pass (Note [The token pass]) turns the scanner's raw tokens
//    into the parser's tokens (NEWLINE, INDENT, DEDENT, no whitespace) and reports
//    bracket, indentation and lexical errors; TokenList (token_stream.h) is the
//    parser's token stream over them.
//  - Prediction: a parse first runs with SLL prediction and BailErrorStrategy, which
//    gives up at the first syntax error. The grammar is written so that SLL decides
//    every valid program (tests/frontend/parser_ast_test.cpp parses every repository
//    program and counts the parses that needed more: none). Only a text with a syntax
//    error is parsed again, with full LL prediction and ThrowingErrorStrategy, whose
//    messages (SyntaxErrors below) need LL's exact expected-token sets.
//  - The DFA: the generated parser keeps its prediction DFA and context cache in
//    static members shared by all its instances, so the first parse of a process
//    fills in the states it needs (its warm-up) and later parses reuse them; nothing
//    clears them. DfaFastPathSimulator (grammar/parser_base.h) answers SLL predictions
//    the DFA already holds with a walk along its edges, cached per thread.
//  - Speed: a parse costs about one context object per rule entered, so the grammar
//    nests as little as the language allows (an operand is `expr` -> `power`), and
//    the generated parser's base class, ParserBase (grammar/parser_base.h), enters and
//    leaves rules without ANTLR's listeners, dynamic_casts and std::functions and takes
//    the tree's nodes from an arena. The 300-line benchmark of bench/README.md item 5
//    parses in about 2.5x the time of the hand-written parser this one replaced (0.9
//    against 0.36 ms, 3.4 ms before this design; see bench/README.md).
//  - Nesting: ParserBase bounds the rule invocations open at once and checks the
//    thread's stack at each rule entry, so that pathological input is a located
//    error, not a crash; the token pass bounds brackets and indentation first, the
//    AST builder the depth of expressions (docs/language.md, "Limits").
//  - The AST: after the parse, one pass over the parse tree (ast_builder.cpp for
//    statements, expr_builder.cpp for expressions) builds the AST of ast.h, and
//    reports what parses but is not TSL (`while ... else`, `1 = x`, ...). A syntax
//    error anywhere in the text is reported before those, as the parse comes first.

namespace {

using antlr4::Token;
using P = grammar::TSLParser;

// ---- Nesting and stack guard -------------------------------------------------------------------

// The lowest address this thread's stack may reach before parsing gives up: the stack's
// end plus a reserve for the code that runs after the error is thrown.
uintptr_t stack_floor() {
  thread_local uintptr_t floor = [] {
    constexpr size_t kReserve = size_t{1} << 20;
    pthread_attr_t attr;
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &addr, &size);
      pthread_attr_destroy(&attr);
    }
    uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    if (!addr || size < 2 * kReserve)
      return here > (size_t{4} << 20) ? here - (size_t{4} << 20) : uintptr_t{0};
    return reinterpret_cast<uintptr_t>(addr) + kReserve;
  }();
  return floor;
}

// Bounds the nesting of grammar rules. Brackets and blocks are bounded by the token
// pass; this catches the rest (100,000 unary minus signs, `2**2**...`) early, before
// the recursion costs much time or stack. 200 nested brackets need about 3,500 levels.
constexpr size_t kMaxRuleDepth = 6000;

// The generated parser, whose rule entries (grammar/parser_base.h) stop a parse nested
// too deeply, at the token where it happens.
class GuardedParser : public P {
 public:
  GuardedParser(antlr4::TokenStream* input, SourcePtr source)
      : P(input), source_(std::move(source)) {
    max_depth_ = kMaxRuleDepth;
    stack_floor_ = stack_floor();
    use_dfa_fast_path();
  }

 private:
  SourcePtr source_;

  [[noreturn]] void nesting_exceeded() override {
    compile_error(token_range(source_, getCurrentToken()),
                  "expression too complex: nested too deeply");
  }
};

// ---- Syntax error messages ----------------------------------------------------------------

const char* unsupported_keyword(size_t type) {
  switch (type) {
    case P::LAMBDA:
      return "lambda";
    case P::CLASS:
      return "class";
    case P::TRY:
      return "try";
    case P::EXCEPT:
      return "except";
    case P::FINALLY:
      return "finally";
    case P::YIELD:
      return "yield";
    case P::ASYNC:
      return "async";
    case P::AWAIT:
      return "await";
    case P::DEL:
      return "del";
    case P::GLOBAL:
      return "global";
    case P::NONLOCAL:
      return "nonlocal";
    default:
      return nullptr;
  }
}

// "'if' statement" for the compound statement whose block is `block`.
std::string block_owner(antlr4::RuleContext* block) {
  auto* owner = block ? dynamic_cast<antlr4::RuleContext*>(block->parent) : nullptr;
  if (!owner) return "statement";
  switch (owner->getRuleIndex()) {
    case P::RuleIf_stmt:
      return "'if' statement";
    case P::RuleElif_clause:
      return "'elif' statement";
    case P::RuleElse_clause:
      return "'else' statement";
    case P::RuleWhile_stmt:
      return "'while' statement";
    case P::RuleFor_stmt:
      return "'for' statement";
    case P::RuleWith_stmt:
      return "'with' statement";
    case P::RuleFuncdef:
      return "function definition";
    default:
      return "statement";
  }
}

bool starts_expression(size_t t) {
  return t == P::NAME || t == P::STRING || t == P::DECIMAL_INTEGER || t == P::FLOAT_NUMBER ||
         t == P::HEX_INTEGER || t == P::OCT_INTEGER || t == P::BIN_INTEGER || t == P::NONE ||
         t == P::TRUE || t == P::FALSE || t == P::OPEN_PAREN || t == P::OPEN_BRACK ||
         t == P::OPEN_BRACE;
}
bool ends_expression(size_t t) {
  return t == P::NAME || t == P::STRING || t == P::DECIMAL_INTEGER || t == P::FLOAT_NUMBER ||
         t == P::HEX_INTEGER || t == P::OCT_INTEGER || t == P::BIN_INTEGER || t == P::NONE ||
         t == P::TRUE || t == P::FALSE || t == P::CLOSE_PAREN || t == P::CLOSE_BRACK ||
         t == P::CLOSE_BRACE;
}

class SyntaxErrors {
 public:
  SyntaxErrors(SourcePtr source, TokenList& tokens) : source_(std::move(source)), tokens_(tokens) {}

  [[noreturn]] void report(Token* offending, const antlr4::misc::IntervalSet& expected,
                           antlr4::RuleContext* ctx) {
    SourceRange at = token_range(source_, offending);
    size_t type = offending->getType();
    if (type == P::DEL) {
      compile_error(at, "`del` is not supported in TSL (remove a dict entry with d.pop(key))");
    }
    if (const char* kw = unsupported_keyword(type))
      compile_error(at, std::string("`") + kw + "` is not supported in TSL");
    if (type == P::WALRUS)
      compile_error(at, "assignment expressions (`:=`) are not supported in TSL");
    if (type == P::INDENT) compile_error(at, "unexpected indent");
    if (expected.contains(static_cast<size_t>(P::INDENT))) {
      auto* owner = ctx ? dynamic_cast<antlr4::ParserRuleContext*>(ctx->parent) : nullptr;
      size_t line = owner ? owner->getStart()->getLine() : offending->getLine();
      compile_error(at, "expected an indented block after " + block_owner(ctx) + " on line " +
                            std::to_string(line));
    }
    if (type == P::DEDENT) compile_error(at, "unindent does not match the block above");
    if (type == P::ASSIGN && !expected.contains(static_cast<size_t>(P::ASSIGN))) {
      compile_error(at, "invalid syntax. Maybe you meant '==' instead of '='?");
    }
    forgot_comma(offending);
    if (expected.size() == 1) {
      const char* what = expected_token(expected.getMinElement());
      if (what) compile_error(at, std::string("expected '") + what + "'");
    }
    compile_error(at, "invalid syntax");
  }

 private:
  SourcePtr source_;
  TokenList& tokens_;

  static const char* expected_token(ssize_t type) {
    switch (type) {
      case P::COLON:
        return ":";
      case P::CLOSE_PAREN:
        return ")";
      case P::CLOSE_BRACK:
        return "]";
      case P::CLOSE_BRACE:
        return "}";
      case P::OPEN_PAREN:
        return "(";
      case P::IN:
        return "in";
      case P::IMPORT:
        return "import";
      case P::ELSE:
        return "else";
      default:
        return nullptr;
    }
  }

  // `f(a b)`: two expressions side by side inside brackets.
  void forgot_comma(Token* offending) {
    size_t index = offending->getTokenIndex();
    if (index == 0 || !starts_expression(offending->getType())) return;
    Token* prev = tokens_.get(index - 1);
    if (!ends_expression(prev->getType())) return;
    int depth = 0;
    for (size_t i = 0; i < index; ++i) {
      size_t t = tokens_.get(i)->getType();
      depth += t == P::OPEN_PAREN || t == P::OPEN_BRACK || t == P::OPEN_BRACE;
      depth -= t == P::CLOSE_PAREN || t == P::CLOSE_BRACK || t == P::CLOSE_BRACE;
    }
    if (depth > 0) {
      compile_error(token_range(source_, prev, offending),
                    "invalid syntax. Perhaps you forgot a comma?");
    }
  }
};

// Turns the first syntax error into a compile error; never recovers.
class ThrowingErrorStrategy : public antlr4::DefaultErrorStrategy {
 public:
  explicit ThrowingErrorStrategy(SyntaxErrors& errors) : errors_(errors) {}
  void reportError(antlr4::Parser* parser, const antlr4::RecognitionException& e) override {
    errors_.report(e.getOffendingToken() ? e.getOffendingToken() : parser->getCurrentToken(),
                   e.getExpectedTokens(), e.getCtx());
  }
  Token* recoverInline(antlr4::Parser* parser) override {
    errors_.report(parser->getCurrentToken(), parser->getExpectedTokens(), parser->getContext());
  }
  void recover(antlr4::Parser*, std::exception_ptr) override {}
  void sync(antlr4::Parser*) override {}

 private:
  SyntaxErrors& errors_;
};

std::atomic<size_t> full_ll_parse_count{0};

// One parse of a token list (Note [One parser]): SLL prediction with bail-out first,
// then, on a syntax error, full LL with the error strategy for exact messages.
template <typename Result, typename Entry>
Result run_parser(const SourcePtr& source, const TokenizedText& text, Entry entry) {
  TokenList stream(text);
  GuardedParser parser(&stream, source);
  parser.removeErrorListeners();
  auto* sim = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  sim->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  try {
    return entry(parser);
  } catch (const antlr4::ParseCancellationException&) {
  }
  ++full_ll_parse_count;
  SyntaxErrors errors(source, stream);
  stream.seek(0);
  parser.reset();
  sim->setPredictionMode(antlr4::atn::PredictionMode::LL);
  parser.setErrorHandler(std::make_shared<ThrowingErrorStrategy>(errors));
  return entry(parser);
}

// file_input: the statements of a file.
ast::Module parse_file(const SourcePtr& source, const TokenizedText& text) {
  ast::Module m;
  m.source = source;
  m.body = run_parser<ast::Body>(source, text, [&](GuardedParser& p) {
    return parse_detail::build_file(p.file_input(), source);
  });
  return m;
}

// eval_input: one expression or tuple.
ast::ExprPtr parse_eval(const SourcePtr& source, const TokenizedText& tokens) {
  return run_parser<ast::ExprPtr>(source, tokens, [&](GuardedParser& p) {
    return parse_detail::build_eval(p.eval_input(), source);
  });
}

// Whether the last line of the text is blank: the REPL's end of a block.
bool ends_with_blank_line(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  size_t nl = text.rfind('\n');
  std::string_view last = nl == std::string_view::npos ? text : text.substr(nl + 1);
  return last.find_first_not_of(" \t\f") == std::string_view::npos;
}

}  // namespace

namespace parse_detail {

void check_stack(const SourcePtr& source, const Token* at) {
  uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (here < stack_floor()) {
    compile_error(at ? token_range(source, at) : SourceRange{},
                  "expression too complex: nested too deeply");
  }
}

ast::ExprPtr parse_fstring_field(const SourcePtr& source, const std::string& text,
                                 TextOrigin origin) {
  std::string prepared = prepare_text(source, text, origin);
  TokenizeOptions options;
  options.origin = origin;
  options.inside_brackets = true;
  TokenizedText tokens = tokenize(source, prepared, options);
  return parse_eval(source, tokens);
}

size_t full_ll_parses() { return full_ll_parse_count.load(); }

}  // namespace parse_detail

ast::Module parse_module(SourcePtr source) {
  std::string prepared = prepare_text(source, source->text(), {});
  return parse_file(source, tokenize(source, prepared, {}));
}

ast::ExprPtr parse_expression(SourcePtr source) {
  std::string prepared = prepare_text(source, source->text(), {});
  TokenizedText tokens = tokenize(source, prepared, {});
  return parse_eval(source, tokens);
}

InputStatus classify_input(std::string_view text) {
  auto source = std::make_shared<Source>("<input>", std::string(text));
  bool ended_early = false;
  try {
    std::string prepared = prepare_text(source, source->text(), {});
    TokenizeOptions options;
    options.ended_early = &ended_early;
    TokenizedText tokens = tokenize(source, prepared, options);
    // A block (or a header still waiting for one) ends at a blank line.
    if ((tokens.ends_inside_block || tokens.last_line_opens_block) &&
        !ends_with_blank_line(prepared)) {
      return InputStatus::Incomplete;
    }
    parse_file(source, tokens);
    return InputStatus::Complete;
  } catch (const SourceError&) {
    return ended_early ? InputStatus::Incomplete : InputStatus::Invalid;
  } catch (const std::exception&) {
    return InputStatus::Invalid;
  }
}

}  // namespace tsl
