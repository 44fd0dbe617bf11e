// The kernel tables and the one list of kernel files that fill them.
#include <mutex>

#include "runtime/kernels/kernel.h"

namespace tsl {

// One registration function per kernel file. Adding a kernel file means adding its
// function here; the coverage test then checks that every op has a CPU kernel.
void register_cpu_elementwise_kernels();
void register_cpu_reduction_kernels();
void register_cpu_linalg_kernels();
void register_cpu_nn_kernels();
void register_cpu_shape_kernels();
void register_cpu_factory_kernels();
void register_cpu_scatter_kernels();
void register_scalar_kernels();
void register_dict_kernels();
void register_io_kernels();
void register_type_kernels();
void register_autograd_kernels();
void register_batching_kernels();
void register_eager_kernels();
void register_inplace_kernels();  // last: fills in the INPLACE ops that have no kernel
#ifdef TSL_HAVE_CUDA
void register_cuda_kernels();  // runtime/kernels/cuda: installs the CUDA backend too
#endif

namespace {

KernelEntry g_device_kernels[kNumDeviceTypes][kNumOps];
KernelEntry g_generic_kernels[kNumOps];

}  // namespace

void register_kernel(DeviceType device, OpId op, KernelFn fn, int arity) {
  g_device_kernels[static_cast<int>(device)][static_cast<int>(op)] = {fn, arity};
}

void register_generic_kernel(OpId op, KernelFn fn, int arity) {
  g_generic_kernels[static_cast<int>(op)] = {fn, arity};
}

const KernelEntry& lookup_kernel(DeviceType device, OpId op) {
  const KernelEntry& specific = g_device_kernels[static_cast<int>(device)][static_cast<int>(op)];
  if (specific.fn) return specific;
  return g_generic_kernels[static_cast<int>(op)];
}

bool has_device_kernel(DeviceType device, OpId op) {
  return g_device_kernels[static_cast<int>(device)][static_cast<int>(op)].fn != nullptr;
}

bool has_generic_kernel(OpId op) { return g_generic_kernels[static_cast<int>(op)].fn != nullptr; }

void ensure_kernels_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_cpu_elementwise_kernels();
    register_cpu_reduction_kernels();
    register_cpu_linalg_kernels();
    register_cpu_nn_kernels();
    register_cpu_shape_kernels();
    register_cpu_factory_kernels();
    register_cpu_scatter_kernels();
    register_scalar_kernels();
    register_dict_kernels();
    register_io_kernels();
    register_type_kernels();
    register_autograd_kernels();
    register_batching_kernels();
    register_eager_kernels();
    register_inplace_kernels();
#ifdef TSL_HAVE_CUDA
    register_cuda_kernels();
#endif
  });
}

namespace {

// The device of a tensor value, or of the first non-CPU tensor of a tensor list.
Device value_device(const IValue& v) {
  if (v.is_tensor()) {
    TensorImpl* t = v.tensor_impl();
    return t ? t->device() : kCPU;
  }
  if (v.is_list()) {
    for (const IValue& e : v.to_list().elements) {
      if (!e.is_tensor()) return kCPU;  // a list of non-tensors
      TensorImpl* t = e.tensor_impl();
      if (t && !t->device().is_cpu()) return t->device();
    }
  }
  return kCPU;
}

}  // namespace

Device kernel_device(const KernelArgs& args) {
  for (uint32_t i = 0; i < args.num_inputs(); ++i) {
    Device d = value_device(args.in(i));
    if (!d.is_cpu()) return d;
  }
  return kCPU;
}

KernelFn dispatch_kernel(OpId op, KernelFn cpu_fn, const KernelArgs& args) {
  Device d = kernel_device(args);
  if (d.is_cpu()) return cpu_fn;
  const KernelEntry& k = lookup_kernel(d.type, op);
  TSL_CHECK(k.fn != nullptr, "`", op_info(op).name, "` has no ",
            d.type == DeviceType::CUDA ? "CUDA" : "device",
            " kernel yet: move its inputs to the CPU first (.cpu())");
  return k.fn;
}

void check_same_device(const Tensor& t, Device device) {
  if (t.device() == device || (t.device().is_cpu() && t.dim() == 0)) return;
  TSL_ERROR("Expected all tensors to be on the same device, but found at least two devices, ",
            device.str(), " and ", t.device().str(), "!");
}

Tensor wrap_number(const IValue& v) {
  TSL_INTERNAL_ASSERT(v.is_number(), "expected a tensor or a number, got ", v.tag_name());
  // Floats are kept in double precision: a wrapped number counts as a Python
  // scalar in type promotion (float64 * 2.1 stays float64 and must use 2.1, not
  // float32's 2.0999999), so its storage dtype only has to hold the exact value.
  Scalar s = v.to_scalar();
  Tensor t = Tensor::scalar(s, s.is_floating() ? DType::Float64 : s.default_dtype());
  t.impl()->set_wrapped_number(true);
  return t;
}

std::vector<IValue> call_op(OpId op, std::vector<IValue> inputs, uint32_t num_outputs) {
  ensure_kernels_registered();
  DeviceType device = DeviceType::CPU;
  for (const IValue& v : inputs) {
    Device d = value_device(v);
    if (!d.is_cpu()) {
      device = d.type;
      break;
    }
  }
  const KernelEntry& kernel = lookup_kernel(device, op);
  if (!kernel.fn) {
    TSL_ERROR(op_info(op).name, " has no kernel for ", Device(device).str());
  }
  uint32_t n_in = static_cast<uint32_t>(inputs.size());
  // Typed kernels read exactly their C++ parameters: fewer inputs would read past
  // the register file (the interpreter's schema matching always passes them all).
  TSL_INTERNAL_ASSERT(kernel.arity < 0 || static_cast<uint32_t>(kernel.arity) == n_in, "call_op(",
                      op_info(op).name, "): the kernel takes ", kernel.arity, " arguments, got ",
                      n_in);
  std::vector<IValue> regs = std::move(inputs);
  regs.resize(n_in + num_outputs);
  std::vector<uint32_t> in_idx(n_in), out_idx(num_outputs);
  for (uint32_t i = 0; i < n_in; ++i) in_idx[i] = i;
  for (uint32_t i = 0; i < num_outputs; ++i) out_idx[i] = n_in + i;
  KernelArgs args(regs.data(), in_idx.data(), n_in, out_idx.data(), num_outputs);
  kernel.fn(args);
  return std::vector<IValue>(regs.begin() + n_in, regs.end());
}

}  // namespace tsl
