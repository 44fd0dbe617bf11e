// The FileCheck subset used by the .ir pass tests: it must pass what matches and,
// above all, catch what does not.
#include "tests/ir/filecheck.h"

#include <gtest/gtest.h>

namespace tsl::testing {
namespace {

const char* kOutput =
    "graph f(%x : Tensor):\n"
    "  %0 : Tensor = relu(%x)\n"
    "  %1 : Tensor   =  neg(%0)\n"
    "  print(%1)\n"
    "  return (%1)\n";

TEST(FileCheck, PassesMatchingChecks) {
  EXPECT_EQ(filecheck("# CHECK: graph f\n"
                      "# CHECK-NEXT: relu(%x)\n"
                      "# CHECK-NOT: sigmoid\n"
                      "# CHECK: %1 : Tensor = neg(%0)\n"  // blanks match any run of blanks
                      "# CHECK-NEXT: print\n"
                      "# CHECK-LABEL: return\n",
                      kOutput),
            "");
  // Two matches on one line, in order; non-directive lines are ignored.
  EXPECT_EQ(filecheck("graph text\n# CHECK: %0 : Tensor\n# CHECK: relu\n", kOutput), "");
}

TEST(FileCheck, CatchesAMissingOrOutOfOrderMatch) {
  std::string e = filecheck("# CHECK: sigmoid\n", kOutput);
  EXPECT_NE(e.find("CHECK at check line 1 (`sigmoid`): not found"), std::string::npos) << e;
  e = filecheck("# CHECK: neg\n# CHECK: relu\n", kOutput);
  EXPECT_NE(e.find("CHECK at check line 2 (`relu`): not found after output line 3"),
            std::string::npos)
      << e;
}

TEST(FileCheck, CatchesCheckNextOnALaterLine) {
  std::string e = filecheck("# CHECK: relu\n# CHECK-NEXT: print\n", kOutput);
  EXPECT_NE(e.find("CHECK-NEXT at check line 2 (`print`): not on the line after the previous "
                   "match; found `%1 : Tensor = neg(%0)`"),
            std::string::npos)
      << e;
  e = filecheck("# CHECK-NEXT: graph\n", kOutput);
  EXPECT_NE(e.find("no previous match"), std::string::npos) << e;
}

TEST(FileCheck, CatchesCheckNotBetweenMatches) {
  std::string e = filecheck("# CHECK: graph\n# CHECK-NOT: relu\n# CHECK: print\n", kOutput);
  EXPECT_NE(e.find("CHECK-NOT at check line 2 (`relu`): found on output line 2"), std::string::npos)
      << e;
  // After the last match, up to the end of the output.
  e = filecheck("# CHECK: neg\n# CHECK-NOT: return\n", kOutput);
  EXPECT_NE(e.find("found on output line 5"), std::string::npos) << e;
  // Only between the surrounding matches: relu before the first match is fine.
  EXPECT_EQ(filecheck("# CHECK: neg\n# CHECK-NOT: relu\n# CHECK: return\n", kOutput), "");
}

TEST(FileCheck, RejectsChecklessOrEmptyPatterns) {
  EXPECT_NE(filecheck("no directives\n", kOutput), "");
  EXPECT_NE(filecheck("# CHECK:   \n", kOutput), "");
}

}  // namespace
}  // namespace tsl::testing
