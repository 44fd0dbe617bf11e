// Kernels the frontend's lowering needs beside the Python scalar ops: the trip count
// of `for i in range(...)`, comparisons of dtypes and devices, and device queries.
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {
namespace {

int64_t range_length(int64_t start, int64_t end, int64_t step) {
  TSL_CHECK(step != 0, "range() arg 3 must not be zero");
  if (step > 0) return start < end ? (end - start - 1) / step + 1 : 0;
  return start > end ? (start - end - 1) / (-step) + 1 : 0;
}

bool eq_dtype(DType a, DType b) { return a == b; }
bool ne_dtype(DType a, DType b) { return a != b; }
bool eq_device(Device a, Device b) { return a == b; }
bool ne_device(Device a, Device b) { return a != b; }

// True when the CUDA backend is built in and finds a GPU.
bool cuda_is_available() {
  DeviceBackend* cuda = cuda_backend();
  return cuda != nullptr && cuda->device_count() > 0;
}

}  // namespace

void register_type_kernels() {
  TSL_REGISTER_GENERIC(range_length, range_length);
  TSL_REGISTER_GENERIC(eq_dtype, eq_dtype);
  TSL_REGISTER_GENERIC(ne_dtype, ne_dtype);
  TSL_REGISTER_GENERIC(eq_device, eq_device);
  TSL_REGISTER_GENERIC(ne_device, ne_device);
  TSL_REGISTER_GENERIC(cuda_is_available, cuda_is_available);
}

}  // namespace tsl
