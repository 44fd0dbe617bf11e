// Static dtypes of op results, where the argument types decide them: the type
// checker types `t.item()` as int, float or bool from them, as PyTorch's value is.
#pragma once

#include <vector>

#include "ir/ir.h"
#include "ir/schema.h"

namespace tsl {

// Refines the Tensor results in `results` (the schema's return types) of a call of
// `schema` on `inputs` (one per schema argument) to Tensor[dtype] where PyTorch's
// rules fix the dtype from what is known statically: the dtypes of tensor
// arguments, the kinds of Python number arguments and constant `dtype=` arguments.
// Results whose dtype depends on what is not known (a tensor of unknown dtype, the
// 0-dim rule of type promotion between tensors of different dtypes) stay `Tensor`.
void infer_result_dtypes(const FunctionSchema& schema, const std::vector<Value*>& inputs,
                         std::vector<TypePtr>& results);

}  // namespace tsl
