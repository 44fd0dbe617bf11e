// Specialization of undefined (zero) gradients; see Note [Specializing undefined
// gradients] in specialize_undefined.h.
#include "ir/passes/specialize_undefined.h"

#include <unordered_map>

#include "ir/schema.h"

namespace tsl {
namespace {

bool is_undefined(const Value* v) { return v->node()->op() == OpId::Undefined; }

// The autodiff ops whose kernels may return an undefined tensor (or a list gradient).
bool is_autograd_op(OpId op) {
  switch (op) {
    case OpId::AutogradAdd:
    case OpId::AutogradZeros:
    case OpId::AutogradListAdd:
    case OpId::AutogradListZeros:
    case OpId::AutogradListPop:
    case OpId::AutogradListPush:
    case OpId::AutogradListCat:
    case OpId::AutogradListItem:
      return true;
    default:
      return false;
  }
}

// Whether output `i` of an ordinary op is a tensor by its schema: kernels receive
// only defined tensors and return tensors they made (generic ops returning `t`, such
// as a list's item, may hand out an undefined entry of a list gradient).
bool schema_returns_tensor(const Node* n, size_t i) {
  const FunctionSchema& s = schema_of(n->op());
  return i < s.returns.size() && s.returns[i].type->kind() == TypeKind::Tensor;
}

class UndefinedSpecializer {
 public:
  UndefinedSpecializer(Graph& g, bool keep_rules) : g_(g), keep_rules_(keep_rules) {}

  bool run() {
    run_block(g_.block());
    return changed_;
  }

 private:
  // Whether `v` is a defined tensor or a list whenever it is computed.
  bool certainly_defined(const Value* v) {
    auto it = known_.find(v);
    if (it != known_.end()) return it->second;
    bool d = compute_defined(v);
    known_[v] = d;
    return d;
  }

  bool compute_defined(const Value* v) {
    const Node* n = v->node();
    if (n->is_param_node()) return false;  // graph inputs and block parameters
    switch (n->op()) {
      case OpId::ListConstruct:
      case OpId::AssumeDefined:
        return true;
      case OpId::AutogradAdd:
      case OpId::AutogradZeros:
        // add_gradients returns the defined one; zeros are made when grad is not.
        return certainly_defined(n->input(0)) || certainly_defined(n->input(1));
      case OpId::GradOf:
        return runs_surely(n) && certainly_defined(n->block(0)->returns().at(v->offset()));
      default:
        break;
    }
    if (n->info().has(opflags::PRIM) || is_autograd_op(n->op())) return false;
    return v->type()->is_tensor() && schema_returns_tensor(n, v->offset());
  }

  // Whether a GradOf (or AnyDefined) test over these inputs is surely true.
  bool runs_surely(const Node* n) {
    for (const Value* in : n->inputs()) {
      if (certainly_defined(in)) return true;
    }
    return false;
  }

  void run_block(Block* b) {
    for (Node* n : *b) {
      if (n->op() == OpId::GradOf && remove_dead_grad_of(n)) continue;
      for (Block* inner : n->blocks()) run_block(inner);
      visit(n);
    }
  }

  void visit(Node* n) {
    switch (n->op()) {
      case OpId::AutogradAdd:
        visit_autograd_add(n);
        break;
      case OpId::AutogradZeros:
        if (certainly_defined(n->input(0)) && same_type(n->input(0), n->output()))
          forward(n, n->input(0));
        break;
      case OpId::AnyDefined:
        visit_any_defined(n);
        break;
      case OpId::GradOf:
        if (runs_surely(n) && !keep_rules_) return inline_grad_of(n);
        drop_undefined_inputs(n);
        break;
      default:
        break;
    }
  }

