// Recording eager ops and calls on the tape; see Note [Recording an eager op].
#include "runtime/autograd/record.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/autodiff/dependence_flags.h"
#include "ir/autodiff/derivatives.h"
#include "ir/autodiff/differentiate.h"
#include "ir/autodiff/forward_containers.h"
#include "ir/autodiff/functionalize.h"
#include "ir/autodiff/prepare.h"
#include "ir/schema.h"
#include "runtime/autograd/node.h"
#include "runtime/exec/function.h"
#include "runtime/kernels/einsum_equation.h"
#include "runtime/tensor/device_backend.h"
#include "runtime/tensor/grad_mode.h"

namespace tsl::autograd {

// Note [The tape as PyTorch shows it]
// A node of TSL's tape may run what PyTorch records as several nodes: a fused
// elementwise chain (one FusionGroup: `torch.where(h > 0, h, 0.0)` is gt and where),
// cross_entropy (log_softmax, then nll_loss), linear of a matrix (addmm with the
// weight transposed). `x.grad_fn` and `grad_fn.next_functions` show PyTorch's nodes,
// so a program that walks the graph prints what it prints under PyTorch: the
// CompiledGradient describes them (ShownOp, made at record time from the group's
// block or the op's arguments), and the node makes a ShownNode for each on first use,
// with PyTorch's name and edges: to the node's next edges, to one another, and None
// for a differentiable input without a gradient (a floating tensor that does not
// require grad, a number where PyTorch wraps one in a tensor; integer and bool
// tensors are not differentiable and not listed, as in PyTorch). They are a view:
// backward() runs the one node, and `:tape` shows the nodes that ran.
struct ShownOp {
  std::string name;        // PyTorch's, as node_name() gives it for the op alone
  std::vector<int> edges;  // >= 0: the node's next edge k; -1: None; <= -2: ShownOp -2 - j
};

struct CompiledGradient {
  // Stage 0: inputs -> real outputs (the saved values stay in registers); stage 1:
  // output gradients -> input gradients.
  std::shared_ptr<const Code> code;
  std::vector<size_t> wrt;     // flattened inputs that get gradients (df's outputs)
  std::vector<size_t> seeded;  // f's outputs that take gradients (df's first inputs)
  size_t num_outputs = 0;      // f's real outputs
  // Calls: the index among f's outputs of the first dependence flag, one per real
  // output of the call (Note [Dependence flags]); SIZE_MAX for ops.
  size_t first_flag = SIZE_MAX;
  // Per saved value: df reads only its metadata (size, dtype, ...), as rules do to sum
  // a gradient back to an input's shape. The node then keeps a stand-in with that
  // metadata and no data (PyTorch saves only the sizes), so the tensor is freed and
  // an in-place change of it is not an error.
  std::vector<bool> metadata_only;
  std::string name;  // "MulBackward0"
  // For one op: its differentiable inputs in order, each the index of its edge among
  // wrt's, or -1 where it takes no gradient (Node::shown_edges). Unset: wrt's edges.
  std::optional<std::vector<int>> shown_edges;
  // For a node that runs several of PyTorch's (Note [The tape as PyTorch shows it]):
  // those nodes, and per output of this one (output_nr) the one that made it (-1:
  // none, the node shows as itself).
  std::vector<ShownOp> shown_ops;
  std::vector<int> shown_outputs;
};

std::shared_ptr<const CompiledGradient> EagerSite::lookup(const std::vector<int64_t>& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second;
}

void EagerSite::store(std::vector<int64_t> key, std::shared_ptr<const CompiledGradient> g) {
  entries_[std::move(key)] = std::move(g);
}

std::vector<std::shared_ptr<const Code>> EagerSite::codes() const {
  std::vector<std::shared_ptr<const Code>> out;
  for (const auto& [key, g] : entries_) out.push_back(g->code);
  return out;
}

namespace {

bool tensor_requires_grad(const IValue& v) {
  return v.is_tensor() && v.tensor_impl() && v.tensor_impl()->requires_grad();
}

bool value_requires_grad(const IValue& v) {
  if (tensor_requires_grad(v)) return true;
  if (v.is_list()) {
    for (const IValue& e : v.to_list().elements) {
      if (tensor_requires_grad(e)) return true;
    }
  }
  if (v.is_dict()) {
    for (const auto& entry : v.to_dict().entries()) {
      if (tensor_requires_grad(entry.second)) return true;
    }
  }
  return false;
}

// A Dict[K, Tensor] argument holding a tensor that requires grad: the call's graph
// gets its entries one by one (Note [Dict arguments on the tape]).
bool flattens_dict(const Value* original, const IValue& runtime) {
  if (!runtime.is_dict() || original->type()->kind() != TypeKind::Dict ||
      !original->type()->value()->is_tensor())
    return false;
  bool any = false;
  for (const auto& entry : runtime.to_dict().entries()) {
    if (!entry.second.is_tensor() || !entry.second.tensor_impl()) return false;
    any |= tensor_requires_grad(entry.second);
  }
  return any;
}

// ---- The graph one node or call is differentiated in --------------------------------

// Inputs of the small graph: runtime values flattened (a list of tensors becomes one
// input per element), the key that identifies the pattern, and which inputs need
// gradients.
struct FlatInputs {
  std::vector<IValue> values;
  std::vector<int64_t> key;
  std::vector<size_t> wrt;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(bool build) : build_(build) {
    if (build_) graph_ = std::make_shared<Graph>();
  }

