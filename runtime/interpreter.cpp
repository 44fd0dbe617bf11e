// Compiling graphs to register Code and running it. See Note [Compiling a graph to
// Code] in interpreter.h.
#include "runtime/interpreter.h"

#include <chrono>
#include <cstdlib>
#include <new>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/autodiff/derivatives.h"
#include "ir/autodiff/differentiate.h"
#include "ir/autodiff/functionalize.h"
#include "ir/passes/inline_calls.h"
#include "ir/passes/pipeline.h"
#include "ir/schema.h"
#include "runtime/autograd/record.h"
#include "runtime/function.h"
#include "runtime/fusion.h"
#include "runtime/profiler.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {

namespace {

// The input register of a stage input that nothing reads: the value is dropped.
constexpr uint32_t kNoRegister = UINT32_MAX;

// ---- Kernels of the structural ops the interpreter runs as ordinary instructions.

void list_construct(KernelArgs& a) {
  std::vector<IValue> elems;
  elems.reserve(a.num_inputs());
  for (uint32_t i = 0; i < a.num_inputs(); ++i) elems.push_back(a.in(i));
  a.out(0) = IValue::list(std::move(elems));
}

// DictConstruct(k0, v0, k1, v1, ...): a later duplicate of a key overwrites its value
// and keeps its first place, as a Python dict display does (Note [Dicts]).
void dict_construct(KernelArgs& a) {
  auto dict = make_intrusive<DictImpl>();
  for (uint32_t i = 0; i + 1 < a.num_inputs(); i += 2) dict->set(a.in(i), a.in(i + 1));
  a.out(0) = IValue(std::move(dict));
}

void tuple_construct(KernelArgs& a) {
  std::vector<IValue> elems;
  elems.reserve(a.num_inputs());
  for (uint32_t i = 0; i < a.num_inputs(); ++i) elems.push_back(a.in(i));
  a.out(0) = IValue::tuple(std::move(elems));
}

void tuple_unpack(KernelArgs& a) {
  const auto& elems = a.in(0).to_tuple();
  TSL_INTERNAL_ASSERT(elems.size() == a.num_outputs(), "TupleUnpack arity");
  for (uint32_t i = 0; i < a.num_outputs(); ++i) a.out(i) = elems[i];
}

// TupleIndex's index attribute becomes a constant second input at compile time.
void tuple_index(KernelArgs& a) { a.out(0) = a.in(0).to_tuple().at(a.in(1).to_int()); }

void uninitialized(KernelArgs& a) { a.out(0) = IValue(); }
void undefined_tensor(KernelArgs& a) { a.out(0) = IValue(Tensor()); }

void unwrap_optional(KernelArgs& a) {
  if (a.in(0).is_none()) TSL_ERROR("unwrapped an Optional that is None");
  a.out(0) = a.in(0);
}

void identity(KernelArgs& a) { a.out(0) = a.in(0); }

void tensor_dtype(KernelArgs& a) { a.out(0) = IValue(a.in(0).tensor_impl()->dtype()); }
void tensor_device(KernelArgs& a) { a.out(0) = IValue(a.in(0).tensor_impl()->device()); }

// MakeClosure's Function travels as a constant last input (see compile_node).
void make_closure(KernelArgs& a) {
  uint32_t n = a.num_inputs() - 1;
  std::vector<IValue> captures;
  captures.reserve(n);
  for (uint32_t i = 0; i < n; ++i) captures.push_back(a.in(i));
  auto* fn = static_cast<Function*>(&a.in(n).to_object());
  a.out(0) = IValue(
      IntrusivePtr<ObjectImpl>(new Closure(IntrusivePtr<Function>(fn), std::move(captures))));
}

void call_closure(KernelArgs& a) {
  auto& closure = static_cast<Closure&>(a.in(0).to_object());
  std::vector<IValue> args;
  for (uint32_t i = 1; i < a.num_inputs(); ++i) args.push_back(a.in(i));
  std::vector<IValue> results = closure.call(std::move(args));
  for (uint32_t i = 0; i < a.num_outputs(); ++i) a.out(i) = std::move(results.at(i));
}

}  // namespace

KernelFn prim_kernel(OpId op) {
  switch (op) {
    case OpId::ListConstruct:
      return &list_construct;
    case OpId::DictConstruct:
      return &dict_construct;
    case OpId::TupleConstruct:
      return &tuple_construct;
    case OpId::TupleUnpack:
      return &tuple_unpack;
    case OpId::TupleIndex:
      return &tuple_index;
    case OpId::Uninitialized:
      return &uninitialized;
    case OpId::Undefined:
      return &undefined_tensor;
    case OpId::unwrap_optional:
      return &unwrap_optional;
    case OpId::to_optional:
    case OpId::AssumeDefined:
      return &identity;
    case OpId::dtype:
      return &tensor_dtype;
    case OpId::device:
      return &tensor_device;
    case OpId::MakeClosure:
      return &make_closure;
    case OpId::CallClosure:
      return &call_closure;
    default:
      return nullptr;
  }
}

// ---- Building Code ------------------------------------------------------------------

class CodeBuilder {
 public:
  explicit CodeBuilder(Code& code) : code_(code) {}

  // A one-stage Code: `graph`'s whole program.
  void build(std::shared_ptr<const Graph> graph) {
    ensure_kernels_registered();
    autograd::install_eager_autograd();
    Code::Stage& stage = begin_stage(std::move(graph));
    compile_block(stage.graph->block());
    finish_stage(stage, stage.graph->outputs(), {});
    finish();
  }

