// Formats internal errors so that they say plainly that TSL, not the program, is wrong.
#include "runtime/tensor/error.h"

namespace tsl {

InternalError::InternalError(const char* file, int line, const std::string& message)
    : std::logic_error(str("internal error at ", file, ":", line, ": ", message,
                           "\nThis is a bug in TSL; please report it with the program "
                           "that triggered it.")) {}

}  // namespace tsl
