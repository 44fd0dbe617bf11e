// The CUDA backend's entry point: registers its kernels and installs its allocator and
// DeviceBackend (called from ensure_kernels_registered in a build with CUDA).
#include <vector>

#include "runtime/kernels/cuda/cuda_context.h"
#include "runtime/kernels/kernel.h"

namespace tsl {
namespace cuda {
void register_elementwise_kernels();  // cuda_elementwise.cpp
void register_blas_kernels();         // cuda_blas.cpp
void register_nn_kernels();           // cuda_nn.cpp
void install_backend();               // cuda_elementwise.cpp
}  // namespace cuda

namespace {

// Kernels written once for every device: they reach memory only through copy_into,
// fill_tensor and the DeviceBackend's reduce, so their CPU registration serves CUDA too.
constexpr OpId kSharedKernels[] = {
    // copies and conversions (cpu/elementwise_fill_copy.cpp)
    OpId::copy_, OpId::to_dtype, OpId::fill_, OpId::zero_,
    // the *_like factories read only the size, dtype and device of their tensor
    OpId::zeros_like, OpId::ones_like, OpId::empty_like, OpId::full_like, OpId::rand_like,
    OpId::randn_like,
    // Note [Reductions on every device] (cpu/reduction.cpp)
    OpId::sum, OpId::mean, OpId::prod, OpId::amax, OpId::amin, OpId::max, OpId::min, OpId::all,
    OpId::any, OpId::sum_to_size, OpId::max_dim, OpId::min_dim, OpId::argmax, OpId::argmin,
    // joins and masks built on copies and `where` (cpu/shape_join.cpp, cpu/masked_fill.cpp)
    OpId::cat, OpId::stack, OpId::repeat, OpId::flip, OpId::masked_fill_scalar,
    OpId::masked_fill_tensor, OpId::slice_scatter, OpId::select_scatter,
    // gathers and puts through the DeviceBackend (cpu/index.cpp, cpu/scatter.cpp)
    OpId::gather, OpId::index_select, OpId::index, OpId::index_put, OpId::index_put_,
    OpId::index_add, OpId::embedding, OpId::one_hot,
    // `where` with a mask, and strided copies (cpu/diagonal.cpp)
    OpId::tril, OpId::triu, OpId::diag, OpId::diag_backward,
    // the DeviceBackend's scan and sort (cpu/reduction_scan.cpp, cpu/sort.cpp)
    OpId::cumsum, OpId::sort, OpId::sort_stable, OpId::topk,
    // compositions of device kernels on a device (cpu/reduction_stats.cpp, cpu/nn_loss.cpp,
    // cpu/linalg.cpp, cpu/nn_layer_norm.cpp, cpu/allclose.cpp, cpu/einsum.cpp)
    OpId::var, OpId::var_dim, OpId::std, OpId::std_dim, OpId::logsumexp, OpId::norm, OpId::mse_loss,
    OpId::outer, OpId::baddbmm, OpId::layer_norm, OpId::layer_norm_rstd, OpId::allclose,
    OpId::einsum, OpId::einsum_backward, OpId::binary_cross_entropy,
    // windows of padded planes as views, GEMMs and puts (cpu/conv.cpp, cpu/pool.cpp)
    OpId::conv2d, OpId::conv2d_input_backward, OpId::conv2d_weight_backward, OpId::max_pool2d,
    OpId::max_pool2d_indices, OpId::avg_pool2d, OpId::avg_pool2d_backward,
    // random numbers drawn on the CPU, used on the device (cpu/factory_random.cpp)
    OpId::dropout, OpId::normal_tensors};

}  // namespace

namespace cuda {
const std::vector<OpId>& ops_without_cuda_kernel() {
  static const std::vector<OpId> ops = {};
  return ops;
}
}  // namespace cuda

void register_cuda_kernels() {
  cuda::install_backend();
  for (OpId op : kSharedKernels) {
    const KernelEntry& cpu = lookup_kernel(DeviceType::CPU, op);
    TSL_INTERNAL_ASSERT(cpu.fn != nullptr, "no CPU kernel to share for ", op_info(op).name);
    register_kernel(DeviceType::CUDA, op, cpu.fn, cpu.arity);
  }
  cuda::register_elementwise_kernels();
  cuda::register_blas_kernels();
  cuda::register_nn_kernels();
}

}  // namespace tsl
