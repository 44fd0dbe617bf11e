// CPU kernels: linalg (placeholder until the kernels land).
#include "runtime/kernels/kernel.h"

namespace tsl {

void register_cpu_linalg_kernels() {}

}  // namespace tsl
