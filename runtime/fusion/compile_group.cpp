// Compiling a FusionGroup's block: the straight-line program over chunk registers that
// the fused loop runs, and the list of kernels of the fallback. See Note [Running a
// FusionGroup] in fusion.h.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "runtime/exec/interpreter.h"
#include "runtime/fusion/program.h"

namespace tsl::fusion {
namespace {

bool constant_none(const Value* v) {
  return v->node()->op() == OpId::Constant && v->node()->attr("value").is_none();
}

class GroupCompiler {
 public:
  explicit GroupCompiler(const Node* n) : block_(n->block(0)) {}

  IntrusivePtr<FusedGroup> compile() {
    group_ = IntrusivePtr<FusedGroup>(new FusedGroup());
    ensure_kernels_registered();
    compile_fallback();
    group_->fusable = block_->params().size() <= 64 && compile_fused();
    return group_;
  }

 private:
  void compile_fallback() {
    FusedGroup& g = *group_;
    g.num_inputs = static_cast<uint32_t>(block_->params().size());
    for (const Value* p : block_->params()) slot(p);
    for (const Node* m : *block_) {
      if (m->op() == OpId::Constant) {
        g.constants.emplace_back(slot(m->output()), m->attr("value"));
        continue;
      }
      FallbackStep s;
      // Structural ops (dtype) have no kernel in the registry: the interpreter's own.
      s.op = m->op();
      s.dispatch = !m->info().has(opflags::PRIM);
      s.fn = s.dispatch ? lookup_kernel(DeviceType::CPU, m->op()).fn : prim_kernel(m->op());
      TSL_INTERNAL_ASSERT(s.fn != nullptr, "no CPU kernel for ", m->info().name);
      for (const Value* v : m->inputs()) s.ins.push_back(slot(v));
      for (const Value* v : m->outputs()) s.outs.push_back(slot(v));
      g.fallback.push_back(std::move(s));
    }
    for (const Value* r : block_->returns()) g.return_slots.push_back(slot(r));
    g.num_slots = static_cast<uint32_t>(slots_.size());
  }

  uint32_t slot(const Value* v) {
    auto it = slots_.find(v);
    if (it != slots_.end()) return it->second;
    uint32_t s = static_cast<uint32_t>(slots_.size());
    slots_.emplace(v, s);
    return s;
  }

  // A tensor or scalar operand; false when the program cannot read it.
  bool operand(const Value* v, Operand& out) {
    const Node* def = v->node();
    if (def == block_->param_node()) {
      out.kind = Operand::Kind::Input;
      out.index = static_cast<uint32_t>(v->offset());
      return true;
    }
    if (def->op() == OpId::Constant) {
      const IValue& c = def->attr("value");
      if (c.is_none()) return true;                     // Kind::None
      if (!c.is_int() && !c.is_double()) return false;  // bool alphas are errors
      out.kind = Operand::Kind::Imm;
      out.imm_is_int = c.is_int();
      out.imm = c.to_double();
      return true;
    }
    if (auto a = aliases_.find(v); a != aliases_.end()) {
      out = a->second;
      return true;
    }
    auto it = value_steps_.find(v);
    if (it == value_steps_.end()) return false;
    out.kind = Operand::Kind::Reg;
    out.index = it->second;
    return true;
  }

  // The tensor operands: each present, a tensor or number, not all constants.
  bool tensor_operands_of(const Node* m, Step& s) {
    Operand* ops[] = {&s.a, &s.b, &s.c};
    size_t count = fused_info(s.op).operands;
    bool reads_tensor = false;
    for (size_t k = 0; k < count; ++k) {
      Operand& o = *ops[k];
      if (!operand(m->input(k), o) || o.kind == Operand::Kind::None) return false;
      if (o.kind == Operand::Kind::Input) {
        const TypePtr& t = block_->params()[o.index]->type();
        if (!t->is_tensor() && !t->is_number()) return false;
      }
      reads_tensor |= o.kind != Operand::Kind::Imm;
    }
    return reads_tensor;
  }

  // A scalar argument: a constant, None or a group input (checked at run time).
  bool scalar_operand(const Value* v, Operand& o) {
    if (!operand(v, o) || o.kind == Operand::Kind::Reg) return false;
    if (o.kind != Operand::Kind::Input) return true;
    const TypePtr& t = block_->params()[o.index]->type();
    return t->is_number() || t->kind() == TypeKind::Optional;
  }

  // The scalar arguments, which follow the tensor operands (FusedArgs of the row).
  bool scalar_arguments_of(const Node* m, Step& s) {
    const FusedOpInfo& f = fused_info(s.op);
    size_t k = f.operands;
    switch (f.args) {
      case FusedArgs::None:
        return true;
      case FusedArgs::Alpha:
      case FusedArgs::Slope:
        return scalar_operand(m->input(k), s.s0) && s.s0.kind != Operand::Kind::None;
      case FusedArgs::TrueDivision:
        return constant_none(m->input(k));  // only true division (rounding_mode=None)
      case FusedArgs::Bounds:
        // Both bounds None is an error (the fallback reports it); an input may be None.
        return scalar_operand(m->input(k), s.s0) && scalar_operand(m->input(k + 1), s.s1) &&
               (s.s0.kind != Operand::Kind::None || s.s1.kind != Operand::Kind::None);
      case FusedArgs::DType:
        return cast_target(m->input(k), s);
    }
    return false;
  }

