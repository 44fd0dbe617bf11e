// The SSA graph IR: Graph owns Blocks, Nodes and Values. See Note [IR structure].
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "ir/source.h"
#include "ir/type.h"
#include "runtime/kernels/op_info.h"
#include "runtime/tensor/sanitizer.h"

namespace tsl {

// Note [IR structure]
// A Graph owns a top Block. A Block has parameters (the outputs of its param node),
// an ordered list of Nodes, and returned values (the inputs of its return node); the
// param and return nodes are sentinels of a circular list, so that block parameters
// and returns are uses and definitions like any other. A Node has an op (a row of
// runtime/ops.def), inputs, outputs, attributes and nested Blocks: If has two (then,
// else) returning the If's outputs; Loop has one, whose parameters are the trip index
// and the loop-carried values and whose returns are the continue condition and the
// carried values. Each Value has exactly one definition (a node output or a block
// parameter) and knows its uses.
//
//   graph f(%x : Tensor, %n : int):
//     %y : Tensor = Loop(%n, %true, %x)
//       block0(%i : int, %y.1 : Tensor):
//         %y.2 : Tensor = mul(%y.1, %y.1)
//         -> (%true, %y.2)
//     return (%y)

class Graph;
class Block;
class Node;
class Value;

struct Use {
  Node* user;
  size_t offset;  // which input of `user`
  bool operator==(const Use&) const = default;
};

class Value {
 public:
  Node* node() const { return node_; }  // the defining node (the param node for block params)
  size_t offset() const { return offset_; }
  size_t unique() const { return unique_; }
  const TypePtr& type() const { return type_; }
  Value* set_type(TypePtr t) {
    type_ = std::move(t);
    return this;
  }
  const std::vector<Use>& uses() const { return uses_; }
  bool has_uses() const { return !uses_.empty(); }
  // The source-level name, "" when the value is a temporary.
  const std::string& debug_name() const { return debug_name_; }
  Value* set_debug_name(std::string name);
  Graph* owning_graph() const;

  // Replaces every use of this value by `v`.
  void replace_all_uses_with(Value* v);

 private:
  friend class Node;
  friend class Graph;
  friend class Block;
  Value(Node* node, size_t offset, size_t unique) : node_(node), offset_(offset), unique_(unique) {}
  Node* node_;
  size_t offset_;
  size_t unique_;
  TypePtr type_;
  std::string debug_name_;
  std::vector<Use> uses_;
};

// A node attribute: a constant's value, a tuple index, a callee name, ...
struct Attribute {
  std::string name;
  IValue value;
};

class Node {
 public:
  OpId op() const { return op_; }
  const OpInfo& info() const { return op_info(op_); }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* input(size_t i) const { return inputs_.at(i); }
  Value* output(size_t i = 0) const { return outputs_.at(i); }
  const std::vector<Block*>& blocks() const { return blocks_; }
  Block* block(size_t i) const { return blocks_.at(i); }
  Block* owning_block() const { return owning_block_; }
  Graph* owning_graph() const { return graph_; }
  // A number for this node, fixed and dense in its graph (below
  // Graph::node_id_bound()): passes may keep facts about nodes in vectors indexed by it.
  size_t id() const { return id_; }
  Node* next() const { return next_; }
  Node* prev() const { return prev_; }
  const SourceRange& range() const { return range_; }
  Node* set_range(SourceRange r) {
    range_ = std::move(r);
    return this;
  }
  bool is_param_node() const;
  bool is_return_node() const;

  // ---- Inputs and outputs
  Value* add_input(Value* v);
  void insert_input(size_t i, Value* v);
  void replace_input(size_t i, Value* v);
  // Replaces every occurrence of `from` among the inputs by `to`.
  void replace_input_with(Value* from, Value* to);
  void remove_input(size_t i);
  void remove_all_inputs();
  Value* add_output();
  Value* insert_output(size_t i);
  void erase_output(size_t i);  // the output must have no uses
  Block* add_block();

  // ---- Attributes
  const std::vector<Attribute>& attributes() const { return attrs_; }
  bool has_attr(std::string_view name) const;
  const IValue& attr(std::string_view name) const;  // internal error when absent
  Node* set_attr(std::string name, IValue value);

  // ---- Position
  // Inserts this (not yet inserted) node before / after `n`.
  Node* insert_before(Node* n);
  Node* insert_after(Node* n);
  void move_before(Node* n);
  void move_after(Node* n);
  // Whether this node comes before `n` in the same block.
  bool is_before(const Node* n) const;
  // Unlinks and deletes the node. Its outputs must have no uses.
  void destroy();

