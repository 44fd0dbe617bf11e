// The repository's TSL programs, for tests that compare two implementations on all of
// them (the scanner with the ANTLR lexer, the parser with its goldens and SLL).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tsl {

// (path, text) of every .tsl file under tests/, examples/ and bench/ of the source tree
// (TSL_SOURCE_DIR from the environment, else the one the tests were built from).
inline std::vector<std::pair<std::string, std::string>> repository_tsl_files() {
  namespace fs = std::filesystem;
  const char* root = std::getenv("TSL_SOURCE_DIR");
  fs::path dir = root ? root : TSL_SOURCE_DIR;
  std::vector<std::pair<std::string, std::string>> files;
  for (const char* sub : {"tests", "examples", "bench"}) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir / sub)) {
      if (e.path().extension() != ".tsl") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      files.emplace_back(e.path().string(), text.str());
    }
  }
  return files;
}

}  // namespace tsl
