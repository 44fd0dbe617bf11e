// The CUDA backend's host side: the DeviceBackend (copies across devices, fill), the
// elementwise kernels (dtypes, broadcasting, in-place writes) and their registration.
// The device code is elementwise_unary.cu and elementwise.cu. See Note [The CUDA backend] in
// cuda_context.h.
#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <string>

#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cuda/cuda_context.h"
#include "runtime/kernels/cuda/cuda_tensor.h"
#include "runtime/tensor/device_backend.h"
#include "runtime/tensor/grad_mode.h"
#include "runtime/tensor/memory_overlap.h"

namespace tsl::cuda {

static_assert(static_cast<int>(ReduceKind::All) == static_cast<int>(DeviceReduce::All) &&
              static_cast<int>(ReduceKind::Sum) == static_cast<int>(DeviceReduce::Sum));

void unsupported(const char* kind, OpId op) {
  TSL_INTERNAL_ASSERT(false, "CUDA ", kind, " kernel launched for ", op_info(op).name,
                      " with dtypes it has no formula for");
  std::abort();
}

template <int N>
Loop<N> make_loop(std::span<const int64_t> shape, const Tensor* const (&ops)[N]) {
  Loop<N> l;
  l.numel = 1;
  for (int64_t s : shape) l.numel *= s;
  // Per operand, its strides over `shape` (0 where it broadcasts).
  DimVector strides[N];
  bool scalar[N];
  for (int k = 0; k < N; ++k) {
    const Tensor& t = *ops[k];
    scalar[k] = t.device().is_cpu();
    if (scalar[k]) {
      TSL_INTERNAL_ASSERT(t.dim() == 0, "make_loop: a CPU operand with dims");
      Scalar v = t.item();
      l.op[k].scalar = v.to_double();
      l.op[k].int_scalar = v.is_floating() ? static_cast<int64_t>(v.to_double()) : v.to_int();
      strides[k] = DimVector(shape.size(), 0);
    } else {
      l.op[k].data = static_cast<char*>(t.raw_data());
      strides[k] = cpu::broadcast_strides(t, shape);
    }
  }
  // Dims of size 1 go; a dim merges into the next inner one when every operand steps
  // over the inner one's whole extent.
  int64_t sizes[64];
  int64_t st[N][64];
  int nd = 0;
  TSL_CHECK(shape.size() <= 64, "CUDA kernels take tensors of at most 64 dims");
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (nd > 0) {
      bool merge = true;
      for (int k = 0; k < N; ++k) merge &= st[k][nd - 1] == strides[k][d] * shape[d];
      if (merge) {
        sizes[nd - 1] *= shape[d];
        for (int k = 0; k < N; ++k) st[k][nd - 1] = strides[k][d];
        continue;
      }
    }
    sizes[nd] = shape[d];
    for (int k = 0; k < N; ++k) st[k][nd] = strides[k][d];
    ++nd;
  }
  TSL_CHECK(nd <= kMaxDims, "CUDA kernels take at most ", kMaxDims,
            " dims that cannot be merged; got ", nd);
  l.ndim = nd;
  bool flat = nd <= 1;
  for (int d = 0; d < nd; ++d) l.sizes[d] = sizes[d];
  for (int k = 0; k < N; ++k) {
    for (int d = 0; d < nd; ++d) l.op[k].strides[d] = st[k][d];
    if (!scalar[k] && nd == 1 && st[k][0] != 1) flat = false;
  }
  l.flat = flat;
  return l;
}

template Loop<1> make_loop<1>(std::span<const int64_t>, const Tensor* const (&)[1]);
template Loop<2> make_loop<2>(std::span<const int64_t>, const Tensor* const (&)[2]);
template Loop<3> make_loop<3>(std::span<const int64_t>, const Tensor* const (&)[3]);
template Loop<4> make_loop<4>(std::span<const int64_t>, const Tensor* const (&)[4]);

