// The `:passes` view of the optimization pipeline; see pipeline_trace.h.
#include "ir/passes/pipeline_trace.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "ir/passes/pipeline.h"

namespace tsl {
namespace {

// Gives every value of a graph the name it prints with, so that later prints name it
// the same: the printer numbers unnamed values in print order, and a pass removing
// one node would otherwise renumber every value after it. Values named for the first
// time later (made by a pass) get numbers above all earlier ones.
class NameFreezer {
 public:
  void freeze(Graph& g) {
    used_.clear();
    for (Value* v : g.inputs()) name(v);
    freeze_block(g.block());
  }

 private:
  // Print order (printer.cpp): a node's outputs, then its blocks' params and bodies.
  void freeze_block(Block* b) {
    for (Node* n : *b) {
      for (Value* out : n->outputs()) name(out);
      for (Block* inner : n->blocks()) {
        for (Value* p : inner->params()) name(p);
        freeze_block(inner);
      }
    }
  }

  // The printer's rule: a source name made unique with .1, .2, ...; else a number.
  void name(Value* v) {
    std::string base = v->debug_name();
    std::string n = base;
    if (base.empty()) {
      do {
        n = std::to_string(next_temp_++);
      } while (used_.count(n));
    } else {
      for (int k = 1; used_.count(n); ++k) n = base + "." + std::to_string(k);
    }
    used_.insert(n);
    v->set_debug_name(std::move(n));
  }

  std::unordered_set<std::string> used_;
  size_t next_temp_ = 0;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Beyond this many table cells the middle of a diff is shown as all removed, then all
// added, rather than aligned (the table would take too much memory).
constexpr size_t kMaxDiffCells = size_t{1} << 24;

// Appends the diff of a[ab, ae) and b[bb, be), neither sharing a first or last line.
void diff_middle(const std::vector<std::string>& a, size_t ab, size_t ae,
                 const std::vector<std::string>& b, size_t bb, size_t be, std::string& out) {
  size_t n = ae - ab, m = be - bb;
  if ((n + 1) * (m + 1) > kMaxDiffCells) {
    for (size_t i = ab; i < ae; ++i) out += "- " + a[i] + "\n";
    for (size_t j = bb; j < be; ++j) out += "+ " + b[j] + "\n";
    return;
  }
  // lcs[i][j]: the longest common subsequence of a[ab+i, ae) and b[bb+j, be).
  std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      at(i, j) =
          a[ab + i] == b[bb + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[ab + i] == b[bb + j]) {
      out += "  " + a[ab + i++] + "\n";
      ++j;
    } else if (j == m || (i < n && at(i + 1, j) >= at(i, j + 1))) {
      out += "- " + a[ab + i++] + "\n";
    } else {
      out += "+ " + b[bb + j++] + "\n";
    }
  }
}

std::string nodes(size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

}  // namespace

std::string line_diff(const std::string& before, const std::string& after) {
  std::vector<std::string> a = split_lines(before), b = split_lines(after);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;
  std::string out;
  for (size_t i = 0; i < prefix; ++i) out += "  " + a[i] + "\n";
  diff_middle(a, prefix, a.size() - suffix, b, prefix, b.size() - suffix, out);
  for (size_t i = a.size() - suffix; i < a.size(); ++i) out += "  " + a[i] + "\n";
  return out;
}

std::string trace_optimize(const Graph& g, PrintOptionsIR options) {
  std::unique_ptr<Graph> copy = g.clone();
  NameFreezer names;
  names.freeze(*copy);
  std::string before = print_graph(*copy, options);
  size_t nodes_before = count_nodes(*copy);
  std::string out = "# " + copy->name() + ": " + nodes(nodes_before) + " before the pipeline\n";
  // One pass's line: "unchanged", or the node count and the diff against the graph
  // before it.
  auto show = [&](std::string_view pass, bool changed) {
    if (!changed) {
      out += "# " + std::string(pass) + ": unchanged\n";
      return;
    }
    names.freeze(*copy);
    std::string after = print_graph(*copy, options);
    out += "# " + std::string(pass) + ": " + nodes(count_nodes(*copy)) + " after it\n";
    out += line_diff(before, after);
    before = std::move(after);
  };
  int shown_round = 0;
  // The pipeline that Function::code() runs, rounds then the final steps (fusion).
  run_pipeline(*copy, PipelineKind::Function,
               [&](std::string_view pass, int round, bool changed, const Graph&) {
                 if (round != shown_round) {
                   out += round == 0 ? std::string("# after the rounds\n")
                                     : "# round " + std::to_string(round) + "\n";
                   shown_round = round;
                 }
                 show(pass, changed);
               });
  out += "# " + copy->name() + ": " + nodes(count_nodes(*copy)) + " after the pipeline (" +
         nodes(nodes_before) + " before)\n";
  return out;
}

}  // namespace tsl
