// The interface between the CUDA kernels' host code (.cpp: dtypes, shapes, checks,
// allocation) and their device code (.cu). Plain structs, no tensor headers, so nvcc
// compiles little. See Note [Elementwise loops on CUDA].
#pragma once

#include <cstdint>

#include "runtime/kernels/op_info.h"
#include "runtime/tensor/dtype.h"

namespace tsl::cuda {

// Note [Elementwise loops on CUDA]
// As PyTorch's TensorIterator: the host gives each operand's element strides over the
// output's index space (0 where an operand broadcasts), after merging dims that are
// contiguous in every operand and dropping dims of size 1, so most runs are one dim.
// A kernel walks the flat output index with a grid-stride loop and turns it into each
// operand's offset (one dim and unit strides: the index itself; Note [Two walks of an
// elementwise loop] in launch_common.cuh). An operand with no data pointer is a scalar
// (a Python number, or a 0-dim CPU tensor), passed by value.
// Operands arrive converted to the op's compute dtype; the output is written in its
// own dtype. The formulas are the CPU kernels' (elementwise_math.h and
// elementwise_unary.cpp); the table-driven GPU tests compare the two.
constexpr int kMaxDims = 12;

struct Operand {
  char* data = nullptr;  // null: the scalar below
  int64_t strides[kMaxDims] = {};
  double scalar = 0;       // floating compute dtypes
  int64_t int_scalar = 0;  // int64 and bool
};

template <int N>  // N operands, the output first
struct Loop {
  int ndim = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};
  Operand op[N];
  bool flat = false;  // one dim, unit strides in every pointer operand
};

// Parameters of the unary ops that take some (clamp's bounds, leaky_relu's slope, ...).
struct UnaryParams {
  double a = 0, b = 0;
  bool has_a = false, has_b = false;
  int64_t ia = 0, ib = 0;  // int64 clamp bounds
};

// out = op(in), computed in `compute` (the input's dtype), stored as `out`.
void launch_unary(OpId op, DType compute, DType out, const Loop<2>& loop, const UnaryParams& p);
// out = op(a, b) computed in `compute`, stored as `out`; `alpha` scales b (add, sub).
void launch_binary(OpId op, DType compute, DType out, const Loop<3>& loop, double alpha,
                   int64_t int_alpha);
// The ops with a formula in elementwise_unary.cu and elementwise.cu: the one list the kernels and
// their registration (cuda_elementwise.cpp) expand.
// clang-format off
#define TSL_CUDA_UNARY_OPS(X)                                                                  \
  X(neg) X(abs) X(square) X(relu) X(sign) X(floor) X(ceil) X(round) X(trunc) X(clamp) X(clip) \
  X(isnan) X(isinf) X(isfinite) X(logical_not) X(bitwise_not) X(exp) X(exp2) X(log) X(log2)   \
  X(log10) X(log1p) X(expm1) X(sqrt) X(rsqrt) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan)    \
  X(sinh) X(cosh) X(tanh) X(erf) X(reciprocal) X(frac) X(sigmoid) X(silu) X(gelu) X(softplus) \
  X(elu) X(leaky_relu) X(hardtanh) X(logit)
#define TSL_CUDA_BINARY_OPS(X)                                                                 \
  X(add) X(add_) X(sub) X(sub_) X(mul) X(mul_) X(div) X(div_) X(maximum) X(minimum)            \
  X(max_other) X(min_other) X(pow) X(atan2) X(floor_divide) X(remainder) X(eq) X(ne) X(lt)    \
  X(le) X(gt) X(ge) X(logical_and) X(logical_or) X(logical_xor) X(bitwise_and) X(bitwise_or) \
  X(bitwise_xor)
// clang-format on

// Whether launch_unary / launch_binary have a formula for `op`.
bool has_unary_formula(OpId op);
bool has_binary_formula(OpId op);
// An internal error: a launch for an (op, dtype) the host should have converted or
// rejected first.
[[noreturn]] void unsupported(const char* kind, OpId op);

// out = cond ? a : b (cond bool, a and b in out's dtype).
void launch_where(DType dtype, const Loop<4>& loop);
// out = in converted (any two dtypes).
void launch_copy(DType out, DType in, const Loop<2>& loop);

// Reductions of a contiguous input read as [outer, reduce, inner] (Note [Reduction
// layout] in cpu/reduction_common.h) into a contiguous out[outer, inner] of dtype `out`:
// sums and products in out's dtype (int and bool widened to int64), max and min with
// NaN propagating, any and all into bools; sums divided by `divisor` (mean). Fixed
// chunks and a fixed tree order: the same result on every run.
enum class DeviceReduce : uint8_t { Sum, Prod, Max, Min, Any, All };
void launch_reduce(DeviceReduce kind, DType in, DType out, const void* input, void* output,
                   int64_t outer, int64_t reduce, int64_t inner, double divisor);

