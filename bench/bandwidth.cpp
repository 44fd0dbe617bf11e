// This machine's memory bandwidth for the fusion benchmark's access pattern: read n
// float32 values and write n (b[i] = a[i] * s), on all hardware threads, best of
// several runs. Prints GB/s for n = 4M (the benchmark's size) and for 64M (DRAM).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// The best time in seconds of `reps` runs of b = a * s over n floats on `threads`.
double best_scale_seconds(size_t n, unsigned threads, int reps) {
  auto* a = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  auto* b = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  for (size_t i = 0; i < n; ++i) a[i] = b[i] = static_cast<float>(i % 7);
  double best = 1e9;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> team;
    for (unsigned t = 0; t < threads; ++t) {
      team.emplace_back([=] {
        size_t lo = n * t / threads, hi = n * (t + 1) / threads;
        for (size_t i = lo; i < hi; ++i) b[i] = a[i] * 1.0001f;
      });
    }
    for (auto& th : team) th.join();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  std::printf("# checksum %g\n", static_cast<double>(b[n / 3]));
  std::free(a);
  std::free(b);
  return best;
}

}  // namespace

int main() {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (size_t n : {size_t{4} << 20, size_t{64} << 20}) {
    double s = best_scale_seconds(n, threads, n > (size_t{4} << 20) ? 5 : 30);
    std::printf("bandwidth_%zuM_gbs %.2f\n", n >> 20, 2.0 * n * sizeof(float) / s / 1e9);
  }
  std::printf("bandwidth_threads %u\n", threads);
  return 0;
}
