// The memory planner: after a Code has run once, its intermediates' sizes and lifetimes
// are known; later runs take them from one arena in which values whose lifetimes do not
// overlap share bytes. See Note [Memory planning].
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/tensor/intrusive_ptr.h"
#include "runtime/tensor/storage.h"

namespace tsl {

class Code;
class IValue;

// Note [Memory planning]
// Seed 002 (PyTorch's static runtime) keeps each intermediate's largest size from one
// run and, on the next, carves all of them out of one buffer, one after another. TSL
// goes further: it overlaps them.
//
// Tracing run. The first run of a Code installs a recorder as the thread's CPU
// allocation interceptor (runtime/tensor/storage.h) while its instructions execute.
// Every CPU storage allocated in the run — kernel outputs, a kernel's scratch, captured
// values of a two-stage Code — is a block, stamped with the event clock (one tick per
// allocation and per free) and the instruction that made it. Storages are counted, not
// tensors, so views share their base's block. A block freed while the run executes is
// an intermediate; a block alive when the last stage returns (an output, a value kept
// in a list), or freed while the run is not executing (a stage's output dropped by the
// caller), outlives the run and is left to the allocator. A two-stage Code is one run
// across both stages: values captured for the backward are planned like the rest and
// stage 1's temporaries reuse the forward's bytes.
//
// Plan. assign_offsets places the intermediates greedy by size: largest first, each
// at the lowest 64-byte aligned offset free of every placed block whose lifetime meets
// its own. The lower bound is the largest sum of (padded) bytes live at one time; the
// arena is never smaller, and on the graphs of tests/frontend/memory_plan_test.cpp it is
// within 1.1x of it.
//
// Planned runs. Later runs take an arena (a buffer of the plan's size, reused from run
// to run) and serve allocation k of the run from block k's offset when its size is the
// planned one; a block planned to outlive the run (a result) is handed to the enclosing run's
// context, so the results of a call are planned in the caller's arena when they die
// there, and otherwise go to the allocator. Unplanned runs leave their allocations to the
// enclosing run too. So a
// steady-state run allocates nothing on the heap for its intermediates. A run that
// departs from the plan — another size (the shapes changed), another number of
// allocations, a block asked for while a value that shares its bytes is still alive
// (checked against the arena's live ranges on every allocation) — takes the rest of
// its memory from the allocator, and the next run traces again: a shape change
// re-plans. An arena whose storages are still alive after its run (a value escaped)
// is not reused; it is freed when the last of them dies.
//
// Debug mode (set_memory_plan_debug, TSL_MEMPLAN_DEBUG=1) trusts the plan instead of
// checking live ranges and fills freed bytes with a sentinel; an allocation whose bytes
// are not all sentinel was written by a value the plan thought dead, and is reported as
// an internal error. The tests run plans in this mode.

// One CPU allocation of a traced run.
struct PlannedBlock {
  size_t nbytes = 0;         // as requested
  size_t size = 0;           // padded to the arena's alignment
  uint32_t alloc_event = 0;  // on the run's event clock
  uint32_t free_event = 0;   // meaningful for planned blocks
  uint32_t alloc_step = 0;   // executed instructions before the allocation
  uint32_t free_step = 0;    // the step that freed it
  uint32_t stage = 0;        // the stage that allocated it
  bool planned = false;      // an intermediate; false: it outlives the run
  size_t offset = 0;         // in the arena (planned blocks)
  std::string name;          // "%h", or "scratch" for a kernel's temporary
  std::string op;            // the op that allocated it
};

struct MemoryPlan {
  std::string function;  // the Code's name
  size_t num_stages = 1;
  std::vector<PlannedBlock> blocks;   // every CPU allocation of the traced run, in order
  uint32_t num_steps = 0;             // executed instructions in the traced run
  std::vector<uint32_t> stage_steps;  // the step at which each stage began
  size_t arena_bytes = 0;
  size_t lower_bound_bytes = 0;  // the most planned bytes live at one time
  size_t planned_bytes = 0;      // sum of the planned blocks' sizes (no sharing)
  size_t num_planned = 0;
  size_t unplanned_bytes = 0;  // bytes of blocks that outlive the run

