// Helpers shared by the CPU factory kernels (factory.cpp, factory_random.cpp): the
// checks every factory makes on its dtype=, device= and requires_grad= arguments.
#pragma once

#include <optional>
#include <span>

#include "runtime/tensor/tensor.h"

namespace tsl::cpu {

// device= other than the CPU is an error until CUDA kernels exist.
void check_factory_device(const std::optional<Device>& device, const char* name);
// requires_grad=True only for floating dtypes (PyTorch's message).
void check_factory_grad(DType dtype, bool requires_grad);
// A new contiguous CPU tensor after both checks.
Tensor new_factory_tensor(std::span<const int64_t> sizes, DType dtype,
                          const std::optional<Device>& device, bool requires_grad,
                          const char* name);
// Marks `t` as requiring grad when asked; returns it.
Tensor finish_factory(Tensor t, bool requires_grad);

}  // namespace tsl::cpu
