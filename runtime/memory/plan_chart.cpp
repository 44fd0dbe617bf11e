// MemoryPlan's text views for learners (`:memplan f`, `tsl --dump=memplan`): each
// intermediate's lifetime and offset, and a map of the arena over time.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "runtime/exec/report_text.h"
#include "runtime/memory/planner.h"

namespace tsl {
namespace {

constexpr size_t kMaxRows = 64;  // table rows before "... and N more"
constexpr size_t kMapRows = 12;  // arena map height, at most

std::string bytes_text(size_t n) {
  char buf[32];
  if (n >= (size_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(n) / (1 << 20));
  } else if (n >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%zu B", n);
  }
  return buf;
}

// The label of the k-th planned block in the table and the map.
char block_letter(size_t k) {
  static const char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  return k < sizeof kLetters - 1 ? kLetters[k] : '*';
}

// Time columns: column c covers steps [c * steps / width, (c + 1) * steps / width).
struct TimeAxis {
  uint32_t steps;
  size_t width;
  size_t column(uint32_t step) const {
    return std::min(width - 1, static_cast<size_t>(step) * width / std::max<uint32_t>(steps, 1));
  }
};

// "; stage 1 from instruction 12" for a two-stage run.
std::string stage_text(const MemoryPlan& plan) {
  std::string s;
  for (size_t k = 1; k < plan.stage_steps.size(); ++k) {
    s += "; stage " + std::to_string(k) + " from " + std::to_string(plan.stage_steps[k]);
  }
  return s;
}

// Marks the columns where a later stage begins with ':' where nothing else is drawn.
void mark_stages(std::string& line, const MemoryPlan& plan, const TimeAxis& axis) {
  for (size_t k = 1; k < plan.stage_steps.size(); ++k) {
    char& c = line[axis.column(plan.stage_steps[k])];
    if (c == '.') c = ':';
  }
}

std::string lifetime_bar(const PlannedBlock& b, const MemoryPlan& plan, const TimeAxis& axis) {
  std::string bar(axis.width, '.');
  size_t from = axis.column(b.alloc_step), to = axis.column(b.free_step);
  for (size_t c = from; c <= to; ++c) bar[c] = '#';
  mark_stages(bar, plan, axis);
  return "[" + bar + "]";
}

std::vector<const PlannedBlock*> planned_blocks(const MemoryPlan& plan) {
  std::vector<const PlannedBlock*> out;
  for (const PlannedBlock& b : plan.blocks) {
    if (b.planned) out.push_back(&b);
  }
  return out;
}

void write_table(std::ostringstream& out, const MemoryPlan& plan,
                 const std::vector<const PlannedBlock*>& blocks, const TimeAxis& axis) {
  out << "  id  value         op                   bytes      offset  lifetime (instructions 0.."
      << (axis.steps == 0 ? 0 : axis.steps - 1) << stage_text(plan) << ")\n";
  for (size_t k = 0; k < blocks.size() && k < kMaxRows; ++k) {
    const PlannedBlock& b = *blocks[k];
    out << "  " << block_letter(k) << "   " << pad(b.name, 13) << " " << pad(b.op, 16) << " "
        << pad(std::to_string(b.nbytes), 9, true) << " " << pad(std::to_string(b.offset), 11, true)
        << "  " << lifetime_bar(b, plan, axis) << "\n";
  }
  if (blocks.size() > kMaxRows) out << "  ... and " << blocks.size() - kMaxRows << " more\n";
}

// The byte bands of the map, bottom up: the blocks' own boundaries when there are few
// of them (each row then holds whole blocks), else equal slices of the arena.
std::vector<size_t> map_bands(const MemoryPlan& plan,
                              const std::vector<const PlannedBlock*>& blocks) {
  std::vector<size_t> bounds{0, plan.arena_bytes};
  for (const PlannedBlock* b : blocks) {
    bounds.push_back(b->offset);
    bounds.push_back(b->offset + b->size);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  if (bounds.size() - 1 <= kMapRows) return bounds;
  bounds.clear();
  for (size_t r = 0; r <= kMapRows; ++r) bounds.push_back(plan.arena_bytes * r / kMapRows);
  return bounds;
}

// The arena (offset upwards) against time: each cell shows a block that holds bytes of
// that band at that time.
void write_map(std::ostringstream& out, const MemoryPlan& plan,
               const std::vector<const PlannedBlock*>& blocks, const TimeAxis& axis) {
  if (plan.arena_bytes == 0) return;
  std::vector<size_t> bands = map_bands(plan, blocks);
  out << "\n  the arena over time (rows: bytes from the offset shown; '.' free):\n";
  out << "  " << pad(std::to_string(plan.arena_bytes), 10, true) << " +"
      << std::string(axis.width, '-') << "+\n";
  for (size_t r = bands.size() - 1; r-- > 0;) {
    size_t lo = bands[r], hi = bands[r + 1];
    std::string line(axis.width, '.');
    for (size_t k = 0; k < blocks.size(); ++k) {
      const PlannedBlock& b = *blocks[k];
      if (b.offset >= hi || b.offset + b.size <= lo) continue;
      for (size_t c = axis.column(b.alloc_step); c <= axis.column(b.free_step); ++c) {
        if (line[c] == '.') line[c] = block_letter(k);
      }
    }
    mark_stages(line, plan, axis);
    out << "  " << pad(std::to_string(lo), 10, true) << " |" << line << "|\n";
  }
}

}  // namespace

std::string MemoryPlan::summary() const {
  std::ostringstream out;
  out << "arena " << bytes_text(arena_bytes) << " for " << num_planned << " intermediate"
      << (num_planned == 1 ? "" : "s") << "; lower bound " << bytes_text(lower_bound_bytes);
  if (lower_bound_bytes > 0) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2f",
                  static_cast<double>(arena_bytes) / static_cast<double>(lower_bound_bytes));
    out << " (arena/bound " << ratio << ")";
  }
  out << "; " << bytes_text(planned_bytes) << " without sharing";
  return out.str();
}

std::string MemoryPlan::chart(size_t width) const {
  std::ostringstream out;
  out << "memory plan of " << function << " (" << num_stages << " stage"
      << (num_stages == 1 ? "" : "s") << ", traced over " << num_steps << " instructions)\n";
  out << "  " << summary() << "\n";
  size_t outliving = blocks.size() - num_planned;
  out << "  from the allocator: " << outliving << " block"
      << (outliving == 1 ? " that outlives" : "s that outlive")
      << " the run (outputs, kept values), " << bytes_text(unplanned_bytes) << "\n";
  std::vector<const PlannedBlock*> planned = planned_blocks(*this);
  if (planned.empty()) return out.str();
  TimeAxis axis{num_steps, std::max<size_t>(width, 8)};
  out << "\n";
  write_table(out, *this, planned, axis);
  write_map(out, *this, planned, axis);
  return out.str();
}

}  // namespace tsl
