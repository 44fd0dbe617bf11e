// Running top-level statements and compiling functions on first use; see Note
// [Top-level code] in compilation_unit.h.
#include "frontend/compilation_unit.h"

#include <iostream>

#include "frontend/emitter.h"
#include "frontend/parser.h"

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

void CompilationUnit::run_statement(const std::shared_ptr<ast::Module>& module,
                                    const ast::Stmt& stmt, bool repl_mode) {
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
  std::shared_ptr<Graph> graph = compile_statement(module, stmt, repl_mode, &inputs, &outputs);
  if (graph->block()->empty() && outputs.empty()) return;  // pass, annotations
  std::vector<IValue> args;
  args.reserve(inputs.size());
  for (const std::string& name : inputs) args.push_back(globals_.at(name).value);
  IntrusivePtr<Function> fn(new Function("<module>", graph));
  std::vector<IValue> results = fn->run(std::move(args));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = outputs[i];
    TypePtr type = graph->outputs()[i]->type();
    if (name == "$echo") {
      if (!results[i].is_none()) (*echo_) << results[i].repr() << std::endl;
      continue;
    }
    if (is_unassigned_placeholder(results[i], type)) continue;
    set_global(name, std::move(results[i]), type);
  }
}

std::shared_ptr<Graph> CompilationUnit::compile_statement(
    const std::shared_ptr<ast::Module>& module, const ast::Stmt& stmt, bool repl_mode,
    std::vector<std::string>* inputs, std::vector<std::string>* outputs) {
  (void)module;
  auto graph = std::make_shared<Graph>();
  Emitter emitter(*this, *graph, Emitter::Mode::TopLevel);
  emitter.emit_toplevel(stmt, repl_mode);
  verify(*graph);
  if (inputs) *inputs = emitter.global_inputs();
  if (outputs) *outputs = emitter.outputs();
  return graph;
}

void CompilationUnit::define_function(const std::shared_ptr<ast::Module>& module,
                                      const ast::FunctionDef& def) {
  for (const auto& d : def.decorators) {
    if (!is_script_decorator(*d)) {
      compile_error(d->range, "decorators other than @torch.jit.script are not supported");
    }
  }
  auto decl = std::make_shared<FunctionDecl>();
  decl->name = def.name;
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
    if (p.default_value) {
      decl->defaults.push_back(evaluate_default(*this, *p.default_value, t));
    } else {
      if (!decl->defaults.empty() && decl->defaults.back()) {
        compile_error(p.range,
                      "parameter '" + p.name + "' without a default follows one with a default");
      }
      decl->defaults.push_back(std::nullopt);
    }
  }
  if (def.returns) decl->declared_return = types.resolve_type(*def.returns);
  globals_.erase(def.name);
  imports_.erase(def.name);
  functions_[def.name] = std::move(decl);
  ++generation_;
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
                                                                const SourceRange& use) {
  for (FunctionDecl* f : compiling_) {
    if (f == &decl) {
      compile_error(use, "recursive call of '" + decl.name +
                             "': recursion is not supported in TSL "
                             "(as in TorchScript); use a loop");
    }
  }
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
  return decl.compiled.back();
}

void CompilationUnit::run_import(const ast::Stmt& stmt) {
  static const std::unordered_set<std::string> known = {
      "torch",     "torch.nn",       "torch.nn.functional",
      "torch.jit", "torch.cuda",     "torch.func",
      "math",      "time",           "typing",
      "functorch", "torch.autograd", "__future__"};
  auto check_module = [&](const std::string& m, const SourceRange& r) {
    if (!known.count(m))
      compile_error(r,
                    "no module named '" + m + "' (TSL knows torch, math, time, typing, functorch)");
  };
  if (stmt.kind == ast::StmtKind::Import) {
    for (const ast::ImportAlias& a : ast::as<ast::Import>(stmt).names) {
      check_module(a.name, a.range);
      if (!a.asname.empty()) {
        imports_[a.asname] = {ImportedName::Module, a.name};
      } else {
        std::string top = a.name.substr(0, a.name.find('.'));
        imports_[top] = {ImportedName::Module, top};
      }
    }
    return;
  }
  const auto& from = ast::as<ast::ImportFrom>(stmt);
  check_module(from.module, stmt.range);
  for (const ast::ImportAlias& a : from.names) {
    std::string bind = a.asname.empty() ? a.name : a.asname;
    if (from.module == "__future__") continue;
    if (a.name == "*")
      compile_error(a.range, "`from " + from.module + " import *` is not supported");
    if (from.module == "typing") {
      imports_[bind] = {ImportedName::TypingName, a.name};
    } else if (from.module == "functorch" || from.module == "torch.func") {
      imports_[bind] = {ImportedName::Transform, a.name};
    } else if (from.module == "torch" && a.name == "Tensor") {
      imports_[bind] = {ImportedName::TypingName, "Tensor"};
    } else if (known.count(from.module + "." + a.name)) {
      imports_[bind] = {ImportedName::Module, from.module + "." + a.name};
    } else {
      compile_error(a.range, "cannot import '" + a.name + "' from '" + from.module + "' in TSL");
    }
  }
}

}  // namespace tsl
