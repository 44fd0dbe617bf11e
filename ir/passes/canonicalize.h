// Canonicalization: rewrites equivalent forms into one, so that CSE and the other
// passes find more: operand order of commutative ops, tuples built then taken apart.
#pragma once

#include "ir/ir.h"

namespace tsl {

//  * Commutative ops (add and mul on tensors with alpha 1, add/mul.int/.float,
//    eq/ne on scalars and tensors, maximum/minimum, min/max.int, the logical and
//    bitwise and/or/xor) order their two operands: the one defined first comes
//    first, constants last; so `mul(%y, %x)` and `mul(%x, %y)` become one node
//    shape. Promotion and broadcasting are symmetric and IEEE + and * commute, so
//    values, dtypes and shapes are unchanged (when both operands are NaN, the NaN
//    payload that survives may change; TSL cannot observe payloads). min.float and
//    max.float are not reordered: Python's min(nan, 1.0) and min(1.0, nan) differ.
//  * TupleIndex[index=i](TupleConstruct(a0, ..., an)) -> ai, and the outputs of
//    TupleUnpack(TupleConstruct(...)) -> the elements; unwrap_optional(to_optional(x))
//    -> x. The tuple node is left for dead-code elimination.
// Returns whether it changed g.
bool canonicalize(Graph& g);

}  // namespace tsl
