// Names and attributes of the emitter: what a name or `a.b` stands for (a value, a
// function, a module, a builtin, a type), and functions as values.
#include <limits>
#include <map>

#include "frontend/emitter.h"

namespace tsl {

using autodiff::TransformKind;

namespace {

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
}  // namespace

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
      if (FunctionDecl* fn = unit_.tensor_function_in_tsl(attr, a.range))
        return user_function(fn, path);
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

}  // namespace tsl
