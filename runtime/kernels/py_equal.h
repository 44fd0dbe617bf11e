// Python's == on the values TSL programs hold, shared by the list, tuple and dict ops.
#pragma once

#include "runtime/tensor/ivalue.h"

namespace tsl {

// Numbers compare across int, float and bool; lists and tuples elementwise (a list
// equals a tuple of the same elements: TSL's x.shape is a list where PyTorch's
// torch.Size is a tuple); dicts by the same keys with equal values, in any order;
// tensors as bool(a == b), which needs one element, as in Python; strings, dtypes and
// devices by value; anything else by identity.
bool py_equal(const IValue& a, const IValue& b);

}  // namespace tsl
