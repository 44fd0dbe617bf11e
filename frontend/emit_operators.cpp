// Python's operators in the emitter: unary, binary and comparison operators, chained
// comparisons, `and`/`or` and conditional expressions. See Note [Operators are
// overloads].
#include <algorithm>
#include <array>
#include <functional>
#include <initializer_list>
#include <utility>

#include "frontend/emitter.h"

namespace tsl {
namespace {

// Note [Operators are overloads]
// An operator is the op of the table under its base name: `a + b` is the first overload
// of `add` in table order (add.str, add.int, add.float, add.t, then the Tensor add) that
// accepts (a, b), chosen by the schema matching of calls with an operator's conversions
// (match_operator in schema_matching.h): an int where a float is expected (`1 + 2.5` is
// add.float of float(1)), a number beside a Tensor (NUMS rows). So a new overload row
// (add.complex) needs no change here. `%` is both mod (str's printf-style formatting)
// and remainder; `x += y` on a tensor is the in-place row of the op (add_) where the
// table has one, else the op out of place copied back into x.
// Python's rules that no schema states are applied around the matching:
//  * bool is an int: where no overload takes bools as they are (`True == False` is
//    eq.bool), bool operands compute as ints (`True + True` is add.int, `True < 2.5`
//    lt.float of float(int(True)));
//  * `int ** int` is an int, but a negative constant exponent (`2 ** -2`) makes it a
//    float as in Python: the exponent's sign, not its type, decides, so it must be known;
//  * beside a Tensor, an arithmetic operand is a Tensor or a number (`x + "a"` and
//    `"%s" % x` are errors), and a read of `x.grad` there is the tensor (None is a
//    runtime error); a unary operator's operand is a Tensor or a number.
// Kept explicit, as their rows cannot say what they take: `is` (decided by the types
// where they tell, as TorchScript does; is(Any, Any) otherwise), `in` (contains.seq takes
// Any), == of lists and tuples (eq.seq takes Any, and so would accept `1 == "a"`) and of
// dicts (emit_dict_equal's checks), and `+x`, which is no op. Errors keep Python's
// wording ("unsupported operand types for +: int and str").

// The ops each operator is, by base name, in table order: `%` is a str's printf-style
// formatting (mod) and numbers' remainder. TSL has no shift ops; `is`, `in` and `+x` are
// not overloads (Note [Operators are overloads]).
template <typename Op>
using OpNames = std::initializer_list<std::pair<Op, const char*>>;
constexpr OpNames<ast::BinOp> kBinaryOps = {
    {ast::BinOp::Add, "add"},
    {ast::BinOp::Sub, "sub"},
    {ast::BinOp::Mul, "mul"},
    {ast::BinOp::Div, "div"},
    {ast::BinOp::FloorDiv, "floor_divide"},
    {ast::BinOp::Mod, "mod"},
    {ast::BinOp::Mod, "remainder"},
    {ast::BinOp::Pow, "pow"},
    {ast::BinOp::MatMul, "matmul"},
    {ast::BinOp::BitAnd, "bitwise_and"},
    {ast::BinOp::BitOr, "bitwise_or"},
    {ast::BinOp::BitXor, "bitwise_xor"},
};
constexpr OpNames<ast::CmpOp> kCompareOps = {
    {ast::CmpOp::Eq, "eq"}, {ast::CmpOp::Ne, "ne"}, {ast::CmpOp::Lt, "lt"},
    {ast::CmpOp::Le, "le"}, {ast::CmpOp::Gt, "gt"}, {ast::CmpOp::Ge, "ge"},
};
constexpr OpNames<ast::UnaryOp> kUnaryOps = {
    {ast::UnaryOp::Neg, "neg"},
    {ast::UnaryOp::Invert, "bitwise_not"},
    {ast::UnaryOp::Not, "not"},
};

// A row whose operands are all Any accepts any operands: an operator cannot choose it by
// its schema (eq.seq is == of lists and tuples only, chosen explicitly).
bool takes_any_operands(OpId op) {
  const FunctionSchema& s = schema_of(op);
  return std::all_of(s.arguments.begin(), s.arguments.end(),
                     [](const Argument& a) { return a.type->kind() == TypeKind::Any; });
}

// The overloads of each operator of an enum, in table order, made once (operators are
// emitted often: compile latency, issue 6): the rows under its base names, or their
// in-place rows (`add_`) when `suffix` is "_".
template <typename Op, size_t N>
class OverloadTable {
 public:
  OverloadTable(OpNames<Op> names, const char* suffix) {
    for (const auto& [op, name] : names) {
      for (OpId row : ops_named(name + std::string(suffix), 0)) {
        if (!takes_any_operands(row)) table_.at(static_cast<size_t>(op)).push_back(row);
      }
    }
  }
  const std::vector<OpId>& operator[](Op op) const { return table_.at(static_cast<size_t>(op)); }

