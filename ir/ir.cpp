// Construction and mutation of the graph IR; see Note [IR structure] in ir.h.
#include "ir/ir.h"

#include <algorithm>

namespace tsl {

// ---- Value ------------------------------------------------------------------------------

Value* Value::set_debug_name(std::string name) {
  debug_name_ = std::move(name);
  return this;
}

Graph* Value::owning_graph() const { return node_->owning_graph(); }

void Value::replace_all_uses_with(Value* v) {
  TSL_INTERNAL_ASSERT(v != this, "replace_all_uses_with itself");
  while (!uses_.empty()) {
    Use u = uses_.back();
    u.user->replace_input(u.offset, v);
  }
}

// ---- Node -------------------------------------------------------------------------------

bool Node::is_param_node() const { return op_ == OpId::Param; }
bool Node::is_return_node() const { return op_ == OpId::Return; }

Value* Node::add_input(Value* v) {
  // Most values have a few uses: one allocation for them, not one per doubling.
  if (v->uses_.capacity() == 0) v->uses_.reserve(4);
  v->uses_.push_back({this, inputs_.size()});
  inputs_.push_back(v);
  return v;
}

void Node::insert_input(size_t i, Value* v) {
  TSL_INTERNAL_ASSERT(i <= inputs_.size());
  for (size_t j = i; j < inputs_.size(); ++j) {
    for (Use& u : inputs_[j]->uses_) {
      if (u.user == this && u.offset == j) {
        ++u.offset;
        break;
      }
    }
  }
  inputs_.insert(inputs_.begin() + static_cast<std::ptrdiff_t>(i), v);
  v->uses_.push_back({this, i});
}

void Node::drop_input_use(size_t i) {
  auto& uses = inputs_[i]->uses_;
  auto it = std::find(uses.begin(), uses.end(), Use{this, i});
  TSL_INTERNAL_ASSERT(it != uses.end(), "use list out of sync");
  uses.erase(it);
}

void Node::replace_input(size_t i, Value* v) {
  drop_input_use(i);
  inputs_[i] = v;
  v->uses_.push_back({this, i});
}

void Node::replace_input_with(Value* from, Value* to) {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i] == from) replace_input(i, to);
  }
}

void Node::remove_input(size_t i) {
  drop_input_use(i);
  for (size_t j = i + 1; j < inputs_.size(); ++j) {
    for (Use& u : inputs_[j]->uses_) {
      if (u.user == this && u.offset == j) {
        --u.offset;
        break;
      }
    }
  }
  inputs_.erase(inputs_.begin() + static_cast<std::ptrdiff_t>(i));
}

void Node::remove_all_inputs() {
  for (size_t i = 0; i < inputs_.size(); ++i) drop_input_use(i);
  inputs_.clear();
}

Value* Node::add_output() {
  Value* v = graph_->new_value(this, outputs_.size());
  outputs_.push_back(v);
  return v;
}

Value* Node::insert_output(size_t i) {
  Value* v = graph_->new_value(this, i);
  outputs_.insert(outputs_.begin() + static_cast<std::ptrdiff_t>(i), v);
  for (size_t j = i + 1; j < outputs_.size(); ++j) outputs_[j]->offset_ = j;
  return v;
}

void Node::erase_output(size_t i) {
  TSL_INTERNAL_ASSERT(!outputs_[i]->has_uses(), "erasing an output that is still used");
  outputs_.erase(outputs_.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t j = i; j < outputs_.size(); ++j) outputs_[j]->offset_ = j;
}

Block* Node::add_block() {
  Block* b = graph_->new_block(this);
  blocks_.push_back(b);
  return b;
}

bool Node::has_attr(std::string_view name) const {
  for (const Attribute& a : attrs_) {
    if (a.name == name) return true;
  }
  return false;
}

const IValue& Node::attr(std::string_view name) const {
  for (const Attribute& a : attrs_) {
    if (a.name == name) return a.value;
  }
  throw InternalError(__FILE__, __LINE__, str(info().name, " has no attribute ", name));
}

Node* Node::set_attr(std::string name, IValue value) {
  for (Attribute& a : attrs_) {
    if (a.name == name) {
      a.value = std::move(value);
      return this;
    }
  }
  attrs_.push_back({std::move(name), std::move(value)});
  return this;
}

Node* Node::insert_before(Node* n) {
  TSL_INTERNAL_ASSERT(owning_block_ == nullptr, "node is already in a block");
  TSL_INTERNAL_ASSERT(!n->is_param_node(), "cannot insert before a block's param node");
  owning_block_ = n->owning_block_;
  prev_ = n->prev_;
  next_ = n;
  prev_->next_ = this;
  n->prev_ = this;
  return this;
}

