// vmap(f, in_dims=0, out_dims=0) as written in a program: its dims read from the
// literals, functorch's checks of them, and of the arguments a vmapped function is
// called with (in_dims is decided where vmap is written; ir/batching does the rest).
#include "frontend/compilation_unit.h"
#include "frontend/emitter.h"

namespace tsl {
namespace {

// An in_dims or out_dims entry: an int literal (-1 included) or None.
std::optional<std::optional<int64_t>> dim_entry(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::None) return std::optional<int64_t>();
  if (e.kind == ast::ExprKind::Int) return std::optional<int64_t>(ast::as<ast::IntLit>(e).value);
  if (e.kind == ast::ExprKind::Unary) {
    const auto& u = ast::as<ast::Unary>(e);
    if (u.op == ast::UnaryOp::Neg && u.operand->kind == ast::ExprKind::Int)
      return std::optional<int64_t>(-ast::as<ast::IntLit>(*u.operand).value);
  }
  return std::nullopt;
}

std::string dim_text(const std::optional<int64_t>& d) { return d ? std::to_string(*d) : "None"; }

// in_dims or out_dims: an int, None, or a flat tuple of them; how it was written.
struct Dims {
  std::vector<std::optional<int64_t>> dims;
  bool tuple = false;
  std::string text;
};

Dims parse_dims(const ast::Expr& e, const char* what) {
  Dims d;
  auto bad = [&](const ast::Expr& at) {
    compile_error(at.range, std::string("vmap: ") + what +
                                " must be an int, None, or a tuple of ints and Nones written "
                                "out (TSL decides what vmap maps where vmap is written)");
  };
  if (e.kind == ast::ExprKind::Tuple) {
    d.tuple = true;
    const auto& elts = ast::as<ast::TupleExpr>(e).elts;
    d.text = "(";
    for (size_t i = 0; i < elts.size(); ++i) {
      auto v = dim_entry(*elts[i]);
      if (!v) bad(*elts[i]);
      d.dims.push_back(*v);
      d.text += (i ? ", " : "") + dim_text(*v);
    }
    d.text += elts.size() == 1 ? ",)" : ")";
    return d;
  }
  auto v = dim_entry(e);
  if (!v) bad(e);
  d.dims.push_back(*v);
  d.text = dim_text(*v);
  return d;
}

// Python's name of the class of a value of type t, as functorch's messages show it.
std::string python_class(const TypePtr& t) {
  switch (t->kind()) {
    case TypeKind::Int:
      return "<class 'int'>";
    case TypeKind::Float:
      return "<class 'float'>";
    case TypeKind::Bool:
      return "<class 'bool'>";
    case TypeKind::Str:
      return "<class 'str'>";
    case TypeKind::List:
      return "<class 'list'>";
    case TypeKind::Tuple:
      return "<class 'tuple'>";
    case TypeKind::None:
      return "<class 'NoneType'>";
    default:
      return "<class '" + t->str() + "'>";
  }
}

std::string tree_spec(size_t n) {
  std::string s = "TreeSpec(tuple, None, [";
  for (size_t i = 0; i < n; ++i) s += i ? ", *" : "*";
  return s + "])";
}

}  // namespace

