// In-place updates rewritten out of place before differentiating; see Note [In-place
// updates under differentiation] in functionalize.h.
#include "ir/autodiff/functionalize.h"

#include <algorithm>
#include <unordered_set>

#include "ir/autodiff/prepare.h"
#include "ir/autodiff/sym.h"

namespace tsl::autodiff {

bool is_inplace_update(OpId op) { return op_info(op).has(opflags::INPLACE); }

Value* out_of_place(Graph& g, Node* n) {
  InsertPointGuard guard(g, n);
  FormulaScope scope(g, n->range());
  Sym self = n->input(0);
  Sym r;
  switch (n->op()) {
    // The in-place updates whose out-of-place form has another name.
    case OpId::copy_:
      r = n->input(1);
      break;
    case OpId::fill_:
      r = call(OpId::full_like, {self, n->input(1)});
      break;
    case OpId::zero_:
      r = zeros_like(self);
      break;
    default: {
      // add_ -> add with the same arguments (Note [The op table]: INPLACE).
      std::optional<OpId> op = inplace_twin(n->op());
      TSL_INTERNAL_ASSERT(op, "no out-of-place form of ", n->info().name);
      r = call(*op, std::vector<Arg>(n->inputs().begin(), n->inputs().end()));
      break;
    }
  }
  // An in-place update keeps self's dtype and shape (the kernel checks that the
  // result can be cast and that the other operand broadcasts into self).
  return expand(to_dtype(r, dtype_of(self)), size(self));
}

namespace {

// Where a node sits relative to the in-place update `n`: the chain of (block, the
// node of that block that holds n) from n's own block outwards.
struct Chain {
  std::vector<const Block*> blocks;
  std::vector<const Node*> holders;  // holders[0] == n

  explicit Chain(const Node* n) {
    for (const Node* h = n; h != nullptr;) {
      const Block* b = h->owning_block();
      blocks.push_back(b);
      holders.push_back(h);
      h = b->owning_node();
    }
  }
  // The index k with blocks[k] == b, or -1.
  int level_of(const Block* b) const {
    auto it = std::find(blocks.begin(), blocks.end(), b);
    return it == blocks.end() ? -1 : static_cast<int>(it - blocks.begin());
  }
};

// Where value v is defined: its block's level in the chain, and the node of that
// block holding the definition (null for a block parameter).
struct Site {
  int level = -1;
  const Node* holder = nullptr;
};

Site site_of(const Chain& c, const Node* node) {
  for (const Node* h = node; h != nullptr; h = h->owning_block()->owning_node()) {
    int k = c.level_of(h->owning_block());
    if (k >= 0) return {k, h};
  }
  return {};
}

Site definition_site(const Chain& c, const Value* v) {
  const Node* def = v->node();
  if (def->op() == OpId::Param) {
    const Block* b = def->owning_block();
    int k = c.level_of(b);
    if (k >= 0) return {k, nullptr};
    return site_of(c, b->owning_node());
  }
  return site_of(c, def);
}

bool before_in_block(const Node* a, const Node* b) { return a != b && a->is_before(b); }

// Whether v is defined before the update runs.
bool defined_before(const Chain& c, const Value* v) {
  Site s = definition_site(c, v);
  if (s.level < 0) return false;
  if (!s.holder) return true;  // a parameter of a block enclosing the update
  return before_in_block(s.holder, c.holders[s.level]);
}

// Whether a read of v by `user` can happen after the update: later in a block that
// holds the update, or anywhere inside a loop around the update that v is defined
// outside of (the next iteration). A read in the other branch of an If never runs
// with the update; an enclosing node that takes v as an input reads it on entry.
bool read_after(const Chain& c, const Value* v, const Node* user) {
  Site u = site_of(c, user);
  if (u.level < 0) return true;  // unreachable for a well-formed graph: be safe
  const Node* holder = c.holders[u.level];
  if (before_in_block(holder, u.holder)) return true;
  // holders[k] for k > u.level encloses both the read and the update; a loop among
  // them that v is defined outside of (v's block is blocks[d], d >= k) repeats both.
  Site d = definition_site(c, v);
  int top = static_cast<int>(c.holders.size()) - 1;
  int outside = d.level < 0 ? top : std::min(d.level, top);
  for (int k = u.level + 1; k <= outside; ++k) {
    if (c.holders[k]->op() == OpId::Loop) return true;
  }
  return false;
}

// Ops whose result may be (a view of) their first input: views, conversions that
// return self when nothing changes, Optional wrapping, in-place updates (they return
// self).
bool returns_view_of_first_input(const Node* n) {
  if (n->info().has(opflags::VIEW) || is_inplace_update(n->op())) return true;
  switch (n->op()) {
    case OpId::to_dtype:
    case OpId::to_device:
    case OpId::unwrap_optional:
    case OpId::to_optional:
      return true;
    default:
      return false;
  }
}

// A flow-insensitive points-to analysis: each value's set of the allocations (values
// that made fresh storage: op results, constants, graph inputs) it may refer to, and
// for lists and tuples the allocations their elements may refer to. Two values may
// alias when their sets meet. A merge (If, Loop) unions its sources, so `y = v if c
// else x` aliases v and x while v and x stay apart.
class PointsTo {
 public:
  explicit PointsTo(const Graph& g) {
    // An input list's or tuple's elements are the caller's: they alias the input.
    for (const Value* in : g.inputs()) {
      pts_[in].insert(in);
      contents_[in].insert(in);
    }
    bool changed = true;
    while (changed) {
      changed = false;
      visit_block(g.block(), changed);
    }
  }

