// Numerical gradient check of every differentiable op (the DIFF rows of runtime/ops.def):
// each op's reverse-mode rule (first and second order) and forward-mode rule against
// float64 central differences on sample inputs kept in the table below. The tests walk
// the op table, so a new DIFF op without a rule or samples fails instead of going unchecked.

// GCC 12.2 with -O3 and AVX-512 (-march=native here) miscompiles small constant
// initializer lists such as std::vector<double>{1, 1, 1, 0} into a broadcast of the
// first value ({1, 1, 1, 1}) through SLP vectorization; the sample table is full of
// such lists, so that transformation is off in this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-slp-vectorize")
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/autodiff/derivatives.h"
#include "ir/autodiff/differentiate.h"
#include "ir/autodiff/forward_mode.h"
#include "ir/schema.h"
#include "runtime/exec/function.h"
#include "runtime/kernels/kernel.h"

namespace tsl::autodiff {
namespace {

using Shape = std::vector<int64_t>;

// One sample call of an op. Float64 tensors (and lists of them, for cat/stack) become
// graph inputs and are differentiated; everything else (dims, scalars, int64 indices,
// bool masks, class targets, and the float tensors listed in `fixed`) is a constant.
// Omitted trailing arguments take the schema's defaults.
struct Case {
  std::string name;
  std::vector<IValue> args;
  std::vector<size_t> fixed;  // float tensor arguments that are not differentiated
  int list_item = -1;         // for ops returning a list: the element checked
  // Kink cases: the gradients PyTorch defines there for an output gradient of ones,
  // one per graph input. Central differences average the two one-sided slopes, which
  // is not PyTorch's subgradient (relu'(0) = 0, three-way ties of amax get 1/3), so
  // these are compared with the given values and have no second-order check.
  std::vector<Tensor> expected;
  // The sample sits on the boundary of the op's domain (pow at base 0): only the first
  // order reverse mode, which perturbs one input at a time, stays inside it, so second
  // order and forward mode are not checked (the reason is beside the case).
  bool on_boundary = false;
  double eps = 1e-6;
  double rtol = 1e-6;
  double atol = 1e-8;  // scaled by the size of <v, f(x)>: the rounding error of the sums
};

// ---- Sample tensors --------------------------------------------------------------------

std::mt19937_64& rng() {
  static std::mt19937_64 g(20261123);
  return g;
}

Tensor from_values(const std::vector<double>& v, const Shape& shape) {
  return Tensor::from_vector<double>(v, std::span<const int64_t>(shape.data(), shape.size()));
}

int64_t count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// Uniform on [lo, hi], at least 0.1 away from each point of `avoid` (kinks).
Tensor uniform(const Shape& shape, double lo, double hi, std::vector<double> avoid = {}) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v;
  while (static_cast<int64_t>(v.size()) < count(shape)) {
    double x = d(rng());
    bool near = false;
    for (double a : avoid) near |= std::abs(x - a) < 0.1;
    if (!near) v.push_back(x);
  }
  return from_values(v, shape);
}

Tensor normal(const Shape& s) { return uniform(s, -2.0, 2.0); }
Tensor away(const Shape& s) { return uniform(s, -2.0, 2.0, {0.0}); }  // away from 0
Tensor positive(const Shape& s) { return uniform(s, 0.5, 2.0); }
Tensor unit(const Shape& s) { return uniform(s, -0.8, 0.8); }
Tensor prob(const Shape& s) { return uniform(s, 0.1, 0.9); }
// Away from integers and from halves (the kinks of floor, round, ...).
Tensor fractional(const Shape& s) {
  return uniform(s, -3.0, 3.0, {-3, -2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3});
}

Tensor op1(OpId op, std::vector<IValue> args) {
  return call_op(op, std::move(args))[0].to_tensor();
}
// t(x): a non-contiguous 2-D tensor (x is given with the transposed shape).
Tensor transposed(const Tensor& x) { return op1(OpId::t, {IValue(x)}); }
// x broadcast (stride 0) to `to`.
Tensor expanded(const Tensor& x, const Shape& to) {
  return op1(OpId::expand, {IValue(x), IValue::int_list(to)});
}
Tensor index_tensor(const std::vector<int64_t>& v, const Shape& shape) {
  return Tensor::from_vector<int64_t>(v, std::span<const int64_t>(shape.data(), shape.size()));
}
Tensor mask_of(const Tensor& x) { return op1(OpId::gt, {IValue(x), IValue(0.0)}); }

IValue L(const Shape& v) { return IValue::int_list(v); }
IValue I(int64_t v) { return IValue(v); }
IValue F(double v) { return IValue(v); }
IValue T(const Tensor& t) { return IValue(t); }
IValue tensor_list(const std::vector<Tensor>& ts) {
  std::vector<IValue> e;
  for (const Tensor& t : ts) e.emplace_back(t);
  return IValue::list(std::move(e));
}

// ---- Reading tensors -------------------------------------------------------------------

std::vector<double> values(const Tensor& t) {
  Tensor d =
      t.dtype() == DType::Float64 ? t : op1(OpId::to_dtype, {IValue(t), IValue(DType::Float64)});
  Tensor c = Tensor::empty(d.sizes(), DType::Float64);
  copy_into(c, d);
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

double inner(const Tensor& a, const Tensor& b) {
  std::vector<double> x = values(a), y = values(b);
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

double abs_inner(const Tensor& a, const Tensor& b) {
  std::vector<double> x = values(a), y = values(b);
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += std::abs(x[i] * y[i]);
  return s;
}

// A contiguous copy of x with element k (row-major) moved by delta. The reference
// values do not depend on the layout, so the copy need not keep x's strides.
Tensor perturbed(const Tensor& x, int64_t k, double delta) {
  Tensor c = Tensor::empty(x.sizes(), DType::Float64);
  copy_into(c, x);
  c.data_ptr<double>()[k] += delta;
  return c;
}

Shape dims(const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end()); }

std::string shape_of(const Tensor& t) {
  if (!t.defined()) return "undefined";
  return shape_str(std::span<const int64_t>(t.sizes().data(), t.sizes().size()));
}

// ---- Graphs ----------------------------------------------------------------------------

bool is_float64_tensor(const IValue& v) {
  return v.is_tensor() && v.to_tensor().dtype() == DType::Float64;
}

bool is_float64_list(const IValue& v) {
  if (!v.is_list() || v.to_list().elements.empty()) return false;
  for (const IValue& e : v.to_list().elements) {
    if (!is_float64_tensor(e)) return false;
  }
  return true;
}

// The type of a constant given for a parameter of type `param` (as sym.cpp types the
// literals of formulas).
TypePtr constant_type(const IValue& v, const TypePtr& param) {
  if (v.is_none()) return param->kind() == TypeKind::Optional ? param : Type::none();
  if (v.is_tensor()) return Type::tensor();
  if (v.is_bool()) return Type::bool_();
  if (v.is_int()) return Type::int_();
  if (v.is_double()) return Type::float_();
  if (v.is_dtype()) return Type::dtype();
  if (v.is_device()) return Type::device();
  if (v.is_str()) return Type::str_();
  if (v.is_list() && !v.to_list().elements.empty() && !v.to_list().elements[0].is_int()) {
    return param;  // Tensor?[] indices
  }
  return Type::list(Type::int_());
}

TypePtr result_type(const Argument& r) {
  return r.type->kind() == TypeKind::List ? r.type : Type::tensor();
}

// graph(tensor inputs...) = op(args...), its first result (or element `list_item`).
struct Built {
  std::shared_ptr<Graph> graph;
  std::vector<Tensor> inputs;  // the sample value of each graph input
};

Built build_forward(OpId op, const Case& c) {
  const FunctionSchema& schema = schema_of(op);
  Built b;
  b.graph = std::make_shared<Graph>();
  Graph& g = *b.graph;
  std::vector<Value*> args;
  for (size_t i = 0; i < c.args.size(); ++i) {
    const IValue& a = c.args[i];
    bool fixed = std::find(c.fixed.begin(), c.fixed.end(), i) != c.fixed.end();
    TSL_INTERNAL_ASSERT(i < schema.arguments.size(), "too many sample arguments for ", schema.name);
    if (is_float64_tensor(a) && !fixed) {
      args.push_back(g.add_input(Type::tensor(), "x" + std::to_string(i)));
      b.inputs.push_back(a.to_tensor());
    } else if (is_float64_list(a) && !fixed) {
      std::vector<Value*> elems;
      for (const IValue& e : a.to_list().elements) {
        elems.push_back(g.add_input(Type::tensor()));
        b.inputs.push_back(e.to_tensor());
      }
      Node* l = g.insert(g.create(OpId::ListConstruct, elems));
      args.push_back(l->output()->set_type(Type::list(Type::tensor())));
    } else {
      args.push_back(g.insert_constant(a, constant_type(a, schema.arguments[i].type)));
    }
  }
  for (size_t i = c.args.size(); i < schema.arguments.size(); ++i) {
    const Argument& a = schema.arguments[i];
    TSL_INTERNAL_ASSERT(a.default_value.has_value(), "sample omits required argument '", a.name,
                        "' of ", schema.name);
    args.push_back(g.insert_constant(*a.default_value, constant_type(*a.default_value, a.type)));
  }
  Node* n = g.insert(g.create(op, args, schema.returns.size()));
  for (size_t i = 0; i < schema.returns.size(); ++i)
    n->output(i)->set_type(result_type(schema.returns[i]));
  Value* out = n->output(0);
  if (c.list_item >= 0) {
    Value* k = g.insert_constant(IValue(int64_t{c.list_item}), Type::int_());
    out = g.insert_op(OpId::getitem_list, {out, k}, Type::tensor());
  }
  g.add_output(out);
  verify(g);
  return b;
}

std::vector<size_t> all_inputs(const Graph& g) {
  std::vector<size_t> wrt;
  for (size_t i = 0; i < g.inputs().size(); ++i) wrt.push_back(i);
  return wrt;
}

// Runs a compiled graph; every run starts from the same random seed, so dropout draws
// the same mask in the forward graph, its perturbed runs and the gradient graph.
class Runner {
 public:
  explicit Runner(std::shared_ptr<Graph> g) : fn_("gradcheck", std::move(g)) {}
  std::vector<IValue> run(const std::vector<Tensor>& inputs) {
    call_op(OpId::manual_seed, {IValue(int64_t{0})}, 0);
    std::vector<IValue> in(inputs.begin(), inputs.end());
    return fn_.run(std::move(in));
  }

 private:
  Function fn_;
};

// ---- Comparing -------------------------------------------------------------------------

struct Tolerance {
  double rtol, atol;
};

// Checks `got` (the gradient of `what` with respect to input `i`) against `want`,
// element by element; reports the first few mismatches.
void expect_close(const std::string& what, size_t i, const Tensor& x, const IValue& got_v,
                  const std::vector<double>& want, Tolerance tol) {
  if (!got_v.is_tensor() || !got_v.to_tensor().defined()) {
    ADD_FAILURE() << what << ": no gradient for input " << i;
    return;
  }
  Tensor got = got_v.to_tensor();
  if (dims(got) != dims(x) || got.dtype() != x.dtype()) {
    ADD_FAILURE() << what << ": gradient of input " << i << " has shape " << shape_of(got) << " "
                  << dtype_name(got.dtype()) << ", the input " << shape_of(x) << " "
                  << dtype_name(x.dtype());
    return;
  }
  std::vector<double> g = values(got);
  int reported = 0;
  for (size_t k = 0; k < g.size(); ++k) {
    double err = std::abs(g[k] - want[k]);
    bool ok = err <= tol.rtol * std::max(std::abs(g[k]), std::abs(want[k])) + tol.atol;
    if (!ok && reported++ < 4) {
      ADD_FAILURE() << what << ": input " << i << " " << shape_of(x) << ", element " << k
                    << ": expected " << want[k] << " (numerical), got " << g[k];
    }
  }
}

// Central differences of s(inputs) = <v, f(inputs)> with respect to input i.
std::vector<double> numerical(Runner& f, std::vector<Tensor> inputs, size_t i, const Tensor& v,
                              double eps) {
  const Tensor x = inputs[i];
  std::vector<double> out;
  for (int64_t k = 0; k < x.numel(); ++k) {
    inputs[i] = perturbed(x, k, eps);
    double plus = inner(v, f.run(inputs)[0].to_tensor());
    inputs[i] = perturbed(x, k, -eps);
    double minus = inner(v, f.run(inputs)[0].to_tensor());
    out.push_back((plus - minus) / (2 * eps));
  }
  return out;
}

Tensor random_like(const Tensor& y) { return normal(dims(y)); }

Tensor ones_like_tensor(const Tensor& y) {
  return from_values(std::vector<double>(static_cast<size_t>(y.numel()), 1.0), dims(y));
}

std::string label(OpId op, const Case& c) {
  return std::string(op_info(op).name) + " [" + c.name + "]";
}

// First order: the joint graph's input gradients for a random output gradient v
// against central differences of <v, f(x)> (or the kink case's expected values).
void check_first_order(OpId op, const Case& c, const Built& b) {
  Runner f(b.graph);
  Tensor y = f.run(b.inputs)[0].to_tensor();
  JointGraph j = build_joint(*b.graph, all_inputs(*b.graph), JointOptions{});
  if (j.seeded_outputs.empty()) {
    ADD_FAILURE() << label(op, c) << ": the result does not depend on the inputs for autodiff";
    return;
  }
  Tensor v = c.expected.empty() ? random_like(y) : ones_like_tensor(y);
  std::vector<Tensor> joint_in = b.inputs;
  joint_in.push_back(v);
  std::vector<IValue> out = Runner(j.graph).run(joint_in);
  Tolerance tol{c.rtol, c.atol * std::max(1.0, abs_inner(v, y))};
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    const IValue& got = out.at(j.num_forward_outputs + i);
    std::vector<double> want =
        c.expected.empty() ? numerical(f, b.inputs, i, v, c.eps) : values(c.expected.at(i));
    expect_close(label(op, c) + " first order", i, b.inputs[i], got, want, tol);
  }
}

// Second order: s(x, v) = sum_i sum(grad_i(x, v) * u_i) for random u, built on the
// joint graph and differentiated again (with respect to x and v), against central
// differences of s.
void check_second_order(OpId op, const Case& c, const Built& b, const JointGraph& j) {
  std::shared_ptr<Graph> s = j.graph->clone();
  std::vector<Value*> grads(
      s->outputs().begin() + static_cast<std::ptrdiff_t>(j.num_forward_outputs),
      s->outputs().end());
  while (!s->outputs().empty()) s->block()->erase_return(0);
  {
    InsertPointGuard guard(*s, s->block());
    FormulaScope scope(*s, {});
    Sym total;
    for (size_t i = 0; i < grads.size(); ++i) {
      Sym u = constant(IValue(random_like(b.inputs[i])), Type::tensor());
      Sym term = sum_all(Sym(grads[i]) * u);
      total = total ? total + term : term;
    }
    s->add_output(total);
  }
  verify(*s);
  Runner fs(s);
  std::vector<Tensor> in = b.inputs;
  Tensor y = Runner(b.graph).run(b.inputs)[0].to_tensor();
  in.push_back(random_like(y));
  Tensor sv = fs.run(in)[0].to_tensor();
  JointOptions opts;
  opts.seed_with_ones = true;
  JointGraph j2 = build_joint(*s, all_inputs(*s), opts);
  std::vector<IValue> out = Runner(j2.graph).run(in);
  Tensor one = ones_like_tensor(sv);
  Tolerance tol{c.rtol * 10, c.atol * 10 * std::max(1.0, std::abs(values(sv)[0]))};
  for (size_t i = 0; i < in.size(); ++i) {
    std::vector<double> want = numerical(fs, in, i, one, c.eps);
    expect_close(label(op, c) + " second order", i, in[i], out.at(j2.num_forward_outputs + i), want,
                 tol);
  }
}

// x + s * t as a new contiguous float64 tensor.
Tensor axpy(const Tensor& x, const Tensor& t, double s) {
  Tensor c = Tensor::empty(x.sizes(), DType::Float64);
  copy_into(c, x);
  std::vector<double> tv = values(t);
  double* p = c.data_ptr<double>();
  for (size_t k = 0; k < tv.size(); ++k) p[k] += s * tv[k];
  return c;
}

// Forward mode: build_jvp's tangent of f at x in a random direction t against
// (f(x + eps t) - f(x - eps t)) / (2 eps), element by element.
void check_forward_mode(OpId op, const Case& c, const Built& b) {
  JvpGraph j = build_jvp(*b.graph, all_inputs(*b.graph), "gradcheck");
  std::vector<Tensor> tangents, in = b.inputs, plus, minus;
  for (const Tensor& x : b.inputs) {
    tangents.push_back(random_like(x));
    plus.push_back(axpy(x, tangents.back(), c.eps));
    minus.push_back(axpy(x, tangents.back(), -c.eps));
  }
  in.insert(in.end(), tangents.begin(), tangents.end());
  std::vector<IValue> out = Runner(j.graph).run(in);
  Runner f(b.graph);
  Tensor y = f.run(b.inputs)[0].to_tensor();
  std::vector<double> yp = values(f.run(plus)[0].to_tensor());
  std::vector<double> ym = values(f.run(minus)[0].to_tensor());
  std::vector<double> want;
  double scale = 1;
  for (size_t k = 0; k < yp.size(); ++k) {
    want.push_back((yp[k] - ym[k]) / (2 * c.eps));
    scale = std::max(scale, std::abs(yp[k]));
  }
  Tolerance tol{c.rtol, c.atol * 10 * scale};
  expect_close(label(op, c) + " forward mode", 0, y, out.at(j.num_forward_outputs), want, tol);
}

// ---- The sample table ------------------------------------------------------------------

using Table = std::map<OpId, std::vector<Case>>;
using Gen = Tensor (*)(const Shape&);

void add(Table& t, OpId op, std::string name, std::vector<IValue> args,
         std::vector<size_t> fixed = {}) {
  Case c;
  c.name = std::move(name);
  c.args = std::move(args);
  c.fixed = std::move(fixed);
  t[op].push_back(std::move(c));
}

void add_kink(Table& t, OpId op, std::string name, std::vector<IValue> args,
              std::vector<Tensor> expected) {
  Case c;
  c.name = std::move(name);
  c.args = std::move(args);
  c.expected = std::move(expected);
  c.atol = 1e-12;
  t[op].push_back(std::move(c));
}

Tensor vec(std::vector<double> v) { return from_values(v, {static_cast<int64_t>(v.size())}); }
Tensor mat(std::vector<double> v, int64_t rows) {
  return from_values(v, {rows, static_cast<int64_t>(v.size()) / rows});
}

// Every elementwise op with one tensor input: plain, 0-dim, size-1 dims, transposed
// and expanded inputs. `extra` are the op's other (non-tensor) arguments.
void unary(Table& t, OpId op, Gen gen, std::vector<IValue> extra = {}, std::string tag = "") {
  auto with = [&](Tensor x) {
    std::vector<IValue> a{IValue(x)};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  add(t, op, tag + "[2,3]", with(gen({2, 3})));
  add(t, op, tag + "0-dim", with(gen({})));
  add(t, op, tag + "[3,1]", with(gen({3, 1})));
  add(t, op, tag + "transposed [2,3]", with(transposed(gen({3, 2}))));
  add(t, op, tag + "expanded [3,1]->[3,4]", with(expanded(gen({3, 1}), {3, 4})));
}

void add_unary_cases(Table& t) {
  for (OpId op :
       {OpId::neg, OpId::exp, OpId::exp2, OpId::expm1, OpId::sin, OpId::cos, OpId::atan, OpId::sinh,
        OpId::cosh, OpId::erf, OpId::square, OpId::tanh, OpId::sigmoid, OpId::silu}) {
    unary(t, op, normal);
  }
  for (OpId op : {OpId::abs, OpId::relu, OpId::sign}) unary(t, op, away);
  for (OpId op : {OpId::log, OpId::log2, OpId::log10, OpId::log1p, OpId::sqrt, OpId::rsqrt}) {
    unary(t, op, positive);
  }
  unary(t, OpId::reciprocal, away);
  for (OpId op : {OpId::tan, OpId::asin, OpId::acos}) unary(t, op, unit);
  for (OpId op : {OpId::floor, OpId::ceil, OpId::round, OpId::trunc, OpId::frac}) {
    unary(t, op, fractional);
  }
  unary(t, OpId::gelu, normal);
  unary(t, OpId::gelu, normal, {IValue("tanh")}, "tanh ");
  unary(t, OpId::softplus, normal);
  // beta 2, threshold 1: both sides of the threshold (beta x = 1 at x = 0.5).
  add(t, OpId::softplus, "beta 2 threshold 1",
      {T(uniform({2, 4}, -1.5, 1.5, {0.5})), F(2.0), F(1.0)});
  unary(t, OpId::elu, away);
  add(t, OpId::elu, "alpha 0.5", {T(away({2, 3})), F(0.5)});
  unary(t, OpId::leaky_relu, away);
  add(t, OpId::leaky_relu, "slope 0.2", {T(away({2, 3})), F(0.2)});
  {
    Gen g = [](const Shape& s) { return uniform(s, -2.0, 2.0, {-1.0, 0.5, 1.0}); };
    unary(t, OpId::hardtanh, g, {F(-1.0), F(0.5)});
    add(t, OpId::hardtanh, "default bounds", {T(g({2, 3}))});
    add(t, OpId::hardtanh, "int bounds", {T(g({2, 3})), I(-1), I(1)});
  }
  {
    Gen g = [](const Shape& s) { return uniform(s, 0.1, 0.9); };
    unary(t, OpId::logit, g);
    // eps 0.2: inside [0.2, 0.8] the derivative of the formula, 0 where clamped.
    Gen h = [](const Shape& s) { return uniform(s, 0.0, 1.0, {0.2, 0.8}); };
    add(t, OpId::logit, "eps 0.2", {T(h({2, 4})), F(0.2)});
  }
  for (OpId op : {OpId::clamp, OpId::clip}) {
    Gen g = [](const Shape& s) { return uniform(s, -2.0, 2.0, {-1.0, 1.0}); };
    unary(t, op, g, {F(-1.0), F(1.0)});
    add(t, op, "min only", {T(g({2, 3})), F(-1.0), IValue()});
    add(t, op, "max only", {T(g({2, 3})), IValue(), F(1.0)});
    add(t, op, "int bounds", {T(g({2, 3})), I(-1), I(1)});
  }
}

// Binary elementwise ops: same shapes, broadcasting ([3,1] with [4]), 0-dim against
// [2,3] on either side, a transposed with an expanded input, and Python numbers.
void binary(Table& t, OpId op, Gen ga, Gen gb, std::vector<IValue> extra = {}) {
  auto with = [&](IValue a, IValue b) {
    std::vector<IValue> v{std::move(a), std::move(b)};
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  add(t, op, "[2,3] [2,3]", with(T(ga({2, 3})), T(gb({2, 3}))));
  add(t, op, "broadcast [3,1] [4]", with(T(ga({3, 1})), T(gb({4}))));
  add(t, op, "[2,3] 0-dim", with(T(ga({2, 3})), T(gb({}))));
  add(t, op, "0-dim [2,3]", with(T(ga({})), T(gb({2, 3}))));
  add(t, op, "transposed, expanded",
      with(T(transposed(ga({3, 2}))), T(expanded(gb({2, 1}), {2, 3}))));
  add(t, op, "[2,3] number", with(T(ga({2, 3})), F(values(gb({}))[0])));
}

void add_binary_cases(Table& t) {
  binary(t, OpId::add, normal, normal);
  binary(t, OpId::add, normal, normal, {F(2.5)});  // alpha
  binary(t, OpId::sub, normal, normal);
  binary(t, OpId::sub, normal, normal, {F(-1.5)});
  binary(t, OpId::mul, normal, normal);
  add(t, OpId::mul, "number [2,3]", {F(1.5), T(normal({2, 3}))});
  binary(t, OpId::div, normal, away);
  add(t, OpId::div, "number [2,3]", {F(1.5), T(away({2, 3}))});
  // Rounded divisions have a zero gradient; a / b is kept away from integers.
  for (const char* mode : {"floor", "trunc"}) {
    add(t, OpId::div, std::string("rounding ") + mode,
        {T(mat({1.3, -2.6, 4.1, 0.5, 2.2, -0.3}, 2)), T(mat({0.7, 1.1, -1.9, 0.8, -0.9, 0.7}, 2)),
         IValue(mode)});
  }
  binary(t, OpId::remainder, normal, positive);
  add(t, OpId::remainder, "negative divisor", {T(normal({2, 3})), T(uniform({2, 3}, -2.0, -0.5))});
  binary(t, OpId::pow, positive, normal);
  add(t, OpId::pow, "number base", {F(1.7), T(normal({2, 3}))});
  add(t, OpId::pow, "exponent 0", {T(normal({2, 3})), F(0.0)});
  add(t, OpId::pow, "int exponent, negative base", {T(normal({2, 3})), I(3)});
  add(t, OpId::pow, "zero base", {T(vec({0.0, 1.5, 0.0})), T(vec({2.0, 0.5, 3.0}))});
  // Second order at base 0 reads log(0) (PyTorch's pow double backward gives NaN too),
  // and central differences along a direction step into a negative base.
  t[OpId::pow].back().on_boundary = true;
  binary(t, OpId::atan2, normal, away);
  for (OpId op : {OpId::maximum, OpId::minimum, OpId::max_other, OpId::min_other}) {
    binary(t, op, normal, normal);
  }
  // where(cond, self, other): cond is a constant bool tensor.
  add(t, OpId::where, "[2,3]", {T(mask_of(normal({2, 3}))), T(normal({2, 3})), T(normal({2, 3}))});
  add(t, OpId::where, "broadcast", {T(mask_of(normal({3, 1}))), T(normal({4})), T(normal({3, 4}))});
  add(t, OpId::where, "0-dim self", {T(mask_of(normal({2, 3}))), T(normal({})), T(normal({2, 3}))});
  add(t, OpId::where, "number other", {T(mask_of(normal({2, 3}))), T(normal({2, 3})), F(0.0)});
  add(t, OpId::where, "transposed",
      {T(mask_of(normal({2, 3}))), T(transposed(normal({3, 2}))),
       T(expanded(normal({1, 3}), {2, 3}))});
  add(t, OpId::AutogradAdd, "[2,3]", {T(normal({2, 3})), T(normal({2, 3}))});
  add(t, OpId::AutogradAdd, "transposed", {T(transposed(normal({3, 2}))), T(normal({2, 3}))});
  add(t, OpId::AutogradZeros, "[2,3]", {T(normal({2, 3})), T(normal({2, 3}))});
}

// x of shape [2,3,4] as the transpose of a [4,3,2] tensor's dims 0 and 2.
Tensor noncontiguous3() { return op1(OpId::transpose, {IValue(normal({4, 3, 2})), I(0), I(2)}); }

void add_reduction_cases(Table& t) {
  for (OpId op : {OpId::sum, OpId::mean}) {
    add(t, op, "all", {T(normal({2, 3}))});
    add(t, op, "dim 1", {T(normal({2, 3})), L({1})});
    add(t, op, "dims 0,2 keepdim", {T(normal({2, 3, 4})), L({0, 2}), IValue(true)});
    add(t, op, "dim -1 non-contiguous", {T(noncontiguous3()), L({-1})});
    add(t, op, "0-dim", {T(normal({}))});
    add(t, op, "size-1 dim", {T(normal({3, 1})), L({1})});
    add(t, op, "expanded", {T(expanded(normal({3, 1}), {3, 4})), L({0})});
    add(t, op, "dims []", {T(normal({2, 3})), L({})});
  }
  add(t, OpId::prod, "all", {T(normal({2, 3}))});
  add(t, OpId::prod, "dim 1", {T(normal({2, 3})), I(1)});
  add(t, OpId::prod, "dim 0 keepdim transposed",
      {T(transposed(normal({3, 2}))), I(0), IValue(true)});
  add(t, OpId::prod, "one zero", {T(mat({1.5, 0.0, -0.7, 2.0, 1.1, 0.9}, 2)), I(1)});
  add(t, OpId::prod, "two zeros", {T(mat({0.0, 0.0, -0.7, 2.0, 1.1, 0.9}, 2)), I(1)});
  add(t, OpId::prod, "one zero, all", {T(mat({1.5, 0.0, -0.7, 2.0, 1.1, 0.9}, 2))});
  add(t, OpId::prod, "0-dim", {T(normal({}))});
  for (OpId op : {OpId::amax, OpId::amin}) {
    add(t, op, "all", {T(normal({2, 3}))});
    add(t, op, "dim 1", {T(normal({2, 3})), L({1})});
    add(t, op, "dims 0,2 keepdim", {T(normal({2, 3, 4})), L({0, 2}), IValue(true)});
    add(t, op, "non-contiguous", {T(noncontiguous3()), L({-1})});
    add(t, op, "0-dim", {T(normal({}))});
  }
  for (OpId op : {OpId::max, OpId::min}) {
    add(t, op, "[2,3]", {T(normal({2, 3}))});
    add(t, op, "transposed", {T(transposed(normal({3, 2})))});
    add(t, op, "0-dim", {T(normal({}))});
  }
  for (OpId op : {OpId::max_dim, OpId::min_dim}) {
    add(t, op, "dim 1", {T(normal({2, 3})), I(1)});
    add(t, op, "dim 0 keepdim", {T(normal({2, 3})), I(0), IValue(true)});
    add(t, op, "non-contiguous dim -1", {T(noncontiguous3()), I(-1)});
    add(t, op, "size-1 dim", {T(normal({3, 1})), I(1)});
  }
  add(t, OpId::logsumexp, "dim 1", {T(normal({2, 3})), L({1})});
  add(t, OpId::logsumexp, "dims 0,1 keepdim", {T(normal({2, 3})), L({0, 1}), IValue(true)});
  add(t, OpId::logsumexp, "non-contiguous", {T(noncontiguous3()), L({0})});
  add(t, OpId::logsumexp, "0-dim", {T(normal({})), L({0})});
  for (OpId op : {OpId::var, OpId::std}) {
    add(t, op, "unbiased", {T(normal({2, 3}))});
    add(t, op, "biased", {T(normal({2, 3})), IValue(false)});
    add(t, op, "transposed", {T(transposed(normal({3, 2})))});
  }
  for (OpId op : {OpId::var_dim, OpId::std_dim}) {
    add(t, op, "dim 1", {T(normal({2, 3})), L({1})});
    add(t, op, "dim 0 biased keepdim", {T(normal({3, 2})), L({0}), IValue(false), IValue(true)});
    add(t, op, "dim None", {T(normal({2, 3})), IValue()});
    add(t, op, "non-contiguous", {T(noncontiguous3()), L({0, 2})});
  }
  add(t, OpId::norm, "p 2", {T(normal({2, 3}))});
  add(t, OpId::norm, "p 1", {T(away({2, 3})), F(1.0)});
  add(t, OpId::norm, "p 3 dim 1", {T(away({2, 3})), F(3.0), L({1})});
  add(t, OpId::norm, "p 2 dim 0 keepdim",
      {T(transposed(normal({3, 2}))), F(2.0), L({0}), IValue(true)});
  add(t, OpId::norm, "p inf dim 1", {T(normal({2, 3})), F(INFINITY), L({1})});
  add(t, OpId::norm, "int p", {T(normal({2, 3})), I(2)});
  add(t, OpId::cumsum, "dim 1", {T(normal({2, 3})), I(1)});
  add(t, OpId::cumsum, "dim 0 transposed", {T(transposed(normal({3, 2}))), I(0)});
  add(t, OpId::cumsum, "0-dim", {T(normal({})), I(0)});
}

void add_linalg_cases(Table& t) {
  add(t, OpId::matmul, "[2,3] [3,4]", {T(normal({2, 3})), T(normal({3, 4}))});
  add(t, OpId::matmul, "[3] [3]", {T(normal({3})), T(normal({3}))});
  add(t, OpId::matmul, "[3] [3,4]", {T(normal({3})), T(normal({3, 4}))});
  add(t, OpId::matmul, "[2,3] [3]", {T(normal({2, 3})), T(normal({3}))});
  add(t, OpId::matmul, "batch broadcast [2,2,3] [3,4]", {T(normal({2, 2, 3})), T(normal({3, 4}))});
  add(t, OpId::matmul, "batch broadcast [1,2,3] [2,3,2]",
      {T(normal({1, 2, 3})), T(normal({2, 3, 2}))});
  add(t, OpId::matmul, "[3] [2,3,2]", {T(normal({3})), T(normal({2, 3, 2}))});
  add(t, OpId::matmul, "transposed",
      {T(transposed(normal({3, 2}))), T(transposed(normal({4, 3})))});
  add(t, OpId::mm, "[2,3] [3,4]", {T(normal({2, 3})), T(normal({3, 4}))});
  add(t, OpId::mm, "transposed",
      {T(transposed(normal({3, 2}))), T(expanded(normal({3, 1}), {3, 4}))});
  add(t, OpId::bmm, "[2,2,3] [2,3,2]", {T(normal({2, 2, 3})), T(normal({2, 3, 2}))});
  add(t, OpId::bmm, "non-contiguous", {T(noncontiguous3()), T(normal({2, 4, 1}))});
  add(t, OpId::mv, "[2,3] [3]", {T(normal({2, 3})), T(normal({3}))});
  add(t, OpId::mv, "transposed", {T(transposed(normal({3, 2}))), T(normal({3}))});
  add(t, OpId::dot, "[3] [3]", {T(normal({3})), T(normal({3}))});
  add(t, OpId::dot, "expanded", {T(expanded(normal({1}), {3})), T(normal({3}))});
  add(t, OpId::outer, "[3] [2]", {T(normal({3})), T(normal({2}))});
  add(t, OpId::linear, "bias", {T(normal({2, 3})), T(normal({4, 3})), T(normal({4}))});
  add(t, OpId::linear, "no bias", {T(normal({2, 3})), T(normal({4, 3}))});
  add(t, OpId::linear, "1-D input", {T(normal({3})), T(normal({4, 3})), T(normal({4}))});
  add(t, OpId::linear, "3-D input", {T(normal({2, 2, 3})), T(normal({4, 3})), T(normal({4}))});
  add(t, OpId::linear, "transposed weight",
      {T(normal({2, 3})), T(transposed(normal({3, 4}))), T(normal({}))});
}

void add_shape_cases(Table& t) {
  add(t, OpId::t, "[2,3]", {T(normal({2, 3}))});
  add(t, OpId::t, "[3]", {T(normal({3}))});
  add(t, OpId::t, "transposed", {T(transposed(normal({3, 2})))});
  add(t, OpId::transpose, "[2,3,4] 0 2", {T(normal({2, 3, 4})), I(0), I(2)});
  add(t, OpId::transpose, "negative dims", {T(noncontiguous3()), I(-1), I(-2)});
  add(t, OpId::permute, "[2,3,4]", {T(normal({2, 3, 4})), L({2, 0, 1})});
  add(t, OpId::permute, "non-contiguous", {T(noncontiguous3()), L({1, 2, 0})});
  add(t, OpId::reshape, "[2,3] -> [3,2]", {T(normal({2, 3})), L({3, 2})});
  add(t, OpId::reshape, "-1", {T(normal({2, 3})), L({-1})});
  add(t, OpId::reshape, "transposed", {T(transposed(normal({3, 2}))), L({6, 1})});
  add(t, OpId::reshape, "0-dim", {T(normal({})), L({1, 1})});
  add(t, OpId::view, "[2,3] -> [6]", {T(normal({2, 3})), L({6})});
  add(t, OpId::view, "[2,3] -> [3,1,2]", {T(normal({2, 3})), L({3, 1, 2})});
  add(t, OpId::flatten, "default", {T(normal({2, 3, 4}))});
  add(t, OpId::flatten, "1..2 non-contiguous", {T(noncontiguous3()), I(1), I(2)});
  add(t, OpId::squeeze, "[2,1,3]", {T(normal({2, 1, 3}))});
  add(t, OpId::squeeze, "expanded", {T(expanded(normal({1, 3}), {1, 3}))});
  add(t, OpId::squeeze_dim, "dim 1", {T(normal({2, 1, 3})), I(1)});
  add(t, OpId::squeeze_dim, "not size 1", {T(normal({2, 3})), I(0)});
  add(t, OpId::unsqueeze, "dim 0", {T(normal({2, 3})), I(0)});
  add(t, OpId::unsqueeze, "dim -1 transposed", {T(transposed(normal({3, 2}))), I(-1)});
  add(t, OpId::unsqueeze, "0-dim", {T(normal({})), I(0)});
  for (OpId op : {OpId::expand, OpId::broadcast_to}) {
    add(t, op, "[3,1] -> [3,4]", {T(normal({3, 1})), L({3, 4})});
    add(t, op, "[3] -> [2,3]", {T(normal({3})), L({2, 3})});
    add(t, op, "0-dim -> [2,2]", {T(normal({})), L({2, 2})});
    add(t, op, "transposed", {T(transposed(normal({1, 3}))), L({3, 2})});
  }
  add(t, OpId::expand, "-1", {T(normal({3, 1})), L({2, -1, 4})});
  for (OpId op : {OpId::expand_as, OpId::view_as, OpId::reshape_as}) {
    Tensor x = op == OpId::expand_as ? normal({3, 1}) : normal({2, 6});
    Shape other = op == OpId::expand_as ? Shape{3, 4} : Shape{4, 3};
    add(t, op, "other differentiated", {T(x), T(normal(other))});
    add(t, op, "other fixed", {T(x), T(normal(other))}, {1});
  }
  add(t, OpId::reshape_as, "transposed", {T(transposed(normal({3, 2}))), T(normal({6}))});
  add(t, OpId::cat, "dim 0", {tensor_list({normal({2, 3}), normal({1, 3})})});
  add(t, OpId::cat, "dim 1 transposed",
      {tensor_list({transposed(normal({3, 2})), normal({2, 1})}), I(1)});
  add(t, OpId::cat, "three, dim -1", {tensor_list({normal({2}), normal({3}), normal({1})}), I(-1)});
  add(t, OpId::cat, "one", {tensor_list({normal({2, 3})}), I(0)});
  add(t, OpId::stack, "dim 0", {tensor_list({normal({2, 3}), normal({2, 3})})});
  add(t, OpId::stack, "dim -1",
      {tensor_list({normal({2, 3}), transposed(normal({3, 2})), normal({2, 3})}), I(-1)});
  add(t, OpId::stack, "0-dim", {tensor_list({normal({}), normal({})})});
  add(t, OpId::sum_tensor_list, "same shapes", {tensor_list({normal({2, 3}), normal({2, 3})})});
  add(t, OpId::sum_tensor_list, "broadcast",
      {tensor_list({normal({3}), normal({2, 3}), normal({1, 1})})});
  // List results: one element of the list is the checked output.
  auto list_case = [&](OpId op, std::string name, std::vector<IValue> args, int item) {
    add(t, op, std::move(name), std::move(args));
    t[op].back().list_item = item;
  };
  list_case(OpId::split, "size 2 dim 0, piece 1", {T(normal({5, 3})), I(2)}, 1);
  list_case(OpId::split, "size 2 dim 1, last piece", {T(transposed(normal({3, 2}))), I(2), I(1)},
            1);
  list_case(OpId::split_sizes, "[1,3] piece 1", {T(normal({4, 2})), L({1, 3})}, 1);
  list_case(OpId::chunk, "3 chunks dim 1, piece 0", {T(normal({2, 6})), I(3), I(1)}, 0);
  add(t, OpId::narrow, "dim 0", {T(normal({4, 3})), I(0), I(1), I(2)});
  add(t, OpId::narrow, "dim -1 transposed", {T(transposed(normal({3, 4}))), I(-1), I(0), I(2)});
  add(t, OpId::select, "dim 1 index -1", {T(normal({2, 3})), I(1), I(-1)});
  add(t, OpId::select, "dim 0 non-contiguous", {T(noncontiguous3()), I(0), I(1)});
  add(t, OpId::select, "1-D", {T(normal({3})), I(0), I(2)});
  add(t, OpId::slice, "dim 0 1: step 2", {T(normal({5, 2})), I(0), I(1), IValue(), I(2)});
  add(t, OpId::slice, "dim 1 :2", {T(transposed(normal({3, 2}))), I(1), IValue(), I(2)});
  add(t, OpId::slice, "defaults", {T(normal({3, 2}))});
  add(t, OpId::slice, "negative start", {T(normal({4})), I(0), I(-3), I(-1)});
  {
    auto idx = [](std::vector<int64_t> v) {
      return IValue(index_tensor(v, {static_cast<int64_t>(v.size())}));
    };
    add(t, OpId::index, "rows", {T(normal({4, 3})), IValue::list({idx({2, 0})})});
    add(t, OpId::index, "repeated rows", {T(normal({4, 3})), IValue::list({idx({1, 1, 3})})});
    add(t, OpId::index, "None, cols",
        {T(transposed(normal({3, 4}))), IValue::list({IValue(), idx({2, 0})})});
    add(t, OpId::index, "two index tensors",
        {T(normal({4, 3})), IValue::list({idx({0, 3, 3}), idx({2, 1, 1})})});
    add(t, OpId::index, "bool mask",
        {T(normal({4})), IValue::list({T(mask_of(vec({1, -1, 1, 1})))})});
    add(t, OpId::index_select, "dim 0", {T(normal({4, 3})), I(0), idx({2, 0, 2})});
    add(t, OpId::index_select, "dim 1 transposed",
        {T(transposed(normal({3, 4}))), I(1), idx({1, 1})});
    add(t, OpId::index_add, "dim 0", {T(normal({4, 3})), I(0), idx({2, 0}), T(normal({2, 3}))});
    add(t, OpId::index_add, "alpha, repeated",
        {T(normal({4, 3})), I(0), idx({1, 1}), T(normal({2, 3})), F(2.5)});
    add(t, OpId::index_add, "dim 1 transposed",
        {T(transposed(normal({3, 2}))), I(1), idx({2, 0}), T(normal({2, 2}))});
    add(t, OpId::index_put, "rows",
        {T(normal({4, 3})), IValue::list({idx({2, 0})}), T(normal({2, 3}))});
    add(t, OpId::index_put, "accumulate repeated",
        {T(normal({4, 3})), IValue::list({idx({1, 1})}), T(normal({2, 3})), IValue(true)});
    add(t, OpId::index_put, "broadcast values",
        {T(normal({4, 3})), IValue::list({idx({3, 1})}), T(normal({3}))});
    add(t, OpId::index_put, "0-dim values",
        {T(normal({4})), IValue::list({idx({3, 1})}), T(normal({}))});
  }
  Tensor g_index = index_tensor({0, 3, 1, 1, 2, 0}, {3, 2});
  add(t, OpId::gather, "dim 1", {T(normal({3, 4})), I(1), T(g_index)});
  add(t, OpId::gather, "dim 0 transposed",
      {T(transposed(normal({3, 4}))), I(0), T(index_tensor({0, 3, 1, 1}, {2, 2}))});
  add(t, OpId::scatter_add, "dim 1", {T(normal({3, 4})), I(1), T(g_index), T(normal({3, 2}))});
  add(t, OpId::scatter_add, "dim 0 transposed",
      {T(transposed(normal({4, 2}))), I(0), T(index_tensor({0, 1, 1, 1}, {2, 2})),
       T(normal({2, 2}))});
  add(t, OpId::repeat, "[2,1]", {T(normal({2, 3})), L({2, 1})});
  add(t, OpId::repeat, "more dims", {T(normal({2, 3})), L({2, 1, 2})});
  add(t, OpId::repeat, "transposed", {T(transposed(normal({3, 2}))), L({1, 3})});
  add(t, OpId::repeat, "0-dim", {T(normal({})), L({3})});
  add(t, OpId::flip, "dim 0", {T(normal({3, 2})), L({0})});
  add(t, OpId::flip, "both transposed", {T(transposed(normal({3, 2}))), L({0, 1})});
  for (OpId op : {OpId::contiguous, OpId::clone}) {
    add(t, op, "[2,3]", {T(normal({2, 3}))});
    add(t, op, "transposed", {T(transposed(normal({3, 2})))});
    add(t, op, "expanded", {T(expanded(normal({1, 3}), {2, 3}))});
    add(t, op, "0-dim", {T(normal({}))});
  }
  add(t, OpId::to_dtype, "float64", {T(normal({2, 3})), IValue(DType::Float64)});
  add(t, OpId::to_dtype, "transposed", {T(transposed(normal({3, 2}))), IValue(DType::Float64)});
  {
    // Through float32: the values are rounded, so larger steps and tolerances.
    add(t, OpId::to_dtype, "float32", {T(normal({2, 3})), IValue(DType::Float32)});
    Case& c = t[OpId::to_dtype].back();
    c.eps = 1e-2;
    c.rtol = 1e-4;
    c.atol = 1e-4;
  }
  add(t, OpId::to_device, "cpu", {T(normal({2, 3})), IValue(kCPU)});
  add(t, OpId::sum_to_size, "[3,4] -> [3,1]", {T(normal({3, 4})), L({3, 1})});
  add(t, OpId::sum_to_size, "[2,3] -> [3]", {T(normal({2, 3})), L({3})});
  add(t, OpId::sum_to_size, "same size", {T(transposed(normal({3, 2}))), L({2, 3})});
  add(t, OpId::sum_to_size, "-> 0-dim", {T(normal({2, 3})), L({})});
  add(t, OpId::slice_scatter, "dim 0 1:3",
      {T(normal({4, 3})), T(normal({2, 3})), I(0), I(1), I(3)});
  add(t, OpId::slice_scatter, "dim 1 step 2",
      {T(transposed(normal({4, 2}))), T(normal({2, 2})), I(1), I(0), IValue(), I(2)});
  add(t, OpId::select_scatter, "dim 0", {T(normal({4, 3})), T(normal({3})), I(0), I(2)});
  add(t, OpId::select_scatter, "dim 1 transposed",
      {T(transposed(normal({3, 2}))), T(normal({2})), I(1), I(-1)});
}

void add_nn_cases(Table& t) {
  for (OpId op : {OpId::softmax, OpId::log_softmax}) {
    add(t, op, "dim 1", {T(normal({2, 3})), I(1)});
    add(t, op, "dim 0 transposed", {T(transposed(normal({3, 2}))), I(0)});
    add(t, op, "1-D", {T(normal({4})), I(-1)});
    add(t, op, "size-1 dim", {T(normal({3, 1})), I(1)});
    add(t, op, "0-dim", {T(normal({})), I(0)});
  }
  Tensor target = index_tensor({1, 3, 0}, {3});
  Tensor weight = positive({4});
  for (OpId op : {OpId::cross_entropy, OpId::nll_loss}) {
    add(t, op, "mean", {T(normal({3, 4})), T(target)});
    add(t, op, "weight", {T(normal({3, 4})), T(target), T(weight)}, {2});
    add(t, op, "sum", {T(normal({3, 4})), T(target), IValue(), I(-100), IValue("sum")});
    add(t, op, "none", {T(normal({3, 4})), T(target), IValue(), I(-100), IValue("none")});
    add(t, op, "ignore_index, weight", {T(normal({3, 4})), T(target), T(weight), I(3)}, {2});
    add(t, op, "transposed", {T(transposed(normal({4, 3}))), T(target)});
    add(t, op, "unbatched", {T(normal({4})), T(index_tensor({2}, {}))});
  }
  add(t, OpId::mse_loss, "mean", {T(normal({2, 3})), T(normal({2, 3}))});
  add(t, OpId::mse_loss, "sum", {T(normal({2, 3})), T(normal({2, 3})), IValue("sum")});
  add(t, OpId::mse_loss, "none transposed",
      {T(transposed(normal({3, 2}))), T(normal({2, 3})), IValue("none")});
  add(t, OpId::mse_loss, "target fixed", {T(normal({4})), T(normal({4}))}, {1});
  add(t, OpId::mse_loss, "0-dim", {T(normal({})), T(normal({}))});
  add(t, OpId::binary_cross_entropy, "mean", {T(prob({2, 3})), T(prob({2, 3}))});
  add(t, OpId::binary_cross_entropy, "weight sum",
      {T(prob({2, 3})), T(prob({2, 3})), T(positive({2, 3})), IValue("sum")}, {2});
  add(t, OpId::binary_cross_entropy, "none transposed",
      {T(transposed(prob({3, 2}))), T(prob({2, 3})), IValue(), IValue("none")});
  add(t, OpId::binary_cross_entropy, "0/1 targets fixed", {T(prob({4})), T(vec({0, 1, 1, 0}))},
      {1});
  add(t, OpId::dropout, "p 0.5", {T(normal({4, 5})), F(0.5)});
  add(t, OpId::dropout, "eval", {T(normal({2, 3})), F(0.5), IValue(false)});
  add(t, OpId::dropout, "p 0", {T(normal({2, 3})), F(0.0)});
  add(t, OpId::dropout, "transposed", {T(transposed(normal({5, 4}))), F(0.3)});
}

// The list-gradient ops of gradient graphs (Note [Lists] in differentiate.cpp). `like`
// lists only give lengths and shapes (fixed); a list result is checked element by
// element (list_item). Entries shaped otherwise than their elements (stack's pieces
// keep a size-1 dim) get gradients shaped like the elements, which the ops reading
// list gradients accept; the PyTorch programs with stack cover that path.
void add_list_gradient_cases(Table& t) {
  auto with_item = [&](OpId op, std::string name, std::vector<IValue> args,
                       std::vector<size_t> fixed, int item) {
    add(t, op, std::move(name), std::move(args), std::move(fixed));
    t[op].back().list_item = item;
  };
  Tensor a = normal({2, 3}), b = normal({3});
  IValue like = tensor_list({normal({2, 3}), normal({3})});
  for (int item : {0, 1}) {
    with_item(OpId::AutogradListAdd, "add at 1, element " + std::to_string(item),
              {tensor_list({a, b}), like, I(1), T(normal({3}))}, {1}, item);
  }
  with_item(OpId::AutogradListAdd, "add at -2",
            {tensor_list({a, b}), like, I(-2), T(normal({2, 3}))}, {1}, 0);
  add(t, OpId::AutogradListItem, "item 1", {tensor_list({a, b}), I(1), T(normal({3}))}, {2});
  with_item(OpId::AutogradListPop, "rest", {tensor_list({a, b, normal({3})}), T(normal({3}))}, {1},
            1);
  for (int item : {0, 1}) {
    with_item(OpId::AutogradListPush, "element " + std::to_string(item),
              {tensor_list({a}), tensor_list({normal({2, 3})}), T(normal({3}))}, {1}, item);
  }
  add(t, OpId::AutogradListCat, "dim 0",
      {tensor_list({a, normal({1, 3})}), tensor_list({normal({2, 3}), normal({1, 3})}), I(0)}, {1});
  add(t, OpId::AutogradListCat, "dim 1",
      {tensor_list({normal({2, 1}), normal({2, 2})}), tensor_list({normal({2, 1}), normal({2, 2})}),
       I(1)},
      {1});
}

// x with its last two dims swapped: a non-contiguous NCHW tensor (x is given with the
// swapped shape).
Tensor swapped_hw(const Tensor& x) { return op1(OpId::transpose, {IValue(x), I(-2), I(-1)}); }

void add_conv_pool_cases(Table& t) {
  // conv2d(input, weight, bias, stride, padding, dilation, groups)
  add(t, OpId::conv2d, "stride 1 pad 1 bias",
      {T(normal({2, 2, 5, 5})), T(normal({3, 2, 3, 3})), T(normal({3})), L({1}), L({1})});
  add(t, OpId::conv2d, "stride 2 no bias, 3x2 kernel",
      {T(normal({1, 2, 6, 5})), T(normal({3, 2, 3, 2})), IValue(), L({2, 2}), L({0, 0})});
  add(t, OpId::conv2d, "dilation, groups 2, asymmetric",
      {T(normal({1, 4, 6, 6})), T(normal({4, 2, 2, 2})), T(normal({4})), L({1, 2}), L({1, 0}),
       L({2, 1}), I(2)});
  add(t, OpId::conv2d, "unbatched 1x1",
      {T(normal({2, 4, 4})), T(normal({3, 2, 1, 1})), T(normal({3}))});
  add(t, OpId::conv2d, "non-contiguous input",
      {T(swapped_hw(normal({2, 2, 5, 4}))), T(normal({2, 2, 2, 3})), T(normal({2})), L({1}),
       L({1, 0})});
  add(t, OpId::conv2d, "weight fixed", {T(normal({1, 1, 4, 4})), T(normal({2, 1, 3, 3}))}, {1});
  // The gradient ops: (grad, weight or input, size, stride, padding, dilation, groups).
  add(t, OpId::conv2d_input_backward, "stride 2 pad 1",
      {T(normal({2, 3, 3, 3})), T(normal({3, 2, 3, 3})), L({2, 2, 5, 5}), L({2}), L({1}), L({1}),
       I(1)});
  add(t, OpId::conv2d_input_backward, "groups 2 dilation 2",
      {T(normal({1, 4, 4, 2})), T(normal({4, 2, 2, 2})), L({1, 4, 5, 4}), L({1}), L({0}), L({1, 2}),
       I(2)});
  add(t, OpId::conv2d_input_backward, "unbatched 1x1",
      {T(normal({3, 3, 3})), T(normal({3, 2, 1, 1})), L({2, 3, 3}), L({1}), L({0}), L({1}), I(1)});
  add(t, OpId::conv2d_weight_backward, "stride 2 pad 1",
      {T(normal({2, 3, 3, 3})), T(normal({2, 2, 5, 5})), L({3, 2, 3, 3}), L({2}), L({1}), L({1}),
       I(1)});
  add(t, OpId::conv2d_weight_backward, "groups 2 unbatched",
      {T(normal({4, 5, 5})), T(normal({4, 5, 5})), L({4, 2, 3, 3}), L({1}), L({1}), L({1}), I(2)});
  // max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)
  add(t, OpId::max_pool2d, "2x2", {T(normal({2, 2, 4, 4})), L({2})});
  add(t, OpId::max_pool2d, "3x3 stride 2 pad 1 ceil",
      {T(normal({1, 2, 5, 6})), L({3}), L({2}), L({1}), L({1}), IValue(true)});
  add(t, OpId::max_pool2d, "dilation 2, overlapping",
      {T(normal({1, 1, 6, 5})), L({2, 2}), L({1}), L({0}), L({2})});
  add(t, OpId::max_pool2d, "unbatched, non-contiguous",
      {T(swapped_hw(normal({3, 5, 4}))), L({2, 3}), L({2, 1})});
  // avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
  // divisor_override)
  add(t, OpId::avg_pool2d, "2x2", {T(normal({2, 2, 4, 4})), L({2})});
  add(t, OpId::avg_pool2d, "3x3 stride 2 pad 1 ceil, count_include_pad",
      {T(normal({1, 2, 5, 6})), L({3}), L({2}), L({1}), IValue(true)});
  add(t, OpId::avg_pool2d, "pad 1, not counting the padding",
      {T(normal({1, 1, 5, 5})), L({3, 2}), L({1}), L({1}), IValue(false), IValue(false)});
  add(t, OpId::avg_pool2d, "divisor_override, unbatched non-contiguous",
      {T(swapped_hw(normal({2, 5, 4}))), L({2}), IValue(), L({0}), IValue(false), IValue(true),
       I(3)});
  // avg_pool2d_backward(grad, input (its shape only), the parameters above)
  add(t, OpId::avg_pool2d_backward, "3x3 stride 2 pad 1 ceil",
      {T(normal({1, 2, 3, 4})), T(normal({1, 2, 5, 6})), L({3}), L({2}), L({1}), IValue(true),
       IValue(true), IValue()},
      {1});
  add(t, OpId::avg_pool2d_backward, "2x2 unbatched",
      {T(normal({2, 2, 2})), T(normal({2, 4, 5})), L({2}), IValue(), L({0}), IValue(false),
       IValue(false), IValue()},
      {1});
}

// masked_fill: masks that broadcast self, and self that broadcasts the mask.
void add_masked_fill_cases(Table& t) {
  OpId scalar = OpId::masked_fill_scalar, tensor = OpId::masked_fill_tensor;
  add(t, scalar, "[2,3]", {T(normal({2, 3})), T(mask_of(normal({2, 3}))), F(0.5)});
  add(t, scalar, "mask [3] over [2,3]", {T(normal({2, 3})), T(mask_of(normal({3}))), F(-1.0)});
  add(t, scalar, "self [3] widened by the mask",
      {T(normal({3})), T(mask_of(normal({2, 3}))), F(2.0)});
  add(t, scalar, "transposed", {T(transposed(normal({3, 2}))), T(mask_of(normal({2, 3}))), I(0)});
  add(t, scalar, "0-dim", {T(normal({})), T(mask_of(from_values({1.0}, {}))), F(1.0)});
  add(t, tensor, "[2,3]", {T(normal({2, 3})), T(mask_of(normal({2, 3}))), T(normal({}))});
  add(t, tensor, "self [3] widened", {T(normal({3})), T(mask_of(normal({2, 3}))), T(normal({}))});
  add(t, tensor, "value fixed", {T(normal({2, 3})), T(mask_of(normal({2, 3}))), T(normal({}))},
      {2});
}

// sort and topk (random values: no ties, so a small step keeps the order).
void add_sort_cases(Table& t) {
  add(t, OpId::sort, "dim -1", {T(normal({2, 3}))});
  add(t, OpId::sort, "dim 0 descending transposed",
      {T(transposed(normal({4, 3}))), I(0), IValue(true)});
  add(t, OpId::sort, "3-D dim 1", {T(noncontiguous3()), I(1)});
  add(t, OpId::sort, "0-dim", {T(normal({}))});
  add(t, OpId::sort_stable, "stable descending",
      {T(normal({2, 3})), IValue(true), I(-1), IValue(true)});
  add(t, OpId::topk, "k 2", {T(normal({2, 5})), I(2)});
  add(t, OpId::topk, "smallest, dim 0 transposed",
      {T(transposed(normal({4, 3}))), I(1), I(0), IValue(false)});
  add(t, OpId::topk, "all, unsorted", {T(normal({4})), I(4), I(-1), IValue(true), IValue(false)});
  add(t, OpId::topk, "partial sort (k * 64 <= n)", {T(normal({128})), I(2)});
  add(t, OpId::topk, "0-dim", {T(normal({})), I(1)});
}

// tril, triu, diag and its adjoint diag_backward.
void add_diagonal_cases(Table& t) {
  for (OpId op : {OpId::tril, OpId::triu}) {
    add(t, op, "[3,4]", {T(normal({3, 4}))});
    add(t, op, "diagonal 1, [4,3]", {T(normal({4, 3})), I(1)});
    add(t, op, "diagonal -1, batched non-contiguous", {T(noncontiguous3()), I(-1)});
  }
  add(t, OpId::diag, "vector", {T(normal({3}))});
  add(t, OpId::diag, "vector, diagonal -1", {T(normal({3})), I(-1)});
  add(t, OpId::diag, "matrix", {T(normal({3, 4}))});
  add(t, OpId::diag, "matrix, diagonal 2, transposed", {T(transposed(normal({4, 3}))), I(2)});
  add(t, OpId::diag, "matrix, diagonal -1", {T(normal({3, 4})), I(-1)});
  add(t, OpId::diag_backward, "of a vector", {T(normal({4, 4})), L({3}), I(1)});
  add(t, OpId::diag_backward, "of a matrix", {T(normal({2})), L({3, 4}), I(-1)});
}

// baddbmm, einsum and einsum_backward.
void add_product_cases(Table& t) {
  add(t, OpId::baddbmm, "[2,2,3]",
      {T(normal({2, 2, 3})), T(normal({2, 2, 4})), T(normal({2, 4, 3}))});
  add(t, OpId::baddbmm, "broadcast self, beta, alpha",
      {T(normal({3})), T(normal({2, 2, 4})), T(normal({2, 4, 3})), F(0.5), F(-2.0)});
  add(t, OpId::baddbmm, "beta 0",
      {T(normal({2, 2, 3})), T(normal({2, 2, 4})), T(normal({2, 4, 3})), F(0.0)});
  add(t, OpId::baddbmm, "non-contiguous batch1",
      {T(normal({1, 3})), T(noncontiguous3()), T(normal({2, 4, 3}))});
  auto einsum = [&](const char* eq, std::vector<Tensor> operands, std::string tag = "") {
    add(t, OpId::einsum, eq + tag, {IValue(eq), tensor_list(operands)});
  };
  einsum("ij,jk->ik", {normal({2, 3}), normal({3, 4})});
  einsum("bij,bjk->bik", {normal({2, 2, 3}), normal({2, 3, 2})});
  einsum("i,i->", {normal({3}), normal({3})});
  einsum("ij->ji", {normal({2, 3})});
  einsum("ii->i", {normal({3, 3})});
  einsum("ii", {transposed(normal({3, 3}))}, " (trace, transposed)");
  einsum("bi,bi->b", {normal({2, 3}), normal({2, 3})});
  einsum("ij->", {normal({2, 3})});
  einsum("ij,jk", {normal({2, 3}), transposed(normal({4, 3}))}, " (implicit, transposed)");
  einsum("i,j", {normal({2}), normal({3})}, " (outer)");
  einsum("ij,jk,kl->il", {normal({2, 3}), normal({3, 2}), normal({2, 2})});
  einsum("ij,jk->ik", {normal({2, 1}), normal({3, 4})}, " (size-1 j broadcasts)");
  einsum("...ij,...jk->...ik", {normal({2, 2, 3}), normal({3, 2})});
  einsum("iij->j", {normal({2, 2, 3})});
  auto backward = [&](const char* eq, std::vector<Tensor> operands, std::vector<int64_t> size,
                      const char* what) {
    add(t, OpId::einsum_backward, std::string(eq) + " " + what,
        {IValue(eq), tensor_list(operands), L(size)});
  };
  backward("i->ii", {normal({3})}, {3, 3}, "(a diagonal)");
  backward("i->ij", {normal({2})}, {2, 3}, "(a broadcast)");
  backward("ik,jk->ij", {normal({2, 4}), normal({3, 4})}, {2, 1}, "(j summed to size 1)");
}

// layer_norm and embedding.
void add_layer_cases(Table& t) {
  add(t, OpId::layer_norm, "[2,3] weight bias",
      {T(normal({2, 3})), L({3}), T(normal({3})), T(normal({3}))});
  add(t, OpId::layer_norm, "no weight", {T(normal({2, 3})), L({3})});
  add(t, OpId::layer_norm, "two dims, non-contiguous, eps",
      {T(noncontiguous3()), L({3, 4}), T(normal({3, 4})), IValue(), F(1e-3)});
  add(t, OpId::layer_norm, "weight and bias fixed",
      {T(normal({3, 4})), L({4}), T(normal({4})), T(normal({4}))}, {2, 3});
  add(t, OpId::layer_norm_rstd, "[2,3]", {T(normal({2, 3})), L({3}), F(1e-5)});
  add(t, OpId::layer_norm_rstd, "two dims, non-contiguous, eps",
      {T(noncontiguous3()), L({3, 4}), F(1e-3)});
  Tensor rows = index_tensor({1, 3, 1, 0}, {2, 2});
  add(t, OpId::embedding, "[2,2] indices, repeated", {T(rows), T(normal({4, 3}))});
  add(t, OpId::embedding, "transposed weight",
      {T(index_tensor({2, 0}, {2})), T(transposed(normal({3, 4})))});
  add(t, OpId::embedding, "0-dim index", {T(index_tensor({2}, {})), T(normal({3, 2}))});
}

// The kinks, with PyTorch's gradients for an output gradient of ones (computed with
// torch 1.13 in float64).
void add_kink_cases(Table& t) {
  Tensor x3 = vec({-1, 0, 2});
  add_kink(t, OpId::relu, "relu'(0) = 0", {T(x3)}, {vec({0, 0, 1})});
  add_kink(t, OpId::abs, "abs'(0) = 0", {T(x3)}, {vec({-1, 0, 1})});
  add_kink(t, OpId::sign, "sign'(0) = 0", {T(x3)}, {vec({0, 0, 0})});
  add_kink(t, OpId::leaky_relu, "at 0", {T(x3), F(0.1)}, {vec({0.1, 0.1, 1})});
  Tensor a = vec({1, 2, 3}), b = vec({1, 0, 3});
  for (OpId op : {OpId::maximum, OpId::max_other}) {
    add_kink(t, op, "ties split", {T(a), T(b)}, {vec({0.5, 1, 0.5}), vec({0.5, 0, 0.5})});
  }
  for (OpId op : {OpId::minimum, OpId::min_other}) {
    add_kink(t, op, "ties split", {T(a), T(b)}, {vec({0.5, 0, 0.5}), vec({0.5, 1, 0.5})});
  }
  Tensor m = mat({1, 3, 3, 3, 2, 0, 2, 1}, 2);
  add_kink(t, OpId::amax, "ties share", {T(m), L({1})},
           {mat({0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0.5, 0, 0.5, 0}, 2)});
  add_kink(t, OpId::max, "ties share", {T(m)},
           {mat({0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 0, 0, 0}, 2)});
  add_kink(t, OpId::max_dim, "ties: the returned index", {T(m), I(1)},
           {mat({0, 1, 0, 0, 1, 0, 0, 0}, 2)});
  Tensor n = mat({1, 1, 3, 3, 2, 0, 2, 0}, 2);
  add_kink(t, OpId::amin, "ties share", {T(n), L({1})}, {mat({0.5, 0.5, 0, 0, 0, 0.5, 0, 0.5}, 2)});
  add_kink(t, OpId::min, "ties share", {T(n)}, {mat({0, 0, 0, 0, 0, 0.5, 0, 0.5}, 2)});
  add_kink(t, OpId::min_dim, "ties: the returned index", {T(n), I(1)},
           {mat({1, 0, 0, 0, 0, 1, 0, 0}, 2)});
  Tensor c = vec({-1, 0, 1, 2});
  for (OpId op : {OpId::clamp, OpId::clip}) {
    add_kink(t, op, "at the bounds", {T(c), F(-1.0), F(1.0)}, {vec({1, 1, 1, 0})});
  }
  // hardtanh's gradient is 0 at its bounds, where clamp's is 1.
  add_kink(t, OpId::hardtanh, "at the bounds", {T(c), F(-1.0), F(1.0)}, {vec({0, 1, 0, 0})});
  add_kink(t, OpId::logit, "eps 0.25 at the clamp's edges",
           {T(vec({0.25, 0.5, 0.75, 0.1})), F(0.25)}, {vec({16.0 / 3, 4, 16.0 / 3, 0})});
  add_kink(t, OpId::norm, "of zeros", {T(vec({0, 0, 0}))}, {vec({0, 0, 0})});
  add_kink(t, OpId::norm, "p 1 at 0", {T(vec({0, 1, -2})), F(1.0)}, {vec({0, 1, -1})});
  add_kink(t, OpId::norm, "p inf ties", {T(vec({2, 1, -2})), F(INFINITY)}, {vec({0.5, 0, -0.5})});
  add_kink(t, OpId::std, "of a constant", {T(vec({1, 1, 1}))}, {vec({0, 0, 0})});
  add_kink(t, OpId::max_pool2d, "ties: the first maximum",
           {T(from_values({1, 1, 0, 1, 2, 2, 2, 2}, {1, 1, 2, 4})), L({2})},
           {from_values({0, 0, 0, 0, 1, 0, 1, 0}, {1, 1, 2, 4})});
  // padding_idx: the padding row gets no gradient (while the forward reads it), so
  // central differences disagree there; PyTorch's gradient is given instead.
  add_kink(t, OpId::embedding, "padding_idx 1 gets no gradient",
           {T(index_tensor({1, 3, 1, 0}, {4})), T(mat({1, 2, 3, 4, 5, 6, 7, 8}, 4)), I(1)},
           {mat({1, 1, 0, 0, 0, 0, 1, 1}, 4)});
  add_kink(t, OpId::embedding, "padding_idx -1 wraps",
           {T(index_tensor({3, 3, 2}, {3})), T(mat({1, 2, 3, 4, 5, 6, 7, 8}, 4)), I(-1)},
           {mat({0, 0, 0, 0, 1, 1, 0, 0}, 4)});
  add_kink(t, OpId::pow, "zero base, zero exponent", {T(vec({0, 1, 2})), T(vec({2, 0, 1}))},
           {vec({0, 0, 1}), vec({0, 0, 2 * std::log(2.0)})});
}

const Table& table() {
  static const Table t = [] {
    Table t;
    add_unary_cases(t);
    add_binary_cases(t);
    add_reduction_cases(t);
    add_linalg_cases(t);
    add_shape_cases(t);
    add_nn_cases(t);
    add_conv_pool_cases(t);
    add_masked_fill_cases(t);
    add_sort_cases(t);
    add_diagonal_cases(t);
    add_product_cases(t);
    add_layer_cases(t);
    add_list_gradient_cases(t);
    add_kink_cases(t);
    return t;
  }();
  return t;
}

const std::vector<Case>& cases_of(OpId op) {
  static const std::vector<Case> none;
  auto it = table().find(op);
  return it == table().end() ? none : it->second;
}

std::vector<OpId> diff_ops() {
  std::vector<OpId> ops;
  for (int i = 0; i < kNumOps; ++i) {
    OpId op = static_cast<OpId>(i);
    if (op_info(op).has(opflags::DIFF)) ops.push_back(op);
  }
  return ops;
}

// ---- The tests -------------------------------------------------------------------------

// Every DIFF op has a rule and sample inputs here (a new op cannot skip the check).
TEST(GradCheckCoverage, EveryDiffOpHasARuleAndSamples) {
  for (OpId op : diff_ops()) {
    EXPECT_NE(derivative_rule(op), nullptr)
        << op_info(op).name << " is DIFF but has no derivative rule";
    EXPECT_FALSE(cases_of(op).empty())
        << op_info(op).name
        << " is DIFF but has no sample inputs in tests/autodiff/gradcheck_test.cpp";
  }
}

// Every sample is for a DIFF op (a stale entry means the table drifted from ops.def).
TEST(GradCheckCoverage, SamplesAreForDiffOps) {
  for (const auto& [op, cases] : table()) {
    EXPECT_TRUE(op_info(op).has(opflags::DIFF))
        << op_info(op).name << " has samples but is not DIFF";
  }
}

class GradCheck : public ::testing::TestWithParam<OpId> {
 protected:
  // Runs `check` on every case of the op; a missing rule or sample fails the test.
  template <typename F>
  void for_each_case(F check) {
    OpId op = GetParam();
    ASSERT_NE(derivative_rule(op), nullptr) << op_info(op).name << " has no derivative rule";
    ASSERT_FALSE(cases_of(op).empty()) << op_info(op).name << " has no sample inputs";
    for (const Case& c : cases_of(op)) {
      SCOPED_TRACE(label(op, c));
      try {
        Built b = build_forward(op, c);
        check(op, c, b);
      } catch (const std::exception& e) {
        ADD_FAILURE() << label(op, c) << ": " << e.what();
      }
    }
  }
};

TEST_P(GradCheck, FirstOrder) {
  for_each_case([](OpId op, const Case& c, const Built& b) { check_first_order(op, c, b); });
}

// Also covers the ops whose first derivative is piecewise constant (relu, floor,
// clamp, max selections): away from the kinks the second derivative is zero, and the
// check is that differentiating their gradient graph works and gives those zeros. Kink
// cases are skipped: there the second derivative is not defined.
TEST_P(GradCheck, SecondOrder) {
  for_each_case([](OpId op, const Case& c, const Built& b) {
    if (!c.expected.empty() || c.on_boundary) return;
    JointGraph j = build_joint(*b.graph, all_inputs(*b.graph), JointOptions{});
    if (j.seeded_outputs.empty()) return;  // reported by FirstOrder
    check_second_order(op, c, b, j);
  });
}

// Forward mode: the tangent of the result for random input tangents against central
// differences along them. Kink and boundary cases are skipped (one-sided slopes
// differ there).
TEST_P(GradCheck, ForwardMode) {
  for_each_case([](OpId op, const Case& c, const Built& b) {
    if (c.expected.empty() && !c.on_boundary) check_forward_mode(op, c, b);
  });
}

std::string test_name(const ::testing::TestParamInfo<OpId>& info) {
  std::string n(op_info(info.param).name);
  for (char& ch : n) {
    if (ch == '.') ch = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(DiffOps, GradCheck, ::testing::ValuesIn(diff_ops()), test_name);

}  // namespace
}  // namespace tsl::autodiff
