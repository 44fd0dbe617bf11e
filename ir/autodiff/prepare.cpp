// What autodiff does to a graph before differentiating it, and the analysis of
// which values depend differentiably on the differentiated inputs (prepare.h).
#include "ir/autodiff/prepare.h"

#include <algorithm>

#include "ir/autodiff/derivatives.h"
#include "ir/autodiff/forward_containers.h"
#include "ir/autodiff/functionalize.h"
#include "runtime/kernels/dict_ops.h"

namespace tsl::autodiff {

bool is_differentiable_type(const TypePtr& t) {
  // An Optional[Tensor] carries a gradient when it holds a tensor (`o = x * 2.0` in a
  // branch, then `o if o is not None else ...`); where it is None, none.
  if (t && t->kind() == TypeKind::Optional) return is_differentiable_type(t->element());
  if (!t || !t->is_tensor()) return false;
  std::optional<DType> dt = t->tensor_dtype();
  return !dt || *dt == DType::Float32 || *dt == DType::Float64;
}

bool is_tensor_list(const TypePtr& t) {
  return t && t->kind() == TypeKind::List && t->element()->is_tensor();
}

bool holds_gradient(const TypePtr& t) {
  if (!t) return false;
  if (t->kind() == TypeKind::Optional) return holds_gradient(t->element());
  if (t->kind() == TypeKind::Dict) return holds_gradient(t->value());
  return is_differentiable_type(t) || is_tensor_list(t);
}

std::string line_of(const Node* n) {
  return n->range().valid() ? " at line " + std::to_string(n->range().line) : "";
}

namespace {

// ---- Preparation ----------------------------------------------------------------------

// TupleUnpack(TupleConstruct(xs)) -> xs, TupleIndex(TupleConstruct(xs), k) -> xs[k]:
// what inlining a function that returns a tuple leaves behind.
void forward_tuples(Block* b) {
  for (Node* n : *b) {
    for (Block* nb : n->blocks()) forward_tuples(nb);
    if (n->op() != OpId::TupleUnpack && n->op() != OpId::TupleIndex) continue;
    const Node* tup = n->input(0)->node();
    if (tup->op() != OpId::TupleConstruct) continue;
    if (n->op() == OpId::TupleUnpack) {
      for (size_t i = 0; i < n->outputs().size(); ++i)
        n->output(i)->replace_all_uses_with(tup->input(i));
    } else {
      size_t k = static_cast<size_t>(n->attr("index").to_int());
      n->output()->replace_all_uses_with(tup->input(k));
    }
  }
}

// An If whose result is a tuple (a function with early returns of tuples, once
// inlined: `if c: return a, b` ... `return c, d`) returns its elements instead, and a
// TupleConstruct after it rebuilds the tuple, which forward_tuples then sees through.
// Autodiff follows tensors, not tuples: the tuple result carried no gradient, and every
// gradient through it was zero.
void split_tuple_carried(Graph& g, Node* loop);

// Adds the elements of tuple r to b's returns (TupleUnpack before b's return).
void return_elements(Graph& g, Block* b, Value* r, const Node* at) {
  const std::vector<TypePtr>& elems = r->type()->contained();
  InsertPointGuard guard(g, b->return_node());
  Node* unpack = g.insert(g.create(OpId::TupleUnpack, {r}, elems.size()));
  unpack->set_range(at->range());
  for (size_t i = 0; i < elems.size(); ++i) b->add_return(unpack->output(i)->set_type(elems[i]));
}

// Gives n one output per element of its tuple result `out` and makes out's uses read
// a TupleConstruct of them, after n.
void rebuild_after(Graph& g, Node* n, Value* out) {
  std::vector<Value*> parts;
  for (const TypePtr& t : out->type()->contained()) parts.push_back(n->add_output()->set_type(t));
  InsertPointGuard guard(g, n->next());
  Node* tuple = g.insert(g.create(OpId::TupleConstruct, parts, 1));
  tuple->set_range(n->range());
  tuple->output()->set_type(out->type());
  out->replace_all_uses_with(tuple->output());
}

void split_tuple_results(Graph& g, Block* b) {
  for (Node* n : *b) {
    for (Block* nb : n->blocks()) split_tuple_results(g, nb);
    if (n->op() == OpId::Loop) split_tuple_carried(g, n);
    if (n->op() != OpId::If) continue;
    for (size_t k = 0; k < n->outputs().size(); ++k) {  // grows: nested tuples split too
      Value* out = n->output(k);
      if (out->type()->kind() != TypeKind::Tuple || out->uses().empty()) continue;
      for (Block* branch : n->blocks()) return_elements(g, branch, branch->returns()[k], n);
      rebuild_after(g, n, out);
    }
  }
}

// The same for a tuple a Loop carries (`acc = (acc[1], acc[0] * x)`): its elements are
// carried instead, the tuple rebuilt from them in the body and after the loop.
void split_tuple_carried(Graph& g, Node* loop) {
  Block* body = loop->block(0);
  for (size_t k = 0; k < loop->outputs().size(); ++k) {  // grows: nested tuples split too
    Value* param = body->params()[k + 1];
    Value* out = loop->output(k);
    if (param->type()->kind() != TypeKind::Tuple) continue;
    if (param->uses().empty() && out->uses().empty()) continue;
    const std::vector<TypePtr>& elems = param->type()->contained();
    {
      InsertPointGuard guard(g, loop);
      Node* unpack = g.insert(g.create(OpId::TupleUnpack, {loop->input(k + 2)}, elems.size()));
      unpack->set_range(loop->range());
      for (size_t i = 0; i < elems.size(); ++i)
        loop->add_input(unpack->output(i)->set_type(elems[i]));
    }
    std::vector<Value*> params;
    for (const TypePtr& t : elems) params.push_back(body->add_param(t, ""));
    {
      Node* first = body->begin() != body->end() ? *body->begin() : body->return_node();
      InsertPointGuard guard(g, first);
      Node* tuple = g.insert(g.create(OpId::TupleConstruct, params, 1));
      tuple->set_range(loop->range());
      tuple->output()->set_type(param->type());
      param->replace_all_uses_with(tuple->output());
    }
    return_elements(g, body, body->returns()[k + 1], loop);
    rebuild_after(g, loop, out);
  }
}

// getitem(split(x, ..., dim), i) -> narrow(x, dim, start, length), with start and
// length read from the pieces (so split's checks and Python's indexing still
// apply): a piece becomes an ordinary differentiable view of x.
void forward_split_pieces(Graph& g, Block* b) {
  for (Node* n : *b) {
    for (Block* nb : n->blocks()) forward_split_pieces(g, nb);
    if (n->op() != OpId::getitem_list) continue;
    const Node* split = n->input(0)->node();
    if (split->op() != OpId::split && split->op() != OpId::split_sizes &&
        split->op() != OpId::chunk)
      continue;
    InsertPointGuard guard(g, n);
    FormulaScope scope(g, n->range());
    Sym dim = split->input(2);
    Sym range = call(OpId::split_piece_range, {n->input(0), n->input(1), dim});
    Sym start = call(OpId::getitem_list, {range, 0});
    Sym length = call(OpId::getitem_list, {range, 1});
    start.value()->set_type(Type::int_());
    length.value()->set_type(Type::int_());
    Sym piece = call(OpId::narrow, {split->input(0), dim, start, length});
    n->output()->replace_all_uses_with(piece);
    n->destroy();
  }
}

// dropout(x, p, training) -> x * dropout(ones_like(x), p, training): the same random
// draws (same shape), and the mask becomes an ordinary value the gradient can use.
void rewrite_dropout(Graph& g, Block* b) {
  for (Node* n : *b) {
    for (Block* nb : n->blocks()) rewrite_dropout(g, nb);
    if (n->op() != OpId::dropout) continue;
    // Already the mask of a rewritten dropout: preparing twice changes nothing.
    if (n->input(0)->node()->op() == OpId::ones_like) continue;
    InsertPointGuard guard(g, n);
    FormulaScope scope(g, n->range());
    Sym mask = call(OpId::dropout, {ones_like(n->input(0)), n->input(1), n->input(2)});
    Sym y = Sym(n->input(0)) * mask;
    n->output()->replace_all_uses_with(y);
    n->destroy();
  }
}

// Python's sum of a list of tensors, sum(xs) = 0 + xs[0] + xs[1] + ..., becomes that
// chain of adds for a list literal and a loop of adds over any other list, so the
// gradient is add's (broadcasting included) and reaches each element through the
// list rules. `0 +` is kept (it decides the dtype of a bool list's sum, as in Python).
void lower_tensor_list_sums(Graph& g, Block* b) {
  for (Node* n : *b) {
    for (Block* nb : n->blocks()) lower_tensor_list_sums(g, nb);
    if (n->op() != OpId::sum_tensor_list) continue;
    Value* list = n->input(0);
    bool literal = list->node()->op() == OpId::ListConstruct &&
                   std::none_of(list->uses().begin(), list->uses().end(), [](const Use& u) {
                     return u.user->op() == OpId::append_list && u.offset == 0;
                   });
    if (literal && list->node()->inputs().empty()) continue;  // sum([]) is 0, no gradient
    InsertPointGuard guard(g, n);
    FormulaScope scope(g, n->range());
    Sym acc;
    if (literal) {
      for (Value* e : list->node()->inputs())
        acc = acc ? Sym(acc + Sym(e)) : call(OpId::add, {e, Arg(int64_t{0})});
    } else {
      Value* count = call(OpId::len_list, {list});
      Sym zero = call(OpId::zeros, {Arg(std::vector<int64_t>{}), Arg(DType::Int64)});
      Node* loop =
          g.insert(g.create(OpId::Loop, {count, constant(IValue(true), Type::bool_()), zero}, 1));
      loop->set_range(n->range());
      Block* body = loop->add_block();
      Value* i = body->add_param(Type::int_());
      Value* carried = body->add_param(Type::tensor());
      {
        InsertPointGuard inner(g, body);
        Sym item = call(OpId::getitem_list, {list, i});
        item.value()->set_type(Type::tensor());
        body->add_return(constant(IValue(true), Type::bool_()));
        body->add_return(Sym(carried) + item);
      }
      acc = loop->output()->set_type(Type::tensor());
    }
    n->output()->replace_all_uses_with(acc);
    n->destroy();
  }
}

// GradOf(grads) { body } -> If(AnyDefined(grads)) { body } else { Undefined... }, so
// that a gradient graph can be differentiated again with the If rule.
void lower_grad_of(Graph& g, Block* b) {
  for (Node* n : *b) {
    for (Block* nb : n->blocks()) lower_grad_of(g, nb);
    if (n->op() != OpId::GradOf) continue;
    InsertPointGuard guard(g, n);
    Value* any = g.insert_op(OpId::AnyDefined, n->inputs(), Type::bool_(), n->range());
    Node* if_node = g.insert(g.create(OpId::If, {any}, n->outputs().size()));
    if_node->set_range(n->range());
    // The rule it was, for readers of grad-of-grad graphs (If[grad_of='sin', line=4]):
    // the specialized view shows it as that GradOf again.
    if_node->set_attr("grad_of", n->attr("op"));
    if (n->has_attr("line")) if_node->set_attr("line", n->attr("line"));
    Block* then_block = if_node->add_block();
    Block* else_block = if_node->add_block();
    Block* body = n->block(0);
    while (!body->empty()) (*body->begin())->move_before(then_block->return_node());
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      then_block->add_return(body->returns()[i]);
      InsertPointGuard inner(g, else_block);
      Value* u = g.insert_op(OpId::Undefined, {}, n->output(i)->type(), n->range());
      else_block->add_return(u);
      if_node->output(i)->set_type(n->output(i)->type());
      n->output(i)->replace_all_uses_with(if_node->output(i));
    }
    while (!body->returns().empty()) body->erase_return(0);
    n->destroy();
  }
}

// ---- Which values need gradients -------------------------------------------------------

class Analysis : public Dependence {
 public:
  void run(const Block* b) {
    for (const Node* n : *b) visit(n);
  }

