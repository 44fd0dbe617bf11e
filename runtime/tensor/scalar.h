// A Python number taking part in a tensor op (`x * 2.0`, `full(s, 7)`): bool, int or
// float, kept apart because the kind decides type promotion.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/tensor/dtype.h"

namespace tsl {

class Scalar {
 public:
  Scalar() : kind_(ScalarKind::Int), i_(0) {}
  Scalar(bool v) : kind_(ScalarKind::Bool), i_(v ? 1 : 0) {}
  Scalar(int64_t v) : kind_(ScalarKind::Int), i_(v) {}
  Scalar(int v) : kind_(ScalarKind::Int), i_(v) {}
  Scalar(double v) : kind_(ScalarKind::Float), d_(v) {}

  ScalarKind kind() const { return kind_; }
  bool is_floating() const { return kind_ == ScalarKind::Float; }
  bool is_integral() const { return kind_ != ScalarKind::Float; }
  bool is_bool() const { return kind_ == ScalarKind::Bool; }

  double to_double() const { return kind_ == ScalarKind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_int() const { return kind_ == ScalarKind::Float ? double_to_int(d_) : i_; }
  bool to_bool() const { return kind_ == ScalarKind::Float ? d_ != 0.0 : i_ != 0; }
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>)
      return to_bool();
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(to_int());
    else
      return static_cast<T>(to_double());
  }

  // The dtype a tensor made from this scalar alone gets (torch.tensor(2.0) is float32).
  DType default_dtype() const {
    switch (kind_) {
      case ScalarKind::Bool:
        return DType::Bool;
      case ScalarKind::Int:
        return DType::Int64;
      case ScalarKind::Float:
        return DType::Float32;
    }
    return DType::Float32;
  }

 private:
  // Truncation toward zero; NaN and values outside int64 give INT64_MIN, as x86's
  // conversion (and so PyTorch's on this CPU) does, instead of undefined behaviour.
  static int64_t double_to_int(double v) {
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return INT64_MIN;
    return static_cast<int64_t>(v);
  }

  ScalarKind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace tsl
