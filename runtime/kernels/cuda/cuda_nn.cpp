// CUDA softmax, log_softmax, nll_loss, cross_entropy and scatter_add (the ops of a
// classifier's forward and backward). Device code in nn.cu; the argument checks are
// the CPU kernels' (cpu/nn_loss.h, cpu/scatter.h).
#include <climits>

#include "runtime/kernels/cpu/nn_loss.h"
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/kernels/cpu/scatter.h"
#include "runtime/kernels/cuda/cuda_context.h"
#include "runtime/kernels/cuda/cuda_tensor.h"
#include "runtime/tensor/device_backend.h"

namespace tsl::cuda {
namespace {

// PyTorch's message for a tensor argument on another device (no scalar exception).
void require_cuda(const Tensor& t) {
  TSL_CHECK(t.device().is_cuda(),
            "Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and ",
            t.device().str(), "!");
}

// An int64 on the device that kernels report a bad value through (INT64_MIN: none).
struct BadValue {
  Tensor flag = Tensor::empty({}, DType::Int64, kCUDA);
  BadValue() { fill_tensor(flag, Scalar(int64_t{INT64_MIN})); }
  int64_t* ptr() const { return static_cast<int64_t*>(flag.raw_data()); }
  // Waits for the GPU: the kernels' verdict.
  std::optional<int64_t> get() const {
    int64_t v = flag.item().to_int();
    return v == INT64_MIN ? std::nullopt : std::optional<int64_t>(v);
  }
};

Tensor softmax_impl(const char* name, const Tensor& self, int64_t dim, std::optional<DType> dtype,
                    bool log) {
  int64_t d = wrap_dim(dim, self.dim());
  Tensor x = dtype ? to_compute(self, *dtype) : self;
  require_cuda(x);
  TSL_CHECK(is_floating(x.dtype()), "\"", name, "_lastdim_kernel_impl\" not implemented for '",
            scalar_type_name(x.dtype()), "'");
  if (x.dim() == 0 || d == x.dim() - 1) {
    Tensor in = x.contiguous();
    Tensor out = Tensor::empty(x.sizes(), x.dtype(), kCUDA);
    int64_t n = x.dim() == 0 ? 1 : x.sizes()[d];
    if (out.numel() > 0)
      launch_softmax_rows(x.dtype(), in.raw_data(), out.raw_data(), out.numel() / n, n, log);
    return out;
  }
  // Move dim last, compute over rows, and lay the result out as x.
  DimVector sizes, strides;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i != d) order.push_back(i);
  }
  order.push_back(d);
  for (int64_t i : order) {
    sizes.push_back(x.sizes()[i]);
    strides.push_back(x.strides()[i]);
  }
  Tensor rows = x.as_strided(sizes, strides, x.storage_offset()).contiguous();
  Tensor result = Tensor::empty(sizes, x.dtype(), kCUDA);
  int64_t n = x.sizes()[d];
  if (result.numel() == 0) return Tensor::empty(x.sizes(), x.dtype(), kCUDA);
  launch_softmax_rows(x.dtype(), rows.raw_data(), result.raw_data(), result.numel() / n, n, log);
  DimVector rs = contiguous_strides(sizes), back(static_cast<size_t>(x.dim()));
  for (size_t i = 0; i < order.size(); ++i) back[static_cast<size_t>(order[i])] = rs[i];
  Tensor out = Tensor::empty(x.sizes(), x.dtype(), kCUDA);
  copy_into(out, result.as_strided(x.sizes(), back, 0));
  return out;
}

Tensor softmax_kernel(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return softmax_impl("softmax", self, dim, dtype, false);
}
Tensor log_softmax_kernel(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return softmax_impl("log_softmax", self, dim, dtype, true);
}

// The sum of every element of a contiguous device tensor, as a 0-dim tensor.
Tensor total(const Tensor& t) {
  Tensor out = Tensor::empty({}, t.dtype(), kCUDA);
  if (t.numel() == 0) {
    fill_tensor(out, Scalar(int64_t{0}));
    return out;
  }
  launch_reduce(DeviceReduce::Sum, t.dtype(), t.dtype(), t.raw_data(), out.raw_data(), 1, t.numel(),
                1, 1.0);
  return out;
}

Tensor class_loss(const Tensor& logp_in, const Tensor& target_in,
                  const std::optional<Tensor>& weight_in, int64_t ignore_index,
                  cpu::Reduction reduction) {
  cpu::ClassLayout l = cpu::class_layout(logp_in, target_in);
  require_cuda(target_in);
  std::optional<Tensor> weight = cpu::checked_weight(weight_in, logp_in, l.classes);
  if (weight) require_cuda(*weight);
  Tensor logp = logp_in.contiguous(), target = target_in.contiguous();
  int64_t count = l.batch * l.spatial;
  Tensor nll = Tensor::empty(DimVector{count}, logp.dtype(), kCUDA);
  Tensor wsum = Tensor::empty(DimVector{count}, logp.dtype(), kCUDA);
  BadValue bad;
  launch_class_nll(logp.dtype(), logp.raw_data(), static_cast<const int64_t*>(target.raw_data()),
                   weight ? weight->raw_data() : nullptr, l.batch, l.classes, l.spatial,
                   ignore_index, nll.raw_data(), wsum.raw_data(), bad.ptr());
  if (std::optional<int64_t> t = bad.get()) TSL_ERROR("Target ", *t, " is out of bounds.");
  if (reduction == cpu::Reduction::None) {
    return nll.as_strided(l.none_shape, contiguous_strides(l.none_shape), 0);
  }
  Tensor sum = total(nll);
  if (reduction == cpu::Reduction::Sum) return sum;
  return call_op(OpId::div, {IValue(sum), IValue(total(wsum)), IValue()}).at(0).to_tensor();
}

