// The caching device allocator. See Note [The CUDA backend] in cuda_context.h.
#include <algorithm>
#include <mutex>
#include <set>
#include <unordered_map>

#include "runtime/kernels/cuda/cuda_context.h"
#include "runtime/tensor/error.h"

namespace tsl::cuda {
namespace {

constexpr size_t kRound = 512;
constexpr size_t kSmallRequest = size_t{1} << 20;  // up to 1 MiB: the small pool
constexpr size_t kSmallSegment = size_t{2} << 20;
constexpr size_t kLargeSegment = size_t{20} << 20;
constexpr size_t kHugeRequest = size_t{10} << 20;  // above: a segment of its own size
constexpr size_t kHugeRound = size_t{2} << 20;

// A piece of a segment. Blocks of one segment form a list in address order.
struct Block {
  char* ptr;
  size_t size;
  bool small;  // the pool it belongs to
  bool allocated = false;
  Block* prev = nullptr;
  Block* next = nullptr;
};

struct BySize {
  bool operator()(const Block* a, const Block* b) const {
    return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
  }
};

class Allocator {
 public:
  Block* allocate(size_t nbytes) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t size = std::max<size_t>(kRound, (nbytes + kRound - 1) / kRound * kRound);
    bool small = size <= kSmallRequest;
    std::set<Block*, BySize>& pool = small ? small_free_ : large_free_;
    Block key{nullptr, size, small};
    auto it = pool.lower_bound(&key);
    Block* block = nullptr;
    if (it != pool.end()) {
      block = *it;
      pool.erase(it);
    } else {
      block = new_segment(size, small);
    }
    // Split off the rest when it is worth keeping.
    size_t rest = block->size - size;
    if (rest >= (small ? kRound : kSmallRequest)) {
      Block* tail = new Block{block->ptr + size, rest, small};
      tail->prev = block;
      tail->next = block->next;
      if (block->next) block->next->prev = tail;
      block->next = tail;
      block->size = size;
      pool.insert(tail);
    }
    block->allocated = true;
    stats_.allocated_bytes += block->size;
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    return block;
  }

  void free(Block* block) {
    std::lock_guard<std::mutex> lock(mu_);
    block->allocated = false;
    stats_.allocated_bytes -= block->size;
    std::set<Block*, BySize>& pool = block->small ? small_free_ : large_free_;
    // Merge with free neighbours of the same segment.
    if (Block* p = block->prev; p && !p->allocated) {
      pool.erase(p);
      p->size += block->size;
      p->next = block->next;
      if (block->next) block->next->prev = p;
      delete block;
      block = p;
    }
    if (Block* n = block->next; n && !n->allocated) {
      pool.erase(n);
      block->size += n->size;
      block->next = n->next;
      if (n->next) n->next->prev = block;
      delete n;
    }
    pool.insert(block);
  }

  // Frees every segment that is one free block.
  void release_cached() {
    for (std::set<Block*, BySize>* pool : {&small_free_, &large_free_}) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block* b = *it;
        if (b->prev == nullptr && b->next == nullptr) {
          check(cudaFree(b->ptr), "cudaFree");
          ++stats_.device_frees;
          stats_.reserved_bytes -= b->size;
          delete b;
          it = pool->erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mu_);
    // Work queued on the stream may still use blocks freed by the host.
    check(cudaStreamSynchronize(stream()), "emptying the CUDA cache");
    release_cached();
  }

  AllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  Block* new_segment(size_t size, bool small) {
    size_t bytes = small                 ? kSmallSegment
                   : size < kHugeRequest ? kLargeSegment
                                         : (size + kHugeRound - 1) / kHugeRound * kHugeRound;
    void* ptr = nullptr;
    cudaError_t err = cudaMalloc(&ptr, bytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      check(cudaStreamSynchronize(stream()), "freeing cached CUDA memory");
      release_cached();
      err = cudaMalloc(&ptr, bytes);
    }
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      size_t free_bytes = 0, total = 0;
      cudaMemGetInfo(&free_bytes, &total);
      TSL_ERROR("CUDA out of memory. Tried to allocate ", mib(size), " (GPU total capacity ",
                mib(total), ", ", mib(free_bytes), " free; ", mib(stats_.allocated_bytes),
                " allocated by TSL, ", mib(stats_.reserved_bytes), " reserved)");
    }
    check(err, "cudaMalloc");
    ++stats_.device_mallocs;
    stats_.reserved_bytes += bytes;
    return new Block{static_cast<char*>(ptr), bytes, small};
  }

  static std::string mib(size_t bytes) {
    return std::to_string((bytes + (size_t{1} << 19)) >> 20) + " MiB";
  }

  std::mutex mu_;
  std::set<Block*, BySize> small_free_, large_free_;
  AllocatorStats stats_;
};

Allocator& allocator() {
  // Never destroyed: storages may be freed during static destruction.
  static Allocator* a = new Allocator();
  return *a;
}

void free_block(void* context, void*, size_t) { allocator().free(static_cast<Block*>(context)); }

}  // namespace

Storage allocate(size_t nbytes, Device device) {
  ensure_available();
  TSL_CHECK(device.index == 0, "cannot use ", device.str(), ": TSL uses one GPU, cuda:0");
  stream();  // selects the device
  Block* b = allocator().allocate(nbytes);
  return make_intrusive<StorageImpl>(b->ptr, nbytes, device, &free_block, b);
}

AllocatorStats allocator_stats() { return allocator().stats(); }
void empty_cache() { allocator().empty_cache(); }

}  // namespace tsl::cuda
