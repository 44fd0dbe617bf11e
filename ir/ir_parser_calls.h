// Calls between the graphs of one IR text: the parser links each CallFunction to the
// graph its `name` attribute names (See Note [Calls in IR text] in ir_parser.h).
#pragma once

#include <memory>
#include <vector>

#include "ir/ir.h"

namespace tsl {

// A CallFunction node as parsed, with the place of its op name for errors.
struct CallSite {
  Node* call;
  SourceRange range;
};

// Links every call of `calls` whose name is the name of exactly one of `graphs` to a
// copy of that graph (linked first, so nested calls stay linked). Compile errors,
// located at the call: arities that differ, recursion.
void link_calls(const std::vector<std::unique_ptr<Graph>>& graphs,
                const std::vector<CallSite>& calls);

}  // namespace tsl