  // A GradOf with a certainly defined input always runs its block: its nodes take its
  // place, so the passes after this one (fusion above all) see across the blocks.
  void inline_grad_of(Node* n) {
    Block* body = n->block(0);
    while (!body->empty()) (*body->begin())->move_before(n);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* r = body->returns()[i];
      Value* out = n->output(i);
      if (r->debug_name().empty() && !is_undefined(r)) r->set_debug_name(out->debug_name());
      out->replace_all_uses_with(r);
    }
    forget(n);
    n->destroy();
    changed_ = true;
  }

  // Drops what is known of n's outputs before n is destroyed (a later value may
  // reuse the address).
  void forget(const Node* n) {
    for (const Value* out : n->outputs()) known_.erase(out);
  }

  static bool same_type(const Value* a, const Value* b) { return a->type()->equals(*b->type()); }

  // Replaces every use of n's output by `v` (the very value n returns) and removes n.
  void forward(Node* n, Value* v) {
    Value* out = n->output();
    if (v->debug_name().empty() && !is_undefined(v)) v->set_debug_name(out->debug_name());
    out->replace_all_uses_with(v);
    forget(n);
    n->destroy();
    changed_ = true;
  }

  void visit_autograd_add(Node* n) {
    Value* a = n->input(0);
    Value* b = n->input(1);
    if (is_undefined(b) && same_type(a, n->output())) return forward(n, a);
    if (is_undefined(a) && same_type(b, n->output())) return forward(n, b);
    bool tensors = a->type()->is_tensor() && b->type()->is_tensor();
    if (!tensors || !certainly_defined(a) || !certainly_defined(b)) return;
    // Both defined: the kernel runs add(a, b, alpha=1); say so, and the passes that
    // know `add` (fusion, simplification, aliasing) see it.
    InsertPointGuard guard(g_, n);
    Value* one = g_.insert_constant(IValue(int64_t{1}), Type::int_(), n->range());
    Value* sum = g_.insert_op(OpId::add, {a, b, one}, n->output()->type(), n->range());
    sum->set_debug_name(n->output()->debug_name());
    n->output()->replace_all_uses_with(sum);
    forget(n);
    n->destroy();
    changed_ = true;
  }

  void visit_any_defined(Node* n) {
    if (runs_surely(n)) return replace_by_bool(n, true);
    drop_undefined_inputs(n);
    if (n->inputs().empty()) replace_by_bool(n, false);
  }

  void replace_by_bool(Node* n, bool value) {
    InsertPointGuard guard(g_, n);
    Value* c = g_.insert_constant(IValue(value), Type::bool_(), n->range());
    c->set_debug_name(n->output()->debug_name());
    n->output()->replace_all_uses_with(c);
    forget(n);
    n->destroy();
    changed_ = true;
  }

  // An undefined input never makes the test true. A GradOf keeps at least one input
  // (one with only undefined inputs is removed by remove_dead_grad_of).
  void drop_undefined_inputs(Node* n) {
    for (size_t i = n->inputs().size(); i-- > 0;) {
      if (!is_undefined(n->input(i))) continue;
      if (n->op() == OpId::GradOf && n->inputs().size() == 1) return;
      n->remove_input(i);
      changed_ = true;
    }
  }

  // GradOf(U...): the block never runs and every output is undefined.
  bool remove_dead_grad_of(Node* n) {
    for (const Value* in : n->inputs()) {
      if (!is_undefined(in)) return false;
    }
    InsertPointGuard guard(g_, n);
    for (Value* out : n->outputs()) {
      Value* u = g_.insert_op(OpId::Undefined, {}, out->type(), n->range());
      u->set_debug_name(out->debug_name());
      out->replace_all_uses_with(u);
    }
    forget(n);
    n->destroy();
    changed_ = true;
    return true;
  }

  Graph& g_;
  bool keep_rules_;
  std::unordered_map<const Value*, bool> known_;
  bool changed_ = false;
};

}  // namespace

bool specialize_undefined(Graph& g) { return UndefinedSpecializer(g, false).run(); }

bool specialize_undefined_keeping_rules(Graph& g) { return UndefinedSpecializer(g, true).run(); }

}  // namespace tsl
