// The REPL loop: reads complete inputs (a blank line ends a block), runs each in the
// session's CompilationUnit, prints values and errors, handles meta-commands.
#include "frontend/repl/repl.h"

#include "runtime/kernels/files.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "frontend/compilation_unit.h"
#include "frontend/emitter.h"
#include "frontend/gradient_view.h"
#include "frontend/parser.h"
#include "frontend/repl/code_view.h"
#include "frontend/repl/line_editor.h"
#include "ir/dot.h"
#include "ir/schema.h"
#include "runtime/autograd/node.h"
#include "runtime/exec/interpreter.h"
#include "runtime/kernels/output.h"
#include "runtime/exec/profiler.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// The meta-commands: `:help` lists them all, `:help CMD` one (with or without ':').
struct CommandHelp {
  const char* name;  // ":grad"
  const char* text;  // its lines, the first one starting with the name
};
constexpr CommandHelp kCommands[] = {
    {":help", "  :help [CMD]      this text, or the help of one command (:help grad)\n"},
    {":vars",
     "  :vars            the variables and functions of this session: types, tensor\n"
     "                   shapes, dtypes and devices, values of numbers and strings\n"},
    {":type", "  :type EXPR       the static type of an expression (without running it)\n"},
    {":graph", "  :graph NAME      the IR of function NAME (also :ir NAME)\n"},
    {":grad",
     "  :grad NAME       the gradient graph of NAME for its Tensor parameters: the\n"
     "                   forward with its captured values, then the backward\n"
     "  :grad NAME(ARGS) the same for these arguments (expressions over the session's\n"
     "                   variables): shapes known, shape bookkeeping folded away, types\n"
     "                   with shapes; --values also shows each value\n"
     "  :grad --full NAME the general graph (as :grad NAME), arguments or not\n"},
    {":opt",
     "  :opt NAME        NAME's graph after the pipeline and fusion (what runs);\n"
     "                   :opt grad NAME its gradient graph optimized\n"},
    {":passes",
     "  :passes NAME     the pipeline pass by pass, fuse last: the graph after each pass that\n"
     "                   changed it, lines marked - (gone) and + (new); also :passes grad NAME\n"},
    {":time",
     "  :time STMT       run STMT repeatedly, as IPython's %timeit: the first run (compile\n"
     "                   and run), then enough runs for about 0.2 s (at least 3, at most\n"
     "                   1000), and their min, median and max\n"},
    {":profile", "  :profile STMT    run STMT, then the time per op kind and the slowest nodes\n"},
    {":code",
     "  :code NAME       the register program NAME runs (registers, instructions, where\n"
     "                   each value is freed); :code grad NAME the two-stage program of\n"
     "                   its gradient (stage 0 forward, stage 1 backward)\n"},
    {":memplan",
     "  :memplan NAME    NAME's memory plan, made from its first run: each intermediate's\n"
     "                   lifetime and offset in one arena, and the arena over time\n"},
    {":dot",
     "  :dot NAME [PATH] NAME's graph as a picture: NAME.fwd.dot, and .svg and .png where\n"
     "                   Graphviz's dot is installed (PATH.dot ... when given); :dot grad\n"
     "                   NAME its gradient graph (NAME.grad.*), :dot grad NAME(ARGS) the\n"
     "                   one :grad NAME(ARGS) prints: forward top-down, backward bottom-up\n"
     "                   beside it, labelled as the text; for a tensor NAME, its tape\n"
     "                   (see :tape) drawn as micrograd does, each leaf with its data and\n"
     "                   grad (NAME.tape.*)\n"},
    {":tape",
     "  :tape NAME       the eager autograd tape behind tensor NAME (after ops on tensors\n"
     "                   that require grad): its nodes in the order backward() runs them,\n"
     "                   each with the nodes its gradients flow to, and the leaves with\n"
     "                   their values and .grad\n"},
    {":doc",
     "  :doc NAME        a function's source (where it was defined), a transform's\n"
     "                   description, or a builtin's signatures; also NAME?\n"},
    {":load", "  :load FILE       run a script in this session\n"},
    {":reload",
     "  :reload MODULE   run an imported TSL module (import MODULE) again from its file;\n"
     "                   names taken by `from MODULE import ...` follow (importing it\n"
     "                   again also reloads it when the file changed)\n"},
    {":reset", "  :reset           forget every variable, function and import\n"},
    {":quit", "  :quit            leave (also Ctrl-D)\n"},
};

