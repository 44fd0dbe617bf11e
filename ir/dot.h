// Graphviz DOT drawings of graphs (`:dot f`; gradient graphs are drawn by
// frontend/gradient_view.h, labelled as their text view):
// one box per op, edges for values, nested blocks (If, Loop, GradOf) as clusters.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tsl {

// One graph as a DOT digraph.
std::string graph_to_dot(const Graph& g);

}  // namespace tsl
