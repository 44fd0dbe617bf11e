// Helpers shared by the tests that run the real `tsl` binary: a run's result, reading
// a file whole, and quoting for the shell.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tsl_test {

struct Result {
  int status = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `s` as one single-quoted shell word.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace tsl_test
