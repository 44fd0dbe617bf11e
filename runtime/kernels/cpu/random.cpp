// PyTorch-compatible random streams on top of std::mt19937. See Note [Random streams].
#include "runtime/kernels/cpu/random.h"

#include <cmath>
#include <numbers>

// GCC 12 reports false -W(maybe-)uninitialized warnings inside its own AVX-512
// intrinsics (_mm512_undefined_*, GCC bug 105593) when Eigen's packet math is inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>

namespace tsl::cpu {

// Note [Random streams]
// PyTorch's CPU generator is mt19937 seeded with the low 32 bits of the seed (the
// same sequence as std::mt19937). Its transformations, reproduced here:
// * rand, float32: (random() & (2^24 - 1)) * 2^-24; float64: 53 bits of random64(),
//   which is (first << 32) | second.
// * randn, numel >= 16 (contiguous): all elements are first filled with uniforms of
//   the tensor's dtype, then every block of 16 is turned into normals by Box-Muller
//   (u1 = 1 - x[j], u2 = x[j + 8] for j < 8); when numel is not a multiple of 16 the
//   last 16 elements are redrawn and transformed again.
// * randn, numel < 16: one double Box-Muller pair per two elements (the second one
//   cached in the generator), cast to the dtype.
// * randint: (random() % range) + low, random64() when range >= 2^32.
// * randperm: 0..n-1, then for each i < n-1 a swap with i + random() % (n - i).
// * bernoulli (dropout): uniform_double() < p.
// PyTorch's randn for float32 uses vectorized log/sin/cos (avx_mathfun) in its fast
// path and TSL Eigen's, so float32 normals of tensors with >= 16 elements can differ
// from PyTorch's in the last bit or two; everything else matches bit for bit.

void Generator::set_seed(uint64_t seed) {
  engine_.seed(static_cast<uint32_t>(seed & 0xffffffffULL));
  next_normal_.reset();
}

uint64_t Generator::random64() {
  uint64_t hi = random();
  uint64_t lo = random();
  return (hi << 32) | lo;
}

double Generator::normal_double() {
  if (next_normal_) {
    double v = *next_normal_;
    next_normal_.reset();
    return v;
  }
  double u1 = uniform_double();
  double u2 = uniform_double();
  double r = std::sqrt(-2.0 * std::log(1.0 - u2));
  double theta = 2.0 * std::numbers::pi * u1;
  next_normal_ = r * std::sin(theta);
  return r * std::cos(theta);
}

Generator& default_generator() {
  static Generator generator;
  return generator;
}

namespace {

template <typename T>
T uniform(Generator& g) {
  if constexpr (std::is_same_v<T, float>)
    return g.uniform_float();
  else
    return g.uniform_double();
}

// PyTorch's normal_fill_16: Box-Muller on 8 pairs of uniforms in place.
template <typename T>
void normal_fill_16(T* data);

// float32: 8 lanes at once with Eigen's SIMD log/sin/cos (PyTorch vectorizes this too).
template <>
void normal_fill_16<float>(float* data) {
  using Lanes = Eigen::Array<float, 8, 1>;
  Eigen::Map<Lanes> u1_source(data), u2(data + 8);
  const Lanes radius = (-2.0f * (1.0f - u1_source).log()).sqrt();
  const Lanes theta = u2 * static_cast<float>(2.0 * std::numbers::pi);
  u1_source = radius * theta.cos();
  u2 = radius * theta.sin();
}

// float64: PyTorch's scalar loop, which the double stream matches bit for bit.
template <>
void normal_fill_16<double>(double* data) {
  using T = double;
  for (int j = 0; j < 8; ++j) {
    const T u1 = 1 - data[j];
    const T u2 = data[j + 8];
    const T radius = std::sqrt(-2 * std::log(u1));
    const T theta = static_cast<T>(2.0 * std::numbers::pi * u2);
    data[j] = radius * std::cos(theta);
    data[j + 8] = radius * std::sin(theta);
  }
}

template <typename T>
void normal_fill(T* data, int64_t n, Generator& g) {
  for (int64_t i = 0; i < n; ++i) data[i] = uniform<T>(g);
  for (int64_t i = 0; i + 16 <= n; i += 16) normal_fill_16(data + i);
  if (n % 16 != 0) {
    T* tail = data + n - 16;
    for (int i = 0; i < 16; ++i) tail[i] = uniform<T>(g);
    normal_fill_16(tail);
  }
}

template <typename T>
void fill_normal_typed(T* data, int64_t n, Generator& g) {
  if (n >= 16) {
    normal_fill(data, n, g);
    return;
  }
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<T>(g.normal_double());
}

}  // namespace

void fill_uniform(const Tensor& out) {
  TSL_INTERNAL_ASSERT(out.is_contiguous(), "fill_uniform: contiguous output expected");
  Generator& g = default_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  int64_t n = out.numel();
  TSL_DISPATCH_FLOATING(out.dtype(), "rand", [&] {
    scalar_t* data = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) data[i] = uniform<scalar_t>(g);
  });
}

void fill_normal(const Tensor& out) {
  TSL_INTERNAL_ASSERT(out.is_contiguous(), "fill_normal: contiguous output expected");
  Generator& g = default_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  TSL_DISPATCH_FLOATING(out.dtype(), "randn",
                        [&] { fill_normal_typed(out.data_ptr<scalar_t>(), out.numel(), g); });
}

void fill_randint(const Tensor& out, int64_t low, int64_t high) {
  TSL_INTERNAL_ASSERT(out.is_contiguous(), "fill_randint: contiguous output expected");
  TSL_INTERNAL_ASSERT(low < high, "fill_randint: empty range");
  Generator& g = default_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  int64_t n = out.numel();
  TSL_DISPATCH_ALL(out.dtype(), "randint", [&] {
    scalar_t* data = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      uint64_t r = range >= (1ULL << 32) ? g.random64() : g.random();
      int64_t v = static_cast<int64_t>(r % range + static_cast<uint64_t>(low));
      data[i] = static_cast<scalar_t>(v);
    }
  });
}

void fill_randperm(const Tensor& out) {
  TSL_INTERNAL_ASSERT(out.is_contiguous() && out.dim() == 1, "fill_randperm: a contiguous row");
  Generator& g = default_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  int64_t n = out.numel();
  TSL_DISPATCH_ALL(out.dtype(), "randperm", [&] {
    scalar_t* data = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<scalar_t>(i);
    // PyTorch's CPU shuffle: swap position i with one drawn from [i, n).
    for (int64_t i = 0; i + 1 < n; ++i) {
      uint64_t left = static_cast<uint64_t>(n - i);
      uint64_t r = left >= (1ULL << 32) ? g.random64() : g.random();
      int64_t z = static_cast<int64_t>(r % left);
      std::swap(data[i], data[z + i]);
    }
  });
}

void fill_bernoulli(const Tensor& out, double p) {
  TSL_INTERNAL_ASSERT(out.is_contiguous(), "fill_bernoulli: contiguous output expected");
  Generator& g = default_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  int64_t n = out.numel();
  TSL_DISPATCH_ALL(out.dtype(), "bernoulli", [&] {
    scalar_t* data = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<scalar_t>(g.uniform_double() < p);
  });
}

}  // namespace tsl::cpu
