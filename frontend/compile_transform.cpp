// Functions made by transforms (`grad(f, argnums=1)`, `vmap(f, in_dims=(0, None))`):
// their declarations, made once per transform of a function, and their compilation:
// f compiled and inlined, its constant arguments bound, then ir/autodiff/transforms.h
// builds the transform's graph (Note [Transforms as graph functions] there).
#include "frontend/compilation_unit.h"
#include "ir/passes/constant_folding.h"
#include "ir/passes/dead_code_elimination.h"

namespace tsl {
namespace {

using autodiff::TransformKind;

// argnums as written after f: "", ", argnums=1", ", argnums=(0, 1)".
std::string argnums_text(const std::vector<size_t>& argnums, bool tuple) {
  if (argnums == std::vector<size_t>{0} && !tuple) return "";
  std::string args = ", argnums=";
  if (tuple) args += "(";
  for (size_t i = 0; i < argnums.size(); ++i) args += (i ? ", " : "") + std::to_string(argnums[i]);
  if (tuple) args += argnums.size() == 1 ? ",)" : ")";
  return args;
}

// in_dims or out_dims as written: "0", "(0, None)", "(1,)".
std::string dims_text(const std::vector<std::optional<int64_t>>& dims, bool tuple) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? ", " : "") + (dims[i] ? std::to_string(*dims[i]) : std::string("None"));
  if (!tuple) return out;
  return "(" + out + (dims.size() == 1 ? ",)" : ")");
}

// A transform's declaration named `name`, with the signature of `inner`.
std::shared_ptr<FunctionDecl> transform_decl(std::string name, const FunctionDecl& inner) {
  auto decl = std::make_shared<FunctionDecl>();
  decl->name = std::move(name);
  decl->module = inner.module;
  decl->def = inner.def;
  decl->param_names = inner.param_names;
  decl->param_types = inner.param_types;
  decl->defaults = inner.defaults;
  return decl;
}

FunctionDecl::Transform transform_of(TransformKind kind, std::shared_ptr<FunctionDecl> inner,
                                     std::vector<size_t> argnums, bool argnums_tuple) {
  FunctionDecl::Transform t;
  t.kind = kind;
  t.argnums = std::move(argnums);
  t.argnums_tuple = argnums_tuple;
  t.inner = std::move(inner);
  return t;
}

}  // namespace

std::shared_ptr<FunctionDecl> CompilationUnit::make_transform(
    TransformKind kind, const std::shared_ptr<FunctionDecl>& inner, std::vector<size_t> argnums,
    bool argnums_tuple, const SourceRange& range) {
  for (const auto& d : transforms_) {
    const FunctionDecl::Transform& t = *d->transform;
    if (t.kind == kind && t.inner == inner && t.argnums == argnums &&
        t.argnums_tuple == argnums_tuple)
      return d;
  }
  const std::string name = autodiff::transform_name(kind);
  for (size_t a : argnums) {
    if (kind == TransformKind::Jvp) break;  // checked when compiled, with a message about tangents
    if (a >= inner->param_names.size()) {
      compile_error(range, name + "(): argnums " + std::to_string(a) + " is out of range: '" +
                               inner->name + "' takes " +
                               std::to_string(inner->param_names.size()) + " argument(s)");
    }
    if (!inner->param_types[a]->is_tensor()) {
      compile_error(range, name + "(): argument '" + inner->param_names[a] + "' of '" +
                               inner->name + "' is " + inner->param_types[a]->str() +
                               ", and only Tensor arguments have gradients");
    }
  }
  auto decl =
      transform_decl(name + "(" + inner->name + argnums_text(argnums, argnums_tuple) + ")", *inner);
  if (kind == TransformKind::Jvp) {
    // jvp(f, primals, tangents): f's parameters, then one tangent per primal given (the
    // parameters after them take their defaults). A tangent's name is not an
    // identifier (x'), so that no parameter of f can take its argument.
    for (size_t i : argnums) {
      decl->param_names.push_back(inner->param_names[i] + "'");
      decl->param_types.push_back(Type::tensor());
      decl->defaults.push_back(std::nullopt);
    }
  }
  decl->transform = transform_of(kind, inner, argnums, argnums_tuple);
  if (kind == TransformKind::Vjp) {
    // vjp(f, *primals) returns (f(*primals), vjp_fn); vjp_fn(cotangent) returns one
    // gradient per primal, as a tuple (functorch's signature).
    auto fn = std::make_shared<FunctionDecl>();
    fn->name =
        std::string(autodiff::transform_name(TransformKind::VjpFn)) + "(" + inner->name + ")";
    fn->module = inner->module;
    fn->def = inner->def;
    fn->param_names = {"cotangent"};
    fn->param_types = {Type::tensor()};
    fn->defaults = {std::nullopt};
    fn->declared_return = Type::tuple(std::vector<TypePtr>(argnums.size(), Type::tensor()));
    fn->transform = transform_of(TransformKind::VjpFn, inner, argnums, true);
    transforms_.push_back(fn);
    decl->transform->companion = fn;
  }
  transforms_.push_back(decl);
  return decl;
}

