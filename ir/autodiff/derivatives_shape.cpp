// Derivative rules of the shape, view, indexing and scatter ops. All are linear in
// their tensor inputs, so the forward rule applies the op to the tangent and the
// reverse rule is the adjoint: views undo their reshaping, gathers scatter back,
// scatters gather.
#include "ir/autodiff/derivatives.h"

namespace tsl::autodiff {
namespace {

std::vector<Sym> linear_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? apply_with_input(c, 0, t) : Sym()};
}

// The tangent of an op linear in several tensor inputs jointly (the scatters): the
// op on the tangents, with zeros for inputs whose tangent is zero.
bool carries_tangent(const RuleContext& c, size_t i) {
  if (!c.is_tensor_input(i)) return false;
  OpId op = c.node()->op();
  return !((op == OpId::scatter_add || op == OpId::index_add) && i == 2);  // the index
}
std::vector<Sym> multilinear_jvp(const RuleContext& c) {
  bool any = false;
  std::vector<Arg> args;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!carries_tangent(c, i)) {
      args.emplace_back(c.input(i));
      continue;
    }
    Sym t = c.tangent(i);
    any |= static_cast<bool>(t);
    args.emplace_back(t ? t : zeros_like(c.input(i)));
  }
  if (!any) return {Sym()};
  return {call(c.node()->op(), std::move(args))};
}

std::vector<Sym> reshape_vjp(const RuleContext& c) { return {reshape(c.grad(), size(c.input(0)))}; }
std::vector<Sym> identity_vjp(const RuleContext& c) { return {c.grad()}; }
std::vector<Sym> t_vjp(const RuleContext& c) { return {call(OpId::t, {c.grad()})}; }
std::vector<Sym> transpose_vjp(const RuleContext& c) {
  return {transpose(c.grad(), c.input(1), c.input(2))};
}
std::vector<Sym> permute_vjp(const RuleContext& c) {
  return {call(OpId::permute, {c.grad(), call(OpId::invert_permutation, {c.input(1)})})};
}
std::vector<Sym> expand_vjp(const RuleContext& c) { return {sum_to(c.grad(), c.input(0))}; }
std::vector<Sym> as_jvp(const RuleContext& c) {  // expand_as, view_as, reshape_as
  Sym t = c.tangent(0);
  return {t ? call(c.node()->op(), {t, c.input(1)}) : Sym()};
}

std::vector<Sym> narrow_vjp(const RuleContext& c) {
  Sym x = c.input(0);
  Sym end = call(OpId::add_int, {c.input(2), c.input(3)});
  return {call(OpId::slice_scatter, {zeros_like(x), c.grad(), c.input(1), c.input(2), end, 1})};
}
std::vector<Sym> select_vjp(const RuleContext& c) {
  return {call(OpId::select_scatter, {zeros_like(c.input(0)), c.grad(), c.input(1), c.input(2)})};
}
std::vector<Sym> slice_vjp(const RuleContext& c) {
  return {call(OpId::slice_scatter,
               {zeros_like(c.input(0)), c.grad(), c.input(1), c.input(2), c.input(3), c.input(4)})};
}
std::vector<Sym> index_vjp(const RuleContext& c) {
  return {call(OpId::index_put, {zeros_like(c.input(0)), c.input(1), c.grad(), true})};
}
std::vector<Sym> index_select_vjp(const RuleContext& c) {
  return {call(OpId::index_add, {zeros_like(c.input(0)), c.input(1), c.input(2), c.grad()})};
}
std::vector<Sym> gather_vjp(const RuleContext& c) {
  return {call(OpId::scatter_add, {zeros_like(c.input(0)), c.input(1), c.input(2), c.grad()})};
}
std::vector<Sym> flip_vjp(const RuleContext& c) {
  return {call(OpId::flip, {c.grad(), c.input(1)})};
}

