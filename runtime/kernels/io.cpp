// Kernels of file input and output (placeholder until they land).
#include "runtime/kernels/kernel.h"

namespace tsl {

void register_io_kernels() {}

}  // namespace tsl
