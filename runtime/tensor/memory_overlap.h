// Whether two tensors (or the elements of one) share memory, for the checks PyTorch
// makes before an in-place op writes: `x.add_(x.t())` or `x[1:] = x[:-1]` would read
// elements the op has already written, and `x.expand(3, 4).add_(1)` would write one
// element three times. PyTorch refuses both (ATen's MemoryOverlap), and so does TSL,
// with PyTorch's messages, rather than print a number PyTorch never prints.
#pragma once

namespace tsl {

class Tensor;

enum class MemOverlap { No, Yes, TooHard };
enum class MemOverlapStatus { No, Full, Partial, TooHard };

// Whether `t` is a permutation of a contiguous block: its elements cover a range of
// memory exactly once, in some order of its dims.
bool is_non_overlapping_and_dense(const Tensor& t);

// Yes when two elements of `t` are one memory location (a stride-0 dim of size > 1),
// TooHard when that cannot be decided cheaply (PyTorch does not raise then either).
MemOverlap has_internal_overlap(const Tensor& t);

// Full when a and b are the same elements in the same layout (x.add_(x) is fine),
// Partial when their memory ranges meet otherwise, TooHard for layouts with gaps.
MemOverlapStatus overlap_status(const Tensor& a, const Tensor& b);

// PyTorch's checks, with its messages: the tensor written must not have internally
// overlapping elements; an input must not partially overlap it (assert_no_partial_
// overlap, for elementwise ops and copy_) or overlap it at all (assert_no_overlap,
// for index_put_).
void assert_no_internal_overlap(const Tensor& written);
void assert_no_partial_overlap(const Tensor& written, const Tensor& input);
void assert_no_overlap(const Tensor& written, const Tensor& input);

}  // namespace tsl
