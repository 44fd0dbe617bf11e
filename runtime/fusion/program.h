// The fused program of a FusionGroup, shared by its compiler (compile_group.cpp) and
// its chunk loop (chunk_loop.cpp); runtime/fusion/fusion.h is the public side. Its ops are
// the rows of runtime/fused_ops.def (Note [Fused ops]). See Note [Running a
// FusionGroup] and Note [Bool values in the fused program].
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "runtime/fused_ops.h"
#include "runtime/kernels/kernel.h"

namespace tsl::fusion {

// Note [Bool values in the fused program]
// Every chunk register holds elements of the run's floating dtype T. A bool value (the
// result of a comparison, or a bool tensor input) is held as T(0) or T(1), and a
// `kind` computed per run (plan_kinds in plan.cpp) remembers that it is bool:
// bool results are stored as bool tensors, and an op runs fused only where PyTorch's
// promotion makes its computation the one on T values: arithmetic with a T operand
// (a bool converts to 0 or 1 there), comparisons and logical ops with a T operand or
// two bools (exact on 0 and 1), `where` with a bool condition. A bool tensor with a
// Python number promotes to int64 or float32, not T: such ops take the fallback.

// Note [Conversions in the fused program]
// Gradient formulas cast each gradient to its input's dtype: `to(g, dtype(x))`, with
// `x` a forward value. When the dtypes are provably equal the optimizer removes the
// conversion (propagate-shapes), but in general they are not: an int `x` promotes to
// float32 through `x * 0.5`. Left out of the group, every such `to` splits the
// gradient's chain and makes each `x` a group output (16 MiB for 4M floats) only so
// that its dtype can be asked. So `dtype(v)` and `to(t, dtype)` join groups, and the
// dtype is decided per run: the program's registers hold values of the run's dtype
// T (or bools), so `dtype(v)` is T or bool by v's kind, a dtype input or constant is
// what it is, and a `to` whose target is its operand's own dtype is a copy. Any other
// conversion takes the fallback, whose `to` kernel converts. A group may return
// `dtype(v)` itself (a dtype, not a tensor): the gradient's `to(g, dtype(v))` then
// needs no copy of v, only its dtype, decided the same way.

// Where an operand comes from: a group input (a tensor read in place or gathered, or a
// number / single-element tensor read as a scalar), a chunk register, or a constant.
struct Operand {
  enum class Kind : uint8_t { None, Input, Reg, Imm };
  Kind kind = Kind::None;
  bool imm_is_int = false;  // an int constant (promotes like a Python int)
  uint32_t index = 0;
  double imm = 0;
};

struct Step {
  FOp op;
  uint32_t dst = 0;
  Operand a, b, c;  // tensor operands: a; a and b (binary); cond, self, other (where)
  Operand s0, s1;   // scalar arguments (FusedArgs): alpha; the slope; clamp's min and max
  // Cast's target dtype: a constant (has_dtype), a group input holding a dtype (s0),
  // or the dtype of another operand (s1, from a `dtype(v)` in the group).
  bool has_dtype = false;
  DType dtype = DType::Float32;
};

inline constexpr int64_t kChunkBytes = 4096;
// Registers for the program's values; gathered inputs take more, up to kMaxRegisters.
inline constexpr uint32_t kMaxProgramRegisters = 24;
inline constexpr uint32_t kMaxRegisters = 32;

struct FallbackStep {
  KernelFn fn;  // the CPU kernel, dispatched by device when `dispatch`
  OpId op;
  bool dispatch;
  std::vector<uint32_t> ins, outs;
};

// How a compiled kernel reads a group input (codegen.h).
enum class CompiledInput : uint8_t { Unused, Pointer, Scalar };

}  // namespace tsl::fusion

namespace tsl {
class NativeModule;
class DeviceKernel;
}  // namespace tsl

namespace tsl::fusion {

// The compiled kernels of a group, one per dtype and way of reading the inputs, with
// the elements its runs of that kind computed (how hot it is).
struct CompiledVariant {
  DType dtype = DType::Float32;
  std::vector<CompiledInput> inputs;
  int64_t elements = 0;
  std::shared_ptr<NativeModule> module;
};

// How a kernel generated for a device (device_kernels.cpp) reads a group input: not
// at all; in place at the element's index (contiguous, the result's shape); one
// element for all (a single element, or one value expanded); at the element's
// position through the input's strides; a number passed with the launch.
enum class DeviceInput : uint8_t { Unused, Dense, Splat, Strided, Scalar };

// What a device kernel is specific to: the run's dtype, how each input is read (and
// whether it is bool), which outputs are bool, and the result's rank when some input
// is Strided (0: the kernel walks the elements in order).
struct DeviceVariantKey {
  DType dtype = DType::Float32;
  std::vector<DeviceInput> inputs;
  uint64_t input_bool = 0;  // bit k: input k is a bool tensor
  uint64_t out_bool = 0;    // bit k: output k is a bool tensor
  int ndim = 0;
  bool operator==(const DeviceVariantKey&) const = default;
};

struct DeviceVariant {
  DeviceVariantKey key;
  int64_t runs = 0;
  bool failed = false;  // compiling or loading failed: the group's runs take the fallback
  std::shared_ptr<DeviceKernel> kernel;
};

class FusedGroup : public ObjectImpl {
 public:
  std::string repr() const override { return "<fusion group>"; }

  // The fused program; valid when `fusable`.
  bool fusable = false;
  std::vector<Step> steps;
  // Per output: the step whose value it is, and its register; kNoStep for an output
  // that is `dtype(v)`, whose v is the operand in return_dtypes (kind None for
  // tensor outputs).
  static constexpr uint32_t kNoStep = UINT32_MAX;
  std::vector<uint32_t> return_steps;
  std::vector<uint32_t> return_regs;
  std::vector<Operand> return_dtypes;
  bool is_dtype_output(size_t k) const { return return_steps[k] == kNoStep; }
  // The Casts that are no steps: their values are their operands (a Cast is a copy
  // when it runs fused), so only the check that it converts nothing remains, made
  // by plan_kinds before step `before`. A Cast the group returns stays a step.
  struct CastCheck {
    Step cast;
    uint32_t before = 0;
  };
  std::vector<CastCheck> cast_checks;
  uint32_t num_registers = 0;

  // The fallback: slots 0..num_inputs-1 are the inputs; constants are preset.
  uint32_t num_inputs = 0;
  uint32_t num_slots = 0;
  std::vector<std::pair<uint32_t, IValue>> constants;
  std::vector<FallbackStep> fallback;
  std::vector<uint32_t> return_slots;

  // Compiled kernels (codegen.cpp); runs on several threads may ask.
  mutable std::mutex compiled_mu;
  mutable std::vector<CompiledVariant> compiled;
  // Kernels generated for a device (device_kernels.cpp), under the same mutex.
  mutable std::vector<DeviceVariant> device_compiled;
};

// Compiles the block of FusionGroup `n` (compile_group.cpp).
IntrusivePtr<FusedGroup> compile_group(const Node* n);

// Runs the fused loop; false (nothing written) when this run must take the fallback
// (chunk_loop.cpp, built per CPU capability; this calls the running one's, fusion.cpp).
bool run_fused(const FusedGroup& g, KernelArgs& args);

// How many fused runs used a compiled kernel; the chunk loop counts each (fusion.cpp).
int64_t compiled_runs();
void note_compiled_run();

}  // namespace tsl::fusion
