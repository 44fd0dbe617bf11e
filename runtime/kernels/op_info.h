// What the tensor layer knows of each op in runtime/ops.def: its id, name, schema
// text, flags and meaning. Parsing the schema into types is the IR's job (ir/schema.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tsl {

enum class OpId : uint16_t {
#define TSL_OP(id, ...) id,
#include "runtime/ops.def"
#undef TSL_OP
};

constexpr int kNumOps = 0
#define TSL_OP(id, ...) +1
#include "runtime/ops.def"
#undef TSL_OP
    ;

// Flags of a row of the op table; see Note [The op table] in runtime/ops.def.
namespace opflags {
constexpr uint32_t METHOD = 1u << 0;
constexpr uint32_t GLOBAL = 1u << 1;
constexpr uint32_t TORCH = 1u << 2;
constexpr uint32_t NNF = 1u << 3;
constexpr uint32_t MATH = 1u << 4;
constexpr uint32_t EW = 1u << 5;
constexpr uint32_t DIFF = 1u << 6;
constexpr uint32_t EFFECT = 1u << 7;
constexpr uint32_t RANDOM = 1u << 8;
constexpr uint32_t VIEW = 1u << 9;
constexpr uint32_t NUMS = 1u << 10;
constexpr uint32_t PRIM = 1u << 11;
}  // namespace opflags

struct OpInfo {
  OpId id;
  std::string_view name;    // "max.dim": the full, unique name the IR prints
  std::string_view schema;  // "max.dim(Tensor self, int dim, bool keepdim=False) -> (...)"
  uint32_t flags;
  std::string_view doc;

  bool has(uint32_t flag) const { return (flags & flag) != 0; }
  // "max" of "max.dim".
  std::string_view base_name() const { return name.substr(0, name.find('.')); }
};

const OpInfo& op_info(OpId id);
// Looks an op up by its full name ("add.int").
std::optional<OpId> find_op(std::string_view full_name);

}  // namespace tsl
