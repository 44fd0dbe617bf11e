// Op schemas parsed from the schema text of runtime/ops.def into typed arguments
// with defaults, for the type checker, the verifier and the printer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/type.h"
#include "runtime/kernels/op_info.h"

namespace tsl {

struct Argument {
  std::string name;
  TypePtr type;  // may contain Var (`t`), Any and Number
  std::optional<IValue> default_value;
  bool kwarg_only = false;
  bool variadic = false;  // `Any... values`: takes all remaining positional args
  // `int[2] stride=1`: a list of this many ints; a single int stands for all of them
  // (PyTorch's BroadcastingList). 0 for lists of any length.
  int fixed_size = 0;
};

struct FunctionSchema {
  OpId op;
  std::string name;       // full name: "max.dim"
  std::string base_name;  // "max"
  std::vector<Argument> arguments;
  std::vector<Argument> returns;  // empty for None-returning ops
  bool variadic_returns = false;  // `-> ...` (structural ops)

  // The index of the first variadic argument, or -1.
  int variadic_index() const;
  // "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
  std::string str() const;
};

// The parsed schema of an op (parsed once, on first use).
const FunctionSchema& schema_of(OpId op);

// Parses one schema text; throws InternalError on a malformed schema (a TSL bug).
FunctionSchema parse_schema(OpId op, std::string_view text);

}  // namespace tsl
