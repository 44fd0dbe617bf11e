// FusionGroups on CUDA (Note [Fused kernels on CUDA] in runtime/fusion/device_kernels.cpp).
// Without a GPU: the kernel generated for every fused op (every row of
// runtime/fused_ops.def), every way of reading an input, bool values and both dtypes
// compiles with NVRTC. With one: a group runs as
// one kernel and gives the unfused CUDA kernels' results bit for bit, aligned or
// not, with broadcast, strided, single-element and expanded inputs and bool outputs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ir/ir_parser.h"
#include "ir/passes/fuse_elementwise.h"
#include "runtime/fusion/fusion.h"
#include "runtime/fusion/device_kernels.h"
#include "runtime/kernels/cuda/cuda_context.h"
#include "runtime/fusion/native_compiler.h"
#include "runtime/tensor/device_backend.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/runtime/fusion_test_util.h"

namespace tsl {
namespace {

// The fused programs of the FusionGroups that fusing `ir` makes.
std::vector<IntrusivePtr<fusion::FusedGroup>> fused_groups(const std::string& ir) {
  std::shared_ptr<Graph> g = parse_graph(ir, "cuda_fusion_test.ir");
  EXPECT_TRUE(fuse_elementwise(*g)) << ir;
  std::vector<IntrusivePtr<fusion::FusedGroup>> groups;
  for (Node* n : *g->block()) {
    if (n->op() == OpId::FusionGroup) groups.push_back(fusion::compile_group(n));
  }
  return groups;
}

int64_t count_groups(const Graph& g) {
  int64_t count = 0;
  for (Node* n : *g.block()) count += n->op() == OpId::FusionGroup;
  return count;
}

// The benchmark's gradient group: a dtype output and a cast checked per run.
const char* const kGradientGroup =
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

// A broadcast bias, a column, a transposed matrix and a bool mask; a bool output.
const char* const kBroadcastGroup =
    "graph f(%x : Tensor, %b : Tensor, %col : Tensor, %t : Tensor, %mask : Tensor):\n"
    "  %one : int = Constant[value=1]()\n"
    "  %zero : float = Constant[value=0.0]()\n"
    "  %h : Tensor = add(%x, %b, %one)\n"
    "  %k : Tensor = mul(%h, %col)\n"
    "  %u : Tensor = sub(%k, %t, %one)\n"
    "  %pos : Tensor = gt(%u, %zero)\n"
    "  %both : Tensor = logical_and(%pos, %mask)\n"
    "  %y : Tensor = where(%both, %u, %h)\n"
    "  %s : Tensor = tanh(%b)\n"
    "  %z : Tensor = mul(%y, %s)\n"
    "  return (%z, %both)\n";

// The shared programs, and those running every op of runtime/fused_ops.def.
std::vector<std::string> all_programs() {
  std::vector<std::string> programs = {program(kSimdForms, 10), program(kArithmetic, 14),
                                       program(kLogic, 13), kGradientGroup, kBroadcastGroup};
  for (const FusedOpProgram& p : fused_op_programs())
    programs.push_back(program(p.body, p.outputs));
  return programs;
}

// ---- Without a GPU: every generated kernel compiles -------------------------------------

TEST(CudaFusion, GeneratedKernelsCompileWithNvrtc) {
  ensure_kernels_registered();
  if (cuda::nvrtc_identity(90) == "no nvrtc") GTEST_SKIP() << "NVRTC cannot be loaded";
  using fusion::DeviceInput;
  const DeviceInput modes[] = {DeviceInput::Dense, DeviceInput::Strided, DeviceInput::Splat,
                               DeviceInput::Scalar};
  for (const std::string& ir : all_programs()) {
    for (const IntrusivePtr<fusion::FusedGroup>& g : fused_groups(ir)) {
      ASSERT_TRUE(g->fusable) << ir;
      for (DType dtype : {DType::Float32, DType::Float64}) {
        // Every input read in place (the flat walk); then each way of reading an input,
        // bool inputs and outputs, a strided walk over three dims.
        for (int variant = 0; variant < 2; ++variant) {
          fusion::DeviceVariantKey key;
          key.dtype = dtype;
          for (uint32_t k = 0; k < g->num_inputs; ++k) {
            key.inputs.push_back(variant == 0 ? DeviceInput::Dense : modes[k % 4]);
            if (variant == 1 && k % 3 == 1) key.input_bool |= uint64_t{1} << k;
          }
          if (variant == 1) {
            key.ndim = 3;
            key.out_bool = 0b101;
          }
          std::string source = fusion::device_kernel_source(*g, key), error;
          std::string image = cuda::nvrtc_compile(source, "fused", 90, error);
          EXPECT_FALSE(image.empty()) << error << "\n" << source;
          if (std::getenv("TSL_SHOW_SOURCE")) std::printf("%s\n", source.c_str());
        }
      }
    }
  }
}

// ---- With a GPU: one kernel, the unfused kernels' bits ----------------------------------

Tensor on_gpu(const Tensor& t) { return copy_to_device(t, kGpu); }
Tensor on_cpu(const Tensor& t) { return copy_to_device(t, kCPU); }

class CudaFusedKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no GPU: " << cuda::unavailable_reason();
    saved_ = native_jit_options();
    if (native_jit_options().cache_dir.empty())
      native_jit_options().cache_dir = ::testing::TempDir() + "tsl-cache";
  }
  void TearDown() override {
    if (have_gpu()) native_jit_options() = saved_;
  }

