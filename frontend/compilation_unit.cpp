// Running top-level statements and compiling functions on first use; see Note
// [Top-level code] in compilation_unit.h.
#include "frontend/compilation_unit.h"

#include <functional>
#include <iostream>
#include <set>

#include "frontend/emitter.h"
#include "frontend/gradient_view.h"
#include "frontend/parser.h"
#include "ir/autodiff/differentiate.h"
#include "ir/autodiff/forward_mode.h"
#include "ir/passes/constant_folding.h"
#include "ir/passes/dead_code_elimination.h"
#include "ir/passes/pipeline.h"
#include "ir/passes/pipeline_trace.h"
#include "runtime/kernels/output.h"
#include "runtime/tensor/grad_mode.h"
#include "runtime/tensor/interrupt.h"

namespace tsl {
namespace {

bool is_script_decorator(const ast::Expr& e) {
  // torch.jit.script, jit.script, script (from torch.jit import script)
  if (e.kind == ast::ExprKind::Attribute) return ast::as<ast::Attribute>(e).attr == "script";
  if (e.kind == ast::ExprKind::Name) return ast::as<ast::Name>(e).id == "script";
  return false;
}

// Whether a top-level output holds the placeholder of a variable that was never
// assigned at run time (a loop that ran zero times, a branch not taken).
bool is_unassigned_placeholder(const IValue& v, const TypePtr& t) {
  return v.is_none() && t->kind() != TypeKind::None && t->kind() != TypeKind::Optional;
}

}  // namespace

CompilationUnit::CompilationUnit() : echo_(&std::cout) {}

void CompilationUnit::reset() {
  globals_.clear();
  functions_.clear();
  imports_.clear();
  transforms_.clear();
  modules_.clear();
  from_imports_.clear();
  scope_.clear();
  ++generation_;
}

const GlobalVar* CompilationUnit::find_global(const std::string& name) const {
  auto it = globals_.find(name);
  return it == globals_.end() ? nullptr : &it->second;
}

FunctionDecl* CompilationUnit::find_function(const std::string& name) {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second.get();
}

const ImportedName* CompilationUnit::find_import(const std::string& name) const {
  auto it = imports_.find(name);
  return it == imports_.end() ? nullptr : &it->second;
}

void CompilationUnit::set_global(const std::string& name, IValue value, TypePtr type) {
  functions_.erase(name);  // a variable replaces a function of the same name
  imports_.erase(name);
  globals_[name] = {std::move(value), std::move(type)};
}

void CompilationUnit::run_source(SourcePtr source, bool repl_mode) {
  auto module = std::make_shared<ast::Module>(parse_module(source));
  for (const auto& stmt : module->body) run_statement(module, *stmt, repl_mode);
}

namespace {

// A statement that fails inside `with no_grad():` must not leave recording off for
// the rest of the session.
std::vector<IValue> run_with_grad_mode_restored(Function& fn, std::vector<IValue> args) {
  bool mode = grad_mode_enabled();
  try {
    return fn.run(std::move(args));
  } catch (...) {
    set_grad_mode_enabled(mode);
    throw;
  }
}

}  // namespace

void CompilationUnit::run_statement(const std::shared_ptr<ast::Module>& module,
                                    const ast::Stmt& stmt, bool repl_mode) {
  StatementTimer timer;  // tsl --timeout (Note [Interrupts] in runtime/tensor/interrupt.h)
  switch (stmt.kind) {
    case ast::StmtKind::FunctionDef:
      define_function(module, ast::as<ast::FunctionDef>(stmt));
      return;
    case ast::StmtKind::Import:
    case ast::StmtKind::ImportFrom:
      run_import(stmt);
      return;
    default:
      break;
  }
  std::vector<std::string> inputs, outputs;
  std::vector<std::pair<std::string, TypePtr>> published;
  std::shared_ptr<Graph> graph;
  try {
    graph = compile_statement(module, stmt, repl_mode, &inputs, &outputs, &published);
  } catch (const InterruptError& e) {
    runtime_error(stmt.range, e.what());  // Ctrl-C or --timeout while it compiled
  }
  if (graph->block()->empty() && outputs.empty()) return;  // pass, annotations
  std::vector<IValue> args;
  args.reserve(inputs.size());
  for (const std::string& name : inputs) args.push_back(globals_.at(name).value);
  IntrusivePtr<Function> fn(new Function("<module>", graph));
  fn->set_eager(true);
  // Note [Top-level assignments survive errors] in runtime/kernels/output.h.
  PublishedGlobals sink(published.size());
  struct RestoreSink {
    PublishedGlobals* saved;
    ~RestoreSink() { set_published_globals(saved); }
  } restore{set_published_globals(published.empty() ? nullptr : &sink)};
  std::vector<IValue> results;
  try {
    results = run_with_grad_mode_restored(*fn, std::move(args));
  } catch (...) {
    set_published_globals(restore.saved);
    for (size_t slot = 0; slot < published.size(); ++slot) {
      if (!sink.stored[slot]) continue;
      const auto& [name, type] = published[slot];
      forget_from_import(scope_ + name);
      set_global(scope_ + name, std::move(sink.values[slot]), type);
    }
    try {
      throw;
    } catch (const InterruptError& e) {
      // Raised before any instruction ran (while the statement's code was optimized):
      // the statement is its location.
      runtime_error(stmt.range, e.what());
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = outputs[i];
    TypePtr type = graph->outputs()[i]->type();
    if (name == "$echo") {
      if (!results[i].is_none()) (*echo_) << results[i].repr() << std::endl;
      continue;
    }
    if (is_unassigned_placeholder(results[i], type)) continue;
    forget_from_import(scope_ + name);
    set_global(scope_ + name, std::move(results[i]), type);
  }
}

std::shared_ptr<Graph> CompilationUnit::compile_statement(
    const std::shared_ptr<ast::Module>& module, const ast::Stmt& stmt, bool repl_mode,
    std::vector<std::string>* inputs, std::vector<std::string>* outputs,
    std::vector<std::pair<std::string, TypePtr>>* published) {
  (void)module;
  auto graph = std::make_shared<Graph>();
  Emitter emitter(*this, *graph, Emitter::Mode::TopLevel);
  emitter.emit_toplevel(stmt, repl_mode);
  verify(*graph);
  if (inputs) *inputs = emitter.global_inputs();
  if (outputs) *outputs = emitter.outputs();
  if (published) *published = emitter.published();
  return graph;
}

void CompilationUnit::define_function(const std::shared_ptr<ast::Module>& module,
                                      const ast::FunctionDef& def) {
  for (const auto& d : def.decorators) {
    if (!is_script_decorator(*d)) {
      compile_error(d->range, "decorators other than @torch.jit.script are not supported");
    }
  }
  std::shared_ptr<FunctionDecl> decl = declare(module, def);
  forget_from_import(decl->name);
  bool redefined = functions_.count(decl->name) > 0;
  globals_.erase(decl->name);
  imports_.erase(decl->name);
  functions_[decl->name] = std::move(decl);
  if (defining_new_names_) return;
  ++generation_;
  // Nothing compiled since the last drop and no function replaced: nothing is stale
  // (a script of 4,000 defs walked every function at each def: quadratic).
  if (redefined || compiled_since_drop_) drop_stale_versions();
}

// Every compiled version is of an older generation now and is never used again (a
// function is compiled anew for the current one): drop them, or a REPL session that
// redefines a function keeps every version of every function and transform compiled
// since (a redefined f with grad(f) called after each definition: ~44 KB each).
void CompilationUnit::drop_stale_versions() {
  compiled_since_drop_ = false;
  for (const auto& [name, d] : functions_) d->compiled.clear();
  for (const auto& d : transforms_) d->compiled.clear();
  for (const auto& [name, d] : builtin_values_) d->compiled.clear();
  prune_transforms();
}

namespace {

// The function declarations a type refers to (function values, also inside tuples,
// lists, optionals and dicts).
void collect_function_targets(const TypePtr& t, std::set<const void*>& out) {
  if (!t) return;
  if (t->kind() == TypeKind::Function && t->signature()) out.insert(t->signature()->target);
  for (const TypePtr& c : t->contained()) collect_function_targets(c, out);
}

}  // namespace

// A transform made of a function that has since been redefined (grad(f) before the
// latest `def f`) is never made again: make_transform finds transforms by their inner
// declaration, and `f` names the new one. It is kept only while a variable holds it
// (g = grad(f) keeps calling the f it was made of, as in Python), with the transforms
// it is made of; the rest go, with the old declarations only they held.
void CompilationUnit::prune_transforms() {
  std::set<const void*> held;
  for (const auto& [name, g] : globals_) collect_function_targets(g.type, held);
  std::set<const FunctionDecl*> current;
  for (const auto& [name, d] : functions_) current.insert(d.get());
  for (const auto& [name, d] : builtin_values_) current.insert(d.get());
  std::set<const FunctionDecl*> keep;
  std::function<void(const FunctionDecl*)> mark = [&](const FunctionDecl* d) {
    if (!d || !keep.insert(d).second || !d->transform) return;
    mark(d->transform->inner.get());
    mark(d->transform->companion.get());
  };
  for (const auto& d : transforms_) {
    const FunctionDecl* root = d.get();
    while (root->transform) root = root->transform->inner.get();
    if (current.count(root) || held.count(d.get())) mark(d.get());
  }
  std::erase_if(transforms_,
                [&](const std::shared_ptr<FunctionDecl>& d) { return !keep.count(d.get()); });
}

// Note [Builtins as values]
// PyTorch's builtins are Python functions: `loss_fn = F.cross_entropy`, `grad(torch.sin)`
// and `vjp(torch.matmul, a, b)` pass them around. TSL resolves calls statically, so a
// builtin used as a value becomes an ordinary function, declared once per builtin from
// the text `def NAME(PARAMS): return QUALIFIED(ARGS)`, whose parameters are the
// builtin's required positional ones (types from its first overload; optional ones
// take their defaults). Its body names the builtin through hidden module aliases, so
// it resolves whatever the user imported. Transforms and calls then treat it as any
// def (it is inlined into the graphs that call it).
std::shared_ptr<FunctionDecl> CompilationUnit::builtin_function(const std::string& name,
                                                                const std::string& qualified,
                                                                const std::string& text_params,
                                                                const std::string& call_args) {
  auto it = builtin_values_.find(qualified);
  if (it != builtin_values_.end()) return it->second;
  imports_["__tsl_torch"] = {ImportedName::Module, "torch"};
  imports_["__tsl_F"] = {ImportedName::Module, "torch.nn.functional"};
  imports_["__tsl_math"] = {ImportedName::Module, "math"};
  std::string text =
      "def " + name + "(" + text_params + "):\n    return " + qualified + "(" + call_args + ")\n";
  auto source = std::make_shared<Source>("<builtin " + name + ">", text);
  auto module = std::make_shared<ast::Module>(parse_module(source));
  TSL_INTERNAL_ASSERT(
      module->body.size() == 1 && module->body[0]->kind == ast::StmtKind::FunctionDef,
      "builtin wrapper is not one def");
  // The wrapper is the program's, whichever module used the builtin as a value first.
  std::string scope = std::exchange(scope_, "");
  struct Restore {
    std::string& scope;
    std::string saved;
    ~Restore() { scope = std::move(saved); }
  } restore{scope_, std::move(scope)};
  std::shared_ptr<FunctionDecl> decl = declare(module, ast::as<ast::FunctionDef>(*module->body[0]));
  builtin_values_[qualified] = decl;
  return decl;
}

std::shared_ptr<FunctionDecl> CompilationUnit::declare(const std::shared_ptr<ast::Module>& module,
                                                       const ast::FunctionDef& def) {
  auto decl = std::make_shared<FunctionDecl>();
  decl->name = scope_ + def.name;
  decl->scope = scope_;
  decl->module = module;
  decl->def = &def;
  Graph scratch;
  Emitter types(*this, scratch, Emitter::Mode::TopLevel);
  for (const ast::Param& p : def.params) {
    for (const std::string& seen : decl->param_names) {
      if (seen == p.name)
        compile_error(p.range, "duplicate parameter '" + p.name + "' in '" + def.name + "'");
    }
    decl->param_names.push_back(p.name);
    TypePtr t = p.annotation ? types.resolve_type(*p.annotation) : Type::tensor();
    decl->param_types.push_back(t);
    decl->broadcast_lengths.push_back(p.annotation ? broadcasting_list_length(*p.annotation) : 0);
    if (p.default_value) {
      int repeat = decl->broadcast_lengths.back();
      if (repeat > 0 && p.default_value->kind != ast::ExprKind::List &&
          p.default_value->kind != ast::ExprKind::Tuple &&
          p.default_value->kind != ast::ExprKind::None) {
        // `kernel_size: BroadcastingList2[int] = 1` stands for [1, 1].
        TypePtr list_type = t->kind() == TypeKind::Optional ? t->element() : t;
        IValue one = evaluate_default(*this, *p.default_value, list_type->element());
        decl->defaults.push_back(IValue(IntrusivePtr<ListImpl>(
            new ListImpl(std::vector<IValue>(static_cast<size_t>(repeat), one)))));
      } else {
        decl->defaults.push_back(evaluate_default(*this, *p.default_value, t));
      }
    } else {
      if (!decl->defaults.empty() && decl->defaults.back()) {
        compile_error(p.range,
                      "parameter '" + p.name + "' without a default follows one with a default");
      }
      decl->defaults.push_back(std::nullopt);
    }
  }
  if (def.returns) decl->declared_return = types.resolve_type(*def.returns);
  return decl;
}

IValue evaluate_default(CompilationUnit& unit, const ast::Expr& e, const TypePtr& type) {
  auto graph = std::make_shared<Graph>();
  Emitter emitter(unit, *graph, Emitter::Mode::TopLevel);
  Value* v = emitter.emit_expr(e, type);
  TypePtr var;
  if (conversion_for(v->type(), type, var, false, v) == Conversion::Reject) {
    compile_error(e.range, "default value must be " + type->str() + ", not " + v->type()->str());
  }
  graph->add_output(v);
  std::vector<IValue> args;
  for (const std::string& name : emitter.global_inputs())
    args.push_back(unit.find_global(name)->value);
  IntrusivePtr<Function> fn(new Function("<default>", graph));
  IValue result = fn->run(std::move(args)).at(0);
  if (type->kind() == TypeKind::Float && result.is_int())
    result = IValue(static_cast<double>(result.to_int()));
  return result;
}

const FunctionDecl::Compiled& CompilationUnit::compile_function(FunctionDecl& decl,
                                                                const SourceRange& use,
                                                                const ConstantArgs& constants) {
  for (FunctionDecl* f : compiling_) {
    if (f == &decl) {
      compile_error(use, "recursive call of '" + decl.name +
                             "': recursion is not supported in TSL "
                             "(as in TorchScript); use a loop");
    }
  }
  if (decl.transform) return compile_transform(decl, use, constants);
  for (const auto& c : decl.compiled) {
    if (c.generation != generation_) continue;
    bool same = true;
    for (size_t i = 0; i < c.hidden_globals.size() && same; ++i) {
      const GlobalVar* g = find_global(c.hidden_globals[i]);
      same = g && strip_refinements(g->type)->equals(*c.hidden_types[i]);
    }
    if (same) return c;
  }
  auto graph = std::make_shared<Graph>();
  Emitter emitter(*this, *graph, Emitter::Mode::Function);
  compiling_.push_back(&decl);
  struct Pop {
    std::vector<FunctionDecl*>& v;
    ~Pop() { v.pop_back(); }
  } pop{compiling_};
  TypePtr ret = emitter.emit_function(decl);
  verify(*graph);
  FunctionDecl::Compiled c;
  c.function = IntrusivePtr<Function>(new Function(decl.name, graph));
  c.return_type = ret;
  c.hidden_globals = emitter.global_inputs();
  c.hidden_types = emitter.global_input_types();
  c.generation = generation_;
  decl.compiled.push_back(std::move(c));
  compiled_since_drop_ = true;
  return decl.compiled.back();
}

std::shared_ptr<FunctionDecl> CompilationUnit::function_ptr(const FunctionDecl* decl) {
  for (const auto& [name, d] : functions_) {
    if (d.get() == decl) return d;
  }
  for (const auto& d : transforms_) {
    if (d.get() == decl) return d;
  }
  for (const auto& [name, d] : builtin_values_) {
    if (d.get() == decl) return d;
  }
  return nullptr;
}

std::shared_ptr<FunctionDecl> CompilationUnit::make_transform(
    const std::string& kind, const std::shared_ptr<FunctionDecl>& inner,
    std::vector<size_t> argnums, bool argnums_tuple, const SourceRange& range) {
  for (const auto& d : transforms_) {
    const FunctionDecl::Transform& t = *d->transform;
    if (t.kind == kind && t.inner == inner && t.argnums == argnums &&
        t.argnums_tuple == argnums_tuple)
      return d;
  }
  for (size_t a : argnums) {
    if (kind == "jvp") break;  // checked when compiled, with a message about tangents
    if (a >= inner->param_names.size()) {
      compile_error(range, kind + "(): argnums " + std::to_string(a) + " is out of range: '" +
                               inner->name + "' takes " +
                               std::to_string(inner->param_names.size()) + " argument(s)");
    }
    if (!inner->param_types[a]->is_tensor()) {
      compile_error(range, kind + "(): argument '" + inner->param_names[a] + "' of '" +
                               inner->name + "' is " + inner->param_types[a]->str() +
                               ", and only Tensor arguments have gradients");
    }
  }
  auto decl = std::make_shared<FunctionDecl>();
  std::string args;
  if (argnums != std::vector<size_t>{0} || argnums_tuple) {
    args = ", argnums=";
    if (argnums_tuple) args += "(";
    for (size_t i = 0; i < argnums.size(); ++i)
      args += (i ? ", " : "") + std::to_string(argnums[i]);
    if (argnums_tuple) args += argnums.size() == 1 ? ",)" : ")";
  }
  decl->name = kind + "(" + inner->name + args + ")";
  decl->module = inner->module;
  decl->def = inner->def;
  decl->param_names = inner->param_names;
  decl->param_types = inner->param_types;
  decl->defaults = inner->defaults;
  if (kind == "jvp") {
    // jvp(f, primals, tangents): f's parameters, then one tangent per primal given (the
    // parameters after them take their defaults). A tangent's name is not an
    // identifier (x'), so that no parameter of f can take its argument.
    for (size_t i : argnums) {
      decl->param_names.push_back(inner->param_names[i] + "'");
      decl->param_types.push_back(Type::tensor());
      decl->defaults.push_back(std::nullopt);
    }
  }
  decl->transform = FunctionDecl::Transform{kind, inner, argnums, argnums_tuple, nullptr};
  if (kind == "vjp") {
    // vjp(f, *primals) returns (f(*primals), vjp_fn); vjp_fn(cotangent) returns one
    // gradient per primal, as a tuple (functorch's signature).
    auto fn = std::make_shared<FunctionDecl>();
    fn->name = "vjp_fn(" + inner->name + ")";
    fn->module = inner->module;
    fn->def = inner->def;
    fn->param_names = {"cotangent"};
    fn->param_types = {Type::tensor()};
    fn->defaults = {std::nullopt};
    fn->declared_return = Type::tuple(std::vector<TypePtr>(argnums.size(), Type::tensor()));
    fn->transform = FunctionDecl::Transform{"vjp_fn", inner, argnums, true, nullptr};
    transforms_.push_back(fn);
    decl->transform->companion = fn;
  }
  transforms_.push_back(decl);
  return decl;
}

TypePtr CompilationUnit::function_value_type(FunctionDecl& decl) {
  if (!decl.value_type) {
    auto sig = std::make_shared<FunctionSignature>();
    sig->params = decl.param_types;
    sig->result = decl.declared_return;
    sig->target = &decl;
    sig->name = decl.name;
    decl.value_type = Type::function(std::move(sig));
  }
  return decl.value_type;
}

namespace {

std::string node_count(size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

// Runs the pipeline on `g` in place (as Function::code() does to its copy: the graph
// that runs) and returns the comment line that says how many nodes the pipeline left.
std::string optimize_for_view(Graph& g) {
  size_t before = count_nodes(g);
  run_pipeline(g, PipelineKind::Function);
  return "# " + g.name() + " after the optimization pipeline: " + node_count(count_nodes(g)) +
         " (" + node_count(before) + " as written)\n";
}

// `g` as text in `view`.
std::string view_text(const Graph& g, GraphView view, PrintOptionsIR options) {
  if (view == GraphView::Passes) return trace_optimize(g, options);
  if (view == GraphView::AsWritten) return print_graph(g, options);
  std::unique_ptr<Graph> copy = g.clone();
  std::string header = optimize_for_view(*copy);
  return header + print_graph(*copy, options);
}

}  // namespace

std::string CompilationUnit::graph_text(FunctionDecl& decl, const SourceRange& use,
                                        GraphView view) {
  if (!decl.transform) {
    return view_text(compile_function(decl, use).function->graph(), view, {.with_lines = true});
  }
  // As written, a transform (`g = grad(f)`) shows the gradient of f it builds on,
  // split into forward and backward (`graph(g)` teaches autodiff); optimized, the
  // graph it runs: f inlined and differentiated, forward and backward in one, fused.
  // vmap(f) differentiates nothing: it shows its batched graph either way.
  bool batched = decl.transform->kind == "vmap";
  if ((view == GraphView::AsWritten && !batched) || decl.transform->kind == "vjp_fn") {
    return gradient_text(*decl.transform->inner, decl.transform->argnums, use, false, view);
  }
  return view_text(compile_transform(decl, use, {}).function->graph(), view, {.with_lines = true});
}

FunctionDecl* CompilationUnit::resolve_function(const std::string& name) {
  if (FunctionDecl* d = find_function(name)) return d;
  // `n.linear` after `import nn as n`.
  if (size_t dot = name.find('.'); dot != std::string::npos) {
    const ImportedName* imp = find_import(name.substr(0, dot));
    if (imp && imp->kind == ImportedName::UserModule)
      return find_function(imp->target + name.substr(dot));
  }
  const GlobalVar* g = find_global(name);
  if (g && g->type && g->type->kind() == TypeKind::Function && g->type->signature() &&
      g->type->signature()->target) {
    return static_cast<FunctionDecl*>(const_cast<void*>(g->type->signature()->target));
  }
  return nullptr;
}

autodiff::Gradient CompilationUnit::gradient_graphs(FunctionDecl& decl,
                                                    const std::vector<size_t>& wrt,
                                                    const SourceRange& use, size_t* num_seeds) {
  const FunctionDecl::Compiled& compiled = compile_function(decl, use);
  std::unique_ptr<Graph> forward = compiled.function->graph().clone();
  inline_function_calls(*forward);
  autodiff::JointOptions options;
  options.function_name = decl.name;
  autodiff::JointGraph joint = autodiff::build_joint(*forward, wrt, options);
  autodiff::Gradient gradient = autodiff::split(joint);
  gradient.f->set_name(decl.name + ".forward");
  gradient.df->set_name(decl.name + ".backward");
  verify(*gradient.f);
  verify(*gradient.df);
  if (num_seeds) *num_seeds = joint.seeded_outputs.size();
  return gradient;
}

std::string CompilationUnit::gradient_text(FunctionDecl& decl, std::vector<size_t> wrt,
                                           const SourceRange& use, bool dot, GraphView view) {
  if (wrt.empty()) {
    for (size_t i = 0; i < decl.param_types.size(); ++i) {
      if (decl.param_types[i]->is_tensor()) wrt.push_back(i);
    }
  }
  size_t num_seeds = 0;
  autodiff::Gradient gradient = gradient_graphs(decl, wrt, use, &num_seeds);
  std::string names;
  for (size_t i : wrt) names += (names.empty() ? "" : ", ") + decl.param_names[i];
  if (dot) {
    if (view == GraphView::Optimized) {
      optimize_for_view(*gradient.f);
      optimize_for_view(*gradient.df);
    }
    return gradient_picture(*gradient.f, *gradient.df, gradient.num_real_outputs, num_seeds,
                            decl.name, names);
  }
  std::string out;
  out += "# " + decl.name + ".forward returns " + std::to_string(gradient.num_real_outputs) +
         " result(s), then " + std::to_string(gradient.num_captures) +
         " value(s) captured for the backward\n";
  out += view_text(*gradient.f, view,
                   {.with_lines = true, .first_captured_output = gradient.num_real_outputs});
  out += "# " + decl.name +
         ".backward takes the result's gradient and the captured values, and "
         "returns the gradients of " +
         names + "\n";
  out += view_text(*gradient.df, view, {.with_lines = true});
  return out;
}

// grad(f) and friends: f's graph with its calls inlined, differentiated for the
// argnums inputs (ir/autodiff), with the outputs each transform returns.
namespace {

// A TupleConstruct of `elems` at the insertion point.
Value* tuple_value(Graph& g, const std::vector<Value*>& elems) {
  std::vector<TypePtr> types;
  for (Value* e : elems) types.push_back(e->type());
  Node* n = g.insert(g.create(OpId::TupleConstruct, elems, 1));
  return n->output()->set_type(Type::tuple(std::move(types)));
}

// functorch's check of the differentiated inputs, at the start of `g`: only floating
// tensors can require gradients (grad, vjp), or be primals (jvp, hessian). An error
// points at the parameter of `inner` (the traceback shows the call).
void check_floating_inputs(Graph& g, const FunctionDecl& inner, const std::vector<size_t>& indices,
                           bool primals, const SourceRange& use) {
  Node* first = g.block()->empty() ? g.block()->return_node() : *g.block()->begin();
  InsertPointGuard at(g, first);
  for (size_t i : indices) {
    Value* x = g.inputs().at(i);
    if (!x->type()->is_tensor()) continue;
    const SourceRange& range =
        inner.def && i < inner.def->params.size() ? inner.def->params[i].range : use;
    Value* ok = g.insert_op(OpId::is_floating_point, {x}, Type::bool_(), range);
    Node* branch = g.insert(g.create(OpId::If, {ok}, 0));
    branch->set_range(range);
    branch->add_block();
    Block* raise = branch->add_block();
    InsertPointGuard in(g, raise);
    Value* message;
    if (primals) {
      Value* d = g.insert_op(OpId::dtype, {x}, Type::dtype(), range);
      Value* name = g.insert_op(OpId::Str, {d}, Type::str_(), range);
      Value* text =
          g.insert_constant(IValue("Expected primal to be floating point or complex, but got: "),
                            Type::str_(), range);
      message = g.insert_op(OpId::add_str, {text, name}, Type::str_(), range);
    } else {
      message =
          g.insert_constant(IValue("only Tensors of floating point dtype can require gradients"),
                            Type::str_(), range);
    }
    g.insert(g.create(OpId::RaiseException, {message}, 0))->set_range(range);
  }
}

// A graph returning a tuple returns its elements instead; returns whether it did.
bool flatten_tuple_result(Graph& g) {
  Value* out = g.outputs().at(0);
  if (g.outputs().size() != 1 || out->type()->kind() != TypeKind::Tuple) return false;
  const auto& types = out->type()->contained();
  InsertPointGuard guard(g, g.block());
  Node* unpack = g.insert(g.create(OpId::TupleUnpack, {out}, types.size()));
  g.block()->erase_return(0);
  for (size_t i = 0; i < types.size(); ++i) g.add_output(unpack->output(i)->set_type(types[i]));
  return true;
}

}  // namespace

namespace {

bool same_constants(const ConstantArgs& a, const ConstantArgs& b) {
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const std::optional<IValue>* x = i < a.size() ? &a[i] : nullptr;
    const std::optional<IValue>* y = i < b.size() ? &b[i] : nullptr;
    bool hx = x && x->has_value(), hy = y && y->has_value();
    if (hx != hy) return false;
    if (hx && (*x)->is_none() != (*y)->is_none()) return false;
    if (hx && !(*x)->is_none() && (*x)->to_str() != (*y)->to_str()) return false;
  }
  return true;
}

// Note [Transforms of constant modes]
// A gradient rule needs a mode such as mse_loss's reduction as a constant (the
// gradient's shape and formula depend on it), but a function often takes it as a
// parameter: `def loss(x, red: str): return F.mse_loss(x, y, reduction=red)` with
// `grad(loss)(x, "sum")`; and a rule with an optional weight or bias needs to know
// whether it is None (`grad(f)(x, None)` for `w: Optional[Tensor]`). So a transform is
// compiled once per set of constant str and None arguments its calls pass: in that
// version the forward's parameters are those constants, folded (`if red == "mean":`
// too) before it is differentiated. The
// parameters stay in the signature, so every version is called alike. A transform whose
// parameters are its inner function's (grad, vmap, hessian, ...) passes the constants
// on, so grad(grad(loss))(x, "sum") specializes both.
void bind_constant_args(Graph& forward, const ConstantArgs& constants, const SourceRange& use) {
  bool any = false;
  InsertPointGuard at(forward, forward.block()->param_node()->next());
  for (size_t i = 0; i < constants.size() && i < forward.inputs().size(); ++i) {
    if (!constants[i]) continue;
    Value* param = forward.inputs()[i];
    Value* k;
    if (constants[i]->is_none()) {
      k = forward.insert_constant(IValue(), Type::none(), use);
    } else {
      k = forward.insert_constant(*constants[i], Type::str_(), use);
    }
    if (param->type()->kind() == TypeKind::Optional) {
      k = forward.insert_op(OpId::to_optional, {k}, param->type(), use);
    }
    param->replace_all_uses_with(k);
    any = true;
  }
  if (any) {
    fold_constants(forward);
    eliminate_dead_code(forward);
  }
}

}  // namespace

const FunctionDecl::Compiled& CompilationUnit::compile_transform(FunctionDecl& decl,
                                                                 const SourceRange& use,
                                                                 const ConstantArgs& constants) {
  const FunctionDecl::Transform& t = *decl.transform;
  // The inner function's own parameters line up with the transform's when their names do.
  bool mirrors = t.inner->param_names == decl.param_names;
  const FunctionDecl::Compiled& inner =
      compile_function(*t.inner, use, mirrors ? constants : ConstantArgs{});
  for (const auto& c : decl.compiled) {
    if (c.generation == generation_ && c.function.get() && c.hidden_types == inner.hidden_types &&
        c.hidden_globals == inner.hidden_globals && same_constants(c.constant_args, constants))
      return c;
  }
  const TypePtr& returns = inner.return_type;
  bool tensors = returns->kind() == TypeKind::Tuple && !returns->contained().empty();
  for (const TypePtr& e : returns->contained()) tensors &= e->is_tensor();
  if (t.kind == "vjp" || t.kind == "jvp" || t.kind == "jacrev" || t.kind == "jacfwd") {
    if (!returns->is_tensor() && !tensors) {
      compile_error(use, t.kind + "() needs '" + t.inner->name +
                             "' to return a Tensor or a tuple of Tensors, but it returns " +
                             returns->str());
    }
  } else if (t.kind != "vmap" && !returns->is_tensor()) {
    compile_error(use, t.kind + "() needs '" + t.inner->name + "' to return a" +
                           (t.kind == "hessian" ? "" : " scalar") + " Tensor, but it returns " +
                           returns->str());
  }
  std::unique_ptr<Graph> forward = inner.function->graph().clone();
  inline_function_calls(*forward);
  // An inner transform's graph was specialized already, and its parameters need not be
  // the forward's inputs in order.
  if (!t.inner->transform) bind_constant_args(*forward, constants, use);
  std::shared_ptr<Graph> result;
  if (t.kind == "vjp_fn") {
    compile_error(use, "internal: vjp_fn is called through its closure");
  }
  if (t.kind == "jvp") {
    result = jvp_graph(*forward, t, use);
  } else if (t.kind == "vjp") {
    result = vjp_graph(*forward, t, use);
  } else if (t.kind == "hessian") {
    result = hessian_of(*forward, t, use, mirrors ? constants : ConstantArgs{});
  } else if (t.kind == "vmap") {
    result = vmap_transform_graph(*forward, t, returns, use);
  } else if (t.kind == "jacrev") {
    result = jacrev_graph(*forward, t, use);
  } else if (t.kind == "jacfwd") {
    result = jacfwd_graph(*forward, t, use);
  } else {
    result = grad_graph(*forward, t);
  }
  if (t.kind != "vmap") {
    check_floating_inputs(*result, *t.inner, t.argnums,
                          t.kind == "jvp" || t.kind == "hessian" || t.kind == "jacfwd", use);
  }
  result->set_name(decl.name);
  verify(*result);
  FunctionDecl::Compiled c;
  c.return_type = result->outputs()[0]->type();
  c.function = IntrusivePtr<Function>(new Function(decl.name, result));
  c.hidden_globals = inner.hidden_globals;
  c.hidden_types = inner.hidden_types;
  c.generation = generation_;
  c.constant_args = constants;
  decl.compiled.push_back(std::move(c));
  compiled_since_drop_ = true;
  return decl.compiled.back();
}

// jvp(f, primals, tangents) -> (f(primals), the tangent of the result).
std::shared_ptr<Graph> CompilationUnit::jvp_graph(const Graph& forward,
                                                  const FunctionDecl::Transform& t,
                                                  const SourceRange& use) {
  size_t num_params = t.inner->param_names.size();
  for (size_t i : t.argnums) {
    if (!t.inner->param_types[i]->is_tensor()) {
      compile_error(use, "jvp(): argument '" + t.inner->param_names[i] + "' of '" + t.inner->name +
                             "' is " + t.inner->param_types[i]->str() +
                             "; jvp differentiates every primal, so all must be Tensors");
    }
  }
  std::unique_ptr<Graph> flat = forward.clone();
  bool tuple = flatten_tuple_result(*flat);
  autodiff::JvpGraph jvp = autodiff::build_jvp(*flat, t.argnums, t.inner->name, num_params);
  Graph& g = *jvp.graph;
  {
    // Each tangent must have its primal's shape (PyTorch refuses to set the forward
    // gradient otherwise; the formulas would broadcast it into a wrong result).
    InsertPointGuard at(g, g.block()->param_node()->next());
    for (size_t j = 0; j < t.argnums.size(); ++j) {
      Value* primal = g.inputs()[t.argnums[j]];
      Value* tangent = g.inputs()[num_params + j];
      Value* ps = g.insert_op(OpId::size, {primal}, Type::list(Type::int_()), use);
      Value* ts = g.insert_op(OpId::size, {tangent}, Type::list(Type::int_()), use);
      g.insert(g.create(OpId::check_tangent_size, {ps, ts}, 0))->set_range(use);
    }
  }
  std::vector<Value*> outs = g.outputs();
  while (!g.outputs().empty()) g.block()->erase_return(0);
  InsertPointGuard guard(g, g.block());
  size_t n = jvp.num_forward_outputs;
  if (!tuple) {
    g.add_output(tuple_value(g, {outs.at(0), outs.at(n)}));
  } else {
    // functorch: (outputs, tangents), both tuples shaped like f's result.
    std::vector<Value*> values(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<Value*> tangents(outs.begin() + static_cast<std::ptrdiff_t>(n), outs.end());
    g.add_output(tuple_value(g, {tuple_value(g, values), tuple_value(g, tangents)}));
  }
  return jvp.graph;
}

// vjp(f, *primals) -> (f(*primals), vjp_fn): the forward graph `f` of the split
// gradient, whose captured values a closure over the backward graph `df` keeps.
std::shared_ptr<Graph> CompilationUnit::vjp_graph(const Graph& forward,
                                                  const FunctionDecl::Transform& t,
                                                  const SourceRange& use) {
  for (size_t i : t.argnums) {
    if (!t.inner->param_types[i]->is_tensor()) {
      compile_error(use, "vjp(): argument '" + t.inner->param_names[i] + "' of '" + t.inner->name +
                             "' is " + t.inner->param_types[i]->str() +
                             "; vjp differentiates every primal, so all must be Tensors");
    }
  }
  std::unique_ptr<Graph> flat = forward.clone();
  bool tuple = flatten_tuple_result(*flat);
  size_t num_results = flat->outputs().size();
  autodiff::JointOptions options;
  options.function_name = t.inner->name;
  autodiff::JointGraph joint = autodiff::build_joint(*flat, t.argnums, options);
  autodiff::Gradient gradient = autodiff::split(joint);
  // The backward: (cotangent, captures...) -> tuple of gradients. The cotangent has
  // the result's structure (a tuple for a tuple result); each differentiable part
  // feeds its seed input, the others are not read.
  Graph& df = *gradient.df;
  size_t num_seeds = joint.seeded_outputs.size();
  {
    std::vector<TypePtr> types;
    for (size_t k = 0; k < num_results; ++k) types.push_back(Type::tensor());
    TypePtr ct = tuple ? Type::tuple(types) : Type::tensor();
    Value* cotangent = df.block()->insert_param(0, ct, tuple ? "cotangents" : "cotangent");
    std::vector<Value*> parts = {cotangent};
    if (tuple) {
      InsertPointGuard guard(df, df.block()->param_node()->next());
      Node* unpack = df.insert(df.create(OpId::TupleUnpack, {cotangent}, num_results));
      parts.clear();
      for (size_t k = 0; k < num_results; ++k)
        parts.push_back(unpack->output(k)->set_type(Type::tensor()));
    }
    for (size_t j = 0; j < num_seeds; ++j) {
      df.inputs()[1 + j]->replace_all_uses_with(parts.at(joint.seeded_outputs[j]));
    }
    for (size_t j = 0; j < num_seeds; ++j) df.block()->erase_param(1);
    t.companion->param_types = {ct};
    // Each cotangent must have its result's shape, as autograd.grad checks its
    // grad_outputs (the formulas would broadcast it into a wrong result): the result's
    // size is one more capture of the closure.
    // After the cotangent (a param) or its unpacking.
    InsertPointGuard at(df, parts.back()->node()->next());
    for (size_t k = 0; k < num_results; ++k) {
      Value* output_size = df.block()->add_param(Type::list(Type::int_()), "output_size");
      Value* cs = df.insert_op(OpId::size, {parts[k]}, Type::list(Type::int_()), use);
      Value* index = df.insert_constant(IValue(static_cast<int64_t>(k)), Type::int_(), use);
      df.insert(df.create(OpId::check_cotangent_size, {cs, output_size, index}, 0))->set_range(use);
    }
  }
  {
    std::vector<Value*> grads = df.outputs();
    while (!df.outputs().empty()) df.block()->erase_return(0);
    InsertPointGuard guard(df, df.block());
    df.add_output(tuple_value(df, grads));
  }
  df.set_name(t.companion->name);
  verify(df);
  IntrusivePtr<Function> backward(new Function(t.companion->name, gradient.df));
  // The forward: (primals...) -> (result, closure over the captures).
  Graph& f = *gradient.f;
  std::vector<Value*> outs = f.outputs();
  while (!f.outputs().empty()) f.block()->erase_return(0);
  InsertPointGuard guard(f, f.block());
  std::vector<Value*> captures(
      outs.begin() + static_cast<std::ptrdiff_t>(gradient.num_real_outputs), outs.end());
  for (size_t k = 0; k < num_results; ++k)
    captures.push_back(f.insert_op(OpId::size, {outs.at(k)}, Type::list(Type::int_()), use));
  Node* closure = f.insert(f.create(OpId::MakeClosure, captures, 1));
  closure->set_range(use);
  closure->set_attr("fn", IValue(IntrusivePtr<ObjectImpl>(backward.get())));
  closure->output()->set_type(function_value_type(*t.companion));
  std::vector<Value*> results(
      outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(gradient.num_real_outputs));
  f.add_output(
      tuple_value(f, {tuple ? tuple_value(f, results) : results.at(0), closure->output()}));
  return gradient.f;
}

// grad, value_and_grad, grad_and_value: the joint graph seeded with ones.
std::shared_ptr<Graph> CompilationUnit::grad_graph(const Graph& forward,
                                                   const FunctionDecl::Transform& t) {
  autodiff::JointOptions options;
  options.seed_with_ones = true;
  options.function_name = t.inner->name;
  autodiff::JointGraph joint = autodiff::build_joint(forward, t.argnums, options);
  Graph& g = *joint.graph;
  std::vector<Value*> outs = g.outputs();
  while (!g.outputs().empty()) g.block()->erase_return(0);
  Value* value = outs.at(0);
  std::vector<Value*> grads(outs.begin() + static_cast<std::ptrdiff_t>(joint.num_forward_outputs),
                            outs.end());
  InsertPointGuard guard(g, g.block());
  auto tuple = [&](const std::vector<Value*>& elems) {
    std::vector<TypePtr> types;
    for (Value* e : elems) types.push_back(e->type());
    Node* n = g.insert(g.create(OpId::TupleConstruct, elems, 1));
    return n->output()->set_type(Type::tuple(std::move(types)));
  };
  Value* grad_result = t.argnums_tuple ? tuple(grads) : grads.at(0);
  if (t.kind == "grad") {
    g.add_output(grad_result);
  } else if (t.kind == "value_and_grad") {
    g.add_output(tuple({value, grad_result}));
  } else {
    g.add_output(tuple({grad_result, value}));
  }
  return joint.graph;
}

// hessian(f)(x): the Jacobian of grad(f) by forward mode over reverse mode, one
// column per basis direction of x (functorch's jacfwd(jacrev(f))), shaped x + x.
std::shared_ptr<Graph> CompilationUnit::hessian_graph(const Graph& forward,
                                                      const FunctionDecl::Transform& t,
                                                      const SourceRange& use) {
  FunctionDecl::Transform as_grad = t;
  as_grad.kind = "grad";
  as_grad.argnums_tuple = false;
  std::shared_ptr<Graph> gradient = grad_graph(forward, as_grad);
  size_t num_params = t.inner->param_names.size();
  size_t x_index = t.argnums.at(0);
  autodiff::JvpGraph jvp = autodiff::build_jvp(*gradient, {x_index}, t.inner->name, num_params);
  auto h = std::make_shared<Graph>();
  Graph& g = *h;
  std::vector<Value*> inputs;
  for (const Value* in : forward.inputs())
    inputs.push_back(g.add_input(in->type(), in->debug_name()));
  Value* x = inputs.at(x_index);
  InsertPointGuard guard(g, g.block());
  SourceRange range = use;
  auto op = [&](OpId id, std::vector<Value*> ins, TypePtr type) {
    return g.insert_op(id, ins, std::move(type), range);
  };
  auto k = [&](IValue v, TypePtr type) {
    return g.insert_constant(std::move(v), std::move(type), range);
  };
  Value* n = op(OpId::numel, {x}, Type::int_());
  Value* none_int = k(IValue(), Type::optional(Type::int_()));
  Value* dt = op(OpId::dtype, {x}, Type::dtype());
  Value* dt_opt = op(OpId::to_optional, {dt}, Type::optional(Type::dtype()));
  Value* eye = op(OpId::eye,
                  {n, none_int, dt_opt, k(IValue(), Type::optional(Type::device())),
                   k(IValue(false), Type::bool_())},
                  Type::tensor());
  Node* list = g.insert(g.create(OpId::ListConstruct, {}, 1));
  list->output()->set_type(Type::list(Type::tensor()));
  Node* loop = g.insert(g.create(OpId::Loop, {n, k(IValue(true), Type::bool_())}, 0));
  loop->set_range(range);
  Block* body = loop->add_block();
  Value* i = body->add_param(Type::int_());
  {
    InsertPointGuard inner(g, body);
    Value* row = op(OpId::select, {eye, k(IValue(int64_t{0}), Type::int_()), i}, Type::tensor());
    Value* direction =
        op(OpId::reshape, {row, op(OpId::size, {x}, Type::list(Type::int_()))}, Type::tensor());
    std::unordered_map<const Value*, Value*> map;
    const Graph& j = *jvp.graph;
    for (size_t p = 0; p < j.inputs().size(); ++p) {
      // The jvp graph's inputs: f's parameters, the tangent, then hidden globals.
      Value* v = p < num_params ? inputs[p] : p == num_params ? direction : inputs[p - 1];
      map[j.inputs()[p]] = v;
    }
    std::vector<Value*> outs = g.clone_block_into(j.block(), body, map);
    // Each column flat, so that the columns form an n x n matrix whatever x's rank.
    Value* column = op(OpId::flatten,
                       {outs.at(jvp.num_forward_outputs), k(IValue(int64_t{0}), Type::int_()),
                        k(IValue(int64_t{-1}), Type::int_())},
                       Type::tensor());
    g.insert(g.create(OpId::append_list, {list->output(), column}, 0));
    body->add_return(k(IValue(true), Type::bool_()));
  }
  Value* columns =
      op(OpId::stack, {list->output(), k(IValue(int64_t{0}), Type::int_())}, Type::tensor());
  Value* matrix = op(OpId::t, {columns}, Type::tensor());
  Value* size = op(OpId::size, {x}, Type::list(Type::int_()));
  Value* both = op(OpId::add_list, {size, size}, Type::list(Type::int_()));
  g.add_output(op(OpId::reshape, {matrix, both}, Type::tensor()));
  autodiff::remove_dead_nodes(g);
  return h;
}

void CompilationUnit::run_import(const ast::Stmt& stmt) {
  static const std::unordered_set<std::string> known = {
      "torch",     "torch.nn",       "torch.nn.functional",
      "torch.jit", "torch.cuda",     "torch.func",
      "math",      "time",           "typing",
      "functorch", "torch.autograd", "__future__",
      "os",        "os.path"};
  // A module TSL does not know is a TSL module (a file NAME.tsl); see Note [Modules].
  auto is_tsl_module = [&](const std::string& m, const SourceRange& r) {
    if (known.count(m)) return false;
    if (m.find('.') != std::string::npos) {
      compile_error(
          r, "no module named '" + m +
                 "' (TSL knows torch, math, time, typing, functorch, os.path; a TSL module is "
                 "one file, NAME.tsl, imported as `import NAME`)");
    }
    load_module(m, r);
    return true;
  };
  if (stmt.kind == ast::StmtKind::Import) {
    for (const ast::ImportAlias& a : ast::as<ast::Import>(stmt).names) {
      if (is_tsl_module(a.name, a.range)) {
        std::string bind = scope_ + (a.asname.empty() ? a.name : a.asname);
        functions_.erase(bind);
        globals_.erase(bind);
        imports_[bind] = {ImportedName::UserModule, a.name};
      } else if (!a.asname.empty()) {
        imports_[scope_ + a.asname] = {ImportedName::Module, a.name};
      } else {
        std::string top = a.name.substr(0, a.name.find('.'));
        imports_[scope_ + top] = {ImportedName::Module, top};
      }
    }
    return;
  }
  const auto& from = ast::as<ast::ImportFrom>(stmt);
  bool tsl_module = is_tsl_module(from.module, stmt.range);
  for (const ast::ImportAlias& a : from.names) {
    std::string bind = scope_ + (a.asname.empty() ? a.name : a.asname);
    if (from.module == "__future__") continue;
    if (a.name == "*")
      compile_error(a.range, "`from " + from.module + " import *` is not supported");
    if (tsl_module) {
      bind_from(from.module, a.name, bind, a.range);
      forget_from_import(bind);
      from_imports_.push_back({from.module, a.name, bind, a.range});
    } else if (from.module == "typing") {
      imports_[bind] = {ImportedName::TypingName, a.name};
    } else if (from.module == "functorch" || from.module == "torch.func") {
      imports_[bind] = {ImportedName::Transform, a.name};
    } else if (from.module == "torch" && a.name == "Tensor") {
      imports_[bind] = {ImportedName::TypingName, "Tensor"};
    } else if (known.count(from.module + "." + a.name)) {
      imports_[bind] = {ImportedName::Module, from.module + "." + a.name};
    } else if (uint32_t space = builtin_namespace(from.module);
               space && is_builtin_of(from.module, a.name)) {
      imports_[bind] = {ImportedName::Builtin, a.name, space};
    } else if (from.module == "torch.nn.functional" && functional_in_tsl(a.name, a.range)) {
      bind_from(kFunctionalModule, a.name, bind, a.range);
    } else {
      compile_error(a.range, "cannot import '" + a.name + "' from '" + from.module + "' in TSL");
    }
  }
}

}  // namespace tsl
