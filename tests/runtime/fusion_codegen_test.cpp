// Compiled fusion kernels (Note [Compiled fusion kernels]): the C++ generated for a
// FusionGroup, compiled at run time, gives the chunk loop's and the unfused kernels'
// results bit for bit, for every fused op, in float32 and float64, with inputs read in
// place (aligned or not), as scalars or as expanded values, gathered inputs and bool
// outputs, on one thread and several;
// a compiler that fails leaves the chunk loop running; the async mode compiles hot
// groups in the background.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "ir/ir_parser.h"
#include "ir/passes/fuse_elementwise.h"
#include "runtime/fusion/fusion.h"
#include "runtime/fusion/native_compiler.h"
#include "runtime/tensor/cpu_info.h"
#include "runtime/tensor/parallel.h"
#include "tests/runtime/fusion_test_util.h"

namespace tsl {
namespace {

// Sets the options of one test, and puts the defaults back after it.
class CompiledFusion : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = native_jit_options();
    NativeJitOptions& o = native_jit_options();
    if (::access(o.compiler.c_str(), X_OK) != 0)
      GTEST_SKIP() << "no C++ compiler at " << o.compiler;
    if (o.cache_dir.empty()) o.cache_dir = ::testing::TempDir() + "tsl-cache";
    o.min_elements = 0;
  }
  void TearDown() override { native_jit_options() = saved_; }

  NativeJitOptions saved_;
};

struct Results {
  std::vector<IValue> plain, interpreted, compiled;
  int64_t compiled_runs = 0;
};

// Runs `ir` unfused, fused on the chunk loop (compilation off) and fused with the
// compiled kernel (Sync mode).
Results run_three(const std::string& ir, const std::vector<IValue>& inputs) {
  std::shared_ptr<Graph> plain = parse_graph(ir, "fusion_codegen_test.ir");
  std::shared_ptr<Graph> fused = plain->clone();
  EXPECT_TRUE(fuse_elementwise(*fused)) << ir;
  Results r;
  r.plain = run_code(plain, inputs);
  NativeJitOptions& o = native_jit_options();
  o.mode = NativeJitOptions::Mode::Off;
  r.interpreted = run_code(fused, inputs);
  o.mode = NativeJitOptions::Mode::Sync;
  int64_t before = fusion_counters().compiled;
  r.compiled = run_code(fused, inputs);
  r.compiled_runs = fusion_counters().compiled - before;
  return r;
}

template <typename T>
void expect_same_bits(const Results& r, const std::string& what) {
  ASSERT_EQ(r.plain.size(), r.compiled.size());
  for (size_t k = 0; k < r.plain.size(); ++k) {
    EXPECT_EQ(max_ulps<T>(r.plain[k].to_tensor(), r.interpreted[k].to_tensor()), 0u)
        << what << " output " << k << " (chunk loop)";
    EXPECT_EQ(max_ulps<T>(r.plain[k].to_tensor(), r.compiled[k].to_tensor()), 0u)
        << what << " output " << k << " (compiled)";
  }
}

template <typename T>
void expect_program_matches(const std::string& body, int count) {
  // One thread's share with a head and a tail; parallel runs; fewer than a packet.
  for (int64_t n : {int64_t{1000}, int64_t{3 * kParallelGrain + 17}, int64_t{11}}) {
    Tensor buffer = Tensor::from_vector(test_values<T>(n + 1, 4, 7));
    int64_t sizes[] = {n}, strides[] = {1};
    Tensor view = buffer.as_strided(sizes, strides, 1);
    int64_t stride0[] = {0};
    Tensor expanded = Tensor::from_vector(std::vector<T>{T(0.75)}).as_strided(sizes, stride0, 0);
    std::vector<IValue> inputs{IValue(Tensor::from_vector(test_values<T>(n, 120, 1))), IValue(view),
                               IValue(-1.25), IValue(Tensor::from_vector(std::vector<T>{T(2.5)})),
                               IValue(expanded)};
    Results r = run_three(program(body, count), inputs);
    EXPECT_EQ(r.compiled_runs, 1) << body << " n=" << n;
    expect_same_bits<T>(r, body + " n=" + std::to_string(n));
  }
}

