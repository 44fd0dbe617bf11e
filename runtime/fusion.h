// Running FusionGroup nodes (ir/passes/fuse_elementwise.h): one pass over memory on
// CPU when the inputs allow it, else the group's ops one by one. See Note [Running a
// FusionGroup].
#pragma once

#include <cstdint>

#include "ir/ir.h"
#include "runtime/kernels/kernel.h"

namespace tsl {

// Note [Running a FusionGroup]
// The interpreter compiles each FusionGroup once, with its Code (fusion_compile.cpp):
// the group's block becomes a straight-line program over chunk registers (buffers of
// 4 KiB, 1024 float32 or 512 float64 elements) and, for the runs that program cannot
// take, a list of the ordinary kernels. At run time (fusion_loop.cpp) the fused loop
// runs when every op of the program is one it knows (add, sub, mul, div, neg, abs,
// exp, log, log1p, expm1, sin, cos, sqrt, rsqrt, reciprocal, square, tanh, sigmoid,
// relu, silu, clamp, leaky_relu; eq, ne, lt, le, gt, ge, logical_and/or/xor/not,
// isnan, isinf, isfinite, where; `to` a value's own dtype and `dtype`, see Note
// [Conversions in the fused program]), the floating tensor inputs share one dtype, float32
// or float64, the others are bool (See Note [Bool values in the fused program]), and
// the tensor inputs broadcast to one shape, the result's. It walks the result's
// elements in chunks, on all threads for large tensors (parallel_for), running each
// op over a whole chunk with the formulas of the unfused kernels (Eigen's SIMD
// exp/tanh with the same scalar redo outside their exact range). An input of the
// result's shape, contiguous and of the run's dtype is read in place (the fast path);
// a single element is read as a scalar; any other input (broadcast like a bias `[N]`
// against `[B, N]`, strided, or bool) is gathered per chunk into a register, walking
// the result's index space row by row with the input's strides (0 where it
// broadcasts). Values of a smaller shape are computed at every element of the result
// (the same numbers: their ops are position independent), but the SIMD ops, whose
// scalar and SIMD paths differ by an ulp, must read values of the result's shape, at
// the positions the unfused kernel gives them, and every output must have the
// result's shape. So the results are bit-identical to the unfused kernels. Anything
// else (integer dtypes, mixed float dtypes, other ops, a SIMD op on a broadcast
// value) runs the block's nodes one by one with the ordinary kernels: the same
// results and errors as without fusion.

// The run-time form of FusionGroup `n`, as an object for a constant register.
IValue compile_fusion_group(const Node* n);

// The kernel of a FusionGroup instruction: the node's inputs, then the object of
// compile_fusion_group; the node's outputs.
void run_fusion_group(KernelArgs& args);

// How many FusionGroup runs took the fused loop and how many fell back to the
// ordinary kernels (for tests and the benchmark).
struct FusionCounters {
  int64_t fused = 0;
  int64_t fallback = 0;
};
FusionCounters fusion_counters();

}  // namespace tsl
