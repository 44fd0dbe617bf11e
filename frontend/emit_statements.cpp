// Simple statements in the emitter: return, assert, raise, with, expression statements
// and assignments (plain, augmented, annotated, to items and to tuples of targets).
#include "frontend/emit_scans.h"

#include <algorithm>

namespace tsl {

using namespace emit_scans;

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