TEST_F(CompiledFusion, SimdFormsMatchTheKernels) {
  expect_program_matches<float>(kSimdForms, 10);
  expect_program_matches<double>(kSimdForms, 10);
}

TEST_F(CompiledFusion, ArithmeticMatchesTheKernels) {
  expect_program_matches<float>(kArithmetic, 14);
  expect_program_matches<double>(kArithmetic, 14);
}

TEST_F(CompiledFusion, ComparisonsAndWhereMatchTheKernels) {
  expect_program_matches<float>(kLogic, 13);
  expect_program_matches<double>(kLogic, 13);
}

// The benchmark's gradient groups: dtype outputs, casts checked per run, an expanded
// seed read as a scalar.
TEST_F(CompiledFusion, GradientGroupsRunCompiled) {
  const std::string ir =
      "graph f(%x : Tensor, %seed : Tensor):\n"
      "  %one : int = Constant[value=1]()\n"
      "  %g : Tensor = sigmoid(%x)\n"
      "  %d : dtype = dtype(%x)\n"
      "  %ng : Tensor = neg(%g)\n"
      "  %fl : float = Constant[value=1.0]()\n"
      "  %c : Tensor = add(%ng, %fl, %one)\n"
      "  %p : Tensor = mul(%g, %c)\n"
      "  %q : Tensor = mul(%seed, %p)\n"
      "  %y : Tensor = to(%q, %d)\n"
      "  return (%y, %d)\n";
  int64_t n = 70001;
  int64_t sizes[] = {n}, stride0[] = {0};
  Tensor seed = Tensor::from_vector(std::vector<float>{1.0f}).as_strided(sizes, stride0, 0);
  Results r =
      run_three(ir, {IValue(Tensor::from_vector(test_values<float>(n, 30, 5))), IValue(seed)});
  EXPECT_EQ(r.compiled_runs, 1);
  ASSERT_EQ(r.compiled.size(), 2u);
  EXPECT_EQ(max_ulps<float>(r.plain[0].to_tensor(), r.compiled[0].to_tensor()), 0u);
  EXPECT_EQ(r.compiled[1].to_dtype(), DType::Float32);
}

// Gathered inputs (a broadcast bias, a column, a transposed matrix, a bool mask) and
// bool outputs run compiled: the kernel reads the gathered chunk, and writes bools as
// 0 or 1 that are stored as bools.
TEST_F(CompiledFusion, GatheredInputsAndBoolOutputsRunCompiled) {
  const std::string ir =
      "graph f(%x : Tensor, %b : Tensor, %col : Tensor, %t : Tensor, %mask : Tensor):\n"
      "  %one : int = Constant[value=1]()\n"
      "  %zero : float = Constant[value=0.0]()\n"
      "  %h : Tensor = add(%x, %b, %one)\n"
      "  %k : Tensor = mul(%h, %col)\n"
      "  %u : Tensor = sub(%k, %t, %one)\n"
      "  %pos : Tensor = gt(%u, %zero)\n"
      "  %both : Tensor = logical_and(%pos, %mask)\n"
      "  %y : Tensor = where(%both, %u, %h)\n"
      "  return (%y, %both)\n";
  const int64_t rows = 67, cols = 301;  // rows cross chunk and packet boundaries
  int64_t xs[] = {rows, cols}, cs[] = {rows, 1}, ts[] = {cols, rows};
  Tensor x = Tensor::from_vector(test_values<float>(rows * cols, 5, 3), xs);
  Tensor b = Tensor::from_vector(test_values<float>(cols, 5, 4));
  Tensor col = Tensor::from_vector(test_values<float>(rows, 2, 5), cs);
  Tensor tt = Tensor::from_vector(test_values<float>(rows * cols, 5, 6), ts);
  int64_t transposed_strides[] = {1, rows};
  Tensor t = tt.as_strided(xs, transposed_strides, 0);
  std::vector<bool> bits;
  for (int64_t i = 0; i < rows * cols; ++i) bits.push_back(i % 3 != 0);
  Tensor mask = Tensor::empty(xs, DType::Bool);
  for (int64_t i = 0; i < rows * cols; ++i) mask.data_ptr<bool>()[i] = bits[i];
  Results r = run_three(ir, {IValue(x), IValue(b), IValue(col), IValue(t), IValue(mask)});
  EXPECT_EQ(r.compiled_runs, 1);
  ASSERT_EQ(r.compiled.size(), 2u);
  EXPECT_EQ(max_ulps<float>(r.plain[0].to_tensor(), r.compiled[0].to_tensor()), 0u);
  Tensor pb = r.plain[1].to_tensor(), cb = r.compiled[1].to_tensor();
  ASSERT_EQ(cb.dtype(), DType::Bool);
  ASSERT_EQ(cb.sizes(), pb.sizes());
  EXPECT_EQ(std::memcmp(pb.data_ptr<bool>(), cb.data_ptr<bool>(), static_cast<size_t>(pb.numel())),
            0);
}

