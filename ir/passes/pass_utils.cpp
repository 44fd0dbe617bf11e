// Helpers shared by the optimization passes; see pass_utils.h.
#include "ir/passes/pass_utils.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <utility>

#include "ir/schema.h"

namespace tsl {
namespace {

// Ops that may write into their inputs (or let someone else do it later).
bool may_write_inputs(const Node* n) {
  const OpInfo& info = n->info();
  return info.has(opflags::CALLS) || (info.has(opflags::EFFECT) && !info.has(opflags::NOWRITE));
}

// Whether every output of `n` is fresh storage, sharing nothing with its inputs.
bool returns_fresh_values(const Node* n) {
  const OpInfo& info = n->info();
  return info.has(opflags::EW) && !info.has(opflags::VIEW) && !info.has(opflags::EFFECT);
}

// Whether `n` reads its inputs without keeping them anywhere: no blocks, no writes,
// and no output that could hold one of them (print, save, is, numel, ...).
bool only_reads(const Node* n) {
  if (!n->blocks().empty() || may_write_inputs(n)) return false;
  for (const Value* o : n->outputs()) {
    if (type_may_alias(o->type())) return false;
  }
  return true;
}

// Whether a value of type `t` may be or contain a value of kind `kind` (Tensor or
// List); values of unknown type (Any, a type variable, a function) may hold anything.
bool type_may_hold(const TypePtr& t, TypeKind kind) {
  if (!t) return true;
  switch (t->kind()) {
    case TypeKind::Any:
    case TypeKind::Var:
    case TypeKind::Function:
      return true;
    default:
      break;
  }
  if (t->kind() == kind) return true;
  for (const TypePtr& c : t->contained()) {
    if (type_may_hold(c, kind)) return true;
  }
  return false;
}

}  // namespace

bool type_may_alias(const TypePtr& t) {
  if (!t) return true;
  switch (t->kind()) {
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool:
    case TypeKind::Str:
    case TypeKind::None:
    case TypeKind::DType:
    case TypeKind::Device:
    case TypeKind::Number:
      return false;
    case TypeKind::Tuple:
    case TypeKind::Optional:
      for (const TypePtr& c : t->contained()) {
        if (type_may_alias(c)) return true;
      }
      return false;
    default:
      return true;
  }
}

MutationInfo::MutationInfo(const Graph& g)
    : parent_(g.value_id_bound()), flags_(g.value_id_bound(), 0) {
  std::iota(parent_.begin(), parent_.end(), size_t{0});
  visit_block(g.block());
  for (const Value* v : g.inputs()) mark(v, kEscaping);
  for (const Value* v : g.outputs()) mark(v, kEscaping);
}

void MutationInfo::visit_block(const Block* b) {
  for (const Node* n : *b) visit_node(n);
}

void MutationInfo::visit_node(const Node* n) {
  for (const Block* b : n->blocks()) visit_block(b);
  if (may_write_inputs(n)) {
    for (const Value* v : n->inputs()) mark(v, kWritten);
  }
  if (n->op() == OpId::is || n->op() == OpId::is_not) {
    for (const Value* v : n->inputs()) mark(v, kObserved);
  }
  if (returns_fresh_values(n) || only_reads(n)) return;
  // Anything else may return (a part of) an input: one class for all its values.
  // Two of them may share storage only when both may hold a tensor, or both a
  // mutable container (a list or a dict): zeros(%size) does not alias its List[int]
  // argument. Each joins the first of its kind (no vectors: this runs for most nodes,
  // five times per pipeline round).
  const Value* first_tensor = nullptr;
  const Value* first_list = nullptr;
  auto join = [&](const Value* v) {
    if (type_may_hold(v->type(), TypeKind::Tensor)) {
      if (first_tensor)
        unite(first_tensor, v);
      else
        first_tensor = v;
    }
    if (type_may_hold(v->type(), TypeKind::List) || type_may_hold(v->type(), TypeKind::Dict)) {
      if (first_list)
        unite(first_list, v);
      else
        first_list = v;
    }
  };
  for (const Value* v : n->inputs()) join(v);
  for (const Value* v : n->outputs()) join(v);
  for (const Block* b : n->blocks()) {
    for (const Value* v : b->params()) join(v);
    for (const Value* v : b->returns()) join(v);
  }
}

void MutationInfo::add(const Node* n) {
  visit_node(n);
  resolved_ = false;
}

void MutationInfo::replaced(const Value* old, const Value* now) {
  if (!type_may_alias(old->type()) && !type_may_alias(now->type())) return;
  unite(old, now);
  resolved_ = false;
}

size_t MutationInfo::find(size_t v) const {
  if (v >= parent_.size()) return v;
  size_t root = v;
  while (parent_[root] != root) root = parent_[root];
  while (parent_[v] != root) v = std::exchange(parent_[v], root);
  return root;
}

void MutationInfo::unite(const Value* a, const Value* b) {
  size_t need = std::max(a->unique(), b->unique()) + 1;
  for (size_t i = parent_.size(); i < need; ++i) parent_.push_back(i);
  size_t ra = find(a->unique());
  size_t rb = find(b->unique());
  if (ra != rb) parent_[ra] = rb;
}

void MutationInfo::mark(const Value* v, Flag f) {
  if (v->unique() >= flags_.size()) flags_.resize(v->unique() + 1, 0);
  flags_[v->unique()] |= f;
}

void MutationInfo::resolve() const {
  if (resolved_) return;
  root_flags_.assign(std::max(flags_.size(), parent_.size()), 0);
  for (size_t v = 0; v < flags_.size(); ++v) {
    if (flags_[v]) root_flags_[find(v)] |= flags_[v];
  }
  resolved_ = true;
}

bool MutationInfo::root_has(const Value* v, Flag f) const {
  if (!type_may_alias(v->type())) return false;
  resolve();
  size_t root = find(v->unique());
  return root < root_flags_.size() && (root_flags_[root] & f) != 0;
}

bool MutationInfo::may_be_written(const Value* v) const { return root_has(v, kWritten); }

bool MutationInfo::identity_observed(const Value* v) const { return root_has(v, kObserved); }

bool MutationInfo::escapes(const Value* v) const { return root_has(v, kEscaping); }

bool any_node(const Block* b, bool (*pred)(const Node*)) {
  for (const Node* n : *b) {
    if (pred(n)) return true;
    for (const Block* nb : n->blocks()) {
      if (any_node(nb, pred)) return true;
    }
  }
  return false;
}

const IValue* constant_value(const Value* v) {
  const Node* n = v->node();
  if (n->op() != OpId::Constant || !n->has_attr("value")) return nullptr;
  return &n->attr("value");
}

bool is_printable_constant(const IValue& v) {
  if (v.is_none() || v.is_number() || v.is_str() || v.is_dtype() || v.is_device()) return true;
  if (v.is_list() || v.is_tuple()) {
    const auto& elems = v.is_list() ? v.to_list().elements : v.to_tuple();
    for (const IValue& e : elems) {
      if (!is_printable_constant(e)) return false;
    }
    return true;
  }
  return false;
}

std::string constant_key(const IValue& v) {
  if (v.is_double()) {
    // By bits: 0.0 and -0.0 (and NaNs of another sign or payload) stay apart.
    uint64_t bits = std::bit_cast<uint64_t>(v.to_double());
    return "f" + std::to_string(bits);
  }
  if (v.is_bool()) return v.to_bool() ? "bTrue" : "bFalse";
  if (v.is_int()) return "i" + std::to_string(v.to_int());
  if (v.is_none()) return "n";
  if (v.is_str()) return "s" + v.repr();
  if (v.is_dtype() || v.is_device()) return "d" + v.str();
  if (v.is_list() || v.is_tuple()) {
    const auto& elems = v.is_list() ? v.to_list().elements : v.to_tuple();
    std::string out = v.is_list() ? "[" : "(";
    for (const IValue& e : elems) {
      std::string k = constant_key(e);
      if (k.empty()) return "";
      out += k + ",";
    }
    return out + (v.is_list() ? "]" : ")");
  }
  return "";
}

Value* replace_with_constant(Graph& g, Node* n, Value* old, IValue value) {
  Node* c = g.create(OpId::Constant, {}, 1);
  c->set_attr("value", std::move(value));
  c->set_range(n->range());
  c->insert_before(n);
  Value* v = c->output();
  v->set_type(old->type());
  std::string name = old->debug_name();
  old->replace_all_uses_with(v);
  old->set_debug_name("");
  v->set_debug_name(std::move(name));
  return v;
}

bool is_commutative(const Node* n) {
  if (!n->info().has(opflags::COMMUTES)) return false;
  // The other inputs must be their defaults: add(a, b, alpha=2) is a + 2b.
  const FunctionSchema& schema = schema_of(n->op());
  for (size_t i = 2; i < n->inputs().size(); ++i) {
    const IValue* c = constant_value(n->input(i));
    if (!c || i >= schema.arguments.size() || !schema.arguments[i].default_value) return false;
    std::string key = constant_key(*c);
    if (key.empty() || key != constant_key(*schema.arguments[i].default_value)) return false;
  }
  return true;
}

bool is_value_structural(OpId op) { return op_info(op).has(opflags::PURE); }

bool is_pure_op(const Node* n) {
  const OpInfo& info = n->info();
  if (info.has(opflags::EFFECT) || info.has(opflags::RANDOM) || !n->blocks().empty()) return false;
  return !info.has(opflags::PRIM) || is_value_structural(n->op());
}

}  // namespace tsl
