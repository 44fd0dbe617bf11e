// The fused chunk loop of a FusionGroup: checks one run's inputs (plan), then runs the
// program over the result in chunks. See Note [Running a FusionGroup] in fusion.h.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "runtime/fusion/chunk_ops.h"
#include "runtime/fusion/codegen.h"
#include "runtime/fusion/plan.h"
#include "runtime/fusion/program.h"
#include "runtime/tensor/cpu_capability.h"
#include "runtime/tensor/parallel.h"

namespace tsl::fusion {
namespace {

// ---- The plan of one run ----------------------------------------------------------------
//
// Planning runs on every call, so it avoids the heap where it can: small tensors
// spend most of their time here (bench/dispatch.sh).

// How the loop reads a group input: in place (contiguous, T, the result's shape), as
// a scalar (numbers, single elements), or gathered per chunk into a register
// (broadcast, strided or bool tensors).
enum class InputMode : uint8_t { Unused, Direct, Scalar, Gathered };

template <typename T>
struct InputPlan {
  InputMode mode = InputMode::Unused;
  uint32_t gather = 0;  // the index in RunPlan::gathers of a gathered input
  const T* ptr = nullptr;
  T scalar = T(0);
};

struct Gather {
  uint32_t reg = 0;
  const void* base = nullptr;
  bool is_bool = false;
  DimVector strides;  // per dim of the result; 0 where the input broadcasts
};

// A step's values for this run: the ones its formula takes (the slope; clamp's bounds,
// -inf and +inf where absent), or alpha (step_values in plan.h).
template <typename T>
struct StepValues {
  T v0 = T(0), v1 = T(0);
};

template <typename T>
struct RunPlan {
  DimVector shape;       // the result's
  DimVector loop_sizes;  // the shape, or [1] for a 0-dim result
  int64_t n = 0;
  std::vector<InputPlan<T>> inputs;
  std::vector<Gather> gathers;
  std::vector<StepValues<T>> args;  // per step
  uint64_t out_bool = 0;            // bit k: output k is a bool tensor
  std::vector<Tensor> outs;
  std::vector<void*> out_ptrs;
  // The arguments of a compiled kernel (compiled_kernel_for).
  std::vector<CompiledInput> compiled_inputs;
  std::vector<T> compiled_scalars;
};

// The plan of this thread's current run, kept between runs so that its vectors keep
// their memory (a run never starts another on the same thread).
template <typename T>
RunPlan<T>& scratch_plan() {
  thread_local RunPlan<T> plan;
  return plan;
}

// How a tensor input is read; sets what it is in `info`.
template <typename T>
void plan_tensor_input(const TensorImpl* t, RunPlan<T>& p, ValueInfo& info, Shapes& shapes,
                       InputPlan<T>& in) {
  bool is_bool = t->dtype() == DType::Bool;
  info.kind = is_bool ? VKind::Bool : VKind::Float;
  info.full = t->sizes() == p.shape;
  if (!info.full) {
    info.shape = static_cast<int16_t>(shapes.size());
    shapes.push_back(t->sizes());
  }
  if (info.full && !is_bool && t->is_contiguous()) {
    in.mode = InputMode::Direct;
    in.ptr = static_cast<const T*>(t->data());
    info.contiguous = true;
  } else if ((!info.full && t->numel() == 1) || all_strides_zero(t)) {
    // One element, or one value expanded (as the ones that seed a gradient).
    in.mode = InputMode::Scalar;
    in.scalar =
        is_bool ? T(*static_cast<const bool*>(t->data())) : *static_cast<const T*>(t->data());
  } else {
    in.mode = InputMode::Gathered;
    in.gather = static_cast<uint32_t>(p.gathers.size());
    Gather gi;
    gi.base = t->data();
    gi.is_bool = is_bool;
    gi.strides = DimVector(p.loop_sizes.size(), 0);
    size_t lead = p.loop_sizes.size() - t->sizes().size();
    for (size_t d = 0; d < t->sizes().size(); ++d)
      gi.strides.data()[lead + d] = t->sizes()[d] == 1 ? 0 : t->strides()[d];
    p.gathers.push_back(std::move(gi));
  }
}

// Decides how each input is read; fills `values` with what each input is.
template <typename T>
void plan_inputs(const FusedGroup& g, const KernelArgs& args, RunPlan<T>& p, ValueInfo* values,
                 Shapes& shapes) {
  p.inputs.assign(g.num_inputs, InputPlan<T>());
  for (uint32_t k = 0; k < g.num_inputs; ++k) {
    const IValue& v = args.in(k);
    InputPlan<T>& in = p.inputs[k];
    if (v.is_tensor()) {
      plan_tensor_input(v.tensor_impl(), p, values[k], shapes, in);
    } else if (v.is_dtype()) {
      values[k].kind = VKind::DTypeNum;  // read by Cast steps only, at planning
      values[k].dtype = v.to_dtype();
    } else if (!v.is_none()) {
      values[k].kind = v.is_int() ? VKind::IntNum : v.is_bool() ? VKind::BoolNum : VKind::FloatNum;
      in.mode = InputMode::Scalar;
      in.scalar = v.is_int() ? static_cast<T>(v.to_int()) : static_cast<T>(v.to_double());
    }
  }
}

template <typename T>
bool plan_step_values(const FusedGroup& g, const KernelArgs& args, RunPlan<T>& p) {
  p.args.assign(g.steps.size(), StepValues<T>());
  for (size_t i = 0; i < g.steps.size(); ++i) {
    if (!step_values<T>(g.steps[i], args, p.args[i].v0, p.args[i].v1)) return false;
  }
  return true;
}

// ---- The chunk loop ---------------------------------------------------------------------

template <typename T>
class ChunkRunner {
 public:
  static constexpr int64_t kChunk = kChunkBytes / static_cast<int64_t>(sizeof(T));
  using Regs = T* const*;

