// `:code f` and `--dump=code`: a function's Code and its gradient's two-stage Code,
// built the way calls and the grad transform build them.
#include "frontend/repl/code_view.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "frontend/compilation_unit.h"
#include "ir/autodiff/differentiate.h"
#include "runtime/autograd/record.h"
#include "runtime/exec/function.h"
#include "runtime/memory/planner.h"

namespace tsl {
namespace {

// The parameters a gradient is taken for: Tensors whose dtype is floating or unknown.
std::vector<size_t> float_tensor_params(const FunctionDecl& decl) {
  std::vector<size_t> wrt;
  for (size_t i = 0; i < decl.param_types.size(); ++i) {
    const TypePtr& t = decl.param_types[i];
    if (t->is_tensor() && (!t->tensor_dtype() || is_floating(*t->tensor_dtype()))) {
      wrt.push_back(i);
    }
  }
  return wrt;
}

// The gradient of `decl` for `wrt`, split as autodiff::split does for the grad
// transform (calls inlined first). Throws SourceError for a non-differentiable op.
autodiff::Gradient gradient_of(CompilationUnit& unit, FunctionDecl& decl,
                               const std::vector<size_t>& wrt, const SourceRange& use) {
  const FunctionDecl::Compiled& compiled = unit.compile_function(decl, use);
  std::unique_ptr<Graph> forward = compiled.function->graph().clone();
  inline_function_calls(*forward);
  autodiff::JointOptions options;
  options.function_name = decl.name;
  autodiff::Gradient gradient = autodiff::split(autodiff::build_joint(*forward, wrt, options));
  gradient.f->set_name(decl.name + ".forward");
  gradient.df->set_name(decl.name + ".backward");
  verify(*gradient.f);
  verify(*gradient.df);
  return gradient;
}

std::string gradient_code_text(CompilationUnit& unit, FunctionDecl& decl, const SourceRange& use) {
  std::vector<size_t> wrt = float_tensor_params(decl);
  if (decl.transform || wrt.empty()) {
    return "# " + decl.name + ": no gradient Code (it needs a float Tensor parameter)\n";
  }
  autodiff::Gradient gradient;
  try {
    gradient = gradient_of(unit, decl, wrt, use);
  } catch (const SourceError& e) {
    return "# " + decl.name + ": no gradient Code (" + e.message() + ")\n";
  }
  std::string names;
  for (size_t i : wrt) names += (names.empty() ? "" : ", ") + decl.param_names[i];
  return "# " + decl.name + " for the gradients of " + names +
         ": stage 0 runs the forward, stage 1 the backward on the same registers\n" +
         compile_gradient(gradient)->dump();
}

}  // namespace

std::string code_text(CompilationUnit& unit, FunctionDecl& decl, const SourceRange& use,
                      CodeView view) {
  std::string out;
  if (view != CodeView::Gradient) {
    const FunctionDecl::Compiled& compiled = unit.compile_function(decl, use);
    out += compiled.function->code().dump();
  }
  if (view == CodeView::Both) out += "\n";
  if (view != CodeView::Function) out += gradient_code_text(unit, decl, use);
  return out;
}

namespace {

// `function` and the functions its Code calls, each once, callers first.
void collect_called(Function& function, std::vector<Function*>& out) {
  if (std::find(out.begin(), out.end(), &function) != out.end()) return;
  out.push_back(&function);
  const Code& code = function.code();
  for (const Instruction& inst : code.instructions()) {
    if (inst.kind == Instruction::Kind::Call && inst.callee) collect_called(*inst.callee, out);
  }
}

}  // namespace

std::string memplan_text(CompilationUnit& unit, FunctionDecl& decl, const SourceRange& use) {
  std::string out;
  auto add_plan = [&](const Code& code, const std::string& what) {
    MemoryPlanner* planner = code.memory_planner();
    std::shared_ptr<const MemoryPlan> plan = planner ? planner->plan() : nullptr;
    if (!plan) return false;
    out += "# " + what + "\n" + plan->chart() + "\n";
    return true;
  };
  unit.compile_function(decl, use);
  std::vector<Function*> functions;
  for (const FunctionDecl::Compiled& c : decl.compiled) collect_called(*c.function, functions);
  bool any = false;
  for (Function* f : functions) {
    std::string who = f->name() == decl.name ? decl.name : decl.name + " calls " + f->name();
    any |= add_plan(f->code(), who + ": the Code its calls run");
    for (const auto& code : f->gradient_cache().codes()) {
      any |= add_plan(*code, who + " on the autograd tape: forward and backward, one run");
    }
  }
  if (!any) {
    out = "# " + decl.name + " has not run yet: a Code is planned from what its first run " +
          "allocates (call it, then :memplan " + decl.name + "; a transform such as grad(" +
          decl.name + ") has a plan of its own)\n";
  }
  if (!memory_planning_enabled()) {
    out += "# memory planning is off (--no-memplan or TSL_NO_MEMPLAN)\n";
  }
  return out;
}

}  // namespace tsl
