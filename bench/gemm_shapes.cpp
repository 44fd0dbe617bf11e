// TSL's GEMM primitive on OpenBLAS and on Eigen, shape by shape (Note [GEMM through
// BLAS] in runtime/kernels/cpu/linalg_gemm.cpp): float and double, squares from 8 to
// 1024 and the products of the suite's MLP step and of linear's transposed weight, in
// GFLOP/s, each side's best of alternating runs on all of TSL's threads. This is where
// the crossover between the two libraries is read off; the OpenBLAS column is TSL's
// choice for the shape, so it shows Eigen where Eigen measured faster (eigen_is_faster
// in linalg_gemm.cpp). OPENBLAS_CORETYPE=Haswell runs OpenBLAS's AVX2 kernels.
//   build/release/bench/gemm_shapes [SECONDS_PER_SHAPE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "runtime/kernels/cpu/linalg_gemm.h"
#include "runtime/tensor/parallel.h"

namespace {

using tsl::cpu::GemmLibrary;

struct Shape {
  const char* what;
  int64_t m, k, n;
  bool b_transposed;          // B = W.t() of a row-major [n, k] W, as in linear
  bool a_transposed = false;  // A = G.t() of a row-major [k, m] G, as in a weight gradient
};

template <typename T>
void measure(const Shape& s, double seconds) {
  std::vector<T> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : a) x = u(gen);
  for (auto& x : b) x = u(gen);
  tsl::cpu::MatView<T> va = s.a_transposed ? tsl::cpu::MatView<T>{a.data(), s.m, s.k, 1, s.m}
                                           : tsl::cpu::MatView<T>{a.data(), s.m, s.k, s.k, 1};
  tsl::cpu::MatView<T> vb = s.b_transposed ? tsl::cpu::MatView<T>{b.data(), s.k, s.n, 1, s.k}
                                           : tsl::cpu::MatView<T>{b.data(), s.k, s.n, s.n, 1};
  double flop = 2.0 * s.m * s.k * s.n;
  // Runs per timing: about 5 ms of work at 100 GFLOP/s, at least one.
  int reps = std::max<int>(1, static_cast<int>(5e8 / flop));
  double best[2] = {1e30, 1e30};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (int round = 0; round < 3 || std::chrono::steady_clock::now() < deadline; ++round) {
    for (int lib = 0; lib < 2; ++lib) {
      tsl::cpu::set_gemm_library(lib == 0 ? GemmLibrary::Blas : GemmLibrary::Eigen);
      auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) tsl::cpu::gemm<T>(va, vb, c.data(), s.n, false);
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best[lib] = std::min(best[lib], t / reps);
    }
  }
  std::printf("| %-22s | %-7s | %5lldx%5lldx%5lld | %8.1f | %8.1f | %5.2fx |\n", s.what,
              sizeof(T) == 4 ? "float32" : "float64", static_cast<long long>(s.m),
              static_cast<long long>(s.k), static_cast<long long>(s.n), flop / best[0] / 1e9,
              flop / best[1] / 1e9, best[1] / best[0]);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 0.3;
  if (!tsl::cpu::blas_available()) {
    std::printf("this build has no BLAS (TSL_BLAS=OFF or OpenBLAS not found): Eigen only\n");
    return 0;
  }
  std::printf("threads: %d\n", tsl::num_threads());
  std::printf(
      "| shape | dtype | m x k x n | OpenBLAS GFLOP/s | Eigen GFLOP/s | OpenBLAS speed-up |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  std::vector<Shape> shapes = {
      {"square", 8, 8, 8, false},
      {"square", 16, 16, 16, false},
      {"square", 32, 32, 32, false},
      {"square", 64, 64, 64, false},
      {"square", 128, 128, 128, false},
      {"square", 256, 256, 256, false},
      {"square", 512, 512, 512, false},
      {"square", 1024, 1024, 1024, false},
      {"MLP x @ W1.t()", 64, 784, 256, true},
      {"MLP h @ W2.t()", 64, 256, 10, true},
      {"MLP dW1 = g.t() @ x", 256, 64, 784, false, true},
      {"rnn step h @ W.t()", 32, 128, 128, true},
      {"x @ W.t(), 8 rows", 8, 256, 256, true},
      {"x @ W.t(), 64 rows", 64, 1024, 1024, true},
      {"x @ W.t(), 256 rows", 256, 256, 256, true},
      {"skinny", 32, 256, 256, false},
      {"conv im2col", 64, 576, 196, false},
  };
  for (const Shape& s : shapes) measure<float>(s, seconds);
  for (const Shape& s : shapes) {
    if (s.m * s.k * s.n <= (int64_t{1} << 27)) measure<double>(s, seconds);
  }
  return 0;
}