Tensor nll_loss_kernel(const Tensor& input, const Tensor& target, std::optional<Tensor> weight,
                       int64_t ignore_index, std::string reduction) {
  cpu::Reduction r = cpu::parse_reduction(reduction);
  TSL_CHECK(is_floating(input.dtype()), "\"nll_loss_out_frame\" not implemented for '",
            scalar_type_name(input.dtype()), "'");
  return class_loss(input, target, weight, ignore_index, r);
}

Tensor cross_entropy_kernel(const Tensor& input, const Tensor& target, std::optional<Tensor> weight,
                            int64_t ignore_index, std::string reduction, double label_smoothing) {
  cpu::Reduction r = cpu::parse_reduction(reduction);
  TSL_CHECK(input.dim() >= 1, "Expected 1 or more dimensions (got ", input.dim(), ")");
  TSL_CHECK(is_floating(input.dtype()), "\"log_softmax_lastdim_kernel_impl\" not implemented for '",
            scalar_type_name(input.dtype()), "'");
  TSL_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
            "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  TSL_CHECK(label_smoothing == 0.0,
            "cross_entropy: label_smoothing is not supported on CUDA yet (use the CPU)");
  int64_t class_dim = input.dim() == 1 ? 0 : 1;
  Tensor logp = softmax_impl("log_softmax", input, class_dim, std::nullopt, true);
  if (is_floating(target.dtype()) && target.sizes() == input.sizes()) {
    // Class probabilities: -sum_c w[c] * p[n, c, s] * logp[n, c, s].
    TSL_CHECK(target.dtype() == input.dtype(), "expected scalar type ",
              scalar_type_name(input.dtype()), " but found ", scalar_type_name(target.dtype()));
    require_cuda(target);
    Tensor prod = call_op(OpId::mul, {IValue(logp), IValue(target)}).at(0).to_tensor();
    if (std::optional<Tensor> w = cpu::checked_weight(weight, input, input.sizes()[class_dim])) {
      DimVector shape{input.sizes()[class_dim]};
      for (int64_t d = class_dim + 1; d < input.dim(); ++d) shape.push_back(1);
      Tensor wv = w->as_strided(shape, contiguous_strides(shape), w->storage_offset());
      prod = call_op(OpId::mul, {IValue(prod), IValue(wv)}).at(0).to_tensor();
    }
    Tensor per =
        call_op(OpId::sum, {IValue(prod), IValue::int_list(std::vector<int64_t>{class_dim}),
                            IValue(false), IValue()})
            .at(0)
            .to_tensor();
    per = call_op(OpId::neg, {IValue(per)}).at(0).to_tensor();
    if (r == cpu::Reduction::None) return per;
    OpId red = r == cpu::Reduction::Mean ? OpId::mean : OpId::sum;
    return call_op(red, {IValue(per), IValue(), IValue(false), IValue()}).at(0).to_tensor();
  }
  return class_loss(logp, target, weight, ignore_index, r);
}

Tensor scatter_add_kernel(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  for (const Tensor* t : {&self, &index, &src}) require_cuda(*t);
  int64_t d = wrap_dim(dim, self.dim());
  cpu::check_scatter_add_args(self, d, index, src);
  Tensor out = call_op(OpId::clone, {IValue(self)}).at(0).to_tensor();
  if (index.numel() == 0) return out;
  // 0-dim tensors are read as one-element vectors (PyTorch's ensure_nonempty).
  auto nonempty = [](const Tensor& t) {
    return t.dim() > 0 ? t : t.as_strided(DimVector{1}, DimVector{1}, t.storage_offset());
  };
  Tensor ix = nonempty(index), sx = nonempty(src), ox = nonempty(out);
  DimVector out_strides = ox.strides();
  int64_t dim_stride = out_strides[d], dim_size = ox.sizes()[d];
  out_strides[d] = 0;  // the index supplies the position along dim
  Tensor ov = ox.as_strided(ix.sizes(), out_strides, ox.storage_offset());
  Tensor sv = sx.as_strided(ix.sizes(), sx.strides(), sx.storage_offset());
  const Tensor* ops[3] = {&ix, &sv, &ov};
  BadValue bad;
  launch_scatter_add(out.dtype(), make_loop<3>(ix.sizes().span(), ops), dim_stride, dim_size,
                     bad.ptr());
  if (std::optional<int64_t> k = bad.get()) {
    TSL_ERROR("index ", *k, " is out of bounds for dimension ", d, " with size ", dim_size);
  }
  return out;
}

}  // namespace

void register_nn_kernels() {
#define TSL_REG(op, fn) register_kernel(DeviceType::CUDA, OpId::op, &boxed<&fn>, boxed_arity<&fn>())
  TSL_REG(softmax, softmax_kernel);
  TSL_REG(log_softmax, log_softmax_kernel);
  TSL_REG(nll_loss, nll_loss_kernel);
  TSL_REG(cross_entropy, cross_entropy_kernel);
  TSL_REG(scatter_add, scatter_add_kernel);
#undef TSL_REG
}

}  // namespace tsl::cuda
