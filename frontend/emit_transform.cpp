// Function transforms as a program writes them: `grad(f, argnums=1)` (a new function),
// `jvp(f, primals, tangents)` and `vjp(f, *primals)` (calls), a vjp_fn's call, and
// graph(f). vmap's are in emit_vmap.cpp; the declarations and graphs in
// compile_transform.cpp.
#include "frontend/emitter.h"
#include "frontend/gradient_view.h"

namespace tsl {

using autodiff::TransformKind;

namespace {

// 0, 1, ..., n - 1: the argnums of jvp and vjp, which differentiate every primal given
// (the parameters after them take their defaults).
std::vector<size_t> first_indices(size_t n) {
  std::vector<size_t> out;
  for (size_t i = 0; i < n; ++i) out.push_back(i);
  return out;
}

// jvp() or vjp() given primals that do not fit f's parameters; `what_to_give` says how.
[[noreturn]] void primals_error(TransformKind kind, const FunctionDecl& f, const SourceRange& range,
                                const std::string& what_to_give) {
  compile_error(range, std::string(autodiff::transform_name(kind)) + "(): '" + f.name + "' takes " +
                           std::to_string(f.param_names.size()) + " argument(s); " + what_to_give);
}

}  // namespace

// The function a transform's first argument names: a def, a transform result, or a
// builtin (`grad(torch.sin)`).
FunctionDecl* Emitter::transformed_function(const Sugared& fn, TransformKind kind,
                                            const ast::Expr& e) {
  if (fn.kind == Sugared::Kind::UserFunction) return fn.function;
  if (fn.kind == Sugared::Kind::Builtin) return builtin_value(fn, e.range);
  compile_error(
      e.range, std::string(autodiff::transform_name(kind)) +
                   "() transforms a function (a def, a transform or a builtin), not " +
                   (fn.value ? "a value of type " + fn.value->type()->str() : "'" + fn.name + "'"));
}

// grad(f), grad(f, argnums), value_and_grad(f, argnums=(0, 1)), ...: a new function.
Sugared Emitter::emit_transform(TransformKind kind, const ast::Call& c) {
  const std::string name = autodiff::transform_name(kind);
  if (kind == TransformKind::Jvp || kind == TransformKind::Vjp) {
    compile_error(c.func->range,
                  name + "(f, ...) is called with the primals; it is not a function");
  }
  if (kind == TransformKind::Vmap) return emit_vmap(c);
  if (c.args.empty()) compile_error(c.range, name + "() needs a function to transform");
  Sugared fn = emit_sugared(*c.args[0]);
  fn.function = transformed_function(fn, kind, *c.args[0]);
  const ast::Expr* argnums_expr = c.args.size() > 1 ? c.args[1].get() : nullptr;
  if (c.args.size() > 2)
    compile_error(c.args[2]->range, name + "() takes at most 2 positional arguments");
  for (const ast::Keyword& k : c.keywords) {
    if (k.name != "argnums") {
      compile_error(k.range, name + "() got an unexpected keyword argument '" + k.name + "'");
    }
    argnums_expr = k.value.get();
  }
  std::vector<size_t> argnums{0};
  bool tuple = false;
  if (argnums_expr) {
    auto int_of = [&](const ast::Expr& e) -> size_t {
      if (e.kind != ast::ExprKind::Int || ast::as<ast::IntLit>(e).value < 0) {
        compile_error(e.range, "argnums must be a nonnegative int literal or a tuple of them");
      }
      return static_cast<size_t>(ast::as<ast::IntLit>(e).value);
    };
    argnums.clear();
    if (argnums_expr->kind == ast::ExprKind::Tuple) {
      tuple = true;
      for (const auto& e : ast::as<ast::TupleExpr>(*argnums_expr).elts)
        argnums.push_back(int_of(*e));
      if (argnums.empty()) compile_error(argnums_expr->range, "argnums must not be empty");
    } else {
      argnums.push_back(int_of(*argnums_expr));
    }
  }
  std::shared_ptr<FunctionDecl> inner = unit_.function_ptr(fn.function);
  TSL_INTERNAL_ASSERT(inner != nullptr, "transform of an unknown function");
  Sugared s;
  s.kind = Sugared::Kind::UserFunction;
  s.function = unit_.make_transform(kind, inner, std::move(argnums), tuple, c.range).get();
  s.name = s.function->name;
  return s;
}

// jvp(f, primals, tangents) (functorch's signature): f's result and its tangent,
// by forward mode.
Value* Emitter::emit_jvp_call(const ast::Call& c) {
  if (c.args.size() != 3 || !c.keywords.empty()) {
    compile_error(c.range, "jvp() takes a function, a tuple of primals and a tuple of tangents");
  }
  Sugared fn = emit_sugared(*c.args[0]);
  fn.function = transformed_function(fn, TransformKind::Jvp, *c.args[0]);
  auto elements = [&](const ast::Expr& e, const char* what) {
    Value* v = emit_expr(e);
    if (v->type()->kind() != TypeKind::Tuple) {
      compile_error(e.range, std::string("jvp(): the ") + what + " must be a tuple, as in (x,)");
    }
    const auto& types = v->type()->contained();
    Node* unpack = graph_.insert(graph_.create(OpId::TupleUnpack, {v}, types.size()));
    unpack->set_range(e.range);
    std::vector<CallArg> out;
    for (size_t i = 0; i < types.size(); ++i) {
      out.push_back({e.range, "", unpack->output(i)->set_type(types[i])});
    }
    return out;
  };
  std::vector<CallArg> args = elements(*c.args[1], "primals");
  std::vector<CallArg> tangents = elements(*c.args[2], "tangents");
  std::shared_ptr<FunctionDecl> inner = unit_.function_ptr(fn.function);
  TSL_INTERNAL_ASSERT(inner != nullptr, "jvp of an unknown function");
  if (args.empty() || args.size() > inner->param_names.size() || tangents.size() != args.size()) {
    primals_error(TransformKind::Jvp, *inner, c.range,
                  "give a primal for each (or for the first ones, the others taking their "
                  "defaults) and as many tangents");
  }
  auto decl =
      unit_.make_transform(TransformKind::Jvp, inner, first_indices(args.size()), true, c.range);
  for (size_t i = 0; i < tangents.size(); ++i) tangents[i].name = inner->param_names[i] + "'";
  args.insert(args.end(), tangents.begin(), tangents.end());
  return emit_user_call(*decl, args, c.range);
}

// vjp(f, *primals) (functorch's signature): (f(*primals), vjp_fn).
Value* Emitter::emit_vjp_call(const ast::Call& c) {
  if (c.args.size() < 2 || !c.keywords.empty()) {
    compile_error(c.range, "vjp() takes a function and its primals: vjp(f, x)");
  }
  Sugared fn = emit_sugared(*c.args[0]);
  fn.function = transformed_function(fn, TransformKind::Vjp, *c.args[0]);
  std::shared_ptr<FunctionDecl> inner = unit_.function_ptr(fn.function);
  TSL_INTERNAL_ASSERT(inner != nullptr, "vjp of an unknown function");
  std::vector<CallArg> args;
  for (size_t i = 1; i < c.args.size(); ++i)
    args.push_back({c.args[i]->range, "", emit_expr(*c.args[i])});
  if (args.size() > inner->param_names.size()) {
    primals_error(TransformKind::Vjp, *inner, c.range,
                  "give one primal for each (the ones left out take their defaults)");
  }
  auto decl =
      unit_.make_transform(TransformKind::Vjp, inner, first_indices(args.size()), true, c.range);
  return emit_user_call(*decl, args, c.range);
}

// A call of a closure value (vjp_fn): its Function, on the arguments then the
// values it captured.
Value* Emitter::emit_closure_call(const Sugared& callee, const std::vector<CallArg>& args,
                                  const SourceRange& range) {
  const FunctionDecl& decl = *callee.function;
  if (!callee.value)
    compile_error(range, "'" + decl.name + "' can only be called through its value");
  if (args.size() != decl.param_types.size()) {
    compile_error(range, decl.name + "() takes " + std::to_string(decl.param_types.size()) +
                             " argument(s), got " + std::to_string(args.size()));
  }
  std::vector<Value*> inputs = {callee.value};
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].name.empty())
      compile_error(args[i].range, decl.name + "() takes no keyword arguments");
    inputs.push_back(convert_to(args[i].value, decl.param_types[i], args[i].range, "argument"));
  }
  Node* call = graph_.insert(graph_.create(OpId::CallClosure, inputs, 1));
  call->set_range(range);
  return call->output()->set_type(decl.declared_return);
}

