// Reverse-mode differentiation of graphs with control flow; see Note [Gradient
// graphs] in differentiate.h.
#include "ir/autodiff/differentiate.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "ir/autodiff/derivatives.h"
#include "ir/autodiff/prepare.h"
#include "runtime/kernels/dict_ops.h"

namespace tsl::autodiff {
namespace {

// ---- The backward pass ------------------------------------------------------------------

// Gradients of values in one backward context, in the order they appeared (so the
// printed graph does not depend on pointer values).
class GradMap {
 public:
  Value* get(const Value* v) const {
    auto it = map_.find(v);
    return it == map_.end() ? nullptr : it->second;
  }
  void set(Value* v, Value* g) {
    if (!map_.count(v)) order_.push_back(v);
    map_[v] = g;
  }
  const std::vector<Value*>& order() const { return order_; }

 private:
  std::unordered_map<const Value*, Value*> map_;
  std::vector<Value*> order_;
};

bool defined_in(const Value* v, const Block* b) {
  const Node* def = v->node();
  return def->owning_block() == b || (def->is_param_node() && def == b->param_node());
}

class Reverser {
 public:
  Reverser(Graph& g, const Dependence& analysis) : g_(g), analysis_(analysis) {}

  // Emits the backward of `forward` at the graph's insertion point, given the
  // gradients in `grads` (updated with the gradients of everything it reaches).
  void reverse_block(Block* forward, GradMap& grads) {
    // Lists made here and appended to start with a zero gradient as long as they end
    // up, so that reads and pops line up (Note [Lists]).
    for (Node* n : *forward) {
      Value* list = n->outputs().size() == 1 ? n->output() : nullptr;
      if (n->op() != OpId::ListConstruct || !needs(list) || !appended_to(list) || grads.get(list))
        continue;
      grads.set(list, g_.insert_op(OpId::AutogradListZeros, {list}, list->type(), n->range()));
    }
    for (Node* n = forward->return_node()->prev(); n != forward->param_node(); n = n->prev()) {
      reverse_node(n, grads);
    }
  }

 private:
  bool needs(const Value* v) const { return analysis_.requiring.count(v) != 0; }

  // The zero gradient of `v`: an undefined value typed as v's gradient is (a list
  // gradient for a list of tensors, Note [Lists]; else a tensor).
  Value* zero_gradient(const Value* v, const SourceRange& range) {
    TypePtr t = is_tensor_list(v->type()) ? v->type() : Type::tensor();
    return g_.insert_op(OpId::Undefined, {}, t, range);
  }

  // Adds gradient `g` of `v` to what `grads` holds (undefined-aware).
  void accumulate(GradMap& grads, Value* v, Value* g, const SourceRange& range) {
    if (!needs(v) && !analysis_.cuts.count(v)) return;
    Value* old = grads.get(v);
    Value* sum = old ? g_.insert_op(OpId::AutogradAdd, {old, g}, old->type(), range) : g;
    if (!v->debug_name().empty() && sum->debug_name().empty())
      sum->set_debug_name("d" + v->debug_name());
    grads.set(v, sum);
  }

  void reverse_node(Node* n, GradMap& grads) {
    if (n->op() == OpId::append_list) return reverse_append(n, grads);
    if (n->op() == OpId::setitem_list) return check_list_item_assignment(n);
    std::vector<Value*> out_grads;
    bool any = false;
    for (Value* o : n->outputs()) {
      out_grads.push_back(grads.get(o));
      any |= out_grads.back() != nullptr;
    }
    bool control = n->op() == OpId::If || n->op() == OpId::Loop;
    if (!any && !(control && !threaded_lists(n, grads).empty())) return;
    switch (n->op()) {
      case OpId::If:
        return reverse_if(n, out_grads, grads);
      case OpId::Loop:
        return reverse_loop(n, out_grads, grads);
      case OpId::TupleConstruct:
      case OpId::unwrap_optional:
      case OpId::to_optional:
        for (size_t i = 0; i < n->inputs().size(); ++i) {
          if (out_grads[0]) accumulate(grads, n->input(i), out_grads[0], n->range());
        }
        return;
      case OpId::ListConstruct:
        return reverse_list_construct(n, out_grads[0], grads);
      case OpId::getitem_list:
        return reverse_getitem(n, out_grads[0], grads);
      default:
        return reverse_op(n, out_grads, grads);
    }
  }

  // ---- Lists. Note [Lists]: the gradient of a list of tensors is a list of the
  // same length, undefined entries being zeros. Reading xs[i] adds to entry i;
  // `xs.append(v)` is undone by popping the last entry, which is v's gradient; the
  // elements a literal list starts with take the entries left. A list appended to
  // inside an If or Loop has its gradient threaded through the backward If / Loop
  // (the pops must happen in order), not summed.

