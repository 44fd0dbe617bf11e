// FusionGroup at run time: the fused chunk loop gives the results of the unfused
// kernels (bit for bit) for every op it knows, in float32 and float64, on one thread
// and on several, with bool values, broadcast and strided inputs; runs it cannot take
// (integer or mixed dtypes, other ops) take the op-by-op fallback with the same results.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "ir/ir_parser.h"
#include "ir/passes/fuse_elementwise.h"
#include "runtime/fusion/fusion.h"
#include "runtime/exec/interpreter.h"
#include "runtime/tensor/parallel.h"
#include "tests/runtime/fusion_test_util.h"

namespace tsl {
namespace {

struct Outcome {
  std::vector<IValue> plain, fused;
  int64_t fused_runs = 0, fallback_runs = 0;
};

// Runs the graph of `ir` as written and after fuse_elementwise (which must form a
// group), on the same inputs.
Outcome run_both(const std::string& ir, const std::vector<IValue>& inputs) {
  std::shared_ptr<Graph> plain = parse_graph(ir, "fusion_test.ir");
  std::shared_ptr<Graph> fused = plain->clone();
  Outcome o;
  EXPECT_TRUE(fuse_elementwise(*fused)) << ir;
  verify(*fused);
  EXPECT_NE(print_graph(*fused).find("FusionGroup"), std::string::npos);
  o.plain = run_code(plain, inputs);
  FusionCounters before = fusion_counters();
  o.fused = run_code(fused, inputs);
  FusionCounters after = fusion_counters();
  o.fused_runs = after.fused - before.fused;
  o.fallback_runs = after.fallback - before.fallback;
  return o;
}

template <typename T>
Tensor tensor_of(int64_t n, double scale, uint64_t seed) {
  return Tensor::from_vector(test_values<T>(n, scale, seed));
}

Tensor matrix(int64_t rows, int64_t cols, uint64_t seed) {
  std::vector<int64_t> sizes{rows, cols};
  return Tensor::from_vector(test_values<float>(rows * cols, 5, seed), sizes);
}

// `body` computes %y from %x (a Tensor) and may use %y2 (a second Tensor).
std::string graph_text(const std::string& body) {
  return "graph f(%x : Tensor, %x2 : Tensor):\n"
         "  %none : None = Constant[value=None]()\n"
         "  %one : int = Constant[value=1]()\n"
         "  %half : float = Constant[value=0.5]()\n"
         "  %m : Tensor = mul(%x, %half)\n" +
         body + "  return (%y)\n";
}

template <typename T>
void expect_fused_equals_plain(const std::string& body, uint64_t max_ulp) {
  // Sizes: one chunk with a tail, and enough for parallel_for with an odd end.
  for (int64_t n : {int64_t{1000}, int64_t{3 * kParallelGrain + 17}}) {
    std::vector<IValue> inputs{IValue(tensor_of<T>(n, 120, 1)), IValue(tensor_of<T>(n, 3, 2))};
    Outcome o = run_both(graph_text(body), inputs);
    EXPECT_EQ(o.fused_runs, 1) << body;
    EXPECT_EQ(o.fallback_runs, 0) << body;
    ASSERT_EQ(o.fused.size(), 1u);
    EXPECT_LE(max_ulps<T>(o.plain[0].to_tensor(), o.fused[0].to_tensor()), max_ulp)
        << body << " n=" << n;
  }
}

const char* const kUnaryOps[] = {"exp",   "log",     "log1p", "expm1",     "sin", "cos",
                                 "tanh",  "sigmoid", "silu",  "neg",       "abs", "sqrt",
                                 "rsqrt", "square",  "relu",  "reciprocal"};

TEST(Fusion, UnaryOpsMatchTheKernels) {
  for (const char* op : kUnaryOps) {
    std::string body = std::string("  %y : Tensor = ") + op + "(%m)\n";
    // The fused loop takes Eigen's SIMD or scalar path for the same elements as the
    // kernel (see ChunkRunner::run): the same bits.
    expect_fused_equals_plain<float>(body, 0);
    expect_fused_equals_plain<double>(body, 0);
  }
}

TEST(Fusion, BinaryOpsWithScalarsMatchTheKernels) {
  const char* bodies[] = {
      "  %two : float = Constant[value=2.5]()\n"
      "  %a : Tensor = add(%m, %x2, %two)\n  %y : Tensor = neg(%a)\n",
      "  %three : int = Constant[value=3]()\n"
      "  %a : Tensor = sub(%three, %m, %one)\n  %y : Tensor = abs(%a)\n",
      "  %a : Tensor = sub(%m, %x2, %half)\n  %y : Tensor = mul(%a, %x2)\n",
      "  %a : Tensor = div(%m, %x2, %none)\n  %y : Tensor = add(%a, %half, %one)\n",
      "  %c : float = Constant[value=-1.25]()\n"
      "  %a : Tensor = div(%c, %m, %none)\n  %y : Tensor = mul(%c, %a)\n",
  };
  for (const char* body : bodies) {
    expect_fused_equals_plain<float>(body, 0);
    expect_fused_equals_plain<double>(body, 0);
  }
}

TEST(Fusion, ClampAndLeakyReluMatchTheKernels) {
  const char* bodies[] = {
      "  %lo : float = Constant[value=-1.5]()\n  %hi : int = Constant[value=2]()\n"
      "  %a : Tensor = clamp(%m, %lo, %hi)\n  %y : Tensor = neg(%a)\n",
      "  %hi : float = Constant[value=0.25]()\n"
      "  %a : Tensor = clamp(%m, %none, %hi)\n  %y : Tensor = neg(%a)\n",
      "  %s : float = Constant[value=0.1]()\n"
      "  %a : Tensor = leaky_relu(%m, %s)\n  %y : Tensor = neg(%a)\n",
  };
  for (const char* body : bodies) {
    expect_fused_equals_plain<float>(body, 0);
    expect_fused_equals_plain<double>(body, 0);
  }
}

// The benchmark's expression with float parameters a and b, and its multiple outputs.
TEST(Fusion, TheBenchmarkExpressionMatches) {
  const std::string ir =
      "graph f(%x : Tensor, %a : float, %b : float):\n"
      "  %one : int = Constant[value=1]()\n"
      "  %half : float = Constant[value=0.5]()\n"
      "  %m : Tensor = mul(%x, %a)\n"
      "  %s : Tensor = add(%m, %b, %one)\n"
      "  %g : Tensor = sigmoid(%s)\n"
      "  %t : Tensor = tanh(%x)\n"
      "  %p : Tensor = mul(%g, %t)\n"
      "  %h : Tensor = mul(%x, %half)\n"
      "  %y : Tensor = sub(%p, %h, %one)\n"
      "  return (%y, %g)\n";
  int64_t n = 4 * kParallelGrain + 3;
  std::vector<IValue> inputs{IValue(tensor_of<float>(n, 10, 3)), IValue(1.5), IValue(-0.25)};
  Outcome o = run_both(ir, inputs);
  EXPECT_EQ(o.fused_runs, 1);
  ASSERT_EQ(o.fused.size(), 2u);
  EXPECT_EQ(max_ulps<float>(o.plain[0].to_tensor(), o.fused[0].to_tensor()), 0u);
  EXPECT_EQ(max_ulps<float>(o.plain[1].to_tensor(), o.fused[1].to_tensor()), 0u);
}

// A single-element tensor operand is read as a scalar; the fused loop still runs.
TEST(Fusion, SingleElementTensorsAreScalars) {
  std::string body = "  %a : Tensor = mul(%m, %x2)\n  %y : Tensor = exp(%a)\n";
  std::vector<IValue> inputs{IValue(tensor_of<float>(5000, 5, 4)),
                             IValue(Tensor::from_vector(std::vector<float>{0.75f}))};
  Outcome o = run_both(graph_text(body), inputs);
  EXPECT_EQ(o.fused_runs, 1);
  EXPECT_EQ(max_ulps<float>(o.plain[0].to_tensor(), o.fused[0].to_tensor()), 0u);
}

// Each case takes the fallback and gives exactly the unfused results.
void expect_fallback(const std::string& ir, const std::vector<IValue>& inputs) {
  Outcome o = run_both(ir, inputs);
  EXPECT_EQ(o.fused_runs, 0) << ir;
  EXPECT_EQ(o.fallback_runs, 1) << ir;
  ASSERT_EQ(o.plain.size(), o.fused.size());
  for (size_t i = 0; i < o.plain.size(); ++i) {
    Tensor a = o.plain[i].to_tensor(), b = o.fused[i].to_tensor();
    ASSERT_EQ(a.sizes(), b.sizes()) << ir;
    ASSERT_EQ(a.dtype(), b.dtype()) << ir;
    if (a.dtype() == DType::Float32) {
      EXPECT_EQ(max_ulps<float>(a, b), 0u) << ir;
    } else if (a.dtype() == DType::Int64) {
      Tensor ca = a.contiguous(), cb = b.contiguous();
      EXPECT_EQ(std::memcmp(ca.data_ptr<int64_t>(), cb.data_ptr<int64_t>(),
                            static_cast<size_t>(a.numel()) * sizeof(int64_t)),
                0);
    }
  }
}

TEST(Fusion, MixedDtypesAndIntsFallBack) {
  const std::string ir =
      "graph f(%x : Tensor, %z : Tensor):\n"
      "  %p : Tensor = mul(%x, %z)\n"
      "  %y : Tensor = neg(%p)\n"
      "  return (%y)\n";
  Tensor d = Tensor::from_vector(test_values<double>(200, 5, 8));
  Tensor f = tensor_of<float>(200, 5, 9);
  expect_fallback(ir, {IValue(f), IValue(d)});
  Tensor i = Tensor::from_vector(std::vector<int64_t>{1, -2, 3, 4});
  expect_fallback(ir, {IValue(i), IValue(i)});
}

// An op without a row in runtime/fused_ops.def stays out of groups; a group that holds
// one anyway (written as IR text) runs op by op, with the unfused results.
TEST(Fusion, OpsWithoutAFusedFormFallBack) {
  std::shared_ptr<Graph> g = parse_graph(
      "graph f(%x : Tensor):\n"
      "  %e : Tensor = erf(%x)\n"
      "  %y : Tensor = neg(%e)\n"
      "  return (%y)\n",
      "fusion_test.ir");
  EXPECT_FALSE(fuse_elementwise(*g));  // neg alone is no group
  std::shared_ptr<Graph> grouped = parse_graph(
      "graph f(%x : Tensor):\n"
      "  %y : Tensor = FusionGroup(%x)\n"
      "    block0(%x.1 : Tensor):\n"
      "      %e : Tensor = erf(%x.1)\n"
      "      %y.1 : Tensor = neg(%e)\n"
      "      -> (%y.1)\n"
      "  return (%y)\n",
      "fusion_test.ir");
  std::vector<IValue> inputs{IValue(tensor_of<float>(1000, 5, 10))};
  FusionCounters before = fusion_counters();
  std::vector<IValue> fused = run_code(grouped, inputs);
  EXPECT_EQ(fusion_counters().fallback - before.fallback, 1);
  EXPECT_EQ(fusion_counters().fused - before.fused, 0);
  EXPECT_EQ(max_ulps<float>(run_code(g, inputs)[0].to_tensor(), fused[0].to_tensor()), 0u);
}

// ---- Bool values, broadcasting and strided inputs ---------------------------------------

// Whether two tensors have the same sizes, dtype and bits (NaNs of any payload equal).
::testing::AssertionResult same_bits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) {
    return ::testing::AssertionFailure() << "shapes or dtypes differ: " << shape_str(a.sizes())
                                         << " and " << shape_str(b.sizes());
  }
  uint64_t worst = 0;
  if (a.dtype() == DType::Float32) {
    worst = max_ulps<float>(a, b);
  } else if (a.dtype() == DType::Float64) {
    worst = max_ulps<double>(a, b);
  } else {
    Tensor ca = a.contiguous(), cb = b.contiguous();
    size_t bytes = static_cast<size_t>(a.numel()) * element_size(a.dtype());
    worst = std::memcmp(ca.impl()->data(), cb.impl()->data(), bytes) == 0 ? 0 : 1;
  }
  if (worst == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << worst << " ulps apart";
}

// Runs `ir` unfused and fused on one thread and on three; every output must have the
// same bits, and the group must take the fused loop (or the fallback) every time.
void expect_same_results(const std::string& ir, const std::vector<IValue>& inputs,
                         bool expect_fused) {
  int saved = num_threads();
  for (int threads : {1, 3}) {
    set_num_threads(threads);
    Outcome o = run_both(ir, inputs);
    EXPECT_EQ(o.fused_runs, expect_fused ? 1 : 0) << ir;
    EXPECT_EQ(o.fallback_runs, expect_fused ? 0 : 1) << ir;
    ASSERT_EQ(o.plain.size(), o.fused.size());
    for (size_t i = 0; i < o.plain.size(); ++i) {
      EXPECT_TRUE(same_bits(o.plain[i].to_tensor(), o.fused[i].to_tensor()))
          << ir << "output " << i << ", " << threads << " threads";
    }
  }
  set_num_threads(saved);
}

template <typename T>
Tensor tensor_2d(int64_t rows, int64_t cols, double scale, uint64_t seed) {
  std::vector<int64_t> sizes{rows, cols};
  return Tensor::from_vector(test_values<T>(rows * cols, scale, seed), sizes);
}

// A bool tensor of `n` elements, true where the pattern says.
Tensor bool_tensor(std::span<const int64_t> sizes, uint64_t seed) {
  Tensor t = Tensor::empty(sizes, DType::Bool);
  bool* p = static_cast<bool*>(t.impl()->data());
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = ((static_cast<uint64_t>(i) * 2654435761u + seed) >> 7) & 1;
  return t;
}

const char* const kCompareOps[] = {"eq", "ne",          "lt",         "le",         "gt",
                                   "ge", "logical_and", "logical_or", "logical_xor"};

// Test values rounded to integers, so that equal elements occur (NaN and infinities kept).
template <typename T>
Tensor rounded_tensor_of(int64_t n, double scale, uint64_t seed) {
  std::vector<T> v = test_values<T>(n, scale, seed);
  for (T& e : v) e = std::round(e);
  return Tensor::from_vector(v);
}

// Comparisons give bool registers; where reads them; bool results are stored as bools.
template <typename T>
void check_comparisons_and_where(int64_t n) {
  std::vector<IValue> inputs{IValue(rounded_tensor_of<T>(n, 3, 11)),
                             IValue(rounded_tensor_of<T>(n, 3, 12))};
  for (const char* op : kCompareOps) {
    std::string ir = std::string(
                         "graph f(%x : Tensor, %z : Tensor):\n"
                         "  %c : Tensor = ") +
                     op +
                     "(%x, %z)\n"
                     "  %w : Tensor = where(%c, %x, %z)\n"
                     "  %y : Tensor = sigmoid(%w)\n"
                     "  return (%y)\n";
    expect_same_results(ir, inputs, true);
  }
}

TEST(Fusion, ComparisonsAndWhereMatchTheKernels) {
  for (int64_t n : {int64_t{1000}, int64_t{3 * kParallelGrain + 17}}) {
    check_comparisons_and_where<float>(n);
    check_comparisons_and_where<double>(n);
  }
}

TEST(Fusion, ComparisonsWithNumbersAndPredicatesMatch) {
  const char* bodies[] = {
      // leaky relu as written by hand, and relu's gradient.
      "  %c : Tensor = gt(%m, %zero)\n  %s : Tensor = mul(%m, %tenth)\n"
      "  %y : Tensor = where(%c, %m, %s)\n",
      "  %r : Tensor = relu(%m)\n  %c : Tensor = gt(%r, %zero)\n"
      "  %y : Tensor = where(%c, %x2, %zero)\n",
      // A bool register in arithmetic: 0 or 1 in T.
      "  %c : Tensor = ge(%m, %x2)\n  %y : Tensor = mul(%c, %x2)\n",
      "  %c : Tensor = lt(%three, %m)\n  %d : Tensor = logical_not(%c)\n"
      "  %y : Tensor = add(%d, %m, %one)\n",
      "  %c : Tensor = isnan(%m)\n  %d : Tensor = isinf(%m)\n"
      "  %e : Tensor = logical_or(%c, %d)\n  %y : Tensor = where(%e, %zero, %m)\n",
      "  %c : Tensor = isfinite(%m)\n  %d : Tensor = eq(%c, %c)\n"
      "  %y : Tensor = where(%d, %m, %x2)\n",
  };
  for (const char* body : bodies) {
    std::string ir = std::string(
                         "graph f(%x : Tensor, %x2 : Tensor):\n"
                         "  %one : int = Constant[value=1]()\n"
                         "  %three : int = Constant[value=3]()\n"
                         "  %zero : float = Constant[value=0.0]()\n"
                         "  %tenth : float = Constant[value=0.1]()\n"
                         "  %m : Tensor = mul(%x, %tenth)\n") +
                     body + "  return (%y)\n";
    for (int64_t n : {int64_t{1000}, int64_t{3 * kParallelGrain + 17}}) {
      expect_same_results(
          ir, {IValue(tensor_of<float>(n, 120, 1)), IValue(tensor_of<float>(n, 3, 2))}, true);
      expect_same_results(
          ir, {IValue(tensor_of<double>(n, 120, 1)), IValue(tensor_of<double>(n, 3, 2))}, true);
    }
  }
}

// where with two numbers gives the default dtype, float32: fused for float32 runs, the
// fallback for float64 (the kernel's float32 result promotes in the product).
TEST(Fusion, WhereOfTwoNumbersGivesFloat32) {
  const std::string ir =
      "graph f(%x : Tensor, %g : Tensor):\n"
      "  %zero : float = Constant[value=0.0]()\n"
      "  %one : float = Constant[value=1.0]()\n"
      "  %slope : float = Constant[value=0.01]()\n"
      "  %c : Tensor = gt(%x, %zero)\n"
      "  %d : Tensor = where(%c, %one, %slope)\n"
      "  %y : Tensor = mul(%g, %d)\n"
      "  return (%y)\n";
  int64_t n = 5000;
  expect_same_results(ir, {IValue(tensor_of<float>(n, 3, 1)), IValue(tensor_of<float>(n, 3, 2))},
                      true);
  expect_same_results(ir, {IValue(tensor_of<double>(n, 3, 1)), IValue(tensor_of<double>(n, 3, 2))},
                      false);
}

// A bool tensor input (a mask saved by the forward pass) is gathered as 0 or 1; bool
// with a number or bool minus anything take the fallback (other dtypes, errors).
TEST(Fusion, BoolTensorInputs) {
  std::vector<int64_t> sizes{3 * kParallelGrain + 5};
  Tensor mask = bool_tensor(sizes, 3);
  Tensor x = tensor_of<float>(sizes[0], 3, 4);
  expect_same_results(
      "graph f(%c : Tensor, %x : Tensor):\n"
      "  %zero : float = Constant[value=0.0]()\n"
      "  %w : Tensor = where(%c, %x, %zero)\n"
      "  %y : Tensor = mul(%w, %c)\n"
      "  return (%y)\n",
      {IValue(mask), IValue(x)}, true);
  expect_same_results(
      "graph f(%c : Tensor, %d : Tensor):\n"
      "  %e : Tensor = logical_xor(%c, %d)\n"
      "  %y : Tensor = logical_not(%e)\n"
      "  return (%y)\n",
      {IValue(mask), IValue(bool_tensor(sizes, 5))}, true);
  const std::string with_number =
      "graph f(%c : Tensor, %x : Tensor):\n"
      "  %half : float = Constant[value=0.5]()\n"
      "  %h : Tensor = mul(%c, %half)\n"
      "  %y : Tensor = add(%h, %x, %half)\n"
      "  return (%y)\n";
  expect_same_results(with_number, {IValue(mask), IValue(x)}, false);
}

// Inputs that broadcast to the result's shape: a bias [N], a column [B, 1], a single
// element, an outer product of [B, 1] and [1, N], in 2-D and 3-D, over row and chunk
// boundaries.
template <typename T>
void check_broadcasts() {
  const std::string bias_ir =
      "graph f(%x : Tensor, %b : Tensor):\n"
      "  %one : int = Constant[value=1]()\n"
      "  %s : Tensor = add(%x, %b, %one)\n"
      "  %t : Tensor = tanh(%s)\n"
      "  %y : Tensor = mul(%t, %b)\n"
      "  return (%y, %s)\n";
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{7, 333}, {1000, 100}, {5, 1}}) {
    Tensor x = tensor_2d<T>(rows, cols, 5, 1);
    expect_same_results(bias_ir, {IValue(x), IValue(tensor_of<T>(cols, 2, 2))}, true);
    expect_same_results(bias_ir, {IValue(x), IValue(tensor_2d<T>(rows, 1, 2, 3))}, true);
    expect_same_results(bias_ir, {IValue(x), IValue(tensor_2d<T>(1, 1, 2, 4))}, true);
  }
  const std::string outer_ir =
      "graph f(%a : Tensor, %b : Tensor):\n"
      "  %p : Tensor = mul(%a, %b)\n"
      "  %y : Tensor = relu(%p)\n"
      "  return (%y)\n";
  expect_same_results(
      outer_ir, {IValue(tensor_2d<T>(300, 1, 5, 6)), IValue(tensor_2d<T>(1, 700, 5, 7))}, true);
  const std::string three_ir =
      "graph f(%x : Tensor, %u : Tensor, %v : Tensor):\n"
      "  %none : None = Constant[value=None]()\n"
      "  %one : int = Constant[value=1]()\n"
      "  %s : Tensor = sub(%x, %u, %one)\n"
      "  %e : Tensor = exp(%s)\n"
      "  %y : Tensor = div(%e, %v, %none)\n"
      "  return (%y)\n";
  std::vector<int64_t> big{9, 37, 300}, mid{37, 1}, low{1, 1, 300};
  expect_same_results(three_ir,
                      {IValue(Tensor::from_vector(test_values<T>(9 * 37 * 300, 5, 8), big)),
                       IValue(Tensor::from_vector(test_values<T>(37, 5, 9), mid)),
                       IValue(Tensor::from_vector(test_values<T>(300, 5, 10), low))},
                      true);
}

