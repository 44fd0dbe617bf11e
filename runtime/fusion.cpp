// Running FusionGroup nodes: the fused chunk loop and the op-by-op fallback. See
// Note [Running a FusionGroup] in fusion.h.
#include "runtime/fusion.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <vector>

// GCC 12 reports false -W(maybe-)uninitialized warnings inside its own AVX-512 intrinsics
// (_mm512_undefined_*, GCC bug 105593) when Eigen's packet math is inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>

#include "runtime/tensor/parallel.h"

namespace tsl {
namespace {

std::atomic<int64_t> g_fused{0};
std::atomic<int64_t> g_fallback{0};

// ---- The fused program ------------------------------------------------------------------

enum class FOp : uint8_t {
  // Eigen SIMD forms with a scalar redo outside their exact range (as the kernels).
  Exp, Log, Log1p, Expm1, Sin, Cos, Reciprocal, Tanh, Sigmoid, Silu,
  // Scalar formulas the compiler vectorizes.
  Neg, Abs, Sqrt, Rsqrt, Square, Relu, LeakyRelu, Clamp,
  Add, Sub, Mul, Div,
};

// Where an operand comes from: a group input (a tensor read in place, or a number /
// single-element tensor read as a scalar), a chunk register, or a constant.
struct Operand {
  enum class Kind : uint8_t { None, Input, Reg, Imm };
  Kind kind = Kind::None;
  uint32_t index = 0;
  double imm = 0;
};

struct Step {
  FOp op;
  uint32_t dst = 0;
  Operand a, b;  // b: the second tensor operand of binary ops
  Operand s0, s1;  // scalar arguments: alpha; clamp's min and max; the slope
  uint64_t deps = 0;  // the inputs the result depends on (bit i: input i)
};

constexpr int64_t kChunkBytes = 4096;
constexpr uint32_t kMaxRegisters = 24;

struct FallbackStep {
  KernelFn fn;
  std::vector<uint32_t> ins, outs;
};

class FusedGroup : public ObjectImpl {
 public:
  std::string repr() const override { return "<fusion group>"; }

  // The fused program; valid when `fusable`.
  bool fusable = false;
  std::vector<Step> steps;
  std::vector<uint32_t> return_regs;
  uint32_t num_registers = 0;

  // The fallback: slots 0..num_inputs-1 are the inputs; constants are preset.
  uint32_t num_inputs = 0;
  uint32_t num_slots = 0;
  std::vector<std::pair<uint32_t, IValue>> constants;
  std::vector<FallbackStep> fallback;
  std::vector<uint32_t> return_slots;
};

// ---- Compiling ----------------------------------------------------------------------------

class GroupCompiler {
 public:
  explicit GroupCompiler(const Node* n) : block_(n->block(0)) {}

  IntrusivePtr<FusedGroup> compile() {
    group_ = IntrusivePtr<FusedGroup>(new FusedGroup());
    ensure_kernels_registered();
    compile_fallback();
    group_->fusable = block_->params().size() <= 64 && compile_fused();
    return group_;
  }

 private:
  void compile_fallback() {
    FusedGroup& g = *group_;
    g.num_inputs = static_cast<uint32_t>(block_->params().size());
    for (const Value* p : block_->params()) slot(p);
    for (const Node* m : *block_) {
      if (m->op() == OpId::Constant) {
        g.constants.emplace_back(slot(m->output()), m->attr("value"));
        continue;
      }
      FallbackStep s;
      s.fn = lookup_kernel(DeviceType::CPU, m->op()).fn;
      TSL_INTERNAL_ASSERT(s.fn != nullptr, "no CPU kernel for ", m->info().name);
      for (const Value* v : m->inputs()) s.ins.push_back(slot(v));
      for (const Value* v : m->outputs()) s.outs.push_back(slot(v));
      g.fallback.push_back(std::move(s));
    }
    for (const Value* r : block_->returns()) g.return_slots.push_back(slot(r));
    g.num_slots = static_cast<uint32_t>(slots_.size());
  }

  uint32_t slot(const Value* v) {
    auto it = slots_.find(v);
    if (it != slots_.end()) return it->second;
    uint32_t s = static_cast<uint32_t>(slots_.size());
    slots_.emplace(v, s);
    return s;
  }

