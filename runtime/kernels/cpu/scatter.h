// The argument checks of scatter_add, shared with the CUDA kernel so both devices
// accept the same arguments with the same messages.
#pragma once

#include "runtime/tensor/tensor.h"

namespace tsl::cpu {

// PyTorch's scatter_shape_check: index, self and src have as many dims (0-dim counts
// as 1), and index is no larger than src anywhere nor than self off `dim`.
void check_scatter_shapes(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
// Index dtype, self/src dtypes, then the shapes (for a non-empty index); `dim` wrapped.
void check_scatter_add_args(const Tensor& self, int64_t dim, const Tensor& index,
                            const Tensor& src);

}  // namespace tsl::cpu
