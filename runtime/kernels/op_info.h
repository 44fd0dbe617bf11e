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

// How an op's (first) Tensor result gets its dtype, as far as it is known before the
// run; ir/op_rules.h evaluates it (the type checker's Tensor[dtype] results and
// propagate-shapes' dtype classes both come from there). See Note [Result rules] in
// runtime/ops.def.
enum class DtypeRule : uint8_t {
  Undeclared,       // no rule written: the op-table test fails for an op returning a Tensor
  Dynamic,          // not known before the run (or not worth knowing)
  Bool,             // always bool
  Int64,            // always int64
  DefaultFloat,     // the default dtype, float32 (factories without dtype=)
  IntOrFloat,       // int64 when every number argument is an int, else float32 (arange)
  Data,             // what the data's static type infers: int64, float32 or bool (tensor, full)
  Self,             // input 0's
  FloatMath,        // input 0's when floating, else float32 (int math computes in float)
  Promote,          // PyTorch's result_type of the Tensor arguments (where's condition aside)
  PromoteFloat,     // Promote, then float32 for an integral result (atan2)
  TrueDivide,       // PromoteFloat unless a rounding mode is given, then Promote (div)
  Match,            // the operands must share one dtype, the result's (mm, matmul)
  Second,           // input 1's (baddbmm's batch1, embedding's weight)
  ListElement,      // the elements' of the Tensor[] input 0 (cat, stack)
  IntegralToInt64,  // input 0's, with bool and int64 summed in int64 (sum, prod, cumsum)
  Einsum,           // the operands' one dtype but bool (whose sums the equation decides)
};

// How an op's (first) Tensor result gets its shape, as far as propagate-shapes tracks it.
enum class ShapeRule : uint8_t {
  Undeclared,  // no rule written: the op-table test fails for an op returning a Tensor
  Dynamic,     // not tracked
  Broadcast,   // the broadcast of the Tensor inputs; 0-dim ones never widen (elementwise)
  Same,        // input 0's
  AsSecond,    // input 1's (expand_as, view_as, reshape_as)
  SizeArg,     // the int[] argument named size or shape (zeros, expand, reshape, ...)
  Reduce,      // 0-dim when dim is None and keepdim False (sum, mean, norm, ...)
  Loss,        // 0-dim when reduction is 'mean' or 'sum'
  Scalar,      // always 0-dim (max(x), var(x), scalar_tensor)
};

// Flags of a row of the op table; see Note [The op table] in runtime/ops.def.
namespace opflags {
constexpr uint64_t METHOD = 1u << 0;
constexpr uint64_t GLOBAL = 1u << 1;
constexpr uint64_t TORCH = 1u << 2;
constexpr uint64_t NNF = 1u << 3;
constexpr uint64_t MATH = 1u << 4;
constexpr uint64_t EW = 1u << 5;
constexpr uint64_t DIFF = 1u << 6;
constexpr uint64_t EFFECT = 1u << 7;
constexpr uint64_t RANDOM = 1u << 8;
constexpr uint64_t VIEW = 1u << 9;
constexpr uint64_t NUMS = 1u << 10;
constexpr uint64_t PRIM = 1u << 11;
constexpr uint64_t NORAISE = 1u << 12;
constexpr uint64_t COMMUTES = 1u << 13;
constexpr uint64_t NOWRITE = 1u << 14;
constexpr uint64_t CALLS = 1u << 15;
constexpr uint64_t PURE = 1u << 16;
constexpr uint64_t INPLACE = 1u << 17;
constexpr uint64_t META = 1u << 18;

constexpr int kDtypeRuleShift = 32;
constexpr int kShapeRuleShift = 40;
constexpr uint64_t dtype_rule(DtypeRule r) { return uint64_t(r) << kDtypeRuleShift; }
constexpr uint64_t shape_rule(ShapeRule r) { return uint64_t(r) << kShapeRuleShift; }
// Row spellings: DT_SELF, SH_SAME, ...
constexpr uint64_t DT_DYNAMIC = dtype_rule(DtypeRule::Dynamic);
constexpr uint64_t DT_BOOL = dtype_rule(DtypeRule::Bool);
constexpr uint64_t DT_INT64 = dtype_rule(DtypeRule::Int64);
constexpr uint64_t DT_DEFAULT_FLOAT = dtype_rule(DtypeRule::DefaultFloat);
constexpr uint64_t DT_INT_OR_FLOAT = dtype_rule(DtypeRule::IntOrFloat);
constexpr uint64_t DT_DATA = dtype_rule(DtypeRule::Data);
constexpr uint64_t DT_SELF = dtype_rule(DtypeRule::Self);
constexpr uint64_t DT_FLOAT_MATH = dtype_rule(DtypeRule::FloatMath);
constexpr uint64_t DT_PROMOTE = dtype_rule(DtypeRule::Promote);
constexpr uint64_t DT_PROMOTE_FLOAT = dtype_rule(DtypeRule::PromoteFloat);
constexpr uint64_t DT_TRUE_DIVIDE = dtype_rule(DtypeRule::TrueDivide);
constexpr uint64_t DT_MATCH = dtype_rule(DtypeRule::Match);
constexpr uint64_t DT_SECOND = dtype_rule(DtypeRule::Second);
constexpr uint64_t DT_LIST_ELEMENT = dtype_rule(DtypeRule::ListElement);
constexpr uint64_t DT_INTEGRAL_TO_INT64 = dtype_rule(DtypeRule::IntegralToInt64);
constexpr uint64_t DT_EINSUM = dtype_rule(DtypeRule::Einsum);
constexpr uint64_t SH_DYNAMIC = shape_rule(ShapeRule::Dynamic);
constexpr uint64_t SH_BROADCAST = shape_rule(ShapeRule::Broadcast);
constexpr uint64_t SH_SAME = shape_rule(ShapeRule::Same);
constexpr uint64_t SH_AS_SECOND = shape_rule(ShapeRule::AsSecond);
constexpr uint64_t SH_SIZE_ARG = shape_rule(ShapeRule::SizeArg);
constexpr uint64_t SH_REDUCE = shape_rule(ShapeRule::Reduce);
constexpr uint64_t SH_LOSS = shape_rule(ShapeRule::Loss);
constexpr uint64_t SH_SCALAR = shape_rule(ShapeRule::Scalar);
}  // namespace opflags

struct OpInfo {
  OpId id;
  std::string_view name;    // "max.dim": the full, unique name the IR prints
  std::string_view schema;  // "max.dim(Tensor self, int dim, bool keepdim=False) -> (...)"
  uint64_t flags;
  std::string_view doc;

  bool has(uint64_t flag) const { return (flags & flag) != 0; }
  DtypeRule dtype_rule() const {
    return static_cast<DtypeRule>((flags >> opflags::kDtypeRuleShift) & 0xff);
  }
  ShapeRule shape_rule() const {
    return static_cast<ShapeRule>((flags >> opflags::kShapeRuleShift) & 0xff);
  }
  // "max" of "max.dim".
  std::string_view base_name() const { return name.substr(0, name.find('.')); }
};

const OpInfo& op_info(OpId id);
// Looks an op up by its full name ("add.int").
std::optional<OpId> find_op(std::string_view full_name);

// The out-of-place form of an INPLACE op (add_ -> add, masked_fill_ -> masked_fill.Scalar):
// the op of its name without the `_`, taking the same arguments (and perhaps more, with
// defaults); nullopt for copy_, fill_ and zero_, whose forms are written by hand
// (ir/autodiff/functionalize.cpp).
std::optional<OpId> inplace_twin(OpId op);

}  // namespace tsl