  // A tensor or scalar operand; false when the program cannot read it.
  bool operand(const Value* v, Operand& out, uint64_t& deps) {
    const Node* def = v->node();
    if (def == block_->param_node()) {
      out.kind = Operand::Kind::Input;
      out.index = static_cast<uint32_t>(v->offset());
      deps |= uint64_t{1} << out.index;
      return true;
    }
    if (def->op() == OpId::Constant) {
      const IValue& c = def->attr("value");
      if (c.is_none()) return true;  // Kind::None
      if (!c.is_int() && !c.is_double()) return false;  // bool alphas are errors
      out.kind = Operand::Kind::Imm;
      out.imm = c.to_double();
      return true;
    }
    auto it = value_regs_.find(v);
    if (it == value_regs_.end()) return false;
    out.kind = Operand::Kind::Reg;
    out.index = it->second;
    deps |= value_deps_.at(v);
    return true;
  }

  static bool op_of(OpId id, FOp& op) {
    switch (id) {
#define TSL_FUSED(name, fop) \
  case OpId::name:           \
    op = FOp::fop;           \
    return true;
      TSL_FUSED(exp, Exp)
      TSL_FUSED(log, Log)
      TSL_FUSED(log1p, Log1p)
      TSL_FUSED(expm1, Expm1)
      TSL_FUSED(sin, Sin)
      TSL_FUSED(cos, Cos)
      TSL_FUSED(reciprocal, Reciprocal)
      TSL_FUSED(tanh, Tanh)
      TSL_FUSED(sigmoid, Sigmoid)
      TSL_FUSED(silu, Silu)
      TSL_FUSED(neg, Neg)
      TSL_FUSED(abs, Abs)
      TSL_FUSED(sqrt, Sqrt)
      TSL_FUSED(rsqrt, Rsqrt)
      TSL_FUSED(square, Square)
      TSL_FUSED(relu, Relu)
      TSL_FUSED(leaky_relu, LeakyRelu)
      TSL_FUSED(clamp, Clamp)
      TSL_FUSED(clip, Clamp)
      TSL_FUSED(add, Add)
      TSL_FUSED(sub, Sub)
      TSL_FUSED(mul, Mul)
      TSL_FUSED(div, Div)
#undef TSL_FUSED
      default:
        return false;
    }
  }

  // The number of inputs of each fused op: tensor operands, then scalar arguments.
  static size_t arity(FOp op) {
    switch (op) {
      case FOp::LeakyRelu:
        return 2;
      case FOp::Clamp:
      case FOp::Add:
      case FOp::Sub:
      case FOp::Div:
        return 3;
      case FOp::Mul:
        return 2;
      default:
        return 1;
    }
  }

  static bool binary(FOp op) {
    return op == FOp::Add || op == FOp::Sub || op == FOp::Mul || op == FOp::Div;
  }

