// In-place updates rewritten out of place before differentiating; see Note [In-place
// updates under differentiation] in functionalize.h.
#include "ir/autodiff/functionalize.h"

#include <algorithm>
#include <unordered_set>

#include "ir/autodiff/prepare.h"
#include "ir/autodiff/sym.h"

namespace tsl::autodiff {

bool is_inplace_update(OpId op) {
  switch (op) {
    case OpId::add_:
    case OpId::sub_:
    case OpId::mul_:
    case OpId::div_:
    case OpId::copy_:
    case OpId::fill_:
    case OpId::zero_:
      return true;
    default:
      return false;
  }
}

Value* out_of_place(Graph& g, Node* n) {
  InsertPointGuard guard(g, n);
  FormulaScope scope(g, n->range());
  Sym self = n->input(0);
  Sym r;
  switch (n->op()) {
    case OpId::add_:
      r = call(OpId::add, {self, n->input(1), n->input(2)});
      break;
    case OpId::sub_:
      r = call(OpId::sub, {self, n->input(1), n->input(2)});
      break;
    case OpId::mul_:
      r = call(OpId::mul, {self, n->input(1)});
      break;
    case OpId::div_:
      r = call(OpId::div, {self, n->input(1)});
      break;
    case OpId::copy_:
      r = n->input(1);
      break;
    case OpId::fill_:
      r = call(OpId::full_like, {self, n->input(1)});
      break;
    case OpId::zero_:
      r = zeros_like(self);
      break;
    default:
      TSL_INTERNAL_ASSERT(false, "not an in-place update: ", n->info().name);
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

bool may_alias_through(const Node* n) {
  if (n->info().has(opflags::VIEW)) return true;
  switch (n->op()) {
    case OpId::to_dtype:  // returns self when the dtype is already right
    case OpId::to_device:
    case OpId::ListConstruct:
    case OpId::TupleConstruct:
    case OpId::TupleUnpack:
    case OpId::TupleIndex:
    case OpId::getitem_list:
    case OpId::append_list:
    case OpId::unwrap_optional:
    case OpId::to_optional:
      return true;
    default:
      return is_inplace_update(n->op());
  }
}

// Every value that may share storage with v at run time.
std::vector<const Value*> aliases_of(const Value* v) {
  std::vector<const Value*> out{v};
  std::unordered_set<const Value*> seen{v};
  auto visit = [&](const Value* x) {
    if (x->type()->kind() == TypeKind::Int || x->type()->kind() == TypeKind::Float) return;
    if (seen.insert(x).second) out.push_back(x);
  };
  for (size_t i = 0; i < out.size(); ++i) {
    const Value* x = out[i];
    const Node* def = x->node();
    if (def->op() == OpId::Param) {
      const Block* b = def->owning_block();
      const Node* owner = b->owning_node();
      if (owner && owner->op() == OpId::Loop && x->offset() > 0) {
        size_t k = x->offset() - 1;  // carried value k
        visit(owner->input(k + 2));
        visit(b->returns()[k + 1]);
        visit(owner->output(k));
      }
    } else if (def->op() == OpId::ListConstruct || def->op() == OpId::TupleConstruct) {
      for (const Value* in : def->inputs()) visit(in);  // its elements
    } else if (may_alias_through(def) && !def->inputs().empty()) {
      visit(def->input(0));  // a view's base, an update's self, a list's element
    } else if (def->op() == OpId::If || def->op() == OpId::Loop) {
      size_t k = x->offset();
      if (def->op() == OpId::If) {
        for (const Block* b : def->blocks()) visit(b->returns()[k]);
      } else {
        visit(def->block(0)->returns()[k + 1]);
        visit(def->block(0)->params()[k + 1]);
        visit(def->input(k + 2));
      }
    }
    for (const Use& u : x->uses()) {
      const Node* user = u.user;
      bool element = user->op() == OpId::ListConstruct || user->op() == OpId::TupleConstruct;
      if (user->op() == OpId::append_list) {
        if (u.offset == 1) visit(user->input(0));  // the list now holds x
      } else if (may_alias_through(user) && (element || u.offset == 0)) {
        for (const Value* o : user->outputs()) visit(o);
      } else if (user->op() == OpId::Return && user->owning_block()->owning_node()) {
        const Node* owner = user->owning_block()->owning_node();
        size_t k = u.offset;
        if (owner->op() == OpId::If) {
          visit(owner->output(k));
        } else if (owner->op() == OpId::Loop && k > 0) {
          visit(owner->output(k - 1));
          visit(owner->block(0)->params()[k]);
        }
      } else if (user->op() == OpId::Loop && u.offset >= 2) {
        size_t k = u.offset - 2;
        visit(user->block(0)->params()[k + 1]);
        visit(user->output(k));
      }
    }
  }
  return out;
}

[[noreturn]] void unsafe(const Node* n, const std::string& why) {
  compile_error(n->range(), std::string("cannot differentiate through this in-place update (") +
                                std::string(n->info().base_name()) + "): " + why +
                                "; write it out of place (`x = x + y`) instead");
}

// Rewrites one in-place update; false when it has no gradient to carry.
bool functionalize_one(Graph& g, Node* n, const Dependence& dep) {
  bool involved = std::any_of(n->inputs().begin(), n->inputs().end(),
                              [&](const Value* v) { return dep.requiring.count(v) > 0; });
  if (!involved) return false;
  const Value* self = n->input(0);
  Chain chain(n);
  std::vector<Use> replace;
  for (const Value* a : aliases_of(self)) {
    if (!defined_before(chain, a)) continue;
    for (const Use& u : a->uses()) {
      if (u.user == n || !read_after(chain, a, u.user)) continue;
      bool same_block = site_of(chain, u.user).level == 0;
      if (a == self && same_block) {
        replace.push_back(u);
        continue;
      }
      if (a == self) {
        unsafe(n,
               "the updated tensor is read again after the branch or loop around it, or "
               "by the next iteration");
      }
      unsafe(n,
             "another alias of the updated tensor (a view of it, a tensor it is a view "
             "of, or a variable sharing it) is read after the update");
    }
  }
  if (self->node()->op() == OpId::Param && self->node()->owning_block() == g.block()) {
    unsafe(n, "it updates an input of the function being differentiated");
  }
  Value* r = out_of_place(g, n);
  for (const Use& u : replace) u.user->replace_input(u.offset, r);
  n->output()->replace_all_uses_with(r);
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
    if (!functionalize_one(g, next, dep)) stay.insert(next);
  }
}

}  // namespace tsl::autodiff