void show_help(const std::string& what, std::ostream& out, std::ostream& err) {
  if (what.empty()) {
    out << "TSL REPL. Type code to run it; a block (def, if, for, ...) ends at a blank line.\n"
           "Meta-commands:\n";
    for (const CommandHelp& c : kCommands) out << c.text;
    return;
  }
  std::string name = what[0] == ':' ? what : ":" + what;
  if (name == ":ir") name = ":graph";
  if (name == ":q" || name == ":exit") name = ":quit";
  for (const CommandHelp& c : kCommands) {
    if (name == c.name) {
      out << c.text;
      return;
    }
  }
  err << "no command " << name << " (:help lists them)\n";
}

// Runs `fn` (one input, one meta-command) and reports any error it throws, internal
// ones included: the session always survives. False when there was one.
template <typename Fn>
bool reporting_errors(std::ostream& err, Fn fn) {
  bool ok = false;
  try {
    fn();
    ok = true;
  } catch (const SourceError& e) {
    err << e.render() << std::flush;
  } catch (const InternalError& e) {
    err << e.what() << "\n" << std::flush;
  } catch (const Error& e) {
    err << "error: " << e.what() << "\n" << std::flush;
  } catch (const std::bad_alloc&) {
    err << "error: out of memory\n" << std::flush;
  } catch (const std::exception& e) {
    err << "internal error: " << e.what() << "\nThis is a bug in TSL; please report it.\n"
        << std::flush;
  }
  g_interrupt_requested = false;
  return ok;
}

// Runs one complete input and reports any error; false when there was one.
bool run_input(CompilationUnit& unit, const std::string& text, const std::string& name,
               std::ostream& err) {
  return reporting_errors(
      err, [&] { unit.run_source(std::make_shared<Source>(name, text), /*repl_mode=*/true); });
}

// With Graphviz installed, renders DOT text to NAME.svg in the working directory.
// A file name made of `name` (a function or variable name, `nn.linear`): letters,
// digits and underscores.
std::string file_stem(const std::string& name) {
  std::string base;
  for (char c : name) base += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return base;
}

// Writes `dot_text` to BASE.dot and, where Graphviz's dot is installed, draws BASE.svg
// and BASE.png; says which files it wrote (what: "the gradient graph of f"), never the
// DOT itself, which the file holds.
void write_picture(const std::string& dot_text, const std::string& base, const std::string& what,
                   std::ostream& out, std::ostream& err) {
  try {
    write_file_or_throw(base + ".dot", dot_text, ":dot");
  } catch (const Error& e) {
    err << "error: " << e.what() << "\n";
    return;
  }
  out << what << ": " << base << ".dot";
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    out << " (Graphviz's dot draws it: apt-get install graphviz)\n";
    return;
  }
  for (const char* format : {"svg", "png"}) {
    std::string cmd = std::string("dot -T") + format + " '" + base + ".dot' -o '" + base + "." +
                      format + "' 2>/dev/null";
    if (std::system(cmd.c_str()) == 0) out << ", " << base << "." << format;
  }
  out << "\n";
}

// One line per variable, names aligned: its type, then what a reader wants to know of
// its value (a tensor's shape, dtype, device and whether it requires grad; a number's
// or a string's value; a container's length).
std::string describe_value(const IValue& v, const TypePtr& type) {
  if (v.is_tensor() && v.tensor_impl()) {
    const Tensor t = v.to_tensor();
    std::string d = "Tensor" + shape_str(t.sizes()) + " " + std::string(dtype_name(t.dtype()));
    if (!t.device().is_cpu()) d += " on " + t.device().str();
    if (t.requires_grad()) d += ", requires grad";
    return d;
  }
  std::string type_text = type ? strip_refinements(type)->str() : "?";
  if (v.is_int() || v.is_double() || v.is_bool() || v.is_str() || v.is_none()) {
    std::string r = v.repr();
    if (r.size() > 60) r = r.substr(0, 57) + "...";
    return type_text + " = " + r;
  }
  if (v.is_list())
    return type_text + " (" + std::to_string(v.to_list().elements.size()) + " items)";
  return type_text;
}

void show_vars(CompilationUnit& unit, std::ostream& out) {
  // Names of imported modules are qualified ("nn.linear"; Note [Modules]): not shown.
  auto shown = [](const std::string& name) {
    return name != "argv" && name.find('.') == std::string::npos;
  };
  size_t width = 0;
  for (const auto& [name, g] : unit.globals())
    if (shown(name)) width = std::max(width, name.size());
  for (const auto& [name, g] : unit.globals()) {
    if (!shown(name)) continue;
    out << name << std::string(width - name.size(), ' ') << " : " << describe_value(g.value, g.type)
        << "\n";
  }
  for (const auto& [name, decl] : unit.functions()) {
    if (name.find('.') != std::string::npos) continue;
    out << name << "(";
    for (size_t i = 0; i < decl->param_names.size(); ++i) {
      out << (i ? ", " : "") << decl->param_names[i] << ": " << decl->param_types[i]->str();
    }
    out << ")" << (decl->declared_return ? " -> " + decl->declared_return->str() : "") << "\n";
  }
}