  bool compile_node(const Node* m) {
    if (m->op() == OpId::Constant) return true;
    Step s;
    if (!op_of(m->op(), s.op) || m->inputs().size() != arity(s.op)) return false;
    if (!operand(m->input(0), s.a, s.deps)) return false;
    if (binary(s.op) && !operand(m->input(1), s.b, s.deps)) return false;
    if (s.a.kind == Operand::Kind::None) return false;
    if (binary(s.op) && s.b.kind == Operand::Kind::None) return false;
    // The result must depend on a tensor (a register or an input).
    if (s.a.kind == Operand::Kind::Imm && (!binary(s.op) || s.b.kind == Operand::Kind::Imm))
      return false;
    uint64_t scalar_deps = 0;
    switch (s.op) {
      case FOp::Add:
      case FOp::Sub:
        if (!operand(m->input(2), s.s0, scalar_deps)) return false;
        if (s.s0.kind == Operand::Kind::None || s.s0.kind == Operand::Kind::Reg) return false;
        break;
      case FOp::Div:
        // Only true division (rounding_mode=None).
        if (constant_none(m->input(2))) break;
        return false;
      case FOp::LeakyRelu:
        if (!operand(m->input(1), s.s0, scalar_deps)) return false;
        if (s.s0.kind == Operand::Kind::None || s.s0.kind == Operand::Kind::Reg) return false;
        break;
      case FOp::Clamp:
        if (!operand(m->input(1), s.s0, scalar_deps) || !operand(m->input(2), s.s1, scalar_deps))
          return false;
        if (s.s0.kind == Operand::Kind::Reg || s.s1.kind == Operand::Kind::Reg) return false;
        // Both bounds None is an error (the fallback reports it); an input may be None.
        if (s.s0.kind == Operand::Kind::None && s.s1.kind == Operand::Kind::None) return false;
        break;
      default:
        break;
    }
    // Scalar arguments read from inputs are checked at run time; tensors are refused.
    for (const Operand* o : {&s.s0, &s.s1}) {
      if (o->kind == Operand::Kind::Input && !block_->params()[o->index]->type()->is_number() &&
          block_->params()[o->index]->type()->kind() != TypeKind::Optional) {
        return false;
      }
    }
    // Tensor operands read from inputs must be tensors or numbers.
    for (const Operand* o : {&s.a, &s.b}) {
      if (o->kind != Operand::Kind::Input) continue;
      const TypePtr& t = block_->params()[o->index]->type();
      if (!t->is_tensor() && !t->is_number()) return false;
    }
    s.dst = static_cast<uint32_t>(value_regs_.size());
    value_regs_.emplace(m->output(), s.dst);
    value_deps_.emplace(m->output(), s.deps);
    group_->steps.push_back(s);
    return true;
  }

  static bool constant_none(const Value* v) {
    return v->node()->op() == OpId::Constant && v->node()->attr("value").is_none();
  }

  bool compile_fused() {
    for (const Node* m : *block_) {
      if (!compile_node(m)) return false;
    }
    for (const Value* r : block_->returns()) {
      auto it = value_regs_.find(r);
      if (it == value_regs_.end()) return false;
      group_->return_regs.push_back(it->second);
    }
    return allocate_registers();
  }

  // Maps the program's values (one per step) onto few chunk registers: a register is
  // reused once its value is dead. A destination never shares a register with its
  // own operands (the scalar redo of the SIMD ops rereads the operand).
  bool allocate_registers() {
    FusedGroup& g = *group_;
    size_t n = g.steps.size();
    std::vector<size_t> last_use(n, 0);
    for (size_t i = 0; i < n; ++i) {
      last_use[i] = i;
      for (const Operand* o : {&g.steps[i].a, &g.steps[i].b}) {
        if (o->kind == Operand::Kind::Reg) last_use[o->index] = i;
      }
    }
    for (uint32_t r : g.return_regs) last_use[r] = n;  // live to the end
    std::vector<uint32_t> phys(n);
    std::vector<uint32_t> free_regs;
    uint32_t count = 0;
    for (size_t i = 0; i < n; ++i) {
      Step& s = g.steps[i];
      for (Operand* o : {&s.a, &s.b}) {
        if (o->kind == Operand::Kind::Reg) o->index = phys[o->index];
      }
      if (free_regs.empty()) {
        free_regs.push_back(count++);
      }
      phys[i] = free_regs.back();
      free_regs.pop_back();
      s.dst = phys[i];
      // Values whose last use is this step die after it.
      for (size_t j = 0; j < i; ++j) {
        if (last_use[j] == i) free_regs.push_back(phys[j]);
      }
      if (last_use[i] == i) free_regs.push_back(phys[i]);
    }
    for (uint32_t& r : g.return_regs) r = phys[r];
    g.num_registers = count;
    return count <= kMaxRegisters;
  }

