// The graphs of vmap, jacrev, jacfwd and hessian. vmap is ir/batching's rewrite of f;
// the Jacobians are functorch's: jacrev maps the vjp of f over the rows of an identity
// (vmap of the backward graph: no loop), jacfwd maps the jvp of f over its columns, and
// hessian(f) is jacfwd(jacrev(f)).
#include "frontend/compilation_unit.h"
#include "ir/autodiff/differentiate.h"
#include "ir/autodiff/forward_mode.h"
#include "ir/autodiff/sym.h"
#include "ir/batching/vmap.h"

namespace tsl {
namespace {

using autodiff::Arg;
using autodiff::call;
using autodiff::constant;
using autodiff::Sym;

Value* tuple_of(Graph& g, const std::vector<Value*>& elems) {
  std::vector<TypePtr> types;
  for (Value* e : elems) types.push_back(e->type());
  Node* n = g.insert(g.create(OpId::TupleConstruct, elems, 1));
  return n->output()->set_type(Type::tuple(std::move(types)));
}

Value* int_list_of(Graph& g, const std::vector<Value*>& elems) {
  Node* n = g.insert(g.create(OpId::ListConstruct, elems, 1));
  return n->output()->set_type(Type::list(Type::int_()));
}

Sym concat(Sym a, Sym b) {
  Sym s = call(OpId::add_list, {a, b});
  s.value()->set_type(Type::list(Type::int_()));
  return s;
}

// A graph whose one result is a tuple returns its elements instead; whether it was.
bool return_elements(Graph& g) {
  Value* out = g.outputs().at(0);
  if (g.outputs().size() != 1 || out->type()->kind() != TypeKind::Tuple) return false;
  const auto& types = out->type()->contained();
  InsertPointGuard guard(g, g.block());
  Node* unpack = g.insert(g.create(OpId::TupleUnpack, {out}, types.size()));
  g.block()->erase_return(0);
  for (size_t i = 0; i < types.size(); ++i) g.add_output(unpack->output(i)->set_type(types[i]));
  return true;
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
  Graph& g = autodiff::FormulaScope::graph();
  Value* lead = int_list_of(g, {n_total.value()});
  return autodiff::reshape(rows, concat(lead, autodiff::size(x)));
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
    b.numel.push_back(autodiff::numel(x));
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
  for (const auto& row : j) per_result.push_back(argnums_tuple ? tuple_of(g, row) : row.at(0));
  return result_tuple ? tuple_of(g, per_result) : per_result.at(0);
}

// in_dims or out_dims as written: "0", "(0, None)", "(1,)".
std::string dims_text(const std::vector<std::optional<int64_t>>& dims, bool tuple) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? ", " : "") + (dims[i] ? std::to_string(*dims[i]) : std::string("None"));
  if (!tuple) return out;
  return "(" + out + (dims.size() == 1 ? ",)" : ")");
}

}  // namespace

std::shared_ptr<FunctionDecl> CompilationUnit::make_vmap(const std::shared_ptr<FunctionDecl>& inner,
                                                         FunctionDecl::Transform spec,
                                                         const SourceRange& range) {
  (void)range;
  for (const auto& d : transforms_) {
    const FunctionDecl::Transform& t = *d->transform;
    if (t.kind == "vmap" && t.inner == inner && t.in_dims == spec.in_dims &&
        t.in_dims_tuple == spec.in_dims_tuple && t.out_dims == spec.out_dims &&
        t.out_dims_tuple == spec.out_dims_tuple)
      return d;
  }
  auto decl = std::make_shared<FunctionDecl>();
  std::string args;
  if (spec.in_dims_tuple || spec.in_dims != std::vector<std::optional<int64_t>>{0})
    args += ", in_dims=" + dims_text(spec.in_dims, spec.in_dims_tuple);
  if (spec.out_dims_tuple || spec.out_dims != std::vector<std::optional<int64_t>>{0})
    args += ", out_dims=" + dims_text(spec.out_dims, spec.out_dims_tuple);
  decl->name = "vmap(" + inner->name + args + ")";
  decl->module = inner->module;
  decl->def = inner->def;
  decl->param_names = inner->param_names;
  decl->param_types = inner->param_types;
  decl->defaults = inner->defaults;
  decl->transform = std::move(spec);
  transforms_.push_back(decl);
  return decl;
}