  // A two-stage Code; see the Note in interpreter.h.
  void build_gradient(std::shared_ptr<const Graph> f, std::shared_ptr<const Graph> df,
                      size_t num_real_outputs, size_t num_captures) {
    ensure_kernels_registered();
    TSL_INTERNAL_ASSERT(f->outputs().size() == num_real_outputs + num_captures,
                        "gradient forward has ", f->outputs().size(), " outputs, expected ",
                        num_real_outputs, " + ", num_captures);
    TSL_INTERNAL_ASSERT(df->inputs().size() >= num_captures, "gradient backward has ",
                        df->inputs().size(), " inputs for ", num_captures, " captures");
    Code::Stage& forward = begin_stage(std::move(f));
    const Graph& fg = *forward.graph;
    compile_block(fg.block());
    for (size_t k = 0; k < num_captures; ++k)
      code_.capture_registers_.push_back(reg(fg.outputs()[num_real_outputs + k]));
    std::vector<Value*> real_outputs(fg.outputs().begin(),
                                     fg.outputs().begin() + static_cast<long>(num_real_outputs));
    finish_stage(forward, real_outputs, code_.capture_registers_);
    const size_t num_grads = df->inputs().size() - num_captures;
    Code::Stage& backward = begin_stage(std::move(df), num_grads);
    adopt_captures(*backward.graph, num_grads);
    compile_block(backward.graph->block());
    finish_stage(backward, backward.graph->outputs(), {});
    finish();
  }

 private:
  // Starts a stage at the next instruction; its first `num_inputs` graph inputs (all by
  // default) are the stage's inputs. An input nothing reads gets no register, so the
  // caller's value is dropped at once.
  Code::Stage& begin_stage(std::shared_ptr<const Graph> graph, size_t num_inputs = SIZE_MAX) {
    code_.stages_.emplace_back();
    Code::Stage& stage = code_.stages_.back();
    stage.graph = std::move(graph);
    stage.begin = static_cast<uint32_t>(code_.instructions_.size());
    const auto& inputs = stage.graph->inputs();
    for (size_t i = 0; i < inputs.size() && i < num_inputs; ++i)
      stage.input_registers.push_back(inputs[i]->has_uses() ? reg(inputs[i]) : kNoRegister);
    return stage;
  }

  // df's capture parameters take the registers of f's capture outputs. A register
  // captured twice is copied for its second parameter (each parameter frees its own
  // register at its last use); captures df never reads are freed before it runs.
  void adopt_captures(const Graph& df, size_t num_grads) {
    std::unordered_set<uint32_t> adopted;
    std::vector<const Value*> unused;
    for (size_t k = 0; k < code_.capture_registers_.size(); ++k) {
      const Value* param = df.inputs()[num_grads + k];
      uint32_t r = code_.capture_registers_[k];
      if (constant_regs_.count(r) || adopted.insert(r).second) {
        registers_.emplace(param, r);
      } else {
        Instruction copy;
        copy.kind = Instruction::Kind::Copy;
        emit(copy, {r}, {reg(param)});
      }
      if (!param->has_uses()) unused.push_back(param);
    }
    emit_free(unused, nullptr);
  }

  // Ends the stage after its last instruction, returning `outputs`. A register
  // returned twice is copied for all but its last occurrence; constants and the
  // registers `kept` for the next stage are always copied.
  void finish_stage(Code::Stage& stage, const std::vector<Value*>& outputs,
                    const std::vector<uint32_t>& kept_registers) {
    stage.end = static_cast<uint32_t>(code_.instructions_.size());
    std::unordered_set<uint32_t> kept(kept_registers.begin(), kept_registers.end());
    for (const Value* out : outputs) {
      uint32_t r = reg(out);
      stage.output_registers.push_back(r);
      stage.output_moves.push_back(!constant_regs_.count(r) && !kept.count(r));
    }
    std::unordered_set<uint32_t> seen;
    for (size_t i = stage.output_registers.size(); i-- > 0;) {
      if (!seen.insert(stage.output_registers[i]).second) stage.output_moves[i] = false;
    }
  }

  void finish() {
    code_.num_registers_ = num_registers_;
    code_.register_names_ = std::move(names_);
    code_.register_names_.resize(num_registers_);
  }

  uint32_t reg(const Value* v) {
    auto it = registers_.find(v);
    if (it != registers_.end()) return it->second;
    uint32_t r = num_registers_++;
    registers_.emplace(v, r);
    names_.resize(num_registers_);
    names_[r] = v->debug_name().empty() ? "%" + std::to_string(v->unique()) : "%" + v->debug_name();
    return r;
  }

  uint32_t add_list(const std::vector<uint32_t>& regs) {
    uint32_t start = static_cast<uint32_t>(code_.indices_.size());
    code_.indices_.insert(code_.indices_.end(), regs.begin(), regs.end());
    return start;
  }

  size_t emit(Instruction inst, const std::vector<uint32_t>& ins,
              const std::vector<uint32_t>& outs) {
    inst.inputs = add_list(ins);
    inst.num_inputs = static_cast<uint32_t>(ins.size());
    inst.outputs = add_list(outs);
    inst.num_outputs = static_cast<uint32_t>(outs.size());
    code_.instructions_.push_back(inst);
    return code_.instructions_.size() - 1;
  }

  void emit_transfer(const Value* from, const Value* to, bool may_move, const Node* node) {
    emit_transfer(reg(from), reg(to), may_move, node);
  }

