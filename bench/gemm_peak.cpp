// This machine's measured float32 GEMM rate for the suite's GEMM row: Eigen's
// 1024^3 product, best of several runs on one thread and on all cores (OpenMP), in
// GFLOP/s, with the thread count of the best. TSL's GEMM is Eigen too, so this is the
// same kernel without the interpreter around it.
#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

// The best time in seconds of `runs` products c = a * b on `threads` threads.
double best_seconds(const Eigen::MatrixXf& a, const Eigen::MatrixXf& b, Eigen::MatrixXf& c,
                    int threads, int runs) {
  Eigen::setNbThreads(threads);
  c.noalias() = a * b;  // warm up: page in c, size Eigen's blocking buffers
  double best = 1e9;
  for (int r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    c.noalias() = a * b;
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = 1024;
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n);
  Eigen::MatrixXf b = Eigen::MatrixXf::Random(n, n);
  Eigen::MatrixXf c(n, n);
  const int all = omp_get_max_threads();
  double best = best_seconds(a, b, c, 1, runs);
  int best_threads = 1;
  if (all > 1) {
    double t = best_seconds(a, b, c, all, runs);
    if (t < best) best = t, best_threads = all;
  }
  std::printf("eigen_gflops %.2f\n", 2.0 * n * n * n / best / 1e9);
  std::printf("eigen_threads %d\n", best_threads);
  std::printf("check %.4f\n", static_cast<double>(c(0, 0)));
  return 0;
}
