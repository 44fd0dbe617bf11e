// Per-run dependence flags of a graph's outputs; see Note [Dependence flags].
#include "ir/autodiff/dependence_flags.h"

#include <algorithm>
#include <unordered_map>

#include "ir/autodiff/derivatives.h"
#include "ir/autodiff/functionalize.h"
#include "ir/autodiff/prepare.h"

namespace tsl::autodiff {
namespace {

// Ops whose results carry their inputs' dependence: those with a gradient rule and
// the structural ones (tuples, lists, Optionals). Others (comparisons, sizes, item)
// give results that are constants to autograd.
bool carries_dependence(const Node* n) {
  switch (n->op()) {
    case OpId::ListConstruct:
    case OpId::TupleConstruct:
    case OpId::TupleUnpack:
    case OpId::TupleIndex:
    case OpId::unwrap_optional:
    case OpId::to_optional:
    case OpId::getitem_list:
      return true;
    default:
      return derivative_rule(n->op()) != nullptr || is_inplace_update(n->op());
  }
}

bool appended_to(const Value* list) {
  return std::any_of(list->uses().begin(), list->uses().end(), [](const Use& u) {
    return (u.user->op() == OpId::append_list || u.user->op() == OpId::setitem_list) &&
           u.offset == 0;
  });
}

class FlagBuilder {
 public:
  FlagBuilder(Graph& g, const std::vector<size_t>& wrt) : g_(g), dep_(analyze_dependence(g, wrt)) {
    InsertPointGuard guard(g_, g_.block());
    Node* first = g_.block()->param_node()->next();
    if (first != g_.block()->return_node()) g_.set_insert_point(first);
    yes_ = g_.insert_constant(IValue(true), Type::bool_());
    no_ = g_.insert_constant(IValue(false), Type::bool_());
    for (size_t i : wrt) {
      if (is_differentiable_type(g_.inputs().at(i)->type())) flags_[g_.inputs()[i]] = yes_;
    }
  }

  void process_block(Block* b) {
    for (Node* n : *b) process_node(n);
  }

  // Whether v depends on a differentiated input on this run's path. A list is one
  // flag for all its elements: the static analysis's answer.
  Value* flag(const Value* v) const {
    if (v->type()->kind() == TypeKind::List) {
      auto it = list_flags_.find(v);
      if (it != list_flags_.end()) return it->second;
      if (v->node()->op() == OpId::ListConstruct && !appended_to(v)) return no_;
      return dep_.requiring.count(v) ? yes_ : no_;
    }
    auto it = flags_.find(v);
    return it == flags_.end() ? no_ : it->second;
  }

 private:
  void process_node(Node* n) {
    if (n->op() == OpId::If) return process_if(n);
    if (n->op() == OpId::Loop) return process_loop(n);
    for (Block* b : n->blocks()) process_block(b);
    if (process_tuple(n)) return;
    // A list never appended to depends on what its elements depend on on this path.
    if (n->op() == OpId::ListConstruct && !appended_to(n->output())) {
      std::vector<Value*> from;
      for (const Value* in : n->inputs()) from.push_back(flag(in));
      Value* f = any_of(from, n);
      if (f != no_) list_flags_[n->output()] = f;
      return;
    }
    if (!carries_dependence(n)) return;
    std::vector<Value*> from;
    for (const Value* in : n->inputs()) from.push_back(flag(in));
    Value* f = any_of(from, n);
    if (f == no_) return;
    for (const Value* out : n->outputs()) flags_[out] = f;
  }

