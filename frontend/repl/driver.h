// The `tsl` command line (LANGUAGE.md §11): scripts, -c, stdin, --dump, the REPL.
#pragma once

#include <string>
#include <vector>

namespace tsl {

// Exit statuses (LANGUAGE.md §10).
constexpr int kExitOk = 0;
constexpr int kExitRuntimeError = 1;
constexpr int kExitCompileError = 2;  // also bad usage and unreadable files
constexpr int kExitInternalError = 3;

// Runs the command line `args` (without argv[0]) and returns the exit status.
int run_command_line(const std::vector<std::string>& args);

}  // namespace tsl
