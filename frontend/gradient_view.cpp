// The specialized gradient view. See Note [The specialized gradient view].
#include "frontend/gradient_view.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "frontend/emitter.h"
#include "frontend/parser.h"
#include "ir/passes/constant_folding.h"
#include "ir/passes/dead_code_elimination.h"
#include "ir/passes/pass_utils.h"
#include "ir/passes/simplify.h"
#include "ir/passes/specialize_undefined.h"
#include "ir/schema.h"
#include "runtime/exec/interpreter.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {

// Note [The specialized gradient view]
// `:grad f` shows f's gradient for every input shape at once, so it carries the
// bookkeeping that makes one graph fit all shapes: the sizes a matmul's operands are
// reshaped to, the shapes a broadcast gradient is summed back to, the numel a mean
// divides by, conversions to each input's dtype. Given example arguments
// (`:grad f(x, w)`) the view drops what they settle, as jax.make_jaxpr does for its
// example inputs:
//  * both graphs run on the arguments (the backward on ones for each result: the
//    gradient of a scalar loss), and every value outside loops and branches is
//    recorded (record_values: a copy of the graph with GradOf blocks inlined and every
//    value returned);
//  * a value that is not a tensor (a size, a numel, a dtype, a flag) becomes the
//    constant it was, so the nodes computing it go; a shape op that does nothing at
//    these shapes (reshape or expand to its own size, sum_to_size of a tensor of that
//    size, `to` its own dtype, contiguous, AutogradZeros of a defined gradient) is
//    replaced by its input; constant folding, arithmetic simplification and dead code
//    elimination tidy the rest.
// The printer then writes for a student: types with their shapes (`Tensor[4, 5]`),
// constants in place of their names, the incoming gradient as `%dloss` (d and the
// function's name), a captured value under one name in both graphs, GradOf blocks
// with the forward op and line they differentiate, and on request each value. It is
// a view of this one call: the graph TSL runs stays the general one.

namespace {

using Values = std::unordered_map<const Value*, IValue>;

// Pairs each value of `src` with its copy in `dst` (a clone: the same structure).
void map_values(const Block* src, const Block* dst,
                std::unordered_map<const Value*, const Value*>& to_src) {
  for (size_t i = 0; i < src->params().size(); ++i) to_src[dst->params()[i]] = src->params()[i];
  auto s = src->begin();
  auto d = dst->begin();
  for (; s != src->end() && d != dst->end(); ++s, ++d) {
    for (size_t i = 0; i < (*s)->outputs().size(); ++i) to_src[(*d)->output(i)] = (*s)->output(i);
    for (size_t b = 0; b < (*s)->blocks().size(); ++b)
      map_values((*s)->block(b), (*d)->block(b), to_src);
  }
}

// Every value of `g` defined outside loops and branches (those of GradOf blocks
// included), for `inputs`: a copy of `g` with its GradOf blocks inlined returns them
// all, run by the interpreter as it is (not optimized).
Values record_values(const Graph& g, std::vector<IValue> inputs) {
  std::shared_ptr<Graph> probe(g.clone());
  std::unordered_map<const Value*, const Value*> to_src;
  map_values(g.block(), probe->block(), to_src);
  // A GradOf's output is the value its block returns.
  std::vector<std::pair<const Value*, const Value*>> grad_of_outputs;  // g's, the probe's
  for (Node* n : *probe->block()) {
    if (n->op() != OpId::GradOf) continue;
    Block* body = n->block(0);
    while (!body->empty()) (*body->begin())->move_before(n);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      grad_of_outputs.emplace_back(to_src.at(n->output(i)), body->returns()[i]);
      n->output(i)->replace_all_uses_with(body->returns()[i]);
    }
    n->destroy();
  }
  std::vector<Value*> recorded;  // the probe's values, in the order returned
  for (Value* p : probe->inputs()) recorded.push_back(p);
  for (Node* n : *probe->block()) {
    for (Value* o : n->outputs()) recorded.push_back(o);
  }
  size_t first = probe->outputs().size();
  for (Value* v : recorded) probe->add_output(v);
  Code code(probe);
  std::vector<IValue> out = InterpreterState(code).run(std::move(inputs));
  std::unordered_map<const Value*, IValue> by_probe;
  for (size_t i = 0; i < recorded.size(); ++i) by_probe[recorded[i]] = out.at(first + i);
  Values values;
  for (const auto& [v, value] : by_probe) values[to_src.at(v)] = value;
  for (const auto& [output, returned] : grad_of_outputs) {
    auto it = by_probe.find(returned);
    if (it != by_probe.end()) values[output] = it->second;
  }
  return values;
}