  const Block* block_;
  IntrusivePtr<FusedGroup> group_;
  std::unordered_map<const Value*, uint32_t> slots_;
  std::unordered_map<const Value*, uint32_t> value_regs_;
  std::unordered_map<const Value*, uint64_t> value_deps_;
};

// ---- The fallback ---------------------------------------------------------------------

void run_fallback(const FusedGroup& g, KernelArgs& args) {
  std::vector<IValue> slots(g.num_slots);
  for (uint32_t i = 0; i < g.num_inputs; ++i) slots[i] = args.in(i);
  for (const auto& [s, v] : g.constants) slots[s] = v;
  for (const FallbackStep& step : g.fallback) {
    KernelArgs ka(slots.data(), step.ins.data(), static_cast<uint32_t>(step.ins.size()),
                  step.outs.data(), static_cast<uint32_t>(step.outs.size()));
    step.fn(ka);
  }
  for (uint32_t i = 0; i < args.num_outputs(); ++i) args.out(i) = slots[g.return_slots[i]];
  g_fallback.fetch_add(1, std::memory_order_relaxed);
}

// ---- The fused loop -------------------------------------------------------------------

// The inputs of one run: a pointer for full tensors, else a scalar.
template <typename T>
struct Inputs {
  std::vector<const T*> ptr;
  std::vector<T> scalar;
};

// A chunk-wide operand: `p` points at m elements, or is null and `s` is the value.
template <typename T>
struct Src {
  const T* p;
  T s;
};

template <typename T>
using ArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using MutArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// Whether some element is NaN or has |x| >= bound (a positive float): !(|x| < bound)
// compared on the bits, which order like the values for positive floats (NaNs above
// infinity), so that the loop vectorizes.
template <typename T>
bool any_outside(const T* src, int64_t m, T bound) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const U magnitude = std::numeric_limits<U>::max() >> 1;
  const U limit = std::bit_cast<U>(bound);
  U seen = 0;
  for (int64_t i = 0; i < m; ++i) seen |= U((std::bit_cast<U>(src[i]) & magnitude) >= limit);
  return seen != 0;
}

// dst = aop(src) through Eigen's SIMD forms, redoing |x| >= limit and NaN with the
// scalar `op`, exactly as map_contiguous in elementwise_unary.cpp.
template <typename T, typename Op, typename ArrayOp>
void simd_unary(T* dst, const T* src, int64_t m, double limit, Op op, ArrayOp aop) {
  const T bound = static_cast<T>(std::is_same_v<T, double> ? limit * 8 : limit);
  MutArrayMap<T>(dst, m) = aop(ArrayMap<T>(src, m));
  if (!any_outside(src, m, bound)) return;
  for (int64_t i = 0; i < m; ++i) {
    if (!(std::abs(src[i]) < bound)) dst[i] = op(src[i]);
  }
}

template <typename T, typename Op>
void scalar_unary(T* dst, const T* src, int64_t m, Op op) {
  for (int64_t i = 0; i < m; ++i) dst[i] = op(src[i]);
}

template <typename T, typename Op>
void scalar_binary(T* dst, Src<T> a, Src<T> b, int64_t m, Op op) {
  if (a.p && b.p) {
    for (int64_t i = 0; i < m; ++i) dst[i] = op(a.p[i], b.p[i]);
  } else if (a.p) {
    T s = b.s;
    for (int64_t i = 0; i < m; ++i) dst[i] = op(a.p[i], s);
  } else {
    T s = a.s;
    for (int64_t i = 0; i < m; ++i) dst[i] = op(s, b.p[i]);
  }
}

template <typename T>
class ChunkRunner {
 public:
  // s0/s1: each step's scalar arguments for this run, has0/has1 whether given.
  ChunkRunner(const FusedGroup& g, const Inputs<T>& in, const std::vector<T>& s0,
              const std::vector<T>& s1, const std::vector<bool>& has0,
              const std::vector<bool>& has1, const std::vector<T*>& outs)
      : g_(g), in_(in), s0_(s0), s1_(s1), s0_has_(has0), s1_has_(has1), outs_(outs) {}

  // Runs the program over elements [begin, end). The unfused kernels run Eigen over
  // the same [begin, end) (parallel_for splits alike) into a 64-byte aligned output,
  // so Eigen takes its scalar path for the elements before the first 64-byte
  // boundary and after the last whole packet; chunks that start at the same
  // boundaries make the fused loop take the same path for every element, and give
  // the same bits.
  void run(int64_t begin, int64_t end) const {
    constexpr int64_t kChunk = kChunkBytes / static_cast<int64_t>(sizeof(T));
    constexpr int64_t kPacket = 64 / static_cast<int64_t>(sizeof(T));
    alignas(64) T regs[kMaxRegisters][kChunk];
    int64_t first = std::min(end, (begin + kPacket - 1) / kPacket * kPacket);
    if (first > begin) run_chunk(regs, begin, first - begin);
    for (int64_t c = first; c < end; c += kChunk) run_chunk(regs, c, std::min(kChunk, end - c));
  }