  static bool appended_to(const Value* list) {
    for (const Use& u : list->uses()) {
      if (u.user->op() == OpId::append_list && u.offset == 0) return true;
    }
    return false;
  }

  // Lists defined outside `n`, appended to inside it, with a gradient in `grads`.
  std::vector<Value*> threaded_lists(const Node* n, const GradMap& grads) {
    std::vector<Value*> out;
    std::function<void(const Block*)> visit = [&](const Block* b) {
      for (const Node* m : *b) {
        if (m->op() == OpId::append_list) {
          Value* list = m->input(0);
          bool inside = false;
          for (const Node* d = list->node(); d && !inside;
               d = d->owning_block() ? d->owning_block()->owning_node() : nullptr)
            inside = d == n;
          if (!inside && grads.get(list) && std::find(out.begin(), out.end(), list) == out.end())
            out.push_back(list);
        }
        for (const Block* nb : m->blocks()) visit(nb);
      }
    };
    for (const Block* b : n->blocks()) visit(b);
    return out;
  }

  void reverse_append(Node* n, GradMap& grads) {
    Value* list = n->input(0);
    Value* v = n->input(1);
    Value* g = grads.get(list);
    if (!g) return;
    Node* pop = g_.insert(g_.create(OpId::AutogradListPop, {g, v}, 2));
    pop->set_range(n->range());
    pop->output(0)->set_type(list->type());
    pop->output(1)->set_type(Type::tensor());
    grads.set(list, pop->output(0));
    accumulate(grads, v, pop->output(1), n->range());
  }

  void reverse_getitem(Node* n, Value* g, GradMap& grads) {
    Value* list = n->input(0);
    if (!needs(list) || !g) return;
    Value* base = grads.get(list);
    if (!base) base = g_.insert_op(OpId::Undefined, {}, Type::tensor(), n->range());
    Value* sum =
        g_.insert_op(OpId::AutogradListAdd, {base, list, n->input(1), g}, list->type(), n->range());
    grads.set(list, sum);
  }

  void reverse_list_construct(Node* n, Value* g, GradMap& grads) {
    if (!g) return;
    for (size_t k = 0; k < n->inputs().size(); ++k) {
      Value* e = n->input(k);
      if (!needs(e)) continue;
      Value* index = g_.insert_constant(IValue(static_cast<int64_t>(k)), Type::int_(), n->range());
      Value* ge = g_.insert_op(OpId::AutogradListItem, {g, index, e}, Type::tensor(), n->range());
      accumulate(grads, e, ge, n->range());
    }
  }

  // `xs[i] = v` has no gradient rule: autodiff follows it only where the reads of xs
  // after it were forwarded to v (Note [Dicts under differentiation]). A read left
  // (at a run-time index, in a loop that writes, of a list that escapes) is an error.
  void check_list_item_assignment(const Node* n) {
    const Value* list = n->input(0);
    if (!needs(list) && !needs(n->input(2))) return;
    for (const Use& u : list->uses()) {
      OpId op = u.user->op();
      bool writes = (op == OpId::setitem_list || op == OpId::append_list) && u.offset == 0;
      if (writes || op == OpId::len_list || op == OpId::print) continue;
      compile_error(n->range(),
                    "no gradient through the list item assignment" + line_of(n) +
                        ": autodiff follows `xs[i] = v` only into reads of a list literal of "
                        "the differentiated function at constant indices, outside loops "
                        "that write it (build a new list instead, or use .detach())");
    }
  }

  [[noreturn]] void no_gradient(const Node* n) {
    if (n->op() == OpId::DictConstruct || dict_op_of(n->op())) {
      compile_error(n->range(),
                    "no gradient through `" + std::string(n->info().base_name()) + "` of a dict" +
                        line_of(n) +
                        ": autodiff follows the entries of a dict literal of the differentiated "
                        "function read back with constant keys (`d[\"w\"]`), not reads at run-time "
                        "keys, in loops that write the dict, or of a dict passed in, stored or "
                        "returned (see docs/language.md)");
    }
    compile_error(n->range(), "no gradient for `" + std::string(n->info().base_name()) + "`" +
                                  line_of(n) +
                                  ": it is on the path from a differentiated "
                                  "input to the result (use .detach() to cut the path)");
  }

  // Which elements of each list input written out need a gradient, so that a rule
  // (einsum's) computes only theirs; the others are handed nothing (see below).
  void mark_list_elements(RuleContext& ctx, const Node* n, const std::vector<bool>& wanted) {
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const Value* in = n->input(i);
      const Node* list = in->node();
      if (!wanted[i] || !is_tensor_list(in->type()) || list->op() != OpId::ListConstruct ||
          appended_to(in)) {
        continue;
      }
      std::vector<bool> elements;
      for (const Value* e : list->inputs()) elements.push_back(needs(e) || analysis_.cuts.count(e));
      ctx.set_element_needs(i, std::move(elements));
    }
  }

