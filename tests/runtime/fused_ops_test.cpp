// The fused-op description (runtime/fused_ops.def, Note [Fused ops]) walked against
// the op table and the formulas: every elementwise op has a row or is listed here as
// not fused; every row's op is elementwise and has the inputs the row says; each row's
// CPU formulas have the forms the row needs (checked when this file compiles); and each
// row runs fused, on the chunk loop and compiled, with the unfused kernels' bits in
// float32 and float64, on values with NaN, infinities, denormals and huge magnitudes.
// (Each row's CUDA kernel compiles with NVRTC: tests/cuda/cuda_fusion_test.cpp.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <concepts>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "ir/ir_parser.h"
#include "ir/passes/fuse_elementwise.h"
#include "ir/schema.h"
#include "runtime/fusion/fusion.h"
#include "runtime/fusion/codegen.h"
#include "runtime/kernels/cpu/formulas.h"
#include "runtime/fusion/native_compiler.h"
#include "runtime/tensor/parallel.h"
#include "tests/runtime/fusion_test_util.h"

namespace tsl {
namespace {

using fusion::FusedArgs;
using fusion::FusedForm;
using fusion::FusedOpInfo;

// ---- The forms of each row's CPU formulas (Note [CPU formulas]) ------------------------

template <typename F, typename T, size_t... I>
constexpr bool has_scalar_form(std::index_sequence<I...>) {
  return requires(T v) {
    { F::scalar(((void)I, v)...) } -> std::same_as<T>;
  };
}

template <typename F, typename T, size_t... I>
constexpr bool has_packet_form(std::index_sequence<I...>) {
  using P = typename Eigen::internal::packet_traits<T>::type;
  return requires(P x) {
    { F::packet(((void)I, x)...) } -> std::same_as<P>;
  };
}

// A scalar and a packet form on the row's operands and values; a Simd form's array
// expression and limit.
template <typename F, int kOperands, FusedArgs kArgs, FusedForm kForm, typename T>
constexpr bool has_forms() {
  constexpr size_t n = kOperands + fusion::formula_values(kArgs);
  bool ok = has_scalar_form<F, T>(std::make_index_sequence<n>()) &&
            has_packet_form<F, T>(std::make_index_sequence<n>());
  constexpr bool simd = std::is_base_of_v<formulas::SimdForm<F>, F>;
  if constexpr (kForm == FusedForm::Simd) {
    return ok && simd && n == 1 && requires(Eigen::Array<T, Eigen::Dynamic, 1> a) {
      { F::kLimit } -> std::convertible_to<double>;
      F::array(a);
    };
  } else {
    return ok && !simd;
  }
}

#define TSL_FUSED_OP(name, op, operands, result, bools, args, form, formula)                  \
  static_assert(                                                                              \
      has_forms<formulas::formula, operands, FusedArgs::args, FusedForm::form, float>() &&    \
          has_forms<formulas::formula, operands, FusedArgs::args, FusedForm::form, double>(), \
      "runtime/kernels/cpu/formulas.h: " #formula " lacks a form its row needs");
#define TSL_FUSED_ALIAS(op, name)
#include "runtime/fused_ops.def"
#undef TSL_FUSED_ALIAS
#undef TSL_FUSED_OP

// ---- The rows against the op table -----------------------------------------------------

// The elementwise ops (EW in runtime/ops.def) without a row, and why. A new elementwise
// op gets a row, or a line here.
const std::map<std::string_view, const char*> kNotFused = {
    {"exp2", "no fused formula yet"},
    {"log2", "no fused formula yet"},
    {"log10", "no fused formula yet"},
    {"tan", "no fused formula yet"},
    {"asin", "no fused formula yet"},
    {"acos", "no fused formula yet"},
    {"atan", "no fused formula yet"},
    {"sinh", "no fused formula yet"},
    {"cosh", "no fused formula yet"},
    {"erf", "no fused formula yet"},
    {"sign", "no fused formula yet"},
    {"floor", "no fused formula yet"},
    {"ceil", "no fused formula yet"},
    {"round", "no fused formula yet"},
    {"trunc", "no fused formula yet"},
    {"frac", "no fused formula yet"},
    {"gelu", "no fused formula yet (and a string argument)"},
    {"softplus", "no fused formula yet"},
    {"elu", "no fused formula yet"},
    {"logit", "its optional eps is a kind of scalar argument the fused program does not read"},
    {"pow", "no fused formula yet"},
    {"atan2", "no fused formula yet"},
    {"maximum", "no fused formula yet"},
    {"minimum", "no fused formula yet"},
    {"floor_divide", "no fused formula yet"},
    {"remainder", "no fused formula yet"},
    {"bitwise_not", "int64 and bool only: the fused program computes in float32 or float64"},
    {"bitwise_and", "int64 and bool only: the fused program computes in float32 or float64"},
    {"bitwise_or", "int64 and bool only: the fused program computes in float32 or float64"},
    {"bitwise_xor", "int64 and bool only: the fused program computes in float32 or float64"},
};

TEST(FusedOps, EveryElementwiseOpHasARowOrIsListed) {
  for (int k = 0; k < kNumOps; ++k) {
    const OpInfo& info = op_info(static_cast<OpId>(k));
    bool fused = fusion::fused_op_of(info.id).has_value();
    bool listed = kNotFused.count(info.name) != 0;
    if (info.has(opflags::EW)) {
      EXPECT_TRUE(fused != listed) << info.name
                                   << (fused ? ": has a row in runtime/fused_ops.def and is listed "
                                               "in kNotFused"
                                             : ": elementwise, without a row in "
                                               "runtime/fused_ops.def or a line in kNotFused");
    } else {
      EXPECT_FALSE(listed) << info.name << " is listed in kNotFused but is not elementwise";
    }
  }
}

// Each op with a row (aliases too) is elementwise, `to` aside (Note [Conversions in the
// fused program]), and its schema has the row's tensor operands, then its scalar
// arguments.
TEST(FusedOps, RowsMatchTheOpTable) {
  int ops = 0;
  for (int k = 0; k < kNumOps; ++k) {
    OpId id = static_cast<OpId>(k);
    std::optional<fusion::FOp> op = fusion::fused_op_of(id);
    if (!op) continue;
    ++ops;
    const OpInfo& info = op_info(id);
    const FusedOpInfo& f = fusion::fused_info(*op);
    EXPECT_TRUE(info.has(opflags::EW) || id == OpId::to_dtype) << info.name;
    EXPECT_FALSE(info.has(opflags::EFFECT) || info.has(opflags::RANDOM)) << info.name;
    const FunctionSchema& schema = schema_of(id);
    ASSERT_EQ(schema.arguments.size(), f.operands + fusion::scalar_inputs(f.args)) << info.name;
    for (size_t a = 0; a < schema.arguments.size(); ++a) {
      EXPECT_EQ(schema.arguments[a].type->is_tensor(), a < f.operands)
          << info.name << " argument " << a;
    }
    EXPECT_TRUE(f.operands >= 1 && f.operands <= 3) << info.name;
    EXPECT_TRUE(f.form == FusedForm::Exact || (f.operands == 1 && f.args == FusedArgs::None))
        << info.name << ": a Simd form maps one value";
    EXPECT_TRUE((f.result == fusion::FusedResult::Select) == (f.operands == 3)) << info.name;
  }
  EXPECT_EQ(ops, static_cast<int>(fusion::kNumFusedOps) + 1);  // clip is clamp's alias
}

// ---- Every row fused: the unfused kernels' bits ----------------------------------------

// test_values with denormals, the largest finite values and the edges of exp's range
// among them.
template <typename T>
std::vector<T> hard_values(int64_t n, double scale, uint64_t seed) {
  using L = std::numeric_limits<T>;
  const T extra[] = {L::denorm_min(), -L::denorm_min(), L::min() / T(3), -L::min() * T(2),
                     L::max(),        L::lowest(),      T(1e30),         T(-1e30),
                     T(88.72),        T(-103.97),       T(709.78),       T(-745.13),
                     T(177.5),        T(1e-300),        T(-0.5),         T(3e-39)};
  std::vector<T> v = test_values<T>(n, scale, seed);
  constexpr size_t kExtra = sizeof(extra) / sizeof(extra[0]);
  for (int64_t i = 11; i < n; i += 89) v[static_cast<size_t>(i)] = extra[(i / 89) % kExtra];
  return v;
}

::testing::AssertionResult same_bits(const IValue& a, const IValue& b) {
  Tensor x = a.to_tensor(), y = b.to_tensor();
  if (x.dtype() != y.dtype() || x.sizes() != y.sizes())
    return ::testing::AssertionFailure() << "different dtypes or shapes";
  uint64_t ulps = 0;
  switch (x.dtype()) {
    case DType::Float32:
      ulps = max_ulps<float>(x, y);
      break;
    case DType::Float64:
      ulps = max_ulps<double>(x, y);
      break;
    case DType::Bool: {
      Tensor cx = x.contiguous(), cy = y.contiguous();
      if (std::memcmp(cx.data_ptr<bool>(), cy.data_ptr<bool>(), static_cast<size_t>(x.numel())))
        return ::testing::AssertionFailure() << "different bools";
      break;
    }
    default:
      return ::testing::AssertionFailure() << "an unexpected dtype";
  }
  if (ulps != 0) return ::testing::AssertionFailure() << ulps << " ulps apart";
  return ::testing::AssertionSuccess();
}

// Sets the options of one test, and puts the defaults back after it.
class FusedOpRows : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = native_jit_options();
    NativeJitOptions& o = native_jit_options();
    compiler_ = ::access(o.compiler.c_str(), X_OK) == 0;
    if (o.cache_dir.empty()) o.cache_dir = ::testing::TempDir() + "tsl-cache";
    o.min_elements = 0;
  }
  void TearDown() override { native_jit_options() = saved_; }