  // An output of the run's dtype is written in place by the steps that make its
  // register's values, rather than copied from a register chunk by chunk: its
  // register holds nothing else afterwards (outputs live to the end), and its bytes
  // at chunk c are 64-byte aligned exactly when the register's would be, so Eigen
  // takes the same paths.
  ChunkRunner(const FusedGroup& g, const RunPlan<T>& p, const std::vector<void*>& outs)
      : g_(g), p_(p), outs_(outs) {
    for (size_t k = 0; k < outs_.size(); ++k) {
      if (!outs_[k] || (p_.out_bool >> k & 1) || reinterpret_cast<uintptr_t>(outs_[k]) % 64 != 0)
        continue;
      uint32_t r = g_.return_regs[k];
      bool taken = false;
      for (uint32_t i = 0; i < num_direct_; ++i) taken |= direct_[i].reg == r;
      if (taken) continue;
      direct_[num_direct_++] = {r, static_cast<uint32_t>(k)};
      direct_outputs_ |= uint64_t{1} << k;
    }
  }

  // Runs the program over elements [begin, end). The unfused kernels run Eigen over
  // the same [begin, end) (parallel_for splits alike) into a 64-byte aligned output,
  // so Eigen takes its scalar path for the elements before the first 64-byte
  // boundary and after the last whole packet; chunks that start at the same
  // boundaries make the fused loop take the same path for every element, and give
  // the same bits.
  //
  // With a compiled kernel `fn`, the kernel computes the whole packets of each chunk
  // and the chunk loop only those elements (its scalar path); gathered inputs are
  // gathered per chunk as for the chunk loop, and bool outputs are written as 0 or 1
  // into a buffer, then stored as bools.
  void run(int64_t begin, int64_t end, CompiledKernelFn fn = nullptr,
           const T* scalars = nullptr) const {
    constexpr int64_t kPacket = 64 / static_cast<int64_t>(sizeof(T));
    alignas(64) T buffers[kMaxRegisters][kChunk];
    T* regs[kMaxRegisters];
    for (uint32_t i = 0; i < kMaxRegisters; ++i) regs[i] = buffers[i];
    int64_t first = std::min(end, (begin + kPacket - 1) / kPacket * kPacket);
    if (first > begin) run_chunk(regs, begin, first - begin);
    for (int64_t c = first; c < end; c += kChunk) {
      int64_t m = std::min(kChunk, end - c), whole = fn ? m / kPacket * kPacket : 0;
      if (whole > 0) run_kernel(fn, scalars, buffers, c, whole);
      if (m > whole) run_chunk(regs, c + whole, m - whole);
    }
  }

