// Matching the arguments of a call against op schemas: positional and keyword
// arguments, defaults, varargs sizes (`zeros(2, 3)`) and tensors (`einsum('ij,jk', a, b)`
// for a Tensor[]), the implicit conversions TSL allows, and overload resolution across
// the rows of one op name, for calls and for operators.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/schema.h"

namespace tsl {

// One argument at a call site: `name` is empty for positional arguments.
struct CallArg {
  SourceRange range;
  std::string name;
  Value* value;
};

struct MatchedOp {
  OpId op;
  std::vector<Value*> inputs;  // one per schema argument (variadic ones expanded)
  std::vector<TypePtr> result_types;
};

// Tries the overloads in table order (a match that packs tensors into a list only when
// none fits without) and inserts the first that accepts the arguments (with the nodes
// its conversions and defaults need) at the graph's insertion point. On failure throws a compile
// error at `call_range` that says why (for one candidate) or lists the candidates.
MatchedOp match_and_emit(Graph& graph, const std::vector<OpId>& candidates,
                         const std::vector<CallArg>& args, const SourceRange& call_range,
                         const std::string& display_name);

// The operands of an operator (`a + b`, `a == b`, `-a`) against `candidates`, the
// overloads of its op in table order (Note [Operators are overloads] in
// frontend/emit_operators.cpp): the first that accepts them is inserted at the graph's
// insertion point; nullopt (nothing inserted) when none does. Operands convert only as
// Python's operators convert them: an int where a float is expected, a number where a
// Tensor is (NUMS rows, beside a Tensor), a read of `x.grad` where a Tensor is; never a
// str to a device (`x.device == "cpu"` is False in PyTorch) nor into a list.
std::optional<MatchedOp> match_operator(Graph& graph, const std::vector<OpId>& candidates,
                                        const std::vector<CallArg>& operands,
                                        const SourceRange& range);

// The compile error of match_and_emit when no candidate accepts `args`.
[[noreturn]] void no_overload_error(const std::vector<OpId>& candidates,
                                    const std::vector<CallArg>& args, const SourceRange& call_range,
                                    const std::string& display_name);

// Whether a value of type `actual` is accepted for a parameter of type `formal`
// (binding the type variable in `var`), and with which conversion; for user
// functions too.
// UnwrapGrad: a Tensor's `.grad` (Optional[Tensor]) given where a Tensor is expected,
// as eager code writes `w.sub_(lr * w.grad)`; None is a runtime error there.
// RetypeEmptyList: a `[]` literal written as an argument takes the parameter's list type
// (`zeros([])`, `x.view([])`), as TorchScript types an empty list from its context;
// RetypeEmptyDict the same for a `{}` (`total({})` of a Dict[str, int] parameter).
enum class Conversion {
  None,
  IntToFloat,
  IntToList,
  TupleToList,
  StrToDevice,
  UnwrapGrad,
  RetypeEmptyList,
  RetypeEmptyDict,
  Reject
};
// Whether `v` is a read of `x.grad`, which converts to Tensor implicitly.
bool is_grad_read(const Value* v);
// `v` unwrapped when it is a read of `x.grad` (runtime error when None), else `v`.
Value* unwrap_grad_read(Graph& graph, Value* v, const SourceRange& range);
Conversion conversion_for(const TypePtr& actual, const TypePtr& formal, TypePtr& var, bool nums,
                          const Value* value);

// Inserts the nodes of a conversion.
// IntToList repeats the int `copies` times (`int[2] stride` given `2` is [2, 2]).
Value* apply_conversion(Graph& graph, Value* v, Conversion c, const TypePtr& formal,
                        const SourceRange& range, int copies = 1);

// Substitutes the bound type variable into a schema type (List[t] -> List[int]).
TypePtr substitute_var(const TypePtr& t, const TypePtr& var);

}  // namespace tsl
