// Loop-invariant code motion; see loop_invariant_code_motion.h for the policy.
#include "ir/passes/loop_invariant_code_motion.h"

#include "ir/passes/pass_utils.h"

namespace tsl {
namespace {

bool cannot_raise(const Node* n) {
  if (n->info().has(opflags::NORAISE)) return true;
  // One-input elementwise ops on floating tensors (exp, tanh, relu, ...) only compute.
  if (n->info().has(opflags::EW) && n->inputs().size() == 1) {
    std::optional<DType> d = n->input(0)->type()->tensor_dtype();
    return n->input(0)->type()->is_tensor() && d && is_floating(*d);
  }
  return false;
}

// Whether `v` is defined in `body` or a block nested in it.
bool defined_inside(const Value* v, const Block* body) {
  for (const Block* b = v->node()->owning_block(); b;) {
    if (b == body) return true;
    const Node* owner = b->owning_node();
    b = owner ? owner->owning_block() : nullptr;
  }
  return false;
}

class LoopInvariantCodeMotion {
 public:
  explicit LoopInvariantCodeMotion(Graph& g) : g_(g), mutation_(g) {}

  bool run() {
    run_block(g_.block());
    return changed_;
  }

 private:
  void run_block(Block* b) {
    for (Node* n : *b) {
      for (Block* nb : n->blocks()) run_block(nb);  // inner loops first
      if (n->op() == OpId::Loop) hoist(n);
    }
  }

  static bool runs_at_least_once(const Node* loop) {
    const IValue* trips = constant_value(loop->input(0));
    const IValue* start = constant_value(loop->input(1));
    return trips && trips->is_int() && trips->to_int() >= 1 && start && start->is_bool() &&
           start->to_bool();
  }

  bool is_invariant(const Node* n, const Block* body) const {
    if (!is_pure_op(n)) return false;
    for (const Value* v : n->inputs()) {
      if (defined_inside(v, body) || mutation_.may_be_written(v)) return false;
    }
    // Once hoisted, every trip sees the same object: no writes, no `is` on it.
    for (const Value* v : n->outputs()) {
      if (mutation_.may_be_written(v) || mutation_.identity_observed(v)) return false;
    }
    return true;
  }

  void hoist(Node* loop) {
    Block* body = loop->block(0);
    bool runs = runs_at_least_once(loop);
    // Whether every node kept so far in the body is free of effects and errors.
    bool quiet_prefix = true;
    for (Node* n : *body) {
      bool safe = cannot_raise(n);
      if (is_invariant(n, body) && (safe || (runs && quiet_prefix))) {
        n->move_before(loop);
        changed_ = true;
        continue;
      }
      if (!safe || !is_pure_op(n)) quiet_prefix = false;
    }
  }

  Graph& g_;
  MutationInfo mutation_;
  bool changed_ = false;
};

bool is_loop(const Node* n) { return n->op() == OpId::Loop; }

}  // namespace

// Without a loop, the aliasing analysis need not be built (the pass runs in every
// pipeline round).
bool hoist_loop_invariants(Graph& g) {
  return any_node(g.block(), is_loop) && LoopInvariantCodeMotion(g).run();
}

}  // namespace tsl