  void emit_transfer(uint32_t src, uint32_t dst, bool may_move, const Node* node) {
    if (src == dst) return;
    Instruction inst;
    inst.kind =
        may_move && !constant_regs_.count(src) ? Instruction::Kind::Move : Instruction::Kind::Copy;
    inst.node = node;
    emit(inst, {src}, {dst});
  }

  // Values whose last use in `b` is the node at that position; see the Note.
  struct LastUses {
    std::unordered_map<const Node*, std::vector<const Value*>> direct;  // free after the node
    std::unordered_map<const Node*, std::vector<const Value*>> nested;  // Free after If/Loop
    std::unordered_set<const Value*> dies_at_return;
  };

  // The values `b` and its nested blocks read that are defined outside it, each once.
  // Computed once per block, bottom up: walking each nested subtree from every block
  // around it was quadratic in the depth (an elif chain of n branches nests n deep).
  const std::vector<const Value*>& free_values(const Block* b) {
    auto it = free_values_.find(b);
    if (it != free_values_.end()) return it->second;
    std::unordered_set<const Value*> defined(b->params().begin(), b->params().end());
    for (const Node* n : *b) defined.insert(n->outputs().begin(), n->outputs().end());
    std::unordered_set<const Value*> seen;
    std::vector<const Value*> out;
    auto add = [&](const Value* v) {
      if (!defined.count(v) && seen.insert(v).second) out.push_back(v);
    };
    for (const Node* n : *b) {
      for (const Value* v : n->inputs()) add(v);
      for (const Block* nb : n->blocks()) {
        for (const Value* v : free_values(nb)) add(v);
      }
    }
    for (const Value* v : b->returns()) add(v);
    // References into the map stay valid as it grows (its nodes do not move).
    return free_values_.emplace(b, std::move(out)).first->second;
  }

  LastUses last_uses(const Block* b) {
    LastUses result;
    std::unordered_set<const Value*> defined_here;
    for (const Value* p : b->params()) defined_here.insert(p);
    for (const Node* n : *b) {
      for (const Value* o : n->outputs()) defined_here.insert(o);
    }
    std::unordered_set<const Value*> seen;
    for (const Value* v : b->returns()) {
      if (defined_here.count(v) && seen.insert(v).second) result.dies_at_return.insert(v);
    }
    for (const Node* n = b->return_node()->prev(); n != b->param_node(); n = n->prev()) {
      bool direct = n->blocks().empty() || n->op() == OpId::FusionGroup;
      // An output nothing reads (the indices of a max whose values alone are used)
      // dies as soon as it is made.
      for (const Value* o : n->outputs()) {
        if (!o->has_uses()) (direct ? result.direct : result.nested)[n].push_back(o);
      }
      for (const Value* v : n->inputs()) {
        if (defined_here.count(v) && seen.insert(v).second) {
          (direct ? result.direct : result.nested)[n].push_back(v);
        }
      }
      for (const Block* nb : n->blocks()) {
        for (const Value* v : free_values(nb)) {
          if (defined_here.count(v) && seen.insert(v).second) result.nested[n].push_back(v);
        }
      }
    }
    return result;
  }

  std::vector<uint32_t> freeable(const std::vector<const Value*>& values) {
    std::vector<uint32_t> out;
    for (const Value* v : values) {
      uint32_t r = reg(v);
      if (!constant_regs_.count(r) && !pinned_regs_.count(r)) out.push_back(r);
    }
    return out;
  }

  void set_frees(size_t inst, const std::vector<uint32_t>& regs) {
    Instruction& i = code_.instructions_[inst];
    i.frees = add_list(regs);
    i.num_frees = static_cast<uint32_t>(regs.size());
  }

  void emit_free(const std::vector<const Value*>& values, const Node* node) {
    std::vector<uint32_t> regs = freeable(values);
    if (regs.empty()) return;
    Instruction inst;
    inst.kind = Instruction::Kind::Free;
    inst.node = node;
    size_t i = emit(inst, {}, {});
    set_frees(i, regs);
  }

  void compile_block(const Block* b) {
    LastUses lu = last_uses(b);
    for (const Node* n : *b) {
      compile_node(n, lu);
      auto nested = lu.nested.find(n);
      if (nested != lu.nested.end()) emit_free(nested->second, n);
    }
  }

