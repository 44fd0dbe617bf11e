// Compiled fusion kernels: the C++ of a FusionGroup's fused program, one SIMD packet
// at a time with every value in a register. See Note [Compiled fusion kernels] in
// runtime/fusion.h.
#include "runtime/fusion_codegen.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "runtime/fusion_forms.h"
#include "runtime/native_compiler.h"

namespace tsl::fusion {
namespace {

// The helpers of every kernel, after the text of fusion_forms.h. The SIMD forms run
// Eigen on one packet as a fixed-size array, so that Eigen picks the same functions as
// for the unfused kernel's dynamic arrays (or the scalar ones where a form has no SIMD
// version for T); the other ops are exact IEEE operations on packets, the same values
// as the scalar formulas of the chunk loop.
constexpr const char* kPrelude = R"CODE(
#include <Eigen/Core>
#include <cstdint>
#include <cstring>

namespace {

using namespace Eigen::internal;
using P = packet_traits<T>::type;
constexpr int kLanes = unpacket_traits<P>::size;
using Lanes = Eigen::Array<T, kLanes, 1>;

// Eigen's form of `array` (an expression of the array e) on one packet.
template <typename F>
inline P simd_form(const P& x, F array) {
  alignas(64) T in[kLanes], out[kLanes];
  pstore(in, x);
  Eigen::Map<Lanes, Eigen::Aligned64> result(out);
  result = array(Eigen::Map<const Lanes, Eigen::Aligned64>(in));
  return pload<P>(out);
}

// r, with the lanes where !(|x| < bound) (NaN included) redone by the scalar op.
template <typename Op>
inline P redo_outside(const P& x, const P& r, T bound, Op op) {
  P inside = pcmp_lt(pabs(x), pset1<P>(bound));
  if (!predux_any(pandnot(ptrue(x), inside))) return r;
  alignas(64) T xs[kLanes], rs[kLanes], ins[kLanes];
  pstore(xs, x);
  pstore(rs, r);
  pstore(ins, inside);
  for (int l = 0; l < kLanes; ++l) {
    T zero = T(0);
    if (std::memcmp(&ins[l], &zero, sizeof(T)) == 0) rs[l] = op(xs[l]);
  }
  return pload<P>(rs);
}

#define TSL_FORM_FUNCTION(name, limit, scalar, array)                                  \
  inline P form_##name(const P& x) {                                                   \
    return redo_outside(                                                               \
        x, simd_form(x, [](const auto& e) { return array; }), simd_form_bound<T>(limit), \
        [](T v) { return static_cast<T>(scalar); });                                   \
  }
TSL_FUSED_SIMD_FORMS(TSL_FORM_FUNCTION)
#undef TSL_FORM_FUNCTION

// The scalar formula op on each lane (vectorized by the compiler).
template <typename Op>
inline P each_lane(const P& x, Op op) {
  alignas(64) T xs[kLanes];
  pstore(xs, x);
  for (int l = 0; l < kLanes; ++l) xs[l] = op(xs[l]);
  return pload<P>(xs);
}

const P kZero = pset1<P>(T(0));
const P kOne = pset1<P>(T(1));
const P kSign = pset1<P>(T(-0.0));
const P kInf = pset1<P>(T(INFINITY));

// A value the compiler cannot see through: each step's result goes through it, so that
// no multiply of one step and add of the next contract into an FMA, which the chunk
// loop (each step a loop of its own over memory) never does. Inside a step the code
// contracts as the chunk loop's formula does: both are compiled with TSL's flags.
inline P opaque(P x) {
#if defined(__x86_64__)
  asm("" : "+v"(x));
#else
  asm("" : "+m"(x));
#endif
  return x;
}

inline P as01(const P& mask) { return pand(mask, kOne); }
inline P not01(const P& mask) { return pandnot(kOne, mask); }

}  // namespace
)CODE";

