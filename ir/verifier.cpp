// The IR verifier: SSA dominance, use lists, block structure, arities and types.
// Tests run it after every pass; any failure is a bug in TSL, never a user error.
#include <algorithm>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"
#include "ir/schema.h"

namespace tsl {
namespace {

class Verifier {
 public:
  explicit Verifier(const Graph& g) : graph_(g) {}

  void run() { check_block(graph_.block(), nullptr); }

 private:
  [[noreturn]] void fail(const Node* n, const std::string& what) {
    std::string where = n ? std::string(n->info().name) : std::string("graph");
    throw InternalError(
        __FILE__, __LINE__,
        str("IR verification failed at ", where, ": ", what, "\n", print_graph(graph_)));
  }

  void check_block(const Block* b, const Node* owner) {
    std::vector<const Value*> defined_here;
    auto define = [&](const Value* v, const Node* n) {
      if (!v->type()) fail(n, "value %" + std::to_string(v->unique()) + " has no type");
      if (in_scope(v)) fail(n, "value defined twice");
      check_uses(v, n);
      set_in_scope(v, true);
      defined_here.push_back(v);
    };
    if (b->owning_node() != owner) fail(owner, "block has the wrong owning node");
    for (const Value* p : b->params()) define(p, b->param_node());
    const Node* prev = b->param_node();
    for (const Node* n : *b) {
      if (n->owning_block() != b) fail(n, "node has the wrong owning block");
      if (n->prev() != prev) fail(n, "broken node list");
      prev = n;
      check_inputs(n);
      check_structure(n);
      for (const Block* nested : n->blocks()) check_block(nested, n);
      for (const Value* o : n->outputs()) {
        if (o->node() != n) fail(n, "output does not point at its node");
        define(o, n);
      }
    }
    check_inputs(b->return_node());
    // Every use of a value is in its scope, so each was counted by now: as many
    // inputs read it as its use list has entries, each valid and none twice
    // (check_uses), so the list is exactly its readers.
    for (const Value* v : defined_here) {
      if (reads_[v->unique()] != v->uses().size()) {
        fail(v->node(), "value %" + std::to_string(v->unique()) + " is read by " +
                            std::to_string(reads_[v->unique()]) + " input(s) but has " +
                            std::to_string(v->uses().size()) + " use(s)");
      }
      set_in_scope(v, false);
    }
  }

  // Each use points at an input that reads the value, and no use is listed twice.
  void check_uses(const Value* v, const Node* n) {
    for (const Use& u : v->uses()) {
      if (u.offset >= u.user->inputs().size() || u.user->input(u.offset) != v)
        fail(n, "a use of %" + std::to_string(v->unique()) + " does not point at an input");
    }
    if (v->uses().size() < 2) return;
    std::vector<std::pair<const Node*, size_t>>& seen = seen_uses_;
    seen.clear();
    for (const Use& u : v->uses()) seen.emplace_back(u.user, u.offset);
    std::sort(seen.begin(), seen.end());
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end())
      fail(n, "a use of %" + std::to_string(v->unique()) + " is listed twice");
  }

  // Each input is in scope; the reads are counted against the value's uses when it
  // goes out of scope (scanning the uses here made a value read by N nodes cost N^2).
  void check_inputs(const Node* n) {
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const Value* v = n->input(i);
      if (!in_scope(v)) {
        fail(n, "input " + std::to_string(i) + " (%" + std::to_string(v->unique()) +
                    ") is not defined before its use");
      }
      ++reads_[v->unique()];
    }
  }

  void check_structure(const Node* n) {
    switch (n->op()) {
      case OpId::If:
        if (n->inputs().size() != 1 || n->blocks().size() != 2)
          fail(n, "If needs 1 input, 2 blocks");
        for (const Block* b : n->blocks()) {
          if (!b->params().empty()) fail(n, "If blocks take no parameters");
          if (b->returns().size() != n->outputs().size()) fail(n, "If block returns != outputs");
        }
        return;
      case OpId::Loop: {
        if (n->inputs().size() < 2 || n->blocks().size() != 1)
          fail(n, "Loop needs >= 2 inputs, 1 block");
        size_t carried = n->inputs().size() - 2;
        const Block* body = n->block(0);
        if (body->params().size() != carried + 1) fail(n, "Loop body params != 1 + carried");
        if (body->returns().size() != carried + 1) fail(n, "Loop body returns != 1 + carried");
        if (n->outputs().size() != carried) fail(n, "Loop outputs != carried");
        return;
      }
      case OpId::GradOf:
        if (std::string p = block_structure_problem(n); !p.empty()) fail(n, p);
        if (n->block(0)->returns().size() != n->outputs().size())
          fail(n, "GradOf block returns != outputs");
        return;
      case OpId::FusionGroup:
        return check_fusion_group(n);
      case OpId::DictConstruct:
        return check_dict_construct(n);
      default:
        break;
    }
    // Structural ops too (an `Undefined` with a block reached vmap).
    if (std::string p = block_structure_problem(n); !p.empty()) fail(n, p);
    if (n->info().has(opflags::PRIM)) return;
    const FunctionSchema& s = schema_of(n->op());
    size_t expected = s.arguments.size();
    bool variadic = s.variadic_index() >= 0;
    if (variadic ? n->inputs().size() + 1 < expected : n->inputs().size() != expected) {
      fail(n, "has " + std::to_string(n->inputs().size()) + " inputs, schema " + s.str());
    }
    if (n->outputs().size() != s.returns.size()) {
      fail(n, "has " + std::to_string(n->outputs().size()) + " outputs, schema " + s.str());
    }
  }

