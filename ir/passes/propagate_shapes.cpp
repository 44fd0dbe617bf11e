// Shape and dtype classes and the no-op conversions they remove; see Note [Shape
// classes] in propagate_shapes.h.
#include "ir/passes/propagate_shapes.h"

#include <algorithm>
#include <vector>

#include "ir/dtype_rules.h"
#include "ir/passes/pass_utils.h"
#include "ir/schema.h"

namespace tsl {
namespace {

// Disjoint sets of small ints; unite() says whether two sets became one.
class UnionFind {
 public:
  int make() {
    parent_.push_back(static_cast<int>(parent_.size()));
    return parent_.back();
  }
  int find(int x) const {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  bool unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return false;
    parent_[b] = a;
    return true;
  }

 private:
  mutable std::vector<int> parent_;
};

bool is_tensor(const Value* v) { return v->type()->is_tensor(); }

// The input of `n` for the schema parameter `name`, or null.
const Value* input_named(const Node* n, std::string_view name) {
  const FunctionSchema& s = schema_of(n->op());
  for (size_t i = 0; i < s.arguments.size() && i < n->inputs().size(); ++i) {
    if (s.arguments[i].name == name) return n->input(i);
  }
  return nullptr;
}

// x when `v` is `size(x)`, else null.
const Value* size_of(const Value* v) {
  return v->node()->op() == OpId::size ? v->node()->input(0) : nullptr;
}

// x when `v` is `dtype(x)`, else null.
const Value* dtype_source(const Value* v) {
  return v->node()->op() == OpId::dtype ? v->node()->input(0) : nullptr;
}

std::optional<DType> constant_dtype(const Value* v) {
  const IValue* c = v ? constant_value(v) : nullptr;
  if (!c || !c->is_dtype()) return std::nullopt;
  return c->to_dtype();
}

bool is_constant_none(const Value* v) {
  const IValue* c = v ? constant_value(v) : nullptr;
  return c && c->is_none();
}

bool is_constant_false(const Value* v) {
  const IValue* c = v ? constant_value(v) : nullptr;
  return c && c->is_bool() && !c->to_bool();
}

bool is_undefined(const Value* v) { return v->node()->op() == OpId::Undefined; }

// The input of `n` for its int[] size argument (named size or shape), or null.
const Value* size_argument(const Node* n) {
  const Value* v = input_named(n, "size");
  return v ? v : input_named(n, "shape");
}

// Whether a reduction or loss `n` of ShapeRule Reduce or Loss returns a 0-dim tensor.
bool reduces_to_zero_dim(const Node* n, ShapeRule rule) {
  if (rule == ShapeRule::Scalar) return true;
  if (rule == ShapeRule::Reduce) {
    return is_constant_none(input_named(n, "dim")) && is_constant_false(input_named(n, "keepdim"));
  }
  if (rule == ShapeRule::Loss) {
    const IValue* r = constant_value(input_named(n, "reduction"));
    return r && r->is_str() && (r->to_str() == "mean" || r->to_str() == "sum");
  }
  return false;
}

}  // namespace

struct ShapeFacts::Impl {
  static constexpr int kZeroDim = 0;  // the shape class of 0-dim tensors
  static constexpr int kNone = -1;

  UnionFind shapes, dtypes;
  // By Value::unique() (dense in a graph): vectors, not hash maps, as this analysis
  // runs twice per pipeline round on every value (issue 6's compile latency).
  std::vector<int> shape_id, dtype_id;
  std::vector<std::optional<DType>> known;  // by dtype root
  bool changed = false;

  // The dtype classes as the op table's dtype rules ask them (ir/dtype_rules.h).
  class Classes : public DtypeKnowledge {
   public:
    explicit Classes(Impl& impl) : impl_(impl) {}
    std::optional<DType> dtype(const Value* v) const override { return impl_.known_dtype(v); }
    bool same_dtype(const Value* a, const Value* b) const override {
      return impl_.same_dtype(a, b);
    }

