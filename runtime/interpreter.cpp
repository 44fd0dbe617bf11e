// Compiling graphs to register Code and running it. See Note [Compiling a graph to
// Code] in interpreter.h.
#include "runtime/interpreter.h"

#include <cstdlib>
#include <new>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/autodiff/derivatives.h"
#include "ir/passes/fuse_elementwise.h"
#include "ir/passes/pipeline.h"
#include "ir/schema.h"
#include "runtime/autograd/record.h"
#include "runtime/function.h"
#include "runtime/fusion.h"

namespace tsl {

std::atomic<bool> g_interrupt_requested{false};

namespace {

// ---- Kernels of the structural ops the interpreter runs as ordinary instructions.

void list_construct(KernelArgs& a) {
  std::vector<IValue> elems;
  elems.reserve(a.num_inputs());
  for (uint32_t i = 0; i < a.num_inputs(); ++i) elems.push_back(a.in(i));
  a.out(0) = IValue::list(std::move(elems));
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

KernelFn prim_kernel(OpId op) {
  switch (op) {
    case OpId::ListConstruct:
      return &list_construct;
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

}  // namespace

// ---- Building Code ------------------------------------------------------------------

class CodeBuilder {
 public:
  explicit CodeBuilder(Code& code) : code_(code) {}

  void build() {
    ensure_kernels_registered();
    autograd::install_eager_autograd();
    const Graph& g = *code_.graph_;
    for (const Value* in : g.inputs()) code_.input_registers_.push_back(reg(in));
    compile_block(g.block());
    std::unordered_set<uint32_t> seen;
    for (const Value* out : g.outputs()) {
      uint32_t r = reg(out);
      code_.output_registers_.push_back(r);
      // A register returned twice is copied for all but its last occurrence.
      code_.output_moves_.push_back(!constant_regs_.count(r));
    }
    for (int i = static_cast<int>(code_.output_registers_.size()) - 1; i >= 0; --i) {
      if (!seen.insert(code_.output_registers_[i]).second) code_.output_moves_[i] = false;
    }
    code_.num_registers_ = num_registers_;
    code_.register_names_.resize(num_registers_);
    for (auto& [v, r] : registers_) {
      code_.register_names_[r] =
          v->debug_name().empty() ? "%" + std::to_string(v->unique()) : "%" + v->debug_name();
    }
  }

 private:
  uint32_t reg(const Value* v) {
    auto it = registers_.find(v);
    if (it != registers_.end()) return it->second;
    uint32_t r = num_registers_++;
    registers_.emplace(v, r);
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

  static void collect_free_values(const Block* b, std::unordered_set<const Value*>& defined,
                                  std::vector<const Value*>& out) {
    for (const Value* p : b->params()) defined.insert(p);
    for (const Node* n : *b) {
      for (const Value* v : n->inputs()) {
        if (!defined.count(v)) out.push_back(v);
      }
      for (const Block* nb : n->blocks()) collect_free_values(nb, defined, out);
      for (const Value* o : n->outputs()) defined.insert(o);
    }
    for (const Value* v : b->returns()) {
      if (!defined.count(v)) out.push_back(v);
    }
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
      for (const Value* v : n->inputs()) {
        if (defined_here.count(v) && seen.insert(v).second) {
          bool direct = n->blocks().empty() || n->op() == OpId::FusionGroup;
          (direct ? result.direct : result.nested)[n].push_back(v);
        }
      }
      for (const Block* nb : n->blocks()) {
        std::unordered_set<const Value*> inner_defined;
        std::vector<const Value*> free_values;
        collect_free_values(nb, inner_defined, free_values);
        for (const Value* v : free_values) {
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
      if (!inst.fn) inst.fn = lookup_kernel(DeviceType::CPU, n->op()).fn;
      TSL_INTERNAL_ASSERT(inst.fn != nullptr, "no CPU kernel for ", n->info().name);
    }
    if (code_.eager_ && (inst.kind == Instruction::Kind::Call || n->op() == OpId::FusionGroup ||
                         autodiff::derivative_rule(n->op()))) {
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
};

Code::Code(std::shared_ptr<const Graph> graph, bool eager)
    : graph_(std::move(graph)), eager_(eager) {
  CodeBuilder(*this).build();
}

std::string Code::dump() const {
  std::ostringstream out;
  out << "code " << (graph_->name().empty() ? "<anonymous>" : graph_->name()) << ": "
      << num_registers_ << " registers\n";
  auto regs = [&](uint32_t start, uint32_t n) {
    std::string s;
    for (uint32_t i = 0; i < n; ++i) {
      if (i) s += ", ";
      uint32_t r = indices_[start + i];
      s += "r" + std::to_string(r);
      if (!register_names_[r].empty()) s += "(" + register_names_[r] + ")";
    }
    return s;
  };
  out << "  inputs: " << regs(0, 0);
  for (size_t i = 0; i < input_registers_.size(); ++i) {
    out << (i ? ", " : "") << "r" << input_registers_[i] << "("
        << register_names_[input_registers_[i]] << ")";
  }
  out << "\n";
  for (const auto& [r, v] : constants_) {
    out << "  const r" << r << " = " << v.repr() << "\n";
  }
  for (size_t pc = 0; pc < instructions_.size(); ++pc) {
    const Instruction& inst = instructions_[pc];
    out << "  " << pc << ": ";
    switch (inst.kind) {
      case Instruction::Kind::Op:
        out << regs(inst.outputs, inst.num_outputs) << (inst.num_outputs ? " = " : "")
            << inst.node->info().name << "(" << regs(inst.inputs, inst.num_inputs) << ")";
        break;
      case Instruction::Kind::Call:
        out << regs(inst.outputs, inst.num_outputs) << (inst.num_outputs ? " = " : "") << "call "
            << inst.callee->name() << "(" << regs(inst.inputs, inst.num_inputs) << ")";
        break;
      case Instruction::Kind::Copy:
        out << regs(inst.outputs, 1) << " = copy " << regs(inst.inputs, 1);
        break;
      case Instruction::Kind::Move:
        out << regs(inst.outputs, 1) << " = move " << regs(inst.inputs, 1);
        break;
      case Instruction::Kind::JumpIfFalse:
        out << "if not " << regs(inst.inputs, 1) << " goto " << inst.target;
        break;
      case Instruction::Kind::Jump:
        out << "goto " << inst.target;
        break;
      case Instruction::Kind::LoopTest:
        out << "if not (" << regs(inst.inputs, 1) << " < " << regs(inst.inputs + 1, 1) << " and "
            << regs(inst.inputs + 2, 1) << ") goto " << inst.target;
        break;
      case Instruction::Kind::LoopIncrement:
        out << regs(inst.inputs, 1) << " += 1";
        break;
      case Instruction::Kind::Raise:
        out << "raise " << regs(inst.inputs, inst.num_inputs);
        break;
      case Instruction::Kind::Free:
        out << "free";
        break;
    }
    if (inst.num_frees)
      out << (inst.kind == Instruction::Kind::Free ? " " : "   ; free ")
          << regs(inst.frees, inst.num_frees);
    out << "\n";
  }
  out << "  return ";
  for (size_t i = 0; i < output_registers_.size(); ++i) {
    out << (i ? ", " : "") << "r" << output_registers_[i];
  }
  out << "\n";
  return out.str();
}

// ---- Running Code ---------------------------------------------------------------------

InterpreterState::InterpreterState(const Code& code)
    : code_(code), registers_(code.num_registers()) {
  for (const auto& [r, v] : code.constants_) registers_[r] = v;
}

std::vector<IValue> InterpreterState::run(std::vector<IValue> inputs) {
  TSL_INTERNAL_ASSERT(inputs.size() == code_.input_registers_.size(), "wrong number of inputs to ",
                      code_.graph().name(), ": ", inputs.size(), " for ",
                      code_.input_registers_.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    registers_[code_.input_registers_[i]] = std::move(inputs[i]);
  execute();
  std::vector<IValue> outputs;
  outputs.reserve(code_.output_registers_.size());
  for (size_t i = 0; i < code_.output_registers_.size(); ++i) {
    IValue& r = registers_[code_.output_registers_[i]];
    outputs.push_back(code_.output_moves_[i] ? std::move(r) : r);
  }
  return outputs;
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

void InterpreterState::execute() {
  const Instruction* insts = code_.instructions_.data();
  const uint32_t* idx = code_.indices_.data();
  IValue* regs = registers_.data();
  const int32_t n = static_cast<int32_t>(code_.instructions_.size());
  int32_t pc = 0;
  while (pc < n) {
    const Instruction& inst = insts[pc];
    try {
      switch (inst.kind) {
        case Instruction::Kind::Op: {
          KernelArgs args(regs, idx + inst.inputs, inst.num_inputs, idx + inst.outputs,
                          inst.num_outputs);
          if (inst.record && autograd::needs_recording(args)) {
            autograd::record_op(*inst.node, *code_.eager_sites_[inst.site], args);
          } else {
            inst.fn(args);
          }
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
          if (inst.target <= pc && g_interrupt_requested.exchange(false))
            TSL_ERROR("KeyboardInterrupt");
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
          if (g_interrupt_requested.exchange(false)) TSL_ERROR("KeyboardInterrupt");
          if (inst.record) {
            KernelArgs args(regs, idx + inst.inputs, inst.num_inputs, idx + inst.outputs,
                            inst.num_outputs);
            if (autograd::needs_recording(args)) {
              try {
                autograd::record_call(*inst.callee, *inst.node, *code_.eager_sites_[inst.site],
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
            e.push_frame({code_.graph().name(), inst.node->range()});
            throw;
          }
          for (uint32_t i = 0; i < inst.num_outputs; ++i)
            regs[idx[inst.outputs + i]] = std::move(outs[i]);
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
  optimize(*copy);
  fuse_elementwise(*copy);
  verify(*copy);
  return copy;
}

}  // namespace

bool optimization_enabled() { return optimization_flag().load(std::memory_order_relaxed); }

void set_optimization_enabled(bool on) { optimization_flag().store(on); }

Function::Function(std::string name, std::shared_ptr<Graph> graph)
    : name_(std::move(name)), graph_(std::move(graph)) {}

const Code& Function::code() {
  std::call_once(compiled_,
                 [&] { code_ = std::make_unique<Code>(graph_to_compile(graph_, eager_), eager_); });
  return *code_;
}

std::vector<IValue> Function::run(std::vector<IValue> inputs) {
  InterpreterState state(code());
  return state.run(std::move(inputs));
}

}  // namespace tsl
