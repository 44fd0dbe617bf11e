// What the running CPU can do: its name and the x86-64 instruction-set extensions that
// both it and the operating system support. The cache of compiled fusion kernels is
// keyed by it (a cache shared between two machines never hands one of them a kernel
// its CPU cannot run), and `tsl --version` and the benchmarks print it.
#pragma once

#include <string>
#include <vector>

namespace tsl {

struct CpuInfo {
  std::string brand;  // e.g. "AMD EPYC 7B13"; "unknown" where the CPU does not say
  // The extensions found, in a fixed order, with GCC's names for them (the -m flags
  // without "-m"): sse4.2, avx2, fma, avx512f, ...
  std::vector<std::string> features;
  // The highest x86-64 micro-architecture level all of whose extensions are present:
  // "x86-64", "x86-64-v2", "x86-64-v3" (AVX2, FMA) or "x86-64-v4" (AVX-512).
  std::string level;

  bool has(const std::string& feature) const;
  // "x86-64-v4: sse3 ssse3 ... avx512vl": the key that compiled code depends on.
  std::string summary() const;
};

// The running CPU, detected once with CPUID (and XGETBV for what the OS enables).
const CpuInfo& cpu_info();

// The level a set of features reaches (exposed for tests).
std::string x86_64_level(const std::vector<std::string>& features);

}  // namespace tsl
