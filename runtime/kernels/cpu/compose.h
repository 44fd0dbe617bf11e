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

// The range check of an int64 index tensor on a device, with the CPU kernel's message:
// the min and max with one wait, and only when they leave [lo, hi) the CPU's check,
// `check(i)` for each index of a CPU copy in order (it throws on the first bad one).
// Returns the min and max.
template <typename Check>
std::pair<int64_t, int64_t> check_device_indices(const Tensor& idx, int64_t lo, int64_t hi,
                                                 const Check& check) {
  const auto [min, max] = device_min_max(idx);
  if (min < lo || max >= hi) {
    Tensor ids = copy_to_device(idx, kCPU).contiguous();
    const int64_t* id = ids.data_ptr<int64_t>();
    for (int64_t i = 0; i < ids.numel(); ++i) check(id[i]);
  }
  return {min, max};
}

}  // namespace tsl::cpu
