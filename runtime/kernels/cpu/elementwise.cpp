// CPU kernels: elementwise (placeholder until the kernels land).
#include "runtime/kernels/kernel.h"

namespace tsl {

void register_cpu_elementwise_kernels() {}

}  // namespace tsl
