// The memory planner: tracing runs, offset assignment, planned arenas and the planner
// that chooses between them. See Note [Memory planning].
#include "runtime/memory_planner.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <unordered_map>

#include "runtime/interpreter.h"
#include "runtime/tensor/error.h"
#include "runtime/tensor/tensor.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
// Free arena bytes are poisoned, so AddressSanitizer reports a read or write of a
// planned value after it died as it would for a heap block.
#define TSL_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define TSL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define TSL_POISON(p, n) ((void)(p), (void)(n))
#define TSL_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace tsl {
namespace {

constexpr size_t kArenaAlignment = 64;
// A run with more allocations than this is not planned (offset assignment is
// quadratic in the number of blocks).
constexpr size_t kMaxBlocks = 16384;
// Idle arenas a planner keeps for the next runs (more than one for recursion).
constexpr size_t kMaxIdleArenas = 2;
// Idle arenas of all planners together stay under this; a larger one is freed after
// its run (its next run allocates it again, once, instead of every intermediate).
constexpr size_t kMaxIdleBytes = size_t{512} << 20;
std::atomic<size_t> g_idle_bytes{0};
constexpr unsigned char kSentinel = 0xA5;
// Traces that found nothing to plan before a Code stops planning.
constexpr int kMaxEmptyTraces = 3;

size_t padded(size_t nbytes) {
  size_t p = (nbytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  return p == 0 ? kArenaAlignment : p;
}

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

// ---- Tracing run ------------------------------------------------------------------------

class TracingRun final : public MemoryRun {
 public:
  explicit TracingRun(const Code& code) : code_(&code), plan_(std::make_shared<MemoryPlan>()) {
    plan_->function = code.name();
    plan_->num_stages = code.num_stages();
  }

  bool traces() const override { return true; }
  void at(int32_t pc, uint32_t stage) override {
    std::lock_guard<std::mutex> lock(mutex_);
    pc_ = pc;
    if (stage != stage_ || step_ == 0) plan_->stage_steps.resize(stage + 1, step_);
    stage_ = stage;
    ++step_;
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
  uint32_t step_ = 0;
  int32_t pc_ = -1;
  uint32_t stage_ = 0;
  size_t first_unnamed_ = 0;
  bool executing_ = false;
  bool finished_ = false;
  bool overflow_ = false;
};

Storage TracingRun::allocate(size_t nbytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (overflow_ || finished_) return {};
  if (plan_->blocks.size() >= kMaxBlocks) {
    overflow_ = true;
    return {};
  }
  void* data = allocate_cpu_block(nbytes);
  count_live_storage_bytes(nbytes);
  PlannedBlock& b = plan_->blocks.emplace_back();
  b.nbytes = nbytes;
  b.size = padded(nbytes);
  b.alloc_event = clock_++;
  b.alloc_step = step_ == 0 ? 0 : step_ - 1;
  b.stage = stage_;
  if (pc_ >= 0) {
    const Instruction& inst = code_->instructions()[static_cast<size_t>(pc_)];
    if (inst.node != nullptr) b.op = std::string(op_info(inst.node->op()).name);
  }
  live_.emplace(data, plan_->blocks.size() - 1);
  retain();  // the storage keeps the recorder until it dies
  return make_intrusive<StorageImpl>(data, nbytes, kCPU, &TracingRun::free_block, this);
}

void TracingRun::free_block(void* context, void* data, size_t nbytes) {
  auto* self = static_cast<TracingRun*>(context);
  self->note_free(data);
  free_cpu_block(data, nbytes);
  uncount_live_storage_bytes(nbytes);
  self->release();
}

void TracingRun::note_free(void* data) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  auto it = live_.find(data);
  if (it == live_.end()) return;
  PlannedBlock& b = plan_->blocks[it->second];
  // Freed while the run is not executing: dropped by whoever the run gave it to.
  b.planned = executing_;
  b.free_event = clock_++;
  b.free_step = step_ == 0 ? 0 : step_ - 1;
  live_.erase(it);
}

void TracingRun::name_storage(const TensorImpl* t, const std::string& name) {
  if (t == nullptr) return;
  auto it = live_.find(t->storage()->data());
  if (it == live_.end()) return;
  PlannedBlock& b = plan_->blocks[it->second];
  if (b.name.empty()) b.name = name;
}

// Names the blocks of a tensor and of the tensors in a list or tuple ("%gs[0][1]").
void TracingRun::name_value(const IValue& v, const std::string& name) {
  if (v.is_tensor()) {
    name_storage(v.tensor_impl(), name);
    return;
  }
  const std::vector<IValue>* elements = nullptr;
  if (v.is_list()) elements = &v.to_list().elements;
  if (v.is_tuple()) elements = &v.to_tuple();
  if (elements == nullptr) return;
  for (size_t k = 0; k < elements->size(); ++k) {
    name_value((*elements)[k], name + "[" + std::to_string(k) + "]");
  }
}

void TracingRun::name_outputs(const IValue* registers, const uint32_t* outputs,
                              uint32_t num_outputs, const Code& code) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (uint32_t i = 0; i < num_outputs; ++i) {
    name_value(registers[outputs[i]], code.register_name(outputs[i]));
  }
  for (; first_unnamed_ < plan_->blocks.size(); ++first_unnamed_) {
    PlannedBlock& b = plan_->blocks[first_unnamed_];
    if (b.name.empty()) b.name = "scratch";
  }
}

std::shared_ptr<MemoryPlan> TracingRun::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  // Still alive: outputs and values kept beyond the run.
  for (const auto& [data, index] : live_) plan_->blocks[index].planned = false;
  live_.clear();
  if (overflow_) return nullptr;
  plan_->num_steps = step_;
  assign_offsets(*plan_);
  return plan_;
}

