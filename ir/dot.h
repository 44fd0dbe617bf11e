// Graphviz DOT drawings of graphs (`:dot f`, `:dot grad f`, `--dump=grad --format=dot`):
// one box per op, edges for values, nested blocks (If, Loop, GradOf) as clusters.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tsl {

// One graph as a DOT digraph.
std::string graph_to_dot(const Graph& g);

// A forward graph and its backward, drawn side by side: forward nodes as blue
// ellipses, backward nodes as orange boxes, each GradOf block a cluster labelled with
// the op and line it differentiates, and dashed edges for the values the backward
// captures from the forward. `num_real_outputs` of f are results; the rest are the
// captures, which df takes after its `num_seeds` gradient inputs.
std::string gradient_to_dot(const Graph& f, const Graph& df, size_t num_real_outputs,
                            size_t num_seeds);

}  // namespace tsl
