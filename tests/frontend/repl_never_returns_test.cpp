// Functions no path of which returns (`while True: pass`, only `raise`) are valid
// TorchScript: they compile, and every REPL command on them answers without losing the
// session (an InternalError escaped from the meta-commands: SIGABRT, every variable lost).
#include <gtest/gtest.h>

#include <sstream>

#include "frontend/compilation_unit.h"
#include "frontend/repl/repl.h"

namespace tsl {
namespace {

struct Session {
  std::string out, err;
};

Session run(const std::string& input) {
  CompilationUnit unit;
  std::istringstream in(input);
  std::ostringstream out, err;
  run_repl(unit, in, out, err, {.prompts = false});
  return {out.str(), err.str()};
}

constexpr const char* kDefs =
    "import torch\n"
    "def spin() -> int:\n"
    "    while True:\n"
    "        pass\n"
    "\n"
    "def fail(x):\n"
    "    raise ValueError(\"m\")\n"
    "\n"
    "y = 5\n";

TEST(ReplNeverReturns, MetaCommandsAnswerAndTheSessionSurvives) {
  for (const char* command :
       {":graph spin", ":ir spin", ":opt spin", ":code spin", ":type spin", ":graph fail",
        ":opt fail", ":code fail", ":grad fail", ":code grad fail", ":dot fail", ":memplan fail"}) {
    Session s = run(std::string(kDefs) + command + "\nprint(y)\n");
    EXPECT_EQ(s.err.find("internal error"), std::string::npos) << command << "\n" << s.err;
    EXPECT_NE(s.out.find("5\n"), std::string::npos) << command << "\n" << s.out << s.err;
  }
}

TEST(ReplNeverReturns, CallingOneThatRaisesRaises) {
  Session s = run(std::string(kDefs) + "fail(torch.ones(2))\nprint(y)\n");
  EXPECT_NE(s.err.find("ValueError: m"), std::string::npos) << s.err;
  EXPECT_EQ(s.err.find("internal error"), std::string::npos) << s.err;
  EXPECT_NE(s.out.find("5\n"), std::string::npos) << s.out;
}

}  // namespace
}  // namespace tsl
