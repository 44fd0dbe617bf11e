// Elementwise fusion into FusionGroup nodes; see Note [Elementwise fusion] in
// fuse_elementwise.h.
#include "ir/passes/fuse_elementwise.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ir/passes/pass_utils.h"

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

bool is_fusible(const Node* n) {
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
bool is_barrier(const Node* n) {
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
      if (is_barrier(m)) return true;
    }
  }
  return false;
}

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
      : position(g.node_id_bound(), SIZE_MAX), group(g.node_id_bound(), nullptr) {}
  std::vector<size_t> position;  // in its block, the return node last
  std::vector<Group*> group;     // the group it is in
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
      if (group.members.size() < 2) continue;
      materialize(group);
      changed = true;
    }
    return changed;
  }

 private:
  void visit(Node* n) {
    if (is_barrier(n)) {
      for (size_t i = first_open_; i < groups_.size(); ++i) groups_[i].open = false;
      first_open_ = groups_.size();  // groups before this one are all closed
      return;
    }
    if (!is_fusible(n)) return;
    Group* g = &groups_.emplace_back();
    g->members.push_back(n);
    tables_.group[n->id()] = g;
    for (const Value* o : n->outputs()) {
      for (const Use& u : o->uses()) g->outside_users.push_back(in_this_block(u.user));
    }
    for (const Value* v : n->inputs()) {
      Group* other = group_of(v->node());
      if (other == nullptr || other == g || !other->open) continue;
      if (!can_merge(*g, *other, n)) continue;
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
    Node* fusion = g.create(OpId::FusionGroup, {}, 0);
    fusion->insert_after(members.back());
    fusion->set_range(members.back()->range());
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