  void reverse_op(Node* n, const std::vector<Value*>& out_grads, GradMap& grads) {
    const DerivativeRule* rule = derivative_rule(n->op());
    if (!rule) no_gradient(n);
    std::vector<Value*> defined;
    for (Value* g : out_grads) {
      if (g) defined.push_back(g);
    }
    Node* grad_of = g_.insert(g_.create(OpId::GradOf, defined, 0));
    grad_of->set_range(n->range());
    grad_of->set_attr("op", IValue(std::string(n->info().name)));
    if (n->range().valid())
      grad_of->set_attr("line", IValue(static_cast<int64_t>(n->range().line)));
    Block* body = grad_of->add_block();
    std::vector<std::pair<Value*, size_t>> results;  // (forward value, GradOf output)
    {
      InsertPointGuard guard(g_, body);
      FormulaScope scope(g_, n->range());
      std::vector<Sym> gs;
      bool multi = n->outputs().size() > 1;
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        Value* o = n->output(i);
        if (!multi || is_tensor_list(o->type())) {
          gs.emplace_back(out_grads[i]);  // a list's gradient may be missing: null
        } else if (is_differentiable_type(o->type())) {
          gs.push_back(
              call(OpId::AutogradZeros, {out_grads[i] ? Arg(out_grads[i]) : Arg(undefined()), o}));
        } else {
          gs.emplace_back();
        }
      }
      std::vector<bool> wanted;
      for (Value* in : n->inputs()) wanted.push_back(needs(in) || analysis_.cuts.count(in));
      RuleContext ctx(n, gs, {}, wanted);
      mark_list_elements(ctx, n, wanted);
      std::vector<Sym> res = rule->vjp(ctx);
      for (size_t i = 0; i < res.size() && i < n->inputs().size(); ++i) {
        if (!res[i] || !wanted[i]) continue;
        Value* in = n->input(i);
        const Node* list = in->node();
        if (is_tensor_list(in->type()) && list->op() == OpId::ListConstruct && !appended_to(in)) {
          // Note [Lists]: a list gradient is handed to the elements it came from.
          for (size_t k = 0; k < list->inputs().size(); ++k) {
            if (!needs(list->input(k))) continue;
            Sym piece = call(OpId::getitem_list, {res[i], static_cast<int64_t>(k)});
            piece.value()->set_type(Type::tensor());
            body->add_return(piece);
            results.emplace_back(list->input(k), body->returns().size() - 1);
          }
          continue;
        }
        body->add_return(res[i]);  // a list's gradient is a list (see Note [Lists])
        results.emplace_back(in, body->returns().size() - 1);
      }
    }
    if (results.empty()) {
      remove_block_contents(body);
      grad_of->destroy();
      return;
    }
    for (size_t k = 0; k < body->returns().size(); ++k) {
      grad_of->add_output()->set_type(body->returns()[k]->type());
    }
    for (auto& [v, k] : results) accumulate(grads, v, grad_of->output(k), n->range());
  }

  static void remove_block_contents(Block* b) {
    while (!b->returns().empty()) b->erase_return(0);
    for (Node* m = b->return_node()->prev(); m != b->param_node();) {
      Node* prev = m->prev();
      for (Block* nb : m->blocks()) remove_block_contents(nb);
      for (Value* o : m->outputs()) {
        TSL_INTERNAL_ASSERT(!o->has_uses(), "removing a used formula value");
      }
      m->destroy();
      m = prev;
    }
  }

  // ---- If

  void reverse_if(Node* n, const std::vector<Value*>& out_grads, GradMap& grads) {
    std::vector<Value*> threaded = threaded_lists(n, grads);
    Node* back = g_.insert(g_.create(OpId::If, {n->input(0)}, 0));
    back->set_range(n->range());
    std::vector<GradMap> branch_grads(2);
    std::vector<Value*> outer;  // outer values that receive gradients, in order
    for (size_t b = 0; b < 2; ++b) {
      Block* fb = n->block(b);
      Block* rb = back->add_block();
      InsertPointGuard guard(g_, rb);
      GradMap& bg = branch_grads[b];
      for (Value* list : threaded) bg.set(list, grads.get(list));
      for (size_t k = 0; k < out_grads.size(); ++k) {
        if (out_grads[k]) accumulate(bg, fb->returns()[k], out_grads[k], n->range());
      }
      reverse_block(fb, bg);
      for (Value* v : bg.order()) {
        if (!defined_in(v, fb) && std::find(outer.begin(), outer.end(), v) == outer.end())
          outer.push_back(v);
      }
    }
    for (size_t b = 0; b < 2; ++b) {
      Block* rb = back->block(b);
      InsertPointGuard guard(g_, rb);
      for (Value* v : outer) {
        Value* gv = branch_grads[b].get(v);
        if (!gv) gv = zero_gradient(v, n->range());
        rb->add_return(gv);
      }
    }
    for (size_t j = 0; j < outer.size(); ++j)
      back->add_output()->set_type(back->block(0)->returns()[j]->type());
    for (size_t b = 0; b < 2; ++b) {
      Block* fb = n->block(b);
      transport(fb, back->block(b), [&](Value* v) { return export_from_if(n, b, v); });
    }
    for (size_t j = 0; j < outer.size(); ++j) {
      if (std::find(threaded.begin(), threaded.end(), outer[j]) != threaded.end()) {
        grads.set(outer[j], back->output(j));
      } else {
        accumulate(grads, outer[j], back->output(j), n->range());
      }
    }
  }

