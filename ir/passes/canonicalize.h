// Canonicalization: rewrites equivalent forms into one, so that the other passes
// find more: constants as the second operand of commutative ops, tuples built then
// taken apart.
#pragma once

#include "ir/ir.h"

namespace tsl {

//  * Commutative ops (see is_commutative in pass_utils.h) take a constant operand
//    second: mul(%two, %x) becomes mul(%x, %two). Other operands keep their source
//    order, so the graph still reads like the program; CSE matches commutative
//    operands in either order by itself.
//  * TupleIndex[index=i](TupleConstruct(a0, ..., an)) -> ai, and the outputs of
//    TupleUnpack(TupleConstruct(...)) -> the elements; unwrap_optional(to_optional(x))
//    -> x. The tuple node is left for dead-code elimination.
// Returns whether it changed g.
bool canonicalize(Graph& g);

}  // namespace tsl
