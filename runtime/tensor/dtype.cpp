// Names of dtypes as PyTorch prints and accepts them.
#include "runtime/tensor/dtype.h"

namespace tsl {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::Int64:
      return "int64";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
  }
  return "unknown";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  if (name == "float32" || name == "float") return DType::Float32;
  if (name == "float64" || name == "double") return DType::Float64;
  if (name == "int64" || name == "long") return DType::Int64;
  if (name == "bool") return DType::Bool;
  return std::nullopt;
}

std::string_view scalar_type_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "Bool";
    case DType::Int64:
      return "Long";
    case DType::Float32:
      return "Float";
    case DType::Float64:
      return "Double";
  }
  return "?";
}

}  // namespace tsl
