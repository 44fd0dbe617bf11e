// The profiler behind `tsl --profile FILE` and the REPL's `:profile stmt`: time per
// node and per op kind of every kernel the interpreter runs while a Profiler is
// installed, and the peak of live tensor memory, as the static runtime's benchmark
// report does (seed 002).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"
#include "runtime/fusion/fusion.h"
#include "runtime/fusion/native_compiler.h"
#include "runtime/memory/planner.h"

namespace tsl {

class Profiler {
 public:
  // One executed kernel of `node`, taking `ns`.
  void record(const Node* node, uint64_t ns);
  // Per op kind (time, share, count) and the slowest nodes with their source lines.
  std::string report(size_t top_nodes = 10) const;
  uint64_t total_ns() const { return total_ns_; }
  // Calls recorded per op name ("mul", "matmul", "FusionGroup").
  std::unordered_map<std::string, uint64_t> counts_by_kind() const;

  // A run of compiled code ended under `plan` (the planner's current plan; null or
  // empty when nothing is planned): the report's "planned memory" lists each one.
  void note_memory_plan(std::shared_ptr<const MemoryPlan> plan);

  // Installs this profiler for the current thread's interpreter until stop().
  void start();
  void stop();

 private:
  struct Entry {
    OpId op;
    uint32_t line = 0, col = 0;
    std::string function;  // the graph the node belongs to
    uint64_t ns = 0;
    uint64_t count = 0;
  };
  size_t entry_for(const Node* node);
  void write_plans(std::ostringstream& out) const;
  void write_fusion(std::ostringstream& out) const;

  std::vector<Entry> entries_;
  // Nodes of freed graphs may be reused at the same address: an entry is reused
  // only when its op and location still match.
  std::unordered_map<const Node*, size_t> index_;
  // Per Code name, the last plan its runs followed.
  std::map<std::string, std::shared_ptr<const MemoryPlan>> plans_;
  uint64_t total_ns_ = 0;
  // Fusion's counters while this profiler ran: at its start, and added up at each stop.
  FusionCounters fusion_start_, fusion_seen_;
  NativeCounters native_start_, native_seen_;
  size_t peak_bytes_ = 0;
  size_t start_bytes_ = 0;
};

// The profiler installed on this thread, or null (checked once per kernel call).
Profiler* active_profiler();

}  // namespace tsl
