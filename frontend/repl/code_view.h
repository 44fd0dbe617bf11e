// The register program of a function, for learners: `:code f` in the REPL and
// `tsl --dump=code FILE` (see Note [Compiling a graph to Code] in runtime/interpreter.h).
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

}  // namespace tsl
