// The vmap rewrite: f's graph to the graph of vmap(f). See Note [Batching at compile
// time] in vmap.h.
#include "ir/batching/vmap.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/autodiff/differentiate.h"
#include "ir/autodiff/prepare.h"
#include "ir/batching/batched_values.h"
#include "ir/batching/batching_rules.h"
#include "runtime/kernels/dict_ops.h"

namespace tsl::batching {

using namespace autodiff;

bool is_structural_for_vmap(OpId op) {
  switch (op) {
    case OpId::Param:
    case OpId::Return:
    case OpId::Constant:
    case OpId::If:
    case OpId::Loop:
    case OpId::CallFunction:
    case OpId::CallClosure:
    case OpId::MakeClosure:
    case OpId::GradOf:
    case OpId::FusionGroup:
    case OpId::ListConstruct:
    case OpId::TupleConstruct:
    case OpId::TupleUnpack:
    case OpId::TupleIndex:
    case OpId::Uninitialized:
    case OpId::Undefined:
    case OpId::RaiseException:
    case OpId::unwrap_optional:
    case OpId::to_optional:
    case OpId::AssumeDefined:
    case OpId::AnyDefined:
    case OpId::len_list:
    case OpId::getitem_list:
    case OpId::slice_list:
    case OpId::setitem_list:
    case OpId::append_list:
    case OpId::add_list:
    case OpId::is:
    case OpId::is_not:
      return true;
    default:
      return false;
  }
}

namespace {

// A FusionGroup is its block run in place (IR text may hold one: `--passes=fuse,vmap`):
// batching sees the ops, as it does before the graph is fused.
void inline_fusion_groups(Block* b) {
  for (Node* n : *b) {
    for (Block* inner : n->blocks()) inline_fusion_groups(inner);
    if (n->op() != OpId::FusionGroup) continue;
    Block* body = n->block(0);
    for (size_t i = 0; i < body->params().size(); ++i)
      body->params()[i]->replace_all_uses_with(n->input(i));
    while (!body->empty()) (*body->begin())->move_before(n);
    for (size_t i = 0; i < n->outputs().size(); ++i)
      n->output(i)->replace_all_uses_with(body->returns()[i]);
    n->destroy();
  }
}

class Vmap : public BatchEmitter {
 public:
  Vmap(const Graph& f, const VmapSpec& spec) : spec_(spec), src_(f.clone()) {
    inline_fusion_groups(src_->block());
    prepare_for_differentiation(*src_, {});
    remove_dead_nodes(*src_);  // a vjp's closure whose call was inlined, say
    std::vector<bool> batched_inputs;
    for (size_t i = 0; i < src_->inputs().size(); ++i)
      batched_inputs.push_back(i < spec.in_dims.size() && spec.in_dims[i].has_value());
    analysis_ = std::make_unique<BatchedValues>(*src_, batched_inputs);
    may_be_undefined_ = std::make_unique<MayBeUndefined>(*src_);
  }

  std::shared_ptr<Graph> run() {
    dst_ = std::make_shared<Graph>();
    InsertPointGuard at(*dst_, dst_->block());
    FormulaScope scope(*dst_, spec_.range);
    map_inputs();
    emit_block(src_->block());
    map_outputs();
    remove_dead_nodes(*dst_);
    return dst_;
  }

  // ---- BatchEmitter
  Value* batch_size() override { return batch_size_; }

