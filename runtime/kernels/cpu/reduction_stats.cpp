// CPU kernels: reductions that need more than one pass or a transform of each element:
// var and std (as PyTorch's CPU kernels compute them, see var_impl), norm and logsumexp
// (max first, so exp never overflows).
#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/tensor/cpu_capability.h"

namespace tsl::cpu {
namespace {

template <typename Op, typename T>
typename Op::Acc reduce_span(const Op& op, const T* x, int64_t n, bool whole) {
  return whole ? reduce_all(op, x, n) : reduce_row(op, x, n);
}

// out = finish(a1, a2) where a1 reduces with `first` and a2 with make_second(a1).
template <typename T, typename First, typename MakeSecond, typename Finish>
void two_pass(const ReducePlan& p, T* out, const First& first, const MakeSecond& make_second,
              const Finish& finish) {
  const T* x = p.input.data_ptr<T>();
  if (p.outer * p.inner == 0) return;
  if (p.inner == 1) {
    bool whole = p.outer == 1;
    parallel_units(p.outer, p.reduce, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* row = x + o * p.reduce;
        auto a1 = reduce_span(first, row, p.reduce, whole);
        auto a2 = reduce_span(make_second(a1), row, p.reduce, whole);
        out[o] = finish(a1, a2);
      }
    });
    return;
  }
  using Acc1 = typename First::Acc;
  using Acc2 = typename decltype(make_second(std::declval<Acc1>()))::Acc;
  int64_t tiles = (p.inner + kColumnTile - 1) / kColumnTile;
  parallel_units(p.outer * tiles, 2 * p.reduce * kColumnTile, [&](int64_t b, int64_t e) {
    Acc1 acc1[kColumnTile];
    Acc2 acc2[kColumnTile];
    for (int64_t u = b; u < e; ++u) {
      int64_t o = u / tiles;
      int64_t t0 = (u % tiles) * kColumnTile;
      int64_t w = std::min(kColumnTile, p.inner - t0);
      const T* base = x + o * p.reduce * p.inner + t0;
      for (int64_t j = 0; j < w; ++j) acc1[j] = first.identity();
      for (int64_t r = 0; r < p.reduce; ++r) {
        const T* row = base + r * p.inner;
        for (int64_t j = 0; j < w; ++j) acc1[j] = first.combine(acc1[j], first.map(row[j]));
      }
      for (int64_t j = 0; j < w; ++j) acc2[j] = make_second(acc1[j]).identity();
      for (int64_t r = 0; r < p.reduce; ++r) {
        const T* row = base + r * p.inner;
        for (int64_t j = 0; j < w; ++j) {
          auto second = make_second(acc1[j]);
          acc2[j] = second.combine(acc2[j], second.map(row[j]));
        }
      }
      T* dst = out + o * p.inner + t0;
      for (int64_t j = 0; j < w; ++j) dst[j] = finish(acc1[j], acc2[j]);
    }
  });
}

template <typename T>
struct SquaredDeviationOp {
  using Acc = double;
  double mean;
  Acc identity() const { return 0; }
  Acc map(T v) const {
    double d = static_cast<double>(v) - mean;
    return d * d;
  }
  Acc combine(Acc a, Acc b) const { return a + b; }
};

// Welford's running mean and sum of squared deviations, in double, one element at a
// time (PyTorch's WelfordOps::reduce).
struct Welford {
  double mean = 0;
  double m2 = 0;
  double n = 0;
  void add(double x) {
    n += 1;
    double delta = x - mean;
    mean += delta / n;
    m2 += delta * (x - mean);
  }
};

