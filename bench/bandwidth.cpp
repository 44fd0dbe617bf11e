// This machine's memory bandwidth for the fusion benchmark's access pattern: read n
// float32 values and write n (b[i] = a[i] * s), on all hardware threads, best of
// several runs. Prints GB/s for n = 4M (the benchmark's size) and for 64M (DRAM).
// The threads are started once and meet at a barrier before each run, so that a run's
// time is the copy alone (from the first thread's start to the last one's end), as
// for a thread pool, not thread creation.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// The best time in seconds of `reps` runs of b = a * s over n floats on `threads`.
double best_scale_seconds(size_t n, unsigned threads, int reps) {
  auto* a = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  auto* b = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  for (size_t i = 0; i < n; ++i) a[i] = b[i] = static_cast<float>(i % 7);
  std::vector<Clock::time_point> starts(threads), ends(threads);
  std::barrier sync(static_cast<std::ptrdiff_t>(threads));
  double best = 1e9;
  auto worker = [&](unsigned t) {
    size_t lo = n * t / threads, hi = n * (t + 1) / threads;
    for (int r = 0; r < reps; ++r) {
      sync.arrive_and_wait();
      starts[t] = Clock::now();
      for (size_t i = lo; i < hi; ++i) b[i] = a[i] * 1.0001f;
      ends[t] = Clock::now();
      sync.arrive_and_wait();
      if (t == 0) {
        auto first = *std::min_element(starts.begin(), starts.end());
        auto last = *std::max_element(ends.begin(), ends.end());
        best = std::min(best, std::chrono::duration<double>(last - first).count());
      }
    }
  };
  std::vector<std::thread> team;
  for (unsigned t = 1; t < threads; ++t) team.emplace_back(worker, t);
  worker(0);
  for (auto& th : team) th.join();
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
