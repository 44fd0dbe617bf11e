// Syntax errors: each class of error with its message and line:col, unsupported
// constructs named, deep nesting, invalid UTF-8, and the REPL's classify_input.
#include <gtest/gtest.h>

#include "frontend/parser.h"

namespace tsl {
namespace {

// "line:col: message" of the error parsing `code` (column 1-based as printed), or "ok".
std::string error_of(const std::string& code) {
  try {
    parse_module(std::make_shared<Source>("t.tsl", code));
  } catch (const SourceError& e) {
    EXPECT_EQ(e.kind(), SourceError::Kind::Compile);
    return std::to_string(e.range().line) + ":" + std::to_string(e.range().col + 1) + ": " +
           e.message();
  }
  return "ok";
}

// An error on a very long line shows a window of the line around the caret, cut ends
// marked, instead of the whole line (issue 21).
TEST(SyntaxErrors, ALongLineShowsAWindowAroundTheCaret) {
  auto excerpt = [](const std::string& line, uint32_t col, uint32_t width) {
    auto source = std::make_shared<Source>("t.tsl", line + "\n");
    SourceRange r{source, 1, col, 1, col + width};
    return r.excerpt();
  };
  std::string items;
  for (int i = 0; i < 400; ++i) items += "a" + std::to_string(i % 10) + ", ";
  std::string line = "x = [" + items + "zz]";  // zz at column 1606 (0-based 1605)
  size_t zz = line.find("zz");
  std::string end = excerpt(line, static_cast<uint32_t>(zz), 2);
  EXPECT_EQ(end, "    ..." + line.substr(line.size() - 140) + "\n    " +
                     std::string(3 + 140 - 3, ' ') + "^~\n")
      << end;
  std::string start = excerpt(line, 4, 1);  // the '['
  EXPECT_EQ(start, "    " + line.substr(0, 140) + "...\n        ^\n") << start;
  std::string middle = excerpt(line, 800, 2);
  EXPECT_EQ(middle, "    ..." + line.substr(740, 140) + "...\n    " + std::string(63, ' ') + "^~\n")
      << middle;
  // A line of up to 160 columns shows whole.
  std::string short_line = "y = " + std::string(150, 'b');
  EXPECT_EQ(excerpt(short_line, 4, 150),
            "    " + short_line + "\n        ^" + std::string(149, '~') + "\n");
}

TEST(SyntaxErrors, Brackets) {
  EXPECT_EQ(error_of("x = (1,\ny = 2\n"), "1:5: '(' was never closed");
  EXPECT_EQ(error_of("f(a, [1, 2)\n"),
            "1:11: closing parenthesis ')' does not match opening parenthesis '['");
  EXPECT_EQ(error_of("f(a, [1,\n 2)\n"),
            "2:3: closing parenthesis ')' does not match opening parenthesis '[' on line 1");
  EXPECT_EQ(error_of("x = 1)\n"), "1:6: unmatched ')'");
  EXPECT_EQ(error_of("x = ]"), "1:5: unmatched ']'");
}

TEST(SyntaxErrors, Indentation) {
  EXPECT_EQ(error_of("  x = 1\n"), "1:3: unexpected indent");
  EXPECT_EQ(error_of("x = 1\n    y = 2\n"), "2:5: unexpected indent");
  EXPECT_EQ(error_of("if a:\n    x = 1\n  y = 2\n"),
            "3:3: unindent does not match any outer indentation level");
  EXPECT_EQ(error_of("if a:\nx = 1\n"),
            "2:1: expected an indented block after 'if' statement on line 1");
  EXPECT_EQ(error_of("if a:\n  pass\nelif b:\npass\n"),
            "4:1: expected an indented block after 'elif' statement on line 3");
  EXPECT_EQ(error_of("while a:\n# c\n\nx = 1"),
            "4:1: expected an indented block after 'while' statement on line 1");
  EXPECT_EQ(error_of("def f():\nreturn 1"),
            "2:1: expected an indented block after function definition on line 1");
  EXPECT_EQ(error_of("for x in y:\n"),
            "2:1: expected an indented block after 'for' statement on line 1");
  EXPECT_EQ(error_of("if a:\n        x = 1\n\ty = 2\n"),
            "3:2: inconsistent use of tabs and spaces in indentation");
  EXPECT_EQ(error_of("if a:\n\tx = 1\n        y = 2\n"),
            "3:9: inconsistent use of tabs and spaces in indentation");
}

TEST(SyntaxErrors, Statements) {
  EXPECT_EQ(error_of("if x\n  pass\n"), "1:5: expected ':'");
  EXPECT_EQ(error_of("def f(x) -> int\n  pass\n"), "1:16: expected ':'");
  EXPECT_EQ(error_of("for x y:\n  pass"), "1:7: expected 'in'");
  EXPECT_EQ(error_of("x = \n"), "1:5: invalid syntax");
  EXPECT_EQ(error_of("x = 1 +"), "1:8: invalid syntax");
  // `not` binds looser than comparisons and arithmetic: only and/or take it bare.
  EXPECT_EQ(error_of("y = a == not b"), "1:10: invalid syntax");
  EXPECT_EQ(error_of("y = a * not b"), "1:9: invalid syntax");
  EXPECT_EQ(error_of("y = a < not b < c"), "1:9: invalid syntax");
  EXPECT_EQ(error_of("y = a and not b == c or not d"), "ok");
  EXPECT_EQ(error_of("y = not a == b if not c else not d"), "ok");
  EXPECT_EQ(error_of("else:\n  pass\n"), "1:1: invalid syntax");
  EXPECT_EQ(error_of("f(a b)"), "1:3: invalid syntax. Perhaps you forgot a comma?");
  EXPECT_EQ(error_of("if x = 1:\n  pass"),
            "1:6: invalid syntax. Maybe you meant '==' instead of '='?");
  EXPECT_EQ(error_of("x = $"), "1:5: invalid syntax");
  EXPECT_EQ(error_of("x = 1 + \\ 2"),
            "1:9: unexpected character after line continuation character");
  EXPECT_EQ(error_of("x = 1 + \\\n"), "2:1: unexpected EOF while parsing");
  EXPECT_EQ(error_of("x = a → b"), "1:7: invalid character '→' (U+2192)");
  EXPECT_EQ(error_of(std::string("x = 1\0", 6)), "1:6: source code cannot contain null bytes");
}

TEST(SyntaxErrors, Targets) {
  EXPECT_EQ(error_of("1 = x"), "1:1: cannot assign to literal");
  EXPECT_EQ(error_of("f() = x"), "1:1: cannot assign to function call");
  EXPECT_EQ(error_of("a + b = x"), "1:1: cannot assign to expression");
  EXPECT_EQ(error_of("a, None = x"), "1:4: cannot assign to None");
  EXPECT_EQ(error_of("for f() in x:\n  pass"), "1:5: cannot assign to function call");
  EXPECT_EQ(error_of("a, b += 1"),
            "1:1: 'tuple' is an illegal expression for augmented assignment");
  EXPECT_EQ(error_of("a, b: int = 1"), "1:1: only single target (not tuple) can be annotated");
  EXPECT_EQ(error_of("f(a=1, b)"), "1:8: positional argument follows keyword argument");
  EXPECT_EQ(error_of("f(a=1, a=2)"), "1:8: keyword argument repeated: a");
}

TEST(SyntaxErrors, Literals) {
  EXPECT_EQ(error_of("x = 'abc\n"), "1:5: unterminated string literal (detected at line 1)");
  EXPECT_EQ(error_of("x = 1\ny = \"\"\"abc\n\n"),
            "2:5: unterminated triple-quoted string literal (detected at line 4)");
  EXPECT_EQ(error_of("x = 1abc"), "1:5: invalid decimal literal");
  EXPECT_EQ(error_of("x = 1_"), "1:5: invalid decimal literal");
  EXPECT_EQ(error_of("x = 1.5x"), "1:5: invalid decimal literal");
  EXPECT_EQ(error_of("x = 012"),
            "1:5: leading zeros in decimal integer literals are not permitted; use an 0o prefix "
            "for octal integers");
  EXPECT_EQ(error_of("x = 0xZZ"), "1:5: invalid hexadecimal literal");
  EXPECT_EQ(error_of("x = 0o8"), "1:5: invalid digit '8' in octal literal");
  EXPECT_EQ(error_of("x = 0b102"), "1:5: invalid digit '2' in binary literal");
  EXPECT_EQ(error_of("x = 1j"), "1:5: complex literals are not supported in TSL");
  EXPECT_EQ(error_of("x = 9223372036854775808"),
            "1:5: integer literal is too large: TSL ints are 64-bit (at most 9223372036854775807)");
  EXPECT_EQ(error_of("x = '\\x4'"), "1:6: truncated \\xXX escape");
  EXPECT_EQ(error_of("x = b'abc'"), "1:5: bytes literals are not supported in TSL");
}

TEST(SyntaxErrors, FStrings) {
  EXPECT_EQ(error_of("x = f'{}'"), "1:7: f-string: empty expression not allowed");
  EXPECT_EQ(error_of("x = f'{a'"), "1:8: f-string: expecting '}'");
  EXPECT_EQ(error_of("x = f'a}'"), "1:8: f-string: single '}' is not allowed");
  EXPECT_EQ(error_of("x = f'{a!x}'"),
            "1:9: f-string: invalid conversion character: expected 's', 'r', or 'a'");
  EXPECT_EQ(error_of("x = f'{a:{w}}'"),
            "1:10: nested replacement fields in f-string format specs are not supported in TSL");
  // An error inside a field points into the field.
  EXPECT_EQ(error_of("x = f'abc {a +}'"), "1:15: invalid syntax");
  EXPECT_EQ(error_of("x = f'{a b}'"), "1:10: invalid syntax");
}

TEST(SyntaxErrors, UnsupportedConstructsAreNamed) {
  EXPECT_EQ(error_of("f = lambda x: x"), "1:5: `lambda` is not supported in TSL");
  EXPECT_EQ(error_of("class A:\n  pass"), "1:1: `class` is not supported in TSL");
  EXPECT_EQ(error_of("try:\n  pass\nexcept E:\n  pass"), "1:1: `try` is not supported in TSL");
  EXPECT_EQ(error_of("def f():\n  yield 1"), "2:3: `yield` is not supported in TSL");
  EXPECT_EQ(error_of("del x"),
            "1:1: `del` is not supported in TSL (remove a dict entry with d.pop(key))");
  EXPECT_EQ(error_of("global x"), "1:1: `global` is not supported in TSL");
  EXPECT_EQ(error_of("nonlocal x"), "1:1: `nonlocal` is not supported in TSL");
  EXPECT_EQ(error_of("async def f():\n  pass"), "1:1: `async` is not supported in TSL");
  EXPECT_EQ(error_of("x = await f()"), "1:5: `await` is not supported in TSL");
  EXPECT_EQ(error_of("while a:\n  pass\nelse:\n  pass"),
            "3:1: `while ... else` is not supported in TSL");
  EXPECT_EQ(error_of("for a in b:\n  pass\nelse:\n  pass"),
            "3:1: `for ... else` is not supported in TSL");
  EXPECT_EQ(error_of("x = {1, 2}"), "1:5: set literals are not supported in TSL (use a list)");
  EXPECT_EQ(error_of("x = {1: 2, 3}"), "1:12: ':' expected after dictionary key");
  EXPECT_EQ(error_of("x = {k for k in a}"), "1:5: set comprehensions are not supported in TSL");
  EXPECT_EQ(error_of("x = {k: 1 for k in a for j in b}"),
            "1:22: dict comprehensions with more than one `for` or `if` clause are not supported "
            "in TSL");
  EXPECT_EQ(error_of("{'a': 1} = x"), "1:1: cannot assign to dict literal");
  EXPECT_EQ(error_of("if (n := 3):\n  pass"),
            "1:7: assignment expressions (`:=`) are not supported in TSL");
  EXPECT_EQ(error_of("f(x for x in y)"), "1:3: generator expressions are not supported in TSL");
  EXPECT_EQ(error_of("f(**k)"), "1:3: `**` arguments are not supported in TSL");
  EXPECT_EQ(
      error_of("[x for x in a for y in b]"),
      "1:15: list comprehensions with more than one `for` or `if` clause are not supported in TSL");
  EXPECT_EQ(error_of("raise E from e"), "1:9: `raise ... from` is not supported in TSL");
}

TEST(SyntaxErrors, DeepNestingIsAnErrorNotACrash) {
  std::string parens = "x = " + std::string(10000, '(') + "1" + std::string(10000, ')') + "\n";
  EXPECT_EQ(error_of(parens), "1:205: too many nested parentheses");
  std::string ok = "x = " + std::string(199, '(') + "1" + std::string(199, ')') + "\n";
  EXPECT_EQ(error_of(ok), "ok");
  std::string lists = "x = " + std::string(10000, '[') + std::string(10000, ']') + "\n";
  EXPECT_EQ(error_of(lists), "1:205: too many nested parentheses");
  std::string blocks;
  for (int i = 0; i < 1000; ++i) blocks += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
  blocks += std::string(1000, ' ') + "pass\n";
  EXPECT_EQ(error_of(blocks), "102:102: too many levels of indentation");
  // Long unary and power chains and long sums: deep trees, not deep brackets.
  for (const std::string& unit :
       {std::string("-"), std::string("not "), std::string("2**"), std::string("~")}) {
    std::string chain = "x = ";
    for (int i = 0; i < 100000; ++i) chain += unit;
    chain += "1\n";
    EXPECT_NE(error_of(chain).find("expression too complex"), std::string::npos) << unit;
  }
  std::string sum = "x = 1";
  for (int i = 0; i < 100000; ++i) sum += "+1";
  EXPECT_NE(error_of(sum).find("expression too complex"), std::string::npos);
  std::string calls = "x = a";
  for (int i = 0; i < 5000; ++i) calls += ".f()";
  EXPECT_NE(error_of(calls).find("expression too complex"), std::string::npos);
}

TEST(SyntaxErrors, InvalidUtf8) {
  EXPECT_EQ(error_of("x = 1\ny = 'a\xff'\n"), "2:7: invalid UTF-8 byte 0xff");
  EXPECT_EQ(error_of("# \xc3\n"), "1:3: invalid UTF-8 byte 0xc3");
  EXPECT_EQ(error_of("é = 1\nz = \x80"), "2:5: invalid UTF-8 byte 0x80");
  EXPECT_EQ(error_of("s = '\xed\xa0\x80'"), "1:6: invalid UTF-8 byte 0xed");  // a surrogate
  EXPECT_EQ(error_of("s = 'é'"), "ok");
}

TEST(SyntaxErrors, RenderedWithCaret) {
  try {
    parse_module(std::make_shared<Source>("t.tsl", "x = (1 +\n"));
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_EQ(e.render(), "t.tsl:1:5: error: '(' was never closed\n    x = (1 +\n        ^\n");
  }
}

TEST(ClassifyInput, CompleteIncompleteInvalid) {
  EXPECT_EQ(classify_input("x = 1\n"), InputStatus::Complete);
  EXPECT_EQ(classify_input(""), InputStatus::Complete);
  EXPECT_EQ(classify_input("# c\n"), InputStatus::Complete);
  EXPECT_EQ(classify_input("print(1 + 2)\n"), InputStatus::Complete);
  EXPECT_EQ(classify_input("x = (1,\n"), InputStatus::Incomplete);
  EXPECT_EQ(classify_input("x = [1,\n 2\n"), InputStatus::Incomplete);
  EXPECT_EQ(classify_input("x = 1 + \\\n"), InputStatus::Incomplete);
  EXPECT_EQ(classify_input("s = '''abc\n"), InputStatus::Incomplete);
  EXPECT_EQ(classify_input("def f(x):\n"), InputStatus::Incomplete);
  EXPECT_EQ(classify_input("def f(x):\n    return x\n"), InputStatus::Incomplete);
  EXPECT_EQ(classify_input("def f(x):\n    return x\n\n"), InputStatus::Complete);
  EXPECT_EQ(classify_input("if x: y = 1\n"), InputStatus::Incomplete);  // an `else:` may follow
  EXPECT_EQ(classify_input("if x: y = 1\n\n"), InputStatus::Complete);
  EXPECT_EQ(classify_input("@torch.jit.script\n"), InputStatus::Incomplete);
  EXPECT_EQ(classify_input("for i in range(3):\n    x = (i,\n"), InputStatus::Incomplete);
  EXPECT_EQ(classify_input("if x:\n\n"), InputStatus::Invalid);  // a header then a blank line
  EXPECT_EQ(classify_input("x = = 1\n"), InputStatus::Invalid);
  EXPECT_EQ(classify_input("x = 'abc\n"), InputStatus::Invalid);
  EXPECT_EQ(classify_input("x = )\n"), InputStatus::Invalid);
  EXPECT_EQ(classify_input("x = \xff\n"), InputStatus::Invalid);
  EXPECT_EQ(classify_input("lambda: 1\n"), InputStatus::Invalid);
}

}  // namespace
}  // namespace tsl
