// The one matrix-product primitive behind mm, bmm, matmul, mv and linear: C (+)= A * B
// for strided float, double and int64 matrices. See Note [GEMM on CPU].
#pragma once

#include <cstdint>

namespace tsl::cpu {

// Note [GEMM on CPU]
// A matrix operand is a pointer and two strides, so transposed views need no copy:
// a row-major operand (column stride 1) maps to a RowMajor Eigen::Map, a column-major
// one (row stride 1, e.g. w.t() in linear) to a ColMajor Map; any other layout is
// copied once. Eigen runs single-threaded (no OpenMP); a large product is split by
// rows of A over tsl::parallel_for, each part an independent Eigen GEMM. int64
// products use a plain loop (i, k, j order, wrapping like PyTorch's).
template <typename T>
struct MatView {
  const T* data;
  int64_t rows;
  int64_t cols;
  int64_t row_stride;
  int64_t col_stride;
};

// C[rows(a), cols(b)] with row stride ldc (column stride 1). accumulate: C += A*B,
// else C = A*B. a.cols == b.rows. `allow_threads`: false inside a parallel batch.
template <typename T>
void gemm(const MatView<T>& a, const MatView<T>& b, T* c, int64_t ldc, bool accumulate,
          bool allow_threads = true);

// Work below which a product stays on one thread (multiply-adds).
constexpr int64_t kGemmParallelWork = int64_t{1} << 21;

}  // namespace tsl::cpu
