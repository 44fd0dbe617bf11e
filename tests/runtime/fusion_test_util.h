// Helpers of the fusion tests (fusion_test.cpp, fusion_codegen_test.cpp): values with
// the special ones among them, and distances in ulps between results.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "runtime/interpreter.h"

namespace tsl {

inline std::vector<IValue> run_code(std::shared_ptr<const Graph> g, std::vector<IValue> inputs) {
  Code code(std::move(g));
  InterpreterState state(code);
  return state.run(std::move(inputs));
}

// Values over a wide range with the special ones (NaN, infinities, signed zeros, the
// edges of the SIMD exp's exact range) spread among them.
template <typename T>
std::vector<T> test_values(int64_t n, double scale, uint64_t seed) {
  const T specials[] = {T(0),
                        -T(0),
                        std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN(),
                        T(87.5),
                        T(-87.5),
                        T(100),
                        T(-700),
                        T(1e-30)};
  std::vector<T> v(static_cast<size_t>(n));
  uint64_t s = seed;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = static_cast<double>(s >> 11) / static_cast<double>(1ull << 53);
    v[static_cast<size_t>(i)] = static_cast<T>((u * 2 - 1) * scale);
    if (i % 97 == 5) v[static_cast<size_t>(i)] = specials[(i / 97) % 10];
  }
  return v;
}

// The distance in units in the last place (0 for equal values, NaN and NaN).
template <typename T>
uint64_t ulps(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return UINT64_MAX;
  if (a == b) return 0;
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  auto ordered = [](T x) {
    I i;
    std::memcpy(&i, &x, sizeof(T));
    return i < 0 ? static_cast<int64_t>(std::numeric_limits<I>::min()) - i
                 : static_cast<int64_t>(i);
  };
  int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

// The greatest ulp distance between two tensors of dtype T (UINT64_MAX when their
// shapes or dtypes differ).
template <typename T>
uint64_t max_ulps(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype() || a.dtype() != dtype_of<T>)
    return UINT64_MAX;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  uint64_t worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, ulps(ca.data_ptr<T>()[i], cb.data_ptr<T>()[i]));
  return worst;
}

}  // namespace tsl