 private:
  void run_chunk(T (*regs)[kChunkBytes / sizeof(T)], int64_t c, int64_t m) const {
    for (size_t i = 0; i < g_.steps.size(); ++i) step(i, regs, c, m);
    for (size_t k = 0; k < outs_.size(); ++k)
      std::memcpy(outs_[k] + c, regs[g_.return_regs[k]], static_cast<size_t>(m) * sizeof(T));
  }

  Src<T> src(const Operand& o, T (*regs)[kChunkBytes / sizeof(T)], int64_t c) const {
    switch (o.kind) {
      case Operand::Kind::Input:
        if (in_.ptr[o.index]) return {in_.ptr[o.index] + c, T(0)};
        return {nullptr, in_.scalar[o.index]};
      case Operand::Kind::Reg:
        return {regs[o.index], T(0)};
      default:
        return {nullptr, static_cast<T>(o.imm)};
    }
  }

  void step(size_t i, T (*regs)[kChunkBytes / sizeof(T)], int64_t c, int64_t m) const {
    const Step& s = g_.steps[i];
    T* d = regs[s.dst];
    Src<T> a = src(s.a, regs, c);
    // Unary ops read a full operand (fullness is checked before the loop).
    const T* x = a.p;
    switch (s.op) {
      case FOp::Exp:
        return simd_unary(
            d, x, m, 87.0, [](T v) { return static_cast<T>(std::exp(v)); },
            [](const auto& e) { return e.exp(); });
      case FOp::Log:
        return simd_unary(
            d, x, m, INFINITY, [](T v) { return static_cast<T>(std::log(v)); },
            [](const auto& e) { return e.log(); });
      case FOp::Log1p:
        return simd_unary(
            d, x, m, INFINITY, [](T v) { return static_cast<T>(std::log1p(v)); },
            [](const auto& e) { return e.log1p(); });
      case FOp::Expm1:
        return simd_unary(
            d, x, m, 87.0, [](T v) { return static_cast<T>(std::expm1(v)); },
            [](const auto& e) { return e.expm1(); });
      case FOp::Sin:
        return simd_unary(
            d, x, m, INFINITY, [](T v) { return static_cast<T>(std::sin(v)); },
            [](const auto& e) { return e.sin(); });
      case FOp::Cos:
        return simd_unary(
            d, x, m, INFINITY, [](T v) { return static_cast<T>(std::cos(v)); },
            [](const auto& e) { return e.cos(); });
      case FOp::Reciprocal:
        return simd_unary(
            d, x, m, INFINITY, [](T v) { return static_cast<T>(T(1) / v); },
            [](const auto& e) { return e.inverse(); });
      case FOp::Tanh:
        return simd_unary(
            d, x, m, INFINITY, [](T v) { return static_cast<T>(std::tanh(v)); },
            [](const auto& e) { return e.tanh(); });
      case FOp::Sigmoid:
        return simd_unary(
            d, x, m, 87.0, [](T v) { return static_cast<T>(T(1) / (T(1) + std::exp(-v))); },
            [](const auto& e) { return (T(1) + (-e).exp()).inverse(); });
      case FOp::Silu:
        return simd_unary(
            d, x, m, 87.0, [](T v) { return static_cast<T>(v / (T(1) + std::exp(-v))); },
            [](const auto& e) { return e / (T(1) + (-e).exp()); });
      case FOp::Neg:
        return scalar_unary(d, x, m, [](T v) { return -v; });
      case FOp::Abs:
        return scalar_unary(d, x, m, [](T v) { return std::abs(v); });
      case FOp::Sqrt:
        return scalar_unary(d, x, m, [](T v) { return std::sqrt(v); });
      case FOp::Rsqrt:
        return scalar_unary(d, x, m, [](T v) { return T(1) / std::sqrt(v); });
      case FOp::Square:
        return scalar_unary(d, x, m, [](T v) { return v * v; });
      case FOp::Relu:
        return scalar_unary(d, x, m, [](T v) { return v < T(0) ? T(0) : v; });
      case FOp::LeakyRelu: {
        T slope = s0_[i];
        return scalar_unary(d, x, m, [slope](T v) { return v > T(0) ? v : v * slope; });
      }
      case FOp::Clamp:
        return clamp(d, x, m, s, i);
      case FOp::Add:
      case FOp::Sub:
      case FOp::Mul:
      case FOp::Div:
        return binary(d, a, src(s.b, regs, c), m, s, i);
    }
  }

