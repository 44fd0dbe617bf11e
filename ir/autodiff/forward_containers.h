// Reads of list and dict literals at constant indices and keys, forwarded to the
// values stored there before differentiating. See Note [Dicts under differentiation].
#pragma once

#include "ir/ir.h"

namespace tsl::autodiff {

// Note [Dicts under differentiation]
// Autodiff has gradients for lists of tensors (Note [Lists] in differentiate.cpp) but
// none for dicts: a dict is a bag of values whose gradient would need a dict of its
// own for every write, pop and update. What programs do with a dict inside a function
// that is differentiated is mostly to build it and read entries back by name:
//
//     d = {"h": x @ w, "b": b}        %d = DictConstruct("h", %h, "b", %b)
//     d["h"] = d["h"].relu()          setitem(%d, "h", relu(getitem(%d, "h")))
//     return (d["h"] + d["b"]).sum()  ... getitem(%d, "h") ... getitem(%d, "b")
//
// Before differentiating, each such read is replaced by the value the program stored
// there last, as scalar replacement of aggregates does: getitem(%d, "h") becomes %h,
// and after the setitem, the relu. The dict itself and its writes stay (print and
// len still see it), but no gradient has to pass through them. The same is done for
// list literals read at constant indices (`xs[0]` after `xs[0] = v`).
//
// It is exact when every read and write of the container is visible: the dict or
// list is a literal of this graph (calls are inlined first), its keys are constants,
// and it is never stored elsewhere, passed to a call, carried by a loop or branch, or
// returned (any of which may create an alias that writes it unseen). Writes at run-time
// keys, `update` (but of a literal) and `clear` end the forwarding from there on; a
// write in a loop body stops it for every read in that loop. After an If whose
// branches wrote it, an entry the branches left different becomes a new output of the
// If (the value of each branch), as long as both know every entry and have the same
// keys; else the forwarding stops there.
//
// Where every entry is known, a read at a run-time key (`for k, v in d.items()` reads
// d[k]) becomes a read of the list of the values, in the dict's order, at the key's
// place `index(d, k)`: autodiff differentiates list reads (Note [Lists] in
// differentiate.cpp).
//
// What is not forwarded keeps its dict op, which has no gradient formula: the
// dependence analysis (prepare.h) marks dicts that hold values needing gradients, and
// a gradient reaching a dict op (or a list item assignment) is a compile error that
// names it, never a silent zero.
void forward_container_entries(Graph& g);

// Whether every use of `dict` (a dict value of a graph whose calls are inlined) only
// reads it: no write, pop, update or clear, and never stored, passed on or returned.
// The eager tape then may hand a call a copy of a dict argument built from its values
// (runtime/autograd/record.cpp).
bool only_read_in_place(const Value* dict);

}  // namespace tsl::autodiff
