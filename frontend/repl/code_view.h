// The register program of a function, for learners: `:code f` in the REPL and
// `tsl --dump=code FILE` (see Note [Compiling a graph to Code] in runtime/exec/interpreter.h).
#pragma once

#include <string>

#include "ir/source.h"

namespace tsl {

class CompilationUnit;
struct FunctionDecl;

enum class CodeView {
  Function,  // the Code that runs a call (Function::code(): the optimized graph)
  Gradient,  // the two-stage Code of its gradient for its float Tensor parameters
  Both,
};

// The Code of `decl` as text. A function that cannot be differentiated (no Tensor
// parameter, an op without a derivative, a transform such as grad(f) itself) gets a
// one-line note in place of its gradient Code. Compile errors are SourceErrors.
std::string code_text(CompilationUnit& unit, FunctionDecl& decl, const SourceRange& use,
                      CodeView view);

// The memory plans of `decl` (`:memplan f`, `tsl --dump=memplan`): of the Code its calls
// run and of the gradient Codes the eager tape compiled for it, each drawn by
// MemoryPlan::chart(). A Code is planned from its first run, so a function that has not
// run yet gets a line saying so.
std::string memplan_text(CompilationUnit& unit, FunctionDecl& decl, const SourceRange& use);

}  // namespace tsl
