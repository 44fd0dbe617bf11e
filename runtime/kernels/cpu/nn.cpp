// CPU kernels: nn (placeholder until the kernels land).
#include "runtime/kernels/kernel.h"

namespace tsl {

void register_cpu_nn_kernels() {}

}  // namespace tsl
