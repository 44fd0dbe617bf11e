// Compiled fusion kernels: C++ generated from a FusionGroup's fused program, compiled
// at run time (native_compiler.h) and run in place of the chunk loop's body. See Note
// [Compiled fusion kernels] in runtime/fusion/fusion.h.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "runtime/fusion/program.h"

namespace tsl::fusion {

// Runs the program over elements [begin, end) of one chunk, a multiple of the SIMD
// width: in[k][i] is element i of group input k when it is read in place or gathered
// (in[k] is null otherwise); `scalars` holds T values: group input k's at k when it
// is a scalar, then two per step (its scalar arguments: the slope; clamp's bounds,
// -inf and +inf where absent; alpha is always 1); out[k][i] is element i of output k
// (null for dtype outputs). The caller offsets the pointers to the chunk.
using CompiledKernelFn = void (*)(const void* const* in, const void* scalars, void* const* out,
                                  int64_t begin, int64_t end);

// The source of the kernel for runs in `dtype` (Float32 or Float64) whose inputs are
// read as `inputs` says; defines extern "C" kCompiledKernelSymbol.
std::string compiled_kernel_source(const FusedGroup& g, DType dtype,
                                   std::span<const CompiledInput> inputs);
inline constexpr const char* kCompiledKernelSymbol = "tsl_fused_kernel";
// The line between the helpers every kernel shares and the group's own code.
inline constexpr const char* kCompiledKernelMarker = "// ---- The group's kernel ----";

// Whether a run of `n` elements may use a compiled kernel at all (the mode is not off,
// and the run is large enough): checked first, as planning a small run must stay cheap.
bool may_use_compiled_kernel(int64_t n);

// The compiled kernel for a run of `n` elements, or null while there is none: asks for
// its compilation when the group is hot (see NativeJitOptions), and waits for it in
// the Sync mode.
CompiledKernelFn compiled_kernel(const FusedGroup& g, DType dtype,
                                 std::span<const CompiledInput> inputs, int64_t n);

// The text of runtime/kernels/cpu/formulas.h (cpu_formulas_text.cpp, made by CMake).
extern const char* const kCpuFormulasText;

}  // namespace tsl::fusion
