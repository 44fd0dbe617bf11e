// Code::dump(): the register program as text, for `:code f` and `tsl --dump=code`.
#include "runtime/exec/interpreter.h"

#include <sstream>

#include "runtime/exec/function.h"

namespace tsl {

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
  if (inst.fn == prim_kernel(OpId::Undefined)) return std::string(op_info(OpId::Undefined).name);
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
  if (n->op() != OpId::GradOf || inst.fn == prim_kernel(OpId::Undefined) || !n->has_attr("op")) return "";
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

}  // namespace tsl