  std::vector<BVal> apply(OpId op, std::vector<BVal> inputs, std::vector<TypePtr> output_types,
                          const SourceRange& range) override {
    bool any = false;
    for (const BVal& v : inputs) any |= v.batched || has_batched_element(v.value);
    if (!any) {
      std::vector<Value*> values;
      for (const BVal& v : inputs) values.push_back(v.value);
      Node* n = dst_->insert(dst_->create(op, values, output_types.size()));
      n->set_range(range);
      std::vector<BVal> out;
      for (size_t i = 0; i < output_types.size(); ++i)
        out.push_back(unbatched(n->output(i)->set_type(output_types[i])));
      return out;
    }
    BatchRule rule = batching_rule(op);
    if (!rule && (op == OpId::DictConstruct || dict_op_of(op))) {
      compile_error(range,
                    "vmap: a dict holding batched tensors is supported only where vmap can "
                    "follow its entries (a dict literal read at constant keys, as autodiff "
                    "does); this one is written at a run-time key, in a loop or after a "
                    "branch that leaves different keys");
    }
    if (!rule) {
      compile_error(range, "vmap: no batching rule for `" + std::string(op_info(op).base_name()) +
                               "` yet; it is used on a batched value here (see docs/language.md "
                               "for the ops vmap supports)");
    }
    FormulaScope scope(*dst_, range);
    BatchRuleContext ctx(*this, op, std::move(inputs), std::move(output_types), range);
    return rule(ctx);
  }

  Value* literal_list(const std::vector<BVal>& elements, const TypePtr& type) override {
    std::vector<Value*> values;
    for (const BVal& e : elements) values.push_back(e.value);
    Node* c = dst_->insert(dst_->create(OpId::ListConstruct, values, 1));
    c->set_range(FormulaScope::range());
    c->output()->set_type(type);
    literal_lists_[c->output()] = elements;
    return c->output();
  }

  // Whether v is a list literal (the indices of x[i, j]) with a batched element: its op
  // then needs its rule although the list itself is not batched.
  bool has_batched_element(const Value* v) const {
    auto it = literal_lists_.find(v);
    if (it == literal_lists_.end()) return false;
    for (const BVal& e : it->second) {
      if (e.batched) return true;
    }
    return false;
  }

  std::optional<std::vector<BVal>> list_elements(const Value* list) override {
    auto it = literal_lists_.find(list);
    if (it == literal_lists_.end()) return std::nullopt;
    return it->second;
  }

 private:
  struct Entry {
    Value* value = nullptr;
    Layout layout;
  };

  const Entry& lookup(const Value* v) const {
    auto it = env_.find(v);
    TSL_INTERNAL_ASSERT(it != env_.end(), "vmap: a value used before its definition");
    return it->second;
  }
  BVal bval(const Value* v) const {
    const Entry& e = lookup(v);
    return {e.value, e.layout.any()};
  }
  void bind(const Value* src, Value* dst, Layout layout) {
    if (!src->debug_name().empty() && dst->debug_name().empty())
      dst->set_debug_name(src->debug_name());
    env_[src] = {dst, std::move(layout)};
  }
  const Layout& wanted(const Value* v) const { return analysis_->layout(v); }

  // ---- Inputs and outputs

  void map_inputs() {
    std::vector<Value*> sizes;
    std::vector<std::pair<size_t, Value*>> mapped;
    for (size_t i = 0; i < src_->inputs().size(); ++i) {
      const Value* in = src_->inputs()[i];
      Value* v = dst_->add_input(in->type(), in->debug_name());
      std::optional<int64_t> d = i < spec_.in_dims.size() ? spec_.in_dims[i] : std::nullopt;
      if (!d) {
        bind(in, v, Layout());
        continue;
      }
      TSL_INTERNAL_ASSERT(in->type()->is_tensor(), "vmap: in_dim for a non-Tensor input");
      Value* dim = constant(IValue(*d), Type::int_());
      sizes.push_back(call(OpId::vmap_size,
                           {v, dim, constant(IValue(spec_.where + "(<inputs>)"), Type::str_())}));
      Value* moved = v;
      if (*d != 0) {
        Sym perm = call(OpId::movedim_permutation, {call(OpId::dim, {v}), dim, 0});
        moved = call(OpId::permute, {v, perm});
      }
      mapped.emplace_back(i, moved);
    }
    TSL_INTERNAL_ASSERT(!sizes.empty(), "vmap: no input is mapped");
    Node* list = dst_->insert(dst_->create(OpId::ListConstruct, sizes, 1));
    list->output()->set_type(Type::list(Type::int_()));
    batch_size_ = call(OpId::vmap_batch_size, {list->output()});
    for (auto [i, v] : mapped) bind(src_->inputs()[i], v, Layout::batched_like(v->type()));
  }

