// The lexer of the IR text format: tokens with line and column, strings decoded as
// Python reads them, graph names read raw, `# line:col` comments kept on their line.
#include "ir/ir_lexer.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace tsl::ir_text {
namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

class Lexer {
 public:
  Lexer(std::string_view text, SourcePtr source) : text_(text), source_(std::move(source)) {
    if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;  // UTF-8 BOM
  }

  std::vector<Token> run() {
    for (;;) {
      skip_space_and_comments();
      if (pos_ >= text_.size()) break;
      lex_token();
    }
    tokens_.push_back(start(Tok::End));
    return std::move(tokens_);
  }

 private:
  char peek(size_t k = 0) const { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; }

  void advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i) {
      char c = text_[pos_++];
      if (c == '\n') {
        ++line_;
        col_ = 0;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++col_;  // columns count code points, not bytes
      }
    }
  }

  Token start(Tok kind) const { return Token{kind, "", line_, col_, col_, 0, 0}; }
  void finish(Token t) {
    t.end_col = std::max(col_, t.col + 1);
    tokens_.push_back(std::move(t));
  }

  [[noreturn]] void fail(const std::string& message) const {
    compile_error(SourceRange{source_, line_, col_, line_, col_ + 1}, message);
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance();
      } else if (c == '#') {
        comment();
      } else {
        return;
      }
    }
  }

  // A comment runs to the end of the line. `# 12:5` right after a token on the same
  // line is the source position the printer's with_lines option writes.
  void comment() {
    uint32_t line = line_;
    size_t begin = pos_ + 1;
    while (pos_ < text_.size() && peek() != '\n') advance();
    std::string_view body = text_.substr(begin, pos_ - begin);
    while (!body.empty() && (body.front() == ' ' || body.front() == '\t')) body.remove_prefix(1);
    while (!body.empty() && (body.back() == ' ' || body.back() == '\r')) body.remove_suffix(1);
    size_t colon = body.find(':');
    if (colon == std::string_view::npos || tokens_.empty() || tokens_.back().line != line) return;
    uint32_t l = 0, c = 0;
    auto a = std::from_chars(body.data(), body.data() + colon, l);
    auto b = std::from_chars(body.data() + colon + 1, body.data() + body.size(), c);
    bool whole = a.ptr == body.data() + colon && b.ptr == body.data() + body.size();
    if (a.ec != std::errc() || b.ec != std::errc() || !whole || l == 0 || c == 0) return;
    tokens_.back().note_line = l;
    tokens_.back().note_col = c;
  }

  void lex_token() {
    char c = peek();
    if (is_ident_start(c)) return identifier();
    if (c == '%') return value_name();
    if (is_digit(c) || (c == '-' && (is_digit(peek(1)) || text_.substr(pos_, 4) == "-inf")))
      return number();
    if (c == '\'' || c == '"') return string_literal();
    if (c == '-' && peek(1) == '>') return punct(Tok::Arrow, 2);
    if (text_.substr(pos_, 3) == "...") return punct(Tok::Ellipsis, 3);
    switch (c) {
      case '(':
        return punct(Tok::LParen, 1);
      case ')':
        return punct(Tok::RParen, 1);
      case '[':
        return punct(Tok::LBracket, 1);
      case ']':
        return punct(Tok::RBracket, 1);
      case ',':
        return punct(Tok::Comma, 1);
      case ':':
        return punct(Tok::Colon, 1);
      case '=':
        return punct(Tok::Equals, 1);
      case '?':  // the printer's "no type"; the parser reports it
        return punct(Tok::Ident, 1);
      default:
        fail(str("unexpected character '", c, "'"));
    }
  }

  void punct(Tok kind, size_t n) {
    Token t = start(kind);
    t.text = std::string(text_.substr(pos_, n));
    advance(n);
    finish(std::move(t));
  }

  void identifier() {
    Token t = start(Tok::Ident);
    size_t begin = pos_;
    bool line_start = tokens_.empty() || tokens_.back().line != line_;
    while (is_ident_char(peek())) advance();
    t.text = std::string(text_.substr(begin, pos_ - begin));
    bool is_graph = t.text == "graph" && line_start;
    finish(std::move(t));
    if (is_graph && peek() == ' ') graph_name();
  }

  // `graph NAME(%a : T, ...):`: the name is everything up to the parameter list, found
  // by matching the last ')' of the line backwards, so names like `grad(f)` need no
  // quoting.
  void graph_name() {
    size_t eol = text_.find('\n', pos_);
    if (eol == std::string_view::npos) eol = text_.size();
    std::string_view line = text_.substr(pos_, eol - pos_);
    size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (line.size() < 3 || line.back() != ':' || line[line.size() - 2] != ')') return;
    int depth = 0;
    size_t open = std::string_view::npos;
    for (size_t i = line.size() - 1; i-- > 0;) {
      if (line[i] == ')') {
        ++depth;
      } else if (line[i] == '(' && --depth == 0) {
        open = i;
        break;
      }
    }
    if (open == std::string_view::npos) return;
    size_t skip = 0;
    while (skip < open && line[skip] == ' ') ++skip;
    if (skip == open) return;  // `graph (...)`: no name
    advance(skip);
    Token t = start(Tok::GraphName);
    t.text = std::string(line.substr(skip, open - skip));
    while (!t.text.empty() && t.text.back() == ' ') t.text.pop_back();
    advance(open - skip);
    finish(std::move(t));
  }

  void value_name() {
    Token t = start(Tok::Value);
    advance();
    size_t begin = pos_;
    while (is_ident_char(peek())) advance();
    if (pos_ == begin) fail("expected a value name after '%'");
    t.text = std::string(text_.substr(begin, pos_ - begin));
    finish(std::move(t));
  }

  void number() {
    Token t = start(Tok::Int);
    size_t begin = pos_;
    if (peek() == '-') advance();
    if (text_.substr(pos_, 3) == "inf") {
      advance(3);
      t.kind = Tok::Float;
    } else {
      while (is_digit(peek())) advance();
      if (peek() == '.') {
        t.kind = Tok::Float;
        advance();
        while (is_digit(peek())) advance();
      }
      if ((peek() == 'e' || peek() == 'E') &&
          (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
        t.kind = Tok::Float;
        advance(2);
        while (is_digit(peek())) advance();
      }
    }
    t.text = std::string(text_.substr(begin, pos_ - begin));
    finish(std::move(t));
  }

  // Python string literals as IValue::repr writes them: \\ \n \t \r \' \" escapes.
  void string_literal() {
    Token t = start(Tok::String);
    char quote = peek();
    advance();
    for (;;) {
      char c = peek();
      if (pos_ >= text_.size() || c == '\n') {
        compile_error(SourceRange{source_, t.line, t.col, t.line, t.col + 1},
                      "unterminated string literal");
      }
      if (c == quote) break;
      if (c != '\\') {
        t.text += c;
        advance();
        continue;
      }
      advance();
      char e = peek();
      switch (e) {
        case 'n':
          t.text += '\n';
          break;
        case 't':
          t.text += '\t';
          break;
        case 'r':
          t.text += '\r';
          break;
        case '\\':
        case '\'':
        case '"':
          t.text += e;
          break;
        default:
          fail(str("unknown escape sequence '\\", e, "' in a string"));
      }
      advance();
    }
    advance();
    finish(std::move(t));
  }

  std::string_view text_;
  SourcePtr source_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t col_ = 0;
  std::vector<Token> tokens_;
};

}  // namespace

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

std::vector<Token> lex(std::string_view text, SourcePtr source) {
  return Lexer(text, std::move(source)).run();
}

}  // namespace tsl::ir_text
