// IR text round trip through the real binary: for every example and language/tensor
// script, `tsl --ir` must print what `tsl --dump=ir` printed back unchanged, and the
// passes must keep it valid (the verifier runs after each).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("tsl_irrt_" + std::to_string(::getpid()) + "_" + name);
}

// Runs `tsl ARGS` with stdin from /dev/null.
Result tsl(const std::string& args) {
  const char* bin_env = std::getenv("TSL_BINARY");
  std::string bin = bin_env ? bin_env : TSL_BINARY;
  fs::path out = temp_path("out"), err = temp_path("err");
  std::string cmd = "timeout 120 " + quote(bin) + " " + args + " < /dev/null > " +
                    quote(out.string()) + " 2> " + quote(err.string());
  int raw = std::system(cmd.c_str());
  Result r{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

std::vector<fs::path> scripts() {
  std::vector<fs::path> files;
  fs::path root = TSL_SOURCE_DIR;
  for (const char* dir : {"examples", "tests/scripts/language", "tests/scripts/tensors",
                          "tests/scripts/autodiff", "tests/autodiff_torch"}) {
    if (!fs::is_directory(root / dir)) continue;
    for (const auto& e : fs::directory_iterator(root / dir)) {
      if (e.path().extension() == ".tsl") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Runs `tsl --ir` on `ir_text` (with `extra` options); returns the result.
Result run_ir(const std::string& ir_text, const std::string& extra = "") {
  fs::path p = temp_path("in.ir");
  std::ofstream(p, std::ios::binary) << ir_text;
  Result r = tsl("--ir " + quote(p.string()) + extra);
  fs::remove(p);
  return r;
}

class IRRoundTrip : public ::testing::TestWithParam<fs::path> {};

TEST_P(IRRoundTrip, DumpParsesAndPrintsBackUnchanged) {
  Result dump = tsl("--dump=ir " + quote(GetParam().string()));
  // A script that fails is the script tests' business; here it has no IR to check.
  if (dump.status != 0) GTEST_SKIP() << "--dump=ir failed:\n" << dump.err;
  if (dump.out.empty()) GTEST_SKIP() << "no functions in " << GetParam();
  Result back = run_ir(dump.out);
  EXPECT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(back.out, dump.out);
  // Dead-code elimination keeps every graph valid, and its result reads back too.
  Result dce = run_ir(dump.out, " --passes=dce");
  ASSERT_EQ(dce.status, 0) << dce.err;
  Result again = run_ir(dce.out);
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out, dce.out);
}

// The text without comment-only and blank lines, and without the note on a forward
// graph's return line that names its captured values (a comment the parser skips).
std::string without_comments(const std::string& text) {
  std::stringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    size_t note = line.find("  # captured for the backward:");
    if (note != std::string::npos) line.resize(note);
    out += line + "\n";
  }
  return out;
}

TEST_P(IRRoundTrip, GradientDumpParsesAndPrintsBackUnchanged) {
  // --dump=grad prints forward and backward graphs with GradOf nodes, between comments.
  Result dump = tsl("--dump=grad " + quote(GetParam().string()));
  bool has_graph = dump.out.starts_with("graph ") || dump.out.find("\ngraph ") != std::string::npos;
  if (dump.status != 0 || !has_graph) GTEST_SKIP() << "no gradient graphs for " << GetParam();
  Result back = run_ir(dump.out);
  EXPECT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(without_comments(back.out), without_comments(dump.out));
  Result dce = run_ir(dump.out, " --passes=dce");
  EXPECT_EQ(dce.status, 0) << dce.err;
}

std::string test_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name =
      info.param.parent_path().filename().string() + "_" + info.param.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scripts, IRRoundTrip, ::testing::ValuesIn(scripts()), test_name);

TEST(IRCommandLine, SomeScriptsHaveFunctionsToRoundTrip) {
  int with_graphs = 0;
  for (const fs::path& p : scripts()) {
    Result dump = tsl("--dump=ir " + quote(p.string()));
    with_graphs += dump.out.find("graph ") != std::string::npos;
  }
  EXPECT_GE(with_graphs, 5);
}

TEST(IRCommandLine, RunsPassesAndPrintsTheResult) {
  Result r = run_ir(
      "graph f(%x : Tensor):\n"
      "  %dead : Tensor = relu(%x)  # 2:3\n"
      "  %y : Tensor = neg(%x)  # 3:10\n"
      "  return (%y)\n",
      " --passes=dce");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "graph f(%x : Tensor):\n"
            "  %y : Tensor = neg(%x)  # 3:10\n"
            "  return (%y)\n\n");
}

TEST(IRCommandLine, ErrorsAreMessagesWithLocations) {
  Result r = run_ir("graph f(%x : Tensor):\n  %y : Tensor = relu(%z)\n  return (%y)\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("in.ir:2:22: error: undefined value %z"), std::string::npos) << r.err;
  Result unknown = run_ir("graph f(%x : Tensor):\n  return (%x)\n", " --passes=dce,nope");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find(
                "unknown pass 'nope'; the known passes are: canonicalize, specialize-undefined"),
            std::string::npos)
      << unknown.err;
  Result empty = run_ir("# nothing here\n");
  EXPECT_EQ(empty.status, 2);
  EXPECT_NE(empty.err.find("no graph in the file"), std::string::npos) << empty.err;
  Result missing = tsl("--ir /nonexistent/x.ir");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("cannot open '/nonexistent/x.ir'"), std::string::npos);
  Result lone = tsl("--passes=dce");
  EXPECT_EQ(lone.status, 2);
  EXPECT_NE(lone.err.find("--passes needs --ir"), std::string::npos) << lone.err;
  Result help = tsl("--help");
  EXPECT_NE(help.out.find("--ir FILE.ir"), std::string::npos) << help.out;
}

