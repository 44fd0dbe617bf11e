// Running Code: InterpreterState executes a stage's instructions on its registers.
// See Note [Compiling a graph to Code] in interpreter.h.
#include "runtime/exec/interpreter.h"

#include <chrono>
#include <cstdlib>
#include <new>
#include <string_view>

#include "ir/autodiff/functionalize.h"
#include "runtime/autograd/record.h"
#include "runtime/exec/function.h"
#include "runtime/exec/profiler.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {

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

bool result_type_checks_enabled() {
  return result_type_check_flag().load(std::memory_order_relaxed);
}

void set_result_type_checks(bool on) { result_type_check_flag().store(on); }

}  // namespace tsl