  // Runs the fused form of `ir` op by op (fusion off) and as a generated kernel, and
  // expects the same bits, each group run as one kernel.
  template <typename T>
  void expect_same_bits(const std::string& ir, const std::vector<IValue>& inputs,
                        const std::string& what) {
    std::shared_ptr<Graph> fused = parse_graph(ir, "cuda_fusion_test.ir");
    ASSERT_TRUE(fuse_elementwise(*fused)) << ir;
    native_jit_options().mode = NativeJitOptions::Mode::Off;
    std::vector<IValue> plain = run_code(fused, inputs);
    native_jit_options().mode = NativeJitOptions::Mode::Sync;
    int64_t before = fusion_counters().device;
    std::vector<IValue> generated = run_code(fused, inputs);
    EXPECT_EQ(fusion_counters().device, before + count_groups(*fused)) << what;
    ASSERT_EQ(plain.size(), generated.size());
    for (size_t k = 0; k < plain.size(); ++k) {
      if (!plain[k].is_tensor()) {
        EXPECT_EQ(plain[k].to_dtype(), generated[k].to_dtype()) << what;
        continue;
      }
      Tensor p = on_cpu(plain[k].to_tensor()), c = on_cpu(generated[k].to_tensor());
      EXPECT_TRUE(generated[k].to_tensor().device().is_cuda()) << what;
      if (p.dtype() == DType::Bool) {
        ASSERT_EQ(c.dtype(), DType::Bool) << what;
        ASSERT_EQ(c.sizes(), p.sizes()) << what;
        EXPECT_EQ(std::memcmp(p.contiguous().data_ptr<bool>(), c.contiguous().data_ptr<bool>(),
                              static_cast<size_t>(p.numel())),
                  0)
            << what << " output " << k;
      } else {
        EXPECT_EQ(max_ulps<T>(p, c), 0u) << what << " output " << k;
      }
    }
  }

  // The shared programs' inputs on the GPU: %x, %v (aligned, or one element off), %a,
  // a single element, and one value expanded.
  template <typename T>
  void expect_program_matches(const std::string& body, int count) {
    for (int64_t n : {int64_t{1000}, int64_t{(1 << 20) + 3}, int64_t{11}}) {
      for (int offset : {0, 1}) {
        Tensor buffer = on_gpu(Tensor::from_vector(test_values<T>(n + 1, 4, 7)));
        int64_t sizes[] = {n}, strides[] = {1}, stride0[] = {0};
        Tensor view = buffer.as_strided(sizes, strides, offset);
        Tensor expanded =
            on_gpu(Tensor::from_vector(std::vector<T>{T(0.75)})).as_strided(sizes, stride0, 0);
        std::vector<IValue> inputs{IValue(on_gpu(Tensor::from_vector(test_values<T>(n, 120, 1)))),
                                   IValue(view), IValue(-1.25),
                                   IValue(on_gpu(Tensor::from_vector(std::vector<T>{T(2.5)}))),
                                   IValue(expanded)};
        expect_same_bits<T>(program(body, count), inputs,
                            body + " n=" + std::to_string(n) + " offset=" + std::to_string(offset));
      }
    }
  }