 private:
  void run_chunk(T** regs, int64_t c, int64_t m) const {
    for (uint32_t i = 0; i < num_direct_; ++i)
      regs[direct_[i].reg] = static_cast<T*>(outs_[direct_[i].out]) + c;
    gather(regs, c, m);
    for (size_t i = 0; i < g_.steps.size(); ++i) step(i, regs, c, m);
    for (size_t k = 0; k < outs_.size(); ++k) {
      if (outs_[k] && !(direct_outputs_ >> k & 1)) store(k, regs[g_.return_regs[k]], c, m);
    }
  }

  // The compiled kernel over elements [c, c + m) of one chunk, m whole packets.
  void run_kernel(CompiledKernelFn fn, const T* scalars, T (*buffers)[kChunk], int64_t c,
                  int64_t m) const {
    const void* in[64];
    void* out[64];
    gather(buffers, c, m);
    for (uint32_t k = 0; k < g_.num_inputs; ++k) {
      const InputPlan<T>& ip = p_.inputs[k];
      in[k] = ip.mode == InputMode::Direct     ? ip.ptr + c
              : ip.mode == InputMode::Gathered ? buffers[p_.gathers[ip.gather].reg]
                                               : nullptr;
    }
    // A bool output's buffer: its program register's, which the kernel leaves alone.
    for (size_t k = 0; k < outs_.size(); ++k) {
      out[k] = !outs_[k]                ? nullptr
               : (p_.out_bool >> k & 1) ? static_cast<void*>(buffers[g_.return_regs[k]])
                                        : static_cast<T*>(outs_[k]) + c;
    }
    fn(in, scalars, out, 0, m);
    for (size_t k = 0; k < outs_.size(); ++k) {
      if (outs_[k] && (p_.out_bool >> k & 1)) store(k, buffers[g_.return_regs[k]], c, m);
    }
  }

  // Elements [c, c + m) of the gathered inputs into their registers (never outputs).
  template <typename Regs>
  void gather(Regs& regs, int64_t c, int64_t m) const {
    for (const Gather& gi : p_.gathers) {
      if (gi.is_bool) {
        gather_typed(regs[gi.reg], static_cast<const bool*>(gi.base), p_.loop_sizes, gi.strides, c,
                     m);
      } else {
        gather_typed(regs[gi.reg], static_cast<const T*>(gi.base), p_.loop_sizes, gi.strides, c, m);
      }
    }
  }

  void store(size_t k, const T* r, int64_t c, int64_t m) const {
    if (p_.out_bool >> k & 1) {
      bool* o = static_cast<bool*>(outs_[k]) + c;
      for (int64_t i = 0; i < m; ++i) o[i] = r[i] != T(0);
    } else {
      std::memcpy(static_cast<T*>(outs_[k]) + c, r, static_cast<size_t>(m) * sizeof(T));
    }
  }

  Src<T> src(const Operand& o, Regs regs, int64_t c) const {
    switch (o.kind) {
      case Operand::Kind::Input:
        switch (const InputPlan<T>& in = p_.inputs[o.index]; in.mode) {
          case InputMode::Direct:
            return {in.ptr + c, T(0)};
          case InputMode::Gathered:
            return {regs[p_.gathers[in.gather].reg], T(0)};
          default:
            return {nullptr, in.scalar};
        }
      case Operand::Kind::Reg:
        return {regs[o.index], T(0)};
      default:
        return {nullptr, static_cast<T>(o.imm)};
    }
  }

