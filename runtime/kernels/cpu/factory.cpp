// CPU kernels: factory (placeholder until the kernels land).
#include "runtime/kernels/kernel.h"

namespace tsl {

void register_cpu_factory_kernels() {}

}  // namespace tsl
