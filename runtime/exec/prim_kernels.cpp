// The kernels of the structural ops the interpreter runs as ordinary instructions
// (lists, tuples, optionals, closures): prim_kernel() of interpreter.h.
#include "runtime/exec/interpreter.h"

#include "runtime/exec/function.h"

namespace tsl {

namespace {

// ---- Kernels of the structural ops the interpreter runs as ordinary instructions.

void list_construct(KernelArgs& a) {
  std::vector<IValue> elems;
  elems.reserve(a.num_inputs());
  for (uint32_t i = 0; i < a.num_inputs(); ++i) elems.push_back(a.in(i));
  a.out(0) = IValue::list(std::move(elems));
}

// DictConstruct(k0, v0, k1, v1, ...): a later duplicate of a key overwrites its value
// and keeps its first place, as a Python dict display does (Note [Dicts]).
void dict_construct(KernelArgs& a) {
  auto dict = make_intrusive<DictImpl>();
  for (uint32_t i = 0; i + 1 < a.num_inputs(); i += 2) dict->set(a.in(i), a.in(i + 1));
  a.out(0) = IValue(std::move(dict));
}

void tuple_construct(KernelArgs& a) {
  std::vector<IValue> elems;
  elems.reserve(a.num_inputs());
  for (uint32_t i = 0; i < a.num_inputs(); ++i) elems.push_back(a.in(i));
  a.out(0) = IValue::tuple(std::move(elems));
}

void tuple_unpack(KernelArgs& a) {
  const auto& elems = a.in(0).to_tuple();
  TSL_INTERNAL_ASSERT(elems.size() == a.num_outputs(), "TupleUnpack arity");
  for (uint32_t i = 0; i < a.num_outputs(); ++i) a.out(i) = elems[i];
}

// TupleIndex's index attribute becomes a constant second input at compile time.
void tuple_index(KernelArgs& a) { a.out(0) = a.in(0).to_tuple().at(a.in(1).to_int()); }

void uninitialized(KernelArgs& a) { a.out(0) = IValue(); }
void undefined_tensor(KernelArgs& a) { a.out(0) = IValue(Tensor()); }

void unwrap_optional(KernelArgs& a) {
  if (a.in(0).is_none()) TSL_ERROR("unwrapped an Optional that is None");
  a.out(0) = a.in(0);
}

void identity(KernelArgs& a) { a.out(0) = a.in(0); }

void tensor_dtype(KernelArgs& a) { a.out(0) = IValue(a.in(0).tensor_impl()->dtype()); }
void tensor_device(KernelArgs& a) { a.out(0) = IValue(a.in(0).tensor_impl()->device()); }

// MakeClosure's Function travels as a constant last input (see compile_node).
void make_closure(KernelArgs& a) {
  uint32_t n = a.num_inputs() - 1;
  std::vector<IValue> captures;
  captures.reserve(n);
  for (uint32_t i = 0; i < n; ++i) captures.push_back(a.in(i));
  auto* fn = static_cast<Function*>(&a.in(n).to_object());
  a.out(0) = IValue(
      IntrusivePtr<ObjectImpl>(new Closure(IntrusivePtr<Function>(fn), std::move(captures))));
}

void call_closure(KernelArgs& a) {
  auto& closure = static_cast<Closure&>(a.in(0).to_object());
  std::vector<IValue> args;
  for (uint32_t i = 1; i < a.num_inputs(); ++i) args.push_back(a.in(i));
  std::vector<IValue> results = closure.call(std::move(args));
  for (uint32_t i = 0; i < a.num_outputs(); ++i) a.out(i) = std::move(results.at(i));
}

}  // namespace

KernelFn prim_kernel(OpId op) {
  switch (op) {
    case OpId::ListConstruct:
      return &list_construct;
    case OpId::DictConstruct:
      return &dict_construct;
    case OpId::TupleConstruct:
      return &tuple_construct;
    case OpId::TupleUnpack:
      return &tuple_unpack;
    case OpId::TupleIndex:
      return &tuple_index;
    case OpId::Uninitialized:
      return &uninitialized;
    case OpId::Undefined:
      return &undefined_tensor;
    case OpId::unwrap_optional:
      return &unwrap_optional;
    case OpId::to_optional:
    case OpId::AssumeDefined:
      return &identity;
    case OpId::dtype:
      return &tensor_dtype;
    case OpId::device:
      return &tensor_device;
    case OpId::MakeClosure:
      return &make_closure;
    case OpId::CallClosure:
      return &call_closure;
    default:
      return nullptr;
  }
}

}  // namespace tsl