  // Makes `v` (defined in branch `b` of If `n`) an output of `n`.
  Value* export_from_if(Node* n, size_t b, Value* v) {
    Value* out = n->add_output()->set_type(v->type());
    n->block(b)->add_return(v);
    Block* other = n->block(1 - b);
    InsertPointGuard guard(g_, other);
    OpId placeholder = v->type()->is_tensor() ? OpId::Undefined : OpId::Uninitialized;
    other->add_return(g_.insert_op(placeholder, {}, v->type(), n->range()));
    return out;
  }

  // Replaces, in the backward block `rb` (and blocks nested in it), every use of a
  // value defined in the forward block `fb` by what `bring` makes available;
  // constants are copied instead.
  void transport(Block* fb, Block* rb, const std::function<Value*(Value*)>& bring) {
    std::unordered_map<Value*, Value*> moved;
    std::function<Value*(Value*)> replacement = [&](Value* v) -> Value* {
      auto it = moved.find(v);
      if (it != moved.end()) return it->second;
      Value* r;
      if (v->node()->op() == OpId::Constant) {
        Node* c = g_.create(OpId::Constant, {}, 1);
        c->set_attr("value", v->node()->attr("value"));
        c->set_range(v->node()->range());
        c->insert_after(rb->param_node());
        r = c->output()->set_type(v->type());
      } else {
        r = bring(v);
      }
      moved[v] = r;
      return r;
    };
    std::function<void(Block*)> visit = [&](Block* b) {
      for (Node* m : *b) {
        for (size_t i = 0; i < m->inputs().size(); ++i) {
          if (defined_in(m->input(i), fb)) m->replace_input(i, replacement(m->input(i)));
        }
        for (Block* nb : m->blocks()) visit(nb);
      }
      for (size_t i = 0; i < b->returns().size(); ++i) {
        if (defined_in(b->returns()[i], fb)) b->replace_return(i, replacement(b->returns()[i]));
      }
    };
    visit(rb);
  }

  // ---- Loop

