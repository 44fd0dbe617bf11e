// The text form of the IR (ARCHITECTURE.md "The IR"): what `print(graph(f))`,
// `--dump=ir` and the pass tests show, and what the IR parser reads back.
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ir/ir.h"

namespace tsl {
namespace {

class Printer {
 public:
  Printer(std::ostream& out, PrintOptionsIR options) : out_(out), options_(options) {}

  void print(const Graph& g) {
    out_ << "graph";
    if (!g.name().empty()) out_ << " " << g.name();
    out_ << "(";
    print_params(g.inputs());
    out_ << "):\n";
    print_block_body(g.block(), 1);
    indent(1);
    out_ << "return (";
    print_value_list(g.outputs());
    out_ << ")";
    if (options_.first_captured_output < g.outputs().size()) {
      out_ << "  # captured for the backward:";
      for (size_t i = options_.first_captured_output; i < g.outputs().size(); ++i)
        out_ << (i == options_.first_captured_output ? " %" : ", %") << name(g.outputs()[i]);
    }
    out_ << "\n";
  }

 private:
  // A value's printed name: its source name, made unique with .1, .2, ...; else a
  // number counted in print order, so equal graphs print equally.
  const std::string& name(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string base = v->debug_name();
    std::string n;
    if (base.empty()) {
      do {
        n = std::to_string(next_temp_++);
      } while (used_.count(n));
    } else {
      n = base;
      for (int k = 1; used_.count(n); ++k) n = base + "." + std::to_string(k);
    }
    used_.insert(n);
    return names_.emplace(v, n).first->second;
  }

  void indent(int level) {
    for (int i = 0; i < level; ++i) out_ << "  ";
  }

  void print_params(const std::vector<Value*>& params) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (i) out_ << ", ";
      out_ << "%" << name(params[i]) << " : " << params[i]->type()->str();
    }
  }

  void print_value_list(const std::vector<Value*>& values) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (i) out_ << ", ";
      out_ << "%" << name(values[i]);
    }
  }

  void print_attrs(const Node* n) {
    bool first = true;
    for (const Attribute& a : n->attributes()) {
      if (a.value.is_object()) continue;  // runtime handles (a callee) are not text
      out_ << (first ? "[" : ", ") << a.name << "=" << a.value.repr();
      first = false;
    }
    if (!first) out_ << "]";
  }

  void print_node(const Node* n, int level) {
    indent(level);
    if (!n->outputs().empty()) {
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        if (i) out_ << ", ";
        const Value* o = n->output(i);
        out_ << "%" << name(o) << " : " << (o->type() ? o->type()->str() : "?");
      }
      out_ << " = ";
    }
    out_ << n->info().name;
    print_attrs(n);
    out_ << "(";
    print_value_list(n->inputs());
    out_ << ")";
    if (options_.with_lines && n->range().valid()) {
      out_ << "  # " << n->range().line << ":" << n->range().col + 1;
    }
    out_ << "\n";
    for (size_t b = 0; b < n->blocks().size(); ++b) {
      const Block* block = n->block(b);
      indent(level + 1);
      out_ << "block" << b << "(";
      print_params(block->params());
      out_ << "):\n";
      print_block_body(block, level + 2);
      indent(level + 2);
      out_ << "-> (";
      print_value_list(block->returns());
      out_ << ")\n";
    }
  }

  void print_block_body(const Block* b, int level) {
    for (const Node* n : *b) print_node(n, level);
  }

  std::ostream& out_;
  PrintOptionsIR options_;
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_set<std::string> used_;
  size_t next_temp_ = 0;
};

}  // namespace

std::string print_graph(const Graph& g, PrintOptionsIR options) {
  std::ostringstream out;
  Printer(out, options).print(g);
  return out.str();
}

}  // namespace tsl
