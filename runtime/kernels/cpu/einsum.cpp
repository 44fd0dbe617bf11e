// CPU kernels of einsum and einsum_backward. Each operand is first viewed with one dim
// per distinct subscript (a repeated subscript takes the diagonal; size-1 dims, which
// broadcast, are dropped); a subscript no later operand and not the output needs is
// summed away as soon as it is last used; then the operands are contracted left to
// right, two at a time, as PyTorch does: an elementwise product with broadcasting when
// nothing is summed between the two, else one bmm of [batch, left, summed] and
// [batch, summed, right]. The result is written into the output's layout, where
// einsum_backward may also broadcast a subscript no operand has or fill a diagonal.
#include <algorithm>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/products.h"
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/kernels/einsum_equation.h"

namespace tsl::cpu {
namespace {

// Subscripts: the letters, then one per dim an ellipsis covers (right-aligned).
constexpr int kMaxEllipsisDims = 64;
constexpr int kMaxLabels = kEinsumLetters + kMaxEllipsisDims;

// A tensor with one dim per subscript ("label"), the labels distinct.
struct Factor {
  Tensor t;
  std::vector<int> labels;
  bool owned = false;  // false while t may be a view of an operand

  bool has(int label) const {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
  }
  int64_t dim_of(int label) const {
    return std::find(labels.begin(), labels.end(), label) - labels.begin();
  }
};

// The label of every dim of every operand and of the output, and each label's size.
struct Labels {
  std::vector<std::vector<int>> operands;
  std::vector<int> output;
  int64_t size[kMaxLabels];
};

int64_t letters_in(const std::vector<int>& term) {
  return std::count_if(term.begin(), term.end(), [](int s) { return s != kEllipsis; });
}
bool has_ellipsis(const std::vector<int>& term) {
  return std::find(term.begin(), term.end(), kEllipsis) != term.end();
}

// The labels of a term over `ndim` dims when an ellipsis covers `covered` dims of the
// `ellipsis_dims` there are in all.
std::vector<int> expand_term(const std::vector<int>& term, int64_t covered, int64_t ellipsis_dims) {
  std::vector<int> labels;
  for (int s : term) {
    if (s != kEllipsis) {
      labels.push_back(s);
      continue;
    }
    for (int64_t j = 0; j < covered; ++j)
      labels.push_back(static_cast<int>(kEinsumLetters + ellipsis_dims - covered + j));
  }
  return labels;
}

// How many dims operand k's ellipsis covers, with PyTorch's checks of its dims.
int64_t ellipsis_cover(const std::vector<int>& term, int64_t ndim, size_t k) {
  int64_t letters = letters_in(term);
  if (!has_ellipsis(term)) {
    TSL_CHECK(letters == ndim, "einsum(): the number of subscripts in the equation (", letters,
              ") does not match the number of dimensions (", ndim, ") for operand ", k,
              " and no ellipsis was given");
    return 0;
  }
  TSL_CHECK(letters <= ndim, "einsum(): the number of subscripts in the equation (", letters,
            ") is more than the number of dimensions (", ndim, ") for operand ", k);
  return ndim - letters;
}

std::string label_name(int label) {
  return label < kEinsumLetters ? std::string(1, einsum_letter(label)) : "...";
}

// Joins the sizes operand k gives its labels into `l.size` (PyTorch's broadcasting:
// 1 fits anything), after checking that a repeated subscript has one size.
void merge_sizes(Labels& l, const Tensor& t, size_t k, int64_t covered) {
  const std::vector<int>& labels = l.operands[k];
  for (size_t d = 0; d < labels.size(); ++d) {
    for (size_t e = 0; e < d; ++e) {
      TSL_CHECK(labels[e] != labels[d] || t.sizes()[d] == t.sizes()[e], "einsum(): subscript ",
                label_name(labels[d]), " is repeated for operand ", k,
                " but the sizes don't match, ", t.sizes()[d], " != ", t.sizes()[e]);
    }
  }
  for (size_t d = 0; d < labels.size(); ++d) {
    int64_t s = t.sizes()[d], &seen = l.size[labels[d]];
    if (s == 1 || seen == s) continue;
    if (seen == 1) {
      seen = s;
      continue;
    }
    if (labels[d] < kEinsumLetters) {
      TSL_ERROR("einsum(): subscript ", label_name(labels[d]), " has size ", s, " for operand ", k,
                " which does not broadcast with previously seen size ", seen);
    }
    TSL_ERROR("einsum(): dimension ", labels[d] - kEinsumLetters - (kMaxEllipsisDims - covered),
              " covered by ellipsis in operand ", k, " has size ", s,
              " which does not broadcast with previously seen ellipsis with size ", seen,
              " for the respective dimension");
  }
}

// einsum_backward's output sizes: a label of size 1 elsewhere takes the output's size
// (a broadcast); one of another size must match or be 1 there (summed).
void merge_output_sizes(Labels& l, const std::vector<int64_t>& out_size) {
  for (size_t d = 0; d < l.output.size(); ++d) {
    for (size_t e = 0; e < d; ++e) {
      TSL_CHECK(l.output[e] != l.output[d] || out_size[e] == out_size[d],
                "einsum_backward: output subscript ", label_name(l.output[d]), " has sizes ",
                out_size[e], " and ", out_size[d]);
    }
    int64_t s = out_size[d], &seen = l.size[l.output[d]];
    if (s == 1 || seen == s) continue;
    TSL_CHECK(seen == 1, "einsum_backward: output size ", shape_str(out_size),
              " does not fit subscript ", label_name(l.output[d]), " of size ", seen);
    seen = s;
  }
}

Labels label_dims(const EinsumEquation& e, const std::vector<Tensor>& ops,
                  const std::vector<int64_t>* out_size) {
  Labels l;
  std::fill(l.size, l.size + kMaxLabels, 1);
  std::vector<int64_t> covered(ops.size());
  int64_t ellipsis_dims = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    covered[k] = ellipsis_cover(e.operands[k], ops[k].dim(), k);
    ellipsis_dims = std::max(ellipsis_dims, covered[k]);
  }
  int64_t out_covered = ellipsis_dims;
  if (out_size) {
    int64_t letters = letters_in(e.output), n = static_cast<int64_t>(out_size->size());
    bool fits = has_ellipsis(e.output) ? n >= letters : n == letters;
    TSL_CHECK(fits, "einsum_backward: output size ", shape_str(*out_size),
              " does not fit the output subscripts of ", einsum_equation_str(e));
    out_covered = has_ellipsis(e.output) ? n - letters : 0;
    ellipsis_dims = std::max(ellipsis_dims, out_covered);
  }
  TSL_CHECK(ellipsis_dims <= kMaxEllipsisDims, "einsum(): an ellipsis covers more than ",
            kMaxEllipsisDims, " dims");
  for (size_t k = 0; k < ops.size(); ++k) {
    l.operands.push_back(expand_term(e.operands[k], covered[k], kMaxEllipsisDims));
    merge_sizes(l, ops[k], k, covered[k]);
  }
  l.output = expand_term(e.output, out_covered, kMaxEllipsisDims);
  if (out_size) merge_output_sizes(l, *out_size);
  return l;
}

// Operand t viewed with one dim per distinct label: a repeated label's dims become
// their diagonal (strides added); size-1 dims are dropped (they broadcast).
Factor align(const Tensor& t, const std::vector<int>& labels) {
  Factor f;
  DimVector sizes, strides;
  for (size_t d = 0; d < labels.size(); ++d) {
    if (t.sizes()[d] == 1) continue;
    int64_t at = f.dim_of(labels[d]);
    if (at < static_cast<int64_t>(f.labels.size())) {
      strides[at] += t.strides()[d];
      continue;
    }
    f.labels.push_back(labels[d]);
    sizes.push_back(t.sizes()[d]);
    strides.push_back(t.strides()[d]);
  }
  f.t = t.as_strided(sizes, strides, t.storage_offset());
  return f;
}

// Sums the dims of f whose label `drop` picks.
template <typename Pred>
void sum_labels(Factor& f, const Pred& drop) {
  DimMask mask = 0;
  std::vector<int> kept;
  for (size_t d = 0; d < f.labels.size(); ++d) {
    if (drop(f.labels[d]))
      mask |= DimMask{1} << d;
    else
      kept.push_back(f.labels[d]);
  }
  if (!mask) return;
  f.t = sum_over(f.t, mask, /*keepdim=*/false);
  f.labels = std::move(kept);
  f.owned = true;
}

// f's data viewed with dims `labels` in that order: a label f lacks is a broadcast dim
// of `size` (stride 0).
Tensor arranged(const Factor& f, const std::vector<int>& labels, const int64_t* size) {
  DimVector sizes, strides;
  for (int label : labels) {
    bool present = f.has(label);
    int64_t d = f.dim_of(label);
    sizes.push_back(present ? f.t.sizes()[d] : size[label]);
    strides.push_back(present ? f.t.strides()[d] : 0);
  }
  return f.t.as_strided(sizes, strides, f.t.storage_offset());
}

int64_t product_of(const std::vector<int>& labels, const int64_t* size) {
  int64_t n = 1;
  for (int label : labels) n *= size[label];
  return n;
}

// `t` (any layout) as a contiguous [rows, inner, cols] block.
Tensor as_3d(const Tensor& t, int64_t rows, int64_t inner, int64_t cols) {
  Tensor c = t.contiguous();
  return c.as_strided(DimVector{rows, inner, cols}, DimVector{inner * cols, cols, 1},
                      c.storage_offset());
}

// The products einsum is made of, by the kernels of the operands' device (every other
// step is a view, a copy or sum_over, which serve every device).
Tensor product(const Tensor& x, const Tensor& y) {
  return x.device().is_cpu() ? mul(x, y) : op1(OpId::mul, {IValue(x), IValue(y)});
}
Tensor batched_product(const Tensor& x, const Tensor& y) {
  return x.device().is_cpu() ? bmm(x, y) : op1(OpId::bmm, {IValue(x), IValue(y)});
}

// a * b summed over the labels `summed` (in both, needed by nothing later).
Factor contract(const Factor& a, const Factor& b, const std::vector<int>& summed,
                const int64_t* size) {
  std::vector<int> batch, left, right;
  for (int label : a.labels) {
    if (std::find(summed.begin(), summed.end(), label) != summed.end()) continue;
    (b.has(label) ? batch : left).push_back(label);
  }
  for (int label : b.labels) {
    if (!a.has(label)) right.push_back(label);
  }
  Factor out;
  out.labels = batch;
  out.labels.insert(out.labels.end(), left.begin(), left.end());
  out.labels.insert(out.labels.end(), right.begin(), right.end());
  out.owned = true;
  if (summed.empty()) {
    // Broadcast product: a as [batch, left, 1...], b as [batch, 1..., right].
    std::vector<int> a_dims = batch, b_dims = batch;
    a_dims.insert(a_dims.end(), left.begin(), left.end());
    b_dims.insert(b_dims.end(), right.begin(), right.end());
    Tensor x = arranged(a, a_dims, size), y = arranged(b, b_dims, size);
    DimVector xs = x.sizes(), xt = x.strides(), ys = y.sizes(), yt = y.strides();
    for (size_t i = 0; i < right.size(); ++i) xs.push_back(1), xt.push_back(0);
    for (size_t i = 0; i < left.size(); ++i) ys.insert(batch.size(), 1), yt.insert(batch.size(), 0);
    out.t =
        product(x.as_strided(xs, xt, x.storage_offset()), y.as_strided(ys, yt, y.storage_offset()));
    return out;
  }
  TSL_CHECK(a.t.dtype() != DType::Bool || b.t.dtype() != DType::Bool,
            "\"bmm\" not implemented for 'Bool'");
  std::vector<int> a_dims = batch, b_dims = batch;
  a_dims.insert(a_dims.end(), left.begin(), left.end());
  a_dims.insert(a_dims.end(), summed.begin(), summed.end());
  b_dims.insert(b_dims.end(), summed.begin(), summed.end());
  b_dims.insert(b_dims.end(), right.begin(), right.end());
  int64_t nb = product_of(batch, size), nl = product_of(left, size);
  int64_t ns = product_of(summed, size), nr = product_of(right, size);
  Tensor p = batched_product(as_3d(arranged(a, a_dims, size), nb, nl, ns),
                             as_3d(arranged(b, b_dims, size), nb, ns, nr));
  DimVector shape;
  for (int label : out.labels) shape.push_back(size[label]);
  out.t = p.as_strided(shape, contiguous_strides(shape), p.storage_offset());
  return out;
}

// The result r (labels: those the output keeps) written into the output's layout.
Tensor write_output(const Factor& r, const Labels& l, const std::vector<bool>& kept) {
  DimVector out_sizes;
  std::vector<int> distinct;
  bool repeated = false;
  for (int label : l.output) {
    out_sizes.push_back(kept[label] ? l.size[label] : 1);
    if (!kept[label]) continue;
    if (std::find(distinct.begin(), distinct.end(), label) != distinct.end())
      repeated = true;
    else
      distinct.push_back(label);
  }
  if (r.owned && !repeated && r.labels == distinct && r.t.is_contiguous()) {
    return r.t.as_strided(out_sizes, contiguous_strides(out_sizes), r.t.storage_offset());
  }
  Tensor out = Tensor::empty(out_sizes, r.t.dtype(), r.t.device());
  if (repeated) fill_tensor(out, Scalar(int64_t{0}));
  DimVector strides(distinct.size(), 0), sizes;
  DimVector all = contiguous_strides(out_sizes);
  for (size_t i = 0; i < distinct.size(); ++i) {
    sizes.push_back(l.size[distinct[i]]);
    for (size_t d = 0; d < l.output.size(); ++d) {
      if (l.output[d] == distinct[i]) strides[i] += all[d];
    }
  }
  copy_into(out.as_strided(sizes, strides, 0), arranged(r, distinct, l.size));
  return out;
}

// The labels the output keeps: in the output with their full size (not 1 there while
// larger elsewhere, which einsum_backward sums). Labels of size 1 are dropped.
std::vector<bool> kept_labels(const Labels& l, const std::vector<int64_t>* out_size) {
  std::vector<bool> kept(kMaxLabels, false);
  for (size_t d = 0; d < l.output.size(); ++d) {
    int label = l.output[d];
    kept[label] = l.size[label] != 1 && (!out_size || (*out_size)[d] == l.size[label]);
  }
  return kept;
}

void check_operand_count(const EinsumEquation& e, const std::vector<Tensor>& tensors) {
  TSL_CHECK(!tensors.empty(),
            "einsum(): must specify the equation string and at least one operand, or at least "
            "one operand and its subscripts list");
  TSL_CHECK(e.operands.size() <= tensors.size(),
            "einsum(): fewer operands were provided than specified in the equation");
  TSL_CHECK(e.operands.size() >= tensors.size(),
            "einsum(): more operands were provided than specified in the equation");
  for (const Tensor& t : tensors) check_same_device(t, tensors[0].device());
}

// einsum (out_size null) and einsum_backward (the output's sizes given).
Tensor einsum_impl(const std::string& equation, const std::vector<Tensor>& tensors,
                   const std::vector<int64_t>* out_size) {
  EinsumEquation e = parse_einsum_equation(equation, out_size == nullptr);
  check_operand_count(e, tensors);
  Labels l = label_dims(e, tensors, out_size);
  std::vector<bool> kept = kept_labels(l, out_size);
  std::vector<Factor> factors;
  std::vector<int64_t> last_use(kMaxLabels, -1);
  for (size_t k = 0; k < tensors.size(); ++k) {
    factors.push_back(align(tensors[k], l.operands[k]));
    for (int label : factors.back().labels) last_use[label] = static_cast<int64_t>(k);
  }
  auto done_at = [&](int64_t k) {
    return [&, k](int label) { return !kept[label] && last_use[label] == k; };
  };
  Factor r = factors[0];
  sum_labels(r, done_at(0));
  for (size_t k = 1; k < factors.size(); ++k) {
    Factor& f = factors[k];
    auto done = done_at(static_cast<int64_t>(k));
    sum_labels(f, [&](int label) { return done(label) && !r.has(label); });
    std::vector<int> summed;
    for (int label : f.labels) {
      if (done(label) && r.has(label)) summed.push_back(label);
    }
    r = contract(r, f, summed, l.size);
  }
  return write_output(r, l, kept);
}

Tensor einsum(const std::string& equation, const std::vector<Tensor>& tensors,
              std::optional<std::vector<int64_t>> path) {
  (void)path;  // a contraction order hint; TSL contracts left to right
  return einsum_impl(equation, tensors, nullptr);
}

Tensor einsum_backward(const std::string& equation, const std::vector<Tensor>& tensors,
                       std::vector<int64_t> size) {
  return einsum_impl(equation, tensors, &size);
}

}  // namespace

void register_einsum_kernels() {
  TSL_REGISTER_CPU(einsum, einsum);
  TSL_REGISTER_CPU(einsum_backward, einsum_backward);
}

}  // namespace tsl::cpu
