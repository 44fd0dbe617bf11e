// Host helpers the CUDA kernels share: strided loops over tensors, conversions on
// the device, and the CPU kernel's verdict on dtypes. See Note [Elementwise loops on
// CUDA] in launch.h.
#pragma once

#include <span>

#include "runtime/kernels/cuda/launch.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/tensor.h"

namespace tsl::cuda {

constexpr Device kCUDA{DeviceType::CUDA, 0};

// The loop over `shape` (the output's, which is ops[0]) for operands that broadcast to
// it; a 0-dim CPU operand becomes a scalar. Merges and drops dims as the Note says.
template <int N>
Loop<N> make_loop(std::span<const int64_t> shape, const Tensor* const (&ops)[N]);

// `t` in `dtype` on the device (itself when it is already; a 0-dim CPU tensor stays,
// it is read as a scalar).
Tensor to_compute(const Tensor& t, DType dtype);

// The dtype of output `out` of `op` on the CPU for the same arguments, or the CPU
// kernel's error: the CPU kernel is run on stand-ins (tensors of the same dtypes and
// ranks with no elements; 0-dim ones hold 1; 0-dim CPU tensors are themselves), so the
// dtype rules and their messages are written once, in the CPU kernels. `in_place`: the
// first input is written, and the others get at most its rank, so that the stand-ins
// meet only the dtype check (the caller checks the shapes, after it, as the CPU does).
DType cpu_result_dtype(OpId op, const KernelArgs& args, uint32_t out = 0, bool in_place = false);

}  // namespace tsl::cuda
