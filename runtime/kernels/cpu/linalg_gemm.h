// The one matrix-product primitive behind mm, bmm, matmul, mv and linear: C (+)= A * B
// for strided float, double and int64 matrices. See Note [GEMM on CPU].
#pragma once

#include <cstdint>

namespace tsl::cpu {

// Note [GEMM on CPU]
// A matrix operand is a pointer and two strides, so transposed views need no copy:
// a row-major operand (column stride 1) maps to a RowMajor Eigen::Map, a column-major
// one (row stride 1, e.g. w.t() in linear) to a ColMajor Map; any other layout is
// copied once. Float and double products run on OpenBLAS where the build has it (Note
// [GEMM through BLAS] in linalg_gemm.cpp), else on Eigen; both single-threaded inside,
// a large product split over tsl::parallel_for, each part an independent GEMM. int64
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

// The library float and double products use (Note [GEMM through BLAS]): OpenBLAS where
// the build has it, else Eigen. Tests and bench/gemm_shapes.cpp force Eigen to compare.
enum class GemmLibrary { Blas, Eigen };
bool blas_available();
GemmLibrary gemm_library();
// Blas on a build without it stays Eigen.
void set_gemm_library(GemmLibrary library);

// Work below which a product stays on one thread (multiply-adds).
constexpr int64_t kGemmParallelWork = int64_t{1} << 21;

}  // namespace tsl::cpu
