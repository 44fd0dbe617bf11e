// Graphviz DOT output for graphs and gradient graphs (see dot.h).
#include "ir/dot.h"

#include <sstream>
#include <unordered_map>

namespace tsl {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

struct Style {
  const char* shape;
  const char* color;
};

class DotWriter {
 public:
  DotWriter(std::ostream& out, std::string prefix, Style style)
      : out_(out), prefix_(std::move(prefix)), style_(style) {}

  // The DOT node that defines `v` (an op node or a parameter node).
  std::string source_of(const Value* v) const {
    auto it = sources_.find(v);
    return it == sources_.end() ? "" : it->second;
  }
  std::string value_label(const Value* v) const {
    return v->debug_name().empty() ? "%" + std::to_string(v->unique()) : "%" + v->debug_name();
  }

  void write_graph(const Graph& g, const std::string& title) {
    out_ << "  subgraph cluster_" << prefix_ << " {\n    label=\"" << escape(title)
         << "\"; fontsize=16; style=rounded; color=gray60;\n";
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value* in = g.inputs()[i];
      std::string id = prefix_ + "_in" + std::to_string(i);
      out_ << "    " << id << " [shape=invhouse, style=filled, fillcolor=gray92, label=\""
           << escape(value_label(in) + " : " + in->type()->str()) << "\"];\n";
      sources_[in] = id;
    }
    write_block(*g.block(), 2);
    std::string ret = prefix_ + "_return";
    out_ << "    " << ret << " [shape=house, style=filled, fillcolor=gray92, label=\"return\"];\n";
    out_ << "  }\n";
    for (size_t i = 0; i < g.outputs().size(); ++i) edge(g.outputs()[i], ret, std::to_string(i));
    for (const auto& e : pending_edges_) out_ << e;
    pending_edges_.clear();
  }

 private:
  void indent(int level) {
    for (int i = 0; i < level; ++i) out_ << "  ";
  }

  void edge(const Value* v, const std::string& to, const std::string& label = "") {
    std::string from = source_of(v);
    if (from.empty()) return;
    std::ostringstream e;
    e << "  " << from << " -> " << to << " [label=\""
      << escape(label.empty() ? value_label(v) : label) << "\", fontsize=9];\n";
    pending_edges_.push_back(e.str());
  }

  void write_block(const Block& b, int level) {
    for (const Node* n : b) write_node(*n, level);
  }

  void write_node(const Node& n, int level) {
    // Constants are left out: they would outnumber the ops a learner wants to see.
    if (n.op() == OpId::Constant) return;
    std::string id = prefix_ + "_n" + std::to_string(counter_++);
    std::string label = escape(std::string(n.info().name));
    if (n.range().valid()) label += "\\nline " + std::to_string(n.range().line);
    bool grad_of = n.op() == OpId::GradOf;
    if (!n.blocks().empty()) {
      indent(level);
      std::string title = grad_of ? "grad of " + escape(n.attr("op").to_str()) : label;
      if (grad_of && n.has_attr("line"))
        title += " (line " + std::to_string(n.attr("line").to_int()) + ")";
      out_ << "subgraph cluster_" << id << " {\n";
      indent(level + 1);
      out_ << "label=\"" << title << "\"; style=" << (grad_of ? "filled" : "dashed")
           << "; fillcolor=\"" << (grad_of ? "#fff1e0" : "white") << "\";\n";
      for (size_t b = 0; b < n.blocks().size(); ++b) {
        const Block* blk = n.block(b);
        for (const Value* p : blk->params()) {
          std::string pid = id + "_p" + std::to_string(counter_++);
          indent(level + 1);
          out_ << pid << " [shape=plain, label=\"" << escape(value_label(p)) << "\"];\n";
          sources_[p] = pid;
        }
        write_block(*blk, level + 1);
        std::string rid = id + "_r" + std::to_string(b);
        indent(level + 1);
        out_ << rid << " [shape=point];\n";
        for (const Value* r : blk->returns()) edge(r, rid);
      }
      indent(level + 1);
      out_ << id << " [shape=diamond, label=\"" << (grad_of ? "any gradient?" : label) << "\"];\n";
      indent(level);
      out_ << "}\n";
    } else {
      indent(level);
      out_ << id << " [shape=" << style_.shape << ", style=filled, fillcolor=\"" << style_.color
           << "\", label=\"" << label << "\"];\n";
    }
    for (const Value* in : n.inputs()) edge(in, id);
    for (const Value* o : n.outputs()) sources_[o] = id;
  }

  std::ostream& out_;
  std::string prefix_;
  Style style_;
  std::unordered_map<const Value*, std::string> sources_;
  std::vector<std::string> pending_edges_;
  size_t counter_ = 0;
};

}  // namespace

std::string graph_to_dot(const Graph& g) {
  std::ostringstream out;
  out << "digraph \"" << escape(g.name()) << "\" {\n  node [fontname=\"Helvetica\"];\n"
      << "  edge [fontname=\"Helvetica\"];\n";
  DotWriter w(out, "g", {"ellipse", "#dbe9ff"});
  w.write_graph(g, g.name());
  out << "}\n";
  return out.str();
}

}  // namespace tsl
