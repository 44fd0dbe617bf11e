// Common-subexpression elimination over the dominator tree of the block structure;
// see common_subexpression_elimination.h.
#include "ir/passes/common_subexpression_elimination.h"

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "ir/passes/pass_utils.h"

namespace tsl {
namespace {

// Input i of `n` in the order its key lists them: the two operands of a commutative
// op by increasing unique(), so that mul(%x, %y) and mul(%y, %x) compute one value.
const Value* keyed_input(const Node* n, size_t i, bool swapped) {
  return n->input(swapped && i < 2 ? 1 - i : i);
}

bool swaps_operands(const Node* n) {
  return is_commutative(n) && n->input(1)->unique() < n->input(0)->unique();
}

void hash_combine(size_t& h, size_t x) { h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

// A hash of constant_key(v), false when v has no key. Floats and ints, the common
// attributes, are hashed without making the key text.
bool hash_constant(const IValue& v, size_t& h) {
  if (v.is_double()) {
    hash_combine(h, std::bit_cast<uint64_t>(v.to_double()));
    return true;
  }
  if (v.is_int()) {
    hash_combine(h, static_cast<size_t>(v.to_int()));
    return true;
  }
  std::string k = constant_key(v);
  hash_combine(h, std::hash<std::string>()(k));
  return !k.empty();
}

// Whether constant_key(a) == constant_key(b) for two values that have keys: floats
// by bits, ints by value, without making the key texts.
bool same_constant(const IValue& a, const IValue& b) {
  if (a.is_double() && b.is_double())
    return std::bit_cast<uint64_t>(a.to_double()) == std::bit_cast<uint64_t>(b.to_double());
  if (a.is_int() && b.is_int()) return a.to_int() == b.to_int();
  return constant_key(a) == constant_key(b);
}

// Whether two types print alike: output types are compared by their text (a refined
// Tensor(float32) prints as Tensor).
bool same_type_text(const TypePtr& a, const TypePtr& b) {
  return a == b || (a->kind() == b->kind() && a->str() == b->str());
}

class CommonSubexpressions {
 public:
  explicit CommonSubexpressions(Graph& g) : g_(g), mutation_(g) {}

  bool run() {
    run_block(g_.block());
    return changed_;
  }

 private:
  // What identifies the value of a node: op, inputs (see keyed_input), attributes
  // (by constant_key) and output types (by their text). Nodes are found by a hash of
  // these and compared field by field, without building a key text: CSE looks at
  // every node twice per pipeline round (issue 6's compile latency).
  struct Key {
    size_t hash;
    bool swapped;
  };

  // The nodes of a block see the entries of the enclosing blocks; a block's own
  // entries are dropped when it ends. One table holds the entries of every open block
  // (a chain of per-block tables made each lookup walk the nesting depth: quadratic
  // for an elif chain). At most one node per key in the table: a node is entered only
  // when no earlier one matches.
  void run_block(Block* b) {
    size_t mark = entered_.size();
    for (Node* n : *b) visit(n);
    while (entered_.size() > mark) {
      auto [hash, node] = entered_.back();
      entered_.pop_back();
      auto [first, last] = table_.equal_range(hash);
      for (auto e = first; e != last; ++e) {
        if (e->second == node) {
          table_.erase(e);
          break;
        }
      }
    }
  }

  void visit(Node* n) {
    for (Block* b : n->blocks()) {
      if (n->op() != OpId::FusionGroup) {
        run_block(b);
        continue;
      }
      // A FusionGroup's block is closed (it reads its params only): it must not take
      // values of the blocks around it, a constant say.
      std::unordered_multimap<size_t, Node*> outer;
      outer.swap(table_);
      run_block(b);
      table_.swap(outer);
    }
    std::optional<Key> key = key_of(n);
    if (!key) return;
    Node* earlier = lookup(n, *key);
    if (earlier && outputs_may_merge(n, earlier)) {
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        Value* out = n->output(i);
        Value* keep = earlier->output(i);
        if (keep->debug_name().empty()) keep->set_debug_name(out->debug_name());
        out->replace_all_uses_with(keep);
      }
      n->destroy();
      changed_ = true;
      return;
    }
    if (!earlier) {
      table_.emplace(key->hash, n);
      entered_.emplace_back(key->hash, n);
    }
  }

  bool outputs_may_merge(const Node* n, const Node* earlier) const {
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      if (!mutation_.may_replace(n->output(i), earlier->output(i))) return false;
    }
    return true;
  }

  Node* lookup(const Node* n, const Key& key) const {
    auto [first, last] = table_.equal_range(key.hash);
    for (auto e = first; e != last; ++e) {
      if (same_key(n, key.swapped, e->second)) return e->second;
    }
    return nullptr;
  }

  // The key of `n`, or nothing when `n` must not be merged.
  std::optional<Key> key_of(const Node* n) const {
    if (!is_pure_op(n) || n->outputs().empty()) return std::nullopt;
    for (const Value* v : n->inputs()) {
      if (mutation_.may_be_written(v)) return std::nullopt;
    }
    for (const Value* v : n->outputs()) {
      if (mutation_.may_be_written(v)) return std::nullopt;
    }
    Key key{static_cast<size_t>(n->op()), swaps_operands(n)};
    for (size_t i = 0; i < n->inputs().size(); ++i)
      hash_combine(key.hash, keyed_input(n, i, key.swapped)->unique());
    for (const Attribute& a : n->attributes()) {
      hash_combine(key.hash, std::hash<std::string>()(a.name));
      // A tensor constant, a callee: no value equality.
      if (!hash_constant(a.value, key.hash)) return std::nullopt;
    }
    for (const Value* v : n->outputs())
      hash_combine(key.hash, static_cast<size_t>(v->type()->kind()));
    return key;
  }

  // Whether `earlier` (entered with its key) has the key of `n`.
  static bool same_key(const Node* n, bool swapped, const Node* earlier) {
    if (n->op() != earlier->op() || n->inputs().size() != earlier->inputs().size() ||
        n->attributes().size() != earlier->attributes().size() ||
        n->outputs().size() != earlier->outputs().size()) {
      return false;
    }
    bool earlier_swapped = swaps_operands(earlier);
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      if (keyed_input(n, i, swapped) != keyed_input(earlier, i, earlier_swapped)) return false;
    }
    for (size_t i = 0; i < n->attributes().size(); ++i) {
      const Attribute& a = n->attributes()[i];
      const Attribute& b = earlier->attributes()[i];
      if (a.name != b.name || !same_constant(a.value, b.value)) return false;
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      if (!same_type_text(n->output(i)->type(), earlier->output(i)->type())) return false;
    }
    return true;
  }

  Graph& g_;
  MutationInfo mutation_;
  std::unordered_multimap<size_t, Node*> table_;
  std::vector<std::pair<size_t, Node*>> entered_;  // in entry order, for run_block's undo
  bool changed_ = false;
};

}  // namespace

bool eliminate_common_subexpressions(Graph& g) { return CommonSubexpressions(g).run(); }

}  // namespace tsl
