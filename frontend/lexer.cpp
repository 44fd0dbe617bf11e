// The token pass between the ANTLR lexer and the parser: Python's layout rules
// (NEWLINE, INDENT, DEDENT, implicit and explicit line joining) and the syntax errors
// that are found on tokens alone.
#include "frontend/lexer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "TSLLexer.h"
#include "antlr4-runtime.h"
#include "frontend/scanner.h"

namespace tsl {

// Note [The token pass]
// The scanner (Note [The scanner]) only cuts the text into raw tokens, whitespace and
// comments included. This pass reads them once, in order, and
//  - drops WS, COMMENT and LINE_JOIN (a backslash before a line end);
//  - keeps a NEWLINE only where it ends a logical line: not inside brackets, not on a
//    blank or comment-only line;
//  - compares the indentation of each logical line's first token with a stack of
//    open levels and emits INDENT/DEDENT, as CPython's tokenizer does (columns with
//    tabs at multiples of 8 and with tabs as 1 must order the same way, otherwise
//    the mix of tabs and spaces is ambiguous: a TabError);
//  - checks brackets (unmatched, mismatched, never closed, nested over 200 deep) and
//    the indentation depth (over 100), so the recursive-descent parser never
//    recurses deeper than that through brackets or blocks;
//  - turns the lexer's error tokens (unterminated strings, bad numbers, stray
//    characters) into compile errors.
// At the end it closes the last logical line and every open block. Running it eagerly
// over the whole text before parsing keeps the parser free of layout concerns.

using antlr4::Token;
using grammar::TSLLexer;

namespace {

uint32_t count_code_points(std::string_view s) {
  uint32_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// The length of the UTF-8 sequence that starts at s[i], or 0 when it is invalid.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  unsigned char b = byte(i);
  if (b < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((b & 0xE0) == 0xC0)
    n = 2, cp = b & 0x1F;
  else if ((b & 0xF0) == 0xE0)
    n = 3, cp = b & 0x0F;
  else if ((b & 0xF8) == 0xF0)
    n = 4, cp = b & 0x07;
  else
    return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool is_compound_header(size_t type) {
  switch (type) {
    case TSLLexer::IF:
    case TSLLexer::ELIF:
    case TSLLexer::ELSE:
    case TSLLexer::WHILE:
    case TSLLexer::FOR:
    case TSLLexer::WITH:
    case TSLLexer::DEF:
    case TSLLexer::AT:
    case TSLLexer::CLASS:
    case TSLLexer::TRY:
    case TSLLexer::EXCEPT:
    case TSLLexer::FINALLY:
    case TSLLexer::ASYNC:
      return true;
    default:
      return false;
  }
}

char closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

// An indentation level: its column with tabs to multiples of 8 and with tabs as 1.
struct Indent {
  uint32_t col = 0;
  uint32_t alt_col = 0;
};

struct OpenBracket {
  char ch;
  SourceRange range;
};

class TokenPass {
 public:
  TokenPass(SourcePtr source, const TokenizeOptions& options, TokenizedText& out)
      : source_(std::move(source)), options_(options), out_(out) {}

  void run(Scanner& scanner) {
    input_size_ = scanner.size();
    for (;;) {
      ScannedToken t = scanner.next_raw();
      if (dropped(t)) continue;
      relocate(t);
      if (t.type == Token::EOF) return finish(t);
      handle(t);
    }
  }

 private:
  SourcePtr source_;
  const TokenizeOptions& options_;
  TokenizedText& out_;
  std::vector<Indent> indents_{Indent{}};
  std::vector<OpenBracket> brackets_;
  std::string line_indent_;  // the whitespace before the first token of this line
  bool at_line_start_ = true;
  bool after_line_join_ = false;
  size_t line_first_type_ = 0;
  size_t line_last_type_ = 0;
  std::optional<ScannedToken> last_real_;
  size_t input_size_ = 0;  // code points in the text

  // Moves a token of an f-string field to where the field is in the source.
  void relocate(ScannedToken& t) const {
    const TextOrigin& o = options_.origin;
    if (o.line == 1 && o.col == 0) return;
    if (t.line == 1) t.col += o.col;
    t.line += o.line - 1;
  }

  [[noreturn]] void fail(const SourceRange& range, std::string message, bool at_end = false) {
    if (at_end && options_.ended_early) *options_.ended_early = true;
    compile_error(range, std::move(message));
  }

  void emit(const ScannedToken& t) { out_.tokens.push_back(t); }

  // A token the parser needs but the text does not spell (NEWLINE at the end of the
  // input, INDENT, DEDENT): zero width, at `line`:`col`.
  void emit_synthetic(size_t type, size_t line, size_t col) {
    emit(ScannedToken{type, "", line, col, 1, 0});
  }

  // Whitespace, comments, line joins and the line ends that do not end a logical line
  // only change this pass's state.
  bool dropped(const ScannedToken& t) {
    switch (t.type) {
      case TSLLexer::WS:
        if (at_line_start_) line_indent_ = t.text;
        return true;
      case TSLLexer::COMMENT:
        return true;
      case TSLLexer::LINE_JOIN:
        after_line_join_ = true;
        return true;
      case TSLLexer::NEWLINE:
        // A blank or comment-only line: its whitespace is not the next line's indent.
        if (at_line_start_) line_indent_.clear();
        return !brackets_.empty() || at_line_start_ || options_.inside_brackets;
      default:
        return false;
    }
  }

  void handle(const ScannedToken& t) {
    switch (t.type) {
      case TSLLexer::NEWLINE:
        end_logical_line();
        emit(t);
        return;
      case TSLLexer::BACKSLASH:
        if (t.stop + 1 >= input_size_) {
          fail(token_range(source_, t), "unexpected EOF while parsing", true);
        }
        fail(token_range(source_, t), "unexpected character after line continuation character");
      case TSLLexer::UNTERMINATED_STRING:
        fail(token_range(source_, t),
             "unterminated string literal (detected at line " + std::to_string(t.line) + ")");
      case TSLLexer::UNTERMINATED_LONG_STRING:
        unterminated_long_string(t);
      case TSLLexer::INVALID_NUMBER:
        fail(token_range(source_, t), invalid_number_message(std::string(t.text)));
      case TSLLexer::ERROR_CHAR:
        invalid_character(t);
      default:
        real_token(t);
    }
  }

  void end_logical_line() {
    out_.last_line_opens_block =
        line_last_type_ == TSLLexer::COLON || is_compound_header(line_first_type_);
    at_line_start_ = true;
    line_indent_.clear();
  }

  void real_token(const ScannedToken& t) {
    if (at_line_start_ && !options_.inside_brackets) {
      indentation(t);
      line_first_type_ = t.type;
    }
    at_line_start_ = false;
    after_line_join_ = false;
    line_last_type_ = t.type;
    bracket(t);
    last_real_ = t;
    emit(t);
  }

  // Compares this line's indentation with the open levels: INDENT, DEDENTs or an error.
  void indentation(const ScannedToken& t) {
    Indent here;
    for (char c : line_indent_) {
      if (c == ' ')
        ++here.col, ++here.alt_col;
      else if (c == '\t')
        here.col = (here.col / 8 + 1) * 8, ++here.alt_col;
      else
        here = Indent{};  // form feed resets the count, as in CPython
    }
    SourceRange r = token_range(source_, t);
    const char* kTabError = "inconsistent use of tabs and spaces in indentation";
    Indent top = indents_.back();
    if (here.col == top.col) {
      if (here.alt_col != top.alt_col) fail(r, kTabError);
    } else if (here.col > top.col) {
      if (here.alt_col <= top.alt_col) fail(r, kTabError);
      if (indents_.size() > kMaxIndentDepth) fail(r, "too many levels of indentation");
      indents_.push_back(here);
      emit_synthetic(TSLLexer::INDENT, t.line, t.col);
    } else {
      while (indents_.size() > 1 && here.col < indents_.back().col) {
        indents_.pop_back();
        emit_synthetic(TSLLexer::DEDENT, t.line, t.col);
      }
      if (here.col != indents_.back().col)
        fail(r, "unindent does not match any outer indentation level");
      if (here.alt_col != indents_.back().alt_col) fail(r, kTabError);
    }
  }

  void bracket(const ScannedToken& t) {
    size_t type = t.type;
    if (type == TSLLexer::OPEN_PAREN || type == TSLLexer::OPEN_BRACK ||
        type == TSLLexer::OPEN_BRACE) {
      SourceRange r = token_range(source_, t);
      size_t depth = brackets_.size() + (options_.inside_brackets ? 1 : 0);
      if (depth >= kMaxBracketDepth) fail(r, "too many nested parentheses");
      brackets_.push_back({t.text[0], r});
      return;
    }
    if (type != TSLLexer::CLOSE_PAREN && type != TSLLexer::CLOSE_BRACK &&
        type != TSLLexer::CLOSE_BRACE)
      return;
    char close = t.text[0];
    SourceRange r = token_range(source_, t);
    if (brackets_.empty()) fail(r, std::string("unmatched '") + close + "'");
    const OpenBracket& open = brackets_.back();
    if (closer_of(open.ch) != close) {
      std::string msg = std::string("closing parenthesis '") + close +
                        "' does not match opening parenthesis '" + open.ch + "'";
      if (open.range.line != r.line) msg += " on line " + std::to_string(open.range.line);
      fail(r, msg);
    }
    brackets_.pop_back();
  }

  void finish(const ScannedToken& eof) {
    SourceRange at_eof = token_range(source_, eof);
    if (after_line_join_) fail(at_eof, "unexpected EOF while parsing", true);
    if (!brackets_.empty()) {
      const OpenBracket& open = brackets_.back();
      fail(open.range, std::string("'") + open.ch + "' was never closed", true);
    }
    if (!options_.inside_brackets) {
      if (!at_line_start_) {
        SourceRange end = last_real_ ? token_range(source_, *last_real_) : at_eof;
        end_logical_line();
        emit_synthetic(TSLLexer::NEWLINE, end.end_line, end.end_col);
      }
      out_.ends_inside_block = indents_.size() > 1;
      for (size_t i = 1; i < indents_.size(); ++i) {
        emit_synthetic(TSLLexer::DEDENT, eof.line, eof.col);
      }
    }
    emit(eof);
  }

  [[noreturn]] void unterminated_long_string(const ScannedToken& t) {
    SourceRange r = token_range(source_, t);
    uint32_t detected = r.end_line;
    // Point at the prefix and the opening quotes, as CPython does.
    size_t quote = t.text.find_first_of("'\"");
    r.end_line = r.line;
    r.end_col = r.col + static_cast<uint32_t>(quote) + 3;
    fail(r,
         "unterminated triple-quoted string literal (detected at line " + std::to_string(detected) +
             ")",
         true);
  }

  [[noreturn]] void invalid_character(const ScannedToken& t) {
    std::string text(t.text);
    SourceRange r = token_range(source_, t);
    if (text == std::string(1, '\0')) fail(r, "source code cannot contain null bytes");
    unsigned char c = static_cast<unsigned char>(text[0]);
    if (c < 0x80 && c >= 0x20) fail(r, "invalid syntax");
    // Decode the code point to name it as U+XXXX.
    uint32_t cp = c < 0x80             ? c
                  : (c & 0xE0) == 0xC0 ? c & 0x1F
                  : (c & 0xF0) == 0xE0 ? c & 0x0F
                                       : c & 0x07;
    for (size_t i = 1; i < text.size(); ++i)
      cp = (cp << 6) | (static_cast<unsigned char>(text[i]) & 0x3F);
    char hex[16];
    std::snprintf(hex, sizeof hex, "U+%04X", cp);
    std::string shown = c < 0x20 ? std::string() : "'" + text + "' ";
    fail(r, "invalid character " + shown + "(" + hex + ")");
  }

  static std::string invalid_number_message(const std::string& text) {
    auto has_prefix = [&](char lower) {
      return text.size() >= 2 && text[0] == '0' && (text[1] == lower || text[1] == lower - 32);
    };
    auto first_bad = [&](const char* ok) {
      for (size_t i = 2; i < text.size(); ++i) {
        if (!std::strchr(ok, text[i])) return text[i];
      }
      return '\0';
    };
    if (has_prefix('x')) return "invalid hexadecimal literal";
    if (has_prefix('o')) {
      char c = first_bad("01234567_");
      if (c >= '0' && c <= '9') return std::string("invalid digit '") + c + "' in octal literal";
      return "invalid octal literal";
    }
    if (has_prefix('b')) {
      char c = first_bad("01_");
      if (c >= '0' && c <= '9') return std::string("invalid digit '") + c + "' in binary literal";
      return "invalid binary literal";
    }
    if (!text.empty() && (text.back() == 'j' || text.back() == 'J')) {
      return "complex literals are not supported in TSL";
    }
    bool all_digits = text.find_first_not_of("0123456789_") == std::string::npos;
    if (all_digits && text.size() > 1 && text[0] == '0') {
      return "leading zeros in decimal integer literals are not permitted; use an 0o prefix for "
             "octal integers";
    }
    return "invalid decimal literal";
  }
};

}  // namespace

std::string prepare_text(const SourcePtr& source, std::string_view text, TextOrigin origin) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  if (text.starts_with("\xEF\xBB\xBF")) i = 3;
  uint32_t line = origin.line, col = origin.col;
  while (i < text.size()) {
    char c = text[i];
    if (c == '\r' || c == '\n') {
      out += '\n';
      i += c == '\r' && i + 1 < text.size() && text[i + 1] == '\n' ? 2 : 1;
      ++line, col = 0;
      continue;
    }
    size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      char msg[64];
      std::snprintf(msg, sizeof msg, "invalid UTF-8 byte 0x%02x",
                    static_cast<unsigned char>(text[i]));
      compile_error(SourceRange{source, line, col, line, col + 1}, msg);
    }
    out.append(text.substr(i, n));
    i += n;
    ++col;
  }
  return out;
}

TokenizedText tokenize(const SourcePtr& source, const std::string& prepared,
                       const TokenizeOptions& options) {
  TokenizedText out;
  // Code has about one token per 3 bytes: one allocation instead of a dozen regrowths.
  out.tokens.reserve(prepared.size() / 3 + 16);
  Scanner scanner(prepared);
  TokenPass(source, options, out).run(scanner);
  return out;
}

namespace {

// A token's range from its start, its length in code points and, for strings (which
// may span lines), its text: `text()` is only called for them.
template <typename Text>
SourceRange range_of(const SourcePtr& source, size_t type, size_t line, size_t col, size_t start,
                     size_t stop, Text text) {
  SourceRange r;
  r.source = source;
  r.line = static_cast<uint32_t>(line);
  r.col = static_cast<uint32_t>(col);
  r.end_line = r.line;
  r.end_col = r.col;
  if (type == Token::EOF) return r;
  if (stop + 1 <= start) return r;  // synthetic: zero width
  if (type == TSLLexer::NEWLINE) {
    r.end_col = r.col + 1;
  } else if (type == TSLLexer::STRING || type == TSLLexer::UNTERMINATED_LONG_STRING) {
    auto owner = text();
    std::string_view s(owner);
    size_t nl = s.rfind('\n');
    if (nl == std::string_view::npos) {
      r.end_col = r.col + count_code_points(s);
    } else {
      r.end_line = r.line + static_cast<uint32_t>(std::count(s.begin(), s.end(), '\n'));
      r.end_col = count_code_points(s.substr(nl + 1));
    }
  } else {
    r.end_col = r.col + static_cast<uint32_t>(stop - start + 1);
  }
  return r;
}

}  // namespace

SourceRange token_range(const SourcePtr& source, const Token* token) {
  return range_of(source, token->getType(), token->getLine(), token->getCharPositionInLine(),
                  token->getStartIndex(), token->getStopIndex(), [&] { return token->getText(); });
}

SourceRange token_range(const SourcePtr& source, const ScannedToken& t) {
  return range_of(source, t.type, t.line, t.col, t.start, t.stop, [&] { return t.text; });
}

SourceRange token_range(const SourcePtr& source, const Token* first, const Token* last) {
  return token_range(source, first).to(token_range(source, last));
}

SourceRange token_range(const SourcePtr& source, const ScannedToken& first,
                        const ScannedToken& last) {
  return token_range(source, first).to(token_range(source, last));
}

}  // namespace tsl
