// Fuzz target: the whole pipeline, a program parsed, compiled, optimized, fused and
// run, under budgets (as QuickJS's fuzz targets limit theirs): each top-level
// statement gets 1 s (--timeout's watchdog) and the input 3 s, a tensor at most
// 64 MiB; the program's output goes nowhere; one thread, no kernels compiled at run
// time.
#include <chrono>
#include <memory>
#include <sstream>

#include "frontend/compilation_unit.h"
#include "frontend/parser.h"
#include "runtime/kernels/output.h"
#include "runtime/fusion/native_compiler.h"
#include "runtime/tensor/interrupt.h"
#include "runtime/tensor/parallel.h"
#include "runtime/tensor/storage.h"
#include "tests/fuzz/targets/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool ready = [] {
    tsl::set_num_threads(1);
    tsl::native_jit_options().mode = tsl::NativeJitOptions::Mode::Off;
    tsl::set_statement_timeout(1.0);
    tsl::set_allocation_limit(size_t{64} << 20);
    return true;
  }();
  (void)ready;
  std::string text(tsl::fuzz::text_of(data, size));
  std::ostringstream discard;
  std::ostream* saved = tsl::set_program_output(&discard);
  tsl::fuzz::run_one("pipeline", [&] {
    tsl::CompilationUnit unit;
    unit.set_echo(&discard);
    auto source = std::make_shared<tsl::Source>("<fuzz>", text);
    auto module = std::make_shared<tsl::ast::Module>(tsl::parse_module(source));
    // The whole input gets 3 s: statements after that are not run.
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (const auto& stmt : module->body) {
      if (std::chrono::steady_clock::now() > end) break;
      unit.run_statement(module, *stmt, false);
    }
  });
  tsl::set_program_output(saved);
  tsl::g_interrupt_requested = false;
  return 0;
}
