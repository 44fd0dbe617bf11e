// Expressions of the emitter: names and attributes, calls (builtins, ops, user
// functions, methods), operators with Python's typing rules, subscripts, literals,
// comprehensions and f-strings.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "frontend/emitter.h"
#include "frontend/gradient_view.h"

namespace tsl {
namespace {

using autodiff::TransformKind;

// The ops reachable under one base name in one namespace, in table order. By
// namespace, then name, so that a lookup copies no string (it runs for every call
// and attribute the emitter meets).
const std::vector<OpId>& ops_named(const std::string& base, uint32_t flag) {
  using ByName = std::map<std::string, std::vector<OpId>, std::less<>>;
  static const auto* index = [] {
    auto* m = new std::map<uint32_t, ByName>();
    const uint32_t spaces[] = {opflags::METHOD, opflags::GLOBAL, opflags::TORCH,
                               opflags::NNF,    opflags::MATH,   0};
    for (int i = 0; i < kNumOps; ++i) {
      const OpInfo& info = op_info(static_cast<OpId>(i));
      if (info.has(opflags::PRIM)) continue;
      for (uint32_t f : spaces) {
        if (f == 0 ? true : info.has(f)) (*m)[f][std::string(info.base_name())].push_back(info.id);
      }
    }
    return m;
  }();
  static const std::vector<OpId> none;
  auto space = index->find(flag);
  if (space == index->end()) return none;
  auto it = space->second.find(base);
  return it == space->second.end() ? none : it->second;
}

// Python's builtin conversion functions are the Float/Int/Bool/Str rows.
std::string builtin_op_name(const std::string& name) {
  if (name == "float") return "Float";
  if (name == "int") return "Int";
  if (name == "bool") return "Bool";
  return name;
}

std::optional<DType> torch_dtype(const std::string& name) {
  if (name == "float32" || name == "float") return DType::Float32;
  if (name == "float64" || name == "double") return DType::Float64;
  if (name == "int64" || name == "long") return DType::Int64;
  if (name == "bool") return DType::Bool;
  return std::nullopt;
}

bool is_unsupported_dtype(const std::string& name) {
  static const char* names[] = {"int32",      "int",     "int16",  "short",    "int8",
                                "uint8",      "float16", "half",   "bfloat16", "complex64",
                                "complex128", "cfloat",  "cdouble"};
  for (const char* n : names) {
    if (name == n) return true;
  }
  return false;
}

const char* kPythonBuiltins[] = {"print",     "len", "range",      "float", "int",   "bool",
                                 "str",       "abs", "min",        "max",   "sum",   "round",
                                 "enumerate", "zip", "isinstance", "list",  "tuple", "dict"};

bool is_python_builtin(const std::string& name) {
  for (const char* b : kPythonBuiltins) {
    if (name == b) return true;
  }
  return false;
}

// A function transform (`grad`, `vmap`, ...) or graph(f), which shows one.
bool is_transform(const std::string& name) {
  return name == "graph" || autodiff::transform_named(name).has_value();
}

}  // namespace

int broadcasting_list_length(const ast::Expr& annotation) {
  if (annotation.kind != ast::ExprKind::Subscript) return 0;
  const ast::Expr& head = *ast::as<ast::Subscript>(annotation).value;
  std::string name;
  if (head.kind == ast::ExprKind::Name) name = ast::as<ast::Name>(head).id;
  if (head.kind == ast::ExprKind::Attribute) name = ast::as<ast::Attribute>(head).attr;
  if (name == "Optional") {
    const auto& s = ast::as<ast::Subscript>(annotation);
    return s.indices.size() == 1 ? broadcasting_list_length(*s.indices[0]) : 0;
  }
  if (name == "BroadcastingList1") return 1;
  if (name == "BroadcastingList2") return 2;
  if (name == "BroadcastingList3") return 3;
  return 0;
}

uint32_t builtin_namespace(const std::string& module) {
  if (module == "torch") return opflags::TORCH;
  if (module == "torch.nn.functional") return opflags::NNF;
  if (module == "math") return opflags::MATH;
  return 0;
}

bool is_builtin_of(const std::string& module, const std::string& name) {
  uint32_t space = builtin_namespace(module);
  if (space == 0) return false;
  if (!ops_named(name, space).empty()) return true;
  return space == opflags::TORCH &&
         (name == "no_grad" || is_transform(name) || name == "addcmul" || name == "addcdiv");
}

Value* Emitter::constant(IValue v, TypePtr t, const SourceRange& range) {
  return graph_.insert_constant(std::move(v), std::move(t), range);
}

// ---- Conversions ---------------------------------------------------------------------------

Value* Emitter::convert_to(Value* v, const TypePtr& target, const SourceRange& range,
                           const std::string& what) {
  if (v->type()->equals(*target) || target->kind() == TypeKind::Any) return v;
  TypePtr var;
  Conversion c = conversion_for(v->type(), target, var, false, v);
  if (c == Conversion::Reject) {
    compile_error(range, what + " must be " + target->str() + ", not " + v->type()->str());
  }
  Value* out = apply_conversion(graph_, v, c, target, range);
  if (target->kind() == TypeKind::Optional && !out->type()->equals(*target)) {
    if (out->type()->kind() == TypeKind::None)
      return graph_.insert_constant(IValue(), target, range);
    return graph_.insert_op(OpId::to_optional, {out}, target, range);
  }
  return out;
}

Value* Emitter::to_bool(Value* v, const SourceRange& range, const char* what) {
  switch (v->type()->kind()) {
    case TypeKind::Bool:
      return v;
    case TypeKind::Tensor:
      return graph_.insert_op(OpId::Bool_Tensor, {v}, Type::bool_(), range);
    case TypeKind::Int:
      return graph_.insert_op(OpId::Bool_int, {v}, Type::bool_(), range);
    case TypeKind::Float:
      return graph_.insert_op(OpId::Bool_float, {v}, Type::bool_(), range);
    case TypeKind::Dict: {  // Python: a dict is true when it has entries
      Value* n =
          graph_.insert_op(dict_op_id(DictOp::Len, v->type()->key()->kind() == TypeKind::Int), {v},
                           Type::int_(), range);
      Value* zero = constant(IValue(int64_t{0}), Type::int_(), range);
      return graph_.insert_op(OpId::ne_int, {n, zero}, Type::bool_(), range);
    }
    case TypeKind::Optional:
      compile_error(range, std::string(what) + " must be bool, not " + v->type()->str() +
                               " (write `x is not None` to test an Optional)");
    default:
      compile_error(range, std::string(what) + " must be bool, not " + v->type()->str());
  }
}

// ---- Names and attributes ---------------------------------------------------------------------

Sugared Emitter::resolve_name(const ast::Name& n) {
  const std::string& id = n.id;
  std::string q = qualified(id);
  if (lookup_local(id) || (unit_.find_global(q) && !unit_.find_function(q)) ||
      (mode_ == Mode::Function && locals_.count(id)) || maybe_undefined_.count(id)) {
    // A function value: calls are resolved statically through its type.
    return sugar_value(read_variable(id, n.range));
  }
  if (FunctionDecl* fn = unit_.find_function(q)) return user_function(fn, id);
  if (const ImportedName* imp = unit_.find_import(q)) return sugar_import(*imp);
  if (id == "True" || id == "False") {
    Sugared s;
    s.value = constant(IValue(id == "True"), Type::bool_(), n.range);
    return s;
  }
  if (is_python_builtin(id) || !ops_named(builtin_op_name(id), opflags::GLOBAL).empty() ||
      is_transform(id) || id == "no_grad") {
    Sugared s;
    s.kind = Sugared::Kind::Builtin;
    s.name = id;
    s.namespace_flag = opflags::GLOBAL;
    return s;
  }
  undefined_name(id, n.range);
}

Sugared Emitter::user_function(FunctionDecl* fn, const std::string& name) {
  Sugared s;
  s.kind = Sugared::Kind::UserFunction;
  s.function = fn;
  s.name = name;
  return s;
}

Sugared Emitter::sugar_import(const ImportedName& imp) {
  Sugared s;
  switch (imp.kind) {
    case ImportedName::Module:
    case ImportedName::UserModule:
      s.kind = Sugared::Kind::Module;
      break;
    case ImportedName::TypingName:
      s.kind = Sugared::Kind::TypingName;
      break;
    case ImportedName::Transform:
    case ImportedName::Builtin:
      s.kind = Sugared::Kind::Builtin;
      break;
  }
  s.name = imp.target;
  s.namespace_flag = imp.kind == ImportedName::Builtin ? imp.space : opflags::GLOBAL;
  return s;
}

Sugared Emitter::sugared_attribute(const Sugared& base, const ast::Attribute& a) {
  const std::string& attr = a.attr;
  if (base.kind == Sugared::Kind::Module && unit_.is_user_module(base.name)) {
    // `nn.linear`: a name of a TSL module, kept under its qualified name.
    std::string q = base.name + "." + attr;
    if (FunctionDecl* fn = unit_.find_function(q)) return user_function(fn, q);
    if (unit_.find_global(q)) {
      Sugared s;
      s.value = read_under_no_grad(global_input(q, a.range), a.range);
      return s;
    }
    if (const ImportedName* imp = unit_.find_import(q)) return sugar_import(*imp);
    compile_error(a.attr_range, "module '" + base.name + "' has no attribute '" + attr + "'");
  }
  if (base.kind == Sugared::Kind::Module) {
    const std::string& m = base.name;
    std::string path = m + "." + attr;
    static const std::unordered_set<std::string> submodules = {
        "torch.nn",   "torch.nn.functional", "torch.cuda",     "torch.jit",
        "torch.func", "torch.linalg",        "torch.autograd", "os.path"};
    Sugared s;
    if (submodules.count(path)) {
      s.kind = Sugared::Kind::Module;
      s.name = path;
      return s;
    }
    if (m == "torch") {
      if (auto dt = torch_dtype(attr)) {
        s.value = constant(IValue(*dt), Type::dtype(), a.range);
        return s;
      }
      if (is_unsupported_dtype(attr)) {
        compile_error(a.range,
                      "torch." + attr +
                          " is not supported: TSL's dtypes are float32, float64, int64 and bool");
      }
      if (attr == "Tensor") {
        s.kind = Sugared::Kind::TypingName;
        s.name = "Tensor";
        return s;
      }
      if (is_builtin_of(m, attr)) {
        s.kind = Sugared::Kind::Builtin;
        s.name = attr;
        s.namespace_flag = opflags::TORCH;
        return s;
      }
    } else if (m == "torch.nn.functional") {
      if (is_builtin_of(m, attr)) {
        s.kind = Sugared::Kind::Builtin;
        s.name = attr;
        s.namespace_flag = opflags::NNF;
        return s;
      }
      if (FunctionDecl* fn = unit_.functional_in_tsl(attr, a.range)) return user_function(fn, path);
    } else if (m == "math") {
      static const std::map<std::string, double> constants = {
          {"pi", 3.141592653589793},
          {"e", 2.718281828459045},
          {"tau", 6.283185307179586},
          {"inf", std::numeric_limits<double>::infinity()},
          {"nan", std::numeric_limits<double>::quiet_NaN()}};
      auto c = constants.find(attr);
      if (c != constants.end()) {
        s.value = constant(IValue(c->second), Type::float_(), a.range);
        return s;
      }
      if (!ops_named(attr, opflags::MATH).empty()) {
        s.kind = Sugared::Kind::Builtin;
        s.name = attr;
        s.namespace_flag = opflags::MATH;
        return s;
      }
    } else if (m == "os.path" && attr == "exists") {
      s.kind = Sugared::Kind::Builtin;
      s.name = "os.path.exists";
      return s;
    } else if (m == "time" && (attr == "perf_counter" || attr == "time")) {
      s.kind = Sugared::Kind::Builtin;
      s.name = "time." + attr;
      return s;
    } else if (m == "torch.cuda" && attr == "is_available") {
      s.kind = Sugared::Kind::Builtin;
      s.name = "cuda_is_available";
      s.namespace_flag = opflags::GLOBAL;
      return s;
    } else if ((m == "torch.jit" && attr == "script") || (m == "functorch" || m == "torch.func")) {
      s.kind = Sugared::Kind::Builtin;
      s.name = attr;
      s.namespace_flag = opflags::GLOBAL;
      return s;
    } else if (m == "typing") {
      s.kind = Sugared::Kind::TypingName;
      s.name = attr;
      return s;
    }
    compile_error(a.attr_range, "module '" + m + "' has no attribute '" + attr + "' in TSL");
  }
  if (base.kind == Sugared::Kind::Value) {
    Sugared s;
    s.value = emit_attribute_value(base.value, a);
    return s;
  }
  compile_error(a.range, "'" + base.name + "' has no attribute '" + attr + "'");
}

Sugared Emitter::emit_sugared(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::Name) return resolve_name(ast::as<ast::Name>(e));
  if (e.kind == ast::ExprKind::Attribute) {
    const auto& a = ast::as<ast::Attribute>(e);
    Sugared base = emit_sugared(*a.value);
    // Methods are resolved by the call; here a bare attribute of a value.
    return sugared_attribute(base, a);
  }
  if (e.kind == ast::ExprKind::Call) {
    // grad(f)(x): the transform is a function known at compile time.
    const auto& c = ast::as<ast::Call>(e);
    // Only names and module attributes (functorch.grad) can be transforms; method
    // calls (x.t().sum()) must not be evaluated twice.
    const ast::Expr* root = c.func.get();
    while (root->kind == ast::ExprKind::Attribute)
      root = ast::as<ast::Attribute>(*root).value.get();
    bool module_path =
        root->kind == ast::ExprKind::Name &&
        (root == c.func.get() || unit_.find_import(qualified(ast::as<ast::Name>(*root).id)));
    if (module_path && !lookup_local(ast::as<ast::Name>(*root).id)) {
      Sugared callee = emit_sugared(*c.func);
      // jvp(f, ...) and vjp(f, ...) are calls of f, not functions.
      std::optional<TransformKind> kind;
      if (callee.kind == Sugared::Kind::Builtin) kind = autodiff::transform_named(callee.name);
      if (kind && *kind != TransformKind::Jvp && *kind != TransformKind::Vjp)
        return emit_transform(*kind, c);
    }
  }
  return sugar_value(emit_expr(e));
}

