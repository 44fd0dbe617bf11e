// The CPU's features against two oracles TSL did not write: the kernel's /proc/cpuinfo
// and GCC's __builtin_cpu_supports.
#include "runtime/tensor/cpu_info.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace tsl {
namespace {

std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::set<std::string> flags;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) flags.insert(w);
    break;
  }
  return flags;
}

TEST(CpuInfo, FeaturesAreTheKernels) {
  std::set<std::string> flags = proc_cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  // GCC's names (CpuInfo's) and Linux's, where they differ.
  const std::map<std::string, std::string> linux_name = {{"sse4.1", "sse4_1"},
                                                         {"sse4.2", "sse4_2"},
                                                         {"sahf", "lahf_lm"},
                                                         {"bmi", "bmi1"},
                                                         {"avx512vbmi2", "avx512_vbmi2"},
                                                         {"avx512vnni", "avx512_vnni"},
                                                         {"avx512bitalg", "avx512_bitalg"},
                                                         {"avx512vpopcntdq", "avx512_vpopcntdq"},
                                                         {"avx512fp16", "avx512_fp16"},
                                                         {"sse3", "pni"}};
  const char* all[] = {"sse3",       "ssse3",       "cx16",       "sse4.1",       "sse4.2",
                       "movbe",      "popcnt",      "sahf",       "bmi",          "bmi2",
                       "avx",        "f16c",        "fma",        "avx2",         "avx512f",
                       "avx512dq",   "avx512ifma",  "avx512cd",   "avx512bw",     "avx512vl",
                       "avx512vbmi", "avx512vbmi2", "avx512vnni", "avx512bitalg", "avx512vpopcntdq",
                       "avx512fp16"};
  // Not lzcnt: Linux calls it "abm" and some kernels leave it out where CPUID has it
  // (an AMD VM here); LevelIsGccs checks it, as x86-64-v3 needs it.
  const CpuInfo& cpu = cpu_info();
  for (const char* f : all) {
    auto it = linux_name.find(f);
    std::string name = it == linux_name.end() ? f : it->second;
    EXPECT_EQ(cpu.has(f), flags.count(name) == 1) << f << " (/proc/cpuinfo: " << name << ")";
  }
  EXPECT_FALSE(cpu.brand.empty());
}

TEST(CpuInfo, LevelIsGccs) {
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  __builtin_cpu_init();
  std::string gcc = __builtin_cpu_supports("x86-64-v4")   ? "x86-64-v4"
                    : __builtin_cpu_supports("x86-64-v3") ? "x86-64-v3"
                    : __builtin_cpu_supports("x86-64-v2") ? "x86-64-v2"
                                                          : "x86-64";
  EXPECT_EQ(cpu_info().level, gcc) << cpu_info().summary();
#else
  GTEST_SKIP() << "needs GCC 12's __builtin_cpu_supports levels";
#endif
}

TEST(CpuInfo, LevelsNeedEveryExtension) {
  std::vector<std::string> v2 = {"cx16", "popcnt", "sse3", "ssse3", "sse4.1", "sse4.2", "sahf"};
  EXPECT_EQ(x86_64_level({}), "x86-64");
  EXPECT_EQ(x86_64_level(v2), "x86-64-v2");
  std::vector<std::string> v3 = v2;
  for (const char* f : {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe"})
    v3.emplace_back(f);
  EXPECT_EQ(x86_64_level(v3), "x86-64-v3");
  std::vector<std::string> no_fma = v3;
  no_fma.erase(std::find(no_fma.begin(), no_fma.end(), "fma"));
  EXPECT_EQ(x86_64_level(no_fma), "x86-64-v2");
  std::vector<std::string> v4 = v3;
  for (const char* f : {"avx512f", "avx512bw", "avx512cd", "avx512dq"}) v4.emplace_back(f);
  EXPECT_EQ(x86_64_level(v4), "x86-64-v3");  // no avx512vl
  v4.emplace_back("avx512vl");
  EXPECT_EQ(x86_64_level(v4), "x86-64-v4");
}

}  // namespace
}  // namespace tsl
