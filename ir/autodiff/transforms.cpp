// The transforms by name, their checks of f, and the graphs of grad, vjp, jvp and the
// column-by-column hessian. See Note [Transforms as graph functions] in transforms.h.
#include "ir/autodiff/transforms.h"

#include <unordered_map>

#include "ir/autodiff/forward_mode.h"

namespace tsl::autodiff {
namespace {

struct NamedTransform {
  TransformKind kind;
  const char* name;
  bool in_source;  // a program names it (vjp_fn is only made by vjp)
};
constexpr NamedTransform kTransforms[] = {
    {TransformKind::Grad, "grad", true},
    {TransformKind::ValueAndGrad, "value_and_grad", true},
    {TransformKind::GradAndValue, "grad_and_value", true},
    {TransformKind::Vjp, "vjp", true},
    {TransformKind::VjpFn, "vjp_fn", false},
    {TransformKind::Jvp, "jvp", true},
    {TransformKind::Hessian, "hessian", true},
    {TransformKind::Vmap, "vmap", true},
    {TransformKind::Jacrev, "jacrev", true},
    {TransformKind::Jacfwd, "jacfwd", true},
};

// Whether the differentiated inputs of `kind` are primals (forward mode) rather than
// inputs that require gradients (reverse mode): the two have different checks.
bool takes_primals(TransformKind kind) {
  return kind == TransformKind::Jvp || kind == TransformKind::Hessian ||
         kind == TransformKind::Jacfwd;
}

// The differentiated primals of jvp and vjp must be Tensors (argnums are every primal
// given, so make_transform's check of argnums does not apply).
void check_tensor_primals(const TransformSpec& t, const TransformedFunction& f) {
  const std::string kind = transform_name(t.kind);
  for (size_t i : t.argnums) {
    if (!f.param_types[i]->is_tensor()) {
      compile_error(f.use, kind + "(): argument '" + f.param_names[i] + "' of '" + f.name +
                               "' is " + f.param_types[i]->str() + "; " + kind +
                               " differentiates every primal, so all must be Tensors");
    }
  }
}

}  // namespace

const char* transform_name(TransformKind kind) {
  for (const NamedTransform& t : kTransforms) {
    if (t.kind == kind) return t.name;
  }
  TSL_INTERNAL_ASSERT(false, "transform without a name");
  return "";
}

std::optional<TransformKind> transform_named(std::string_view name) {
  for (const NamedTransform& t : kTransforms) {
    if (t.in_source && name == t.name) return t.kind;
  }
  return std::nullopt;
}

void check_transform_result(const TransformSpec& t, const TransformedFunction& f) {
  const TypePtr& returns = f.returns;
  const std::string kind = transform_name(t.kind);
  bool tensors = returns->kind() == TypeKind::Tuple && !returns->contained().empty();
  for (const TypePtr& e : returns->contained()) tensors &= e->is_tensor();
  switch (t.kind) {
    case TransformKind::Vjp:
    case TransformKind::Jvp:
    case TransformKind::Jacrev:
    case TransformKind::Jacfwd:
      if (!returns->is_tensor() && !tensors) {
        compile_error(f.use, kind + "() needs '" + f.name +
                                 "' to return a Tensor or a tuple of Tensors, but it returns " +
                                 returns->str());
      }
      return;
    case TransformKind::Vmap:
      return;
    default:
      if (!returns->is_tensor()) {
        compile_error(f.use, kind + "() needs '" + f.name + "' to return a" +
                                 (t.kind == TransformKind::Hessian ? "" : " scalar") +
                                 " Tensor, but it returns " + returns->str());
      }
  }
}

void check_floating_inputs(Graph& g, const TransformSpec& t, const TransformedFunction& f) {
  if (t.kind == TransformKind::Vmap) return;
  bool primals = takes_primals(t.kind);
  Node* first = g.block()->empty() ? g.block()->return_node() : *g.block()->begin();
  InsertPointGuard at(g, first);
  for (size_t i : t.argnums) {
    Value* x = g.inputs().at(i);
    if (!x->type()->is_tensor()) continue;
    const SourceRange& range = i < f.param_ranges.size() ? f.param_ranges[i] : f.use;
    Value* ok = g.insert_op(OpId::is_floating_point, {x}, Type::bool_(), range);
    Node* branch = g.insert(g.create(OpId::If, {ok}, 0));
    branch->set_range(range);
    branch->add_block();
    Block* raise = branch->add_block();
    InsertPointGuard in(g, raise);
    Value* message;
    if (primals) {
      Value* d = g.insert_op(OpId::dtype, {x}, Type::dtype(), range);
      Value* name = g.insert_op(OpId::Str, {d}, Type::str_(), range);
      Value* text =
          g.insert_constant(IValue("Expected primal to be floating point or complex, but got: "),
                            Type::str_(), range);
      message = g.insert_op(OpId::add_str, {text, name}, Type::str_(), range);
    } else {
      message =
          g.insert_constant(IValue("only Tensors of floating point dtype can require gradients"),
                            Type::str_(), range);
    }
    g.insert(g.create(OpId::RaiseException, {message}, 0))->set_range(range);
  }
}

Value* tuple_value(Graph& g, const std::vector<Value*>& elems) {
  std::vector<TypePtr> types;
  for (Value* e : elems) types.push_back(e->type());
  Node* n = g.insert(g.create(OpId::TupleConstruct, elems, 1));
  return n->output()->set_type(Type::tuple(std::move(types)));
}

bool flatten_tuple_result(Graph& g) {
  Value* out = g.outputs().at(0);
  if (g.outputs().size() != 1 || out->type()->kind() != TypeKind::Tuple) return false;
  const auto& types = out->type()->contained();
  InsertPointGuard guard(g, g.block());
  Node* unpack = g.insert(g.create(OpId::TupleUnpack, {out}, types.size()));
  g.block()->erase_return(0);
  for (size_t i = 0; i < types.size(); ++i) g.add_output(unpack->output(i)->set_type(types[i]));
  return true;
}

SplitGradient split_gradient(const Graph& forward, const std::vector<size_t>& wrt,
                             const std::string& function_name) {
  SplitGradient s;
  std::unique_ptr<Graph> flat = forward.clone();
  s.tuple = flatten_tuple_result(*flat);
  s.num_results = flat->outputs().size();
  JointOptions options;
  options.function_name = function_name;
  s.joint = build_joint(*flat, wrt, options);
  s.gradient = split(s.joint);
  return s;
}

std::shared_ptr<Graph> grad_graph(const Graph& forward, const TransformSpec& t,
                                  const TransformedFunction& f) {
  JointOptions options;
  options.seed_with_ones = true;
  options.function_name = f.name;
  JointGraph joint = build_joint(forward, t.argnums, options);
  Graph& g = *joint.graph;
  std::vector<Value*> outs = g.outputs();
  while (!g.outputs().empty()) g.block()->erase_return(0);
  Value* value = outs.at(0);
  std::vector<Value*> grads(outs.begin() + static_cast<std::ptrdiff_t>(joint.num_forward_outputs),
                            outs.end());
  InsertPointGuard guard(g, g.block());
  Value* grad_result = t.argnums_tuple ? tuple_value(g, grads) : grads.at(0);
  if (t.kind == TransformKind::ValueAndGrad) {
    g.add_output(tuple_value(g, {value, grad_result}));
  } else if (t.kind == TransformKind::GradAndValue) {
    g.add_output(tuple_value(g, {grad_result, value}));
  } else {
    g.add_output(grad_result);
  }
  return joint.graph;
}

std::shared_ptr<Graph> jvp_graph(const Graph& forward, const TransformSpec& t,
                                 const TransformedFunction& f) {
  check_tensor_primals(t, f);
  size_t num_params = f.param_names.size();
  std::unique_ptr<Graph> flat = forward.clone();
  bool tuple = flatten_tuple_result(*flat);
  JvpGraph jvp = build_jvp(*flat, t.argnums, f.name, num_params);
  Graph& g = *jvp.graph;
  {
    // Each tangent must have its primal's shape (PyTorch refuses to set the forward
    // gradient otherwise; the formulas would broadcast it into a wrong result).
    InsertPointGuard at(g, g.block()->param_node()->next());
    for (size_t j = 0; j < t.argnums.size(); ++j) {
      Value* primal = g.inputs()[t.argnums[j]];
      Value* tangent = g.inputs()[num_params + j];
      Value* ps = g.insert_op(OpId::size, {primal}, Type::list(Type::int_()), f.use);
      Value* ts = g.insert_op(OpId::size, {tangent}, Type::list(Type::int_()), f.use);
      g.insert(g.create(OpId::check_tangent_size, {ps, ts}, 0))->set_range(f.use);
    }
  }
  std::vector<Value*> outs = g.outputs();
  while (!g.outputs().empty()) g.block()->erase_return(0);
  InsertPointGuard guard(g, g.block());
  size_t n = jvp.num_forward_outputs;
  if (!tuple) {
    g.add_output(tuple_value(g, {outs.at(0), outs.at(n)}));
  } else {
    // functorch: (outputs, tangents), both tuples shaped like f's result.
    std::vector<Value*> values(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<Value*> tangents(outs.begin() + static_cast<std::ptrdiff_t>(n), outs.end());
    g.add_output(tuple_value(g, {tuple_value(g, values), tuple_value(g, tangents)}));
  }
  return jvp.graph;
}

namespace {

// vjp's backward: (cotangent, captures...) -> tuple of gradients, from the split
// gradient's df (seeds, captures...) -> gradients. The cotangent has the result's
// structure (a tuple for a tuple result); each differentiable part feeds its seed
// input, the others are not read. Returns the cotangent's type.
TypePtr make_vjp_backward(Graph& df, const JointGraph& joint, size_t num_results, bool tuple,
                          const SourceRange& use) {
  size_t num_seeds = joint.seeded_outputs.size();
  std::vector<TypePtr> types;
  for (size_t k = 0; k < num_results; ++k) types.push_back(Type::tensor());
  TypePtr ct = tuple ? Type::tuple(types) : Type::tensor();
  {
    Value* cotangent = df.block()->insert_param(0, ct, tuple ? "cotangents" : "cotangent");
    std::vector<Value*> parts = {cotangent};
    if (tuple) {
      InsertPointGuard guard(df, df.block()->param_node()->next());
      Node* unpack = df.insert(df.create(OpId::TupleUnpack, {cotangent}, num_results));
      parts.clear();
      for (size_t k = 0; k < num_results; ++k)
        parts.push_back(unpack->output(k)->set_type(Type::tensor()));
    }
    for (size_t j = 0; j < num_seeds; ++j) {
      df.inputs()[1 + j]->replace_all_uses_with(parts.at(joint.seeded_outputs[j]));
    }
    for (size_t j = 0; j < num_seeds; ++j) df.block()->erase_param(1);
    // Each cotangent must have its result's shape, as autograd.grad checks its
    // grad_outputs (the formulas would broadcast it into a wrong result): the result's
    // size is one more capture of the closure.
    // After the cotangent (a param) or its unpacking.
    InsertPointGuard at(df, parts.back()->node()->next());
    for (size_t k = 0; k < num_results; ++k) {
      Value* output_size = df.block()->add_param(Type::list(Type::int_()), "output_size");
      Value* cs = df.insert_op(OpId::size, {parts[k]}, Type::list(Type::int_()), use);
      Value* index = df.insert_constant(IValue(static_cast<int64_t>(k)), Type::int_(), use);
      df.insert(df.create(OpId::check_cotangent_size, {cs, output_size, index}, 0))->set_range(use);
    }
  }
  std::vector<Value*> grads = df.outputs();
  while (!df.outputs().empty()) df.block()->erase_return(0);
  InsertPointGuard guard(df, df.block());
  df.add_output(tuple_value(df, grads));
  return ct;
}

}  // namespace

std::shared_ptr<Graph> vjp_graph(const Graph& forward, const TransformSpec& t,
                                 const TransformedFunction& f, const MakeVjpClosure& make_closure) {
  check_tensor_primals(t, f);
  SplitGradient s = split_gradient(forward, t.argnums, f.name);
  const Gradient& gradient = s.gradient;
  bool tuple = s.tuple;
  size_t num_results = s.num_results;
  TypePtr cotangent = make_vjp_backward(*gradient.df, s.joint, num_results, tuple, f.use);
  verify(*gradient.df);
  VjpClosure made = make_closure(gradient.df, cotangent);
  // The forward: (primals...) -> (result, closure over the captures).
  Graph& g = *gradient.f;
  std::vector<Value*> outs = g.outputs();
  while (!g.outputs().empty()) g.block()->erase_return(0);
  InsertPointGuard guard(g, g.block());
  std::vector<Value*> captures(
      outs.begin() + static_cast<std::ptrdiff_t>(gradient.num_real_outputs), outs.end());
  for (size_t k = 0; k < num_results; ++k)
    captures.push_back(g.insert_op(OpId::size, {outs.at(k)}, Type::list(Type::int_()), f.use));
  Node* closure = g.insert(g.create(OpId::MakeClosure, captures, 1));
  closure->set_range(f.use);
  closure->set_attr("fn", std::move(made.fn));
  closure->output()->set_type(made.type);
  std::vector<Value*> results(
      outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(gradient.num_real_outputs));
  g.add_output(
      tuple_value(g, {tuple ? tuple_value(g, results) : results.at(0), closure->output()}));
  return gradient.f;
}

std::shared_ptr<Graph> hessian_by_columns(const Graph& forward, const TransformSpec& t,
                                          const TransformedFunction& f) {
  TransformSpec as_grad = t;
  as_grad.kind = TransformKind::Grad;
  as_grad.argnums_tuple = false;
  std::shared_ptr<Graph> gradient = grad_graph(forward, as_grad, f);
  size_t num_params = f.param_names.size();
  size_t x_index = t.argnums.at(0);
  JvpGraph jvp = build_jvp(*gradient, {x_index}, f.name, num_params);
  auto h = std::make_shared<Graph>();
  Graph& g = *h;
  std::vector<Value*> inputs;
  for (const Value* in : forward.inputs())
    inputs.push_back(g.add_input(in->type(), in->debug_name()));
  Value* x = inputs.at(x_index);
  InsertPointGuard guard(g, g.block());
  const SourceRange& range = f.use;
  auto op = [&](OpId id, std::vector<Value*> ins, TypePtr type) {
    return g.insert_op(id, ins, std::move(type), range);
  };
  auto k = [&](IValue v, TypePtr type) {
    return g.insert_constant(std::move(v), std::move(type), range);
  };
  Value* n = op(OpId::numel, {x}, Type::int_());
  Value* none_int = k(IValue(), Type::optional(Type::int_()));
  Value* dt = op(OpId::dtype, {x}, Type::dtype());
  Value* dt_opt = op(OpId::to_optional, {dt}, Type::optional(Type::dtype()));
  Value* eye = op(OpId::eye,
                  {n, none_int, dt_opt, k(IValue(), Type::optional(Type::device())),
                   k(IValue(false), Type::bool_())},
                  Type::tensor());
  Node* list = g.insert(g.create(OpId::ListConstruct, {}, 1));
  list->output()->set_type(Type::list(Type::tensor()));
  Node* loop = g.insert(g.create(OpId::Loop, {n, k(IValue(true), Type::bool_())}, 0));
  loop->set_range(range);
  Block* body = loop->add_block();
  Value* i = body->add_param(Type::int_());
  {
    InsertPointGuard inner(g, body);
    Value* row = op(OpId::select, {eye, k(IValue(int64_t{0}), Type::int_()), i}, Type::tensor());
    Value* direction =
        op(OpId::reshape, {row, op(OpId::size, {x}, Type::list(Type::int_()))}, Type::tensor());
    std::unordered_map<const Value*, Value*> map;
    const Graph& j = *jvp.graph;
    for (size_t p = 0; p < j.inputs().size(); ++p) {
      // The jvp graph's inputs: f's parameters, the tangent, then hidden globals.
      Value* v = p < num_params ? inputs[p] : p == num_params ? direction : inputs[p - 1];
      map[j.inputs()[p]] = v;
    }
    std::vector<Value*> outs = g.clone_block_into(j.block(), body, map);
    // Each column flat, so that the columns form an n x n matrix whatever x's rank.
    Value* column = op(OpId::flatten,
                       {outs.at(jvp.num_forward_outputs), k(IValue(int64_t{0}), Type::int_()),
                        k(IValue(int64_t{-1}), Type::int_())},
                       Type::tensor());
    g.insert(g.create(OpId::append_list, {list->output(), column}, 0));
    body->add_return(k(IValue(true), Type::bool_()));
  }
  Value* columns =
      op(OpId::stack, {list->output(), k(IValue(int64_t{0}), Type::int_())}, Type::tensor());
  Value* matrix = op(OpId::t, {columns}, Type::tensor());
  Value* size = op(OpId::size, {x}, Type::list(Type::int_()));
  Value* both = op(OpId::add_list, {size, size}, Type::list(Type::int_()));
  g.add_output(op(OpId::reshape, {matrix, both}, Type::tensor()));
  remove_dead_nodes(g);
  return h;
}

}  // namespace tsl::autodiff