  void map_outputs() {
    std::vector<Value*> results;
    size_t k = 0;
    auto next_out_dim = [&]() -> std::optional<int64_t> {
      TSL_INTERNAL_ASSERT(k < spec_.out_dims.size(), "vmap: too few out_dims");
      return spec_.out_dims[k++];
    };
    for (const Value* out : src_->outputs()) {
      const Entry& e = lookup(out);
      if (out->type()->kind() != TypeKind::Tuple) {
        results.push_back(output(e.value, e.layout, next_out_dim(), out->type()));
        continue;
      }
      const auto& types = out->type()->contained();
      Node* unpack = dst_->insert(dst_->create(OpId::TupleUnpack, {e.value}, types.size()));
      std::vector<Value*> elems;
      for (size_t j = 0; j < types.size(); ++j) {
        Layout l = j < e.layout.elements.size() ? e.layout.elements[j] : Layout();
        elems.push_back(output(unpack->output(j)->set_type(types[j]), l, next_out_dim(), types[j]));
      }
      results.push_back(tuple(elems));
    }
    for (Value* r : results) dst_->add_output(r);
  }

  Value* output(Value* v, const Layout& layout, std::optional<int64_t> out_dim,
                const TypePtr& type) {
    const std::string& f = spec_.function_name;
    if (!out_dim) {
      if (layout.any()) {
        compile_error(spec_.range, spec_.where + ": `" + f +
                                       "` can not return a BatchedTensor when out_dim is None");
      }
      return v;
    }
    if (!type->is_tensor()) {
      compile_error(spec_.range, spec_.where + ": `" + f + "` must only return Tensors, got type " +
                                     type->str() +
                                     " as a return. Did you mean to set out_dims= to None for "
                                     "output?");
    }
    Value* b = layout.batched ? v : expanded(v);
    if (*out_dim == 0) return b;
    Sym perm = call(OpId::movedim_permutation,
                    {call(OpId::dim, {b}), 0, constant(IValue(*out_dim), Type::int_())});
    return call(OpId::permute, {b, perm});
  }

  Value* tuple(const std::vector<Value*>& elems) {
    std::vector<TypePtr> types;
    for (Value* e : elems) types.push_back(e->type());
    Node* n = dst_->insert(dst_->create(OpId::TupleConstruct, elems, 1));
    return n->output()->set_type(Type::tuple(std::move(types)));
  }

  // ---- Layout changes

  // v (unbatched) with the batch dim: expanded to B, a view.
  Value* expanded(Value* v) {
    Sym sizes = size(v);
    Node* b = dst_->insert(dst_->create(OpId::ListConstruct, {batch_size_}, 1));
    b->output()->set_type(Type::list(Type::int_()));
    Sym full = call(OpId::add_list, {b->output(), sizes});
    full.value()->set_type(Type::list(Type::int_()));
    return expand(unsqueeze(v, 0), full);
  }

  // An unbatched tensor made batched where it meets batched values (a branch, a
  // carried value, a list element): a copy of its expansion, so that an in-place
  // update of the joined value writes one batch element at a time. An undefined
  // tensor (a zero gradient) stays undefined.
  Value* batched_copy(const Value* src, Value* v) {
    if (v->node()->op() == OpId::Undefined) return v;
    if (!(*may_be_undefined_)(src)) return call(OpId::clone, {expanded(v)});
    Value* defined = call(OpId::AnyDefined, {v});
    Node* branch = dst_->insert(dst_->create(OpId::If, {defined}, 1));
    Block* then_block = branch->add_block();
    Block* else_block = branch->add_block();
    {
      InsertPointGuard in(*dst_, then_block);
      then_block->add_return(call(OpId::clone, {expanded(v)}));
    }
    {
      InsertPointGuard in(*dst_, else_block);
      else_block->add_return(undefined());
    }
    return branch->output()->set_type(v->type());
  }

