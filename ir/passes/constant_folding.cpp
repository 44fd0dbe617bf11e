// Constant propagation and folding; see constant_folding.h for what it does and does
// not fold.
#include "ir/passes/constant_folding.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/passes/pass_utils.h"
#include "runtime/kernels/kernel.h"

namespace tsl {
namespace {

constexpr int64_t kMaxUnrolledTrips = 8;
constexpr size_t kMaxUnrolledBodyNodes = 32;
constexpr int64_t kMaxFoldedListLength = 64;

// Whether the IR text can hold a value of type `t` (see is_printable_constant).
bool type_is_foldable(const TypePtr& t) {
  switch (t->kind()) {
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool:
    case TypeKind::Str:
    case TypeKind::None:
    case TypeKind::DType:
    case TypeKind::Device:
      return true;
    case TypeKind::List:
    case TypeKind::Tuple:
    case TypeKind::Optional:
      for (const TypePtr& c : t->contained()) {
        if (!type_is_foldable(c)) return false;
      }
      return true;
    default:
      return false;
  }
}

// Maps every value that `b` uses but does not define (in nested blocks too) to
// itself, as clone_block_into needs.
void map_outer_values(const Block* b, std::unordered_map<const Value*, Value*>& map) {
  std::unordered_set<const Value*> defined;
  std::vector<const Block*> blocks = {b};
  for (size_t i = 0; i < blocks.size(); ++i) {
    for (const Value* p : blocks[i]->params()) defined.insert(p);
    for (const Node* n : *blocks[i]) {
      for (const Value* o : n->outputs()) defined.insert(o);
      for (const Block* nb : n->blocks()) blocks.push_back(nb);
    }
  }
  auto use = [&](Value* v) {
    if (!defined.count(v)) map.emplace(v, v);
  };
  for (const Block* blk : blocks) {
    for (const Node* n : *blk) {
      for (Value* v : n->inputs()) use(v);
    }
    for (Value* v : blk->returns()) use(v);
  }
}

bool type_has_list(const TypePtr& t) {
  if (t->kind() == TypeKind::List) return true;
  for (const TypePtr& c : t->contained()) {
    if (type_has_list(c)) return true;
  }
  return false;
}

// A list-valued constant is one object shared by all runs: fold only when every use
// just reads it (an ordinary op that is not an effect).
bool only_read(const Value* v) {
  for (const Use& u : v->uses()) {
    const OpInfo& info = u.user->info();
    if (info.has(opflags::PRIM) || info.has(opflags::EFFECT)) return false;
  }
  return true;
}

// Guards against folds that would build a huge value at compile time.
bool result_is_small(const Node* n, const std::vector<IValue>& inputs) {
  if (n->op() != OpId::range_list) return true;
  if (!inputs[0].is_int() || !inputs[1].is_int() || !inputs[2].is_int()) return false;
  int64_t start = inputs[0].to_int(), end = inputs[1].to_int(), step = inputs[2].to_int();
  if (step == 0) return true;  // raises; the kernel says so
  // Compare in double: the int64 difference could overflow.
  double length =
      (static_cast<double>(end) - static_cast<double>(start)) / static_cast<double>(step);
  return length <= kMaxFoldedListLength;
}

// The outputs of a structural op on constant inputs, or nullopt when it does not fold.
std::optional<std::vector<IValue>> eval_structural(const Node* n, std::vector<IValue>& in) {
  switch (n->op()) {
    case OpId::ListConstruct:
      return std::vector<IValue>{IValue::list(std::move(in))};
    case OpId::TupleConstruct:
      return std::vector<IValue>{IValue::tuple(std::move(in))};
    case OpId::TupleIndex: {
      if (!in[0].is_tuple() || !n->has_attr("index") || !n->attr("index").is_int()) break;
      const auto& elems = in[0].to_tuple();
      int64_t i = n->attr("index").to_int();
      if (i < 0 || i >= static_cast<int64_t>(elems.size())) break;
      return std::vector<IValue>{elems[i]};
    }
    case OpId::TupleUnpack:
      if (!in[0].is_tuple() || in[0].to_tuple().size() != n->outputs().size()) break;
      return in[0].to_tuple();
    case OpId::unwrap_optional:
      if (in[0].is_none()) break;  // raises at run time
      return std::vector<IValue>{in[0]};
    case OpId::to_optional:
      return std::vector<IValue>{in[0]};
    default:
      break;
  }
  return std::nullopt;
}

// The outputs of `n` on constant inputs by its CPU kernel, or nullopt when the kernel
// is missing or raises (the node then raises at run time, where it belongs).
std::optional<std::vector<IValue>> eval_kernel(const Node* n, std::vector<IValue>& in) {
  ensure_kernels_registered();
  const KernelEntry& kernel = lookup_kernel(DeviceType::CPU, n->op());
  if (!kernel.fn || (kernel.arity >= 0 && static_cast<size_t>(kernel.arity) != in.size()))
    return std::nullopt;
  if (!result_is_small(n, in)) return std::nullopt;
  try {
    return call_op(n->op(), std::move(in), static_cast<uint32_t>(n->outputs().size()));
  } catch (const std::exception&) {
    // Any failure, even an internal one, must not fail compilation.
    return std::nullopt;
  }
}

class ConstantFolder {
 public:
  explicit ConstantFolder(Graph& g) : g_(g), mutation_(g) {}

