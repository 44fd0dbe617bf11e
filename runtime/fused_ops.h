// The fused ops of runtime/fused_ops.def as C++: the FOp enum, what each row says, and
// the row of an op. Header-only, at the level of the op table, for the fuser
// (ir/passes/fuse_elementwise.cpp) and the runtime (runtime/fusion_*.cpp). See Note
// [Fused ops].
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "runtime/kernels/op_info.h"

namespace tsl::fusion {

// Note [Fused ops]
// A FusionGroup runs fused (Note [Running a FusionGroup] in runtime/fusion/fusion.h) when every
// op of its block has a row in runtime/fused_ops.def, the one description of the fused
// ops: the op it computes, its operands and scalar arguments, what its result is, and
// the name of its formulas. Everything else comes from that row: the FOp enum; which
// nodes the fuser groups (fuse_elementwise.cpp: only ops with a row, so that a group
// never holds an op the runtime would have to run op by op); how the group's compiler
// reads a node's inputs (compile_group.cpp); which values each step may read in a run
// (plan.cpp); the chunk loop's call of the scalar formula (chunk_loop.cpp); and
// the calls the code generators emit (codegen.cpp for the CPU,
// device_kernels.cpp for CUDA), each a call of the formula the row names.
//
// Each formula is written once per form it needs: on CPU a struct in
// runtime/kernels/cpu/formulas.h with a scalar and a packet form (Note [CPU formulas]),
// which the unfused kernel calls too where it computes the same thing; on CUDA a
// function in runtime/kernels/cuda/formulas.cuh, shared with the unfused CUDA kernels.
// Both headers' text is embedded in the generated source.
//
// Making an elementwise op of runtime/ops.def fusible:
// 1. a row in runtime/fused_ops.def (TSL_FUSED_ALIAS for an alias of a row's op);
// 2. its CPU formulas, a struct in runtime/kernels/cpu/formulas.h: `scalar` and
//    `packet` for an Exact form; for a Simd form, derived from SimdForm, `scalar`,
//    `kLimit` and `array`. The unfused CPU kernel calls the same struct;
// 3. its CUDA formula tsl_<formula> in runtime/kernels/cuda/formulas.cuh (T operands,
//    then the step's values), which the unfused CUDA kernel may call too;
// 4. its line in kNotFused (tests/runtime/fused_ops_test.cpp) goes.
// Nothing in runtime/fusion/ (compile_group, plan, chunk_loop, codegen, device_kernels)
// changes, unless the op needs a new kind of scalar argument (FusedArgs) or of result
// (FusedResult). The tests walk the table: each row runs fused, on the chunk loop and
// compiled, with the unfused kernels' bits (fused_ops_test.cpp), and each row's CUDA
// kernel compiles (tests/cuda/cuda_fusion_test.cpp); an elementwise op without a row
// must be listed in kNotFused, with the reason.

enum class FOp : uint8_t {
#define TSL_FUSED_OP(name, ...) name,
#define TSL_FUSED_ALIAS(op, name)
#include "runtime/fused_ops.def"
#undef TSL_FUSED_ALIAS
#undef TSL_FUSED_OP
};

enum class FusedResult : uint8_t { Float, Bool, Select, Cast };
enum class FusedBools : uint8_t { Bools, NoBools };
enum class FusedArgs : uint8_t { None, Alpha, TrueDivision, Slope, Bounds, DType };
enum class FusedForm : uint8_t { Simd, Exact };

struct FusedOpInfo {
  FOp op;
  OpId id;           // the op it computes (an alias has the same row)
  uint8_t operands;  // tensor operands: the node's first inputs
  FusedResult result;
  FusedBools bools;
  FusedArgs args;
  FusedForm form;
  const char* formula;  // tsl::formulas::<formula> on CPU, tsl_<formula> on CUDA

  constexpr bool bool_operands() const { return bools == FusedBools::Bools; }
  constexpr bool is_simd() const { return form == FusedForm::Simd; }
};

inline constexpr FusedOpInfo kFusedOps[] = {
#define TSL_FUSED_OP(name, op, operands, result, bools, args, form, formula) \
  {FOp::name,         OpId::op,        operands,        FusedResult::result, \
   FusedBools::bools, FusedArgs::args, FusedForm::form, #formula},
#define TSL_FUSED_ALIAS(op, name)
#include "runtime/fused_ops.def"
#undef TSL_FUSED_ALIAS
#undef TSL_FUSED_OP
};
inline constexpr size_t kNumFusedOps = sizeof(kFusedOps) / sizeof(kFusedOps[0]);

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < kNumFusedOps; ++i) {
    if (static_cast<size_t>(kFusedOps[i].op) != i) return false;
  }
  return true;
}
static_assert(rows_in_enum_order(), "kFusedOps is indexed by FOp");

constexpr const FusedOpInfo& fused_info(FOp op) { return kFusedOps[static_cast<size_t>(op)]; }

// The fused op computing `id`, or none.
constexpr std::optional<FOp> fused_op_of(OpId id) {
  switch (id) {
#define TSL_FUSED_OP(name, op, ...) \
  case OpId::op:                    \
    return FOp::name;
#define TSL_FUSED_ALIAS(op, name) \
  case OpId::op:                  \
    return FOp::name;
#include "runtime/fused_ops.def"
#undef TSL_FUSED_ALIAS
#undef TSL_FUSED_OP
    default:
      return std::nullopt;
  }
}

// How many inputs of a node the scalar arguments take (after the tensor operands).
constexpr size_t scalar_inputs(FusedArgs args) {
  switch (args) {
    case FusedArgs::None:
      return 0;
    case FusedArgs::Bounds:
      return 2;
    default:
      return 1;
  }
}

// How many T values a step passes to its formula after the operands, in the fused
// kernels and the chunk loop alike: the slope; clamp's bounds (-inf and +inf where
// absent). Alpha is not passed: the formula computes `x + y`, the chunk loop passes
// `alpha * y` where alpha is not 1, and the generated kernels take only alpha 1.
constexpr int formula_values(FusedArgs args) {
  switch (args) {
    case FusedArgs::Slope:
      return 1;
    case FusedArgs::Bounds:
      return 2;
    default:
      return 0;
  }
}

}  // namespace tsl::fusion
