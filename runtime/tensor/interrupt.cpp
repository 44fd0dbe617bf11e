// Interrupts and statement time limits. See interrupt.h.
#include "runtime/tensor/interrupt.h"

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <thread>

#include "runtime/tensor/error.h"

namespace tsl {

// Note [Interrupts]
// Ctrl-C sets g_interrupt_requested (a signal handler can do nothing else); the
// interpreter polls it after every kernel, at loop back edges and calls, the front end
// at each statement it emits and the optimizer at each pass, and the poll throws. So a
// statement stops when the kernel that is running returns (a kernel does not poll, as
// PyTorch's ops do not), and a long compilation stops between passes.
// `tsl --timeout N` (for teaching sessions) is the same flag set by a watchdog thread
// N seconds after a top-level statement started: one thread for the process, which
// sleeps until the armed deadline and is never joined (it holds no resources an exit
// needs, and joining at exit would race with static destructors). It blocks SIGINT, as
// every thread TSL starts does (block_sigint_in_this_thread).
std::atomic<bool> g_interrupt_requested{false};

namespace {

std::atomic<bool> g_timed_out{false};
double g_timeout_seconds = 0;

class Watchdog {
 public:
  static Watchdog& get() {
    static Watchdog* w = new Watchdog();  // never destroyed: its thread never ends
    return *w;
  }

  // Arms the deadline `seconds` from now; returns a ticket for disarm().
  uint64_t arm(double seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(seconds));
    armed_ = ++ticket_;
    cv_.notify_all();
    return armed_;
  }

  void disarm(uint64_t ticket) {
    std::lock_guard<std::mutex> lock(mu_);
    if (armed_ == ticket) armed_ = 0;
    cv_.notify_all();
  }

 private:
  Watchdog() {
    std::thread([this] {
      block_sigint_in_this_thread();
      run();
    }).detach();
  }

  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (armed_ == 0) {
        cv_.wait(lock);
        continue;
      }
      uint64_t ticket = armed_;
      if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ == ticket) {
        armed_ = 0;
        g_timed_out = true;
        g_interrupt_requested = true;
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::chrono::steady_clock::time_point deadline_;
  uint64_t armed_ = 0;  // the armed ticket; 0: none
  uint64_t ticket_ = 0;
};

thread_local int t_timer_depth = 0;
thread_local uint64_t t_ticket = 0;

}  // namespace

void block_sigint_in_this_thread() {
  sigset_t sigint;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigint, nullptr);
}

void raise_pending_interrupt() {
  if (!g_interrupt_requested.exchange(false)) return;
  if (g_timed_out.exchange(false)) {
    throw InterruptError(
        str("TimeoutError: the statement ran longer than its time limit (--timeout ",
            g_timeout_seconds, " s)"));
  }
  throw InterruptError("KeyboardInterrupt");
}

void set_statement_timeout(double seconds) { g_timeout_seconds = seconds > 0 ? seconds : 0; }

double statement_timeout() { return g_timeout_seconds; }

StatementTimer::StatementTimer() {
  if (g_timeout_seconds <= 0 || t_timer_depth++ > 0) return;
  armed_ = true;
  g_timed_out = false;
  t_ticket = Watchdog::get().arm(g_timeout_seconds);
}

StatementTimer::~StatementTimer() {
  if (g_timeout_seconds <= 0 && !armed_) return;
  --t_timer_depth;
  if (!armed_) return;
  Watchdog::get().disarm(t_ticket);
  // A limit that passed just as the statement ended is not reported for the next.
  if (g_timed_out.exchange(false)) g_interrupt_requested = false;
}

}  // namespace tsl
