// A small thread pool for large kernels. Workers sleep on a condition variable when
// idle (never spin): on 2-vCPU VMs a spinning team gets descheduled and makes small
// ops 5-15x slower. Small ranges run inline on the calling thread.
#pragma once

#include <cstdint>
#include <functional>

namespace tsl {

// Elementwise ops below this many elements stay on one thread.
constexpr int64_t kParallelGrain = 32768;

// Threads used by parallel_for, the caller included (default: hardware threads).
int num_threads();
void set_num_threads(int n);

// Calls fn(begin, end) on disjoint chunks covering [0, n), each at least `grain`
// elements, using up to num_threads() threads; returns when all chunks are done.
// Runs inline when n < 2 * grain, on one thread, or when already inside a worker.
// An exception thrown by any chunk is rethrown here after every chunk has finished.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Whether the calling thread is running a chunk of parallel_for: code that other chunks
// may run at the same moment.
bool inside_parallel_region();

}  // namespace tsl