// A tensor in a line: its values when there are a few, else its shape and a summary.
std::string tensor_summary(const Tensor& t0) {
  if (!t0.defined()) return "None";
  Tensor t = t0.device().is_cpu() ? t0 : copy_to_device(t0, kCPU);
  std::string head = "Tensor" + shape_str(t.sizes()) + " " + std::string(dtype_name(t.dtype()));
  if (t.numel() <= 6) {
    // PyTorch's repr on one line: each continuation line's indentation becomes a space.
    std::string r = IValue(t).repr(), flat;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r[i] != '\n') {
        flat += r[i];
        continue;
      }
      flat += ' ';
      while (i + 1 < r.size() && r[i + 1] == ' ') ++i;
    }
    return flat;
  }
  if (t.dtype() != DType::Float32 && t.dtype() != DType::Float64) return head;
  Tensor c = t.contiguous();
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < c.numel(); ++i) {
    double v = c.dtype() == DType::Float32 ? c.data_ptr<float>()[i] : c.data_ptr<double>()[i];
    sum += v;
    sq += v * v;
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, " mean %.4g norm %.4g", sum / static_cast<double>(c.numel()),
                std::sqrt(sq));
  return head + buf;
}

// Note [The tape view]
// `:tape loss` prints the eager autograd graph behind a tensor (Note [The eager tape])
// as PyTorch's grad_fn / next_functions expose it: every node reachable from
// loss.grad_fn, in the order backward() runs them (latest sequence_nr first, the
// leaves' AccumulateGrad last), each with the nodes its gradients flow to; a leaf shows
// the variable it belongs to, its value and its .grad, as micrograd's draw_dot does.
// `:dot loss` draws the same graph (loss.tape.dot, and loss.tape.svg with Graphviz).
struct TapeView {
  std::vector<std::shared_ptr<autograd::Node>> nodes;  // in backward order
  std::map<const autograd::Node*, size_t> index;       // 1-based, as printed
  std::map<const void*, std::string> names;            // the session's tensors

  TapeView(CompilationUnit& unit, const std::shared_ptr<autograd::Node>& root) {
    std::set<const autograd::Node*> seen{root.get()};
    nodes.push_back(root);
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const autograd::Edge& e : nodes[i]->next_edges()) {
        if (e.valid() && seen.insert(e.function.get()).second) nodes.push_back(e.function);
      }
    }
    std::stable_sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) {
      bool la = a->sequence_nr() == autograd::kAccumulateGradSequenceNr;
      bool lb = b->sequence_nr() == autograd::kAccumulateGradSequenceNr;
      if (la != lb) return lb;
      return a->sequence_nr() > b->sequence_nr();
    });
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].get()] = i + 1;
    for (const auto& [var, g] : unit.globals()) {
      if (g.value.is_tensor() && var.find('.') == std::string::npos) {
        names.emplace(g.value.to_tensor().impl(), var);
      }
    }
  }

  // "AddBackward0", or "AccumulateGrad(w)" for a leaf.
  std::string name(const autograd::Node* n) const {
    std::string l = n->name();
    if (auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(n)) {
      auto v = names.find(acc->variable().impl());
      l += "(" + (v == names.end() ? std::string("a leaf") : v->second) + ")";
    }
    return l;
  }
  std::string label(const autograd::Node* n) const {
    return "[" + std::to_string(index.at(n)) + "] " + name(n);
  }
  static std::string grad_of(const Tensor& v) {
    autograd::AutogradMeta* m = autograd::meta_of(v);
    return m && m->grad.defined() ? tensor_summary(m->grad) : std::string("None");
  }
};

// The tensor variable `name` and its grad_fn, or a message on `out`/`err` and null.
std::shared_ptr<autograd::Node> tape_root(CompilationUnit& unit, const std::string& name,
                                          const char* cmd, Tensor& t, std::ostream& out,
                                          std::ostream& err) {
  auto it = unit.globals().find(name);
  if (name.empty() || it == unit.globals().end() || !it->second.value.is_tensor()) {
    err << "error: " << cmd << " takes the name of a tensor variable\n";
    return nullptr;
  }
  t = it->second.value.to_tensor();
  autograd::AutogradMeta* meta = autograd::meta_of(t);
  if (!meta || !meta->grad_fn) {
    out << name << " has no tape: "
        << (t.requires_grad() ? "it is a leaf (requires_grad=True); ops on it record one\n"
                              : "it does not require grad\n");
    return nullptr;
  }
  return meta->grad_fn;
}

