// The layout-aware token stream: runs the scanner (scanner.h, the tokens of
// grammar/TSLLexer.g4) and turns its raw tokens into the parser's tokens — logical NEWLINE, INDENT
// and DEDENT, no whitespace or comments — reporting bracket, indentation and lexical errors. See
// Note [The token pass].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/scanner.h"
#include "ir/source.h"

namespace antlr4 {
class Token;
}  // namespace antlr4

namespace tsl {

// Python's limits: more nested brackets or indentation levels is a syntax error, so
// that deep input cannot overflow the stack of the recursive-descent parser.
inline constexpr size_t kMaxBracketDepth = 200;
inline constexpr size_t kMaxIndentDepth = 100;

// Where a piece of text starts in its Source: (1, 0) for a whole file; the position of
// a replacement field for the expression inside an f-string.
struct TextOrigin {
  uint32_t line = 1;
  uint32_t col = 0;
};

// The tokens of one text, ready for the parser, plus facts about its last line that
// the REPL needs (classify_input).
struct TokenizedText {
  // Ends with EOF. The texts point into the prepared text, which must outlive them.
  std::vector<ScannedToken> tokens;
  bool ends_inside_block = false;      // an indented block was still open at the end
  bool last_line_opens_block = false;  // last logical line ends in ':' or is a header/decorator
};

struct TokenizeOptions {
  TextOrigin origin;
  // An f-string field: lines join as if inside brackets, no NEWLINE/INDENT is made.
  bool inside_brackets = false;
  // For the REPL: set to true when the error thrown is caused by the end of the input
  // (an open bracket, a trailing backslash, an unterminated triple-quoted string), so
  // that more lines could complete it.
  bool* ended_early = nullptr;
};

// Checks that `text` is UTF-8 and returns it with any BOM removed and every line end
// ("\r\n", "\r") turned into '\n', which keeps line and column numbers unchanged.
// Throws a compile error at the first invalid byte.
std::string prepare_text(const SourcePtr& source, std::string_view text, TextOrigin origin);

// Lexes prepared text (see prepare_text) into parser tokens. Throws compile errors.
TokenizedText tokenize(const SourcePtr& source, const std::string& prepared,
                       const TokenizeOptions& options);

// The range of one token: its start, and its end computed from its text.
SourceRange token_range(const SourcePtr& source, const antlr4::Token* token);
SourceRange token_range(const SourcePtr& source, const ScannedToken& token);
SourceRange token_range(const SourcePtr& source, const ScannedToken& first,
                        const ScannedToken& last);
// The range from the start of `first` to the end of `last`.
SourceRange token_range(const SourcePtr& source, const antlr4::Token* first,
                        const antlr4::Token* last);

}  // namespace tsl