bool same_tensor_shape(const IValue& a, const IValue& b) {
  if (!a.is_tensor() || !b.is_tensor() || !a.tensor_impl() || !b.tensor_impl()) return false;
  const Tensor& x = a.to_tensor();
  const Tensor& y = b.to_tensor();
  return x.sizes() == y.sizes() && x.dtype() == y.dtype() && x.device() == y.device();
}

// Whether `n` returns its first input unchanged at the recorded values: a shape op
// that changes nothing at these shapes, or pow(x, 1).
bool does_nothing_here(const Node* n, const Values& values) {
  if (n->op() == OpId::pow && n->inputs().size() == 2) {
    const IValue* e = constant_value(n->input(1));
    auto in = values.find(n->input(0));
    auto out = values.find(n->output());
    if (e && e->is_number() && e->to_double() == 1.0 && in != values.end() && out != values.end() &&
        same_tensor_shape(in->second, out->second))
      return true;
  }
  static const std::unordered_set<std::string_view> kShapeOps = {
      "reshape", "view",       "sum_to_size", "expand",  "expand_as",    "broadcast_to",
      "to",      "contiguous", "reshape_as",  "view_as", "AutogradZeros"};
  if (n->outputs().size() != 1 || n->inputs().empty() || !kShapeOps.count(n->info().name))
    return false;
  auto in = values.find(n->input(0));
  auto out = values.find(n->output());
  return in != values.end() && out != values.end() && same_tensor_shape(in->second, out->second);
}

// Replaces what the recorded values settle (see the Note) in `b` and its GradOf blocks.
void fold_block(Graph& g, Block* b, const Values& values) {
  for (Node* n : *b) {
    if (n->op() == OpId::Constant) continue;
    if (n->op() == OpId::GradOf) fold_block(g, n->block(0), values);
    for (Value* o : n->outputs()) {
      auto it = values.find(o);
      if (it == values.end() || o->type()->is_tensor() || o->uses().empty() ||
          !is_printable_constant(it->second))
        continue;
      replace_with_constant(g, n, o, it->second);
    }
    if (does_nothing_here(n, values)) n->output()->replace_all_uses_with(n->input(0));
  }
}

// Grad of grad: the inner gradient's rules were lowered to If[grad_of='sin', line=4]
// on whether a gradient arrives, so that they could be differentiated again. One whose
// gradient did arrive here is shown as the GradOf it was, so each level's rules name
// the op and line they differentiate.
void restore_rules(Graph& g, Block* b, const Values& values) {
  for (Node* n : *b) {
    if (n->op() == OpId::GradOf) restore_rules(g, n->block(0), values);
    if (n->op() != OpId::If || !n->has_attr("grad_of")) continue;
    auto it = values.find(n->input(0));
    const Node* cond = n->input(0)->node();
    if (it == values.end() || !it->second.is_bool() || !it->second.to_bool() ||
        cond->op() != OpId::AnyDefined)
      continue;
    InsertPointGuard guard(g, n);
    Node* rule = g.insert(g.create(OpId::GradOf, cond->inputs(), n->outputs().size()));
    rule->set_range(n->range());
    rule->set_attr("op", n->attr("grad_of"));
    if (n->has_attr("line")) rule->set_attr("line", n->attr("line"));
    Block* body = rule->add_block();
    Block* taken = n->block(0);
    while (!taken->empty()) (*taken->begin())->move_before(body->return_node());
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      body->add_return(taken->returns()[i]);
      rule->output(i)->set_type(n->output(i)->type());
      rule->output(i)->set_debug_name(n->output(i)->debug_name());
      n->output(i)->replace_all_uses_with(rule->output(i));
    }
    n->destroy();
  }
}

