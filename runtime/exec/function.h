// A compiled TSL function: a typed graph and its Code, callable from the interpreter
// (CallFunction), from top-level code and from C++.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "runtime/exec/interpreter.h"

namespace tsl {

namespace autodiff {
struct Gradient;
}

// Note [Optimizing compiled functions]
// A Function keeps its graph as the frontend or autodiff built it: that graph is what
// the dumps show (`--dump=ir`, `:graph`), what callers inline and what transforms
// differentiate. Its Code is compiled, once, from a copy that went through the pipeline
// of ir/passes/pipeline.h (the optimizer, then elementwise fusion, run by
// runtime/fusion/fusion.h, then the verifier), so every function, top-level statement
// and gradient graph runs optimized while the text a learner reads stays the one
// written. `tsl --no-opt` or TSL_NO_OPT=1 compiles the graph as it is (no fusion
// either), for debugging the passes.

// Whether Function::code() optimizes. On unless the environment variable TSL_NO_OPT is
// set to something other than "" or "0"; `tsl --no-opt` turns it off.
bool optimization_enabled();
void set_optimization_enabled(bool on);

// Whether the interpreter checks each op's tensor results against the dtypes their static
// types name (Note [Result rules] in runtime/ops.def): a mismatch is an internal error.
// On with TSL_CHECK_TYPES=1 and in sanitizer builds; tests turn it on.
bool result_type_checks_enabled();
void set_result_type_checks(bool on);

// The two-stage Code of a gradient (autodiff::split's f and df; see Note [Compiling a
// graph to Code]): f and df are each optimized, fused and verified as Function::code()
// does, unless optimization is off.
std::shared_ptr<const Code> compile_gradient(const autodiff::Gradient& gradient);

class Function : public ObjectImpl {
 public:
  Function(std::string name, std::shared_ptr<Graph> graph);

  const std::string& name() const { return name_; }
  const Graph& graph() const { return *graph_; }
  std::shared_ptr<const Graph> graph_ptr() const { return graph_; }
  // The compiled program (built on first use, from an optimized copy of the graph;
  // see Note [Optimizing compiled functions]).
  const Code& code();
  // Runs the function. `inputs` are all graph inputs (hidden globals included).
  std::vector<IValue> run(std::vector<IValue> inputs);

  std::string repr() const override { return "<function " + name_ + ">"; }

  // Top-level code: its ops record on the eager tape (see runtime/autograd). Set
  // before the first run.
  void set_eager(bool eager) { eager_ = eager; }
  // The executor's cache for calls on the eager tape: this function differentiated
  // and compiled (to a two-stage Code) once per pattern of input dtypes, list lengths
  // and inputs that require grad (runtime/autograd/record.h). A redefinition makes a
  // new Function, so stale entries die with the old one.
  autograd::EagerSite& gradient_cache();

 private:
  std::string name_;
  std::shared_ptr<Graph> graph_;
  bool eager_ = false;
  std::shared_ptr<autograd::EagerSite> gradient_cache_;
  std::unique_ptr<Code> code_;
  std::once_flag compiled_;
};

// Inlines every call of a user function in `g` (ir/passes/inline_calls.h): a CallFunction
// calls, and a MakeClosure captures, the Function in its `fn` attribute.
void inline_function_calls(Graph& g);

// A function value with captured values (`vjp`'s vjp_fn): calling it runs `function`
// on the call's arguments followed by the captures.
class Closure : public ObjectImpl {
 public:
  Closure(IntrusivePtr<Function> function, std::vector<IValue> captures)
      : function_(std::move(function)), captures_(std::move(captures)) {}
  std::vector<IValue> call(std::vector<IValue> args) {
    args.insert(args.end(), captures_.begin(), captures_.end());
    return function_->run(std::move(args));
  }
  std::string repr() const override { return "<function " + function_->name() + ">"; }

 private:
  IntrusivePtr<Function> function_;
  std::vector<IValue> captures_;
};

}  // namespace tsl
