// The table of named passes and the pass driver; see pass_registry.h.
#include "ir/passes/pass_registry.h"

#include <deque>
#include <mutex>

#include "ir/batching/vmap.h"
#include "ir/ir_parser.h"
#include "ir/passes/canonicalize.h"
#include "ir/passes/common_subexpression_elimination.h"
#include "ir/passes/constant_folding.h"
#include "ir/passes/dead_code_elimination.h"
#include "ir/passes/fuse_elementwise.h"
#include "ir/passes/inline_calls.h"
#include "ir/passes/loop_invariant_code_motion.h"
#include "ir/passes/pipeline.h"
#include "ir/passes/propagate_shapes.h"
#include "ir/passes/simplify.h"
#include "ir/passes/specialize_undefined.h"

namespace tsl {
namespace {

std::deque<PassInfo>& passes() {
  // Built-in passes are listed here rather than registered by static objects of their
  // files: a static library drops objects nothing refers to.
  static std::deque<PassInfo> table = {
      {"dce", "dead-code elimination: removes unused nodes without side effects",
       [](Graph& g) { eliminate_dead_code(g); }},
      {"constant-fold", "constant folding: runs pure ops on constant inputs, If/Loop on constants",
       [](Graph& g) { fold_constants(g); }},
      {"cse", "common-subexpression elimination: reuses equal pure nodes that dominate",
       [](Graph& g) { eliminate_common_subexpressions(g); }},
      {"simplify", "algebraic simplification exact in IEEE arithmetic (x * 1, x - 0, ...)",
       [](Graph& g) { simplify_arithmetic(g); }},
      {"licm", "loop-invariant code motion: moves invariant pure nodes before their Loop",
       [](Graph& g) { hoist_loop_invariants(g); }},
      {"canonicalize", "canonical forms: commutative operand order, tuple build/take apart",
       [](Graph& g) { canonicalize(g); }},
      {"specialize-undefined",
       "undefined (zero) gradients: AutogradAdd(x, Undefined) -> x, GradOf(Undefined...) removed",
       [](Graph& g) { specialize_undefined(g); }},
      {"propagate-shapes",
       "shape and dtype classes: removes sum_to_size/expand/to that provably change nothing",
       [](Graph& g) { propagate_shapes(g); }},
      {"optimize", "the default pipeline: the passes above and dce to a fixed point",
       [](Graph& g) { optimize(g); }},
      {"fuse", "elementwise fusion: chains and trees of EW ops become one FusionGroup",
       [](Graph& g) { fuse_elementwise(g); }},
      {"inline", "inlining: CallFunction nodes become the body of the IR text's graph they name",
       [](Graph& g) { inline_calls(g, ir_text_callee); }},
      {"vmap", "vmap (ir/batching): the graph batched over dim 0 of every Tensor input",
       [](Graph& g) { batching::vmap_every_tensor_input(g); }},
  };
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