  // DictConstruct(k0, v0, ...): keys and values in pairs, of its Dict output's types.
  void check_dict_construct(const Node* n) {
    if (n->outputs().size() != 1 || n->inputs().size() % 2 != 0 || !n->blocks().empty())
      fail(n, "DictConstruct needs keys and values in pairs and one output");
    const TypePtr& t = n->output()->type();
    if (t->kind() != TypeKind::Dict) fail(n, "DictConstruct's output is not a Dict");
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const TypePtr& expected = i % 2 == 0 ? t->key() : t->value();
      if (!is_subtype(n->input(i)->type(), expected))
        fail(n, "input " + std::to_string(i) + " is not a " + expected->str());
    }
  }

  // A FusionGroup's block is closed: its parameters stand for the inputs, and its
  // nodes (elementwise ops and constants, no blocks) read only values of the block.
  void check_fusion_group(const Node* n) {
    if (n->blocks().size() != 1) fail(n, "FusionGroup needs 1 block");
    const Block* b = n->block(0);
    if (b->params().size() != n->inputs().size()) fail(n, "FusionGroup block params != inputs");
    if (b->returns().size() != n->outputs().size()) fail(n, "FusionGroup block returns != outputs");
    std::unordered_set<const Value*> inside(b->params().begin(), b->params().end());
    auto check_inside = [&](const Value* v) {
      if (!inside.count(v)) fail(n, "FusionGroup block reads a value from outside");
    };
    for (const Node* m : *b) {
      if (!m->blocks().empty()) fail(n, "FusionGroup block holds a node with blocks");
      for (const Value* v : m->inputs()) check_inside(v);
      for (const Value* o : m->outputs()) inside.insert(o);
    }
    for (const Value* v : b->returns()) check_inside(v);
  }

  // The values defined so far on the path to the current node, by Value::unique()
  // (dense in a graph; a value of another graph is never in scope).
  bool in_scope(const Value* v) const {
    return v->unique() < scope_.size() && scope_[v->unique()] && v->owning_graph() == &graph_;
  }
  void set_in_scope(const Value* v, bool on) {
    if (v->unique() >= scope_.size()) {
      scope_.resize(std::max(v->unique() + 1, 2 * scope_.size()));
      reads_.resize(scope_.size());
    }
    scope_[v->unique()] = on;
    reads_[v->unique()] = 0;
  }

  const Graph& graph_;
  std::vector<bool> scope_;
  std::vector<size_t> reads_;  // per value in scope: the inputs seen reading it
  std::vector<std::pair<const Node*, size_t>> seen_uses_;  // check_uses' scratch
};

}  // namespace

std::string block_structure_problem(const Node* n) {
  switch (n->op()) {
    case OpId::If:
    case OpId::Loop:
    case OpId::FusionGroup:
      return "";
    case OpId::GradOf:
      if (n->blocks().size() != 1 || !n->block(0)->params().empty())
        return "GradOf needs one block (the rule), without parameters";
      // Passes and views name the rule by it (vmap, the graph views, lower_grad_of):
      // IR text without it reached vmap as an internal error (the IR fuzz target).
      if (!n->has_attr("op") || !n->attr("op").is_str())
        return "GradOf needs a str attribute op, the op whose rule it is (GradOf[op='sin'])";
      return "";
    default:
      if (!n->blocks().empty())
        return std::string(n->info().name) +
               " takes no blocks (only If, Loop, GradOf and "
               "FusionGroup have blocks)";
      return "";
  }
}

void verify(const Graph& g) { Verifier(g).run(); }

}  // namespace tsl
