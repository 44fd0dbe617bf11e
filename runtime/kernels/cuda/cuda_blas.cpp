// CUDA matrix products through cuBLAS: mm, bmm, matmul (torch.matmul's rules for 1-D
// and batched operands), linear, mv and dot, all as one strided-batched GEMM.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <string>

#include "runtime/kernels/cpu/products.h"
#include "runtime/kernels/cuda/cuda_context.h"
#include "runtime/kernels/cuda/cuda_tensor.h"
#include "runtime/tensor/device_backend.h"

namespace tsl::cuda {
namespace {

using cpu::as_column;
using cpu::as_row;

void check_blas(cublasStatus_t s, const char* what) {
  TSL_CHECK(s == CUBLAS_STATUS_SUCCESS, "cuBLAS error ", static_cast<int>(s), " (", what, ")");
}

// Note [cuBLAS opened on first use]
// Linked like any library, cuBLAS added ~75 ms to every start of tsl (libcublasLt's
// static initializers run at load), on machines without a GPU and for programs that
// never use CUDA: `tsl -c "print(1)"` took 86 ms instead of ~10. So it is opened with
// dlopen on the first CUDA matrix product, and the five functions TSL calls are looked
// up by name: the soname first (LD_LIBRARY_PATH, the system's folders), then the file
// the build found (TSL_CUBLAS_PATH).
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&cublasSgemmStridedBatched) sgemm = nullptr;
  decltype(&cublasDgemmStridedBatched) dgemm = nullptr;
};

template <typename F>
void look_up(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  TSL_CHECK(fn != nullptr, "CUDA: cuBLAS has no ", name, " (", dlerror(), ")");
}

#define TSL_CUBLAS_STR2(x) #x
#define TSL_CUBLAS_STR(x) TSL_CUBLAS_STR2(x)

const CublasApi& cublas() {
  static const CublasApi api = [] {
    void* lib = dlopen("libcublas.so." TSL_CUBLAS_STR(CUBLAS_VER_MAJOR), RTLD_NOW | RTLD_LOCAL);
#ifdef TSL_CUBLAS_PATH
    if (!lib) lib = dlopen(TSL_CUBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
    TSL_CHECK(lib != nullptr, "CUDA: cannot load cuBLAS (libcublas.so.", CUBLAS_VER_MAJOR,
              "): ", dlerror());
    CublasApi a;
    look_up(lib, "cublasCreate_v2", a.create);
    look_up(lib, "cublasSetStream_v2", a.set_stream);
    look_up(lib, "cublasSetWorkspace_v2", a.set_workspace);
    look_up(lib, "cublasSgemmStridedBatched", a.sgemm);
    look_up(lib, "cublasDgemmStridedBatched", a.dgemm);
    return a;
  }();
  return api;
}

// One handle on TSL's stream, with a workspace from the caching allocator so that
// cuBLAS never calls cudaMalloc itself.
cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    const CublasApi& api = cublas();
    cublasHandle_t created = nullptr;
    check_blas(api.create(&created), "creating a handle");
    check_blas(api.set_stream(created, stream()), "setting the stream");
    static Storage workspace = allocate(size_t{32} << 20, kCUDA);
    check_blas(api.set_workspace(created, workspace->data(), workspace->nbytes()),
               "setting the workspace");
    return created;
  }();
  return h;
}

void check_operands(const Tensor& a, const Tensor& b) {
  check_same_device(a, kCUDA);
  check_same_device(b, kCUDA);
  TSL_CHECK(a.device().is_cuda() && b.device().is_cuda(),
            "Expected all tensors to be on the same device, but found at least two devices, ",
            a.device().str(), " and ", b.device().str(), "!");
  TSL_CHECK(a.dtype() == b.dtype(), "expected scalar type ", scalar_type_name(a.dtype()),
            " but found ", scalar_type_name(b.dtype()));
  TSL_CHECK(is_floating(a.dtype()), "\"addmm_cuda\" not implemented for '",
            scalar_type_name(a.dtype()), "'");
}

// How cuBLAS (column-major) reads a row-major [rows, cols] matrix view: a row-major
// matrix is its transpose in column-major order.
struct ColMajor {
  const void* data;
  cublasOperation_t op;  // applied to the column-major matrix to get the row-major one's T
  int64_t ld;
};

