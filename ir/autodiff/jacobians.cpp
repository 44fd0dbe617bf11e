// The graphs of vmap, jacrev and jacfwd. vmap is ir/batching's rewrite of f; the
// Jacobians are functorch's: jacrev maps the vjp of f over the rows of an identity
// (vmap of the backward graph: no loop), jacfwd maps the jvp of f over its columns.
// hessian(f) is jacfwd(jacrev(f)) (frontend/compile_transform.cpp composes them).
#include <algorithm>
#include <unordered_map>

#include "ir/autodiff/differentiate.h"
#include "ir/autodiff/forward_mode.h"
#include "ir/autodiff/sym.h"
#include "ir/autodiff/transforms.h"
#include "ir/batching/vmap.h"

namespace tsl::autodiff {
namespace {

Value* int_list_of(Graph& g, const std::vector<Value*>& elems) {
  Node* n = g.insert(g.create(OpId::ListConstruct, elems, 1));
  return n->output()->set_type(Type::list(Type::int_()));
}

Sym concat(Sym a, Sym b) {
  Sym s = call(OpId::add_list, {a, b});
  s.value()->set_type(Type::list(Type::int_()));
  return s;
}

// Copies `body` into g at its insertion point with its inputs bound to `inputs`;
// returns its results.
std::vector<Value*> inline_graph(Graph& g, const Graph& body, const std::vector<Value*>& inputs) {
  TSL_INTERNAL_ASSERT(body.inputs().size() == inputs.size(), "inlining: ", body.inputs().size(),
                      " inputs, ", inputs.size(), " given");
  std::unordered_map<const Value*, Value*> map;
  for (size_t i = 0; i < inputs.size(); ++i) map[body.inputs()[i]] = inputs[i];
  Node* holder = g.insert(g.create(OpId::If, {}, 0));
  Block* scratch = holder->add_block();
  std::vector<Value*> results = g.clone_block_into(body.block(), scratch, map);
  while (!scratch->empty()) (*scratch->begin())->move_before(holder);
  holder->destroy();
  return results;
}

// The rows off..off+n of an N x N identity, of x's dtype, each shaped like x: the basis
// directions (or cotangents) of x in a joint basis of N = the sum of the numels.
Sym basis_of(Sym x, Sym n_total, Sym offset, Sym n) {
  Sym dt = call(OpId::dtype, {x});
  dt.value()->set_type(Type::dtype());
  Sym dt_opt = call(OpId::to_optional, {dt});
  dt_opt.value()->set_type(Type::optional(Type::dtype()));
  Sym eye = call(OpId::eye, {n_total, std::nullopt, dt_opt, std::nullopt, false});
  Sym rows = call(OpId::narrow, {eye, 1, offset, n});
  Graph& g = FormulaScope::graph();
  Value* lead = int_list_of(g, {n_total.value()});
  return reshape(rows, concat(lead, size(x)));
}

// The numels of xs and their running offsets, and their total.
struct Blocks {
  std::vector<Sym> numel, offset;
  Sym total;
};
Blocks blocks_of(const std::vector<Value*>& xs) {
  Blocks b;
  Sym at = constant(IValue(int64_t{0}), Type::int_());
  for (Value* x : xs) {
    b.offset.push_back(at);
    b.numel.push_back(numel(x));
    at = call(OpId::add_int, {at, b.numel.back()});
  }
  b.total = at;
  return b;
}

// The results of a Jacobian transform: one per result of f (a tuple when f returns
// one) of one per argnum (a tuple when argnums is).
Value* jacobian_result(Graph& g, const std::vector<std::vector<Value*>>& j, bool result_tuple,
                       bool argnums_tuple) {
  std::vector<Value*> per_result;
  for (const auto& row : j) per_result.push_back(argnums_tuple ? tuple_value(g, row) : row.at(0));
  return result_tuple ? tuple_value(g, per_result) : per_result.at(0);
}

// Adds to g inputs typed and named as those of `like`; returns them.
std::vector<Value*> inputs_like(Graph& g, const Graph& like) {
  std::vector<Value*> inputs;
  for (const Value* in : like.inputs()) inputs.push_back(g.add_input(in->type(), in->debug_name()));
  return inputs;
}

}  // namespace

std::shared_ptr<Graph> vmap_transform_graph(const Graph& forward, const TransformSpec& t,
                                            const TransformedFunction& f) {
  batching::VmapSpec spec;
  spec.where = t.where;
  spec.function_name = f.name;
  spec.range = f.use;
  for (size_t i = 0; i < forward.inputs().size(); ++i) {
    std::optional<int64_t> d;
    if (i < f.param_types.size()) {
      if (t.in_dims_tuple) {
        d = i < t.in_dims.size() ? t.in_dims[i] : std::nullopt;
      } else if (f.param_types[i]->is_tensor()) {
        d = t.in_dims.at(0);
      }
    }
    spec.in_dims.push_back(d);
  }
  const TypePtr& returns = f.returns;
  size_t num_results = returns->kind() == TypeKind::Tuple ? returns->contained().size() : 1;
  if (t.out_dims_tuple &&
      (t.out_dims.size() != num_results || returns->kind() != TypeKind::Tuple)) {
    compile_error(f.use, t.where +
                             "(<inputs>): out_dims is not compatible with the structure of "
                             "`outputs`: out_dims has " +
                             std::to_string(t.out_dims.size()) + " entries but '" + f.name +
                             "' returns " + returns->str());
  }
  for (size_t k = 0; k < num_results; ++k)
    spec.out_dims.push_back(t.out_dims_tuple ? t.out_dims[k] : t.out_dims.at(0));
  return batching::vmap_graph(forward, spec);
}

// Row r of the Jacobian of result k is the vjp of the r-th basis cotangent of k, one
// block of rows per result of f.
std::shared_ptr<Graph> jacrev_graph(const Graph& forward, const TransformSpec& t,
                                    const TransformedFunction& f) {
  SplitGradient s = split_gradient(forward, t.argnums, f.name);
  const JointGraph& joint = s.joint;
  const Gradient& gradient = s.gradient;
  bool result_tuple = s.tuple;
  size_t num_results = s.num_results;
  size_t num_seeds = joint.seeded_outputs.size();
  // The backward mapped over its cotangents (the captured values are the same for all).
  batching::VmapSpec spec;
  spec.where = std::string(transform_name(TransformKind::Jacrev)) + "(" + f.name + ")";
  spec.function_name = transform_name(TransformKind::VjpFn);
  spec.range = f.use;
  for (size_t i = 0; i < gradient.df->inputs().size(); ++i)
    spec.in_dims.push_back(i < num_seeds ? std::optional<int64_t>(0) : std::nullopt);
  spec.out_dims.assign(gradient.df->outputs().size(), std::optional<int64_t>(0));
  // No result depends on the inputs (no cotangent to map): the Jacobians are zeros.
  std::shared_ptr<Graph> rows = num_seeds ? batching::vmap_graph(*gradient.df, spec) : nullptr;

  auto jac = std::make_shared<Graph>();
  Graph& g = *jac;
  std::vector<Value*> inputs = inputs_like(g, forward);
  InsertPointGuard at(g, g.block());
  FormulaScope scope(g, f.use);
  std::vector<Value*> outs = inline_graph(g, *gradient.f, inputs);
  std::vector<Value*> results(outs.begin(),
                              outs.begin() + static_cast<std::ptrdiff_t>(num_results));
  std::vector<Value*> seeded;
  for (size_t k : joint.seeded_outputs) seeded.push_back(results.at(k));
  Blocks b = blocks_of(seeded);
  std::vector<Value*> df_inputs;
  for (size_t j = 0; j < num_seeds; ++j)
    df_inputs.push_back(basis_of(seeded[j], b.total, b.offset[j], b.numel[j]));
  df_inputs.insert(df_inputs.end(), outs.begin() + static_cast<std::ptrdiff_t>(num_results),
                   outs.end());
  std::vector<Value*> grads = rows ? inline_graph(g, *rows, df_inputs) : std::vector<Value*>{};
  std::vector<std::vector<Value*>> j(num_results);
  for (size_t k = 0; k < num_results; ++k) {
    auto seed = std::find(joint.seeded_outputs.begin(), joint.seeded_outputs.end(), k);
    for (size_t a = 0; a < t.argnums.size(); ++a) {
      Value* x = inputs.at(t.argnums[a]);
      Sym shape = concat(size(results[k]), size(x));
      if (seed == joint.seeded_outputs.end()) {
        // A result that does not depend on the inputs (an int tensor): zeros.
        j[k].push_back(call(OpId::zeros, {shape, std::nullopt, std::nullopt, false}));
        continue;
      }
      size_t s = static_cast<size_t>(seed - joint.seeded_outputs.begin());
      Sym block = call(OpId::narrow, {grads.at(a), 0, b.offset[s], b.numel[s]});
      j[k].push_back(reshape(block, shape));
    }
  }
  g.add_output(jacobian_result(g, j, result_tuple, t.argnums_tuple));
  remove_dead_nodes(g);
  return jac;
}

// Column c of the Jacobian is the tangent of basis direction c, one block of columns
// per argnum.
std::shared_ptr<Graph> jacfwd_graph(const Graph& forward, const TransformSpec& t,
                                    const TransformedFunction& f) {
  std::unique_ptr<Graph> flat = forward.clone();
  bool result_tuple = flatten_tuple_result(*flat);
  size_t num_results = flat->outputs().size();
  size_t num_params = f.param_names.size();
  JvpGraph jvp = build_jvp(*flat, t.argnums, f.name, num_params);
  // Only the tangents are mapped; the primal results do not depend on them.
  Graph& tangents = *jvp.graph;
  for (size_t k = 0; k < jvp.num_forward_outputs; ++k) tangents.block()->erase_return(0);
  remove_dead_nodes(tangents);
  batching::VmapSpec spec;
  spec.where = std::string(transform_name(TransformKind::Jacfwd)) + "(" + f.name + ")";
  spec.function_name = transform_name(TransformKind::Jvp);
  spec.range = f.use;
  for (size_t i = 0; i < tangents.inputs().size(); ++i) {
    bool tangent = i >= num_params && i < num_params + t.argnums.size();
    spec.in_dims.push_back(tangent ? std::optional<int64_t>(0) : std::nullopt);
  }
  spec.out_dims.assign(tangents.outputs().size(), std::optional<int64_t>(0));
  std::shared_ptr<Graph> columns = batching::vmap_graph(tangents, spec);

  auto jac = std::make_shared<Graph>();
  Graph& g = *jac;
  std::vector<Value*> inputs = inputs_like(g, forward);
  InsertPointGuard at(g, g.block());
  FormulaScope scope(g, f.use);
  std::vector<Value*> primals;
  for (size_t a : t.argnums) primals.push_back(inputs.at(a));
  Blocks b = blocks_of(primals);
  std::vector<Value*> jvp_inputs(inputs.begin(),
                                 inputs.begin() + static_cast<std::ptrdiff_t>(num_params));
  for (size_t a = 0; a < primals.size(); ++a)
    jvp_inputs.push_back(basis_of(primals[a], b.total, b.offset[a], b.numel[a]));
  jvp_inputs.insert(jvp_inputs.end(), inputs.begin() + static_cast<std::ptrdiff_t>(num_params),
                    inputs.end());
  std::vector<Value*> cols = inline_graph(g, *columns, jvp_inputs);
  // The results, for their shapes.
  std::vector<Value*> results = inline_graph(g, *flat, inputs);
  std::vector<std::vector<Value*>> j(num_results);
  for (size_t k = 0; k < num_results; ++k) {
    for (size_t a = 0; a < primals.size(); ++a) {
      // [n_a] + out.shape -> [n_a, numel(out)] -> transposed -> out.shape + x.shape
      Sym block = call(OpId::narrow, {cols.at(k), 0, b.offset[a], b.numel[a]});
      Value* lead = int_list_of(g, {b.numel[a].value(), numel(results[k]).value()});
      Sym m = transpose(reshape(block, lead), 0, 1);
      Sym shape = concat(size(results[k]), size(primals[a]));
      j[k].push_back(reshape(m, shape));
    }
  }
  g.add_output(jacobian_result(g, j, result_tuple, t.argnums_tuple));
  remove_dead_nodes(g);
  return jac;
}

}  // namespace tsl::autodiff