// Welford over the reduced dim of each output, the elements in index order: inner == 1
// reads rows, otherwise tiles of columns side by side.
template <typename T, typename Finish>
void welford_reduce(const ReducePlan& p, T* out, const Finish& finish) {
  const T* x = p.input.data_ptr<T>();
  if (p.inner == 1) {
    parallel_units(p.outer, 4 * p.reduce, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        Welford w;
        const T* row = x + o * p.reduce;
        for (int64_t r = 0; r < p.reduce; ++r) w.add(static_cast<double>(row[r]));
        out[o] = finish(w.m2);
      }
    });
    return;
  }
  int64_t tiles = (p.inner + kColumnTile - 1) / kColumnTile;
  parallel_units(p.outer * tiles, 4 * p.reduce * kColumnTile, [&](int64_t b, int64_t e) {
    Welford acc[kColumnTile];
    for (int64_t u = b; u < e; ++u) {
      int64_t o = u / tiles;
      int64_t t0 = (u % tiles) * kColumnTile;
      int64_t w = std::min(kColumnTile, p.inner - t0);
      const T* base = x + o * p.reduce * p.inner + t0;
      for (int64_t j = 0; j < w; ++j) acc[j] = Welford{};
      for (int64_t r = 0; r < p.reduce; ++r) {
        const T* row = base + r * p.inner;
        for (int64_t j = 0; j < w; ++j) acc[j].add(static_cast<double>(row[j]));
      }
      T* dst = out + o * p.inner + t0;
      for (int64_t j = 0; j < w; ++j) dst[j] = finish(acc[j].m2);
    }
  });
}

// ---- On a device: the same checks, then compositions of the device's kernels ----
// (Note [Reductions on every device] in reduction.cpp.) Two passes where the CPU runs
// Welford's update: the results agree to rounding.

IValue dims_of(DimMask mask, int64_t ndim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < ndim; ++d) {
    if ((mask >> d) & 1) dims.push_back(d);
  }
  return IValue::int_list(dims);
}

Tensor device_sum(const Tensor& x, DimMask mask, bool keepdim) {
  return op1(OpId::sum, {IValue(x), dims_of(mask, x.dim()), IValue(keepdim), IValue()});
}

Tensor device_var(const Tensor& x, DimMask mask, double divisor, bool keepdim, bool take_sqrt) {
  Tensor mean = op1(OpId::mean, {IValue(x), dims_of(mask, x.dim()), IValue(true), IValue()});
  Tensor dev = op1(OpId::sub, {IValue(x), IValue(mean), IValue(int64_t{1})});
  Tensor m2 = device_sum(op1(OpId::mul, {IValue(dev), IValue(dev)}), mask, keepdim);
  Tensor v = op1(OpId::div, {IValue(m2), IValue(divisor), IValue()});
  return take_sqrt ? op1(OpId::sqrt, {IValue(v)}) : v;
}

Tensor device_logsumexp(const Tensor& x, DimMask mask, bool keepdim) {
  // The max with keepdim (an infinite one shifts by 0, as on the CPU).
  Tensor m = op1(OpId::amax, {IValue(x), dims_of(mask, x.dim()), IValue(true)});
  Tensor shift = op1(OpId::where, {IValue(op1(OpId::isinf, {IValue(m)})),
                                   IValue(Tensor::scalar(Scalar(0.0), x.dtype())), IValue(m)});
  Tensor e =
      op1(OpId::exp, {IValue(op1(OpId::sub, {IValue(x), IValue(shift), IValue(int64_t{1})}))});
  Tensor s = op1(OpId::log, {IValue(device_sum(e, mask, keepdim))});
  if (!keepdim) shift = device_sum(shift, mask, false);  // drops the kept 1-sized dims
  return op1(OpId::add, {IValue(s), IValue(shift), IValue(int64_t{1})});
}

Tensor device_norm(const Tensor& x, DimMask mask, double order, bool keepdim) {
  Tensor a = op1(OpId::abs, {IValue(x)});
  IValue dims = dims_of(mask, x.dim());
  if (order == 2)
    return op1(OpId::sqrt,
               {IValue(device_sum(op1(OpId::mul, {IValue(x), IValue(x)}), mask, keepdim))});
  if (order == 1) return device_sum(a, mask, keepdim);
  if (order == 0) {
    Tensor nz =
        op1(OpId::to_dtype, {IValue(op1(OpId::ne, {IValue(x), IValue(0.0)})), IValue(x.dtype())});
    return device_sum(nz, mask, keepdim);
  }
  if (std::isinf(order))
    return op1(order > 0 ? OpId::amax : OpId::amin, {IValue(a), dims, IValue(keepdim)});
  Tensor s = device_sum(op1(OpId::pow, {IValue(a), IValue(order)}), mask, keepdim);
  return op1(OpId::pow, {IValue(s), IValue(1.0 / order)});
}

