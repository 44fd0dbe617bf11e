// Forwarding the entries of list and dict literals to their reads at constant indices
// and keys; see Note [Dicts under differentiation] in forward_containers.h.
#include "ir/autodiff/forward_containers.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/passes/pass_utils.h"
#include "runtime/kernels/dict_ops.h"

namespace tsl::autodiff {
namespace {

// A constant index or key as text ("i3", "sname"), or nullopt for a run-time one.
std::optional<std::string> key_of(const Value* v) {
  const IValue* c = constant_value(v);
  if (!c) return std::nullopt;
  if (c->is_int()) return "i" + std::to_string(c->to_int());
  if (c->is_str()) return "s" + c->to_str();
  return std::nullopt;
}

// Whether a value of type `t` may be, or hold, a list or a dict.
bool may_hold_container(const TypePtr& t) {
  switch (t->kind()) {
    case TypeKind::List:
    case TypeKind::Dict:
    case TypeKind::Any:
    case TypeKind::Var:
    case TypeKind::Function:
      return true;
    default:
      break;
  }
  for (const TypePtr& c : t->contained()) {
    if (may_hold_container(c)) return true;
  }
  return false;
}

// What a node does with the container it reads at input `offset`.
enum class Access {
  Read,     // reads the entry at input(1): getitem, get
  Write,    // stores input(2) at input(1)
  Pop,      // reads the entry at input(1) and removes it
  Clobber,  // changes entries that cannot be named: update, clear
  Inspect,  // reads without keeping the container: len, in, keys, print, cat, ...
  Escape,   // may keep it or hand it on: stored, called, carried, returned
};

Access dict_access(DictOp op, size_t offset) {
  // As a value (`d2[k] = d`, `d2.get(k, d)`) a dict escapes; `d2.update(d)` copies
  // its entries and `d2 == d` compares them.
  if (offset != 0) {
    return op == DictOp::Update || op == DictOp::Eq ? Access::Inspect : Access::Escape;
  }
  switch (op) {
    case DictOp::Getitem:
    case DictOp::Get:
    case DictOp::GetDefault:
      return Access::Read;
    case DictOp::Setitem:
      return Access::Write;
    case DictOp::Pop:
    case DictOp::PopDefault:
      return Access::Pop;
    case DictOp::Update:
    case DictOp::Clear:
      return Access::Clobber;
    default:
      return Access::Inspect;  // len, in, keys, values, items, copy, the size check
  }
}

Access access_of(const Node* n, size_t offset) {
  if (auto op = dict_op_of(n->op())) return dict_access(*op, offset);
  switch (n->op()) {
    case OpId::getitem_list:
      return Access::Read;
    case OpId::setitem_list:
      return offset == 0 ? Access::Write : Access::Escape;
    case OpId::append_list:  // appends leave the elements a literal starts with in place
      return offset == 0 ? Access::Inspect : Access::Escape;
    case OpId::print:
    case OpId::Str:
    case OpId::format:
    case OpId::is:
    case OpId::is_not:
      return Access::Inspect;
    default:
      break;
  }
  bool dead = std::none_of(n->outputs().begin(), n->outputs().end(),
                           [](const Value* o) { return o->has_uses(); });
  if (is_pure_op(n) && dead) return Access::Inspect;  // a tuple forward_tuples took apart
  if (n->info().has(opflags::PRIM) || n->info().has(opflags::EFFECT) || !n->blocks().empty())
    return Access::Escape;
  // Any other op (cat, sum of a list, len) keeps the container only in an output that
  // can hold one.
  for (const Value* o : n->outputs()) {
    if (may_hold_container(o->type())) return Access::Escape;
  }
  return Access::Inspect;
}

// What the program stored at each key so far, while that is known.
struct Entries {
  std::map<std::string, Value*> values;
  std::vector<std::string> order;  // the keys in insertion order (a dict's iteration order)
  bool known = true;               // false after a write that could not be followed

  void set(const std::string& key, Value* v) {
    if (!values.count(key)) order.push_back(key);
    values[key] = v;
  }
  void erase(const std::string& key) {
    values.erase(key);
    order.erase(std::find(order.begin(), order.end(), key));
  }
};

bool written(const Value* container);
std::optional<Entries> initial_entries(const Node* literal);

bool is_inside(const Node* n, const Node* outer) {
  for (const Node* m = n; m; m = m->owning_block() ? m->owning_block()->owning_node() : nullptr) {
    if (m == outer) return true;
  }
  return false;
}

class Forwarder {
 public:
  Forwarder(Graph& g, Value* container) : g_(g), c_(container) {
    is_dict_ = container->node()->op() == OpId::DictConstruct;
  }

