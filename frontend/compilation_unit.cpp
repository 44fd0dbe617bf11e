// Running top-level statements and compiling functions on first use; see Note
// [Top-level code] in compilation_unit.h.
#include "frontend/compilation_unit.h"

#include <functional>
#include <iostream>
#include <set>

#include "frontend/emitter.h"
#include "frontend/parser.h"
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

CompilationUnit::~CompilationUnit() { drop_compiled_versions(); }

// A function value in a compiled graph (a FunctionRef constant) holds its declaration,
// whose compiled versions hold the graph: a function that names itself (`g = f` in f's
// body), or two that name each other, are a cycle of references that would outlive
// the unit. Dropping every compiled version breaks them.
void CompilationUnit::drop_compiled_versions() {
  for (auto& [name, decl] : functions_) decl->compiled.clear();
  for (const std::shared_ptr<FunctionDecl>& decl : transforms_) decl->compiled.clear();
  for (auto& [name, g] : globals_) {
    if (!g.value.is_object()) continue;
    if (const auto* f = dynamic_cast<const FunctionRef*>(&g.value.to_object()); f && f->decl())
      f->decl()->compiled.clear();
  }
}

void CompilationUnit::reset() {
  drop_compiled_versions();
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
    } else if (from.module == "torch" && tensor_function_in_tsl(a.name, a.range)) {
      bind_from(kTensorModule, a.name, bind, a.range);
    } else {
      compile_error(a.range, "cannot import '" + a.name + "' from '" + from.module + "' in TSL");
    }
  }
}

}  // namespace tsl
