// Planning one run of a fused program, shared by the CPU's chunk loop (chunk_loop.cpp)
// and the CUDA kernels generated from the program (device_kernels.cpp): the run's dtype
// and shape, what each value is (Note [Bool values in the fused program]), and the
// steps' values.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "runtime/fusion/program.h"
#include "runtime/tensor/dim_vector.h"

namespace tsl::fusion {

// What a value is in one run: a tensor of the run's floating dtype T, a bool tensor,
// or a Python number. See Note [Bool values in the fused program].
enum class VKind : uint8_t { Float, Bool, IntNum, FloatNum, BoolNum, DTypeNum };

inline bool is_tensor_kind(VKind k) { return k == VKind::Float || k == VKind::Bool; }

struct ValueInfo {
  VKind kind = VKind::Float;
  bool full = false;  // a tensor of the result's shape
  // A contiguous tensor of the result's shape: an input read in place, or a value the
  // group computes (the unfused kernels give contiguous results). The unfused SIMD
  // kernels take their scalar path for strided inputs, so the fused SIMD ops read
  // only these.
  bool contiguous = false;
  int16_t shape = -1;            // a smaller tensor's shape, as an index into `Shapes`
  DType dtype = DType::Float32;  // a DTypeNum's value
};

// The shapes of the values smaller than the result (few: broadcast inputs).
using Shapes = std::vector<DimVector>;

// NumPy broadcasting of `acc` with `s`; false when they do not broadcast.
bool broadcast_into(DimVector& acc, std::span<const int64_t> s);

// The run's dtype T (float32 or float64: that of every floating tensor input, float32
// when all tensor inputs are bool) and the result's shape, for a run whose tensors are
// all on `device`; false when the run must fall back (other dtypes, devices or
// values; shapes that do not broadcast).
bool plan_dtype_and_shape(const FusedGroup& g, const KernelArgs& args, Device device, DType& dtype,
                          DimVector& shape);

// Whether every element of a non-empty `t` is one value (all strides 0).
bool all_strides_zero(const TensorImpl* t);

// Follows the program's kinds and shapes over the registers; false when some step
// cannot run fused or some output is not of the result's shape. `positions_matter`:
// the SIMD ops must read contiguous values of the result's shape (the CPU's Eigen
// kernels, whose scalar and SIMD paths differ by an ulp); a device whose unfused
// kernels compute every element alike sets it false.
bool plan_kinds(const FusedGroup& g, DType dtype, const DimVector& result_shape,
                const ValueInfo* inputs, Shapes& shapes, uint64_t& out_bool,
                bool positions_matter = true);

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

// The values of step s for this run, by its row's args: the formula's (the slope;
// clamp's bounds, -inf and +inf where absent: they clamp nothing) or alpha, in v0 and
// v1; false when the run must take the fallback (a missing alpha or slope, or both
// bounds None: the kernel's errors; a value that is no number).
template <typename T>
bool step_values(const Step& s, const KernelArgs& args, T& v0, T& v1) {
  bool has0 = false, has1 = false;
  switch (fused_info(s.op).args) {
    case FusedArgs::Alpha:
    case FusedArgs::Slope:
      return scalar_arg<T>(s.s0, args, v0, has0) && has0;
    case FusedArgs::Bounds:
      if (!scalar_arg<T>(s.s0, args, v0, has0) || !scalar_arg<T>(s.s1, args, v1, has1))
        return false;
      if (!has0) v0 = -std::numeric_limits<T>::infinity();
      if (!has1) v1 = std::numeric_limits<T>::infinity();
      return has0 || has1;
    case FusedArgs::None:
    case FusedArgs::TrueDivision:
    case FusedArgs::DType:  // decided by plan_kinds
      return true;
  }
  return false;
}

}  // namespace tsl::fusion
