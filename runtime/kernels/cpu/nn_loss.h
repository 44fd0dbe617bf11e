// The argument checks of the class losses (nll_loss, cross_entropy), shared with the
// CUDA kernels so both devices accept the same arguments with the same messages.
#pragma once

#include <optional>

#include "runtime/tensor/tensor.h"

namespace tsl::cpu {

// Input [N, C, S...] (or [C]) read as batch x classes x spatial.
struct ClassLayout {
  int64_t batch = 1;
  int64_t classes = 1;
  int64_t spatial = 1;
  DimVector none_shape;  // the shape of reduction='none'
};

// The layout of `input` for class targets `target` (int64), or PyTorch's error.
ClassLayout class_layout(const Tensor& input, const Tensor& target);
// The per-class weight, checked against `input` and made contiguous; nullopt for none.
std::optional<Tensor> checked_weight(const std::optional<Tensor>& weight, const Tensor& input,
                                     int64_t classes);

}  // namespace tsl::cpu
