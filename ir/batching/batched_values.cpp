// The analyses vmap runs before its rewrite: which values are batched (Note [Batched
// values]), and which may be undefined at run time.
#include "ir/batching/batched_values.h"

#include <algorithm>

#include "ir/autodiff/functionalize.h"

namespace tsl::batching {

bool Layout::any() const {
  if (batched) return true;
  return std::any_of(elements.begin(), elements.end(), [](const Layout& e) { return e.any(); });
}

Layout Layout::batched_like(const TypePtr& t) {
  Layout l;
  if (t->kind() == TypeKind::Tuple) {
    for (const TypePtr& e : t->contained()) l.elements.push_back(batched_like(e));
  } else {
    l.batched = is_batchable_type(t);
  }
  return l;
}

Layout Layout::join(const Layout& a, const Layout& b) {
  Layout l;
  l.batched = a.batched || b.batched;
  for (size_t i = 0; i < std::max(a.elements.size(), b.elements.size()); ++i) {
    Layout ea = i < a.elements.size() ? a.elements[i] : Layout();
    Layout eb = i < b.elements.size() ? b.elements[i] : Layout();
    l.elements.push_back(join(ea, eb));
  }
  return l;
}

bool is_batchable_type(const TypePtr& t) {
  switch (t->kind()) {
    case TypeKind::Tensor:
      return true;
    case TypeKind::Optional:
    case TypeKind::List:
      return is_batchable_type(t->element());
    default:
      return false;
  }
}

namespace {

bool is_list(const Value* v) { return v->type()->kind() == TypeKind::List; }

// Tensor?[]: the indices of x[i, j] (never batched as a whole).
bool is_index_list(const Value* v) {
  return is_list(v) && v->type()->element()->kind() == TypeKind::Optional;
}

}  // namespace

BatchedValues::BatchedValues(const Graph& g, const std::vector<bool>& batched_inputs) {
  do {
    changed_ = false;
    layouts_.clear();
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      bool b = i < batched_inputs.size() && batched_inputs[i];
      set(g.inputs()[i],
          b ? Layout::batched_like(g.inputs()[i]->type()) : Layout::batched_like(Type::none()));
    }
    run_block(g.block());
  } while (changed_);  // a list marked batched makes its literal batched: run again
}

const Layout& BatchedValues::layout(const Value* v) const {
  static const Layout unbatched;
  auto it = layouts_.find(v);
  return it == layouts_.end() ? unbatched : it->second;
}

void BatchedValues::set(const Value* v, Layout l) {
  if (is_list(v) && list_marked(v)) l.batched = true;
  layouts_[v] = std::move(l);
}

const Value* BatchedValues::list_root(const Value* v) {
  auto it = list_parent_.find(v);
  if (it == list_parent_.end() || it->second == v) return v;
  const Value* root = list_root(it->second);
  list_parent_[v] = root;
  return root;
}

void BatchedValues::unite_lists(const Value* a, const Value* b) {
  if (!is_list(a) || !is_list(b)) return;
  const Value* ra = list_root(a);
  const Value* rb = list_root(b);
  if (ra == rb) return;
  bool marked = marked_roots_[ra] || marked_roots_[rb];
  list_parent_[rb] = ra;
  if (marked && !marked_roots_[ra]) {
    marked_roots_[ra] = true;
    changed_ = true;
  }
}

bool BatchedValues::list_marked(const Value* v) { return marked_roots_[list_root(v)]; }

void BatchedValues::mark_list(const Value* v) {
  if (is_index_list(v) || list_marked(v)) return;
  marked_roots_[list_root(v)] = true;
  changed_ = true;
}

void BatchedValues::run_block(const Block* b) {
  for (const Node* n : *b) visit(n);
}

