// Helpers of the fusion tests (fusion_test.cpp, fusion_codegen_test.cpp): values with
// the special ones among them, and distances in ulps between results.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/fused_ops.h"
#include "runtime/exec/interpreter.h"

namespace tsl {

inline std::vector<IValue> run_code(std::shared_ptr<const Graph> g, std::vector<IValue> inputs) {
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

// Fused programs over every fused op (fusion_codegen_test.cpp, tests/cuda).

// A program of the inputs %x (read in place), %v (a view of another buffer, one
// element off its alignment), %a (a Python float), %one_elem (a single-element
// tensor) and %e (one value expanded, as the seed of a gradient); `body` defines
// %y0 ... %y<count-1>.
inline std::string program(const std::string& body, int count) {
  std::string ir =
      "graph f(%x : Tensor, %v : Tensor, %a : float, %one_elem : Tensor, %e : Tensor):\n"
      "  %none : None = Constant[value=None]()\n"
      "  %one : int = Constant[value=1]()\n"
      "  %half : float = Constant[value=0.5]()\n"
      "  %m : Tensor = mul(%x, %half)\n" +
      body + "  return (";
  for (int k = 0; k < count; ++k) ir += (k ? ", %y" : "%y") + std::to_string(k);
  return ir + ")\n";
}

// Every op with a SIMD form, on values with NaN, infinities and |x| > 87 among them.
inline constexpr const char* kSimdForms =
    "  %y0 : Tensor = exp(%m)\n  %y1 : Tensor = log(%m)\n  %y2 : Tensor = log1p(%m)\n"
    "  %y3 : Tensor = expm1(%m)\n  %y4 : Tensor = sin(%m)\n  %y5 : Tensor = cos(%m)\n"
    "  %y6 : Tensor = reciprocal(%m)\n  %y7 : Tensor = tanh(%m)\n"
    "  %y8 : Tensor = sigmoid(%m)\n  %y9 : Tensor = silu(%m)\n";

// The scalar formulas with operands of every kind.
inline constexpr const char* kArithmetic =
    "  %y0 : Tensor = neg(%m)\n  %y1 : Tensor = abs(%v)\n  %y2 : Tensor = sqrt(%m)\n"
    "  %y3 : Tensor = rsqrt(%v)\n  %y4 : Tensor = square(%m)\n  %y5 : Tensor = relu(%m)\n"
    "  %slope : float = Constant[value=0.1]()\n  %y6 : Tensor = leaky_relu(%v, %slope)\n"
    "  %lo : float = Constant[value=-1.5]()\n  %hi : int = Constant[value=2]()\n"
    "  %y7 : Tensor = clamp(%m, %lo, %hi)\n  %y8 : Tensor = clamp(%v, %none, %a)\n"
    "  %y9 : Tensor = add(%m, %v, %one)\n"
    "  %y10 : Tensor = sub(%one_elem, %m, %one)\n  %y11 : Tensor = mul(%e, %v)\n"
    "  %y12 : Tensor = div(%m, %v, %none)\n  %y13 : Tensor = add(%e, %a, %one)\n";

// Comparisons, logic, predicates and where; bool values feed float results (a bool
// output would take the chunk loop).
inline constexpr const char* kLogic =
    "  %c0 : Tensor = eq(%m, %v)\n  %c1 : Tensor = ne(%m, %v)\n"
    "  %c2 : Tensor = lt(%m, %a)\n  %c3 : Tensor = le(%v, %one_elem)\n"
    "  %c4 : Tensor = gt(%m, %v)\n  %c5 : Tensor = ge(%e, %v)\n"
    "  %c6 : Tensor = logical_and(%c2, %m)\n  %c7 : Tensor = logical_or(%c0, %v)\n"
    "  %c8 : Tensor = logical_xor(%m, %v)\n  %c9 : Tensor = logical_not(%m)\n"
    "  %c10 : Tensor = isnan(%m)\n  %c11 : Tensor = isinf(%m)\n  %c12 : Tensor = isfinite(%v)\n"
    "  %y0 : Tensor = where(%c0, %m, %v)\n  %y1 : Tensor = where(%c1, %a, %v)\n"
    "  %y2 : Tensor = where(%c2, %m, %e)\n  %y3 : Tensor = add(%c3, %m, %one)\n"
    "  %y4 : Tensor = mul(%c4, %v)\n  %y5 : Tensor = mul(%c5, %m)\n"
    "  %y6 : Tensor = add(%m, %c6, %one)\n  %y7 : Tensor = add(%v, %c7, %one)\n"
    "  %y8 : Tensor = mul(%c8, %m)\n  %y9 : Tensor = mul(%c9, %v)\n"
    "  %y10 : Tensor = where(%c10, %v, %m)\n  %y11 : Tensor = where(%c11, %e, %m)\n"
    "  %y12 : Tensor = where(%c12, %m, %one_elem)\n";

// Program bodies for program() that run every op of runtime/fused_ops.def (aliases
// too), a few ops per body (each body one group): each op on %m (full, contiguous) and,
// with two operands, %v (a view off its alignment), then on the expanded %e and %m; its
// scalar arguments as the compiled kernels take them (alpha 1). A `to` is returned by
// its group only when its value does not escape (Note [Conversions in the fused
// program]): its value feeds an output and a sum after the group.
struct FusedOpProgram {
  std::string ops;  // the ops' names in the IR
  std::string body;
  int outputs = 0;
};

inline std::string fused_op_call(OpId id, const fusion::FusedOpInfo& f,
                                 std::initializer_list<std::string> operands) {
  std::string call = std::string(op_info(id).name) + "(";
  bool first = true;
  for (const std::string& o : operands) {
    call += (first ? "" : ", ") + o;
    first = false;
  }
  switch (f.args) {
    case fusion::FusedArgs::None:
      break;
    case fusion::FusedArgs::Alpha:
      call += ", %one";
      break;
    case fusion::FusedArgs::TrueDivision:
      call += ", %none";
      break;
    case fusion::FusedArgs::Slope:
      call += ", %slope";
      break;
    case fusion::FusedArgs::Bounds:
      call += ", %lo, %hi";
      break;
    case fusion::FusedArgs::DType:
      call += ", %d";
      break;
  }
  return call + ")";
}

inline std::vector<FusedOpProgram> fused_op_programs(int ops_per_program = 6) {
  std::vector<FusedOpProgram> programs;
  std::string tail;  // after the group: the sums of the casts' values
  auto finish = [&] {
    programs.back().body += tail;
    tail.clear();
  };
  for (int k = 0; k < kNumOps; ++k) {
    OpId id = static_cast<OpId>(k);
    std::optional<fusion::FOp> op = fusion::fused_op_of(id);
    if (!op) continue;
    if (programs.empty() ||
        std::count(programs.back().ops.begin(), programs.back().ops.end(), ',') + 1 >=
            ops_per_program) {
      if (!programs.empty()) finish();
      programs.emplace_back();
      programs.back().body =
          "  %slope : float = Constant[value=0.1]()\n"
          "  %lo : float = Constant[value=-1.5]()\n  %hi : int = Constant[value=2]()\n"
          "  %false : bool = Constant[value=False]()\n  %d : dtype = dtype(%x)\n";
    }
    FusedOpProgram& p = programs.back();
    const fusion::FusedOpInfo& f = fusion::fused_info(*op);
    p.ops += (p.ops.empty() ? "" : ", ") + std::string(op_info(id).name);
    std::string suffix = std::to_string(k);
    auto output = [&](const std::string& call) {
      std::string y = "%y" + std::to_string(p.outputs++);
      p.body += "  " + y + " : Tensor = " + call + "\n";
      return y;
    };
    if (f.result == fusion::FusedResult::Cast) {
      std::string t = "%t" + suffix;
      p.body += "  " + t + " : Tensor = " + fused_op_call(id, f, {"%m"}) + "\n";
      output("mul(" + t + ", %half)");
      tail += "  %y" + std::to_string(p.outputs++) + " : Tensor = sum(" + t +
              ", %none, %false, %none)\n";
    } else if (f.operands == 1) {
      output(fused_op_call(id, f, {"%m"}));
    } else if (f.operands == 2) {
      output(fused_op_call(id, f, {"%m", "%v"}));
      output(fused_op_call(id, f, {"%e", "%m"}));
    } else {
      std::string c = "%c" + suffix;
      p.body += "  " + c + " : Tensor = gt(%m, %v)\n";
      output(fused_op_call(id, f, {c, "%m", "%v"}));
      output(fused_op_call(id, f, {c, "%a", "%e"}));
    }
  }
  finish();
  return programs;
}

}  // namespace tsl