  bool run() {
    run_block(g_.block());
    return changed_;
  }

 private:
  void run_block(Block* b) {
    for (Node* n = b->param_node()->next(); n != b->return_node();) n = visit(n);
  }

  // Folds `n` (and its blocks); returns the next node to visit.
  Node* visit(Node* n) {
    if (n->op() == OpId::If) return visit_if(n);
    if (n->op() == OpId::Loop) return visit_loop(n);
    Node* next = n->next();
    for (Block* b : n->blocks()) run_block(b);
    if (fold(n)) changed_ = true;
    return next;
  }

  Node* visit_if(Node* n) {
    const IValue* cond = constant_value(n->input(0));
    if (!cond || !cond->is_bool()) {
      for (Block* b : n->blocks()) run_block(b);
      return n->next();
    }
    Block* taken = n->block(cond->to_bool() ? 0 : 1);
    if (!forwardable(n->outputs(), taken->returns())) {
      for (Block* b : n->blocks()) run_block(b);
      return n->next();
    }
    Node* before = n->prev();
    while (!taken->empty()) (*taken->begin())->move_before(n);
    forward_outputs(n, taken->returns());
    n->destroy();
    changed_ = true;
    return before->next();  // the moved nodes, which may fold further
  }

  Node* visit_loop(Node* n) {
    const IValue* trips = constant_value(n->input(0));
    const IValue* start = constant_value(n->input(1));
    bool never = (trips && trips->is_int() && trips->to_int() <= 0) ||
                 (start && start->is_bool() && !start->to_bool());
    std::vector<Value*> initial(n->inputs().begin() + 2, n->inputs().end());
    if (never && forwardable(n->outputs(), initial)) {
      Node* next = n->next();
      forward_outputs(n, initial);
      n->destroy();
      changed_ = true;
      return next;
    }
    if (trips && trips->is_int() && start && start->is_bool() && can_unroll(n, trips->to_int())) {
      Node* before = n->prev();
      unroll(n, trips->to_int());
      changed_ = true;
      return before->next();
    }
    run_block(n->block(0));
    return n->next();
  }