  void compile_node(const Node* n, const LastUses& lu) {
    switch (n->op()) {
      case OpId::Constant: {
        uint32_t r = reg(n->output());
        constant_regs_.insert(r);
        code_.constants_.emplace_back(r, n->attr("value"));
        return;
      }
      case OpId::If:
        return compile_if(n);
      case OpId::Loop:
        return compile_loop(n);
      case OpId::GradOf:
        return compile_grad_of(n);
      default:
        break;
    }
    Instruction inst;
    inst.node = n;
    std::vector<uint32_t> ins, outs;
    for (const Value* v : n->inputs()) ins.push_back(reg(v));
    for (const Value* v : n->outputs()) outs.push_back(reg(v));
    if (n->op() == OpId::CallFunction) {
      inst.kind = Instruction::Kind::Call;
      inst.callee = static_cast<Function*>(&n->attr("fn").to_object());
    } else if (n->op() == OpId::RaiseException) {
      inst.kind = Instruction::Kind::Raise;
    } else {
      inst.kind = Instruction::Kind::Op;
      inst.fn = prim_kernel(n->op());
      if (n->info().has(opflags::NUMS)) prewrap_number_constants(n, ins);
      if (n->op() == OpId::MakeClosure) {
        uint32_t r = fresh_register();
        constant_regs_.insert(r);
        code_.constants_.emplace_back(r, n->attr("fn"));
        ins.push_back(r);
      }
      if (n->op() == OpId::FusionGroup) {
        // The compiled group travels as a constant last input (runtime/fusion.h).
        uint32_t r = fresh_register();
        constant_regs_.insert(r);
        code_.constants_.emplace_back(r, compile_fusion_group(n));
        ins.push_back(r);
        inst.fn = &run_fusion_group;
      }
      if (n->op() == OpId::TupleIndex) {
        // The index attribute travels as a constant register.
        uint32_t r = fresh_register();
        constant_regs_.insert(r);
        code_.constants_.emplace_back(r, n->attr("index"));
        ins.push_back(r);
      }
      if (!inst.fn) {
        inst.fn = lookup_kernel(DeviceType::CPU, n->op()).fn;
        inst.dispatch = true;
      }
      TSL_INTERNAL_ASSERT(inst.fn != nullptr, "no CPU kernel for ", n->info().name);
    }
    if (code_.eager_ && inst.kind == Instruction::Kind::Call) {
      inst.record = true;  // cached per callee (Function::gradient_cache)
    } else if (code_.eager_ &&
               (n->op() == OpId::FusionGroup || autodiff::derivative_rule(n->op()) ||
                autodiff::is_inplace_update(n->op()))) {
      inst.record = true;
      inst.site = static_cast<uint32_t>(code_.eager_sites_.size());
      code_.eager_sites_.push_back(std::make_shared<autograd::EagerSite>());
    }
    size_t i = emit(inst, ins, outs);
    auto direct = lu.direct.find(n);
    if (direct != lu.direct.end()) set_frees(i, freeable(direct->second));
  }

  // `x * 2.0`: a Python number given for a Tensor parameter is wrapped into a 0-dim
  // tensor on every call (see wrap_number). When the number is a constant, wrap it
  // once here: the kernel sees the same wrapped tensor and skips an allocation per
  // run (half the time of a small op). Kernels never write to or return a wrapped
  // number, so sharing it between runs is safe.
  void prewrap_number_constants(const Node* n, std::vector<uint32_t>& ins) {
    const FunctionSchema& schema = schema_of(n->op());
    for (size_t i = 0; i < ins.size() && i < schema.arguments.size(); ++i) {
      if (schema.arguments[i].type->kind() != TypeKind::Tensor) continue;
      const Node* def = n->input(i)->node();
      if (def->op() != OpId::Constant || !def->attr("value").is_number()) continue;
      uint32_t r = fresh_register();
      constant_regs_.insert(r);
      code_.constants_.emplace_back(r, IValue(wrap_number(def->attr("value"))));
      ins[i] = r;
    }
  }

  // A register that holds no Value of the graph (loop condition, constants).
  uint32_t fresh_register() { return num_registers_++; }

  void move_block_returns(const Block* b, const std::vector<Value*>& targets, const Node* n) {
    // Returns defined inside the block die here: move them. Others (values of outer
    // blocks, constants) are copied.
    std::unordered_set<const Value*> defined;
    for (const Value* p : b->params()) defined.insert(p);
    for (const Node* m : *b) {
      for (const Value* o : m->outputs()) defined.insert(o);
    }
    std::unordered_map<const Value*, int> remaining;
    for (const Value* r : b->returns()) remaining[r]++;
    for (size_t k = 0; k < targets.size(); ++k) {
      const Value* r = b->returns()[k];
      bool last = --remaining[r] == 0;
      emit_transfer(r, targets[k], defined.count(r) && last, n);
    }
  }

  // `if cond: then_part() else: else_part()` as a conditional jump around the two.
  template <typename Then, typename Else>
  void compile_conditional(const Node* n, uint32_t cond, Then then_part, Else else_part) {
    Instruction jf;
    jf.kind = Instruction::Kind::JumpIfFalse;
    jf.node = n;
    size_t jf_index = emit(jf, {cond}, {});
    then_part();
    Instruction jmp;
    jmp.kind = Instruction::Kind::Jump;
    jmp.node = n;
    size_t jmp_index = emit(jmp, {}, {});
    code_.instructions_[jf_index].target = static_cast<int32_t>(code_.instructions_.size());
    else_part();
    code_.instructions_[jmp_index].target = static_cast<int32_t>(code_.instructions_.size());
  }

  void compile_if(const Node* n) {
    auto branch = [&](size_t b) {
      return [this, n, b] {
        compile_block(n->block(b));
        move_block_returns(n->block(b), n->outputs(), n);
      };
    };
    compile_conditional(n, reg(n->input(0)), branch(0), branch(1));
  }

  // GradOf runs its block when some incoming gradient is defined; otherwise its
  // outputs are undefined tensors (zero gradients). See ir/autodiff/differentiate.h.
  void compile_grad_of(const Node* n) {
    std::vector<uint32_t> ins;
    for (const Value* v : n->inputs()) ins.push_back(reg(v));
    uint32_t cond = fresh_register();
    Instruction test;
    test.kind = Instruction::Kind::Op;
    test.node = n;
    test.fn = lookup_kernel(DeviceType::CPU, OpId::AnyDefined).fn;
    emit(test, ins, {cond});
    auto run_block = [&] {
      compile_block(n->block(0));
      move_block_returns(n->block(0), n->outputs(), n);
    };
    auto undefined_outputs = [&] {
      for (const Value* o : n->outputs()) {
        Instruction undef;
        undef.kind = Instruction::Kind::Op;
        undef.node = n;
        undef.fn = &undefined_tensor;
        emit(undef, {}, {reg(o)});
      }
    };
    compile_conditional(n, cond, run_block, undefined_outputs);
  }