  bool may_alias(const Value* a, const Value* b) const {
    const Set& x = of(a);
    const Set& y = of(b);
    for (const Value* o : x) {
      if (y.count(o)) return true;
    }
    return false;
  }

  // Every value of the graph that may alias v.
  std::vector<const Value*> aliases_of(const Value* v) const {
    std::vector<const Value*> out;
    for (const auto& [x, set] : pts_) {
      if (x == v || may_alias(x, v)) out.push_back(x);
    }
    // In program order, so that the first problem reported is always the same one.
    std::sort(out.begin(), out.end(), [](const Value* a, const Value* b) {
      return std::make_pair(a->node()->id(), a->offset()) <
             std::make_pair(b->node()->id(), b->offset());
    });
    return out;
  }

 private:
  using Set = std::unordered_set<const Value*>;

  const Set& of(const Value* v) const {
    static const Set empty;
    auto it = pts_.find(v);
    return it == pts_.end() ? empty : it->second;
  }

  static bool add_all(Set& to, const Set& from) {
    size_t before = to.size();
    to.insert(from.begin(), from.end());
    return to.size() != before;
  }

  void visit_block(const Block* b, bool& changed) {
    for (const Value* p : b->params()) pts_[p];  // known, maybe empty
    for (const Node* n : *b) visit(n, changed);
  }

  void visit(const Node* n, bool& changed) {
    for (const Block* nb : n->blocks()) visit_block(nb, changed);
    switch (n->op()) {
      case OpId::If:
        for (size_t k = 0; k < n->outputs().size(); ++k) {
          for (const Block* nb : n->blocks())
            changed |= add_all(pts_[n->output(k)], of(nb->returns()[k]));
          changed |= add_all(contents_[n->output(k)], contents_of_returns(n, k));
        }
        return;
      case OpId::Loop: {
        const Block* body = n->block(0);
        for (size_t k = 0; k < n->outputs().size(); ++k) {
          const Value* p = body->params()[k + 1];
          changed |= add_all(pts_[p], of(n->input(k + 2)));
          changed |= add_all(pts_[p], of(body->returns()[k + 1]));
          changed |= add_all(contents_[p], contents(n->input(k + 2)));
          changed |= add_all(contents_[p], contents(body->returns()[k + 1]));
          changed |= add_all(pts_[n->output(k)], of(p));
          changed |= add_all(contents_[n->output(k)], contents(p));
        }
        return;
      }
      case OpId::ListConstruct:
      case OpId::TupleConstruct:
        pts_[n->output()].insert(n->output());
        for (const Value* in : n->inputs()) changed |= add_all(contents_[n->output()], of(in));
        return;
      case OpId::append_list:
        changed |= add_all(contents_[n->input(0)], of(n->input(1)));
        return;
      case OpId::getitem_list:
      case OpId::TupleIndex:
      case OpId::TupleUnpack:
        for (const Value* o : n->outputs()) changed |= add_all(pts_[o], contents(n->input(0)));
        return;
      default:
        break;
    }
    if (returns_view_of_first_input(n) && !n->inputs().empty()) {
      for (const Value* o : n->outputs()) {
        changed |= add_all(pts_[o], of(n->input(0)));
        changed |= add_all(contents_[o], contents(n->input(0)));
      }
      return;
    }
    for (const Value* o : n->outputs()) pts_[o].insert(o);  // fresh storage
  }