  // Step i over the chunk: its op's formula (runtime/fused_ops.def names it).
  void step(size_t i, Regs regs, int64_t c, int64_t m) const {
    switch (g_.steps[i].op) {
#define TSL_FUSED_OP(name, op, operands, result, bools, args, form, formula) \
  case FOp::name:                                                            \
    return run_formula<formulas::formula, FOp::name>(i, regs, c, m);
#define TSL_FUSED_ALIAS(op, name)
#include "runtime/fused_ops.def"
#undef TSL_FUSED_ALIAS
#undef TSL_FUSED_OP
    }
  }

  // F::scalar over the chunk: the operands, then the step's values (formula_values).
  // A Simd form runs Eigen's SIMD functions over a full operand (plan_kinds made sure).
  template <typename F, FOp kOp>
  void run_formula(size_t i, Regs regs, int64_t c, int64_t m) const {
    constexpr const FusedOpInfo& f = fused_info(kOp);
    constexpr int kValues = formula_values(f.args);
    const Step& s = g_.steps[i];
    T* d = regs[s.dst];
    Src<T> a = src(s.a, regs, c);
    if constexpr (f.is_simd()) {
      static_assert(f.operands == 1 && f.args == FusedArgs::None, "a Simd form maps one value");
      TSL_INTERNAL_ASSERT(a.p != nullptr, "fused SIMD op on a scalar operand");
      simd_unary<F>(d, a.p, m);
    } else if constexpr (f.operands == 1) {
      const StepValues<T>& v = p_.args[i];
      if constexpr (kValues == 0) {
        scalar_unary(d, a, m, [](T x) { return F::scalar(x); });
      } else if constexpr (kValues == 1) {
        scalar_unary(d, a, m, [v0 = v.v0](T x) { return F::scalar(x, v0); });
      } else {
        scalar_unary(d, a, m, [v0 = v.v0, v1 = v.v1](T x) { return F::scalar(x, v0, v1); });
      }
    } else if constexpr (f.operands == 2) {
      static_assert(kValues == 0, "binary formulas take no values");
      Src<T> b = src(s.b, regs, c);
      if constexpr (f.args == FusedArgs::Alpha) {
        // x + alpha * y as the unfused kernel computes it.
        if (T al = p_.args[i].v0; al != T(1))
          return scalar_binary(d, a, b, m, [al](T x, T y) { return F::scalar(x, al * y); });
      }
      scalar_binary(d, a, b, m, [](T x, T y) { return F::scalar(x, y); });
    } else {
      static_assert(f.operands == 3 && kValues == 0, "where's formula");
      scalar_ternary(d, a, src(s.b, regs, c), src(s.c, regs, c), m,
                     [](T x, T y, T z) { return F::scalar(x, y, z); });
    }
  }

