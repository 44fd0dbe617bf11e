// Elementwise fusion into FusionGroup nodes; see Note [Elementwise fusion] in
// fuse_elementwise.h.
#include "ir/passes/fuse_elementwise.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/passes/pass_utils.h"
#include "runtime/fused_ops.h"

namespace tsl {
namespace {

// Numbers, strings, None and optionals of them: values the fused code can read as
// scalars (alpha, clamp bounds, gelu's approximate).
bool is_plain_scalar(const TypePtr& t) {
  switch (t->kind()) {
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool:
    case TypeKind::Str:
    case TypeKind::None:
      return true;
    case TypeKind::Optional:
      return is_plain_scalar(t->contained().at(0));
    default:
      return false;
  }
}

// `to(t, dtype)` joins groups so that a gradient's casts do not split it (Note
// [Conversions in the fused program] in runtime/fusion/program.h). A fused `to` makes
// a new tensor where the kernel may return its operand itself, so it joins only when
// nothing can tell: neither is written in place, both do not escape, their identity
// is not compared.
bool is_fusible_conversion(const Node* n, const MutationInfo* mutation) {
  return n->op() == OpId::to_dtype && n->input(1)->type()->kind() == TypeKind::DType && mutation &&
         mutation->may_replace(n->output(), n->input(0));
}

// Whether a scalar argument of type t is one the fused program reads (runtime/fused_ops.def:
// the row's FusedArgs); the values themselves are checked at run time.
bool reads_argument(fusion::FusedArgs args, const TypePtr& t) {
  auto number = [](const TypePtr& u) {
    return u->kind() == TypeKind::Int || u->kind() == TypeKind::Float;
  };
  switch (args) {
    case fusion::FusedArgs::Alpha:
    case fusion::FusedArgs::Slope:
      return number(t);
    case fusion::FusedArgs::TrueDivision:
      return t->kind() == TypeKind::None;
    case fusion::FusedArgs::Bounds:
      return number(t) || t->kind() == TypeKind::None ||
             (t->kind() == TypeKind::Optional && number(t->contained().at(0)));
    case fusion::FusedArgs::DType:
      return t->kind() == TypeKind::DType;
    case fusion::FusedArgs::None:
      break;
  }
  return false;
}

// Whether the runtime has a fused form of n: a row of runtime/fused_ops.def for its op,
// whose scalar arguments n passes in a form the fused program reads (div without
// rounding, add with a number alpha, clamp with a bound). Any other node would make the
// whole group run op by op.
bool has_fused_form(const Node* n) {
  std::optional<fusion::FOp> op = fusion::fused_op_of(n->op());
  if (!op) return false;
  const fusion::FusedOpInfo& f = fusion::fused_info(*op);
  size_t scalars = fusion::scalar_inputs(f.args);
  if (n->inputs().size() != f.operands + scalars) return false;
  size_t none = 0;
  for (size_t k = 0; k < scalars; ++k) {
    const TypePtr& t = n->input(f.operands + k)->type();
    if (!reads_argument(f.args, t)) return false;
    none += t->kind() == TypeKind::None;
  }
  // clamp(x, None, None) is an error, which the op by op run reports.
  return !(f.args == fusion::FusedArgs::Bounds && none == 2);
}

bool is_fusible(const Node* n, const MutationInfo* mutation) {
  if (!has_fused_form(n)) return false;
  if (n->op() == OpId::to_dtype) return is_fusible_conversion(n, mutation);
  const OpInfo& info = n->info();
  if (!info.has(opflags::EW) || info.has(opflags::EFFECT) || info.has(opflags::RANDOM) ||
      info.has(opflags::PRIM) || !n->blocks().empty() || n->outputs().empty()) {
    return false;
  }
  for (const Value* o : n->outputs()) {
    if (!o->type() || !o->type()->is_tensor()) return false;
  }
  bool tensor_input = false;
  for (const Value* v : n->inputs()) {
    if (v->type()->is_tensor()) {
      tensor_input = true;
    } else if (!is_plain_scalar(v->type())) {
      return false;
    }
  }
  return tensor_input;
}

// Whether nodes may not move across `n`: it may have an effect, draw random numbers
// or call user code, or holds such a node in its blocks.
bool is_barrier(const Node* n, std::vector<int8_t>& memo);

// Answers kept by node id (-1: not asked yet; nodes made while fusing are past the
// end): each If or Loop is looked into once, not once per block around it (an elif
// chain of n branches nests n deep, which made fusion quadratic).
bool barrier_of(const Node* n, std::vector<int8_t>& memo) {
  size_t id = n->id();
  if (id < memo.size() && memo[id] >= 0) return memo[id] != 0;
  bool b = is_barrier(n, memo);
  if (id < memo.size()) memo[id] = b ? 1 : 0;
  return b;
}

bool is_barrier(const Node* n, std::vector<int8_t>& memo) {
  if (is_pure_op(n)) return false;
  const OpInfo& info = n->info();
  if (n->blocks().empty() || info.has(opflags::EFFECT) || info.has(opflags::RANDOM)) return true;
  switch (n->op()) {
    case OpId::If:
    case OpId::Loop:
    case OpId::GradOf:
    case OpId::FusionGroup:
      break;
    default:
      return true;
  }
  for (const Block* b : n->blocks()) {
    for (const Node* m : *b) {
      if (barrier_of(m, memo)) return true;
    }
  }
  return false;
}

// The most ops one FusionGroup takes: a longer chain is cut into groups of this many
// (each group's program has a 4 KiB chunk register per step, and a chain of 12,000
// ops in one group spent its time compiling and page-faulting those).
constexpr size_t kMaxGroupOps = 256;

struct Group {
  std::vector<Node*> members;
  // Nodes of the block that read a member's value and were outside the group when
  // last looked at (a node that joined since is dropped at the next merge). Merging
  // checks these instead of every use of every member: see can_merge.
  std::vector<const Node*> outside_users;
  bool open = true;
};

// What the fusers of a graph's blocks know about its nodes, by Node::id() (vectors,
// not hash maps: fusion is on every function's way to its Code). Each node belongs
// to one block, so the blocks share the tables; nodes made while fusing have ids
// past their ends.
struct NodeTables {
  explicit NodeTables(const Graph& g)
      : position(g.node_id_bound(), SIZE_MAX),
        group(g.node_id_bound(), nullptr),
        barrier(g.node_id_bound(), -1) {
    if (any_node(g.block(), [](const Node* n) { return n->op() == OpId::to_dtype; }))
      mutation = std::make_unique<MutationInfo>(g);
  }
  std::vector<size_t> position;            // in its block, the return node last
  std::vector<Group*> group;               // the group it is in
  std::vector<int8_t> barrier;             // is_barrier's answer, -1 before it is asked
  std::unique_ptr<MutationInfo> mutation;  // built only for graphs with a `to`
};

class BlockFuser {
 public:
  BlockFuser(Block* b, NodeTables& tables) : block_(b), tables_(tables) {
    size_t i = 0;
    for (const Node* n : *b) tables_.position.at(n->id()) = i++;
    tables_.position.at(b->return_node()->id()) = i;
  }

