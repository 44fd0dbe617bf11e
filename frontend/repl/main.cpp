// The `tsl` command (placeholder until the driver lands).
#include <cstdio>

int main() {
  std::puts("tsl " TSL_VERSION);
  return 0;
}