  // The backward Loop's carried values: the gradients of the forward's loop-carried
  // values, the threaded list gradients, then accumulators for outer values.
  void reverse_loop(Node* n, const std::vector<Value*>& out_grads, GradMap& grads) {
    Block* body = n->block(0);
    size_t carried = n->outputs().size();
    std::vector<Value*> threaded = threaded_lists(n, grads);
    Value* iterations = count_iterations(n);
    Value* true_value = g_.insert_constant(IValue(true), Type::bool_(), n->range());
    std::vector<size_t> diff_carried;
    for (size_t k = 0; k < carried; ++k) {
      if (needs(body->params()[k + 1])) diff_carried.push_back(k);
    }
    std::vector<Value*> inits;
    for (size_t k : diff_carried) {
      inits.push_back(out_grads[k] ? out_grads[k] : zero_gradient(n->output(k), n->range()));
    }
    for (Value* list : threaded) inits.push_back(grads.get(list));
    std::vector<Value*> loop_inputs = {iterations, true_value};
    loop_inputs.insert(loop_inputs.end(), inits.begin(), inits.end());
    Node* back = g_.insert(g_.create(OpId::Loop, loop_inputs, 0));
    back->set_range(n->range());
    Block* rb = back->add_block();
    Value* j = rb->add_param(Type::int_());
    GradMap body_grads;
    Value* reversed_index;
    {
      InsertPointGuard guard(g_, rb);
      Value* one = g_.insert_constant(IValue(int64_t{1}), Type::int_(), n->range());
      Value* last = g_.insert_op(OpId::sub_int, {iterations, one}, Type::int_(), n->range());
      reversed_index = g_.insert_op(OpId::sub_int, {last, j}, Type::int_(), n->range());
      for (size_t k : diff_carried) {
        Value* p = body->params()[k + 1];
        TypePtr t = is_tensor_list(p->type()) ? p->type() : Type::tensor();
        accumulate(body_grads, body->returns()[k + 1], rb->add_param(t), n->range());
      }
      for (Value* list : threaded) body_grads.set(list, rb->add_param(list->type()));
      reverse_block(body, body_grads);
    }
    std::vector<Value*> outer;
    for (Value* v : body_grads.order()) {
      bool is_threaded = std::find(threaded.begin(), threaded.end(), v) != threaded.end();
      if (!defined_in(v, body) && !is_threaded) outer.push_back(v);
    }
    {
      InsertPointGuard guard(g_, back);
      for (size_t u = 0; u < outer.size(); ++u) {
        back->add_input(g_.insert_op(
            OpId::Undefined, {}, outer[u]->type()->is_tensor() ? Type::tensor() : outer[u]->type(),
            n->range()));
      }
    }
    {
      InsertPointGuard guard(g_, rb);
      rb->add_return(true_value);
      for (size_t k : diff_carried) {
        Value* gp = body_grads.get(body->params()[k + 1]);
        if (!gp) gp = zero_gradient(body->params()[k + 1], n->range());
        rb->add_return(gp);
      }
      for (Value* list : threaded) rb->add_return(body_grads.get(list));
      for (Value* v : outer) {
        Value* contribution = body_grads.get(v);
        Value* acc = rb->add_param(contribution->type());
        rb->add_return(
            g_.insert_op(OpId::AutogradAdd, {acc, contribution}, contribution->type(), n->range()));
      }
    }
    for (size_t k = 1; k < rb->returns().size(); ++k)
      back->add_output()->set_type(rb->returns()[k]->type());
    transport(body, rb, [&](Value* v) { return save_per_iteration(n, v, rb, reversed_index); });
    size_t out = 0;
    for (size_t k : diff_carried)
      accumulate(grads, n->input(k + 2), back->output(out++), n->range());
    for (Value* list : threaded) grads.set(list, back->output(out++));
    for (Value* v : outer) accumulate(grads, v, back->output(out++), n->range());
  }

  // Adds a carried counter to the forward loop `n`; returns the count after it.
  Value* count_iterations(Node* n) {
    auto found = counters_.find(n);
    if (found != counters_.end()) return found->second;
    Block* body = n->block(0);
    Value* zero;
    {
      InsertPointGuard guard(g_, n);
      zero = g_.insert_constant(IValue(int64_t{0}), Type::int_(), n->range());
    }
    n->add_input(zero);
    Value* p = body->add_param(Type::int_(), "");
    {
      InsertPointGuard guard(g_, body);
      Value* one = g_.insert_constant(IValue(int64_t{1}), Type::int_(), n->range());
      body->add_return(g_.insert_op(OpId::add_int, {p, one}, Type::int_(), n->range()));
    }
    Value* count = n->add_output()->set_type(Type::int_());
    counters_[n] = count;
    return count;
  }

  // Pushes `v` (defined in the body of loop `n`) onto a list at every iteration and
  // reads it back, in the backward body `rb`, at iteration `index`.
  Value* save_per_iteration(Node* n, Value* v, Block* rb, Value* index) {
    Value* list;
    {
      InsertPointGuard guard(g_, n);
      Node* lc = g_.insert(g_.create(OpId::ListConstruct, {}, 1));
      lc->set_range(n->range());
      list = lc->output()->set_type(Type::list(v->type()));
    }
    {
      Block* body = n->block(0);
      InsertPointGuard guard(g_, body);
      Node* push = g_.insert(g_.create(OpId::append_list, {list, v}, 0));
      push->set_range(n->range());
    }
    Node* read = g_.create(OpId::getitem_list, {list, index}, 1);
    read->set_range(n->range());
    read->insert_after(index->node());
    (void)rb;
    return read->output()->set_type(v->type());
  }

  Graph& g_;
  const Dependence& analysis_;
  std::unordered_map<const Node*, Value*> counters_;
};

bool has_effect(const Node* n) {
  return n->info().has(opflags::EFFECT) || n->op() == OpId::RaiseException;
}

bool effect_inside(const Node* n) {
  for (const Block* nb : n->blocks()) {
    for (const Node* m : *nb) {
      if (has_effect(m) || m->op() == OpId::Loop || effect_inside(m)) return true;
    }
  }
  return false;
}

bool remove_dead_in(Block* b) {
  bool changed = false;
  for (Node* n = b->return_node()->prev(); n != b->param_node();) {
    Node* prev = n->prev();
    for (Block* nb : n->blocks()) changed |= remove_dead_in(nb);
    bool used = has_effect(n) || n->op() == OpId::Loop;
    for (Value* o : n->outputs()) used |= o->has_uses();
    // An If that computes nothing used is kept for effects anywhere inside it (a raise
    // or an in-place update in a nested If too).
    if (!used && n->op() == OpId::If) used = effect_inside(n);
    if (!used) {
      for (Block* nb : n->blocks()) {
        while (!nb->returns().empty()) nb->erase_return(0);
        remove_dead_in(nb);
      }
      n->destroy();
      changed = true;
    }
    n = prev;
  }
  return changed;
}

