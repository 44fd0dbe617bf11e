// The `tsl` executable.
#include <string>
#include <vector>

#include "frontend/repl/driver.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return tsl::run_command_line(args);
}