void specialize(Graph& g, const Values& values) {
  Node* first = g.block()->empty() ? g.block()->return_node() : *g.block()->begin();
  for (Value* p : g.inputs()) {
    auto it = values.find(p);
    if (p->type()->is_tensor() || p->uses().empty() || it == values.end() ||
        !is_printable_constant(it->second))
      continue;
    InsertPointGuard at(g, first);
    p->replace_all_uses_with(g.insert_constant(it->second, p->type()));
  }
  restore_rules(g, g.block(), values);  // before fold_block makes their conditions constants
  fold_block(g, g.block(), values);
  for (int round = 0; round < 3; ++round) {
    bool changed = fold_constants(g);
    changed |= simplify_arithmetic(g);
    changed |= specialize_undefined_keeping_rules(g);
    changed |= eliminate_dead_code(g);
    if (!changed) break;
  }
  // What only the reader is spared: a GradOf whose rule does nothing (the gradient of
  // AutogradZeros passes through), and the definedness tests nothing reads any more.
  for (Node* n : *g.block()) {
    // A restored rule's output that only the general graph read (a value it kept for
    // the backward, which the view recomputes there).
    for (size_t i = n->outputs().size(); n->op() == OpId::GradOf && i-- > 0;) {
      if (!n->output(i)->uses().empty() || n->outputs().size() == 1) continue;
      n->block(0)->erase_return(i);
      n->erase_output(i);
    }
    bool passes_through = n->op() == OpId::GradOf && n->block(0)->empty();
    if (passes_through) {
      for (size_t i = 0; i < n->outputs().size(); ++i)
        n->output(i)->replace_all_uses_with(n->block(0)->returns()[i]);
    }
    bool unused = true;
    for (const Value* o : n->outputs()) unused &= o->uses().empty();
    if (unused && (passes_through || n->op() == OpId::AnyDefined)) n->destroy();
  }
  verify(g);
}

// ---- Printing ----------------------------------------------------------------------------

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Element i of a contiguous CPU tensor, as a double.
double element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::Float32:
      return t.data_ptr<float>()[i];
    case DType::Float64:
      return t.data_ptr<double>()[i];
    case DType::Int64:
      return static_cast<double>(t.data_ptr<int64_t>()[i]);
    case DType::Bool:
      return t.data_ptr<bool>()[i] ? 1.0 : 0.0;
  }
  return 0.0;
}

// A short account of a value: a tensor's numbers when it has few, else its first
// ones and its mean.
std::string summary(const IValue& v) {
  if (!v.is_tensor()) return v.repr();
  if (!v.tensor_impl()) return "undefined";
  Tensor t = copy_to_device(v.to_tensor(), kCPU).contiguous();
  int64_t n = t.numel();
  if (t.dim() == 0) return number(element(t, 0));
  std::string s = "[";
  for (int64_t i = 0; i < std::min<int64_t>(n, n <= 6 ? 6 : 3); ++i)
    s += (i ? ", " : "") + number(element(t, i));
  if (n <= 6) return s + "]";
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += element(t, i);
  return s + ", ...] mean " + number(sum / static_cast<double>(n));
}

class ReadingPrinter {
 public:
  ReadingPrinter(std::ostream& out, const Values& values, bool show_values)
      : out_(out), values_(values), show_values_(show_values) {}

  void preset(const Value* v, const std::string& name) {
    names_[v] = name;
    used_.insert(name);
  }
  const std::string& name(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string base = v->debug_name(), n;
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

  std::string type(const Value* v) const {
    auto it = values_.find(v);
    if (it == values_.end() || !it->second.is_tensor() || !it->second.tensor_impl())
      return v->type()->str();
    const Tensor& t = it->second.to_tensor();
    std::string s = "Tensor[";
    for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.sizes()[d]);
    s += "]";
    if (t.dtype() != DType::Float32) s += "(" + std::string(dtype_name(t.dtype())) + ")";
    if (!t.device().is_cpu()) s += "(" + t.device().str() + ")";
    return s;
  }