  const FusedGroup& g_;
  const RunPlan<T>& p_;
  const std::vector<void*>& outs_;
  struct Direct {
    uint32_t reg, out;
  };
  Direct direct_[kMaxRegisters];
  uint32_t num_direct_ = 0;
  uint64_t direct_outputs_ = 0;  // bit k: output k is written in place
};

// The compiled kernel for this run, or null. Runs whose adds and subtractions have
// alpha 1 may have one; it reads gathered inputs from their chunk registers as it reads
// the others in place. Fills the plan's scalar arguments of the kernel.
template <typename T>
CompiledKernelFn compiled_kernel_for(const FusedGroup& g, RunPlan<T>& p) {
  if (!may_use_compiled_kernel(p.n)) return nullptr;
  // `x + alpha * y` with alpha other than 1: whether it contracts into an FMA differs
  // between builds (sanitizers, optimization levels), so only the chunk loop's own
  // build of it gives the unfused kernel's bits.
  for (size_t i = 0; i < g.steps.size(); ++i) {
    if (fused_info(g.steps[i].op).args == FusedArgs::Alpha && p.args[i].v0 != T(1)) return nullptr;
  }
  p.compiled_inputs.assign(g.num_inputs, CompiledInput::Unused);
  for (uint32_t k = 0; k < g.num_inputs; ++k) {
    InputMode mode = p.inputs[k].mode;
    if (mode == InputMode::Direct || mode == InputMode::Gathered)
      p.compiled_inputs[k] = CompiledInput::Pointer;
    if (mode == InputMode::Scalar) p.compiled_inputs[k] = CompiledInput::Scalar;
  }
  CompiledKernelFn fn = compiled_kernel(g, dtype_of<T>, p.compiled_inputs, p.n);
  if (!fn) return nullptr;
  p.compiled_scalars.assign(g.num_inputs + 2 * g.steps.size(), T(0));
  for (uint32_t k = 0; k < g.num_inputs; ++k) p.compiled_scalars[k] = p.inputs[k].scalar;
  for (size_t i = 0; i < g.steps.size(); ++i) {
    T* s = &p.compiled_scalars[g.num_inputs + 2 * i];
    s[0] = p.args[i].v0;
    s[1] = p.args[i].v1;
  }
  return fn;
}

// Plans this run in T; false when it must take the fallback.
template <typename T>
bool plan(const FusedGroup& g, const KernelArgs& args, DType dtype, RunPlan<T>& p) {
  p.n = 1;
  for (int64_t s : p.shape) p.n *= s;
  p.loop_sizes = p.shape.empty() ? DimVector{1} : p.shape;
  ValueInfo inputs[64];  // compile_group takes at most 64 inputs
  Shapes shapes;
  plan_inputs(g, args, p, inputs, shapes);
  if (!plan_kinds(g, dtype, p.shape, inputs, shapes, p.out_bool) || !plan_step_values(g, args, p))
    return false;
  uint32_t next = g.num_registers;
  for (Gather& gi : p.gathers) gi.reg = next++;
  return next <= kMaxRegisters;
}

template <typename T>
bool run_typed(const FusedGroup& g, KernelArgs& args, DType dtype, DimVector shape) {
  RunPlan<T>& p = scratch_plan<T>();
  p.shape = std::move(shape);
  p.gathers.clear();
  if (!plan(g, args, dtype, p)) return false;
  p.outs.clear();
  p.out_ptrs.clear();
  for (uint32_t k = 0; k < args.num_outputs(); ++k) {
    if (g.is_dtype_output(k)) {
      p.outs.emplace_back();
      p.out_ptrs.push_back(nullptr);
      continue;
    }
    p.outs.push_back(Tensor::empty(p.shape, p.out_bool >> k & 1 ? DType::Bool : dtype_of<T>));
    p.out_ptrs.push_back(p.outs.back().impl()->data());
  }
  ChunkRunner<T> runner(g, p, p.out_ptrs);
  CompiledKernelFn fn = compiled_kernel_for(g, p);
  if (fn) note_compiled_run();
  const T* scalars = p.compiled_scalars.data();
  if (p.n < 2 * kParallelGrain) {
    runner.run(0, p.n, fn, scalars);
  } else {
    parallel_for(p.n, kParallelGrain, [&](int64_t b, int64_t e) { runner.run(b, e, fn, scalars); });
  }
  for (uint32_t k = 0; k < args.num_outputs(); ++k) {
    if (g.is_dtype_output(k)) {
      args.out(k) = IValue(p.out_bool >> k & 1 ? DType::Bool : dtype_of<T>);
    } else {
      args.out(k) = IValue(std::move(p.outs[k]));
    }
  }
  p.outs.clear();
  return true;
}

}  // namespace

// Built per capability (Note [One binary for every x86-64]): fusion::run_fused
// (fusion.cpp) calls the running one's.
namespace TSL_CAPABILITY_NAMESPACE {

bool run_fused(const FusedGroup& g, KernelArgs& args) {
  DType dtype = DType::Float32;
  DimVector shape;
  if (!plan_dtype_and_shape(g, args, kCPU, dtype, shape)) return false;
  if (dtype == DType::Float32) return run_typed<float>(g, args, dtype, std::move(shape));
  return run_typed<double>(g, args, dtype, std::move(shape));
}

}  // namespace TSL_CAPABILITY_NAMESPACE
}  // namespace tsl::fusion
