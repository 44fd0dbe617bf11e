// CPU kernels of the ops that turn class indices into rows: embedding (the rows of a
// weight matrix, F.embedding's argument order) and one_hot.
#include <cstring>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/reduction_common.h"
#include "runtime/kernels/cpu/shape_kernels.h"

namespace tsl::cpu {
namespace {

// "torch.FloatTensor": the legacy type names of PyTorch's argument checks.
std::string legacy_type_name(DType t) { return str("torch.", scalar_type_name(t), "Tensor"); }

// PyTorch's F.embedding wraps a negative padding_idx and checks it against the rows.
void check_padding_idx(std::optional<int64_t> padding_idx, int64_t rows) {
  if (!padding_idx) return;
  TSL_CHECK(*padding_idx < rows && *padding_idx >= -rows,
            "Padding_idx must be within num_embeddings");
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx,
                 std::optional<double> max_norm, double norm_type, bool scale_grad_by_freq,
                 bool sparse) {
  (void)norm_type, (void)scale_grad_by_freq, (void)sparse;  // they change only the gradient
  check_same_device(input, weight.device());
  TSL_CHECK(input.dtype() == DType::Int64,
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            "Long, Int; but got ",
            legacy_type_name(input.dtype()), " instead (while checking arguments for embedding)");
  TSL_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  // max_norm renormalizes rows of weight in place as a side effect of the lookup.
  TSL_CHECK(!max_norm,
            "embedding(): max_norm is not supported in TSL (PyTorch renormalizes "
            "weight in place there); renormalize weight explicitly");
  int64_t rows = weight.sizes()[0];
  check_padding_idx(padding_idx, rows);
  Tensor ids = input.contiguous();
  if (!ids.device().is_cpu()) {
    if (ids.numel() > 0) {
      const auto [lo, hi] = device_min_max(ids);
      TSL_CHECK(lo >= 0 && hi < rows, "index out of range in self");
    }
  } else {
    const int64_t* id = ids.data_ptr<int64_t>();
    for (int64_t i = 0; i < ids.numel(); ++i) {
      TSL_CHECK(id[i] >= 0 && id[i] < rows, "index out of range in self");
    }
  }
  Tensor flat = ids.as_strided(DimVector{ids.numel()}, DimVector{1}, ids.storage_offset());
  Tensor picked = index_select(weight, 0, flat);
  DimVector shape = input.sizes();
  shape.push_back(weight.sizes()[1]);
  return picked.as_strided(shape, contiguous_strides(shape), 0);
}

Tensor one_hot(const Tensor& input, int64_t num_classes) {
  TSL_CHECK(input.dtype() == DType::Int64, "one_hot is only applicable to index tensor.");
  DimVector shape = input.sizes();
  if (input.numel() == 0) {
    TSL_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
    shape.push_back(num_classes);
    return Tensor::empty(shape, DType::Int64, input.device());
  }
  if (!input.device().is_cpu()) {
    // On a device: the same checks on the min and max, then input[..., None] == classes.
    const auto [lo, hi] = device_min_max(input);
    TSL_CHECK(lo >= 0, "Class values must be non-negative.");
    if (num_classes == -1) num_classes = hi + 1;
    TSL_CHECK(num_classes > hi, "Class values must be smaller than num_classes.");
    Tensor classes = Tensor::empty(DimVector{num_classes}, DType::Int64);
    for (int64_t c = 0; c < num_classes; ++c) classes.data_ptr<int64_t>()[c] = c;
    DimVector column_strides = input.strides();
    column_strides.push_back(0);
    DimVector column_sizes = input.sizes();
    column_sizes.push_back(1);
    Tensor column = input.as_strided(column_sizes, column_strides, input.storage_offset());
    Tensor hot = op1(OpId::eq, {IValue(column), IValue(copy_to_device(classes, input.device()))});
    return to_dtype_copy(hot, DType::Int64);
  }
  Tensor ids = input.contiguous();
  const int64_t* id = ids.data_ptr<int64_t>();
  int64_t n = ids.numel();
  int64_t lo = *std::min_element(id, id + n), hi = *std::max_element(id, id + n);
  TSL_CHECK(lo >= 0, "Class values must be non-negative.");
  if (num_classes == -1) num_classes = hi + 1;
  TSL_CHECK(num_classes > hi, "Class values must be smaller than num_classes.");
  shape.push_back(num_classes);
  Tensor out = Tensor::empty(shape, DType::Int64);
  int64_t* o = out.data_ptr<int64_t>();
  std::memset(o, 0, out.nbytes());
  for (int64_t i = 0; i < n; ++i) o[i * num_classes + id[i]] = 1;
  return out;
}

}  // namespace

void register_embedding_kernels() {
  TSL_REGISTER_CPU(embedding, embedding);
  TSL_REGISTER_CPU(one_hot, one_hot);
}

}  // namespace tsl::cpu
