// Helpers shared by the kernel tests: calling an op, reading results as doubles,
// comparing with PyTorch's numbers, and catching user errors.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"

namespace tsl::test {

// ramp(*shape, k, m) = [((i*k) % m - 3) * 0.5 for i in range(numel)] reshaped.
inline Tensor ramp(std::vector<int64_t> shape, int k = 3, int m = 7, DType dtype = DType::Float32) {
  Tensor d = Tensor::empty(shape, DType::Float64);
  double* p = d.data_ptr<double>();
  for (int64_t i = 0; i < d.numel(); ++i) p[i] = static_cast<double>((i * k) % m - 3) * 0.5;
  if (dtype == DType::Float64) return d;
  Tensor out = Tensor::empty(shape, dtype);
  copy_into(out, d);
  return out;
}

// The first output of `op` (every schema argument passed explicitly).
inline Tensor run(OpId op, std::vector<IValue> args) {
  return call_op(op, std::move(args))[0].to_tensor();
}

// The elements of `t` in row-major order, as doubles.
inline std::vector<double> values(const Tensor& t) {
  Tensor d = Tensor::empty(t.sizes(), DType::Float64);
  copy_into(d, t);
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

// Shape, dtype and values within rtol * max(floor, |expected|): a floor of 1 makes the
// tolerance absolute near zero. NaN matches NaN and infinities must be equal.
inline void expect_close(const Tensor& t, const std::vector<int64_t>& shape, DType dtype,
                         const std::vector<double>& expected, double rtol, double floor) {
  EXPECT_EQ(t.sizes(), DimVector(shape));
  EXPECT_EQ(t.dtype(), dtype);
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    } else if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "at " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], rtol * std::max(floor, std::abs(expected[i]))) << "at " << i;
    }
  }
}

// The message of the user error `fn` raises, or "<no error>".
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace tsl::test
