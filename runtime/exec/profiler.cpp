// The profiler; see profiler.h.
#include "runtime/exec/profiler.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "runtime/exec/report_text.h"
#include "runtime/tensor/storage.h"

namespace tsl {
namespace {
thread_local Profiler* t_profiler = nullptr;

std::string format_ms(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e6);
  return buf;
}

}  // namespace

Profiler* active_profiler() { return t_profiler; }

void Profiler::start() {
  t_profiler = this;
  start_bytes_ = live_storage_bytes();
  reset_peak_live_storage_bytes();
  fusion_start_ = fusion_counters();
  native_start_ = native_counters();
}

void Profiler::stop() {
  peak_bytes_ = std::max(peak_bytes_, peak_live_storage_bytes());
  if (t_profiler != this) return;
  t_profiler = nullptr;
  FusionCounters f = fusion_counters();
  fusion_seen_.fused += f.fused - fusion_start_.fused;
  fusion_seen_.fallback += f.fallback - fusion_start_.fallback;
  fusion_seen_.compiled += f.compiled - fusion_start_.compiled;
  NativeCounters n = native_counters();
  native_seen_.cache_hits += n.cache_hits - native_start_.cache_hits;
  native_seen_.compiled += n.compiled - native_start_.compiled;
  native_seen_.failed += n.failed - native_start_.failed;
}

size_t Profiler::entry_for(const Node* node) {
  auto it = index_.find(node);
  if (it != index_.end()) {
    const Entry& e = entries_[it->second];
    if (e.op == node->op() && e.line == node->range().line && e.col == node->range().col)
      return it->second;
  }
  Entry e;
  e.op = node->op();
  e.line = node->range().line;
  e.col = node->range().col;
  if (const Graph* g = node->owning_graph()) e.function = g->name();
  entries_.push_back(std::move(e));
  index_[node] = entries_.size() - 1;
  return entries_.size() - 1;
}

void Profiler::record(const Node* node, uint64_t ns) {
  total_ns_ += ns;
  if (!node) return;
  Entry& e = entries_[entry_for(node)];
  e.ns += ns;
  ++e.count;
}

std::unordered_map<std::string, uint64_t> Profiler::counts_by_kind() const {
  std::unordered_map<std::string, uint64_t> out;
  for (const Entry& e : entries_) out[std::string(op_info(e.op).name)] += e.count;
  return out;
}

std::string Profiler::report(size_t top_nodes) const {
  struct Kind {
    uint64_t ns = 0, count = 0;
  };
  std::map<std::string, Kind> kinds;
  for (const Entry& e : entries_) {
    Kind& k = kinds[std::string(op_info(e.op).name)];
    k.ns += e.ns;
    k.count += e.count;
  }
  std::vector<std::pair<std::string, Kind>> rows(kinds.begin(), kinds.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  double total = total_ns_ ? static_cast<double>(total_ns_) : 1.0;
  std::ostringstream out;
  out << "profile: " << format_ms(total_ns_) << " ms in kernels; peak live tensor memory "
      << (peak_bytes_ > start_bytes_ ? peak_bytes_ - start_bytes_ : 0) << " bytes above the "
      << start_bytes_ << " live at the start\n";
  out << pad("op kind", 24) << pad("time ms", 12, true) << pad("share", 8, true)
      << pad("calls", 10, true) << "\n";
  for (const auto& [name, k] : rows) {
    char share[16];
    std::snprintf(share, sizeof share, "%.1f%%", 100.0 * static_cast<double>(k.ns) / total);
    out << pad(name, 24) << pad(format_ms(k.ns), 12, true) << pad(share, 8, true)
        << pad(std::to_string(k.count), 10, true) << "\n";
  }
  std::vector<const Entry*> nodes;
  for (const Entry& e : entries_) nodes.push_back(&e);
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const Entry* a, const Entry* b) { return a->ns > b->ns; });
  if (nodes.size() > top_nodes) nodes.resize(top_nodes);
  out << "slowest nodes:\n";
  for (const Entry* e : nodes) {
    std::string where = e->function + (e->line ? ":" + std::to_string(e->line) : "");
    out << "  " << pad(std::string(op_info(e->op).name), 22) << pad(where, 22)
        << pad(format_ms(e->ns), 12, true) << " ms" << pad(std::to_string(e->count), 10, true)
        << " calls\n";
  }
  write_plans(out);
  write_fusion(out);
  return out.str();
}

// "fusion": how the FusionGroup runs ran (Note [Compiled fusion kernels]).
void Profiler::write_fusion(std::ostringstream& out) const {
  const FusionCounters& f = fusion_seen_;
  if (f.fused + f.fallback == 0) return;
  out << "fusion: " << f.fused + f.fallback << " FusionGroup runs: " << f.compiled << " compiled, "
      << f.fused - f.compiled << " on the chunk loop, " << f.fallback << " op by op; kernels "
      << native_seen_.compiled << " compiled, " << native_seen_.cache_hits
      << " loaded from the cache, " << native_seen_.failed << " failed";
  const NativeJitOptions& o = native_jit_options();
  const char* mode = o.mode == NativeJitOptions::Mode::Off    ? "off"
                     : o.mode == NativeJitOptions::Mode::Sync ? "sync"
                                                              : "async";
  out << " (TSL_FUSION_JIT=" << mode << ", cache " << o.cache_dir << "/kernels)\n";
}

void Profiler::note_memory_plan(std::shared_ptr<const MemoryPlan> plan) {
  if (plan && plan->num_planned > 0) plans_[plan->function] = std::move(plan);
}

// "planned memory": the arenas of the functions that ran planned, as seed 002's report
// gives the memory it planned.
void Profiler::write_plans(std::ostringstream& out) const {
  if (plans_.empty()) {
    out << "planned memory: none" << (memory_planning_enabled() ? "" : " (planning is off)")
        << "\n";
    return;
  }
  size_t arena = 0, bound = 0, unshared = 0;
  for (const auto& [name, plan] : plans_) {
    arena += plan->arena_bytes;
    bound += plan->lower_bound_bytes;
    unshared += plan->planned_bytes;
  }
  out << "planned memory: " << arena << " bytes of arenas for " << plans_.size() << " function"
      << (plans_.size() == 1 ? "" : "s") << " (lower bound " << bound << ", " << unshared
      << " without sharing):\n";
  for (const auto& [name, plan] : plans_) out << "  " << name << ": " << plan->summary() << "\n";
}

}  // namespace tsl