  std::string operand(const Value* v) {
    if (const IValue* c = constant_value(v); c && is_printable_constant(*c)) {
      if (c->is_list()) {  // sizes as [4, 2], not torch.Size([4, 2])
        std::string s = "[";
        const std::vector<IValue>& elems = c->to_list().elements;
        for (size_t i = 0; i < elems.size(); ++i) s += (i ? ", " : "") + elems[i].repr();
        return s + "]";
      }
      return c->repr();
    }
    return "%" + name(v);
  }

  // How many of n's inputs to print: trailing constants equal to the schema's
  // defaults (`alpha=1`, `dim=None`) go.
  static size_t shown_inputs(const Node* n) {
    size_t count = n->inputs().size();
    if (n->info().has(opflags::PRIM)) return count;
    const FunctionSchema& schema = schema_of(n->op());
    if (schema.variadic_index() >= 0 || schema.arguments.size() != count) return count;
    while (count > 0) {
      const Argument& arg = schema.arguments[count - 1];
      const IValue* c = constant_value(n->input(count - 1));
      if (!c || !arg.default_value) break;
      std::string key = constant_key(*c);
      if (key.empty() || key != constant_key(*arg.default_value)) break;
      --count;
    }
    return count;
  }

  // `%a : T, %b : T` for a list of values defined here.
  std::string definitions(const std::vector<Value*>& vs) {
    std::string s;
    for (size_t i = 0; i < vs.size(); ++i)
      s += (i ? ", %" : "%") + name(vs[i]) + " : " + type(vs[i]);
    return s;
  }

  // What the view prints for `n` (its indentation and note aside): `%h : Tensor[4, 5] =
  // tanh(%0)`; the picture labels its boxes with the same text.
  std::string line(const Node* n) {
    std::string line;
    if (!n->outputs().empty()) line += definitions(n->outputs()) + " = ";
    line += std::string(n->info().name);
    std::string attrs;
    for (const Attribute& a : n->attributes()) {
      if (a.value.is_object() || (n->op() == OpId::Constant && a.name == "value")) continue;
      attrs += (attrs.empty() ? "[" : ", ") + a.name + "=" + a.value.repr();
    }
    if (n->op() == OpId::Constant) attrs = "";
    line += attrs.empty() ? "" : attrs + "]";
    line += "(";
    size_t shown = shown_inputs(n);
    for (size_t i = 0; i < shown; ++i) line += (i ? ", " : "") + operand(n->input(i));
    return line + ")";
  }

  // The note after the line: its source position, and its value on request.
  std::string note(const Node* n) const {
    std::string note = n->op() == OpId::GradOf ? rule_note_ : "";
    if (n->range().valid() && n->op() != OpId::GradOf)
      note = std::to_string(n->range().line) + ":" + std::to_string(n->range().col + 1);
    if (show_values_ && n->outputs().size() == 1) {
      auto it = values_.find(n->output());
      if (it != values_.end()) note += (note.empty() ? "= " : "  = ") + summary(it->second);
    }
    return note;
  }

  // Whether `n` is written at all (a constant that prints is inlined where it is read).
  static bool shown(const Node* n) {
    return !(n->op() == OpId::Constant && is_printable_constant(n->attr("value")));
  }

  // What each GradOf's line says (grad of grad: which level's rule it is).
  void set_rule_note(std::string note) { rule_note_ = std::move(note); }

  void node(const Node* n, int level) {
    if (!shown(n)) return;
    std::string note = this->note(n);
    out_ << std::string(static_cast<size_t>(2 * level), ' ') << line(n)
         << (note.empty() ? "" : "  # " + note) << "\n";
    for (const Block* b : n->blocks()) {
      if (n->op() != OpId::GradOf) {
        out_ << std::string(static_cast<size_t>(2 * level + 2), ' ') << "block("
             << definitions(b->params()) << "):\n";
      }
      for (const Node* inner : *b) node(inner, level + 2);
      std::string rets;
      for (size_t i = 0; i < b->returns().size(); ++i)
        rets += (i ? ", " : "") + operand(b->returns()[i]);
      out_ << std::string(static_cast<size_t>(2 * level + 4), ' ') << "-> (" << rets << ")\n";
    }
  }

  void body(const Graph& g) {
    for (const Node* n : *g.block()) node(n, 1);
  }