// grad() differentiates a scalar: a result with more than one element is a runtime
// error (as functorch's), raised where the result was computed.
void check_one_element(Graph& g, Value* out, const std::string& function_name) {
  Sym n = numel(out);
  Sym not_one = call(OpId::ne_int, {n, 1});
  Node* branch = g.insert(g.create(OpId::If, {not_one}, 0));
  branch->set_range(FormulaScope::range());
  Block* raise = branch->add_block();
  branch->add_block();
  InsertPointGuard guard(g, raise);
  std::string fn = function_name.empty() ? "the function" : "'" + function_name + "'";
  Sym message = constant(IValue("grad() needs " + fn +
                                " to return a tensor with one element (a "
                                "scalar), as a loss; use vjp for other results"),
                         Type::str_());
  Node* r = g.insert(g.create(OpId::RaiseException, {message}, 0));
  r->set_range(FormulaScope::range());
}

}  // namespace

void remove_dead_nodes(Graph& g) {
  while (remove_dead_in(g.block())) {
  }
}

JointGraph build_joint(const Graph& forward, const std::vector<size_t>& wrt,
                       const JointOptions& options) {
  JointGraph joint;
  joint.graph = forward.clone();
  Graph& g = *joint.graph;
  prepare_for_differentiation(g, wrt);
  Dependence analysis = analyze_dependence(g, wrt);
  joint.num_forward_outputs = g.outputs().size();
  GradMap grads;
  Reverser reverser(g, analysis);
  Node* before_backward = g.block()->return_node()->prev();
  {
    InsertPointGuard guard(g, g.block());
    for (size_t k = 0; k < g.outputs().size(); ++k) {
      Value* out = g.outputs()[k];
      warn_about_cut(analysis, out, options.function_name);
      if (!analysis.requiring.count(out) || !out->type()->is_tensor()) continue;
      Value* seed;
      if (options.seed_with_ones) {
        FormulaScope scope(g, out->node()->range());
        check_one_element(g, out, options.function_name);
        seed = call(OpId::ones_like, {out});
      } else {
        std::string name = out->debug_name().empty() ? "" : "d" + out->debug_name();
        seed = g.add_input(Type::tensor(), name);
        joint.seeded_outputs.push_back(k);
      }
      Value* old = grads.get(out);
      grads.set(out, old ? g.insert_op(OpId::AutogradAdd, {old, seed}, Type::tensor()) : seed);
    }
    reverser.reverse_block(g.block(), grads);
    for (size_t i : wrt) {
      Value* in = g.inputs().at(i);
      Value* gi = grads.get(in);
      if (!in->type()->is_tensor()) {
        compile_error({}, "cannot differentiate with respect to a parameter of type " +
                              in->type()->str() + " (only Tensor parameters have gradients)");
      }
      if (!gi) gi = g.insert_op(OpId::Undefined, {}, Type::tensor());
      // No path from this input (or none taken at run time): zeros, as functorch gives.
      if (options.zeros_for_unreached_inputs)
        gi = g.insert_op(OpId::AutogradZeros, {gi, in}, Type::tensor());
      if (!in->debug_name().empty() && gi->debug_name().empty())
        gi->set_debug_name("d" + in->debug_name());
      g.add_output(gi);
    }
  }
  std::unordered_set<const Node*> backward;
  for (Node* n = before_backward->next(); n != g.block()->return_node(); n = n->next())
    backward.insert(n);
  remove_dead_nodes(g);
  // Dead-node removal creates nothing, so the surviving backward nodes are still
  // recognized by address.
  joint.first_backward_node = nullptr;
  for (Node* n : *g.block()) {
    if (backward.count(n)) {
      joint.first_backward_node = n;
      break;
    }
  }
  return joint;
}

}  // namespace tsl::autodiff

