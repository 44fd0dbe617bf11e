// Statements and control flow of the emitter; see Note [Emitting control flow].
#include "frontend/emitter.h"
#include "runtime/tensor/interrupt.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace tsl {
namespace {

constexpr const char* kRet = "$ret";
constexpr const char* kReturned = "$returned";
constexpr const char* kBroke = "$broke";
constexpr const char* kContinued = "$continued";
constexpr const char* kEcho = "$echo";

bool is_flag(const std::string& name) { return !name.empty() && name[0] == '$'; }

// ---- Pre-scans of the AST ----------------------------------------------------------------

void collect_target_names(const ast::Expr& t, std::vector<std::string>& out) {
  switch (t.kind) {
    case ast::ExprKind::Name:
      out.push_back(ast::as<ast::Name>(t).id);
      break;
    case ast::ExprKind::Tuple:
      for (const auto& e : ast::as<ast::TupleExpr>(t).elts) collect_target_names(*e, out);
      break;
    case ast::ExprKind::List:
      for (const auto& e : ast::as<ast::ListExpr>(t).elts) collect_target_names(*e, out);
      break;
    default:
      break;
  }
}

// Names a statement list assigns, in order of first assignment (not inside defs).
void collect_assigned(const ast::Body& body, std::vector<std::string>& out) {
  for (const auto& sp : body) {
    const ast::Stmt& s = *sp;
    switch (s.kind) {
      case ast::StmtKind::Assign:
        for (const auto& t : ast::as<ast::Assign>(s).targets) collect_target_names(*t, out);
        break;
      case ast::StmtKind::AugAssign:
        collect_target_names(*ast::as<ast::AugAssign>(s).target, out);
        break;
      case ast::StmtKind::AnnAssign:
        collect_target_names(*ast::as<ast::AnnAssign>(s).target, out);
        break;
      case ast::StmtKind::If:
        collect_assigned(ast::as<ast::If>(s).body, out);
        collect_assigned(ast::as<ast::If>(s).orelse, out);
        break;
      case ast::StmtKind::While:
        collect_assigned(ast::as<ast::While>(s).body, out);
        break;
      case ast::StmtKind::For:
        collect_target_names(*ast::as<ast::For>(s).target, out);
        collect_assigned(ast::as<ast::For>(s).body, out);
        break;
      case ast::StmtKind::With:
        for (const auto& item : ast::as<ast::With>(s).items) {
          if (item.target) collect_target_names(*item.target, out);
        }
        collect_assigned(ast::as<ast::With>(s).body, out);
        break;
      default:
        break;
    }
  }
}

// Names whose tensors a statement list updates through item assignment (`h[i] = v`,
// `h[i] += v`): a loop carries them, so that the update is a value autodiff can
// follow from one iteration to the next (see emit_setitem).
void collect_item_assigned(const ast::Body& body, std::vector<std::string>& out) {
  auto base_of = [&](const ast::Expr& t) {
    if (t.kind != ast::ExprKind::Subscript) return;
    const ast::Expr& v = *ast::as<ast::Subscript>(t).value;
    if (v.kind == ast::ExprKind::Name) out.push_back(ast::as<ast::Name>(v).id);
  };
  for (const auto& sp : body) {
    const ast::Stmt& s = *sp;
    switch (s.kind) {
      case ast::StmtKind::Assign:
        for (const auto& t : ast::as<ast::Assign>(s).targets) base_of(*t);
        break;
      case ast::StmtKind::AugAssign:
        base_of(*ast::as<ast::AugAssign>(s).target);
        break;
      case ast::StmtKind::If:
        collect_item_assigned(ast::as<ast::If>(s).body, out);
        collect_item_assigned(ast::as<ast::If>(s).orelse, out);
        break;
      case ast::StmtKind::While:
        collect_item_assigned(ast::as<ast::While>(s).body, out);
        break;
      case ast::StmtKind::For:
        collect_item_assigned(ast::as<ast::For>(s).body, out);
        break;
      case ast::StmtKind::With:
        collect_item_assigned(ast::as<ast::With>(s).body, out);
        break;
      default:
        break;
    }
  }
}

std::vector<std::string> unique_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const auto& n : names) {
    if (seen.insert(n).second) out.push_back(n);
  }
  return out;
}

Exits exits_of(const ast::Body& body, bool in_nested_loop);

Exits exits_of(const ast::Stmt& s, bool in_nested_loop) {
  Exits e;
  switch (s.kind) {
    case ast::StmtKind::Return:
      e.ret = true;
      break;
    case ast::StmtKind::Break:
      e.brk = !in_nested_loop;
      break;
    case ast::StmtKind::Continue:
      e.cont = !in_nested_loop;
      break;
    case ast::StmtKind::If: {
      Exits a = exits_of(ast::as<ast::If>(s).body, in_nested_loop);
      Exits b = exits_of(ast::as<ast::If>(s).orelse, in_nested_loop);
      e = {a.ret || b.ret, a.brk || b.brk, a.cont || b.cont};
      break;
    }
    case ast::StmtKind::While:
      e.ret = exits_of(ast::as<ast::While>(s).body, true).ret;
      break;
    case ast::StmtKind::For:
      e.ret = exits_of(ast::as<ast::For>(s).body, true).ret;
      break;
    case ast::StmtKind::With:
      e = exits_of(ast::as<ast::With>(s).body, in_nested_loop);
      break;
    default:
      break;
  }
  return e;
}

Exits exits_of(const ast::Body& body, bool in_nested_loop) {
  Exits e;
  for (const auto& s : body) {
    Exits x = exits_of(*s, in_nested_loop);
    e.ret |= x.ret;
    e.brk |= x.brk;
    e.cont |= x.cont;
  }
  return e;
}

// Whether a statement list always leaves through return, break, continue or raise.
// With the answers kept per body: emit_if asks about each If of an elif chain, and
// each answer looks down the rest of the chain (quadratic otherwise).
bool always_exits(const ast::Body& body, std::unordered_map<const ast::Body*, bool>& memo) {
  if (auto it = memo.find(&body); it != memo.end()) return it->second;
  bool exits = false;
  for (const auto& sp : body) {
    switch (sp->kind) {
      case ast::StmtKind::Return:
      case ast::StmtKind::Break:
      case ast::StmtKind::Continue:
      case ast::StmtKind::Raise:
        exits = true;
        break;
      case ast::StmtKind::If:
        exits = always_exits(ast::as<ast::If>(*sp).body, memo) &&
                always_exits(ast::as<ast::If>(*sp).orelse, memo);
        break;
      case ast::StmtKind::With:
        exits = always_exits(ast::as<ast::With>(*sp).body, memo);
        break;
      default:
        break;
    }
    if (exits) break;
  }
  memo[&body] = exits;
  return exits;
}