// A [.., rows, cols] operand whose matrices have unit stride in one of their dims, or a
// contiguous copy.
Tensor gemm_ready(const Tensor& t) {
  int64_t n = t.dim();
  int64_t rs = t.strides()[n - 2], cs = t.strides()[n - 1];
  int64_t rows = t.sizes()[n - 2], cols = t.sizes()[n - 1];
  bool row_major = cs == 1 && rs >= std::max<int64_t>(cols, 1);
  bool col_major = rs == 1 && cs >= std::max<int64_t>(rows, 1);
  return row_major || col_major ? t : t.contiguous();
}

// out[b] = A[b] @ B[b] (+ out[b] when accumulate) for row-major [batch, m, k] and
// [batch, k, n] views with batch strides sa and sb (0: shared), out contiguous.
void gemm_batched(const Tensor& a, const Tensor& b, Tensor& out, int64_t batch, int64_t sa,
                  int64_t sb, bool accumulate) {
  int64_t m = a.sizes()[a.dim() - 2], k = a.sizes()[a.dim() - 1], n = b.sizes()[b.dim() - 1];
  if (m == 0 || n == 0 || batch == 0) return;
  if (k == 0) {
    if (!accumulate) fill_tensor(out, Scalar(int64_t{0}));
    return;
  }
  // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS computes with B first.
  auto layout = [](const Tensor& t) {
    int64_t nd = t.dim();
    int64_t rs = t.strides()[nd - 2], cs = t.strides()[nd - 1];
    bool row_major = cs == 1 && rs >= std::max<int64_t>(t.sizes()[nd - 1], 1);
    // Row-major [r, c] with leading dim rs is column-major [c, r]: its transpose, op N.
    return row_major ? ColMajor{t.raw_data(), CUBLAS_OP_N, rs}
                     : ColMajor{t.raw_data(), CUBLAS_OP_T, cs};
  };
  ColMajor A = layout(a), B = layout(b);
  int ldc = static_cast<int>(n);
  TSL_CHECK(m < (int64_t{1} << 31) && n < (int64_t{1} << 31) && k < (int64_t{1} << 31),
            "matmul: matrices of more than 2^31 rows or columns are not supported on CUDA");
  if (a.dtype() == DType::Float32) {
    float one = 1, beta = accumulate ? 1.0f : 0.0f;
    check_blas(
        cublas().sgemm(handle(), B.op, A.op, static_cast<int>(n), static_cast<int>(m),
                       static_cast<int>(k), &one, static_cast<const float*>(B.data),
                       static_cast<int>(B.ld), sb, static_cast<const float*>(A.data),
                       static_cast<int>(A.ld), sa, &beta, static_cast<float*>(out.raw_data()), ldc,
                       m * n, static_cast<int>(batch)),
        "sgemm");
  } else {
    double one = 1, beta = accumulate ? 1.0 : 0.0;
    check_blas(
        cublas().dgemm(handle(), B.op, A.op, static_cast<int>(n), static_cast<int>(m),
                       static_cast<int>(k), &one, static_cast<const double*>(B.data),
                       static_cast<int>(B.ld), sb, static_cast<const double*>(A.data),
                       static_cast<int>(A.ld), sa, &beta, static_cast<double*>(out.raw_data()), ldc,
                       m * n, static_cast<int>(batch)),
        "dgemm");
  }
}

std::string dims_str(const Tensor& t) {
  return std::to_string(t.sizes()[t.dim() - 2]) + "x" + std::to_string(t.sizes()[t.dim() - 1]);
}

