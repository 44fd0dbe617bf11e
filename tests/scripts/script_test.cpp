// Script tests: every tests/scripts/**/*.tsl program and every examples/*.tsl runs
// through the real `tsl` binary; its output is checked against the expectations
// written beside the code, Wren-style:
//   print(x)   # expect: tensor([1., 2.])
//   y = x @ z  # expect runtime error: 4:5: matmul: ...
//   # expect compile error: 7:1: name 'q' is not defined
// or, for examples, against tests/examples/NAME.out. The expected stdout lines must
// appear in order; an error expectation also fixes the exit status (2 compile,
// 1 runtime) and the `file:line:col: error: message` line on stderr.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

fs::path source_dir() {
  const char* dir = std::getenv("TSL_SOURCE_DIR");
  return dir ? fs::path(dir) : fs::path(TSL_SOURCE_DIR);
}

fs::path tsl_binary() {
  const char* bin = std::getenv("TSL_BINARY");
  return bin ? fs::path(bin) : fs::path(TSL_BINARY);
}

struct Expectations {
  std::vector<std::string> stdout_lines;
  std::string error_kind;         // "", "compile", "runtime"
  std::string error_line;         // "3:5: message"
  std::vector<std::string> args;  // `# args: a b`
  std::string stdin_text;         // `# stdin: ...` lines
  bool has_stdin = false;
};

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Expectations parse_expectations(const std::string& text) {
  Expectations e;
  std::istringstream in(text);
  std::string line;
  auto after = [](const std::string& l, const std::string& marker, std::string& out) {
    size_t p = l.find(marker);
    if (p == std::string::npos) return false;
    out = l.substr(p + marker.size());
    return true;
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string rest;
    if (after(line, "# expect compile error: ", rest)) {
      e.error_kind = "compile";
      e.error_line = rest;
    } else if (after(line, "# expect runtime error: ", rest)) {
      e.error_kind = "runtime";
      e.error_line = rest;
    } else if (after(line, "# expect: ", rest)) {
      e.stdout_lines.push_back(rest);
    } else if (line.size() >= 9 && line.ends_with("# expect:")) {
      e.stdout_lines.push_back("");
    } else if (after(line, "# args: ", rest)) {
      std::istringstream words(rest);
      std::string w;
      while (words >> w) e.args.push_back(w);
    } else if (after(line, "# stdin: ", rest)) {
      e.stdin_text += rest + "\n";
      e.has_stdin = true;
    }
  }
  return e;
}

struct RunResult {
  int status = -1;
  std::string out, err;
};

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

RunResult run_tsl(const fs::path& script, const Expectations& e, const fs::path& workdir) {
  fs::path out_file = fs::temp_directory_path() /
                      ("tsl_out_" + std::to_string(::getpid()) + "_" + script.stem().string());
  fs::path err_file = out_file;
  err_file += ".err";
  std::string cmd = "cd " + shell_quote(workdir.string()) + " && ";
  std::string invocation = shell_quote(tsl_binary().string()) + " " + shell_quote(script.string());
  for (const auto& a : e.args) invocation += " " + shell_quote(a);
  if (e.has_stdin) {
    fs::path in_file = out_file;
    in_file += ".in";
    std::ofstream(in_file) << e.stdin_text;
    invocation = shell_quote(tsl_binary().string()) + " < " + shell_quote(in_file.string());
  } else {
    invocation += " < /dev/null";
  }
  cmd += "timeout 120 " + invocation + " > " + shell_quote(out_file.string()) + " 2> " +
         shell_quote(err_file.string());
  int raw = std::system(cmd.c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(out_file);
  r.err = read_file(err_file);
  fs::remove(out_file);
  fs::remove(err_file);
  return r;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

class ScriptTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(ScriptTest, Runs) {
  fs::path script = GetParam();
  std::string text = read_file(script);
  Expectations e = parse_expectations(text);
  bool is_example = script.parent_path().filename() == "examples";
  fs::path expected_file = source_dir() / "tests" / "examples" / (script.stem().string() + ".out");
  RunResult r = run_tsl(script, e, script.parent_path());
  std::string context =
      "script: " + script.string() + "\n--- stdout ---\n" + r.out + "--- stderr ---\n" + r.err;

  if (e.error_kind.empty()) {
    ASSERT_EQ(r.status, 0) << context;
  } else {
    ASSERT_EQ(r.status, e.error_kind == "compile" ? 2 : 1) << context;
    std::string want = script.filename().string() + ":";
    size_t colon = e.error_line.find(": ");
    std::string location = e.error_line.substr(0, colon);
    std::string message = colon == std::string::npos ? "" : e.error_line.substr(colon + 2);
    std::string expected = location + ": error: " + message;
    EXPECT_NE(r.err.find(expected), std::string::npos) << "expected on stderr: " << expected << "\n"
                                                       << context;
  }
  if (is_example && fs::exists(expected_file)) {
    EXPECT_EQ(r.out, read_file(expected_file)) << context;
    return;
  }
  std::vector<std::string> got = lines_of(r.out);
  size_t at = 0;
  for (const std::string& want : e.stdout_lines) {
    while (at < got.size() && got[at] != want) ++at;
    ASSERT_LT(at, got.size()) << "expected output line not found (in order): [" << want << "]\n"
                              << context;
    ++at;
  }
  if (!is_example) {
    EXPECT_EQ(got.size(), e.stdout_lines.size()) << "the script printed lines it does not expect\n"
                                                 << context;
  }
}

std::vector<fs::path> find_scripts() {
  std::vector<fs::path> out;
  for (const char* dir : {"tests/scripts", "examples"}) {
    fs::path root = source_dir() / dir;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".tsl") continue;
      // A module that the scripts beside it import (tests/scripts/modules) is no test
      // of its own: it says so on a line of its own.
      if (read_file(entry.path()).find("# tsl-test: imported by the scripts beside it") !=
          std::string::npos)
        continue;
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string test_name(const ::testing::TestParamInfo<fs::path>& info) {
  fs::path rel = fs::relative(info.param, source_dir());
  std::string name;
  for (char c : rel.replace_extension("").string())
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scripts, ScriptTest, ::testing::ValuesIn(find_scripts()), test_name);

}  // namespace