// repeat: the tiles' gradients summed. The result is viewed as [r0, s0, r1, s1, ...]
// and summed over the r dims (their count is the static length of `repeats`).
std::vector<Sym> repeat_vjp(const RuleContext& c) {
  Sym x = c.input(0);
  const Node* reps = c.input(1).value()->node();
  size_t n = 0;
  if (reps->op() == OpId::ListConstruct) {
    n = reps->inputs().size();
  } else if (reps->op() == OpId::Constant && reps->attr("value").is_list()) {
    n = reps->attr("value").to_int_vector().size();
  } else {
    compile_error(c.node()->range(),
                  "no gradient for `repeat` with repeats that are not a list written out");
  }
  std::vector<int64_t> tile_dims;
  for (size_t i = 0; i < n; ++i) tile_dims.push_back(static_cast<int64_t>(2 * i));
  Sym split = reshape(c.grad(), call(OpId::repeat_grad_size, {size(x), c.input(1)}));
  Sym summed = call(OpId::sum, {split, tile_dims, false});
  return {reshape(summed, size(x))};
}

std::vector<Sym> to_dtype_vjp(const RuleContext& c) {
  return {to_dtype(c.grad(), dtype_of(c.input(0)))};
}
std::vector<Sym> to_device_vjp(const RuleContext& c) {
  Sym dev = call(OpId::device, {c.input(0)});
  dev.value()->set_type(Type::device());
  return {call(OpId::to_device, {c.grad(), dev})};
}

// cat and stack: the gradient of the list input is a list, one piece per tensor.
// Autodiff hands each piece to the element it came from (see Note [Lists]).
bool is_literal_list(const Value* list) {
  if (list->node()->op() != OpId::ListConstruct) return false;
  for (const Use& u : list->uses()) {
    if (u.user->op() == OpId::append_list && u.offset == 0) return false;
  }
  return true;
}
std::vector<Sym> cat_vjp(const RuleContext& c) {
  Sym list = c.input(0);
  Sym sizes;
  if (is_literal_list(list)) {
    Graph& g = FormulaScope::graph();
    std::vector<Value*> elems;
    for (Value* e : list.value()->node()->inputs())
      elems.push_back(call(OpId::size_dim, {e, c.input(1)}));
    Node* sz = g.insert(g.create(OpId::ListConstruct, elems));
    sz->set_range(FormulaScope::range());
    sizes = sz->output()->set_type(Type::list(Type::int_()));
  } else {
    sizes = call(OpId::list_sizes_along, {list, c.input(1)});
  }
  Sym pieces = call(OpId::split_sizes, {c.grad(), sizes, c.input(1)});
  return {pieces};
}
std::vector<Sym> stack_vjp(const RuleContext& c) {
  Sym list = c.input(0);
  if (!is_literal_list(list)) {
    // Pieces keep a size-1 dim; the list gradient ops reshape them to each element.
    return {call(OpId::split, {c.grad(), 1, c.input(1)})};
  }
  Graph& g = FormulaScope::graph();
  std::vector<Value*> pieces;
  for (size_t i = 0; i < list.value()->node()->inputs().size(); ++i) {
    pieces.push_back(call(OpId::select, {c.grad(), c.input(1), static_cast<int64_t>(i)}));
  }
  Node* l = g.insert(g.create(OpId::ListConstruct, pieces));
  l->set_range(FormulaScope::range());
  return {Sym(l->output()->set_type(Type::list(Type::tensor())))};
}
// Python's sum of a list of tensors: autodiff lowers it to adds before differentiating
// (lower_tensor_list_sums in prepare.cpp), so the rule meets it only for a list
// literal given whole, in a gradient of a gradient: each element gets the gradient
// summed to its own shape.
std::vector<Sym> sum_tensor_list_vjp(const RuleContext& c) {
  Sym list = c.input(0);
  TSL_INTERNAL_ASSERT(is_literal_list(list), "sum of a non-literal list met by its rule");
  Graph& g = FormulaScope::graph();
  std::vector<Value*> pieces;
  for (Value* e : list.value()->node()->inputs()) pieces.push_back(sum_to(c.grad(), e));
  Node* l = g.insert(g.create(OpId::ListConstruct, pieces));
  l->set_range(FormulaScope::range());
  return {Sym(l->output()->set_type(Type::list(Type::tensor())))};
}
std::vector<Sym> sum_tensor_list_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);  // a list of tangents, zeros where none
  return {t ? call(OpId::sum_tensor_list, {t}) : Sym()};
}