  // Maps `original` (an input of the node or callee) to a value of the new graph fed
  // by `runtime`; a Constant input stays a constant.
  void add(const Value* original, const IValue& runtime) {
    const tsl::Node* def = original->node();
    if (def && def->op() == OpId::Constant) {
      flat_.key.push_back(-1);
      if (build_) map_[original] = graph_->insert_constant(def->attr("value"), original->type());
      return;
    }
    if (runtime.is_tensor() && runtime.tensor_impl()) {
      add_tensor(runtime);
      if (build_) map_[original] = last_;
      return;
    }
    if (runtime.is_list() && original->type()->kind() == TypeKind::List &&
        original->type()->contained().at(0)->is_tensor()) {
      const auto& elems = runtime.to_list().elements;
      flat_.key.push_back(-1000 - static_cast<int64_t>(elems.size()));
      std::vector<Value*> parts;
      for (const IValue& e : elems) {
        add_tensor(e);
        parts.push_back(last_);
      }
      if (build_) {
        tsl::Node* list = graph_->insert(graph_->create(OpId::ListConstruct, parts, 1));
        map_[original] = list->output()->set_type(original->type());
      }
      return;
    }
    if (flattens_dict(original, runtime)) {
      add_dict(original, runtime);
      return;
    }
    // Note [Modes are constants on the tape]
    // A str, bool or None argument selects what an op computes (reduction='sum',
    // approximate='tanh', accumulate=True, rounding_mode=None), and gradient rules read
    // it as a constant: the recorded graph takes it as one, and the pattern the
    // compiled gradient is cached under holds its value. Numbers stay inputs (a
    // learning rate or a step count changes at every call).
    if (runtime.is_none() || runtime.is_str() || runtime.is_bool()) {
      if (runtime.is_none()) {
        flat_.key.push_back(-2);
      } else if (runtime.is_bool()) {
        flat_.key.push_back(runtime.to_bool() ? -5 : -6);
      } else {
        flat_.key.push_back(-4);
        push_key(runtime);
      }
      if (build_) map_[original] = graph_->insert_constant(runtime, original->type());
      return;
    }
    flat_.key.push_back(-3);
    flat_.values.push_back(runtime);
    if (build_) map_[original] = graph_->add_input(original->type());
  }

  // Note [Dict arguments on the tape]
  // A dict of tensors that require grad, passed to a function, is given to the call's
  // graph as a dict literal of its entries: the keys as constants (part of the pattern
  // the compiled gradient is cached under), the tensors as inputs. The function's reads
  // with constant keys then reach those tensors, as in any dict literal (Note [Dicts
  // under differentiation] in ir/autodiff). The literal is a new dict, so a function
  // that writes the dict (or hands it on) would write the copy: that is an error, never
  // a silently lost update.
  void add_dict(const Value* original, const IValue& runtime) {
    const auto& entries = runtime.to_dict().entries();
    flat_.key.push_back(-2000 - static_cast<int64_t>(entries.size()));
    std::vector<Value*> parts;
    for (const auto& [key, value] : entries) {
      push_key(key);
      add_tensor(value);
      if (!build_) continue;
      parts.push_back(graph_->insert_constant(key, original->type()->key()));
      parts.push_back(last_);
    }
    if (!build_) return;
    if (!autodiff::only_read_in_place(original)) {
      // A plain error: the interpreter reports it at the call.
      TSL_ERROR(
          "a function that changes a Dict argument (or passes it on) was called "
          "with a dict holding tensors that require grad; the eager tape follows "
          "such a dict only when the function just reads it (build a new dict "
          "inside the function instead)");
    }
    tsl::Node* dict = graph_->insert(graph_->create(OpId::DictConstruct, parts, 1));
    map_[original] = dict->output()->set_type(original->type());
  }

  // A dict key in the pattern: an int as itself, a string as its length and bytes.
  void push_key(const IValue& key) {
    if (key.is_int()) {
      flat_.key.push_back(key.to_int());
      return;
    }
    const std::string& s = key.to_str();
    flat_.key.push_back(static_cast<int64_t>(s.size()));
    for (char c : s) flat_.key.push_back(static_cast<unsigned char>(c));
  }

  FlatInputs& flat() { return flat_; }
  Graph& graph() { return *graph_; }
  std::shared_ptr<Graph> graph_ptr() { return graph_; }
  std::unordered_map<const Value*, Value*>& map() { return map_; }
  Value* mapped(const Value* v) { return map_.at(v); }

 private:
  void add_tensor(const IValue& v) {
    TensorImpl* t = v.tensor_impl();
    bool rg = t->requires_grad();
    if (rg) flat_.wrt.push_back(flat_.values.size());
    // The pattern: dtype, device, whether it requires grad, whether it is 0-dim.
    flat_.key.push_back(static_cast<int64_t>(t->dtype()) * 64 +
                        static_cast<int64_t>(t->device().type) * 4 + (rg ? 1 : 0) +
                        2 * (t->dim() > 0));
    flat_.values.push_back(v);
    if (build_) last_ = graph_->add_input(Type::tensor(t->dtype()));
  }

