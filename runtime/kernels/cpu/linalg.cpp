// CPU kernels: matrix products (mm, bmm, mv, dot, outer, matmul with torch.matmul's
// rules for 1-D and batched operands, linear). The products themselves run in
// linalg_gemm.cpp; this file checks shapes and dtypes and lays out the batches.
#include <Eigen/Core>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/elementwise_math.h"
#include "runtime/kernels/cpu/linalg_gemm.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/products.h"
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/kernels/cpu/shape_kernels.h"

namespace tsl {
namespace cpu {

Tensor as_row(const Tensor& v) {
  return v.as_strided(DimVector{1, v.sizes()[0]},
                      DimVector{v.sizes()[0] * v.strides()[0], v.strides()[0]}, v.storage_offset());
}
Tensor as_column(const Tensor& v) {
  return v.as_strided(DimVector{v.sizes()[0], 1}, DimVector{v.strides()[0], 1}, v.storage_offset());
}

namespace {

template <typename T>
MatView<T> mat_of(const Tensor& t, int64_t offset = 0) {
  int64_t n = t.dim();
  return {t.data_ptr<T>() + offset, t.sizes()[n - 2], t.sizes()[n - 1], t.strides()[n - 2],
          t.strides()[n - 1]};
}

void check_same_dtype(const Tensor& a, const Tensor& b) {
  TSL_CHECK(a.dtype() == b.dtype(), "expected scalar type ", scalar_type_name(a.dtype()),
            " but found ", scalar_type_name(b.dtype()));
}

void check_not_bool(const Tensor& a) {
  TSL_CHECK(a.dtype() != DType::Bool, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
}

std::string dims_str(const Tensor& t) {
  return str(t.sizes()[t.dim() - 2], "x", t.sizes()[t.dim() - 1]);
}

// out[M, N] = a[M, K] * b[K, N] for 2-D tensors (any strides).
Tensor mm_2d(const Tensor& a, const Tensor& b) {
  TSL_CHECK(a.sizes()[1] == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (",
            dims_str(a), " and ", dims_str(b), ")");
  Tensor out = Tensor::empty(DimVector{a.sizes()[0], b.sizes()[1]}, a.dtype());
  TSL_DISPATCH_NUMERIC(a.dtype(), "mm", [&] {
    gemm<scalar_t>(mat_of<scalar_t>(a), mat_of<scalar_t>(b), out.data_ptr<scalar_t>(), b.sizes()[1],
                   false);
  });
  return out;
}

void check_matrix_operands(const Tensor& a, const Tensor& b) {
  check_same_dtype(a, b);
  check_not_bool(a);
}

Tensor mm(const Tensor& self, const Tensor& mat2) {
  TSL_CHECK(self.dim() == 2, "self must be a matrix");
  TSL_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  check_matrix_operands(self, mat2);
  return mm_2d(self, mat2);
}

// Batched products of [B..., M, K] and [B..., K, N] where the batch dims of each
// operand broadcast to `batch` (stride 0 where an operand is broadcast).
struct BatchLayout {
  DimVector batch;
  DimVector a_strides;  // per batch dim
  DimVector b_strides;
};

// PyTorch's broadcasting of batch dims, with its message.
BatchLayout broadcast_batches(const Tensor& a, const Tensor& b) {
  int64_t na = a.dim() - 2, nb = b.dim() - 2;
  int64_t n = std::max(na, nb);
  BatchLayout l;
  for (int64_t i = 0; i < n; ++i) {
    int64_t da = i - (n - na), db = i - (n - nb);
    int64_t sa = da >= 0 ? a.sizes()[da] : 1, sb = db >= 0 ? b.sizes()[db] : 1;
    TSL_CHECK(sa == sb || sa == 1 || sb == 1, "The size of tensor a (", sa,
              ") must match the size of tensor b (", sb, ") at non-singleton dimension ", i);
    l.batch.push_back(std::max(sa, sb) == 1 ? 1 : (sa == 1 ? sb : sa));
    l.a_strides.push_back(sa == 1 ? 0 : a.strides()[da]);
    l.b_strides.push_back(sb == 1 ? 0 : b.strides()[db]);
  }
  return l;
}

template <typename T>
void batched_gemm(const Tensor& a, const Tensor& b, const BatchLayout& l, Tensor& out) {
  int64_t count = 1;
  for (int64_t s : l.batch) count *= s;
  MatView<T> ma = mat_of<T>(a), mb = mat_of<T>(b);
  int64_t m = ma.rows, n = mb.cols;
  T* c = out.data_ptr<T>();
  bool small = m * n * ma.cols < kGemmParallelWork;
  auto run_range = [&](int64_t begin, int64_t end) {
    int64_t nd = static_cast<int64_t>(l.batch.size());
    for (int64_t bi = begin; bi < end; ++bi) {
      int64_t rest = bi, oa = 0, ob = 0;
      for (int64_t d = nd - 1; d >= 0; --d) {
        int64_t idx = rest % l.batch[d];
        rest /= l.batch[d];
        oa += idx * l.a_strides[d];
        ob += idx * l.b_strides[d];
      }
      MatView<T> xa = ma, xb = mb;
      xa.data += oa;
      xb.data += ob;
      gemm<T>(xa, xb, c + bi * m * n, n, false, !small);
    }
  };
  if (small && count > 1 && count * m * n * ma.cols >= kGemmParallelWork) {
    parallel_for(count, 1, run_range);
  } else {
    run_range(0, count);
  }
}

}  // namespace

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  TSL_CHECK(self.dim() == 3, "batch1 must be a 3D tensor");
  TSL_CHECK(mat2.dim() == 3, "batch2 must be a 3D tensor");
  TSL_CHECK(self.sizes()[0] == mat2.sizes()[0] && self.sizes()[2] == mat2.sizes()[1],
            "Expected size for first two dimensions of batch2 tensor to be: [", self.sizes()[0],
            ", ", self.sizes()[2], "] but got: [", mat2.sizes()[0], ", ", mat2.sizes()[1], "].");
  check_matrix_operands(self, mat2);
  BatchLayout l = broadcast_batches(self, mat2);
  Tensor out =
      Tensor::empty(DimVector{self.sizes()[0], self.sizes()[1], mat2.sizes()[2]}, self.dtype());
  TSL_DISPATCH_NUMERIC(self.dtype(), "bmm", [&] { batched_gemm<scalar_t>(self, mat2, l, out); });
  return out;
}

namespace {

Tensor mv(const Tensor& self, const Tensor& vec) {
  TSL_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got ",
            self.dim(), ", ", vec.dim());
  TSL_CHECK(self.sizes()[1] == vec.sizes()[0], "size mismatch, got ", self.sizes()[0], ", ",
            self.sizes()[0], "x", self.sizes()[1], ",", vec.sizes()[0]);
  check_matrix_operands(self, vec);
  Tensor out = mm_2d(self, as_column(vec));
  return out.as_strided(DimVector{self.sizes()[0]}, DimVector{1}, 0);
}

template <typename T>
T dot_typed(const Tensor& a, const Tensor& b) {
  int64_t n = a.sizes()[0];
  const T* x = a.data_ptr<T>();
  const T* y = b.data_ptr<T>();
  if constexpr (std::is_same_v<T, int64_t>) {
    uint64_t acc = 0;
    for (int64_t i = 0; i < n; ++i) {
      acc += static_cast<uint64_t>(x[i * a.strides()[0]]) *
             static_cast<uint64_t>(y[i * b.strides()[0]]);
    }
    return static_cast<int64_t>(acc);
  } else {
    using Vec = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>, Eigen::Unaligned,
                           Eigen::InnerStride<>>;
    // From a zero accumulator, as BLAS's dot: products that are all -0 sum to +0.
    return T(0) + Vec(x, n, Eigen::InnerStride<>(a.strides()[0]))
                      .dot(Vec(y, n, Eigen::InnerStride<>(b.strides()[0])));
  }
}

Tensor dot(const Tensor& self, const Tensor& other) {
  TSL_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(),
            "D and ", other.dim(), "D tensors");
  TSL_CHECK(self.dtype() == other.dtype(),
            "dot : expected both vectors to have same dtype, but found ",
            scalar_type_name(self.dtype()), " and ", scalar_type_name(other.dtype()));
  TSL_CHECK(self.sizes()[0] == other.sizes()[0], "inconsistent tensor size, expected tensor [",
            self.sizes()[0], "] and src [", other.sizes()[0],
            "] to have the same number of elements, but got ", self.sizes()[0], " and ",
            other.sizes()[0], " elements respectively");
  TSL_CHECK(self.dtype() != DType::Bool, "\"dot\" not implemented for 'Bool'");
  Tensor out = Tensor::empty({}, self.dtype());
  TSL_DISPATCH_NUMERIC(self.dtype(), "dot",
                       [&] { *out.data_ptr<scalar_t>() = dot_typed<scalar_t>(self, other); });
  return out;
}

template <typename T>
void outer_typed(const Tensor& a, const Tensor& b, Tensor& out) {
  int64_t m = a.sizes()[0], n = b.sizes()[0];
  const T* x = a.data_ptr<T>();
  const T* y = b.data_ptr<T>();
  T* o = out.data_ptr<T>();
  int64_t sx = a.strides()[0], sy = b.strides()[0];
  for (int64_t i = 0; i < m; ++i) {
    T xi = x[i * sx];
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (std::is_same_v<T, bool>)
        o[i * n + j] = xi && y[j * sy];
      else if constexpr (std::is_same_v<T, int64_t>)
        o[i * n + j] = wrapping_mul(xi, y[j * sy]);
      else
        o[i * n + j] = xi * y[j * sy];
    }
  }
}

Tensor outer(const Tensor& self, const Tensor& vec2) {
  TSL_CHECK(self.dim() == 1, "outer: Expected 1-D argument self, but got ", self.dim(), "-D");
  TSL_CHECK(vec2.dim() == 1, "outer: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  if (!self.device().is_cpu() || !vec2.device().is_cpu()) {
    // On a device: self as a column times vec2 as a row (mul promotes as outer does and
    // checks the devices).
    Tensor column = self.as_strided(DimVector{self.sizes()[0], 1}, DimVector{self.strides()[0], 1},
                                    self.storage_offset());
    Tensor row = vec2.as_strided(DimVector{1, vec2.sizes()[0]}, DimVector{1, vec2.strides()[0]},
                                 vec2.storage_offset());
    return op1(OpId::mul, {IValue(column), IValue(row)});
  }
  DType t = promote_types(self.dtype(), vec2.dtype());
  Tensor a = self, b = vec2;
  if (a.dtype() != t) {
    a = Tensor::empty(self.sizes(), t);
    copy_into(a, self);
  }
  if (b.dtype() != t) {
    b = Tensor::empty(vec2.sizes(), t);
    copy_into(b, vec2);
  }
  Tensor out = Tensor::empty(DimVector{a.sizes()[0], b.sizes()[0]}, t);
  TSL_DISPATCH_ALL(t, "outer", [&] { outer_typed<scalar_t>(a, b, out); });
  return out;
}

// The product of all sizes but the last: the rows of t seen as a matrix.
int64_t leading_rows(const Tensor& t) {
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < t.dim(); ++d) rows *= t.sizes()[d];
  return rows;
}