// PyTorch's CPU algorithms, whose roundings differ: a reduction over every dim (of size
// > 1) takes two passes, the mean and then the squared deviations from it, in double
// (std_var_all_cpu); a reduction that leaves more than one output runs Welford's update
// per output (std_var_kernel). Welford gives exactly 0 for equal elements, where the
// two-pass mean may be off by an ulp, and std's gradient at 0 is 0 (masked), not the
// large value 1 / (2 * tiny std) would give.
Tensor var_impl(const Tensor& self, DimMask mask, bool unbiased, bool keepdim, bool take_sqrt) {
  TSL_CHECK(is_floating(self.dtype()),
            "std and var only support floating point and complex dtypes");
  ReducePlan p = plan_reduction(self, mask, keepdim);
  Tensor out = Tensor::empty(p.out_sizes, self.dtype(), self.device());
  if (p.outer * p.inner == 0) return out;
  double n = static_cast<double>(p.reduce);
  double divisor = std::max(0.0, n - (unbiased ? 1.0 : 0.0));
  if (!self.device().is_cpu()) return device_var(self, mask, divisor, keepdim, take_sqrt);
  TSL_DISPATCH_FLOATING(self.dtype(), "var", [&] {
    using T = scalar_t;
    auto finish = [divisor, take_sqrt](double m2) {
      double v = m2 / divisor;
      return static_cast<T>(take_sqrt ? std::sqrt(v) : v);
    };
    if (p.outer == 1 && p.inner == 1) {
      two_pass<T>(
          p, out.data_ptr<T>(), SumOp<T>{},
          [n](double sum) { return SquaredDeviationOp<T>{sum / n}; },
          [&finish](double, double m2) { return finish(m2); });
    } else {
      welford_reduce<T>(p, out.data_ptr<T>(), finish);
    }
  });
  return out;
}

Tensor var(const Tensor& self, bool unbiased) {
  return var_impl(self, all_dims_mask(self.dim()), unbiased, false, false);
}
Tensor var_dim(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool unbiased,
               bool keepdim) {
  return var_impl(self, reduce_mask(dim, self.dim()), unbiased, keepdim, false);
}
Tensor std_all(const Tensor& self, bool unbiased) {
  return var_impl(self, all_dims_mask(self.dim()), unbiased, false, true);
}
Tensor std_dim(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool unbiased,
               bool keepdim) {
  return var_impl(self, reduce_mask(dim, self.dim()), unbiased, keepdim, true);
}

Tensor logsumexp(const Tensor& self, std::vector<int64_t> dim, bool keepdim) {
  Tensor x = self;
  if (!is_floating(x.dtype())) {
    x = Tensor::empty(self.sizes(), DType::Float32, self.device());
    copy_into(x, self);
  }
  if (!x.device().is_cpu()) return device_logsumexp(x, reduce_mask(dim, x.dim()), keepdim);
  ReducePlan p = plan_reduction(x, reduce_mask(dim, x.dim()), keepdim);
  Tensor out = Tensor::empty(p.out_sizes, x.dtype());
  TSL_DISPATCH_FLOATING(x.dtype(), "logsumexp", [&] {
    using T = scalar_t;
    // An infinite maximum shifts by 0 (PyTorch does the same): all -inf gives -inf,
    // any +inf gives +inf, instead of inf - inf = nan.
    auto shift_of = [](T m) { return std::isinf(m) ? T(0) : m; };
    two_pass<T>(
        p, out.data_ptr<T>(), FloatMaxOp<T>{}, [shift_of](T m) { return ExpSumOp<T>{shift_of(m)}; },
        [shift_of](T m, double s) {
          return static_cast<T>(std::log(s) + static_cast<double>(shift_of(m)));
        });
  });
  return out;
}

