// Fuzz target: the token pass and the parser (frontend/parser.h) on any bytes.
#include <cstdio>
#include <cstdlib>

#include "frontend/parser.h"
#include "tests/fuzz/targets/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(tsl::fuzz::text_of(data, size));
  tsl::fuzz::run_one("parse", [&] {
    auto source = std::make_shared<tsl::Source>("<fuzz>", text);
    tsl::parse_module(source);
  });
  tsl::fuzz::run_one("parse (expression)",
                     [&] { tsl::parse_expression(std::make_shared<tsl::Source>("<fuzz>", text)); });
  return 0;
}