Node* Node::insert_after(Node* n) {
  TSL_INTERNAL_ASSERT(!n->is_return_node(), "cannot insert after a block's return node");
  return insert_before(n->next_);
}

void Node::unlink() {
  prev_->next_ = next_;
  next_->prev_ = prev_;
  prev_ = next_ = nullptr;
  owning_block_ = nullptr;
}

void Node::move_before(Node* n) {
  unlink();
  insert_before(n);
}

void Node::move_after(Node* n) {
  unlink();
  insert_after(n);
}

bool Node::is_before(const Node* n) const {
  TSL_INTERNAL_ASSERT(owning_block_ == n->owning_block_, "is_before across blocks");
  for (const Node* p = next_; p != nullptr; p = p->next_) {
    if (p == n) return true;
    if (p->is_return_node()) return false;
  }
  return false;
}

void Node::destroy() {
  for (Value* v : outputs_) {
    TSL_INTERNAL_ASSERT(!v->has_uses(), "destroying ", info().name, " whose output %", v->unique(),
                        " is still used");
  }
  // Nested blocks go first, last node first: a node's outputs are only used by later
  // nodes of its block (or blocks nested in them), so their uses are gone by then.
  for (Block* b : blocks_) {
    b->return_node_->remove_all_inputs();
    while (b->return_node_->prev_ != b->param_node_) b->return_node_->prev_->destroy();
    graph_->free_node(b->param_node_);
    graph_->free_node(b->return_node_);
  }
  blocks_.clear();
  remove_all_inputs();
  if (owning_block_) unlink();
  graph_->free_node(this);
}

// ---- Block ------------------------------------------------------------------------------

Block::Block(Graph* graph, Node* owning_node) : graph_(graph), owning_node_(owning_node) {
  param_node_ = graph->new_node(OpId::Param);
  return_node_ = graph->new_node(OpId::Return);
  param_node_->owning_block_ = this;
  return_node_->owning_block_ = this;
  param_node_->next_ = return_node_;
  param_node_->prev_ = return_node_;
  return_node_->prev_ = param_node_;
  return_node_->next_ = param_node_;
}

const std::vector<Value*>& Block::params() const { return param_node_->outputs(); }
const std::vector<Value*>& Block::returns() const { return return_node_->inputs(); }

Value* Block::add_param(TypePtr type, std::string name) {
  Value* v = param_node_->add_output();
  v->set_type(std::move(type));
  v->set_debug_name(std::move(name));
  return v;
}

Value* Block::insert_param(size_t i, TypePtr type, std::string name) {
  Value* v = param_node_->insert_output(i);
  v->set_type(std::move(type));
  v->set_debug_name(std::move(name));
  return v;
}

void Block::erase_param(size_t i) { param_node_->erase_output(i); }
void Block::add_return(Value* v) { return_node_->add_input(v); }
void Block::insert_return(size_t i, Value* v) { return_node_->insert_input(i, v); }
void Block::erase_return(size_t i) { return_node_->remove_input(i); }
void Block::replace_return(size_t i, Value* v) { return_node_->replace_input(i, v); }

// ---- Graph ------------------------------------------------------------------------------

Graph::Graph() {
  block_ = new_block(nullptr);
  insert_point_ = block_->return_node();
}

// Note [Graph storage]
// Compiling the 300-line benchmark makes about 10,000 nodes and values, and each
// made to order by operator new cost more than a fifth of the compile in the
// allocator (bench/compile_phases under perf). They come from the graph's pools
// instead, and Graph::create sizes a node's input and output lists once.

Graph::~Graph() {
  for (Node* n : all_nodes_) {
    n->~Node();
    node_pool_.release(n);
  }
  for (Value* v : all_values_) v->~Value();
}

Value* Graph::new_value(Node* node, size_t offset) {
  Value* v = new (value_pool_.allocate_for_life()) Value(node, offset, next_unique_++);
  all_values_.push_back(v);
  return v;
}

Block* Graph::new_block(Node* owning_node) {
  all_blocks_.push_back(std::unique_ptr<Block>(new Block(this, owning_node)));
  return all_blocks_.back().get();
}

Node* Graph::new_node(OpId op) {
  Node* n = new (node_pool_.allocate()) Node(this, op, next_node_id_++);
  n->slot_ = all_nodes_.size();
  all_nodes_.push_back(n);
  return n;
}