namespace tsl::autodiff {
namespace {

// The top-level node of `g` that contains the definition of `v` (null for inputs).
const Node* top_level_node(const Graph& g, const Value* v) {
  const Node* n = v->node();
  if (n == g.block()->param_node()) return nullptr;
  while (n->owning_block() != g.block()) {
    n = n->is_param_node() ? n->owning_block()->owning_node() : n->owning_block()->owning_node();
  }
  return n;
}

void destroy_node(Node* n) {
  for (Block* b : n->blocks()) {
    while (!b->returns().empty()) b->erase_return(0);
    for (Node* m = b->return_node()->prev(); m != b->param_node();) {
      Node* prev = m->prev();
      destroy_node(m);
      m = prev;
    }
  }
  n->destroy();
}

void collect_uses(const Block* b, std::vector<const Value*>& out) {
  for (const Node* n : *b) {
    for (const Value* v : n->inputs()) out.push_back(v);
    for (const Block* nb : n->blocks()) collect_uses(nb, out);
  }
  for (const Value* v : b->returns()) out.push_back(v);
}

// Note [Capturing sizes and dtypes]
// Many gradient formulas read a forward tensor only for its size or dtype:
// `sum_to_size(g, size(x))` undoes broadcasting, `to(g, dtype(x))` the promotion. If
// the backward asked them itself, the forward would have to keep the whole tensor for
// it (for `a - b`, both operands: 16 MiB each for 4M floats), where PyTorch's autograd
// saves the sizes alone. So `size(v)` and `dtype(v)` of a top-level forward value move
// to the end of the forward (not of an If's or Loop's output, which may be undefined), and the
// backward captures the list or the dtype instead of v. In-place ops change neither, so asking
// early gives the same answer.
void hoist_metadata_queries(Graph& J, Node* first_backward, size_t num_primal) {
  std::unordered_set<const Node*> forward;
  for (const Node* n : *J.block()) {
    if (n == first_backward) break;
    forward.insert(n);
  }
  // An output of an If or a Loop may be Uninitialized on the paths that never read it
  // (a value of the branch not taken): asking its size early, outside the block of
  // the backward that reads it, would ask an undefined tensor. Those stay in place.
  auto is_top_level_forward = [&](const Value* v) {
    if (v->node() == J.block()->param_node()) return v->offset() < num_primal;
    if (v->node()->op() == OpId::If || v->node()->op() == OpId::Loop) return false;
    return forward.count(v->node()) > 0;
  };
  // The backward's queries of such values, in its blocks too.
  std::vector<Node*> queries;
  std::function<void(Node*)> visit = [&](Node* n) {
    if ((n->op() == OpId::size || n->op() == OpId::dtype) && n->inputs().size() == 1 &&
        n->input(0)->type()->is_tensor() && is_top_level_forward(n->input(0)))
      queries.push_back(n);
    for (Block* b : n->blocks()) {
      for (Node* m : *b) visit(m);
    }
  };
  bool in_backward = false;
  for (Node* n : *J.block()) {
    in_backward |= n == first_backward;
    if (in_backward) visit(n);
  }
  std::map<std::pair<OpId, const Value*>, Value*> hoisted;  // one query per op and value
  for (Node* q : queries) {
    Value*& h = hoisted[{q->op(), q->input(0)}];
    if (!h) {
      Node* copy = J.create(q->op(), {q->input(0)}, 1);
      copy->set_range(q->range());
      copy->output()->set_type(q->output()->type());
      copy->insert_before(first_backward);
      h = copy->output();
    }
    q->output()->replace_all_uses_with(h);
    q->destroy();
  }
}

}  // namespace

std::shared_ptr<Graph> branch_on_defined_seed(const Graph& df, size_t num_seeds) {
  if (num_seeds != 1 || df.inputs().empty() || !df.inputs()[0]->type()->is_tensor()) return nullptr;
  const Value* seed = df.inputs()[0];
  bool read_by_grad_of = false;
  for (const Use& u : seed->uses()) read_by_grad_of |= u.user->op() == OpId::GradOf;
  if (!read_by_grad_of) return nullptr;
  auto g = std::make_shared<Graph>();
  g->set_name(df.name());
  std::vector<Value*> inputs;
  for (const Value* in : df.inputs()) inputs.push_back(g->add_input(in->type(), in->debug_name()));
  Node* test = g->create(OpId::AnyDefined, {inputs[0]}, 1);
  test->output()->set_type(Type::bool_());
  g->block()->append(test);
  Node* branch = g->create(OpId::If, {test->output()}, 0);
  g->block()->append(branch);
  for (int defined = 1; defined >= 0; --defined) {
    Block* b = branch->add_block();
    Node* s = g->create(defined ? OpId::AssumeDefined : OpId::Undefined,
                        defined ? std::vector<Value*>{inputs[0]} : std::vector<Value*>{}, 1);
    s->output()->set_type(seed->type());
    s->output()->set_debug_name(seed->debug_name());
    b->append(s);
    std::unordered_map<const Value*, Value*> map;
    map[seed] = s->output();
    for (size_t i = 1; i < inputs.size(); ++i) map[df.inputs()[i]] = inputs[i];
    g->clone_block_into(df.block(), b, map);
    for (const Value* r : df.outputs()) b->add_return(map.at(r));
  }
  for (const Value* r : df.outputs()) {
    Value* out = branch->add_output();
    out->set_type(r->type());
    out->set_debug_name(r->debug_name());
    g->add_output(out);
  }
  return g;
}

Gradient split(const JointGraph& joint) {
  if (joint.first_backward_node) {
    hoist_metadata_queries(*joint.graph, joint.first_backward_node,
                           joint.graph->inputs().size() - joint.seeded_outputs.size());
  }
  const Graph& J = *joint.graph;
  std::vector<Node*> nodes;
  for (Node* n : *J.block()) nodes.push_back(n);
  size_t boundary = nodes.size();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i] == joint.first_backward_node) boundary = i;
  }
  std::unordered_set<const Node*> backward(nodes.begin() + static_cast<std::ptrdiff_t>(boundary),
                                           nodes.end());
  size_t num_seeds = joint.seeded_outputs.size();
  size_t num_primal = J.inputs().size() - num_seeds;
  auto is_forward = [&](const Value* v) {
    const Node* top = top_level_node(J, v);
    if (!top) return v->offset() < num_primal;
    return !backward.count(top);
  };
  // Captures: forward values (not constants) that the backward reads.
  std::vector<const Value*> uses;
  for (size_t i = boundary; i < nodes.size(); ++i) {
    for (const Value* v : nodes[i]->inputs()) uses.push_back(v);
    for (const Block* b : nodes[i]->blocks()) collect_uses(b, uses);
  }
  for (size_t k = joint.num_forward_outputs; k < J.outputs().size(); ++k)
    uses.push_back(J.outputs()[k]);
  std::vector<const Value*> captures;
  std::unordered_set<const Value*> seen;
  for (const Value* v : uses) {
    if (!is_forward(v) || v->node()->op() == OpId::Constant) continue;
    if (seen.insert(v).second) captures.push_back(v);
  }

  Gradient result;
  result.num_real_outputs = joint.num_forward_outputs;
  result.num_captures = captures.size();

  // f: everything, then the backward removed.
  result.f = std::make_shared<Graph>();
  Graph& F = *result.f;
  F.set_name(J.name());
  {
    std::unordered_map<const Value*, Value*> map;
    for (const Value* in : J.inputs()) map[in] = F.add_input(in->type(), in->debug_name());
    F.clone_block_into(J.block(), F.block(), map);
    std::vector<Node*> copies;
    for (Node* n : *F.block()) copies.push_back(n);
    for (size_t i = 0; i < joint.num_forward_outputs; ++i) F.add_output(map.at(J.outputs()[i]));
    for (const Value* c : captures) F.add_output(map.at(c));
    for (size_t i = copies.size(); i-- > boundary;) destroy_node(copies[i]);
    for (size_t i = 0; i < num_seeds; ++i) F.block()->erase_param(num_primal);
  }

  // df: everything, forward values read through capture inputs, the forward removed.
  result.df = std::make_shared<Graph>();
  Graph& D = *result.df;
  D.set_name("grad of " + J.name());
  {
    std::unordered_map<const Value*, Value*> map;
    for (size_t i = 0; i < num_seeds; ++i) {
      const Value* s = J.inputs()[num_primal + i];
      map[s] = D.add_input(s->type(), s->debug_name());
    }
    std::vector<Value*> capture_inputs;
    for (const Value* c : captures)
      capture_inputs.push_back(D.add_input(c->type(), c->debug_name()));
    for (size_t i = 0; i < num_primal; ++i)
      map[J.inputs()[i]] = D.add_input(J.inputs()[i]->type(), J.inputs()[i]->debug_name());
    D.clone_block_into(J.block(), D.block(), map);
    std::vector<Node*> copies;
    for (Node* n : *D.block()) copies.push_back(n);
    for (size_t k = joint.num_forward_outputs; k < J.outputs().size(); ++k)
      D.add_output(map.at(J.outputs()[k]));
    // Constants the backward reads are copied in; captured values come in as inputs.
    Node* first = boundary < copies.size() ? copies[boundary] : D.block()->return_node();
    for (size_t i = 0; i < boundary; ++i) {
      Node* fwd = copies[i];
      for (Value* o : fwd->outputs()) {
        if (!o->has_uses()) continue;
        if (fwd->op() == OpId::Constant) {
          Node* c = D.create(OpId::Constant, {}, 1);
          c->set_attr("value", fwd->attr("value"));
          c->set_range(fwd->range());
          c->insert_before(first);
          c->output()->set_type(o->type());
          std::vector<Use> us = o->uses();
          for (const Use& u : us) u.user->replace_input(u.offset, c->output());
        }
      }
    }
    for (size_t k = 0; k < captures.size(); ++k)
      map.at(captures[k])->replace_all_uses_with(capture_inputs[k]);
    for (size_t i = boundary; i-- > 0;) destroy_node(copies[i]);
    for (size_t i = 0; i < num_primal; ++i) D.block()->erase_param(num_seeds + captures.size());
  }
  return result;
}

}  // namespace tsl::autodiff
