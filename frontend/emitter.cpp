// The emitter's setup (a function's parameters and hidden globals, a top-level
// statement's inputs and outputs), its variables and scopes, and statement lists; see
// Note [Emitting control flow]. Branches, loops and simple statements are in
// emit_branches.cpp, emit_loops.cpp and emit_statements.cpp.
#include "frontend/emitter.h"

#include "frontend/emit_scans.h"
#include "runtime/tensor/interrupt.h"

#include <algorithm>

namespace tsl {

using namespace emit_scans;

// ---- Scope -------------------------------------------------------------------------------

Binding* Scope::find(const std::string& name) {
  for (Scope* s = this; s != nullptr; s = s->lookup_parent_) {
    auto r = s->refined_.find(name);
    if (r != s->refined_.end()) return &r->second;
    auto it = s->vars_.find(name);
    if (it != s->vars_.end()) return &it->second;
  }
  return nullptr;
}

// ---- Emitter: setup --------------------------------------------------------------------

Emitter::Emitter(CompilationUnit& unit, Graph& graph, Mode mode)
    : unit_(unit), graph_(graph), mode_(mode), namespace_(unit.scope()) {
  scopes_.push_back(std::make_unique<Scope>(nullptr));
  scope_ = scopes_.back().get();
  block_ = graph.block();
  graph_.set_insert_point(block_);
  pending_return_type_ = std::make_shared<Type>(TypeKind::Any, std::vector<TypePtr>{});
}

std::string Emitter::unqualified(const std::string& q) const {
  return q.starts_with(namespace_) ? q.substr(namespace_.size()) : q;
}

TypePtr Emitter::emit_function(const FunctionDecl& decl) {
  decl_ = &decl;
  namespace_ = decl.scope;
  const ast::FunctionDef& def = *decl.def;
  graph_.set_name(decl.name);
  for (size_t i = 0; i < decl.param_names.size(); ++i) {
    Value* p = graph_.add_input(decl.param_types[i], decl.param_names[i]);
    scope_->set(decl.param_names[i], {p, def.params[i].range});
    declared_[decl.param_names[i]] = {p, def.params[i].range};
    locals_.insert(decl.param_names[i]);
  }
  std::vector<std::string> assigned;
  collect_assigned(def.body, assigned);
  for (const auto& n : assigned) locals_.insert(n);
  for (const auto& sp : def.body) {
    if (sp->kind == ast::StmtKind::FunctionDef) {
      compile_error(sp->range, "nested functions are not supported: define '" +
                                   ast::as<ast::FunctionDef>(*sp).name + "' at the top level");
    }
  }
  return_type_ = decl.declared_return;
  needs_return_flag_ = has_nested_return(def.body, false);
  if (needs_return_flag_)
    write_variable(kReturned, constant(IValue(false), Type::bool_(), def.range), def.range);

  bool exits = emit_stmts(def.body);
  Value* result = nullptr;
  Binding* ret = scope_->find(kRet);
  if (!exits) {
    // The end of the body is reachable: fine only for functions returning None.
    if (return_type_ && return_type_->kind() != TypeKind::None) {
      compile_error(def.name_range,
                    "function '" + decl.name +
                        "' can reach its end without returning a value (it returns " +
                        return_type_->str() + " at " + line_of(return_range_) + ")");
    }
    if (ret && ret->value->type()->kind() == TypeKind::None) {
      result = ret->value;
    } else {
      result = none(def.range);
    }
    if (!return_type_) return_type_ = Type::none();
  } else if (!ret) {
    // No path returns: each raises or loops forever (`raise ValueError("m")`, `while
    // True: pass`), valid TorchScript. The result is never read: a placeholder of the
    // declared type, None without one (TorchScript's inference).
    if (!return_type_) return_type_ = Type::none();
    if (return_type_->kind() == TypeKind::None) {
      result = none(def.range);
    } else {
      Node* u = graph_.insert(graph_.create(OpId::Uninitialized, {}, 1));
      u->set_range(def.range);
      result = u->output()->set_type(return_type_);
    }
  } else {
    result = ret->value;
  }
  if (!return_type_) return_type_ = Type::none();
  // Patch the placeholder type of return values carried before the type was known.
  std::function<void(Block*)> patch = [&](Block* b) {
    for (Value* p : b->params()) {
      if (p->type() == pending_return_type_) p->set_type(return_type_);
    }
    for (Node* n : *b) {
      for (Value* o : n->outputs()) {
        if (o->type() == pending_return_type_) o->set_type(return_type_);
      }
      for (Block* nb : n->blocks()) patch(nb);
    }
  };
  patch(graph_.block());
  result = convert_to(result, return_type_, return_range_, "return value");
  graph_.add_output(result);
  return return_type_;
}

void Emitter::emit_toplevel(const ast::Stmt& stmt, bool repl_mode) {
  repl_mode_ = repl_mode;
  graph_.set_name("<module>");
  toplevel_assigned_.clear();
  collect_assigned(stmt, toplevel_assigned_);
  if (stmt.kind == ast::StmtKind::Expr) {
    emit_expr_stmt(ast::as<ast::ExprStmt>(stmt));
  } else {
    // Top-level statements never exit, so they are dispatched directly.
    switch (stmt.kind) {
      case ast::StmtKind::Return:
        compile_error(stmt.range, "'return' outside function");
      case ast::StmtKind::Break:
        compile_error(stmt.range, "'break' outside loop");
      case ast::StmtKind::Continue:
        compile_error(stmt.range, "'continue' not properly in loop");
      case ast::StmtKind::If: {
        ast::Body empty;
        compound_depth_++;
        emit_if(ast::as<ast::If>(stmt), empty, 0);
        compound_depth_--;
        break;
      }
      case ast::StmtKind::While:
        compound_depth_++;
        emit_while(ast::as<ast::While>(stmt));
        compound_depth_--;
        break;
      case ast::StmtKind::For:
        compound_depth_++;
        emit_for(ast::as<ast::For>(stmt));
        compound_depth_--;
        break;
      case ast::StmtKind::With:
        compound_depth_++;
        emit_with(ast::as<ast::With>(stmt));
        compound_depth_--;
        break;
      case ast::StmtKind::Assign:
        emit_assign(ast::as<ast::Assign>(stmt));
        break;
      case ast::StmtKind::AugAssign:
        emit_aug_assign(ast::as<ast::AugAssign>(stmt));
        break;
      case ast::StmtKind::AnnAssign:
        emit_ann_assign(ast::as<ast::AnnAssign>(stmt));
        break;
      case ast::StmtKind::Pass:
        break;
      case ast::StmtKind::Assert:
        emit_assert(ast::as<ast::Assert>(stmt));
        break;
      case ast::StmtKind::Raise:
        emit_raise(ast::as<ast::Raise>(stmt));
        break;
      default:
        TSL_INTERNAL_ASSERT(false, "statement kind not handled at top level");
    }
  }
  // Outputs: every variable the statement assigned that is defined at the end.
  for (const std::string& name : unique_names(toplevel_assigned_)) {
    Binding* b = scope_->find(name);
    if (!b) continue;
    graph_.add_output(b->value);
    output_names_.push_back(name);
  }
  if (Binding* echo = scope_->find(kEcho)) {
    graph_.add_output(echo->value);
    output_names_.push_back(kEcho);
  }
}

// ---- Names -------------------------------------------------------------------------------

Binding* Emitter::lookup_local(const std::string& name) { return scope_->find(name); }

void Emitter::write_variable(const std::string& name, Value* v, const SourceRange& range) {
  if (!is_flag(name)) {
    bool enforce = mode_ == Mode::Function || compound_depth_ > 0;
    auto annotated = annotated_.find(name);
    if (annotated != annotated_.end() && !v->type()->equals(*annotated->second)) {
      v = convert_to(v, annotated->second, range, "variable '" + name + "'");
    }
    if (enforce) {
      auto it = declared_.find(name);
      if (it == declared_.end()) {
        declared_[name] = {v, range};
      } else if (!it->second.value->type()->equals(*v->type()) &&
                 !(annotated != annotated_.end())) {
        SourceError err(
            SourceError::Kind::Compile, range,
            "variable '" + name + "' is assigned a value of type " + v->type()->str() +
                ", but it has type " + it->second.value->type()->str() +
                " (a variable has one type " +
                (mode_ == Mode::Function ? "inside a function" : "inside a loop or branch") + ")");
        err.add_note(it->second.range, "'" + name + "' first assigned here");
        throw err;
      }
    }
    if (v->debug_name().empty() && v->node()->op() != OpId::Constant) v->set_debug_name(name);
    maybe_undefined_.erase(name);
    if (mode_ == Mode::TopLevel && compound_depth_ > 0) publish(name, v, range);
  }
  scope_->set(name, {v, range});
}

// Note [Top-level assignments survive errors] in runtime/kernels/output.h.
void Emitter::publish(const std::string& name, Value* v, const SourceRange& range) {
  size_t slot = 0;
  while (slot < published_.size() && published_[slot].first != name) ++slot;
  if (slot == published_.size()) published_.emplace_back(name, v->type());
  Value* index = constant(IValue(static_cast<int64_t>(slot)), Type::int_(), range);
  graph_.insert(graph_.create(OpId::PublishGlobal, {index, v}, 0))->set_range(range);
}

Value* Emitter::global_input(const std::string& name, const SourceRange& range) {
  auto it = global_values_.find(name);
  if (it != global_values_.end()) return it->second;
  const GlobalVar* g = unit_.find_global(name);
  TSL_INTERNAL_ASSERT(g != nullptr, "global_input of an unknown global");
  TypePtr t =
      mode_ == Mode::Function ? strip_refinements(g->type) : type_of_value(g->value, g->type);
  if (mode_ == Mode::TopLevel && g->type && g->type->kind() != TypeKind::Tensor &&
      !(g->type->kind() == TypeKind::List || g->type->kind() == TypeKind::Tuple)) {
    // Declared Optional and float types hold (`best: Optional[Tensor] = None` assigned
    // in a loop, `lr: float = 1`). But an Optional holding a value, in a statement that
    // does not assign it, is that value's type: as in Python, `g = x.grad` then `g[0]`
    // on the next line works without the refinement a function needs.
    bool assigned_here = std::any_of(toplevel_assigned_.begin(), toplevel_assigned_.end(),
                                     [&](const std::string& a) { return qualified(a) == name; });
    bool holds_value = g->type->kind() == TypeKind::Optional && !g->value.is_none();
    t = holds_value && !assigned_here ? type_of_value(g->value, g->type->element()) : g->type;
  }
  Value* v = graph_.add_input(t, name);
  global_inputs_.push_back(name);
  global_input_types_.push_back(t);
  global_values_[name] = v;
  return v;
}

void Emitter::undefined_name(const std::string& name, const SourceRange& range) {
  auto reason = maybe_undefined_.find(name);
  if (reason != maybe_undefined_.end()) {
    compile_error(range, "'" + name + "' is not defined on every path here: " + reason->second);
  }
  if (mode_ == Mode::Function && locals_.count(name)) {
    compile_error(range, "local variable '" + name + "' is used before it is assigned");
  }
  if (name == "progress") {
    compile_error(range, "progress() is a for loop's iterable: `for x in progress(xs):`");
  }
  static const std::unordered_set<std::string> modules = {"torch", "math", "time", "F",
                                                          "functorch"};
  if (modules.count(name)) {
    std::string hint = name == "F" ? "import torch.nn.functional as F" : "import " + name;
    compile_error(range, "name '" + name + "' is not defined (add `" + hint + "`)");
  }
  compile_error(range, "name '" + name + "' is not defined");
}

Value* Emitter::read_under_no_grad(Value* v, const SourceRange& range) {
  if (no_grad_depth_ == 0 || mode_ != Mode::Function || !v->type()->is_tensor()) return v;
  Value* d = graph_.insert_op(OpId::detach, {v}, v->type(), range);
  no_grad_reads_.insert(d);
  return d;
}

Value* Emitter::read_variable(const std::string& name, const SourceRange& range) {
  if (Binding* b = lookup_local(name)) {
    if (b->value->type() == pending_return_type_ && !is_flag(name)) undefined_name(name, range);
    return b->value;
  }
  if (maybe_undefined_.count(name)) undefined_name(name, range);
  if (mode_ == Mode::Function && locals_.count(name)) undefined_name(name, range);
  if (unit_.find_global(qualified(name))) return global_input(qualified(name), range);
  undefined_name(name, range);
}

// ---- Statement lists -------------------------------------------------------------------------

bool Emitter::emit_stmts(const ast::Body& body, size_t first) {
  for (size_t i = first; i < body.size(); ++i) {
    const ast::Stmt& s = *body[i];
    if (s.kind == ast::StmtKind::If) {
      return emit_if(ast::as<ast::If>(s), body, i + 1);
    }
    if (emit_stmt(body, i)) return true;  // the rest is unreachable
    Exits e = exits_of(s, false);
    if (e.ret && i + 1 < body.size()) {
      // A loop that may return: the rest runs only if it did not.
      Binding* returned = lookup_local(kReturned);
      TSL_INTERNAL_ASSERT(returned != nullptr, "return flag missing");
      Value* go_on = graph_.insert_op(OpId::not_bool, {returned->value}, Type::bool_(), s.range);
      // When the rest always exits too, every path has exited: the loop's return
      // or the rest's (the flags merged by emit_branches say which).
      bool rest_exits = false;
      emit_branches(
          go_on, s.range, [&] { return emit_stmts(body, i + 1); }, [] { return false; },
          &rest_exits, nullptr);
      return rest_exits;
    }
  }
  return false;
}

bool Emitter::emit_stmt(const ast::Body& body, size_t i) {
  const ast::Stmt& s = *body[i];
  // Ctrl-C or --timeout while a long program compiles: the error points at the
  // statement the compiler had reached.
  if (g_interrupt_requested.load(std::memory_order_relaxed)) {
    try {
      raise_pending_interrupt();
    } catch (const InterruptError& e) {
      runtime_error(s.range, e.what());
    }
  }
  compound_depth_ += (s.kind == ast::StmtKind::While || s.kind == ast::StmtKind::For ||
                      s.kind == ast::StmtKind::With);
  struct DepthGuard {
    int& d;
    int delta;
    ~DepthGuard() { d -= delta; }
  } guard{compound_depth_, (s.kind == ast::StmtKind::While || s.kind == ast::StmtKind::For ||
                            s.kind == ast::StmtKind::With)
                               ? 1
                               : 0};
  switch (s.kind) {
    case ast::StmtKind::Expr:
      emit_expr_stmt(ast::as<ast::ExprStmt>(s));
      return false;
    case ast::StmtKind::Assign:
      emit_assign(ast::as<ast::Assign>(s));
      return false;
    case ast::StmtKind::AugAssign:
      emit_aug_assign(ast::as<ast::AugAssign>(s));
      return false;
    case ast::StmtKind::AnnAssign:
      emit_ann_assign(ast::as<ast::AnnAssign>(s));
      return false;
    case ast::StmtKind::If:
      return emit_if(ast::as<ast::If>(s), body, body.size());
    case ast::StmtKind::While: {
      // `while True:` without a `break` leaves only through `return` (or an error):
      // what follows it is unreachable, so a function may end in such a loop.
      const auto& w = ast::as<ast::While>(s);
      emit_while(w);
      bool forever = w.cond->kind == ast::ExprKind::Bool && ast::as<ast::BoolLit>(*w.cond).value;
      return forever && !exits_of(w.body, false).brk;
    }
    case ast::StmtKind::For:
      emit_for(ast::as<ast::For>(s));
      return false;
    case ast::StmtKind::Break:
      if (loops_.empty()) compile_error(s.range, "'break' outside loop");
      write_variable(kBroke, constant(IValue(true), Type::bool_(), s.range), s.range);
      return true;
    case ast::StmtKind::Continue:
      if (loops_.empty()) compile_error(s.range, "'continue' not properly in loop");
      write_variable(kContinued, constant(IValue(true), Type::bool_(), s.range), s.range);
      return true;
    case ast::StmtKind::Return:
      emit_return(ast::as<ast::Return>(s));
      return true;
    case ast::StmtKind::Pass:
      return false;
    case ast::StmtKind::Assert:
      emit_assert(ast::as<ast::Assert>(s));
      return false;
    case ast::StmtKind::Raise:
      emit_raise(ast::as<ast::Raise>(s));
      return true;
    case ast::StmtKind::With:
      emit_with(ast::as<ast::With>(s));
      return false;
    case ast::StmtKind::FunctionDef:
      compile_error(s.range, "nested functions are not supported: define '" +
                                 ast::as<ast::FunctionDef>(s).name + "' at the top level");
    case ast::StmtKind::Import:
    case ast::StmtKind::ImportFrom:
      compile_error(s.range, "import is only allowed at the top level");
  }
  return false;
}

}  // namespace tsl