 private:
  std::ostream& out_;
  const Values& values_;
  bool show_values_;
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_set<std::string> used_;
  size_t next_temp_ = 0;
  std::string rule_note_;
};

// Note [The gradient picture]
// `:dot grad f(x, w)` draws the specialized view for a student, against the sprawl of
// the general graph's drawing (thousands of pixels wide, its own value numbering):
//  * every box carries the line the text view prints for it (`%h : Tensor[4, 5] =
//    tanh(%0)` and its position), names from the same ReadingPrinter, so the picture
//    and the text read alike; a GradOf block is a cluster titled with its line;
//  * the forward runs top-down on the left and the backward bottom-up beside it: its
//    edges are laid out reversed (dir=back), so the incoming gradient `%dloss` sits at
//    the bottom, under the op it starts from, and each input's gradient at the top,
//    level with the input;
//  * a value the backward captures from the forward is a short stub beside each op
//    that reads it, not an edge across the page.
class PictureWriter {
 public:
  PictureWriter(std::ostream& out, ReadingPrinter& p) : out_(out), p_(p) {}

  // One graph as a cluster: its parameters (`stub` ones drawn where they are read,
  // as captured values), its nodes, its results.
  void graph(const Graph& g, const std::string& prefix, const std::string& title,
             const std::vector<bool>& stub, bool backward, const std::string& results) {
    prefix_ = prefix;
    backward_ = backward;
    out_ << "  subgraph cluster_" << prefix << " {\n    label=\"" << escape(title)
         << "\"; labeljust=l; fontsize=14; style=rounded; color=gray60;\n";
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value* in = g.inputs()[i];
      if (i < stub.size() && stub[i]) {
        stubs_.insert(in);
        continue;
      }
      std::string id = prefix + "_in" + std::to_string(i);
      out_ << "    " << id << " [shape=invhouse, style=filled, fillcolor=gray92, label=\""
           << escape(p_.definitions({const_cast<Value*>(in)})) << "\"];\n";
      source_[in] = id;
    }
    block(*g.block(), 2);
    std::string ret = prefix + "_return";
    out_ << "    " << ret << " [shape=house, style=filled, fillcolor=gray92, label=\"return ("
         << escape(results) << ")\"];\n";
    out_ << "  }\n";
    std::unordered_set<const Value*> drawn;
    for (const Value* v : g.outputs()) {
      if (results.find(p_.operand(v)) != std::string::npos && drawn.insert(v).second) edge(v, ret);
    }
    for (const std::string& e : edges_) out_ << e;
    edges_.clear();
    // The backward's rules stacked in the order they run, bottom-up, each above the
    // one before: a rule's own arithmetic (tanh's 1 - h^2, from the forward alone)
    // hangs below the op that takes the gradient, and would share rows with the rule
    // before it, pushing the rules into a staircase across the page.
    for (size_t k = 1; k < rules_.size(); ++k) {
      for (const std::string& above : rules_[k])
        for (const std::string& below : rules_[k - 1])
          out_ << "  " << above << " -> " << below << " [style=invis];\n";
    }
    rules_.clear();
  }

 private:
  static std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out;
  }

  void block(const Block& b, int level) {
    for (const Node* n : b) node(*n, level);
  }

  void node(const Node& n, int level) {
    if (!ReadingPrinter::shown(&n) || n.op() == OpId::Constant) return;
    std::string pad(static_cast<size_t>(2 * level), ' ');
    std::string id = prefix_ + "_n" + std::to_string(counter_++);
    std::string note = p_.note(&n);
    std::string label = escape(p_.line(&n)) + "\\l" + (note.empty() ? "" : escape(note) + "\\l");
    if (!n.blocks().empty()) {
      bool grad_of = n.op() == OpId::GradOf;
      out_ << pad << "subgraph cluster_" << id << " {\n"
           << pad << "  label=\"" << escape(p_.line(&n)) << "\"; labeljust=l; fontsize=11; "
           << "style=filled; color=gray75; fillcolor=\"" << (grad_of ? "#fff1e0" : "#f4f8ff")
           << "\";\n";
      for (size_t k = 0; k < n.blocks().size(); ++k) {
        const Block* blk = n.block(k);
        for (const Value* param : blk->params()) {
          std::string pid = id + "_p" + std::to_string(counter_++);
          out_ << pad << "  " << pid << " [shape=plain, label=\""
               << escape(p_.definitions({const_cast<Value*>(param)})) << "\"];\n";
          source_[param] = pid;
        }
        // A GradOf at the backward's top level: one rule, one row of the stack.
        bool rule = backward_ && grad_of && level == 2;
        if (rule) {
          rules_.emplace_back();
          in_rule_ = true;
        }
        block(*blk, level + 1);
        if (rule) in_rule_ = false;
      }
      // A GradOf's results are its block's: edges leave from the ops that made them.
      // Another block node (If, Loop) gets a box for its results.
      if (grad_of) {
        for (size_t i = 0; i < n.outputs().size(); ++i)
          alias_[n.output(i)] = n.block(0)->returns()[i];
      } else {
        out_ << pad << "  " << id << " [shape=box, style=\"rounded,dashed\", label=\""
             << escape(p_.definitions(n.outputs())) << "\\l\"];\n";
        for (const Value* o : n.outputs()) source_[o] = id;
        for (const Block* blk : n.blocks())
          for (const Value* r : blk->returns()) edge(r, id);
      }
      out_ << pad << "}\n";
      for (const Value* in : n.inputs()) {
        if (!grad_of) edge(in, id);
      }
      return;
    }
    if (backward_ && in_rule_) rules_.back().push_back(id);
    out_ << pad << id << " [shape=box, style=\"rounded,filled\", fillcolor=\""
         << (backward_ ? "#ffd9b3" : "#dbe9ff") << "\", label=\"" << label << "\"];\n";
    for (const Value* in : n.inputs()) edge(in, id);
    for (const Value* o : n.outputs()) source_[o] = id;
  }

  // An edge for value `v` into box `to` (none for an inlined constant); a captured
  // value gets a stub of its own beside `to`. The backward's are laid out reversed.
  void edge(const Value* v, const std::string& to) {
    while (alias_.count(v)) v = alias_.at(v);
    std::string from;
    if (stubs_.count(v)) {
      // Beside the box that reads it (same rank), so it takes no row of its own.
      from = prefix_ + "_stub" + std::to_string(counter_++);
      out_ << "    " << from << " [shape=plain, fontcolor=gray35, label=\"" << escape(p_.operand(v))
           << " (forward)\"];\n    {rank=same; " << from << "; " << to << ";}\n";
      edges_.push_back("  " + from + " -> " + to + " [color=gray60, arrowsize=0.6];\n");
      return;
    } else if (auto it = source_.find(v); it != source_.end()) {
      from = it->second;
    } else {
      return;
    }
    edges_.push_back(backward_ ? "  " + to + " -> " + from + " [dir=back];\n"
                               : "  " + from + " -> " + to + ";\n");
  }

  std::ostream& out_;
  ReadingPrinter& p_;
  std::string prefix_;
  bool backward_ = false;
  std::unordered_map<const Value*, std::string> source_;
  std::unordered_map<const Value*, const Value*> alias_;  // a GradOf output: its return
  std::unordered_set<const Value*> stubs_;
  std::vector<std::string> edges_;
  std::vector<std::vector<std::string>> rules_;  // the boxes of each top-level GradOf
  bool in_rule_ = false;
  size_t counter_ = 0;
};

