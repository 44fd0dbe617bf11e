// The baseline entry points of the kernel files built once per CPU capability (Note [One
// binary for every x86-64] in runtime/tensor/cpu_capability.h): each calls the running
// capability's definition. The files (CMakeLists.txt, TSL_CAPABILITY_TENSOR_SRC) and what
// they export are listed here and nowhere else.
#include <atomic>
#include <cstdlib>
#include <string_view>

#include "runtime/kernels/cpu/linalg_gemm.h"
#include "runtime/kernels/cpu/products.h"
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/tensor/cpu_capability.h"

#if !defined(TSL_HAVE_BLAS)
#define TSL_HAVE_BLAS 0
#endif

namespace tsl {

// elementwise_unary.cpp, elementwise_binary.cpp, reduction.cpp
TSL_CAPABILITY_DECLARE(void register_cpu_unary_kernels())
TSL_CAPABILITY_DECLARE(void register_cpu_binary_kernels())
TSL_CAPABILITY_DECLARE(void register_cpu_reduction_kernels())
namespace cpu {
// elementwise_binary.cpp, reduction.cpp, reduction_stats.cpp, nn_layer_norm.cpp,
// linalg_gemm.cpp
TSL_CAPABILITY_DECLARE(Tensor mul(const Tensor& self, const Tensor& other))
TSL_CAPABILITY_DECLARE(Tensor sum_over(const Tensor& self, DimMask mask, bool keepdim))
TSL_CAPABILITY_DECLARE(void register_reduction_stats_kernels())
TSL_CAPABILITY_DECLARE(void register_layer_norm_kernels())
TSL_CAPABILITY_DECLARE(template <typename T> void gemm(const MatView<T>& a, const MatView<T>& b,
                                                       T* c, int64_t ldc, bool accumulate,
                                                       bool allow_threads))
}  // namespace cpu

namespace {
using Register = void (*)();
}  // namespace

void register_cpu_unary_kernels() {
  static constexpr Register kEntries[] = {TSL_CAPABILITY_ENTRIES(register_cpu_unary_kernels)};
  cpu::for_active_capability(kEntries)();
}

void register_cpu_binary_kernels() {
  static constexpr Register kEntries[] = {TSL_CAPABILITY_ENTRIES(register_cpu_binary_kernels)};
  cpu::for_active_capability(kEntries)();
}

void register_cpu_reduction_kernels() {
  static constexpr Register kEntries[] = {TSL_CAPABILITY_ENTRIES(register_cpu_reduction_kernels)};
  cpu::for_active_capability(kEntries)();
}

namespace cpu {

void register_reduction_stats_kernels() {
  static constexpr Register kEntries[] = {TSL_CAPABILITY_ENTRIES(register_reduction_stats_kernels)};
  for_active_capability(kEntries)();
}

void register_layer_norm_kernels() {
  static constexpr Register kEntries[] = {TSL_CAPABILITY_ENTRIES(register_layer_norm_kernels)};
  for_active_capability(kEntries)();
}

Tensor mul(const Tensor& self, const Tensor& other) {
  using Fn = Tensor (*)(const Tensor&, const Tensor&);
  static constexpr Fn kEntries[] = {TSL_CAPABILITY_ENTRIES(mul)};
  return for_active_capability(kEntries)(self, other);
}

Tensor sum_over(const Tensor& self, DimMask mask, bool keepdim) {
  using Fn = Tensor (*)(const Tensor&, DimMask, bool);
  static constexpr Fn kEntries[] = {TSL_CAPABILITY_ENTRIES(sum_over)};
  return for_active_capability(kEntries)(self, mask, keepdim);
}

template <typename T>
void gemm(const MatView<T>& a, const MatView<T>& b, T* c, int64_t ldc, bool accumulate,
          bool allow_threads) {
  using Fn = void (*)(const MatView<T>&, const MatView<T>&, T*, int64_t, bool, bool);
  static constexpr Fn kEntries[] = {TSL_CAPABILITY_ENTRIES(gemm<T>)};
  for_active_capability(kEntries)(a, b, c, ldc, accumulate, allow_threads);
}

template void gemm<float>(const MatView<float>&, const MatView<float>&, float*, int64_t, bool,
                          bool);
template void gemm<double>(const MatView<double>&, const MatView<double>&, double*, int64_t, bool,
                           bool);
template void gemm<int64_t>(const MatView<int64_t>&, const MatView<int64_t>&, int64_t*, int64_t,
                            bool, bool);

// The library of float and double products, shared by every capability's gemm.
namespace {

// TSL_GEMM=eigen in the environment keeps every product on Eigen (to compare the two).
bool blas_by_default() {
  const char* env = std::getenv("TSL_GEMM");
  return TSL_HAVE_BLAS != 0 && !(env && std::string_view(env) == "eigen");
}

std::atomic<bool> use_blas{blas_by_default()};

}  // namespace

bool blas_available() { return TSL_HAVE_BLAS != 0; }

GemmLibrary gemm_library() {
  return use_blas.load(std::memory_order_relaxed) ? GemmLibrary::Blas : GemmLibrary::Eigen;
}

void set_gemm_library(GemmLibrary library) {
  use_blas.store(library == GemmLibrary::Blas && blas_available(), std::memory_order_relaxed);
}

}  // namespace cpu
}  // namespace tsl
