// Dead-code elimination; see dead_code_elimination.h for what it removes and keeps.
#include "ir/passes/dead_code_elimination.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "ir/passes/pass_utils.h"

namespace tsl {
namespace {

// Structural ops without effects: those that build or take apart values, and the
// placeholders of paths never taken (Uninitialized) and of zero gradients (Undefined).
bool is_pure_structural(OpId op) {
  return is_value_structural(op) || op == OpId::Uninitialized || op == OpId::Undefined;
}

// Whether removing `n` could change what the program does (other than the values of
// its outputs).
bool has_side_effects(const Node* n) {
  if (n->info().has(opflags::EFFECT)) return true;
  // A `while` loop (no trip count: the maximum) may run forever, which removing it
  // would change (`while True: pass` must hang, as in Python); `for` loops end.
  if (n->op() == OpId::Loop) {
    const Node* trip = n->input(0)->node();
    if (trip->op() == OpId::Constant && trip->attr("value").is_int() &&
        trip->attr("value").to_int() == std::numeric_limits<int64_t>::max())
      return true;
  }
  if (!n->blocks().empty()) {
    for (const Block* b : n->blocks()) {
      for (const Node* inner : *b) {
        if (has_side_effects(inner)) return true;
      }
    }
    return false;
  }
  if (n->info().has(opflags::PRIM)) return !is_pure_structural(n->op());
  return false;
}

bool any_output_used(const Node* n) {
  for (const Value* v : n->outputs()) {
    if (v->has_uses()) return true;
  }
  return false;
}

class DeadCodeElimination {
 public:
  bool run(Graph& g) {
    run_block(g.block());
    return changed_;
  }

 private:
  // Last node first, so that removing a user can make its inputs' definitions dead.
  void run_block(Block* b) {
    for (Node* n = b->return_node()->prev(); n != b->param_node();) {
      Node* prev = n->prev();
      visit(n);
      n = prev;
    }
  }

  // Each block is walked once: a walk of a loop's body per block of each enclosing loop
  // made nested loops cost 2^depth (30 nested `while`s took minutes to compile). What
  // a removal makes dead later is removed where it is (remove_newly_dead), not by
  // walking again.
  void visit(Node* n) {
    if (n->op() == OpId::If) drop_unused_if_outputs(n, /*blocks_walked=*/false);
    for (Block* b : n->blocks()) run_block(b);
    // After the body's walk, so that the uses it asks about are the real ones.
    if (n->op() == OpId::Loop) drop_dead_carried_values(n, nullptr);
    if (!any_output_used(n) && !has_side_effects(n)) {
      n->destroy();
      changed_ = true;
    }
  }

  // Output i of an If is its blocks' return i: drop all three together. The nodes
  // that computed a dropped return are dead too: removed now when the blocks were
  // walked already, else by the walk of the blocks that follows.
  void drop_unused_if_outputs(Node* n, bool blocks_walked) {
    for (size_t i = n->outputs().size(); i-- > 0;) {
      if (n->output(i)->has_uses()) continue;
      for (Block* b : n->blocks()) {
        Node* def = b->returns()[i]->node();
        b->erase_return(i);
        if (blocks_walked) remove_newly_dead(b, def);
      }
      n->erase_output(i);
      changed_ = true;
    }
  }

  // Carried value i of a Loop: input i + 2, body parameter and return i + 1, output i.
  // It can go when its output is unused and the body parameter only computes the next
  // value of itself: it then never reaches an effect, the condition or another value.
  //
  //   %n.1 : int, %k : int = Loop(%max, %go, %n, %zero)   # %k unused
  //     block0(%i : int, %n.2 : int, %k.1 : int):
  //       %k.2 : int = add.int(%k.1, %one)
  //       -> (%c, %n.3, %k.2)
  // becomes Loop(%max, %go, %n) carrying %n alone. The definitions of the initial
  // values dropped go to `freed`, when given, to be removed if nothing else uses them
  // (else the walk of the loop's block reaches them: they come before it).
  void drop_dead_carried_values(Node* loop, std::vector<Node*>* freed) {
    Block* body = loop->block(0);
    for (size_t i = loop->outputs().size(); i-- > 0;) {
      Value* param = body->params()[i + 1];
      if (loop->output(i)->has_uses() || !only_feeds_own_return(param, body, i + 1)) continue;
      // Carry the value through unchanged: what computed its next value is then dead.
      if (Value* next = body->returns()[i + 1]; next != param) {
        body->replace_return(i + 1, param);
        changed_ = true;
        remove_newly_dead(body, next->node());
      }
      if (param->uses().size() != 1) continue;  // dead but kept by a node we cannot remove
      Node* initial = loop->input(i + 2)->node();
      body->erase_return(i + 1);
      body->erase_param(i + 1);
      loop->remove_input(i + 2);
      loop->erase_output(i);
      changed_ = true;
      if (freed) freed->push_back(initial);
    }
  }

  // Removes `n`, a node of `block` that may have lost its last use, and the nodes of
  // `block` that only it used, and so on; a loop or an If among them that still has
  // outputs in use loses those it no longer has. Only `block`'s own nodes: the walk
  // of an enclosing block has yet to reach the nodes before the one it is at.
  void remove_newly_dead(Block* block, Node* n) {
    std::vector<Node*> work = {n};
    // A node is pushed once per use and destroyed on its first visit without uses:
    // later entries must not name it, so none is pushed twice.
    auto push = [&](Node* m) {
      if (std::find(work.begin(), work.end(), m) == work.end()) work.push_back(m);
    };
    while (!work.empty()) {
      Node* d = work.back();
      work.pop_back();
      if (d->owning_block() != block || d->is_param_node()) continue;
      if (any_output_used(d)) {
        std::vector<Node*> freed;
        if (d->op() == OpId::Loop) drop_dead_carried_values(d, &freed);
        if (d->op() == OpId::If) drop_unused_if_outputs(d, /*blocks_walked=*/true);
        for (Node* f : freed) push(f);
        if (any_output_used(d)) continue;
      }
      if (has_side_effects(d)) continue;
      std::vector<Node*> inputs;
      for (const Value* v : d->inputs()) inputs.push_back(v->node());
      d->destroy();
      changed_ = true;
      for (Node* in : inputs) push(in);
    }
  }

  // Whether everything computed from `param` flows only into return `index` of `body`,
  // through nodes without side effects.
  static bool only_feeds_own_return(const Value* param, const Block* body, size_t index) {
    std::vector<const Value*> work = {param};
    std::unordered_set<const Value*> seen = {param};
    auto push = [&](const Value* v) {
      if (seen.insert(v).second) work.push_back(v);
    };
    while (!work.empty()) {
      const Value* v = work.back();
      work.pop_back();
      for (const Use& u : v->uses()) {
        const Node* user = u.user;
        if (user == body->return_node()) {
          if (u.offset != index) return false;
          continue;
        }
        // A nested block's return reaches its owner's outputs (and, for a loop, its
        // body parameters on the next trip).
        if (user->is_return_node()) user = user->owning_block()->owning_node();
        if (has_side_effects(user)) return false;
        for (const Value* out : user->outputs()) push(out);
        for (const Block* b : user->blocks()) {
          for (const Value* p : b->params()) push(p);
        }
      }
    }
    return true;
  }

  bool changed_ = false;
};

}  // namespace

bool eliminate_dead_code(Graph& g) { return DeadCodeElimination().run(g); }

}  // namespace tsl
