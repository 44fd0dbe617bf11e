// In-place updates (`x += y`, `x.mul_(2)`, `x.copy_(y)`) made differentiable: each
// becomes its out-of-place twin before autodiff, where that keeps the program's
// meaning. See Note [In-place updates under differentiation].
#pragma once

#include <vector>

#include "ir/ir.h"

namespace tsl::autodiff {

// Note [In-place updates under differentiation]
// An in-place op writes into its first input (`self`) and returns it. Autodiff works
// on values, so before differentiating, `r = add_(t, e)` whose operands depend on a
// differentiated input becomes `r' = expand(to(add(t, e), dtype(t)), size(t))` (the
// dtype and shape an in-place update keeps), and the reads of `t` that come after it
// read r' instead: they would have seen the update. (The emitter already rebinds the
// updated name to r, so usually r's uses are the only later reads.)
// That is exact only when no other alias of t is read after the update: a view of
// t, a value t is a view of, another variable holding t (through an If, a Loop, a
// list), or t itself read after the update outside its block or in the next
// iteration of a loop. Those would observe the update, which the out-of-place twin
// does not make, so they are a compile error naming the update, never a silent
// wrong gradient. In-place updates of values no gradient flows through (under
// `with no_grad():`, of constants) stay in place.
//
// The ops: the rows marked INPLACE in runtime/ops.def (add_, sub_, mul_, div_, copy_,
// fill_, zero_, index_put_).
bool is_inplace_update(OpId op);

// Inserts before `n` (an in-place update) the value it writes into its self, out of
// place: the same dtype and shape as self.
Value* out_of_place(Graph& g, Node* n);

// Rewrites the in-place updates of `g` that a gradient with respect to `wrt` flows
// through; a compile error where that would change the meaning (see the Note).
void functionalize_inplace_updates(Graph& g, const std::vector<size_t>& wrt);

}  // namespace tsl::autodiff