  bool build_;
  std::shared_ptr<Graph> graph_;
  FlatInputs flat_;
  std::unordered_map<const Value*, Value*> map_;
  Value* last_ = nullptr;
};

// ---- Node names as PyTorch prints them (`grad_fn=<MulBackward0>`) --------------------

std::string camel_case(std::string_view op) {
  std::string out;
  bool upper = true;
  for (char c : op) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

// einsum is composite in PyTorch: its grad_fn is the last op it ran, a permute or a sum
// for one operand; for several, the view after a bmm when the last operand shares a
// summed subscript with an earlier one, else a mul.
std::string einsum_node_name(const tsl::Node& node) {
  const tsl::Node* def = node.input(0)->node();
  if (def->op() != OpId::Constant || !def->attr("value").is_str()) return "EinsumBackward0";
  EinsumEquation e;
  try {
    e = parse_einsum_equation(def->attr("value").to_str(), /*checked_output=*/false);
  } catch (const Error&) {
    return "EinsumBackward0";
  }
  auto in = [](const std::vector<int>& term, int s) {
    return std::find(term.begin(), term.end(), s) != term.end();
  };
  if (e.operands.size() == 1) {
    for (int s : e.operands[0]) {
      if (s != kEllipsis && !in(e.output, s)) return "SumBackward1";
    }
    return "PermuteBackward0";
  }
  for (int s : e.operands.back()) {
    if (s == kEllipsis || in(e.output, s)) continue;
    for (size_t k = 0; k + 1 < e.operands.size(); ++k) {
      if (in(e.operands[k], s)) return "ViewBackward0";
    }
  }
  return "MulBackward0";
}

std::string node_name(const tsl::Node& node) {
  if (node.op() == OpId::FusionGroup) {
    // The group's last op made the result, as in the unfused program.
    const tsl::Node* last = node.block(0)->return_node()->prev();
    return last == node.block(0)->param_node() ? "FusionGroupBackward" : node_name(*last);
  }
  static const std::unordered_map<std::string_view, std::string_view> renamed = {
      {"mm", "MmBackward0"},
      {"linear", "AddmmBackward0"},
      {"cross_entropy", "NllLossBackward0"},
      {"reshape", "ViewBackward0"},
      {"view", "ViewBackward0"},
      {"flatten", "ViewBackward0"},
      {"conv2d", "ConvolutionBackward0"},
      {"max_pool2d", "MaxPool2DWithIndicesBackward0"},
      {"avg_pool2d", "AvgPool2DBackward0"},
      {"to", "ToCopyBackward0"},
      {"index", "IndexBackward0"},
      {"clamp", "ClampBackward1"},
      {"clip", "ClampBackward1"},
      {"rsub", "RsubBackward1"},
      {"max", "MaxBackward1"},
      {"min", "MinBackward1"},
      {"norm", "NormBackward1"},
      {"dropout", "MulBackward0"},
      {"layer_norm", "NativeLayerNormBackward0"},
  };
  std::string_view base = node.info().base_name();
  if (base == "matmul") return "MmBackward0";                     // PyTorch's name for 2-D @ 2-D
  if (node.op() == OpId::sum_tensor_list) return "AddBackward0";  // Python's sum adds
  if (base == "einsum") return einsum_node_name(node);
  // Second overloads with derivatives of their own in PyTorch.
  if (node.op() == OpId::masked_fill_tensor) return "MaskedFillBackward1";
  if (node.op() == OpId::sort_stable) return "SortBackward1";
  if (base == "sum" || base == "mean") {
    // sum(x) is SumBackward0, sum(x, dims) SumBackward1.
    bool with_dim = node.inputs().size() > 1 && node.input(1)->type()->kind() != TypeKind::None &&
                    !(node.input(1)->node()->op() == OpId::Constant &&
                      node.input(1)->node()->attr("value").is_none());
    return camel_case(base) + (with_dim ? "Backward1" : "Backward0");
  }
  if (base == "pow" && !node.input(1)->type()->is_tensor()) return "PowBackward0";
  if (base == "sub" && !node.input(0)->type()->is_tensor()) return "RsubBackward1";  // 1 - x
  if (base == "pow") return "PowBackward1";
  auto it = renamed.find(base);
  if (it != renamed.end()) return std::string(it->second);
  return camel_case(base) + "Backward0";
}

// ---- The tape node of a recorded op or call ------------------------------------------

bool reads_only_metadata(const Value* v) {
  for (const Use& u : v->uses()) {
    if (u.user->info().has(opflags::META)) continue;
    // AutogradZeros(gradient, like): zeros shaped like `like`.
    if (u.user->op() == OpId::AutogradZeros && u.offset == 1) continue;
    return false;
  }
  return true;
}

// A tensor with t's sizes, dtype and device that holds no data of its own.
Tensor metadata_stand_in(const Tensor& t) {
  int64_t one = 1;
  Tensor cell = Tensor::empty(std::span<const int64_t>(&one, 1), t.dtype(), t.device());
  // Never read by the backward; zeroed anyway, so a bug that reads it is deterministic.
  fill_tensor(cell, Scalar(int64_t{0}));
  DimVector zeros(t.sizes().size(), 0);
  return cell.as_strided(t.sizes(), zeros, 0);
}

struct SavedVersion {
  Tensor tensor;  // only while saved
  uint32_t version;
};

class GraphNode : public Node {
 public:
  // `state` has run stage 0 of gradient's Code.
  GraphNode(std::shared_ptr<const CompiledGradient> gradient, InterpreterState state,
            SourceRange range)
      : Node(next_sequence_nr()), gradient_(std::move(gradient)), range_(std::move(range)) {
    state_.emplace(std::move(state));
    // Two captures may be one value (the optimizer merged them): it keeps its data if
    // either needs it, since replacing one capture replaces the shared register.
    std::unordered_set<const TensorImpl*> need_data;
    size_t count = gradient_->code->num_captures();
    for (size_t k = 0; k < count; ++k) {
      const IValue& v = state_->capture(k);
      if (v.is_tensor() && v.tensor_impl() && !gradient_->metadata_only[k])
        need_data.insert(v.tensor_impl());
    }
    for (size_t k = 0; k < count; ++k) {
      IValue& v = state_->capture(k);
      if (!v.is_tensor() || !v.tensor_impl()) continue;
      if (gradient_->metadata_only[k] && !need_data.count(v.tensor_impl())) {
        v = IValue(metadata_stand_in(v.to_tensor()));
      } else if (gradient_->metadata_only[k]) {
        continue;  // checked through the capture that reads the data
      } else {
        versions_.push_back({v.to_tensor(), v.tensor_impl()->storage()->version()});
      }
    }
  }

  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    return apply_and_release(std::move(grads), false);
  }

  Edge shown_node(uint32_t output_nr) override {
    const std::vector<int>& outs = gradient_->shown_outputs;
    if (output_nr >= outs.size() || outs[output_nr] < 0) return Node::shown_node(output_nr);
    if (views_.empty()) {
      for (const ShownOp& op : gradient_->shown_ops)
        views_.push_back(std::make_shared<ShownNode>(sequence_nr(), op.name));
      for (size_t j = 0; j < views_.size(); ++j) {
        std::vector<Edge> edges;
        for (int e : gradient_->shown_ops[j].edges) {
          edges.push_back(e >= 0    ? next_edges().at(static_cast<size_t>(e))
                          : e == -1 ? Edge{}
                                    : Edge{views_.at(static_cast<size_t>(-2 - e)), 0});
        }
        views_[j]->set_shown_edges(std::move(edges));
      }
    }
    return {views_.at(static_cast<size_t>(outs[output_nr])), 0};
  }

  std::vector<Edge> shown_edges() const override {
    if (!gradient_->shown_edges) return next_edges();
    std::vector<Edge> out;
    for (int k : *gradient_->shown_edges)
      out.push_back(k < 0 ? Edge{} : next_edges().at(static_cast<size_t>(k)));
    return out;
  }

  // Runs stage 1 on the node's own registers when they are released afterwards, on a
  // clone of them otherwise (retain_graph).
  std::vector<Tensor> apply_and_release(std::vector<Tensor> grads, bool release) override {
    // Plain errors: the interpreter reports them at the backward() call.
    TSL_CHECK(state_.has_value(),
              "Trying to backward through the graph a second time (or directly access saved "
              "tensors after they have already been freed). Saved intermediate values of the "
              "graph are freed when you call .backward(). Specify retain_graph=True if you need "
              "to backward through the graph a second time (the node ",
              name(), where(), " was freed)");
    check_versions();
    std::vector<IValue> ins;
    ins.reserve(grads.size());
    for (Tensor& g : grads) ins.emplace_back(std::move(g));
    std::vector<IValue> outs;
    if (release) {
      // Checked: drop our references so each saved value dies at its last use in stage 1
      // (and the memory planner sees it die inside the run).
      versions_.clear();
      outs = state_->run_stage(std::move(ins));
      release_variables();
    } else {
      InterpreterState copy(*state_);
      outs = copy.run_stage(std::move(ins));
    }
    std::vector<Tensor> result;
    result.reserve(outs.size());
    for (IValue& o : outs) result.push_back(o.is_tensor() ? o.to_tensor() : Tensor());
    return result;
  }

  std::string name() const override { return gradient_->name; }
  uint32_t num_inputs() const override { return static_cast<uint32_t>(gradient_->seeded.size()); }
  void release_variables() override {
    state_.reset();
    versions_.clear();
  }

 private:
  void check_versions() const {
    for (const SavedVersion& s : versions_) {
      uint32_t now = s.tensor.storage()->version();
      if (now == s.version) continue;
      TSL_ERROR(
          "one of the variables needed for gradient computation has been modified by "
          "an inplace operation: [",
          dtype_name(s.tensor.dtype()), " ", shape_str(s.tensor.sizes()), "], saved by ", name(),
          where(), ", is at version ", now, "; expected version ", s.version, " instead");
    }
  }

  // " (line 7)": where the forward op was, for messages.
  std::string where() const {
    return range_.valid() ? " (line " + std::to_string(range_.line) + ")" : "";
  }

  std::shared_ptr<const CompiledGradient> gradient_;  // owns the Code state_ runs
  std::optional<InterpreterState> state_;             // empty once released
  std::vector<SavedVersion> versions_;
  SourceRange range_;
  std::vector<std::shared_ptr<ShownNode>> views_;  // made on first use
};

// ---- Compiling and running --------------------------------------------------------------

// `flag_dependence`: a call appends a flag per output saying whether the run's path
// made it depend on an input requiring grad (an op's outputs always do).
std::shared_ptr<CompiledGradient> compile(std::shared_ptr<Graph> g, const std::vector<size_t>& wrt,
                                          std::string name, const std::string& function_name,
                                          bool flag_dependence) {
  size_t first_flag = SIZE_MAX;
  if (flag_dependence) {
    // The flags follow values, so in-place updates become values first (what
    // build_joint does anyway; the preparation is idempotent).
    autodiff::prepare_for_differentiation(*g, wrt);
    first_flag = autodiff::add_dependence_flags(*g, wrt);
  }
  autodiff::JointOptions options;
  options.function_name = function_name;
  options.zeros_for_unreached_inputs = false;
  autodiff::JointGraph joint = autodiff::build_joint(*g, wrt, options);
  autodiff::Gradient gradient = autodiff::split(joint);
  gradient.f->set_name(name + ".forward");
  gradient.df->set_name(name);
  auto c = std::make_shared<CompiledGradient>();
  c->wrt = wrt;
  c->seeded = joint.seeded_outputs;
  c->num_outputs = gradient.num_real_outputs;
  c->first_flag = first_flag;
  size_t first_capture = gradient.df->inputs().size() - gradient.num_captures;
  for (size_t k = 0; k < gradient.num_captures; ++k) {
    const Value* in = gradient.df->inputs()[first_capture + k];
    c->metadata_only.push_back(in->type()->is_tensor() && reads_only_metadata(in));
  }
  c->code = compile_gradient(gradient);
  c->name = std::move(name);
  return c;
}

bool is_input(const TensorImpl* t, const FlatInputs& flat) {
  for (const IValue& v : flat.values) {
    if (v.is_tensor() && v.tensor_impl() == t) return true;
  }
  return false;
}

// A tensor that can take history: a fresh header when `t` is an input's or already
// belongs to a graph (an op that returned its input unchanged).
// A result the node also saves gets its own header too: the saved one must not point
// back at the node through grad_fn (a reference cycle that would keep the whole graph
// alive; PyTorch's SavedVariable drops grad_fn for saved outputs for the same reason).
Tensor fresh_output(const Tensor& t, const FlatInputs& flat,
                    const std::vector<const TensorImpl*>& saved) {
  bool shared = t.impl()->autograd_meta() != nullptr || t.requires_grad();
  for (const IValue& v : flat.values) shared |= v.is_tensor() && v.tensor_impl() == t.impl();
  for (const TensorImpl* s : saved) shared |= s == t.impl();
  if (!shared) return t;
  return t.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

// Runs the forward, makes the node, and returns the real outputs with history.
// A call (`inputs_pass_through`) returns an input it returned unchanged as that input,
// history and all, as a Python function returning its argument gives the very same
// tensor (`f(x) is x`). An op's result always gets the node (`x.view(x.shape)` is a
// new tensor with ViewBackward0 in PyTorch too).
std::vector<IValue> run_recorded(const CompiledGradient& g,
                                 std::shared_ptr<const CompiledGradient> keep, FlatInputs& flat,
                                 const SourceRange& range, bool inputs_pass_through) {
  InterpreterState state(*g.code);
  std::vector<IValue> outs = state.run_stage(flat.values);
  std::vector<const TensorImpl*> saved;
  for (size_t k = 0; k < g.code->num_captures(); ++k) {
    const IValue& v = state.capture(k);
    if (v.is_tensor() && v.tensor_impl()) saved.push_back(v.tensor_impl());
  }
  auto node = std::make_shared<GraphNode>(std::move(keep), std::move(state), range);
  std::vector<Edge> edges;
  edges.reserve(g.wrt.size());
  for (size_t i : g.wrt) edges.push_back(gradient_edge(flat.values[i].to_tensor()));
  node->set_next_edges(std::move(edges));
  for (size_t k = 0; k < g.seeded.size(); ++k) {
    IValue& out = outs[g.seeded[k]];
    if (!out.is_tensor() || !out.tensor_impl()) continue;
    if (inputs_pass_through && is_input(out.tensor_impl(), flat)) continue;
    // A result the run's path computed without an input requiring grad has none
    // (PyTorch's eager autograd sees the ops that ran).
    if (g.first_flag != SIZE_MAX && !outs[g.first_flag + g.seeded[k]].to_bool()) continue;
    Tensor t = fresh_output(out.to_tensor(), flat, saved);
    set_history(t, node, static_cast<uint32_t>(k));
    out = IValue(std::move(t));
  }
  return outs;
}

// The outputs of the small graph: the node's, with a tuple result split in elements.
void add_outputs(Graph& g, const std::vector<Value*>& outs) {
  for (Value* v : outs) {
    if (v->type()->kind() != TypeKind::Tuple) {
      g.add_output(v);
      continue;
    }
    const auto& types = v->type()->contained();
    tsl::Node* unpack = g.insert(g.create(OpId::TupleUnpack, {v}, types.size()));
    for (size_t i = 0; i < types.size(); ++i) g.add_output(unpack->output(i)->set_type(types[i]));
  }
}

// Rebuilds the node's outputs from the small graph's (tuples regrouped).
void write_outputs(const std::vector<Value*>& originals, std::vector<IValue>& flat_outs,
                   KernelArgs& args) {
  size_t k = 0;
  for (size_t i = 0; i < originals.size(); ++i) {
    const TypePtr& t = originals[i]->type();
    if (t->kind() != TypeKind::Tuple) {
      args.out(static_cast<uint32_t>(i)) = std::move(flat_outs.at(k++));
      continue;
    }
    std::vector<IValue> elems;
    for (size_t e = 0; e < t->contained().size(); ++e)
      elems.push_back(std::move(flat_outs.at(k++)));
    args.out(static_cast<uint32_t>(i)) = IValue::tuple(std::move(elems));
  }
}

// `dependence`, where given, is of the small graph whose outputs are `outs`: a list or
// dict that does not depend on an input requiring grad (optimizer state made by
// zeros_like(p).detach(), a list of sizes) is returned as it is, without history.
void check_outputs_supported(const std::vector<Value*>& outs, std::string_view what,
                             const SourceRange& range,
                             const autodiff::Dependence* dependence = nullptr) {
  for (const Value* v : outs) {
    if (dependence && !dependence->requiring.count(v)) continue;
    std::vector<TypePtr> types = {v->type()};
    if (v->type()->kind() == TypeKind::Tuple) types = v->type()->contained();
    for (const TypePtr& t : types) {
      bool container = t->kind() == TypeKind::List || t->kind() == TypeKind::Tuple ||
                       t->kind() == TypeKind::Dict;
      if (!container) continue;
      throw SourceError(SourceError::Kind::Runtime, range,
                        std::string(what) + " returns " + t->str() +
                            " from inputs that require grad; the eager tape records only "
                            "results that are tensors or tuples of tensors (use indexing, or "
                            "the function transforms grad/vjp, which handle lists)");
    }
  }
}

}  // namespace

bool needs_recording(const KernelArgs& args) {
  if (!grad_mode_enabled()) return false;
  for (uint32_t i = 0; i < args.num_inputs(); ++i) {
    if (value_requires_grad(args.in(i))) return true;
  }
  return false;
}

// Whether input i of `n` is among those PyTorch lists in next_functions: the inputs
// the op's rule differentiates (`differentiable`, autodiff::differentiable_inputs),
// and a Python number where add, sub, mul, div and where take a tensor (PyTorch wraps
// it in one; pow's exponent and `1 - x`'s 1 pick overloads with a Scalar instead).
bool listed_input(const tsl::Node& n, size_t i, const std::vector<bool>& differentiable) {
  if (differentiable.at(i)) return true;
  TypeKind k = n.input(i)->type()->kind();
  if (k != TypeKind::Int && k != TypeKind::Float) return false;
  const FunctionSchema& s = schema_of(n.op());
  if (i >= s.arguments.size() || !s.arguments[i].type->is_tensor()) return false;  // alpha
  std::string_view base = n.info().base_name();
  return base == "add" || (base == "sub" && i == 1) || base == "mul" || base == "div" ||
         base == "where";
}

// The inputs of `node` PyTorch lists in next_functions (listed_input; a tensor list's
// elements each), each as its edge's index among the node's edges (the inputs that
// require grad, in order), or -1 for one without a gradient.
std::optional<std::vector<int>> pytorch_edges(const tsl::Node& node, const std::vector<IValue>& ins,
                                              size_t num_wrt) {
  std::vector<bool> differentiable = autodiff::differentiable_inputs(node);
  std::vector<int> out;
  int next = 0;
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    bool listed = listed_input(node, i, differentiable);
    auto visit = [&](const IValue& v) {
      bool edge = v.is_tensor() && v.tensor_impl() && v.tensor_impl()->requires_grad();
      if (edge) ++next;
      if (listed) out.push_back(edge ? next - 1 : -1);
    };
    if (ins[i].is_list()) {
      for (const IValue& e : ins[i].to_list().elements) visit(e);
    } else if (ins[i].is_dict()) {
      return std::nullopt;
    } else {
      visit(ins[i]);
    }
  }
  if (static_cast<size_t>(next) != num_wrt) return std::nullopt;
  return out;
}

// The index among the node's next edges of each input's (a tensor that requires grad),
// else -1; null where an input is a list or dict (their elements are edges too).
std::optional<std::vector<int>> edges_of_inputs(const tsl::Node& node, KernelArgs& args,
                                                size_t num_wrt) {
  std::vector<int> out;
  int k = 0;
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    const IValue& v = args.in(static_cast<uint32_t>(i));
    if (v.is_list() || v.is_dict()) return std::nullopt;
    bool edge = node.input(i)->node()->op() != OpId::Constant && v.is_tensor() && v.tensor_impl() &&
                v.tensor_impl()->requires_grad();
    out.push_back(edge ? k++ : -1);
  }
  if (static_cast<size_t>(k) != num_wrt) return std::nullopt;
  return out;
}

