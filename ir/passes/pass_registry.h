// Named graph passes and the driver that runs a list of them (`tsl --ir FILE
// --passes=dce,...`, the .ir pass tests), with the verifier after each pass.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace tsl {

using GraphPass = std::function<void(Graph&)>;

struct PassInfo {
  std::string name;         // "dce"
  std::string description;  // one line for --help and error messages
  GraphPass run;
};

// The known passes, built-in ones first, then registered ones (a deque: references
// stay valid when a pass is registered).
const std::deque<PassInfo>& all_passes();
// The pass named `name`, or null.
const PassInfo* find_pass(std::string_view name);
// Adds a pass (tests, experiments). A duplicate name is an internal error.
void register_pass(std::string name, std::string description, GraphPass run);

// Throws a user Error naming the first unknown pass and listing the known ones.
void check_pass_names(const std::vector<std::string>& names);

// Runs the named passes in order. With `verify_after_each`, the verifier runs after
// every pass; a failure is an InternalError that names the pass.
void run_passes(Graph& g, const std::vector<std::string>& names, bool verify_after_each = true);

}  // namespace tsl
