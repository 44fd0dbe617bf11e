// Forward-mode differentiation; see Note [Forward mode] in forward_mode.h.
#include "ir/autodiff/forward_mode.h"

#include <unordered_map>

#include "ir/autodiff/derivatives.h"
#include "ir/autodiff/differentiate.h"
#include "ir/autodiff/prepare.h"
#include "runtime/kernels/dict_ops.h"

namespace tsl::autodiff {
namespace {

class TangentPropagation {
 public:
  TangentPropagation(Graph& g, const Dependence& dependence) : g_(g), dep_(dependence) {}

  void set_tangent(const Value* v, Value* t) { tangents_[v] = t; }
  Value* tangent(const Value* v) const {
    auto it = tangents_.find(v);
    return it == tangents_.end() ? nullptr : it->second;
  }

  void process_block(Block* b) {
    for (Node* n : *b) process_node(n);
  }

  // The tangent of `v`, or zeros shaped like it inserted at the end of `b`.
  Value* tangent_or_zeros(Value* v, Block* b, const SourceRange& range) {
    if (Value* t = tangent(v)) return t;
    InsertPointGuard guard(g_, b);
    FormulaScope scope(g_, range);
    return zero_tangent(v);
  }

  // Zeros shaped like v. In a gradient graph v may be an undefined tensor (a zero
  // gradient) at run time; its tangent is then undefined too (AutogradZeros).
  // A list gradient's zero tangent is a list of undefined entries (Note [Lists]).
  static Sym zero_tangent(Value* v) {
    if (v->node()->op() == OpId::Undefined) return undefined();
    if (is_tensor_list(v->type())) return call(OpId::AutogradListZeros, {v});
    return call(OpId::AutogradZeros, {undefined(), v});
  }
  // Values with tangents: tensors, and lists of tensors (list gradients carried by
  // the loops and branches of a gradient graph).
  // An Optional[Tensor]'s tangent is a tensor, undefined where the value is None.
  static bool has_tangent_type(const TypePtr& t) {
    return t->is_tensor() || is_tensor_list(t) ||
           (t->kind() == TypeKind::Optional && t->element()->is_tensor());
  }
  static TypePtr tangent_type(const Value* v) {
    return is_tensor_list(v->type()) ? v->type() : Type::tensor();
  }

 private:
  bool depends(const Value* v) const { return dep_.requiring.count(v) != 0; }

  void process_node(Node* n) {
    if (n->op() == OpId::Constant) return;
    bool any = false;
    for (const Value* in : n->inputs()) any |= tangent(in) != nullptr;
    // Control flow reads outer values inside its blocks: always look inside.
    if (n->op() == OpId::Loop) return process_loop(n);
    if (n->op() == OpId::If) return process_if(n);
    if (n->op() == OpId::ListConstruct) return process_list(n);  // [] may be appended to
    if (n->op() == OpId::append_list) return process_append(n);
    if (n->op() == OpId::setitem_list) return process_list_setitem(n);
    if (n->op() == OpId::add_list || n->op() == OpId::slice_list) return process_list_copy(n);
    if (dict_op_of(n->op())) return check_dict_read(n);
    if (!any) return;
    switch (n->op()) {
      case OpId::getitem_list: {
        InsertPointGuard guard(g_, n->next());
        Value* t = g_.insert_op(OpId::getitem_list, {tangent(n->input(0)), n->input(1)},
                                Type::tensor(), n->range());
        set_tangent(n->output(), t);
        return;
      }
      case OpId::unwrap_optional:
      case OpId::to_optional:
        if (Value* t = tangent(n->input(0))) set_tangent(n->output(), t);
        return;
      default:
        return process_op(n);
    }
  }

  void process_op(Node* n) {
    const DerivativeRule* rule = derivative_rule(n->op());
    if (!rule) return;  // results that do not depend on the values (sizes, comparisons)
    InsertPointGuard guard(g_, n->next());
    FormulaScope scope(g_, n->range());
    std::vector<Sym> ts;
    for (const Value* in : n->inputs()) ts.emplace_back(tangent(in));
    RuleContext ctx(n, {}, ts, {});
    std::vector<Sym> res = rule->jvp(ctx);
    for (size_t i = 0; i < res.size() && i < n->outputs().size(); ++i) {
      if (res[i] && depends(n->output(i))) {
        Value* t = res[i].value();
        if (!n->output(i)->debug_name().empty() && t->debug_name().empty())
          t->set_debug_name("t" + n->output(i)->debug_name());
        set_tangent(n->output(i), t);
      }
    }
  }

  // A list of tensors: the list of their tangents (zeros for constants), kept in
  // step with the list by process_append.
  void process_list(Node* n) {
    if (!is_tensor_list(n->output()->type()) || !depends(n->output())) return;
    InsertPointGuard guard(g_, n->next());
    FormulaScope scope(g_, n->range());
    std::vector<Value*> ts;
    for (Value* e : n->inputs()) ts.push_back(tangent(e) ? tangent(e) : zero_tangent(e).value());
    Node* l = g_.insert(g_.create(OpId::ListConstruct, ts, 1));
    l->set_range(n->range());
    set_tangent(n->output(), l->output()->set_type(n->output()->type()));
  }

  void process_append(Node* n) {
    Value* tl = tangent(n->input(0));
    if (!tl) return;
    InsertPointGuard guard(g_, n->next());
    FormulaScope scope(g_, n->range());
    Value* v = n->input(1);
    Value* tv = tangent(v) ? tangent(v) : zero_tangent(v).value();
    g_.insert(g_.create(OpId::append_list, {tl, tv}, 0))->set_range(n->range());
  }

