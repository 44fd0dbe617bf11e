// Helpers shared by the CPU factory kernels (factory.cpp, factory_random.cpp): the
// checks every factory makes on its dtype=, device= and requires_grad= arguments.
#pragma once

#include <optional>
#include <span>

#include "runtime/tensor/tensor.h"

namespace tsl::cpu {

// The device a factory creates on: device=, else the default device (`--device`).
Device factory_device(const std::optional<Device>& device);
// requires_grad=True only for floating dtypes (PyTorch's message).
void check_factory_grad(DType dtype, bool requires_grad);
// A new contiguous CPU tensor after the requires_grad check; the factory fills it and
// finish_factory moves it to its device.
Tensor new_factory_tensor(std::span<const int64_t> sizes, DType dtype,
                          const std::optional<Device>& device, bool requires_grad,
                          const char* name);
// `t` on `device` (factory_device's choice), marked as requiring grad when asked.
// Factories fill host memory and copy it over, so a device gets the CPU's numbers
// (random ones too); large constant fills are made on the device (filled()).
Tensor finish_factory(Tensor t, const std::optional<Device>& device, bool requires_grad);

}  // namespace tsl::cpu