// The tangent of cat/stack: the op on the list of tangents (zeros where none).
std::vector<Sym> join_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);  // autodiff gives a list of tangents for a ListConstruct input
  return {t ? call(c.node()->op(), {t, c.input(1)}) : Sym()};
}

// split, split.sizes, chunk: autodiff turns each piece read from the list into a
// narrow of the input (see forward_split_pieces), so a gradient reaches the list
// itself only when it is used as a whole (torch.stack(x.split(1)), or the list
// gradient of stack in a gradient graph): the input's gradient joins it back.
std::vector<Sym> split_vjp(const RuleContext& c) {
  return {call(OpId::AutogradListCat, {c.grad(), c.output(), c.input(2)})};
}
std::vector<Sym> split_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  Sym pieces = apply_with_input(c, 0, t);
  return {pieces};
}

// tril and triu keep the same elements of the gradient; diag and diag_backward are
// adjoint to one another, so each one's gradient is the other.
std::vector<Sym> triangle_vjp(const RuleContext& c) {
  return {call(c.node()->op(), {c.grad(), c.input(1)})};
}
std::vector<Sym> diag_vjp(const RuleContext& c) {
  return {call(OpId::diag_backward, {c.grad(), size(c.input(0)), c.input(1)})};
}
std::vector<Sym> diag_backward_vjp(const RuleContext& c) {
  return {call(OpId::diag, {c.grad(), c.input(2)})};
}

// The scatters (adjoints of the gathers above) and sum_to_size.
std::vector<Sym> sum_to_size_vjp(const RuleContext& c) {
  return {expand(c.grad(), size(c.input(0)))};
}
std::vector<Sym> scatter_add_vjp(const RuleContext& c) {
  return {c.needs(0) ? c.grad() : Sym(), Sym(), Sym(),
          c.needs(3) ? call(OpId::gather, {c.grad(), c.input(1), c.input(2)}) : Sym()};
}
std::vector<Sym> index_add_vjp(const RuleContext& c) {
  Sym gs;
  if (c.needs(3)) gs = call(OpId::index_select, {c.grad(), c.input(1), c.input(2)}) * c.input(4);
  return {c.needs(0) ? c.grad() : Sym(), Sym(), Sym(), gs};
}
std::vector<Sym> index_put_vjp(const RuleContext& c) {
  Sym g = c.grad();
  Sym gself;
  if (c.needs(0)) {
    const IValue* acc = c.constant_input(3);
    if (!acc || !acc->is_bool()) {
      compile_error(c.node()->range(),
                    "no gradient for index_put with an `accumulate` that is not a constant");
    }
    gself =
        acc->to_bool() ? g : call(OpId::index_put, {g, c.input(1), zeros_like(c.input(2)), false});
  }
  Sym gvalues;
  if (c.needs(2)) gvalues = c.reduce_to(call(OpId::index, {g, c.input(1)}), 2);
  return {gself, Sym(), gvalues, Sym()};
}
std::vector<Sym> slice_scatter_vjp(const RuleContext& c) {
  Sym g = c.grad();
  Sym gself, gsrc;
  if (c.needs(0)) {
    gself = call(OpId::slice_scatter,
                 {g, zeros_like(c.input(1)), c.input(2), c.input(3), c.input(4), c.input(5)});
  }
  if (c.needs(1)) gsrc = call(OpId::slice, {g, c.input(2), c.input(3), c.input(4), c.input(5)});
  return {gself, gsrc};
}
std::vector<Sym> select_scatter_vjp(const RuleContext& c) {
  Sym g = c.grad();
  Sym gself, gsrc;
  if (c.needs(0)) {
    gself = call(OpId::select_scatter, {g, zeros_like(c.input(1)), c.input(2), c.input(3)});
  }
  if (c.needs(1)) gsrc = call(OpId::select, {g, c.input(2), c.input(3)});
  return {gself, gsrc};
}

