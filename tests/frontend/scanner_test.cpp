// The hand-written scanner against the ANTLR lexer of grammar/TSLLexer.g4 (Note [The
// scanner]): the same raw tokens — type, text, line, column, code-point indexes — on
// every .tsl file, on edge cases of each rule, on random text, and the same Unicode
// identifier characters at every boundary of the tables.
#include <gtest/gtest.h>

#include <random>

#include "TSLLexer.h"
#include "antlr4-runtime.h"
#include "frontend/scanner.h"
#include "tests/common/repository_files.h"

namespace tsl {
namespace {

std::string describe(antlr4::Token& t) {
  return std::to_string(t.getType()) + " '" + t.getText() + "' " + std::to_string(t.getLine()) +
         ":" + std::to_string(t.getCharPositionInLine()) + " [" +
         std::to_string(static_cast<long>(t.getStartIndex())) + "," +
         std::to_string(static_cast<long>(t.getStopIndex())) + "]";
}

// Every raw token of `text`, as the ANTLR lexer cuts it, up to and including EOF.
std::vector<std::string> antlr_tokens(const std::string& text) {
  antlr4::ANTLRInputStream input(text);
  grammar::TSLLexer lexer(&input);
  lexer.removeErrorListeners();
  std::vector<std::string> out;
  for (;;) {
    std::unique_ptr<antlr4::Token> t = lexer.nextToken();
    out.push_back(describe(*t));
    if (t->getType() == antlr4::Token::EOF) return out;
  }
}

std::vector<std::string> scanner_tokens(const std::string& text) {
  Scanner scanner(text);
  std::vector<std::string> out;
  for (;;) {
    std::unique_ptr<antlr4::CommonToken> t = scanner.next();
    out.push_back(describe(*t));
    if (t->getType() == antlr4::Token::EOF) return out;
  }
}

void expect_same_tokens(const std::string& text) {
  SCOPED_TRACE(text);
  EXPECT_EQ(scanner_tokens(text), antlr_tokens(text));
}

TEST(Scanner, Numbers) {
  for (const char* t :
       {"0",     "1",    "123",   "1_000",  "1__0", "1_",      "0_0",         "00",   "012",
        "0_1",   "0x1F", "0X_ff", "0x",     "0xg",  "0o17",    "0o8",         "0O_7", "0b101",
        "0b102", "0B_1", "1.",    "1.5",    ".5",   "1.5.3",   "1..2",        "1e5",  "1E+5",
        "1e-5",  "1e",   "1e+",   "1.e5",   ".5e3", "1.5e-3x", "1_0.2_5e1_0", "1j",   "1.0j",
        "1if",   "1 if", "0or",   "1.real", "x.1",  "...",     "..",          ". 5",  "1...",
        "09.5",  "0e0",  "1_e5",  "1e5_",   "0x_",  "0b",      "2.__x"}) {
    expect_same_tokens(t);
    expect_same_tokens(std::string("a = ") + t + "\n");
  }
}

TEST(Scanner, Strings) {
  for (const char* t :
       {"'a'",          "\"a\"",  "''",     "\"\"",    "'''a'''", "\"\"\"a\"\"\"",
        "'''a''''",     "''''''", "'''''",  "'a",      "'a\nb'",  "'a\\\nb'",
        "'a\\'b'",      "'\\",    "'a\\",   "'''a",    "'''a\\",  "'''a''",
        "'''a'\n'b'''", "r'a'",   "R\"a\"", "u'a'",    "b'a'",    "f'{x}'",
        "rb'a'",        "Rb'a'",  "br'a'",  "bR'a'",   "fr'a'",   "rf'a'",
        "Fr'a'",        "ur'a'",  "bf'a'",  "rbx",     "r",       "rb",
        "f'''a\nb'''",  "'é'",    "'\\é'",  "\"a'b\"", "'a\"b'",  "'''a\\'''b'''"}) {
    expect_same_tokens(t);
    expect_same_tokens(std::string("x = ") + t + " + 1\ny = 2\n");
  }
}

TEST(Scanner, NamesKeywordsOperators) {
  expect_same_tokens("if iffy in inx and andy or not nothing is isn't\n");
  expect_same_tokens(
      "False None True and as assert break continue def elif else for from if import in is "
      "not or pass raise return while with async await class del except finally global "
      "lambda nonlocal try yield Falsey _ __init__ x1 _1\n");
  expect_same_tokens(
      "a**=b//=c<<=d>>=e**f//g<<h>>i==j>=k<=l!=m->n:=o+=p-=q*=r@=s/=t%=u&=v|=w^=x\n");
  expect_same_tokens("(a)[b]{c},d:e;f=g|h^i&j+k-l/m%n~o<p>q@r*s.t...u!v$w?x`y\n");
  expect_same_tokens("x = 1  # comment\n\t\f y \\\n z \\ w\\");
  expect_same_tokens("π = 3.14\nnaïve·x = π₁ + x²\nx€ = 1\n日本 = 2\n𝑥 = 3\n");
  expect_same_tokens(std::string("a\0b", 3) + "\x01\x7f\n");
  expect_same_tokens("");
  expect_same_tokens("\n\n");
}

// Random text over an alphabet that exercises every rule and its edges.
TEST(Scanner, RandomText) {
  const std::vector<std::string> alphabet = {
      "0",  "1",  "9",  "_", ".", "e", "E", "x", "o", "b", "j",  "r",  "f",  "u",
      "a",  "if", "+",  "-", "*", "/", "<", ">", "=", "!", ":",  "'",  "\"", "\\",
      "\n", " ",  "\t", "#", "(", ")", "π", "é", "·", "€", "²",  "@",  "%",  "&",
      "|",  "^",  "~",  "[", "]", "{", "}", ",", ";", "$", "in", "0x", "0o", "0b"};
  std::mt19937 rng(6);
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    size_t n = rng() % 24;
    for (size_t k = 0; k < n; ++k) text += alphabet[rng() % alphabet.size()];
    expect_same_tokens(text);
  }
}

TEST(Scanner, EveryRepositoryFile) {
  int files = 0;
  for (const auto& [path, text] : repository_tsl_files()) {
    SCOPED_TRACE(path);
    EXPECT_EQ(scanner_tokens(text), antlr_tokens(text));
    ++files;
  }
  EXPECT_GT(files, 50);
}

std::string utf8(char32_t c) { return antlrcpp::utf32_to_utf8(std::u32string(1, c)); }

// The ANTLR lexer's ID_START and ID_CONTINUE for `c`: "c" alone, and "_c", lex as one NAME.
bool antlr_id_start(char32_t c) {
  std::vector<std::string> t = antlr_tokens(utf8(c));
  return t.size() == 2 && t[0].rfind(std::to_string(grammar::TSLLexer::NAME) + " ", 0) == 0;
}
bool antlr_id_continue(char32_t c) {
  std::vector<std::string> t = antlr_tokens("_" + utf8(c));
  return t.size() == 2 && t[0].rfind(std::to_string(grammar::TSLLexer::NAME) + " ", 0) == 0;
}

// Every code point where either table changes (found by a scan with the scanner's own
// tables) and a sample in between agree with the ANTLR lexer.
TEST(Scanner, UnicodeIdentifierTables) {
  std::vector<char32_t> points;
  bool start = false, cont = false;
  for (char32_t c = 0x80; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    bool s = is_id_start(c), k = is_id_continue(c);
    if (s != start || k != cont || c % 997 == 0) {
      for (char32_t d : {static_cast<char32_t>(c - 1), c}) {
        if (d >= 0x80 && (d < 0xD800 || d > 0xDFFF)) points.push_back(d);
      }
    }
    start = s, cont = k;
  }
  EXPECT_GT(points.size(), 2000u);
  for (char32_t c : points) {
    EXPECT_EQ(is_id_start(c), antlr_id_start(c)) << std::hex << static_cast<uint32_t>(c);
    EXPECT_EQ(is_id_continue(c), antlr_id_continue(c)) << std::hex << static_cast<uint32_t>(c);
  }
}

}  // namespace
}  // namespace tsl