TEST(Fusion, BroadcastInputsMatchTheKernels) {
  check_broadcasts<float>();
  check_broadcasts<double>();
}

// A SIMD op (exp, tanh, ...) on a value of a smaller shape than the result would see
// its elements at other positions than the unfused kernel (whose SIMD and scalar paths
// differ by an ulp): such runs take the fallback, as do outputs of a smaller shape.
TEST(Fusion, SmallerShapesForSimdOpsOrOutputsFallBack) {
  Tensor x = tensor_2d<float>(100, 300, 5, 1);
  Tensor b = tensor_of<float>(300, 5, 2);
  expect_same_results(
      "graph f(%x : Tensor, %b : Tensor):\n"
      "  %half : float = Constant[value=0.5]()\n"
      "  %h : Tensor = mul(%b, %half)\n"
      "  %e : Tensor = exp(%h)\n"
      "  %y : Tensor = mul(%x, %e)\n"
      "  return (%y)\n",
      {IValue(x), IValue(b)}, false);
  expect_same_results(
      "graph f(%x : Tensor, %b : Tensor):\n"
      "  %half : float = Constant[value=0.5]()\n"
      "  %h : Tensor = mul(%b, %half)\n"
      "  %y : Tensor = mul(%x, %h)\n"
      "  return (%y, %h)\n",
      {IValue(x), IValue(b)}, false);
  // Without the smaller output the same group fuses.
  expect_same_results(
      "graph f(%x : Tensor, %b : Tensor):\n"
      "  %half : float = Constant[value=0.5]()\n"
      "  %h : Tensor = mul(%b, %half)\n"
      "  %y : Tensor = mul(%x, %h)\n"
      "  return (%y)\n",
      {IValue(x), IValue(b)}, true);
}