// ---- List gradients (Note [Lists] in differentiate.cpp), met when a gradient graph
// is differentiated again. AutogradListAdd is linear in its list gradient and its
// tensor, and AutogradListItem is its adjoint; AutogradListPop and AutogradListPush
// are adjoint too. `like` inputs only give lengths and shapes.
// AutogradListCat(grads, like, dim) is linear in grads; its adjoint splits back.
std::vector<Sym> list_cat_vjp(const RuleContext& c) {
  if (!c.needs(0)) return {Sym()};
  Sym sizes = call(OpId::list_sizes_along, {c.input(1), c.input(2)});
  return {call(OpId::split_sizes, {c.grad(), sizes, c.input(2)})};
}
std::vector<Sym> list_cat_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  return {t ? apply_with_input(c, 0, t) : Sym()};
}
std::vector<Sym> list_add_vjp(const RuleContext& c) {
  Sym g = c.grad();
  return {c.needs(0) ? g : Sym(), Sym(), Sym(),
          c.needs(3) ? call(OpId::AutogradListItem, {g, c.input(2), c.input(3)}) : Sym()};
}
std::vector<Sym> list_add_jvp(const RuleContext& c) {
  Sym t0 = c.tangent(0), t3 = c.tangent(3);
  if (!t0 && !t3) return {Sym()};
  return {call(OpId::AutogradListAdd,
               {t0 ? t0 : undefined(), c.input(1), c.input(2), t3 ? t3 : undefined()})};
}
std::vector<Sym> list_item_vjp(const RuleContext& c) {
  if (!c.needs(0)) return {Sym()};
  return {call(OpId::AutogradListAdd, {undefined(), c.input(0), c.input(1), c.grad()})};
}
// A tangent list may hold undefined (zero) entries where the list it follows holds
// tensors; a tensor read from it is made real zeros there (AutogradZeros).
std::vector<Sym> list_item_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym()};
  return {call(OpId::AutogradZeros,
               {call(OpId::AutogradListItem, {t, c.input(1), c.input(2)}), c.output()})};
}
std::vector<Sym> list_pop_vjp(const RuleContext& c) {
  if (!c.needs(0)) return {Sym(), Sym()};
  Sym rest = c.grad(0), last = c.grad(1);
  return {call(OpId::AutogradListPush,
               {rest ? rest : undefined(), c.output(0), last ? last : undefined()}),
          Sym()};
}
std::vector<Sym> list_pop_jvp(const RuleContext& c) {
  Sym t = c.tangent(0);
  if (!t) return {Sym(), Sym()};
  std::vector<Sym> r = call_multi(OpId::AutogradListPop, {t, c.input(1)}, 2);
  return {r[0], call(OpId::AutogradZeros, {r[1], c.output(1)})};
}
std::vector<Sym> list_push_vjp(const RuleContext& c) {
  std::vector<Sym> r = call_multi(OpId::AutogradListPop, {c.grad(), c.input(2)}, 2);
  return {c.needs(0) ? r[0] : Sym(), Sym(), c.needs(2) ? r[1] : Sym()};
}
std::vector<Sym> list_push_jvp(const RuleContext& c) {
  Sym t0 = c.tangent(0), t2 = c.tangent(2);
  if (!t0 && !t2) return {Sym()};
  return {call(OpId::AutogradListPush, {t0 ? t0 : undefined(), c.input(1), t2 ? t2 : undefined()})};
}

}  // namespace