  // Forwards the reads from `first` up to `end` (a block's return node) given the
  // entries before `first`; returns whether a write changed them.
  bool walk(Node* first, Node* end, Entries& e) {
    bool changed = false;
    for (Node* n = first; n != end;) {
      Node* next = n->next();
      if (!n->blocks().empty()) {
        changed |= walk_blocks(n, e);
      } else {
        for (size_t i = 0; i < n->inputs().size(); ++i) {
          if (n->input(i) != c_) continue;
          Access a = access_of(n, i);
          if (a == Access::Read) {
            forward_read(n, e);  // may destroy n
            break;
          }
          changed |= apply(n, a, e);
        }
      }
      n = next;
    }
    return changed;
  }

 private:
  // A loop body that writes the container reads it differently in each iteration:
  // none of its reads is forwarded, and nothing is known after it. A branch starts
  // from the entries before the If; after it, see merge_branches.
  bool walk_blocks(Node* n, Entries& e) {
    if (n->op() == OpId::Loop && writes_inside(n)) {
      e.known = false;
      return true;
    }
    std::vector<Entries> ends;
    bool changed = false;
    for (Block* b : n->blocks()) {
      ends.push_back(e);
      changed |= walk(b->param_node()->next(), b->return_node(), ends.back());
    }
    if (!changed) return false;
    if (n->op() != OpId::If || !merge_branches(n, ends[0], ends[1], e)) e.known = false;
    return true;
  }

  // After an If whose branches wrote the container: where both know every entry and
  // have the same keys in the same order, each entry is the If's output of the value
  // each branch holds there (a new output where they differ), as the emitter merges a
  // variable assigned in both branches. Returns false where that cannot be said.
  bool merge_branches(Node* n, const Entries& then_end, const Entries& else_end, Entries& e) {
    if (!e.known || !then_end.known || !else_end.known || then_end.order != else_end.order)
      return false;
    const TypePtr& type = is_dict_ ? c_->type()->value() : c_->type()->element();
    for (const std::string& key : then_end.order) {
      Value* a = then_end.values.at(key);
      Value* b = else_end.values.at(key);
      if (a == b) {
        e.values[key] = a;
        continue;
      }
      n->block(0)->add_return(a);
      n->block(1)->add_return(b);
      e.values[key] = n->add_output()->set_type(type);
    }
    e.order = then_end.order;
    return true;
  }

  bool writes_inside(const Node* n) const {
    for (const Use& u : c_->uses()) {
      Access a = access_of(u.user, u.offset);
      if ((a == Access::Write || a == Access::Pop || a == Access::Clobber) &&
          is_inside(u.user, n)) {
        return true;
      }
    }
    return false;
  }

  // A write, pop or clobber; returns whether the entries changed.
  bool apply(Node* n, Access a, Entries& e) {
    if (a == Access::Inspect || a == Access::Escape) return false;
    if (a == Access::Clobber) {
      if (!update_from_literal(n, e)) e.known = false;
      return true;
    }
    std::optional<std::string> key = key_of(n->input(1));
    // A list has only the places its literal made: another index names one we cannot
    // tell (negative, or made by an append).
    if (!key || (!is_dict_ && !e.values.count(*key))) {
      e.known = false;
      return true;
    }
    if (!e.known) return true;
    if (a == Access::Write) {
      e.set(*key, n->input(2));
      return true;
    }
    auto it = e.values.find(*key);  // a pop: its result is the entry, which leaves
    if (it != e.values.end()) {
      n->output()->replace_all_uses_with(it->second);
      e.erase(*key);
    } else if (dict_op_of(n->op()) == DictOp::PopDefault) {
      n->output()->replace_all_uses_with(n->input(2));
    }
    return true;
  }

  // `d.update({"k": v, ...})`: the writes of the literal's entries, when its keys are
  // constants and nothing writes it. Returns false for any other update or clear.
  bool update_from_literal(const Node* n, Entries& e) const {
    if (dict_op_of(n->op()) != DictOp::Update) return false;
    const Node* other = n->input(1)->node();
    if (other->op() != OpId::DictConstruct || written(n->input(1))) return false;
    std::optional<Entries> entries = initial_entries(other);
    if (!entries) return false;
    for (const std::string& key : entries->order) e.set(key, entries->values[key]);
    return true;
  }

