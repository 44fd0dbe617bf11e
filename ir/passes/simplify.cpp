// Exact algebraic simplification; see simplify.h for the rules and why each is exact.
#include "ir/passes/simplify.h"

#include <bit>

#include "ir/passes/pass_utils.h"

namespace tsl {
namespace {

enum class Num { Int, Float };

// Whether `v` is the constant `target` of kind `kind` (floats by bits: -0.0 is not
// 0.0). An int constant never matches a float target: int 0 converts to +0.0 only.
bool is_const(const Value* v, Num kind, double target) {
  const IValue* c = constant_value(v);
  if (!c) return false;
  if (kind == Num::Int) return c->is_int() && static_cast<double>(c->to_int()) == target;
  return c->is_double() &&
         std::bit_cast<uint64_t>(c->to_double()) == std::bit_cast<uint64_t>(target);
}

bool is_float_value(const Value* v) { return v->type()->kind() == TypeKind::Float; }

std::optional<DType> dtype_of(const Value* v) {
  if (!v->type()->is_tensor()) return std::nullopt;
  return v->type()->tensor_dtype();
}

bool is_floating_tensor(const Value* v) {
  auto d = dtype_of(v);
  return d && is_floating(*d);
}

bool is_int_tensor(const Value* v) {
  auto d = dtype_of(v);
  return d && *d == DType::Int64;
}

bool is_non_bool_tensor(const Value* v) {
  auto d = dtype_of(v);
  return d && *d != DType::Bool;
}

// The operand of a commutative binary op `n` that is not the constant `c`, or null.
Value* other_than(const Node* n, Num kind, double c) {
  if (is_const(n->input(1), kind, c)) return n->input(0);
  if (is_const(n->input(0), kind, c)) return n->input(1);
  return nullptr;
}

// The value `n`'s output equals, by the scalar rules, or null.
Value* simplify_scalar(const Node* n) {
  switch (n->op()) {
    case OpId::add_int:
      return other_than(n, Num::Int, 0);
    case OpId::sub_int:
      return is_const(n->input(1), Num::Int, 0) ? n->input(0) : nullptr;
    case OpId::mul_int:
      return other_than(n, Num::Int, 1);
    case OpId::add_float: {
      Value* a = other_than(n, Num::Float, -0.0);
      return a && is_float_value(a) ? a : nullptr;
    }
    case OpId::sub_float:
      return is_float_value(n->input(0)) && is_const(n->input(1), Num::Float, 0.0) ? n->input(0)
                                                                                   : nullptr;
    case OpId::mul_float: {
      Value* a = other_than(n, Num::Float, 1.0);
      return a && is_float_value(a) ? a : nullptr;
    }
    case OpId::div_float:
      return is_float_value(n->input(0)) && is_const(n->input(1), Num::Float, 1.0) ? n->input(0)
                                                                                   : nullptr;
    case OpId::neg_float:
    case OpId::not_bool: {
      const Node* inner = n->input(0)->node();
      return inner->op() == n->op() ? inner->input(0) : nullptr;
    }
    default:
      return nullptr;
  }
}

bool alpha_is_one(const Node* n) { return is_const(n->input(2), Num::Int, 1); }

// The value `n`'s output equals, by the tensor rules, or null (before the aliasing
// check).
Value* simplify_tensor(const Node* n) {
  switch (n->op()) {
    case OpId::mul: {
      Value* x = other_than(n, Num::Int, 1);
      if (x && is_non_bool_tensor(x)) return x;
      x = other_than(n, Num::Float, 1.0);
      return x && is_floating_tensor(x) ? x : nullptr;
    }
    case OpId::div: {
      const IValue* mode = constant_value(n->input(2));
      if (!mode || !mode->is_none() || !is_floating_tensor(n->input(0))) return nullptr;
      bool one = is_const(n->input(1), Num::Int, 1) || is_const(n->input(1), Num::Float, 1.0);
      return one ? n->input(0) : nullptr;
    }
    case OpId::sub: {
      Value* x = n->input(0);
      if (!alpha_is_one(n)) return nullptr;
      if (is_const(n->input(1), Num::Int, 0) && is_non_bool_tensor(x)) return x;
      return is_const(n->input(1), Num::Float, 0.0) && is_floating_tensor(x) ? x : nullptr;
    }
    case OpId::add: {
      if (!alpha_is_one(n)) return nullptr;
      if (is_const(n->input(1), Num::Float, -0.0) && is_floating_tensor(n->input(0)))
        return n->input(0);
      Value* x = other_than(n, Num::Int, 0);
      return x && is_int_tensor(x) ? x : nullptr;
    }
    case OpId::neg: {
      const Node* inner = n->input(0)->node();
      if (inner->op() != OpId::neg || !is_non_bool_tensor(inner->input(0))) return nullptr;
      return inner->input(0);
    }
    default:
      return nullptr;
  }
}

// Rules whose result is the very same tensor object as before: no aliasing changes.
Value* simplify_identity(const Node* n) {
  switch (n->op()) {
    case OpId::contiguous: {
      // contiguous() of a contiguous tensor returns that tensor.
      const Node* inner = n->input(0)->node();
      return inner->op() == OpId::contiguous ? n->input(0) : nullptr;
    }
    case OpId::to_dtype: {
      const IValue* d = constant_value(n->input(1));
      auto have = dtype_of(n->input(0));
      return d && d->is_dtype() && have && *have == d->to_dtype() ? n->input(0) : nullptr;
    }
    default:
      return nullptr;
  }
}

bool same_kind(const Value* a, const Value* b) {
  return a->type()->kind() == b->type()->kind() && a->type()->equals(*b->type());
}

class Simplifier {
 public:
  explicit Simplifier(Graph& g) : g_(g), mutation_(g) {}

  bool run() {
    run_block(g_.block());
    return changed_;
  }

 private:
  void run_block(Block* b) {
    for (Node* n : *b) {
      for (Block* nb : n->blocks()) run_block(nb);
      if (n->outputs().size() != 1) continue;
      Value* out = n->output();
      Value* replacement = replacement_for(n);
      if (!replacement || replacement == out || !same_kind(replacement, out)) continue;
      if (replacement->debug_name().empty()) replacement->set_debug_name(out->debug_name());
      out->replace_all_uses_with(replacement);
      n->destroy();
      changed_ = true;
    }
  }

  Value* replacement_for(const Node* n) const {
    if (Value* v = simplify_scalar(n)) return v;
    if (Value* v = simplify_identity(n)) return v;
    Value* x = simplify_tensor(n);
    if (!x || !mutation_.may_replace(n->output(), x)) return nullptr;
    return x;
  }

  Graph& g_;
  MutationInfo mutation_;
  bool changed_ = false;
};

}  // namespace

bool simplify_arithmetic(Graph& g) { return Simplifier(g).run(); }

}  // namespace tsl