  static bool same_types(const std::vector<Value*>& a, const std::vector<Value*>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i]->type()->equals(*b[i]->type())) return false;
    }
    return true;
  }

  // Whether each value may stand for the output at its index: same type, or a T or
  // None for an Optional[T] (forward_outputs then inserts a to_optional).
  static bool forwardable(const std::vector<Value*>& outs, const std::vector<Value*>& values) {
    if (outs.size() != values.size()) return false;
    for (size_t i = 0; i < outs.size(); ++i) {
      const TypePtr& want = outs[i]->type();
      const TypePtr& have = values[i]->type();
      if (want->equals(*have)) continue;
      bool widens = want->kind() == TypeKind::Optional &&
                    (have->kind() == TypeKind::None || want->element()->equals(*have));
      if (!widens) return false;
    }
    return true;
  }

  // Replaces the outputs of `n` by `values`, giving temporaries the outputs' names.
  // A value narrower than its output (T for Optional[T]) goes through to_optional.
  // Each value joins its output's class in the mutation analysis.
  void forward_outputs(Node* n, const std::vector<Value*>& values) {
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* out = n->output(i);
      Value* v = values[i];
      if (!out->type()->equals(*v->type())) {
        Node* widen = g_.create(OpId::to_optional, {v}, 1);
        widen->set_range(n->range());
        widen->insert_before(n);
        v = widen->output()->set_type(out->type());
        mutation_.add(widen);
      }
      mutation_.replaced(out, v);
      if (v->debug_name().empty() && v->node()->op() != OpId::Constant)
        v->set_debug_name(out->debug_name());
      out->replace_all_uses_with(v);
    }
  }

  // The body runs `trips` times for sure: the start condition is True and, beyond one
  // trip, the continue condition is the constant True.
  static bool can_unroll(const Node* loop, int64_t trips) {
    if (trips > kMaxUnrolledTrips || !constant_value(loop->input(1))->to_bool()) return false;
    const Block* body = loop->block(0);
    std::vector<Value*> initial(loop->inputs().begin() + 2, loop->inputs().end());
    std::vector<Value*> next(body->returns().begin() + 1, body->returns().end());
    if (!same_types(loop->outputs(), initial) || !same_types(loop->outputs(), next)) return false;
    size_t size = 0;
    for (const Node* m : *body) {
      (void)m;
      if (++size > kMaxUnrolledBodyNodes) return false;
    }
    if (trips == 1) return true;
    const IValue* go = constant_value(body->returns()[0]);
    return go && go->is_bool() && go->to_bool();
  }

  // Copies the body `trips` times before the loop, threading the carried values.
  void unroll(Node* loop, int64_t trips) {
    Block* body = loop->block(0);
    std::vector<Value*> carried(loop->inputs().begin() + 2, loop->inputs().end());
    // Clone into a scratch block placed before the loop, then move the nodes out.
    Node* holder = g_.create(OpId::If, {}, 0);
    holder->insert_before(loop);
    Block* scratch = holder->add_block();
    for (int64_t k = 0; k < trips; ++k) {
      std::unordered_map<const Value*, Value*> map;
      map_outer_values(body, map);
      {
        InsertPointGuard guard(g_, scratch);
        Value* index = g_.insert_constant(IValue(k), Type::int_(), loop->range());
        map[body->params()[0]] = index;
      }
      for (size_t i = 0; i < carried.size(); ++i) map[body->params()[i + 1]] = carried[i];
      std::vector<Value*> returns = g_.clone_block_into(body, scratch, map);
      carried.assign(returns.begin() + 1, returns.end());
    }
    // The copies are values the analysis has not seen: add them, rather than analyse
    // the whole graph again at each unrolled loop (cubic in the depth of nested loops).
    for (const Node* copy : *scratch) mutation_.add(copy);
    while (!scratch->empty()) (*scratch->begin())->move_before(holder);
    holder->destroy();
    forward_outputs(loop, carried);
    loop->destroy();
  }

  bool fold(Node* n) {
    if (n->op() == OpId::Constant || n->op() == OpId::cuda_is_available || !is_pure_op(n))
      return false;
    if (n->outputs().empty()) return false;
    std::vector<IValue> inputs;
    for (const Value* v : n->inputs()) {
      const IValue* c = constant_value(v);
      if (!c || mutation_.may_be_written(v)) return false;
      inputs.push_back(*c);
    }
    bool structural = n->info().has(opflags::PRIM);
    for (const Value* out : n->outputs()) {
      // Kernels could build a huge tensor only to have it thrown away: ask the type
      // first. Structural ops cost nothing; their results are checked below (a None
      // of type Optional[Tensor] does fold).
      if (!structural && !type_is_foldable(out->type())) return false;
      if (type_has_list(out->type()) && (!only_read(out) || mutation_.may_be_written(out)))
        return false;
    }
    std::optional<std::vector<IValue>> results =
        structural ? eval_structural(n, inputs) : eval_kernel(n, inputs);
    if (!results || results->size() != n->outputs().size()) return false;
    for (size_t i = 0; i < results->size(); ++i) {
      const IValue& r = (*results)[i];
      const TypePtr& declared = n->output(i)->type();
      if (!is_printable_constant(r) || !is_subtype(type_of_value(r, declared), declared))
        return false;
    }
    for (size_t i = 0; i < results->size(); ++i)
      replace_with_constant(g_, n, n->output(i), std::move((*results)[i]));
    n->destroy();
    return true;
  }

  Graph& g_;
  MutationInfo mutation_;
  bool changed_ = false;
};

}  // namespace

bool fold_constants(Graph& g) { return ConstantFolder(g).run(); }

}  // namespace tsl
