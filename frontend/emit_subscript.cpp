// Subscripts in the emitter: list and tuple items and slices, and tensor indexing
// (basic indices as views, tensor indices as one `index`).
#include "frontend/emitter.h"

namespace tsl {

Value* Emitter::emit_subscript(const ast::Subscript& s) {
  Value* v = emit_expr(*s.value);
  TypePtr t = v->type();
  if (t->is_tensor()) return emit_tensor_index(v, s);
  if (t->kind() == TypeKind::Dict) return emit_dict_getitem(v, s);
  if (s.indices.size() != 1) compile_error(s.range, "only tensors take several indices");
  const ast::Expr& idx = *s.indices[0];
  if (t->kind() == TypeKind::List) {
    if (idx.kind == ast::ExprKind::Slice) {
      const auto& sl = ast::as<ast::Slice>(idx);
      auto part = [&](const ast::ExprPtr& e, int64_t dflt, bool optional) -> Value* {
        if (!e) return optional ? none(idx.range) : constant(IValue(dflt), Type::int_(), idx.range);
        Value* x = emit_expr(*e);
        if (x->type()->kind() != TypeKind::Int)
          compile_error(e->range, "slice indices must be int");
        return x;
      };
      return graph_.insert_op(
          OpId::slice_list,
          {v, part(sl.lower, 0, true), part(sl.upper, 0, true), part(sl.step, 1, false)}, t,
          s.range);
    }
    Value* i = emit_expr(idx);
    if (i->type()->kind() != TypeKind::Int)
      compile_error(idx.range, "list indices must be int, not " + i->type()->str());
    return read_under_no_grad(graph_.insert_op(OpId::getitem_list, {v, i}, t->element(), s.range),
                              s.range);
  }
  if (t->kind() == TypeKind::Tuple) {
    const auto& elems = t->contained();
    auto constant_int = [&](const ast::Expr& e, int64_t& out) {
      if (e.kind == ast::ExprKind::Int) {
        out = ast::as<ast::IntLit>(e).value;
        return true;
      }
      if (e.kind == ast::ExprKind::Unary && ast::as<ast::Unary>(e).op == ast::UnaryOp::Neg &&
          ast::as<ast::Unary>(e).operand->kind == ast::ExprKind::Int) {
        out = -ast::as<ast::IntLit>(*ast::as<ast::Unary>(e).operand).value;
        return true;
      }
      return false;
    };
    int64_t i;
    if (!constant_int(idx, i)) compile_error(idx.range, "tuple indices must be integer constants");
    int64_t n = static_cast<int64_t>(elems.size());
    if (i < -n || i >= n) compile_error(idx.range, "tuple index out of range");
    if (i < 0) i += n;
    Node* node = graph_.insert(graph_.create(OpId::TupleIndex, {v}, 1));
    node->set_range(s.range);
    node->set_attr("index", IValue(i));
    return read_under_no_grad(node->output()->set_type(elems[static_cast<size_t>(i)]), s.range);
  }
  compile_error(s.value->range, "'" + t->str() + "' object is not subscriptable");
}

Value* Emitter::emit_tensor_index(Value* t, const ast::Subscript& s) {
  // Basic indexing (ints, slices, None, ...) becomes select/slice/unsqueeze views;
  // tensor indices become one `index` op applied afterwards at their dims.
  const SourceRange& r = s.range;
  auto int_const = [&](int64_t v) { return constant(IValue(v), Type::int_(), r); };
  // Indexing keeps the dtype (so `x[0, 0].item()` of an int tensor is an int).
  std::optional<DType> dtype = t->type()->tensor_dtype();
  const TypePtr result_type = dtype ? Type::tensor(*dtype) : Type::tensor();
  size_t ellipsis = s.indices.size();
  for (size_t i = 0; i < s.indices.size(); ++i) {
    if (s.indices[i]->kind == ast::ExprKind::Ellipsis) {
      if (ellipsis != s.indices.size())
        compile_error(s.indices[i]->range, "an index can only have a single ellipsis ('...')");
      ellipsis = i;
    }
  }
  std::vector<std::pair<int64_t, Value*>> advanced;  // (dim, index tensor)
  auto apply = [&](const ast::Expr& e, int64_t& dim, bool from_end) {
    switch (e.kind) {
      case ast::ExprKind::None:
        t = graph_.insert_op(OpId::unsqueeze, {t, int_const(dim)}, result_type, e.range);
        if (!from_end)
          ++dim;
        else
          --dim;
        return;
      case ast::ExprKind::Slice: {
        const auto& sl = ast::as<ast::Slice>(e);
        auto bound = [&](const ast::ExprPtr& b) -> Value* {
          if (!b) return none(e.range);
          Value* x = emit_expr(*b);
          if (x->type()->kind() != TypeKind::Int)
            compile_error(b->range, "slice indices must be int, not " + x->type()->str());
          return x;
        };
        Value* start = bound(sl.lower);
        Value* end = bound(sl.upper);
        Value* step = sl.step ? emit_expr(*sl.step) : int_const(1);
        if (step->type()->kind() != TypeKind::Int)
          compile_error(sl.step->range, "slice step must be int");
        bool full = !sl.lower && !sl.upper && !sl.step;
        if (!full)
          t = graph_.insert_op(OpId::slice, {t, int_const(dim), start, end, step}, result_type,
                               e.range);
        if (!from_end)
          ++dim;
        else
          --dim;
        return;
      }
      default: {
        Value* i = emit_expr(e);
        if (i->type()->kind() == TypeKind::Int) {
          t = graph_.insert_op(OpId::select, {t, int_const(dim), i}, result_type, e.range);
          return;  // the dim disappears; the next index addresses the same position
        }
        if (i->type()->kind() == TypeKind::List) {
          i = emit_ops(ops_named("tensor", opflags::TORCH), {{e.range, "", i}}, e.range,
                       "torch.tensor");
        }
        if (i->type()->kind() == TypeKind::Bool) {
          compile_error(e.range, "indexing with a Python bool is not supported");
        }
        if (!i->type()->is_tensor()) {
          compile_error(e.range, "tensor indices must be int, slices, None, ... or tensors, not " +
                                     i->type()->str());
        }
        if (from_end) compile_error(e.range, "tensor indices after '...' are not supported");
        advanced.emplace_back(dim, i);
        ++dim;
        return;
      }
    }
  };
  int64_t dim = 0;
  for (size_t i = 0; i < ellipsis && i < s.indices.size(); ++i) apply(*s.indices[i], dim, false);
  if (ellipsis < s.indices.size()) {
    int64_t back = -1;
    for (size_t i = s.indices.size(); i-- > ellipsis + 1;) apply(*s.indices[i], back, true);
  }
  if (!advanced.empty()) {
    int64_t last = advanced.back().first;
    std::vector<Value*> entries;
    for (int64_t d = 0, k = 0; d <= last; ++d) {
      if (k < static_cast<int64_t>(advanced.size()) && advanced[k].first == d) {
        entries.push_back(advanced[k++].second);
      } else {
        entries.push_back(none(r));
      }
    }
    // A list of optional tensors: None entries skip a dim.
    std::vector<Value*> wrapped;
    for (Value* e : entries)
      wrapped.push_back(convert_to(e, Type::optional(Type::tensor()), r, "index"));
    Node* list = graph_.insert(graph_.create(OpId::ListConstruct, wrapped, 1));
    list->set_range(r);
    list->output()->set_type(Type::list(Type::optional(Type::tensor())));
    t = graph_.insert_op(OpId::index, {t, list->output()}, result_type, r);
  }
  return t;
}

}  // namespace tsl
