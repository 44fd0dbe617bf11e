// The choice of CPU kernels at start-up: Note [One binary for every x86-64] in
// cpu_capability.h.
#include "runtime/tensor/cpu_capability.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/tensor/cpu_info.h"

namespace tsl::cpu {
namespace {

// x86-64 micro-architecture levels in order; -1 for a -march that is none of them
// ("native", a CPU's name).
int level_rank(const std::string& level) {
  static const char* const kLevels[] = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  for (int i = 0; i < 4; ++i) {
    if (level == kLevels[i]) return i;
  }
  return -1;
}

struct Choice {
  const Capability* capability;
  std::string why;
};

Choice choose() {
  const std::vector<Capability>& all = compiled_capabilities();
  const Capability* best = &all.front();
  for (const Capability& c : all) {
    if (cpu_supports(c)) best = &c;
  }
  const char* forced = std::getenv("TSL_CPU_CAPABILITY");
  if (!forced || !*forced) return {best, "the highest this CPU runs"};
  std::string names;
  for (const Capability& c : all) {
    names += names.empty() ? "" : ", ";
    names += c.name;
    if (std::strcmp(c.name, forced) != 0) continue;
    if (cpu_supports(c)) return {&c, "TSL_CPU_CAPABILITY"};
    std::fprintf(stderr,
                 "tsl: warning: TSL_CPU_CAPABILITY is '%s', which this CPU (%s) cannot run; "
                 "using %s\n",
                 forced, cpu_info().level.c_str(), best->name);
    return {best, "the highest this CPU runs; TSL_CPU_CAPABILITY asked for one it cannot"};
  }
  std::fprintf(stderr, "tsl: warning: TSL_CPU_CAPABILITY is '%s'; this build has %s (using %s)\n",
               forced, names.c_str(), best->name);
  return {best, "the highest this CPU runs; TSL_CPU_CAPABILITY named none of this build's"};
}

const Choice& choice() {
  static const Choice c = choose();
  return c;
}

}  // namespace

const std::vector<Capability>& compiled_capabilities() {
  static const std::vector<Capability> all = [] {
    std::vector<Capability> v;
#define TSL_ADD_CAPABILITY(c, march, flags) \
  v.push_back({#c, march, flags, static_cast<int>(v.size())});
    TSL_FOR_EACH_CPU_CAPABILITY(TSL_ADD_CAPABILITY)
#undef TSL_ADD_CAPABILITY
    return v;
  }();
  return all;
}

bool cpu_supports(const Capability& c) {
  int needs = level_rank(c.march);
  // A TSL_NATIVE build's one capability: the CPU it was built for, whatever it is.
  if (needs < 0) return true;
  return level_rank(cpu_info().level) >= needs;
}

const Capability& active_capability() { return *choice().capability; }

std::string active_capability_description() {
  const Choice& c = choice();
  return std::string(c.capability->name) + " (" + c.capability->march + "; " + c.why + ")";
}

}  // namespace tsl::cpu
