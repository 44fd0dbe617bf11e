// Kernels: one function per (op, device) in a table indexed by OpId. A kernel reads
// its inputs from and writes its outputs to the interpreter's registers; typed C++
// functions are wrapped into that calling convention by `boxed<fn>`.
// See Note [Calling a kernel].
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "runtime/kernels/op_info.h"
#include "runtime/tensor/ivalue.h"

namespace tsl {

// Note [Calling a kernel]
// The interpreter keeps every value in a register file (an array of IValue). An
// instruction names its input and output registers by index; the kernel gets those
// index lists and the register file, so calling a kernel copies no IValue and
// allocates nothing. Outside the interpreter, `call_op` builds a small register
// file for one call (constant folding, tests, the eager tape).
class KernelArgs {
 public:
  KernelArgs(IValue* registers, const uint32_t* inputs, uint32_t num_inputs,
             const uint32_t* outputs, uint32_t num_outputs)
      : regs_(registers), in_(inputs), out_(outputs), n_in_(num_inputs), n_out_(num_outputs) {}

  uint32_t num_inputs() const { return n_in_; }
  uint32_t num_outputs() const { return n_out_; }
  const IValue& in(uint32_t i) const { return regs_[in_[i]]; }
  IValue& out(uint32_t i) const { return regs_[out_[i]]; }

