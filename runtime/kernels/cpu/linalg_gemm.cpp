// Strided GEMM on OpenBLAS or Eigen (float, double) and a plain loop (int64). See
// Note [GEMM on CPU] in linalg_gemm.h.
#include "runtime/kernels/cpu/linalg_gemm.h"

// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics when
// Eigen's GEMM kernels are inlined (GCC bug 105593); the warning is not about our code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <climits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "runtime/tensor/cpu_capability.h"
#include "runtime/tensor/parallel.h"

#if TSL_HAVE_BLAS
#include <cblas.h>
#else
#define TSL_HAVE_BLAS 0
#endif

namespace tsl::cpu {
namespace {

template <typename T, int Order>
using ConstMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>,
                            Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename T>
using OutMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
                          Eigen::Unaligned, Eigen::OuterStride<>>;

enum class Layout { RowMajor, ColMajor, Other };

template <typename T>
Layout layout_of(const MatView<T>& m) {
  if ((m.col_stride == 1 || m.cols == 1) && (m.row_stride >= m.cols || m.rows == 1)) {
    return Layout::RowMajor;
  }
  if ((m.row_stride == 1 || m.rows == 1) && (m.col_stride >= m.rows || m.cols == 1)) {
    return Layout::ColMajor;
  }
  return Layout::Other;
}

// The stride Eigen needs for a Map of `layout` (at least the inner extent, never 0).
template <typename T>
int64_t outer_stride(const MatView<T>& m, Layout layout) {
  if (layout == Layout::RowMajor) return m.rows == 1 ? std::max<int64_t>(m.cols, 1) : m.row_stride;
  return m.cols == 1 ? std::max<int64_t>(m.rows, 1) : m.col_stride;
}

template <typename T, int Order>
ConstMap<T, Order> map_of(const MatView<T>& m, Layout layout) {
  return ConstMap<T, Order>(m.data, m.rows, m.cols, Eigen::OuterStride<>(outer_stride(m, layout)));
}

// C rows [r0, r1) = A rows [r0, r1) * B.
template <typename MA, typename MB, typename T>
void product_rows(const MA& a, const MB& b, T* c, int64_t ldc, int64_t r0, int64_t r1,
                  bool accumulate) {
  OutMap<T> out(c + r0 * ldc, r1 - r0, b.cols(), Eigen::OuterStride<>(ldc));
  // BLAS computes beta * C + A * B from a zero C: a sum of products that are all -0
  // (0 * -1) is +0 there, and -0 in Eigen's plain assignment. PyTorch prints `0.`.
  if (!accumulate) out.setZero();
  out.noalias() += a.middleRows(r0, r1 - r0) * b;
}

template <typename MA, typename MB, typename T>
void product(const MA& a, const MB& b, T* c, int64_t ldc, bool accumulate, bool allow_threads) {
  int64_t m = a.rows();
  int64_t work = m * a.cols() * b.cols();
  if (!allow_threads || work < kGemmParallelWork || m < 64 || num_threads() == 1) {
    product_rows(a, b, c, ldc, 0, m, accumulate);
    return;
  }
  // Row blocks of 32 keep Eigen's micro-kernels busy; parallel_for hands each thread
  // one contiguous range.
  int64_t blocks = (m + 31) / 32;
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    product_rows(a, b, c, ldc, b0 * 32, std::min(m, b1 * 32), accumulate);
  });
}

template <typename T, int OrderA>
void dispatch_b(const ConstMap<T, OrderA>& a, const MatView<T>& b, Layout lb, T* c, int64_t ldc,
                bool accumulate, bool allow_threads) {
  if (lb == Layout::RowMajor) {
    product(a, map_of<T, Eigen::RowMajor>(b, lb), c, ldc, accumulate, allow_threads);
  } else {
    product(a, map_of<T, Eigen::ColMajor>(b, lb), c, ldc, accumulate, allow_threads);
  }
}

// A dense row-major copy of m when Eigen cannot map it directly.
template <typename T>
MatView<T> densify(const MatView<T>& m, std::vector<T>& storage) {
  storage.resize(static_cast<size_t>(m.rows * m.cols));
  for (int64_t i = 0; i < m.rows; ++i) {
    for (int64_t j = 0; j < m.cols; ++j) {
      storage[i * m.cols + j] = m.data[i * m.row_stride + j * m.col_stride];
    }
  }
  return {storage.data(), m.rows, m.cols, m.cols, 1};
}