const char* simd_name(FOp op) {
  switch (op) {
#define TSL_FORM_NAME(name, limit, scalar, array) \
  case FOp::name:                                 \
    return #name;
    TSL_FUSED_SIMD_FORMS(TSL_FORM_NAME)
#undef TSL_FORM_NAME
    default:
      return nullptr;
  }
}

// The op's name in the IR, for the generated code's comments.
const char* op_name(FOp op) {
  static const char* const kNames[] = {
      "exp",         "log",        "log1p",       "expm1",       "sin",   "cos",   "reciprocal",
      "tanh",        "sigmoid",    "silu",        "neg",         "abs",   "sqrt",  "rsqrt",
      "square",      "relu",       "leaky_relu",  "clamp",       "add",   "sub",   "mul",
      "div",         "eq",         "ne",          "lt",          "le",    "gt",    "ge",
      "logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf", "isfinite",
      "where",       "to"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(FOp::Cast) + 1);
  return kNames[static_cast<size_t>(op)];
}

// A double as an exact C++ literal of type T.
std::string literal(double v) {
  char buf[64];
  if (v != v) return "T(NAN)";
  if (v == INFINITY) return "T(INFINITY)";
  if (v == -INFINITY) return "T(-INFINITY)";
  std::snprintf(buf, sizeof buf, "T(%a)", v);
  return buf;
}

class Generator {
 public:
  Generator(const FusedGroup& g, DType dtype, std::span<const CompiledInput> inputs)
      : g_(g), dtype_(dtype), inputs_(inputs) {}

  std::string source() {
    std::ostringstream o;
    o << "// A FusionGroup's program, generated by TSL (runtime/fusion_codegen.cpp).\n";
    o << "using T = " << (dtype_ == DType::Float64 ? "double" : "float") << ";\n";
    o << kFusionFormsText << kPrelude << "\n" << kCompiledKernelMarker << "\n";
    o << "// T = " << (dtype_ == DType::Float64 ? "double" : "float")
      << "; P: a SIMD packet of T; inputs:";
    for (size_t k = 0; k < inputs_.size(); ++k) {
      o << " x" << k << " "
        << (inputs_[k] == CompiledInput::Pointer  ? "(tensor)"
            : inputs_[k] == CompiledInput::Scalar ? "(scalar)"
                                                  : "(unused)");
    }
    o << "\nextern \"C\" __attribute__((visibility(\"default\"))) void " << kCompiledKernelSymbol
      << "(const void* const* in_, const void* scalars_, void* const* out_, int64_t begin,\n"
         "    int64_t end) {\n"
         "  const T* const* in = reinterpret_cast<const T* const*>(in_);\n"
         "  const T* s = static_cast<const T*>(scalars_);\n"
         "  T* const* out = reinterpret_cast<T* const*>(out_);\n";
    // Loop invariants: input pointers and scalars, constants, scalar arguments.
    for (size_t k = 0; k < inputs_.size(); ++k) {
      if (inputs_[k] == CompiledInput::Pointer) {
        o << "  const T* in" << k << " = in[" << k << "];\n";
      } else if (inputs_[k] == CompiledInput::Scalar) {
        o << "  const P x" << k << " = pset1<P>(s[" << k << "]);\n";
      }
    }
    std::ostringstream body;
    for (size_t i = 0; i < g_.steps.size(); ++i) step(o, body, i);
    for (size_t k = 0; k < g_.return_regs.size(); ++k) {
      if (!g_.is_dtype_output(k)) o << "  T* out" << k << " = out[" << k << "];\n";
    }
    o << "  for (int64_t i = begin; i < end; i += kLanes) {\n";
    for (size_t k = 0; k < inputs_.size(); ++k) {
      if (inputs_[k] == CompiledInput::Pointer)
        o << "    const P x" << k << " = ploadu<P>(in" << k << " + i);\n";
    }
    o << "    P";
    for (uint32_t r = 0; r < g_.num_registers; ++r) o << (r ? ", r" : " r") << r;
    o << ";\n" << body.str();
    for (size_t k = 0; k < g_.return_regs.size(); ++k) {
      if (!g_.is_dtype_output(k))
        o << "    pstoreu(out" << k << " + i, r" << g_.return_regs[k] << ");\n";
    }
    o << "  }\n}\n";
    return o.str();
  }