Tensor to_compute(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype || (t.device().is_cpu() && t.dim() == 0)) return t;
  Tensor out = Tensor::empty(t.sizes(), dtype, kCUDA);
  copy_into(out, t);
  return out;
}

DType cpu_result_dtype(OpId op, const KernelArgs& args, uint32_t out, bool in_place) {
  int64_t max_rank = INT64_MAX;
  if (in_place && args.in(0).is_tensor() && args.in(0).tensor_impl()) {
    max_rank = args.in(0).tensor_impl()->dim();
  }
  std::vector<IValue> regs;
  regs.reserve(args.num_inputs() + args.num_outputs());
  for (uint32_t i = 0; i < args.num_inputs(); ++i) {
    const IValue& v = args.in(i);
    if (v.is_tensor() && v.tensor_impl() != nullptr && !v.tensor_impl()->device().is_cpu()) {
      const Tensor t = v.to_tensor();
      int64_t rank = std::min(t.dim(), max_rank);
      if (rank == 0) {
        regs.emplace_back(Tensor::scalar(Scalar(int64_t{1}), t.dtype()));
      } else {
        DimVector zeros(static_cast<size_t>(rank), 0);
        regs.emplace_back(Tensor::empty(zeros, t.dtype()));
      }
    } else {
      regs.push_back(v);
    }
  }
  regs.resize(args.num_inputs() + args.num_outputs());
  std::vector<uint32_t> in_idx(args.num_inputs()), out_idx(args.num_outputs());
  for (uint32_t i = 0; i < args.num_inputs(); ++i) in_idx[i] = i;
  for (uint32_t i = 0; i < args.num_outputs(); ++i) out_idx[i] = args.num_inputs() + i;
  KernelArgs stand_in(regs.data(), in_idx.data(), args.num_inputs(), out_idx.data(),
                      args.num_outputs());
  KernelFn cpu = lookup_kernel(DeviceType::CPU, op).fn;
  TSL_INTERNAL_ASSERT(cpu != nullptr, "no CPU kernel for ", op_info(op).name);
  cpu(stand_in);
  return stand_in.out(out).to_tensor().dtype();
}

namespace {

// ---- The DeviceBackend ----------------------------------------------------------------

class CudaBackend final : public DeviceBackend {
 public:
  int device_count() override { return cuda::device_count(); }
  std::string unavailable_reason() override { return cuda::unavailable_reason(); }

  void copy(const Tensor& dst, const Tensor& src) override {
    if (dst.numel() == 0) return;
    if (!dst.device().is_cpu() && !src.device().is_cpu()) {
      const Tensor* ops[2] = {&dst, &src};
      launch_copy(dst.dtype(), src.dtype(), make_loop<2>(dst.sizes().span(), ops));
      return;
    }
    if (!dst.device().is_cpu()) {  // host to device
      Tensor host = src;
      if (!src.is_contiguous() || src.dtype() != dst.dtype() || src.sizes() != dst.sizes()) {
        host = Tensor::empty(dst.sizes(), dst.dtype(), kCPU);
        copy_into(host, src);
      }
      Tensor target = dst.is_contiguous() ? dst : Tensor::empty(dst.sizes(), dst.dtype(), kCUDA);
      // From pageable memory the call returns once the bytes are staged, so `host` may
      // be freed after it.
      check(cudaMemcpyAsync(target.raw_data(), host.raw_data(), dst.nbytes(),
                            cudaMemcpyHostToDevice, stream()),
            "copying to the GPU");
      if (!target.is_same(dst)) copy(dst, target);
      return;
    }
    // Device to host: the device's bytes made contiguous there, copied, then laid out.
    Tensor dev = src.is_contiguous() && src.numel() == dst.numel() ? src : Tensor();
    if (!dev.defined()) {
      dev = Tensor::empty(dst.sizes(), src.dtype(), kCUDA);
      copy(dev, src);
    }
    Tensor host = Tensor::empty(dev.sizes(), dev.dtype(), kCPU);
    check(cudaMemcpyAsync(host.raw_data(), dev.raw_data(), host.nbytes(), cudaMemcpyDeviceToHost,
                          stream()),
          "copying from the GPU");
    cuda::synchronize("copying from the GPU");
    Tensor viewed = host.as_strided(dst.sizes(), contiguous_strides(dst.sizes()), 0);
    copy_into(dst, viewed);
  }