 private:
  friend class Graph;
  friend class Block;
  Node(Graph* graph, OpId op, size_t id) : op_(op), graph_(graph), id_(id) {}
  void unlink();
  void drop_input_use(size_t i);

  OpId op_;
  Graph* graph_;
  size_t id_;
  size_t slot_ = 0;  // the index of this node in its graph's all_nodes_
  Block* owning_block_ = nullptr;
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Block*> blocks_;
  std::vector<Attribute> attrs_;
  SourceRange range_;
};

class Block {
 public:
  const std::vector<Value*>& params() const;
  const std::vector<Value*>& returns() const;
  Value* add_param(TypePtr type, std::string name = "");
  Value* insert_param(size_t i, TypePtr type, std::string name = "");
  void erase_param(size_t i);  // the param must have no uses
  void add_return(Value* v);
  void insert_return(size_t i, Value* v);
  void erase_return(size_t i);
  void replace_return(size_t i, Value* v);

  Node* param_node() const { return param_node_; }
  Node* return_node() const { return return_node_; }
  Node* owning_node() const { return owning_node_; }
  Graph* owning_graph() const { return graph_; }

  // Iteration over the real nodes (without the sentinels); safe against destroying
  // the current node when iterating with `NodeIterator`.
  class NodeIterator {
   public:
    explicit NodeIterator(Node* n) : n_(n), next_(n->next()) {}
    Node* operator*() const { return n_; }
    NodeIterator& operator++() {
      n_ = next_;
      next_ = n_->next();
      return *this;
    }
    bool operator!=(const NodeIterator& o) const { return n_ != o.n_; }

   private:
    Node* n_;
    Node* next_;
  };
  NodeIterator begin() const { return NodeIterator(param_node_->next()); }
  NodeIterator end() const { return NodeIterator(return_node_); }
  bool empty() const { return param_node_->next() == return_node_; }
  // Appends a node at the end of the block (before the return node).
  Node* append(Node* n) { return n->insert_before(return_node_); }

 private:
  friend class Graph;
  friend class Node;
  Block(Graph* graph, Node* owning_node);
  Graph* graph_;
  Node* owning_node_;
  Node* param_node_;
  Node* return_node_;
};

namespace ir_detail {
// Storage for a graph's Nodes or Values: objects are built in place in chunks that
// grow geometrically, so making a node or a value is not a call to the allocator (a
// compile makes tens of thousands of them: Note [Graph storage]). Slots freed by
// `release` are reused; the pool frees its chunks, not the objects, which their owner
// destroys. Off under AddressSanitizer, which must see every node freed.
template <typename T>
class Pool {
 public:
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
#if defined(TSL_ADDRESS_SANITIZER)
  void* allocate() { return ::operator new (sizeof(T), std::align_val_t{alignof(T)}); }
  void release(void* p) { ::operator delete (p, std::align_val_t{alignof(T)}); }
  // Values are never released one by one: the graph gives them back when it dies.
  ~Pool() {
    for (void* p : unreleased_) ::operator delete (p, std::align_val_t{alignof(T)});
  }
  void* allocate_for_life() { return unreleased_.emplace_back(allocate()); }

 private:
  std::vector<void*> unreleased_;
#else
  // Uninitialized storage for one T, reused or taken from the current chunk.
  void* allocate() {
    if (free_ != nullptr) {
      Free* f = free_;
      free_ = f->next;
      return f;
    }
    if (used_ == capacity_) {
      capacity_ = chunks_.empty() ? 16 : std::min<size_t>(capacity_ * 2, 1024);
      chunks_.emplace_back(new Slot[capacity_]);
      used_ = 0;
    }
    return &chunks_.back()[used_++];
  }
  // Gives back the storage of a destroyed T.
  void release(void* p) { free_ = new (p) Free{free_}; }
  // Storage the pool frees when it dies (values, which are never released alone).
  void* allocate_for_life() { return allocate(); }