   private:
    Impl& impl_;
  };
  Classes knowledge_{*this};

  Impl() { shapes.make(); }

  static int& slot(std::vector<int>& ids, const Value* v) {
    if (v->unique() >= ids.size()) ids.resize(std::max(v->unique() + 1, 2 * ids.size()), kNone);
    return ids[v->unique()];
  }
  int sid(const Value* v) {
    int& id = slot(shape_id, v);
    if (id == kNone) id = shapes.make();
    return id;
  }
  int did(const Value* v) {
    int& id = slot(dtype_id, v);
    if (id == kNone) {
      id = dtypes.make();
      known.push_back(v->type()->tensor_dtype());
    }
    return id;
  }

  bool same_shape(const Value* a, const Value* b) {
    return a == b || shapes.find(sid(a)) == shapes.find(sid(b));
  }
  bool same_dtype(const Value* a, const Value* b) {
    if (a == b || dtypes.find(did(a)) == dtypes.find(did(b))) return true;
    auto da = known_dtype(a), db = known_dtype(b);
    return da && db && *da == *db;
  }
  std::optional<DType> known_dtype(const Value* v) { return known[dtypes.find(did(v))]; }

  void same_shape_as(const Value* out, const Value* v) {
    changed |= shapes.unite(sid(v), sid(out));
  }
  void zero_dim(const Value* out) { changed |= shapes.unite(kZeroDim, sid(out)); }
  void same_dtype_as(const Value* out, const Value* v) {
    int a = dtypes.find(did(v)), b = dtypes.find(did(out));
    if (a == b) return;
    if (known[b] && !known[a]) known[a] = known[b];
    dtypes.unite(a, b);
    changed = true;
  }
  void has_dtype(const Value* out, DType d) {
    int r = dtypes.find(did(out));
    if (known[r]) return;
    known[r] = d;
    changed = true;
  }

  void visit_block(const Block* b) {
    for (const Node* n : *b) {
      for (const Block* inner : n->blocks()) visit_block(inner);
      visit(n);
    }
  }

  void visit(const Node* n) {
    if (n->outputs().size() == 1 && is_tensor(n->output())) visit_tensor_op(n);
    switch (n->op()) {
      case OpId::GradOf:
        visit_grad_of(n);
        break;
      case OpId::If:
        visit_if(n);
        break;
      default:
        break;
    }
  }

  void visit_tensor_op(const Node* n) {
    const Value* out = n->output();
    switch (n->op()) {
      case OpId::Constant: {
        const IValue* c = constant_value(out);
        if (c && c->is_tensor() && c->tensor_impl() && c->to_tensor().dim() == 0) zero_dim(out);
        return;
      }
      case OpId::AutogradZeros:
        visit_gradient_pair(out, n->input(0), n->input(1), /*zeros_like_second=*/true);
        return;
      case OpId::AutogradAdd:
        visit_gradient_pair(out, n->input(0), n->input(1), /*zeros_like_second=*/false);
        return;
      default:
        break;
    }
    if (n->info().has(opflags::PRIM)) return;
    visit_shape_rule(n);
    visit_dtype_rule(n);
  }

  // The op table's shape rule of `n` (Note [Result rules] in runtime/ops.def).
  void visit_shape_rule(const Node* n) {
    const Value* out = n->output();
    ShapeRule rule = n->info().shape_rule();
    auto tensor_input = [&](size_t i) -> const Value* {
      return i < n->inputs().size() && is_tensor(n->input(i)) ? n->input(i) : nullptr;
    };
    switch (rule) {
      case ShapeRule::Broadcast:
        visit_broadcast(n);
        break;
      case ShapeRule::Same:
        if (const Value* x = tensor_input(0)) same_shape_as(out, x);
        break;
      case ShapeRule::AsSecond:
        if (const Value* x = tensor_input(1)) same_shape_as(out, x);
        break;
      case ShapeRule::SizeArg:
        if (const Value* size = size_argument(n)) {
          if (const Value* x = size_of(size)) same_shape_as(out, x);
        }
        break;
      default:
        if (reduces_to_zero_dim(n, rule)) zero_dim(out);
        break;
    }
  }