// Note [GEMM packing buffers]
// Eigen's GEMM packs blocks of A and B into scratch buffers. Through the expression
// API it mallocs them on every call once they pass 128 KB, and glibc returns the
// freed top of the heap to the OS, so every product page-faults its buffers afresh:
// 256x256 float ran at ~27 GFLOP/s instead of ~150. We call Eigen's GEMM routine
// with buffers kept per thread instead (they only grow).
struct PackBuffer {
  void* data = nullptr;
  size_t bytes = 0;
  ~PackBuffer() { Eigen::internal::aligned_free(data); }
};

template <typename T>
T* pack_buffer(size_t count) {
  thread_local PackBuffer buffer;
  size_t bytes = count * sizeof(T);
  if (buffer.bytes < bytes) {
    Eigen::internal::aligned_free(buffer.data);
    buffer.data = Eigen::internal::aligned_malloc(bytes);
    buffer.bytes = bytes;
  }
  return static_cast<T*>(buffer.data);
}

// Eigen's blocking sizes with the per-thread buffers.
template <typename T>
class CachedBlocking : public Eigen::internal::level3_blocking<T, T> {
 public:
  // For the column-major problem rows x cols x depth that Eigen solves.
  CachedBlocking(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth) {
    this->m_mc = rows;
    this->m_nc = cols;
    this->m_kc = depth;
    Eigen::internal::computeProductBlockingSizes<T, T, 1, Eigen::Index>(this->m_kc, this->m_mc,
                                                                        this->m_nc, 1);
    size_t size_a = static_cast<size_t>(this->m_mc * this->m_kc);
    size_t size_b = static_cast<size_t>(this->m_kc * this->m_nc);
    size_t offset_b = (size_a + 63) / 64 * 64;  // keep B aligned
    T* buffer = pack_buffer<T>(offset_b + size_b);
    this->m_blockA = buffer;
    this->m_blockB = buffer + offset_b;
  }
};

// C[m, n] (row stride ldc) += A * B with A, B in the given storage orders.
template <typename T, int OrderA, int OrderB>
void direct_gemm(const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, int64_t m,
                 int64_t n, int64_t k) {
  // Eigen transposes a row-major product into the column-major one, n x m x k.
  CachedBlocking<T> blocking(n, m, k);
  Eigen::internal::general_matrix_matrix_product<Eigen::Index, T, OrderA, false, T, OrderB, false,
                                                 Eigen::RowMajor, 1>::run(m, n, k, a, lda, b, ldb,
                                                                          c, 1, ldc, T(1),
                                                                          blocking);
}

template <typename T, int OrderA, int OrderB>
void direct_gemm_threads(const MatView<T>& a, const MatView<T>& b, Layout la, Layout lb, T* c,
                         int64_t ldc, bool allow_threads) {
  int64_t m = a.rows, n = b.cols, k = a.cols;
  int64_t lda = outer_stride(a, la), ldb = outer_stride(b, lb);
  // Row r of A starts at r * lda (row-major) or r (column-major).
  int64_t row_step = OrderA == Eigen::RowMajor ? lda : 1;
  auto rows = [&](int64_t r0, int64_t r1) {
    direct_gemm<T, OrderA, OrderB>(a.data + r0 * row_step, lda, b.data, ldb, c + r0 * ldc, ldc,
                                   r1 - r0, n, k);
  };
  if (!allow_threads || m * n * k < kGemmParallelWork || m < 64 || num_threads() == 1) {
    rows(0, m);
    return;
  }
  int64_t blocks = (m + 31) / 32;
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) { rows(b0 * 32, std::min(m, b1 * 32)); });
}

template <typename T, int OrderA>
void direct_dispatch_b(const MatView<T>& a, const MatView<T>& b, Layout la, Layout lb, T* c,
                       int64_t ldc, bool allow_threads) {
  if (lb == Layout::RowMajor) {
    direct_gemm_threads<T, OrderA, Eigen::RowMajor>(a, b, la, lb, c, ldc, allow_threads);
  } else {
    direct_gemm_threads<T, OrderA, Eigen::ColMajor>(a, b, la, lb, c, ldc, allow_threads);
  }
}