 private:
  std::string operand(const Operand& x, std::ostream& pre) {
    switch (x.kind) {
      case Operand::Kind::Input:
        return "x" + std::to_string(x.index);
      case Operand::Kind::Reg:
        return "r" + std::to_string(x.index);
      case Operand::Kind::Imm: {
        std::string name = "c" + std::to_string(constants_++);
        pre << "  const P " << name << " = pset1<P>(" << literal(x.imm) << ");\n";
        return name;
      }
      default:
        return "kZero";
    }
  }

  // A scalar argument of step i (slot 0 or 1) as a packet defined before the loop.
  std::string argument(std::ostream& pre, size_t i, int slot) {
    std::string name = "a" + std::to_string(i) + "_" + std::to_string(slot);
    size_t index = inputs_.size() + 2 * i + static_cast<size_t>(slot);
    pre << "  const P " << name << " = pset1<P>(s[" << index << "]);\n";
    return name;
  }

  void step(std::ostream& pre, std::ostream& body, size_t i) {
    const Step& st = g_.steps[i];
    std::string a = operand(st.a, pre);
    std::string b = st.b.kind != Operand::Kind::None ? operand(st.b, pre) : "";
    std::string c = st.c.kind != Operand::Kind::None ? operand(st.c, pre) : "";
    std::string e;
    if (const char* form = simd_name(st.op)) {
      e = std::string("form_") + form + "(" + a + ")";
    } else {
      switch (st.op) {
        case FOp::Neg:
          e = "pxor(" + a + ", kSign)";
          break;
        case FOp::Abs:
          e = "pabs(" + a + ")";
          break;
        // Not Eigen's psqrt: with EIGEN_FAST_MATH it is an approximation.
        case FOp::Sqrt:
          e = "each_lane(" + a + ", [](T v) { return std::sqrt(v); })";
          break;
        case FOp::Rsqrt:
          e = "each_lane(" + a + ", [](T v) { return T(1) / std::sqrt(v); })";
          break;
        case FOp::Square:
          e = "pmul(" + a + ", " + a + ")";
          break;
        case FOp::Relu:  // v < 0 ? 0 : v
          e = "pselect(pcmp_lt(" + a + ", kZero), kZero, " + a + ")";
          break;
        case FOp::LeakyRelu: {  // v > 0 ? v : v * slope
          std::string slope = argument(pre, i, 0);
          e = "pselect(pcmp_lt(kZero, " + a + "), " + a + ", pmul(" + a + ", " + slope + "))";
          break;
        }
        case FOp::Clamp: {  // t = v < lo ? lo : v; t > hi ? hi : t (absent: -inf, +inf)
          std::string lo = argument(pre, i, 0), hi = argument(pre, i, 1);
          std::string t = "pselect(pcmp_lt(" + a + ", " + lo + "), " + lo + ", " + a + ")";
          body << "    r" << st.dst << " = opaque(" << t << ");\n";
          std::string r = "r" + std::to_string(st.dst);
          e = "pselect(pcmp_lt(" + hi + ", " + r + "), " + hi + ", " + r + ")";
          break;
        }
        // Only with alpha 1 (compiled_kernel_for): whether `x + alpha * y` contracts
        // into an FMA is the compiler's choice, made apart in each build of a kernel.
        case FOp::Add:
          e = "padd(" + a + ", " + b + ")";
          break;
        case FOp::Sub:
          e = "psub(" + a + ", " + b + ")";
          break;
        case FOp::Mul:
          e = "pmul(" + a + ", " + b + ")";
          break;
        case FOp::Div:
          e = "pdiv(" + a + ", " + b + ")";
          break;
        case FOp::Eq:
          e = "as01(pcmp_eq(" + a + ", " + b + "))";
          break;
        case FOp::Ne:
          e = "not01(pcmp_eq(" + a + ", " + b + "))";
          break;
        case FOp::Lt:
          e = "as01(pcmp_lt(" + a + ", " + b + "))";
          break;
        case FOp::Le:
          e = "as01(pcmp_le(" + a + ", " + b + "))";
          break;
        case FOp::Gt:
          e = "as01(pcmp_lt(" + b + ", " + a + "))";
          break;
        case FOp::Ge:
          e = "as01(pcmp_le(" + b + ", " + a + "))";
          break;
        case FOp::LogicalAnd:  // neither is zero
          e = "not01(por(pcmp_eq(" + a + ", kZero), pcmp_eq(" + b + ", kZero)))";
          break;
        case FOp::LogicalOr:  // not both zero
          e = "not01(pand(pcmp_eq(" + a + ", kZero), pcmp_eq(" + b + ", kZero)))";
          break;
        case FOp::LogicalXor:
          e = "as01(pxor(pcmp_eq(" + a + ", kZero), pcmp_eq(" + b + ", kZero)))";
          break;
        case FOp::LogicalNot:
          e = "as01(pcmp_eq(" + a + ", kZero))";
          break;
        case FOp::IsNan:
          e = "not01(pcmp_eq(" + a + ", " + a + "))";
          break;
        case FOp::IsInf:
          e = "as01(pcmp_eq(pabs(" + a + "), kInf))";
          break;
        case FOp::IsFinite:
          e = "as01(pcmp_lt(pabs(" + a + "), kInf))";
          break;
        case FOp::Where:  // cond (0 or 1) != 0 ? self : other
          e = "pselect(pcmp_eq(" + a + ", kZero), " + c + ", " + b + ")";
          break;
        case FOp::Cast:  // to its own dtype: the value
          e = a;
          break;
        default:
          TSL_INTERNAL_ASSERT(false, "no compiled form of a fused op");
      }
    }
    body << "    r" << st.dst << " = opaque(" << e << ");  // " << op_name(st.op) << "\n";
  }