 private:
  bool req(const Value* v) const { return requiring.count(v) != 0; }

  void mark(const Value* v) {
    if (holds_gradient(v->type())) requiring.insert(v);
  }

  // The value an in-place write stores into its first input: `xs.append(v)`,
  // `xs[i] = v`, `d[k] = v`, `d.update(other)`; null for other ops.
  static const Value* value_stored(const Node* n) {
    switch (n->op()) {
      case OpId::append_list:
        return n->input(1);
      case OpId::setitem_list:
        return n->input(2);
      default:
        break;
    }
    std::optional<DictOp> op = dict_op_of(n->op());
    if (op == DictOp::Setitem) return n->input(2);
    if (op == DictOp::Update) return n->input(1);
    return nullptr;
  }

  // Ops whose result holds values of a dict, or builds one: their results need
  // gradients when the dict (or a value stored) does. None has a gradient formula, so
  // a gradient reaching one is a compile error (Note [Dicts under differentiation]).
  static bool passes_dict_values(OpId op) {
    if (op == OpId::DictConstruct) return true;
    switch (dict_op_of(op).value_or(DictOp::Len)) {
      case DictOp::Getitem:
      case DictOp::Get:
      case DictOp::GetDefault:
      case DictOp::Pop:
      case DictOp::PopDefault:
      case DictOp::Values:
      case DictOp::Copy:
        return true;
      default:
        return false;
    }
  }