// A value as a callee: a function value (its type names the declaration) is called
// statically through its type, as a name bound to it is.
Sugared Emitter::sugar_value(Value* v) {
  Sugared s;
  s.value = v;
  const TypePtr& t = v->type();
  if (t->kind() == TypeKind::Function && t->signature() && t->signature()->target) {
    s.kind = Sugared::Kind::UserFunction;
    s.function = static_cast<FunctionDecl*>(const_cast<void*>(t->signature()->target));
    s.name = s.function->name;
  }
  return s;
}

// A builtin used as a value: the function CompilationUnit::builtin_function declares
// for it (Note [Builtins as values]), over the required positional parameters of its
// first overload.
FunctionDecl* Emitter::builtin_value(const Sugared& b, const SourceRange& range) {
  auto refuse = [&](const std::string& why) -> FunctionDecl* {
    compile_error(range, "builtin '" + b.name + "' cannot be used as a value: " + why);
  };
  if (is_transform(b.name)) return refuse("it is a function transform");
  uint32_t space = b.namespace_flag ? b.namespace_flag : opflags::GLOBAL;
  const std::vector<OpId>& ops = ops_named(b.name, space);
  if (ops.empty()) return refuse("it is not an op of the op table");
  const FunctionSchema& schema = schema_of(ops.front());
  std::string params, args;
  for (const Argument& a : schema.arguments) {
    if (a.kwarg_only || a.default_value || a.variadic) break;
    std::string annotation;
    switch (a.type->kind()) {
      case TypeKind::Tensor:
        break;
      case TypeKind::Int:
        annotation = ": int";
        break;
      case TypeKind::Float:
      case TypeKind::Number:
        annotation = ": float";
        break;
      case TypeKind::Bool:
        annotation = ": bool";
        break;
      case TypeKind::Str:
        annotation = ": str";
        break;
      default:
        return refuse("its parameter '" + a.name + "' has type " + a.type->str());
    }
    params += (params.empty() ? "" : ", ") + a.name + annotation;
    args += (args.empty() ? "" : ", ") + a.name;
  }
  std::string prefix = space == opflags::NNF     ? "__tsl_F."
                       : space == opflags::TORCH ? "__tsl_torch."
                       : space == opflags::MATH  ? "__tsl_math."
                                                 : "";
  return unit_.builtin_function(b.name, prefix + b.name, params, args).get();
}

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
    compile_error(c.range, "jvp(): '" + inner->name + "' takes " +
                               std::to_string(inner->param_names.size()) +
                               " argument(s); give a primal for each (or for the first ones, "
                               "the others taking their defaults) and as many tangents");
  }
  std::vector<size_t> all;
  for (size_t i = 0; i < args.size(); ++i) all.push_back(i);
  auto decl = unit_.make_transform(TransformKind::Jvp, inner, all, true, c.range);
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
    compile_error(c.range, "vjp(): '" + inner->name + "' takes " +
                               std::to_string(inner->param_names.size()) +
                               " argument(s); give one primal for each (the ones left out take "
                               "their defaults)");
  }
  std::vector<size_t> all;
  for (size_t i = 0; i < args.size(); ++i) all.push_back(i);
  auto decl = unit_.make_transform(TransformKind::Vjp, inner, all, true, c.range);
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

Value* Emitter::as_value(const Sugared& s, const SourceRange& range) {
  switch (s.kind) {
    case Sugared::Kind::Value:
      return s.value;
    case Sugared::Kind::UserFunction: {
      if (s.value) return s.value;
      std::shared_ptr<FunctionDecl> decl = unit_.function_ptr(s.function);
      TSL_INTERNAL_ASSERT(decl != nullptr, "function value without a declaration");
      return constant(IValue(IntrusivePtr<ObjectImpl>(new FunctionRef(decl))),
                      unit_.function_value_type(*decl), range);
    }
    case Sugared::Kind::Module:
      compile_error(range, "module '" + s.name + "' is not a value");
    case Sugared::Kind::Builtin: {
      std::shared_ptr<FunctionDecl> decl = unit_.function_ptr(builtin_value(s, range));
      return constant(IValue(IntrusivePtr<ObjectImpl>(new FunctionRef(decl))),
                      unit_.function_value_type(*decl), range);
    }
    case Sugared::Kind::TypingName:
      compile_error(range, "type '" + s.name + "' is not a value");
  }
  compile_error(range, "not a value");
}

