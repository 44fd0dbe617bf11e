// softmax and log_softmax along one dim, shared by the softmax kernels and the
// losses built on them (cross_entropy).
#pragma once

#include "runtime/tensor/tensor.h"

namespace tsl::cpu {

// Softmax (or log-softmax) of a floating tensor along `dim` (already wrapped), in
// x's dtype. Stable: the maximum along dim is subtracted before exp.
Tensor softmax_along(const Tensor& x, int64_t dim, bool log);

}  // namespace tsl::cpu
