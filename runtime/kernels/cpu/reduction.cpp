// CPU kernels: sums, products, extrema and boolean reductions over dims or the whole
// tensor. The other reductions live in reduction_index.cpp (max.dim, argmax, ...),
// reduction_stats.cpp (var, std, norm, logsumexp) and reduction_scan.cpp (cumsum).
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/tensor/cpu_capability.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {
namespace cpu {
namespace {

Tensor cast_to(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor out = Tensor::empty(x.sizes(), dtype, x.device());
  copy_into(out, x);
  return out;
}

// Sums and products of integers and bools are int64, as in PyTorch.
template <typename T>
using widened_t = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;

DType widened_dtype(DType t) { return is_floating(t) ? t : DType::Int64; }

template <typename T>
struct Cast {
  template <typename A>
  T operator()(A acc) const {
    return static_cast<T>(acc);
  }
};

// Note [Reductions on every device]
// The reduction kernels here check their arguments and plan the [outer, reduce, inner]
// layout (device-neutral: shapes and a contiguous copy); only the loop is per device:
// reduce_plan on the CPU, the DeviceBackend's reduce elsewhere. So the CUDA backend
// registers these very kernels, and both devices share every check and message.

// Runs the device's loop for a plan when p.input is not on the CPU; false on the CPU.
bool reduce_on_device(ReduceKind kind, const ReducePlan& p, const Tensor& out,
                      double divisor = 1.0) {
  if (p.input.device().is_cpu()) return false;
  DeviceBackend* backend = cuda_backend();
  TSL_INTERNAL_ASSERT(backend != nullptr, "a CUDA tensor without the CUDA backend");
  backend->reduce(kind, p.input.contiguous(), p.outer, p.reduce, p.inner, out, divisor);
  return true;
}

// sum and prod: accumulate in the wide type, then convert to the requested dtype.
template <template <typename> class OpT>
Tensor sum_like(const Tensor& self, DimMask mask, bool keepdim, std::optional<DType> dtype) {
  Tensor x = dtype ? cast_to(self, *dtype) : self;
  ReducePlan p = plan_reduction(x, mask, keepdim);
  Tensor out = Tensor::empty(p.out_sizes, widened_dtype(x.dtype()), x.device());
  constexpr ReduceKind kind =
      std::is_same_v<OpT<float>, SumOp<float>> ? ReduceKind::Sum : ReduceKind::Prod;
  if (reduce_on_device(kind, p, out)) {
    if (dtype && *dtype != out.dtype()) return cast_to(out, *dtype);
    return out;
  }
  TSL_DISPATCH_ALL(x.dtype(), "sum", [&] {
    using Out = widened_t<scalar_t>;
    reduce_plan<OpT<scalar_t>, scalar_t>(OpT<scalar_t>{}, p, out.data_ptr<Out>(), Cast<Out>{});
  });
  if (dtype && *dtype != out.dtype()) return cast_to(out, *dtype);
  return out;
}

// amax, amin, max and min keep the input's dtype.
template <bool kMax>
Tensor extremum(const Tensor& x, DimMask mask, bool keepdim) {
  ReducePlan p = plan_reduction(x, mask, keepdim);
  Tensor out = Tensor::empty(p.out_sizes, x.dtype(), x.device());
  if (reduce_on_device(kMax ? ReduceKind::Max : ReduceKind::Min, p, out)) return out;
  TSL_DISPATCH_ALL(x.dtype(), "amax", [&] {
    using Op = std::conditional_t<kMax, MaxFor<scalar_t>, MinFor<scalar_t>>;
    reduce_plan<Op, scalar_t>(Op{}, p, out.data_ptr<scalar_t>(), Cast<scalar_t>{});
  });
  return out;
}

void check_nonempty_dims(const char* name, const Tensor& x, DimMask mask) {
  int64_t d = first_empty_reduced_dim(x, mask);
  TSL_CHECK(d < 0, name, "(): Expected reduction dim ", d, " to have non-zero size.");
}

template <typename In>
struct AnyOp {
  using Acc = uint8_t;
  Acc identity() const { return 0; }
  Acc map(In v) const { return v != In(0); }
  Acc combine(Acc a, Acc b) const { return a | b; }
};

template <typename In>
struct AllOp {
  using Acc = uint8_t;
  Acc identity() const { return 1; }
  Acc map(In v) const { return v != In(0); }
  Acc combine(Acc a, Acc b) const { return a & b; }
};

template <template <typename> class OpT>
Tensor boolean_reduce(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  DimMask mask = dim ? single_dim_mask(*dim, x.dim()) : all_dims_mask(x.dim());
  ReducePlan p = plan_reduction(x, mask, keepdim && dim.has_value());
  Tensor out = Tensor::empty(p.out_sizes, DType::Bool, x.device());
  constexpr ReduceKind kind =
      std::is_same_v<OpT<float>, AnyOp<float>> ? ReduceKind::Any : ReduceKind::All;
  if (reduce_on_device(kind, p, out)) return out;
  TSL_DISPATCH_ALL(x.dtype(), "all", [&] {
    reduce_plan<OpT<scalar_t>, scalar_t>(OpT<scalar_t>{}, p, out.data_ptr<bool>(), Cast<bool>{});
  });
  return out;
}

}  // namespace

// Built per capability (Note [One binary for every x86-64]); cpu::sum_over (dispatch.cpp)
// calls the running one's.
namespace TSL_CAPABILITY_NAMESPACE {
Tensor sum_over(const Tensor& self, DimMask mask, bool keepdim) {
  return sum_like<SumOp>(self, mask, keepdim, std::nullopt);
}
}  // namespace TSL_CAPABILITY_NAMESPACE

namespace {

// ---- Kernels ----

Tensor sum(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim,
           std::optional<DType> dtype) {
  return sum_like<SumOp>(self, reduce_mask(dim, self.dim()), keepdim, dtype);
}

Tensor mean(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim,
            std::optional<DType> dtype) {
  DType t = dtype.value_or(self.dtype());
  TSL_CHECK(is_floating(t), "mean(): could not infer output dtype. ", dtype ? "Optional" : "Input",
            " dtype must be either a floating point or complex "
            "dtype. Got: ",
            scalar_type_name(t));
  Tensor x = cast_to(self, t);
  ReducePlan p = plan_reduction(x, reduce_mask(dim, x.dim()), keepdim);
  Tensor out = Tensor::empty(p.out_sizes, t, x.device());
  if (reduce_on_device(ReduceKind::Sum, p, out, static_cast<double>(p.reduce))) return out;
  TSL_DISPATCH_FLOATING(t, "mean", [&] {
    double n = static_cast<double>(p.reduce);
    reduce_plan<SumOp<scalar_t>, scalar_t>(
        SumOp<scalar_t>{}, p, out.data_ptr<scalar_t>(),
        [n](double acc) { return static_cast<scalar_t>(acc / n); });
  });
  return out;
}

Tensor prod(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
            std::optional<DType> dtype) {
  DimMask mask = dim ? single_dim_mask(*dim, self.dim()) : all_dims_mask(self.dim());
  return sum_like<ProdOp>(self, mask, keepdim && dim.has_value(), dtype);
}

Tensor amax(const Tensor& self, std::vector<int64_t> dim, bool keepdim) {
  DimMask mask = reduce_mask(dim, self.dim());
  check_nonempty_dims("amax", self, mask);
  return extremum<true>(self, mask, keepdim);
}

Tensor amin(const Tensor& self, std::vector<int64_t> dim, bool keepdim) {
  DimMask mask = reduce_mask(dim, self.dim());
  check_nonempty_dims("amin", self, mask);
  return extremum<false>(self, mask, keepdim);
}

template <bool kMax>
Tensor extremum_all(const Tensor& self) {
  TSL_CHECK(self.numel() > 0, kMax ? "max" : "min",
            "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument.");
  return extremum<kMax>(self, all_dims_mask(self.dim()), false);
}

Tensor max_all(const Tensor& self) { return extremum_all<true>(self); }
Tensor min_all(const Tensor& self) { return extremum_all<false>(self); }

Tensor all(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return boolean_reduce<AllOp>(self, dim, keepdim);
}

Tensor any(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return boolean_reduce<AnyOp>(self, dim, keepdim);
}

}  // namespace

void register_reduction_index_kernels();
void register_reduction_stats_kernels();
void register_reduction_scan_kernels();
void register_sort_kernels();
void register_allclose_kernels();

}  // namespace cpu

namespace TSL_CAPABILITY_NAMESPACE {

void register_cpu_reduction_kernels() {
  TSL_REGISTER_CPU(sum, cpu::sum);
  TSL_REGISTER_CPU(mean, cpu::mean);
  TSL_REGISTER_CPU(prod, cpu::prod);
  TSL_REGISTER_CPU(amax, cpu::amax);
  TSL_REGISTER_CPU(amin, cpu::amin);
  TSL_REGISTER_CPU(max, cpu::max_all);
  TSL_REGISTER_CPU(min, cpu::min_all);
  TSL_REGISTER_CPU(all, cpu::all);
  TSL_REGISTER_CPU(any, cpu::any);
  cpu::register_reduction_index_kernels();
  cpu::register_reduction_stats_kernels();
  cpu::register_reduction_scan_kernels();
  cpu::register_sort_kernels();
  cpu::register_allclose_kernels();
}

}  // namespace TSL_CAPABILITY_NAMESPACE
}  // namespace tsl