  // Runs `ir` unfused, fused on the chunk loop and fused with a compiled kernel (where a
  // compiler is), and expects the same bits, each run fused.
  void expect_same_bits(const std::string& ir, const std::vector<IValue>& inputs,
                        const std::string& what) {
    std::shared_ptr<Graph> plain = parse_graph(ir, "fused_ops_test.ir");
    std::shared_ptr<Graph> fused = plain->clone();
    ASSERT_TRUE(fuse_elementwise(*fused)) << what;
    std::vector<IValue> expected = run_code(plain, inputs);
    NativeJitOptions& o = native_jit_options();
    o.mode = NativeJitOptions::Mode::Off;
    FusionCounters before = fusion_counters();
    std::vector<IValue> chunk = run_code(fused, inputs);
    FusionCounters after = fusion_counters();
    EXPECT_EQ(after.fused - before.fused, 1) << what;
    EXPECT_EQ(after.fallback - before.fallback, 0) << what;
    ASSERT_EQ(chunk.size(), expected.size());
    for (size_t k = 0; k < expected.size(); ++k)
      EXPECT_TRUE(same_bits(expected[k], chunk[k])) << what << " output " << k << " (chunk loop)";
    if (!compiler_) return;
    o.mode = NativeJitOptions::Mode::Sync;
    before = fusion_counters();
    std::vector<IValue> compiled = run_code(fused, inputs);
    EXPECT_EQ(fusion_counters().compiled - before.compiled, 1) << what;
    for (size_t k = 0; k < expected.size(); ++k)
      EXPECT_TRUE(same_bits(expected[k], compiled[k])) << what << " output " << k << " (compiled)";
  }