  void compile_loop(const Node* n) {
    const Block* body = n->block(0);
    size_t carried = n->inputs().size() - 2;
    // The trip counter lives in the body's first parameter; the condition in a
    // register of its own.
    uint32_t trip = reg(body->params()[0]);
    // LoopIncrement reads the counter after the body: its last use in the body is
    // never its last use.
    pinned_regs_.insert(trip);
    uint32_t cond = fresh_register();
    uint32_t zero = fresh_register();
    constant_regs_.insert(zero);
    code_.constants_.emplace_back(zero, IValue(int64_t{0}));
    Instruction copy;
    copy.kind = Instruction::Kind::Copy;
    copy.node = n;
    emit(copy, {zero}, {trip});
    emit(copy, {reg(n->input(1))}, {cond});
    for (size_t k = 0; k < carried; ++k) {
      emit_transfer(n->input(k + 2), body->params()[k + 1], false, n);
    }
    Instruction test;
    test.kind = Instruction::Kind::LoopTest;
    test.node = n;
    size_t test_index = emit(test, {trip, reg(n->input(0)), cond}, {});
    compile_block(body);
    // Carried values: when a return is another carried parameter (a swap), go
    // through temporaries so that no parameter is overwritten before it is read.
    bool hazard = false;
    for (size_t k = 0; k < carried; ++k) {
      const Value* r = body->returns()[k + 1];
      for (size_t j = 0; j < carried; ++j) hazard |= (j != k && r == body->params()[j + 1]);
    }
    emit_transfer(reg(body->returns()[0]), cond, false, n);
    if (!hazard) {
      move_block_returns_subset(body, n, 1);
    } else {
      std::vector<uint32_t> temps;
      for (size_t k = 0; k < carried; ++k) {
        uint32_t t = fresh_register();
        temps.push_back(t);
        emit(copy, {reg(body->returns()[k + 1])}, {t});
      }
      Instruction mv;
      mv.kind = Instruction::Kind::Move;
      mv.node = n;
      for (size_t k = 0; k < carried; ++k) emit(mv, {temps[k]}, {reg(body->params()[k + 1])});
    }
    Instruction inc;
    inc.kind = Instruction::Kind::LoopIncrement;
    inc.node = n;
    emit(inc, {trip}, {});
    Instruction back;
    back.kind = Instruction::Kind::Jump;
    back.node = n;
    back.target = static_cast<int32_t>(test_index);
    emit(back, {}, {});
    code_.instructions_[test_index].target = static_cast<int32_t>(code_.instructions_.size());
    for (size_t k = 0; k < carried; ++k) {
      emit_transfer(body->params()[k + 1], n->output(k), true, n);
    }
  }

  // Moves the body's returns from index `first` on into the matching parameters.
  void move_block_returns_subset(const Block* body, const Node* n, size_t first) {
    std::unordered_set<const Value*> defined;
    for (const Node* m : *body) {
      for (const Value* o : m->outputs()) defined.insert(o);
    }
    std::unordered_map<const Value*, int> remaining;
    for (size_t k = first; k < body->returns().size(); ++k) remaining[body->returns()[k]]++;
    for (size_t k = first; k < body->returns().size(); ++k) {
      const Value* r = body->returns()[k];
      bool last = --remaining[r] == 0;
      emit_transfer(r, body->params()[k], defined.count(r) && last, n);
    }
  }

  Code& code_;
  std::unordered_map<const Value*, uint32_t> registers_;
  std::unordered_set<uint32_t> constant_regs_;
  std::unordered_set<uint32_t> pinned_regs_;  // never freed early (loop trip counters)
  uint32_t num_registers_ = 0;
  std::vector<std::string> names_;  // by register, for dump()
  std::unordered_map<const Block*, std::vector<const Value*>> free_values_;
};

Code::Code(std::shared_ptr<const Graph> graph, bool eager) : eager_(eager) {
  CodeBuilder(*this).build(std::move(graph));
  // Top-level code runs once: nothing to plan from.
  if (!eager) memory_planner_ = std::make_unique<MemoryPlanner>();
}

Code::Code(std::shared_ptr<const Graph> f, std::shared_ptr<const Graph> df, size_t num_real_outputs,
           size_t num_captures)
    : memory_planner_(std::make_unique<MemoryPlanner>()) {
  CodeBuilder(*this).build_gradient(std::move(f), std::move(df), num_real_outputs, num_captures);
}

Code::~Code() = default;

