// The `tsl` command line (LANGUAGE.md §11): options, exit statuses (§10), programs
// from -c and from a non-terminal stdin, argv, dumps, and errors that are messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "process_util.h"

namespace fs = std::filesystem;

namespace {

using tsl_test::quote;
using tsl_test::Result;
using tsl_test::slurp;

// Runs `tsl ARGS` with `stdin_text` on stdin (or /dev/null), with the environment
// assignments `env` ("NAME=value ...") added.
Result tsl(const std::string& args, const std::string* stdin_text = nullptr,
           const std::string& env = "") {
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
  std::string cmd = env + (env.empty() ? "" : " ") + "timeout 60 " + quote(bin) + " " + args +
                    " < " + quote(input) + " > " + quote(out.string()) + " 2> " +
                    quote(err.string());
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
  // The build's instruction set written out (never "native": that names whichever
  // machine reads it) and the running CPU's level.
  EXPECT_NE(v.out.find("\nkernels: "), std::string::npos) << v.out;
  EXPECT_EQ(v.out.find("-march=native"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("\ncpu: "), std::string::npos) << v.out;
  EXPECT_NE(v.out.find(", x86-64"), std::string::npos) << v.out;
  Result h = tsl("--help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("usage: tsl"), std::string::npos);
  EXPECT_NE(h.out.find("--dump"), std::string::npos);
}

// tsl does not load cuBLAS at start (Note [cuBLAS opened on first use]): linked, its
// static initializers cost every run ~75 ms, GPU or not. It is not among the libraries
// the binary needs.
TEST(CommandLine, StartsWithoutLoadingCublas) {
  const char* bin_env = std::getenv("TSL_BINARY");
  std::string bin = bin_env ? bin_env : TSL_BINARY;
  fs::path listing = write_temp("ldd.txt", "");
  std::string cmd = "ldd " + quote(bin) + " > " + quote(listing.string()) + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string libs = slurp(listing);
  EXPECT_EQ(libs.find("libcublas"), std::string::npos) << libs;
  fs::remove(listing);
}

// A directory given as the program: a clear error and the compile-error status, not a
// silent success with nothing run.
TEST(CommandLine, ADirectoryIsNotAProgram) {
  fs::path dir = fs::temp_directory_path() / ("tsl_cli_dir_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Result r = tsl(quote(dir.string()));
  fs::remove(dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("tsl: error: cannot read '" + dir.string() + "': it is a directory"),
            std::string::npos)
      << r.err;
}

// save writes through a temporary file renamed over the target: a second save
// replaces the first whole, and no temporary is left behind.
TEST(CommandLine, SaveReplacesTheFileWhole) {
  fs::path dir = fs::temp_directory_path() / ("tsl_cli_save_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string npy = (dir / "t.npy").string();
  Result r = tsl("-c " + quote("import torch\ntorch.save('" + npy + "', torch.ones(1000))\n" +
                               "torch.save('" + npy + "', torch.arange(3))\n" +
                               "print(torch.load('" + npy + "'))"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "tensor([0, 1, 2])\n");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
  fs::remove_all(dir);
}

// A gradient path through item() gives PyTorch's numbers (the number is a constant)
// and one warning on stderr naming the op, however often the gradient is compiled.
TEST(CommandLine, GradientThroughItemWarnsOnce) {
  fs::path p = write_temp("item.tsl",
                          "import torch\n"
                          "from functorch import grad\n"
                          "def f(x):\n"
                          "    return (x * x.sum().item()).sum()\n"
                          "for i in range(3):\n"
                          "    print(grad(f)(torch.tensor([1.0, 2.0])))\n");
  Result r = tsl(quote(p.string()));
  fs::remove(p);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "tensor([3., 3.])\ntensor([3., 3.])\ntensor([3., 3.])\n");
  std::string want = ":4:17: warning: no gradient flows through `item`";
  size_t first = r.err.find(want);
  EXPECT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(want, first + 1), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("through `mul` at line 4"), std::string::npos) << r.err;
}

// --profile: the program's output unchanged on stdout, the table on stderr with one
// row per op kind and the number of calls each made.
TEST(CommandLine, ProfileCountsTheKernelsPerOpKind) {
  fs::path p = write_temp("profile.tsl",
                          "import torch\n"
                          "def f(x: Tensor, w: Tensor) -> Tensor:\n"
                          "    return torch.mm(x, w).sum()\n"
                          "x = torch.ones(4, 4)\n"
                          "for i in range(7):\n"
                          "    x = torch.mm(x, x) * 0.25\n"
                          "print(f(x, x).item())\n");
  Result r = tsl("--no-opt --profile " + quote(p.string()));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "64.0\n");  // x stays ones: 16 entries of 4
  EXPECT_NE(r.err.find("ms in kernels"), std::string::npos) << r.err;
  auto calls = [&](const std::string& kind) {
    size_t at = r.err.find("\n" + kind + " ");
    if (at == std::string::npos) return std::string("missing");
    std::string line = r.err.substr(at + 1, r.err.find('\n', at + 1) - at - 1);
    return line.substr(line.find_last_of(' ') + 1);
  };
  EXPECT_EQ(calls("mm"), "8") << r.err;  // 7 in the loop, 1 in f
  EXPECT_EQ(calls("mul"), "7") << r.err;
  EXPECT_EQ(calls("sum"), "1") << r.err;
  EXPECT_NE(r.err.find("slowest nodes:"), std::string::npos);
  EXPECT_NE(r.err.find("<module>:6"), std::string::npos) << r.err;
  fs::remove(p);
}

// --profile says how the FusionGroups ran: compiled (TSL_FUSION_JIT=sync compiles a
// group at its first run of 4096 elements or more), on the chunk loop (=off), or op by
// op; and how many kernels were compiled.
TEST(CommandLine, ProfileSaysHowFusionGroupsRan) {
  fs::path p = write_temp("profile_fusion.tsl",
                          "import torch\n"
                          "def f(x: Tensor) -> Tensor:\n"
                          "    return torch.tanh(x * 0.5) - x\n"
                          "x = torch.ones(5000)\n"
                          "for i in range(3):\n"
                          "    y = f(x)\n"
                          "print(y.sum().item() < 0.0)\n");
  Result compiled = tsl("--profile " + quote(p.string()), nullptr, "TSL_FUSION_JIT=sync");
  EXPECT_EQ(compiled.status, 0) << compiled.err;
  EXPECT_EQ(compiled.out, "True\n");
  EXPECT_NE(compiled.err.find("fusion: 3 FusionGroup runs: 3 compiled, 0 on the chunk loop, 0 "
                              "op by op; kernels "),
            std::string::npos)
      << compiled.err;
  EXPECT_NE(compiled.err.find("TSL_FUSION_JIT=sync"), std::string::npos) << compiled.err;
  Result chunks = tsl("--profile " + quote(p.string()), nullptr, "TSL_FUSION_JIT=off");
  EXPECT_NE(chunks.err.find("fusion: 3 FusionGroup runs: 0 compiled, 3 on the chunk loop, 0 op "
                            "by op; kernels 0 compiled, 0 loaded from the cache, 0 failed "
                            "(TSL_FUSION_JIT=off"),
            std::string::npos)
      << chunks.err;
  Result no_opt = tsl("--no-opt --profile " + quote(p.string()));
  EXPECT_EQ(no_opt.err.find("fusion:"), std::string::npos) << no_opt.err;
  // A mode it does not know: a warning, and the default.
  Result unknown = tsl(quote(p.string()), nullptr, "TSL_FUSION_JIT=fast");
  EXPECT_EQ(unknown.status, 0);
  EXPECT_EQ(unknown.out, "True\n");
  EXPECT_NE(unknown.err.find("warning: TSL_FUSION_JIT is 'fast'; expected off, async or sync"),
            std::string::npos)
      << unknown.err;
  fs::remove(p);
}

// --dump=kernels: the C++ generated for each FusionGroup that ran on 4096 elements or
// more, one line per step with the op it computes; a program without one says so.
TEST(CommandLine, DumpKernelsPrintsTheGeneratedCode) {
  fs::path p = write_temp("kernels.tsl",
                          "import torch\n"
                          "def f(x: Tensor) -> Tensor:\n"
                          "    return torch.tanh(x * 0.5) - x\n"
                          "y = f(torch.ones(5000))\n");
  Result r = tsl("--dump=kernels " + quote(p.string()));
  fs::remove(p);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(".cpp\n// T = float; P: a SIMD packet of T; inputs: x0 (tensor)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("= opaque(tsl::formulas::mul::packet(x0, c0));  // mul\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("= opaque(tsl::formulas::tanh::packet(r"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  // sub\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("redo_outside("), std::string::npos) << "the shared helpers are left out";
  Result none = tsl("--dump=kernels -c " + quote("print(1)"));
  EXPECT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.out,
            "# no compiled fusion kernels: no FusionGroup ran on 4096 elements or more\n");
}

// Compiled kernels stay in the cache folder for the next process; a damaged one is
// compiled again.
TEST(CommandLine, TheKernelCacheServesTheNextRunAndHealsDamage) {
  fs::path p = write_temp("cache.tsl",
                          "import torch\n"
                          "def f(x: Tensor) -> Tensor:\n"
                          "    return torch.sigmoid(x * 0.75) + x\n"
                          "y = f(torch.ones(5000))\n"
                          "print(y[0].item() > 1.0)\n");
  fs::path cache = fs::temp_directory_path() / ("tsl_cli_cache_" + std::to_string(::getpid()));
  std::string env = "TSL_FUSION_JIT=sync TSL_CACHE_DIR=" + quote(cache.string());
  auto kernels = [](const Result& r) {
    size_t at = r.err.find("; kernels ");
    return at == std::string::npos ? r.err : r.err.substr(at + 10, r.err.find(" (", at) - at - 10);
  };
  Result first = tsl("--profile " + quote(p.string()), nullptr, env);
  EXPECT_EQ(first.out, "True\n") << first.err;
  EXPECT_EQ(kernels(first), "1 compiled, 0 loaded from the cache, 0 failed");
  Result second = tsl("--profile " + quote(p.string()), nullptr, env);
  EXPECT_EQ(kernels(second), "0 compiled, 1 loaded from the cache, 0 failed");
  for (const auto& e : fs::directory_iterator(cache / "kernels")) {
    if (e.path().extension() == ".so") std::ofstream(e.path(), std::ios::binary) << "damaged";
  }
  Result third = tsl("--profile " + quote(p.string()), nullptr, env);
  EXPECT_EQ(third.out, "True\n") << third.err;
  EXPECT_EQ(kernels(third), "1 compiled, 0 loaded from the cache, 0 failed");
  fs::remove_all(cache);
  fs::remove(p);
}

// --dump=memplan: each function's plan from the program's run, a table of its
// intermediates and the arena map; --profile reports the planned arenas.
constexpr const char* kPlanned =
    "import torch\n"
    "def f(x, w):\n"
    "    h = torch.relu(x @ w)\n"
    "    y = torch.tanh(h @ w) * 2.0\n"
    "    return (y @ w).sum()\n"
    "def never(x):\n"
    "    return x\n"
    "x = torch.ones(16, 16)\n"
    "for i in range(3):\n"
    "    print(f(x, x * 0.01).item())\n";

TEST(CommandLine, DumpMemplanDrawsEachFunctionsPlan) {
  fs::path p = write_temp("memplan.tsl", kPlanned);
  Result r = tsl("--dump=memplan " + quote(p.string()));
  EXPECT_EQ(r.status, 0) << r.err;
  // Five 1 KiB intermediates, two live at a time: a 2 KiB arena.
  EXPECT_NE(r.out.find("memory plan of f (1 stage"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("arena 2.0 KiB for 5 intermediates; lower bound 2.0 KiB (arena/bound "
                       "1.00); 5.0 KiB without sharing"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  b   %h            relu                  1024        1024  [."),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("the arena over time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# never has not run yet"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0.0"), std::string::npos) << "the program's output is not shown";
  Result off = tsl("--no-memplan --dump=memplan " + quote(p.string()));
  EXPECT_NE(off.out.find("memory planning is off"), std::string::npos) << off.out;
  Result profile = tsl("--profile " + quote(p.string()));
  EXPECT_NE(profile.err.find("planned memory: 2048 bytes of arenas for 1 function"),
            std::string::npos)
      << profile.err;
  fs::remove(p);
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
  EXPECT_NE(r.err.find("cannot open '/nonexistent/dir/prog.tsl'"), std::string::npos) << r.err;
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

// Issue 21: each nesting limit (docs/language.md, "Limits") at limit - 1 and limit
// compiles and runs to the right value, and at limit + 1 is a located compile error:
// 200 nested brackets, 100 levels of indentation (loops and branches, whose passes
// once took 2^depth), expressions 1,000 levels deep.
TEST(CommandLine, NestingLimitsHoldAtTheirEdges) {
  struct Edge {
    const char* what;
    int limit;
    std::function<std::string(int)> program;  // prints n for n levels
    std::function<std::string(int)> expected;
    std::string error;  // at limit + 1
  };
  auto indent = [](int n) { return std::string(static_cast<size_t>(n), ' '); };
  std::vector<Edge> edges = {
      {"brackets", 200,
       [](int n) {
         // n brackets around the count: `((...(n)...))`, then n lists around it.
         return "print(" + std::string(static_cast<size_t>(n - 1), '(') + std::to_string(n) +
                std::string(static_cast<size_t>(n - 1), ')') + ")\n";
       },
       [](int n) { return std::to_string(n) + "\n"; }, "too many nested parentheses"},
      {"indentation", 100,
       [&](int n) {
         std::string p = "k = 0\nx = 1\n";
         for (int i = 0; i < n; ++i) {
           const char* head[] = {"for i in range(x):", "while k < 1:", "if x > 0:"};
           p += indent(i) + head[i % 3] + "\n";
         }
         return p + indent(n) + "k += 1\nprint(k)\n";
       },
       [](int) { return std::string("1\n"); }, "too many levels of indentation"},
      {"expression depth", 1000,
       [](int n) {
         std::string p = "x = 1";  // n levels: the literal and n - 1 additions
         for (int i = 1; i < n; ++i) p += " + 1";
         return p + "\nprint(x)\n";
       },
       [](int n) { return std::to_string(n) + "\n"; },
       "expression too complex: nested more than 1000 levels deep"},
  };
  for (const Edge& e : edges) {
    for (int n : {e.limit - 1, e.limit}) {
      std::string program = e.program(n);
      Result r = tsl("", &program);
      EXPECT_EQ(r.status, 0) << e.what << " at " << n << ": " << r.err.substr(0, 400);
      EXPECT_EQ(r.out, e.expected(n)) << e.what << " at " << n;
    }
    std::string over = e.program(e.limit + 1);
    Result r = tsl("", &over);
    EXPECT_EQ(r.status, 2) << e.what << ": " << r.out;
    EXPECT_NE(r.err.find("<stdin>:"), std::string::npos) << e.what << ": " << r.err;
    EXPECT_NE(r.err.find("error: " + e.error), std::string::npos)
        << e.what << ": " << r.err.substr(0, 400);
  }
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

// ---- The optimization pipeline (--dump=opt, --dump=opt-grad, --no-opt) --------------------

// The node lines of IR text: not graph headers, block headers, returns or comments.
size_t count_node_lines(const std::string& ir) {
  std::istringstream in(ir);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    std::string_view l = std::string_view(line).substr(start);
    if (l.starts_with("#") || l.starts_with("graph ") || l.starts_with("return (") ||
        l.starts_with("block") || l.starts_with("-> ("))
      continue;
    ++n;
  }
  return n;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// `text` without its comment lines (what `tsl --ir` prints back).
std::string without_comment_lines(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("#")) out += line + "\n";
  }
  return out;
}

fs::path two_layer_net() {
  const char* dir = std::getenv("TSL_SOURCE_DIR");
  return fs::path(dir ? dir : TSL_SOURCE_DIR) /
         "tests/scripts/autodiff/optimized_two_layer_net.tsl";
}

TEST(CommandLine, DumpOptShowsTheGraphsAfterThePipeline) {
  fs::path p = write_temp("opt.tsl",
                          "def f(a: Tensor) -> Tensor:\n"
                          "    b = a + a\n"
                          "    for i in range(10):\n"
                          "        b = b + a * 2.0\n"
                          "    return b * (a + a)\n\n"
                          "print(f(ones(2)))\n");
  Result ir = tsl("--dump=ir " + quote(p.string()));
  Result opt = tsl("--dump=opt " + quote(p.string()));
  fs::remove(p);
  ASSERT_EQ(ir.status, 0) << ir.err;
  ASSERT_EQ(opt.status, 0) << opt.err;
  // As written: `a + a` twice and `a * 2.0` inside the loop. Optimized: one `a + a`
  // (cse) and `a * 2.0` before the loop (licm).
  EXPECT_EQ(count_of(ir.out, "= add(%a, %a"), 2u) << ir.out;
  EXPECT_LT(ir.out.find("Loop("), ir.out.find("mul(%a"));
  EXPECT_EQ(count_of(opt.out, "= add(%a, %a"), 1u) << opt.out;
  EXPECT_LT(opt.out.find("mul(%a"), opt.out.find("Loop(")) << opt.out;
  EXPECT_LT(count_node_lines(opt.out), count_node_lines(ir.out)) << opt.out;
  EXPECT_NE(opt.out.find("# f after the optimization pipeline: " +
                         std::to_string(count_node_lines(opt.out)) + " nodes (" +
                         std::to_string(count_node_lines(ir.out)) + " nodes as written)\n"),
            std::string::npos)
      << opt.out;
}

// A transform that ran (`df = grad(loss)`) is listed with the graph it runs. For issue
// 5's benchmark expression its gradient fuses: one group for the forward, which
// returns the dtypes the backward's casts read rather than the tensors, one for the
// backward, with the casts inside (Note [Conversions in the fused program]).
TEST(CommandLine, DumpOptShowsTheGraphsOfTransformsThatRan) {
  fs::path p = write_temp("opt_grad.tsl",
                          "import torch\n"
                          "from functorch import grad\n"
                          "def loss(x: torch.Tensor, a: float, b: float) -> torch.Tensor:\n"
                          "    y = torch.sigmoid(x * a + b) * torch.tanh(x) - x * 0.5\n"
                          "    return y.sum()\n\n"
                          "df = grad(loss)\n"
                          "print(df(torch.ones(4), 1.5, -0.25))\n");
  Result opt = tsl("--dump=opt " + quote(p.string()));
  fs::remove(p);
  ASSERT_EQ(opt.status, 0) << opt.err;
  size_t at = opt.out.find("graph grad(loss)(%x : Tensor, %a : float, %b : float):");
  ASSERT_NE(at, std::string::npos) << opt.out;
  std::string g = opt.out.substr(at);
  EXPECT_EQ(count_of(g, "= FusionGroup("), 2u) << g;
  EXPECT_NE(g.find(" : dtype = FusionGroup(%x, %a, %b)"), std::string::npos) << g;
  EXPECT_EQ(count_of(g, "= to("), 4u) << g;
  EXPECT_GT(g.find("= to("), g.find("%dx : Tensor = FusionGroup(")) << g;
}

TEST(CommandLine, DumpOptParsesBackAndEqualsThePassesOnTheIR) {
  fs::path p = write_temp("opt_rt.tsl",
                          "def f(x: Tensor) -> Tensor:\n"
                          "    y = x * x + x * x\n"
                          "    if 2 > 1:\n"
                          "        y = y - 0\n"
                          "    return y\n");
  Result ir = tsl("--dump=ir " + quote(p.string()));
  Result opt = tsl("--dump=opt " + quote(p.string()));
  fs::remove(p);
  ASSERT_EQ(ir.status, 0) << ir.err;
  ASSERT_EQ(opt.status, 0) << opt.err;
  fs::path opt_ir = write_temp("opt.ir", opt.out);
  fs::path plain_ir = write_temp("plain.ir", ir.out);
  Result back = tsl("--ir " + quote(opt_ir.string()));
  Result passes = tsl("--ir " + quote(plain_ir.string()) + " --passes=optimize,fuse");
  fs::remove(opt_ir);
  fs::remove(plain_ir);
  EXPECT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(back.out, without_comment_lines(opt.out));
  EXPECT_EQ(passes.status, 0) << passes.err;
  EXPECT_EQ(passes.out, without_comment_lines(opt.out));
  EXPECT_EQ(opt.out.find("If("), std::string::npos) << opt.out;  // folded: 2 > 1
  // What runs: `t = x * x; t + t` is one FusionGroup.
  EXPECT_NE(opt.out.find("= FusionGroup(%x)"), std::string::npos) << opt.out;
}

// --dump=ir prints every function, callees too, so its calls inline through --ir.
TEST(CommandLine, DumpIrInlinesThroughTheInlinePass) {
  fs::path p = write_temp("calls.tsl",
                          "import torch\n\n"
                          "def g(a: Tensor) -> Tensor:\n"
                          "    return torch.relu(a) * 2.0\n\n"
                          "def f(x: Tensor) -> Tensor:\n"
                          "    return g(x) + g(-x)\n");
  Result ir = tsl("--dump=ir " + quote(p.string()));
  fs::remove(p);
  ASSERT_EQ(ir.status, 0) << ir.err;
  EXPECT_EQ(count_of(ir.out, "CallFunction[name='g']"), 2u) << ir.out;
  fs::path dumped = write_temp("calls.ir", ir.out);
  Result inlined = tsl("--ir " + quote(dumped.string()) + " --passes=inline");
  fs::remove(dumped);
  ASSERT_EQ(inlined.status, 0) << inlined.err;
  EXPECT_EQ(inlined.out.find("CallFunction"), std::string::npos) << inlined.out;
  EXPECT_EQ(count_of(inlined.out, "= relu("), 3u) << inlined.out;  // g's own and two copies
}

// Issue 5: a two-layer net's forward+backward graph before and after the pipeline.
TEST(CommandLine, TheTwoLayerNetsGradientGraphShrinks) {
  Result grad = tsl("--dump=grad " + quote(two_layer_net().string()));
  Result opt = tsl("--dump=opt-grad " + quote(two_layer_net().string()));
  ASSERT_EQ(grad.status, 0) << grad.err;
  ASSERT_EQ(opt.status, 0) << opt.err;
  for (const char* g : {"graph loss.forward(", "graph loss.backward("}) {
    EXPECT_EQ(count_of(grad.out, g), 1u) << grad.out;
    EXPECT_EQ(count_of(opt.out, g), 1u) << opt.out;
  }
  EXPECT_EQ(count_of(opt.out, "after the optimization pipeline"), 2u) << opt.out;
  size_t before = count_node_lines(grad.out), after = count_node_lines(opt.out);
  EXPECT_LT(after, before) << "before: " << before << ", after: " << after;
  // The backward, where the pipeline has the most to do, by a tenth at least. (The
  // forward grows by the sizes and dtypes it computes for the backward: Note
  // [Capturing sizes and dtypes].)
  auto backward = [](const std::string& out) {
    return count_node_lines(out.substr(out.find("graph loss.backward(")));
  };
  EXPECT_LT(backward(opt.out), backward(grad.out) * 9 / 10)
      << "before: " << backward(grad.out) << ", after: " << backward(opt.out);
  // Every gradient is still computed: one GradOf per differentiated forward op.
  EXPECT_EQ(count_of(opt.out, "GradOf["), count_of(grad.out, "GradOf["));
}

// Issue 21: --timeout S stops a statement that runs longer than S seconds with a
// located TimeoutError: a loop, or a compilation (a 20,000-branch elif chain takes
// seconds to compile, far more than 0.05 s on any machine); a bad value is a usage
// error. One test per case, so that a failure names the case.
TEST(CommandLine, TimeoutStopsALongLoop) {
  fs::path forever = write_temp("forever.tsl", "n = 0\nwhile True:\n    n += 1\n");
  Result loop = tsl("--timeout 0.3 " + quote(forever.string()));
  fs::remove(forever);
  EXPECT_EQ(loop.status, 1) << loop.err;
  EXPECT_NE(loop.err.find("error: TimeoutError: the statement ran longer than its time limit "
                          "(--timeout 0.3 s)"),
            std::string::npos)
      << loop.err;
}

TEST(CommandLine, TimeoutStopsALongCompilation) {
  std::string chain = "x = 5\nif x == 0:\n    y = 0\n";
  for (int i = 1; i < 20000; ++i)
    chain += "elif x == " + std::to_string(i) + ":\n    y = " + std::to_string(i) + "\n";
  fs::path program = write_temp("long_elif.tsl", chain + "print(y)\n");
  Result compile = tsl("--timeout=0.05 " + quote(program.string()));
  fs::remove(program);
  EXPECT_EQ(compile.status, 1) << compile.err << compile.out;
  EXPECT_EQ(compile.out, "");
  EXPECT_NE(compile.err.find("long_elif.tsl:"), std::string::npos) << compile.err;
  EXPECT_NE(compile.err.find("TimeoutError"), std::string::npos) << compile.err;
}

TEST(CommandLine, TimeoutLetsAShortStatementFinish) {
  Result fine = tsl("--timeout 30 -c 'print(sum([i for i in range(1000)]))'");
  EXPECT_EQ(fine.status, 0) << fine.err;
  EXPECT_EQ(fine.out, "499500\n");
}

TEST(CommandLine, TimeoutNeedsAPositiveNumberOfSeconds) {
  for (const char* bad : {"--timeout 0", "--timeout -1", "--timeout abc", "--timeout"}) {
    Result r = tsl(std::string(bad) + " -c 'print(1)'");
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("--timeout needs a number of seconds > 0"), std::string::npos) << bad;
  }
}

// Issue 19: `--dump=grad --args 'F(ARGS)'` is the REPL's `:grad F(ARGS)`: one
// function's gradient specialized to arguments over the program's variables (its
// shapes in the types, the bookkeeping gone), `--values` with each value.
TEST(CommandLine, DumpGradWithArgsSpecializesOneCall) {
  std::string net = quote(two_layer_net().string());
  Result plain = tsl("--dump=grad --args 'loss(w1, b1, w2, b2, x, target)' " + net);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out.find("loss.forward(%w1 : Tensor[4, 6](float64), %b1 : Tensor[6](float64), "
                           "%w2 : Tensor[6, 3](float64), %b2 : Tensor[3](float64), "
                           "%x : Tensor[8, 4](float64), %target : Tensor[8](int64)):"),
            0u)
      << plain.out;
  EXPECT_NE(plain.out.find("loss.backward(%dloss : Tensor[](float64)):"), std::string::npos)
      << plain.out;
  EXPECT_NE(plain.out.find("# the gradients of w1, b1, w2, b2, x\n"), std::string::npos)
      << plain.out;
  // Only the biases' broadcast gradients are summed, to constant sizes.
  EXPECT_EQ(count_of(plain.out, "sum_to_size"), 2u) << plain.out;
  EXPECT_NE(plain.out.find("sum_to_size(%dlogits, [3])"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("= size("), std::string::npos) << plain.out;
  EXPECT_EQ(count_of(plain.out, "graph loss."), 0u) << plain.out;  // not the general view
  Result values = tsl("--dump=grad --values '--args=loss(w1,b1,w2,b2,x,target)' " + net);
  ASSERT_EQ(values.status, 0) << values.err << values.out;
  EXPECT_NE(values.out.find("mean"), std::string::npos) << values.out;
  EXPECT_GT(values.out.size(), plain.out.size());
  // Bad uses are errors that say what is expected.
  Result no_call = tsl("--dump=grad --args 'loss(w1' " + net);
  EXPECT_NE(no_call.status, 0);
  EXPECT_NE(no_call.err.find("expected a call NAME(ARGS)"), std::string::npos) << no_call.err;
  Result no_fn = tsl("--dump=grad --args 'nope(x)' " + net);
  EXPECT_NE(no_fn.err.find("no function named 'nope'"), std::string::npos) << no_fn.err;
  Result no_dump = tsl("--args 'loss(x)' " + net);
  EXPECT_EQ(no_dump.status, 2);
  EXPECT_NE(no_dump.err.find("--args and --values go with --dump=grad"), std::string::npos)
      << no_dump.err;
  // --format=dot draws it (Note [The gradient picture]).
  Result dot = tsl("--dump=grad --format=dot --args 'loss(w1, b1, w2, b2, x, target)' " + net);
  ASSERT_EQ(dot.status, 0) << dot.err;
  EXPECT_EQ(dot.out.find("digraph \"loss\""), 0u) << dot.out;
  EXPECT_NE(dot.out.find("[dir=back]"), std::string::npos) << dot.out;
}

// Issue 5: elementwise fusion (on with the optimizer) prints the numbers of the
// unfused program: the benchmark's expression, forward and gradient, large enough for
// the fused loop to run on several threads, and on strided input (the fallback).
TEST(CommandLine, FusedProgramsPrintTheNumbersOfNoOpt) {
  fs::path p = write_temp("fused.tsl",
                          "import torch\n"
                          "from functorch import grad\n\n"
                          "def f(x: torch.Tensor, a: float, b: float) -> torch.Tensor:\n"
                          "    return torch.sigmoid(x * a + b) * torch.tanh(x) - x * 0.5\n\n"
                          "def loss(x: torch.Tensor, a: float, b: float) -> torch.Tensor:\n"
                          "    return f(x, a, b).sum()\n\n"
                          "torch.manual_seed(0)\n"
                          "x = torch.randn(100003, dtype=torch.float64)\n"
                          "y = f(x, 1.5, -0.25)\n"
                          "g = grad(loss)(x, 1.5, -0.25)\n"
                          "print('{:.12f} {:.12f}'.format(y.sum().item(), g.sum().item()))\n"
                          "print(y[:4], g[-4:])\n"
                          "m = torch.randn(300, 200).t()\n"
                          "print('{:.6f}'.format(f(m, 0.5, 0.125).sum().item()))\n");
  Result fused = tsl(quote(p.string()));
  Result plain = tsl("--no-opt " + quote(p.string()));
  fs::remove(p);
  ASSERT_EQ(fused.status, 0) << fused.err;
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(fused.out, plain.out);
  EXPECT_EQ(count_of(fused.out, "\n"), 3u) << fused.out;
}

TEST(CommandLine, NoOptPrintsTheSameNumbers) {
  Result opt = tsl(quote(two_layer_net().string()));
  Result no_opt = tsl("--no-opt " + quote(two_layer_net().string()));
  Result env = tsl(quote(two_layer_net().string()), nullptr, "TSL_NO_OPT=1");
  ASSERT_EQ(opt.status, 0) << opt.err;
  EXPECT_NE(opt.out.find("epoch 2: loss 0.813399365502\n"), std::string::npos) << opt.out;
  EXPECT_EQ(no_opt.status, 0) << no_opt.err;
  EXPECT_EQ(no_opt.out, opt.out);
  EXPECT_EQ(env.status, 0) << env.err;
  EXPECT_EQ(env.out, opt.out);
  Result help = tsl("--help");
  EXPECT_NE(help.out.find("--no-opt"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--dump=opt"), std::string::npos) << help.out;
}

}  // namespace

// plot() draws through gnuplot: an SVG with the curve and the title, a PNG, a scatter
// against x, text on stdout without a path, and errors for a bad path or shape. The
// drawing tests skip where gnuplot is not installed (TSL_WITH_DATA=1 scripts/setup.sh).
TEST(CommandLine, PlotDrawsWithGnuplot) {
  Result bad = tsl("-c " + quote("import torch\nplot(torch.ones(3), 'x.pdf')\n"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("plot: 'x.pdf' must end in .svg or .png"), std::string::npos) << bad.err;
  Result shape = tsl("-c " + quote("import torch\nplot(torch.ones(3, 2), 'x.svg')\n"));
  EXPECT_NE(shape.err.find("plot: y must be 1-dimensional, got shape [3, 2]"), std::string::npos)
      << shape.err;
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "gnuplot is not installed";
  }
  fs::path dir = fs::temp_directory_path() / ("tsl_cli_plot_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string program =
      "import torch\n"
      "losses = [1.0 / (i + 1) for i in range(30)]\n"
      "plot(losses, '" +
      (dir / "loss.svg").string() +
      "', title='the loss', xlabel='step')\n"
      "plot(torch.tensor(losses), '" +
      (dir / "loss.png").string() +
      "')\n"
      "x = torch.linspace(-1.0, 1.0, 20)\n"
      "plot(x * x, '" +
      (dir / "scatter.svg").string() +
      "', x=x, kind='scatter')\n"
      "plot(torch.tensor(losses))\n";
  Result r = tsl("-c " + quote(program));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string svg = slurp(dir / "loss.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("the loss"), std::string::npos);
  EXPECT_NE(svg.find("<path"), std::string::npos);
  EXPECT_EQ(slurp(dir / "loss.png").substr(1, 3), "PNG");
  EXPECT_NE(slurp(dir / "scatter.svg").find("<svg"), std::string::npos);
  // The text drawing: axes of + and - with the curve in *.
  EXPECT_NE(r.out.find("+------"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("*"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

// `for x in progress(xs)`: off a terminal, a plain line on stderr at each tenth of the
// loop and at its end; the loop runs as without it. Elsewhere progress() is an error.
TEST(CommandLine, ProgressReportsALoop) {
  Result r = tsl("-c " + quote("total = 0\n"
                               "for i in progress(range(20), desc='work'):\n"
                               "    total += i\n"
                               "print(total)\n"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "190\n");
  EXPECT_NE(r.err.find("work:  10%|##                  | 2/20"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("work: 100%|####################| 20/20"), std::string::npos) << r.err;
  size_t lines = 0;
  for (char c : r.err) lines += c == '\n';
  EXPECT_EQ(lines, 10u) << r.err;  // 10%, ..., 90% and the end
  Result bad = tsl("-c " + quote("x = progress(range(3))\n"));
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("progress() is a for loop's iterable"), std::string::npos) << bad.err;
}
