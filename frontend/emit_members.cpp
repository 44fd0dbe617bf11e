// Members of values: a Tensor's attributes (`x.shape`, `x.grad`) and methods
// (`x.relu()`, the op table's METHOD rows and the conversions), a list's, a str's and a
// tape node's; the names the REPL completes.
#include <algorithm>
#include <map>

#include "frontend/emitter.h"

namespace tsl {
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
    if (tensor_methods.empty()) {
      if (FunctionDecl* fn = unit_.tensor_function_in_tsl(name, c.func->range))
        return emit_user_call(*fn, full, range);
      compile_error(c.func->range, "'Tensor' has no method '" + name + "'");
    }
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

}  // namespace tsl
