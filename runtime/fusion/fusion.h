// Running FusionGroup nodes (ir/passes/fuse_elementwise.h): one pass over memory on
// CPU when the inputs allow it, else the group's ops one by one. See Note [Running a
// FusionGroup].
#pragma once

#include <cstdint>

#include "ir/ir.h"
#include "runtime/kernels/kernel.h"

namespace tsl {

// Note [Running a FusionGroup]
// The interpreter compiles each FusionGroup once, with its Code (compile_group.cpp):
// the group's block becomes a straight-line program over chunk registers (buffers of
// 4 KiB, 1024 float32 or 512 float64 elements) and, for the runs that program cannot
// take, a list of the ordinary kernels. At run time (chunk_loop.cpp) the fused loop
// runs when every op of the program has a row in runtime/fused_ops.def (Note [Fused
// ops]; `to` only to a value's own dtype, and `dtype`, see Note [Conversions in the
// fused program]), the floating tensor inputs share one dtype, float32
// or float64, the others are bool (See Note [Bool values in the fused program]), and
// the tensor inputs broadcast to one shape, the result's. It walks the result's
// elements in chunks, on all threads for large tensors (parallel_for), running each
// op over a whole chunk with the formulas of the unfused kernels (Note [CPU formulas]
// in runtime/kernels/cpu/formulas.h: Eigen's SIMD exp/tanh with the same scalar redo
// outside their exact range). An input of the
// result's shape, contiguous and of the run's dtype is read in place (the fast path);
// a single element, or one value expanded, is read as a scalar; any other input
// (broadcast like a bias `[N]` against `[B, N]`, strided, or bool) is gathered per
// chunk into a register, walking
// the result's index space row by row with the input's strides (0 where it
// broadcasts). Values of a smaller shape are computed at every element of the result
// (the same numbers: their ops are position independent), but the SIMD ops, whose
// scalar and SIMD paths differ by an ulp, must read values of the result's shape, at
// the positions the unfused kernel gives them, and every output must have the
// result's shape. So the results are bit-identical to the unfused kernels. Anything
// else (integer dtypes, mixed float dtypes, other ops, a SIMD op on a broadcast
// value) runs the block's nodes one by one with the ordinary kernels: the same
// results and errors as without fusion.

// Note [Compiled fusion kernels]
// The chunk loop runs each op over a whole chunk: one store per op and element, into
// L1, and the next op loads it back. For chains of cheap ops (a gradient's) that
// traffic is the cost, and even the benchmark's forward, bound by its exp and tanh,
// spends a third of its time on it. So a hot group gets a kernel of its own: C++ that
// carries one SIMD packet through every step in registers (codegen.cpp),
// compiled at run time by the C++ compiler TSL was built with (native_compiler.cpp)
// and loaded with dlopen. A kernel is specific to the run's dtype and to how each
// input is read (as a pointer: in place, or gathered per chunk as for the chunk loop;
// or as a scalar: numbers, single elements, one value expanded); bool outputs are
// written as 0 or 1 into a chunk buffer, then stored as bools. Runs with an add/sub
// whose alpha is not 1 keep the chunk loop. It gives the chunk loop's bits, so the
// unfused kernels': it computes only the whole packets from the first 64-byte boundary of each
// thread's range, where Eigen takes its SIMD path, and leaves the head and the tail to the chunk
// loop (Eigen's scalar path there); each step is the packet form of its op's formulas
// (runtime/kernels/cpu/formulas.h, shared with the chunk loop and the unfused kernels and
// embedded in the generated source): the SIMD ops run Eigen's own functors on a packet,
// the other ops are the same IEEE operations; and it is compiled with TSL's own flags,
// which decide what the kernels compute (the instruction set; where GCC contracts into FMAs inside
// Eigen's functions; never across steps, see `opaque`). `x + alpha * y` is left out: whether it
// contracts differs between builds. Compiling takes a second or two, so it happens when a group is
// hot (TSL_FUSION_JIT_HOT elements, 16M by default), on a background thread, while runs go on with
// the chunk loop (TSL_FUSION_JIT=async, the default); TSL_FUSION_JIT=sync compiles at the first run
// of 4096 elements or more and waits (benchmarks), =off never compiles. Kernels stay in a cache
// folder (TSL_CACHE_DIR, default
// ~/.cache/tsl/kernels: the generated .cpp, the compiler's log, the .so), named by a
// hash of the source, the flags, the build of TSL, the compiler's version and the CPU's
// extensions (Note [What a compiled kernel depends on]), so a later session loads them
// at once and a machine sharing the folder never loads another CPU's. A compiler that is missing or
// fails leaves the chunk loop running.

// The run-time form of FusionGroup `n`, as an object for a constant register.
IValue compile_fusion_group(const Node* n);

// The kernel of a FusionGroup instruction: the node's inputs, then the object of
// compile_fusion_group; the node's outputs.
void run_fusion_group(KernelArgs& args);

// How many FusionGroup runs took the fused loop (compiled or not) and how many fell
// back to the ordinary kernels (for tests and the benchmark).
struct FusionCounters {
  int64_t fused = 0;
  int64_t fallback = 0;
  int64_t compiled = 0;  // fused runs that used a compiled kernel
  int64_t device = 0;    // fused runs on a GPU (a generated kernel)
};
FusionCounters fusion_counters();

}  // namespace tsl