void show_tape(CompilationUnit& unit, const std::string& name, std::ostream& out,
               std::ostream& err) {
  Tensor t;
  std::shared_ptr<autograd::Node> root = tape_root(unit, name, ":tape", t, out, err);
  if (!root) return;
  TapeView tape(unit, root);
  out << name << " = " << tensor_summary(t) << ": " << tape.nodes.size()
      << " nodes, in the order backward() runs them\n";
  for (const auto& n : tape.nodes) {
    std::string line = "  " + tape.label(n.get());
    if (auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(n.get())) {
      line += "  data " + tensor_summary(acc->variable()) + "  grad " +
              TapeView::grad_of(acc->variable());
    } else {
      line += " (seq " + std::to_string(n->sequence_nr()) + ") ->";
      // As grad_fn.next_functions lists them: None for an input without a gradient.
      bool first = true;
      std::vector<autograd::Edge> edges = n->shown_edges();
      for (const autograd::Edge& e : edges) {
        line += first ? " " : ", ";
        line += e.valid() ? tape.label(e.function.get()) : std::string("None");
        first = false;
      }
      if (edges.empty()) line += " (nothing)";
    }
    out << line << "\n";
  }
}

// A DOT label: quotes, backslashes and record punctuation escaped.
std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == '|' || c == '<' || c == '>') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

// `:dot loss`: the tape drawn as micrograd draws a graph: the loss and each leaf a
// record (name | data | grad), each backward node a box, arrows the way gradients
// flow (from the loss down to the leaves).
void draw_tape(CompilationUnit& unit, const std::string& name, std::ostream& out,
               std::ostream& err) {
  Tensor t;
  std::shared_ptr<autograd::Node> root = tape_root(unit, name, ":dot", t, out, err);
  if (!root) return;
  TapeView tape(unit, root);
  std::string dot = "digraph tape {\n  node [fontname=\"monospace\", fontsize=10];\n";
  dot += "  loss [shape=record, style=filled, fillcolor=\"#e8f0ff\", label=\"{" + dot_escape(name) +
         " | data " + dot_escape(tensor_summary(t)) + "}\"];\n";
  dot += "  loss -> n" + std::to_string(tape.index.at(root.get())) + ";\n";
  for (const auto& n : tape.nodes) {
    std::string id = "n" + std::to_string(tape.index.at(n.get()));
    if (auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(n.get())) {
      dot += "  " + id + " [shape=record, style=filled, fillcolor=\"#eaffea\", label=\"{" +
             dot_escape(tape.name(n.get())) + " | data " +
             dot_escape(tensor_summary(acc->variable())) + " | grad " +
             dot_escape(TapeView::grad_of(acc->variable())) + "}\"];\n";
      continue;
    }
    dot += "  " + id + " [shape=box, label=\"" + dot_escape(tape.label(n.get())) + "\\nseq " +
           std::to_string(n->sequence_nr()) + "\"];\n";
    for (const autograd::Edge& e : n->next_edges()) {
      if (e.valid())
        dot += "  " + id + " -> n" + std::to_string(tape.index.at(e.function.get())) + ";\n";
    }
  }
  dot += "}\n";
  write_picture(dot, file_stem(name) + ".tape",
                "the tape of " + name + " (" + std::to_string(tape.nodes.size()) + " nodes)", out,
                err);
}

void show_type(CompilationUnit& unit, const std::string& expr, std::ostream& out,
               std::ostream& err) {
  try {
    auto source = std::make_shared<Source>("<stdin>", expr);
    ast::ExprPtr e = parse_expression(source);
    Graph g;
    Emitter emitter(unit, g, Emitter::Mode::TopLevel);
    Value* v = emitter.emit_expr(*e);
    out << strip_refinements(v->type())->str() << "\n";
  } catch (const SourceError& e) {
    err << e.render();
  }
}

FunctionDecl* find_function_or_report(CompilationUnit& unit, const std::string& name,
                                      std::ostream& err) {
  FunctionDecl* decl = unit.resolve_function(name);
  if (!decl) err << "error: no function named '" << name << "'\n";
  return decl;
}

