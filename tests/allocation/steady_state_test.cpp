// Heap allocations of steady-state training steps (issue 6): after a compiled step has
// been traced and planned, running it makes no heap allocation for its intermediates.
// The test binary counts two ways: TSL's allocation observer sees every tensor block the
// allocator serves, and this binary's replacement of the global operator new sees every
// other heap object (tensor headers, register files, lists).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "frontend/compilation_unit.h"
#include "runtime/exec/function.h"
#include "runtime/memory/planner.h"
#include "runtime/tensor/storage.h"
#include "tests/common/programs.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_new_calls{0};
std::atomic<uint64_t> g_blocks{0};
std::atomic<uint64_t> g_block_bytes{0};

void count_block(size_t nbytes) {
  g_blocks.fetch_add(1, std::memory_order_relaxed);
  g_block_bytes.fetch_add(nbytes, std::memory_order_relaxed);
}

#if !defined(__SANITIZE_ADDRESS__)
void* counted_new(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_new_calls.fetch_add(1);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

void* counted_new_aligned(size_t n, std::align_val_t a) {
  if (g_counting.load(std::memory_order_relaxed)) g_new_calls.fetch_add(1);
  size_t align = static_cast<size_t>(a);
  size_t size = (n + align - 1) / align * align;
  if (void* p = std::aligned_alloc(align, size == 0 ? align : size)) return p;
  throw std::bad_alloc();
}

#endif

}  // namespace

// Not under AddressSanitizer, which must keep its own operator new to match every
// allocation with its release (the test then counts tensor blocks only).
#if !defined(__SANITIZE_ADDRESS__)
void* operator new(size_t n) { return counted_new(n); }
void* operator new[](size_t n) { return counted_new(n); }
void* operator new(size_t n, std::align_val_t a) { return counted_new_aligned(n, a); }
void* operator new[](size_t n, std::align_val_t a) { return counted_new_aligned(n, a); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_new(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return counted_new_aligned(n, a);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t& t) noexcept {
  return operator new(n, a, t);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
#endif

namespace tsl {
namespace {

void run(CompilationUnit& unit, const std::string& code) {
  unit.run_source(std::make_shared<Source>("<test>", code), false);
}

const char* kSteps =
    "for i in range(STEPS):\n"
    "    w1, b1, w2, b2, value = step(w1, b1, w2, b2, x, t, 0.1)\n";

std::string steps(int n) {
  std::string s = kSteps;
  s.replace(s.find("STEPS"), 5, std::to_string(n));
  return s;
}

TEST(SteadyState, TrainingStepAllocatesOnlyItsResults) {
  ASSERT_TRUE(memory_planning_enabled());
  CompilationUnit unit;
  run(unit, kMlpTrainingStep);
  run(unit, "value = torch.zeros(1)\n");
  run(unit, steps(5));  // trace, plan, settle
  MemoryPlannerStats before =
      unit.find_function("step")->compiled.at(0).function->code().memory_planner()->stats();

  set_cpu_allocation_observer(&count_block);
  g_new_calls = 0;
  g_counting = true;
  run(unit, steps(100));
  g_counting = false;
  set_cpu_allocation_observer(nullptr);

  MemoryPlannerStats after =
      unit.find_function("step")->compiled.at(0).function->code().memory_planner()->stats();
  EXPECT_EQ(after.planned_runs - before.planned_runs, 100u);
  EXPECT_EQ(after.departed_runs, before.departed_runs);
  EXPECT_EQ(after.arenas_allocated, before.arenas_allocated);
  // Per step: the results and nothing else: w1, b1, w2, b2 and the loss.
  const uint64_t result_bytes = (256 * 784 + 256 + 10 * 256 + 10 + 1) * 4;
  EXPECT_EQ(g_blocks.load(), 5u * 100) << "tensor blocks from the allocator";
  EXPECT_EQ(g_block_bytes.load(), result_bytes * 100);
  // Tensor headers come from per-thread caches (Note [Header caches]); what is left is
  // argument vectors, tuples and register files: a bound, not zero.
  double per_step = static_cast<double>(g_new_calls.load()) / 100;
  std::printf("operator new per step: %.1f\n", per_step);
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(per_step, 80.0);
#endif
}

}  // namespace
}  // namespace tsl
