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
};

namespace autograd {
class EagerSite;
}

class Code {
 public:
  // `eager`: top-level code, whose differentiable ops and calls record on the tape.
  explicit Code(std::shared_ptr<const Graph> graph, bool eager = false);

  const Graph& graph() const { return *graph_; }
  size_t num_registers() const { return num_registers_; }
  const std::vector<Instruction>& instructions() const { return instructions_; }
  // The register program, for learners (`:code f`, `--dump=code`).
  std::string dump() const;

 private:
  friend class InterpreterState;
  friend class CodeBuilder;
  std::shared_ptr<const Graph> graph_;
  std::vector<Instruction> instructions_;
  std::vector<uint32_t> indices_;  // register lists of all instructions
  std::vector<std::pair<uint32_t, IValue>> constants_;
  std::vector<uint32_t> input_registers_;
  std::vector<uint32_t> output_registers_;
  std::vector<bool> output_moves_;  // whether the output register can be stolen
  size_t num_registers_ = 0;
  std::vector<std::string> register_names_;  // for dump()
  bool eager_ = false;
  std::vector<std::shared_ptr<autograd::EagerSite>> eager_sites_;
};

// The registers of one run of a Code.
class InterpreterState {
 public:
  explicit InterpreterState(const Code& code);
  // Runs the whole program on `inputs` (consumed) and returns its outputs.
  std::vector<IValue> run(std::vector<IValue> inputs);

 private:
  void execute();
  [[noreturn]] void rethrow_with_location(const Instruction& inst);
  const Code& code_;
  std::vector<IValue> registers_;
};

// Set from a signal handler (Ctrl-C); the interpreter checks it at every loop back
// edge and call and raises "KeyboardInterrupt".
extern std::atomic<bool> g_interrupt_requested;

}  // namespace tsl
