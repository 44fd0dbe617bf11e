// Calls in the emitter: of builtins (op-table rows by overload resolution, and the
// builtins the emitter handles by name), of user functions (arguments bound to
// parameters, transforms specialized to constant arguments), and builtins as values.
#include <algorithm>

#include "frontend/emitter.h"

namespace tsl {

using autodiff::TransformKind;

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
  return emit_matched(match_and_emit(graph_, candidates, args, range, display), range);
}

Value* Emitter::emit_matched(const MatchedOp& m, const SourceRange& range) {
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

}  // namespace tsl
