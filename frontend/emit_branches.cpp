// Branches in the emitter: an If's two blocks and the variables they merge, `if`
// statements, Optional refinement (`if x is not None:`), and the statements after one
// that may exit. See Note [Emitting control flow].
#include "frontend/emit_scans.h"

#include <algorithm>

namespace tsl {

using namespace emit_scans;

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

}  // namespace tsl