  void fill(const Tensor& dst, Scalar value) override {
    if (dst.numel() == 0) return;
    Tensor v = Tensor::scalar(value, value.is_floating() ? DType::Float64
                                     : value.is_bool()   ? DType::Bool
                                                         : DType::Int64);
    const Tensor* ops[2] = {&dst, &v};
    launch_copy(dst.dtype(), v.dtype(), make_loop<2>(dst.sizes().span(), ops));
  }

  void reduce(ReduceKind kind, const Tensor& input, int64_t outer, int64_t reduce, int64_t inner,
              const Tensor& out, double divisor) override {
    TSL_INTERNAL_ASSERT(input.is_contiguous() && out.is_contiguous(), "reduce: layouts");
    launch_reduce(static_cast<DeviceReduce>(kind), input.dtype(), out.dtype(), input.raw_data(),
                  out.raw_data(), outer, reduce, inner, divisor);
  }

  void arg_reduce(bool max, const Tensor& input, int64_t outer, int64_t reduce, int64_t inner,
                  const Tensor& values, const Tensor& indices) override {
    TSL_INTERNAL_ASSERT(input.is_contiguous() && indices.is_contiguous(), "arg_reduce: layouts");
    launch_arg_reduce(max, input.dtype(), input.raw_data(),
                      values.defined() ? values.raw_data() : nullptr,
                      static_cast<int64_t*>(indices.raw_data()), outer, reduce, inner);
  }

  std::optional<int64_t> gather(const Tensor& out, const Tensor& index, const Tensor& src,
                                int64_t dim_stride, int64_t dim_size) override {
    if (out.numel() == 0) return std::nullopt;
    Tensor bad = Tensor::empty({}, DType::Int64, kCUDA);
    fill_tensor(bad, Scalar(int64_t{INT64_MIN}));
    const Tensor* ops[3] = {&out, &index, &src};
    launch_gather(out.dtype(), make_loop<3>(out.sizes().span(), ops), dim_stride, dim_size,
                  static_cast<int64_t*>(bad.raw_data()));
    int64_t v = bad.item().to_int();
    return v == INT64_MIN ? std::nullopt : std::optional<int64_t>(v);
  }

  void cumsum(const Tensor& input, int64_t outer, int64_t n, int64_t inner,
              const Tensor& out) override {
    TSL_INTERNAL_ASSERT(input.is_contiguous() && out.is_contiguous(), "cumsum: layouts");
    launch_cumsum(input.dtype(), out.dtype(), input.raw_data(), out.raw_data(), outer, n, inner);
  }

  void sort_rows(const Tensor& input, int64_t rows, int64_t n, bool descending,
                 const Tensor& values, const Tensor& indices) override {
    TSL_INTERNAL_ASSERT(input.is_contiguous() && values.is_contiguous() && indices.is_contiguous(),
                        "sort_rows: layouts");
    const int64_t total = rows * n;
    if (total == 0) return;
    TSL_CHECK(rows == 1 || total <= INT32_MAX, "sort on CUDA: at most ", INT32_MAX,
              " elements when sorting several rows; got ", total);
    const DType dt = input.dtype();
    Tensor keys = Tensor::empty(DimVector{total}, dt, kCUDA);
    Tensor sorted_keys = Tensor::empty(DimVector{total}, dt, kCUDA);
    Tensor positions = Tensor::empty(DimVector{total}, DType::Int64, kCUDA);
    Tensor offsets;
    if (rows > 1) {
      Tensor host = Tensor::empty(DimVector{rows + 1}, DType::Int64);
      for (int64_t r = 0; r <= rows; ++r) host.data_ptr<int64_t>()[r] = r * n;
      offsets = copy_to_device(host, kCUDA);
    }
    SortBuffers b;
    b.temp_bytes = sort_rows_temp_bytes(dt, rows, n, descending);
    Tensor temp =
        Tensor::empty(DimVector{static_cast<int64_t>(b.temp_bytes) + 1}, DType::Bool, kCUDA);
    b.keys = keys.raw_data();
    b.sorted_keys = sorted_keys.raw_data();
    b.positions = static_cast<int64_t*>(positions.raw_data());
    b.offsets = offsets.defined() ? static_cast<const int64_t*>(offsets.raw_data()) : nullptr;
    b.temp = temp.raw_data();
    launch_sort_rows(dt, input.raw_data(), rows, n, descending, b, values.raw_data(),
                     static_cast<int64_t*>(indices.raw_data()));
  }