  // Where a Cast's dtype comes from (Note [Conversions in the fused program]).
  bool cast_target(const Value* d, Step& s) {
    if (auto it = dtype_sources_.find(d); it != dtype_sources_.end()) {
      s.s1 = it->second;
      return true;
    }
    const Node* def = d->node();
    if (def->op() == OpId::Constant) {
      const IValue& c = def->attr("value");
      if (!c.is_dtype()) return false;
      s.has_dtype = true;
      s.dtype = c.to_dtype();
      return true;
    }
    if (def != block_->param_node() || d->type()->kind() != TypeKind::DType) return false;
    s.s0.kind = Operand::Kind::Input;
    s.s0.index = static_cast<uint32_t>(d->offset());
    return true;
  }

  bool compile_node(const Node* m) {
    if (m->op() == OpId::Constant) return true;
    if (m->op() == OpId::dtype) {
      // Decided per run from the operand's kind; it makes no step.
      Operand o;
      if (!operand(m->input(0), o) ||
          (o.kind != Operand::Kind::Reg && o.kind != Operand::Kind::Input))
        return false;
      dtype_sources_.emplace(m->output(), o);
      return true;
    }
    std::optional<FOp> op = fused_op_of(m->op());
    if (!op) return false;
    Step s;
    s.op = *op;
    const FusedOpInfo& f = fused_info(s.op);
    if (m->inputs().size() != f.operands + scalar_inputs(f.args)) return false;
    if (!tensor_operands_of(m, s) || !scalar_arguments_of(m, s)) return false;
    if (f.result == FusedResult::Cast && !is_returned(m->output())) {
      group_->cast_checks.push_back({s, static_cast<uint32_t>(group_->steps.size())});
      aliases_.emplace(m->output(), s.a);
      return true;
    }
    s.dst = static_cast<uint32_t>(group_->steps.size());
    value_steps_.emplace(m->output(), s.dst);
    group_->steps.push_back(s);
    return true;
  }

  bool is_returned(const Value* v) const {
    const auto& r = block_->returns();
    return std::find(r.begin(), r.end(), v) != r.end();
  }

  bool compile_fused() {
    for (const Node* m : *block_) {
      if (!compile_node(m)) return false;
    }
    for (const Value* r : block_->returns()) {
      if (auto d = dtype_sources_.find(r); d != dtype_sources_.end()) {
        group_->return_steps.push_back(FusedGroup::kNoStep);
        group_->return_dtypes.push_back(d->second);
        continue;
      }
      auto it = value_steps_.find(r);
      if (it == value_steps_.end()) return false;
      group_->return_steps.push_back(it->second);
      group_->return_dtypes.emplace_back();
    }
    return allocate_registers();
  }

  // Maps the program's values (one per step) onto few chunk registers: a register is
  // reused once its value is dead. A destination never shares a register with its
  // own operands (the scalar redo of the SIMD ops rereads the operand).
  bool allocate_registers() {
    FusedGroup& g = *group_;
    size_t n = g.steps.size();
    std::vector<size_t> last_use(n, 0);
    for (size_t i = 0; i < n; ++i) {
      last_use[i] = i;
      for (const Operand* o : {&g.steps[i].a, &g.steps[i].b, &g.steps[i].c, &g.steps[i].s1}) {
        if (o->kind == Operand::Kind::Reg) last_use[o->index] = i;
      }
    }
    // Outputs and the values whose dtypes are outputs live to the end.
    for (uint32_t r : g.return_steps) {
      if (r != FusedGroup::kNoStep) last_use[r] = n;
    }
    for (const Operand& o : g.return_dtypes) {
      if (o.kind == Operand::Kind::Reg) last_use[o.index] = n;
    }
    // A cast's operands live until its check.
    for (const FusedGroup::CastCheck& c : g.cast_checks) {
      for (const Operand* o : {&c.cast.a, &c.cast.s1}) {
        if (o->kind == Operand::Kind::Reg)
          last_use[o->index] = std::max<size_t>(last_use[o->index], c.before);
      }
    }
    std::vector<uint32_t> phys(n);
    std::vector<uint32_t> free_regs;
    uint32_t count = 0;
    for (size_t i = 0; i < n; ++i) {
      Step& s = g.steps[i];
      for (Operand* o : {&s.a, &s.b, &s.c, &s.s1}) {
        if (o->kind == Operand::Kind::Reg) o->index = phys[o->index];
      }
      if (free_regs.empty()) free_regs.push_back(count++);
      phys[i] = free_regs.back();
      free_regs.pop_back();
      s.dst = phys[i];
      // Values whose last use is this step die after it.
      for (size_t j = 0; j < i; ++j) {
        if (last_use[j] == i) free_regs.push_back(phys[j]);
      }
      if (last_use[i] == i) free_regs.push_back(phys[i]);
    }
    for (uint32_t r : g.return_steps)
      g.return_regs.push_back(r == FusedGroup::kNoStep ? FusedGroup::kNoStep : phys[r]);
    for (Operand& o : g.return_dtypes) {
      if (o.kind == Operand::Kind::Reg) o.index = phys[o.index];
    }
    for (FusedGroup::CastCheck& c : g.cast_checks) {
      for (Operand* o : {&c.cast.a, &c.cast.s1}) {
        if (o->kind == Operand::Kind::Reg) o->index = phys[o->index];
      }
    }
    g.num_registers = count;
    return count <= kMaxProgramRegisters;
  }

  const Block* block_;
  IntrusivePtr<FusedGroup> group_;
  std::unordered_map<const Value*, uint32_t> slots_;
  std::unordered_map<const Value*, uint32_t> value_steps_;   // the step computing a value
  std::unordered_map<const Value*, Operand> dtype_sources_;  // dtype(v): v's operand
  std::unordered_map<const Value*, Operand> aliases_;        // a Cast's value: its operand
};

}  // namespace

IntrusivePtr<FusedGroup> compile_group(const Node* n) { return GroupCompiler(n).compile(); }

}  // namespace tsl::fusion
