// What the CUDA tests share (cuda_test.cpp, cuda_fusion_test.cpp): the GPU, and whether
// one is usable here.
#pragma once

#include "runtime/kernels/kernel.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {

inline constexpr Device kGpu{DeviceType::CUDA, 0};

inline bool have_gpu() {
  ensure_kernels_registered();
  return cuda_backend() != nullptr && cuda_backend()->device_count() > 0;
}

}  // namespace tsl
