// Note [What the CPU can do]
// CPUID says what the processor implements; a vector extension is usable only when the
// operating system also saves its registers on a context switch, which XGETBV's XCR0
// says (AVX: the SSE and AVX state bits; AVX-512: the opmask and the two ZMM state
// bits as well). A VM may hide either, so both are read, as GCC's
// __builtin_cpu_supports and the kernel's /proc/cpuinfo do (tests/tensor/cpu_info_test
// compares with the latter). The levels are the x86-64 psABI's micro-architecture
// levels, the same that `-march=x86-64-v3` names.
#include "runtime/tensor/cpu_info.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define TSL_HAVE_CPUID 1
#endif

namespace tsl {
namespace {

#ifdef TSL_HAVE_CPUID
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf, unsigned subleaf = 0) {
  Regs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.a, &r.b, &r.c, &r.d)) return Regs{};
  return r;
}

uint64_t xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

bool bit(unsigned reg, int b) { return (reg >> b) & 1u; }

CpuInfo detect() {
  CpuInfo info;
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  unsigned max_ext = __get_cpuid_max(0x80000000u, nullptr);
  if (max_ext >= 0x80000004u) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      Regs r = cpuid(0x80000002u + i);
      std::memcpy(brand + 16 * i, &r, 16);
    }
    std::string s(brand);
    size_t first = s.find_first_not_of(' ');
    size_t last = s.find_last_not_of(' ');
    info.brand = first == std::string::npos ? "" : s.substr(first, last - first + 1);
  }
  if (info.brand.empty()) info.brand = "unknown";

  Regs l1 = max_leaf >= 1 ? cpuid(1) : Regs{};
  Regs l7 = max_leaf >= 7 ? cpuid(7, 0) : Regs{};
  Regs e1 = max_ext >= 0x80000001u ? cpuid(0x80000001u) : Regs{};
  bool os_saves = bit(l1.c, 27);  // OSXSAVE: XGETBV may be used
  uint64_t state = os_saves ? xcr0() : 0;
  bool avx_state = (state & 0x6) == 0x6;
  bool avx512_state = (state & 0xe6) == 0xe6;

  auto add = [&](const char* name, bool present) {
    if (present) info.features.emplace_back(name);
  };
  add("sse3", bit(l1.c, 0));
  add("ssse3", bit(l1.c, 9));
  add("cx16", bit(l1.c, 13));
  add("sse4.1", bit(l1.c, 19));
  add("sse4.2", bit(l1.c, 20));
  add("movbe", bit(l1.c, 22));
  add("popcnt", bit(l1.c, 23));
  add("sahf", bit(e1.c, 0));
  add("lzcnt", bit(e1.c, 5));
  add("bmi", bit(l7.b, 3));
  add("bmi2", bit(l7.b, 8));
  add("avx", avx_state && bit(l1.c, 28));
  add("f16c", avx_state && bit(l1.c, 29));
  add("fma", avx_state && bit(l1.c, 12));
  add("avx2", avx_state && bit(l7.b, 5));
  add("avx512f", avx512_state && bit(l7.b, 16));
  add("avx512dq", avx512_state && bit(l7.b, 17));
  add("avx512ifma", avx512_state && bit(l7.b, 21));
  add("avx512cd", avx512_state && bit(l7.b, 28));
  add("avx512bw", avx512_state && bit(l7.b, 30));
  add("avx512vl", avx512_state && bit(l7.b, 31));
  add("avx512vbmi", avx512_state && bit(l7.c, 1));
  add("avx512vbmi2", avx512_state && bit(l7.c, 6));
  add("avx512vnni", avx512_state && bit(l7.c, 11));
  add("avx512bitalg", avx512_state && bit(l7.c, 12));
  add("avx512vpopcntdq", avx512_state && bit(l7.c, 14));
  add("avx512fp16", avx512_state && bit(l7.d, 23));
  info.level = x86_64_level(info.features);
  return info;
}
#else
CpuInfo detect() {
  CpuInfo info;
  info.brand = "unknown";
  info.level = "unknown";
  return info;
}
#endif

}  // namespace

bool CpuInfo::has(const std::string& feature) const {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

std::string CpuInfo::summary() const {
  std::string s = level + ":";
  for (const std::string& f : features) s += " " + f;
  return s;
}

std::string x86_64_level(const std::vector<std::string>& features) {
  auto all = [&](std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (std::find(features.begin(), features.end(), n) == features.end()) return false;
    return true;
  };
  if (!all({"cx16", "popcnt", "sse3", "ssse3", "sse4.1", "sse4.2", "sahf"})) return "x86-64";
  if (!all({"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe"})) return "x86-64-v2";
  if (!all({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})) return "x86-64-v3";
  return "x86-64-v4";
}

const CpuInfo& cpu_info() {
  static const CpuInfo info = detect();
  return info;
}

}  // namespace tsl