// :doc NAME (or NAME?): a function's source where it was defined, a transform's
// description, or a builtin's signatures, as IPython's `f?` shows them.
void show_doc(CompilationUnit& unit, const std::string& name, std::ostream& out,
              std::ostream& err) {
  if (name.empty()) {
    err << ":doc needs a name (:doc f, or f?)\n";
    return;
  }
  if (FunctionDecl* decl = unit.resolve_function(name)) {
    if (decl->transform) {
      std::string argnums;
      for (size_t i : decl->transform->argnums)
        argnums += (argnums.empty() ? "" : ", ") + std::to_string(i);
      out << name << " = " << decl->name << ": a transform ("
          << autodiff::transform_name(decl->transform->kind) << ") of "
          << decl->transform->inner->name
          << (argnums.empty() ? "" : " for argnums (" + argnums + ")") << "\n";
      decl = decl->transform->inner.get();
      while (decl->transform) decl = decl->transform->inner.get();
    }
    if (!decl->def || !decl->def->range.valid()) {
      out << decl->name << ": a function with no source here\n";
      return;
    }
    const SourceRange& r = decl->def->range;
    out << "# " << decl->name << ", defined at " << r.location() << "\n";
    // The def line, then every line indented deeper than it (blank ones inside).
    auto indent_of = [](std::string_view t) { return t.find_first_not_of(" \t"); };
    size_t def_indent = indent_of(r.source->line_text(r.line));
    uint32_t last = r.line;
    for (uint32_t line = r.line + 1; line <= r.source->num_lines(); ++line) {
      std::string_view t = r.source->line_text(line);
      size_t indent = indent_of(t);
      if (indent == std::string_view::npos || t[indent] == '#') continue;
      if (indent <= def_indent) break;
      last = line;
    }
    for (uint32_t line = r.line; line <= last; ++line) out << r.source->line_text(line) << "\n";
    return;
  }
  // A builtin: torch.NAME, F.NAME (torch.nn.functional.NAME), math.NAME or NAME.
  struct Space {
    const char* prefix;
    uint64_t flag;
  };
  static constexpr Space kSpaces[] = {{"torch.nn.functional.", opflags::NNF},
                                      {"F.", opflags::NNF},
                                      {"torch.", opflags::TORCH},
                                      {"math.", opflags::MATH},
                                      {"", opflags::GLOBAL}};
  for (const Space& space : kSpaces) {
    if (name.rfind(space.prefix, 0) != 0) continue;
    std::string base = name.substr(std::string_view(space.prefix).size());
    std::vector<std::string> schemas;
    for (int i = 0; i < kNumOps; ++i) {
      OpId op = static_cast<OpId>(i);
      if (!op_info(op).has(space.flag) || schema_of(op).base_name != base) continue;
      schemas.push_back(schema_of(op).str());
    }
    if (schemas.empty()) break;
    out << "# " << name << ": a builtin (" << schemas.size()
        << (schemas.size() == 1 ? " signature" : " signatures") << ")\n";
    for (const std::string& sig : schemas) out << sig << "\n";
    return;
  }
  err << "error: no function or builtin named '" << name << "'\n";
}

// :graph f, :grad f, :dot f, :dot grad f, :opt f, :opt grad f, :passes f, :passes grad f.
// `path`: for :dot, where the picture goes (BASE.dot, .svg, .png); by default NAME.fwd
// or NAME.grad in the current folder.
void show_graph(CompilationUnit& unit, const std::string& what, const std::string& name,
                std::ostream& out, std::ostream& err, const std::string& path = "") {
  FunctionDecl* decl = find_function_or_report(unit, name, err);
  if (!decl) return;
  try {
    if (what == "graph" || what == "opt" || what == "passes") {
      GraphView view = what == "graph" ? GraphView::AsWritten
                       : what == "opt" ? GraphView::Optimized
                                       : GraphView::Passes;
      out << unit.graph_text(*decl, {}, view);
      return;
    }
    if (what == "opt grad" || what == "passes grad") {
      GraphView view = what == "opt grad" ? GraphView::Optimized : GraphView::Passes;
      out << unit.gradient_text(*decl, {}, {}, false, view);
      return;
    }
    if (what == "dot") {
      std::string text = graph_to_dot(unit.compile_function(*decl, {}).function->graph());
      write_picture(text, path.empty() ? file_stem(name) + ".fwd" : path, "the graph of " + name,
                    out, err);
      return;
    }
    if (what == "dot grad") {
      std::string text = unit.gradient_text(*decl, {}, {}, true);
      write_picture(text, path.empty() ? file_stem(name) + ".grad" : path,
                    "the gradient graph of " + name, out, err);
      return;
    }
    out << unit.gradient_text(*decl, {}, {}, false);
  } catch (const SourceError& e) {
    err << e.render();
  }
}

// :grad f(x, w) [--values]: the gradient graph specialized to the arguments (Note [The
// specialized gradient view]).
void show_specialized_gradient(CompilationUnit& unit, std::string rest, std::ostream& out,
                               std::ostream& err) {
  GradientViewOptions options;
  if (size_t at = rest.find("--values"); at != std::string::npos) {
    options.values = true;
    rest = trim(rest.erase(at, 8));
  }
  reporting_errors(err, [&] { out << specialized_gradient_of_call(unit, rest, options); });
}

