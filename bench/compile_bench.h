// What the two compile benchmarks (compile_latency.cpp, compile_phases.cpp) share:
// their command line `FILE.tsl FUNCTION REPS`, timing, medians, and a main that
// reports TSL's errors.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ir/source.h"

namespace tsl::bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct CompileBenchArgs {
  std::string path, text, function;
  int reps = 1;
};

// The arguments, or none after a usage or file error on stderr.
inline std::optional<CompileBenchArgs> compile_bench_args(int argc, char** argv, const char* name) {
  if (argc != 4) {
    std::cerr << "usage: " << name << " FILE.tsl FUNCTION REPS\n";
    return std::nullopt;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << name << ": cannot open " << argv[1] << "\n";
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return CompileBenchArgs{argv[1], ss.str(), argv[2], std::max(1, std::atoi(argv[3]))};
}

// Runs `run`, printing TSL's errors as the command line does; the exit status.
template <typename Run>
int guarded_main(const char* name, Run run) {
  try {
    return run();
  } catch (const SourceError& e) {
    std::cerr << e.render();
    return 1;
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tsl::bench