// ---- norm ----

template <typename T>
struct SquareSumOp : SumOp<T> {
  double map(T v) const { return static_cast<double>(v) * static_cast<double>(v); }
};
template <typename T>
struct AbsSumOp : SumOp<T> {
  double map(T v) const { return std::abs(static_cast<double>(v)); }
};
template <typename T>
struct NonzeroCountOp : SumOp<T> {
  double map(T v) const { return v != T(0) ? 1.0 : 0.0; }
};
template <typename T>
struct PowSumOp : SumOp<T> {
  double p;
  double map(T v) const { return std::pow(std::abs(static_cast<double>(v)), p); }
};
template <typename T>
struct AbsMaxOp : FloatMaxBase<T> {
  T map(T v) const { return std::abs(v); }
};
template <typename T>
struct AbsMinOp : FloatMinBase<T> {
  T map(T v) const { return std::abs(v); }
};

template <typename T>
void norm_typed(const ReducePlan& p, T* out, double order) {
  auto to_t = [](auto acc) { return static_cast<T>(acc); };
  if (order == 2) {
    reduce_plan<SquareSumOp<T>, T>({}, p, out,
                                   [](double s) { return static_cast<T>(std::sqrt(s)); });
  } else if (order == 1) {
    reduce_plan<AbsSumOp<T>, T>({}, p, out, to_t);
  } else if (order == 0) {
    reduce_plan<NonzeroCountOp<T>, T>({}, p, out, to_t);
  } else if (std::isinf(order) && order > 0) {
    reduce_plan<AbsMaxOp<T>, T>({}, p, out, to_t);
  } else if (std::isinf(order)) {
    reduce_plan<AbsMinOp<T>, T>({}, p, out, to_t);
  } else {
    PowSumOp<T> op;
    op.p = order;
    double inv = 1.0 / order;
    reduce_plan<PowSumOp<T>, T>(op, p, out,
                                [inv](double s) { return static_cast<T>(std::pow(s, inv)); });
  }
}

Tensor norm(const Tensor& self, Scalar p, std::optional<std::vector<int64_t>> dim, bool keepdim) {
  TSL_CHECK(is_floating(self.dtype()),
            "norm(): input dtype should be either floating point or complex. Got ",
            scalar_type_name(self.dtype()), " instead.");
  double order = p.to_double();
  TSL_CHECK(!std::isnan(order), "norm(): p must not be nan");
  ReducePlan plan = plan_reduction(self, reduce_mask(dim, self.dim()), keepdim);
  Tensor out = Tensor::empty(plan.out_sizes, self.dtype());
  // Over zero elements every norm is 0 in PyTorch 1.13, +-inf ones included.
  if (plan.reduce == 0 && std::isinf(order)) order = 1;
  if (!self.device().is_cpu()) {
    return device_norm(self, reduce_mask(dim, self.dim()), order, keepdim);
  }
  TSL_DISPATCH_FLOATING(self.dtype(), "norm",
                        [&] { norm_typed<scalar_t>(plan, out.data_ptr<scalar_t>(), order); });
  return out;
}

}  // namespace

// Built per capability (Note [One binary for every x86-64]).
namespace TSL_CAPABILITY_NAMESPACE {

void register_reduction_stats_kernels() {
  TSL_REGISTER_CPU(var, var);
  TSL_REGISTER_CPU(var_dim, var_dim);
  TSL_REGISTER_CPU(std, std_all);
  TSL_REGISTER_CPU(std_dim, std_dim);
  TSL_REGISTER_CPU(logsumexp, logsumexp);
  TSL_REGISTER_CPU(norm, norm);
}

}  // namespace TSL_CAPABILITY_NAMESPACE
}  // namespace tsl::cpu
