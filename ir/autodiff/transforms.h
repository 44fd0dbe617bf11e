// functorch's function transforms (grad, value_and_grad, grad_and_value, vjp, jvp,
// hessian, vmap, jacrev, jacfwd) as functions from the graph of f to the graph of the
// transform of f. See Note [Transforms as graph functions].
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/autodiff/differentiate.h"
#include "ir/ir.h"

namespace tsl::autodiff {

// Note [Transforms as graph functions]
// A program writes `grad(f, argnums=1)`; the frontend (frontend/compile_transform.cpp)
// compiles f, inlines its calls, replaces its constant str and None arguments by
// constants (Note [Transforms of constant modes] there), and calls the function here
// that builds the transform's graph from f's: the joint gradient (grad), the split one
// with a closure over its backward (vjp), the forward mode (jvp), the batched graph
// (vmap), the batched backward or forward mode (jacrev, jacfwd; jacobians.cpp), the
// hessian column by column where vmap cannot batch f's gradient. These know f only by
// a TransformedFunction (its name, parameters and result type, where it is used) and
// the transform by a TransformSpec, so that ir/ stays below the frontend and the
// runtime: where a transform needs a runtime object (vjp's closure holds a Function)
// its caller makes it.

// The transforms. VjpFn is the function vjp returns (a closure over the backward graph),
// which no program names.
enum class TransformKind {
  Grad,
  ValueAndGrad,
  GradAndValue,
  Vjp,
  VjpFn,
  Jvp,
  Hessian,
  Vmap,
  Jacrev,
  Jacfwd
};

// "grad", "value_and_grad", ..., "vjp_fn": what messages say, and the start of the name
// of a transformed function ("grad(f, argnums=1)").
const char* transform_name(TransformKind kind);
// The transform a name in source stands for (`grad`, `torch.func.jacrev`'s "jacrev"),
// or nullopt for any other name ("vjp_fn" included).
std::optional<TransformKind> transform_named(std::string_view name);

// A transform apart from the function it transforms: which one, for which inputs and,
// for vmap, over which dims.
struct TransformSpec {
  TransformKind kind = TransformKind::Grad;
  std::vector<size_t> argnums;
  bool argnums_tuple = false;  // argnums given as a tuple: the gradients are a tuple
  // vmap: the dim of each parameter it maps over (nullopt: None), where each result
  // gets the batch dim (one entry for every result when out_dims is an int), and how
  // they were written, for functorch's messages ("vmap(f, in_dims=(0, None), ...)").
  std::vector<std::optional<int64_t>> in_dims = {};
  bool in_dims_tuple = false;
  std::vector<std::optional<int64_t>> out_dims = {};
  bool out_dims_tuple = false;
  std::string where = {};
};

// What a transform needs to know of the function f it transforms.
struct TransformedFunction {
  std::string name;  // "f", for messages
  std::vector<std::string> param_names;
  std::vector<TypePtr> param_types;
  // Where each parameter is written: the checks of check_floating_inputs point there
  // (at `use` for a parameter past the end).
  std::vector<SourceRange> param_ranges;
  TypePtr returns;  // f's result type
  // Where the transform is used: its errors and the nodes it adds point there.
  SourceRange use;
};

// The compile errors of a transform whose f returns what it cannot take: grad and its
// kin need a scalar Tensor, hessian a Tensor, vjp, jvp, jacrev and jacfwd a Tensor or a
// tuple of Tensors; vmap takes any result.
void check_transform_result(const TransformSpec& t, const TransformedFunction& f);

// functorch's checks of the differentiated inputs, inserted at the start of `g`, the
// graph of transform `t`: only floating tensors can require gradients (grad, vjp,
// jacrev), or be primals (jvp, hessian, jacfwd); vmap checks nothing here. A failed
// check is a runtime error at the parameter of f (the traceback shows the call).
void check_floating_inputs(Graph& g, const TransformSpec& t, const TransformedFunction& f);

// In all that follows, `forward` is f's graph with its calls inlined (no CallFunction).

// grad, value_and_grad, grad_and_value: the joint graph seeded with ones, returning the
// gradients of the argnums inputs (a tuple when argnums is one), with the value or not.
std::shared_ptr<Graph> grad_graph(const Graph& forward, const TransformSpec& t,
                                  const TransformedFunction& f);

// jvp(f, primals, tangents) -> (f(primals), the tangent of the result): f's parameters,
// then one tangent per argnum (each checked to have its primal's shape).
std::shared_ptr<Graph> jvp_graph(const Graph& forward, const TransformSpec& t,
                                 const TransformedFunction& f);

// What vjp's closure is: the function it calls (attribute `fn` of its MakeClosure: a
// runtime Function, which ir/ cannot make) and its type.
struct VjpClosure {
  IValue fn;
  TypePtr type;
};
// Makes vjp's closure from the backward graph, (cotangent, captures...) -> the tuple of
// gradients, verified; `cotangent` is the cotangent's type (a tuple for a tuple result).
using MakeVjpClosure =
    std::function<VjpClosure(const std::shared_ptr<Graph>& backward, const TypePtr& cotangent)>;
// vjp(f, *primals) -> (f(*primals), vjp_fn): the forward graph of the split gradient,
// whose captured values (and the results' sizes, for the cotangents' checks) the
// closure made by `make_closure` keeps.
std::shared_ptr<Graph> vjp_graph(const Graph& forward, const TransformSpec& t,
                                 const TransformedFunction& f, const MakeVjpClosure& make_closure);

// hessian(f)(x) column by column: the Jacobian of grad(f) by forward mode over reverse
// mode, one jvp per basis direction of x in a Loop, shaped x + x. The fallback of
// hessian = jacfwd(jacrev(f)) where vmap cannot batch f's gradient; one argnum only.
std::shared_ptr<Graph> hessian_by_columns(const Graph& forward, const TransformSpec& t,
                                          const TransformedFunction& f);

// jacobians.cpp: vmap(f, in_dims, out_dims), f's graph batched (ir/batching/vmap.h).
std::shared_ptr<Graph> vmap_transform_graph(const Graph& forward, const TransformSpec& t,
                                            const TransformedFunction& f);
// jacrev(f, argnums): the backward graph of f batched over the rows of an identity.
std::shared_ptr<Graph> jacrev_graph(const Graph& forward, const TransformSpec& t,
                                    const TransformedFunction& f);
// jacfwd(f, argnums): the jvp graph of f batched over the columns of an identity.
std::shared_ptr<Graph> jacfwd_graph(const Graph& forward, const TransformSpec& t,
                                    const TransformedFunction& f);

// ---- Graph pieces the transforms share (transforms.cpp and jacobians.cpp)

// A TupleConstruct of `elems` at the insertion point.
Value* tuple_value(Graph& g, const std::vector<Value*>& elems);
// A graph whose one result is a tuple returns its elements instead; returns whether it
// did.
bool flatten_tuple_result(Graph& g);
// The split gradient (f, df) of `forward` for the inputs `wrt`, its tuple result taken
// apart first: what vjp and jacrev build on.
struct SplitGradient {
  bool tuple = false;  // f returns a tuple (now its elements)
  size_t num_results = 0;
  JointGraph joint;
  Gradient gradient;
};
SplitGradient split_gradient(const Graph& forward, const std::vector<size_t>& wrt,
                             const std::string& function_name);

}  // namespace tsl::autodiff