  // Forms the groups of the block; returns whether some group of two or more nodes
  // became a FusionGroup.
  bool run() {
    for (Node* n : *block_) visit(n);
    bool changed = false;
    for (Group& group : groups_) {
      if (!computes(group)) continue;
      materialize(group);
      changed = true;
    }
    return changed;
  }

 private:
  void visit(Node* n) {
    if (barrier_of(n, tables_.barrier)) {
      for (size_t i = first_open_; i < groups_.size(); ++i) groups_[i].open = false;
      first_open_ = groups_.size();  // groups before this one are all closed
      return;
    }
    if (n->op() == OpId::dtype) return join_producer(n);
    if (!is_fusible(n, tables_.mutation.get())) return;
    Group* g = &groups_.emplace_back();
    g->members.push_back(n);
    tables_.group[n->id()] = g;
    for (const Value* o : n->outputs()) {
      for (const Use& u : o->uses()) g->outside_users.push_back(in_this_block(u.user));
    }
    for (const Value* v : n->inputs()) {
      Group* other = group_of(v->node());
      if (other == nullptr || other == g || !other->open) continue;
      if (g->members.size() + other->members.size() > kMaxGroupOps) continue;
      if (!can_merge(*g, *other, n)) continue;
      // The smaller group joins the larger: a chain of n ops grows one group, and
      // copying it into each new node's group made fusion quadratic.
      if (other->members.size() > g->members.size()) std::swap(g, other);
      for (Node* m : other->members) {
        g->members.push_back(m);
        tables_.group[m->id()] = g;
      }
      g->outside_users.insert(g->outside_users.end(), other->outside_users.begin(),
                              other->outside_users.end());
      drop_inside_users(*g);
      other->members.clear();
      other->outside_users.clear();
      other->open = false;
    }
  }

  // `dtype(v)` of a member v joins v's group, even a closed one: it reads nothing
  // else, so it may move up to the group. The group then returns v's dtype, not v,
  // where only the dtype is read after it (a gradient's `to(g, dtype(v))`).
  void join_producer(Node* n) {
    Group* g = group_of(n->input(0)->node());
    if (g == nullptr) return;
    g->members.push_back(n);
    tables_.group[n->id()] = g;
    for (const Use& u : n->output()->uses()) g->outside_users.push_back(in_this_block(u.user));
    drop_inside_users(*g);
  }

  // Whether the group is worth a FusionGroup: two ops or more that are not dtype
  // queries, one of which is no conversion.
  static bool computes(const Group& group) {
    size_t ops = 0;
    bool computing = false;
    for (const Node* m : group.members) {
      if (m->op() == OpId::dtype) continue;
      ++ops;
      computing |= m->op() != OpId::to_dtype;
    }
    return ops >= 2 && computing;
  }

