// `tsl --dump=code FILE`: the register program of each function and the two-stage
// program of its gradient, checked line by line for a small function.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "process_util.h"

namespace fs = std::filesystem;

namespace {

using tsl_test::quote;
using tsl_test::Result;
using tsl_test::slurp;

// Runs `tsl ARGS` with stdin from /dev/null.
Result tsl(const std::string& args) {
  const char* bin_env = std::getenv("TSL_BINARY");
  std::string bin = bin_env ? bin_env : TSL_BINARY;
  fs::path base = fs::temp_directory_path() / ("tsl_code_" + std::to_string(::getpid()));
  fs::path out = base, err = base;
  out += ".out";
  err += ".err";
  std::string cmd = "timeout 60 " + quote(bin) + " " + args + " < /dev/null > " +
                    quote(out.string()) + " 2> " + quote(err.string());
  int raw = std::system(cmd.c_str());
  Result r{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

fs::path write_program(const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("tsl_code_" + std::to_string(::getpid()) + ".tsl");
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

constexpr const char* kProgram =
    "import torch\n"
    "\n"
    "def f(x: Tensor, w: Tensor) -> Tensor:\n"
    "    return torch.relu(torch.mm(x, w))\n"
    "\n"
    "def count(n: int) -> int:\n"
    "    return n + 1\n"
    "\n"
    "print(f(ones(2, 2), ones(2, 2)))\n";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(DumpCode, ShowsRegistersFreesAndTheTwoStagesOfTheGradient) {
  fs::path p = write_program(kProgram);
  Result r = tsl("--dump=code " + quote(p.string()));
  fs::remove(p);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string& out = r.out;
  // The call's program: each input freed by the op that reads it last.
  EXPECT_TRUE(contains(out,
                       "code f: 4 registers\n"
                       "  inputs: r0(%x), r1(%w)\n"
                       "  0: r2(%2) = mm(r0(%x), r1(%w))   ; free r0(%x), r1(%w)\n"
                       "  1: r3(%3) = relu(r2(%2))   ; free r2(%2)\n"
                       "  return r3(%3)\n"))
      << out;
  // Stage 0 frees nothing that the backward reads: x, w and relu's result stay.
  EXPECT_TRUE(contains(out,
                       "stage 0 (f.forward): runs the forward; the captures stay for stage 1\n"
                       "  inputs: r0(%x), r1(%w)\n"
                       "  0: r2(%2) = mm(r0(%x), r1(%w))\n"
                       "  1: r3(%3) = relu(r2(%2))   ; free r2(%2)\n"
                       "  return r3(%3)   ; keep r3(%3), r1(%w), r0(%x) for stage 1\n"
                       "stage 1 (f.backward): runs the backward on the output gradients and "
                       "the captures\n"
                       "  inputs: r4(%0)\n"
                       "  captures: r3(%3), r1(%w), r0(%x)\n"
                       "  2: r5(%4) = AnyDefined(r4(%0))   # a defined incoming gradient: the "
                       "backward, its GradOf blocks inlined; else zero gradients\n"
                       "  3: if not r5(%4) goto 13\n"
                       "  4: r6(%7) = AssumeDefined(r4(%0))\n"))
      << out;
  // Stage 1 reads the captures from the same registers and frees each at its last use;
  // relu's gradient is fused, mm's runs on the transposed operands.
  EXPECT_TRUE(contains(out, " = FusionGroup(r3(%3), r6(%7), r8)   ; free r6(%7)\n")) << out;
  EXPECT_TRUE(contains(out, " = t(r1(%w))\n")) << out;
  EXPECT_TRUE(contains(out, "  19: free r5(%4), r4(%0), r3(%3), r1(%w), r0(%x)\n")) << out;
  EXPECT_TRUE(contains(out, "  return r13(%dx), r14(%dw)\n")) << out;
  // Without a gradient, zero gradients shaped like the inputs.
  EXPECT_TRUE(contains(out, " = AutogradZeros(r15(%dx), r0(%x))   ; free r15(%dx)\n")) << out;
  // A function without a float Tensor parameter has no gradient Code.
  EXPECT_TRUE(contains(out, "code count: "));
  EXPECT_TRUE(contains(out, "# count: no gradient Code (it needs a float Tensor parameter)\n"))
      << out;
}

TEST(DumpCode, IsListedInTheHelpAndNeedsAFile) {
  Result help = tsl("--help");
  EXPECT_TRUE(contains(help.out, "--dump=code FILE")) << help.out;
  Result no_file = tsl("--dump=code");
  EXPECT_NE(no_file.status, 0);
  EXPECT_TRUE(contains(no_file.err, "--dump needs a FILE")) << no_file.err;
  Result bad = tsl("--dump=codes x.tsl");
  EXPECT_TRUE(contains(bad.err, "opt-grad, code, memplan or kernels")) << bad.err;
}

}  // namespace