 private:
  struct Free {
    Free* next;
  };
  union Slot {
    Slot() {}
    ~Slot() {}
    alignas(T) unsigned char bytes[sizeof(T)];
    Free free;
  };
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  size_t used_ = 0, capacity_ = 0;
  Free* free_ = nullptr;
#endif
};
}  // namespace ir_detail

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Block* block() const { return block_; }
  const std::vector<Value*>& inputs() const { return block_->params(); }
  const std::vector<Value*>& outputs() const { return block_->returns(); }
  Value* add_input(TypePtr type, std::string name = "") {
    return block_->add_param(std::move(type), std::move(name));
  }
  void add_output(Value* v) { block_->add_return(v); }

  // The function name shown by the printer ("f", "<module>", "grad(f)").
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  // Creates a node with `num_outputs` outputs (types unset), not yet inserted.
  Node* create(OpId op, const std::vector<Value*>& inputs = {}, size_t num_outputs = 1);

  // ---- Insertion point: `insert` puts a created node before the insertion point.
  void set_insert_point(Node* before) { insert_point_ = before; }
  void set_insert_point(Block* b) { insert_point_ = b->return_node(); }
  Node* insert_point() const { return insert_point_; }
  Node* insert(Node* n) { return n->insert_before(insert_point_); }
  // Creates and inserts an op node with one output of type `type`.
  Value* insert_op(OpId op, const std::vector<Value*>& inputs, TypePtr type,
                   const SourceRange& range = {});
  // Creates and inserts a Constant node.
  Value* insert_constant(IValue value, TypePtr type, const SourceRange& range = {});

  // A deep copy of this graph.
  std::unique_ptr<Graph> clone() const;
  // Copies the nodes of `src` into `dst` (before its return node), mapping values of
  // the source through `value_map` (which must map src's params and outer values);
  // returns the mapped returns of `src`.
  std::vector<Value*> clone_block_into(const Block* src, Block* dst,
                                       std::unordered_map<const Value*, Value*>& value_map);

  size_t num_nodes() const { return all_nodes_.size(); }
  // One more than the largest Value::unique() of this graph: passes may keep facts
  // about values in vectors of this size, indexed by unique().
  size_t value_id_bound() const { return next_unique_; }
  // One more than the largest Node::id() of this graph.
  size_t node_id_bound() const { return next_node_id_; }

 private:
  friend class Node;
  friend class Block;
  Value* new_value(Node* node, size_t offset);
  Block* new_block(Node* owning_node);
  Node* new_node(OpId op);
  void free_node(Node* n);
  void clone_block_dense(const Block* src, Block* dst, std::vector<Value*>& value_map);

  // Where the nodes and values live; ~Graph destroys the objects, the pools free the
  // chunks.
  ir_detail::Pool<Node> node_pool_;
  ir_detail::Pool<Value> value_pool_;
  // Every node, unordered (a node knows its slot: freeing swaps the last one in).
  std::vector<Node*> all_nodes_;
  std::vector<Value*> all_values_;  // every value made, destroyed with the graph
  std::vector<std::unique_ptr<Block>> all_blocks_;
  Block* block_;
  Node* insert_point_;
  size_t next_unique_ = 0;
  size_t next_node_id_ = 0;
  std::string name_;
};

// Sets the insertion point for the lifetime of the guard.
class InsertPointGuard {
 public:
  InsertPointGuard(Graph& g, Node* before) : g_(g), saved_(g.insert_point()) {
    g.set_insert_point(before);
  }
  InsertPointGuard(Graph& g, Block* b) : g_(g), saved_(g.insert_point()) { g.set_insert_point(b); }
  ~InsertPointGuard() { g_.set_insert_point(saved_); }

 private:
  Graph& g_;
  Node* saved_;
};

// Printing (ir/printer.cpp). With `with_lines`, each node ends in `# line:col` of its
// source so a learner can match IR to code.
struct PrintOptionsIR {
  bool with_lines = false;
  // A forward graph of a gradient: its outputs from this index on are the values
  // captured for the backward, named in a comment after the return.
  size_t first_captured_output = SIZE_MAX;
};
std::string print_graph(const Graph& g, PrintOptionsIR options = {});

// Checks SSA dominance, use lists, block structure and op arities; throws an
// InternalError describing the first violation (ir/verifier.cpp).
void verify(const Graph& g);

// What is wrong with the blocks of `n` for its op, or "": a GradOf has one block without
// parameters (and its str attribute `op`), and only If, Loop, GradOf and FusionGroup
// have blocks (If, Loop and FusionGroup are checked further on their own). The verifier
// and the IR text parser, which locates the error at the op, both ask this.
std::string block_structure_problem(const Node* n);

}  // namespace tsl