Tensor mm_2d(const Tensor& a0, const Tensor& b0) {
  TSL_CHECK(a0.sizes()[1] == b0.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (",
            dims_str(a0), " and ", dims_str(b0), ")");
  Tensor a = gemm_ready(a0), b = gemm_ready(b0);
  Tensor out = Tensor::empty(DimVector{a.sizes()[0], b.sizes()[1]}, a.dtype(), kCUDA);
  gemm_batched(a, b, out, 1, 0, 0, false);
  return out;
}

Tensor mm_kernel(const Tensor& self, const Tensor& mat2) {
  TSL_CHECK(self.dim() == 2, "self must be a matrix");
  TSL_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  check_operands(self, mat2);
  return mm_2d(self, mat2);
}

// [B..., m, k] @ [B..., k, n] with broadcast batch dims: both expanded to the common
// batch and folded into one batch dim (a copy only where an operand broadcasts).
Tensor batched(const Tensor& a, const Tensor& b) {
  int64_t na = a.dim() - 2, nb = b.dim() - 2, nd = std::max(na, nb);
  DimVector batch;
  for (int64_t i = 0; i < nd; ++i) {
    int64_t da = i - (nd - na), db = i - (nd - nb);
    int64_t sa = da >= 0 ? a.sizes()[da] : 1, sb = db >= 0 ? b.sizes()[db] : 1;
    TSL_CHECK(sa == sb || sa == 1 || sb == 1, "The size of tensor a (", sa,
              ") must match the size of tensor b (", sb, ") at non-singleton dimension ", i);
    batch.push_back(sa == 1 ? sb : sa);
  }
  int64_t count = 1;
  for (int64_t s : batch) count *= s;
  int64_t m = a.sizes()[a.dim() - 2], k = a.sizes()[a.dim() - 1];
  int64_t n = b.sizes()[b.dim() - 1];
  if (k != b.sizes()[b.dim() - 2]) {
    TSL_ERROR("Expected size for first two dimensions of batch2 tensor to be: [", count, ", ", k,
              "] but got: [", count, ", ", b.sizes()[b.dim() - 2], "].");
  }
  auto fold = [&](const Tensor& t, int64_t rows, int64_t cols) {
    DimVector full = batch;
    full.push_back(rows);
    full.push_back(cols);
    Tensor e = call_op(OpId::expand, {IValue(t), IValue::int_list(full)}).at(0).to_tensor();
    Tensor c = e.contiguous();
    return c.as_strided(DimVector{count, rows, cols}, DimVector{rows * cols, cols, 1},
                        c.storage_offset());
  };
  Tensor fa = fold(a, m, k), fb = fold(b, k, n);
  DimVector full = batch;
  full.push_back(m);
  full.push_back(n);
  Tensor out = Tensor::empty(full, a.dtype(), kCUDA);
  gemm_batched(fa, fb, out, count, m * k, k * n, false);
  return out;
}

Tensor matmul_kernel(const Tensor& self, const Tensor& other) {
  TSL_CHECK(self.dim() >= 1 && other.dim() >= 1,
            "both arguments to matmul need to be at least 1D, but they are ", self.dim(), "D and ",
            other.dim(), "D");
  check_operands(self, other);
  Tensor a = self.dim() == 1 ? as_row(self) : self;
  Tensor b = other.dim() == 1 ? as_column(other) : other;
  Tensor out;
  if (a.dim() == 2 && b.dim() == 2) {
    if (self.dim() == 1 && other.dim() == 1) {
      TSL_CHECK(self.sizes()[0] == other.sizes()[0], "inconsistent tensor size, expected tensor [",
                self.sizes()[0], "] and src [", other.sizes()[0],
                "] to have the same number of elements, but got ", self.sizes()[0], " and ",
                other.sizes()[0], " elements respectively");
    }
    out = mm_2d(a, b);
  } else if (b.dim() == 2) {
    // Fold a's batch dims into rows: one GEMM of [B*M, K] x [K, N].
    Tensor ac = a.contiguous();
    int64_t k = a.sizes()[a.dim() - 1], rows = ac.numel() / std::max<int64_t>(k, 1);
    if (k == 0) rows = ac.numel() == 0 ? 0 : rows;
    if (k == 0) {
      rows = 1;
      for (int64_t d = 0; d + 1 < ac.dim(); ++d) rows *= ac.sizes()[d];
    }
    TSL_CHECK(k == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", rows, "x", k,
              " and ", dims_str(b), ")");
    Tensor flat = ac.as_strided(DimVector{rows, k}, DimVector{k, 1}, ac.storage_offset());
    out = mm_2d(flat, b);
    DimVector shape(a.sizes());
    shape.back() = b.sizes()[1];
    out = out.as_strided(shape, contiguous_strides(shape), 0);
  } else {
    out = batched(a, b);
  }
  // Drop the dims the 1-D operands were given.
  DimVector shape;
  for (int64_t d = 0; d < out.dim() - 2; ++d) shape.push_back(out.sizes()[d]);
  if (self.dim() > 1) shape.push_back(out.sizes()[out.dim() - 2]);
  if (other.dim() > 1) shape.push_back(out.sizes()[out.dim() - 1]);
  return out.as_strided(shape, contiguous_strides(shape), out.storage_offset());
}

Tensor bmm_kernel(const Tensor& self, const Tensor& mat2) {
  TSL_CHECK(self.dim() == 3, "batch1 must be a 3D tensor");
  TSL_CHECK(mat2.dim() == 3, "batch2 must be a 3D tensor");
  TSL_CHECK(self.sizes()[0] == mat2.sizes()[0] && self.sizes()[2] == mat2.sizes()[1],
            "Expected size for first two dimensions of batch2 tensor to be: [", self.sizes()[0],
            ", ", self.sizes()[2], "] but got: [", mat2.sizes()[0], ", ", mat2.sizes()[1], "].");
  check_operands(self, mat2);
  Tensor a = gemm_ready(self), b = gemm_ready(mat2);
  Tensor out = Tensor::empty(DimVector{a.sizes()[0], a.sizes()[1], b.sizes()[2]}, a.dtype(), kCUDA);
  gemm_batched(a, b, out, a.sizes()[0], a.strides()[0], b.strides()[0], false);
  return out;
}

Tensor mv_kernel(const Tensor& self, const Tensor& vec) {
  TSL_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got ",
            self.dim(), ", ", vec.dim());
  TSL_CHECK(self.sizes()[1] == vec.sizes()[0], "size mismatch, got ", self.sizes()[0], ", ",
            self.sizes()[0], "x", self.sizes()[1], ",", vec.sizes()[0]);
  check_operands(self, vec);
  return mm_2d(self, as_column(vec)).as_strided(DimVector{self.sizes()[0]}, DimVector{1}, 0);
}