// Shapes of the general matmul: batch dims broadcast, then [M, K] x [K, N].
Tensor matmul_batched(const Tensor& self, const Tensor& other) {
  Tensor a = self.dim() == 1 ? as_row(self) : self;
  Tensor b = other.dim() == 1 ? as_column(other) : other;
  int64_t k = a.sizes()[a.dim() - 1];
  if (b.dim() == 2) {
    // Fold a's batch dims into rows: one GEMM of [B*M, K] x [K, N].
    Tensor ac = a.contiguous();
    int64_t rows = leading_rows(ac);
    TSL_CHECK(k == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", rows, "x", k,
              " and ", dims_str(b), ")");
    Tensor flat = ac.as_strided(DimVector{rows, k}, DimVector{k, 1}, ac.storage_offset());
    Tensor out = mm_2d(flat, b);
    DimVector shape(self.sizes());
    if (other.dim() == 1)
      shape.erase(shape.size() - 1);
    else
      shape.back() = b.sizes()[1];
    return out.as_strided(shape, contiguous_strides(shape), 0);
  }
  BatchLayout l = broadcast_batches(a, b);
  int64_t m = a.sizes()[a.dim() - 2], n = b.sizes()[b.dim() - 1];
  if (k != b.sizes()[b.dim() - 2]) {
    int64_t count = 1;
    for (int64_t s : l.batch) count *= s;
    TSL_ERROR("Expected size for first two dimensions of batch2 tensor to be: [", count, ", ", k,
              "] but got: [", count, ", ", b.sizes()[b.dim() - 2], "].");
  }
  DimVector full = l.batch;
  full.push_back(m);
  full.push_back(n);
  Tensor out = Tensor::empty(full, a.dtype());
  TSL_DISPATCH_NUMERIC(a.dtype(), "matmul", [&] { batched_gemm<scalar_t>(a, b, l, out); });
  DimVector shape = l.batch;
  if (self.dim() > 1) shape.push_back(m);
  if (other.dim() > 1) shape.push_back(n);
  return out.as_strided(shape, contiguous_strides(shape), 0);
}