// `x + alpha * y` with alpha other than 1 (a constant, or a number that is not 1 in
// this run) keeps the chunk loop: whether it contracts into an FMA is each build's own.
TEST_F(CompiledFusion, AddsWithAlphaKeepTheChunkLoop) {
  const std::string ir =
      "graph f(%x : Tensor, %x2 : Tensor, %al : float):\n"
      "  %two : float = Constant[value=2.5]()\n"
      "  %s : Tensor = add(%x, %x2, %two)\n"
      "  %y : Tensor = sub(%s, %x, %al)\n"
      "  return (%y)\n";
  int64_t n = 5000;
  std::vector<IValue> inputs{IValue(Tensor::from_vector(test_values<float>(n, 5, 13))),
                             IValue(Tensor::from_vector(test_values<float>(n, 5, 14))),
                             IValue(-1.25)};
  Results r = run_three(ir, inputs);
  EXPECT_EQ(r.compiled_runs, 0);
  expect_same_bits<float>(r, "alpha");
  const std::string one =
      "graph f(%x : Tensor, %x2 : Tensor, %al : float):\n"
      "  %y : Tensor = sub(%x, %x2, %al)\n"
      "  %z : Tensor = neg(%y)\n"
      "  return (%z)\n";
  inputs[2] = IValue(1.0);  // alpha 1 in this run: compiled
  r = run_three(one, inputs);
  EXPECT_EQ(r.compiled_runs, 1);
  expect_same_bits<float>(r, "alpha 1");
  inputs[2] = IValue(0.5);
  r = run_three(one, inputs);
  EXPECT_EQ(r.compiled_runs, 0);
  expect_same_bits<float>(r, "alpha 0.5");
}

// A compiler that fails leaves the group on the chunk loop, with the same results.
TEST_F(CompiledFusion, AFailingCompilerKeepsTheChunkLoop) {
  native_jit_options().compiler = "/bin/false";
  int64_t failed = native_counters().failed;
  std::string body = "  %y0 : Tensor = exp(%m)\n  %y1 : Tensor = neg(%y0)\n";
  int64_t n = 5000;
  int64_t sizes[] = {n}, stride0[] = {0};
  Tensor expanded = Tensor::from_vector(std::vector<float>{1.0f}).as_strided(sizes, stride0, 0);
  std::vector<IValue> inputs{IValue(Tensor::from_vector(test_values<float>(n, 5, 11))),
                             IValue(Tensor::from_vector(test_values<float>(n, 5, 12))), IValue(0.5),
                             IValue(Tensor::from_vector(std::vector<float>{1.0f})),
                             IValue(expanded)};
  Results r = run_three(program(body, 2), inputs);
  EXPECT_EQ(r.compiled_runs, 0);
  EXPECT_EQ(native_counters().failed, failed + 1);
  expect_same_bits<float>(r, "failed compilation");
}