  void put(const Tensor& out, const Tensor& offsets, const Tensor& values,
           bool accumulate) override {
    const Tensor* ops[3] = {&out, &offsets, &values};
    const Loop<3> loop = make_loop<3>(out.sizes().span(), ops);
    if (loop.numel == 0) return;
    if (accumulate) {
      launch_put_accumulate(out.dtype(), loop);
      return;
    }
    // Targets lie below the end of out's storage: sort only the bits that can differ.
    const int64_t elements =
        static_cast<int64_t>(out.storage()->nbytes() / element_size(out.dtype()));
    PutBuffers b;
    b.key_bits = std::max(1, 64 - std::countl_zero(static_cast<uint64_t>(elements)));
    Tensor scratch = Tensor::empty(DimVector{4, loop.numel}, DType::Int64, kCUDA);
    int64_t* base = static_cast<int64_t*>(scratch.raw_data());
    b.targets = base;
    b.positions = base + loop.numel;
    b.sorted_targets = base + 2 * loop.numel;
    b.sorted_positions = base + 3 * loop.numel;
    b.temp_bytes = put_last_temp_bytes(loop.numel, b.key_bits);
    Tensor temp =
        Tensor::empty(DimVector{static_cast<int64_t>(b.temp_bytes) + 1}, DType::Bool, kCUDA);
    b.temp = temp.raw_data();
    launch_put_last(out.dtype(), loop, b);
  }

  void synchronize() override { cuda::synchronize("waiting for the GPU"); }

