// Runs a fuzz target over files, as libFuzzer replays a corpus, for compilers without
// libFuzzer: the suite feeds each target its seed corpus and every input that once
// crashed it (tests/fuzz/corpus/TARGET, tests/fuzz/regressions/TARGET). A folder
// argument means every file in it. Exits 0 when every input ran; a bug aborts.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/targets/fuzz_target.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path p(argv[i]);
    if (!fs::exists(p)) {
      std::fprintf(stderr, "no such file or folder: %s\n", argv[i]);
      return 2;
    }
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "%s\n", f.c_str());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("ran %zu input(s)\n", files.size());
  return 0;
}
