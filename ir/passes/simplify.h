// Algebraic simplification that is exact in IEEE arithmetic: rewrites whose result
// is bit-identical to the original for every input (NaN, infinities and signed zeros
// included), with the same type, dtype, shape and aliasing.
#pragma once

#include "ir/ir.h"

namespace tsl {

// The rules (c is a Constant; "x floating" means the Tensor type of x knows a
// floating dtype, "x int" an int64 dtype; dtypes unknown to the IR block a rule):
//
//   add.int(a, 0), add.int(0, a), sub.int(a, 0)   -> a   integers are exact, and a
//   mul.int(a, 1), mul.int(1, a)                  -> a   0 or 1 cannot overflow
//   add.float(a, -0.0), add.float(-0.0, a)        -> a   a + -0 is a for every a,
//                                                        also +0 (+0 + -0 = +0)
//   sub.float(a, 0.0)                             -> a   -0 - 0 = -0, NaN - 0 = NaN
//   mul.float(a, 1.0), mul.float(1.0, a)          -> a   multiplying by 1 is exact
//   div.float(a, 1.0)                             -> a
//   neg.float(neg.float(a)), not(not(b))          -> a, b
//   mul(x, 1), mul(1, x)        x not bool       -> x   an int 1 keeps x's dtype
//   mul(x, 1.0), div(x, 1.0), div(x, 1)  x floating -> x  (true division of ints
//                                                        would make floats)
//   sub(x, 0)                   x not bool       -> x   (bool subtraction raises)
//   sub(x, 0.0)                 x floating       -> x
//   add(x, -0.0)                x floating       -> x
//   add(x, 0), add(0, x)        x int            -> x   no signed zero in ints
//   neg(neg(x))                 x not bool       -> x   (neg of bool raises)
//   contiguous(contiguous(x))                    -> contiguous(x)
//   to(x, d)                    x's dtype is d   -> x   `to` returns x itself then
// A Python number operand is a 0-dim wrapped number, so the result has x's shape.
//
// Deliberately absent, because they are not exact: x + 0 and 0.0 + x on floats
// (-0 + 0 = +0), x - (-0.0), x * 0 (NaN, inf and the sign of zero), x / x, x - x,
// neg.int(neg.int(a)) (the inner negation of the smallest int raises).
//
// A tensor rule replaces a fresh tensor by x itself; it applies only when neither x
// nor the result may be mutated in place or escape (Note [Mutation and aliasing in
// the passes]). The replaced node is removed when nothing else uses it.
// Returns whether it changed g.
bool simplify_arithmetic(Graph& g);

}  // namespace tsl