Tensor matmul(const Tensor& self, const Tensor& other) {
  TSL_CHECK(self.dim() >= 1 && other.dim() >= 1,
            "both arguments to matmul need to be at least 1D, but they are ", self.dim(), "D and ",
            other.dim(), "D");
  if (self.dim() == 1 && other.dim() == 1) return dot(self, other);
  check_matrix_operands(self, other);
  if (self.dim() == 2 && other.dim() == 1) return mv(self, other);
  if (self.dim() == 2 && other.dim() == 2) return mm_2d(self, other);
  return matmul_batched(self, other);
}

// input [..., K] @ weight[N, K].T + bias.
Tensor linear(const Tensor& input, const Tensor& weight, std::optional<Tensor> bias) {
  TSL_CHECK(input.dim() >= 1, "linear: input must have at least 1 dim, got a 0-dim tensor");
  TSL_CHECK(weight.dim() == 2, "linear: weight must be a matrix, got shape ",
            shape_str(weight.sizes()));
  check_matrix_operands(input, weight);
  int64_t k = input.sizes()[input.dim() - 1];
  int64_t n = weight.sizes()[0];
  Tensor x = input.contiguous();
  int64_t rows = leading_rows(x);
  TSL_CHECK(k == weight.sizes()[1], "mat1 and mat2 shapes cannot be multiplied (", rows, "x", k,
            " and ", weight.sizes()[1], "x", n, ")");
  DimVector shape(input.sizes());
  shape.back() = n;
  Tensor out = Tensor::empty(shape, input.dtype());
  bool accumulate = bias.has_value() && bias->defined();
  if (accumulate) {
    check_same_dtype(input, *bias);
    DimVector b = broadcast_shapes(shape, bias->sizes(), "linear");
    TSL_CHECK(b == shape, "linear: bias of shape ", shape_str(bias->sizes()),
              " does not broadcast to the output shape ", shape_str(shape));
    copy_into(out, *bias);
  }
  TSL_DISPATCH_NUMERIC(input.dtype(), "linear", [&] {
    MatView<scalar_t> a{x.data_ptr<scalar_t>(), rows, k, k, 1};
    MatView<scalar_t> wt{weight.data_ptr<scalar_t>(), k, n, weight.strides()[1],
                         weight.strides()[0]};
    gemm<scalar_t>(a, wt, out.data_ptr<scalar_t>(), n, accumulate);
  });
  return out;
}

