// IR-in/IR-out pass tests: each tests/ir/passes/<pass>/*.ir file is parsed, run through
// <pass> (the verifier after it), printed, and checked against its `# CHECK` lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/ir_parser.h"
#include "ir/passes/pass_registry.h"
#include "tests/ir/filecheck.h"

namespace fs = std::filesystem;

namespace tsl {
namespace {

struct PassFile {
  std::string pass;
  fs::path path;
};

fs::path source_dir() {
  // ctest sets TSL_SOURCE_DIR; test discovery (and a bare run) use the build's.
  const char* env = std::getenv("TSL_SOURCE_DIR");
  return env ? fs::path(env) : fs::path(TSL_SOURCE_DIR);
}

std::vector<PassFile> find_pass_files() {
  std::vector<PassFile> files;
  fs::path root = source_dir() / "tests" / "ir" / "passes";
  if (!fs::is_directory(root)) return files;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (f.path().extension() == ".ir") files.push_back({dir.path().filename(), f.path()});
    }
  }
  std::sort(files.begin(), files.end(),
            [](const PassFile& a, const PassFile& b) { return a.path < b.path; });
  return files;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs one .ir file and returns the checker's complaint ("" when it passes).
std::string check_file(const PassFile& file) {
  std::string text = slurp(file.path);
  // Comments (the CHECK lines among them) are ignored by the parser.
  std::string output;
  for (auto& g : parse_graphs(text, file.path.string())) {
    run_passes(*g, {file.pass}, /*verify_after_each=*/true);
    output += print_graph(*g) + "\n";
  }
  return testing::filecheck(text, output);
}

// One test per built-in pass, over the files of its folder: a new .ir file needs no
// rebuild (ctest lists tests when the binary is built).
class PassFileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PassFileTest, OutputsMatchTheirChecks) {
  int count = 0;
  for (const PassFile& file : find_pass_files()) {
    if (file.pass != GetParam()) continue;
    ++count;
    SCOPED_TRACE(file.path.string());
    try {
      EXPECT_EQ(check_file(file), "");
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GT(count, 0) << "no tests/ir/passes/" << GetParam() << "/*.ir";
}

std::vector<std::string> builtin_pass_names() {
  std::vector<std::string> names;
  for (const PassInfo& p : all_passes()) names.push_back(p.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Passes, PassFileTest, ::testing::ValuesIn(builtin_pass_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(PassFiles, EveryRegisteredPassHasTests) {
  std::vector<PassFile> files = find_pass_files();
  ASSERT_FALSE(files.empty()) << "no .ir files under " << source_dir() / "tests/ir/passes";
  for (const PassInfo& p : all_passes()) {
    bool found = std::any_of(files.begin(), files.end(),
                             [&](const PassFile& f) { return f.pass == p.name; });
    EXPECT_TRUE(found) << "pass '" << p.name << "' has no tests/ir/passes/" << p.name << "/*.ir";
  }
  for (const PassFile& f : files) {
    EXPECT_NE(find_pass(f.pass), nullptr) << f.path << " is in the folder of an unknown pass";
  }
}

}  // namespace
}  // namespace tsl