  // clamp_typed in elementwise_unary.cpp: min(max(v, lo), hi), NaN kept.
  void clamp(T* d, const T* x, int64_t m, const Step& s, size_t i) const {
    bool has_lo = s0_has_[i], has_hi = s1_has_[i];
    T lo = s0_[i], hi = s1_[i];
    if (has_lo && has_hi) {
      return scalar_unary(d, x, m, [lo, hi](T v) {
        T t = v < lo ? lo : v;
        return t > hi ? hi : t;
      });
    }
    if (has_lo) return scalar_unary(d, x, m, [lo](T v) { return v < lo ? lo : v; });
    scalar_unary(d, x, m, [hi](T v) { return v > hi ? hi : v; });
  }

  void binary(T* d, Src<T> a, Src<T> b, int64_t m, const Step& s, size_t i) const {
    switch (s.op) {
      case FOp::Add: {
        T al = s0_[i];
        if (al == T(1)) return scalar_binary(d, a, b, m, [](T x, T y) { return x + y; });
        return scalar_binary(d, a, b, m, [al](T x, T y) { return x + al * y; });
      }
      case FOp::Sub: {
        T al = s0_[i];
        if (al == T(1)) return scalar_binary(d, a, b, m, [](T x, T y) { return x - y; });
        return scalar_binary(d, a, b, m, [al](T x, T y) { return x - al * y; });
      }
      case FOp::Mul:
        return scalar_binary(d, a, b, m, [](T x, T y) { return x * y; });
      default:
        return scalar_binary(d, a, b, m, [](T x, T y) { return x / y; });
    }
  }

  const FusedGroup& g_;
  const Inputs<T>& in_;
  const std::vector<T>& s0_;
  const std::vector<T>& s1_;
  const std::vector<bool>& s0_has_;
  const std::vector<bool>& s1_has_;
  const std::vector<T*>& outs_;
};

// The value of a scalar argument for this run; false when it must take the fallback
// (a bool alpha or slope is an error there, or an unexpected value).
template <typename T>
bool scalar_arg(const Operand& o, const KernelArgs& args, T& value, bool& present) {
  present = false;
  switch (o.kind) {
    case Operand::Kind::None:
      return true;
    case Operand::Kind::Imm:
      value = static_cast<T>(o.imm);
      present = true;
      return true;
    case Operand::Kind::Input: {
      const IValue& v = args.in(o.index);
      if (v.is_none()) return true;
      if (!v.is_int() && !v.is_double()) return false;
      value = v.is_int() ? static_cast<T>(v.to_int()) : static_cast<T>(v.to_double());
      present = true;
      return true;
    }
    default:
      return false;
  }
}

// Runs the fused loop in T; false (nothing written) when this run must fall back.
template <typename T>
bool run_fused(const FusedGroup& g, KernelArgs& args, const DimVector& shape, int64_t n,
               uint64_t full_mask) {
  for (const Step& s : g.steps) {
    if ((s.deps & full_mask) == 0) return false;  // a single-element result
  }
  size_t num_steps = g.steps.size();
  std::vector<T> s0(num_steps, T(0)), s1(num_steps, T(0));
  std::vector<bool> has0(num_steps), has1(num_steps);
  for (size_t i = 0; i < num_steps; ++i) {
    const Step& s = g.steps[i];
    bool p0 = false, p1 = false;
    if (!scalar_arg<T>(s.s0, args, s0[i], p0) || !scalar_arg<T>(s.s1, args, s1[i], p1))
      return false;
    if (s.op == FOp::Clamp && !p0 && !p1) return false;  // the kernel's error
    if ((s.op == FOp::Add || s.op == FOp::Sub || s.op == FOp::LeakyRelu) && !p0) return false;
    has0[i] = p0;
    has1[i] = p1;
  }
  Inputs<T> in;
  in.ptr.resize(g.num_inputs, nullptr);
  in.scalar.resize(g.num_inputs, T(0));
  for (uint32_t k = 0; k < g.num_inputs; ++k) {
    const IValue& v = args.in(k);
    if (v.is_tensor()) {
      const TensorImpl* t = v.tensor_impl();
      if (full_mask >> k & 1) {
        in.ptr[k] = static_cast<const T*>(t->data());
      } else {
        in.scalar[k] = static_cast<const T*>(t->data())[0];
      }
    } else if (v.is_int()) {
      in.scalar[k] = static_cast<T>(v.to_int());
    } else if (v.is_double() || v.is_bool()) {
      in.scalar[k] = static_cast<T>(v.to_double());
    }
  }
  std::vector<Tensor> outs;
  std::vector<T*> out_ptrs;
  for (uint32_t k = 0; k < args.num_outputs(); ++k) {
    outs.push_back(Tensor::empty(shape, dtype_of<T>));
    out_ptrs.push_back(outs.back().data_ptr<T>());
  }
  ChunkRunner<T> runner(g, in, s0, s1, has0, has1, out_ptrs);
  if (n < 2 * kParallelGrain) {
    runner.run(0, n);
  } else {
    parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) { runner.run(b, e); });
  }
  for (uint32_t k = 0; k < args.num_outputs(); ++k) args.out(k) = IValue(std::move(outs[k]));
  return true;
}

