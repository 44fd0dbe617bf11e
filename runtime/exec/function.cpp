// Function: a graph, the Code compiled once from its copy through the pipeline, and
// the switches of optimization and result checks. See runtime/exec/function.h.
#include "runtime/exec/interpreter.h"

#include <cstdlib>
#include <string_view>

#include "ir/autodiff/differentiate.h"
#include "ir/passes/inline_calls.h"
#include "ir/passes/pipeline.h"
#include "runtime/autograd/record.h"
#include "runtime/exec/function.h"

namespace tsl {

// ---- Function ---------------------------------------------------------------------------

namespace {

std::atomic<bool>& optimization_flag() {
  static std::atomic<bool> on = [] {
    std::string_view no_opt = std::getenv("TSL_NO_OPT") ? std::getenv("TSL_NO_OPT") : "";
    return no_opt.empty() || no_opt == "0";
  }();
  return on;
}

bool switches_grad_mode(const Block* b) {
  for (const Node* n : *b) {
    if (n->op() == OpId::set_grad_enabled) return true;
    for (const Block* nb : n->blocks()) {
      if (switches_grad_mode(nb)) return true;
    }
  }
  return false;
}

// The graph Code is compiled from; see Note [Optimizing compiled functions]. Eager
// code that switches grad mode (`with no_grad():`) runs as written: merging `x * 2`
// inside the block with one outside would change which result requires grad.
std::shared_ptr<const Graph> graph_to_compile(const std::shared_ptr<Graph>& graph, bool eager) {
  if (!optimization_enabled()) return graph;
  if (eager && switches_grad_mode(graph->block())) return graph;
  std::shared_ptr<Graph> copy = graph->clone();
  run_pipeline(*copy, eager ? PipelineKind::Eager : PipelineKind::Function);
  return copy;
}

}  // namespace

bool optimization_enabled() { return optimization_flag().load(std::memory_order_relaxed); }

void set_optimization_enabled(bool on) { optimization_flag().store(on); }

void inline_function_calls(Graph& g) {
  inline_calls(g, [](const Node* call) {
    return &static_cast<Function&>(call->attr("fn").to_object()).graph();
  });
}

Function::Function(std::string name, std::shared_ptr<Graph> graph)
    : name_(std::move(name)), graph_(std::move(graph)) {}

std::shared_ptr<const Code> compile_gradient(const autodiff::Gradient& gradient) {
  std::shared_ptr<Graph> df = gradient.df;
  if (optimization_enabled()) {
    size_t seeds = df->inputs().size() - gradient.num_captures;
    if (auto branched = autodiff::branch_on_defined_seed(*df, seeds)) df = std::move(branched);
  }
  return std::make_shared<const Code>(graph_to_compile(gradient.f, false),
                                      graph_to_compile(df, false), gradient.num_real_outputs,
                                      gradient.num_captures);
}

const Code& Function::code() {
  std::call_once(compiled_,
                 [&] { code_ = std::make_unique<Code>(graph_to_compile(graph_, eager_), eager_); });
  return *code_;
}

autograd::EagerSite& Function::gradient_cache() {
  if (!gradient_cache_) gradient_cache_ = std::make_shared<autograd::EagerSite>();
  return *gradient_cache_;
}

std::vector<IValue> Function::run(std::vector<IValue> inputs) {
  InterpreterState state(code());
  return state.run(std::move(inputs));
}

}  // namespace tsl
