// The scanner (Note [The scanner] in scanner.h): grammar/TSLLexer.g4's rules written
// out by hand, longest match first and ties to the earlier rule, over UTF-8 bytes with
// code-point lines, columns and indexes.
#include "frontend/scanner.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "TSLLexer.h"
#include "antlr4-runtime.h"

namespace tsl {
namespace {

using L = grammar::TSLLexer;

struct CodeRange {
  char32_t first, last;
};
#include "frontend/unicode_identifiers.inc"

bool in_ranges(const CodeRange* begin, const CodeRange* end, char32_t c) {
  const CodeRange* it =
      std::upper_bound(begin, end, c, [](char32_t v, const CodeRange& r) { return v < r.first; });
  return it != begin && c <= (it - 1)->last;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
// [0-9a-zA-Z_], the tail of INVALID_NUMBER.
bool is_word(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }
bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The code point at `i` of valid UTF-8 and its length in bytes.
char32_t decode(std::string_view s, size_t i, size_t* bytes) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  if (c < 0x80) return *bytes = 1, c;
  if ((c & 0xE0) == 0xC0) return *bytes = 2, ((c & 0x1Fu) << 6) | (b(1) & 0x3Fu);
  if ((c & 0xF0) == 0xE0)
    return *bytes = 3, ((c & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
  return *bytes = 4,
         ((c & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
}

// The keywords, which win a tie with NAME because they come first in the grammar.
size_t keyword_type(std::string_view w) {
  static constexpr std::pair<std::string_view, size_t> kKeywords[] = {
      {"False", L::FALSE},
      {"None", L::NONE},
      {"True", L::TRUE},
      {"and", L::AND},
      {"as", L::AS},
      {"assert", L::ASSERT},
      {"break", L::BREAK},
      {"continue", L::CONTINUE},
      {"def", L::DEF},
      {"elif", L::ELIF},
      {"else", L::ELSE},
      {"for", L::FOR},
      {"from", L::FROM},
      {"if", L::IF},
      {"import", L::IMPORT},
      {"in", L::IN},
      {"is", L::IS},
      {"not", L::NOT},
      {"or", L::OR},
      {"pass", L::PASS},
      {"raise", L::RAISE},
      {"return", L::RETURN},
      {"while", L::WHILE},
      {"with", L::WITH},
      {"async", L::ASYNC},
      {"await", L::AWAIT},
      {"class", L::CLASS},
      {"del", L::DEL},
      {"except", L::EXCEPT},
      {"finally", L::FINALLY},
      {"global", L::GLOBAL},
      {"lambda", L::LAMBDA},
      {"nonlocal", L::NONLOCAL},
      {"try", L::TRY},
      {"yield", L::YIELD},
  };
  if (w.size() > 8) return L::NAME;
  for (const auto& [k, type] : kKeywords) {
    if (k[0] == w[0] && k == w) return type;
  }
  return L::NAME;
}

// The operators and delimiters, longest first (ELLIPSIS and DOT are numbers' business).
struct Operator {
  std::string_view text;
  size_t type;
};
constexpr Operator kOperators[] = {
    {"**=", L::POWER_ASSIGN},
    {"//=", L::IDIV_ASSIGN},
    {"<<=", L::LEFT_SHIFT_ASSIGN},
    {">>=", L::RIGHT_SHIFT_ASSIGN},
    {"**", L::POWER},
    {"//", L::IDIV},
    {"<<", L::LEFT_SHIFT},
    {">>", L::RIGHT_SHIFT},
    {"==", L::EQUALS},
    {">=", L::GT_EQ},
    {"<=", L::LT_EQ},
    {"!=", L::NOT_EQ},
    {"->", L::ARROW},
    {":=", L::WALRUS},
    {"+=", L::ADD_ASSIGN},
    {"-=", L::SUB_ASSIGN},
    {"*=", L::MULT_ASSIGN},
    {"@=", L::AT_ASSIGN},
    {"/=", L::DIV_ASSIGN},
    {"%=", L::MOD_ASSIGN},
    {"&=", L::AND_ASSIGN},
    {"|=", L::OR_ASSIGN},
    {"^=", L::XOR_ASSIGN},
    {"*", L::STAR},
    {"(", L::OPEN_PAREN},
    {")", L::CLOSE_PAREN},
    {",", L::COMMA},
    {":", L::COLON},
    {";", L::SEMI},
    {"=", L::ASSIGN},
    {"[", L::OPEN_BRACK},
    {"]", L::CLOSE_BRACK},
    {"|", L::OR_OP},
    {"^", L::XOR},
    {"&", L::AND_OP},
    {"+", L::ADD},
    {"-", L::MINUS},
    {"/", L::DIV},
    {"%", L::MOD},
    {"~", L::NOT_OP},
    {"{", L::OPEN_BRACE},
    {"}", L::CLOSE_BRACE},
    {"<", L::LESS_THAN},
    {">", L::GREATER_THAN},
    {"@", L::AT},
};

// STRING_PREFIX : [rRuUbBfF] | [fF] [rR] | [rR] [fF] | [bB] [rR] | [rR] [bB] ;
bool is_prefix(std::string_view p) {
  auto in = [](char c, const char* set) { return c != '\0' && std::strchr(set, c) != nullptr; };
  if (p.size() == 1) return in(p[0], "rRuUbBfF");
  if (p.size() != 2) return false;
  return (in(p[0], "fF") && in(p[1], "rR")) || (in(p[0], "rR") && in(p[1], "fFbB")) ||
         (in(p[0], "bB") && in(p[1], "rR"));
}

// The number rules, each giving the length of its longest match at `p` (0: none).
class Numbers {
 public:
  explicit Numbers(std::string_view s) : s_(s) {}

  // DIGIT_PART : [0-9] ( '_'? [0-9] )* ;
  size_t digit_part(size_t p) const {
    if (!digit(p)) return 0;
    size_t i = p + 1;
    for (;;) {
      if (digit(i)) {
        ++i;
      } else if (at(i) == '_' && digit(i + 1)) {
        i += 2;
      } else {
        return i - p;
      }
    }
  }
  // POINT_FLOAT : DIGIT_PART? '.' DIGIT_PART | DIGIT_PART '.' ;
  size_t point_float(size_t p) const {
    size_t a = digit_part(p);
    if (at(p + a) != '.') return 0;
    size_t b = digit_part(p + a + 1);
    return b ? a + 1 + b : a ? a + 1 : 0;
  }
  // [eE] [+-]? DIGIT_PART, the tail of EXPONENT_FLOAT.
  size_t exponent(size_t q) const {
    if (at(q) != 'e' && at(q) != 'E') return 0;
    size_t r = q + 1 + (at(q + 1) == '+' || at(q + 1) == '-');
    size_t d = digit_part(r);
    return d ? r + d - q : 0;
  }
  // FLOAT_NUMBER : POINT_FLOAT | EXPONENT_FLOAT ;
  // EXPONENT_FLOAT : ( DIGIT_PART | POINT_FLOAT ) [eE] [+-]? DIGIT_PART ;
  size_t float_number(size_t p) const {
    size_t best = point_float(p);
    for (size_t base : {digit_part(p), point_float(p)}) {
      size_t e = base ? exponent(p + base) : 0;
      if (e) best = std::max(best, base + e);
    }
    return best;
  }
  // DECIMAL_INTEGER : [1-9] ( '_'? [0-9] )* | '0' ( '_'? '0' )* ;
  size_t decimal(size_t p) const {
    if (at(p) != '0') return at(p) >= '1' && at(p) <= '9' ? digit_part(p) : 0;
    size_t i = p + 1;
    for (;;) {
      if (at(i) == '0') {
        ++i;
      } else if (at(i) == '_' && at(i + 1) == '0') {
        i += 2;
      } else {
        return i - p;
      }
    }
  }
  // HEX_INTEGER, OCT_INTEGER, BIN_INTEGER : '0' [xX] ( '_'? DIGIT )+ and the like.
  template <typename Digit>
  size_t radix(size_t p, char letter, Digit ok) const {
    if (at(p) != '0' || (at(p + 1) != letter && at(p + 1) != letter - 32)) return 0;
    size_t i = p + 2;
    for (;;) {
      if (ok(at(i))) {
        ++i;
      } else if (at(i) == '_' && ok(at(i + 1))) {
        i += 2;
      } else {
        return i > p + 2 ? i - p : 0;
      }
    }
  }
  // INVALID_NUMBER : [0-9] [0-9a-zA-Z_]* ( '.' [0-9a-zA-Z_]* )? | '.' [0-9] [0-9a-zA-Z_]* ;
  size_t invalid(size_t p) const {
    size_t i;
    if (digit(p)) {
      i = word_end(p + 1);
      if (at(i) == '.') i = word_end(i + 1);
    } else if (at(p) == '.' && digit(p + 1)) {
      i = word_end(p + 2);
    } else {
      return 0;
    }
    return i - p;
  }

 private:
  std::string_view s_;
  char at(size_t i) const { return i < s_.size() ? s_[i] : '\0'; }
  bool digit(size_t i) const { return is_digit(at(i)); }
  size_t word_end(size_t i) const {
    while (is_word(at(i))) ++i;
    return i;
  }
};

}  // namespace

bool is_id_start(char32_t c) {
  if (c < 0x80) return c == '_' || is_alpha(static_cast<char>(c));
  return in_ranges(std::begin(kIdStart), std::end(kIdStart), c);
}

bool is_id_continue(char32_t c) {
  if (c < 0x80) return is_word(static_cast<char>(c));
  return in_ranges(std::begin(kIdContinue), std::end(kIdContinue), c);
}

Scanner::Scanner(std::string_view text) : text_(text) {
  for (char c : text) size_ += !is_continuation(c);
}

Scanner::~Scanner() = default;

ScannedToken Scanner::next_raw() {
  if (pos_ >= text_.size()) return {antlr4::Token::EOF, "<EOF>", line_, col_, index_, index_ - 1};
  Match m = match();
  ScannedToken raw{m.type, text_.substr(pos_, m.bytes), line_, col_, index_, 0};
  size_t points = 0;
  for (char c : raw.text) {
    if (c == '\n') {
      ++line_;
      col_ = 0;
    } else if (!is_continuation(c)) {
      ++col_;
    }
    points += !is_continuation(c);
  }
  raw.stop = index_ + points - 1;
  index_ += points;
  pos_ += m.bytes;
  return raw;
}

std::unique_ptr<antlr4::CommonToken> make_antlr_token(const ScannedToken& raw) {
  auto t = std::make_unique<antlr4::CommonToken>(raw.type, std::string(raw.text));
  t->setLine(raw.line);
  t->setCharPositionInLine(raw.col);
  t->setStartIndex(raw.start);
  t->setStopIndex(raw.stop);
  return t;
}

// The rule that matches longest at pos_ (text remains).
Scanner::Match Scanner::match() const {
  char c = text_[pos_];
  switch (c) {
    case '\n':
      return {L::NEWLINE, 1};
    case ' ':
    case '\t':
    case '\f': {
      size_t end = text_.find_first_not_of(" \t\f", pos_);
      return {L::WS, (end == std::string_view::npos ? text_.size() : end) - pos_};
    }
    case '#': {
      size_t end = text_.find('\n', pos_);
      return {L::COMMENT, (end == std::string_view::npos ? text_.size() : end) - pos_};
    }
    case '\\':
      return pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n' ? Match{L::LINE_JOIN, 2}
                                                                : Match{L::BACKSLASH, 1};
    case '\'':
    case '"':
      return string_literal(0);
    case '.':
      return number_or_dot();
    default:
      break;
  }
  if (is_digit(c)) return number_or_dot();
  if (static_cast<unsigned char>(c) >= 0x80 || is_alpha(c) || c == '_') return word();
  return operator_token();
}

// NAME or a keyword, unless a string prefix and a quote start here (STRING is longer).
Scanner::Match Scanner::word() const {
  for (size_t n : {2, 1}) {
    if (pos_ + n < text_.size() && (text_[pos_ + n] == '\'' || text_[pos_ + n] == '"') &&
        is_prefix(text_.substr(pos_, n))) {
      return string_literal(n);
    }
  }
  size_t bytes;
  char32_t first = decode(text_, pos_, &bytes);
  if (!is_id_start(first)) return {L::ERROR_CHAR, bytes};
  size_t i = pos_ + bytes;
  while (i < text_.size()) {
    char32_t c = decode(text_, i, &bytes);
    if (!is_id_continue(c)) break;
    i += bytes;
  }
  bool ascii = std::all_of(text_.begin() + pos_, text_.begin() + i,
                           [](char ch) { return static_cast<unsigned char>(ch) < 0x80; });
  size_t type = ascii ? keyword_type(text_.substr(pos_, i - pos_)) : size_t{L::NAME};
  return {type, i - pos_};
}

// STRING, or UNTERMINATED_STRING / UNTERMINATED_LONG_STRING, after `prefix` letters.
// A backslash escapes any character (a line end too); a short string stops at a line
// end, a long one runs to its first closing triple quote or to the end of the text.
Scanner::Match Scanner::string_literal(size_t prefix) const {
  size_t open = pos_ + prefix, n = text_.size();
  char q = text_[open];
  bool long_string = open + 2 < n && text_[open + 1] == q && text_[open + 2] == q;
  size_t i = open + (long_string ? 3 : 1);
  while (i < n) {
    char c = text_[i];
    if (c == '\\') {
      if (i + 1 >= n) break;  // a lone backslash at the end: not part of a short string
      i += 2;
      continue;
    }
    if (long_string) {
      if (c == q && i + 2 < n && text_[i + 1] == q && text_[i + 2] == q)
        return {L::STRING, i + 3 - pos_};
    } else {
      if (c == q) return {L::STRING, i + 1 - pos_};
      if (c == '\n') return {L::UNTERMINATED_STRING, i - pos_};
    }
    ++i;
  }
  if (long_string) return {L::UNTERMINATED_LONG_STRING, n - pos_};
  return {L::UNTERMINATED_STRING, i - pos_};
}

// A token starting with a digit or '.': the longest of the number rules, ELLIPSIS and
// DOT, ties to the rule listed first in the grammar.
Scanner::Match Scanner::number_or_dot() const {
  Numbers num(text_);
  size_t p = pos_;
  bool dots = text_.compare(p, 3, "...") == 0;
  const std::array<Match, 8> candidates = {{
      {L::FLOAT_NUMBER, num.float_number(p)},
      {L::DECIMAL_INTEGER, num.decimal(p)},
      {L::HEX_INTEGER, num.radix(p, 'x',
                                 [](char d) {
                                   return is_digit(d) || (d >= 'a' && d <= 'f') ||
                                          (d >= 'A' && d <= 'F');
                                 })},
      {L::OCT_INTEGER, num.radix(p, 'o', [](char d) { return d >= '0' && d <= '7'; })},
      {L::BIN_INTEGER, num.radix(p, 'b', [](char d) { return d == '0' || d == '1'; })},
      {L::INVALID_NUMBER, num.invalid(p)},
      {L::ELLIPSIS, dots ? size_t{3} : 0},
      {L::DOT, text_[p] == '.' ? size_t{1} : 0},
  }};
  Match best{0, 0};
  for (const Match& m : candidates) {
    if (m.bytes > best.bytes) best = m;
  }
  return best;
}

// An operator or delimiter, else ERROR_CHAR (one code point).
Scanner::Match Scanner::operator_token() const {
  std::string_view rest = text_.substr(pos_, 3);
  for (const Operator& op : kOperators) {
    if (op.text[0] == rest[0] && rest.starts_with(op.text)) return {op.type, op.text.size()};
  }
  size_t bytes;
  decode(text_, pos_, &bytes);
  return {L::ERROR_CHAR, bytes};
}

}  // namespace tsl