// A FusionGroup's ops as PyTorch records them: each op with a floating result and an
// input that requires grad (Note [The tape as PyTorch shows it]).
void show_fusion_group(const tsl::Node& node, KernelArgs& args, CompiledGradient& g) {
  std::optional<std::vector<int>> edge_of_param = edges_of_inputs(node, args, g.wrt.size());
  if (!edge_of_param) return;
  const Block* body = node.block(0);
  std::unordered_map<const Value*, size_t> param_of;
  for (size_t p = 0; p < body->params().size(); ++p) param_of[body->params()[p]] = p;
  std::unordered_map<const Value*, int> op_of;  // a value with grad: its ShownOp
  std::vector<ShownOp> ops;
  for (const tsl::Node* n : *body) {
    if (n->op() == OpId::Constant) continue;
    std::optional<DType> out_dtype =
        n->outputs().size() == 1 ? n->output(0)->type()->tensor_dtype() : std::nullopt;
    bool floating_out = n->outputs().size() == 1 && n->output(0)->type()->is_tensor() &&
                        (!out_dtype || is_floating(*out_dtype));
    bool takes_grad = false;
    for (const Value* v : n->inputs()) {
      auto p = param_of.find(v);
      takes_grad |= (p != param_of.end() && (*edge_of_param)[p->second] >= 0) || op_of.count(v);
    }
    if (!floating_out || !takes_grad) continue;
    std::vector<bool> differentiable = autodiff::differentiable_inputs(*n);
    ShownOp op{node_name(*n), {}};
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      if (!listed_input(*n, i, differentiable)) continue;
      const Value* v = n->input(i);
      auto p = param_of.find(v);
      auto o = op_of.find(v);
      op.edges.push_back(p != param_of.end() ? std::max((*edge_of_param)[p->second], -1)
                         : o != op_of.end()  ? -2 - o->second
                                             : -1);
    }
    op_of[n->output(0)] = static_cast<int>(ops.size());
    ops.push_back(std::move(op));
  }
  std::vector<int> outputs;
  for (size_t k : g.seeded) {
    auto o = op_of.find(body->returns().at(k));
    outputs.push_back(o == op_of.end() ? -1 : o->second);
  }
  g.shown_ops = std::move(ops);
  g.shown_outputs = std::move(outputs);
}