namespace {

// A Tensor's attributes: the op reading each and its result type.
struct TensorAttribute {
  const char* name;
  OpId op;
  TypePtr (*type)();
  bool autograd;  // read from the tensor itself inside `with no_grad():`
};
const TensorAttribute kTensorAttributes[] = {
    {"shape", OpId::size, [] { return Type::list(Type::int_()); }, false},
    {"ndim", OpId::dim, &Type::int_, false},
    {"dtype", OpId::dtype, &Type::dtype, false},
    {"device", OpId::device, &Type::device, false},
    {"T", OpId::t, [] { return Type::tensor(); }, false},
    {"mT", OpId::t, [] { return Type::tensor(); }, false},
    {"data", OpId::detach, [] { return Type::tensor(); }, false},
    {"requires_grad", OpId::requires_grad_attr, &Type::bool_, true},
    {"grad", OpId::grad_attr, [] { return Type::optional(Type::tensor()); }, true},
    {"is_leaf", OpId::is_leaf_attr, &Type::bool_, true},
    {"grad_fn", OpId::grad_fn_attr, [] { return Type::optional(Type::node()); }, true},
};

// Tensor methods that are not op-table rows: emit_method_call handles each by name.
const char* const kTensorMethodsOutsideTheTable[] = {"float",   "double",   "long",    "bool",
                                                     "cuda",    "cpu",      "item",    "tolist",
                                                     "addcmul", "addcmul_", "addcdiv", "addcdiv_"};
// A tape node's (`x.grad_fn`): attributes and methods.
const char* const kNodeMembers[] = {"name", "next_functions"};
// The methods of list and str (dict's: kDictMethods in emit_dict.cpp).
const char* const kListMethods[] = {"append", "sort"};
const char* const kStrMethods[] = {"format"};

// A tape node, or an Optional one: `x.grad_fn` is None for a leaf, and reading a
// member of None is Python's AttributeError at run time (the kernels raise it).
bool is_node(const TypePtr& t) {
  return t->kind() == TypeKind::Node ||
         (t->kind() == TypeKind::Optional && t->element()->kind() == TypeKind::Node);
}

template <size_t N>
std::string listing(const char* const (&names)[N]) {
  std::string s;
  for (const char* n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace

std::vector<std::string> member_names(const Type& t) {
  std::vector<std::string> out;
  if (t.is_tensor()) {
    for (const TensorAttribute& a : kTensorAttributes) out.push_back(a.name);
    for (const char* m : kTensorMethodsOutsideTheTable) out.push_back(m);
    for (int i = 0; i < kNumOps; ++i) {
      OpId op = static_cast<OpId>(i);
      const OpInfo& info = op_info(op);
      if (info.has(opflags::PRIM) || !info.has(opflags::METHOD)) continue;
      const FunctionSchema& s = schema_of(op);
      if (!s.arguments.empty() && s.arguments[0].type->is_tensor() && !s.base_name.empty() &&
          s.base_name[0] != '_')
        out.push_back(s.base_name);
    }
  } else if (t.kind() == TypeKind::List) {
    out.assign(std::begin(kListMethods), std::end(kListMethods));
  } else if (t.kind() == TypeKind::Dict) {
    out = dict_method_names();
  } else if (t.kind() == TypeKind::Str) {
    out.assign(std::begin(kStrMethods), std::end(kStrMethods));
  } else if (t.kind() == TypeKind::Node) {
    out.assign(std::begin(kNodeMembers), std::end(kNodeMembers));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Value* Emitter::emit_attribute_value(Value* v, const ast::Attribute& a) {
  const std::string& attr = a.attr;
  const SourceRange& r = a.range;
  // `w.grad.shape`: a gradient read is a Tensor here, as for its methods.
  v = unwrap_grad_read(graph_, v, r);
  if (v->type()->is_tensor()) {
    for (const TensorAttribute& ta : kTensorAttributes) {
      if (attr != ta.name) continue;
      // The autograd attributes of a tensor read inside `with no_grad():` are those of
      // the tensor, not of the detached alias the block computes with (`param.grad` in
      // an SGD step).
      if (ta.autograd && no_grad_reads_.count(v)) v = v->node()->input(0);
      return graph_.insert_op(ta.op, {v}, ta.type(), r);
    }
    compile_error(a.attr_range, "'Tensor' has no attribute '" + attr + "'");
  }
  if (is_node(v->type())) {
    if (attr == "next_functions") {
      TypePtr edge = Type::tuple({Type::optional(Type::node()), Type::int_()});
      return graph_.insert_op(OpId::next_functions_attr, {v}, Type::list(edge), r);
    }
    compile_error(a.attr_range, "'Node' has no attribute '" + attr + "' in TSL (it has " +
                                    listing(kNodeMembers) + ")");
  }
  compile_error(a.attr_range, "'" + v->type()->str() + "' has no attribute '" + attr + "'");
}

// ---- Expressions --------------------------------------------------------------------------------

Value* Emitter::emit_expr(const ast::Expr& e, const TypePtr& hint) {
  switch (e.kind) {
    case ast::ExprKind::Name: {
      return read_under_no_grad(as_value(resolve_name(ast::as<ast::Name>(e)), e.range), e.range);
    }
    case ast::ExprKind::Int:
      return constant(IValue(ast::as<ast::IntLit>(e).value), Type::int_(), e.range);
    case ast::ExprKind::Float:
      return constant(IValue(ast::as<ast::FloatLit>(e).value), Type::float_(), e.range);
    case ast::ExprKind::Str:
      return constant(IValue(ast::as<ast::StrLit>(e).value), Type::str_(), e.range);
    case ast::ExprKind::Bool:
      return constant(IValue(ast::as<ast::BoolLit>(e).value), Type::bool_(), e.range);
    case ast::ExprKind::None:
      return none(e.range);
    case ast::ExprKind::FString:
      return emit_fstring(ast::as<ast::FString>(e));
    case ast::ExprKind::List:
      return emit_list(ast::as<ast::ListExpr>(e), hint);
    case ast::ExprKind::Dict:
      return emit_dict(ast::as<ast::DictExpr>(e), hint);
    case ast::ExprKind::Tuple: {
      const auto& t = ast::as<ast::TupleExpr>(e);
      std::vector<Value*> elems;
      std::vector<TypePtr> types;
      for (size_t i = 0; i < t.elts.size(); ++i) {
        TypePtr h = hint && hint->kind() == TypeKind::Tuple && i < hint->contained().size()
                        ? hint->contained()[i]
                        : nullptr;
        elems.push_back(emit_expr(*t.elts[i], h));
        types.push_back(elems.back()->type());
      }
      Node* n = graph_.insert(graph_.create(OpId::TupleConstruct, elems, 1));
      n->set_range(e.range);
      return n->output()->set_type(Type::tuple(types));
    }
    case ast::ExprKind::ListComp:
      return emit_listcomp(ast::as<ast::ListComp>(e));
    case ast::ExprKind::DictComp:
      return emit_dictcomp(ast::as<ast::DictComp>(e));
    case ast::ExprKind::Unary:
      return emit_unary(ast::as<ast::Unary>(e));
    case ast::ExprKind::Binary: {
      const auto& b = ast::as<ast::Binary>(e);
      Value* lhs = emit_expr(*b.lhs);
      Value* rhs = emit_expr(*b.rhs);
      return emit_binary(b.op, lhs, rhs, e.range);
    }
    case ast::ExprKind::BoolOp:
      return emit_boolop(ast::as<ast::BoolOp>(e));
    case ast::ExprKind::Compare:
      return emit_compare(ast::as<ast::Compare>(e));
    case ast::ExprKind::IfExp:
      return emit_ifexp(ast::as<ast::IfExp>(e));
    case ast::ExprKind::Call: {
      const auto& c = ast::as<ast::Call>(e);
      // dict() takes its type from where it goes (`d: Dict[str, int] = dict()`).
      if (c.func->kind == ast::ExprKind::Name && ast::as<ast::Name>(*c.func).id == "dict" &&
          resolve_name(ast::as<ast::Name>(*c.func)).kind == Sugared::Kind::Builtin)
        return emit_dict_call(c, hint);
      return emit_call(c);
    }
    case ast::ExprKind::Attribute:
      return as_value(emit_sugared(e), e.range);
    case ast::ExprKind::Subscript:
      return emit_subscript(ast::as<ast::Subscript>(e));
    case ast::ExprKind::Slice:
      compile_error(e.range, "a slice is only allowed inside [...]");
    case ast::ExprKind::Ellipsis:
      compile_error(e.range, "'...' is only allowed inside [...]");
    case ast::ExprKind::Starred:
      compile_error(e.range, "starred expressions are not supported here");
  }
  compile_error(e.range, "unsupported expression");
}

Value* Emitter::emit_list(const ast::ListExpr& l, const TypePtr& hint) {
  std::vector<Value*> elems;
  TypePtr elem_hint = hint && hint->kind() == TypeKind::List ? hint->element() : nullptr;
  for (const auto& x : l.elts) elems.push_back(emit_expr(*x, elem_hint));
  TypePtr elem;
  if (elems.empty()) {
    elem = elem_hint ? elem_hint : Type::tensor();
  } else {
    elem = strip_refinements(elems[0]->type());
    for (Value* v : elems) {
      TypePtr t = strip_refinements(v->type());
      if (t->equals(*elem)) continue;
      if (t->is_number() && elem->is_number() &&
          (t->kind() == TypeKind::Float || elem->kind() == TypeKind::Float) &&
          t->kind() != TypeKind::Bool && elem->kind() != TypeKind::Bool) {
        elem = Type::float_();
        continue;
      }
      TypePtr u = unify_types(elem, t);
      if (!u && elem->kind() == TypeKind::Function && t->kind() == TypeKind::Function) {
        // Each function value has a type of its own (calls are resolved when compiling).
        compile_error(l.range, "a list cannot hold two different functions (" +
                                   elem->signature()->name + " and " + t->signature()->name +
                                   "): TSL resolves the call of a function value when it "
                                   "compiles; call each function by name");
      }
      if (!u) {
        compile_error(l.range, "list elements must have one type, but this list mixes " +
                                   elem->str() + " and " + t->str());
      }
      elem = u;
    }
    if (elem_hint && is_subtype(elem, elem_hint)) elem = elem_hint;
    for (Value*& v : elems) {
      if (!v->type()->equals(*elem)) v = convert_to(v, elem, l.range, "list element");
    }
  }
  Node* n = graph_.insert(graph_.create(OpId::ListConstruct, elems, 1));
  n->set_range(l.range);
  return n->output()->set_type(Type::list(elem));
}

Value* Emitter::emit_fstring(const ast::FString& f) {
  std::string templ;
  std::vector<Value*> args;
  for (const auto& part : f.parts) {
    if (!part.expr) {
      for (char c : part.literal) {
        if (c == '{' || c == '}') templ += c;
        templ += c;
      }
      continue;
    }
    Value* v = emit_expr(*part.expr);
    if (part.conversion == "s")
      v = graph_.insert_op(OpId::Str, {v}, Type::str_(), part.expr->range);
    if (part.conversion == "r") {
      if (v->type()->kind() == TypeKind::Str) {
        compile_error(part.expr->range, "!r on strings is not supported in f-strings");
      }
      v = graph_.insert_op(OpId::Str, {v}, Type::str_(), part.expr->range);
    }
    args.push_back(v);
    templ += part.format_spec.empty() ? "{}" : "{:" + part.format_spec + "}";
  }
  std::vector<Value*> inputs = {constant(IValue(templ), Type::str_(), f.range)};
  inputs.insert(inputs.end(), args.begin(), args.end());
  return graph_.insert_op(OpId::format, inputs, Type::str_(), f.range);
}

Value* Emitter::emit_unary(const ast::Unary& u) {
  Value* v = emit_expr(*u.operand);
  TypeKind k = v->type()->kind();
  switch (u.op) {
    case ast::UnaryOp::Pos:
      if (k == TypeKind::Tensor || k == TypeKind::Int || k == TypeKind::Float) return v;
      break;
    case ast::UnaryOp::Neg:
      if (k == TypeKind::Tensor) return graph_.insert_op(OpId::neg, {v}, Type::tensor(), u.range);
      if (k == TypeKind::Bool)
        v = graph_.insert_op(OpId::Int_bool, {v}, Type::int_(), u.range), k = TypeKind::Int;
      if (k == TypeKind::Int) return graph_.insert_op(OpId::neg_int, {v}, Type::int_(), u.range);
      if (k == TypeKind::Float)
        return graph_.insert_op(OpId::neg_float, {v}, Type::float_(), u.range);
      break;
    case ast::UnaryOp::Invert:
      if (k == TypeKind::Tensor)
        return graph_.insert_op(OpId::bitwise_not, {v}, Type::tensor(), u.range);
      break;
    case ast::UnaryOp::Not:
      return graph_.insert_op(OpId::not_bool,
                              {to_bool(v, u.operand->range, "the operand of 'not'")}, Type::bool_(),
                              u.range);
  }
  const char* sym = u.op == ast::UnaryOp::Neg ? "-" : u.op == ast::UnaryOp::Pos ? "+" : "~";
  compile_error(u.range,
                std::string("bad operand type for unary ") + sym + ": " + v->type()->str());
}

Value* Emitter::emit_binary(ast::BinOp op, Value* lhs, Value* rhs, const SourceRange& range) {
  lhs = unwrap_grad_read(graph_, lhs, range);
  rhs = unwrap_grad_read(graph_, rhs, range);
  TypePtr lt = lhs->type(), rt = rhs->type();
  auto fail = [&]() -> Value* {
    compile_error(range, std::string("unsupported operand types for ") + ast::binop_symbol(op) +
                             ": " + lt->str() + " and " + rt->str());
  };
  bool tensors = lt->is_tensor() || rt->is_tensor();
  if (tensors) {
    if (!(lt->is_tensor() || lt->is_number()) || !(rt->is_tensor() || rt->is_number()))
      return fail();
    OpId id;
    switch (op) {
      case ast::BinOp::Add:
        id = OpId::add;
        break;
      case ast::BinOp::Sub:
        id = OpId::sub;
        break;
      case ast::BinOp::Mul:
        id = OpId::mul;
        break;
      case ast::BinOp::Div:
        id = OpId::div;
        break;
      case ast::BinOp::FloorDiv:
        id = OpId::floor_divide;
        break;
      case ast::BinOp::Mod:
        id = OpId::remainder;
        break;
      case ast::BinOp::Pow:
        id = OpId::pow;
        break;
      case ast::BinOp::MatMul:
        if (!lt->is_tensor() || !rt->is_tensor()) return fail();
        id = OpId::matmul;
        break;
      case ast::BinOp::BitAnd:
        id = OpId::bitwise_and;
        break;
      case ast::BinOp::BitOr:
        id = OpId::bitwise_or;
        break;
      case ast::BinOp::BitXor:
        id = OpId::bitwise_xor;
        break;
      default:
        return fail();
    }
    return emit_ops({id}, {{range, "", lhs}, {range, "", rhs}}, range, ast::binop_symbol(op));
  }
  TypeKind lk = lt->kind(), rk = rt->kind();
  if (lk == TypeKind::Str && rk == TypeKind::Str && op == ast::BinOp::Add) {
    return graph_.insert_op(OpId::add_str, {lhs, rhs}, Type::str_(), range);
  }
  if (lk == TypeKind::Str && op == ast::BinOp::Mod) {
    return graph_.insert_op(OpId::mod_str, {lhs, rhs}, Type::str_(), range);
  }
  if (lk == TypeKind::List && rk == TypeKind::List && op == ast::BinOp::Add) {
    if (!lt->element()->equals(*rt->element())) return fail();
    return graph_.insert_op(OpId::add_list, {lhs, rhs}, lt, range);
  }
  if (!lt->is_number() || !rt->is_number()) return fail();
  // Python numbers: bool acts as int; int with float computes in float.
  if (lk == TypeKind::Bool)
    lhs = graph_.insert_op(OpId::Int_bool, {lhs}, Type::int_(), range), lk = TypeKind::Int;
  if (rk == TypeKind::Bool)
    rhs = graph_.insert_op(OpId::Int_bool, {rhs}, Type::int_(), range), rk = TypeKind::Int;
  // int ** int is an int, but a negative constant exponent (`2 ** -2`) makes it a
  // float as in Python (the exponent's sign decides the type, so it must be known).
  auto negative_constant = [](const Value* v) {
    const Node* n = v->node();
    if (n->op() == OpId::Constant)
      return n->attr("value").is_int() && n->attr("value").to_int() < 0;
    return n->op() == OpId::neg_int && n->input(0)->node()->op() == OpId::Constant &&
           n->input(0)->node()->attr("value").to_int() > 0;
  };
  bool float_power =
      op == ast::BinOp::Pow && lk == TypeKind::Int && rk == TypeKind::Int && negative_constant(rhs);
  bool as_float =
      lk == TypeKind::Float || rk == TypeKind::Float || op == ast::BinOp::Div || float_power;
  if (as_float) {
    if (lk == TypeKind::Int) lhs = graph_.insert_op(OpId::Float_int, {lhs}, Type::float_(), range);
    if (rk == TypeKind::Int) rhs = graph_.insert_op(OpId::Float_int, {rhs}, Type::float_(), range);
  }
  OpId id;
  switch (op) {
    case ast::BinOp::Add:
      id = as_float ? OpId::add_float : OpId::add_int;
      break;
    case ast::BinOp::Sub:
      id = as_float ? OpId::sub_float : OpId::sub_int;
      break;
    case ast::BinOp::Mul:
      id = as_float ? OpId::mul_float : OpId::mul_int;
      break;
    case ast::BinOp::Div:
      id = OpId::div_float;
      break;
    case ast::BinOp::FloorDiv:
      id = as_float ? OpId::floor_divide_float : OpId::floor_divide_int;
      break;
    case ast::BinOp::Mod:
      id = as_float ? OpId::remainder_float : OpId::remainder_int;
      break;
    case ast::BinOp::Pow:
      id = as_float ? OpId::pow_float : OpId::pow_int;
      break;
    default:
      return fail();
  }
  return graph_.insert_op(id, {lhs, rhs}, as_float ? Type::float_() : Type::int_(), range);
}

Value* Emitter::emit_compare_pair(ast::CmpOp op, Value* lhs, Value* rhs, const SourceRange& range) {
  TypePtr lt = lhs->type(), rt = rhs->type();
  if (op == ast::CmpOp::Is || op == ast::CmpOp::IsNot) {
    bool negate = op == ast::CmpOp::IsNot;
    bool l_none = lt->kind() == TypeKind::None, r_none = rt->kind() == TypeKind::None;
    // Optional and Any values (`x.grad_fn`) may be None: decided at run time.
    bool l_opt = lt->kind() == TypeKind::Optional || lt->kind() == TypeKind::Any;
    bool r_opt = rt->kind() == TypeKind::Optional || rt->kind() == TypeKind::Any;
    if ((l_none || r_none) && !(l_opt || r_opt)) {
      // Decided by the types alone, as TorchScript does.
      bool same = l_none && r_none;
      return constant(IValue(same != negate), Type::bool_(), range);
    }
    return graph_.insert_op(negate ? OpId::is_not : OpId::is, {lhs, rhs}, Type::bool_(), range);
  }
  if (op == ast::CmpOp::In || op == ast::CmpOp::NotIn) {
    bool keys_view = rhs->node() && dict_op_of(rhs->node()->op()) == DictOp::Keys;
    if (rt->kind() == TypeKind::Dict || keys_view)
      return emit_dict_contains(lhs, rhs, op == ast::CmpOp::NotIn, range);
    // `item in seq`: lists and tuples by element equality, strings by substring.
    Value* found = nullptr;
    TypeKind sk = rt->kind();
    if (sk == TypeKind::List || sk == TypeKind::Tuple) {
      found = graph_.insert_op(OpId::contains_seq, {rhs, lhs}, Type::bool_(), range);
    } else if (sk == TypeKind::Str && lt->kind() == TypeKind::Str) {
      found = graph_.insert_op(OpId::contains_str, {rhs, lhs}, Type::bool_(), range);
    } else {
      compile_error(
          range, "the 'in' operator is not supported between " + lt->str() + " and " + rt->str());
    }
    if (op == ast::CmpOp::In) return found;
    return graph_.insert_op(OpId::not_bool, {found}, Type::bool_(), range);
  }
  const char* base = nullptr;
  switch (op) {
    case ast::CmpOp::Eq:
      base = "eq";
      break;
    case ast::CmpOp::Ne:
      base = "ne";
      break;
    case ast::CmpOp::Lt:
      base = "lt";
      break;
    case ast::CmpOp::Le:
      base = "le";
      break;
    case ast::CmpOp::Gt:
      base = "gt";
      break;
    case ast::CmpOp::Ge:
      base = "ge";
      break;
    default:
      break;
  }
  if (lt->is_tensor() || rt->is_tensor()) {
    OpId id = *find_op(base);
    return emit_ops({id}, {{range, "", lhs}, {range, "", rhs}}, range, ast::cmpop_symbol(op));
  }
  bool eq_ne = op == ast::CmpOp::Eq || op == ast::CmpOp::Ne;
  auto unsupported = [&]() -> Value* {
    compile_error(range, std::string("'") + ast::cmpop_symbol(op) + "' is not supported between " +
                             lt->str() + " and " + rt->str());
  };
  TypeKind lk = lt->kind(), rk = rt->kind();
  if (lk == TypeKind::Str && rk == TypeKind::Str && eq_ne) {
    return graph_.insert_op(op == ast::CmpOp::Eq ? OpId::eq_str : OpId::ne_str, {lhs, rhs},
                            Type::bool_(), range);
  }
  if (lk == TypeKind::DType && rk == TypeKind::DType && eq_ne) {
    return graph_.insert_op(op == ast::CmpOp::Eq ? OpId::eq_dtype : OpId::ne_dtype, {lhs, rhs},
                            Type::bool_(), range);
  }
  if (lk == TypeKind::Device && rk == TypeKind::Device && eq_ne) {
    return graph_.insert_op(op == ast::CmpOp::Eq ? OpId::eq_device : OpId::ne_device, {lhs, rhs},
                            Type::bool_(), range);
  }
  if (lk == TypeKind::Dict && eq_ne) return emit_dict_equal(lhs, rhs, op == ast::CmpOp::Ne, range);
  bool l_seq = lk == TypeKind::List || lk == TypeKind::Tuple;
  bool r_seq = rk == TypeKind::List || rk == TypeKind::Tuple;
  if (l_seq && r_seq && eq_ne) {
    return graph_.insert_op(op == ast::CmpOp::Eq ? OpId::eq_seq : OpId::ne_seq, {lhs, rhs},
                            Type::bool_(), range);
  }
  if (lk == TypeKind::Bool && rk == TypeKind::Bool && eq_ne) {
    return graph_.insert_op(op == ast::CmpOp::Eq ? OpId::eq_bool : OpId::ne_bool, {lhs, rhs},
                            Type::bool_(), range);
  }
  if (!lt->is_number() || !rt->is_number()) return unsupported();
  if (lk == TypeKind::Bool)
    lhs = graph_.insert_op(OpId::Int_bool, {lhs}, Type::int_(), range), lk = TypeKind::Int;
  if (rk == TypeKind::Bool)
    rhs = graph_.insert_op(OpId::Int_bool, {rhs}, Type::int_(), range), rk = TypeKind::Int;
  bool as_float = lk == TypeKind::Float || rk == TypeKind::Float;
  if (as_float) {
    if (lk == TypeKind::Int) lhs = graph_.insert_op(OpId::Float_int, {lhs}, Type::float_(), range);
    if (rk == TypeKind::Int) rhs = graph_.insert_op(OpId::Float_int, {rhs}, Type::float_(), range);
  }
  OpId id = *find_op(std::string(base) + (as_float ? ".float" : ".int"));
  return graph_.insert_op(id, {lhs, rhs}, Type::bool_(), range);
}

Value* Emitter::emit_compare(const ast::Compare& c) {
  // a < b < c is (a < b) and (b < c), with b evaluated once and c only if needed.
  Value* lhs = emit_expr(*c.operands[0]);
  std::function<Value*(size_t, Value*)> chain = [&](size_t i, Value* left) -> Value* {
    Value* right = emit_expr(*c.operands[i + 1]);
    Value* result = emit_compare_pair(c.ops[i], left, right, c.range);
    if (i + 1 == c.ops.size()) return result;
    if (!result->type()->equals(*Type::bool_())) {
      compile_error(c.range,
                    "chained comparisons need bool results; compare tensors one pair at a time");
    }
    Node* n = graph_.insert(graph_.create(OpId::If, {result}, 1));
    n->set_range(c.range);
    Block* t = n->add_block();
    Block* e = n->add_block();
    {
      InsertPointGuard g(graph_, t);
      t->add_return(chain(i + 1, right));
    }
    {
      InsertPointGuard g(graph_, e);
      e->add_return(constant(IValue(false), Type::bool_(), c.range));
    }
    return n->output()->set_type(Type::bool_());
  };
  return chain(0, lhs);
}

Value* Emitter::emit_boolop(const ast::BoolOp& b) {
  const char* name = b.op == ast::BoolOpKind::And ? "and" : "or";
  Value* lhs = emit_expr(*b.lhs);
  if (lhs->type()->kind() != TypeKind::Bool) {
    compile_error(b.lhs->range, std::string("'") + name + "' takes bool operands, not " +
                                    lhs->type()->str() +
                                    (lhs->type()->is_tensor() ? " (for tensors use & or |)" : ""));
  }
  Node* n = graph_.insert(graph_.create(OpId::If, {lhs}, 1));
  n->set_range(b.range);
  Block* t = n->add_block();
  Block* e = n->add_block();
  Block* evaluate = b.op == ast::BoolOpKind::And ? t : e;
  Block* shortcut = b.op == ast::BoolOpKind::And ? e : t;
  {
    // `x is not None and f(x)`: the right operand sees what the left one refines.
    Value* rhs = emit_refined(*b.rhs, evaluate, refinements_of(*b.lhs),
                              b.op == ast::BoolOpKind::And, b.lhs->range);
    InsertPointGuard g(graph_, evaluate);
    if (rhs->type()->kind() != TypeKind::Bool) {
      compile_error(b.rhs->range,
                    std::string("'") + name + "' takes bool operands, not " + rhs->type()->str() +
                        (rhs->type()->is_tensor() ? " (for tensors use & or |)" : ""));
    }
    evaluate->add_return(rhs);
  }
  {
    InsertPointGuard g(graph_, shortcut);
    shortcut->add_return(constant(IValue(b.op == ast::BoolOpKind::Or), Type::bool_(), b.range));
  }
  return n->output()->set_type(Type::bool_());
}

Value* Emitter::emit_ifexp(const ast::IfExp& e) {
  Value* cond = to_bool(emit_expr(*e.cond), e.cond->range, "a conditional expression's condition");
  Node* n = graph_.insert(graph_.create(OpId::If, {cond}, 1));
  n->set_range(e.range);
  Block* t = n->add_block();
  Block* f = n->add_block();
  std::vector<Refinement> refinements = refinements_of(*e.cond);
  Value* tv = emit_refined(*e.then_expr, t, refinements, true, e.cond->range);
  Value* fv = emit_refined(*e.else_expr, f, refinements, false, e.cond->range);
  TypePtr type = unify_types(tv->type(), fv->type());
  if (!type && tv->type()->is_number() && fv->type()->is_number()) type = Type::float_();
  if (!type) {
    compile_error(e.range, "the two results of a conditional expression must have one type, not " +
                               tv->type()->str() + " and " + fv->type()->str());
  }
  {
    InsertPointGuard g(graph_, t);
    t->add_return(convert_to(tv, type, e.then_expr->range, "result"));
  }
  {
    InsertPointGuard g(graph_, f);
    f->add_return(convert_to(fv, type, e.else_expr->range, "result"));
  }
  return n->output()->set_type(type);
}

// ---- Calls --------------------------------------------------------------------------------------

std::vector<CallArg> Emitter::emit_call_args(const ast::Call& c) {
  std::vector<CallArg> args;
  for (const auto& a : c.args) {
    if (a->kind == ast::ExprKind::Starred) {
      compile_error(a->range, "unpacking arguments with * is not supported");
    }
    args.push_back({a->range, "", emit_expr(*a)});
  }
  for (const auto& k : c.keywords) args.push_back({k.range, k.name, emit_expr(*k.value)});
  return args;
}

Value* Emitter::emit_ops(const std::vector<OpId>& candidates, const std::vector<CallArg>& args,
                         const SourceRange& range, const std::string& display) {
  MatchedOp m = match_and_emit(graph_, candidates, args, range, display);
  Node* n = graph_.insert(graph_.create(m.op, m.inputs, m.result_types.size()));
  n->set_range(range);
  for (size_t i = 0; i < m.result_types.size(); ++i) n->output(i)->set_type(m.result_types[i]);
  if (m.result_types.empty()) return none(range);
  if (m.result_types.size() == 1) return n->output();
  Node* tup = graph_.insert(graph_.create(OpId::TupleConstruct, n->outputs(), 1));
  tup->set_range(range);
  return tup->output()->set_type(Type::tuple(m.result_types));
}

Value* Emitter::emit_call(const ast::Call& c) {
  // Methods: x.relu(), xs.append(v), "{}".format(x).
  if (c.func->kind == ast::ExprKind::Attribute) {
    const auto& a = ast::as<ast::Attribute>(*c.func);
    Sugared base = emit_sugared(*a.value);
    if (base.kind == Sugared::Kind::Value) {
      return emit_method_call(base.value, a.attr, emit_call_args(c), c);
    }
    Sugared callee = sugared_attribute(base, a);
    // functorch.vjp(f, x), torch.func.grad(f), nn.linear(x, w) (a module's function)
    if (callee.kind == Sugared::Kind::Builtin && !is_transform(callee.name))
      return emit_builtin_call(callee, emit_call_args(c), c);
    return emit_sugared_call(callee, c);
  }
  return emit_sugared_call(emit_sugared(*c.func), c);
}

Value* Emitter::emit_sugared_call(const Sugared& callee, const ast::Call& c) {
  if (callee.kind == Sugared::Kind::Builtin && is_transform(callee.name))
    return emit_transform_call(callee.name, c);
  switch (callee.kind) {
    case Sugared::Kind::UserFunction:
      if (callee.function->transform && callee.function->transform->kind == TransformKind::VjpFn) {
        return emit_closure_call(callee, emit_call_args(c), c.range);
      }
      return emit_user_call(*callee.function, emit_call_args(c), c.range);
    case Sugared::Kind::Builtin:
      return emit_builtin_call(callee, emit_call_args(c), c);
    case Sugared::Kind::Value:
      compile_error(c.func->range, "'" + callee.value->type()->str() + "' object is not callable");
    case Sugared::Kind::Module:
      compile_error(c.func->range, "module '" + callee.name + "' is not callable");
    case Sugared::Kind::TypingName:
      compile_error(c.func->range, "type '" + callee.name + "' is not callable");
  }
  compile_error(c.range, "cannot call this");
}

Value* Emitter::emit_transform_call(const std::string& name, const ast::Call& c) {
  if (name == "graph") return emit_graph_of(c);
  TransformKind kind = *autodiff::transform_named(name);
  if (kind == TransformKind::Jvp) return emit_jvp_call(c);
  if (kind == TransformKind::Vjp) return emit_vjp_call(c);
  return as_value(emit_transform(kind, c), c.range);
}

Value* Emitter::emit_user_call(FunctionDecl& decl, const std::vector<CallArg>& args,
                               const SourceRange& range) {
  if (decl.transform && decl.transform->kind == TransformKind::Vmap)
    check_vmap_call(decl, args, range);
  size_t n = decl.param_names.size();
  std::vector<Value*> inputs(n, nullptr);
  std::vector<SourceRange> ranges(n);
  size_t positional = 0;
  for (const CallArg& a : args) {
    size_t i;
    if (a.name.empty()) {
      i = positional++;
      if (i >= n) {
        compile_error(range, decl.name + "() takes " + std::to_string(n) + " argument" +
                                 (n == 1 ? "" : "s") + " but " + std::to_string(i + 1) +
                                 " or more were given");
      }
    } else {
      auto it = std::find(decl.param_names.begin(), decl.param_names.end(), a.name);
      if (it == decl.param_names.end()) {
        compile_error(a.range,
                      decl.name + "() got an unexpected keyword argument '" + a.name + "'");
      }
      i = static_cast<size_t>(it - decl.param_names.begin());
      if (inputs[i])
        compile_error(a.range, decl.name + "() got multiple values for argument '" + a.name + "'");
    }
    Value* arg = a.value;
    int repeat = i < decl.broadcast_lengths.size() ? decl.broadcast_lengths[i] : 0;
    TypePtr list_type = decl.param_types[i];
    if (list_type->kind() == TypeKind::Optional) list_type = list_type->element();
    if (repeat > 0 && arg->type()->is_number() && list_type->kind() == TypeKind::List) {
      // BroadcastingListN[T]: one T stands for N copies (kernel_size=3 is [3, 3]).
      TypePtr elem = list_type->element();
      Value* one = convert_to(arg, elem, a.range, "argument");
      std::vector<Value*> copies(static_cast<size_t>(repeat), one);
      Node* list = graph_.insert(graph_.create(OpId::ListConstruct, copies, 1));
      list->set_range(a.range);
      arg = list->output()->set_type(Type::list(elem));
    }
    TypePtr var;
    Conversion conv = conversion_for(arg->type(), decl.param_types[i], var, false, arg);
    if (conv == Conversion::Reject) {
      std::string hint;
      if (decl.param_types[i]->is_tensor() && a.value->type()->is_number()) {
        hint = " (parameters without an annotation are Tensors; annotate it, e.g. `" +
               decl.param_names[i] + ": float`, or pass torch.tensor(...))";
      }
      compile_error(a.range, "argument '" + decl.param_names[i] + "' of " + decl.name +
                                 "() must be " + decl.param_types[i]->str() + ", not " +
                                 a.value->type()->str() + hint);
    }
    inputs[i] = apply_conversion(graph_, arg, conv, decl.param_types[i], a.range);
    if (decl.param_types[i]->kind() == TypeKind::Optional &&
        !inputs[i]->type()->equals(*decl.param_types[i])) {
      inputs[i] = convert_to(inputs[i], decl.param_types[i], a.range, "argument");
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (inputs[i]) continue;
    if (!decl.defaults[i]) {
      compile_error(range,
                    decl.name + "() missing required argument '" + decl.param_names[i] + "'");
    }
    const IValue& d = *decl.defaults[i];
    Value* v =
        constant(d, d.is_none() ? Type::none() : type_of_value(d, decl.param_types[i]), range);
    inputs[i] = convert_to(v, decl.param_types[i], range, "default");
  }
  // A transform is specialized for the constant str and None arguments it is called with (Note
  // [Transforms of constant modes] in compile_transform.cpp).
  ConstantArgs constants;
  if (decl.transform) {
    constants.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const Value* v = inputs[i];
      if (v->node()->op() == OpId::to_optional) v = v->node()->input(0);
      if (v->node()->op() != OpId::Constant) continue;
      const IValue& k = v->node()->attr("value");
      if (v->type()->kind() == TypeKind::Str || k.is_none()) constants[i] = k;
    }
  }
  const FunctionDecl::Compiled& compiled = unit_.compile_function(decl, range, constants);
  for (const std::string& g : compiled.hidden_globals) {
    Value* v = nullptr;
    if (mode_ == Mode::TopLevel && g == qualified(unqualified(g))) {
      if (Binding* b = lookup_local(unqualified(g))) v = b->value;
    }
    if (!v) v = global_input(g, range);
    inputs.push_back(v);
  }
  Node* call = graph_.insert(graph_.create(OpId::CallFunction, inputs, 1));
  call->set_range(range);
  call->set_attr("name", IValue(decl.name));
  call->set_attr("fn", IValue(IntrusivePtr<ObjectImpl>(compiled.function.get())));
  return call->output()->set_type(compiled.return_type);
}

Value* Emitter::emit_builtin_call(const Sugared& callee, std::vector<CallArg> args,
                                  const ast::Call& c) {
  const std::string& name = callee.name;
  const SourceRange& range = c.range;
  uint32_t space = callee.namespace_flag;
  if (name == "time.perf_counter" || name == "time.time") {
    if (!args.empty()) compile_error(range, name + "() takes no arguments");
    return graph_.insert_op(name == "time.time" ? OpId::time : OpId::perf_counter, {},
                            Type::float_(), range);
  }
  if ((name == "addcmul" || name == "addcdiv") && space == opflags::TORCH) {
    // torch.addcmul(input, tensor1, tensor2, *, value=1): the method on input.
    if (args.empty() || !args[0].name.empty() || !args[0].value->type()->is_tensor())
      compile_error(range, "torch." + name + "() takes input, tensor1, tensor2 and value=");
    Value* self = args[0].value;
    args.erase(args.begin());
    return emit_addc(self, name, args, range);
  }
  if (name == "os.path.exists") {
    if (args.size() != 1 || !args[0].name.empty() || args[0].value->type()->kind() != TypeKind::Str)
      compile_error(range, "os.path.exists() takes one argument, a str path");
    return graph_.insert_op(OpId::path_exists, {args[0].value}, Type::bool_(), range);
  }
  if (is_transform(name)) {
    compile_error(c.func->range,
                  "'" + name + "' (function transforms) is not available in this build of TSL yet");
  }
  if (name == "no_grad") compile_error(range, "no_grad() is only supported as `with no_grad():`");
  if (name == "script") {
    // torch.jit.script(f) compiles f in PyTorch; every TSL function is compiled, so
    // it returns f itself (a function value).
    if (args.size() != 1 || !args[0].name.empty() ||
        args[0].value->type()->kind() != TypeKind::Function) {
      compile_error(range, "torch.jit.script() takes one function");
    }
    return args[0].value;
  }
  if (space == opflags::GLOBAL) {
    if (name == "range")
      compile_error(range, "range() can only be used as the iterable of a for loop");
    if (name == "enumerate" || name == "zip") {
      compile_error(range, name + "() can only be used as the iterable of a for loop");
    }
    if (name == "list") return emit_list_call(args, range);
    if (name == "sorted" && !args.empty() && args[0].name.empty() &&
        args[0].value->type()->kind() == TypeKind::Dict) {
      // sorted(d) sorts d's keys, as Python iterates a dict.
      Value* d = args[0].value;
      args[0].value =
          graph_.insert_op(dict_op_id(DictOp::Keys, d->type()->key()->kind() == TypeKind::Int), {d},
                           Type::list(d->type()->key()), range);
    }
    if (name == "dict") return emit_dict_call(c, nullptr);
    if (name == "isinstance" || name == "tuple") {
      compile_error(range, name + "() is not supported");
    }
    if (name == "len" && args.size() == 1 && args[0].value->type()->kind() == TypeKind::Tuple) {
      return constant(IValue(static_cast<int64_t>(args[0].value->type()->contained().size())),
                      Type::int_(), range);
    }
    if ((name == "float" || name == "int" || name == "bool" || name == "str") && args.size() == 1 &&
        args[0].name.empty()) {
      TypeKind k = args[0].value->type()->kind();
      if ((name == "float" && k == TypeKind::Float) || (name == "int" && k == TypeKind::Int) ||
          (name == "bool" && k == TypeKind::Bool) || (name == "str" && k == TypeKind::Str)) {
        return args[0].value;
      }
    }
    if ((name == "min" || name == "max") && args.size() > 2) {
      Value* acc = args[0].value;
      for (size_t i = 1; i < args.size(); ++i) {
        acc = emit_ops(ops_named(name, opflags::GLOBAL), {{range, "", acc}, args[i]}, range, name);
      }
      return acc;
    }
  }
  const std::vector<OpId>& candidates = ops_named(builtin_op_name(name), space);
  if (candidates.empty()) {
    compile_error(c.func->range, "'" + name + "' is not a TSL builtin");
  }
  std::string display = space == opflags::TORCH  ? "torch." + name
                        : space == opflags::NNF  ? "F." + name
                        : space == opflags::MATH ? "math." + name
                                                 : name;
  return emit_ops(candidates, args, range, display);
}

Value* Emitter::emit_method_call(Value* self, const std::string& name, std::vector<CallArg> args,
                                 const ast::Call& c) {
  const SourceRange& range = c.range;
  self = unwrap_grad_read(graph_, self, c.func->range);
  TypePtr t = self->type();
  std::vector<CallArg> full = {{c.func->range, "", self}};
  full.insert(full.end(), args.begin(), args.end());
  if (t->is_tensor()) {
    static const std::map<std::string, DType> conversions = {{"float", DType::Float32},
                                                             {"double", DType::Float64},
                                                             {"long", DType::Int64},
                                                             {"bool", DType::Bool}};
    auto conv = conversions.find(name);
    if (conv != conversions.end()) {
      if (!args.empty()) compile_error(range, "Tensor." + name + "() takes no arguments");
      Value* dt = constant(IValue(conv->second), Type::dtype(), range);
      return graph_.insert_op(OpId::to_dtype, {self, dt}, Type::tensor(conv->second), range);
    }
    if (name == "int" || name == "half" || name == "short" || name == "byte" || name == "char") {
      compile_error(range,
                    "Tensor." + name +
                        "() is not supported: TSL's dtypes are float32, float64, int64 and bool");
    }
    if (name == "cuda" || name == "cpu") {
      Value* dev = constant(IValue(Device(name == "cuda" ? DeviceType::CUDA : DeviceType::CPU)),
                            Type::device(), range);
      return graph_.insert_op(OpId::to_device, {self, dev}, Type::tensor(), range);
    }
    if (name == "item" && args.empty()) {
      std::optional<DType> dt = t->tensor_dtype();
      if (dt == DType::Int64) return graph_.insert_op(OpId::item_int, {self}, Type::int_(), range);
      if (dt == DType::Bool) return graph_.insert_op(OpId::item_bool, {self}, Type::bool_(), range);
      return graph_.insert_op(OpId::item_float, {self}, Type::float_(), range);
    }
    if (name == "tolist" && args.empty())
      return graph_.insert_op(OpId::tolist, {self}, Type::any(), range);
    if (name == "retain_grad" || name == "zero_grad") {
      compile_error(c.func->range, "Tensor." + name +
                                       "() is not supported by TSL's eager tape (read the "
                                       "gradient of an intermediate with backward(inputs=[h]))");
    }
    if (name == "addcmul" || name == "addcmul_" || name == "addcdiv" || name == "addcdiv_")
      return emit_addc(self, name, args, range);
    const std::vector<OpId>& candidates = ops_named(name, opflags::METHOD);
    std::vector<OpId> tensor_methods;
    for (OpId op : candidates) {
      const FunctionSchema& s = schema_of(op);
      if (!s.arguments.empty() && s.arguments[0].type->is_tensor()) tensor_methods.push_back(op);
    }
    if (tensor_methods.empty())
      compile_error(c.func->range, "'Tensor' has no method '" + name + "'");
    Value* result = emit_ops(tensor_methods, full, range, "Tensor." + name);
    // Conversions keep the dtype knowledge that item() relies on.
    return result;
  }
  if (t->kind() == TypeKind::List) {
    if (name == "append") return emit_ops({OpId::append_list}, full, range, "list.append");
    if (name == "sort") {
      return emit_ops({OpId::sort_int_list, OpId::sort_float_list, OpId::sort_str_list}, full,
                      range, "list.sort");
    }
    compile_error(c.func->range, "list has no method '" + name + "' in TSL (it has " +
                                     listing(kListMethods) + ")");
  }
  if (t->kind() == TypeKind::Dict) return emit_dict_method(self, name, args, c);
  if (t->kind() == TypeKind::Str) {
    if (name == "format") return emit_ops({OpId::format}, full, range, "str.format");
    compile_error(c.func->range,
                  "str has no method '" + name + "' in TSL (it has " + listing(kStrMethods) + ")");
  }
  if (is_node(t) && name == "name") {
    if (!args.empty()) compile_error(range, "Node.name() takes no arguments");
    return graph_.insert_op(OpId::node_name, {self}, Type::str_(), range);
  }
  compile_error(c.func->range, "'" + t->str() + "' has no method '" + name + "'");
}

// Tensor.addcmul(tensor1, tensor2, *, value=1) = self + value * tensor1 * tensor2 and
// addcdiv = self + value * (tensor1 / tensor2), with their in-place forms (torch.optim's
// Adam uses addcmul_ and addcdiv_): the ops they are made of, in PyTorch's order of
// evaluation ((value * t1) * t2, value * (t1 / t2)), so they differentiate as those.
Value* Emitter::emit_addc(Value* self, const std::string& name, const std::vector<CallArg>& args,
                          const SourceRange& range) {
  const bool div = name.starts_with("addcdiv");
  const std::string base = div ? "addcdiv" : "addcmul";
  Value* t1 = nullptr;
  Value* t2 = nullptr;
  Value* value = nullptr;
  size_t positional = 0;
  for (const CallArg& a : args) {
    Value*& slot = a.name.empty()        ? (positional++ == 0 ? t1 : t2)
                   : a.name == "tensor1" ? t1
                   : a.name == "tensor2" ? t2
                                         : value;
    if ((a.name.empty() && positional > 2) ||
        (!a.name.empty() && a.name != "tensor1" && a.name != "tensor2" && a.name != "value") ||
        slot) {
      compile_error(a.range, "Tensor." + name + "() takes tensor1, tensor2 and value= (" + base +
                                 "(tensor1, tensor2, *, value=1))");
    }
    slot = a.value;
  }
  if (!t1 || !t2) {
    compile_error(range, "Tensor." + name + "() takes tensor1, tensor2 and value= (" + base +
                             "(tensor1, tensor2, *, value=1))");
  }
  if (value && !value->type()->is_number()) {
    compile_error(range,
                  "Tensor." + name + "(): value must be a number, not " + value->type()->str());
  }
  Value* term = div ? emit_binary(ast::BinOp::Div, t1, t2, range) : t1;
  if (value) term = emit_binary(ast::BinOp::Mul, value, term, range);
  if (!div) term = emit_binary(ast::BinOp::Mul, term, t2, range);
  if (name.back() == '_') return emit_inplace(ast::BinOp::Add, self, term, range);
  return emit_binary(ast::BinOp::Add, self, term, range);
}

// ---- Subscripts
// -----------------------------------------------------------------------------------

Value* Emitter::emit_subscript(const ast::Subscript& s) {
  Value* v = emit_expr(*s.value);
  TypePtr t = v->type();
  if (t->is_tensor()) return emit_tensor_index(v, s);
  if (t->kind() == TypeKind::Dict) return emit_dict_getitem(v, s);
  if (s.indices.size() != 1) compile_error(s.range, "only tensors take several indices");
  const ast::Expr& idx = *s.indices[0];
  if (t->kind() == TypeKind::List) {
    if (idx.kind == ast::ExprKind::Slice) {
      const auto& sl = ast::as<ast::Slice>(idx);
      auto part = [&](const ast::ExprPtr& e, int64_t dflt, bool optional) -> Value* {
        if (!e) return optional ? none(idx.range) : constant(IValue(dflt), Type::int_(), idx.range);
        Value* x = emit_expr(*e);
        if (x->type()->kind() != TypeKind::Int)
          compile_error(e->range, "slice indices must be int");
        return x;
      };
      return graph_.insert_op(
          OpId::slice_list,
          {v, part(sl.lower, 0, true), part(sl.upper, 0, true), part(sl.step, 1, false)}, t,
          s.range);
    }
    Value* i = emit_expr(idx);
    if (i->type()->kind() != TypeKind::Int)
      compile_error(idx.range, "list indices must be int, not " + i->type()->str());
    return read_under_no_grad(graph_.insert_op(OpId::getitem_list, {v, i}, t->element(), s.range),
                              s.range);
  }
  if (t->kind() == TypeKind::Tuple) {
    const auto& elems = t->contained();
    auto constant_int = [&](const ast::Expr& e, int64_t& out) {
      if (e.kind == ast::ExprKind::Int) {
        out = ast::as<ast::IntLit>(e).value;
        return true;
      }
      if (e.kind == ast::ExprKind::Unary && ast::as<ast::Unary>(e).op == ast::UnaryOp::Neg &&
          ast::as<ast::Unary>(e).operand->kind == ast::ExprKind::Int) {
        out = -ast::as<ast::IntLit>(*ast::as<ast::Unary>(e).operand).value;
        return true;
      }
      return false;
    };
    int64_t i;
    if (!constant_int(idx, i)) compile_error(idx.range, "tuple indices must be integer constants");
    int64_t n = static_cast<int64_t>(elems.size());
    if (i < -n || i >= n) compile_error(idx.range, "tuple index out of range");
    if (i < 0) i += n;
    Node* node = graph_.insert(graph_.create(OpId::TupleIndex, {v}, 1));
    node->set_range(s.range);
    node->set_attr("index", IValue(i));
    return read_under_no_grad(node->output()->set_type(elems[static_cast<size_t>(i)]), s.range);
  }
  compile_error(s.value->range, "'" + t->str() + "' object is not subscriptable");
}

Value* Emitter::emit_tensor_index(Value* t, const ast::Subscript& s) {
  // Basic indexing (ints, slices, None, ...) becomes select/slice/unsqueeze views;
  // tensor indices become one `index` op applied afterwards at their dims.
  const SourceRange& r = s.range;
  auto int_const = [&](int64_t v) { return constant(IValue(v), Type::int_(), r); };
  // Indexing keeps the dtype (so `x[0, 0].item()` of an int tensor is an int).
  std::optional<DType> dtype = t->type()->tensor_dtype();
  const TypePtr result_type = dtype ? Type::tensor(*dtype) : Type::tensor();
  size_t ellipsis = s.indices.size();
  for (size_t i = 0; i < s.indices.size(); ++i) {
    if (s.indices[i]->kind == ast::ExprKind::Ellipsis) {
      if (ellipsis != s.indices.size())
        compile_error(s.indices[i]->range, "an index can only have a single ellipsis ('...')");
      ellipsis = i;
    }
  }
  std::vector<std::pair<int64_t, Value*>> advanced;  // (dim, index tensor)
  auto apply = [&](const ast::Expr& e, int64_t& dim, bool from_end) {
    switch (e.kind) {
      case ast::ExprKind::None:
        t = graph_.insert_op(OpId::unsqueeze, {t, int_const(dim)}, result_type, e.range);
        if (!from_end)
          ++dim;
        else
          --dim;
        return;
      case ast::ExprKind::Slice: {
        const auto& sl = ast::as<ast::Slice>(e);
        auto bound = [&](const ast::ExprPtr& b) -> Value* {
          if (!b) return none(e.range);
          Value* x = emit_expr(*b);
          if (x->type()->kind() != TypeKind::Int)
            compile_error(b->range, "slice indices must be int, not " + x->type()->str());
          return x;
        };
        Value* start = bound(sl.lower);
        Value* end = bound(sl.upper);
        Value* step = sl.step ? emit_expr(*sl.step) : int_const(1);
        if (step->type()->kind() != TypeKind::Int)
          compile_error(sl.step->range, "slice step must be int");
        bool full = !sl.lower && !sl.upper && !sl.step;
        if (!full)
          t = graph_.insert_op(OpId::slice, {t, int_const(dim), start, end, step}, result_type,
                               e.range);
        if (!from_end)
          ++dim;
        else
          --dim;
        return;
      }
      default: {
        Value* i = emit_expr(e);
        if (i->type()->kind() == TypeKind::Int) {
          t = graph_.insert_op(OpId::select, {t, int_const(dim), i}, result_type, e.range);
          return;  // the dim disappears; the next index addresses the same position
        }
        if (i->type()->kind() == TypeKind::List) {
          i = emit_ops(ops_named("tensor", opflags::TORCH), {{e.range, "", i}}, e.range,
                       "torch.tensor");
        }
        if (i->type()->kind() == TypeKind::Bool) {
          compile_error(e.range, "indexing with a Python bool is not supported");
        }
        if (!i->type()->is_tensor()) {
          compile_error(e.range, "tensor indices must be int, slices, None, ... or tensors, not " +
                                     i->type()->str());
        }
        if (from_end) compile_error(e.range, "tensor indices after '...' are not supported");
        advanced.emplace_back(dim, i);
        ++dim;
        return;
      }
    }
  };
  int64_t dim = 0;
  for (size_t i = 0; i < ellipsis && i < s.indices.size(); ++i) apply(*s.indices[i], dim, false);
  if (ellipsis < s.indices.size()) {
    int64_t back = -1;
    for (size_t i = s.indices.size(); i-- > ellipsis + 1;) apply(*s.indices[i], back, true);
  }
  if (!advanced.empty()) {
    int64_t last = advanced.back().first;
    std::vector<Value*> entries;
    for (int64_t d = 0, k = 0; d <= last; ++d) {
      if (k < static_cast<int64_t>(advanced.size()) && advanced[k].first == d) {
        entries.push_back(advanced[k++].second);
      } else {
        entries.push_back(none(r));
      }
    }
    // A list of optional tensors: None entries skip a dim.
    std::vector<Value*> wrapped;
    for (Value* e : entries)
      wrapped.push_back(convert_to(e, Type::optional(Type::tensor()), r, "index"));
    Node* list = graph_.insert(graph_.create(OpId::ListConstruct, wrapped, 1));
    list->set_range(r);
    list->output()->set_type(Type::list(Type::optional(Type::tensor())));
    t = graph_.insert_op(OpId::index, {t, list->output()}, result_type, r);
  }
  return t;
}

// ---- Comprehensions
// ------------------------------------------------------------------------------

// The loop of a comprehension: `target` bound to each item of `iter` in the
// comprehension's own scope and, where `cond` holds, `each` emitted in the body.
void Emitter::emit_comprehension_loop(const ast::Expr& target, const ast::Expr& iter,
                                      const ast::Expr* cond, const SourceRange& range,
                                      const std::function<void()>& each) {
  Value* trip;
  std::function<Value*(Value*)> item_at;
  std::optional<DictIteration> dict_it;
  bool is_range = iter.kind == ast::ExprKind::Call &&
                  ast::as<ast::Call>(iter).func->kind == ast::ExprKind::Name &&
                  ast::as<ast::Name>(*ast::as<ast::Call>(iter).func).id == "range" &&
                  !lookup_local("range") && !unit_.find_function(qualified("range"));
  if (is_range) {
    const auto& call = ast::as<ast::Call>(iter);
    if (call.args.empty() || call.args.size() > 3 || !call.keywords.empty()) {
      compile_error(call.range, "range() takes 1 to 3 positional arguments");
    }
    std::vector<Value*> a;
    for (const auto& e : call.args) {
      Value* v = emit_expr(*e);
      if (v->type()->kind() != TypeKind::Int)
        compile_error(e->range, "range() arguments must be int, not " + v->type()->str());
      a.push_back(v);
    }
    Value* start = a.size() >= 2 ? a[0] : constant(IValue(int64_t{0}), Type::int_(), call.range);
    Value* end = a.size() >= 2 ? a[1] : a[0];
    Value* step = a.size() == 3 ? a[2] : constant(IValue(int64_t{1}), Type::int_(), call.range);
    trip = graph_.insert_op(OpId::range_length, {start, end, step}, Type::int_(), call.range);
    bool simple = a.size() == 1;
    item_at = [=, this, &iter](Value* index) -> Value* {
      if (simple) return index;
      Value* scaled = graph_.insert_op(OpId::mul_int, {index, step}, Type::int_(), iter.range);
      return graph_.insert_op(OpId::add_int, {start, scaled}, Type::int_(), iter.range);
    };
  } else {
    Value* seq = emit_expr(iter);
    TypePtr st = seq->type();
    if ((dict_it = dict_iteration(seq, iter.range))) {
      trip = dict_it->size;
      item_at = [=, this, &iter](Value* index) {
        return dict_iteration_item(*dict_it, index, iter.range);
      };
    } else if (st->kind() == TypeKind::List) {
      trip = graph_.insert_op(OpId::len_list, {seq}, Type::int_(), iter.range);
      item_at = [=, this, &iter](Value* index) {
        return graph_.insert_op(OpId::getitem_list, {seq, index}, st->element(), iter.range);
      };
    } else if (st->is_tensor()) {
      trip = graph_.insert_op(OpId::len_tensor, {seq}, Type::int_(), iter.range);
      item_at = [=, this, &iter](Value* index) {
        Value* zero = constant(IValue(int64_t{0}), Type::int_(), iter.range);
        return graph_.insert_op(OpId::select, {seq, zero, index}, Type::tensor(), iter.range);
      };
    } else {
      compile_error(iter.range, "cannot iterate over a value of type " + st->str());
    }
  }
  Value* yes = constant(IValue(true), Type::bool_(), range);
  Node* loop = graph_.insert(graph_.create(OpId::Loop, {trip, yes}, 0));
  loop->set_range(range);
  Block* body = loop->add_block();
  Value* index = body->add_param(Type::int_());
  Scope scope(scope_);
  {
    Block* saved_block = block_;
    Scope* saved_scope = scope_;
    InsertPointGuard g(graph_, body);
    block_ = body;
    scope_ = &scope;
    Value* item = item_at(index);
    bind_comprehension_target(target, item, scope);
    if (cond) {
      Value* c = to_bool(emit_expr(*cond), cond->range, "a comprehension condition");
      emit_branches(
          c, range,
          [&] {
            each();
            return false;
          },
          [] { return false; });
    } else {
      each();
    }
    body->add_return(constant(IValue(true), Type::bool_(), range));
    block_ = saved_block;
    scope_ = saved_scope;
  }
  if (dict_it) check_dict_size(*dict_it, iter.range);  // Python's last next()
}

Value* Emitter::emit_listcomp(const ast::ListComp& c) {
  // [elt for target in iter if cond] -> an empty list appended to in a loop.
  Node* list = graph_.insert(graph_.create(OpId::ListConstruct, {}, 1));
  list->set_range(c.range);
  Value* result = list->output()->set_type(Type::list(Type::any()));
  TypePtr elem_type;
  emit_comprehension_loop(*c.target, *c.iter, c.cond.get(), c.range, [&] {
    Value* v = emit_expr(*c.elt);
    elem_type = strip_refinements(v->type());
    Node* app = graph_.insert(graph_.create(OpId::append_list, {result, v}, 0));
    app->set_range(c.elt->range);
  });
  result->set_type(Type::list(elem_type ? elem_type : Type::tensor()));
  return result;
}

Value* Emitter::emit_dictcomp(const ast::DictComp& c) {
  // {key: value for target in iter if cond} -> an empty dict written in a loop.
  Node* dict = graph_.insert(graph_.create(OpId::DictConstruct, {}, 1));
  dict->set_range(c.range);
  Value* result = dict->output()->set_type(Type::dict(Type::str_(), Type::tensor()));
  TypePtr key_type, value_type;
  emit_comprehension_loop(*c.target, *c.iter, c.cond.get(), c.range, [&] {
    Value* k = emit_expr(*c.key);
    Value* v = emit_expr(*c.value);
    key_type = strip_refinements(k->type());
    value_type = strip_refinements(v->type());
    if (key_type->kind() != TypeKind::Str && key_type->kind() != TypeKind::Int) {
      compile_error(c.key->range, "dict keys must be str or int in TSL (as in TorchScript), not " +
                                      key_type->str());
    }
    result->set_type(Type::dict(key_type, value_type));
    bool int_keys = key_type->kind() == TypeKind::Int;
    Node* set =
        graph_.insert(graph_.create(dict_op_id(DictOp::Setitem, int_keys), {result, k, v}, 0));
    set->set_range(c.range);
  });
  return result;
}

// The target of a comprehension (`k`, `k, v`, `(i, (k, v))`) bound in the
// comprehension's own scope, as Python 3 keeps it local there.
void Emitter::bind_comprehension_target(const ast::Expr& target, Value* item, Scope& scope) {
  if (target.kind == ast::ExprKind::Name) {
    scope.set(ast::as<ast::Name>(target).id, {item, target.range});
    return;
  }
  const std::vector<ast::ExprPtr>* elts = nullptr;
  if (target.kind == ast::ExprKind::Tuple) elts = &ast::as<ast::TupleExpr>(target).elts;
  if (target.kind == ast::ExprKind::List) elts = &ast::as<ast::ListExpr>(target).elts;
  const TypePtr& t = item->type();
  if (!elts)
    compile_error(target.range, "a comprehension target must be a name or a tuple of names");
  if (t->kind() != TypeKind::Tuple || t->contained().size() != elts->size()) {
    compile_error(target.range, "cannot unpack a value of type " + t->str() + " into " +
                                    std::to_string(elts->size()) + " targets");
  }
  Node* unpack = graph_.insert(graph_.create(OpId::TupleUnpack, {item}, elts->size()));
  unpack->set_range(target.range);
  for (size_t i = 0; i < elts->size(); ++i) {
    bind_comprehension_target(*(*elts)[i], unpack->output(i)->set_type(t->contained()[i]), scope);
  }
}

// ---- Types in annotations
// ---------------------------------------------------------------------------

TypePtr Emitter::resolve_type(const ast::Expr& e) {
  auto simple = [&](const std::string& n) -> TypePtr {
    if (n == "int") return Type::int_();
    if (n == "float") return Type::float_();
    if (n == "bool") return Type::bool_();
    if (n == "str") return Type::str_();
    if (n == "Tensor") return Type::tensor();
    if (n == "None") return Type::none();
    return nullptr;
  };
  auto name_of = [&](const ast::Expr& x) -> std::string {
    if (x.kind == ast::ExprKind::Name) return ast::as<ast::Name>(x).id;
    if (x.kind == ast::ExprKind::Attribute) {
      const auto& a = ast::as<ast::Attribute>(x);
      if (a.value->kind == ast::ExprKind::Name)
        return ast::as<ast::Name>(*a.value).id + "." + a.attr;
    }
    return "";
  };
  if (e.kind == ast::ExprKind::None) return Type::none();
  std::string n = name_of(e);
  if (n == "torch.Tensor") return Type::tensor();
  if (n == "torch.dtype") return Type::dtype();
  if (n == "torch.device") return Type::device();
  if (TypePtr t = simple(n)) return t;
  if (e.kind == ast::ExprKind::Subscript) {
    const auto& s = ast::as<ast::Subscript>(e);
    std::string head = name_of(*s.value);
    if (head.starts_with("typing.")) head = head.substr(7);
    std::vector<TypePtr> args;
    for (const auto& i : s.indices) args.push_back(resolve_type(*i));
    if ((head == "List" || head == "list") && args.size() == 1) return Type::list(args[0]);
    // BroadcastingListN[T] is List[T] whose argument may also be one T (the call
    // repeats it; FunctionDecl::broadcast_lengths).
    if (head.starts_with("BroadcastingList") && broadcasting_list_length(e) > 0 &&
        args.size() == 1) {
      return Type::list(args[0]);
    }
    if ((head == "Optional") && args.size() == 1) return Type::optional(args[0]);
    if (head == "Tuple" || head == "tuple") {
      if (s.indices.size() == 1 && s.indices[0]->kind == ast::ExprKind::Tuple) {
        std::vector<TypePtr> elems;
        for (const auto& x : ast::as<ast::TupleExpr>(*s.indices[0]).elts)
          elems.push_back(resolve_type(*x));
        return Type::tuple(elems);
      }
      return Type::tuple(args);
    }
    if ((head == "Dict" || head == "dict") && args.size() == 2) {
      if (args[0]->kind() != TypeKind::Str && args[0]->kind() != TypeKind::Int) {
        compile_error(
            s.indices[0]->range,
            "Dict keys must be str or int in TSL (as in TorchScript), not " + args[0]->str());
      }
      return Type::dict(args[0], args[1]);
    }
  }
  if (e.kind == ast::ExprKind::Tuple) {
    std::vector<TypePtr> elems;
    for (const auto& x : ast::as<ast::TupleExpr>(e).elts) elems.push_back(resolve_type(*x));
    return Type::tuple(elems);
  }
  compile_error(e.range,
                "unknown type" + (n.empty() ? std::string("") : " '" + n + "'") +
                    " (TSL types: Tensor, int, float, bool, str, torch.dtype, torch.device, "
                    "List[T], Tuple[...], Optional[T], Dict[K, V])");
}

}  // namespace tsl