void Graph::free_node(Node* n) {
  TSL_INTERNAL_ASSERT(n->slot_ < all_nodes_.size() && all_nodes_[n->slot_] == n,
                      "freeing a node of another graph");
  Node* last = all_nodes_.back();
  last->slot_ = n->slot_;
  all_nodes_[n->slot_] = last;
  all_nodes_.pop_back();
  n->~Node();
  node_pool_.release(n);
}

Node* Graph::create(OpId op, const std::vector<Value*>& inputs, size_t num_outputs) {
  Node* n = new_node(op);
  n->inputs_.reserve(inputs.size());
  n->outputs_.reserve(num_outputs);
  for (Value* v : inputs) n->add_input(v);
  for (size_t i = 0; i < num_outputs; ++i) n->add_output();
  return n;
}

Value* Graph::insert_op(OpId op, const std::vector<Value*>& inputs, TypePtr type,
                        const SourceRange& range) {
  Node* n = insert(create(op, inputs, 1));
  n->set_range(range);
  return n->output()->set_type(std::move(type));
}

Value* Graph::insert_constant(IValue value, TypePtr type, const SourceRange& range) {
  Node* n = insert(create(OpId::Constant, {}, 1));
  n->set_attr("value", std::move(value));
  n->set_range(range);
  return n->output()->set_type(std::move(type));
}

std::vector<Value*> Graph::clone_block_into(const Block* src, Block* dst,
                                            std::unordered_map<const Value*, Value*>& value_map) {
  auto lookup = [&](const Value* v) {
    auto it = value_map.find(v);
    TSL_INTERNAL_ASSERT(it != value_map.end(), "clone: value %", v->unique(), " is not mapped");
    return it->second;
  };
  for (Node* n : *src) {
    std::vector<Value*> ins;
    for (Value* v : n->inputs()) ins.push_back(lookup(v));
    Node* copy = create(n->op(), ins, 0);
    copy->attrs_ = n->attrs_;
    copy->range_ = n->range_;
    for (Value* out : n->outputs()) {
      Value* o = copy->add_output();
      o->set_type(out->type());
      o->set_debug_name(out->debug_name());
      value_map[out] = o;
    }
    copy->insert_before(dst->return_node());
    for (Block* b : n->blocks()) {
      Block* nb = copy->add_block();
      for (Value* p : b->params()) value_map[p] = nb->add_param(p->type(), p->debug_name());
      for (Value* r : clone_block_into(b, nb, value_map)) nb->add_return(r);
    }
  }
  std::vector<Value*> rets;
  for (Value* r : src->returns()) rets.push_back(lookup(r));
  return rets;
}

// clone_block_into for a whole graph, whose values map by unique() (a vector where
// clone_block_into has a hash map: cloning is on every function's way to its Code).
void Graph::clone_block_dense(const Block* src, Block* dst, std::vector<Value*>& value_map) {
  auto lookup = [&](const Value* v) {
    Value* mapped = v->unique() < value_map.size() ? value_map[v->unique()] : nullptr;
    TSL_INTERNAL_ASSERT(mapped, "clone: value %", v->unique(), " is not mapped");
    return mapped;
  };
  for (Node* n : *src) {
    Node* copy = create(n->op(), {}, 0);
    copy->inputs_.reserve(n->inputs_.size());
    for (Value* v : n->inputs()) copy->add_input(lookup(v));
    copy->attrs_ = n->attrs_;
    copy->range_ = n->range_;
    copy->outputs_.reserve(n->outputs_.size());
    for (Value* out : n->outputs()) {
      Value* o = copy->add_output();
      o->type_ = out->type_;
      o->debug_name_ = out->debug_name_;
      value_map[out->unique()] = o;
    }
    copy->insert_before(dst->return_node());
    for (Block* b : n->blocks()) {
      Block* nb = copy->add_block();
      for (Value* p : b->params())
        value_map[p->unique()] = nb->add_param(p->type(), p->debug_name());
      clone_block_dense(b, nb, value_map);
      for (Value* r : b->returns()) nb->add_return(lookup(r));
    }
  }
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>();
  g->name_ = name_;
  g->all_nodes_.reserve(all_nodes_.size());
  g->all_values_.reserve(all_values_.size());
  std::vector<Value*> map(next_unique_, nullptr);
  for (Value* in : inputs()) map[in->unique()] = g->add_input(in->type(), in->debug_name());
  g->clone_block_dense(block_, g->block_, map);
  for (Value* r : outputs()) {
    Value* mapped = r->unique() < map.size() ? map[r->unique()] : nullptr;
    TSL_INTERNAL_ASSERT(mapped, "clone: output %", r->unique(), " is not mapped");
    g->add_output(mapped);
  }
  return g;
}

}  // namespace tsl