// One op that PyTorch records as several nodes: linear of a matrix (addmm, or mm, of
// the weight transposed) and cross_entropy with class targets (nll_loss of
// log_softmax). Others show as themselves.
void show_decomposed_op(const tsl::Node& node, KernelArgs& args, CompiledGradient& g) {
  std::optional<std::vector<int>> edge = edges_of_inputs(node, args, g.wrt.size());
  if (!edge) return;
  auto in = [&](size_t i) -> const IValue& { return args.in(static_cast<uint32_t>(i)); };
  // An input's edge: its next edge, or None for a floating tensor without a gradient.
  auto edge_or_none = [&](size_t i) { return (*edge)[i] >= 0 ? (*edge)[i] : -1; };
  std::string_view base = node.info().base_name();
  if (base == "linear" && in(0).is_tensor() && in(0).to_tensor().dim() == 2) {
    // addmm(bias, input, weight.t()), or mm(input, weight.t()) without a bias.
    bool bias = !in(2).is_none();
    int transposed = (*edge)[1] >= 0 ? -3 : -1;  // ShownOp 1, when the weight takes grad
    ShownOp product{bias ? "AddmmBackward0" : "MmBackward0", {}};
    if (bias) product.edges.push_back(edge_or_none(2));
    product.edges.push_back(edge_or_none(0));
    product.edges.push_back(transposed);
    g.shown_ops = {product};
    if ((*edge)[1] >= 0) g.shown_ops.push_back({"TBackward0", {(*edge)[1]}});
    g.shown_outputs = {0};
  } else if (base == "cross_entropy" && (*edge)[0] >= 0 && in(1).is_tensor() &&
             in(1).to_tensor().dtype() == DType::Int64 && in(5).is_double() &&
             in(5).to_double() == 0.0) {
    g.shown_ops = {{"NllLossBackward0", {-3}}, {"LogSoftmaxBackward0", {(*edge)[0]}}};
    g.shown_outputs = {0};
  }
}

