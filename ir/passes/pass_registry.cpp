// The table of named passes and the pass driver; see pass_registry.h.
#include "ir/passes/pass_registry.h"

#include <deque>
#include <mutex>

#include "ir/batching/vmap.h"
#include "ir/ir_parser.h"
#include "ir/passes/inline_calls.h"
#include "ir/passes/pipeline.h"

namespace tsl {
namespace {

std::deque<PassInfo>& passes() {
  // The pipeline's steps (ir/passes/pipeline.h), then the passes that need more than a
  // graph or run the pipeline whole. Listed here rather than registered by static
  // objects of their files: a static library drops objects nothing refers to.
  static std::deque<PassInfo> table = [] {
    std::deque<PassInfo> t;
    auto add_steps = [&](std::span<const PipelineStep> steps) {
      for (const PipelineStep& step : steps) {
        t.push_back({std::string(step.name), std::string(step.description),
                     [run = step.run](Graph& g) { run(g); }});
      }
    };
    add_steps(optimization_steps());
    t.push_back({"optimize", "the optimization rounds: the passes above to a fixed point",
                 [](Graph& g) { optimize(g); }});
    add_steps(final_steps());
    t.push_back({"inline",
                 "inlining: CallFunction nodes become the body of the IR text's graph they name",
                 [](Graph& g) { inline_calls(g, ir_text_callee); }});
    t.push_back({"vmap", "vmap (ir/batching): the graph batched over dim 0 of every Tensor input",
                 [](Graph& g) { batching::vmap_every_tensor_input(g); }});
    return t;
  }();
  return table;
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::string known_pass_list() {
  std::string out;
  for (const PassInfo& p : passes()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace

const std::deque<PassInfo>& all_passes() { return passes(); }

const PassInfo* find_pass(std::string_view name) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const PassInfo& p : passes()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

void register_pass(std::string name, std::string description, GraphPass run) {
  TSL_INTERNAL_ASSERT(find_pass(name) == nullptr, "pass '", name, "' is registered twice");
  std::lock_guard<std::mutex> lock(registry_mutex());
  passes().push_back({std::move(name), std::move(description), std::move(run)});
}

void check_pass_names(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (!find_pass(name)) {
      TSL_ERROR("unknown pass '", name, "'; the known passes are: ", known_pass_list());
    }
  }
}

void run_passes(Graph& g, const std::vector<std::string>& names, bool verify_after_each) {
  check_pass_names(names);
  for (const std::string& name : names) {
    find_pass(name)->run(g);
    if (!verify_after_each) continue;
    try {
      verify(g);
    } catch (const InternalError& e) {
      throw InternalError(__FILE__, __LINE__, str("after pass '", name, "': ", e.what()));
    }
  }
}

}  // namespace tsl
