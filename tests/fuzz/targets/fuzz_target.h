// What TSL's fuzz targets share (tests/fuzz/README.md): each defines
// LLVMFuzzerTestOneInput, which libFuzzer drives (scripts/fuzz, a clang build) and
// replay_main.cpp feeds a corpus to in the suite (any compiler).
//
// An input may make TSL report an error; that is its job. What a target must never
// see is a crash, a sanitizer report, a hang past its budget, an InternalError
// ("This is a bug in TSL") or any exception that is not a TSL user error: those abort
// the run, and libFuzzer saves the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "ir/source.h"
#include "runtime/tensor/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace tsl::fuzz {

inline std::string_view text_of(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `body` on one input: user errors (tsl::Error, SourceError among them) are
// expected and swallowed; anything else is reported and aborts, so that libFuzzer
// (or the replay) records the input as a crash.
template <typename Fn>
void run_one(const char* target, Fn body) {
  try {
    body();
  } catch (const Error&) {
    // A located or plain user error: the input was bad, TSL said so.
  } catch (const InternalError& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", target, e.what());
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: escaped exception: %s\n", target, e.what());
    std::abort();
  }
}

}  // namespace tsl::fuzz
