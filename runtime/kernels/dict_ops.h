// The dict ops of runtime/ops.def by what they do, whatever their key type: each op
// has one row for `str` keys and one for `int` keys (Note [Dicts] in dict_ops.cpp),
// and the frontend, the passes and autodiff ask about the pair, not the row.
#pragma once

#include <optional>

#include "runtime/kernels/op_info.h"

namespace tsl {

enum class DictOp {
  Len,
  Getitem,
  Setitem,
  Contains,
  Get,
  GetDefault,
  Keys,
  Values,
  Items,
  Pop,
  PopDefault,
  Update,
  Copy,
  Clear,
  Eq,
  Index,
  CheckSize,
};

// Which dict op `op` is, or nullopt when it is no dict op (DictConstruct included:
// it is structural).
std::optional<DictOp> dict_op_of(OpId op);

// The row of `op` for dicts with int keys (`int_keys`) or str keys.
OpId dict_op_id(DictOp op, bool int_keys);

}  // namespace tsl
