// FusionGroups on a GPU: one kernel per group, generated from its fused program and
// compiled at run time. See Note [Fused kernels on CUDA] in device_kernels.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/fusion/program.h"

namespace tsl::fusion {

// Runs the group's program as one generated kernel on `device` (the device of every
// tensor input); false (nothing written) when this run must take the fallback: another
// dtype or device, an op the program cannot run on these values, no compiled kernel
// yet, or none to be had (NVRTC missing or failing).
bool run_fused_on_device(const FusedGroup& g, KernelArgs& args, Device device);

// The CUDA C++ of the kernel for runs of `key` (defines extern "C" kDeviceKernelSymbol),
// and the number of 8-byte slots of its parameter.
std::string device_kernel_source(const FusedGroup& g, const DeviceVariantKey& key);
int device_kernel_slots(const FusedGroup& g, const DeviceVariantKey& key);
inline constexpr const char* kDeviceKernelSymbol = "tsl_fused";

// How many fused runs used a generated device kernel.
int64_t device_fused_runs();

// The text of runtime/kernels/cuda/formulas.cuh (cuda_formulas_text.cpp, made by CMake).
extern const char* const kCudaFormulasText;

}  // namespace tsl::fusion
