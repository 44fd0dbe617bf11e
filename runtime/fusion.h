// Running FusionGroup nodes (ir/passes/fuse_elementwise.h): one pass over memory on
// CPU when the inputs allow it, else the group's ops one by one. See Note [Running a
// FusionGroup].
#pragma once

#include <cstdint>

#include "ir/ir.h"
#include "runtime/kernels/kernel.h"

namespace tsl {

// Note [Running a FusionGroup]
// The interpreter compiles each FusionGroup once, with its Code: the group's block
// becomes a straight-line program over chunk registers (buffers of 4 KiB, 1024
// float32 or 512 float64 elements) and, for the cases that program cannot take, a
// list of the ordinary kernels. At run time the fused loop runs when every tensor
// input is contiguous and has the shape of the result or holds a single element, all
// tensor inputs have one dtype, float32 or float64, and every op of the program is
// one it knows (add, sub, mul, div, neg, abs, exp, log, log1p, expm1, sin, cos, sqrt,
// rsqrt, reciprocal, square, tanh, sigmoid, relu, silu, clamp, leaky_relu). It walks
// the elements in chunks, on all threads for large tensors (parallel_for), running
// each op over a whole chunk with the formulas of the unfused kernels (Eigen's SIMD
// exp/tanh with the same scalar redo outside their exact range), so the results are
// those of the unfused ops up to an ulp where a SIMD/scalar tail boundary falls
// elsewhere. Anything else (strided or broadcast inputs, mixed or integer dtypes,
// other ops) runs the block's nodes one by one with the ordinary kernels: the same
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
