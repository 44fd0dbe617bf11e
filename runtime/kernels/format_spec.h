// Python's format-spec mini-language ("{:>8.3f}"), for str.format and f-strings.
#pragma once

#include <string>

#include "runtime/tensor/ivalue.h"

namespace tsl {

// format(value, spec) as Python computes it: [[fill]align][sign][#][0][width]
// [grouping][.precision][type] for ints, floats, bools and strings. A 0-dim tensor
// formats its item (PyTorch's Tensor.__format__); other values accept only an empty
// spec and give their str(). A malformed spec is a user error.
std::string format_value(const IValue& value, const std::string& spec);

}  // namespace tsl