  // getitem / get at a constant key becomes the value stored there; get of a key the
  // dict surely lacks becomes its default. (A missing key's getitem raises KeyError
  // at run time: it stays.)
  void forward_read(Node* n, const Entries& e) {
    if (!e.known) return;
    std::optional<std::string> key = key_of(n->input(1));
    std::optional<DictOp> op = dict_op_of(n->op());
    if (!key) {
      if (op == DictOp::Getitem) read_through_list(n, e);
      return;
    }
    auto it = e.values.find(*key);
    Value* replacement = nullptr;
    if (it != e.values.end()) {
      replacement = it->second;
      if (!replacement->type()->equals(*n->output()->type())) {
        InsertPointGuard guard(g_, n);
        replacement =
            g_.insert_op(OpId::to_optional, {replacement}, n->output()->type(), n->range());
      }
    } else if (is_dict_ && op == DictOp::GetDefault) {
      replacement = n->input(2);
    } else if (is_dict_ && op == DictOp::Get) {
      InsertPointGuard guard(g_, n);
      replacement = g_.insert_constant(IValue(), n->output()->type(), n->range());
    }
    if (!replacement) return;
    n->output()->replace_all_uses_with(replacement);
    n->destroy();
  }

  // `d[k]` at a run-time key (`for k in d: ... d[k]`), where every entry is known: a
  // read of the list of the values in the dict's order, `[v0, v1, ...][index(d, k)]`,
  // which autodiff follows (Note [Lists] in differentiate.cpp). index raises getitem's
  // KeyError for a missing key.
  void read_through_list(Node* n, const Entries& e) {
    InsertPointGuard guard(g_, n);
    std::vector<Value*> elements;
    for (const std::string& key : e.order) elements.push_back(e.values.at(key));
    Node* list = g_.insert(g_.create(OpId::ListConstruct, elements, 1));
    list->set_range(n->range());
    list->output()->set_type(Type::list(c_->type()->value()));
    bool int_keys = c_->type()->key()->kind() == TypeKind::Int;
    Value* at = g_.insert_op(dict_op_id(DictOp::Index, int_keys), {c_, n->input(1)}, Type::int_(),
                             n->range());
    Value* v =
        g_.insert_op(OpId::getitem_list, {list->output(), at}, n->output()->type(), n->range());
    n->output()->replace_all_uses_with(v);
    n->destroy();
  }

  Graph& g_;
  Value* c_;
  bool is_dict_ = false;
};

// The entries a literal starts with, or nullopt when a key is not a constant.
std::optional<Entries> initial_entries(const Node* literal) {
  Entries e;
  if (literal->op() == OpId::ListConstruct) {
    for (size_t k = 0; k < literal->inputs().size(); ++k)
      e.set("i" + std::to_string(k), literal->input(k));
    return e;
  }
  for (size_t i = 0; i + 1 < literal->inputs().size(); i += 2) {
    std::optional<std::string> key = key_of(literal->input(i));
    if (!key) return std::nullopt;
    e.set(*key, literal->input(i + 1));  // a later duplicate keeps its place, takes its value
  }
  return e;
}

bool written(const Value* container) {
  for (const Use& u : container->uses()) {
    Access a = access_of(u.user, u.offset);
    if (a == Access::Write || a == Access::Pop || a == Access::Clobber) return true;
  }
  return false;
}

void collect_literals(Block* b, std::vector<Node*>& out) {
  for (Node* n : *b) {
    if (n->op() == OpId::ListConstruct || n->op() == OpId::DictConstruct) out.push_back(n);
    for (Block* nb : n->blocks()) collect_literals(nb, out);
  }
}

// Whether the container may be reached through another value while its own reads
// run. Returned from the block that made it (an If's output, a loop's next carried
// value, the graph's result), it is reached through that value only once the block
// is done: a loop makes a new literal in its next iteration.
bool escapes(const Value* container) {
  const Node* own_return = container->node()->owning_block()->return_node();
  for (const Use& u : container->uses()) {
    if (u.user == own_return) continue;
    if (access_of(u.user, u.offset) == Access::Escape) return true;
  }
  return false;
}

}  // namespace

bool only_read_in_place(const Value* dict) {
  for (const Use& u : dict->uses()) {
    Access a = access_of(u.user, u.offset);
    if (a != Access::Read && a != Access::Inspect) return false;
  }
  return true;
}

void forward_container_entries(Graph& g) {
  std::vector<Node*> literals;
  collect_literals(g.block(), literals);
  for (Node* literal : literals) {
    std::optional<Entries> entries = initial_entries(literal);
    if (!entries || escapes(literal->output())) continue;
    Forwarder(g, literal->output())
        .walk(literal->next(), literal->owning_block()->return_node(), *entries);
  }
}

}  // namespace tsl::autodiff
