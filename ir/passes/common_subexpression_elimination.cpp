// Common-subexpression elimination over the dominator tree of the block structure;
// see common_subexpression_elimination.h.
#include "ir/passes/common_subexpression_elimination.h"

#include <charconv>
#include <unordered_map>

#include "ir/passes/pass_utils.h"

namespace tsl {
namespace {

class CommonSubexpressions {
 public:
  explicit CommonSubexpressions(Graph& g) : g_(g), mutation_(g) {}

  bool run() {
    run_block(g_.block());
    return changed_;
  }

 private:
  // The nodes of a block see the entries of the enclosing blocks (a scope chain);
  // their own entries are dropped when the block ends.
  void run_block(Block* b) {
    scopes_.emplace_back();
    for (Node* n : *b) visit(n);
    scopes_.pop_back();
  }

  void visit(Node* n) {
    for (Block* b : n->blocks()) run_block(b);
    std::string key = key_of(n);
    if (key.empty()) return;
    Node* earlier = lookup(key);
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
    if (!earlier) scopes_.back().emplace(std::move(key), n);
  }

  bool outputs_may_merge(const Node* n, const Node* earlier) const {
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      if (!mutation_.may_replace(n->output(i), earlier->output(i))) return false;
    }
    return true;
  }

  Node* lookup(const std::string& key) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(key);
      if (found != it->end()) return found->second;
    }
    return nullptr;
  }

  // What identifies the value of `n`: op, inputs, attributes and output types; ""
  // when `n` must not be merged. Built in place, without temporaries: CSE computes
  // the key of every node twice per pipeline round (issue 6's compile latency).
  std::string key_of(const Node* n) const {
    if (!is_pure_op(n) || n->outputs().empty()) return "";
    for (const Value* v : n->inputs()) {
      if (mutation_.may_be_written(v)) return "";
    }
    std::string key;
    key.reserve(64);
    key += n->info().name;
    key += '(';
    size_t first = 0;
    // mul(%x, %y) and mul(%y, %x) compute the same value.
    if (is_commutative(n) && n->input(1)->unique() < n->input(0)->unique()) first = 1;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      size_t k = i < 2 && first == 1 ? 1 - i : i;
      append_number(key, n->input(k)->unique());
      key += ',';
    }
    key += ")[";
    for (const Attribute& a : n->attributes()) {
      std::string k = constant_key(a.value);
      if (k.empty()) return "";  // a tensor constant, a callee: no value equality
      key += a.name;
      key += '=';
      key += k;
      key += ',';
    }
    key += "]->";
    for (const Value* v : n->outputs()) {
      if (mutation_.may_be_written(v)) return "";
      key += v->type()->str();
      key += ',';
    }
    return key;
  }

  static void append_number(std::string& out, size_t x) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, x);
    out.append(buf, r.ptr);
  }

  Graph& g_;
  MutationInfo mutation_;
  std::vector<std::unordered_map<std::string, Node*>> scopes_;
  bool changed_ = false;
};

}  // namespace

bool eliminate_common_subexpressions(Graph& g) { return CommonSubexpressions(g).run(); }

}  // namespace tsl
