// Coverage of the op table (runtime/ops.def): every op that is not structural has
// a CPU kernel, and every schema in the table names its op consistently. A new row
// without its kernel fails here, not in a user's program.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "runtime/kernels/kernel.h"

namespace tsl {
namespace {

TEST(OpTable, EveryOpHasACpuKernel) {
  ensure_kernels_registered();
  std::string missing;
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = op_info(static_cast<OpId>(i));
    if (info.has(opflags::PRIM)) continue;
    if (!lookup_kernel(DeviceType::CPU, info.id).fn) missing += " " + std::string(info.name);
  }
  EXPECT_EQ(missing, "") << "ops without a CPU kernel:" << missing;
}

TEST(OpTable, NamesAreUniqueAndMatchTheirSchemas) {
  std::set<std::string_view> seen;
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = op_info(static_cast<OpId>(i));
    EXPECT_TRUE(seen.insert(info.name).second) << "duplicate op name " << info.name;
    EXPECT_TRUE(info.schema.starts_with(std::string(info.name) + "("))
        << info.name << " has schema " << info.schema;
    EXPECT_EQ(find_op(info.name), info.id) << info.name;
    EXPECT_FALSE(info.doc.empty()) << info.name << " has no one-line meaning";
  }
}

TEST(OpTable, DifferentiableOpsAreTensorOps) {
  // DIFF marks ops the autodiff issue gives gradient formulas; a scalar op marked
  // DIFF would be a table error.
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = op_info(static_cast<OpId>(i));
    if (!info.has(opflags::DIFF)) continue;
    EXPECT_NE(info.schema.find("Tensor"), std::string_view::npos) << info.name;
  }
}

}  // namespace
}  // namespace tsl