// Strided inputs (a transpose) are gathered through their strides. The unfused SIMD
// kernels (exp, tanh, ...) take their scalar path for strided inputs, so a SIMD op
// reading a strided input directly takes the fallback.
TEST(Fusion, NonContiguousInputsAreGathered) {
  const std::string head =
      "graph f(%x : Tensor, %b : Tensor):\n"
      "  %zero : int = Constant[value=0]()\n"
      "  %one : int = Constant[value=1]()\n"
      "  %t : Tensor = transpose(%x, %zero, %one)\n";
  const std::string ir = head +
                         "  %s : Tensor = add(%t, %b, %one)\n"
                         "  %e : Tensor = exp(%s)\n"
                         "  %y : Tensor = neg(%e)\n"
                         "  return (%y)\n";
  expect_same_results(ir, {IValue(matrix(300, 200, 5)), IValue(tensor_of<float>(300, 2, 6))}, true);
  // float64, and a column [200, 1] against the transposed [200, 300].
  Tensor xd = tensor_2d<double>(300, 200, 5, 7);
  expect_same_results(ir, {IValue(xd), IValue(tensor_2d<double>(200, 1, 2, 8))}, true);
  const std::string simd_on_strided = head +
                                      "  %e : Tensor = exp(%t)\n"
                                      "  %y : Tensor = add(%e, %b, %one)\n"
                                      "  return (%y)\n";
  expect_same_results(simd_on_strided,
                      {IValue(matrix(300, 200, 5)), IValue(tensor_of<float>(300, 2, 6))}, false);
}

