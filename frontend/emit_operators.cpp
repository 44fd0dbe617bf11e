// Python's operators in the emitter: unary, binary and comparison operators, chained
// comparisons, `and`/`or` and conditional expressions.
#include <functional>

#include "frontend/emitter.h"

namespace tsl {

Value* Emitter::emit_unary(const ast::Unary& u) {
  Value* v = emit_expr(*u.operand);
  TypeKind k = v->type()->kind();
  switch (u.op) {
    case ast::UnaryOp::Pos:
      if (k == TypeKind::Tensor || k == TypeKind::Int || k == TypeKind::Float) return v;
      break;
    case ast::UnaryOp::Neg:
      if (k == TypeKind::Tensor) return graph_.insert_op(OpId::neg, {v}, Type::tensor(), u.range);
      if (k == TypeKind::Bool)
        v = graph_.insert_op(OpId::Int_bool, {v}, Type::int_(), u.range), k = TypeKind::Int;
      if (k == TypeKind::Int) return graph_.insert_op(OpId::neg_int, {v}, Type::int_(), u.range);
      if (k == TypeKind::Float)
        return graph_.insert_op(OpId::neg_float, {v}, Type::float_(), u.range);
      break;
    case ast::UnaryOp::Invert:
      if (k == TypeKind::Tensor)
        return graph_.insert_op(OpId::bitwise_not, {v}, Type::tensor(), u.range);
      break;
    case ast::UnaryOp::Not:
      return graph_.insert_op(OpId::not_bool,
                              {to_bool(v, u.operand->range, "the operand of 'not'")}, Type::bool_(),
                              u.range);
  }
  const char* sym = u.op == ast::UnaryOp::Neg ? "-" : u.op == ast::UnaryOp::Pos ? "+" : "~";
  compile_error(u.range,
                std::string("bad operand type for unary ") + sym + ": " + v->type()->str());
}

Value* Emitter::emit_binary(ast::BinOp op, Value* lhs, Value* rhs, const SourceRange& range) {
  lhs = unwrap_grad_read(graph_, lhs, range);
  rhs = unwrap_grad_read(graph_, rhs, range);
  TypePtr lt = lhs->type(), rt = rhs->type();
  auto fail = [&]() -> Value* {
    compile_error(range, std::string("unsupported operand types for ") + ast::binop_symbol(op) +
                             ": " + lt->str() + " and " + rt->str());
  };
  bool tensors = lt->is_tensor() || rt->is_tensor();
  if (tensors) {
    if (!(lt->is_tensor() || lt->is_number()) || !(rt->is_tensor() || rt->is_number()))
      return fail();
    OpId id;
    switch (op) {
      case ast::BinOp::Add:
        id = OpId::add;
        break;
      case ast::BinOp::Sub:
        id = OpId::sub;
        break;
      case ast::BinOp::Mul:
        id = OpId::mul;
        break;
      case ast::BinOp::Div:
        id = OpId::div;
        break;
      case ast::BinOp::FloorDiv:
        id = OpId::floor_divide;
        break;
      case ast::BinOp::Mod:
        id = OpId::remainder;
        break;
      case ast::BinOp::Pow:
        id = OpId::pow;
        break;
      case ast::BinOp::MatMul:
        if (!lt->is_tensor() || !rt->is_tensor()) return fail();
        id = OpId::matmul;
        break;
      case ast::BinOp::BitAnd:
        id = OpId::bitwise_and;
        break;
      case ast::BinOp::BitOr:
        id = OpId::bitwise_or;
        break;
      case ast::BinOp::BitXor:
        id = OpId::bitwise_xor;
        break;
      default:
        return fail();
    }
    return emit_ops({id}, {{range, "", lhs}, {range, "", rhs}}, range, ast::binop_symbol(op));
  }
  TypeKind lk = lt->kind(), rk = rt->kind();
  if (lk == TypeKind::Str && rk == TypeKind::Str && op == ast::BinOp::Add) {
    return graph_.insert_op(OpId::add_str, {lhs, rhs}, Type::str_(), range);
  }
  if (lk == TypeKind::Str && op == ast::BinOp::Mod) {
    return graph_.insert_op(OpId::mod_str, {lhs, rhs}, Type::str_(), range);
  }
  if (lk == TypeKind::List && rk == TypeKind::List && op == ast::BinOp::Add) {
    if (!lt->element()->equals(*rt->element())) return fail();
    return graph_.insert_op(OpId::add_list, {lhs, rhs}, lt, range);
  }
  if (!lt->is_number() || !rt->is_number()) return fail();
  // Python numbers: bool acts as int; int with float computes in float.
  if (lk == TypeKind::Bool)
    lhs = graph_.insert_op(OpId::Int_bool, {lhs}, Type::int_(), range), lk = TypeKind::Int;
  if (rk == TypeKind::Bool)
    rhs = graph_.insert_op(OpId::Int_bool, {rhs}, Type::int_(), range), rk = TypeKind::Int;
  // int ** int is an int, but a negative constant exponent (`2 ** -2`) makes it a
  // float as in Python (the exponent's sign decides the type, so it must be known).
  auto negative_constant = [](const Value* v) {
    const Node* n = v->node();
    if (n->op() == OpId::Constant)
      return n->attr("value").is_int() && n->attr("value").to_int() < 0;
    return n->op() == OpId::neg_int && n->input(0)->node()->op() == OpId::Constant &&
           n->input(0)->node()->attr("value").to_int() > 0;
  };
  bool float_power =
      op == ast::BinOp::Pow && lk == TypeKind::Int && rk == TypeKind::Int && negative_constant(rhs);
  bool as_float =
      lk == TypeKind::Float || rk == TypeKind::Float || op == ast::BinOp::Div || float_power;
  if (as_float) {
    if (lk == TypeKind::Int) lhs = graph_.insert_op(OpId::Float_int, {lhs}, Type::float_(), range);
    if (rk == TypeKind::Int) rhs = graph_.insert_op(OpId::Float_int, {rhs}, Type::float_(), range);
  }
  OpId id;
  switch (op) {
    case ast::BinOp::Add:
      id = as_float ? OpId::add_float : OpId::add_int;
      break;
    case ast::BinOp::Sub:
      id = as_float ? OpId::sub_float : OpId::sub_int;
      break;
    case ast::BinOp::Mul:
      id = as_float ? OpId::mul_float : OpId::mul_int;
      break;
    case ast::BinOp::Div:
      id = OpId::div_float;
      break;
    case ast::BinOp::FloorDiv:
      id = as_float ? OpId::floor_divide_float : OpId::floor_divide_int;
      break;
    case ast::BinOp::Mod:
      id = as_float ? OpId::remainder_float : OpId::remainder_int;
      break;
    case ast::BinOp::Pow:
      id = as_float ? OpId::pow_float : OpId::pow_int;
      break;
    default:
      return fail();
  }
  return graph_.insert_op(id, {lhs, rhs}, as_float ? Type::float_() : Type::int_(), range);
}

Value* Emitter::emit_compare_pair(ast::CmpOp op, Value* lhs, Value* rhs, const SourceRange& range) {
  TypePtr lt = lhs->type(), rt = rhs->type();
  if (op == ast::CmpOp::Is || op == ast::CmpOp::IsNot) {
    bool negate = op == ast::CmpOp::IsNot;
    bool l_none = lt->kind() == TypeKind::None, r_none = rt->kind() == TypeKind::None;
    // Optional and Any values (`x.grad_fn`) may be None: decided at run time.
    bool l_opt = lt->kind() == TypeKind::Optional || lt->kind() == TypeKind::Any;
    bool r_opt = rt->kind() == TypeKind::Optional || rt->kind() == TypeKind::Any;
    if ((l_none || r_none) && !(l_opt || r_opt)) {
      // Decided by the types alone, as TorchScript does.
      bool same = l_none && r_none;
      return constant(IValue(same != negate), Type::bool_(), range);
    }
    return graph_.insert_op(negate ? OpId::is_not : OpId::is, {lhs, rhs}, Type::bool_(), range);
  }
  if (op == ast::CmpOp::In || op == ast::CmpOp::NotIn) {
    bool keys_view = rhs->node() && dict_op_of(rhs->node()->op()) == DictOp::Keys;
    if (rt->kind() == TypeKind::Dict || keys_view)
      return emit_dict_contains(lhs, rhs, op == ast::CmpOp::NotIn, range);
    // `item in seq`: lists and tuples by element equality, strings by substring.
    Value* found = nullptr;
    TypeKind sk = rt->kind();
    if (sk == TypeKind::List || sk == TypeKind::Tuple) {
      found = graph_.insert_op(OpId::contains_seq, {rhs, lhs}, Type::bool_(), range);
    } else if (sk == TypeKind::Str && lt->kind() == TypeKind::Str) {
      found = graph_.insert_op(OpId::contains_str, {rhs, lhs}, Type::bool_(), range);
    } else {
      compile_error(
          range, "the 'in' operator is not supported between " + lt->str() + " and " + rt->str());
    }
    if (op == ast::CmpOp::In) return found;
    return graph_.insert_op(OpId::not_bool, {found}, Type::bool_(), range);
  }
  const char* base = nullptr;
  switch (op) {
    case ast::CmpOp::Eq:
      base = "eq";
      break;
    case ast::CmpOp::Ne:
      base = "ne";
      break;
    case ast::CmpOp::Lt:
      base = "lt";
      break;
    case ast::CmpOp::Le:
      base = "le";
      break;
    case ast::CmpOp::Gt:
      base = "gt";
      break;
    case ast::CmpOp::Ge:
      base = "ge";
      break;
    default:
      break;
  }
  if (lt->is_tensor() || rt->is_tensor()) {
    OpId id = *find_op(base);
    return emit_ops({id}, {{range, "", lhs}, {range, "", rhs}}, range, ast::cmpop_symbol(op));
  }
  bool eq_ne = op == ast::CmpOp::Eq || op == ast::CmpOp::Ne;
  auto unsupported = [&]() -> Value* {
    compile_error(range, std::string("'") + ast::cmpop_symbol(op) + "' is not supported between " +
                             lt->str() + " and " + rt->str());
  };
  TypeKind lk = lt->kind(), rk = rt->kind();
  if (lk == TypeKind::Str && rk == TypeKind::Str && eq_ne) {
    return graph_.insert_op(op == ast::CmpOp::Eq ? OpId::eq_str : OpId::ne_str, {lhs, rhs},
                            Type::bool_(), range);
  }
  if (lk == TypeKind::DType && rk == TypeKind::DType && eq_ne) {
    return graph_.insert_op(op == ast::CmpOp::Eq ? OpId::eq_dtype : OpId::ne_dtype, {lhs, rhs},
                            Type::bool_(), range);
  }
  if (lk == TypeKind::Device && rk == TypeKind::Device && eq_ne) {
    return graph_.insert_op(op == ast::CmpOp::Eq ? OpId::eq_device : OpId::ne_device, {lhs, rhs},
                            Type::bool_(), range);
  }
  if (lk == TypeKind::Dict && eq_ne) return emit_dict_equal(lhs, rhs, op == ast::CmpOp::Ne, range);
  bool l_seq = lk == TypeKind::List || lk == TypeKind::Tuple;
  bool r_seq = rk == TypeKind::List || rk == TypeKind::Tuple;
  if (l_seq && r_seq && eq_ne) {
    return graph_.insert_op(op == ast::CmpOp::Eq ? OpId::eq_seq : OpId::ne_seq, {lhs, rhs},
                            Type::bool_(), range);
  }
  if (lk == TypeKind::Bool && rk == TypeKind::Bool && eq_ne) {
    return graph_.insert_op(op == ast::CmpOp::Eq ? OpId::eq_bool : OpId::ne_bool, {lhs, rhs},
                            Type::bool_(), range);
  }
  if (!lt->is_number() || !rt->is_number()) return unsupported();
  if (lk == TypeKind::Bool)
    lhs = graph_.insert_op(OpId::Int_bool, {lhs}, Type::int_(), range), lk = TypeKind::Int;
  if (rk == TypeKind::Bool)
    rhs = graph_.insert_op(OpId::Int_bool, {rhs}, Type::int_(), range), rk = TypeKind::Int;
  bool as_float = lk == TypeKind::Float || rk == TypeKind::Float;
  if (as_float) {
    if (lk == TypeKind::Int) lhs = graph_.insert_op(OpId::Float_int, {lhs}, Type::float_(), range);
    if (rk == TypeKind::Int) rhs = graph_.insert_op(OpId::Float_int, {rhs}, Type::float_(), range);
  }
  OpId id = *find_op(std::string(base) + (as_float ? ".float" : ".int"));
  return graph_.insert_op(id, {lhs, rhs}, Type::bool_(), range);
}

Value* Emitter::emit_compare(const ast::Compare& c) {
  // a < b < c is (a < b) and (b < c), with b evaluated once and c only if needed.
  Value* lhs = emit_expr(*c.operands[0]);
  std::function<Value*(size_t, Value*)> chain = [&](size_t i, Value* left) -> Value* {
    Value* right = emit_expr(*c.operands[i + 1]);
    Value* result = emit_compare_pair(c.ops[i], left, right, c.range);
    if (i + 1 == c.ops.size()) return result;
    if (!result->type()->equals(*Type::bool_())) {
      compile_error(c.range,
                    "chained comparisons need bool results; compare tensors one pair at a time");
    }
    Node* n = graph_.insert(graph_.create(OpId::If, {result}, 1));
    n->set_range(c.range);
    Block* t = n->add_block();
    Block* e = n->add_block();
    {
      InsertPointGuard g(graph_, t);
      t->add_return(chain(i + 1, right));
    }
    {
      InsertPointGuard g(graph_, e);
      e->add_return(constant(IValue(false), Type::bool_(), c.range));
    }
    return n->output()->set_type(Type::bool_());
  };
  return chain(0, lhs);
}

Value* Emitter::emit_boolop(const ast::BoolOp& b) {
  const char* name = b.op == ast::BoolOpKind::And ? "and" : "or";
  Value* lhs = emit_expr(*b.lhs);
  if (lhs->type()->kind() != TypeKind::Bool) {
    compile_error(b.lhs->range, std::string("'") + name + "' takes bool operands, not " +
                                    lhs->type()->str() +
                                    (lhs->type()->is_tensor() ? " (for tensors use & or |)" : ""));
  }
  Node* n = graph_.insert(graph_.create(OpId::If, {lhs}, 1));
  n->set_range(b.range);
  Block* t = n->add_block();
  Block* e = n->add_block();
  Block* evaluate = b.op == ast::BoolOpKind::And ? t : e;
  Block* shortcut = b.op == ast::BoolOpKind::And ? e : t;
  {
    // `x is not None and f(x)`: the right operand sees what the left one refines.
    Value* rhs = emit_refined(*b.rhs, evaluate, refinements_of(*b.lhs),
                              b.op == ast::BoolOpKind::And, b.lhs->range);
    InsertPointGuard g(graph_, evaluate);
    if (rhs->type()->kind() != TypeKind::Bool) {
      compile_error(b.rhs->range,
                    std::string("'") + name + "' takes bool operands, not " + rhs->type()->str() +
                        (rhs->type()->is_tensor() ? " (for tensors use & or |)" : ""));
    }
    evaluate->add_return(rhs);
  }
  {
    InsertPointGuard g(graph_, shortcut);
    shortcut->add_return(constant(IValue(b.op == ast::BoolOpKind::Or), Type::bool_(), b.range));
  }
  return n->output()->set_type(Type::bool_());
}

Value* Emitter::emit_ifexp(const ast::IfExp& e) {
  Value* cond = to_bool(emit_expr(*e.cond), e.cond->range, "a conditional expression's condition");
  Node* n = graph_.insert(graph_.create(OpId::If, {cond}, 1));
  n->set_range(e.range);
  Block* t = n->add_block();
  Block* f = n->add_block();
  std::vector<Refinement> refinements = refinements_of(*e.cond);
  Value* tv = emit_refined(*e.then_expr, t, refinements, true, e.cond->range);
  Value* fv = emit_refined(*e.else_expr, f, refinements, false, e.cond->range);
  TypePtr type = unify_types(tv->type(), fv->type());
  if (!type && tv->type()->is_number() && fv->type()->is_number()) type = Type::float_();
  if (!type) {
    compile_error(e.range, "the two results of a conditional expression must have one type, not " +
                               tv->type()->str() + " and " + fv->type()->str());
  }
  {
    InsertPointGuard g(graph_, t);
    t->add_return(convert_to(tv, type, e.then_expr->range, "result"));
  }
  {
    InsertPointGuard g(graph_, f);
    f->add_return(convert_to(fv, type, e.else_expr->range, "result"));
  }
  return n->output()->set_type(type);
}

}  // namespace tsl