// Checks the inputs for the fused loop: one floating dtype, each tensor contiguous with
// the result's shape or a single element. Sets the shape, the element count, the
// dtype and the mask of full inputs; false when the run must fall back.
bool plan(const FusedGroup& g, const KernelArgs& args, DimVector& shape, int64_t& n, DType& dtype,
          uint64_t& full_mask) {
  const TensorImpl* widest = nullptr;
  bool have_dtype = false;
  for (uint32_t k = 0; k < g.num_inputs; ++k) {
    const IValue& v = args.in(k);
    if (!v.is_tensor()) {
      if (!v.is_number() && !v.is_none()) return false;
      continue;
    }
    const TensorImpl* t = v.tensor_impl();
    if (!t || !t->device().is_cpu()) return false;
    if (have_dtype && t->dtype() != dtype) return false;
    dtype = t->dtype();
    have_dtype = true;
    if (!widest || t->numel() > widest->numel() ||
        (t->numel() == widest->numel() && t->dim() > widest->dim())) {
      widest = t;
    }
  }
  if (!widest || (dtype != DType::Float32 && dtype != DType::Float64)) return false;
  full_mask = 0;
  for (uint32_t k = 0; k < g.num_inputs; ++k) {
    const IValue& v = args.in(k);
    if (!v.is_tensor()) continue;
    const TensorImpl* t = v.tensor_impl();
    if (t->sizes() == widest->sizes() && t->is_contiguous()) {
      full_mask |= uint64_t{1} << k;
    } else if (t->numel() != 1 || t->dim() > widest->dim()) {
      return false;
    }
  }
  // With one element everywhere the widest tensor decides the shape, and every
  // single-element tensor of its shape counts as full.
  shape = widest->sizes();
  n = widest->numel();
  return full_mask != 0;
}

}  // namespace

IValue compile_fusion_group(const Node* n) {
  TSL_INTERNAL_ASSERT(n->op() == OpId::FusionGroup, "compile_fusion_group of ", n->info().name);
  return IValue(IntrusivePtr<ObjectImpl>(GroupCompiler(n).compile()));
}

void run_fusion_group(KernelArgs& args) {
  const auto& g = static_cast<const FusedGroup&>(args.in(args.num_inputs() - 1).to_object());
  if (g.fusable) {
    DimVector shape;
    int64_t n = 0;
    DType dtype = DType::Float32;
    uint64_t full_mask = 0;
    if (plan(g, args, shape, n, dtype, full_mask)) {
      bool done = dtype == DType::Float32 ? run_fused<float>(g, args, shape, n, full_mask)
                                          : run_fused<double>(g, args, shape, n, full_mask);
      if (done) {
        g_fused.fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
  }
  run_fallback(g, args);
}

FusionCounters fusion_counters() {
  return {g_fused.load(std::memory_order_relaxed), g_fallback.load(std::memory_order_relaxed)};
}

}  // namespace tsl
