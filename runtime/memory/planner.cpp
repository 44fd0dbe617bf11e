// The memory planner: offset assignment, and the planner of a Code that chooses between
// tracing a run and serving it from an arena (runtime/memory/runs.h). See Note [Memory planning].
#include "runtime/memory/planner.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string_view>

#include "runtime/memory/runs.h"

namespace tsl {
namespace {

using memory_detail::ArenaRun;
using memory_detail::TracingRun;

// Idle arenas a planner keeps for the next runs (more than one for recursion).
constexpr size_t kMaxIdleArenas = 2;
// Idle arenas of all planners together stay under this; a larger one is freed after
// its run (its next run allocates it again, once, instead of every intermediate).
constexpr size_t kMaxIdleBytes = size_t{512} << 20;
std::atomic<size_t> g_idle_bytes{0};
// Traces that found nothing to plan before a Code stops planning.
constexpr int kMaxEmptyTraces = 3;

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

std::atomic<bool>& planning_flag() {
  static std::atomic<bool> on{!env_flag("TSL_NO_MEMPLAN")};
  return on;
}

std::atomic<bool>& debug_flag() {
  static std::atomic<bool> on{env_flag("TSL_MEMPLAN_DEBUG")};
  return on;
}

bool lifetimes_meet(const PlannedBlock& a, const PlannedBlock& b) {
  return a.alloc_event < b.free_event && b.alloc_event < a.free_event;
}

// The largest sum of planned bytes live at one event.
size_t liveness_lower_bound(const std::vector<PlannedBlock>& blocks) {
  std::vector<std::pair<uint32_t, int64_t>> events;
  for (const PlannedBlock& b : blocks) {
    if (!b.planned) continue;
    events.emplace_back(b.alloc_event, static_cast<int64_t>(b.size));
    events.emplace_back(b.free_event, -static_cast<int64_t>(b.size));
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, most = 0;
  for (const auto& [t, delta] : events) {
    live += delta;
    most = std::max(most, live);
  }
  return static_cast<size_t>(most);
}

}  // namespace

// ---- Offset assignment --------------------------------------------------------------------

void assign_offsets(MemoryPlan& plan) {
  std::vector<size_t> order;
  plan.planned_bytes = plan.unplanned_bytes = 0;
  for (size_t i = 0; i < plan.blocks.size(); ++i) {
    PlannedBlock& b = plan.blocks[i];
    b.size = memory_detail::padded_block_size(b.nbytes);
    if (b.planned) {
      order.push_back(i);
      plan.planned_bytes += b.size;
    } else {
      plan.unplanned_bytes += b.nbytes;
    }
  }
  plan.num_planned = order.size();
  // Largest first; among equals, the earlier allocation first (deterministic).
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return plan.blocks[a].size > plan.blocks[b].size; });
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> taken;  // [offset, end) of placed blocks that meet
  plan.arena_bytes = 0;
  for (size_t i : order) {
    PlannedBlock& b = plan.blocks[i];
    taken.clear();
    for (size_t j : placed) {
      const PlannedBlock& p = plan.blocks[j];
      if (lifetimes_meet(b, p)) taken.emplace_back(p.offset, p.offset + p.size);
    }
    std::sort(taken.begin(), taken.end());
    size_t offset = 0;
    for (const auto& [start, end] : taken) {
      if (start >= offset + b.size) break;  // the gap before this range fits
      offset = std::max(offset, end);
    }
    b.offset = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + b.size);
    placed.push_back(i);
  }
  plan.lower_bound_bytes = liveness_lower_bound(plan.blocks);
}

// ---- Flags --------------------------------------------------------------------------------

bool memory_planning_enabled() { return planning_flag().load(std::memory_order_relaxed); }
void set_memory_planning_enabled(bool on) { planning_flag().store(on); }
bool memory_plan_debug() { return debug_flag().load(std::memory_order_relaxed); }
void set_memory_plan_debug(bool on) { debug_flag().store(on); }

// ---- The planner of one Code ----------------------------------------------------------------