void record_op(const tsl::Node& node, EagerSite& site, KernelArgs& args) {
  GraphBuilder probe(false);
  for (size_t i = 0; i < node.inputs().size(); ++i)
    probe.add(node.input(i), args.in(static_cast<uint32_t>(i)));
  FlatInputs& flat = probe.flat();
  std::shared_ptr<const CompiledGradient> g = site.lookup(flat.key);
  if (!g) {
    check_outputs_supported(node.outputs(), "`" + std::string(node.info().base_name()) + "`",
                            node.range());
    GraphBuilder b(true);
    for (size_t i = 0; i < node.inputs().size(); ++i)
      b.add(node.input(i), args.in(static_cast<uint32_t>(i)));
    Graph& graph = b.graph();
    std::vector<Value*> outs;
    if (node.op() == OpId::FusionGroup) {
      std::unordered_map<const Value*, Value*>& map = b.map();
      const Block* body = node.block(0);
      for (size_t i = 0; i < body->params().size(); ++i)
        map[body->params()[i]] = b.mapped(node.input(i));
      outs = graph.clone_block_into(body, graph.block(), map);
    } else {
      std::vector<Value*> ins;
      for (const Value* v : node.inputs()) ins.push_back(b.mapped(v));
      tsl::Node* copy = graph.insert(graph.create(node.op(), ins, node.outputs().size()));
      copy->set_range(node.range());
      for (const Attribute& a : node.attributes()) copy->set_attr(a.name, a.value);
      for (size_t i = 0; i < node.outputs().size(); ++i) {
        copy->output(i)->set_type(node.output(i)->type());
        outs.push_back(copy->output(i));
      }
    }
    add_outputs(graph, outs);
    auto compiled = compile(b.graph_ptr(), b.flat().wrt, node_name(node), "", false);
    if (node.op() == OpId::FusionGroup) {
      show_fusion_group(node, args, *compiled);
    } else {
      std::vector<IValue> ins;
      for (uint32_t i = 0; i < node.inputs().size(); ++i) ins.push_back(args.in(i));
      compiled->shown_edges = pytorch_edges(node, ins, b.flat().wrt.size());
      show_decomposed_op(node, args, *compiled);
    }
    site.store(flat.key, compiled);
    g = compiled;
  }
  std::vector<IValue> outs = run_recorded(*g, g, flat, node.range(), false);
  write_outputs(node.outputs(), outs, args);
}