// The view of forward `f` and backward `df` (df's first `num_seeds` inputs are the
// incoming gradients, the others the values f returns after its `num_real_outputs`
// results): the text, or with `picture` its drawing with the same names (Note [The
// gradient picture]). `names`: the differentiated parameters, for the last comment.
std::string render(const Graph& f, const Graph& df, size_t num_real_outputs, size_t num_seeds,
                   const Values& values, const std::string& name, const std::vector<IValue>& args,
                   const std::string& names, bool show_values, bool picture) {
  std::ostringstream out;
  ReadingPrinter p(out, values, show_values);
  size_t num_captures = df.inputs().size() - num_seeds;
  // The parameters with their shapes; a number or string argument with its value.
  std::string params;
  for (size_t i = 0; i < f.inputs().size(); ++i) {
    params += (i ? ", " : "") + p.definitions({f.inputs()[i]});
    if (i < args.size() && !args[i].is_tensor() && is_printable_constant(args[i]))
      params += " = " + args[i].repr();
  }
  // Grad of grad: the forward computes a gradient, so it has rules of its own, the
  // first level; the backward's differentiate them, the second. Each is labelled.
  bool two_levels = false;
  for (const Node* n : *f.block()) two_levels |= n->op() == OpId::GradOf;
  out << name << ".forward(" << params << "):  # the result, and what the backward reads"
      << (two_levels ? "; level 1: the gradient it computes" : "") << "\n";
  if (two_levels) p.set_rule_note("level 1");
  p.body(f);
  std::string rets;
  for (size_t i = 0; i < num_real_outputs; ++i) rets += (i ? ", " : "") + p.operand(f.outputs()[i]);
  // The backward's names of the captures: the forward's.
  std::string kept;
  for (size_t i = 0; i < num_captures; ++i) {
    const Value* param = df.inputs()[num_seeds + i];
    if (param->uses().empty()) continue;
    const Value* v = f.outputs()[num_real_outputs + i];
    kept += (kept.empty() ? "" : ", ") + p.operand(v);
    p.preset(param, p.name(v));
  }
  out << "  return (" << rets << ")" << (kept.empty() ? "" : "  # kept for the backward: " + kept)
      << "\n";
  // The incoming gradients: d<function> for a single result.
  // The incoming gradients: d<name> (d<name><k> for several results); `dresult` when
  // the name is not an identifier (`nn.linear`).
  bool identifier =
      !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) identifier &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  std::string base = "d" + (identifier ? name : std::string("result"));
  for (size_t i = 0; i < num_seeds; ++i) {
    std::string seed = num_seeds == 1 ? base : base + std::to_string(i);
    p.preset(df.inputs()[i], seed);
  }
  std::vector<Value*> seeds(df.inputs().begin(),
                            df.inputs().begin() + static_cast<std::ptrdiff_t>(num_seeds));
  std::string backward_head = name + ".backward(" + p.definitions(seeds) + ")";
  out << backward_head << ":  # from the result's gradient (ones)"
      << (two_levels ? "; level 2: the gradient of all of it" : "") << "\n";
  if (two_levels) p.set_rule_note("level 2");
  p.body(df);
  std::string grads;
  for (size_t i = 0; i < df.outputs().size(); ++i)
    grads += (i ? ", " : "") + p.operand(df.outputs()[i]);
  out << "  return (" << grads << ")  # the gradients of " << names << "\n";
  if (!picture) return out.str();
  // The picture, with the names the text gave (Note [The gradient picture]).
  std::ostringstream dot;
  dot << "digraph \"" << name << "\" {\n  rankdir=TB; newrank=true; nodesep=0.25; ranksep=0.3;\n"
      << "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [color=gray30];\n";
  PictureWriter w(dot, p);
  w.graph(f, "fwd", name + ".forward(" + params + ")", {}, false, rets);
  std::vector<bool> captured(df.inputs().size(), false);
  for (size_t i = num_seeds; i < df.inputs().size(); ++i) captured[i] = true;
  w.graph(df, "bwd", backward_head, captured, true, grads);
  dot << "}\n";
  return dot.str();
}

}  // namespace