  const FusedGroup& g_;
  DType dtype_;
  std::span<const CompiledInput> inputs_;
  int constants_ = 0;
};

}  // namespace

std::string compiled_kernel_source(const FusedGroup& g, DType dtype,
                                   std::span<const CompiledInput> inputs) {
  return Generator(g, dtype, inputs).source();
}

bool may_use_compiled_kernel(int64_t n) {
  const NativeJitOptions& opt = native_jit_options();
  return opt.mode != NativeJitOptions::Mode::Off && n >= opt.min_elements;
}

CompiledKernelFn compiled_kernel(const FusedGroup& g, DType dtype,
                                 std::span<const CompiledInput> inputs, int64_t n) {
  const NativeJitOptions& opt = native_jit_options();
  if (!may_use_compiled_kernel(n)) return nullptr;
  std::shared_ptr<NativeModule> module;
  {
    std::lock_guard<std::mutex> lock(g.compiled_mu);
    auto it = std::find_if(g.compiled.begin(), g.compiled.end(), [&](const CompiledVariant& v) {
      return v.dtype == dtype &&
             std::equal(v.inputs.begin(), v.inputs.end(), inputs.begin(), inputs.end());
    });
    if (it == g.compiled.end()) {
      CompiledVariant v;
      v.dtype = dtype;
      v.inputs.assign(inputs.begin(), inputs.end());
      it = g.compiled.insert(g.compiled.end(), std::move(v));
    }
    if (it->module) {
      void* fn = it->module->symbol();
      return reinterpret_cast<CompiledKernelFn>(fn);
    }
    it->elements += n;
    bool sync = opt.mode == NativeJitOptions::Mode::Sync;
    if (!sync && it->elements < opt.hot_elements) return nullptr;
    // Generated and requested once per variant; the compiler may take a second.
    it->module =
        compile_native(compiled_kernel_source(g, dtype, inputs), kCompiledKernelSymbol, sync);
    module = it->module;
  }
  return reinterpret_cast<CompiledKernelFn>(module->symbol());
}

}  // namespace tsl::fusion
