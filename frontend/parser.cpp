// Source text to AST: the token pass (lexer.h), the hand-written fast path
// (fast_parser.h) and, for what it leaves, the ANTLR parser (SLL first, full LL only
// when SLL fails), Python-like syntax error messages, and the REPL's test for whether
// an input is complete.
#include "frontend/parser.h"

#include <pthread.h>

#include "TSLLexer.h"
#include "antlr4-runtime.h"
#include "frontend/ast_builder.h"
#include "frontend/fast_parser.h"
#include "frontend/lexer.h"

namespace tsl {
namespace {

using antlr4::Token;
using P = grammar::TSLParser;

// ---- Stack guard ------------------------------------------------------------------------------

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

class RuleDepthLimit : public antlr4::tree::ParseTreeListener {
 public:
  RuleDepthLimit(SourcePtr source, antlr4::Parser& parser)
      : source_(std::move(source)), parser_(parser) {}
  void enterEveryRule(antlr4::ParserRuleContext*) override {
    if (++depth_ > kMaxRuleDepth) {
      compile_error(token_range(source_, parser_.getCurrentToken()),
                    "expression too complex: nested too deeply");
    }
  }
  void exitEveryRule(antlr4::ParserRuleContext*) override { --depth_; }
  void visitTerminal(antlr4::tree::TerminalNode*) override {}
  void visitErrorNode(antlr4::tree::ErrorNode*) override {}
  void reset() { depth_ = 0; }

 private:
  SourcePtr source_;
  antlr4::Parser& parser_;
  size_t depth_ = 0;
};

// A generated parser whose every rule entry checks the rule depth and the stack.
class GuardedParser : public P {
 public:
  GuardedParser(antlr4::TokenStream* input, SourcePtr source)
      : P(input), source_(source), depth_limit_(std::move(source), *this) {
    addParseListener(&depth_limit_);
  }
  ~GuardedParser() override { removeParseListeners(); }
  void enterRule(antlr4::ParserRuleContext* ctx, size_t state, size_t rule_index) override {
    parse_detail::check_stack(source_, getCurrentToken());
    P::enterRule(ctx, state, rule_index);
  }
  void reset() override {
    P::reset();
    depth_limit_.reset();
  }

 private:
  SourcePtr source_;
  RuleDepthLimit depth_limit_;
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
  SyntaxErrors(SourcePtr source, antlr4::CommonTokenStream& tokens)
      : source_(std::move(source)), tokens_(tokens) {}

  [[noreturn]] void report(Token* offending, const antlr4::misc::IntervalSet& expected,
                           antlr4::RuleContext* ctx) {
    tokens_.fill();  // the parser has only fetched what it looked at
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
  antlr4::CommonTokenStream& tokens_;

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

// One parse of a token list: SLL prediction with bail-out first (fast, enough for
// almost every input), then full LL with the error strategy for exact messages.
template <typename Result, typename Entry>
Result run_parser(const SourcePtr& source, const TokenizedText& text, Entry entry) {
  antlr4::ListTokenSource token_source(text.antlr_tokens());
  antlr4::CommonTokenStream stream(&token_source);
  GuardedParser parser(&stream, source);
  parser.removeErrorListeners();
  auto* sim = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  sim->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  try {
    return entry(parser);
  } catch (const antlr4::ParseCancellationException&) {
  }
  SyntaxErrors errors(source, stream);
  stream.seek(0);
  parser.reset();
  sim->setPredictionMode(antlr4::atn::PredictionMode::LL);
  parser.setErrorHandler(std::make_shared<ThrowingErrorStrategy>(errors));
  return entry(parser);
}

// `fast`: try the hand-written parser first (Note [Two parsers]).
ast::Module parse_prepared(const SourcePtr& source, const std::string& prepared, bool* ended_early,
                           bool fast = true) {
  TokenizeOptions options;
  options.ended_early = ended_early;
  TokenizedText text = tokenize(source, prepared, options);
  ast::Module m;
  m.source = source;
  if (fast) {
    if (std::optional<ast::Body> body = parse_detail::fast_parse_file(source, text)) {
      m.body = std::move(*body);
      return m;
    }
  }
  m.body = run_parser<ast::Body>(source, text, [&](GuardedParser& p) {
    return parse_detail::build_file(p.file_input(), source);
  });
  return m;
}

// eval_input: the fast path, else the ANTLR parser.
ast::ExprPtr parse_eval(const SourcePtr& source, const TokenizedText& tokens) {
  if (std::optional<ast::ExprPtr> e = parse_detail::fast_parse_eval(source, tokens)) {
    return std::move(*e);
  }
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

ast::Module parse_module_antlr(SourcePtr source) {
  std::string prepared = prepare_text(source, source->text(), {});
  return parse_prepared(source, prepared, nullptr, false);
}

}  // namespace parse_detail

ast::Module parse_module(SourcePtr source) {
  std::string prepared = prepare_text(source, source->text(), {});
  return parse_prepared(source, prepared, nullptr);
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
    parse_prepared(source, prepared, &ended_early);
    return InputStatus::Complete;
  } catch (const SourceError&) {
    return ended_early ? InputStatus::Incomplete : InputStatus::Invalid;
  } catch (const std::exception&) {
    return InputStatus::Invalid;
  }
}

}  // namespace tsl