  // The per-iteration stack of a loop nested in another loop, pushed onto the outer
  // loop's list of lists (what a gradient graph of nested loops saves): lists of
  // lists have no gradient rules, so differentiating through it again would silently
  // drop its part of the gradient. An error instead.
  void check_nested_stack(const Node* append) {
    const Value* list = append->input(0);
    const Value* stack = append->input(1);
    if (!is_tensor_list(stack->type()) || !req(stack)) return;
    if (stack->node()->op() != OpId::ListConstruct) return;
    compile_error(list->node()->range(),
                  "differentiating a second time through a loop nested in another loop is not "
                  "supported yet (the inner loop's saved values form a list of lists); take "
                  "the higher derivative of a function with one loop level, or unroll the "
                  "inner loop");
  }

  static bool carries_cut(const TypePtr& t) {
    return t->kind() == TypeKind::Float || is_differentiable_type(t);
  }

  void propagate_cuts(const Node* n, const std::vector<const Value*>& data_inputs) {
    const Cut* from = nullptr;
    for (const Value* v : data_inputs) {
      auto it = cuts.find(v);
      if (it != cuts.end()) from = &it->second;
    }
    // Ops that read a tensor's values into something without a gradient. (Other ops
    // without a rule either return ints or bools, or do not depend on the values at
    // all, as zeros_like; their results are constants for differentiation.)
    bool origin = false;
    static const OpId cutting[] = {OpId::item, OpId::item_float, OpId::Float_Tensor,
                                   OpId::floor_divide, OpId::tolist};
    if (std::find(std::begin(cutting), std::end(cutting), n->op()) != std::end(cutting)) {
      for (const Value* v : data_inputs) origin |= req(v);
    }
    if (!from && !origin) return;
    for (const Value* o : n->outputs()) {
      if (!carries_cut(o->type())) continue;
      Cut c = origin ? Cut{n, nullptr} : *from;
      if (!origin && !c.consumer) c.consumer = n;
      cuts.emplace(o, c);
    }
  }

