// Whether each result of a graph depends, on the path a run takes, on the
// differentiated inputs: what PyTorch's eager autograd reports as requires_grad.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/ir.h"

namespace tsl::autodiff {

// Note [Dependence flags]
// A compiled function called on the eager tape is one node; PyTorch runs the same
// function op by op, so a result computed on a path that never touched a tensor
// requiring grad has no grad_fn there (`if s > 0: return x * 2` else `return
// torch.zeros(3)`). Static analysis (analyze_dependence) says only "may depend".
// add_dependence_flags appends to `g` one bool output per existing output, true
// when that output depends on an input in `wrt` on the path the run took:
// constants where the analysis decides, and for If and Loop outputs a flag carried
// out of the blocks (an If returns its branch's flag, a Loop carries one per
// carried value). Reading an element of a list asks the list's flag (whether any
// element may depend), which errs on the side of requiring grad.
// Returns the number of outputs `g` had before (the first flag's index).
size_t add_dependence_flags(Graph& g, const std::vector<size_t>& wrt);

}  // namespace tsl::autodiff
