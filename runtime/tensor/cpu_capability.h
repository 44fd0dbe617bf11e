// Which of the build's sets of CPU kernels this process runs: the instruction set of
// the kernel files built once per capability (cmake/cpu_capabilities.cmake).
//
// Note [One binary for every x86-64]
// TSL's code is built for x86-64-v2, which every x86-64 CPU of the last fifteen years
// runs. The files whose loops are the arithmetic (the elementwise kernels, the fused
// chunk loop, ...) are built again for each capability: default (x86-64-v2), avx2
// (x86-64-v3: AVX2 and FMA) and avx512 (x86-64-v4), each into a namespace of its own
// (TSL_CAPABILITY_NAMESPACE: cpu_default, cpu_avx2, cpu_avx512) with private copies of
// the inline functions it uses (Note [Private inline copies]). At start-up the process
// picks the highest capability the running CPU (and its operating system) supports, as
// PyTorch's CPU_CAPABILITY dispatch does; TSL_CPU_CAPABILITY=default|avx2|avx512 in the
// environment forces a lower one, so that a test can run each set the machine has.
// Everything of one process uses one capability: the unfused kernels, the chunk loop
// and the compiled fusion kernels (which get the capability's -march, and whose cache
// is keyed by it) compute each element alike, so fused and unfused results have the
// same bits on every CPU (Note [CPU formulas]). Between capabilities, results of the
// transcendental functions may differ in the last bit (FMA in their polynomials).
//
// A file built per capability exports its entry points from its capability's namespace;
// baseline code declares them in each (TSL_CAPABILITY_DECLARE) and takes the active
// capability's from the table TSL_CAPABILITY_ENTRIES makes:
//
//   namespace tsl { TSL_CAPABILITY_DECLARE(void register_kernels()) }
//   ...
//   using Fn = void (*)();
//   static constexpr Fn kRegister[] = {TSL_CAPABILITY_ENTRIES(register_kernels)};
//   cpu::for_active_capability(kRegister)();
#pragma once

#include <string>
#include <vector>

#include "generated/cpu_capabilities.h"

// The namespace of capability c's entry points (cpu_avx2).
#define TSL_CAPABILITY_NS_(c) cpu_##c
#define TSL_CAPABILITY_NS(c) TSL_CAPABILITY_NS_(c)
#ifdef TSL_CAPABILITY
// In a file built per capability: the namespace of its entry points.
#define TSL_CAPABILITY_NAMESPACE TSL_CAPABILITY_NS(TSL_CAPABILITY)
#endif
// TSL_CAPABILITY_DECLARE(declaration): the declaration in each capability's namespace.
// TSL_CAPABILITY_ENTRIES(name): `&cpu_default::name, &cpu_avx2::name, ...`, one pointer
// per capability in the order of compiled_capabilities() (generated/cpu_capabilities.h).

namespace tsl::cpu {

struct Capability {
  const char* name;       // "default", "avx2", "avx512"; "native" in a TSL_NATIVE build
  const char* march;      // the -march its kernels are built with ("x86-64-v3")
  const char* jit_flags;  // what that -march expands to, for the generated fusion kernels
  int index;              // its position in compiled_capabilities()
};

// The capabilities this build has kernels for, lowest first.
const std::vector<Capability>& compiled_capabilities();

// Whether the running CPU can run capability c's code.
bool cpu_supports(const Capability& c);

// The capability this process runs, chosen at its first call: TSL_CPU_CAPABILITY's if set
// (a warning on stderr and the best one instead where the CPU cannot run it or the build
// has no such capability), else the highest the CPU supports.
const Capability& active_capability();

// Why active_capability() is what it is: "avx2 (the highest this CPU runs)" or "default
// (TSL_CPU_CAPABILITY)", for `tsl --version`.
std::string active_capability_description();

// The entry of the active capability from a table in compiled_capabilities()'s order.
template <typename Fn, size_t N>
Fn for_active_capability(const Fn (&entries)[N]) {
  return entries[active_capability().index];
}

}  // namespace tsl::cpu
