// Every kernel of the op table, driven from the table: each op is called on tensors
// of every dtype, 0-dim, zero-size, non-contiguous and broadcast shapes, and must
// either return or raise a user error (tsl::Error) — never an internal error and
// never a crash. A new op joins this test by its row in runtime/ops.def.
#include <gtest/gtest.h>

#include <functional>

#include "ir/schema.h"
#include "runtime/kernels/kernel.h"

namespace tsl {
namespace {

Tensor make(DType dtype, std::vector<int64_t> sizes, int64_t salt) {
  std::vector<double> values;
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  Tensor t = Tensor::empty(sizes, dtype);
  TSL_DISPATCH_ALL(dtype, "make", [&] {
    scalar_t* p = t.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      double v = static_cast<double>((i * 7 + salt * 3) % 5) - 1.5;  // mixed signs, no zeros
      if constexpr (std::is_same_v<scalar_t, bool>)
        p[i] = ((i + salt) % 3) != 0;
      else if constexpr (std::is_integral_v<scalar_t>)
        p[i] = static_cast<scalar_t>((i + salt) % 4);
      else
        p[i] = static_cast<scalar_t>(v);
    }
  });
  return t;
}

// Samples of one dtype: 0-dim, zero-size, a vector, a matrix, a transposed (non-
// contiguous) matrix, an expanded (stride 0) matrix and a 3-D tensor.
std::vector<Tensor> samples(DType dtype) {
  std::vector<Tensor> out;
  out.push_back(make(dtype, {}, 1));
  out.push_back(make(dtype, {0, 3}, 2));
  out.push_back(make(dtype, {3}, 3));
  out.push_back(make(dtype, {2, 3}, 4));
  Tensor m = make(dtype, {3, 2}, 5);
  int64_t tsizes[] = {2, 3};
  int64_t tstrides[] = {1, 2};
  out.push_back(m.as_strided(tsizes, tstrides, 0));
  Tensor row = make(dtype, {3}, 6);
  int64_t estrides[] = {0, 1};
  out.push_back(row.as_strided(tsizes, estrides, 0));
  out.push_back(make(dtype, {2, 1, 3}, 7));
  return out;
}

const DType kDTypes[] = {DType::Bool, DType::Int64, DType::Float32, DType::Float64};

// A value for a non-tensor argument without a default, or nullopt to skip the op.
std::optional<IValue> filler(const Argument& a) {
  if (a.default_value) return *a.default_value;
  switch (a.type->kind()) {
    case TypeKind::Int:
      return IValue(int64_t{0});
    case TypeKind::Float:
      return IValue(0.5);
    case TypeKind::Bool:
      return IValue(false);
    case TypeKind::Number:
      return IValue(int64_t{1});
    case TypeKind::DType:
      return IValue(DType::Float32);
    case TypeKind::Optional:
      return IValue();
    case TypeKind::List:
      if (a.type->element()->kind() == TypeKind::Int)
        return IValue::int_list(std::vector<int64_t>{0});
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

bool is_tensor_arg(const Argument& a) {
  TypePtr t = a.type;
  if (t->kind() == TypeKind::Optional) t = t->element();
  return t->kind() == TypeKind::Tensor;
}

bool is_tensor_list_arg(const Argument& a) {
  return a.type->kind() == TypeKind::List && a.type->element()->kind() == TypeKind::Tensor;
}

// Calls `op` with the tensor arguments taken from `pick`; reports internal errors.
void call_checked(const FunctionSchema& s, const std::function<Tensor(size_t)>& pick,
                  std::string& failures) {
  std::vector<IValue> args;
  size_t tensor_index = 0;
  for (const Argument& a : s.arguments) {
    if (a.variadic) return;
    if (is_tensor_arg(a)) {
      args.emplace_back(pick(tensor_index++));
    } else if (is_tensor_list_arg(a)) {
      args.push_back(IValue::list({IValue(pick(tensor_index)), IValue(pick(tensor_index + 1))}));
      tensor_index += 2;
    } else {
      std::optional<IValue> v = filler(a);
      if (!v) return;
      args.push_back(*v);
    }
  }
  uint32_t outputs = s.returns.empty() ? 1 : static_cast<uint32_t>(s.returns.size());
  try {
    std::vector<IValue> result = call_op(s.op, args, outputs);
    for (const IValue& r : result) (void)r.str();  // results print without error
  } catch (const InternalError& e) {
    failures += std::string(s.name) + ": " + e.what() + "\n";
  } catch (const Error&) {
    // A user error is a fine answer to arguments the op does not accept.
  }
}

TEST(OpTableKernels, NoInternalErrorsForAnyDtypeOrLayout) {
  ensure_kernels_registered();
  std::string failures;
  size_t ops_called = 0;
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = op_info(static_cast<OpId>(i));
    if (info.has(opflags::PRIM) || info.name == "print" || info.name == "save" ||
        info.name == "load" || info.name == "load_csv" || info.name == "manual_seed") {
      continue;
    }
    const FunctionSchema& s = schema_of(info.id);
    size_t tensors = 0;
    for (const Argument& a : s.arguments)
      tensors += is_tensor_arg(a) ? 1 : is_tensor_list_arg(a) ? 2 : 0;
    if (tensors == 0) continue;
    ++ops_called;
    for (DType a : kDTypes) {
      for (DType b : kDTypes) {
        if (tensors == 1 && b != a) continue;
        std::vector<Tensor> sa = samples(a), sb = samples(b);
        for (size_t x = 0; x < sa.size(); ++x) {
          for (size_t y = 0; y < (tensors == 1 ? 1 : sb.size()); ++y) {
            call_checked(
                s,
                [&](size_t k) {
                  return k == 0 ? sa[x] : (k % 2 ? sb[y] : sa[(x + k) % sa.size()]);
                },
                failures);
          }
        }
      }
    }
  }
  EXPECT_GT(ops_called, 150u);
  EXPECT_EQ(failures, "");
}

}  // namespace
}  // namespace tsl
