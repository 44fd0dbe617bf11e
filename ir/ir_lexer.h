// The tokens of the IR text format (Note [IR text format] in ir_parser.h) and the
// lexer that makes them; only the IR parser uses this header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/source.h"

namespace tsl::ir_text {

enum class Tok {
  Ident,      // op names, types, True/None/inf, torch.float32, blockN, graph, return
  GraphName,  // the raw name after `graph `
  Value,      // %name (text without the %)
  Int,
  Float,
  String,  // text is the decoded string
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Equals,
  Arrow,
  Ellipsis,
  End
};

struct Token {
  Tok kind;
  std::string text;
  uint32_t line = 0;
  uint32_t col = 0;  // 0-based, in code points
  uint32_t end_col = 0;
  // A trailing `# line:col` comment on this token's line (0 when none).
  uint32_t note_line = 0;
  uint32_t note_col = 0;
};

// Splits `text` into tokens ending in Tok::End. Comments are dropped, except that a
// trailing `# line:col` is kept on the last token of its line. Bad characters and
// unterminated strings are compile errors located in `source`.
std::vector<Token> lex(std::string_view text, SourcePtr source);

bool is_digit(char c);

}  // namespace tsl::ir_text
