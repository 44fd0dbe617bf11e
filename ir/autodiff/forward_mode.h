// Forward-mode differentiation: tangents propagated alongside the forward values by
// each op's `jvp` rule (not by transposing the reverse mode twice).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tsl::autodiff {

// Note [Forward mode]
// The graph is walked in order; right after each node whose inputs have tangents,
// its rule computes the tangents of its outputs. Tangents of values that do not
// depend on the inputs in `wrt` are zero and never materialized. Control flow
// carries tangents structurally: an If gets one more output per value whose tangent
// a branch computes (a branch without one returns zeros), a Loop one more carried
// value per loop-carried value that depends on `wrt`. No value is saved: forward mode
// needs no tape.

struct JvpGraph {
  // Inputs: the forward inputs with one tangent per `wrt` input inserted at
  // `tangent_position` (default: after all inputs). Outputs: the forward outputs,
  // then the tangent of each Tensor output (zeros when it does not depend on wrt).
  std::shared_ptr<Graph> graph;
  size_t num_forward_outputs = 0;
};

JvpGraph build_jvp(const Graph& forward, const std::vector<size_t>& wrt,
                   const std::string& function_name, size_t tangent_position = SIZE_MAX);

}  // namespace tsl::autodiff
