// Errors raised below the IR: user errors (bad shapes, bad arguments) and internal
// errors (a broken invariant: a bug in TSL). See Note [Two kinds of error].
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tsl {

// Note [Two kinds of error]
// A user error is something the program did wrong: it carries a message that names
// what went wrong (both shapes, both types) and is shown with the source location of
// the op that raised it (the interpreter adds the location and the TSL traceback).
// An internal error is a broken invariant of TSL itself: it names the C++ file and
// line and says it is a bug. The two never mix: a user must never see an internal
// error for something their program did, and tests assert on which kind is raised.
class Error : public std::runtime_error {
 public:
  explicit Error(std::string message) : std::runtime_error(std::move(message)) {}
};

class InternalError : public std::logic_error {
 public:
  InternalError(const char* file, int line, const std::string& message);
};

namespace detail {
inline void append_all(std::ostringstream&) {}
template <typename T, typename... Rest>
void append_all(std::ostringstream& out, const T& first, const Rest&... rest) {
  out << first;
  append_all(out, rest...);
}
}  // namespace detail

// Concatenates anything printable into one string: str("got ", n, " dims").
template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  detail::append_all(out, args...);
  return out.str();
}

}  // namespace tsl

// A user error: `TSL_CHECK(a.dim() == 2, "mm: expected a 2-D tensor, got ", a.dim(), "-D")`.
#define TSL_CHECK(cond, ...)                       \
  do {                                             \
    if (!(cond)) [[unlikely]] {                    \
      throw ::tsl::Error(::tsl::str(__VA_ARGS__)); \
    }                                              \
  } while (0)

#define TSL_ERROR(...) throw ::tsl::Error(::tsl::str(__VA_ARGS__))

// An internal invariant. Always on: the checks guard memory safety of the runtime.
#define TSL_INTERNAL_ASSERT(cond, ...)                                              \
  do {                                                                              \
    if (!(cond)) [[unlikely]] {                                                     \
      throw ::tsl::InternalError(                                                   \
          __FILE__, __LINE__,                                                       \
          ::tsl::str("assertion `" #cond "` failed. " __VA_OPT__(, ) __VA_ARGS__)); \
    }                                                                               \
  } while (0)
