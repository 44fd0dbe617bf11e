// The op table expanded into an array of OpInfo, and lookup by name.
#include "runtime/kernels/op_info.h"

#include <string>
#include <unordered_map>

namespace tsl {
namespace {

using namespace opflags;

// The name is the schema text up to '('.
constexpr std::string_view schema_name(std::string_view schema) {
  return schema.substr(0, schema.find('('));
}

const OpInfo kOps[] = {
#define TSL_OP(id, schema, flags, doc) {OpId::id, schema_name(schema), schema, (flags), doc},
#include "runtime/ops.def"
#undef TSL_OP
};

static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumOps);

}  // namespace

const OpInfo& op_info(OpId id) { return kOps[static_cast<int>(id)]; }

std::optional<OpId> find_op(std::string_view full_name) {
  static const auto* by_name = [] {
    auto* m = new std::unordered_map<std::string_view, OpId>();
    for (const OpInfo& info : kOps) m->emplace(info.name, info.id);
    return m;
  }();
  auto it = by_name->find(full_name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

std::optional<OpId> inplace_twin(OpId op) {
  if (op == OpId::masked_fill_) return OpId::masked_fill_scalar;  // the overload it mirrors
  std::string_view name = op_info(op).name;
  if (!op_info(op).has(opflags::INPLACE) || !name.ends_with('_')) return std::nullopt;
  return find_op(name.substr(0, name.size() - 1));
}

}  // namespace tsl
