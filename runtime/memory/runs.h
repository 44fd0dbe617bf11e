// Internal to the memory planner (runtime/memory/planner.cpp): the two kinds of run.
// A TracingRun records what a Code's run allocates and when each block dies; an
// ArenaRun serves a run from a plan's arena. See Note [Memory planning].
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/memory/planner.h"

namespace tsl {

class TensorImpl;

namespace memory_detail {

// The arena's alignment: every block's size is rounded up to it.
size_t padded_block_size(size_t nbytes);

// Its address tells threads apart (cheaper than std::this_thread::get_id()).
extern thread_local char t_thread_tag;

class TracingRun final : public MemoryRun {
 public:
  explicit TracingRun(const Code& code);

  bool traces() const override { return true; }
  // Every instruction of a traced run: no lock but where a stage starts (a mutex taken
  // here made a traced loop four times slower: 118 ns per iteration of `k += 1`, 30
  // without it). The executing thread alone writes the clock; a storage dying
  // on another thread reads it under the mutex, as it may read any recent step.
  void at(int32_t pc, uint32_t stage) override {
    uint32_t step = step_.load(std::memory_order_relaxed);
    if (stage != stage_.load(std::memory_order_relaxed) || step == 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      plan_->stage_steps.resize(stage + 1, step);
      stage_.store(stage, std::memory_order_relaxed);
    }
    pc_.store(pc, std::memory_order_relaxed);
    step_.store(step + 1, std::memory_order_relaxed);
  }
  void enter(CpuAllocationInterceptor*) override {
    std::lock_guard<std::mutex> lock(mutex_);
    executing_ = true;
  }
  void leave() override {
    std::lock_guard<std::mutex> lock(mutex_);
    executing_ = false;
  }
  void abandon() override {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    live_.clear();
  }

  Storage allocate(size_t nbytes) override;
  void name_outputs(const IValue* registers, const uint32_t* outputs, uint32_t num_outputs,
                    const Code& code) override;
  // The run's last stage returned: the plan of what it saw, or null when it saw too
  // many allocations to plan.
  std::shared_ptr<MemoryPlan> finish();

 private:
  static void free_block(void* context, void* data, size_t nbytes);
  void note_free(void* data);
  void name_storage(const TensorImpl* t, const std::string& name);
  void name_value(const IValue& v, const std::string& name);

  std::mutex mutex_;  // storages may die on any thread
  const Code* code_;  // valid while a stage executes
  std::shared_ptr<MemoryPlan> plan_;
  std::unordered_map<void*, size_t> live_;  // data -> block, for blocks not yet freed
  uint32_t clock_ = 0;
  std::atomic<uint32_t> step_{0};
  std::atomic<int32_t> pc_{-1};
  std::atomic<uint32_t> stage_{0};
  std::atomic<size_t> num_blocks_{0};  // plan_->blocks.size(), read without the mutex
  size_t first_unnamed_ = 0;           // the executing thread's alone
  bool executing_ = false;
  bool finished_ = false;
  bool overflow_ = false;
};

// Note [Arena frees from other threads]
// Only the thread that runs the Code allocates from its arena, so the live ranges are
// that thread's alone and need no lock on the hot path. A storage may still die on
// another thread (a tensor handed to one); such a free is pushed onto a lock-free list,
// its node written into the freed bytes themselves, and the owner takes the list in
// before its next allocation and when the run finishes.
class ArenaRun final : public MemoryRun {
 public:
  explicit ArenaRun(std::shared_ptr<const MemoryPlan> plan);
  ~ArenaRun() override;

  bool traces() const override { return false; }
  void at(int32_t, uint32_t) override {}
  void name_outputs(const IValue*, const uint32_t*, uint32_t, const Code&) override {}
  void enter(CpuAllocationInterceptor* outer) override {
    outer_ = outer;
    owner_.store(&t_thread_tag, std::memory_order_relaxed);
  }
  void leave() override { outer_ = nullptr; }
  void abandon() override {}

  const std::shared_ptr<const MemoryPlan>& plan() const { return plan_; }
  void start() {
    next_ = 0;
    departed_ = false;
  }
  Storage allocate(size_t nbytes) override;
  // The run's last stage returned: whether it followed the plan and left nothing
  // alive in the arena (which can then serve the next run).
  bool finish() {
    take_remote_frees();
    if (next_ != plan_->blocks.size() || !live_.empty()) departed_ = true;
    return !departed_;
  }

 private:
  struct RemoteFree {
    RemoteFree* next;
    size_t offset;
  };
  static void free_slot(void* context, void* data, size_t nbytes);
  bool claim(size_t offset, size_t size);
  void unclaim(size_t offset);
  void take_remote_frees();
  void check_sentinel(const PlannedBlock& b) const;

  std::shared_ptr<const MemoryPlan> plan_;
  char* buffer_;
  bool debug_;
  CpuAllocationInterceptor* outer_ = nullptr;  // the enclosing run's, while executing
  std::atomic<const char*> owner_{nullptr};    // the thread tag of the running thread
  std::atomic<RemoteFree*> remote_frees_{nullptr};
  size_t next_ = 0;
  bool departed_ = false;
  // Byte ranges [offset, end) of the live storages, sorted by offset (owner only).
  std::vector<std::pair<size_t, size_t>> live_;
};

}  // namespace memory_detail
}  // namespace tsl