// `to` its own dtype returns the strided operand itself, so a SIMD op after it takes
// the kernel's scalar path: the fused loop must not read it as contiguous.
TEST(Fusion, ConversionsKeepTheOperandsLayout) {
  const std::string ir =
      "graph f(%x : Tensor, %b : Tensor):\n"
      "  %zero : int = Constant[value=0]()\n"
      "  %one : int = Constant[value=1]()\n"
      "  %m : Tensor = relu(%x)\n"
      "  %t : Tensor = transpose(%m, %zero, %one)\n"
      "  %n : Tensor = neg(%b)\n"
      "  %d : dtype = dtype(%n)\n"
      "  %c : Tensor = to(%t, %d)\n"
      "  %e : Tensor = exp(%c)\n"
      "  %y : Tensor = add(%e, %n, %one)\n"
      "  return (%y)\n";
  expect_same_results(ir, {IValue(matrix(300, 200, 5)), IValue(tensor_of<float>(300, 2, 6))},
                      false);
}

// Note [Conversions in the fused program]: a gradient's `to(g, dtype(v))` runs fused
// where the target is the operand's own dtype (from dtype(v) in the group, a constant
// or a dtype input), bools included; any real conversion takes the fallback.
TEST(Fusion, ConversionsToTheOwnDtypeRunFused) {
  const std::string ir =
      "graph f(%x : Tensor, %g : Tensor):\n"
      "  %zero : float = Constant[value=0.0]()\n"
      "  %f32 : dtype = Constant[value=torch.float32]()\n"
      "  %s : Tensor = sigmoid(%x)\n"
      "  %d : dtype = dtype(%s)\n"
      "  %n : Tensor = neg(%g)\n"
      "  %c : Tensor = to(%n, %d)\n"
      "  %m : Tensor = gt(%x, %zero)\n"
      "  %dm : dtype = dtype(%m)\n"
      "  %mc : Tensor = to(%m, %dm)\n"
      "  %p : Tensor = mul(%c, %s)\n"
      "  %w : Tensor = where(%mc, %p, %x)\n"
      "  %w32 : Tensor = to(%w, %f32)\n"
      "  %y : Tensor = abs(%w32)\n"
      "  return (%y)\n";
  int64_t n = 3 * kParallelGrain + 5;
  expect_same_results(ir, {IValue(tensor_of<float>(n, 5, 1)), IValue(tensor_of<float>(n, 2, 2))},
                      true);
  // float64 to float32 is a real conversion: the fallback's `to` kernel makes it.
  expect_same_results(ir, {IValue(tensor_of<double>(n, 5, 1)), IValue(tensor_of<double>(n, 2, 2))},
                      false);
}