// graph(f): the IR of f as text; for a transform, its gradient graph.
Value* Emitter::emit_graph_of(const ast::Call& c) {
  if (c.args.empty() || !c.keywords.empty())
    compile_error(c.range, "graph() takes a function (and, for grad(f), example arguments)");
  Sugared fn = emit_sugared(*c.args[0]);
  if (fn.kind != Sugared::Kind::UserFunction) {
    compile_error(c.args[0]->range, "graph() shows a function (a def or a transform)");
  }
  if (c.args.size() == 1) {
    std::string text = unit_.graph_text(*fn.function, c.range);
    return constant(IValue(text), Type::str_(), c.range);
  }
  // graph(grad(f), x, w): f's gradient specialized to the arguments, as `:grad f(x, w)`
  // (Note [The specialized gradient view]). The arguments are evaluated as the
  // statement compiles, which at top level is just before it runs.
  const FunctionDecl::Transform* t = fn.function->transform ? &*fn.function->transform : nullptr;
  if (!t || t->kind != TransformKind::Grad) {
    compile_error(c.args[0]->range,
                  "graph(F, args...) shows the gradient of f at these arguments: F must be "
                  "grad(f)");
  }
  if (mode_ != Mode::TopLevel) {
    compile_error(c.range,
                  "graph(grad(f), args...) runs f on its arguments while it compiles: call it "
                  "at top level, not inside a def");
  }
  std::vector<IValue> args;
  for (size_t i = 1; i < c.args.size(); ++i) args.push_back(evaluate_expression(unit_, *c.args[i]));
  std::string text;
  try {
    text = specialized_gradient_text(unit_, *t->inner, args, t->inner->name, {}, t->argnums);
  } catch (const SourceError&) {
    throw;
  } catch (const Error& e) {
    compile_error(c.range, e.what());
  }
  return constant(IValue(text), Type::str_(), c.range);
}

Value* Emitter::emit_transform_call(const std::string& name, const ast::Call& c) {
  if (name == "graph") return emit_graph_of(c);
  TransformKind kind = *autodiff::transform_named(name);
  if (kind == TransformKind::Jvp) return emit_jvp_call(c);
  if (kind == TransformKind::Vjp) return emit_vjp_call(c);
  return as_value(emit_transform(kind, c), c.range);
}

}  // namespace tsl
