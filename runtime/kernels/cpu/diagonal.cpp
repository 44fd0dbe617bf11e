// CPU kernels of the ops defined by a matrix's diagonals: tril and triu (the parts on
// either side of one diagonal, over the last two dims), diag (one diagonal as a vector,
// or a vector as one diagonal of a square matrix) and diag_backward, diag's adjoint.
#include <algorithm>
#include <cstring>

#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/tensor/device_backend.h"

namespace tsl::cpu {
namespace {

// out = x where keep(row, column), else 0, over each [rows, cols] matrix of the last two
// dims. x is contiguous; out is new and contiguous.
template <typename T, typename Keep>
void mask_triangle(const T* x, T* out, int64_t batch, int64_t rows, int64_t cols,
                   const Keep& keep) {
  parallel_units(batch * rows, cols, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      int64_t i = u % rows;
      const T* in = x + u * cols;
      T* o = out + u * cols;
      for (int64_t j = 0; j < cols; ++j) o[j] = keep(i, j) ? in[j] : T(0);
    }
  });
}

Tensor triangle(const Tensor& self, int64_t diagonal, bool lower) {
  TSL_CHECK(self.dim() >= 2, lower ? "tril" : "triu",
            ": input tensor must have at least 2 dimensions, got ", self.dim());
  if (!self.device().is_cpu()) {
    // On a device: `where` with the [rows, cols] mask of the kept elements, made here.
    int64_t rows = self.size(-2), cols = self.size(-1);
    Tensor mask = Tensor::empty(DimVector{rows, cols}, DType::Bool);
    bool* m = mask.data_ptr<bool>();
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j)
        m[i * cols + j] = lower ? j - i <= diagonal : j - i >= diagonal;
    }
    Tensor zero = Tensor::scalar(Scalar(int64_t{0}), self.dtype());
    return call_op(OpId::where,
                   {IValue(copy_to_device(mask, self.device())), IValue(self), IValue(zero)})
        .at(0)
        .to_tensor();
  }
  Tensor x = self.contiguous();
  Tensor out = Tensor::empty(x.sizes(), x.dtype());
  if (x.numel() == 0) return out;
  int64_t rows = x.size(-2), cols = x.size(-1);
  int64_t batch = x.numel() / (rows * cols);
  TSL_DISPATCH_ALL(x.dtype(), lower ? "tril" : "triu", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    if (lower) {
      mask_triangle(in, o, batch, rows, cols,
                    [&](int64_t i, int64_t j) { return j - i <= diagonal; });
    } else {
      mask_triangle(in, o, batch, rows, cols,
                    [&](int64_t i, int64_t j) { return j - i >= diagonal; });
    }
  });
  return out;
}

Tensor tril(const Tensor& self, int64_t diagonal) { return triangle(self, diagonal, true); }
Tensor triu(const Tensor& self, int64_t diagonal) { return triangle(self, diagonal, false); }

// Where diagonal `d` of a [rows, cols] matrix starts and how long it is; an error when
// it lies outside the matrix (PyTorch fails there too, with a message about overflow).
struct DiagonalSpan {
  int64_t row0, col0, length;
};
DiagonalSpan diagonal_span(int64_t rows, int64_t cols, int64_t d) {
  int64_t row0 = std::max<int64_t>(-d, 0), col0 = std::max<int64_t>(d, 0);
  int64_t length = std::min(rows - row0, cols - col0);
  TSL_CHECK(length >= 0, "diag(): diagonal ", d, " is outside a matrix of size ",
            shape_str(DimVector{rows, cols}));
  return {row0, col0, length};
}

// The elements of diagonal `d` of the [rows, cols] matrix m as a new vector.
Tensor matrix_diagonal(const Tensor& m, int64_t d) {
  DiagonalSpan s = diagonal_span(m.sizes()[0], m.sizes()[1], d);
  int64_t step = m.strides()[0] + m.strides()[1];
  int64_t start = m.storage_offset() + s.row0 * m.strides()[0] + s.col0 * m.strides()[1];
  Tensor view = m.as_strided(DimVector{s.length}, DimVector{step}, start);
  Tensor out = Tensor::empty(DimVector{s.length}, m.dtype(), m.device());
  copy_into(out, view);
  return out;
}

// A zero matrix of `sizes` with the vector v written into its diagonal `d`.
Tensor embed_diagonal(const Tensor& v, std::span<const int64_t> sizes, int64_t d) {
  Tensor out = Tensor::empty(sizes, v.dtype(), v.device());
  fill_tensor(out, Scalar(int64_t{0}));
  DiagonalSpan s = diagonal_span(sizes[0], sizes[1], d);
  TSL_CHECK(s.length == v.numel(), "diag_backward: a gradient of ", v.numel(),
            " elements for a diagonal of ", s.length);
  int64_t cols = sizes[1];
  Tensor view = out.as_strided(DimVector{s.length}, DimVector{cols + 1}, s.row0 * cols + s.col0);
  copy_into(view, v);
  return out;
}

Tensor diag(const Tensor& self, int64_t diagonal) {
  TSL_CHECK(self.dim() == 1 || self.dim() == 2, "matrix or a vector expected");
  if (self.dim() == 2) return matrix_diagonal(self, diagonal);
  int64_t n = self.sizes()[0] + (diagonal < 0 ? -diagonal : diagonal);
  return embed_diagonal(self, DimVector{n, n}, diagonal);
}

// The adjoint of diag: for a vector input the gradient is a [n, n] matrix whose
// diagonal goes back; for a matrix input, a vector written into a zero matrix.
Tensor diag_backward(const Tensor& grad, std::vector<int64_t> input_size, int64_t diagonal) {
  TSL_CHECK(input_size.size() == 1 || input_size.size() == 2,
            "diag_backward: expected the size of a vector or a matrix, got ",
            shape_str(input_size));
  if (input_size.size() == 2) return embed_diagonal(grad.contiguous(), input_size, diagonal);
  TSL_CHECK(grad.dim() == 2, "diag_backward: expected a matrix gradient, got ",
            shape_str(grad.sizes()));
  Tensor v = matrix_diagonal(grad, diagonal);
  TSL_CHECK(v.numel() == input_size[0], "diag_backward: a diagonal of ", v.numel(),
            " elements for an input of size ", shape_str(input_size));
  return v;
}

}  // namespace

void register_diagonal_kernels() {
  TSL_REGISTER_CPU(tril, tril);
  TSL_REGISTER_CPU(triu, triu);
  TSL_REGISTER_CPU(diag, diag);
  TSL_REGISTER_CPU(diag_backward, diag_backward);
}

}  // namespace tsl::cpu
