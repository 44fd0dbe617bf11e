// The text of a function's graphs, for the dumps and the REPL (`--dump=ir`, `:graph`,
// `:opt`, `:passes`, `--dump=grad`, `:grad`): as written, after the optimization
// pipeline, or pass by pass; and the split gradient graphs of a function.
#include "frontend/compilation_unit.h"
#include "frontend/gradient_view.h"
#include "ir/autodiff/differentiate.h"
#include "ir/passes/pipeline.h"
#include "ir/passes/pipeline_trace.h"

namespace tsl {
namespace {

std::string node_count(size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

// Runs the pipeline on `g` in place (as Function::code() does to its copy: the graph
// that runs) and returns the comment line that says how many nodes the pipeline left.
std::string optimize_for_view(Graph& g) {
  size_t before = count_nodes(g);
  run_pipeline(g, PipelineKind::Function);
  return "# " + g.name() + " after the optimization pipeline: " + node_count(count_nodes(g)) +
         " (" + node_count(before) + " as written)\n";
}

// `g` as text in `view`.
std::string view_text(const Graph& g, GraphView view, PrintOptionsIR options) {
  if (view == GraphView::Passes) return trace_optimize(g, options);
  if (view == GraphView::AsWritten) return print_graph(g, options);
  std::unique_ptr<Graph> copy = g.clone();
  std::string header = optimize_for_view(*copy);
  return header + print_graph(*copy, options);
}

}  // namespace

std::string CompilationUnit::graph_text(FunctionDecl& decl, const SourceRange& use,
                                        GraphView view) {
  if (!decl.transform) {
    return view_text(compile_function(decl, use).function->graph(), view, {.with_lines = true});
  }
  // As written, a transform (`g = grad(f)`) shows the gradient of f it builds on,
  // split into forward and backward (`graph(g)` teaches autodiff); optimized, the
  // graph it runs: f inlined and differentiated, forward and backward in one, fused.
  // vmap(f) differentiates nothing: it shows its batched graph either way.
  autodiff::TransformKind kind = decl.transform->kind;
  bool batched = kind == autodiff::TransformKind::Vmap;
  if ((view == GraphView::AsWritten && !batched) || kind == autodiff::TransformKind::VjpFn) {
    return gradient_text(*decl.transform->inner, decl.transform->argnums, use, false, view);
  }
  return view_text(compile_transform(decl, use, {}).function->graph(), view, {.with_lines = true});
}

autodiff::Gradient CompilationUnit::gradient_graphs(FunctionDecl& decl,
                                                    const std::vector<size_t>& wrt,
                                                    const SourceRange& use, size_t* num_seeds) {
  const FunctionDecl::Compiled& compiled = compile_function(decl, use);
  std::unique_ptr<Graph> forward = compiled.function->graph().clone();
  inline_function_calls(*forward);
  autodiff::JointOptions options;
  options.function_name = decl.name;
  autodiff::JointGraph joint = autodiff::build_joint(*forward, wrt, options);
  autodiff::Gradient gradient = autodiff::split(joint);
  gradient.f->set_name(decl.name + ".forward");
  gradient.df->set_name(decl.name + ".backward");
  verify(*gradient.f);
  verify(*gradient.df);
  if (num_seeds) *num_seeds = joint.seeded_outputs.size();
  return gradient;
}

std::string CompilationUnit::gradient_text(FunctionDecl& decl, std::vector<size_t> wrt,
                                           const SourceRange& use, bool dot, GraphView view) {
  if (wrt.empty()) {
    for (size_t i = 0; i < decl.param_types.size(); ++i) {
      if (decl.param_types[i]->is_tensor()) wrt.push_back(i);
    }
  }
  size_t num_seeds = 0;
  autodiff::Gradient gradient = gradient_graphs(decl, wrt, use, &num_seeds);
  std::string names;
  for (size_t i : wrt) names += (names.empty() ? "" : ", ") + decl.param_names[i];
  if (dot) {
    if (view == GraphView::Optimized) {
      optimize_for_view(*gradient.f);
      optimize_for_view(*gradient.df);
    }
    return gradient_picture(*gradient.f, *gradient.df, gradient.num_real_outputs, num_seeds,
                            decl.name, names);
  }
  std::string out;
  out += "# " + decl.name + ".forward returns " + std::to_string(gradient.num_real_outputs) +
         " result(s), then " + std::to_string(gradient.num_captures) +
         " value(s) captured for the backward\n";
  out += view_text(*gradient.f, view,
                   {.with_lines = true, .first_captured_output = gradient.num_real_outputs});
  out += "# " + decl.name +
         ".backward takes the result's gradient and the captured values, and "
         "returns the gradients of " +
         names + "\n";
  out += view_text(*gradient.df, view, {.with_lines = true});
  return out;
}

}  // namespace tsl