// beta * self + alpha * bmm(batch1, batch2) in batch1's dtype (self, broadcast to the
// product's shape, is converted; alpha and beta too: 1.5 is 1 for int64 tensors). With
// beta 0 self is not read, so its NaNs do not propagate (PyTorch's rule).
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, Scalar beta,
               Scalar alpha) {
  if (!batch1.device().is_cpu() || !batch2.device().is_cpu()) {
    // On a device: the same sum of the device's kernels, alpha and beta in the product's
    // dtype first.
    Tensor product = op1(OpId::bmm, {IValue(batch1), IValue(batch2)});
    check_same_device(self, product.device());
    const DType t = product.dtype();
    auto in_dtype = [&](Scalar s) {
      return is_floating(t) ? IValue(s.to_double()) : IValue(s.to<int64_t>());
    };
    Tensor scaled = op1(OpId::mul, {IValue(product), in_dtype(alpha)});
    if (beta.to_double() == 0) return scaled;
    Tensor added = to_dtype_copy(
        expand(self, std::vector<int64_t>(product.sizes().begin(), product.sizes().end())), t);
    Tensor kept = op1(OpId::mul, {IValue(added), in_dtype(beta)});
    return op1(OpId::add, {IValue(kept), IValue(scaled), IValue(int64_t{1})});
  }
  Tensor product = bmm(batch1, batch2);
  Tensor added = to_dtype_copy(
      expand(self, std::vector<int64_t>(product.sizes().begin(), product.sizes().end())),
      product.dtype());
  bool beta_zero = beta.to_double() == 0;
  Tensor out = Tensor::empty(product.sizes(), product.dtype());
  TSL_DISPATCH_NUMERIC(product.dtype(), "baddbmm", [&] {
    using T = scalar_t;
    T b = beta.to<T>(), a = alpha.to<T>();
    binary_into<T, T>(out, added, product, [=](T s, T p) {
      T scaled = math::wrap_mul(a, p);
      return beta_zero ? scaled : math::wrap_add(math::wrap_mul(b, s), scaled);
    });
  });
  return out;
}

}  // namespace

void register_diagonal_kernels();
void register_einsum_kernels();

}  // namespace cpu

void register_cpu_linalg_kernels() {
  TSL_REGISTER_CPU(matmul, cpu::matmul);
  TSL_REGISTER_CPU(mm, cpu::mm);
  TSL_REGISTER_CPU(bmm, cpu::bmm);
  TSL_REGISTER_CPU(mv, cpu::mv);
  TSL_REGISTER_CPU(dot, cpu::dot);
  TSL_REGISTER_CPU(outer, cpu::outer);
  TSL_REGISTER_CPU(linear, cpu::linear);
  TSL_REGISTER_CPU(baddbmm, cpu::baddbmm);
  cpu::register_diagonal_kernels();
  cpu::register_einsum_kernels();
}

}  // namespace tsl
