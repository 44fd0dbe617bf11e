// Fuzz target: the IR text parser (ir/ir_parser.h), then every pass on what it
// accepts, verified after each (the pass registry's names, in order), then printed
// and parsed back. A graph the parser accepts must survive every pass.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "ir/ir_parser.h"
#include "ir/passes/pass_registry.h"
#include "tests/fuzz/targets/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = tsl::fuzz::text_of(data, size);
  tsl::fuzz::run_one("ir", [&] {
    std::vector<std::unique_ptr<tsl::Graph>> graphs = tsl::parse_graphs(text, "<fuzz>");
    std::vector<std::string> names;
    for (const tsl::PassInfo& p : tsl::all_passes()) names.push_back(p.name);
    for (auto& g : graphs) {
      std::string printed = tsl::print_graph(*g);
      tsl::parse_graphs(printed, "<printed>");  // the printer's text parses back
      tsl::run_passes(*g, names, /*verify_after_each=*/true);
    }
  });
  return 0;
}
