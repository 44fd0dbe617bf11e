// The gradient graph of a function specialized to example arguments and written to be
// read (`:grad f(x, w)`, LANGUAGE.md 8.3). See Note [The specialized gradient view].
#pragma once

#include <string>
#include <vector>

#include "frontend/compilation_unit.h"

namespace tsl {

struct GradientViewOptions {
  // Each line also shows its value: the numbers of a small tensor, else a few of them
  // and the mean.
  bool values = false;
  // Graphviz DOT instead of text: the forward and the backward side by side, laid
  // out for reading (Note [The gradient picture]).
  bool picture = false;
};

// The forward and backward graphs of `decl`'s gradient with respect to its floating
// Tensor arguments among `args`, specialized to `args`; `name` is what the user called
// the function. Throws SourceError or Error when the arguments do not fit the function
// or running it fails.
// `wrt`: the parameters to differentiate for (grad's argnums); empty: every floating
// Tensor argument.
std::string specialized_gradient_text(CompilationUnit& unit, FunctionDecl& decl,
                                      const std::vector<IValue>& args, const std::string& name,
                                      const GradientViewOptions& options,
                                      const std::vector<size_t>& wrt = {});

// The same for a call written as text, `f(x, w)` (`:grad f(x, w)`, `tsl --dump=grad
// --args 'f(x, w)'`): the function it names, for the arguments its expressions
// evaluate to over the session's variables. Throws Error for text that is not such a
// call or a name that is no function.
std::string specialized_gradient_of_call(CompilationUnit& unit, const std::string& call,
                                         const GradientViewOptions& options);

// The general gradient graph of a function (for every shape) drawn as the
// specialized view draws its own (`:dot grad f`, `tsl --dump=grad --format=dot`):
// forward `f` and backward `df`, whose first `num_seeds` inputs are the incoming
// gradients and the others the values f returns after its `num_real_outputs` results;
// `names` lists the parameters differentiated.
std::string gradient_picture(const Graph& f, const Graph& df, size_t num_real_outputs,
                             size_t num_seeds, const std::string& name, const std::string& names);

// The arguments `text` (what is between the parentheses of `f(x, w)`) evaluates to in
// the session: each an expression over its variables.
std::vector<IValue> evaluate_arguments(CompilationUnit& unit, const std::string& text);
// The value of `e` now, over the session's variables.
IValue evaluate_expression(CompilationUnit& unit, const ast::Expr& e);

}  // namespace tsl