  void visit(const Node* n) {
    switch (n->op()) {
      case OpId::Constant:
        return;
      case OpId::If:
        return visit_if(n);
      case OpId::Loop:
        return visit_loop(n);
      default:
        break;
    }
    std::vector<const Value*> ins(n->inputs().begin(), n->inputs().end());
    propagate_cuts(n, ins);
    // A call autodiff cannot see into (a function value that came from elsewhere;
    // the inliner opened every call it could): never a silent zero gradient.
    if (n->op() == OpId::CallClosure || n->op() == OpId::CallFunction) {
      bool any = std::any_of(ins.begin(), ins.end(), [&](const Value* v) { return req(v); });
      if (any) {
        compile_error(n->range(),
                      "cannot differentiate through this call of a function value (its "
                      "function is not known where the gradient is built)");
      }
    }
    if (n->op() == OpId::append_list && n->input(0)->type()->element()->kind() == TypeKind::List)
      check_nested_stack(n);
    if (const Value* stored = value_stored(n); stored && req(stored)) {
      mark(n->input(0));  // a list or dict holds what is appended or written to it
      return;
    }
    if (dict_op_of(n->op()) == DictOp::Items && req(n->input(0))) {
      compile_error(n->range(),
                    "cannot differentiate through `items()` of a dict holding tensors that "
                    "need gradients: read its entries by key (`d[\"w\"]`), or iterate "
                    "with `for k, v in d.items():`");
    }
    bool structural = n->op() == OpId::ListConstruct || n->op() == OpId::TupleConstruct ||
                      n->op() == OpId::TupleUnpack || n->op() == OpId::TupleIndex ||
                      n->op() == OpId::unwrap_optional || n->op() == OpId::to_optional ||
                      n->op() == OpId::getitem_list || n->op() == OpId::add_list ||
                      n->op() == OpId::slice_list || passes_dict_values(n->op());
    // An in-place update's result (its self, updated) depends on all its operands.
    if (!structural && !derivative_rule(n->op()) && !is_inplace_update(n->op())) return;
    bool any = std::any_of(ins.begin(), ins.end(), [&](const Value* v) { return req(v); });
    if (!any) return;
    for (const Value* o : n->outputs()) mark(o);
  }

