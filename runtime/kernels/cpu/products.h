// The product kernels that other kernels build on (einsum contracts with them, baddbmm
// adds to one): bmm (linalg.cpp) and the broadcasting elementwise mul with PyTorch's
// type promotion (elementwise_binary.cpp), with their checks and messages.
#pragma once

#include "runtime/tensor/tensor.h"

namespace tsl::cpu {

// [b, n, m] @ [b, m, p] -> [b, n, p]; same dtype, not bool.
Tensor bmm(const Tensor& self, const Tensor& mat2);
// A 2-D view of a 1-D tensor as a row [1, n] or a column [n, 1] (no copy; any device).
Tensor as_row(const Tensor& v);
Tensor as_column(const Tensor& v);
// self * other, broadcast and promoted as torch.mul.
Tensor mul(const Tensor& self, const Tensor& other);

}  // namespace tsl::cpu