  // A tuple keeps one flag per element, so `return (zeros, x.sum())` gives the
  // elements their own answers.
  bool process_tuple(Node* n) {
    switch (n->op()) {
      case OpId::TupleConstruct: {
        std::vector<Value*>& fs = tuple_flags_[n->output()];
        for (const Value* in : n->inputs()) fs.push_back(flag(in));
        Value* any = any_of(fs, n);
        if (any != no_) flags_[n->output()] = any;
        return true;
      }
      case OpId::TupleUnpack:
      case OpId::TupleIndex: {
        auto it = tuple_flags_.find(n->input(0));
        if (it == tuple_flags_.end()) return false;
        if (n->op() == OpId::TupleIndex) {
          size_t k = static_cast<size_t>(n->attr("index").to_int());
          if (it->second.at(k) != no_) flags_[n->output()] = it->second[k];
          return true;
        }
        for (size_t k = 0; k < n->outputs().size(); ++k) {
          if (it->second.at(k) != no_) flags_[n->output(k)] = it->second[k];
        }
        return true;
      }
      default:
        return false;
    }
  }

  void process_if(Node* n) {
    for (Block* b : n->blocks()) process_block(b);
    size_t count = n->outputs().size();
    for (size_t k = 0; k < count; ++k) {
      Value* a = flag(n->block(0)->returns()[k]);
      Value* b = flag(n->block(1)->returns()[k]);
      if (a == b) {
        if (a != no_) flags_[n->output(k)] = a;
        continue;
      }
      n->block(0)->add_return(a);
      n->block(1)->add_return(b);
      flags_[n->output(k)] = n->add_output()->set_type(Type::bool_());
    }
  }

  // A carried value gets a carried flag where the static analysis says it may depend.
  void process_loop(Node* n) {
    Block* body = n->block(0);
    size_t count = n->outputs().size();
    std::vector<size_t> carried;
    for (size_t k = 0; k < count; ++k) {
      const Value* p = body->params()[k + 1];
      if (p->type()->kind() == TypeKind::List) continue;
      if (dep_.requiring.count(p) || dep_.requiring.count(n->output(k)) ||
          flag(n->input(k + 2)) != no_)
        carried.push_back(k);
    }
    for (size_t k : carried) {
      n->add_input(flag(n->input(k + 2)));
      flags_[body->params()[k + 1]] = body->add_param(Type::bool_());
    }
    process_block(body);
    for (size_t k : carried) {
      body->add_return(flag(body->returns()[k + 1]));
      flags_[n->output(k)] = n->add_output()->set_type(Type::bool_());
    }
  }

  // The disjunction of `flags`, emitted before `n` where it is not a constant:
  // `a or b` as If(a) { true } else { b }.
  Value* any_of(const std::vector<Value*>& flags, Node* n) {
    std::vector<Value*> dynamic;
    for (Value* f : flags) {
      if (f == yes_) return yes_;
      if (f != no_ && std::find(dynamic.begin(), dynamic.end(), f) == dynamic.end())
        dynamic.push_back(f);
    }
    if (dynamic.empty()) return no_;
    InsertPointGuard guard(g_, n);
    Value* acc = dynamic[0];
    for (size_t i = 1; i < dynamic.size(); ++i) {
      Node* either = g_.insert(g_.create(OpId::If, {acc}, 1));
      Block* then_block = either->add_block();
      Block* else_block = either->add_block();
      then_block->add_return(yes_);
      else_block->add_return(dynamic[i]);
      acc = either->output()->set_type(Type::bool_());
    }
    return acc;
  }

  Graph& g_;
  Dependence dep_;
  Value* yes_;
  Value* no_;
  std::unordered_map<const Value*, Value*> flags_;
  std::unordered_map<const Value*, std::vector<Value*>> tuple_flags_;
  std::unordered_map<const Value*, Value*> list_flags_;
};

}  // namespace

size_t add_dependence_flags(Graph& g, const std::vector<size_t>& wrt) {
  size_t count = g.outputs().size();
  FlagBuilder builder(g, wrt);
  builder.process_block(g.block());
  for (size_t i = 0; i < count; ++i) g.add_output(builder.flag(g.outputs()[i]));
  return count;
}

}  // namespace tsl::autodiff
