#include "runtime/tensor/memory_overlap.h"

#include <algorithm>
#include <vector>

#include "runtime/tensor/tensor.h"

namespace tsl {

bool is_non_overlapping_and_dense(const Tensor& t) {
  if (t.is_contiguous()) return true;
  // Dims of size 1 do not matter; the others, ordered by stride, must be row-major.
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] != 1) dims.push_back(d);
  }
  std::ranges::sort(dims, [&](int64_t a, int64_t b) { return t.strides()[a] < t.strides()[b]; });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

MemOverlap has_internal_overlap(const Tensor& t) {
  if (is_non_overlapping_and_dense(t)) return MemOverlap::No;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) return MemOverlap::Yes;
  }
  return MemOverlap::TooHard;
}

MemOverlapStatus overlap_status(const Tensor& a, const Tensor& b) {
  if (a.impl() == b.impl()) return MemOverlapStatus::Full;
  if (a.numel() == 0 || b.numel() == 0) return MemOverlapStatus::No;
  if (!is_non_overlapping_and_dense(a) || !is_non_overlapping_and_dense(b))
    return MemOverlapStatus::TooHard;
  if (a.storage().get() != b.storage().get()) return MemOverlapStatus::No;
  // Dense layouts: each covers [offset of its lowest element, + numel) exactly once.
  auto lowest = [](const Tensor& t) { return t.storage_offset(); };  // strides are >= 0
  int64_t a_begin = lowest(a), a_end = a_begin + a.numel();
  int64_t b_begin = lowest(b), b_end = b_begin + b.numel();
  if (a.dtype() != b.dtype()) {
    // Different dtypes on one storage do not occur in TSL (no views that reinterpret).
    return MemOverlapStatus::TooHard;
  }
  if (a_begin == b_begin && a_end == b_end) {
    return a.strides() == b.strides() ? MemOverlapStatus::Full : MemOverlapStatus::Partial;
  }
  if (a_begin < b_end && b_begin < a_end) return MemOverlapStatus::Partial;
  return MemOverlapStatus::No;
}

void assert_no_internal_overlap(const Tensor& written) {
  TSL_CHECK(has_internal_overlap(written) != MemOverlap::Yes,
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation.");
}

namespace {
constexpr const char* kSharedMemory =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation.";
}

void assert_no_partial_overlap(const Tensor& written, const Tensor& input) {
  TSL_CHECK(overlap_status(written, input) != MemOverlapStatus::Partial, kSharedMemory);
}

void assert_no_overlap(const Tensor& written, const Tensor& input) {
  MemOverlapStatus s = overlap_status(written, input);
  TSL_CHECK(s != MemOverlapStatus::Partial && s != MemOverlapStatus::Full, kSharedMemory);
}

}  // namespace tsl