#if TSL_HAVE_BLAS
// One BLAS call at a time (Note [GEMM through BLAS]).
std::mutex g_blas_mutex;

// Note [GEMM through BLAS]
// With TSL_BLAS (cmake/blas.cmake), float and double products other than matrix-vector
// and tiny ones call OpenBLAS's sgemm/dgemm: on AVX2 machines Eigen's GEMM runs at about
// half of OpenBLAS's rate, and OpenBLAS also beats it on small squares (bench/
// gemm_shapes.cpp measures both). The library is the single-threaded build; a large
// product is split here over TSL's pool, along the longer side of C in blocks of 32
// rows or columns, each block one independent BLAS call, so one pool serves every
// kernel. Row-major and column-major operands are BLAS's NoTrans and Trans at their
// outer stride, so transposed views need no copy. beta = 0 never reads C, and a sum of
// products that are all -0 is +0, as in PyTorch (it calls a BLAS too).
//
// Debian's serial OpenBLAS is not safe to call from two threads at once: conv2d's
// per-image products from the pool's threads came back with elements off by up to 65
// (Linalg.ProductsRunningAtOnceAreRight; cnn_digits printed other numbers on every
// run). So BLAS runs only one call at a time and only where no other thread is likely
// to want it: a product large enough to split over the pool, or one asked for from
// inside a parallel_for chunk (conv2d's images), goes to Eigen, which is thread-safe;
// the choice depends on the call, never on timing, so results are the same bits on
// every run. A BLAS that is safe to call at once (OpenBLAS built with USE_LOCKING, or
// its pthread build held to one thread) would let the split come back.
void blas_call(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
               const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  std::lock_guard<std::mutex> one_at_a_time(g_blas_mutex);
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), accumulate ? 1.0f : 0.0f, c,
              static_cast<int>(ldc));
}

void blas_call(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
               const double* b, int64_t ldb, double* c, int64_t ldc, bool accumulate) {
  std::lock_guard<std::mutex> one_at_a_time(g_blas_mutex);
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), accumulate ? 1.0 : 0.0, c,
              static_cast<int>(ldc));
}

// Below this many multiply-adds a BLAS product stays on one thread: split at Eigen's
// 2^21, 32x256x256 ran at half its one-thread speed (bench/gemm_shapes.cpp).
constexpr int64_t kBlasParallelWork = int64_t{1} << 23;

// Where Eigen stays faster, measured with OpenBLAS's SkylakeX and Haswell kernels: a
// transposed B (x @ w.t(), linear's layout) with at most 64 rows of A, below 2^25
// multiply-adds (an RNN step, 32x128x128, at 0.7x; 8x256x256 at 0.57x of Eigen).
bool eigen_is_faster(int64_t m, int64_t n, int64_t k, Layout lb) {
  return lb == Layout::ColMajor && m <= 64 && m * n * k < (int64_t{1} << 25);
}

// False when Eigen takes the product: a size or stride that does not fit BLAS's int, or
// a shape where Eigen is faster.
template <typename T>
bool blas_gemm(const MatView<T>& a, Layout la, const MatView<T>& b, Layout lb, T* c, int64_t ldc,
               bool accumulate, bool allow_threads) {
  int64_t m = a.rows, n = b.cols, k = a.cols;
  if (eigen_is_faster(m, n, k, lb)) return false;
  int64_t lda = outer_stride(a, la), ldb = outer_stride(b, lb);
  for (int64_t v : {m, n, k, lda, ldb, ldc}) {
    if (v > INT_MAX) return false;
  }
  bool ta = la == Layout::ColMajor, tb = lb == Layout::ColMajor;
  // Where row i of A and column j of B start.
  int64_t a_row = ta ? 1 : lda, b_col = tb ? ldb : 1;
  auto part = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    blas_call(ta, tb, r1 - r0, c1 - c0, k, a.data + r0 * a_row, lda, b.data + c0 * b_col, ldb,
              c + r0 * ldc + c0, ldc, accumulate);
  };
  bool split =
      allow_threads && m * n * k >= kBlasParallelWork && std::max(m, n) >= 64 && num_threads() > 1;
  if (split || inside_parallel_region()) return false;  // Eigen: see above
  part(0, m, 0, n);
  return true;
}
#endif