  // Each intermediate's lifetime and offset as a text chart, for learners
  // (`:memplan f`, `tsl --dump=memplan`); at most `width` columns of time.
  std::string chart(size_t width = 48) const;
  // One line: "arena 1.2 MiB for 14 intermediates (lower bound 1.1 MiB, ...)".
  std::string summary() const;
};

// Places the planned blocks of `plan` (their sizes and lifetimes set): fills each
// one's offset, the arena size, the lower bound and the totals.
void assign_offsets(MemoryPlan& plan);

// Whether Codes plan their memory (default on; TSL_NO_MEMPLAN=1 or `tsl --no-memplan`
// turns it off).
bool memory_planning_enabled();
void set_memory_planning_enabled(bool on);
// The sentinel debug mode of Note [Memory planning] (TSL_MEMPLAN_DEBUG=1).
bool memory_plan_debug();
void set_memory_plan_debug(bool on);

// One run's allocation context: a tracing recorder or a planned arena. It intercepts
// the thread's CPU allocations while one of its stages executes (see MemoryScope) and
// is kept alive by the storages it served.
class MemoryRun : public RefCounted, public CpuAllocationInterceptor {
 public:
  // Whether this run traces (the interpreter then reports where execution is).
  virtual bool traces() const = 0;
  // The recorder's view of execution: the instruction about to run, and the outputs
  // it left (to name the blocks it allocated).
  virtual void at(int32_t pc, uint32_t stage) = 0;
  virtual void name_outputs(const IValue* registers, const uint32_t* outputs, uint32_t num_outputs,
                            const Code& code) = 0;
  // A stage starts or stops executing; `outer` is the interceptor it replaces (an
  // enclosing run's), which a planned run hands the blocks that outlive it.
  virtual void enter(CpuAllocationInterceptor* outer) = 0;
  virtual void leave() = 0;
  // The run is dropped before its last stage (an error, a backward that never came).
  virtual void abandon() = 0;
};

struct MemoryPlannerStats {
  uint64_t traced_runs = 0;
  uint64_t planned_runs = 0;   // runs that took an arena
  uint64_t departed_runs = 0;  // planned runs that left the plan
  uint64_t arenas_allocated = 0;
};

// The planner of one Code: its plan and a pool of idle arenas. Thread-safe.
class MemoryPlanner {
 public:
  MemoryPlanner();
  ~MemoryPlanner();
  // The context of a new run of `code` (the first stage is about to run), or null when
  // the run is to go unplanned.
  IntrusivePtr<MemoryRun> begin_run(const Code& code);
  // The run's last stage returned.
  void finish_run(IntrusivePtr<MemoryRun> run);
  // The run was dropped before its last stage (an error, a backward that never came):
  // a tracing run's trace is discarded and the next run traces again.
  void abandon_run(IntrusivePtr<MemoryRun> run);
  // The current plan, or null before a run has been traced.
  std::shared_ptr<const MemoryPlan> plan() const;
  MemoryPlannerStats stats() const;
  // Replaces the plan that later runs follow (tests: a wrong plan must be caught).
  void set_plan_for_testing(std::shared_ptr<const MemoryPlan> plan);

 private:
  void drop_idle();  // with mutex_ held (or in the destructor)

  mutable std::mutex mutex_;
  std::atomic<bool> off_{false};  // nothing to plan: runs skip the planner
  std::shared_ptr<const MemoryPlan> plan_;
  bool tracing_ = false;     // a tracing run is under way
  bool needs_trace_ = true;  // the next run traces
  int empty_traces_ = 0;     // traces that found nothing to plan
  std::vector<IntrusivePtr<MemoryRun>> idle_;
  MemoryPlannerStats stats_;
};

// Installs a run's context for this thread's CPU allocations while a stage executes,
// and restores the previous one after. An unplanned run (null) installs nothing: its
// allocations go to the enclosing run, if any, as if its code were inlined there.
class MemoryScope {
 public:
  explicit MemoryScope(MemoryRun* run);
  ~MemoryScope();
  MemoryScope(const MemoryScope&) = delete;
  MemoryScope& operator=(const MemoryScope&) = delete;

 private:
  MemoryRun* run_;
  CpuAllocationInterceptor* previous_;
};

}  // namespace tsl