  std::string kernel_compiler_identity() override {
    return cuda::nvrtc_identity(cuda::device_arch());
  }
  std::string compile_kernel(const std::string& source, const std::string& name,
                             std::string& error) override {
    return cuda::nvrtc_compile(source, name, cuda::device_arch(), error);
  }
  std::shared_ptr<DeviceKernel> load_kernel(const std::string& image, const std::string& name,
                                            std::string& error) override {
    return cuda::load_kernel(image, name, error);
  }
  void launch_kernel(const DeviceKernel& kernel, int64_t blocks, const void* params,
                     size_t bytes) override {
    cuda::launch_kernel(kernel, blocks, kKernelBlock, params, bytes);
  }
};

// ---- Elementwise kernels --------------------------------------------------------------

Tensor tensor_arg(const KernelArgs& a, uint32_t i) { return detail::ArgConv<Tensor>::get(a.in(i)); }

// The binary in-place updates (add_, ...) and the ops whose result is bool, as the op
// table says (INPLACE; DT_BOOL).
bool is_inplace(OpId op) { return op_info(op).has(opflags::INPLACE); }

bool bool_valued(OpId op) { return op_info(op).dtype_rule() == DtypeRule::Bool; }

template <OpId kOp>
void unary_kernel(KernelArgs& a) {
  Tensor x = tensor_arg(a, 0);
  DType out_dtype = cpu_result_dtype(kOp, a);
  DType compute = bool_valued(kOp) ? x.dtype() : out_dtype;
  UnaryParams p;
  auto scalar_param = [&](uint32_t i, double& d, int64_t& n, bool& has) {
    if (i >= a.num_inputs() || a.in(i).is_none()) return;
    Scalar s = a.in(i).to_scalar();
    has = true;
    d = s.to_double();
    n = s.is_floating() ? static_cast<int64_t>(s.to_double()) : s.to_int();
  };
  int64_t unused = 0;
  if constexpr (kOp == OpId::clamp || kOp == OpId::clip || kOp == OpId::hardtanh) {
    scalar_param(1, p.a, p.ia, p.has_a);
    scalar_param(2, p.b, p.ib, p.has_b);
    if (compute == DType::Int64) {  // bounds as the CPU converts them (Scalar::to<int64_t>)
      if (p.has_a) p.ia = a.in(1).to_scalar().to<int64_t>();
      if (p.has_b) p.ib = a.in(2).to_scalar().to<int64_t>();
    }
  } else if constexpr (kOp == OpId::leaky_relu || kOp == OpId::elu || kOp == OpId::logit) {
    scalar_param(1, p.a, unused, p.has_a);
  } else if constexpr (kOp == OpId::softplus) {
    scalar_param(1, p.a, unused, p.has_a);
    scalar_param(2, p.b, unused, p.has_b);
  } else if constexpr (kOp == OpId::gelu) {
    p.has_a = a.in(1).to_str() == "tanh";
  }
  Tensor in = to_compute(x, compute);
  Tensor out = Tensor::empty(x.sizes(), out_dtype, kCUDA);
  const Tensor* ops[2] = {&out, &in};
  launch_unary(kOp, compute, out_dtype, make_loop<2>(out.sizes().span(), ops), p);
  a.out(0) = IValue(std::move(out));
}

template <OpId kOp>
void binary_kernel(KernelArgs& a) {
  Tensor x = tensor_arg(a, 0), y = tensor_arg(a, 1);
  check_same_device(x, kCUDA);
  check_same_device(y, kCUDA);
  const std::string op_name(op_info(kOp).name);  // a string_view into the schema
  const char* name = op_name.c_str();
  DimVector shape =
      x.sizes() == y.sizes() ? x.sizes() : broadcast_shapes(x.sizes(), y.sizes(), name);
  DType out_dtype = cpu_result_dtype(kOp, a, 0, is_inplace(kOp));
  if (is_inplace(kOp)) {
    // After the dtype check, as the CPU kernel.
    TSL_CHECK(shape == x.sizes(), name, ": output with shape ", shape_str(x.sizes()),
              " doesn't match the broadcast shape ", shape_str(shape));
  }
  DType compute = bool_valued(kOp) ? cpu::result_type({&x, &y}) : out_dtype;
  // div(rounding_mode='floor') is floor_divide; 'trunc' truncates the true quotient.
  std::optional<std::string> rounding;
  if constexpr (kOp == OpId::div) {
    if (!a.in(2).is_none()) rounding = a.in(2).to_str();
  }
  constexpr bool kIntDivision =
      kOp == OpId::floor_divide || kOp == OpId::remainder || kOp == OpId::div;
  if constexpr (kIntDivision) {
    // Integer division by zero is the CPU's ZeroDivisionError: count the zero divisors
    // on the device (this waits for it).
    // Only when something is divided: an empty result divides nothing.
    if (!is_floating(compute) && (kOp != OpId::div || rounding) && checked_numel(shape) > 0) {
      Tensor zeros = call_op(OpId::eq, {IValue(y), IValue(int64_t{0})}).at(0).to_tensor();
      Tensor count =
          call_op(OpId::sum, {IValue(zeros), IValue(), IValue(false), IValue()}).at(0).to_tensor();
      TSL_CHECK(count.item().to_int() == 0, "ZeroDivisionError");
    }
  }
  double alpha = 1;
  int64_t int_alpha = 1;
  if constexpr (kOp == OpId::add || kOp == OpId::sub || kOp == OpId::add_ || kOp == OpId::sub_) {
    Scalar s = a.in(2).to_scalar();
    alpha = s.to_double();
    int_alpha = s.is_floating() ? static_cast<int64_t>(s.to_double()) : s.to_int();
  }
  Tensor out;
  if constexpr (kOp == OpId::add_ || kOp == OpId::sub_ || kOp == OpId::mul_ || kOp == OpId::div_) {
    TSL_CHECK(x.device().is_cuda(), name, ": the tensor written in place is on ", x.device().str(),
              " and the other on cuda:0");
    assert_no_internal_overlap(x);
    if (!y.device().is_cpu()) assert_no_partial_overlap(x, y);
    out = x;
  } else {
    out = Tensor::empty(shape, out_dtype, kCUDA);
  }
  Tensor xc = to_compute(x, compute), yc = to_compute(y, compute);
  const Tensor* ops[3] = {&out, &xc, &yc};
  OpId launched = rounding == "floor" ? OpId::floor_divide : kOp;
  launch_binary(launched, compute, out_dtype, make_loop<3>(shape, ops), alpha, int_alpha);
  if (rounding == "trunc" && is_floating(out_dtype)) {
    const Tensor* in_place[2] = {&out, &out};
    launch_unary(OpId::trunc, out_dtype, out_dtype, make_loop<2>(shape, in_place), UnaryParams{});
  }
  if (is_inplace(kOp)) out.storage()->bump_version();
  a.out(0) = IValue(std::move(out));
}

void where_kernel(KernelArgs& a) {
  Tensor c = tensor_arg(a, 0), x = tensor_arg(a, 1), y = tensor_arg(a, 2);
  for (const Tensor* t : {&c, &x, &y}) check_same_device(*t, kCUDA);
  DType out_dtype = cpu_result_dtype(OpId::where, a);
  DimVector shape =
      broadcast_shapes(broadcast_shapes(c.sizes(), x.sizes(), "where"), y.sizes(), "where");
  Tensor out = Tensor::empty(shape, out_dtype, kCUDA);
  Tensor cc = to_compute(c, DType::Bool), xc = to_compute(x, out_dtype),
         yc = to_compute(y, out_dtype);
  const Tensor* ops[4] = {&out, &cc, &xc, &yc};
  launch_where(out_dtype, make_loop<4>(shape, ops));
  a.out(0) = IValue(std::move(out));
}

Tensor to_device_kernel(const Tensor& self, Device device) {
  if (device.is_cuda()) ensure_available();
  return copy_to_device(self, device);
}

CudaBackend g_backend;

Storage allocate_cuda(size_t nbytes, Device device) { return allocate(nbytes, device); }

}  // namespace

void register_elementwise_kernels() {
  // Raw kernels, registered with the CPU kernel's arity so that call_op checks it.
  auto reg = [](OpId op, KernelFn fn) {
    register_kernel(DeviceType::CUDA, op, fn, lookup_kernel(DeviceType::CPU, op).arity);
  };
#define TSL_REG_UNARY(name) reg(OpId::name, &unary_kernel<OpId::name>);
  TSL_CUDA_UNARY_OPS(TSL_REG_UNARY)
#undef TSL_REG_UNARY
#define TSL_REG_BINARY(name) reg(OpId::name, &binary_kernel<OpId::name>);
  TSL_CUDA_BINARY_OPS(TSL_REG_BINARY)
#undef TSL_REG_BINARY
  reg(OpId::where, &where_kernel);
  register_kernel(DeviceType::CUDA, OpId::to_device, &boxed<&to_device_kernel>,
                  boxed_arity<&to_device_kernel>());
  register_kernel(DeviceType::CPU, OpId::to_device, &boxed<&to_device_kernel>,
                  boxed_arity<&to_device_kernel>());
}

void install_backend() {
  set_cuda_backend(&g_backend);
  set_device_allocator(DeviceType::CUDA, &allocate_cuda);
}

}  // namespace tsl::cuda