  // The op table's dtype rule of `n`, with what the dtype classes know.
  void visit_dtype_rule(const Node* n) {
    DtypeFact fact = result_dtype(schema_of(n->op()), n->inputs(), knowledge_);
    if (fact.dtype) has_dtype(n->output(), *fact.dtype);
    for (const Value* v : fact.same_as) {
      if (is_tensor(v)) same_dtype_as(n->output(), v);
    }
  }

  // AutogradZeros(g, like) is g, or zeros like `like` when g is undefined.
  // AutogradAdd(a, b) is a, b or a + b.
  void visit_gradient_pair(const Value* out, const Value* a, const Value* b, bool zeros_like_b) {
    if (!is_tensor(a) || !is_tensor(b)) return;
    const Value* only = nullptr;
    if (is_undefined(a)) only = b;
    if (is_undefined(b) && !zeros_like_b) only = a;
    if (only) {
      same_shape_as(out, only);
      same_dtype_as(out, only);
      return;
    }
    if (same_shape(a, b)) same_shape_as(out, a);
    if (same_dtype(a, b)) same_dtype_as(out, a);
  }

  // Elementwise ops broadcast their tensor operands; 0-dim ones never widen.
  void visit_broadcast(const Node* n) {
    // The one shape class of the operands that are not 0-dim, kNone when there is
    // none, kMany when they span several.
    constexpr int kMany = -2;
    int the_class = kNone;
    std::vector<const Value*> tensors;
    for (const Value* in : n->inputs()) {
      if (is_tensor(in)) {
        tensors.push_back(in);
        int c = shapes.find(sid(in));
        if (c == shapes.find(kZeroDim)) continue;
        the_class = the_class == kNone || the_class == c ? c : kMany;
      } else if (type_may_alias(in->type())) {
        return;  // a list or an unknown value: nothing is known
      }
    }
    if (the_class == kNone) {
      zero_dim(n->output());
    } else if (the_class != kMany) {
      for (const Value* t : tensors) {
        if (shapes.find(sid(t)) == the_class) same_shape_as(n->output(), t);
      }
    }
  }

  void visit_grad_of(const Node* n) {
    const Block* b = n->block(0);
    for (size_t i = 0; i < n->outputs().size() && i < b->returns().size(); ++i) {
      const Value* out = n->output(i);
      const Value* r = b->returns()[i];
      if (!is_tensor(out) || !is_tensor(r)) continue;
      same_shape_as(out, r);
      same_dtype_as(out, r);
    }
  }

  void visit_if(const Node* n) {
    const Block* a = n->block(0);
    const Block* b = n->block(1);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const Value* out = n->output(i);
      const Value* ra = a->returns().at(i);
      const Value* rb = b->returns().at(i);
      if (!is_tensor(out) || !is_tensor(ra) || !is_tensor(rb)) continue;
      // A branch returning Undefined contributes no defined value.
      if (is_undefined(ra)) std::swap(ra, rb);
      if (is_undefined(rb) || same_shape(ra, rb)) same_shape_as(out, ra);
      if (is_undefined(rb) || same_dtype(ra, rb)) same_dtype_as(out, ra);
    }
  }
};

ShapeFacts::ShapeFacts(const Graph& g) : impl_(std::make_unique<Impl>()) {
  // Facts found late (an If's branches joining) can enable earlier rules: repeat.
  for (int round = 0; round < 8; ++round) {
    impl_->changed = false;
    impl_->visit_block(g.block());
    if (!impl_->changed) break;
  }
}

ShapeFacts::~ShapeFacts() = default;

