// CPU kernels that draw random numbers: rand, randn, randint (and their _like forms),
// dropout, and manual_seed. The streams match PyTorch's (see random.h).
#include <vector>

#include "runtime/kernels/cpu/factory_common.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/random.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {
namespace {

using Sizes = std::vector<int64_t>;
using OptDType = std::optional<DType>;
using OptDevice = std::optional<Device>;

void check_floating(DType t, const char* name) {
  TSL_CHECK(is_floating(t), name, ": not implemented for '", scalar_type_name(t),
            "' (expected a floating point dtype)");
}

Tensor uniform_tensor(std::span<const int64_t> size, DType t, const OptDevice& device, bool rg,
                      const char* name) {
  check_floating(t, name);
  Tensor out = cpu::new_factory_tensor(size, t, device, rg, name);
  cpu::fill_uniform(out);
  return cpu::finish_factory(out, device, rg);
}

Tensor normal_tensor(std::span<const int64_t> size, DType t, const OptDevice& device, bool rg,
                     const char* name) {
  check_floating(t, name);
  Tensor out = cpu::new_factory_tensor(size, t, device, rg, name);
  cpu::fill_normal(out);
  return cpu::finish_factory(out, device, rg);
}

Tensor rand_kernel(Sizes size, OptDType dtype, OptDevice device, bool rg) {
  return uniform_tensor(size, dtype.value_or(DType::Float32), device, rg, "rand");
}

Tensor randn_kernel(Sizes size, OptDType dtype, OptDevice device, bool rg) {
  return normal_tensor(size, dtype.value_or(DType::Float32), device, rg, "randn");
}

// x * std + mean over standard normal draws, in the dtype's arithmetic: the stream
// and the bits of PyTorch's normal_ (which randn is, with mean 0 and std 1).
void scale_shift(Tensor& out, const Tensor& std, const Tensor& mean) {
  TSL_DISPATCH_FLOATING(out.dtype(), "normal", [&] {
    const scalar_t* s = std.data_ptr<scalar_t>();
    const scalar_t* m = mean.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    bool s1 = std.numel() == 1, m1 = mean.numel() == 1;
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = o[i] * s[s1 ? 0 : i] + m[m1 ? 0 : i];
  });
}

Tensor normal_kernel(double mean, double std, Sizes size, OptDType dtype, OptDevice device,
                     bool rg) {
  TSL_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  DType t = dtype.value_or(DType::Float32);
  Tensor out = normal_tensor(size, t, kCPU, false, "normal");
  scale_shift(out, Tensor::scalar(Scalar(std), t), Tensor::scalar(Scalar(mean), t));
  return cpu::finish_factory(out, device, rg);
}

// normal(mean, std) with tensors of the same number of elements: mean's shape.
Tensor normal_tensors_kernel(const Tensor& mean, const Tensor& std) {
  TSL_CHECK(mean.numel() == std.numel(), "normal: mean has ", mean.numel(),
            " elements and std has ", std.numel(), "; they must have the same number");
  if (!mean.device().is_cpu()) {
    // The numbers are drawn on the CPU, as every device's are: so is the whole sample
    // (the CPU's numbers exactly), then moved.
    check_same_device(std, mean.device());
    return copy_to_device(
        normal_tensors_kernel(copy_to_device(mean, kCPU), copy_to_device(std, kCPU)),
        mean.device());
  }
  DType t = mean.dtype();
  check_floating(t, "normal");
  Tensor m = mean.contiguous();
  Tensor sd = call_op(OpId::to_dtype, {IValue(std), IValue(t)}).at(0).to_tensor().contiguous();
  TSL_DISPATCH_FLOATING(t, "normal", [&] {
    const scalar_t* s = sd.data_ptr<scalar_t>();
    for (int64_t i = 0; i < sd.numel(); ++i)
      TSL_CHECK(s[i] >= 0, "normal expects all elements of std >= 0.0");
  });
  Tensor out = normal_tensor(mean.sizes(), t, std::nullopt, false, "normal");
  scale_shift(out, sd, m);
  return out;
}

Tensor rand_like_kernel(const Tensor& self, OptDType dtype, OptDevice device, bool rg) {
  return uniform_tensor(self.sizes(), dtype.value_or(self.dtype()), device.value_or(self.device()),
                        rg, "rand_like");
}

Tensor randn_like_kernel(const Tensor& self, OptDType dtype, OptDevice device, bool rg) {
  return normal_tensor(self.sizes(), dtype.value_or(self.dtype()), device.value_or(self.device()),
                       rg, "randn_like");
}

Tensor randint_kernel(int64_t low, int64_t high, Sizes size, OptDType dtype, OptDevice device,
                      bool rg) {
  TSL_CHECK(low < high, "random_ expects 'from' to be less than 'to', but got from=", low,
            " >= to=", high);
  Tensor out = cpu::new_factory_tensor(size, dtype.value_or(DType::Int64), device, rg, "randint");
  cpu::fill_randint(out, low, high);
  return cpu::finish_factory(out, device, rg);
}

Tensor randint_high_kernel(int64_t high, Sizes size, OptDType dtype, OptDevice device, bool rg) {
  return randint_kernel(0, high, std::move(size), dtype, device, rg);
}

Tensor randperm_kernel(int64_t n, OptDType dtype, OptDevice device, bool rg) {
  TSL_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  DType dt = dtype.value_or(DType::Int64);
  TSL_CHECK(dt != DType::Bool || n <= 2, "randperm: n (", n, ") is too large for bool");
  const int64_t size[] = {n};
  Tensor out = cpu::new_factory_tensor(size, dt, device, rg, "randperm");
  cpu::fill_randperm(out);
  return cpu::finish_factory(out, device, rg);
}

void manual_seed_kernel(int64_t seed) {
  cpu::Generator& g = cpu::default_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_seed(static_cast<uint64_t>(seed));
}

// PyTorch's CPU dropout: a Bernoulli(1 - p) mask scaled by 1 / (1 - p) (computed in the
// input's dtype) times the input; p == 1 multiplies by zero.
Tensor dropout_kernel(const Tensor& input, double p, bool training) {
  TSL_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (p == 0 || !training || input.numel() == 0) return input;
  check_floating(input.dtype(), "dropout");
  if (p == 1 && !input.device().is_cpu())
    return call_op(OpId::mul, {IValue(input), IValue(0.0)}).at(0).to_tensor();
  Tensor out = Tensor::empty(input.sizes(), input.dtype());
  if (p == 1) {
    TSL_DISPATCH_FLOATING(input.dtype(), "dropout", [&] {
      cpu::binary_into<scalar_t, scalar_t>(out, input, Tensor::scalar(Scalar(0.0), input.dtype()),
                                           [](scalar_t x, scalar_t z) { return x * z; });
    });
    return out;
  }
  Tensor mask = Tensor::empty(input.sizes(), input.dtype());
  cpu::fill_bernoulli(mask, 1 - p);
  if (!input.device().is_cpu()) {
    // The mask is drawn on the CPU from TSL's one stream (Note [Random streams] in
    // random.cpp), as every factory's numbers for a device are, and scaled there; the
    // product runs on the device: the CPU's numbers, element for element.
    TSL_DISPATCH_FLOATING(input.dtype(), "dropout", [&] {
      const scalar_t scale = scalar_t(1) / static_cast<scalar_t>(1 - p);
      scalar_t* m = mask.data_ptr<scalar_t>();
      for (int64_t i = 0; i < mask.numel(); ++i) m[i] *= scale;
    });
    return call_op(OpId::mul, {IValue(input), IValue(copy_to_device(mask, input.device()))})
        .at(0)
        .to_tensor();
  }
  TSL_DISPATCH_FLOATING(input.dtype(), "dropout", [&] {
    const scalar_t scale = scalar_t(1) / static_cast<scalar_t>(1 - p);
    cpu::binary_into<scalar_t, scalar_t>(
        out, input, mask, [scale](scalar_t x, scalar_t m) { return x * (m * scale); });
  });
  return out;
}

}  // namespace

void register_cpu_random_kernels() {
  TSL_REGISTER_CPU(rand, rand_kernel);
  TSL_REGISTER_CPU(randn, randn_kernel);
  TSL_REGISTER_CPU(normal, normal_kernel);
  TSL_REGISTER_CPU(normal_tensors, normal_tensors_kernel);
  TSL_REGISTER_CPU(randint, randint_kernel);
  TSL_REGISTER_CPU(randint_high, randint_high_kernel);
  TSL_REGISTER_CPU(randperm, randperm_kernel);
  TSL_REGISTER_CPU(rand_like, rand_like_kernel);
  TSL_REGISTER_CPU(randn_like, randn_like_kernel);
  TSL_REGISTER_CPU(manual_seed, manual_seed_kernel);
  TSL_REGISTER_CPU(dropout, dropout_kernel);
}

}  // namespace tsl