  // `xs + ys` and `xs[a:b]` of lists of tensors: the same op on their tangent lists
  // (zeros for a list without one).
  void process_list_copy(Node* n) {
    if (!is_tensor_list(n->output()->type()) || !depends(n->output())) return;
    InsertPointGuard guard(g_, n->next());
    FormulaScope scope(g_, n->range());
    std::vector<Value*> ins = n->inputs();
    size_t lists = n->op() == OpId::add_list ? 2 : 1;
    for (size_t i = 0; i < lists; ++i)
      ins[i] = tangent(ins[i]) ? tangent(ins[i]) : zero_tangent(ins[i]).value();
    Value* t = g_.insert_op(n->op(), ins, n->output()->type(), n->range());
    set_tangent(n->output(), t);
  }

  // `xs[i] = v`: the same write into the list of tangents.
  void process_list_setitem(Node* n) {
    Value* tl = tangent(n->input(0));
    Value* v = n->input(2);
    if (!tl) {
      if (tangent(v)) {
        compile_error(n->range(), "no tangent through the list item assignment" + line_of(n) +
                                      ": jvp follows `xs[i] = v` only for a list literal of "
                                      "the differentiated function");
      }
      return;
    }
    InsertPointGuard guard(g_, n->next());
    FormulaScope scope(g_, n->range());
    Value* tv = tangent(v) ? tangent(v) : zero_tangent(v).value();
    g_.insert(g_.create(OpId::setitem_list, {tl, n->input(1), tv}, 0))->set_range(n->range());
  }

  // Dicts carry no tangents: a value read from one that depends on a differentiated
  // input (one forward_container_entries could not forward) would silently get none.
  // See Note [Dicts under differentiation].
  void check_dict_read(const Node* n) {
    for (const Value* o : n->outputs()) {
      if (!depends(o) || !o->has_uses()) continue;
      compile_error(n->range(),
                    "no tangent through `" + std::string(n->info().base_name()) + "` of a dict" +
                        line_of(n) +
                        ": jvp follows the entries of a dict literal of the differentiated "
                        "function read back with constant keys (`d[\"w\"]`), not reads at "
                        "run-time keys, in loops that write the dict, or of a dict passed in, "
                        "stored or returned (see docs/language.md)");
    }
  }

  void process_if(Node* n) {
    for (Block* b : n->blocks()) process_block(b);
    size_t outputs = n->outputs().size();
    for (size_t k = 0; k < outputs; ++k) {
      if (!depends(n->output(k)) || !has_tangent_type(n->output(k)->type())) continue;
      for (Block* b : n->blocks()) b->add_return(tangent_or_zeros(b->returns()[k], b, n->range()));
      set_tangent(n->output(k), n->add_output()->set_type(tangent_type(n->output(k))));
    }
  }

  void process_loop(Node* n) {
    Block* body = n->block(0);
    size_t carried = n->outputs().size();
    std::vector<size_t> with_tangent;
    for (size_t k = 0; k < carried; ++k) {
      if (depends(body->params()[k + 1]) && has_tangent_type(body->params()[k + 1]->type()))
        with_tangent.push_back(k);
    }
    if (with_tangent.empty()) {
      process_block(body);  // tangents of outer values used inside stay inside
      return;
    }
    for (size_t k : with_tangent) {
      Value* init = n->input(k + 2);
      Value* t0 = tangent(init);
      if (!t0) {
        InsertPointGuard guard(g_, n);
        FormulaScope scope(g_, n->range());
        t0 = zero_tangent(init);
      }
      n->add_input(t0);
      set_tangent(body->params()[k + 1], body->add_param(tangent_type(body->params()[k + 1])));
    }
    process_block(body);
    for (size_t k : with_tangent) {
      body->add_return(tangent_or_zeros(body->returns()[k + 1], body, n->range()));
      set_tangent(n->output(k), n->add_output()->set_type(tangent_type(n->output(k))));
    }
  }

  Graph& g_;
  const Dependence& dep_;
  std::unordered_map<const Value*, Value*> tangents_;
};

}  // namespace

JvpGraph build_jvp(const Graph& forward, const std::vector<size_t>& wrt,
                   const std::string& function_name, size_t tangent_position) {
  JvpGraph result;
  result.graph = forward.clone();
  Graph& g = *result.graph;
  prepare_for_differentiation(g, wrt);
  Dependence dep = analyze_dependence(g, wrt);
  result.num_forward_outputs = g.outputs().size();
  for (const Value* out : g.outputs()) warn_about_cut(dep, out, function_name);
  TangentPropagation prop(g, dep);
  size_t pos = std::min(tangent_position, g.inputs().size());
  std::vector<Value*> primal_inputs = g.inputs();
  for (size_t i : wrt) {
    Value* in = primal_inputs.at(i);
    std::string name = in->debug_name().empty() ? "" : "t" + in->debug_name();
    Value* t = g.block()->insert_param(pos++, Type::tensor(), name);
    if (is_differentiable_type(in->type())) prop.set_tangent(in, t);
  }
  prop.process_block(g.block());
  for (size_t k = 0; k < result.num_forward_outputs; ++k) {
    Value* out = g.outputs()[k];
    if (!out->type()->is_tensor()) continue;
    g.add_output(prop.tangent_or_zeros(out, g.block(), out->node()->range()));
  }
  remove_dead_nodes(g);
  return result;
}

}  // namespace tsl::autodiff