  Set contents(const Value* v) const {
    auto it = contents_.find(v);
    return it == contents_.end() ? Set() : it->second;
  }
  Set contents_of_returns(const Node* n, size_t k) const {
    Set out;
    for (const Block* nb : n->blocks()) add_all(out, contents(nb->returns()[k]));
    return out;
  }

  std::unordered_map<const Value*, Set> pts_;
  std::unordered_map<const Value*, Set> contents_;
};

// Reads of a tensor's metadata, which an in-place update never changes.
bool reads_only_metadata(const Node* user) { return user->info().has(opflags::META); }

// What must hold for the out-of-place rewrite to be exact.
struct Conditions {
  std::string never;  // a reason the rewrite is never exact here, or ""
  // Values that must not share storage with the updated tensor when the update runs,
  // checked at run time: inputs it may alias, and aliases read afterwards.
  std::vector<Value*> inputs;
  std::vector<Value*> read_later;
  // Later reads of the updated base and of the views the update went through: they
  // read the new value (the base) or the same view of it.
  std::vector<Use> replace;
  // Other select/slice views of the base read later, with their chains.
  std::unordered_map<const Value*, std::vector<Node*>> replayed;
};

// The select/slice views that make `self` from a base that is not such a view (they
// have scatter inverses: x[0, 1:3] = v writes x), innermost first; empty when self is
// no such view.
std::vector<Node*> view_chain(Value* self) {
  std::vector<Node*> chain;
  for (Value* v = self; v->node()->op() == OpId::select || v->node()->op() == OpId::slice;
       v = v->node()->input(0)) {
    chain.push_back(v->node());
  }
  return chain;
}

Conditions conditions_for(const Graph& g, Node* n, const PointsTo& points_to, Value* base,
                          const std::vector<Node*>& views) {
  Conditions c;
  Chain chain(n);
  std::unordered_set<const Value*> handled{base};
  for (const Node* v : views) handled.insert(v->output());
  for (Value* in : g.inputs()) {
    if (points_to.may_alias(in, base)) c.inputs.push_back(in);
  }
  for (const Value* a : points_to.aliases_of(base)) {
    if (!defined_before(chain, a)) continue;
    for (const Use& u : a->uses()) {
      if (u.user == n || reads_only_metadata(u.user) || !read_after(chain, a, u.user)) continue;
      // A later read in the update's own block reads the new value; a read before
      // it there runs after it only in the next iteration of a loop (never exact).
      Site at = site_of(chain, u.user);
      bool later_in_block = at.level == 0 && before_in_block(n, at.holder);
      if (handled.count(a) && later_in_block) {
        c.replace.push_back(u);
        continue;
      }
      if (handled.count(a)) {
        c.never =
            "the updated tensor is read again after the branch or loop around it, or "
            "by the next iteration";
        return c;
      }
      // Another select/slice view of the base (`c = b[1]` read after `b[1, 0] = v`):
      // read as the same view of the new base.
      std::vector<Node*> other = view_chain(const_cast<Value*>(a));
      if (!other.empty() && other.back()->input(0) == base && later_in_block) {
        c.replace.push_back(u);
        c.replayed.emplace(a, std::move(other));
        continue;
      }
      c.read_later.push_back(const_cast<Value*>(a));
      break;
    }
  }
  return c;
}

// The base with `src` written where view node `v` selects (its scatter inverse).
Value* scatter_into(Graph& g, Node* v, Value* base, Value* src) {
  FormulaScope scope(g, v->range());
  if (v->op() == OpId::select)
    return call(OpId::select_scatter, {base, src, v->input(1), v->input(2)});
  return call(OpId::slice_scatter, {base, src, v->input(1), v->input(2), v->input(3), v->input(4)});
}

// The same view node `v` applied to `base`.
Value* view_of(Graph& g, Node* v, Value* base) {
  std::vector<Value*> ins = v->inputs();
  ins[0] = base;
  return g.insert_op(v->op(), ins, v->output()->type(), v->range());
}

std::string message_for(const Node* n, const std::string& why) {
  return "cannot differentiate through this in-place update (" +
         std::string(n->info().base_name()) + "): " + why +
         "; write it out of place (`x = x + y`) instead";
}

// Inserts before n a run-time check that n's self shares storage with none of `others`.
void check_apart(Graph& g, Node* n, const std::vector<Value*>& others, const std::string& why) {
  if (others.empty()) return;
  Value* text = g.insert_constant(IValue(message_for(n, why)), Type::str_(), n->range());
  std::vector<Value*> ins{text, n->input(0)};
  ins.insert(ins.end(), others.begin(), others.end());
  g.insert(g.create(OpId::AutogradNoAlias, ins, 0))->set_range(n->range());
}

// Rewrites one in-place update; false when it has no gradient to carry. An update
// through select/slice views writes their base: the base becomes its scatters, and
// later reads of the views read the same views of the new base. Where the rewrite
// would not be exact, the update raises a runtime error when it runs instead of
// computing a wrong gradient: always, or when run-time storage shows that a may-alias
// is one (`y = v if c else x` aliases x only when c is false).
bool functionalize_one(Graph& g, Node* n, const Dependence& dep) {
  bool involved = std::any_of(n->inputs().begin(), n->inputs().end(),
                              [&](const Value* v) { return dep.requiring.count(v) > 0; });
  if (!involved) return false;
  Value* self = n->input(0);
  std::vector<Node*> views = view_chain(self);
  Value* base = views.empty() ? self : views.back()->input(0);
  Conditions c = conditions_for(g, n, PointsTo(g), base, views);
  InsertPointGuard guard(g, n);
  if (!c.never.empty()) {
    Value* text = g.insert_constant(IValue(message_for(n, c.never)), Type::str_(), n->range());
    g.insert(g.create(OpId::RaiseException, {text}, 0))->set_range(n->range());
    c.replace.clear();
  } else {
    check_apart(g, n, c.inputs, "it updates an input of the function being differentiated");
    check_apart(g, n, c.read_later,
                "another alias of the updated tensor (a view of it, a tensor it is a view "
                "of, or a variable sharing it) is read after the update");
  }
  Value* updated = out_of_place(g, n);
  // Write the new view back through each view into its base.
  for (Node* v : views) updated = scatter_into(g, v, v->input(0), updated);
  std::unordered_map<const Value*, Value*> now{{base, updated}};
  for (auto it = views.rbegin(); it != views.rend(); ++it) {
    Node* v = *it;
    now[v->output()] = view_of(g, v, now.at(v->input(0)));
  }
  for (const auto& [a, chain] : c.replayed) {
    Value* v = updated;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) v = view_of(g, *it, v);
    now[a] = v;
  }
  for (const Use& u : c.replace) u.user->replace_input(u.offset, now.at(u.user->input(u.offset)));
  n->output()->replace_all_uses_with(now.at(self));
  n->destroy();
  return true;
}

Node* first_update(Block* b) {
  for (Node* n : *b) {
    if (is_inplace_update(n->op())) return n;
    for (Block* nb : n->blocks()) {
      if (Node* m = first_update(nb)) return m;
    }
  }
  return nullptr;
}

// The updates in program order, skipping those already judged to stay in place.
void collect_updates(Block* b, std::vector<Node*>& out) {
  for (Node* n : *b) {
    if (is_inplace_update(n->op())) out.push_back(n);
    for (Block* nb : n->blocks()) collect_updates(nb, out);
  }
}

}  // namespace

void functionalize_inplace_updates(Graph& g, const std::vector<size_t>& wrt) {
  if (!first_update(g.block())) return;
  // One at a time in program order: each rewrite changes which later values depend
  // on the differentiated inputs (a chain `h += a; h *= b`), so the analysis reruns.
  std::unordered_set<const Node*> stay;
  for (;;) {
    std::vector<Node*> updates;
    collect_updates(g.block(), updates);
    Node* next = nullptr;
    for (Node* n : updates) {
      if (!stay.count(n)) {
        next = n;
        break;
      }
    }
    if (!next) return;
    Dependence dep = analyze_dependence(g, wrt);
    if (functionalize_one(g, next, dep)) {
      // A rewrite can make an update judged before depend on the inputs (`v += w` in a
      // loop whose v another update makes differentiable): judge them all again.
      stay.clear();
    } else {
      stay.insert(next);
    }
  }
}

}  // namespace tsl::autodiff