MemoryPlanner::MemoryPlanner() = default;
MemoryPlanner::~MemoryPlanner() { drop_idle(); }

void MemoryPlanner::drop_idle() {
  for (const auto& run : idle_) {
    const auto* arena = static_cast<const ArenaRun*>(run.get());
    g_idle_bytes.fetch_sub(arena->plan()->arena_bytes, std::memory_order_relaxed);
  }
  idle_.clear();
}

IntrusivePtr<MemoryRun> MemoryPlanner::begin_run(const Code& code) {
  if (off_.load(std::memory_order_relaxed) || !memory_planning_enabled()) return {};
  std::lock_guard<std::mutex> lock(mutex_);
  if (needs_trace_) {
    if (tracing_) return {};  // a run of this Code is tracing (recursion, threads)
    tracing_ = true;
    needs_trace_ = false;
    ++stats_.traced_runs;
    return IntrusivePtr<MemoryRun>(new TracingRun(code));
  }
  if (!plan_) return {};
  IntrusivePtr<ArenaRun> arena;
  if (!idle_.empty()) {
    arena = IntrusivePtr<ArenaRun>(static_cast<ArenaRun*>(idle_.back().get()));
    idle_.pop_back();
    g_idle_bytes.fetch_sub(plan_->arena_bytes, std::memory_order_relaxed);
  } else {
    arena = IntrusivePtr<ArenaRun>(new ArenaRun(plan_));
    ++stats_.arenas_allocated;
  }
  arena->start();
  ++stats_.planned_runs;
  return arena;
}

void MemoryPlanner::finish_run(IntrusivePtr<MemoryRun> run) {
  if (run->traces()) {
    std::shared_ptr<MemoryPlan> plan = static_cast<TracingRun*>(run.get())->finish();
    std::lock_guard<std::mutex> lock(mutex_);
    tracing_ = false;
    drop_idle();
    plan_ = plan;
    if (!plan) {
      off_.store(true, std::memory_order_relaxed);  // too many allocations to plan
    } else if (plan->num_planned == 0) {
      // Nothing to share yet. A callee that traced its own first run keeps its results
      // from this one; once it runs planned it hands them here, so trace again a few
      // times before giving up and leaving later runs to the allocator.
      if (++empty_traces_ < kMaxEmptyTraces) {
        needs_trace_ = true;
      } else {
        off_.store(true, std::memory_order_relaxed);
      }
    }
    return;
  }
  auto* arena = static_cast<ArenaRun*>(run.get());
  bool reusable = arena->finish();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!reusable) {
    ++stats_.departed_runs;
    needs_trace_ = true;
  } else if (arena->plan() == plan_ && idle_.size() < kMaxIdleArenas) {
    size_t bytes = plan_->arena_bytes;
    if (g_idle_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes <= kMaxIdleBytes) {
      idle_.push_back(std::move(run));
    } else {
      g_idle_bytes.fetch_sub(bytes, std::memory_order_relaxed);  // over the cap: freed now
    }
  }
}

void MemoryPlanner::abandon_run(IntrusivePtr<MemoryRun> run) {
  run->abandon();
  if (!run->traces()) return;  // the arena dies with its last storage
  std::lock_guard<std::mutex> lock(mutex_);
  tracing_ = false;
  needs_trace_ = true;
}

std::shared_ptr<const MemoryPlan> MemoryPlanner::plan() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return plan_;
}

MemoryPlannerStats MemoryPlanner::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void MemoryPlanner::set_plan_for_testing(std::shared_ptr<const MemoryPlan> plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  plan_ = std::move(plan);
  drop_idle();
  needs_trace_ = false;
  off_.store(false, std::memory_order_relaxed);
}

MemoryScope::MemoryScope(MemoryRun* run) : run_(run), previous_(nullptr) {
  if (!run_) return;
  previous_ = set_cpu_allocation_interceptor(run_);
  run_->enter(previous_);
}

MemoryScope::~MemoryScope() {
  if (!run_) return;
  run_->leave();
  set_cpu_allocation_interceptor(previous_);
}

}  // namespace tsl