 private:
  std::array<std::vector<OpId>, N> table_;
};

constexpr size_t kNumBinOps = static_cast<size_t>(ast::BinOp::RShift) + 1;

const std::vector<OpId>& binary_overloads(ast::BinOp op) {
  static const OverloadTable<ast::BinOp, kNumBinOps> table(kBinaryOps, "");
  return table[op];
}

const std::vector<OpId>& compare_overloads(ast::CmpOp op) {
  static const OverloadTable<ast::CmpOp, static_cast<size_t>(ast::CmpOp::NotIn) + 1> table(
      kCompareOps, "");
  return table[op];
}

const std::vector<OpId>& unary_overloads(ast::UnaryOp op) {
  static const OverloadTable<ast::UnaryOp, static_cast<size_t>(ast::UnaryOp::Not) + 1> table(
      kUnaryOps, "");
  return table[op];
}

// `int ** int` with a negative constant exponent (`2 ** -2`, folded or not): a float.
bool negative_int_power(const Value* base, const Value* exponent) {
  TypeKind bk = base->type()->kind();
  if ((bk != TypeKind::Int && bk != TypeKind::Bool) || exponent->type()->kind() != TypeKind::Int)
    return false;
  const Node* n = exponent->node();
  if (n->op() == OpId::Constant) return n->attr("value").is_int() && n->attr("value").to_int() < 0;
  return n->op() == OpId::neg_int && n->input(0)->node()->op() == OpId::Constant &&
         n->input(0)->node()->attr("value").to_int() > 0;
}

bool is_tensor_or_number(const TypePtr& t) { return t->is_tensor() || t->is_number(); }

}  // namespace

const std::vector<OpId>& inplace_overloads(ast::BinOp op) {
  static const OverloadTable<ast::BinOp, kNumBinOps> table(kBinaryOps, "_");
  return table[op];
}

Value* Emitter::emit_operator(const std::vector<OpId>& overloads, std::vector<Value*> operands,
                              const SourceRange& range) {
  auto match = [&] {
    std::vector<CallArg> args;
    for (Value* v : operands) args.push_back({range, "", v});
    return match_operator(graph_, overloads, args, range);
  };
  std::optional<MatchedOp> m = match();
  auto is_number = [](const Value* v) { return v->type()->is_number(); };
  auto is_bool = [](const Value* v) { return v->type()->kind() == TypeKind::Bool; };
  if (!m && std::all_of(operands.begin(), operands.end(), is_number) &&
      std::any_of(operands.begin(), operands.end(), is_bool)) {
    // Python's bool is an int (Note [Operators are overloads]).
    for (Value*& v : operands) {
      if (is_bool(v)) v = graph_.insert_op(OpId::Int_bool, {v}, Type::int_(), range);
    }
    m = match();
  }
  return m ? emit_matched(*m, range) : nullptr;
}

Value* Emitter::emit_unary(const ast::Unary& u) {
  Value* v = emit_expr(*u.operand);
  TypeKind k = v->type()->kind();
  if (u.op == ast::UnaryOp::Pos) {
    if (k == TypeKind::Tensor || k == TypeKind::Int || k == TypeKind::Float) return v;
  } else {
    // `not x` negates the truth of x (a dict's emptiness, a one-element tensor's value).
    Value* operand =
        u.op == ast::UnaryOp::Not ? to_bool(v, u.operand->range, "the operand of 'not'") : v;
    if (is_tensor_or_number(operand->type())) {
      if (Value* r = emit_operator(unary_overloads(u.op), {operand}, u.range)) return r;
    }
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
  if ((lt->is_tensor() || rt->is_tensor()) && !(is_tensor_or_number(lt) && is_tensor_or_number(rt)))
    return fail();
  if (op == ast::BinOp::Pow && negative_int_power(lhs, rhs)) {
    auto to_float = [&](Value* v) {
      if (v->type()->kind() == TypeKind::Bool)
        v = graph_.insert_op(OpId::Int_bool, {v}, Type::int_(), range);
      return graph_.insert_op(OpId::Float_int, {v}, Type::float_(), range);
    };
    lhs = to_float(lhs);
    rhs = to_float(rhs);
  }
  Value* result = emit_operator(binary_overloads(op), {lhs, rhs}, range);
  return result ? result : fail();
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
  TypeKind lk = lt->kind(), rk = rt->kind();
  bool tensors = lt->is_tensor() || rt->is_tensor();
  if (!tensors && (op == ast::CmpOp::Eq || op == ast::CmpOp::Ne)) {
    // == of dicts and of lists and tuples are not chosen by their schemas (Note
    // [Operators are overloads]).
    bool negate = op == ast::CmpOp::Ne;
    if (lk == TypeKind::Dict) return emit_dict_equal(lhs, rhs, negate, range);
    bool l_seq = lk == TypeKind::List || lk == TypeKind::Tuple;
    bool r_seq = rk == TypeKind::List || rk == TypeKind::Tuple;
    if (l_seq && r_seq) {
      return graph_.insert_op(negate ? OpId::ne_seq : OpId::eq_seq, {lhs, rhs}, Type::bool_(),
                              range);
    }
  }
  const std::vector<OpId>& overloads = compare_overloads(op);
  if (Value* result = emit_operator(overloads, {lhs, rhs}, range)) return result;
  if (tensors) {
    // The Tensor overload's reason: "==() argument 'other' must be Tensor, not str".
    std::vector<OpId> tensor_rows;
    for (OpId o : overloads) {
      const FunctionSchema& s = schema_of(o);
      if (!s.arguments.empty() && s.arguments[0].type->is_tensor()) tensor_rows.push_back(o);
    }
    no_overload_error(tensor_rows, {{range, "", lhs}, {range, "", rhs}}, range,
                      ast::cmpop_symbol(op));
  }
  compile_error(range, std::string("'") + ast::cmpop_symbol(op) + "' is not supported between " +
                           lt->str() + " and " + rt->str());
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
