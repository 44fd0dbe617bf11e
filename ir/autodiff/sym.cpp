// Expression-style construction of formula IR (see sym.h).
#include "ir/autodiff/sym.h"

#include "ir/schema.h"

namespace tsl::autodiff {
namespace {

thread_local FormulaScope* g_scope = nullptr;

FormulaScope& scope() {
  TSL_INTERNAL_ASSERT(g_scope != nullptr, "formula built outside a FormulaScope");
  return *g_scope;
}

// The type of a literal given for a parameter of type `param`.
TypePtr literal_type(const IValue& v, const TypePtr& param) {
  if (v.is_none()) return param && param->kind() == TypeKind::Optional ? param : Type::none();
  if (v.is_bool()) return Type::bool_();
  if (v.is_int()) return Type::int_();
  if (v.is_double()) return Type::float_();
  if (v.is_dtype()) return Type::dtype();
  if (v.is_str()) return Type::str_();
  if (v.is_list()) return Type::list(Type::int_());
  TSL_INTERNAL_ASSERT(false, "unexpected formula literal ", v.tag_name());
}

TypePtr result_type(const Argument& r) {
  switch (r.type->kind()) {
    case TypeKind::Var:
    case TypeKind::Any:
      return Type::any();
    case TypeKind::Number:
      return Type::float_();
    default:
      return r.type;
  }
}

}  // namespace

FormulaScope::FormulaScope(Graph& graph, SourceRange range)
    : graph_(graph), range_(std::move(range)), outer_(g_scope) {
  g_scope = this;
}
FormulaScope::~FormulaScope() { g_scope = outer_; }
Graph& FormulaScope::graph() { return scope().graph_; }
const SourceRange& FormulaScope::range() { return scope().range_; }

namespace {
Value* resolve_arg(const Arg& a, const TypePtr& param) {
  if (!a.has_literal) return a.value;
  return FormulaScope::graph().insert_constant(a.literal, literal_type(a.literal, param),
                                               FormulaScope::range());
}
}  // namespace

std::vector<Sym> call_multi(OpId op, std::vector<Arg> args, size_t num_outputs) {
  const FunctionSchema& schema = schema_of(op);
  std::vector<Value*> inputs;
  int variadic = schema.variadic_index();
  for (size_t i = 0; i < args.size(); ++i) {
    size_t p = variadic >= 0 ? std::min(i, static_cast<size_t>(variadic)) : i;
    TSL_INTERNAL_ASSERT(p < schema.arguments.size(), "too many arguments for ", schema.name);
    inputs.push_back(resolve_arg(args[i], schema.arguments[p].type));
  }
  for (size_t i = args.size(); variadic < 0 && i < schema.arguments.size(); ++i) {
    const Argument& a = schema.arguments[i];
    TSL_INTERNAL_ASSERT(a.default_value.has_value(), "formula omits required argument '", a.name,
                        "' of ", schema.name);
    inputs.push_back(FormulaScope::graph().insert_constant(
        *a.default_value, literal_type(*a.default_value, a.type), FormulaScope::range()));
  }
  Graph& g = FormulaScope::graph();
  Node* n = g.insert(g.create(op, inputs, num_outputs));
  n->set_range(FormulaScope::range());
  std::vector<Sym> out;
  for (size_t i = 0; i < num_outputs; ++i) {
    TypePtr t = i < schema.returns.size() ? result_type(schema.returns[i]) : Type::tensor();
    out.emplace_back(n->output(i)->set_type(std::move(t)));
  }
  return out;
}

Sym call(OpId op, std::vector<Arg> args) { return call_multi(op, std::move(args), 1).at(0); }

Sym constant(IValue v, TypePtr type) {
  return FormulaScope::graph().insert_constant(std::move(v), std::move(type),
                                               FormulaScope::range());
}

Sym undefined() { return call(OpId::Undefined, {}); }

Sym operator+(Sym a, Sym b) { return call(OpId::add, {a, b}); }
Sym operator+(Sym a, double b) { return call(OpId::add, {a, b}); }
Sym operator+(double a, Sym b) { return call(OpId::add, {b, a}); }
Sym operator-(Sym a, Sym b) { return call(OpId::sub, {a, b}); }
Sym operator-(Sym a, double b) { return call(OpId::sub, {a, b}); }
Sym operator-(double a, Sym b) { return call(OpId::add, {call(OpId::neg, {b}), a}); }
Sym operator*(Sym a, Sym b) { return call(OpId::mul, {a, b}); }
Sym operator*(Sym a, double b) { return call(OpId::mul, {a, b}); }
Sym operator*(double a, Sym b) { return call(OpId::mul, {b, a}); }
Sym operator/(Sym a, Sym b) { return call(OpId::div, {a, b}); }
Sym operator/(Sym a, double b) { return call(OpId::div, {a, b}); }
Sym operator/(double a, Sym b) { return call(OpId::mul, {call(OpId::reciprocal, {b}), a}); }
Sym operator-(Sym a) { return call(OpId::neg, {a}); }

Sym exp(Sym x) { return call(OpId::exp, {x}); }
Sym log(Sym x) { return call(OpId::log, {x}); }
Sym sqrt(Sym x) { return call(OpId::sqrt, {x}); }
Sym rsqrt(Sym x) { return call(OpId::rsqrt, {x}); }
Sym sin(Sym x) { return call(OpId::sin, {x}); }
Sym cos(Sym x) { return call(OpId::cos, {x}); }
Sym tanh(Sym x) { return call(OpId::tanh, {x}); }
Sym sigmoid(Sym x) { return call(OpId::sigmoid, {x}); }
Sym square(Sym x) { return call(OpId::square, {x}); }
Sym reciprocal(Sym x) { return call(OpId::reciprocal, {x}); }
Sym sign(Sym x) { return call(OpId::sign, {x}); }
Sym abs(Sym x) { return call(OpId::abs, {x}); }
Sym erf(Sym x) { return call(OpId::erf, {x}); }
Sym pow(Sym x, Arg y) { return call(OpId::pow, {x, y}); }
Sym where(Sym cond, Arg a, Arg b) { return call(OpId::where, {cond, a, b}); }
Sym gt(Sym a, Arg b) { return call(OpId::gt, {a, b}); }
Sym ge(Sym a, Arg b) { return call(OpId::ge, {a, b}); }
Sym lt(Sym a, Arg b) { return call(OpId::lt, {a, b}); }
Sym le(Sym a, Arg b) { return call(OpId::le, {a, b}); }
Sym eq(Sym a, Arg b) { return call(OpId::eq, {a, b}); }
Sym ne(Sym a, Arg b) { return call(OpId::ne, {a, b}); }
Sym logical_and(Sym a, Sym b) { return call(OpId::logical_and, {a, b}); }

Sym size(Sym x) { return call(OpId::size, {x}); }
Sym dtype_of(Sym x) {
  Sym d = call(OpId::dtype, {x});
  d.value()->set_type(Type::dtype());
  return d;
}
Sym to_dtype(Sym x, Arg dtype) { return call(OpId::to_dtype, {x, dtype}); }
Sym zeros_like(Sym x) { return call(OpId::zeros_like, {x}); }
Sym ones_like(Sym x) { return call(OpId::ones_like, {x}); }
Sym sum(Sym x, Arg dims, bool keepdim) { return call(OpId::sum, {x, dims, keepdim}); }
Sym sum_all(Sym x) { return call(OpId::sum, {x}); }
Sym sum_to(Sym g, Sym like) { return call(OpId::sum_to_size, {g, size(like)}); }
Sym expand(Sym x, Arg sizes) { return call(OpId::expand, {x, sizes}); }
Sym reshape(Sym x, Arg sizes) { return call(OpId::reshape, {x, sizes}); }
Sym unsqueeze(Sym x, Arg dim) { return call(OpId::unsqueeze, {x, dim}); }
Sym transpose(Sym x, Arg d0, Arg d1) { return call(OpId::transpose, {x, d0, d1}); }
Sym matmul(Sym a, Sym b) { return call(OpId::matmul, {a, b}); }
Sym numel(Sym x) { return call(OpId::numel, {x}); }

Sym int_sub(Sym a, Sym b) { return call(OpId::sub_int, {a, b}); }
Sym int_to_float(Sym a) { return call(OpId::Float_int, {a}); }

}  // namespace tsl::autodiff