namespace {

// "r3(%x)"
std::string register_text(const std::vector<std::string>& names, uint32_t r) {
  std::string s = "r" + std::to_string(r);
  if (!names[r].empty()) s += "(" + names[r] + ")";
  return s;
}

// The op of an Op instruction. A GradOf node compiles to a test whether any
// incoming gradient is defined and, when none is, undefined outputs.
std::string op_text(const Instruction& inst) {
  if (inst.fn == &undefined_tensor) return std::string(op_info(OpId::Undefined).name);
  if (inst.node->op() == OpId::GradOf) return std::string(op_info(OpId::AnyDefined).name);
  return std::string(inst.node->info().name);
}

// "   # grad of tanh (line 3)" after a GradOf's test, so the backward reads as the
// forward's ops in reverse.
std::string note_text(const Instruction& inst) {
  const Node* n = inst.node;
  // The test of a backward branched on its incoming gradient (Note [A backward for a
  // defined gradient]); its GradOf blocks are inlined below it.
  if (n->op() == OpId::AnyDefined && n->inputs().size() == 1 &&
      n->input(0)->node()->is_param_node() && n->output()->uses().size() == 1 &&
      n->output()->uses()[0].user->op() == OpId::If)
    return "   # a defined incoming gradient: the backward, its GradOf blocks inlined; else "
           "zero gradients";
  if (n->op() != OpId::GradOf || inst.fn == &undefined_tensor || !n->has_attr("op")) return "";
  std::string s = "   # grad of " + n->attr("op").to_str();
  if (n->has_attr("line")) s += " (line " + std::to_string(n->attr("line").to_int()) + ")";
  return s;
}

}  // namespace

std::string Code::dump() const {
  std::ostringstream out;
  auto reg = [&](uint32_t r) {
    return r == kNoRegister ? std::string("_ (unused)") : register_text(register_names_, r);
  };
  auto regs = [&](const uint32_t* rs, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + reg(rs[i]);
    return s;
  };
  auto list = [&](uint32_t start, uint32_t n) { return regs(indices_.data() + start, n); };
  out << "code " << (name().empty() ? "<anonymous>" : name()) << ": " << num_registers_
      << " registers";
  if (num_stages() > 1) out << ", " << num_stages() << " stages";
  out << "\n";
  for (const auto& [r, v] : constants_) out << "  const " << reg(r) << " = " << v.repr() << "\n";
  for (size_t st = 0; st < stages_.size(); ++st) {
    const Stage& stage = stages_[st];
    if (num_stages() > 1) {
      out << "stage " << st << " (" << stage.graph->name() << ")";
      if (st == 0) out << ": runs the forward; the captures stay for stage 1\n";
      if (st == 1) out << ": runs the backward on the output gradients and the captures\n";
    }
    const auto& ins = stage.input_registers;
    out << "  inputs: " << (ins.empty() ? "(none)" : regs(ins.data(), ins.size())) << "\n";
    if (st == 1) {
      out << "  captures: " << regs(capture_registers_.data(), capture_registers_.size()) << "\n";
    }
    for (uint32_t pc = stage.begin; pc < stage.end; ++pc) {
      const Instruction& inst = instructions_[pc];
      out << "  " << pc << ": ";
      switch (inst.kind) {
        case Instruction::Kind::Op:
          out << list(inst.outputs, inst.num_outputs) << (inst.num_outputs ? " = " : "")
              << op_text(inst) << "(" << list(inst.inputs, inst.num_inputs) << ")"
              << note_text(inst);
          break;
        case Instruction::Kind::Call:
          out << list(inst.outputs, inst.num_outputs) << (inst.num_outputs ? " = " : "") << "call "
              << inst.callee->name() << "(" << list(inst.inputs, inst.num_inputs) << ")";
          break;
        case Instruction::Kind::Copy:
          out << list(inst.outputs, 1) << " = copy " << list(inst.inputs, 1);
          break;
        case Instruction::Kind::Move:
          out << list(inst.outputs, 1) << " = move " << list(inst.inputs, 1);
          break;
        case Instruction::Kind::JumpIfFalse:
          out << "if not " << list(inst.inputs, 1) << " goto " << inst.target;
          break;
        case Instruction::Kind::Jump:
          out << "goto " << inst.target;
          break;
        case Instruction::Kind::LoopTest:
          out << "if not (" << list(inst.inputs, 1) << " < " << list(inst.inputs + 1, 1) << " and "
              << list(inst.inputs + 2, 1) << ") goto " << inst.target;
          break;
        case Instruction::Kind::LoopIncrement:
          out << list(inst.inputs, 1) << " += 1";
          break;
        case Instruction::Kind::Raise:
          out << "raise " << list(inst.inputs, inst.num_inputs);
          break;
        case Instruction::Kind::Free:
          out << "free";
          break;
      }
      if (inst.num_frees) {
        out << (inst.kind == Instruction::Kind::Free ? " " : "   ; free ")
            << list(inst.frees, inst.num_frees);
      }
      out << "\n";
    }
    out << "  return " << regs(stage.output_registers.data(), stage.output_registers.size());
    if (st == 0 && num_stages() > 1) {
      out << "   ; keep " << regs(capture_registers_.data(), capture_registers_.size())
          << " for stage 1";
    }
    out << "\n";
  }
  return out.str();
}

// ---- Running Code ---------------------------------------------------------------------

InterpreterState::InterpreterState(const Code& code)
    : code_(code), registers_(code.num_registers()) {
  for (const auto& [r, v] : code.constants_) registers_[r] = v;
}

InterpreterState::InterpreterState(const InterpreterState& other)
    : code_(other.code_), registers_(other.registers_), next_stage_(other.next_stage_) {}

InterpreterState::~InterpreterState() {
  if (memory_) code_.memory_planner_->abandon_run(std::move(memory_));
}