namespace {

// PyTorch's node names for in-place updates (`y += 1` is AddBackward0): the out-of-place
// op's name, but for copy_'s.
std::string inplace_node_name(OpId op) {
  if (op == OpId::copy_) return "CopyBackwards";
  return camel_case(op_info(op).name) + "Backward0";  // camel_case drops the `_`
}

// Whether t covers all of its storage (it is no view into a larger tensor).
bool whole_storage(const Tensor& t) {
  return t.storage_offset() == 0 && t.is_contiguous() &&
         static_cast<size_t>(t.numel()) * element_size(t.dtype()) == t.storage()->nbytes();
}

}  // namespace

void record_inplace(const tsl::Node& node, EagerSite& site, KernelArgs& args) {
  Tensor self = args.in(0).to_tensor();
  const char* op = node.info().base_name().data();
  std::string name(node.info().base_name());
  if (self.requires_grad()) {
    AutogradMeta* meta = meta_of(self);
    TSL_CHECK(meta && meta->grad_fn,
              "a leaf Variable that requires grad is being used in an "
              "in-place operation (",
              name, "); update it under `with no_grad():`");
  }
  TSL_CHECK(whole_storage(self), name,
            ": writing into part of a tensor that requires grad (x[i] = v, or an in-place "
            "update of a view) is not recorded by TSL's tape (PyTorch rebases the whole "
            "tensor's history); build the new tensor out of place (torch.where, torch.cat, "
            "index_put) or write under `with no_grad():`");
  (void)op;
  // mul_ and div_'s gradients read self as it was; it is about to be overwritten, so
  // the node gets a copy with self's history (PyTorch saves the original self too).
  std::vector<IValue> ins;
  for (uint32_t i = 0; i < node.inputs().size(); ++i) ins.push_back(args.in(i));
  if (node.op() == OpId::mul_ || node.op() == OpId::div_) {
    Tensor original;
    {
      NoGradGuard no_grad;
      original = call_op(OpId::clone, {IValue(self)}).at(0).to_tensor();
    }
    if (AutogradMeta* m = meta_of(self); m && m->grad_fn) {
      set_history(original, m->grad_fn, m->output_nr);
    } else if (self.requires_grad()) {
      original.impl()->set_requires_grad(true);
    }
    ins[0] = IValue(original);
  }
  GraphBuilder probe(false);
  for (size_t i = 0; i < node.inputs().size(); ++i) probe.add(node.input(i), ins[i]);
  FlatInputs& flat = probe.flat();
  std::shared_ptr<const CompiledGradient> g = site.lookup(flat.key);
  if (!g) {
    GraphBuilder b(true);
    for (size_t i = 0; i < node.inputs().size(); ++i) b.add(node.input(i), ins[i]);
    Graph& graph = b.graph();
    std::vector<Value*> mapped;
    for (const Value* v : node.inputs()) mapped.push_back(b.mapped(v));
    tsl::Node* copy = graph.insert(graph.create(node.op(), mapped, 1));
    copy->set_range(node.range());
    copy->output()->set_type(node.output()->type());
    Value* r = autodiff::out_of_place(graph, copy);
    copy->output()->replace_all_uses_with(r);
    copy->destroy();
    add_outputs(graph, {r});
    // Its edges are the out-of-place op's (PyTorch's AddBackward0 for `y += 1`), under
    // the expand and conversion that keep self's shape and dtype.
    std::optional<std::vector<int>> shown;
    const tsl::Node* op = r->node();
    while ((op->op() == OpId::expand || op->op() == OpId::to_dtype) && op->inputs().size() > 0)
      op = op->input(0)->node();
    if (op->inputs().size() == node.inputs().size())
      shown = pytorch_edges(*op, ins, b.flat().wrt.size());
    auto compiled = compile(b.graph_ptr(), b.flat().wrt, inplace_node_name(node.op()), "", false);
    compiled->shown_edges = std::move(shown);
    site.store(flat.key, compiled);
    g = compiled;
  }
  // The update computed out of place with its history, then written into self, which
  // takes that history (PyTorch rebases an updated tensor's grad_fn the same way).
  std::vector<IValue> outs = run_recorded(*g, g, flat, node.range(), false);
  Tensor r = outs.at(0).to_tensor();
  {
    NoGradGuard no_grad;
    call_op(OpId::copy_, {IValue(self), IValue(r)});
  }
  if (AutogradMeta* rm = meta_of(r); rm && rm->grad_fn) {
    set_history(self, rm->grad_fn, rm->output_nr);
  }
  args.out(0) = IValue(self);
}