// :dot grad f(x, w) [PATH]: the specialized view as a picture (Note [The gradient
// picture] in frontend/gradient_view.cpp), NAME.grad.{dot,svg,png} or PATH.*.
void draw_specialized_gradient(CompilationUnit& unit, const std::string& rest, std::ostream& out,
                               std::ostream& err) {
  size_t close = rest.rfind(')');
  std::string call = rest.substr(0, close == std::string::npos ? rest.size() : close + 1);
  std::string path = close == std::string::npos ? "" : trim(rest.substr(close + 1));
  GradientViewOptions options;
  options.picture = true;
  reporting_errors(err, [&] {
    std::string dot = specialized_gradient_of_call(unit, call, options);
    std::string name = trim(call.substr(0, call.find('(')));
    write_picture(dot, path.empty() ? file_stem(name) + ".grad" : path,
                  "the gradient graph of " + trim(call), out, err);
  });
}

// Runs `source` in the session, reporting an error on `err` instead of throwing
// (:load, :time, :profile).
void run_reporting(CompilationUnit& unit, SourcePtr source, bool repl_mode, std::ostream& err) {
  try {
    unit.run_source(std::move(source), repl_mode);
  } catch (const SourceError& e) {
    err << e.render();
  } catch (const Error& e) {
    err << "error: " << e.what() << "\n";
  }
}

// :time STMT, as IPython's %timeit: the first run (compile and run), then repeated
// runs until about 0.2 s have passed (at least 3, at most 1000, stopping at an error
// or Ctrl-C), reported as min, median and max.
void time_statement(CompilationUnit& unit, const std::string& stmt, std::ostream& out,
                    std::ostream& err) {
  using Clock = std::chrono::steady_clock;
  auto source = std::make_shared<Source>("<repl>", stmt + "\n");
  auto run_once = [&](double& ms) {
    auto t0 = Clock::now();
    try {
      unit.run_source(source, false);
    } catch (const SourceError& e) {
      err << e.render();
      return false;
    } catch (const Error& e) {
      err << "error: " << e.what() << "\n";
      return false;
    }
    ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return true;
  };
  double first = 0;
  if (!run_once(first)) return;
  std::vector<double> times;
  double total = 0;
  while (times.size() < 1000 && (times.size() < 3 || total < 200.0) &&
         !g_interrupt_requested.load()) {
    double ms = 0;
    if (!run_once(ms)) return;
    times.push_back(ms);
    total += ms;
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "first run %.3f ms (compile and run)", first);
  out << buf;
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    std::snprintf(buf, sizeof buf, "; %zu runs: min %.3f ms, median %.3f ms, max %.3f ms",
                  times.size(), times.front(), times[times.size() / 2], times.back());
    out << buf;
  }
  out << "\n";
}

// :code f (the Code a call runs) and :code grad f (its gradient's two-stage Code).
void show_code(CompilationUnit& unit, const std::string& rest, std::ostream& out,
               std::ostream& err) {
  bool grad = rest.rfind("grad ", 0) == 0;
  FunctionDecl* decl = find_function_or_report(unit, grad ? trim(rest.substr(5)) : rest, err);
  if (!decl) return;
  try {
    out << code_text(unit, *decl, {}, grad ? CodeView::Gradient : CodeView::Function);
  } catch (const SourceError& e) {
    err << e.render();
  }
}

