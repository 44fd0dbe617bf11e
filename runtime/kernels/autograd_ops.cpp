// Kernels of the ops autodiff inserts (ops.def, section "Autodiff"): undefined-aware
// gradient sums and the shape arithmetic gradient formulas need. They work on every
// device (they call other ops or only compute int lists).
#include <algorithm>

#include "runtime/kernels/kernel.h"

namespace tsl {
namespace {

bool is_defined(const IValue& v) {
  return v.is_list() || (v.is_tensor() && v.tensor_impl() != nullptr);
}

IValue add_gradients(const IValue& x, const IValue& y);

// Two gradients of one list element: a piece of stack's gradient keeps the stacked dim
// ([1, n], or [n, 1] along dim 1) where another gradient of the element has its shape
// ([n]). They are added in the shape of the first, so that the pieces never broadcast
// against each other (nor against a batch dim vmap put first).
IValue add_entry_gradients(const IValue& x, const IValue& y) {
  if (x.is_tensor() && y.is_tensor() && x.tensor_impl() && y.tensor_impl()) {
    const Tensor& a = x.to_tensor();
    const Tensor& b = y.to_tensor();
    if (a.sizes() != b.sizes() && a.numel() == b.numel()) {
      IValue sizes = IValue::int_list(std::vector<int64_t>(a.sizes().begin(), a.sizes().end()));
      return add_gradients(x, call_op(OpId::reshape, {y, sizes}).at(0));
    }
  }
  return add_gradients(x, y);
}

// An undefined tensor is a zero gradient: the identity of gradient addition. List
// gradients (of lists of tensors) add element by element.
IValue add_gradients(const IValue& x, const IValue& y) {
  if (!is_defined(x)) return y;
  if (!is_defined(y)) return x;
  if (x.is_list() && y.is_list()) {
    const auto& xs = x.to_list().elements;
    const auto& ys = y.to_list().elements;
    TSL_INTERNAL_ASSERT(xs.size() == ys.size(), "list gradients of different lengths");
    std::vector<IValue> sum;
    for (size_t i = 0; i < xs.size(); ++i) sum.push_back(add_entry_gradients(xs[i], ys[i]));
    return IValue::list(std::move(sum));
  }
  return call_op(OpId::add, {x, y, IValue(int64_t{1})}).at(0);
}

void autograd_add(KernelArgs& a) { a.out(0) = add_gradients(a.in(0), a.in(1)); }

// A gradient shaped like `like` (a stacked piece keeps a size-1 dim), or undefined.
IValue shaped_like(const IValue& g, const IValue& like) {
  if (!is_defined(g)) return IValue(Tensor());
  const Tensor& t = g.to_tensor();
  const Tensor& l = like.to_tensor();
  if (t.sizes() == l.sizes()) return g;
  IValue sizes = IValue::int_list(std::vector<int64_t>(l.sizes().begin(), l.sizes().end()));
  return call_op(OpId::reshape, {g, sizes}).at(0);
}

// The entries of list gradient `grads`, or one undefined (zero) entry per element of
// `like` when grads is undefined. False when both are undefined: then the result is
// undefined too (a gradient of a value that was itself a zero gradient).
bool list_gradient(const IValue& grads, const IValue& like, std::vector<IValue>& out) {
  if (grads.is_list()) {
    out = grads.to_list().elements;
  } else if (like.is_list()) {
    out.assign(like.to_list().elements.size(), IValue(Tensor()));
  } else {
    return false;
  }
  return true;
}

void autograd_list_add(KernelArgs& a) {
  std::vector<IValue> grads;
  if (!list_gradient(a.in(0), a.in(1), grads)) {
    a.out(0) = IValue(Tensor());
    return;
  }
  int64_t n = static_cast<int64_t>(grads.size());
  int64_t i = a.in(2).to_int();
  if (i < 0) i += n;
  TSL_INTERNAL_ASSERT(i >= 0 && i < n, "list gradient index out of range");
  grads[static_cast<size_t>(i)] = add_entry_gradients(grads[static_cast<size_t>(i)], a.in(3));
  a.out(0) = IValue::list(std::move(grads));
}

void autograd_list_push(KernelArgs& a) {
  std::vector<IValue> grads;
  if (!list_gradient(a.in(0), a.in(1), grads)) {
    a.out(0) = IValue(Tensor());
    return;
  }
  grads.push_back(a.in(2).is_tensor() ? a.in(2) : IValue(Tensor()));
  a.out(0) = IValue::list(std::move(grads));
}

// Undefined for an undefined `like` (the zero tangent of a zero list gradient).
void autograd_list_zeros(KernelArgs& a) {
  if (!a.in(0).is_list()) {
    a.out(0) = IValue(Tensor());
    return;
  }
  a.out(0) = IValue::list(std::vector<IValue>(a.in(0).to_list().elements.size(), IValue(Tensor())));
}

void autograd_list_pop(KernelArgs& a) {
  if (!a.in(0).is_list()) {
    a.out(0) = IValue(Tensor());
    a.out(1) = IValue(Tensor());
    return;
  }
  std::vector<IValue> grads = a.in(0).to_list().elements;
  TSL_INTERNAL_ASSERT(!grads.empty(), "popping an empty list gradient");
  IValue last = shaped_like(grads.back(), a.in(1));
  grads.pop_back();
  a.out(0) = IValue::list(std::move(grads));
  a.out(1) = std::move(last);
}

void autograd_list_item(KernelArgs& a) {
  if (!a.in(0).is_list()) {
    a.out(0) = IValue(Tensor());
    return;
  }
  const auto& grads = a.in(0).to_list().elements;
  int64_t n = static_cast<int64_t>(grads.size());
  int64_t i = a.in(1).to_int();
  if (i < 0) i += n;
  TSL_INTERNAL_ASSERT(i >= 0 && i < n, "list gradient index out of range");
  a.out(0) = shaped_like(grads[static_cast<size_t>(i)], a.in(2));
}

void autograd_list_cat(KernelArgs& a) {
  if (!a.in(0).is_list()) {
    a.out(0) = IValue(Tensor());
    return;
  }
  const auto& grads = a.in(0).to_list().elements;
  const auto& like = a.in(1).to_list().elements;
  TSL_INTERNAL_ASSERT(grads.size() == like.size(), "list gradient and list of different lengths");
  std::vector<IValue> parts;
  for (size_t i = 0; i < grads.size(); ++i) {
    parts.push_back(
        is_defined(grads[i])
            ? shaped_like(grads[i], like[i])
            : call_op(OpId::zeros_like, {like[i], IValue(), IValue(), IValue(false)}).at(0));
  }
  a.out(0) = call_op(OpId::cat, {IValue::list(std::move(parts)), a.in(2)}).at(0);
}

void autograd_zeros(KernelArgs& a) {
  const IValue& g = a.in(0);
  if (g.is_tensor() && g.tensor_impl() != nullptr) {
    a.out(0) = g;
  } else if (!is_defined(a.in(1))) {
    a.out(0) = IValue(Tensor());  // zeros like an undefined (zero) gradient: undefined
  } else {
    a.out(0) = call_op(OpId::zeros_like, {a.in(1), IValue(), IValue(), IValue(false)}).at(0);
  }
}

bool shares_storage(const TensorImpl* t, const IValue& v) {
  if (v.is_tensor())
    return v.tensor_impl() && v.tensor_impl()->storage().get() == t->storage().get();
  if (v.is_list()) {
    for (const IValue& e : v.to_list().elements) {
      if (shares_storage(t, e)) return true;
    }
  }
  return false;
}

void autograd_no_alias(KernelArgs& a) {
  const TensorImpl* self = a.in(1).tensor_impl();
  if (!self) return;
  for (uint32_t i = 2; i < a.num_inputs(); ++i) {
    if (shares_storage(self, a.in(i))) TSL_ERROR(a.in(0).to_str());
  }
}

void any_defined(KernelArgs& a) {
  bool any = false;
  for (uint32_t i = 0; i < a.num_inputs() && !any; ++i) any = is_defined(a.in(i));
  a.out(0) = IValue(any);
}

int64_t wrap(int64_t d, size_t ndim) {
  int64_t n = static_cast<int64_t>(ndim);
  TSL_CHECK(d >= -std::max<int64_t>(n, 1) && d < std::max<int64_t>(n, 1),
            "Dimension out of range (expected to be in range of [", -std::max<int64_t>(n, 1), ", ",
            std::max<int64_t>(n, 1) - 1, "], but got ", d, ")");
  return d < 0 ? d + n : d;
}

std::vector<int64_t> keepdim_size(std::vector<int64_t> size,
                                  std::optional<std::vector<int64_t>> dim) {
  if (!dim || dim->empty()) {
    std::fill(size.begin(), size.end(), 1);
    return size;
  }
  for (int64_t d : *dim) {
    if (size.empty()) continue;  // a 0-dim tensor reduced over dim 0 or -1
    size[static_cast<size_t>(wrap(d, size.size()))] = 1;
  }
  return size;
}

std::vector<int64_t> matmul_operand_size(std::vector<int64_t> size, bool left) {
  if (size.size() != 1) return size;
  return left ? std::vector<int64_t>{1, size[0]} : std::vector<int64_t>{size[0], 1};
}

// matmul's result with the operands seen as matrices (batch dims broadcast).
std::vector<int64_t> matmul_full_size(std::vector<int64_t> a, std::vector<int64_t> b) {
  a = matmul_operand_size(std::move(a), true);
  b = matmul_operand_size(std::move(b), false);
  TSL_CHECK(a.size() >= 2 && b.size() >= 2, "matmul gradient: operands must not be 0-dim");
  std::span<const int64_t> batch_a(a.data(), a.size() - 2);
  std::span<const int64_t> batch_b(b.data(), b.size() - 2);
  DimVector batch = broadcast_shapes(batch_a, batch_b, "matmul");
  std::vector<int64_t> out(batch.begin(), batch.end());
  out.push_back(a[a.size() - 2]);
  out.push_back(b[b.size() - 1]);
  return out;
}

std::vector<int64_t> invert_permutation(std::vector<int64_t> dims) {
  std::vector<int64_t> inverse(dims.size(), -1);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap(dims[i], dims.size());
    TSL_CHECK(inverse[static_cast<size_t>(d)] == -1, "permute: repeated dim ", dims[i]);
    inverse[static_cast<size_t>(d)] = static_cast<int64_t>(i);
  }
  return inverse;
}

std::vector<int64_t> repeat_grad_size(std::vector<int64_t> size, std::vector<int64_t> repeats) {
  TSL_CHECK(repeats.size() >= size.size(),
            "repeat: number of repeats can not be smaller than the number of dims");
  size.insert(size.begin(), repeats.size() - size.size(), 1);
  std::vector<int64_t> out;
  for (size_t i = 0; i < repeats.size(); ++i) {
    out.push_back(repeats[i]);
    out.push_back(size[i]);
  }
  return out;
}

// Where piece `index` (Python indexing) of a split starts along `dim`, and its length.
std::vector<int64_t> split_piece_range(std::vector<Tensor> pieces, int64_t index, int64_t dim) {
  int64_t n = static_cast<int64_t>(pieces.size());
  if (index < 0) index += n;
  TSL_CHECK(index >= 0 && index < n, "IndexError: list index out of range");
  int64_t start = 0;
  for (int64_t k = 0; k < index; ++k) {
    const Tensor& p = pieces[static_cast<size_t>(k)];
    start += p.sizes()[static_cast<size_t>(wrap(dim, p.sizes().size()))];
  }
  const Tensor& p = pieces[static_cast<size_t>(index)];
  return {start, p.sizes()[static_cast<size_t>(wrap(dim, p.sizes().size()))]};
}

std::vector<int64_t> list_sizes_along(std::vector<Tensor> tensors, int64_t dim) {
  std::vector<int64_t> sizes;
  for (const Tensor& t : tensors)
    sizes.push_back(t.sizes()[static_cast<size_t>(wrap(dim, t.sizes().size()))]);
  return sizes;
}

// functorch's jvp sets each tangent as its primal's forward gradient, which PyTorch
// refuses for another shape.
void check_tangent_size(std::vector<int64_t> primal, std::vector<int64_t> tangent) {
  TSL_CHECK(primal == tangent,
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size ",
            shape_str(primal), " while the given forward gradient is of size ", shape_str(tangent),
            ".");
}

// vjp_fn(cotangent) runs autograd.grad with the cotangents as grad_outputs, which
// checks each against its output's shape.
void check_cotangent_size(std::vector<int64_t> cotangent, std::vector<int64_t> output,
                          int64_t index) {
  TSL_CHECK(cotangent == output, "Mismatch in shape: grad_output[", index,
            "] has a shape of torch.Size(", shape_str(cotangent), ") and output[", index,
            "] has a shape of torch.Size(", shape_str(output), ").");
}

}  // namespace

