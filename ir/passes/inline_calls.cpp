// Inlining of user-function calls (see inline_calls.h).
#include "ir/passes/inline_calls.h"

#include <unordered_map>

namespace tsl {
namespace {

// Inlines the calls of one block; returns whether any was inlined.
bool inline_block(Graph& g, Block* b, const CalleeGraph& callee) {
  bool changed = false;
  for (Node* n : *b) {
    for (Block* nb : n->blocks()) changed |= inline_block(g, nb, callee);
    if (n->op() != OpId::CallFunction) continue;
    const Graph* body = callee(n);
    TSL_INTERNAL_ASSERT(body != nullptr, "inlining a call without a callee graph");
    TSL_INTERNAL_ASSERT(body->inputs().size() == n->inputs().size(), "call arity mismatch");
    std::unordered_map<const Value*, Value*> map;
    for (size_t i = 0; i < n->inputs().size(); ++i) map[body->inputs()[i]] = n->input(i);
    // Clone into a scratch block placed right before the call, then move the nodes.
    Node* holder = g.create(OpId::If, {}, 0);
    holder->insert_before(n);
    Block* scratch = holder->add_block();
    std::vector<Value*> results = g.clone_block_into(body->block(), scratch, map);
    while (!scratch->empty()) (*scratch->begin())->move_before(holder);
    holder->destroy();
    if (n->outputs().size() == 1 && results.size() == 1) {
      n->output()->replace_all_uses_with(results[0]);
    } else {
      for (size_t i = 0; i < n->outputs().size() && i < results.size(); ++i)
        n->output(i)->replace_all_uses_with(results[i]);
    }
    n->destroy();
    changed = true;
  }
  return changed;
}

}  // namespace

void inline_calls(Graph& g, const CalleeGraph& callee) {
  while (inline_block(g, g.block(), callee)) {
  }
}

}  // namespace tsl