void BatchedValues::visit(const Node* n) {
  auto in = [&](size_t i) { return layout(n->input(i)); };
  switch (n->op()) {
    case OpId::If:
      return visit_if(n);
    case OpId::Loop:
      return visit_loop(n);
    case OpId::TupleConstruct: {
      Layout l;
      for (const Value* v : n->inputs()) l.elements.push_back(layout(v));
      return set(n->output(), std::move(l));
    }
    case OpId::TupleUnpack: {
      Layout t = in(0);
      for (size_t k = 0; k < n->outputs().size(); ++k) {
        set(n->output(k), k < t.elements.size() ? t.elements[k] : Layout());
      }
      return;
    }
    case OpId::TupleIndex: {
      Layout t = in(0);
      size_t k = static_cast<size_t>(n->attr("index").to_int());
      return set(n->output(), k < t.elements.size() ? t.elements[k] : Layout());
    }
    case OpId::ListConstruct: {
      Layout l;
      if (!is_index_list(n->output())) {
        for (const Value* v : n->inputs()) l.batched |= layout(v).any();
      }
      return set(n->output(), l);
    }
    case OpId::append_list:
      if (in(1).any()) mark_list(n->input(0));
      return;
    case OpId::setitem_list:
      if (in(2).any()) mark_list(n->input(0));
      return;
    case OpId::to_optional:
    case OpId::unwrap_optional:
    case OpId::AssumeDefined:
      unite_lists(n->input(0), n->output());
      return set(n->output(), in(0));
    case OpId::MakeClosure:
    case OpId::CallClosure:
    case OpId::AnyDefined:
      return;  // closures are never batched (the rewrite rejects batched captures)
    default:
      break;
  }
  if (autodiff::is_inplace_update(n->op()) || n->op() == OpId::requires_grad_) {
    if (!n->outputs().empty()) set(n->output(), in(0));
    return;
  }
  // An index list (x[i, j]) is not batched itself, but its op is when an index is.
  auto batched_indices = [&](const Value* v) {
    if (!is_index_list(v) || v->node()->op() != OpId::ListConstruct) return false;
    const auto& elems = v->node()->inputs();
    return std::any_of(elems.begin(), elems.end(), [&](const Value* e) { return layout(e).any(); });
  };
  bool any = std::any_of(n->inputs().begin(), n->inputs().end(),
                         [&](const Value* v) { return layout(v).any() || batched_indices(v); });
  for (const Value* o : n->outputs()) {
    set(o, any ? Layout::batched_like(o->type()) : Layout());
  }
}

void BatchedValues::visit_if(const Node* n) {
  run_block(n->block(0));
  run_block(n->block(1));
  for (size_t k = 0; k < n->outputs().size(); ++k) {
    const Value* a = n->block(0)->returns()[k];
    const Value* b = n->block(1)->returns()[k];
    unite_lists(n->output(k), a);
    unite_lists(n->output(k), b);
    set(n->output(k), Layout::join(layout(a), layout(b)));
  }
}

void BatchedValues::visit_loop(const Node* n) {
  const Block* body = n->block(0);
  size_t carried = n->outputs().size();
  std::vector<Layout> params(carried);
  for (size_t k = 0; k < carried; ++k) {
    params[k] = layout(n->input(k + 2));
    unite_lists(n->input(k + 2), body->params()[k + 1]);
    unite_lists(body->params()[k + 1], body->returns()[k + 1]);
    unite_lists(body->params()[k + 1], n->output(k));
  }
  set(body->params()[0], Layout());
  for (bool again = true; again;) {
    for (size_t k = 0; k < carried; ++k) set(body->params()[k + 1], params[k]);
    run_block(body);
    again = false;
    for (size_t k = 0; k < carried; ++k) {
      Layout next = Layout::join(params[k], layout(body->returns()[k + 1]));
      if (!(next == params[k])) {
        params[k] = std::move(next);
        again = true;
      }
    }
  }
  for (size_t k = 0; k < carried; ++k) set(n->output(k), params[k]);
}

// ---- MayBeUndefined

MayBeUndefined::MayBeUndefined(const Graph& g) {
  for (bool again = true; again;) {
    size_t before = set_.size();
    run(g.block());
    again = set_.size() != before;
  }
}

void MayBeUndefined::run(const Block* b) {
  for (const Node* n : *b) {
    for (const Block* nb : n->blocks()) run(nb);
    visit(n);
  }
}

void MayBeUndefined::visit(const Node* n) {
  const MayBeUndefined& may = *this;
  switch (n->op()) {
    case OpId::Undefined:
    case OpId::Uninitialized:  // a placeholder, None at run time
      set_.insert(n->output());
      return;
    case OpId::AutogradAdd:
      if (may(n->input(0)) && may(n->input(1))) set_.insert(n->output());
      return;
    case OpId::AutogradZeros:
      // Zeros like an Optional that holds None: no zeros at all.
      if (may(n->input(0)) && (may(n->input(1)) || !n->input(1)->type()->is_tensor()))
        set_.insert(n->output());
      return;
    case OpId::If:
      for (size_t k = 0; k < n->outputs().size(); ++k) {
        for (const Block* nb : n->blocks()) {
          if (may(nb->returns()[k])) set_.insert(n->output(k));
        }
      }
      return;
    case OpId::Loop:
      for (size_t k = 0; k < n->outputs().size(); ++k) {
        const Block* body = n->block(0);
        if (may(n->input(k + 2)) || may(body->returns()[k + 1])) {
          set_.insert(body->params()[k + 1]);
          set_.insert(n->output(k));
        }
      }
      return;
    case OpId::to_optional:
    case OpId::unwrap_optional:
      if (may(n->input(0))) set_.insert(n->output());
      return;
    default:
      return;
  }
}

}  // namespace tsl::batching
