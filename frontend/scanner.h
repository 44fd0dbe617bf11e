// Internal to the token pass (lexer.cpp): the hand-written scanner that cuts prepared
// text into the raw tokens of grammar/TSLLexer.g4 — the same types, text, lines,
// columns and code-point indexes as the ANTLR lexer would give. See Note [The scanner].
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

namespace antlr4 {
class CommonToken;
}  // namespace antlr4

namespace tsl {

// A token without an object of its own: its type (grammar/TSLLexer.g4), its text (a
// view into the scanned text, or a literal for the tokens the token pass makes up),
// and where it is.
struct ScannedToken {
  size_t type;
  std::string_view text;
  size_t line, col;    // col in code points
  size_t start, stop;  // code-point indexes, stop inclusive; stop < start: zero width
};

// The ANTLR token object of `t` (for the ANTLR parser and the literal decoders).
std::unique_ptr<antlr4::CommonToken> make_antlr_token(const ScannedToken& t);

// Note [The scanner]
// TSLLexer.g4 stays the specification of the tokens (and the parser's vocabulary), but
// the ANTLR lexer is not used to tokenize: it simulated its automaton character by
// character (a third of a 300-line function's parse), and building its Unicode
// identifier sets (\p{ID_Start}, \p{ID_Continue}) at program start cost about as much
// as the rest of `tsl -c "print(1)"`. The scanner implements each rule directly and
// picks, like ANTLR, the longest match, ties going to the rule listed first. The
// Unicode sets are tables taken from the ANTLR lexer (unicode_identifiers.inc), so
// the same identifiers are accepted. tests/frontend/scanner_test.cpp compares the two
// lexers on every .tsl file of the repository and on edge cases of every rule.
class Scanner {
 public:
  // `text` is prepared (prepare_text): valid UTF-8 with '\n' line ends. It must
  // outlive the scanner.
  explicit Scanner(std::string_view text);
  ~Scanner();

  // The next raw token; EOF (text "<EOF>") at the end, and again after it.
  ScannedToken next_raw();
  // The same as an ANTLR token object.
  std::unique_ptr<antlr4::CommonToken> next() { return make_antlr_token(next_raw()); }

  // The number of code points in the text (ANTLR's input size).
  size_t size() const { return size_; }

 private:
  std::string_view text_;
  size_t size_ = 0;
  size_t pos_ = 0;    // byte offset of the next token
  size_t index_ = 0;  // its code-point index
  size_t line_ = 1;
  size_t col_ = 0;  // in code points

  struct Match {
    size_t type;
    size_t bytes;
  };
  Match match() const;
  Match word() const;
  Match string_literal(size_t prefix) const;
  Match number_or_dot() const;
  Match operator_token() const;
};

// grammar/TSLLexer.g4's ID_START and ID_CONTINUE for one code point.
bool is_id_start(char32_t c);
bool is_id_continue(char32_t c);

}  // namespace tsl
