// The runs of the memory planner: tracing a Code's allocations, and serving them from
// an arena. See Note [Memory planning] in runtime/memory/planner.h.
#include "runtime/memory/runs.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "runtime/exec/interpreter.h"
#include "runtime/tensor/error.h"
#include "runtime/tensor/sanitizer.h"
#include "runtime/tensor/tensor.h"

#if defined(TSL_ADDRESS_SANITIZER)
#include <sanitizer/asan_interface.h>
// Free arena bytes are poisoned, so AddressSanitizer reports a read or write of a
// planned value after it died as it would for a heap block.
#define TSL_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define TSL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define TSL_POISON(p, n) ((void)(p), (void)(n))
#define TSL_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace tsl::memory_detail {
namespace {

// A run with more allocations than this is not planned (offset assignment is
// quadratic in the number of blocks).
constexpr size_t kMaxBlocks = 16384;
constexpr unsigned char kSentinel = 0xA5;

}  // namespace

size_t padded_block_size(size_t nbytes) {
  constexpr size_t kArenaAlignment = 64;
  size_t p = (nbytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  return p == 0 ? kArenaAlignment : p;
}

// ---- Tracing run ------------------------------------------------------------------------

TracingRun::TracingRun(const Code& code) : code_(&code), plan_(std::make_shared<MemoryPlan>()) {
  plan_->function = code.name();
  plan_->num_stages = code.num_stages();
}

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
  b.size = padded_block_size(nbytes);
  b.alloc_event = clock_++;
  uint32_t step = step_.load(std::memory_order_relaxed);
  b.alloc_step = step == 0 ? 0 : step - 1;
  b.stage = stage_.load(std::memory_order_relaxed);
  if (int32_t pc = pc_.load(std::memory_order_relaxed); pc >= 0) {
    const Instruction& inst = code_->instructions()[static_cast<size_t>(pc)];
    if (inst.node != nullptr) b.op = std::string(op_info(inst.node->op()).name);
  }
  live_.emplace(data, plan_->blocks.size() - 1);
  num_blocks_.store(plan_->blocks.size(), std::memory_order_relaxed);
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
  uint32_t step = step_.load(std::memory_order_relaxed);
  b.free_step = step == 0 ? 0 : step - 1;
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
  // Nothing to name (no tensor among the outputs, no block since the last naming):
  // no lock, as for at().
  bool containers = false;
  for (uint32_t i = 0; i < num_outputs; ++i) {
    const IValue& v = registers[outputs[i]];
    containers |= v.is_tensor() || v.is_list() || v.is_tuple();
  }
  if (!containers && first_unnamed_ == num_blocks_.load(std::memory_order_relaxed)) return;
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
  plan_->num_steps = step_.load(std::memory_order_relaxed);
  assign_offsets(*plan_);
  return plan_;
}

// ---- Planned run -------------------------------------------------------------------------

thread_local char t_thread_tag;

ArenaRun::ArenaRun(std::shared_ptr<const MemoryPlan> plan)
    : plan_(std::move(plan)),
      buffer_(static_cast<char*>(allocate_cpu_block(plan_->arena_bytes))),
      debug_(memory_plan_debug()) {
  live_.reserve(plan_->num_planned);
  if (debug_) std::memset(buffer_, kSentinel, plan_->arena_bytes);
  TSL_POISON(buffer_, plan_->arena_bytes);
}

ArenaRun::~ArenaRun() {
  TSL_UNPOISON(buffer_, plan_->arena_bytes);
  free_cpu_block(buffer_, plan_->arena_bytes);
}

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

}  // namespace tsl::memory_detail