  // The value of `src` (mapped) with layout `want`, which is at least its own.
  Value* conform(const Value* src, const Entry& e, const Layout& want) {
    if (want == e.layout || !want.any()) return e.value;
    // A placeholder on a path that never reads it (an early exit) stays one.
    // So does an undefined (zero) gradient, or a list gradient of undefined entries: the
    // same for every batch element.
    OpId made_by = e.value->node()->op();
    if (made_by == OpId::Uninitialized || made_by == OpId::Undefined ||
        made_by == OpId::AutogradListZeros)
      return e.value;
    const TypePtr& type = e.value->type();
    if (type->kind() == TypeKind::Tuple) {
      const auto& types = type->contained();
      Node* unpack = dst_->insert(dst_->create(OpId::TupleUnpack, {e.value}, types.size()));
      std::vector<Value*> elems;
      for (size_t j = 0; j < types.size(); ++j) {
        Entry part{unpack->output(j)->set_type(types[j]),
                   j < e.layout.elements.size() ? e.layout.elements[j] : Layout()};
        Layout w = j < want.elements.size() ? want.elements[j] : Layout();
        elems.push_back(conform(nullptr, part, w));
      }
      return tuple(elems);
    }
    if (!want.batched || e.layout.batched) return e.value;
    if (type->is_tensor() || (type->kind() == TypeKind::Optional && type->element()->is_tensor() &&
                              e.value->node()->op() == OpId::to_optional)) {
      Value* t = type->is_tensor() ? e.value : e.value->node()->input(0);
      Value* copy = batched_copy(src, t);
      if (type->is_tensor()) return copy;
      return call(OpId::to_optional, {copy}).value()->set_type(type);
    }
    if (type->kind() == TypeKind::Optional && e.value->node()->op() == OpId::Constant)
      return e.value;  // None
    if (type->kind() == TypeKind::List && type->element()->is_tensor())
      return batched_list(e.value, batch_size_, true);
    compile_error(src ? src->node()->range() : SourceRange(),
                  "vmap: this " + type->str() +
                      " is batched on one path and not on another, and TSL cannot batch it "
                      "where it is made (return or build it from batched values on every path)");
  }

  // ---- The rewrite

  void emit_block(const Block* b) {
    for (const Node* n : *b) emit_node(n);
  }

  void emit_node(const Node* n) {
    if (n->info().has(opflags::RANDOM)) compile_error(n->range(), randomness_error());
    switch (n->op()) {
      case OpId::If:
        return emit_if(n);
      case OpId::Loop:
        return emit_loop(n);
      case OpId::ListConstruct:
        return emit_list(n);
      case OpId::TupleConstruct: {
        Layout l;
        for (const Value* v : n->inputs()) l.elements.push_back(lookup(v).layout);
        Node* c = clone(n);
        return bind(n->output(), c->output(), std::move(l));
      }
      case OpId::TupleUnpack:
      case OpId::TupleIndex:
      case OpId::getitem_list:
      case OpId::slice_list:
      case OpId::to_optional:
      case OpId::unwrap_optional:
      case OpId::AssumeDefined:
        return emit_forwarding(n);
      case OpId::append_list:
      case OpId::setitem_list:
        return emit_list_update(n);
      case OpId::MakeClosure:
      case OpId::CallClosure:
      case OpId::CallFunction:
        return emit_call(n);
      default:
        break;
    }
    bool any = false;
    for (const Value* v : n->inputs())
      any |= lookup(v).layout.any() || has_batched_element(lookup(v).value);
    if (!any || is_structural_for_vmap(n->op())) {
      Node* c = clone(n);
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        Entry e{c->output(i), Layout()};
        bind(n->output(i), conform(n->output(i), e, wanted(n->output(i))), wanted(n->output(i)));
      }
      return;
    }
    std::vector<BVal> inputs;
    for (const Value* v : n->inputs()) inputs.push_back(bval(v));
    std::vector<TypePtr> types;
    for (const Value* o : n->outputs()) types.push_back(o->type());
    std::vector<BVal> outs = apply(n->op(), std::move(inputs), std::move(types), n->range());
    TSL_INTERNAL_ASSERT(outs.size() == n->outputs().size(), "batching rule of ",
                        op_info(n->op()).name, " returned ", outs.size(), " outputs");
    for (size_t i = 0; i < outs.size(); ++i) {
      Layout have;
      have.batched = outs[i].batched;
      Entry e{outs[i].value, have};
      const Layout& want = wanted(n->output(i));
      TSL_INTERNAL_ASSERT(!have.batched || want.any(), "batching rule of ", op_info(n->op()).name,
                          " batched a value the analysis did not");
      bind(n->output(i), conform(n->output(i), e, want), want);
    }
  }

