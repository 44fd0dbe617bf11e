// Tensor element types, their C++ types, names as PyTorch spells them, and PyTorch's
// type-promotion lattice (bool < int64 < float32 < float64).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/tensor/error.h"

namespace tsl {

enum class DType : uint8_t { Bool = 0, Int64 = 1, Float32 = 2, Float64 = 3 };
constexpr int kNumDTypes = 4;

constexpr size_t element_size(DType t) {
  switch (t) {
    case DType::Bool:
      return 1;
    case DType::Int64:
      return 8;
    case DType::Float32:
      return 4;
    case DType::Float64:
      return 8;
  }
  return 0;
}

constexpr bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }
constexpr bool is_integral(DType t, bool include_bool) {
  return t == DType::Int64 || (include_bool && t == DType::Bool);
}
// PyTorch's canCast, which in-place ops check of their result: no floating value into
// an integral tensor, nothing but bool into a bool tensor.
constexpr bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  return from == DType::Bool || to != DType::Bool;
}

// "float32", "int64", ... (the suffix of torch.float32).
std::string_view dtype_name(DType t);
// "Float", "Double", "Long", "Bool": the ScalarType names PyTorch's messages use.
std::string_view scalar_type_name(DType t);
// Accepts PyTorch's names and aliases: float32/float, float64/double, int64/long, bool.
std::optional<DType> dtype_from_name(std::string_view name);

// The result type of a binary op between two tensors of these types.
constexpr DType promote_types(DType a, DType b) { return a > b ? a : b; }

// The kind of a Python scalar taking part in an op with a tensor.
enum class ScalarKind : uint8_t { Bool, Int, Float };

// PyTorch's rule for a tensor combined with a Python scalar: the scalar only widens
// the category (bool -> int -> float), never the float width, so float32 * 2.0 stays
// float32 and int64 * 2.0 becomes float32 (the default float type).
constexpr DType promote_with_scalar(DType tensor, ScalarKind scalar) {
  switch (scalar) {
    case ScalarKind::Bool:
      return tensor;
    case ScalarKind::Int:
      return tensor == DType::Bool ? DType::Int64 : tensor;
    case ScalarKind::Float:
      return is_floating(tensor) ? tensor : DType::Float32;
  }
  return tensor;
}

template <typename T>
struct CppTypeToDType;
template <>
struct CppTypeToDType<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct CppTypeToDType<int64_t> {
  static constexpr DType value = DType::Int64;
};
template <>
struct CppTypeToDType<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct CppTypeToDType<double> {
  static constexpr DType value = DType::Float64;
};
template <typename T>
constexpr DType dtype_of = CppTypeToDType<T>::value;

}  // namespace tsl

// Runs BODY with `scalar_t` bound to the C++ type of DTYPE.
//   TSL_DISPATCH_ALL(x.dtype(), "relu", [&] { kernel<scalar_t>(x); });
#define TSL_DISPATCH_CASE(enum_value, cpp_type, ...) \
  case ::tsl::DType::enum_value: {                   \
    using scalar_t = cpp_type;                       \
    return __VA_ARGS__();                            \
  }

#define TSL_DISPATCH_ALL(DTYPE, NAME, ...)                                  \
  [&] {                                                                     \
    switch (DTYPE) {                                                        \
      TSL_DISPATCH_CASE(Bool, bool, __VA_ARGS__)                            \
      TSL_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)                        \
      TSL_DISPATCH_CASE(Float32, float, __VA_ARGS__)                        \
      TSL_DISPATCH_CASE(Float64, double, __VA_ARGS__)                       \
    }                                                                       \
    throw ::tsl::InternalError(__FILE__, __LINE__, NAME ": unknown dtype"); \
  }()

#define TSL_DISPATCH_FLOATING(DTYPE, NAME, ...)                                                  \
  [&] {                                                                                          \
    switch (DTYPE) {                                                                             \
      TSL_DISPATCH_CASE(Float32, float, __VA_ARGS__)                                             \
      TSL_DISPATCH_CASE(Float64, double, __VA_ARGS__)                                            \
      default:                                                                                   \
        break;                                                                                   \
    }                                                                                            \
    throw ::tsl::Error(                                                                          \
        ::tsl::str(NAME, ": expected a floating-point tensor, got ", ::tsl::dtype_name(DTYPE))); \
  }()

#define TSL_DISPATCH_NUMERIC(DTYPE, NAME, ...)                                              \
  [&] {                                                                                     \
    switch (DTYPE) {                                                                        \
      TSL_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)                                        \
      TSL_DISPATCH_CASE(Float32, float, __VA_ARGS__)                                        \
      TSL_DISPATCH_CASE(Float64, double, __VA_ARGS__)                                       \
      default:                                                                              \
        break;                                                                              \
    }                                                                                       \
    throw ::tsl::Error(::tsl::str(NAME, ": not supported for ", ::tsl::dtype_name(DTYPE))); \
  }()