std::vector<IValue> InterpreterState::run_stage(std::vector<IValue> inputs) {
  TSL_INTERNAL_ASSERT(next_stage_ < code_.stages_.size(), "stage ", next_stage_, " of ",
                      code_.name(), " (", code_.stages_.size(),
                      " stages) already ran: clone the state to run a stage again");
  const Code::Stage& stage = code_.stages_[next_stage_++];
  TSL_INTERNAL_ASSERT(inputs.size() == stage.input_registers.size(), "wrong number of inputs to ",
                      stage.graph->name(), ": ", inputs.size(), " for ",
                      stage.input_registers.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint32_t r = stage.input_registers[i];
    if (r != kNoRegister) registers_[r] = std::move(inputs[i]);
  }
  inputs.clear();  // an unused input dies now, not with the caller's vector
  if (next_stage_ == 1 && code_.memory_planner_) memory_ = code_.memory_planner_->begin_run(code_);
  {
    MemoryScope scope(memory_.get());
    execute(static_cast<int32_t>(stage.begin), static_cast<int32_t>(stage.end));
  }
  std::vector<IValue> outputs;
  outputs.reserve(stage.output_registers.size());
  for (size_t i = 0; i < stage.output_registers.size(); ++i) {
    IValue& r = registers_[stage.output_registers[i]];
    outputs.push_back(stage.output_moves[i] ? std::move(r) : r);
  }
  if (memory_ && next_stage_ == code_.stages_.size()) {
    code_.memory_planner_->finish_run(std::move(memory_));
    memory_.reset();
    if (Profiler* profiler = active_profiler()) {
      profiler->note_memory_plan(code_.memory_planner_->plan());
    }
  }
  return outputs;
}

std::vector<IValue> InterpreterState::run(std::vector<IValue> inputs) {
  TSL_INTERNAL_ASSERT(code_.stages_.size() == 1, "run() on ", code_.name(), " with ",
                      code_.stages_.size(), " stages: use run_stage()");
  return run_stage(std::move(inputs));
}

void InterpreterState::rethrow_with_location(const Instruction& inst) {
  const SourceRange range = inst.node ? inst.node->range() : SourceRange{};
  try {
    throw;
  } catch (SourceError&) {
    throw;
  } catch (const InternalError&) {
    throw;
  } catch (const Error& e) {
    throw SourceError(SourceError::Kind::Runtime, range, e.what());
  } catch (const std::bad_alloc&) {
    throw SourceError(SourceError::Kind::Runtime, range, "out of memory");
  }
}

namespace {

std::atomic<bool>& result_type_check_flag() {
#ifdef TSL_SANITIZE
  static std::atomic<bool> on = true;
#else
  static std::atomic<bool> on = [] {
    const char* v = std::getenv("TSL_CHECK_TYPES");
    return v && *v && std::string_view(v) != "0";
  }();
#endif
  return on;
}

// A result whose static type names a dtype holds a tensor of that dtype, or a broken
// dtype rule would go unseen until it made a wrong number.
void check_result_types(const Node& node, const IValue* regs, const uint32_t* outs,
                        uint32_t count) {
  for (uint32_t k = 0; k < count && k < node.outputs().size(); ++k) {
    std::optional<DType> want = node.output(k)->type()->tensor_dtype();
    const IValue& r = regs[outs[k]];
    if (!want || !r.is_tensor() || !r.tensor_impl()) continue;
    TSL_INTERNAL_ASSERT(r.tensor_impl()->dtype() == *want, node.info().name, " at ",
                        node.range().location(), " returned a ",
                        scalar_type_name(r.tensor_impl()->dtype()),
                        " tensor where its static type says ", scalar_type_name(*want));
  }
}

}  // namespace