// Handles a line starting with ':'; returns false for :quit.
bool meta_command(CompilationUnit& unit, const std::string& line, std::ostream& out,
                  std::ostream& err) {
  std::istringstream words(line);
  std::string cmd;
  words >> cmd;
  std::string rest;
  std::getline(words, rest);
  rest = trim(rest);
  if (cmd == ":quit" || cmd == ":q" || cmd == ":exit") return false;
  if (cmd == ":help" || cmd == ":h") {
    show_help(rest, out, err);
  } else if (cmd == ":doc") {
    show_doc(unit, rest, out, err);
  } else if (cmd == ":tape") {
    show_tape(unit, rest, out, err);
  } else if (cmd == ":vars") {
    show_vars(unit, out);
  } else if (cmd == ":type") {
    show_type(unit, rest, out, err);
  } else if (cmd == ":graph" || cmd == ":ir") {
    show_graph(unit, "graph", rest, out, err);
  } else if (cmd == ":grad" && rest.rfind("--full", 0) == 0) {
    // The general view (for every shape) of a function, whatever arguments follow.
    rest = trim(rest.substr(6));
    show_graph(unit, "grad", trim(rest.substr(0, rest.find('('))), out, err);
  } else if (cmd == ":grad" && rest.find('(') != std::string::npos) {
    show_specialized_gradient(unit, rest, out, err);
  } else if (cmd == ":grad") {
    show_graph(unit, "grad", rest, out, err);
  } else if (cmd == ":dot" && unit.globals().count(rest) &&
             unit.globals().at(rest).value.is_tensor()) {
    draw_tape(unit, rest, out, err);
  } else if (cmd == ":dot" && rest.rfind("grad ", 0) == 0 && rest.find('(') != std::string::npos) {
    draw_specialized_gradient(unit, trim(rest.substr(5)), out, err);
  } else if (cmd == ":dot" || cmd == ":opt" || cmd == ":passes") {
    std::string what = cmd.substr(1);
    bool grad = rest.rfind("grad ", 0) == 0;
    if (grad) {
      what += " grad";
      rest = trim(rest.substr(5));
    }
    // :dot [grad] NAME [PATH]
    std::string path;
    if (size_t space = rest.find(' '); cmd == ":dot" && space != std::string::npos) {
      path = trim(rest.substr(space + 1));
      rest = rest.substr(0, space);
    }
    show_graph(unit, what, rest, out, err, path);
  } else if (cmd == ":reset") {
    unit.reset();
    out << "session reset\n";
  } else if (cmd == ":load") {
    std::string text;
    try {
      text = read_file_or_throw(rest, ":load");
    } catch (const Error& e) {
      err << "error: " << e.what() << "\n";
      return true;
    }
    run_reporting(unit, std::make_shared<Source>(rest, text), false, err);
  } else if (cmd == ":reload") {
    reporting_errors(err, [&] {
      SourceRange use;
      unit.reload_module(rest, use);
      out << "reloaded " << unit.modules().at(rest).path << "\n";
    });
  } else if (cmd == ":code") {
    show_code(unit, rest, out, err);
  } else if (cmd == ":profile") {
    if (rest.empty()) {
      err << ":profile needs a statement (:profile y = f(x))\n";
      return true;
    }
    Profiler profiler;
    profiler.start();
    run_reporting(unit, std::make_shared<Source>("<repl>", rest + "\n"), true, err);
    profiler.stop();
    out << profiler.report();
  } else if (cmd == ":time") {
    if (rest.empty()) {
      err << ":time needs a statement (:time y = f(x))\n";
      return true;
    }
    time_statement(unit, rest, out, err);
  } else if (cmd == ":memplan") {
    FunctionDecl* decl = find_function_or_report(unit, rest, err);
    if (!decl) return true;
    try {
      out << memplan_text(unit, *decl, {});
    } catch (const SourceError& e) {
      err << e.render();
    }
  } else {
    err << "unknown command " << cmd << " (try :help)\n";
  }
  return true;
}

// Note [Ctrl-C at the prompt]
// The SIGINT handler only sets g_interrupt_requested; a read blocked in the REPL's
// thread returns EINTR and the REPL drops the pending input. A Ctrl-C that lands after
// the prompt is printed but before the read starts would be lost (the read then waits
// for a line while the flag waits for a loop to stop). So an interactive REPL waits
// for its input with ppoll, which unblocks SIGINT only while it waits: the signal
// stays pending until then (wait_for_input in line_editor.h). A terminal in canonical
// mode hands over one line per read, so a line is complete when stdin is readable.
//
}  // namespace

namespace {

// Colors each line written to the terminal's stderr as a diagnostic (Note [Colors] in
// ir/source.h): every error path of the REPL writes through it.
class ColoringBuf : public std::streambuf {
 public:
  explicit ColoringBuf(std::streambuf* to) : to_(to) {}
  ~ColoringBuf() override { sync(); }

 protected:
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    line_ += static_cast<char>(c);
    if (c == '\n') emit();
    return c;
  }
  int sync() override {
    emit();
    return to_->pubsync();
  }

 private:
  void emit() {
    if (line_.empty()) return;
    std::string text = colored_diagnostics(line_);
    to_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
    line_.clear();
  }
  std::streambuf* to_;
  std::string line_;
};

}  // namespace

