// Comprehensions in the emitter: `[e for x in xs if c]` and `{k: v for ...}` as loops
// that append to a new list or write a new dict, their targets in a scope of their own.
#include <functional>

#include "frontend/emitter.h"

namespace tsl {

// The loop of a comprehension: `target` bound to each item of `iter` in the
// comprehension's own scope and, where `cond` holds, `each` emitted in the body.
void Emitter::emit_comprehension_loop(const ast::Expr& target, const ast::Expr& iter,
                                      const ast::Expr* cond, const SourceRange& range,
                                      const std::function<void()>& each) {
  Value* trip;
  std::function<Value*(Value*)> item_at;
  std::optional<DictIteration> dict_it;
  bool is_range = iter.kind == ast::ExprKind::Call &&
                  ast::as<ast::Call>(iter).func->kind == ast::ExprKind::Name &&
                  ast::as<ast::Name>(*ast::as<ast::Call>(iter).func).id == "range" &&
                  !lookup_local("range") && !unit_.find_function(qualified("range"));
  if (is_range) {
    RangeLoop r = emit_range_loop(ast::as<ast::Call>(iter));
    trip = r.trip;
    item_at = [=, this, &iter](Value* index) { return range_item(r, index, iter.range); };
  } else {
    Value* seq = emit_expr(iter);
    TypePtr st = seq->type();
    if ((dict_it = dict_iteration(seq, iter.range))) {
      trip = dict_it->size;
      item_at = [=, this, &iter](Value* index) {
        return dict_iteration_item(*dict_it, index, iter.range);
      };
    } else if (st->kind() == TypeKind::List) {
      trip = graph_.insert_op(OpId::len_list, {seq}, Type::int_(), iter.range);
      item_at = [=, this, &iter](Value* index) {
        return graph_.insert_op(OpId::getitem_list, {seq, index}, st->element(), iter.range);
      };
    } else if (st->is_tensor()) {
      trip = graph_.insert_op(OpId::len_tensor, {seq}, Type::int_(), iter.range);
      item_at = [=, this, &iter](Value* index) {
        Value* zero = constant(IValue(int64_t{0}), Type::int_(), iter.range);
        return graph_.insert_op(OpId::select, {seq, zero, index}, Type::tensor(), iter.range);
      };
    } else {
      compile_error(iter.range, "cannot iterate over a value of type " + st->str());
    }
  }
  Value* yes = constant(IValue(true), Type::bool_(), range);
  Node* loop = graph_.insert(graph_.create(OpId::Loop, {trip, yes}, 0));
  loop->set_range(range);
  Block* body = loop->add_block();
  Value* index = body->add_param(Type::int_());
  Scope scope(scope_);
  {
    Block* saved_block = block_;
    Scope* saved_scope = scope_;
    InsertPointGuard g(graph_, body);
    block_ = body;
    scope_ = &scope;
    Value* item = item_at(index);
    bind_comprehension_target(target, item, scope);
    if (cond) {
      Value* c = to_bool(emit_expr(*cond), cond->range, "a comprehension condition");
      emit_branches(
          c, range,
          [&] {
            each();
            return false;
          },
          [] { return false; });
    } else {
      each();
    }
    body->add_return(constant(IValue(true), Type::bool_(), range));
    block_ = saved_block;
    scope_ = saved_scope;
  }
  if (dict_it) check_dict_size(*dict_it, iter.range);  // Python's last next()
}

Value* Emitter::emit_listcomp(const ast::ListComp& c) {
  // [elt for target in iter if cond] -> an empty list appended to in a loop.
  Node* list = graph_.insert(graph_.create(OpId::ListConstruct, {}, 1));
  list->set_range(c.range);
  Value* result = list->output()->set_type(Type::list(Type::any()));
  TypePtr elem_type;
  emit_comprehension_loop(*c.target, *c.iter, c.cond.get(), c.range, [&] {
    Value* v = emit_expr(*c.elt);
    elem_type = strip_refinements(v->type());
    Node* app = graph_.insert(graph_.create(OpId::append_list, {result, v}, 0));
    app->set_range(c.elt->range);
  });
  result->set_type(Type::list(elem_type ? elem_type : Type::tensor()));
  return result;
}

Value* Emitter::emit_dictcomp(const ast::DictComp& c) {
  // {key: value for target in iter if cond} -> an empty dict written in a loop.
  Node* dict = graph_.insert(graph_.create(OpId::DictConstruct, {}, 1));
  dict->set_range(c.range);
  Value* result = dict->output()->set_type(Type::dict(Type::str_(), Type::tensor()));
  TypePtr key_type, value_type;
  emit_comprehension_loop(*c.target, *c.iter, c.cond.get(), c.range, [&] {
    Value* k = emit_expr(*c.key);
    Value* v = emit_expr(*c.value);
    key_type = strip_refinements(k->type());
    value_type = strip_refinements(v->type());
    if (key_type->kind() != TypeKind::Str && key_type->kind() != TypeKind::Int) {
      compile_error(c.key->range, "dict keys must be str or int in TSL (as in TorchScript), not " +
                                      key_type->str());
    }
    result->set_type(Type::dict(key_type, value_type));
    bool int_keys = key_type->kind() == TypeKind::Int;
    Node* set =
        graph_.insert(graph_.create(dict_op_id(DictOp::Setitem, int_keys), {result, k, v}, 0));
    set->set_range(c.range);
  });
  return result;
}

// The target of a comprehension (`k`, `k, v`, `(i, (k, v))`) bound in the
// comprehension's own scope, as Python 3 keeps it local there.
void Emitter::bind_comprehension_target(const ast::Expr& target, Value* item, Scope& scope) {
  if (target.kind == ast::ExprKind::Name) {
    scope.set(ast::as<ast::Name>(target).id, {item, target.range});
    return;
  }
  const std::vector<ast::ExprPtr>* elts = nullptr;
  if (target.kind == ast::ExprKind::Tuple) elts = &ast::as<ast::TupleExpr>(target).elts;
  if (target.kind == ast::ExprKind::List) elts = &ast::as<ast::ListExpr>(target).elts;
  const TypePtr& t = item->type();
  if (!elts)
    compile_error(target.range, "a comprehension target must be a name or a tuple of names");
  if (t->kind() != TypeKind::Tuple || t->contained().size() != elts->size()) {
    compile_error(target.range, "cannot unpack a value of type " + t->str() + " into " +
                                    std::to_string(elts->size()) + " targets");
  }
  Node* unpack = graph_.insert(graph_.create(OpId::TupleUnpack, {item}, elts->size()));
  unpack->set_range(target.range);
  for (size_t i = 0; i < elts->size(); ++i) {
    bind_comprehension_target(*(*elts)[i], unpack->output(i)->set_type(t->contained()[i]), scope);
  }
}

}  // namespace tsl