void register_shape_derivatives(DerivativeTable& table) {
  TSL_DERIVATIVE(t, t_vjp, linear_jvp);
  TSL_DERIVATIVE(transpose, transpose_vjp, linear_jvp);
  TSL_DERIVATIVE(permute, permute_vjp, linear_jvp);
  for (OpId op : {OpId::reshape, OpId::view, OpId::flatten, OpId::squeeze, OpId::squeeze_dim,
                  OpId::unsqueeze}) {
    table[static_cast<size_t>(op)] = {&reshape_vjp, &linear_jvp};
  }
  TSL_DERIVATIVE(view_as, reshape_vjp, as_jvp);
  TSL_DERIVATIVE(reshape_as, reshape_vjp, as_jvp);
  TSL_DERIVATIVE(expand, expand_vjp, linear_jvp);
  TSL_DERIVATIVE(broadcast_to, expand_vjp, linear_jvp);
  TSL_DERIVATIVE(expand_as, expand_vjp, as_jvp);
  TSL_DERIVATIVE(contiguous, identity_vjp, linear_jvp);
  TSL_DERIVATIVE(clone, identity_vjp, linear_jvp);
  TSL_DERIVATIVE(narrow, narrow_vjp, linear_jvp);
  TSL_DERIVATIVE(select, select_vjp, linear_jvp);
  TSL_DERIVATIVE(slice, slice_vjp, linear_jvp);
  TSL_DERIVATIVE(index, index_vjp, linear_jvp);
  TSL_DERIVATIVE(index_select, index_select_vjp, linear_jvp);
  TSL_DERIVATIVE(gather, gather_vjp, linear_jvp);
  TSL_DERIVATIVE(flip, flip_vjp, linear_jvp);
  TSL_DERIVATIVE(tril, triangle_vjp, linear_jvp);
  TSL_DERIVATIVE(triu, triangle_vjp, linear_jvp);
  TSL_DERIVATIVE(diag, diag_vjp, linear_jvp);
  TSL_DERIVATIVE(diag_backward, diag_backward_vjp, linear_jvp);
  TSL_DERIVATIVE(repeat, repeat_vjp, linear_jvp);
  TSL_DERIVATIVE(to_dtype, to_dtype_vjp, linear_jvp);
  TSL_DERIVATIVE(to_device, to_device_vjp, linear_jvp);
  TSL_DERIVATIVE(cat, cat_vjp, join_jvp);
  TSL_DERIVATIVE(stack, stack_vjp, join_jvp);
  TSL_DERIVATIVE(sum_tensor_list, sum_tensor_list_vjp, sum_tensor_list_jvp);
  TSL_DERIVATIVE(split, split_vjp, split_jvp);
  TSL_DERIVATIVE(split_sizes, split_vjp, split_jvp);
  TSL_DERIVATIVE(chunk, split_vjp, split_jvp);
  TSL_DERIVATIVE(sum_to_size, sum_to_size_vjp, linear_jvp);
  TSL_DERIVATIVE(scatter_add, scatter_add_vjp, multilinear_jvp);
  TSL_DERIVATIVE(index_add, index_add_vjp, multilinear_jvp);
  TSL_DERIVATIVE(index_put, index_put_vjp, multilinear_jvp);
  TSL_DERIVATIVE(slice_scatter, slice_scatter_vjp, multilinear_jvp);
  TSL_DERIVATIVE(select_scatter, select_scatter_vjp, multilinear_jvp);
  TSL_DERIVATIVE(AutogradListAdd, list_add_vjp, list_add_jvp);
  TSL_DERIVATIVE(AutogradListItem, list_item_vjp, list_item_jvp);
  TSL_DERIVATIVE(AutogradListPop, list_pop_vjp, list_pop_jvp);
  TSL_DERIVATIVE(AutogradListPush, list_push_vjp, list_push_jvp);
  TSL_DERIVATIVE(AutogradListCat, list_cat_vjp, list_cat_jvp);
}

}  // namespace tsl::autodiff