TEST(Fusion, ConversionsToADtypeInputAreDecidedPerRun) {
  const std::string ir =
      "graph f(%x : Tensor, %d : dtype):\n"
      "  %e : Tensor = exp(%x)\n"
      "  %c : Tensor = to(%e, %d)\n"
      "  %y : Tensor = neg(%c)\n"
      "  return (%y)\n";
  Tensor x = tensor_of<float>(5000, 5, 3);
  expect_same_results(ir, {IValue(x), IValue(DType::Float32)}, true);
  expect_fallback(ir, {IValue(x), IValue(DType::Float64)});
  expect_fallback(ir, {IValue(x), IValue(DType::Int64)});
}

// A group returns dtype(v) itself where only v's dtype is read after it: the run's
// dtype for a floating value, bool for a comparison; the kernels' answer when the run
// falls back (tanh of int64 is float32).
TEST(Fusion, GroupsReturnDtypes) {
  const std::string ir =
      "graph f(%x : Tensor):\n"
      "  %zero : float = Constant[value=0.0]()\n"
      "  %t : Tensor = tanh(%x)\n"
      "  %u : Tensor = mul(%t, %t)\n"
      "  %c : Tensor = gt(%t, %zero)\n"
      "  %dt : dtype = dtype(%t)\n"
      "  %dc : dtype = dtype(%c)\n"
      "  return (%u, %dt, %dc)\n";
  struct Case {
    Tensor x;
    bool fused;
  };
  Case cases[] = {{tensor_of<float>(3000, 3, 4), true},
                  {tensor_of<double>(3000, 3, 4), true},
                  {Tensor::from_vector(std::vector<int64_t>{1, -2, 3, 0}), false}};
  for (const Case& c : cases) {
    Outcome o = run_both(ir, {IValue(c.x)});
    EXPECT_EQ(o.fused_runs, c.fused ? 1 : 0);
    EXPECT_EQ(o.fallback_runs, c.fused ? 0 : 1);
    ASSERT_EQ(o.fused.size(), 3u);
    EXPECT_TRUE(same_bits(o.plain[0].to_tensor(), o.fused[0].to_tensor()));
    EXPECT_EQ(o.fused[1].to_dtype(), o.plain[1].to_dtype());
    EXPECT_EQ(o.fused[2].to_dtype(), DType::Bool);
  }
  EXPECT_EQ(run_both(ir, {IValue(cases[0].x)}).fused[1].to_dtype(), DType::Float32);
  EXPECT_EQ(run_both(ir, {IValue(cases[1].x)}).fused[1].to_dtype(), DType::Float64);
  EXPECT_EQ(run_both(ir, {IValue(cases[2].x)}).fused[1].to_dtype(), DType::Float32);
}

TEST(Fusion, ErrorsAreTheKernelsErrors) {
  const std::string ir =
      "graph f(%x : Tensor, %z : Tensor):\n"
      "  %p : Tensor = mul(%x, %z)\n"
      "  %y : Tensor = neg(%p)\n"
      "  return (%y)\n";
  std::shared_ptr<Graph> g = parse_graph(ir, "t.ir");
  ASSERT_TRUE(fuse_elementwise(*g));
  std::vector<IValue> inputs{IValue(tensor_of<float>(3, 1, 1)), IValue(tensor_of<float>(4, 1, 1))};
  try {
    run_code(g, inputs);
    FAIL() << "expected a shape error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("shapes [3] and [4]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tsl
