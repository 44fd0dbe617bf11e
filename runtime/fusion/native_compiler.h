// Compiling generated C++ into a shared object at run time, with a cache on disk: the
// back end of compiled fusion kernels (codegen.h). See Note [Compiled fusion
// kernels] in runtime/fusion/fusion.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tsl {

struct CpuInfo;

// How TSL compiles native code, read from the environment at first use:
//   TSL_FUSION_JIT   off | async (the default) | sync
//   TSL_FUSION_JIT_HOT   elements a group computes before it is compiled (async)
//   TSL_CACHE_DIR    where compiled code is kept (default $XDG_CACHE_HOME/tsl or
//                    ~/.cache/tsl), in a folder per build of TSL
//   TSL_CXX          the C++ compiler (default: the one TSL was built with)
struct NativeJitOptions {
  enum class Mode : uint8_t { Off, Async, Sync };
  Mode mode = Mode::Async;
  // Async: a group is compiled once its fused runs have computed this many elements.
  int64_t hot_elements = int64_t{16} << 20;
  // Runs of fewer elements never use or ask for compiled code (their time is mostly
  // dispatch and planning).
  int64_t min_elements = 4096;
  std::string cache_dir;
  std::string compiler;
};

// The options in force; tests may change them before any compilation starts.
NativeJitOptions& native_jit_options();

// The name of a cache file for everything in `text` that shapes its contents (a hash).
std::string cache_key(const std::string& text);

// Everything outside the source that a compiled kernel depends on, hashed into its
// cache name (Note [What a compiled kernel depends on] in native_compiler.cpp).
std::string native_build_identity(const NativeJitOptions& o, const CpuInfo& cpu);

// The instruction set TSL's kernels were built for, and so compiled kernels target:
// "-march=znver3 (TSL_ARCH=native)" (tsl --version prints it).
const char* build_instruction_set();

// One piece of generated code: compiled by a background thread (or by the caller,
// when it waits), then loaded. `symbol()` is null until it is ready, and stays null
// when compiling failed (the failure is kept in `error()` and the compiler's log).
class NativeModule {
 public:
  enum class State : uint8_t { Pending, Ready, Failed };

  State state() const { return state_.load(std::memory_order_acquire); }
  void* symbol() const {
    return state() == State::Ready ? symbol_.load(std::memory_order_relaxed) : nullptr;
  }
  const std::string& error() const { return error_; }  // valid once Failed
  const std::string& source_path() const { return source_path_; }

 private:
  friend class NativeCompiler;
  std::atomic<State> state_{State::Pending};
  std::atomic<void*> symbol_{nullptr};
  void* handle_ = nullptr;
  std::string source, symbol_name, error_, source_path_;
};

// Compiles `source` (C++ defining extern "C" `symbol`) and loads it: from the cache on
// disk at once when it is there; else by a background thread, or before returning
// when `wait` is true. The same source asked twice gives the same module.
std::shared_ptr<NativeModule> compile_native(std::string source, std::string symbol, bool wait);

// The modules this process asked for, in order: the source file in the cache, the
// source, and the error of a failed one (--dump=kernels).
struct NativeModuleInfo {
  std::string source_path, source, error;
  bool ready = false;
};
std::vector<NativeModuleInfo> native_modules();

// Counters for tests and the benchmark: modules loaded from the cache, compiled, failed.
struct NativeCounters {
  int64_t cache_hits = 0;
  int64_t compiled = 0;
  int64_t failed = 0;
};
NativeCounters native_counters();

}  // namespace tsl