// vmap(f), vmap(f, in_dims, out_dims), vmap(f, in_dims=(0, None)), functorch.vmap(...)
Sugared Emitter::emit_vmap(const ast::Call& c) {
  if (c.args.empty()) compile_error(c.range, "vmap() needs a function to transform");
  Sugared fn = emit_sugared(*c.args[0]);
  if (fn.kind != Sugared::Kind::UserFunction) {
    compile_error(c.args[0]->range, "vmap() transforms a function (a def or a transform), not " +
                                        (fn.value ? "a value of type " + fn.value->type()->str()
                                                  : "'" + fn.name + "'"));
  }
  if (fn.function->transform && fn.function->transform->kind == autodiff::TransformKind::VjpFn) {
    compile_error(c.args[0]->range,
                  "vmap of a vjp_fn value is not supported yet: use jacrev(f) for a Jacobian, "
                  "or vmap a function that calls vjp and its vjp_fn");
  }
  const ast::Expr* in_expr = c.args.size() > 1 ? c.args[1].get() : nullptr;
  const ast::Expr* out_expr = c.args.size() > 2 ? c.args[2].get() : nullptr;
  if (c.args.size() > 3)
    compile_error(c.args[3]->range, "vmap() takes at most 3 positional arguments");
  for (const ast::Keyword& k : c.keywords) {
    if (k.name == "in_dims") {
      in_expr = k.value.get();
    } else if (k.name == "out_dims") {
      out_expr = k.value.get();
    } else if (k.name == "randomness") {
      const ast::Expr& v = *k.value;
      if (v.kind != ast::ExprKind::Str || ast::as<ast::StrLit>(v).value != "error")
        compile_error(k.range,
                      "vmap: only randomness='error' is supported (random ops are an "
                      "error under vmap)");
    } else {
      compile_error(k.range, "vmap() got an unexpected keyword argument '" + k.name + "'");
    }
  }
  std::shared_ptr<FunctionDecl> inner = unit_.function_ptr(fn.function);
  TSL_INTERNAL_ASSERT(inner != nullptr, "vmap of an unknown function");
  Dims in = in_expr ? parse_dims(*in_expr, "in_dims") : Dims{{0}, false, "0"};
  Dims out = out_expr ? parse_dims(*out_expr, "out_dims") : Dims{{0}, false, "0"};
  FunctionDecl::Transform spec;
  spec.kind = autodiff::TransformKind::Vmap;
  spec.inner = inner;
  spec.where = "vmap(" + inner->name + ", in_dims=" + in.text + ", ...)";
  const SourceRange& at = in_expr ? in_expr->range : c.range;
  if (!in.tuple && !in.dims[0]) {
    compile_error(at, spec.where +
                          "(<inputs>): expected `in_dims` to be int or a (potentially nested) "
                          "tuple matching the structure of inputs, got: <class 'NoneType'>.");
  }
  size_t n = inner->param_types.size();
  if (in.tuple && in.dims.size() > n) {
    compile_error(at, spec.where + "(<inputs>): in_dims has " + std::to_string(in.dims.size()) +
                          " entries, but '" + inner->name + "' takes " + std::to_string(n) +
                          " argument(s)");
  }
  for (size_t i = 0; in.tuple && i < in.dims.size(); ++i) {
    const TypePtr& type = inner->param_types[i];
    if (in.dims[i] && !type->is_tensor()) {
      compile_error(at, spec.where + "(<inputs>): Got in_dim=" + std::to_string(*in.dims[i]) +
                            " for an input but the input is of type " + python_class(type) +
                            ". We cannot vmap over non-Tensor arguments, please use None as the "
                            "respective in_dim");
    }
  }
  spec.in_dims = in.dims;
  spec.in_dims_tuple = in.tuple;
  spec.out_dims = out.dims;
  spec.out_dims_tuple = out.tuple;
  Sugared s;
  s.kind = Sugared::Kind::UserFunction;
  s.function = unit_.make_vmap(inner, std::move(spec), c.range).get();
  s.name = s.function->name;
  return s;
}

// functorch maps the positional arguments only, each by its in_dim: with in_dims a
// tuple, one per argument; with an int, every argument must be a Tensor.
void Emitter::check_vmap_call(const FunctionDecl& decl, const std::vector<CallArg>& args,
                              const SourceRange& range) {
  const FunctionDecl::Transform& t = *decl.transform;
  size_t positional = 0;
  for (const CallArg& a : args) {
    if (a.name.empty()) {
      if (!t.in_dims_tuple && positional < decl.param_types.size() &&
          !decl.param_types[positional]->is_tensor()) {
        compile_error(a.range, t.where + "(<inputs>): Got in_dim=" + dim_text(t.in_dims.at(0)) +
                                   " for an input but the input is of type " +
                                   python_class(decl.param_types[positional]) +
                                   ". We cannot vmap over non-Tensor arguments, please use None "
                                   "as the respective in_dim");
      }
      ++positional;
      continue;
    }
    auto it = std::find(decl.param_names.begin(), decl.param_names.end(), a.name);
    size_t i = static_cast<size_t>(it - decl.param_names.begin());
    bool mapped = t.in_dims_tuple ? i < t.in_dims.size() && t.in_dims[i].has_value()
                                  : i < decl.param_types.size() && decl.param_types[i]->is_tensor();
    if (it != decl.param_names.end() && mapped) {
      compile_error(a.range, t.where + "(<inputs>): argument '" + a.name +
                                 "' is given by keyword, and functorch does not map keyword "
                                 "arguments; pass it by position");
    }
  }
  if (t.in_dims_tuple && positional != t.in_dims.size()) {
    compile_error(range, t.where +
                             "(<inputs>): in_dims is not compatible with the structure of "
                             "`inputs`. in_dims has structure " +
                             tree_spec(t.in_dims.size()) + " but inputs has structure " +
                             tree_spec(positional) + ".");
  }
}

}  // namespace tsl
