// Expressions of the emitter: the expression switch, literals (lists, f-strings),
// conversions between types, and the builtin lookups the other emit_*.cpp files share
// (ops by base name, the namespaces of modules, types in annotations).
#include <map>

#include "frontend/emitter.h"

namespace tsl {

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

std::string builtin_op_name(const std::string& name) {
  if (name == "float") return "Float";
  if (name == "int") return "Int";
  if (name == "bool") return "Bool";
  return name;
}

bool is_transform(const std::string& name) {
  return name == "graph" || autodiff::transform_named(name).has_value();
}

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
