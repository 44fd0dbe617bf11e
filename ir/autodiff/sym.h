// Writing gradient formulas as expressions: `Sym` is a Value handle whose operators
// and functions insert ordinary op nodes at the graph's insertion point, so a rule
// reads `g * (1 - y * y)` and the formula stays differentiable (ops all the way).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tsl::autodiff {

// Where formula nodes go: the graph (at its insertion point) and the source range
// they carry (the forward node's, so gradient nodes point at the line they undo).
// One scope is active per thread; scopes nest.
class FormulaScope {
 public:
  FormulaScope(Graph& graph, SourceRange range);
  ~FormulaScope();
  FormulaScope(const FormulaScope&) = delete;
  FormulaScope& operator=(const FormulaScope&) = delete;
  static Graph& graph();
  static const SourceRange& range();

 private:
  Graph& graph_;
  SourceRange range_;
  FormulaScope* outer_;
};

class Sym {
 public:
  Sym() = default;
  Sym(Value* v) : v_(v) {}  // NOLINT: implicit by design, formulas mix both
  Value* value() const { return v_; }
  operator Value*() const { return v_; }  // NOLINT
  explicit operator bool() const { return v_ != nullptr; }

 private:
  Value* v_ = nullptr;
};

// An argument of `call`: a value, or a literal that `call` turns into a constant
// typed for the parameter it is given to (None for `int?` is an Optional constant).
struct Arg {
  Arg(Sym s) : value(s.value()) {}                                                         // NOLINT
  Arg(Value* v) : value(v) {}                                                              // NOLINT
  Arg(int v) : literal(IValue(static_cast<int64_t>(v))), has_literal(true) {}              // NOLINT
  Arg(int64_t v) : literal(IValue(v)), has_literal(true) {}                                // NOLINT
  Arg(double v) : literal(IValue(v)), has_literal(true) {}                                 // NOLINT
  Arg(bool v) : literal(IValue(v)), has_literal(true) {}                                   // NOLINT
  Arg(DType v) : literal(IValue(v)), has_literal(true) {}                                  // NOLINT
  Arg(const std::vector<int64_t>& v) : literal(IValue::int_list(v)), has_literal(true) {}  // NOLINT
  Arg(std::nullopt_t) : literal(IValue()), has_literal(true) {}                            // NOLINT
  Arg(const char* s) : literal(IValue(s)), has_literal(true) {}                            // NOLINT
  Value* value = nullptr;
  IValue literal;
  bool has_literal = false;
};

// Inserts `op(args...)`; missing trailing arguments take the schema's defaults. The
// result type is the schema's (Tensor, int[], ...).
Sym call(OpId op, std::vector<Arg> args);
std::vector<Sym> call_multi(OpId op, std::vector<Arg> args, size_t num_outputs);
Sym constant(IValue v, TypePtr type);
Sym undefined();  // the undefined tensor: a zero gradient

Sym operator+(Sym a, Sym b);
Sym operator+(Sym a, double b);
Sym operator+(double a, Sym b);
Sym operator-(Sym a, Sym b);
Sym operator-(Sym a, double b);
Sym operator-(double a, Sym b);
Sym operator*(Sym a, Sym b);
Sym operator*(Sym a, double b);
Sym operator*(double a, Sym b);
Sym operator/(Sym a, Sym b);
Sym operator/(Sym a, double b);
Sym operator/(double a, Sym b);
Sym operator-(Sym a);

// Tensor functions used by formulas (each one op, or a few).
Sym exp(Sym x);
Sym log(Sym x);
Sym sqrt(Sym x);
Sym rsqrt(Sym x);
Sym sin(Sym x);
Sym cos(Sym x);
Sym tanh(Sym x);
Sym sigmoid(Sym x);
Sym square(Sym x);
Sym reciprocal(Sym x);
Sym sign(Sym x);
Sym abs(Sym x);
Sym erf(Sym x);
Sym pow(Sym x, Arg y);
Sym where(Sym cond, Arg a, Arg b);
Sym gt(Sym a, Arg b);
Sym ge(Sym a, Arg b);
Sym lt(Sym a, Arg b);
Sym le(Sym a, Arg b);
Sym eq(Sym a, Arg b);
Sym ne(Sym a, Arg b);
Sym logical_and(Sym a, Sym b);
Sym size(Sym x);                 // int[]
Sym dtype_of(Sym x);             // ScalarType
Sym to_dtype(Sym x, Arg dtype);  // x.to(dtype)
Sym zeros_like(Sym x);
Sym ones_like(Sym x);
Sym sum(Sym x, Arg dims, bool keepdim);
Sym sum_all(Sym x);
Sym sum_to(Sym g, Sym like);   // sum_to_size(g, size(like))
Sym expand(Sym x, Arg sizes);  // expand(x, sizes)
Sym reshape(Sym x, Arg sizes);
Sym unsqueeze(Sym x, Arg dim);
Sym transpose(Sym x, Arg d0, Arg d1);
Sym matmul(Sym a, Sym b);
Sym numel(Sym x);  // int

// Python scalar arithmetic on int/float values (dims, counts).
Sym int_sub(Sym a, Sym b);
Sym int_to_float(Sym a);

}  // namespace tsl::autodiff
