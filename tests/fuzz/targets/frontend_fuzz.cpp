// Fuzz target: the whole front end to verified IR, without running anything: each
// `def` is declared and compiled for its annotated parameter types, each other
// top-level statement compiled to its graph (names that only a run would define are
// errors here, as they should be). The IR verifier runs on every graph made.
#include <memory>

#include "frontend/compilation_unit.h"
#include "frontend/parser.h"
#include "runtime/fusion/native_compiler.h"
#include "runtime/tensor/parallel.h"
#include "tests/fuzz/targets/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool ready = [] {
    tsl::set_num_threads(1);
    tsl::native_jit_options().mode = tsl::NativeJitOptions::Mode::Off;
    return true;
  }();
  (void)ready;
  std::string text(tsl::fuzz::text_of(data, size));
  tsl::fuzz::run_one("frontend", [&] {
    auto source = std::make_shared<tsl::Source>("<fuzz>", text);
    auto module = std::make_shared<tsl::ast::Module>(tsl::parse_module(source));
    tsl::CompilationUnit unit;
    for (const auto& stmt : module->body) {
      tsl::fuzz::run_one("frontend", [&] {
        if (stmt->kind == tsl::ast::StmtKind::FunctionDef) {
          unit.run_statement(module, *stmt, false);  // declares it; nothing runs
          const auto& def = tsl::ast::as<tsl::ast::FunctionDef>(*stmt);
          if (tsl::FunctionDecl* decl = unit.find_function(def.name))
            tsl::verify(unit.compile_function(*decl, def.name_range).function->graph());
        } else if (stmt->kind != tsl::ast::StmtKind::Import &&
                   stmt->kind != tsl::ast::StmtKind::ImportFrom) {
          tsl::verify(*unit.compile_statement(module, *stmt, false));
        } else {
          unit.run_statement(module, *stmt, false);
        }
      });
    }
  });
  return 0;
}
