// The CPU random number generator. It reproduces PyTorch's CPU streams (mt19937 and
// PyTorch's transformations of its output), so a script seeded with manual_seed draws
// the same numbers as PyTorch does. See Note [Random streams] in random.cpp.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <random>

#include "runtime/tensor/tensor.h"

namespace tsl::cpu {

class Generator {
 public:
  // PyTorch's default seed, so unseeded scripts are reproducible too.
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;

  explicit Generator(uint64_t seed = kDefaultSeed) { set_seed(seed); }

  void set_seed(uint64_t seed);
  uint32_t random() { return static_cast<uint32_t>(engine_()); }
  uint64_t random64();
  // Uniform on [0, 1) from 24 (float) or 53 (double) random bits, as PyTorch.
  float uniform_float() { return static_cast<float>(random() & ((1u << 24) - 1)) * 0x1p-24f; }
  double uniform_double() { return static_cast<double>(random64() & ((1ULL << 53) - 1)) * 0x1p-53; }
  // A standard normal sample by Box-Muller; the second value of each pair is cached.
  double normal_double();

  // Held by the fill functions below while they draw.
  std::mutex& mutex() { return mutex_; }

 private:
  std::mt19937 engine_;
  std::optional<double> next_normal_;
  std::mutex mutex_;
};

Generator& default_generator();

// Fills a contiguous tensor from the default generator, in element order.
void fill_uniform(const Tensor& out);                             // floating dtypes
void fill_normal(const Tensor& out);                              // floating dtypes
void fill_randint(const Tensor& out, int64_t low, int64_t high);  // any dtype
// 0, 1, ..., n-1 shuffled as PyTorch's CPU randperm shuffles them for a seed.
void fill_randperm(const Tensor& out);
void fill_bernoulli(const Tensor& out, double p);                 // 1 with probability p

}  // namespace tsl::cpu