  template <typename T>
  void expect_rows_match() {
    // One thread's share with a head and a tail; parallel runs; fewer than a packet.
    for (int64_t n : {int64_t{1000}, int64_t{3 * kParallelGrain + 17}, int64_t{11}}) {
      Tensor buffer = Tensor::from_vector(hard_values<T>(n + 1, 4, 7));
      int64_t sizes[] = {n}, strides[] = {1}, stride0[] = {0};
      Tensor view = buffer.as_strided(sizes, strides, 1);
      Tensor expanded = Tensor::from_vector(std::vector<T>{T(0.75)}).as_strided(sizes, stride0, 0);
      std::vector<IValue> inputs{
          IValue(Tensor::from_vector(hard_values<T>(n, 120, 1))), IValue(view), IValue(-1.25),
          IValue(Tensor::from_vector(std::vector<T>{T(2.5)})), IValue(expanded)};
      for (const FusedOpProgram& p : fused_op_programs()) {
        expect_same_bits(program(p.body, p.outputs), inputs,
                         p.ops + " (" + std::string(sizeof(T) == 4 ? "float32" : "float64") +
                             ", n=" + std::to_string(n) + ")");
      }
    }
  }

  NativeJitOptions saved_;
  bool compiler_ = false;
};

TEST_F(FusedOpRows, EveryRowGivesTheUnfusedBits) {
  expect_rows_match<float>();
  expect_rows_match<double>();
}

// Each step of a compiled kernel is one call of its row's packet form, through the
// barrier that keeps steps from contracting into FMAs (Note [Compiled fusion kernels]).
TEST(FusedOps, CompiledStepsCallTheirFormulasThroughTheBarrier) {
  ensure_kernels_registered();
  for (const FusedOpProgram& p : fused_op_programs()) {
    std::shared_ptr<Graph> g = parse_graph(program(p.body, p.outputs), "fused_ops_test.ir");
    ASSERT_TRUE(fuse_elementwise(*g));
    for (const Node* n : *g->block()) {
      if (n->op() != OpId::FusionGroup) continue;
      IntrusivePtr<fusion::FusedGroup> group = fusion::compile_group(n);
      ASSERT_TRUE(group->fusable) << p.ops;
      std::vector<fusion::CompiledInput> inputs(group->num_inputs, fusion::CompiledInput::Pointer);
      std::string source = fusion::compiled_kernel_source(*group, DType::Float32, inputs);
      std::istringstream body(source.substr(source.find(fusion::kCompiledKernelMarker)));
      size_t calls = 0;
      for (std::string line; std::getline(body, line);) {
        if (line.find("tsl::formulas::") == std::string::npos) continue;
        ++calls;
        EXPECT_NE(line.find(" = opaque(tsl::formulas::"), std::string::npos) << line;
      }
      EXPECT_EQ(calls, group->steps.size()) << p.ops;
    }
  }
}

}  // namespace
}  // namespace tsl
