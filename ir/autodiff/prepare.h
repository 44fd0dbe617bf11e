// Shared by reverse and forward mode: the rewrites done before differentiating
// (tuples forwarded, dropout's mask made explicit, GradOf blocks lowered to If so a
// gradient graph can be differentiated again) and the analysis of which values
// depend differentiably on the differentiated inputs.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"

namespace tsl::autodiff {

bool is_differentiable_type(
    const TypePtr& t);  // a float (or unknown-dtype) tensor, or Optional of one
bool is_tensor_list(const TypePtr& t);
// A differentiable type, a list of tensors, or a dict (or Optional) holding one.
bool holds_gradient(const TypePtr& t);
std::string line_of(const Node* n);  // " at line 7", or "" without a location

// `wrt`: the inputs differentiated (in-place updates they reach become out of place).
// Idempotent: preparing a prepared graph changes nothing.
void prepare_for_differentiation(Graph& g, const std::vector<size_t>& wrt);

// A value that depends on a differentiated input only through an op that reads a
// tensor into a plain number (`item()`, `float(t)`): PyTorch treats that number as a
// constant, and so does autodiff, but a gradient that silently misses a path is
// worth a warning.
struct Cut {
  const Node* origin;    // the op without a gradient
  const Node* consumer;  // the first op that used its result
};

struct Dependence {
  std::unordered_set<const Value*> requiring;  // depends differentiably on a wrt input
  std::unordered_map<const Value*, Cut> cuts;
};
Dependence analyze_dependence(const Graph& g, const std::vector<size_t>& wrt);

// A warning (ir/source.h) when `out` depends on a differentiated input through a cut.
void warn_about_cut(const Dependence& d, const Value* out, const std::string& function_name);

}  // namespace tsl::autodiff