// Issue 21: what a pass finds wrong with a graph as a whole (vmap of a function that
// returns an int, inline of a call to a graph the file lacks) was printed without a
// location; it is located at the graph's header and names the pass. A structural op
// given a block (found by mutating the IR tests) is a parse error, not an internal
// error in vmap.
TEST(IRCommandLine, PassErrorsAreLocatedAtTheirGraph) {
  Result vmap = run_ir(
      "graph ok(%x : Tensor):\n  return (%x)\n"
      "graph counts(%x : Tensor):\n  %n : int = Constant[value=3]()\n  return (%n)\n",
      " --passes=dce,vmap");
  EXPECT_EQ(vmap.status, 2);
  EXPECT_NE(vmap.err.find("in.ir:3:1: error: pass 'vmap': vmap("), std::string::npos) << vmap.err;
  EXPECT_NE(vmap.err.find("must only return Tensors"), std::string::npos) << vmap.err;
  Result call = run_ir(
      "graph f(%x : Tensor):\n  %y : Tensor = CallFunction[name='helper'](%x)\n  return (%y)\n",
      " --passes=inline");
  EXPECT_EQ(call.status, 2);
  EXPECT_NE(call.err.find("in.ir:1:1: error: pass 'inline': cannot inline the call of 'helper'"),
            std::string::npos)
      << call.err;
  Result block = run_ir(
      "graph f(%x : Tensor):\n  %u : Tensor = Undefined()\n    block0():\n      -> (%x)\n"
      "  return (%u)\n",
      " --passes=vmap");
  EXPECT_EQ(block.status, 2);
  EXPECT_NE(block.err.find("in.ir:2:17: error: Undefined takes no blocks"), std::string::npos)
      << block.err;
  EXPECT_EQ(block.err.find("internal error"), std::string::npos) << block.err;
  // A GradOf without its op (found by the IR fuzz target) reached vmap as an internal
  // error.
  Result grad_of = run_ir(
      "graph f(%x : Tensor):\n  %d : Tensor = GradOf[ot='sin'](%x)\n    block0():\n"
      "      -> (%x)\n  return (%d)\n",
      " --passes=vmap");
  EXPECT_EQ(grad_of.status, 2);
  EXPECT_NE(grad_of.err.find("in.ir:2:17: error: GradOf needs a str attribute op"),
            std::string::npos)
      << grad_of.err;
  EXPECT_EQ(grad_of.err.find("internal error"), std::string::npos) << grad_of.err;
}

}  // namespace