std::shared_ptr<FunctionDecl> CompilationUnit::make_vmap(const std::shared_ptr<FunctionDecl>& inner,
                                                         FunctionDecl::Transform spec,
                                                         const SourceRange& range) {
  (void)range;
  for (const auto& d : transforms_) {
    const FunctionDecl::Transform& t = *d->transform;
    if (t.kind == TransformKind::Vmap && t.inner == inner && t.in_dims == spec.in_dims &&
        t.in_dims_tuple == spec.in_dims_tuple && t.out_dims == spec.out_dims &&
        t.out_dims_tuple == spec.out_dims_tuple)
      return d;
  }
  std::string args;
  if (spec.in_dims_tuple || spec.in_dims != std::vector<std::optional<int64_t>>{0})
    args += ", in_dims=" + dims_text(spec.in_dims, spec.in_dims_tuple);
  if (spec.out_dims_tuple || spec.out_dims != std::vector<std::optional<int64_t>>{0})
    args += ", out_dims=" + dims_text(spec.out_dims, spec.out_dims_tuple);
  auto decl = transform_decl("vmap(" + inner->name + args + ")", *inner);
  decl->transform = std::move(spec);
  transforms_.push_back(decl);
  return decl;
}

namespace {

bool same_constants(const ConstantArgs& a, const ConstantArgs& b) {
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const std::optional<IValue>* x = i < a.size() ? &a[i] : nullptr;
    const std::optional<IValue>* y = i < b.size() ? &b[i] : nullptr;
    bool hx = x && x->has_value(), hy = y && y->has_value();
    if (hx != hy) return false;
    if (hx && (*x)->is_none() != (*y)->is_none()) return false;
    if (hx && !(*x)->is_none() && (*x)->to_str() != (*y)->to_str()) return false;
  }
  return true;
}

// Note [Transforms of constant modes]
// A gradient rule needs a mode such as mse_loss's reduction as a constant (the
// gradient's shape and formula depend on it), but a function often takes it as a
// parameter: `def loss(x, red: str): return F.mse_loss(x, y, reduction=red)` with
// `grad(loss)(x, "sum")`; and a rule with an optional weight or bias needs to know
// whether it is None (`grad(f)(x, None)` for `w: Optional[Tensor]`). So a transform is
// compiled once per set of constant str and None arguments its calls pass: in that
// version the forward's parameters are those constants, folded (`if red == "mean":`
// too) before it is differentiated. The
// parameters stay in the signature, so every version is called alike. A transform whose
// parameters are its inner function's (grad, vmap, hessian, ...) passes the constants
// on, so grad(grad(loss))(x, "sum") specializes both.
void bind_constant_args(Graph& forward, const ConstantArgs& constants, const SourceRange& use) {
  bool any = false;
  InsertPointGuard at(forward, forward.block()->param_node()->next());
  for (size_t i = 0; i < constants.size() && i < forward.inputs().size(); ++i) {
    if (!constants[i]) continue;
    Value* param = forward.inputs()[i];
    Value* k;
    if (constants[i]->is_none()) {
      k = forward.insert_constant(IValue(), Type::none(), use);
    } else {
      k = forward.insert_constant(*constants[i], Type::str_(), use);
    }
    if (param->type()->kind() == TypeKind::Optional) {
      k = forward.insert_op(OpId::to_optional, {k}, param->type(), use);
    }
    param->replace_all_uses_with(k);
    any = true;
  }
  if (any) {
    fold_constants(forward);
    eliminate_dead_code(forward);
  }
}

// What the graph functions of ir/autodiff/transforms.h know of the function `f` a
// transform transforms, which returns `returns`; the transform is used at `use`.
autodiff::TransformedFunction transformed_function(const FunctionDecl& f, const TypePtr& returns,
                                                   const SourceRange& use) {
  autodiff::TransformedFunction out;
  out.name = f.name;
  out.param_names = f.param_names;
  out.param_types = f.param_types;
  if (f.def) {
    for (const ast::Param& p : f.def->params) out.param_ranges.push_back(p.range);
  }
  out.returns = returns;
  out.use = use;
  return out;
}

}  // namespace