void register_autograd_kernels() {
  TSL_REGISTER_GENERIC_RAW(AutogradListAdd, autograd_list_add);
  TSL_REGISTER_GENERIC_RAW(AutogradListPop, autograd_list_pop);
  TSL_REGISTER_GENERIC_RAW(AutogradListPush, autograd_list_push);
  TSL_REGISTER_GENERIC_RAW(AutogradListCat, autograd_list_cat);
  TSL_REGISTER_GENERIC_RAW(AutogradListZeros, autograd_list_zeros);
  TSL_REGISTER_GENERIC_RAW(AutogradListItem, autograd_list_item);
  TSL_REGISTER_GENERIC(list_sizes_along, list_sizes_along);
  TSL_REGISTER_GENERIC(split_piece_range, split_piece_range);
  TSL_REGISTER_GENERIC_RAW(AutogradAdd, autograd_add);
  TSL_REGISTER_GENERIC_RAW(AutogradZeros, autograd_zeros);
  TSL_REGISTER_GENERIC_RAW(AnyDefined, any_defined);
  TSL_REGISTER_GENERIC_RAW(AutogradNoAlias, autograd_no_alias);
  TSL_REGISTER_GENERIC(check_tangent_size, check_tangent_size);
  TSL_REGISTER_GENERIC(check_cotangent_size, check_cotangent_size);
  TSL_REGISTER_GENERIC(keepdim_size, keepdim_size);
  TSL_REGISTER_GENERIC(matmul_operand_size, matmul_operand_size);
  TSL_REGISTER_GENERIC(matmul_full_size, matmul_full_size);
  TSL_REGISTER_GENERIC(invert_permutation, invert_permutation);
  TSL_REGISTER_GENERIC(repeat_grad_size, repeat_grad_size);
}

}  // namespace tsl