// ---- Planned run -------------------------------------------------------------------------

// Its address tells threads apart (cheaper than std::this_thread::get_id()).
thread_local char t_thread_tag;

// Note [Arena frees from other threads]
// Only the thread that runs the Code allocates from its arena, so the live ranges are
// that thread's alone and need no lock on the hot path. A storage may still die on
// another thread (a tensor handed to one); such a free is pushed onto a lock-free list,
// its node written into the freed bytes themselves, and the owner takes the list in
// before its next allocation and when the run finishes.
class ArenaRun final : public MemoryRun {
 public:
  explicit ArenaRun(std::shared_ptr<const MemoryPlan> plan)
      : plan_(std::move(plan)),
        buffer_(static_cast<char*>(allocate_cpu_block(plan_->arena_bytes))),
        debug_(memory_plan_debug()) {
    live_.reserve(plan_->num_planned);
    if (debug_) std::memset(buffer_, kSentinel, plan_->arena_bytes);
    TSL_POISON(buffer_, plan_->arena_bytes);
  }
  ~ArenaRun() override {
    TSL_UNPOISON(buffer_, plan_->arena_bytes);
    free_cpu_block(buffer_, plan_->arena_bytes);
  }

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

bool ArenaRun::claim(size_t offset, size_t size) {
  auto it = std::lower_bound(live_.begin(), live_.end(), std::make_pair(offset, size_t{0}));
  if (!debug_) {
    if (it != live_.end() && it->first < offset + size) return false;
    if (it != live_.begin() && std::prev(it)->second > offset) return false;
  }
  live_.insert(it, {offset, offset + size});
  return true;
}

void ArenaRun::unclaim(size_t offset) {
  auto it = std::lower_bound(live_.begin(), live_.end(), std::make_pair(offset, size_t{0}));
  TSL_INTERNAL_ASSERT(it != live_.end() && it->first == offset, "arena slot at ", offset,
                      " freed but not live");
  if (debug_) std::memset(buffer_ + it->first, kSentinel, it->second - it->first);
  TSL_POISON(buffer_ + it->first, it->second - it->first);
  live_.erase(it);
}

void ArenaRun::take_remote_frees() {
  if (remote_frees_.load(std::memory_order_relaxed) == nullptr) return;
  RemoteFree* node = remote_frees_.exchange(nullptr, std::memory_order_acquire);
  while (node != nullptr) {
    RemoteFree* next = node->next;
    unclaim(node->offset);  // the node lives in these bytes: read it first
    node = next;
  }
}

void ArenaRun::check_sentinel(const PlannedBlock& b) const {
  const auto* bytes = reinterpret_cast<const unsigned char*>(buffer_ + b.offset);
  for (size_t i = 0; i < b.size; ++i) {
    TSL_INTERNAL_ASSERT(bytes[i] == kSentinel, "memory plan of ", plan_->function, ": block ",
                        b.name, " at offset ", b.offset, " (", b.size,
                        " bytes) was written at byte ", i,
                        " while the plan had it free: two live values share bytes");
  }
}

Storage ArenaRun::allocate(size_t nbytes) {
  if (departed_) return {};
  take_remote_frees();
  if (next_ >= plan_->blocks.size() || plan_->blocks[next_].nbytes != nbytes) {
    departed_ = true;
    return {};
  }
  const PlannedBlock& b = plan_->blocks[next_++];
  if (!b.planned) return outer_ ? outer_->allocate(nbytes) : Storage();
  if (!claim(b.offset, b.size)) {
    departed_ = true;
    return {};
  }
  TSL_UNPOISON(buffer_ + b.offset, b.size);
  if (debug_) check_sentinel(b);
  count_live_storage_bytes(nbytes);
  retain();  // the storage keeps the arena until it dies
  return make_intrusive<StorageImpl>(buffer_ + b.offset, nbytes, kCPU, &ArenaRun::free_slot, this);
}

void ArenaRun::free_slot(void* context, void* data, size_t nbytes) {
  auto* self = static_cast<ArenaRun*>(context);
  size_t offset = static_cast<size_t>(static_cast<char*>(data) - self->buffer_);
  if (self->owner_.load(std::memory_order_relaxed) == &t_thread_tag) {
    self->unclaim(offset);
  } else {
    // See Note [Arena frees from other threads].
    auto* node = new (data) RemoteFree{nullptr, offset};
    node->next = self->remote_frees_.load(std::memory_order_relaxed);
    while (!self->remote_frees_.compare_exchange_weak(node->next, node, std::memory_order_release,
                                                      std::memory_order_relaxed)) {
    }
  }
  uncount_live_storage_bytes(nbytes);
  self->release();
}

}  // namespace

// ---- Offset assignment --------------------------------------------------------------------

void assign_offsets(MemoryPlan& plan) {
  std::vector<size_t> order;
  plan.planned_bytes = plan.unplanned_bytes = 0;
  for (size_t i = 0; i < plan.blocks.size(); ++i) {
    PlannedBlock& b = plan.blocks[i];
    b.size = padded(b.nbytes);
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