// Runs the instructions [begin, end) of one stage. Jumps stay inside the stage.
void InterpreterState::execute(int32_t begin, int32_t end) {
  const Instruction* insts = code_.instructions_.data();
  const uint32_t* idx = code_.indices_.data();
  IValue* regs = registers_.data();
  const int32_t n = end;
  int32_t pc = begin;
  MemoryRun* trace = memory_ && memory_->traces() ? memory_.get() : nullptr;
  const uint32_t stage = static_cast<uint32_t>(next_stage_ - 1);
  const bool check_types = result_type_checks_enabled();
  while (pc < n) {
    const Instruction& inst = insts[pc];
    if (trace) trace->at(pc, stage);
    try {
      switch (inst.kind) {
        case Instruction::Kind::Op: {
          KernelArgs args(regs, idx + inst.inputs, inst.num_inputs, idx + inst.outputs,
                          inst.num_outputs);
          Profiler* profiler = active_profiler();
          auto t0 =
              profiler ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
          if (inst.record && autograd::needs_recording(args)) {
            if (autodiff::is_inplace_update(inst.node->op())) {
              autograd::record_inplace(*inst.node, *code_.eager_sites_[inst.site], args);
            } else {
              autograd::record_op(*inst.node, *code_.eager_sites_[inst.site], args);
            }
          } else if (inst.dispatch && device_tensors_created()) {
            dispatch_kernel(inst.node->op(), inst.fn, args)(args);
          } else {
            inst.fn(args);
          }
          if (trace) trace->name_outputs(regs, idx + inst.outputs, inst.num_outputs, code_);
          if (check_types)
            check_result_types(*inst.node, regs, idx + inst.outputs, inst.num_outputs);
          if (profiler) {
            auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now() - t0);
            profiler->record(inst.node, static_cast<uint64_t>(ns.count()));
          }
          check_interrupt();
          break;
        }
        case Instruction::Kind::Copy:
          regs[idx[inst.outputs]] = regs[idx[inst.inputs]];
          break;
        case Instruction::Kind::Move:
          regs[idx[inst.outputs]] = std::move(regs[idx[inst.inputs]]);
          break;
        case Instruction::Kind::JumpIfFalse:
          if (!regs[idx[inst.inputs]].to_bool()) {
            pc = inst.target;
            continue;
          }
          break;
        case Instruction::Kind::Jump:
          if (inst.target <= pc) check_interrupt();
          pc = inst.target;
          continue;
        case Instruction::Kind::LoopTest: {
          const uint32_t* in = idx + inst.inputs;
          if (!(regs[in[0]].to_int() < regs[in[1]].to_int() && regs[in[2]].to_bool())) {
            pc = inst.target;
            continue;
          }
          break;
        }
        case Instruction::Kind::LoopIncrement: {
          IValue& r = regs[idx[inst.inputs]];
          r = IValue(r.to_int() + 1);
          break;
        }
        case Instruction::Kind::Call: {
          check_interrupt();
          if (inst.record) {
            KernelArgs args(regs, idx + inst.inputs, inst.num_inputs, idx + inst.outputs,
                            inst.num_outputs);
            if (autograd::needs_recording(args)) {
              try {
                autograd::record_call(*inst.callee, *inst.node, inst.callee->gradient_cache(),
                                      args);
              } catch (SourceError& e) {
                e.push_frame({code_.graph().name(), inst.node->range()});
                throw;
              }
              break;
            }
          }
          std::vector<IValue> ins;
          ins.reserve(inst.num_inputs);
          for (uint32_t i = 0; i < inst.num_inputs; ++i) ins.push_back(regs[idx[inst.inputs + i]]);
          std::vector<IValue> outs;
          try {
            outs = inst.callee->run(std::move(ins));
          } catch (SourceError& e) {
            e.push_frame({code_.graph(next_stage_ - 1).name(), inst.node->range()});
            throw;
          }
          for (uint32_t i = 0; i < inst.num_outputs; ++i)
            regs[idx[inst.outputs + i]] = std::move(outs[i]);
          if (trace) trace->name_outputs(regs, idx + inst.outputs, inst.num_outputs, code_);
          break;
        }
        case Instruction::Kind::Raise:
          throw SourceError(SourceError::Kind::Runtime, inst.node->range(),
                            regs[idx[inst.inputs]].to_str());
        case Instruction::Kind::Free:
          break;
      }
    } catch (...) {
      rethrow_with_location(inst);
    }
    for (uint32_t i = 0; i < inst.num_frees; ++i) regs[idx[inst.frees + i]] = IValue();
    ++pc;
  }
}

// ---- Function ---------------------------------------------------------------------------

namespace {

std::atomic<bool>& optimization_flag() {
  static std::atomic<bool> on = [] {
    std::string_view no_opt = std::getenv("TSL_NO_OPT") ? std::getenv("TSL_NO_OPT") : "";
    return no_opt.empty() || no_opt == "0";
  }();
  return on;
}

bool switches_grad_mode(const Block* b) {
  for (const Node* n : *b) {
    if (n->op() == OpId::set_grad_enabled) return true;
    for (const Block* nb : n->blocks()) {
      if (switches_grad_mode(nb)) return true;
    }
  }
  return false;
}

// The graph Code is compiled from; see Note [Optimizing compiled functions]. Eager
// code that switches grad mode (`with no_grad():`) runs as written: merging `x * 2`
// inside the block with one outside would change which result requires grad.
std::shared_ptr<const Graph> graph_to_compile(const std::shared_ptr<Graph>& graph, bool eager) {
  if (!optimization_enabled()) return graph;
  if (eager && switches_grad_mode(graph->block())) return graph;
  std::shared_ptr<Graph> copy = graph->clone();
  run_pipeline(*copy, eager ? PipelineKind::Eager : PipelineKind::Function);
  return copy;
}

}  // namespace

bool optimization_enabled() { return optimization_flag().load(std::memory_order_relaxed); }

bool result_type_checks_enabled() {
  return result_type_check_flag().load(std::memory_order_relaxed);
}

void set_result_type_checks(bool on) { result_type_check_flag().store(on); }

void set_optimization_enabled(bool on) { optimization_flag().store(on); }

void inline_function_calls(Graph& g) {
  inline_calls(g, [](const Node* call) {
    return &static_cast<Function&>(call->attr("fn").to_object()).graph();
  });
}

Function::Function(std::string name, std::shared_ptr<Graph> graph)
    : name_(std::move(name)), graph_(std::move(graph)) {}

std::shared_ptr<const Code> compile_gradient(const autodiff::Gradient& gradient) {
  std::shared_ptr<Graph> df = gradient.df;
  if (optimization_enabled()) {
    size_t seeds = df->inputs().size() - gradient.num_captures;
    if (auto branched = autodiff::branch_on_defined_seed(*df, seeds)) df = std::move(branched);
  }
  return std::make_shared<const Code>(graph_to_compile(gradient.f, false),
                                      graph_to_compile(df, false), gradient.num_real_outputs,
                                      gradient.num_captures);
}

const Code& Function::code() {
  std::call_once(compiled_,
                 [&] { code_ = std::make_unique<Code>(graph_to_compile(graph_, eager_), eager_); });
  return *code_;
}

autograd::EagerSite& Function::gradient_cache() {
  if (!gradient_cache_) gradient_cache_ = std::make_shared<autograd::EagerSite>();
  return *gradient_cache_;
}

std::vector<IValue> Function::run(std::vector<IValue> inputs) {
  InterpreterState state(code());
  return state.run(std::move(inputs));
}

}  // namespace tsl
