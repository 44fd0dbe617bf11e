// Literal tokens to AST values: integers and floats (with `_` separators and 0x/0o/0b
// prefixes), string escapes, adjacent-string joining, and f-strings, whose replacement
// fields are parsed as expressions with ranges inside the original source.
#include <charconv>
#include <cstdlib>

#include "frontend/ast_builder.h"
#include "ir/utf8.h"

namespace tsl::parse_detail {
namespace {

using antlr4::Token;
using P = grammar::TSLParser;

// Walks a token's text keeping the source line and column of the current byte.
class Cursor {
 public:
  Cursor(std::string_view text, uint32_t line, uint32_t col)
      : text_(text), line_(line), col_(col) {}
  // Moves to byte offset `to` (never backwards).
  void advance_to(size_t to) {
    for (; pos_ < to && pos_ < text_.size(); ++pos_) {
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '\n')
        ++line_, col_ = 0;
      else if ((c & 0xC0) != 0x80)
        ++col_;
    }
  }
  TextOrigin at(size_t offset) {
    advance_to(offset);
    return {line_, col_};
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_, col_;
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One string token, split into prefix flags and the text between the quotes.
struct StringToken {
  Token* token;
  bool raw = false, fstring = false;
  size_t body_start = 0;  // byte offset of the body in the token text
  size_t body_size = 0;
  std::string text;  // the whole token text
  std::string_view body() const { return std::string_view(text).substr(body_start, body_size); }
};

class StringDecoder {
 public:
  StringDecoder(const SourcePtr& source, const StringToken& s)
      : source_(source),
        s_(s),
        cursor_(s.text, static_cast<uint32_t>(s.token->getLine()),
                static_cast<uint32_t>(s.token->getCharPositionInLine())) {}

  // Decodes body[from, to) (escapes unless raw) and appends it to `out`.
  void decode(size_t from, size_t to, std::string& out) {
    std::string_view b = s_.body();
    for (size_t i = from; i < to; ++i) {
      if (b[i] != '\\' || s_.raw || i + 1 >= to) {
        out += b[i];
        continue;
      }
      i = escape(i, to, out);
    }
  }

  [[noreturn]] void fail_at(size_t from, size_t to, const std::string& message) {
    TextOrigin a = cursor_.at(s_.body_start + from);
    TextOrigin b = cursor_.at(s_.body_start + to);
    compile_error(SourceRange{source_, a.line, a.col, b.line, b.col}, message);
  }

  TextOrigin origin_of(size_t body_offset) { return cursor_.at(s_.body_start + body_offset); }

 private:
  const SourcePtr& source_;
  const StringToken& s_;
  Cursor cursor_;

  // Decodes the escape at body[i] ('\\'); returns the index of its last character.
  size_t escape(size_t i, size_t to, std::string& out) {
    std::string_view b = s_.body();
    char c = b[i + 1];
    switch (c) {
      case '\n':
        return i + 1;  // backslash-newline joins the lines
      case '\\':
        out += '\\';
        return i + 1;
      case '\'':
        out += '\'';
        return i + 1;
      case '"':
        out += '"';
        return i + 1;
      case 'a':
        out += '\a';
        return i + 1;
      case 'b':
        out += '\b';
        return i + 1;
      case 'f':
        out += '\f';
        return i + 1;
      case 'n':
        out += '\n';
        return i + 1;
      case 'r':
        out += '\r';
        return i + 1;
      case 't':
        out += '\t';
        return i + 1;
      case 'v':
        out += '\v';
        return i + 1;
      case 'x':
        return hex_escape(i, 2, "\\xXX", to, out);
      case 'u':
        return hex_escape(i, 4, "\\uXXXX", to, out);
      case 'U':
        return hex_escape(i, 8, "\\UXXXXXXXX", to, out);
      case 'N':
        fail_at(i, i + 2, "\\N{...} escapes are not supported in TSL");
      default:
        break;
    }
    if (c >= '0' && c <= '7') {
      uint32_t cp = 0;
      size_t k = i + 1;
      for (; k < to && k < i + 4 && b[k] >= '0' && b[k] <= '7'; ++k)
        cp = cp * 8 + static_cast<uint32_t>(b[k] - '0');
      append_utf8(out, cp);
      return k - 1;
    }
    out += '\\';  // an unknown escape keeps its backslash, as in Python
    return i;
  }

  size_t hex_escape(size_t i, size_t digits, const char* form, size_t to, std::string& out) {
    std::string_view b = s_.body();
    uint32_t cp = 0;
    for (size_t k = 0; k < digits; ++k) {
      size_t at = i + 2 + k;
      int v = at < to ? hex_value(b[at]) : -1;
      if (v < 0) fail_at(i, std::min(at, to), std::string("truncated ") + form + " escape");
      cp = cp * 16 + static_cast<uint32_t>(v);
    }
    if (cp > 0x10FFFF) fail_at(i, i + 2 + digits, "illegal Unicode character");
    if (cp >= 0xD800 && cp <= 0xDFFF)
      fail_at(i, i + 2 + digits, "surrogate code points cannot be in a TSL string");
    append_utf8(out, cp);
    return i + 1 + digits;
  }
};

StringToken split_string(Token* t, const SourcePtr& source) {
  StringToken s;
  s.token = t;
  s.text = t->getText();
  size_t quote = s.text.find_first_of("'\"");
  for (size_t i = 0; i < quote; ++i) {
    char c = static_cast<char>(s.text[i] | 0x20);
    if (c == 'r') s.raw = true;
    if (c == 'f') s.fstring = true;
    if (c == 'b') compile_error(token_range(source, t), "bytes literals are not supported in TSL");
  }
  bool triple = s.text.size() >= quote + 6 && s.text[quote + 1] == s.text[quote] &&
                s.text[quote + 2] == s.text[quote];
  size_t q = triple ? 3 : 1;
  s.body_start = quote + q;
  s.body_size = s.text.size() - s.body_start - q;
  return s;
}

// Pieces of one f-string body: literal text and replacement fields.
class FStringSplitter {
 public:
  FStringSplitter(const SourcePtr& source, const StringToken& s,
                  std::vector<ast::FStringPart>& parts)
      : source_(source), s_(s), decoder_(source, s), parts_(parts) {}

  void run() {
    std::string_view b = s_.body();
    size_t segment = 0;  // start of the pending literal text
    for (size_t i = 0; i < b.size();) {
      if (b[i] == '\\' && !s_.raw && i + 1 < b.size() && b[i + 1] != '{' && b[i + 1] != '}') {
        i += 2;
      } else if ((b[i] == '{' || b[i] == '}') && i + 1 < b.size() && b[i + 1] == b[i]) {
        decoder_.decode(segment, i + 1, literal_);  // keep one brace of the pair
        segment = i += 2;
      } else if (b[i] == '}') {
        decoder_.fail_at(i, i + 1, "f-string: single '}' is not allowed");
      } else if (b[i] == '{') {
        decoder_.decode(segment, i, literal_);
        segment = i = field(i);
      } else {
        ++i;
      }
    }
    decoder_.decode(segment, b.size(), literal_);
    flush_literal();
  }

 private:
  const SourcePtr& source_;
  const StringToken& s_;
  StringDecoder decoder_;
  std::vector<ast::FStringPart>& parts_;
  std::string literal_;

  void flush_literal() {
    if (literal_.empty()) return;
    ast::FStringPart p;
    p.literal = std::move(literal_);
    parts_.push_back(std::move(p));
    literal_.clear();
  }

  // The end of the expression of a field that starts at `from`: the first '!', ':' or
  // '}' outside brackets and quotes ('!=' is an operator, not a conversion).
  size_t expression_end(size_t from) {
    std::string_view b = s_.body();
    int depth = 0;
    char quote = 0;
    for (size_t i = from; i < b.size(); ++i) {
      char c = b[i];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '\'' || c == '"')
        quote = c;
      else if (c == '(' || c == '[' || c == '{')
        ++depth;
      else if ((c == ')' || c == ']' || c == '}') && depth > 0)
        --depth;
      else if (c == '\\')
        decoder_.fail_at(i, i + 1, "f-string expression part cannot include a backslash");
      else if (c == '#')
        decoder_.fail_at(i, i + 1, "f-string expression part cannot include '#'");
      else if (depth == 0 &&
               (c == '}' || c == ':' || (c == '!' && (i + 1 >= b.size() || b[i + 1] != '=')))) {
        return i;
      }
    }
    return b.size();
  }

  // Parses the field starting at body[open] == '{'; returns the index after its '}'.
  size_t field(size_t open) {
    std::string_view b = s_.body();
    size_t end = expression_end(open + 1);
    std::string text(b.substr(open + 1, end - open - 1));
    if (text.find_first_not_of(" \t\n\f") == std::string::npos) {
      decoder_.fail_at(open, std::min(end + 1, b.size()), "f-string: empty expression not allowed");
    }
    ast::FStringPart p;
    // f"{x=}": the expression's text, then its repr (Python's self-documenting form).
    size_t last = text.find_last_not_of(" \t\n\f");
    bool self_doc = text[last] == '=' &&
                    (last == 0 || std::string("=!<>").find(text[last - 1]) == std::string::npos);
    if (self_doc) {
      literal_ += text;
      text.erase(last);
    }
    p.expr = parse_fstring_field(source_, text, decoder_.origin_of(open + 1));
    size_t i = end;
    if (i < b.size() && b[i] == '!') {
      char c = i + 1 < b.size() ? b[i + 1] : '\0';
      if (c != 'r' && c != 's' && c != 'a') {
        decoder_.fail_at(i, std::min(i + 2, b.size()),
                         "f-string: invalid conversion character: expected 's', 'r', or 'a'");
      }
      p.conversion = c == 's' ? "s" : "r";
      i += 2;
    }
    if (i < b.size() && b[i] == ':') {
      size_t spec = ++i;
      while (i < b.size() && b[i] != '}') {
        if (b[i] == '{') {
          decoder_.fail_at(
              i, i + 1,
              "nested replacement fields in f-string format specs are not supported in TSL");
        }
        ++i;
      }
      decoder_.decode(spec, i, p.format_spec);
    }
    if (i >= b.size() || b[i] != '}')
      decoder_.fail_at(open, std::min(i, b.size()), "f-string: expecting '}'");
    if (self_doc && p.conversion.empty() && p.format_spec.empty()) p.conversion = "r";
    flush_literal();
    parts_.push_back(std::move(p));
    return i + 1;
  }
};

}  // namespace

ast::ExprPtr build_strings(const std::vector<Token*>& strings, const SourcePtr& source) {
  SourceRange r = token_range(source, strings.front(), strings.back());
  std::vector<StringToken> split;
  bool any_f = false;
  for (Token* t : strings) {
    split.push_back(split_string(t, source));
    any_f |= split.back().fstring;
  }
  if (!any_f) {
    std::string value;
    for (const StringToken& s : split) StringDecoder(source, s).decode(0, s.body_size, value);
    return std::make_unique<ast::StrLit>(r, std::move(value));
  }
  auto f = std::make_unique<ast::FString>(r);
  std::vector<ast::FStringPart> parts;
  for (const StringToken& s : split) {
    if (s.fstring) {
      FStringSplitter(source, s, parts).run();
    } else {
      ast::FStringPart p;
      StringDecoder(source, s).decode(0, s.body_size, p.literal);
      if (!p.literal.empty()) parts.push_back(std::move(p));
    }
  }
  // Adjacent literal pieces (from joined strings) become one.
  for (ast::FStringPart& p : parts) {
    if (!p.expr && !f->parts.empty() && !f->parts.back().expr) {
      f->parts.back().literal += p.literal;
    } else {
      f->parts.push_back(std::move(p));
    }
  }
  return f;
}

ast::ExprPtr build_number(Token* token, const SourcePtr& source, bool negated) {
  SourceRange r = token_range(source, token);
  std::string text;
  for (char c : token->getText()) {
    if (c != '_') text += c;
  }
  if (token->getType() == P::FLOAT_NUMBER) {
    double v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range)
      v = std::strtod(text.c_str(), nullptr);  // inf or 0, as Python
    (void)ptr;
    return std::make_unique<ast::FloatLit>(r, v);
  }
  int base = 10;
  size_t skip = 0;
  switch (token->getType()) {
    case P::HEX_INTEGER:
      base = 16, skip = 2;
      break;
    case P::OCT_INTEGER:
      base = 8, skip = 2;
      break;
    case P::BIN_INTEGER:
      base = 2, skip = 2;
      break;
    default:
      break;
  }
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data() + skip, text.data() + text.size(), v, base);
  (void)ptr;
  constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
  if (ec == std::errc::result_out_of_range || v > kMax + (negated ? 1 : 0)) {
    compile_error(
        r, "integer literal is too large: TSL ints are 64-bit (at most 9223372036854775807)");
  }
  if (negated) {
    return std::make_unique<ast::IntLit>(r, v > kMax ? INT64_MIN : -static_cast<int64_t>(v));
  }
  return std::make_unique<ast::IntLit>(r, static_cast<int64_t>(v));
}

}  // namespace tsl::parse_detail
