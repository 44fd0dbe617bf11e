// The register interpreter: a Graph compiled once into `Code` (a flat instruction
// list over registers, control flow as jumps, each value freed at its last use) and
// run by `InterpreterState`. See Note [Compiling a graph to Code].
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "runtime/kernels/kernel.h"
#include "runtime/memory/planner.h"
#include "runtime/tensor/interrupt.h"

namespace tsl {

class Function;

// Note [Compiling a graph to Code]
// Every Value gets a register. A node becomes one instruction holding the kernel
// pointer and the register lists of its inputs and outputs; Constant nodes become
// registers filled once when the state is made (no instruction at all). If becomes
// a conditional jump around the two blocks, whose returns are moved into the If's
// output registers; Loop becomes a test at the head, the body, moves of the carried
// values and a jump back. A backward scan of each block finds the last use of every
// value defined in it: the instruction of that use frees the register right after it
// runs (or, when the last use is inside a nested block, a Free instruction right
// after the whole If/Loop does), so intermediates live no longer than they must.
// Registers of values read by a block's return and dead afterwards are moved, not
// copied.
//
// A gradient (ir/autodiff's split: `f` returns its real outputs then the captures,
// `df` takes the output gradients then the captures) compiles to one Code of two
// stages over one register file: stage 0 is f's program, stage 1 df's, and df's
// capture parameters are given the very registers of f's capture outputs, so the
// handover costs nothing. Stage 0 returns only the real outputs (a register that is
// also captured is copied out, not moved) and frees every other value at its last
// use; the captures stay until stage 1 frees each at its own last use. Values that
// are never used (unused inputs, dead outputs) are freed at once, so when stage 1
// returns nothing but the constants is left. `retain_graph=True` clones the
// InterpreterState before stage 1 (the clone shares the captured tensors).
struct Instruction {
  enum class Kind : uint8_t {
    Op,             // kernel(inputs) -> outputs
    Copy,           // out = in (a new reference)
    Move,           // out = in, in becomes empty
    JumpIfFalse,    // if !in[0]: pc = target
    Jump,           // pc = target
    LoopTest,       // if !(in[0] < in[1] && in[2]): pc = target  (trip, max trip, condition)
    LoopIncrement,  // in[0] += 1
    Call,           // outputs = callee(inputs)
    Raise,          // runtime error with the message in[0]
    Free,           // empties the registers in `frees`
  };
  Kind kind;
  uint32_t inputs = 0;  // offset into Code::indices_
  uint32_t num_inputs = 0;
  uint32_t outputs = 0;
  uint32_t num_outputs = 0;
  uint32_t frees = 0;  // registers to empty after the instruction
  uint32_t num_frees = 0;
  int32_t target = -1;
  KernelFn fn = nullptr;
  Function* callee = nullptr;
  const Node* node = nullptr;  // source location, names for :code and the profiler
  // Eager code only: the op or call is recorded on the autograd tape when an input
  // requires grad (runtime/autograd/record.h); `site` indexes Code::eager_sites_.
  bool record = false;
  uint32_t site = 0;
  // `fn` is the op's CPU kernel, to be replaced by its device's when an input lives on
  // a device (Note [Dispatch by device] in runtime/kernels/kernel.h).
  bool dispatch = false;
};

// The kernel of a structural op (PRIM: lists, tuples, dtype, closures...) that the
// interpreter runs itself rather than through the kernel registry; null for others.
KernelFn prim_kernel(OpId op);

// The input register of a stage input that nothing reads: the value is dropped.
inline constexpr uint32_t kNoRegister = UINT32_MAX;

namespace autograd {
class EagerSite;
}  // namespace autograd

class Code {
 public:
  // One stage: `graph`'s program. `eager`: top-level code, whose differentiable ops
  // and calls record on the tape (runtime/autograd).
  explicit Code(std::shared_ptr<const Graph> graph, bool eager = false);
  // Two stages: stage 0 runs `f` and returns its real outputs; the captured values stay
  // in their registers; stage 1 runs `df` on the output gradients with the captures read
  // from those registers, and returns the input gradients.
  Code(std::shared_ptr<const Graph> f, std::shared_ptr<const Graph> df, size_t num_real_outputs,
       size_t num_captures);
  ~Code();
  Code(const Code&) = delete;
  Code& operator=(const Code&) = delete;