template <typename T>
void float_gemm(MatView<T> a, MatView<T> b, T* c, int64_t ldc, bool accumulate,
                bool allow_threads) {
  std::vector<T> a_copy, b_copy;
  Layout la = layout_of(a), lb = layout_of(b);
  if (la == Layout::Other) {
    a = densify(a, a_copy);
    la = Layout::RowMajor;
  }
  if (lb == Layout::Other) {
    b = densify(b, b_copy);
    lb = Layout::RowMajor;
  }
  // Matrix-vector and tiny products: Eigen's expression API picks GEMV or a
  // coefficient-wise product, which beat packing for these.
  if (a.rows == 1 || b.cols == 1 || a.rows + b.cols + a.cols < 20) {
    if (la == Layout::RowMajor) {
      dispatch_b(map_of<T, Eigen::RowMajor>(a, la), b, lb, c, ldc, accumulate, allow_threads);
    } else {
      dispatch_b(map_of<T, Eigen::ColMajor>(a, la), b, lb, c, ldc, accumulate, allow_threads);
    }
    return;
  }
#if TSL_HAVE_BLAS
  if (gemm_library() == GemmLibrary::Blas &&
      blas_gemm(a, la, b, lb, c, ldc, accumulate, allow_threads)) {
    return;
  }
#endif
  if (!accumulate) {
    for (int64_t i = 0; i < a.rows; ++i) std::fill(c + i * ldc, c + i * ldc + b.cols, T(0));
  }
  if (la == Layout::RowMajor) {
    direct_dispatch_b<T, Eigen::RowMajor>(a, b, la, lb, c, ldc, allow_threads);
  } else {
    direct_dispatch_b<T, Eigen::ColMajor>(a, b, la, lb, c, ldc, allow_threads);
  }
}

// int64: unsigned arithmetic wraps on overflow where signed would be undefined.
void int_gemm(const MatView<int64_t>& a, const MatView<int64_t>& b, int64_t* c, int64_t ldc,
              bool accumulate) {
  for (int64_t i = 0; i < a.rows; ++i) {
    uint64_t* row = reinterpret_cast<uint64_t*>(c + i * ldc);
    if (!accumulate) std::fill(row, row + b.cols, uint64_t{0});
    for (int64_t k = 0; k < a.cols; ++k) {
      uint64_t aik = static_cast<uint64_t>(a.data[i * a.row_stride + k * a.col_stride]);
      const int64_t* brow = b.data + k * b.row_stride;
      for (int64_t j = 0; j < b.cols; ++j) {
        row[j] += aik * static_cast<uint64_t>(brow[j * b.col_stride]);
      }
    }
  }
}

}  // namespace

// Built per capability (Note [One binary for every x86-64]): Eigen's kernels take the
// capability's packets. cpu::gemm (dispatch.cpp) calls the running one's; the choice of
// library is there too.
namespace TSL_CAPABILITY_NAMESPACE {

template <typename T>
void gemm(const MatView<T>& a, const MatView<T>& b, T* c, int64_t ldc, bool accumulate,
          bool allow_threads) {
  int64_t m = a.rows, n = b.cols;
  if (m == 0 || n == 0) return;
  if (a.cols == 0) {
    if (!accumulate) {
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    }
    return;
  }
  if constexpr (std::is_same_v<T, int64_t>) {
    int_gemm(a, b, c, ldc, accumulate);
  } else {
    float_gemm(a, b, c, ldc, accumulate, allow_threads);
  }
}

template void gemm<float>(const MatView<float>&, const MatView<float>&, float*, int64_t, bool,
                          bool);
template void gemm<double>(const MatView<double>&, const MatView<double>&, double*, int64_t, bool,
                           bool);
template void gemm<int64_t>(const MatView<int64_t>&, const MatView<int64_t>&, int64_t*, int64_t,
                            bool, bool);

}  // namespace TSL_CAPABILITY_NAMESPACE

}  // namespace tsl::cpu
