// The sleeping thread pool behind parallel_for. See parallel.h for why it sleeps.
#include "runtime/tensor/parallel.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/tensor/interrupt.h"

namespace tsl {
namespace {

thread_local bool t_inside_parallel_region = false;

// One parallel_for call. Workers hold it by shared_ptr, so a worker that wakes late
// can never mix the chunk counter of one call with the function of the next.
struct Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t n;
  int64_t chunk;
  int64_t num_chunks;
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> finished_chunks{0};
  std::mutex error_mu;
  std::exception_ptr error;
};

class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int i = 0; i + 1 < threads; ++i) {
      workers_.emplace_back([this] {
        block_sigint_in_this_thread();  // Ctrl-C is for the REPL's thread
        worker_loop();
      });
    }
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    for (auto& w : workers_) w.join();
  }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& fn) {
    std::lock_guard<std::mutex> serial(run_mu_);  // one parallel region at a time
    auto job = std::make_shared<Job>();
    job->fn = &fn;
    job->n = n;
    job->chunk = chunk;
    job->num_chunks = (n + chunk - 1) / chunk;
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = job;
      ++generation_;
    }
    work_cv_.notify_all();
    work_on(*job);
    {
      std::unique_lock<std::mutex> lock(mu_);
      done_cv_.wait(lock, [&] { return job->finished_chunks.load() == job->num_chunks; });
      job_.reset();
    }
    if (job->error) std::rethrow_exception(job->error);
  }

 private:
  void worker_loop() {
    t_inside_parallel_region = true;
    uint64_t seen = 0;
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        job = job_;
      }
      if (job) work_on(*job);
    }
  }

  void work_on(Job& job) {
    bool was_inside = t_inside_parallel_region;
    t_inside_parallel_region = true;
    int64_t done = 0;
    for (;;) {
      int64_t c = job.next_chunk.fetch_add(1);
      if (c >= job.num_chunks) break;
      int64_t begin = c * job.chunk;
      int64_t end = std::min(job.n, begin + job.chunk);
      try {
        (*job.fn)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(job.error_mu);
        if (!job.error) job.error = std::current_exception();
      }
      ++done;
    }
    t_inside_parallel_region = was_inside;
    if (done == 0) return;
    if (job.finished_chunks.fetch_add(done) + done == job.num_chunks) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex run_mu_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  bool stopping_ = false;
  uint64_t generation_ = 0;
  std::shared_ptr<Job> job_;
};

int g_num_threads = 0;  // 0: not chosen yet
std::unique_ptr<ThreadPool> g_pool;
std::mutex g_pool_mu;

int default_threads() {
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(std::min(hw, 64u));
}

ThreadPool& pool() {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (g_num_threads == 0) g_num_threads = default_threads();
  if (!g_pool || g_pool->size() != g_num_threads) {
    g_pool.reset();
    g_pool = std::make_unique<ThreadPool>(g_num_threads);
  }
  return *g_pool;
}

}  // namespace

int num_threads() {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (g_num_threads == 0) g_num_threads = default_threads();
  return g_num_threads;
}

void set_num_threads(int n) {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  g_num_threads = std::max(1, std::min(n, 64));
}

bool inside_parallel_region() { return t_inside_parallel_region; }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int threads = num_threads();
  if (threads == 1 || n < 2 * grain || t_inside_parallel_region) {
    fn(0, n);
    return;
  }
  int64_t chunks = std::min<int64_t>(threads, n / grain);
  int64_t chunk = (n + chunks - 1) / chunks;
  pool().run(n, chunk, fn);
}

}  // namespace tsl