 private:
  IValue* regs_;
  const uint32_t* in_;
  const uint32_t* out_;
  uint32_t n_in_;
  uint32_t n_out_;
};

using KernelFn = void (*)(KernelArgs&);

// The variadic arguments of a kernel (`print(*values)`): the inputs from `first` on.
struct VarArgs {
  const KernelArgs* args;
  uint32_t first;
  uint32_t size() const { return args->num_inputs() - first; }
  const IValue& operator[](uint32_t i) const { return args->in(first + i); }
};

// ---- Registration ---------------------------------------------------------------------

struct KernelEntry {
  KernelFn fn = nullptr;
  int arity = -1;  // C++ parameters of the wrapped function, or -1 (variadic/raw)
};

// A kernel for one device type; `register_generic_kernel` registers one used on every
// device (scalar, list and metadata-only ops).
void register_kernel(DeviceType device, OpId op, KernelFn fn, int arity = -1);
void register_generic_kernel(OpId op, KernelFn fn, int arity = -1);
// The kernel of `op` for `device` (falling back to the generic one), or an empty entry.
const KernelEntry& lookup_kernel(DeviceType device, OpId op);
bool has_device_kernel(DeviceType device, OpId op);
bool has_generic_kernel(OpId op);

// Note [Dispatch by device]
// A kernel is chosen by where its tensor inputs live. The interpreter binds each
// instruction to the op's CPU kernel when it compiles, since most programs never see
// another device; once any tensor has been created on a device
// (device_tensors_created(), tensor/device_backend.h) it asks `dispatch_kernel` before
// each op. An op with a tensor input on CUDA (a tensor argument or an element of a
// tensor list) runs its CUDA kernel, or its generic one; an op that has neither is an
// error naming the op, so device memory never reaches a CPU kernel. Inputs on two
// devices are the CUDA kernel's to reject with PyTorch's message, except 0-dim CPU
// tensors (Python numbers, `x * 2.0`), which PyTorch lets CUDA ops read as scalars.
// Factories have no tensor input: their kernels read device= (and the default device).
//
// The device `args`' tensor inputs ask for: a non-CPU one if any, else the CPU.
Device kernel_device(const KernelArgs& args);
// The kernel that runs `op` on `args`: `cpu_fn` when kernel_device is the CPU.
KernelFn dispatch_kernel(OpId op, KernelFn cpu_fn, const KernelArgs& args);
// The device a tensor input must be on when an op runs on `device`: fails with
// PyTorch's "Expected all tensors to be on the same device" message otherwise. A 0-dim
// CPU tensor passes (a scalar).
void check_same_device(const Tensor& t, Device device);

// Registers every kernel once (idempotent, thread-safe). Each kernel file has one
// `register_*_kernels` function listed in runtime/kernels/registry.cpp.
void ensure_kernels_registered();

// Runs `op` once on the given inputs, on the device of its first tensor input
// (or the CPU), and returns its `num_outputs` outputs.
std::vector<IValue> call_op(OpId op, std::vector<IValue> inputs, uint32_t num_outputs = 1);

// ---- Boxing: typed C++ functions as kernels -------------------------------------------

// A Python number given for a Tensor parameter of a NUMS op becomes a 0-dim
// "wrapped number" tensor, which takes part in type promotion as a scalar does.
Tensor wrap_number(const IValue& v);

namespace detail {

template <typename T>
struct ArgConv;

template <>
struct ArgConv<Tensor> {
  static Tensor get(const IValue& v) {
    if (!v.is_tensor()) return wrap_number(v);
    // Undefined tensors (zero gradients) are handled by the autodiff ops; one
    // reaching another kernel is a bug, reported rather than dereferenced.
    TSL_INTERNAL_ASSERT(v.tensor_impl() != nullptr, "an undefined tensor reached a kernel");
    return v.to_tensor();
  }
};
template <>
struct ArgConv<std::optional<Tensor>> {
  static std::optional<Tensor> get(const IValue& v) {
    if (v.is_none()) return std::nullopt;
    return ArgConv<Tensor>::get(v);
  }
};
template <>
struct ArgConv<int64_t> {
  static int64_t get(const IValue& v) { return v.is_bool() ? (v.to_bool() ? 1 : 0) : v.to_int(); }
};
template <>
struct ArgConv<double> {
  static double get(const IValue& v) { return v.to_double(); }
};
template <>
struct ArgConv<bool> {
  static bool get(const IValue& v) { return v.to_bool(); }
};
template <>
struct ArgConv<std::string> {
  static std::string get(const IValue& v) { return v.to_str(); }
};
template <>
struct ArgConv<Scalar> {
  static Scalar get(const IValue& v) { return v.to_scalar(); }
};
template <>
struct ArgConv<DType> {
  static DType get(const IValue& v) { return v.to_dtype(); }
};
template <>
struct ArgConv<Device> {
  static Device get(const IValue& v) { return v.to_device(); }
};
template <>
struct ArgConv<std::vector<int64_t>> {
  // An int where a list of ints is expected means a one-element list (dim=1).
  static std::vector<int64_t> get(const IValue& v) {
    if (v.is_int()) return {v.to_int()};
    return v.to_int_vector();
  }
};
template <>
struct ArgConv<std::vector<Tensor>> {
  static std::vector<Tensor> get(const IValue& v) { return v.to_tensor_vector(); }
};
template <>
struct ArgConv<std::vector<std::optional<Tensor>>> {
  static std::vector<std::optional<Tensor>> get(const IValue& v) {
    std::vector<std::optional<Tensor>> out;
    for (const IValue& e : v.to_list().elements)
      out.push_back(ArgConv<std::optional<Tensor>>::get(e));
    return out;
  }
};
template <>
struct ArgConv<IValue> {
  static IValue get(const IValue& v) { return v; }
};
template <typename T>
struct ArgConv<std::optional<T>> {
  static std::optional<T> get(const IValue& v) {
    if (v.is_none()) return std::nullopt;
    return ArgConv<T>::get(v);
  }
};

template <typename T>
using Decay = std::remove_cv_t<std::remove_reference_t<T>>;

template <typename R>
struct ResultConv {
  static void put(KernelArgs& a, R&& r) { a.out(0) = IValue(std::forward<R>(r)); }
};
template <>
struct ResultConv<std::vector<Tensor>> {
  static void put(KernelArgs& a, std::vector<Tensor>&& r) {
    std::vector<IValue> elems;
    elems.reserve(r.size());
    for (Tensor& t : r) elems.emplace_back(std::move(t));
    a.out(0) = IValue::list(std::move(elems));
  }
};
template <>
struct ResultConv<std::vector<int64_t>> {
  static void put(KernelArgs& a, std::vector<int64_t>&& r) { a.out(0) = IValue::int_list(r); }
};
template <typename... Ts>
struct ResultConv<std::tuple<Ts...>> {
  static void put(KernelArgs& a, std::tuple<Ts...>&& r) {
    std::apply(
        [&](auto&&... elems) {
          uint32_t i = 0;
          ((a.out(i++) = IValue(std::move(elems))), ...);
        },
        std::move(r));
  }
};

template <typename F>
struct FnTraits;
template <typename R, typename... Args>
struct FnTraits<R (*)(Args...)> {
  using Result = R;
  using ArgsTuple = std::tuple<Decay<Args>...>;
  static constexpr int arity = sizeof...(Args);
};

template <auto Fn, size_t... I>
void call_boxed(KernelArgs& a, std::index_sequence<I...>) {
  using Traits = FnTraits<decltype(Fn)>;
  using R = typename Traits::Result;
  if constexpr (std::is_void_v<R>) {
    Fn(ArgConv<std::tuple_element_t<I, typename Traits::ArgsTuple>>::get(a.in(I))...);
    // A None-returning op's node may have no output at all (an expression statement).
    if (a.num_outputs() > 0) a.out(0) = IValue();
  } else {
    ResultConv<R>::put(
        a, Fn(ArgConv<std::tuple_element_t<I, typename Traits::ArgsTuple>>::get(a.in(I))...));
  }
}

}  // namespace detail

// boxed<&cpu::relu> is a KernelFn that unpacks the registers into relu's typed
// parameters and stores its result.
template <auto Fn>
void boxed(KernelArgs& a) {
  using Traits = detail::FnTraits<decltype(Fn)>;
  detail::call_boxed<Fn>(a, std::make_index_sequence<Traits::arity>());
}

template <auto Fn>
constexpr int boxed_arity() {
  return detail::FnTraits<decltype(Fn)>::arity;
}

}  // namespace tsl

// TSL_REGISTER_CPU(relu, cpu::relu): the typed function is the CPU kernel of op relu.
#define TSL_REGISTER_CPU(op, fn)                                                      \
  ::tsl::register_kernel(::tsl::DeviceType::CPU, ::tsl::OpId::op, &::tsl::boxed<&fn>, \
                         ::tsl::boxed_arity<&fn>())
#define TSL_REGISTER_GENERIC(op, fn) \
  ::tsl::register_generic_kernel(::tsl::OpId::op, &::tsl::boxed<&fn>, ::tsl::boxed_arity<&fn>())
// A kernel that works on KernelArgs directly (variadic ops such as print).
#define TSL_REGISTER_RAW(device, op, fn) \
  ::tsl::register_kernel(::tsl::DeviceType::device, ::tsl::OpId::op, &fn, -1)
#define TSL_REGISTER_GENERIC_RAW(op, fn) ::tsl::register_generic_kernel(::tsl::OpId::op, &fn, -1)
