// Ctrl-C and --timeout: a flag that the SIGINT handler, or the statement watchdog, sets
// and that long-running code polls. See Note [Interrupts] in interrupt.cpp.
#pragma once

#include <atomic>
#include <string>

#include "runtime/tensor/error.h"

namespace tsl {

// KeyboardInterrupt, or a statement's TimeoutError: raised where the flag is polled,
// which may be in the middle of compiling (the statement is its location then).
class InterruptError : public Error {
 public:
  explicit InterruptError(std::string message) : Error(std::move(message)) {}
};

// Set from a signal handler (Ctrl-C) or when a statement's time limit passes.
extern std::atomic<bool> g_interrupt_requested;

// Throws the pending interrupt's error, clearing the flag: "KeyboardInterrupt", or
// for a statement that ran out of its --timeout a TimeoutError saying so. Returns
// when none is pending (a relaxed load: cheap enough for every kernel).
void raise_pending_interrupt();
inline void check_interrupt() {
  if (g_interrupt_requested.load(std::memory_order_relaxed)) raise_pending_interrupt();
}

// Blocks SIGINT in the calling thread. Every thread TSL starts (the pool's workers,
// the native compiler's, the --timeout watchdog) calls it first: a process-directed
// Ctrl-C goes to any thread that does not block it, and one taken by a helper thread
// leaves the REPL's blocked read uninterrupted (Note [Ctrl-C at the prompt]).
void block_sigint_in_this_thread();

// The time limit of each top-level statement in seconds (tsl --timeout); 0: none.
void set_statement_timeout(double seconds);
double statement_timeout();

// While one lives, the statement it covers runs under the time limit: when the limit
// passes, the watchdog sets the interrupt flag (and the error says why). Nested
// timers (a statement run by a statement, as :time runs one) keep the outer limit.
class StatementTimer {
 public:
  StatementTimer();
  ~StatementTimer();
  StatementTimer(const StatementTimer&) = delete;
  StatementTimer& operator=(const StatementTimer&) = delete;

 private:
  bool armed_ = false;
};

}  // namespace tsl
