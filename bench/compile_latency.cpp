// The TSL side of the compile-latency benchmark (issue 6): times a function's text
// from parse to runnable (parse + define, then compile + optimize + Code build), and
// its first call, in fresh CompilationUnits; prints the medians in ms.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bench/compile_bench.h"
#include "frontend/compilation_unit.h"
#include "frontend/parser.h"
#include "ir/source.h"
#include "runtime/exec/function.h"

namespace {

using tsl::bench::Clock;
using tsl::bench::median;
using tsl::bench::ms_since;

struct Sample {
  double parse_ms;       // parse_module alone (scanner, parser, AST), see below
  double define_ms;      // run_source of the def: parse + define
  double runnable_ms;    // define + compile + optimize + Code build
  double first_call_ms;  // runnable + the first call (its statement compiled and run)
};

// One cold compile of `text` (which defines `function`) in a fresh unit. The inputs
// of the first call are made before the clock starts. With `parse_alone`, the define
// is preceded by a timed parse_module of the same text, in the same state of the
// process (its heap included) as the define of a sample without it.
Sample measure_once(const std::string& path, const std::string& text, const std::string& function,
                    bool parse_alone) {
  tsl::CompilationUnit unit;
  unit.run_source(std::make_shared<tsl::Source>("<setup>",
                                                "import torch\n"
                                                "x = torch.randn(16, 16)\n"
                                                "y = torch.randn(16, 16)\n"),
                  false);
  auto source = std::make_shared<tsl::Source>(path, text);
  Sample s{};
  if (parse_alone) {
    auto t = Clock::now();
    tsl::parse_module(source);
    s.parse_ms = ms_since(t);
  }
  auto t0 = Clock::now();
  unit.run_source(source, false);
  s.define_ms = ms_since(t0);
  tsl::FunctionDecl* decl = unit.find_function(function);
  if (decl == nullptr) throw std::runtime_error("no function '" + function + "' in " + path);
  const tsl::FunctionDecl::Compiled& c = unit.compile_function(*decl, decl->def->name_range);
  c.function->code();
  s.runnable_ms = ms_since(t0);
  unit.run_source(std::make_shared<tsl::Source>("<call>", "z = " + function + "(x, y)\n"), false);
  s.first_call_ms = ms_since(t0);
  return s;
}

int run(int argc, char** argv) {
  std::optional<tsl::bench::CompileBenchArgs> args =
      tsl::bench::compile_bench_args(argc, argv, "compile_latency");
  if (!args) return 2;
  int reps = args->reps;
  std::vector<double> parse, define, runnable, first_call;
  for (int r = 0; r < reps; ++r) {
    Sample s = measure_once(args->path, args->text, args->function, false);
    define.push_back(s.define_ms);
    runnable.push_back(s.runnable_ms);
    first_call.push_back(s.first_call_ms);
  }
  // Parse alone, for the breakdown: in samples of their own, after the others, so
  // that the timed defines above paid for any first-parse costs and the parse here
  // meets the heap that a define meets.
  for (int r = 0; r < reps; ++r)
    parse.push_back(measure_once(args->path, args->text, args->function, true).parse_ms);
  std::printf("parse_ms %.3f\n", median(parse));
  std::printf("define_ms %.3f\n", median(define));
  std::printf("runnable_ms %.3f\n", median(runnable));
  std::printf("first_call_ms %.3f\n", median(first_call));
  std::printf("first_runnable_ms %.3f\n", runnable.front());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tsl::bench::guarded_main("compile_latency", [&] { return run(argc, argv); });
}