// vmap(f, in_dims, out_dims): f's graph batched (ir/batching/vmap.h).
std::shared_ptr<Graph> CompilationUnit::vmap_transform_graph(const Graph& forward,
                                                             const FunctionDecl::Transform& t,
                                                             const TypePtr& returns,
                                                             const SourceRange& use) {
  batching::VmapSpec spec;
  spec.where = t.where;
  spec.function_name = t.inner->name;
  spec.range = use;
  const FunctionDecl& f = *t.inner;
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
  size_t num_results = returns->kind() == TypeKind::Tuple ? returns->contained().size() : 1;
  if (t.out_dims_tuple &&
      (t.out_dims.size() != num_results || returns->kind() != TypeKind::Tuple)) {
    compile_error(use, t.where +
                           "(<inputs>): out_dims is not compatible with the structure of "
                           "`outputs`: out_dims has " +
                           std::to_string(t.out_dims.size()) + " entries but '" + f.name +
                           "' returns " + returns->str());
  }
  for (size_t k = 0; k < num_results; ++k)
    spec.out_dims.push_back(t.out_dims_tuple ? t.out_dims[k] : t.out_dims.at(0));
  return batching::vmap_graph(forward, spec);
}

// jacrev(f, argnums): the backward graph of f mapped over the rows of an identity, one
// block of rows per result of f: row r of the Jacobian of result k is the vjp of the
// r-th basis cotangent of k.
std::shared_ptr<Graph> CompilationUnit::jacrev_graph(const Graph& forward,
                                                     const FunctionDecl::Transform& t,
                                                     const SourceRange& use) {
  std::unique_ptr<Graph> flat = forward.clone();
  bool result_tuple = return_elements(*flat);
  size_t num_results = flat->outputs().size();
  autodiff::JointOptions options;
  options.function_name = t.inner->name;
  autodiff::JointGraph joint = autodiff::build_joint(*flat, t.argnums, options);
  autodiff::Gradient gradient = autodiff::split(joint);
  size_t num_seeds = joint.seeded_outputs.size();
  // The backward mapped over its cotangents (the captured values are the same for all).
  batching::VmapSpec spec;
  spec.where = "jacrev(" + t.inner->name + ")";
  spec.function_name = "vjp_fn";
  spec.range = use;
  for (size_t i = 0; i < gradient.df->inputs().size(); ++i)
    spec.in_dims.push_back(i < num_seeds ? std::optional<int64_t>(0) : std::nullopt);
  spec.out_dims.assign(gradient.df->outputs().size(), std::optional<int64_t>(0));
  // No result depends on the inputs (no cotangent to map): the Jacobians are zeros.
  std::shared_ptr<Graph> rows = num_seeds ? batching::vmap_graph(*gradient.df, spec) : nullptr;

  auto jac = std::make_shared<Graph>();
  Graph& g = *jac;
  std::vector<Value*> inputs;
  for (const Value* in : forward.inputs())
    inputs.push_back(g.add_input(in->type(), in->debug_name()));
  InsertPointGuard at(g, g.block());
  autodiff::FormulaScope scope(g, use);
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
      Sym shape = concat(autodiff::size(results[k]), autodiff::size(x));
      if (seed == joint.seeded_outputs.end()) {
        // A result that does not depend on the inputs (an int tensor): zeros.
        j[k].push_back(call(OpId::zeros, {shape, std::nullopt, std::nullopt, false}));
        continue;
      }
      size_t s = static_cast<size_t>(seed - joint.seeded_outputs.begin());
      Sym block = call(OpId::narrow, {grads.at(a), 0, b.offset[s], b.numel[s]});
      j[k].push_back(autodiff::reshape(block, shape));
    }
  }
  g.add_output(jacobian_result(g, j, result_tuple, t.argnums_tuple));
  autodiff::remove_dead_nodes(g);
  return jac;
}

