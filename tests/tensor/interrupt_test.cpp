// Interrupts and the per-statement time limit (runtime/tensor/interrupt.h): the
// watchdog fires only for a statement that outlives the limit, each statement gets
// the whole limit, and the error says which it was.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "runtime/tensor/error.h"
#include "runtime/tensor/interrupt.h"

namespace tsl {
namespace {

using Clock = std::chrono::steady_clock;

// Polls as the interpreter does for `seconds`; the error message if one is raised.
std::string poll_for(double seconds) {
  auto end = Clock::now() +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  try {
    while (Clock::now() < end) check_interrupt();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

struct TimeoutGuard {
  explicit TimeoutGuard(double s) { set_statement_timeout(s); }
  ~TimeoutGuard() {
    set_statement_timeout(0);
    g_interrupt_requested = false;
  }
};

TEST(StatementTimeout, EachStatementGetsTheWholeLimit) {
  TimeoutGuard limit(0.4);
  for (int i = 0; i < 3; ++i) {  // 0.6 s in all, 0.15 s each
    StatementTimer t;
    EXPECT_EQ(poll_for(0.15), "") << "statement " << i;
  }
}

TEST(StatementTimeout, AStatementThatRunsTooLongIsStoppedSayingWhy) {
  TimeoutGuard limit(0.2);
  auto start = Clock::now();
  std::string error;
  {
    StatementTimer t;
    error = poll_for(5.0);
  }
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(error, "TimeoutError: the statement ran longer than its time limit (--timeout 0.2 s)");
  EXPECT_GE(took, 0.2);
  EXPECT_LT(took, 2.0);
  // The next statement starts clean.
  StatementTimer next;
  EXPECT_EQ(poll_for(0.05), "");
}

TEST(StatementTimeout, NestedStatementsKeepTheOuterLimit) {
  TimeoutGuard limit(0.3);
  StatementTimer outer;
  {
    StatementTimer inner;  // as :time runs a statement inside the REPL's
    EXPECT_EQ(poll_for(0.1), "");
  }
  EXPECT_NE(poll_for(5.0).find("TimeoutError"), std::string::npos);
}

TEST(StatementTimeout, CtrlCIsAKeyboardInterrupt) {
  g_interrupt_requested = true;
  EXPECT_EQ(poll_for(0.01), "KeyboardInterrupt");
  EXPECT_FALSE(g_interrupt_requested.load());
  EXPECT_EQ(poll_for(0.01), "");  // no timer, no limit
}

}  // namespace
}  // namespace tsl
