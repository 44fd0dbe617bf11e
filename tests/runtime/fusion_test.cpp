// FusionGroup at run time: the fused chunk loop gives the results of the unfused
// kernels (bit for bit) for every op it knows, in float32 and float64, on one thread
// and on several; inputs it cannot take (strided, broadcast, integer, other ops) take
// the op-by-op fallback with the same results.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "ir/ir_parser.h"
#include "ir/passes/fuse_elementwise.h"
#include "runtime/fusion.h"
#include "runtime/interpreter.h"
#include "runtime/tensor/parallel.h"

namespace tsl {
namespace {

std::vector<IValue> run_code(std::shared_ptr<const Graph> g, std::vector<IValue> inputs) {
  Code code(std::move(g));
  InterpreterState state(code);
  return state.run(std::move(inputs));
}

// Values over a wide range with the special ones (NaN, infinities, signed zeros, the
// edges of the SIMD exp's exact range) spread among them.
template <typename T>
std::vector<T> test_values(int64_t n, double scale, uint64_t seed) {
  const T specials[] = {T(0),
                        -T(0),
                        std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN(),
                        T(87.5),
                        T(-87.5),
                        T(100),
                        T(-700),
                        T(1e-30)};
  std::vector<T> v(static_cast<size_t>(n));
  uint64_t s = seed;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = static_cast<double>(s >> 11) / static_cast<double>(1ull << 53);
    v[static_cast<size_t>(i)] = static_cast<T>((u * 2 - 1) * scale);
    if (i % 97 == 5) v[static_cast<size_t>(i)] = specials[(i / 97) % 10];
  }
  return v;
}

// The distance in units in the last place (0 for equal values, NaN and NaN).
template <typename T>
uint64_t ulps(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return UINT64_MAX;
  if (a == b) return 0;
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  auto ordered = [](T x) {
    I i;
    std::memcpy(&i, &x, sizeof(T));
    return i < 0 ? static_cast<int64_t>(std::numeric_limits<I>::min()) - i
                 : static_cast<int64_t>(i);
  };
  int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

// The greatest ulp distance between two tensors of dtype T (UINT64_MAX when their
// shapes or dtypes differ).
template <typename T>
uint64_t max_ulps(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype() || a.dtype() != dtype_of<T>)
    return UINT64_MAX;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  uint64_t worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, ulps(ca.data_ptr<T>()[i], cb.data_ptr<T>()[i]));
  return worst;
}

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

const char* const kUnaryOps[] = {"exp",  "log",    "log1p", "expm1", "sin",   "cos",
                                 "tanh", "sigmoid", "silu",  "neg",   "abs",   "sqrt",
                                 "rsqrt", "square", "relu",  "reciprocal"};

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

TEST(Fusion, NonContiguousInputsFallBack) {
  const std::string ir =
      "graph f(%x : Tensor):\n"
      "  %zero : int = Constant[value=0]()\n"
      "  %one : int = Constant[value=1]()\n"
      "  %t : Tensor = transpose(%x, %zero, %one)\n"
      "  %e : Tensor = exp(%t)\n"
      "  %y : Tensor = neg(%e)\n"
      "  return (%y)\n";
  Tensor x = matrix(300, 200, 5);
  expect_fallback(ir, {IValue(x)});
}

TEST(Fusion, BroadcastingMixedDtypesAndIntsFallBack) {
  const std::string ir =
      "graph f(%x : Tensor, %z : Tensor):\n"
      "  %p : Tensor = mul(%x, %z)\n"
      "  %y : Tensor = neg(%p)\n"
      "  return (%y)\n";
  Tensor col = matrix(300, 1, 6);
  Tensor row = matrix(1, 200, 7);
  expect_fallback(ir, {IValue(col), IValue(row)});
  Tensor d = Tensor::from_vector(test_values<double>(200, 5, 8));
  Tensor f = tensor_of<float>(200, 5, 9);
  expect_fallback(ir, {IValue(f), IValue(d)});
  Tensor i = Tensor::from_vector(std::vector<int64_t>{1, -2, 3, 4});
  expect_fallback(ir, {IValue(i), IValue(i)});
}

TEST(Fusion, OpsWithoutAFusedFormFallBack) {
  // where reads a bool mask, which the fused program does not hold.
  const std::string ir =
      "graph f(%x : Tensor):\n"
      "  %zero : float = Constant[value=0.0]()\n"
      "  %c : Tensor = gt(%x, %zero)\n"
      "  %w : Tensor = where(%c, %x, %zero)\n"
      "  %y : Tensor = neg(%w)\n"
      "  return (%y)\n";
  expect_fallback(ir, {IValue(tensor_of<float>(1000, 5, 10))});
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
    EXPECT_NE(std::string(e.what()).find("shapes [3] and [4]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tsl