bool ShapeFacts::same_shape(const Value* a, const Value* b) const {
  return is_tensor(a) && is_tensor(b) && impl_->same_shape(a, b);
}

bool ShapeFacts::is_zero_dim(const Value* v) const {
  return is_tensor(v) && impl_->shapes.find(impl_->sid(v)) == impl_->shapes.find(Impl::kZeroDim);
}

bool ShapeFacts::same_dtype(const Value* a, const Value* b) const {
  return is_tensor(a) && is_tensor(b) && impl_->same_dtype(a, b);
}

std::optional<DType> ShapeFacts::known_dtype(const Value* v) const {
  if (!is_tensor(v)) return std::nullopt;
  return impl_->known_dtype(v);
}

namespace {

class NoOpConversionRemover {
 public:
  explicit NoOpConversionRemover(Graph& g) : g_(g), facts_(g), mutation_(g) {}

  bool run() {
    run_block(g_.block());
    return changed_;
  }

 private:
  void run_block(Block* b) {
    for (Node* n : *b) {
      for (Block* inner : n->blocks()) run_block(inner);
      if (n->op() == OpId::size) {
        ask_an_input(n);
        continue;
      }
      Value* same = no_op_operand(n);
      if (!same || !same->type()->equals(*n->output()->type())) continue;
      if (same->debug_name().empty()) same->set_debug_name(n->output()->debug_name());
      n->output()->replace_all_uses_with(same);
      n->destroy();
      changed_ = true;
    }
  }

  // The operand `n` returns unchanged (the same tensor, or a view equal to it), or null.
  Value* no_op_operand(const Node* n) const {
    switch (n->op()) {
      case OpId::sum_to_size: {
        const Value* x = size_of(n->input(1));
        return x && facts_.same_shape(n->input(0), x) ? n->input(0) : nullptr;
      }
      case OpId::expand: {
        const Value* x = size_of(n->input(1));
        if (!x || !facts_.same_shape(n->input(0), x)) return nullptr;
        return mutation_.may_replace(n->output(), n->input(0)) ? n->input(0) : nullptr;
      }
      case OpId::to_dtype:
        return converts_to_own_dtype(n) ? n->input(0) : nullptr;
      default:
        return nullptr;
    }
  }

  // `size(v)` asks a graph input of v's shape class instead, when there is one: the
  // same list, and v need not be kept for it (a split gradient captures the size, see
  // Note [Capturing sizes and dtypes]; a FusionGroup need not write v out).
  void ask_an_input(Node* n) {
    Value* v = n->input(0);
    if (v->node() == g_.block()->param_node()) return;
    for (Value* in : g_.inputs()) {
      if (in->type()->is_tensor() && facts_.same_shape(v, in)) {
        n->replace_input(0, in);
        changed_ = true;
        return;
      }
    }
  }

  bool converts_to_own_dtype(const Node* n) const {
    const Value* g = n->input(0);
    if (const Value* x = dtype_source(n->input(1))) return facts_.same_dtype(g, x);
    auto want = constant_dtype(n->input(1));
    auto have = facts_.known_dtype(g);
    return want && have && *want == *have;
  }

  Graph& g_;
  ShapeFacts facts_;
  MutationInfo mutation_;
  bool changed_ = false;
};

// The ops NoOpConversionRemover may remove, and the size queries it may move to an
// input.
bool is_conversion(const Node* n) {
  return n->op() == OpId::sum_to_size || n->op() == OpId::expand || n->op() == OpId::to_dtype ||
         (n->op() == OpId::size && !n->input(0)->node()->is_param_node());
}

}  // namespace

// Without a conversion to remove, the analyses need not be built (most forward
// graphs have none; this pass runs in every pipeline round).
bool propagate_shapes(Graph& g) {
  return any_node(g.block(), is_conversion) && NoOpConversionRemover(g).run();
}

}  // namespace tsl
