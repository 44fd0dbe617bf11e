// The `tsl` executable.
#include <malloc.h>

#include <string>
#include <vector>

#include "frontend/repl/driver.h"

int main(int argc, char** argv) {
  // Programs run on a thread of their own (driver.cpp's big stack), whose glibc arena
  // returns freed tensor memory to the kernel: every large result then page-faults
  // its memory in again (a 16 MiB result: ~4,000 faults, more time than the math).
  // One arena (the main heap), large blocks kept below 32 MiB and a heap trimmed only
  // past 64 MiB free keep reusing the same memory.
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  std::vector<std::string> args(argv + 1, argv + argc);
  return tsl::run_command_line(args);
}