// The async mode: a group is compiled once it is hot, in the background; runs use the
// chunk loop until the kernel is loaded, then the kernel.
TEST_F(CompiledFusion, HotGroupsCompileInTheBackground) {
  NativeJitOptions& o = native_jit_options();
  o.mode = NativeJitOptions::Mode::Async;
  o.hot_elements = 3 * 4096;
  std::shared_ptr<Graph> g = parse_graph(
      "graph f(%x : Tensor):\n"
      "  %k : float = Constant[value=0.375]()\n"
      "  %p : Tensor = mul(%x, %k)\n"
      "  %y : Tensor = tanh(%p)\n"
      "  return (%y)\n",
      "hot.ir");
  std::shared_ptr<Graph> plain = g->clone();
  ASSERT_TRUE(fuse_elementwise(*g));
  Code code(g);  // one compiled group for all runs
  auto run = [&](const std::vector<IValue>& in) { return InterpreterState(code).run(in); };
  std::vector<IValue> inputs{IValue(Tensor::from_vector(test_values<float>(4096, 9, 6)))};
  Tensor expected = run_code(plain, inputs)[0].to_tensor();
  int64_t before = fusion_counters().compiled;
  // Two runs are below the threshold: the chunk loop, and no compilation yet.
  for (int i = 0; i < 2; ++i) run(inputs);
  EXPECT_EQ(fusion_counters().compiled, before);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool compiled = false;
  while (!compiled && std::chrono::steady_clock::now() < deadline) {
    Tensor y = run(inputs)[0].to_tensor();
    EXPECT_EQ(max_ulps<float>(expected, y), 0u);
    compiled = fusion_counters().compiled > before;
    if (!compiled) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(compiled) << "the hot group was not compiled within two minutes";
}

// Note [What a compiled kernel depends on]: a cached kernel's name changes with the
// CPU's extensions and with the run-time compiler's version, and the flags it is
// compiled with name the build's instruction set, never "native".
TEST(NativeCompilerIdentity, DependsOnTheCpuAndTheCompilersVersion) {
  NativeJitOptions o = native_jit_options();
  CpuInfo cpu = cpu_info();
  std::string id = native_build_identity(o, cpu);
  EXPECT_EQ(id, native_build_identity(o, cpu));
  EXPECT_EQ(id.find("-march=native"), std::string::npos) << id;
  CpuInfo other = cpu;
  if (other.has("avx512f")) {
    other.features.erase(std::find(other.features.begin(), other.features.end(), "avx512f"));
  } else {
    other.features.emplace_back("avx512f");
  }
  other.level = x86_64_level(other.features);
  EXPECT_NE(native_build_identity(o, other), id);

  // Two "compilers" at one path that differ only in what --version says.
  std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("tsl-fake-cxx-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto fake = [&](const std::string& name, const std::string& version) {
    std::filesystem::path p = dir / name;
    std::ofstream(p) << "#!/bin/sh\necho '" << version << "'\necho 'second line'\n";
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
    return p.string();
  };
  o.compiler = fake("c1", "fake c++ 1.0");
  std::string one = native_build_identity(o, cpu);
  EXPECT_NE(one.find("(fake c++ 1.0)"), std::string::npos) << one;
  EXPECT_EQ(one.find("second line"), std::string::npos) << one;
  o.compiler = fake("c2", "fake c++ 2.0");
  EXPECT_NE(native_build_identity(o, cpu), one);
  o.compiler = (dir / "missing").string();
  EXPECT_NE(native_build_identity(o, cpu).find("(unknown)"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tsl
