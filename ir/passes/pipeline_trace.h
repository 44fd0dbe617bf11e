// The pipeline watched pass by pass (the REPL's `:passes f`), fusion last: the graph
// after every pass that changed it, as a line diff of the printed IR against the graph before.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tsl {

// Runs the pipeline (run_pipeline, what Function::code() runs) on a copy of `g` and
// describes it: for each round, and for the fusion after the rounds, each
// pass that changed the graph with the whole graph after it, its lines marked "- " (gone),
// "+ " (new) or "  " (kept); each pass that changed nothing as "unchanged". Values
// keep the names they print with in `g` from pass to pass, and values a pass makes
// get new numbers, so the diff shows only what the pass did. `options` are the
// printer's (line numbers, captured outputs).
std::string trace_optimize(const Graph& g, PrintOptionsIR options = {.with_lines = true});

// The lines of `before` and `after` aligned by a longest common subsequence: each
// line prefixed "  " (in both), "- " (only in before) or "+ " (only in after).
std::string line_diff(const std::string& before, const std::string& after);

}  // namespace tsl
