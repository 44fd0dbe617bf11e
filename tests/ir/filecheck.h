// A small FileCheck (LLVM's test checker) for the .ir pass tests: checks a pass's
// output against the `# CHECK:` lines written beside its input.
#pragma once

#include <string>
#include <string_view>

namespace tsl::testing {

// Checks `output` against the directives in `check_text`, one per line, each after a
// `#` (other lines are ignored):
//   # CHECK: text        `text` occurs after the previous match
//   # CHECK-NEXT: text   `text` occurs on the line right after the previous match
//   # CHECK-NOT: text    `text` does not occur between the previous match and the
//                        next one (or the end of the output)
//   # CHECK-LABEL: text  as CHECK (LLVM also splits the input at labels; we do not)
// Matching is by substring; runs of spaces and tabs match any run of them, and the
// text's leading and trailing blanks are ignored, as in LLVM's FileCheck.
// Returns "" when the output passes, else a message saying which check failed and
// where.
std::string filecheck(std::string_view check_text, std::string_view output);

}  // namespace tsl::testing
