// Kernels that run on a device as compositions of kernels: the shared kernels' device
// paths (Note [Reductions on every device] in reduction.cpp) call ops through here, so
// each call runs the device's kernel of that op.
#pragma once

#include <utility>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/device_backend.h"

namespace tsl::cpu {

// The first output of `op` on `args`, run on the device of its tensor inputs.
inline Tensor op1(OpId op, std::vector<IValue> args) {
  return call_op(op, std::move(args)).at(0).to_tensor();
}

// The min and max of a non-empty int64 tensor on a device, read back with one wait: the
// range check of indices before a device kernel uses them.
inline std::pair<int64_t, int64_t> device_min_max(const Tensor& t) {
  const IValue all_dims = IValue::int_list(std::vector<int64_t>{});
  Tensor lo_hi = op1(OpId::stack,
                     {IValue::list({IValue(op1(OpId::amin, {IValue(t), all_dims, IValue(false)})),
                                    IValue(op1(OpId::amax, {IValue(t), all_dims, IValue(false)}))}),
                      IValue(int64_t{0})});
  Tensor host = copy_to_device(lo_hi, kCPU);
  return {host.data_ptr<int64_t>()[0], host.data_ptr<int64_t>()[1]};
}

}  // namespace tsl::cpu
