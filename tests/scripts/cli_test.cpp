// The `tsl` command line (LANGUAGE.md §11): options, exit statuses (§10), programs
// from -c and from a non-terminal stdin, argv, dumps, and errors that are messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "process_util.h"

namespace fs = std::filesystem;

namespace {

using tsl_test::quote;
using tsl_test::Result;
using tsl_test::slurp;

// Runs `tsl ARGS` with `stdin_text` on stdin (or /dev/null).
Result tsl(const std::string& args, const std::string* stdin_text = nullptr) {
  const char* bin_env = std::getenv("TSL_BINARY");
  std::string bin = bin_env ? bin_env : TSL_BINARY;
  fs::path base = fs::temp_directory_path() / ("tsl_cli_" + std::to_string(::getpid()));
  fs::path out = base, err = base, in = base;
  out += ".out";
  err += ".err";
  in += ".in";
  std::string input = "/dev/null";
  if (stdin_text) {
    std::ofstream(in, std::ios::binary) << *stdin_text;
    input = in.string();
  }
  std::string cmd = "timeout 60 " + quote(bin) + " " + args + " < " + quote(input) + " > " +
                    quote(out.string()) + " 2> " + quote(err.string());
  int raw = std::system(cmd.c_str());
  Result r{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
  fs::remove(out);
  fs::remove(err);
  fs::remove(in);
  return r;
}

fs::path write_temp(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("tsl_cli_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

TEST(CommandLine, VersionAndHelp) {
  Result v = tsl("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("tsl ", 0), 0u) << v.out;
  Result h = tsl("--help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("usage: tsl"), std::string::npos);
  EXPECT_NE(h.out.find("--dump"), std::string::npos);
}

TEST(CommandLine, RunsCodeFromDashC) {
  Result r = tsl("-c " + quote("print(1 + 2, 2 ** 10, 7 // 2, -7 % 3)"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "3 1024 3 2\n");
}

TEST(CommandLine, ReadsAProgramFromANonTerminalStdin) {
  std::string program = "x = 2\ndef f(y: int) -> int:\n    return y * x\n\nprint(f(21))\n";
  Result r = tsl("", &program);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "42\n");  // no prompts
}

TEST(CommandLine, PassesArgvToTheScript) {
  fs::path p = write_temp("argv.tsl", "print(len(argv), argv[1], argv[2])\n");
  Result r = tsl(quote(p.string()) + " alpha 'b c'");
  fs::remove(p);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "3 alpha b c\n");
}

TEST(CommandLine, MissingFileIsAnErrorNotACrash) {
  Result r = tsl("/nonexistent/dir/prog.tsl");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot open file '/nonexistent/dir/prog.tsl'"), std::string::npos) << r.err;
}

TEST(CommandLine, UnknownOptionIsAUsageError) {
  Result r = tsl("--frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown option --frobnicate"), std::string::npos) << r.err;
}

TEST(CommandLine, CompileErrorsExitWithTwoAndRuntimeErrorsWithOne) {
  Result c = tsl("-c " + quote("print(undefined_name)"));
  EXPECT_EQ(c.status, 2);
  EXPECT_NE(c.err.find("<string>:1:7: error: "), std::string::npos) << c.err;
  Result r = tsl("-c " + quote("x = 1\nprint(x // 0)"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("<string>:2:7: error: integer division or modulo by zero"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("    print(x // 0)\n          ^~~~~~\n"), std::string::npos) << r.err;
}

TEST(CommandLine, RuntimeErrorsInFunctionsShowATraceback) {
  fs::path p = write_temp("tb.tsl",
                          "def f(a: Tensor) -> Tensor:\n    return a @ a\n\n"
                          "def g(a: Tensor) -> Tensor:\n    return f(a) + 1.0\n\n"
                          "print(g(ones(2, 3)))\n");
  Result r = tsl(quote(p.string()));
  fs::remove(p);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("Traceback (most recent call last):\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(":7:7, in <module>\n    print(g(ones(2, 3)))\n"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(":5:12, in g\n        return f(a) + 1.0\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(":2:12: error: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
            std::string::npos)
      << r.err;
}

TEST(CommandLine, OutputBeforeAnErrorIsKept) {
  Result r = tsl("-c " + quote("print('before')\nassert 1 == 2, 'boom'"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "before\n");
  EXPECT_NE(r.err.find("boom"), std::string::npos) << r.err;
}

TEST(CommandLine, DumpsTheSyntaxTreeAndTheIR) {
  fs::path p = write_temp("dump.tsl", "def f(x: Tensor) -> Tensor:\n    return relu(x) * 2.0\n");
  Result ast = tsl("--dump=ast " + quote(p.string()));
  EXPECT_EQ(ast.status, 0) << ast.err;
  EXPECT_NE(ast.out.find("FunctionDef"), std::string::npos) << ast.out;
  Result ir = tsl("--dump=ir " + quote(p.string()));
  fs::remove(p);
  EXPECT_EQ(ir.status, 0) << ir.err;
  EXPECT_NE(ir.out.find("graph f(%x : Tensor)"), std::string::npos) << ir.out;
  EXPECT_NE(ir.out.find("relu(%x)"), std::string::npos) << ir.out;
}

TEST(CommandLine, NonUtf8SourceIsACompileError) {
  fs::path p = write_temp("bad_utf8.tsl", "x = 1\ny = '\xff'\n");
  Result r = tsl(quote(p.string()));
  fs::remove(p);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(":2:6: error: "), std::string::npos) << r.err;
}

TEST(CommandLine, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string parens = "x = " + std::string(10000, '(') + "1" + std::string(10000, ')') + "\n";
  Result r = tsl("", &parens);
  EXPECT_EQ(r.status, 2) << r.err;
  // The 201st bracket (column 205) is one too many, as in CPython.
  EXPECT_NE(r.err.find("<stdin>:1:205: error: too many nested parentheses"), std::string::npos)
      << r.err.substr(0, 300);
  std::string blocks;
  for (int i = 0; i < 10000; ++i) blocks += std::string(i, ' ') + "if True:\n";
  blocks += std::string(10000, ' ') + "pass\n";
  Result b = tsl("", &blocks);
  EXPECT_EQ(b.status, 2) << b.err.substr(0, 500);
  EXPECT_NE(b.err.find("<stdin>:102:102: error: too many levels of indentation"), std::string::npos)
      << b.err.substr(0, 300);
}

TEST(CommandLine, HugeAllocationIsAnError) {
  Result r = tsl("-c " + quote("x = zeros(100000, 100000, 100000)"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("cannot allocate"), std::string::npos) << r.err;
  Result big = tsl("-c " + quote("x = zeros(1000000, 1000000)"));
  EXPECT_EQ(big.status, 1) << big.err;
  EXPECT_NE(big.err.find("cannot allocate"), std::string::npos) << big.err;
}

TEST(CommandLine, AcceptsBomCrlfAndNoFinalNewline) {
  std::string program = "\xEF\xBB\xBFx = 1\r\nif x == 1:\r\n    print('ok')\r\nprint(x + 1)";
  Result r = tsl("", &program);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n2\n");
}

}  // namespace
