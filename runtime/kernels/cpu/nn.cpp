// CPU kernels: softmax and log_softmax (stable: the maximum along dim is subtracted
// first). The losses live in nn_loss.cpp.
#include "runtime/kernels/cpu/nn_softmax.h"
#include "runtime/kernels/cpu/reduction_common.h"

namespace tsl {
namespace cpu {
namespace {

// One contiguous row of n elements.
template <typename T>
void softmax_row(const T* x, T* out, int64_t n, bool log) {
  T m = reduce_row(MaxFor<T>{}, x, n);
  if (log) {
    double sum = reduce_row(ExpSumOp<T>{m}, x, n);
    T log_sum = static_cast<T>(std::log(sum));
    for (int64_t i = 0; i < n; ++i) out[i] = (x[i] - m) - log_sum;
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = vec_exp(x[i] - m);
  T inv = static_cast<T>(1.0 / reduce_row(SumOp<T>{}, out, n));
  for (int64_t i = 0; i < n; ++i) out[i] *= inv;
}

// Columns [t0, t0 + w) of one outer block [n, inner].
template <typename T>
void softmax_columns(const T* x, T* out, int64_t n, int64_t inner, int64_t w, bool log) {
  T m[kColumnTile];
  double sum[kColumnTile];
  for (int64_t j = 0; j < w; ++j) {
    m[j] = FloatMaxOp<T>{}.identity();
    sum[j] = 0;
  }
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < w; ++j) m[j] = FloatMaxOp<T>{}.combine(m[j], x[r * inner + j]);
  }
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < w; ++j) {
      T e = vec_exp(x[r * inner + j] - m[j]);
      if (!log) out[r * inner + j] = e;
      sum[j] += static_cast<double>(e);
    }
  }
  T scale[kColumnTile];
  for (int64_t j = 0; j < w; ++j) {
    scale[j] = static_cast<T>(log ? std::log(sum[j]) : 1.0 / sum[j]);
  }
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < w; ++j) {
      int64_t at = r * inner + j;
      out[at] = log ? (x[at] - m[j]) - scale[j] : out[at] * scale[j];
    }
  }
}

template <typename T>
void softmax_typed(const Tensor& x, Tensor& out, int64_t dim, bool log) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= x.sizes()[i];
  for (int64_t i = dim + 1; i < x.dim(); ++i) inner *= x.sizes()[i];
  int64_t n = x.dim() == 0 ? 1 : x.sizes()[dim];
  const T* in = x.data_ptr<T>();
  T* o = out.data_ptr<T>();
  if (inner == 1) {
    parallel_units(outer, 3 * n, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) softmax_row(in + r * n, o + r * n, n, log);
    });
    return;
  }
  int64_t tiles = (inner + kColumnTile - 1) / kColumnTile;
  parallel_units(outer * tiles, 3 * n * kColumnTile, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      int64_t block = u / tiles;
      int64_t t0 = (u % tiles) * kColumnTile;
      int64_t at = block * n * inner + t0;
      softmax_columns(in + at, o + at, n, inner, std::min(kColumnTile, inner - t0), log);
    }
  });
}

Tensor softmax_kernel(const char* name, const Tensor& self, int64_t dim, std::optional<DType> dtype,
                      bool log) {
  int64_t d = wrap_dim(dim, self.dim());
  Tensor x = self;
  if (dtype && *dtype != self.dtype()) {
    x = Tensor::empty(self.sizes(), *dtype);
    copy_into(x, self);
  }
  TSL_CHECK(is_floating(x.dtype()), "\"", name, "_lastdim_kernel_impl\" not implemented for '",
            scalar_type_name(x.dtype()), "'");
  return softmax_along(x, d, log);
}

Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return softmax_kernel("softmax", self, dim, dtype, false);
}

Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return softmax_kernel("log_softmax", self, dim, dtype, true);
}

}  // namespace

Tensor softmax_along(const Tensor& self, int64_t dim, bool log) {
  Tensor x = self.contiguous();
  Tensor out = Tensor::empty(x.sizes(), x.dtype());
  if (x.numel() == 0) return out;
  TSL_DISPATCH_FLOATING(x.dtype(), "softmax", [&] { softmax_typed<scalar_t>(x, out, dim, log); });
  return out;
}

void register_nn_loss_kernels();
void register_conv_kernels();
void register_pool_kernels();
void register_layer_norm_kernels();
void register_embedding_kernels();

}  // namespace cpu

void register_cpu_nn_kernels() {
  TSL_REGISTER_CPU(softmax, cpu::softmax);
  TSL_REGISTER_CPU(log_softmax, cpu::log_softmax);
  cpu::register_nn_loss_kernels();
  cpu::register_conv_kernels();
  cpu::register_pool_kernels();
  cpu::register_layer_norm_kernels();
  cpu::register_embedding_kernels();
}

}  // namespace tsl