  void visit_if(const Node* n) {
    run(n->block(0));
    run(n->block(1));
    for (size_t k = 0; k < n->outputs().size(); ++k) {
      for (const Block* b : n->blocks()) {
        const Value* r = b->returns()[k];
        if (req(r)) mark(n->output(k));
        auto c = cuts.find(r);
        if (c != cuts.end()) cuts.emplace(n->output(k), c->second);
      }
    }
  }

  void visit_loop(const Node* n) {
    const Block* body = n->block(0);
    size_t carried = n->outputs().size();
    for (size_t k = 0; k < carried; ++k) {
      if (req(n->input(k + 2))) mark(body->params()[k + 1]);
      auto c = cuts.find(n->input(k + 2));
      if (c != cuts.end()) cuts.emplace(body->params()[k + 1], c->second);
    }
    for (bool changed = true; changed;) {
      // A write in the body (`d[k] = v`, `xs.append(v)`) may mark a container that a
      // read earlier in the body sees in the next iteration: run again until nothing
      // new needs a gradient.
      size_t before = requiring.size();
      run(body);
      changed = requiring.size() != before;
      for (size_t k = 0; k < carried; ++k) {
        const Value* r = body->returns()[k + 1];
        const Value* p = body->params()[k + 1];
        if (req(r) && !req(p)) {
          mark(p);
          changed |= req(p);
        }
        auto c = cuts.find(r);
        if (c != cuts.end() && !cuts.count(p)) {
          cuts.emplace(p, c->second);
          changed = true;
        }
      }
    }
    for (size_t k = 0; k < carried; ++k) {
      if (req(body->params()[k + 1])) mark(n->output(k));
      auto c = cuts.find(body->params()[k + 1]);
      if (c != cuts.end()) cuts.emplace(n->output(k), c->second);
    }
  }
};

}  // namespace

void prepare_for_differentiation(Graph& g, const std::vector<size_t>& wrt) {
  split_tuple_results(g, g.block());
  forward_tuples(g.block());
  forward_container_entries(g);
  forward_split_pieces(g, g.block());
  rewrite_dropout(g, g.block());
  lower_tensor_list_sums(g, g.block());
  lower_grad_of(g, g.block());
  functionalize_inplace_updates(g, wrt);
}

Dependence analyze_dependence(const Graph& g, const std::vector<size_t>& wrt) {
  Analysis a;
  for (size_t i : wrt) {
    const Value* in = g.inputs().at(i);
    if (is_differentiable_type(in->type())) a.requiring.insert(in);
  }
  a.run(g.block());
  return a;
}

void warn_about_cut(const Dependence& a, const Value* out, const std::string& function_name) {
  auto it = a.cuts.find(out);
  if (it == a.cuts.end()) return;
  const Cut& c = it->second;
  if (c.origin->op() == OpId::floor_divide) {
    // PyTorch's backward fails here ("derivative for aten::floor_divide is not
    // implemented"): an error at compile time, not a warning.
    std::string fn = function_name.empty() ? "the function" : "`" + function_name + "`";
    compile_error(c.origin->range(),
                  "the derivative of floor_divide is not implemented (as in PyTorch), yet the "
                  "result of " +
                      fn + " depends on it; write .detach() to cut the gradient there");
  }
  // One warning per op, whichever function's gradient met it.
  std::string msg = "no gradient flows through `" + std::string(c.origin->info().base_name()) +
                    "`: it turns a tensor into a plain number, a constant to autograd (as in "
                    "PyTorch), yet the result depends on it";
  if (c.consumer) {
    msg += " through `" + std::string(c.consumer->info().base_name()) + "`" + line_of(c.consumer);
  }
  msg += "; write .detach() to cut the gradient there on purpose";
  warning(c.origin->range(), msg);
}

}  // namespace tsl::autodiff