  NativeJitOptions saved_;
};

TEST_F(CudaFusedKernels, TranscendentalOpsGiveTheUnfusedBits) {
  expect_program_matches<float>(kSimdForms, 10);
  expect_program_matches<double>(kSimdForms, 10);
}

TEST_F(CudaFusedKernels, ArithmeticGivesTheUnfusedBits) {
  expect_program_matches<float>(kArithmetic, 14);
  expect_program_matches<double>(kArithmetic, 14);
}

TEST_F(CudaFusedKernels, ComparisonsAndWhereGiveTheUnfusedBits) {
  expect_program_matches<float>(kLogic, 13);
  expect_program_matches<double>(kLogic, 13);
}

// Every op of runtime/fused_ops.def, from its row.
TEST_F(CudaFusedKernels, EveryFusedOpGivesTheUnfusedBits) {
  for (const FusedOpProgram& p : fused_op_programs()) {
    expect_program_matches<float>(p.body, p.outputs);
    expect_program_matches<double>(p.body, p.outputs);
  }
}

TEST_F(CudaFusedKernels, GradientGroupsRunFused) {
  int64_t n = 70001;
  int64_t sizes[] = {n}, stride0[] = {0};
  Tensor seed = on_gpu(Tensor::from_vector(std::vector<float>{1.0f})).as_strided(sizes, stride0, 0);
  expect_same_bits<float>(
      kGradientGroup,
      {IValue(on_gpu(Tensor::from_vector(test_values<float>(n, 30, 5)))), IValue(seed)},
      "gradient group");
}

// Broadcast and strided inputs (the strided walk) and a bool output.
TEST_F(CudaFusedKernels, BroadcastAndStridedInputsRunFused) {
  const int64_t rows = 67, cols = 301;
  int64_t xs[] = {rows, cols}, cs[] = {rows, 1}, ts[] = {cols, rows};
  Tensor x = on_gpu(Tensor::from_vector(test_values<float>(rows * cols, 5, 3), xs));
  Tensor b = on_gpu(Tensor::from_vector(test_values<float>(cols, 5, 4)));
  Tensor col = on_gpu(Tensor::from_vector(test_values<float>(rows, 2, 5), cs));
  Tensor tt = on_gpu(Tensor::from_vector(test_values<float>(rows * cols, 5, 6), ts));
  int64_t transposed_strides[] = {1, rows};
  Tensor t = tt.as_strided(xs, transposed_strides, 0);
  Tensor mask = Tensor::empty(xs, DType::Bool);
  for (int64_t i = 0; i < rows * cols; ++i) mask.data_ptr<bool>()[i] = i % 3 != 0;
  expect_same_bits<float>(kBroadcastGroup,
                          {IValue(x), IValue(b), IValue(col), IValue(t), IValue(on_gpu(mask))},
                          "broadcast group");
}

// Without a compiled kernel (the first run of the default mode, or TSL_FUSION_JIT=off)
// the group runs op by op; the second run of a variant compiles and uses its kernel.
TEST_F(CudaFusedKernels, TheSecondRunOfAVariantCompilesIt) {
  native_jit_options().mode = NativeJitOptions::Mode::Async;
  std::shared_ptr<Graph> g = parse_graph(
      "graph f(%x : Tensor):\n"
      "  %k : float = Constant[value=0.3125]()\n"
      "  %p : Tensor = mul(%x, %k)\n"
      "  %y : Tensor = tanh(%p)\n"
      "  return (%y)\n",
      "second_run.ir");
  ASSERT_TRUE(fuse_elementwise(*g));
  Code code(g);
  std::vector<IValue> inputs{IValue(on_gpu(Tensor::from_vector(test_values<float>(5000, 9, 2))))};
  int64_t before = fusion_counters().device;
  Tensor first = on_cpu(InterpreterState(code).run(inputs)[0].to_tensor());
  EXPECT_EQ(fusion_counters().device, before);
  Tensor second = on_cpu(InterpreterState(code).run(inputs)[0].to_tensor());
  EXPECT_EQ(fusion_counters().device, before + 1);
  EXPECT_EQ(max_ulps<float>(first, second), 0u);
}

}  // namespace
}  // namespace tsl
