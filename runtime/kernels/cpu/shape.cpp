// CPU kernels: shape (placeholder until the kernels land).
#include "runtime/kernels/kernel.h"

namespace tsl {

void register_cpu_shape_kernels() {}

}  // namespace tsl