IValue evaluate_expression(CompilationUnit& unit, const ast::Expr& e) {
  auto graph = std::make_shared<Graph>();
  Emitter emitter(unit, *graph, Emitter::Mode::TopLevel);
  graph->add_output(emitter.emit_expr(e));
  std::vector<IValue> globals;
  for (const std::string& name : emitter.global_inputs())
    globals.push_back(unit.find_global(name)->value);
  IntrusivePtr<Function> fn(new Function("<args>", graph));
  return fn->run(std::move(globals)).at(0);
}

std::vector<IValue> evaluate_arguments(CompilationUnit& unit, const std::string& text) {
  auto source = std::make_shared<Source>("<args>", "(" + text + (text.empty() ? ")" : ",)"));
  IValue tuple = evaluate_expression(unit, *parse_expression(source));
  return tuple.is_tuple() ? tuple.to_tuple() : std::vector<IValue>{};
}

std::string specialized_gradient_text(CompilationUnit& unit, FunctionDecl& decl,
                                      const std::vector<IValue>& args, const std::string& name,
                                      const GradientViewOptions& options,
                                      const std::vector<size_t>& only) {
  TSL_CHECK(args.size() == decl.param_names.size(), name, "() takes ", decl.param_names.size(),
            " argument(s), given ", args.size());
  std::vector<size_t> wrt;
  for (size_t i = 0; i < args.size(); ++i) {
    bool asked = only.empty() || std::find(only.begin(), only.end(), i) != only.end();
    if (asked && args[i].is_tensor() && args[i].tensor_impl() &&
        is_floating(args[i].to_tensor().dtype()))
      wrt.push_back(i);
  }
  TSL_CHECK(!wrt.empty(), name,
            "(...): no argument is a floating-point tensor, so there is no gradient to show");
  size_t num_seeds = 0;
  autodiff::Gradient gradient = unit.gradient_graphs(decl, wrt, SourceRange(), &num_seeds);
  Graph& f = *gradient.f;
  Graph& df = *gradient.df;
  // The forward's inputs: the arguments, then the globals the function reads.
  std::vector<IValue> f_inputs = args;
  for (const std::string& global : unit.compile_function(decl, SourceRange()).hidden_globals)
    f_inputs.push_back(unit.find_global(global)->value);
  // Each graph runs, is specialized, and runs again while that changes it: a branch
  // whose condition became a constant, or a loop unrolled, shows values it hid.
  auto settle = [](Graph& g, const std::vector<IValue>& inputs) {
    Values values;
    for (int round = 0; round < 4; ++round) {
      values = record_values(g, inputs);
      std::string before = print_graph(g);
      specialize(g, values);
      if (print_graph(g) == before) break;
      values = record_values(g, inputs);
    }
    return values;
  };
  Values values = settle(f, f_inputs);
  // The backward on ones for each result, and the captured values.
  std::vector<IValue> df_inputs;
  for (size_t i = 0; i < num_seeds; ++i) {
    const IValue& out = values.at(f.outputs()[i]);
    TSL_CHECK(out.is_tensor() && out.tensor_impl(), name,
              "(...) does not return a tensor: there is no gradient to show");
    const Tensor& result = out.to_tensor();
    Tensor ones = Tensor::empty(result.sizes(), result.dtype(), result.device());
    fill_tensor(ones, Scalar(1.0));
    df_inputs.push_back(IValue(ones));
  }
  for (size_t i = 0; i < gradient.num_captures; ++i)
    df_inputs.push_back(values.at(f.outputs()[gradient.num_real_outputs + i]));
  Values df_values = settle(df, df_inputs);
  values.insert(df_values.begin(), df_values.end());

  std::string names;
  for (size_t i : wrt) names += (names.empty() ? "" : ", ") + decl.param_names[i];
  return render(f, df, gradient.num_real_outputs, num_seeds, values, name, args, names,
                options.values, options.picture);
}

std::string specialized_gradient_of_call(CompilationUnit& unit, const std::string& call,
                                         const GradientViewOptions& options) {
  auto trim = [](std::string s) {
    size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  size_t open = call.find('('), close = call.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open ||
      !trim(call.substr(close + 1)).empty() || trim(call.substr(0, open)).empty())
    throw Error("expected a call NAME(ARGS), as in loss(x, w), not '" + trim(call) + "'");
  std::string name = trim(call.substr(0, open));
  FunctionDecl* decl = unit.resolve_function(name);
  if (!decl) throw Error("no function named '" + name + "'");
  std::vector<IValue> args = evaluate_arguments(unit, call.substr(open + 1, close - open - 1));
  return specialized_gradient_text(unit, *decl, args, name, options);
}

std::string gradient_picture(const Graph& f, const Graph& df, size_t num_real_outputs,
                             size_t num_seeds, const std::string& name, const std::string& names) {
  return render(f, df, num_real_outputs, num_seeds, Values(), name, {}, names, false, true);
}

}  // namespace tsl
