// CPU kernels: reduction (placeholder until the kernels land).
#include "runtime/kernels/kernel.h"

namespace tsl {

void register_cpu_reduction_kernels() {}

}  // namespace tsl