  // The graph of stage 0 (the whole program of a one-stage Code).
  const Graph& graph() const { return *stages_[0].graph; }
  const Graph& graph(size_t stage) const { return *stages_.at(stage).graph; }
  size_t num_stages() const { return stages_.size(); }
  // The name for dumps (stage 0's graph name).
  const std::string& name() const { return graph().name(); }
  size_t num_registers() const { return num_registers_; }
  // The values stage 0 keeps for stage 1 (two-stage Code only).
  size_t num_captures() const { return capture_registers_.size(); }
  const std::vector<Instruction>& instructions() const { return instructions_; }
  // The register program, for learners (`:code f`, `--dump=code`): a header per
  // stage, each instruction with its registers (by value name) and what it frees.
  std::string dump() const;
  // The value a register holds ("%h"), or "" for a temporary.
  const std::string& register_name(uint32_t r) const { return register_names_.at(r); }
  // The memory planner of this Code (see Note [Memory planning]), or null for top-level
  // code, which runs once.
  MemoryPlanner* memory_planner() const { return memory_planner_.get(); }

 private:
  friend class InterpreterState;
  friend class CodeBuilder;
  // The instructions [begin, end) of one stage and its calling convention.
  struct Stage {
    std::shared_ptr<const Graph> graph;
    uint32_t begin = 0;
    uint32_t end = 0;
    std::vector<uint32_t> input_registers;
    std::vector<uint32_t> output_registers;
    std::vector<bool> output_moves;  // whether the output register can be stolen
    // Registers emptied once the stage has run (inputs it never reads).
    std::vector<uint32_t> frees_at_end;
  };
  std::vector<Stage> stages_;
  std::vector<Instruction> instructions_;
  std::vector<uint32_t> indices_;  // register lists of all instructions
  std::vector<std::pair<uint32_t, IValue>> constants_;
  std::vector<uint32_t> capture_registers_;  // read by stage 1 (two-stage Code only)
  size_t num_registers_ = 0;
  std::vector<std::string> register_names_;  // for dump()
  bool eager_ = false;
  std::vector<std::shared_ptr<autograd::EagerSite>> eager_sites_;
  std::unique_ptr<MemoryPlanner> memory_planner_;
};

// The registers of one run of a Code, which runs one stage at a time.
class InterpreterState {
 public:
  explicit InterpreterState(const Code& code);
  // A clone (for retain_graph): the same Code, registers sharing their values, the
  // same next stage.
  // The clone runs unplanned: the memory plan belongs to the original's run.
  InterpreterState(const InterpreterState& other);
  InterpreterState(InterpreterState&&) = default;
  InterpreterState& operator=(const InterpreterState&) = delete;
  ~InterpreterState();

  // Runs the next stage on `inputs` (consumed), returns its outputs. A stage runs at
  // most once per state: clone the state to run it again.
  std::vector<IValue> run_stage(std::vector<IValue> inputs);
  // Runs the whole program of a one-stage Code.
  std::vector<IValue> run(std::vector<IValue> inputs);
  size_t next_stage() const { return next_stage_; }
  // Captured value k between the stages of a two-stage Code (the eager tape checks
  // and slims what a node keeps).
  IValue& capture(size_t k) { return registers_[code_.capture_registers_.at(k)]; }

 private:
  void execute(int32_t begin, int32_t end);
  [[noreturn]] void rethrow_with_location(const Instruction& inst);
  const Code& code_;
  std::vector<IValue> registers_;
  size_t next_stage_ = 0;
  // This run's allocation context (Note [Memory planning]), from the first stage until
  // the last returns; null when the run is unplanned.
  IntrusivePtr<MemoryRun> memory_;
};

}  // namespace tsl