// The running sum along `n` of a contiguous input read as [outer, n, inner] into a
// contiguous out of the same layout: floats accumulate in double (as the CPU's scan),
// ints and bools in int64; a bool out is whether the sum so far is nonzero.
void launch_cumsum(DType in, DType out, const void* input, void* output, int64_t outer, int64_t n,
                   int64_t inner);

// Scratch of a sort of [rows, n] elements, allocated by the host: keys and sorted_keys
// of rows * n elements, positions of rows * n int64, offsets of rows + 1 int64 holding
// 0, n, 2n, ... (copied there), temp of sort_rows_temp_bytes bytes.
struct SortBuffers {
  void* keys = nullptr;
  void* sorted_keys = nullptr;
  int64_t* positions = nullptr;
  const int64_t* offsets = nullptr;
  void* temp = nullptr;
  size_t temp_bytes = 0;
};
size_t sort_rows_temp_bytes(DType dtype, int64_t rows, int64_t n, bool descending);
// Sorts each row of a contiguous [rows, n] input, stably: ascending, or descending;
// -0.0 equals 0.0 and NaN comes after every number (before, descending), as the CPU's
// comparisons. Writes each element's position in its row to indices and the elements
// themselves (bit for bit) to values, both [rows, n]. rows * n < 2^31 when rows > 1.
void launch_sort_rows(DType dtype, const void* input, int64_t rows, int64_t n, bool descending,
                      const SortBuffers& buffers, void* values, int64_t* indices);

// The first position of the max (or min) along `reduce` of the same layout into
// indices[outer, inner], and the value into values (when not null). NaN counts as the
// extreme; ties give the first position.
void launch_arg_reduce(bool max, DType dtype, const void* input, void* values, int64_t* indices,
                       int64_t outer, int64_t reduce, int64_t inner);

// softmax (or log_softmax) of each row of a contiguous [rows, n], one block per row:
// the max, then the sum of exp(x - max), then x - max - log(sum) or exp(x - max) / sum.
void launch_softmax_rows(DType dtype, const void* in, void* out, int64_t rows, int64_t n, bool log);

// Per element e = (b, s) of a [batch, spatial] target: t = target[e]; nll[e] =
// -w[t] * logp[b, t, s] and wsum[e] = w[t] (w all ones without weight), both 0 where t
// is ignore_index. A target outside [0, classes) is written to *bad (which starts at
// INT64_MIN) and counts as ignored.
void launch_class_nll(DType dtype, const void* logp, const int64_t* target, const void* weight,
                      int64_t batch, int64_t classes, int64_t spatial, int64_t ignore_index,
                      void* nll, void* wsum, int64_t* bad);

// out[off(out) + index[off(index)] * dim_stride] += src[off(src)] over the index's
// positions (atomic adds: sums of colliding indices are in no fixed order). An index
// outside [0, dim_size) is written to *bad (which starts at INT64_MIN) and skipped.
void launch_scatter_add(DType dtype, const Loop<3>& loop, int64_t dim_stride, int64_t dim_size,
                        int64_t* bad);

// out[off(out)] = src[off(src) + index[off(index)] * dim_stride] over out's positions
// (gather, index_select). An index outside [0, dim_size) is written to *bad (which starts
// at INT64_MIN) and its element left unwritten.
void launch_gather(DType dtype, const Loop<3>& loop, int64_t dim_stride, int64_t dim_size,
                   int64_t* bad);

// out[off(out) + offsets[off(offsets)]] += values[off(values)] over the loop's positions
// (operands in that order): atomic adds, in no fixed order; for bools an or. The offsets
// are in range (the host checked the indices they came from).
void launch_put_accumulate(DType dtype, const Loop<3>& loop);

// The same with `=`, where the last position (in row-major order) that writes an element
// wins, as on the CPU: each position's target, a stable radix sort of the positions by
// target (key_bits covering the largest target), then the last of each run writes.
// Scratch from the host: four int64 arrays of loop.numel and temp of
// put_last_temp_bytes bytes.
struct PutBuffers {
  int64_t* targets = nullptr;
  int64_t* positions = nullptr;
  int64_t* sorted_targets = nullptr;
  int64_t* sorted_positions = nullptr;
  void* temp = nullptr;
  size_t temp_bytes = 0;
  int key_bits = 64;
};
size_t put_last_temp_bytes(int64_t positions, int key_bits);
void launch_put_last(DType dtype, const Loop<3>& loop, const PutBuffers& buffers);

}  // namespace tsl::cuda