const FunctionDecl::Compiled& CompilationUnit::compile_transform(FunctionDecl& decl,
                                                                 const SourceRange& use,
                                                                 const ConstantArgs& constants) {
  const FunctionDecl::Transform& t = *decl.transform;
  // The inner function's own parameters line up with the transform's when their names do.
  bool mirrors = t.inner->param_names == decl.param_names;
  const FunctionDecl::Compiled& inner =
      compile_function(*t.inner, use, mirrors ? constants : ConstantArgs{});
  for (const auto& c : decl.compiled) {
    if (c.generation == generation_ && c.function.get() && c.hidden_types == inner.hidden_types &&
        c.hidden_globals == inner.hidden_globals && same_constants(c.constant_args, constants))
      return c;
  }
  autodiff::TransformedFunction f = transformed_function(*t.inner, inner.return_type, use);
  autodiff::check_transform_result(t, f);
  std::unique_ptr<Graph> forward = inner.function->graph().clone();
  inline_function_calls(*forward);
  // An inner transform's graph was specialized already, and its parameters need not be
  // the forward's inputs in order.
  if (!t.inner->transform) bind_constant_args(*forward, constants, use);
  std::shared_ptr<Graph> result =
      transform_graph(*forward, t, f, mirrors ? constants : ConstantArgs{});
  autodiff::check_floating_inputs(*result, t, f);
  result->set_name(decl.name);
  verify(*result);
  FunctionDecl::Compiled c;
  c.return_type = result->outputs()[0]->type();
  c.function = IntrusivePtr<Function>(new Function(decl.name, result));
  c.hidden_globals = inner.hidden_globals;
  c.hidden_types = inner.hidden_types;
  c.generation = generation_;
  c.constant_args = constants;
  decl.compiled.push_back(std::move(c));
  compiled_since_drop_ = true;
  return decl.compiled.back();
}

std::shared_ptr<Graph> CompilationUnit::transform_graph(const Graph& forward,
                                                        const FunctionDecl::Transform& t,
                                                        const autodiff::TransformedFunction& f,
                                                        const ConstantArgs& constants) {
  switch (t.kind) {
    case TransformKind::Grad:
    case TransformKind::ValueAndGrad:
    case TransformKind::GradAndValue:
      return autodiff::grad_graph(forward, t, f);
    case TransformKind::Vjp:
      return autodiff::vjp_graph(forward, t, f,
                                 [&](const std::shared_ptr<Graph>& backward, const TypePtr& ct) {
                                   return vjp_closure(*t.companion, backward, ct);
                                 });
    case TransformKind::Jvp:
      return autodiff::jvp_graph(forward, t, f);
    case TransformKind::Hessian:
      return hessian_of(forward, t, f, constants);
    case TransformKind::Vmap:
      return autodiff::vmap_transform_graph(forward, t, f);
    case TransformKind::Jacrev:
      return autodiff::jacrev_graph(forward, t, f);
    case TransformKind::Jacfwd:
      return autodiff::jacfwd_graph(forward, t, f);
    case TransformKind::VjpFn:
      break;
  }
  compile_error(f.use, "internal: vjp_fn is called through its closure");
}

// vjp's closure (the vjp_fn value): the Function of the backward graph, typed by the
// declaration `vjp_fn` of its calls, whose parameter is the cotangent.
autodiff::VjpClosure CompilationUnit::vjp_closure(FunctionDecl& vjp_fn,
                                                  const std::shared_ptr<Graph>& backward,
                                                  const TypePtr& cotangent) {
  vjp_fn.param_types = {cotangent};
  backward->set_name(vjp_fn.name);
  IntrusivePtr<Function> function(new Function(vjp_fn.name, backward));
  return {IValue(IntrusivePtr<ObjectImpl>(function.get())), function_value_type(vjp_fn)};
}

// hessian(f, argnums) = jacfwd(jacrev(f, argnums), argnums), as in functorch, compiled
// as those two transforms. Where vmap cannot batch f's gradient (embedding in a batched
// table with a padding_idx, in the forward mode of a hessian in the table), the hessian
// of one argument is computed column by column instead, one jvp of grad(f) per basis
// vector in a loop (TSL's hessian before vmap).
std::shared_ptr<Graph> CompilationUnit::hessian_of(const Graph& forward,
                                                   const FunctionDecl::Transform& t,
                                                   const autodiff::TransformedFunction& f,
                                                   const ConstantArgs& constants) {
  auto rev = make_transform(TransformKind::Jacrev, t.inner, t.argnums, t.argnums_tuple, f.use);
  auto fwd = make_transform(TransformKind::Jacfwd, rev, t.argnums, t.argnums_tuple, f.use);
  try {
    return compile_function(*fwd, f.use, constants).function->graph().clone();
  } catch (const SourceError& e) {
    bool unbatchable = e.message().rfind("vmap", 0) == 0;
    if (!unbatchable || t.argnums_tuple) throw;
  }
  return autodiff::hessian_by_columns(forward, t, f);
}

}  // namespace tsl