void record_call(Function& callee, const tsl::Node& call, EagerSite& site, KernelArgs& args) {
  const Graph& source = callee.graph();
  GraphBuilder probe(false);
  for (size_t i = 0; i < source.inputs().size(); ++i)
    probe.add(source.inputs()[i], args.in(static_cast<uint32_t>(i)));
  FlatInputs& flat = probe.flat();
  std::shared_ptr<const CompiledGradient> g = site.lookup(flat.key);
  if (!g) {
    std::unique_ptr<Graph> body = source.clone();
    inline_function_calls(*body);
    GraphBuilder b(true);
    for (size_t i = 0; i < body->inputs().size(); ++i)
      b.add(body->inputs()[i], args.in(static_cast<uint32_t>(i)));
    Graph& graph = b.graph();
    std::vector<Value*> outs = graph.clone_block_into(body->block(), graph.block(), b.map());
    add_outputs(graph, outs);
    // compile() prepares the graph the same way (idempotent).
    autodiff::prepare_for_differentiation(graph, b.flat().wrt);
    autodiff::Dependence dependence = autodiff::analyze_dependence(graph, b.flat().wrt);
    check_outputs_supported(graph.outputs(), "`" + callee.name() + "`", call.range(), &dependence);
    auto compiled =
        compile(b.graph_ptr(), b.flat().wrt, "DifferentiableGraphBackward", callee.name(), true);
    site.store(flat.key, compiled);
    g = compiled;
  }
  std::vector<IValue> outs = run_recorded(*g, g, flat, call.range(), true);
  write_outputs(source.outputs(), outs, args);
}

}  // namespace tsl::autograd