Tensor dot_kernel(const Tensor& self, const Tensor& other) {
  TSL_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(),
            "D and ", other.dim(), "D tensors");
  TSL_CHECK(self.dtype() == other.dtype(),
            "dot : expected both vectors to have same dtype, but found ",
            scalar_type_name(self.dtype()), " and ", scalar_type_name(other.dtype()));
  TSL_CHECK(self.sizes()[0] == other.sizes()[0], "inconsistent tensor size, expected tensor [",
            self.sizes()[0], "] and src [", other.sizes()[0],
            "] to have the same number of elements, but got ", self.sizes()[0], " and ",
            other.sizes()[0], " elements respectively");
  check_operands(self, other);
  return mm_2d(as_row(self), as_column(other)).as_strided(DimVector{}, DimVector{}, 0);
}

// input [..., K] @ weight[N, K].T + bias.
Tensor linear_kernel(const Tensor& input, const Tensor& weight, std::optional<Tensor> bias) {
  TSL_CHECK(input.dim() >= 1, "linear: input must have at least 1 dim, got a 0-dim tensor");
  TSL_CHECK(weight.dim() == 2, "linear: weight must be a matrix, got shape ",
            shape_str(weight.sizes()));
  check_operands(input, weight);
  int64_t k = input.sizes()[input.dim() - 1], n = weight.sizes()[0];
  Tensor x = input.contiguous();
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) rows *= x.sizes()[d];
  TSL_CHECK(k == weight.sizes()[1], "mat1 and mat2 shapes cannot be multiplied (", rows, "x", k,
            " and ", weight.sizes()[1], "x", n, ")");
  DimVector shape(input.sizes());
  shape.back() = n;
  Tensor out = Tensor::empty(shape, input.dtype(), kCUDA);
  bool accumulate = bias.has_value() && bias->defined();
  if (accumulate) {
    check_operands(input, *bias);
    DimVector bs = broadcast_shapes(shape, bias->sizes(), "linear");
    TSL_CHECK(bs == shape, "linear: bias of shape ", shape_str(bias->sizes()),
              " does not broadcast to the output shape ", shape_str(shape));
    copy_into(out, *bias);
  }
  Tensor a = x.as_strided(DimVector{rows, k}, DimVector{k, 1}, x.storage_offset());
  Tensor wt = gemm_ready(weight.as_strided(DimVector{k, n},
                                           DimVector{weight.strides()[1], weight.strides()[0]},
                                           weight.storage_offset()));
  Tensor flat = out.as_strided(DimVector{rows, n}, DimVector{n, 1}, 0);
  gemm_batched(a, wt, flat, 1, 0, 0, accumulate);
  return out;
}

}  // namespace

void register_blas_kernels() {
#define TSL_REG(op, fn) register_kernel(DeviceType::CUDA, OpId::op, &boxed<&fn>, boxed_arity<&fn>())
  TSL_REG(mm, mm_kernel);
  TSL_REG(bmm, bmm_kernel);
  TSL_REG(matmul, matmul_kernel);
  TSL_REG(mv, mv_kernel);
  TSL_REG(dot, dot_kernel);
  TSL_REG(linear, linear_kernel);
#undef TSL_REG
}

}  // namespace tsl::cuda
