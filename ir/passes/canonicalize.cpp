// Canonicalization; see canonicalize.h.
#include "ir/passes/canonicalize.h"

#include <unordered_map>

#include "ir/passes/pass_utils.h"

namespace tsl {
namespace {

bool is_commutative(const Node* n) {
  switch (n->op()) {
    case OpId::add: {
      const IValue* alpha = constant_value(n->input(2));
      return alpha && alpha->is_int() && alpha->to_int() == 1;
    }
    case OpId::mul:
    case OpId::add_int:
    case OpId::add_float:
    case OpId::mul_int:
    case OpId::mul_float:
    case OpId::eq:
    case OpId::ne:
    case OpId::eq_int:
    case OpId::eq_float:
    case OpId::eq_bool:
    case OpId::ne_int:
    case OpId::ne_float:
    case OpId::ne_bool:
    case OpId::maximum:
    case OpId::minimum:
    case OpId::min_int:
    case OpId::max_int:
    case OpId::logical_and:
    case OpId::logical_or:
    case OpId::logical_xor:
    case OpId::bitwise_and:
    case OpId::bitwise_or:
    case OpId::bitwise_xor:
      return true;
    default:
      return false;
  }
}

class Canonicalizer {
 public:
  explicit Canonicalizer(Graph& g) : g_(g) { number_block(g.block()); }

  bool run() {
    run_block(g_.block());
    return changed_;
  }

 private:
  // Program order of definitions: the rank that orders commutative operands.
  void number_block(const Block* b) {
    for (const Value* p : b->params()) order_[p] = order_.size();
    for (const Node* n : *b) {
      for (const Block* nb : n->blocks()) number_block(nb);
      for (const Value* o : n->outputs()) order_[o] = order_.size();
    }
  }

  size_t rank(const Value* v) const {
    size_t r = order_.at(v);
    return constant_value(v) ? r + order_.size() : r;  // constants last
  }

  void run_block(Block* b) {
    for (Node* n : *b) {
      for (Block* nb : n->blocks()) run_block(nb);
      if (is_commutative(n) && rank(n->input(1)) < rank(n->input(0))) {
        Value* a = n->input(0);
        Value* c = n->input(1);
        n->replace_input(0, c);
        n->replace_input(1, a);
        changed_ = true;
      }
      forward_tuple_parts(n);
    }
  }

  void forward_tuple_parts(Node* n) {
    if (n->inputs().size() != 1) return;
    const Node* def = n->input(0)->node();
    if (n->op() == OpId::TupleIndex && def->op() == OpId::TupleConstruct &&
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

  Graph& g_;
  std::unordered_map<const Value*, size_t> order_;
  bool changed_ = false;
};

}  // namespace

bool canonicalize(Graph& g) { return Canonicalizer(g).run(); }

}  // namespace tsl
