// Canonicalization; see canonicalize.h.
#include "ir/passes/canonicalize.h"

#include "ir/passes/pass_utils.h"

namespace tsl {
namespace {

class Canonicalizer {
 public:
  bool run(Graph& g) {
    run_block(g.block());
    return changed_;
  }

 private:
  void run_block(Block* b) {
    for (Node* n : *b) {
      for (Block* nb : n->blocks()) run_block(nb);
      // Constants second: `2 * x` reads as mul(%x, %two), the form the other passes
      // match first. Other operands keep the order of the source.
      if (is_commutative(n) && constant_value(n->input(0)) && !constant_value(n->input(1))) {
        Value* c = n->input(0);
        n->replace_input(0, n->input(1));
        n->replace_input(1, c);
        changed_ = true;
      }
      forward_tuple_parts(n);
    }
  }

  void forward_tuple_parts(Node* n) {
    if (n->inputs().size() != 1) return;
    const Node* def = n->input(0)->node();
    if (n->op() == OpId::TupleIndex && def->op() == OpId::TupleConstruct && n->has_attr("index") &&
        n->attr("index").is_int()) {
      int64_t i = n->attr("index").to_int();
      if (i >= 0 && i < static_cast<int64_t>(def->inputs().size())) {
        forward(n->output(), def->input(i));
      }
    } else if (n->op() == OpId::TupleUnpack && def->op() == OpId::TupleConstruct &&
               def->inputs().size() == n->outputs().size()) {
      for (size_t i = 0; i < n->outputs().size(); ++i) forward(n->output(i), def->input(i));
    } else if (n->op() == OpId::unwrap_optional && def->op() == OpId::to_optional) {
      forward(n->output(), def->input(0));
    }
  }

  void forward(Value* from, Value* to) {
    if (!from->has_uses() || !from->type()->equals(*to->type())) return;
    if (to->debug_name().empty()) to->set_debug_name(from->debug_name());
    from->replace_all_uses_with(to);
    changed_ = true;
  }

  bool changed_ = false;
};

}  // namespace

bool canonicalize(Graph& g) { return Canonicalizer().run(g); }

}  // namespace tsl