// jacfwd(f, argnums): the jvp of f mapped over the columns of an identity, one block of
// columns per argnum: column c of the Jacobian is the tangent of basis direction c.
std::shared_ptr<Graph> CompilationUnit::jacfwd_graph(const Graph& forward,
                                                     const FunctionDecl::Transform& t,
                                                     const SourceRange& use) {
  std::unique_ptr<Graph> flat = forward.clone();
  bool result_tuple = return_elements(*flat);
  size_t num_results = flat->outputs().size();
  size_t num_params = t.inner->param_names.size();
  autodiff::JvpGraph jvp = autodiff::build_jvp(*flat, t.argnums, t.inner->name, num_params);
  // Only the tangents are mapped; the primal results do not depend on them.
  Graph& tangents = *jvp.graph;
  for (size_t k = 0; k < jvp.num_forward_outputs; ++k) tangents.block()->erase_return(0);
  autodiff::remove_dead_nodes(tangents);
  batching::VmapSpec spec;
  spec.where = "jacfwd(" + t.inner->name + ")";
  spec.function_name = "jvp";
  spec.range = use;
  for (size_t i = 0; i < tangents.inputs().size(); ++i) {
    bool tangent = i >= num_params && i < num_params + t.argnums.size();
    spec.in_dims.push_back(tangent ? std::optional<int64_t>(0) : std::nullopt);
  }
  spec.out_dims.assign(tangents.outputs().size(), std::optional<int64_t>(0));
  std::shared_ptr<Graph> columns = batching::vmap_graph(tangents, spec);

  auto jac = std::make_shared<Graph>();
  Graph& g = *jac;
  std::vector<Value*> inputs;
  for (const Value* in : forward.inputs())
    inputs.push_back(g.add_input(in->type(), in->debug_name()));
  InsertPointGuard at(g, g.block());
  autodiff::FormulaScope scope(g, use);
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
      Value* lead = int_list_of(g, {b.numel[a].value(), autodiff::numel(results[k]).value()});
      Sym m = autodiff::transpose(autodiff::reshape(block, lead), 0, 1);
      Sym shape = concat(autodiff::size(results[k]), autodiff::size(primals[a]));
      j[k].push_back(autodiff::reshape(m, shape));
    }
  }
  g.add_output(jacobian_result(g, j, result_tuple, t.argnums_tuple));
  autodiff::remove_dead_nodes(g);
  return jac;
}

// hessian(f, argnums) = jacfwd(jacrev(f, argnums), argnums), as in functorch. Where vmap
// cannot batch f's gradient (embedding in a batched table with a padding_idx, in the
// forward mode of a hessian in the table), the hessian of one argument is computed column by column
// instead, one jvp of grad(f) per basis vector in a loop (TSL's hessian before vmap).
std::shared_ptr<Graph> CompilationUnit::hessian_of(const Graph& forward,
                                                   const FunctionDecl::Transform& t,
                                                   const SourceRange& use,
                                                   const ConstantArgs& constants) {
  auto rev = make_transform("jacrev", t.inner, t.argnums, t.argnums_tuple, use);
  auto fwd = make_transform("jacfwd", rev, t.argnums, t.argnums_tuple, use);
  try {
    return compile_function(*fwd, use, constants).function->graph().clone();
  } catch (const SourceError& e) {
    bool unbatchable = e.message().rfind("vmap", 0) == 0;
    if (!unbatchable || t.argnums_tuple) throw;
  }
  return hessian_graph(forward, t, use);
}

}  // namespace tsl
