// Inlining of user-function calls (see inline_calls.h).
#include "ir/passes/inline_calls.h"

#include <unordered_map>

namespace tsl {
namespace {

// The MakeClosure node that made closure value v, seen through tuples built and taken
// apart in the same graph (`out, fn = vjp(h, x)`), or null.
const Node* closure_source(const Value* v) {
  for (int depth = 0; depth < 64; ++depth) {
    const Node* def = v->node();
    if (def->op() == OpId::MakeClosure) return def;
    if (def->op() == OpId::TupleUnpack || def->op() == OpId::TupleIndex) {
      const Node* tup = def->input(0)->node();
      if (tup->op() != OpId::TupleConstruct) return nullptr;
      size_t k = def->op() == OpId::TupleUnpack ? v->offset()
                                                : static_cast<size_t>(def->attr("index").to_int());
      v = tup->input(k);
      continue;
    }
    return nullptr;
  }
  return nullptr;
}

// Inlines the calls of one block; returns whether any was inlined.
bool inline_block(Graph& g, Block* b, const CalleeGraph& callee) {
  bool changed = false;
  for (Node *n = b->param_node()->next(), *next = nullptr; n != b->return_node(); n = next) {
    next = n->next();
    for (Block* nb : n->blocks()) changed |= inline_block(g, nb, callee);
    // A call of a function, or of a closure whose MakeClosure is in this graph (the
    // vjp_fn of a vjp inlined here): its inputs are the arguments, then the captures.
    std::vector<Value*> args;
    const Graph* body = nullptr;
    if (n->op() == OpId::CallFunction) {
      body = callee(n);
      args = n->inputs();
    } else if (n->op() == OpId::CallClosure) {
      const Node* make = closure_source(n->input(0));
      if (!make) continue;
      body = callee(make);
      args.assign(n->inputs().begin() + 1, n->inputs().end());
      args.insert(args.end(), make->inputs().begin(), make->inputs().end());
    } else {
      continue;
    }
    TSL_INTERNAL_ASSERT(body != nullptr, "inlining a call without a callee graph");
    TSL_INTERNAL_ASSERT(body->inputs().size() == args.size(), "call arity mismatch");
    std::unordered_map<const Value*, Value*> map;
    for (size_t i = 0; i < args.size(); ++i) map[body->inputs()[i]] = args[i];
    // Clone into a scratch block placed right before the call, then move the nodes.
    Node* holder = g.create(OpId::If, {}, 0);
    holder->insert_before(n);
    Block* scratch = holder->add_block();
    std::vector<Value*> results = g.clone_block_into(body->block(), scratch, map);
    // The scan goes on at the first inlined node, so calls the body makes are inlined
    // in this pass too: a chain of n calls took n passes over a growing block.
    next = scratch->empty() ? n->next() : *scratch->begin();
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
