// The compile-latency benchmark's breakdown (issue 6): the phases of making a function
// runnable, each timed alone in a fresh CompilationUnit; prints the medians in ms.
// What runtime::Function::code() does, step by step (see graph_to_compile), and the
// time of each step of the pipeline (pass NAME.ROUND; round 0: the steps after the
// rounds, fuse).
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/compile_bench.h"
#include "frontend/compilation_unit.h"
#include "ir/ir.h"
#include "ir/passes/pipeline.h"
#include "ir/source.h"
#include "runtime/exec/function.h"
#include "runtime/exec/interpreter.h"

namespace {

using tsl::bench::Clock;
using tsl::bench::median;
using tsl::bench::ms_since;

constexpr const char* kPhases[] = {"define", "emit+verify", "clone", "optimize",
                                   "fuse",   "verify",      "code",  "total"};
constexpr size_t kNumPhases = std::size(kPhases);

// One cold compile of `function` in `text`, phase by phase.
// Each pass's time, by "name.round", is added to `passes` (the optimize phase includes
// the observer's bookkeeping).
std::vector<double> measure_once(const std::string& path, const std::string& text,
                                 const std::string& function,
                                 std::map<std::string, std::vector<double>>* passes) {
  tsl::CompilationUnit unit;
  std::vector<double> t;
  auto t0 = Clock::now();
  auto lap = [&] {
    t.push_back(ms_since(t0));
    t0 = Clock::now();
  };
  unit.run_source(std::make_shared<tsl::Source>(path, text), false);
  lap();
  tsl::FunctionDecl* decl = unit.find_function(function);
  if (decl == nullptr) throw std::runtime_error("no function '" + function + "' in " + path);
  const tsl::FunctionDecl::Compiled& c = unit.compile_function(*decl, decl->def->name_range);
  lap();
  std::shared_ptr<tsl::Graph> copy = c.function->graph().clone();
  lap();
  // The pipeline as Function::code() runs it, its time split by the observer into the
  // optimization rounds, the final steps (fuse) and the closing verifier.
  auto pass_start = t0;
  double rounds_ms = 0, final_ms = 0;
  tsl::run_pipeline(*copy, tsl::PipelineKind::Function,
                    [&](std::string_view pass, int round, bool, const tsl::Graph&) {
                      double ms = ms_since(pass_start);
                      (*passes)[std::string(pass) + "." + std::to_string(round)].push_back(ms);
                      (round == 0 ? final_ms : rounds_ms) += ms;
                      pass_start = Clock::now();
                    });
  double pipeline_ms = ms_since(t0);
  t.push_back(rounds_ms);
  t.push_back(final_ms);
  t.push_back(pipeline_ms - rounds_ms - final_ms);
  t0 = Clock::now();
  tsl::Code code(copy, false);
  lap();
  double total = 0;
  for (double x : t) total += x;
  t.push_back(total);
  return t;
}

int run(int argc, char** argv) {
  std::optional<tsl::bench::CompileBenchArgs> args =
      tsl::bench::compile_bench_args(argc, argv, "compile_phases");
  if (!args) return 2;
  int reps = args->reps;
  std::vector<std::vector<double>> samples(kNumPhases);
  std::map<std::string, std::vector<double>> passes;
  for (int r = 0; r < reps; ++r) {
    std::vector<double> t = measure_once(args->path, args->text, args->function, &passes);
    for (size_t i = 0; i < kNumPhases; ++i) samples[i].push_back(t[i]);
  }
  for (size_t i = 0; i < kNumPhases; ++i)
    std::printf("%s_ms %.3f\n", kPhases[i], median(samples[i]));
  for (const auto& [pass, times] : passes)
    std::printf("  pass %s_ms %.3f\n", pass.c_str(), median(times));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tsl::bench::guarded_main("compile_phases", [&] { return run(argc, argv); });
}