  // A copy of n (no blocks) on the mapped inputs, at the insertion point.
  Node* clone(const Node* n) {
    TSL_INTERNAL_ASSERT(n->blocks().empty(), "vmap: cloning a node with blocks");
    std::vector<Value*> inputs;
    for (const Value* v : n->inputs()) inputs.push_back(lookup(v).value);
    Node* c = dst_->insert(dst_->create(n->op(), inputs, n->outputs().size()));
    c->set_range(n->range());
    for (const Attribute& a : n->attributes()) c->set_attr(a.name, a.value);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      c->output(i)->set_type(n->output(i)->type());
      if (!n->output(i)->debug_name().empty())
        c->output(i)->set_debug_name(n->output(i)->debug_name());
    }
    return c;
  }

  // Ops that pass a value (or part of it) through: the layout follows.
  void emit_forwarding(const Node* n) {
    Node* c = clone(n);
    const Layout& in = lookup(n->input(0)).layout;
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Layout l;
      if (n->op() == OpId::TupleUnpack) {
        l = i < in.elements.size() ? in.elements[i] : Layout();
      } else if (n->op() == OpId::TupleIndex) {
        size_t k = static_cast<size_t>(n->attr("index").to_int());
        l = k < in.elements.size() ? in.elements[k] : Layout();
      } else {
        l = in;
      }
      bind(n->output(i), c->output(i), l);
    }
  }

  void emit_list(const Node* n) {
    const Layout& want = wanted(n->output());
    std::vector<BVal> elements;
    std::vector<Value*> values;
    for (const Value* v : n->inputs()) {
      elements.push_back(bval(v));
      values.push_back(want.batched ? conform(v, lookup(v), Layout::batched_like(v->type()))
                                    : lookup(v).value);
    }
    Node* c = dst_->insert(dst_->create(OpId::ListConstruct, values, 1));
    c->set_range(n->range());
    c->output()->set_type(n->output()->type());
    literal_lists_[c->output()] = std::move(elements);
    bind(n->output(), c->output(), want);
  }

  void emit_list_update(const Node* n) {
    size_t elem = n->op() == OpId::append_list ? 1 : 2;
    const Layout& list = lookup(n->input(0)).layout;
    const Value* v = n->input(elem);
    std::vector<Value*> inputs;
    for (const Value* in : n->inputs()) inputs.push_back(lookup(in).value);
    if (list.batched) inputs[elem] = conform(v, lookup(v), Layout::batched_like(v->type()));
    if (!list.batched && lookup(v).layout.any()) {
      compile_error(n->range(),
                    "vmap: a batched value put into a list of indices (Tensor?[]) "
                    "is not supported; write the indices out (x[i, j])");
    }
    Node* c = dst_->insert(dst_->create(n->op(), inputs, n->outputs().size()));
    c->set_range(n->range());
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      bind(n->output(i), c->output(i)->set_type(n->output(i)->type()), Layout());
    }
  }

  void emit_call(const Node* n) {
    for (const Value* v : n->inputs()) {
      if (lookup(v).layout.any()) {
        compile_error(n->range(),
                      n->op() == OpId::MakeClosure
                          ? "vmap: a function value (the vjp_fn of vjp) that holds batched "
                            "values cannot leave the function vmap batches"
                          : "vmap: cannot batch this call of a function value (its function is "
                            "not known where vmap is built)");
      }
    }
    Node* c = clone(n);
    for (size_t i = 0; i < n->outputs().size(); ++i) bind(n->output(i), c->output(i), Layout());
  }

  void emit_if(const Node* n) {
    TSL_INTERNAL_ASSERT(!lookup(n->input(0)).layout.any(), "vmap: an If on a batched value");
    Node* c =
        dst_->insert(dst_->create(OpId::If, {lookup(n->input(0)).value}, n->outputs().size()));
    c->set_range(n->range());
    for (const Block* b : n->blocks()) {
      Block* nb = c->add_block();
      InsertPointGuard in(*dst_, nb);
      emit_block(b);
      for (size_t k = 0; k < n->outputs().size(); ++k) {
        const Value* r = b->returns()[k];
        nb->add_return(conform(r, lookup(r), wanted(n->output(k))));
      }
    }
    for (size_t k = 0; k < n->outputs().size(); ++k) {
      c->output(k)->set_type(n->output(k)->type());
      bind(n->output(k), c->output(k), wanted(n->output(k)));
    }
  }

  void emit_loop(const Node* n) {
    const Block* body = n->block(0);
    std::vector<Value*> inputs = {lookup(n->input(0)).value, lookup(n->input(1)).value};
    for (size_t k = 0; k + 2 < n->inputs().size(); ++k) {
      const Value* init = n->input(k + 2);
      inputs.push_back(conform(init, lookup(init), wanted(body->params()[k + 1])));
    }
    Node* c = dst_->insert(dst_->create(OpId::Loop, inputs, n->outputs().size()));
    c->set_range(n->range());
    Block* nb = c->add_block();
    for (size_t p = 0; p < body->params().size(); ++p) {
      const Value* param = body->params()[p];
      Value* np = nb->add_param(param->type(), param->debug_name());
      bind(param, np, wanted(param));
    }
    {
      InsertPointGuard in(*dst_, nb);
      emit_block(body);
      const Value* cond = body->returns()[0];
      TSL_INTERNAL_ASSERT(!lookup(cond).layout.any(), "vmap: a loop condition that is batched");
      nb->add_return(lookup(cond).value);
      for (size_t k = 1; k < body->returns().size(); ++k) {
        const Value* r = body->returns()[k];
        nb->add_return(conform(r, lookup(r), wanted(body->params()[k])));
      }
    }
    for (size_t k = 0; k < n->outputs().size(); ++k) {
      c->output(k)->set_type(n->output(k)->type());
      bind(n->output(k), c->output(k), wanted(n->output(k)));
    }
  }

  VmapSpec spec_;
  std::unique_ptr<Graph> src_;
  std::shared_ptr<Graph> dst_;
  std::unique_ptr<BatchedValues> analysis_;
  std::unique_ptr<MayBeUndefined> may_be_undefined_;
  std::unordered_map<const Value*, Entry> env_;
  std::unordered_map<const Value*, std::vector<BVal>> literal_lists_;
  Value* batch_size_ = nullptr;
};

}  // namespace

std::shared_ptr<Graph> vmap_graph(const Graph& f, const VmapSpec& spec) {
  bool any = false;
  for (const auto& d : spec.in_dims) any |= d.has_value();
  if (!any) {
    compile_error(spec.range, spec.where +
                                  "(<inputs>): vmap: Expected at least one Tensor to "
                                  "vmap over");
  }
  return Vmap(f, spec).run();
}

}  // namespace tsl::batching
