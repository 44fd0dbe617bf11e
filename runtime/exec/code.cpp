// Compiling a graph to register Code: registers, instructions, stages and the frees at
// last use. See Note [Compiling a graph to Code] in interpreter.h.
#include "runtime/exec/interpreter.h"

#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/autodiff/derivatives.h"
#include "ir/autodiff/functionalize.h"
#include "ir/schema.h"
#include "runtime/autograd/record.h"
#include "runtime/exec/function.h"
#include "runtime/fusion/fusion.h"

namespace tsl {

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
        // The compiled group travels as a constant last input (runtime/fusion/fusion.h).
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
        undef.fn = prim_kernel(OpId::Undefined);
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

}  // namespace tsl