// Whether a return occurs inside an if, while or for (so a flag must record it).
bool has_nested_return(const ast::Body& body, bool nested) {
  for (const auto& sp : body) {
    const ast::Stmt& s = *sp;
    switch (s.kind) {
      case ast::StmtKind::Return:
        if (nested) return true;
        break;
      case ast::StmtKind::If:
        if (has_nested_return(ast::as<ast::If>(s).body, true) ||
            has_nested_return(ast::as<ast::If>(s).orelse, true)) {
          return true;
        }
        break;
      case ast::StmtKind::While:
        if (has_nested_return(ast::as<ast::While>(s).body, true)) return true;
        break;
      case ast::StmtKind::For:
        if (has_nested_return(ast::as<ast::For>(s).body, true)) return true;
        break;
      case ast::StmtKind::With:
        if (has_nested_return(ast::as<ast::With>(s).body, nested)) return true;
        break;
      default:
        break;
    }
  }
  return false;
}

std::string line_of(const SourceRange& r) {
  return r.valid() ? "line " + std::to_string(r.line) : "here";
}

}  // namespace

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

// Runs `fn` with emission redirected into block `b` and scope `s`.
namespace {
template <typename Fn>
auto with_block(Graph& g, Block*& current, Scope*& scope, Block* b, Scope* s, Fn&& fn) {
  Block* saved_block = current;
  Scope* saved_scope = scope;
  Node* saved_point = g.insert_point();
  current = b;
  scope = s;
  g.set_insert_point(b);
  struct Restore {
    Graph& g;
    Block*& current;
    Scope*& scope;
    Block* b;
    Scope* s;
    Node* p;
    ~Restore() {
      current = b;
      scope = s;
      g.set_insert_point(p);
    }
  } restore{g, current, scope, saved_block, saved_scope, saved_point};
  return fn();
}
}  // namespace

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
  std::vector<std::string> assigned;
  ast::Body view;
  switch (stmt.kind) {
    case ast::StmtKind::Assign:
      for (const auto& t : ast::as<ast::Assign>(stmt).targets) collect_target_names(*t, assigned);
      break;
    case ast::StmtKind::AugAssign:
      collect_target_names(*ast::as<ast::AugAssign>(stmt).target, assigned);
      break;
    case ast::StmtKind::AnnAssign:
      collect_target_names(*ast::as<ast::AnnAssign>(stmt).target, assigned);
      break;
    case ast::StmtKind::If:
      collect_assigned(ast::as<ast::If>(stmt).body, assigned);
      collect_assigned(ast::as<ast::If>(stmt).orelse, assigned);
      break;
    case ast::StmtKind::While:
      collect_assigned(ast::as<ast::While>(stmt).body, assigned);
      break;
    case ast::StmtKind::For:
      collect_target_names(*ast::as<ast::For>(stmt).target, assigned);
      collect_assigned(ast::as<ast::For>(stmt).body, assigned);
      break;
    case ast::StmtKind::With:
      for (const auto& item : ast::as<ast::With>(stmt).items) {
        if (item.target) collect_target_names(*item.target, assigned);
      }
      collect_assigned(ast::as<ast::With>(stmt).body, assigned);
      break;
    default:
      break;
  }
  for (const std::string& name : unique_names(assigned)) {
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
    t = g->type;  // keep declared Optional/float types of annotated globals
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

// ---- Branches ------------------------------------------------------------------------------

Node* Emitter::emit_branches(Value* cond, const SourceRange& range,
                             const std::function<bool()>& then_fn,
                             const std::function<bool()>& else_fn, bool* then_exits_out,
                             bool* else_exits_out) {
  Node* n = graph_.insert(graph_.create(OpId::If, {cond}, 0));
  n->set_range(range);
  Block* then_block = n->add_block();
  Block* else_block = n->add_block();
  Scope then_scope(scope_), else_scope(scope_);
  bool then_exits = with_block(graph_, block_, scope_, then_block, &then_scope, then_fn);
  bool else_exits = with_block(graph_, block_, scope_, else_block, &else_scope, else_fn);
  if (then_exits_out) *then_exits_out = then_exits;
  if (else_exits_out) *else_exits_out = else_exits;
  auto returns_only = [](bool exits, const Scope& sc) {
    return exits && !sc.own().count(kBroke) && !sc.own().count(kContinued);
  };
  bool drop_then = returns_only(then_exits, then_scope);
  bool drop_else = returns_only(else_exits, else_scope);

  // Merge the variables either branch assigned.
  std::vector<std::string> names;
  for (const auto& [name, b] : then_scope.own()) names.push_back(name);
  for (const auto& [name, b] : else_scope.own()) {
    if (!then_scope.own().count(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    Binding* tb = then_scope.find(name);
    Binding* eb = else_scope.find(name);
    Binding* outer = scope_->find(name);
    bool top_level_maybe = mode_ == Mode::TopLevel && !is_flag(name);
    // A branch that always leaves by `return` hands on only the exit flags and the
    // return value (to the loop condition and the function's end): for ordinary
    // variables the other side decides, which keeps `if x is None: return`
    // refining x. A branch that may leave by `break` or `continue` hands on its
    // variables too: they flow to the code after the loop or the next iteration.
    if (drop_then && !is_flag(name)) tb = nullptr;
    if (drop_else && !is_flag(name)) eb = nullptr;
    if (!tb && !eb) continue;
    if ((!tb || !eb) && !outer && !is_flag(name) && !(then_exits || else_exits) &&
        !top_level_maybe) {
      const Binding* one = tb ? tb : eb;
      maybe_undefined_[name] = "it is assigned only in the '" + std::string(tb ? "if" : "else") +
                               "' branch (" + line_of(one->range) + ")";
      continue;
    }
    TypePtr type;
    // A top-level variable first assigned inside an enclosing loop has a placeholder
    // type until the loop body assigns it (see emit_loop): the other side decides.
    auto pending = [&](const Binding* x) { return x && x->value->type() == pending_return_type_; };
    if (tb && eb && (pending(tb) || pending(eb))) {
      type = pending(tb) ? eb->value->type() : tb->value->type();
    } else if (tb && eb) {
      type = unify_types(tb->value->type(), eb->value->type());
      if (!type) {
        SourceError err(SourceError::Kind::Compile, range,
                        "variable '" + name + "' has type " + tb->value->type()->str() +
                            " in the 'if' branch but " + eb->value->type()->str() +
                            " in the 'else' branch");
        err.add_note(tb->range, "assigned " + tb->value->type()->str() + " here");
        err.add_note(eb->range, "assigned " + eb->value->type()->str() + " here");
        throw err;
      }
    } else {
      type = (tb ? tb : eb)->value->type();
    }
    auto value_in = [&](Block* b, Scope* s, Binding* binding) -> Value* {
      if (binding) return binding->value;
      // This side never reaches the merge or never assigned the name: a placeholder.
      Binding* found = s->find(name);
      if (found && (is_flag(name) || !(b == then_block ? drop_then : drop_else)))
        return found->value;
      InsertPointGuard g(graph_, b);
      Node* u = graph_.insert(graph_.create(OpId::Uninitialized, {}, 1));
      u->output()->set_type(type);
      return u->output();
    };
    Value* tv = value_in(then_block, &then_scope, tb);
    Value* ev = value_in(else_block, &else_scope, eb);
    if (!tv->type()->equals(*type) && tv->type() != pending_return_type_) {
      InsertPointGuard g(graph_, then_block);
      tv = convert_to(tv, type, range, "variable '" + name + "'");
    }
    if (!ev->type()->equals(*type) && ev->type() != pending_return_type_) {
      InsertPointGuard g(graph_, else_block);
      ev = convert_to(ev, type, range, "variable '" + name + "'");
    }
    then_block->add_return(tv);
    else_block->add_return(ev);
    Value* out = n->add_output()->set_type(type);
    if (!is_flag(name)) out->set_debug_name(name);
    if (top_level_maybe && (!tb || !eb) && !outer && !(then_exits || else_exits)) {
      maybe_undefined_[name] = "it is assigned only in one branch";
      scope_->set(name, {out, (tb ? tb : eb)->range});
      continue;
    }
    scope_->set(name, {out, (tb ? tb : eb)->range});
  }
  return n;
}

bool Emitter::emit_if(const ast::If& s, const ast::Body& body, size_t rest) {
  Value* cond = to_bool(emit_expr(*s.cond), s.cond->range, "an 'if' condition");

  std::vector<Refinement> refinements = refinements_of(*s.cond);

  // Where the rest of the block goes: into the branch that does not always exit
  // when the other one does (statically known), else after the If.
  bool has_rest = rest < body.size();
  bool then_always = always_exits(s.body, exits_memo_);
  bool else_always = always_exits(s.orelse, exits_memo_);
  bool rest_in_then = has_rest && else_always && !then_always;
  bool rest_in_else = has_rest && then_always && !else_always;
  bool then_exits = false, else_exits = false;
  emit_branches(
      cond, s.range,
      [&] {
        refine(refinements, true, s.cond->range);
        bool exits = emit_stmts(s.body);
        if (rest_in_then && !exits) exits = emit_rest(exits_of(s.body, false), body, rest, s.range);
        return exits;
      },
      [&] {
        refine(refinements, false, s.cond->range);
        bool exits = emit_stmts(s.orelse);
        if (rest_in_else && !exits)
          exits = emit_rest(exits_of(s.orelse, false), body, rest, s.range);
        return exits;
      },
      &then_exits, &else_exits);
  if (!has_rest || rest_in_then || rest_in_else || (then_exits && else_exits)) {
    return then_exits && else_exits;
  }
  return emit_rest(exits_of(s, false), body, rest, s.range);
}

// ---- Optional refinement -------------------------------------------------------------------

// The Optional names a condition refines, as TorchScript reads them: `x is not None`
// (or `x != None`) refines x where it holds, `x is None` where it fails; `a and b`
// refines where it holds what either refines there, and where it fails only what is
// refined both where a fails and where a holds but b fails (`a is None and b is None`
// failing refines neither); `a or b` the other way round; `not c` swaps the sides.
std::vector<Refinement> Emitter::refinements_of(const ast::Expr& cond) {
  // The names refined where a condition holds and where it fails, in source order.
  using Names = std::vector<std::string>;
  struct Sides {
    Names holds, fails;
  };
  auto has = [](const Names& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  auto join = [&](Names a, const Names& b) {
    for (const std::string& n : b) {
      if (!has(a, n)) a.push_back(n);
    }
    return a;
  };
  auto meet = [&](const Names& a, const Names& b) {
    Names out;
    for (const std::string& n : a) {
      if (has(b, n)) out.push_back(n);
    }
    return out;
  };
  std::function<Sides(const ast::Expr&)> sides = [&](const ast::Expr& e) -> Sides {
    if (e.kind == ast::ExprKind::BoolOp) {
      const auto& b = ast::as<ast::BoolOp>(e);
      Sides l = sides(*b.lhs), r = sides(*b.rhs);
      if (b.op == ast::BoolOpKind::And) {
        // `l and r` fails where l fails, or where l holds and r fails.
        return {join(l.holds, r.holds), meet(l.fails, join(l.holds, r.fails))};
      }
      // `l or r` holds where l holds, or where l fails and r holds.
      return {meet(l.holds, join(l.fails, r.holds)), join(l.fails, r.fails)};
    }
    if (e.kind == ast::ExprKind::Unary && ast::as<ast::Unary>(e).op == ast::UnaryOp::Not) {
      Sides o = sides(*ast::as<ast::Unary>(e).operand);
      return {o.fails, o.holds};
    }
    if (e.kind != ast::ExprKind::Compare) return {};
    const auto& c = ast::as<ast::Compare>(e);
    if (c.ops.size() != 1 || c.operands[0]->kind != ast::ExprKind::Name ||
        c.operands[1]->kind != ast::ExprKind::None) {
      return {};
    }
    bool is_not = c.ops[0] == ast::CmpOp::IsNot || c.ops[0] == ast::CmpOp::Ne;
    bool is = c.ops[0] == ast::CmpOp::Is || c.ops[0] == ast::CmpOp::Eq;
    if (!is && !is_not) return {};
    const std::string& name = ast::as<ast::Name>(*c.operands[0]).id;
    return is_not ? Sides{{name}, {}} : Sides{{}, {name}};
  };
  Sides both = sides(cond);
  std::vector<Refinement> out;
  for (const std::string& n : both.holds) out.push_back({n, true});
  for (const std::string& n : both.fails) out.push_back({n, false});
  return out;
}

// Refines, in the current scope, the names that `refinements` refines where the
// condition `holds` (true) or fails (false): each reads as its unwrapped value.
void Emitter::refine(const std::vector<Refinement>& refinements, bool holds,
                     const SourceRange& range) {
  for (const Refinement& r : refinements) {
    if (r.when_true != holds) continue;
    Binding* b = lookup_local(r.name);
    Value* v = b ? b->value : nullptr;
    if (!v && unit_.find_global(qualified(r.name)) &&
        !(mode_ == Mode::Function && locals_.count(r.name))) {
      v = read_variable(r.name, range);
    }
    if (!v || v->type()->kind() != TypeKind::Optional) continue;
    Value* u = graph_.insert_op(OpId::unwrap_optional, {v}, v->type()->element(), range);
    u->set_debug_name(r.name);
    // A refinement, not an assignment: the merge ignores it unless the branch
    // reassigns the name.
    scope_->refine(r.name, {u, b ? b->range : range});
  }
}

// Emits `e` into block `b` with the names `refinements` refines where its condition
// holds (or fails) refined: the branches of `c if x is not None else d`, the right
// operand of `x is not None and f(x)`.
Value* Emitter::emit_refined(const ast::Expr& e, Block* b,
                             const std::vector<Refinement>& refinements, bool holds,
                             const SourceRange& range) {
  Scope inner(scope_);
  return with_block(graph_, block_, scope_, b, &inner, [&] {
    refine(refinements, holds, range);
    return emit_expr(e);
  });
}

// The statements after one that may have left through return, break or continue (the
// exits `may` lists) run only if none was taken: each flag that may be set guards them.
// This holds wherever the rest is emitted, after the statement or moved into one of
// its branches (an `elif` whose own branch returns, say).
bool Emitter::emit_rest(const Exits& may, const ast::Body& body, size_t rest,
                        const SourceRange& range) {
  std::vector<const char*> flags;
  if (may.ret && lookup_local(kReturned)) flags.push_back(kReturned);
  if (may.brk && lookup_local(kBroke)) flags.push_back(kBroke);
  if (may.cont && lookup_local(kContinued)) flags.push_back(kContinued);
  std::function<bool(size_t)> guarded = [&](size_t k) -> bool {
    if (k == flags.size()) return emit_stmts(body, rest);
    Value* flag = read_variable(flags[k], range);
    Value* go_on = graph_.insert_op(OpId::not_bool, {flag}, Type::bool_(), range);
    bool rest_exits = false;
    emit_branches(
        go_on, range, [&] { return guarded(k + 1); }, [] { return false; }, &rest_exits);
    return rest_exits;
  };
  return guarded(0);
}

// ---- Loops -----------------------------------------------------------------------------------

void Emitter::emit_loop(Value* trip_count, Value* first_cond, const ast::Body& body,
                        const SourceRange& range, const std::function<void(Value*)>& prologue,
                        const ast::Expr* while_cond,
                        const std::function<void()>& after_normal_exit) {
  Exits may = exits_of(body, false);
  if (may.ret && mode_ == Mode::TopLevel) {
    compile_error(range, "'return' outside function");
  }
  std::vector<std::string> assigned;
  collect_assigned(body, assigned);
  std::vector<std::string> item_assigned;
  collect_item_assigned(body, item_assigned);
  for (const std::string& name : item_assigned) {
    // A dict written by `d[k] = v` stays the same object: nothing to carry (and
    // autodiff follows its entries only while it is not carried).
    Binding* b = lookup_local(name);
    if (b && b->value->type()->kind() != TypeKind::Dict) assigned.push_back(name);
  }
  if (may.brk) write_variable(kBroke, constant(IValue(false), Type::bool_(), range), range);
  std::vector<std::string> carried;
  std::vector<Value*> initial;
  for (const std::string& name : unique_names(assigned)) {
    Binding* b = lookup_local(name);
    if (b) {
      carried.push_back(name);
      initial.push_back(b->value);
    } else if (mode_ == Mode::TopLevel && !(unit_.find_global(qualified(name)))) {
      // New at the top level: visible after the loop as in Python, through a
      // placeholder whose type the body decides.
      carried.push_back(name);
      Node* u = graph_.insert(graph_.create(OpId::Uninitialized, {}, 1));
      u->output()->set_type(pending_return_type_);
      initial.push_back(u->output());
    } else if (mode_ == Mode::TopLevel) {
      carried.push_back(name);
      initial.push_back(read_variable(name, range));
    }
  }
  if (may.brk) {
    carried.push_back(kBroke);
    initial.push_back(lookup_local(kBroke)->value);
  }
  if (may.ret) {
    carried.push_back(kReturned);
    initial.push_back(lookup_local(kReturned)->value);
    Binding* ret = lookup_local(kRet);
    Value* init = ret ? ret->value : nullptr;
    if (!init) {
      Node* u = graph_.insert(graph_.create(OpId::Uninitialized, {}, 1));
      u->output()->set_type(return_type_ ? return_type_ : pending_return_type_);
      init = u->output();
    }
    carried.push_back(kRet);
    initial.push_back(init);
  }

  std::vector<Value*> inputs = {trip_count, first_cond};
  inputs.insert(inputs.end(), initial.begin(), initial.end());
  Node* loop = graph_.insert(graph_.create(OpId::Loop, inputs, 0));
  loop->set_range(range);
  Block* b = loop->add_block();
  Value* index = b->add_param(Type::int_(), "");
  Scope body_scope(scope_);
  std::vector<Value*> params;
  for (size_t k = 0; k < carried.size(); ++k) {
    Value* p = b->add_param(initial[k]->type(), is_flag(carried[k]) ? "" : carried[k]);
    params.push_back(p);
    body_scope.set(carried[k], {p, range});
  }
  loops_.push_back({may.brk, may.cont});
  ++loop_depth_;
  with_block(graph_, block_, scope_, b, &body_scope, [&] {
    prologue(index);
    if (may.cont) write_variable(kContinued, constant(IValue(false), Type::bool_(), range), range);
    emit_stmts(body);
    // The condition for the next iteration: no break, no return, and the while
    // condition again (evaluated only when still running).
    std::function<Value*(size_t)> next = [&](size_t stage) -> Value* {
      const char* flag = stage == 0   ? (may.ret ? kReturned : nullptr)
                         : stage == 1 ? (may.brk ? kBroke : nullptr)
                                      : nullptr;
      if (stage < 2) {
        if (!flag) return next(stage + 1);
        Value* f = read_variable(flag, range);
        Node* n = graph_.insert(graph_.create(OpId::If, {f}, 1));
        n->set_range(range);
        Block* t = n->add_block();
        Block* e = n->add_block();
        {
          InsertPointGuard g(graph_, t);
          t->add_return(constant(IValue(false), Type::bool_(), range));
        }
        {
          Block* saved = block_;
          block_ = e;
          InsertPointGuard g(graph_, e);
          e->add_return(next(stage + 1));
          block_ = saved;
        }
        return n->output()->set_type(Type::bool_());
      }
      if (!while_cond) return constant(IValue(true), Type::bool_(), range);
      return to_bool(emit_expr(*while_cond), while_cond->range, "a 'while' condition");
    };
    b->add_return(next(0));
    for (size_t k = 0; k < carried.size(); ++k) {
      Binding* cur = scope_->find(carried[k]);
      Value* v = cur->value;
      Value* p = params[k];
      if (p->type() == pending_return_type_ && v->type() != pending_return_type_) {
        // The placeholder learns its type from the body.
        p->set_type(v->type());
        initial[k]->set_type(v->type());
      } else if (!v->type()->equals(*p->type())) {
        TypePtr unified = unify_types(p->type(), v->type());
        if (unified && unified->equals(*p->type())) {
          v = convert_to(v, p->type(), cur->range, "variable '" + carried[k] + "'");
        } else {
          SourceError err(SourceError::Kind::Compile, cur->range,
                          "variable '" + carried[k] + "' has type " + p->type()->str() +
                              " before the loop but is assigned " + v->type()->str() + " in it");
          throw err;
        }
      }
      b->add_return(v);
    }
    return 0;
  });
  --loop_depth_;
  loops_.pop_back();
  for (size_t k = 0; k < carried.size(); ++k) {
    Value* out = loop->add_output()->set_type(params[k]->type());
    if (!is_flag(carried[k])) out->set_debug_name(carried[k]);
    if (initial[k]->type() == pending_return_type_ && !is_flag(carried[k])) {
      // Never assigned in the body after all (only read): nothing to carry.
      maybe_undefined_[carried[k]] = "it is only assigned inside the loop";
    }
    scope_->set(carried[k], {out, range});
  }
  // Variables first assigned in the body are not defined after a function's loop.
  for (const std::string& name : unique_names(assigned)) {
    if (!scope_->find(name)) {
      maybe_undefined_[name] = "it is assigned only inside the loop at " + line_of(range);
    }
  }
  if (after_normal_exit) emit_after_normal_exit(may, range, after_normal_exit);
  if (may.brk) scope_->set(kBroke, {constant(IValue(false), Type::bool_(), range), range});
}

// Runs `fn` after a loop unless a `break` or `return` left it (the flags the loop just
// carried out tell).
void Emitter::emit_after_normal_exit(const Exits& may, const SourceRange& range,
                                     const std::function<void()>& fn) {
  std::vector<const char*> flags;
  if (may.brk) flags.push_back(kBroke);
  if (may.ret) flags.push_back(kReturned);
  std::function<void(size_t)> unless = [&](size_t k) {
    if (k == flags.size()) return fn();
    emit_branches(
        read_variable(flags[k], range), range, [] { return false; },
        [&] {
          unless(k + 1);
          return false;
        });
  };
  unless(0);
}

void Emitter::emit_while(const ast::While& s) {
  Value* cond = to_bool(emit_expr(*s.cond), s.cond->range, "a 'while' condition");
  Value* trip = constant(IValue(std::numeric_limits<int64_t>::max()), Type::int_(), s.range);
  emit_loop(
      trip, cond, s.body, s.range, [](Value*) {}, s.cond.get());
}

// `for x in progress(xs, desc="...")`: the loop over xs, reporting its progress
// (Note [Progress lines] in runtime/kernels/scalar_ops.cpp). Null unless `iter` is
// such a call; `desc` gets its description.
const ast::Expr* Emitter::progress_iterable(const ast::Expr& iter, Value*& desc) {
  if (iter.kind != ast::ExprKind::Call) return nullptr;
  const auto& c = ast::as<ast::Call>(iter);
  if (c.func->kind != ast::ExprKind::Name || ast::as<ast::Name>(*c.func).id != "progress" ||
      lookup_local("progress") || unit_.find_global(qualified("progress")) ||
      unit_.find_function(qualified("progress")))
    return nullptr;
  const ast::Expr* desc_expr = c.args.size() == 2 ? c.args[1].get() : nullptr;
  for (const auto& k : c.keywords) {
    if (k.name != "desc" || desc_expr)
      compile_error(k.range, "progress() takes an iterable and desc=, not '" + k.name + "'");
    desc_expr = k.value.get();
  }
  if (c.args.empty() || c.args.size() > 2)
    compile_error(c.range, "progress() takes an iterable (and desc=)");
  desc = desc_expr ? emit_expr(*desc_expr) : constant(IValue(std::string()), Type::str_(), c.range);
  if (desc->type()->kind() != TypeKind::Str)
    compile_error(desc_expr->range, "progress(): desc must be str, not " + desc->type()->str());
  return c.args[0].get();
}

void Emitter::emit_for(const ast::For& s) {
  Value* progress_desc = nullptr;
  const ast::Expr* inner = progress_iterable(*s.iter, progress_desc);
  const ast::Expr& iter = inner ? *inner : *s.iter;
  Value* trip = nullptr;
  std::function<void(Value*)> prologue;
  std::function<void()> after_normal_exit;  // Python's last next() of a dict iterator
  const ast::Expr& target = *s.target;
  auto is_call_to = [&](const char* name) {
    if (iter.kind != ast::ExprKind::Call) return false;
    const auto& c = ast::as<ast::Call>(iter);
    return c.func->kind == ast::ExprKind::Name && ast::as<ast::Name>(*c.func).id == name &&
           !lookup_local(name) && !unit_.find_global(qualified(name)) &&
           !unit_.find_function(qualified(name));
  };
  if (is_call_to("range")) {
    const auto& c = ast::as<ast::Call>(iter);
    if (!c.keywords.empty() || c.args.empty() || c.args.size() > 3) {
      compile_error(c.range, "range() takes 1 to 3 positional arguments");
    }
    std::vector<Value*> a;
    for (const auto& e : c.args) {
      Value* v = emit_expr(*e);
      if (v->type()->kind() != TypeKind::Int) {
        compile_error(e->range, "range() arguments must be int, not " + v->type()->str());
      }
      a.push_back(v);
    }
    Value* start = a.size() >= 2 ? a[0] : constant(IValue(int64_t{0}), Type::int_(), c.range);
    Value* end = a.size() >= 2 ? a[1] : a[0];
    Value* step = a.size() == 3 ? a[2] : constant(IValue(int64_t{1}), Type::int_(), c.range);
    trip = graph_.insert_op(OpId::range_length, {start, end, step}, Type::int_(), c.range);
    bool simple = a.size() == 1;
    prologue = [=, this, &target, &s](Value* index) {
      Value* v = index;
      if (!simple) {
        Value* scaled = graph_.insert_op(OpId::mul_int, {index, step}, Type::int_(), s.iter->range);
        v = graph_.insert_op(OpId::add_int, {start, scaled}, Type::int_(), s.iter->range);
      }
      assign_target(target, v, s.target->range);
    };
  } else if (is_call_to("enumerate") || is_call_to("zip")) {
    const auto& c = ast::as<ast::Call>(iter);
    bool enumerate = is_call_to("enumerate");
    std::vector<Value*> seqs;
    for (const auto& e : c.args) seqs.push_back(emit_expr(*e));
    if (seqs.empty() || (enumerate && seqs.size() != 1)) {
      compile_error(c.range,
                    enumerate ? "enumerate() takes one list or tensor" : "zip() needs lists");
    }
    auto length = [&](Value* v, const SourceRange& r) -> Value* {
      if (v->type()->kind() == TypeKind::List)
        return graph_.insert_op(OpId::len_list, {v}, Type::int_(), r);
      if (v->type()->is_tensor()) return graph_.insert_op(OpId::len_tensor, {v}, Type::int_(), r);
      compile_error(r, "cannot iterate over a value of type " + v->type()->str());
    };
    trip = length(seqs[0], c.args[0]->range);
    for (size_t k = 1; k < seqs.size(); ++k) {
      trip = graph_.insert_op(OpId::min_int, {trip, length(seqs[k], c.args[k]->range)},
                              Type::int_(), c.range);
    }
    prologue = [=, this, &target, &s](Value* index) {
      std::vector<Value*> items;
      if (enumerate) items.push_back(index);
      for (Value* seq : seqs) {
        if (seq->type()->kind() == TypeKind::List) {
          items.push_back(graph_.insert_op(OpId::getitem_list, {seq, index}, seq->type()->element(),
                                           s.iter->range));
        } else {
          Value* zero = constant(IValue(int64_t{0}), Type::int_(), s.iter->range);
          items.push_back(
              graph_.insert_op(OpId::select, {seq, zero, index}, Type::tensor(), s.iter->range));
        }
      }
      std::vector<TypePtr> types;
      for (Value* v : items) types.push_back(v->type());
      Node* tup = graph_.insert(graph_.create(OpId::TupleConstruct, items, 1));
      tup->output()->set_type(Type::tuple(types));
      assign_target(target, tup->output(), s.target->range);
    };
  } else {
    Value* seq = emit_expr(iter);
    TypePtr t = seq->type();
    if (std::optional<DictIteration> it = dict_iteration(seq, iter.range)) {
      trip = it->size;
      prologue = [=, this, &target, &s](Value* index) {
        assign_target(target, dict_iteration_item(*it, index, s.iter->range), s.target->range);
      };
      after_normal_exit = [=, this, &s] { check_dict_size(*it, s.iter->range); };
    } else if (t->kind() == TypeKind::List) {
      trip = graph_.insert_op(OpId::len_list, {seq}, Type::int_(), iter.range);
      prologue = [=, this, &target, &s](Value* index) {
        Value* item =
            graph_.insert_op(OpId::getitem_list, {seq, index}, t->element(), s.iter->range);
        assign_target(target, item, s.target->range);
      };
    } else if (t->is_tensor()) {
      trip = graph_.insert_op(OpId::len_tensor, {seq}, Type::int_(), iter.range);
      prologue = [=, this, &target, &s](Value* index) {
        Value* zero = constant(IValue(int64_t{0}), Type::int_(), s.iter->range);
        Value* row =
            graph_.insert_op(OpId::select, {seq, zero, index}, Type::tensor(), s.iter->range);
        assign_target(target, row, s.target->range);
      };
    } else {
      compile_error(iter.range, "cannot iterate over a value of type " + t->str() +
                                    " (a for loop takes range(...), a list, a dict or a tensor)");
    }
  }
  Value* yes = constant(IValue(true), Type::bool_(), s.range);
  if (!progress_desc) {
    emit_loop(trip, yes, s.body, s.range, prologue, nullptr, after_normal_exit);
    return;
  }
  Value* handle =
      graph_.insert_op(OpId::progress_start, {trip, progress_desc}, Type::int_(), s.iter->range);
  auto report = [=, this, &s](Value* index) {
    graph_.insert(graph_.create(OpId::progress_step, {handle, index}, 0))->set_range(s.iter->range);
    prologue(index);
  };
  emit_loop(trip, yes, s.body, s.range, report, nullptr, after_normal_exit);
  graph_.insert(graph_.create(OpId::progress_end, {handle}, 0))->set_range(s.iter->range);
}

// ---- Simple statements -------------------------------------------------------------------------

void Emitter::emit_return(const ast::Return& s) {
  if (mode_ != Mode::Function) compile_error(s.range, "'return' outside function");
  Value* v = s.value ? emit_expr(*s.value, decl_->declared_return) : none(s.range);
  const SourceRange& r = s.value ? s.value->range : s.range;
  if (decl_->declared_return) {
    v = convert_to(v, decl_->declared_return, r, "return value of '" + decl_->name + "'");
  } else if (!return_type_) {
    return_type_ = v->type();
    return_range_ = r;
  } else if (!v->type()->equals(*return_type_)) {
    TypePtr unified = unify_types(return_type_, v->type());
    if (!unified) {
      SourceError err(SourceError::Kind::Compile, r,
                      "'" + decl_->name + "' returns " + v->type()->str() + " here but " +
                          return_type_->str() + " elsewhere (annotate the return type to choose)");
      err.add_note(return_range_, "returns " + return_type_->str() + " here");
      throw err;
    }
    return_type_ = unified;
    v = convert_to(v, unified, r, "return value");
  }
  if (!return_range_.valid()) return_range_ = r;
  write_variable(kRet, v, s.range);
  if (needs_return_flag_)
    write_variable(kReturned, constant(IValue(true), Type::bool_(), s.range), s.range);
}

void Emitter::emit_assert(const ast::Assert& s) {
  Value* cond = to_bool(emit_expr(*s.test), s.test->range, "an assert condition");
  emit_branches(
      cond, s.range, [] { return false; },
      [&] {
        Value* msg;
        if (s.msg) {
          Value* m = emit_expr(*s.msg);
          if (m->type()->kind() != TypeKind::Str)
            m = graph_.insert_op(OpId::Str, {m}, Type::str_(), s.msg->range);
          Value* prefix = constant(IValue(std::string("AssertionError: ")), Type::str_(), s.range);
          msg = graph_.insert_op(OpId::add_str, {prefix, m}, Type::str_(), s.range);
        } else {
          msg = constant(IValue(std::string("AssertionError")), Type::str_(), s.range);
        }
        Node* raise = graph_.insert(graph_.create(OpId::RaiseException, {msg}, 0));
        raise->set_range(s.range);
        return true;
      });
  // Past `assert x is not None`, x is not None.
  refine(refinements_of(*s.test), true, s.test->range);
}

void Emitter::emit_raise(const ast::Raise& s) {
  std::string kind = "Exception";
  Value* msg = nullptr;
  if (s.exc && s.exc->kind == ast::ExprKind::Call) {
    const auto& c = ast::as<ast::Call>(*s.exc);
    if (c.func->kind == ast::ExprKind::Name) kind = ast::as<ast::Name>(*c.func).id;
    if (!c.args.empty()) {
      msg = emit_expr(*c.args[0]);
      if (msg->type()->kind() != TypeKind::Str)
        msg = graph_.insert_op(OpId::Str, {msg}, Type::str_(), c.args[0]->range);
    }
  } else if (s.exc && s.exc->kind == ast::ExprKind::Name) {
    kind = ast::as<ast::Name>(*s.exc).id;
  } else if (!s.exc) {
    compile_error(
        s.range,
        "a bare 'raise' is not supported: raise an exception such as Exception(\"message\")");
  }
  Value* prefix = constant(IValue(kind + (msg ? ": " : "")), Type::str_(), s.range);
  Value* full =
      msg ? graph_.insert_op(OpId::add_str, {prefix, msg}, Type::str_(), s.range) : prefix;
  Node* raise = graph_.insert(graph_.create(OpId::RaiseException, {full}, 0));
  raise->set_range(s.range);
}

void Emitter::emit_with(const ast::With& s) {
  for (const auto& item : s.items) {
    const ast::Expr& e = *item.context;
    bool ok = false;
    if (e.kind == ast::ExprKind::Call) {
      const auto& c = ast::as<ast::Call>(e);
      std::string name;
      if (c.func->kind == ast::ExprKind::Name) name = ast::as<ast::Name>(*c.func).id;
      if (c.func->kind == ast::ExprKind::Attribute) {
        const auto& a = ast::as<ast::Attribute>(*c.func);
        if (a.value->kind == ast::ExprKind::Name && ast::as<ast::Name>(*a.value).id == "torch")
          name = a.attr;
      }
      ok = name == "no_grad" && c.args.empty() && c.keywords.empty();
    }
    if (!ok)
      compile_error(e.range, "only `with no_grad():` (or `with torch.no_grad():`) is supported");
    if (item.target) compile_error(item.target->range, "`with no_grad()` takes no `as` target");
  }
  // Top-level code switches grad mode off for the body and back to what it was
  // (runtime/autograd records no op while it is off).
  if (mode_ != Mode::TopLevel) {
    // Compiled functions record nothing; their symbolic gradients must still see
    // no gradient through the block: its tensor reads are detached (emit_expr).
    ++no_grad_depth_;
    emit_stmts(s.body);
    --no_grad_depth_;
    return;
  }
  Value* off = constant(IValue(false), Type::bool_(), s.range);
  Node* enter = graph_.insert(graph_.create(OpId::set_grad_enabled, {off}, 1));
  enter->set_range(s.range);
  Value* previous = enter->output()->set_type(Type::bool_());
  emit_stmts(s.body);
  Node* exit = graph_.insert(graph_.create(OpId::set_grad_enabled, {previous}, 1));
  exit->set_range(s.range);
  exit->output()->set_type(Type::bool_());
}

void Emitter::emit_expr_stmt(const ast::ExprStmt& s) {
  Value* v = emit_expr(*s.value);
  if (mode_ == Mode::TopLevel && repl_mode_ && compound_depth_ == 0 &&
      v->type()->kind() != TypeKind::None) {
    scope_->set(kEcho, {v, s.range});
  }
}

void Emitter::emit_assign(const ast::Assign& s) {
  TypePtr hint;
  if (s.targets.size() == 1 && s.targets[0]->kind == ast::ExprKind::Name) {
    auto it = annotated_.find(ast::as<ast::Name>(*s.targets[0]).id);
    if (it != annotated_.end()) hint = it->second;
  }
  Value* v = emit_expr(*s.value, hint);
  for (const auto& t : s.targets) assign_target(*t, v, t->range);
}

// `x op= e` follows Python: on a tensor it updates the tensor in place (PyTorch's
// __iadd__ and friends), so every alias sees it; on numbers, strings and lists it
// rebinds. `x @= e` rebinds (PyTorch has no in-place matmul).
void Emitter::emit_aug_assign(const ast::AugAssign& s) {
  if (s.target->kind == ast::ExprKind::Subscript) {
    emit_aug_setitem(ast::as<ast::Subscript>(*s.target), s.op, *s.value, s.range);
    return;
  }
  if (s.target->kind != ast::ExprKind::Name) {
    compile_error(s.target->range, "augmented assignment works on names and subscripts only");
  }
  const std::string& name = ast::as<ast::Name>(*s.target).id;
  Value* current = emit_expr(*s.target);  // as a read (detached under no_grad)
  Value* rhs = emit_expr(*s.value);
  if (current->type()->is_tensor() && s.op != ast::BinOp::MatMul) {
    Value* updated = emit_inplace(s.op, current, rhs, s.range);
    // Under no_grad the update went through a detached alias of the tensor; the name
    // keeps the tensor itself (updated too: they share storage), so `x.grad` and
    // later reads still see x.
    if (no_grad_reads_.count(current)) updated = current->node()->input(0);
    write_variable(name, updated, s.target->range);
    return;
  }
  Value* v = emit_binary(s.op, current, rhs, s.range);
  write_variable(name, v, s.target->range);
}

// ---- Item assignment -----------------------------------------------------------------------

// `x[i] = v`: a tensor is written in place through the view its basic indices select
// (copy_, or fill_ for a number) or, with tensor indices, by index_put_ (values take
// x's dtype, as Tensor.__setitem__ converts them); a list's element is replaced.
void Emitter::emit_setitem(const ast::Subscript& target, Value* v, const SourceRange& range) {
  Value* base = emit_expr(*target.value);
  const TypePtr& t = base->type();
  if (t->kind() == TypeKind::List) {
    Value* i = list_index(target);
    Value* elem = convert_to(v, t->element(), range, "list element");
    graph_.insert(graph_.create(OpId::setitem_list, {base, i, elem}, 0))->set_range(range);
    return;
  }
  if (t->kind() == TypeKind::Dict) return emit_dict_setitem(base, target, v, range);
  if (!t->is_tensor()) {
    compile_error(target.value->range,
                  "'" + t->str() + "' object does not support item assignment");
  }
  v = unwrap_grad_read(graph_, v, range);
  Value* place = emit_tensor_index(base, target);
  Node* last = place->node();
  if (place != base && last->op() == OpId::index) {
    write_indexed(last, v, range);
  } else if (v->type()->is_number()) {
    emit_ops({OpId::fill_}, {{range, "", place}, {range, "", v}}, range, "item assignment");
  } else {
    emit_ops({OpId::copy_}, {{range, "", place}, {range, "", v}}, range, "item assignment");
  }
  rebind_updated(*target.value, base);
}

// After an item assignment into `x[...]`, a local x is assigned its own (updated) value
// again: branches and loops then pass it on as a value, which is what lets autodiff
// follow the update (ir/autodiff/functionalize.h).
void Emitter::rebind_updated(const ast::Expr& base_expr, Value* base) {
  if (base_expr.kind != ast::ExprKind::Name) return;
  const std::string& name = ast::as<ast::Name>(base_expr).id;
  if (!lookup_local(name)) return;
  // Under no_grad the update went through a detached read: the name keeps the tensor.
  if (no_grad_reads_.count(base)) base = base->node()->input(0);
  write_variable(name, base, base_expr.range);
}

// The int index of `xs[i]` as an assignment target.
Value* Emitter::list_index(const ast::Subscript& target) {
  if (target.indices.size() != 1 || target.indices[0]->kind == ast::ExprKind::Slice)
    compile_error(target.range, "list slice assignment is not supported");
  Value* i = emit_expr(*target.indices[0]);
  if (i->type()->kind() != TypeKind::Int)
    compile_error(target.indices[0]->range, "list indices must be int, not " + i->type()->str());
  return i;
}

// index(self, indices) (the read of x[idx] with tensor indices) turned into the write
// index_put_(self, indices, v converted to self's dtype); the read goes.
void Emitter::write_indexed(Node* read, Value* v, const SourceRange& range) {
  Value* self = read->input(0);
  Value* dtype = graph_.insert_op(OpId::dtype, {self}, Type::dtype(), range);
  if (v->type()->is_number()) {
    v = emit_ops({OpId::scalar_tensor}, {{range, "", v}}, range, "item assignment");
  } else if (!v->type()->is_tensor()) {
    compile_error(range,
                  "can only assign a tensor or a number to a tensor item, not " + v->type()->str());
  }
  Value* values = graph_.insert_op(OpId::to_dtype, {v, dtype}, Type::tensor(), range);
  Value* indices = read->input(1);
  Value* no = constant(IValue(false), Type::bool_(), range);
  graph_.insert_op(OpId::index_put_, {self, indices, values, no}, self->type(), range);
  if (!read->output()->has_uses()) read->destroy();
}

// `x[i] += v`: Python reads x[i], updates it in place and writes it back. Through a
// view (basic indices) the update itself writes x; with tensor indices the read is a
// copy, written back by index_put_. On a list the element is rebound.
void Emitter::emit_aug_setitem(const ast::Subscript& target, ast::BinOp op, const ast::Expr& value,
                               const SourceRange& range) {
  Value* base = emit_expr(*target.value);
  const TypePtr& t = base->type();
  if (t->kind() == TypeKind::List) {
    Value* i = list_index(target);
    Value* current = read_under_no_grad(
        graph_.insert_op(OpId::getitem_list, {base, i}, t->element(), range), range);
    Value* rhs = emit_expr(value);
    // A tensor element is updated in place, as `tmp = xs[i]; tmp += v` does.
    bool in_place = current->type()->is_tensor() && op != ast::BinOp::MatMul;
    Value* updated =
        in_place ? emit_inplace(op, current, rhs, range) : emit_binary(op, current, rhs, range);
    // Under no_grad the update went through a detached alias: the list keeps the
    // element itself (updated too: they share storage).
    if (in_place && no_grad_reads_.count(current)) updated = current->node()->input(0);
    Value* elem = convert_to(updated, t->element(), range, "list element");
    graph_.insert(graph_.create(OpId::setitem_list, {base, i, elem}, 0))->set_range(range);
    return;
  }
  if (t->kind() == TypeKind::Dict) return emit_dict_aug_setitem(base, target, op, value, range);
  if (!t->is_tensor()) {
    compile_error(target.value->range,
                  "'" + t->str() + "' object does not support item assignment");
  }
  Value* place = emit_tensor_index(base, target);
  Value* rhs = emit_expr(value);
  Node* last = place->node();
  if (place != base && last->op() == OpId::index) {
    Value* updated = emit_inplace(op, place, rhs, range);
    write_indexed(last, updated, range);
  } else {
    emit_inplace(op, place, rhs, range);
  }
  rebind_updated(*target.value, base);
}

// self op= rhs on a tensor, in place; returns self (the updated tensor). Where the
// table has an in-place row of the operator's op (add_, sub_, mul_, div_: PyTorch's
// dtype and broadcast checks) it is that; the others compute out of place and copy back
// into self.
Value* Emitter::emit_inplace(ast::BinOp op, Value* self, Value* rhs, const SourceRange& range) {
  self = unwrap_grad_read(graph_, self, range);
  const std::vector<OpId>& in_place = inplace_overloads(op);
  if (in_place.empty()) {
    Value* result = emit_binary(op, self, rhs, range);
    return emit_ops({OpId::copy_}, {{range, "", self}, {range, "", result}}, range, "copy_");
  }
  std::string symbol = std::string(ast::binop_symbol(op)) + "=";
  return emit_ops(in_place, {{range, "", self}, {range, "", rhs}}, range, symbol);
}

void Emitter::emit_ann_assign(const ast::AnnAssign& s) {
  if (s.target->kind != ast::ExprKind::Name) {
    compile_error(s.target->range, "an annotated assignment needs a plain name as its target");
  }
  const std::string& name = ast::as<ast::Name>(*s.target).id;
  TypePtr t = resolve_type(*s.annotation);
  if (!s.value) {
    annotated_[name] = t;
    return;
  }
  Value* v = emit_expr(*s.value, t);
  v = convert_to(v, t, s.value->range, "variable '" + name + "'");
  annotated_[name] = t;
  auto it = declared_.find(name);
  if (it != declared_.end() && !it->second.value->type()->equals(*t)) {
    SourceError err(SourceError::Kind::Compile, s.range,
                    "variable '" + name + "' is declared " + t->str() + " but already has type " +
                        it->second.value->type()->str());
    err.add_note(it->second.range, "'" + name + "' first assigned here");
    throw err;
  }
  if (mode_ == Mode::Function || compound_depth_ > 0) declared_[name] = {v, s.range};
  write_variable(name, v, s.target->range);
}

void Emitter::assign_target(const ast::Expr& target, Value* v, const SourceRange& range,
                            const TypePtr& declared) {
  switch (target.kind) {
    case ast::ExprKind::Name: {
      const std::string& name = ast::as<ast::Name>(target).id;
      if (v->type()->kind() == TypeKind::None && !annotated_.count(name)) {
        Binding* prev = lookup_local(name);
        if (prev && prev->value->type()->kind() == TypeKind::Optional) {
          v = convert_to(v, prev->value->type(), range, "variable '" + name + "'");
        }
      }
      write_variable(name, v, range);
      return;
    }
    case ast::ExprKind::Tuple:
    case ast::ExprKind::List: {
      const auto& elts = target.kind == ast::ExprKind::Tuple ? ast::as<ast::TupleExpr>(target).elts
                                                             : ast::as<ast::ListExpr>(target).elts;
      std::vector<Value*> parts;
      if (v->type()->kind() == TypeKind::Tuple) {
        if (v->type()->contained().size() != elts.size()) {
          compile_error(range, "cannot unpack a tuple of " +
                                   std::to_string(v->type()->contained().size()) + " values into " +
                                   std::to_string(elts.size()) + " targets");
        }
        Node* u = graph_.insert(graph_.create(OpId::TupleUnpack, {v}, elts.size()));
        u->set_range(range);
        for (size_t i = 0; i < elts.size(); ++i) {
          parts.push_back(u->output(i)->set_type(v->type()->contained()[i]));
        }
      } else if (v->type()->kind() == TypeKind::List) {
        Value* n = graph_.insert_op(OpId::len_list, {v}, Type::int_(), range);
        Value* expected = constant(IValue(static_cast<int64_t>(elts.size())), Type::int_(), range);
        Value* ok = graph_.insert_op(OpId::eq_int, {n, expected}, Type::bool_(), range);
        emit_branches(
            ok, range, [] { return false; },
            [&] {
              Value* msg =
                  constant(IValue("ValueError: cannot unpack a list of the wrong length into " +
                                  std::to_string(elts.size()) + " targets"),
                           Type::str_(), range);
              graph_.insert(graph_.create(OpId::RaiseException, {msg}, 0))->set_range(range);
              return true;
            });
        for (size_t i = 0; i < elts.size(); ++i) {
          Value* idx = constant(IValue(static_cast<int64_t>(i)), Type::int_(), range);
          parts.push_back(
              graph_.insert_op(OpId::getitem_list, {v, idx}, v->type()->element(), range));
        }
      } else {
        compile_error(range, "cannot unpack a value of type " + v->type()->str());
      }
      for (size_t i = 0; i < elts.size(); ++i) assign_target(*elts[i], parts[i], elts[i]->range);
      return;
    }
    case ast::ExprKind::Subscript:
      emit_setitem(ast::as<ast::Subscript>(target), v, range);
      return;
    case ast::ExprKind::Attribute: {
      // The writable attributes of eager autograd: `x.grad = None`, `x.requires_grad = b`.
      const auto& a = ast::as<ast::Attribute>(target);
      Value* object = emit_expr(*a.value);
      // Under no_grad a tensor is read detached; its autograd attributes are the
      // tensor's own (as emit_attribute_value reads them).
      if (no_grad_reads_.count(object)) object = object->node()->input(0);
      if (object->type()->is_tensor() && a.attr == "grad") {
        Value* g = convert_to(v, Type::optional(Type::tensor()), range, "Tensor.grad");
        graph_.insert(graph_.create(OpId::set_grad_attr, {object, g}, 0))->set_range(range);
        return;
      }
      if (object->type()->is_tensor() && a.attr == "requires_grad") {
        Value* b = convert_to(v, Type::bool_(), range, "Tensor.requires_grad");
        graph_.insert(graph_.create(OpId::set_requires_grad_attr, {object, b}, 0))
            ->set_range(range);
        return;
      }
      compile_error(target.range,
                    "assigning to an attribute is not supported (only Tensor.grad "
                    "and Tensor.requires_grad can be assigned)");
    }
    case ast::ExprKind::Starred:
      compile_error(target.range, "starred assignment targets are not supported");
    default:
      compile_error(target.range, "cannot assign to this expression");
  }
  (void)declared;
}

}  // namespace tsl