  // The group of a node of this block, or null.
  Group* group_of(const Node* n) const {
    if (n->owning_block() != block_ || n->id() >= tables_.group.size()) return nullptr;
    return tables_.group[n->id()];
  }

  size_t position(const Node* n) const {
    TSL_INTERNAL_ASSERT(n->owning_block() == block_ && n->id() < tables_.position.size(),
                        "fusion: a node without a position");
    return tables_.position[n->id()];
  }

  // Forgets the users that are now members of g: members never leave a group.
  void drop_inside_users(Group& g) const {
    std::erase_if(g.outside_users, [&](const Node* user) { return group_of(user) == &g; });
  }

  // The node of this block that is `n` or holds `n` in its blocks.
  const Node* in_this_block(const Node* n) const {
    while (n->owning_block() != block_) n = n->owning_block()->owning_node();
    return n;
  }

  // Whether g and other together may sit where `at` is: no node outside them before
  // `at` reads one of their values. Every user of a member is in the member's group or
  // in the group's outside_users, so those lists hold all the candidates.
  bool can_merge(const Group& g, const Group& other, const Node* at) const {
    size_t where = position(at);
    for (const Group* group : {&g, &other}) {
      for (const Node* user : group->outside_users) {
        const Group* owner = group_of(user);
        if (owner != &g && owner != &other && position(user) < where) return false;
      }
    }
    return true;
  }

  // Replaces the group's nodes by one FusionGroup right after its last node.
  void materialize(Group& group) {
    std::vector<Node*>& members = group.members;
    std::sort(members.begin(), members.end(),
              [&](const Node* a, const Node* b) { return position(a) < position(b); });
    Graph& g = *block_->owning_graph();
    // After the last member that is no dtype query (one that moved up to the group
    // may come after a barrier).
    Node* last = *std::find_if(members.rbegin(), members.rend(),
                               [](const Node* m) { return m->op() != OpId::dtype; });
    Node* fusion = g.create(OpId::FusionGroup, {}, 0);
    fusion->insert_after(last);
    fusion->set_range(last->range());
    Block* body = fusion->add_block();
    std::unordered_map<const Value*, Value*> inner;
    std::vector<Node*> copied_constants;
    auto map_input = [&](Value* v) -> Value* {
      auto it = inner.find(v);
      if (it != inner.end()) return it->second;
      Value* mapped;
      const IValue* c = constant_value(v);
      if (c && is_printable_constant(*c)) {
        Node* copy = g.create(OpId::Constant, {}, 1);
        copy->set_attr("value", *c);
        copy->output()->set_type(v->type());
        if (!v->debug_name().empty()) copy->output()->set_debug_name(v->debug_name());
        body->append(copy);
        copied_constants.push_back(v->node());
        mapped = copy->output();
      } else {
        fusion->add_input(v);
        mapped = body->add_param(v->type(), v->debug_name());
      }
      inner.emplace(v, mapped);
      return mapped;
    };
    for (Node* m : members) {
      std::vector<Value*> inputs;
      for (Value* v : m->inputs()) inputs.push_back(map_input(v));
      Node* copy = g.create(m->op(), inputs, m->outputs().size());
      for (const Attribute& a : m->attributes()) copy->set_attr(a.name, a.value);
      copy->set_range(m->range());
      for (size_t i = 0; i < m->outputs().size(); ++i) {
        const Value* o = m->output(i);
        copy->output(i)->set_type(o->type());
        if (!o->debug_name().empty()) copy->output(i)->set_debug_name(o->debug_name());
        inner.emplace(o, copy->output(i));
      }
      body->append(copy);
    }
    // Values used after the group become its outputs.
    for (Node* m : members) {
      for (Value* o : m->outputs()) {
        std::vector<Use> outside;
        for (const Use& u : o->uses()) {
          if (group_of(in_this_block(u.user)) != &group) outside.push_back(u);
        }
        if (outside.empty()) continue;
        Value* out = fusion->add_output()->set_type(o->type());
        if (!o->debug_name().empty()) out->set_debug_name(o->debug_name());
        body->add_return(inner.at(o));
        for (const Use& u : outside) u.user->replace_input(u.offset, out);
      }
    }
    for (auto it = members.rbegin(); it != members.rend(); ++it) (*it)->destroy();
    for (Node* c : copied_constants) {
      if (!c->output()->has_uses()) c->destroy();
    }
  }

  Block* block_;
  NodeTables& tables_;
  std::deque<Group> groups_;  // in the order of their first node
  size_t first_open_ = 0;     // the groups before it are closed
};

bool fuse_block(Block* b, NodeTables& tables) {
  bool changed = false;
  for (Node* n : *b) {
    if (n->op() == OpId::FusionGroup) continue;  // already fused
    for (Block* inner : n->blocks()) changed |= fuse_block(inner, tables);
  }
  return BlockFuser(b, tables).run() || changed;
}

}  // namespace

bool fuse_elementwise(Graph& g) {
  NodeTables tables(g);
  return fuse_block(g.block(), tables);
}

}  // namespace tsl