int run_repl(CompilationUnit& unit, std::istream& in, std::ostream& out, std::ostream& raw_err,
             ReplOptions options) {
  ColoringBuf coloring(raw_err.rdbuf());
  std::ostream colored_err(&coloring);
  bool colors = &raw_err == &std::cerr && colors_on(STDERR_FILENO);
  std::ostream& err = colors ? colored_err : raw_err;
  const bool color_prompt = &out == &std::cout && colors_on(STDOUT_FILENO);
  unit.set_echo(&out);
  // Program output (print) and echoed values go to one stream, in order.
  struct RestoreOutput {
    std::ostream* saved;
    ~RestoreOutput() { set_program_output(saved); }
  } restore{set_program_output(&out)};
  if (options.prompts) {
    out << "TSL " << TSL_VERSION << " (Tensor Script Language). :help for help, Ctrl-D to quit.\n";
  }
  std::string buffer;
  const bool terminal = &in == &std::cin && isatty(STDIN_FILENO);
  // Note [Line editing] in line_editor.cpp; null where lines are read plainly.
  std::unique_ptr<LineEditor> editor =
      terminal && options.prompts ? LineEditor::open(unit) : nullptr;
  std::string last_line;
  // Each input is a cell, named as IPython names them (In[3]:2:5 in errors and
  // tracebacks); meta-commands are not counted.
  int cells = 0;
  auto next_cell = [&cells] { return "In[" + std::to_string(++cells) + "]"; };
  // The lines of a paste still to run, and its last line if it had no line break
  // (Note [Pasting a block] in line_editor.cpp).
  std::deque<std::string> pasted;
  std::string pasted_tail;
  // After an error, the rest of a paste is dropped.
  auto run_cell = [&](const std::string& text) {
    if (!run_input(unit, text, next_cell(), err) && !pasted.empty()) {
      err << "(the " << pasted.size() << " pasted line(s) after it were not run)\n";
      pasted.clear();
      pasted_tail.clear();
    }
  };
  for (;;) {
    std::string line;
    if (!pasted.empty()) {
      // A pasted line, shown after its prompt as if typed.
      line = std::move(pasted.front());
      pasted.pop_front();
      const char* prompt = buffer.empty() ? ">>> " : "... ";
      out << (color_prompt ? "\033[1;32m" + std::string(prompt) + "\033[0m" : prompt) << line
          << "\n"
          << std::flush;
      editor->remember(line);
      if (trim(line).empty()) line.clear();
      last_line = line;
    } else if (editor) {
      std::string typed = !pasted_tail.empty() ? std::exchange(pasted_tail, std::string())
                          : buffer.empty()     ? std::string()
                                               : next_indent(last_line);
      LineEditor::Status status = editor->read(buffer.empty() ? ">>> " : "... ", typed, line);
      if (status == LineEditor::Status::Interrupted) {
        out << "\nKeyboardInterrupt\n";
        buffer.clear();
        continue;
      }
      if (status == LineEditor::Status::EndOfInput) {
        if (!trim(buffer).empty()) run_cell(buffer);
        out << "\n";
        return 0;
      }
      editor->remember(line);
      // A line of only the indentation it started with ends a block, as an empty one.
      if (trim(line).empty()) line.clear();
      last_line = line;
      std::string rest = editor->take_paste();
      for (size_t at = 0; at < rest.size();) {
        size_t nl = rest.find('\n', at);
        if (nl == std::string::npos) {
          pasted_tail = rest.substr(at);
          break;
        }
        pasted.push_back(rest.substr(at, nl - at));
        at = nl + 1;
      }
    } else {
      if (options.prompts) {
        const char* prompt = buffer.empty() ? ">>> " : "... ";
        if (color_prompt) {
          out << "\033[1;32m" << prompt << "\033[0m" << std::flush;
        } else {
          out << prompt << std::flush;
        }
      }
      if (terminal && !wait_for_input()) {  // Note [Ctrl-C at the prompt]
        out << "\nKeyboardInterrupt\n";
        buffer.clear();
        continue;
      }
    }
    if (!editor && !std::getline(in, line)) {
      // An interrupted read (Ctrl-C at a prompt) looks like the end of the input to
      // the stream: the flag tells them apart. Drop the pending input, as Python does.
      if (g_interrupt_requested.exchange(false)) {
        in.clear();
        std::clearerr(stdin);
        out << "\nKeyboardInterrupt\n";
        buffer.clear();
        continue;
      }
      if (in.bad() || !in.eof()) in.clear();
      if (!trim(buffer).empty()) run_cell(buffer);
      if (options.prompts) out << "\n";
      return 0;
    }
    if (buffer.empty()) {
      std::string t = trim(line);
      if (t.empty()) continue;
      // `f?` as IPython's: the same as :doc f.
      if (t.size() > 1 && t.back() == '?' && t.find_first_of(" ()[]=") == std::string::npos)
        t = ":doc " + t.substr(0, t.size() - 1);
      if (t[0] == ':') {
        bool go_on = true;
        reporting_errors(err, [&] { go_on = meta_command(unit, t, out, err); });
        if (!go_on) return 0;
        continue;
      }
    }
    buffer += line;
    buffer += '\n';
    // In a paste, a blank line before an indented one is inside the block.
    if (line.empty()) {
      auto next = std::find_if(pasted.begin(), pasted.end(),
                               [](const std::string& l) { return !trim(l).empty(); });
      const std::string& after = next != pasted.end() ? *next : pasted_tail;
      if (!after.empty() && (after[0] == ' ' || after[0] == '\t')) continue;
    }
    if (classify_input(buffer) == InputStatus::Incomplete) continue;
    run_cell(buffer);
    buffer.clear();
  }
}

}  // namespace tsl
