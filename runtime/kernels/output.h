// Where `print` writes: std::cout by default; the REPL and tests point it at their
// own stream so that program output and echoed values interleave in order.
#pragma once

#include <ostream>

namespace tsl {

std::ostream& program_output();
// Sets the stream `print` writes to (nullptr restores std::cout); returns the old one.
std::ostream* set_program_output(std::ostream* out);

}  // namespace tsl
