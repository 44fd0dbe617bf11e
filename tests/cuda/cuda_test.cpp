// The CUDA backend against the CPU kernels (issue 18). Every test here but the first
// group needs a GPU and skips without one (`ctest -L gpu`; scripts/gpu-check runs them
// on a lent GPU). Each CUDA kernel is run on the same arguments as the CPU kernel,
// over dtypes and layouts (contiguous, transposed, broadcast, 0-dim, zero-size), and
// must give the same dtype, shape and numbers (within float tolerance), or the same
// error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "frontend/compilation_unit.h"
#include "runtime/kernels/cuda/cuda_context.h"
#include "runtime/kernels/cuda/launch.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/device_backend.h"
#include "runtime/tensor/tensor_print.h"
#include "tests/common/programs.h"
#include "tests/cuda/cuda_test_util.h"

namespace tsl {
namespace {

#define REQUIRE_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "no GPU: " << cuda::unavailable_reason()

// ---- Without a GPU: clear errors ------------------------------------------------------

TEST(CudaWithoutGpu, UsesOfCudaSayWhy) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present";
  Tensor x = Tensor::from_vector<float>({1, 2, 3});
  try {
    call_op(OpId::to_device, {IValue(x), IValue(kGpu)});
    FAIL() << "to(cuda) without a GPU did not fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA is not available"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(call_op(OpId::cuda_is_available, {}).at(0).to_bool());
}

// Whether an op has a tensor argument: ops without one (factories, manual_seed) run
// their CPU kernel, which reads device= and the default device.
bool takes_a_tensor(OpId op) {
  std::string_view schema = op_info(op).schema;
  std::string_view args = schema.substr(0, schema.rfind("->"));
  return args.find("Tensor") != std::string_view::npos;
}

// Every op with a CPU tensor kernel has a CUDA kernel (or a generic one), or is on the
// CUDA backend's list of ops still waiting for one (cuda::ops_without_cuda_kernel):
// the list is the backlog, stated in one place, and an op that gains a kernel must leave
// it. Needs no GPU: registration does not touch the device.
TEST(CudaCoverage, EveryCpuTensorOpHasACudaKernelOrIsListedAsMissing) {
  ensure_kernels_registered();
  const std::vector<OpId>& pending = cuda::ops_without_cuda_kernel();
  std::string missing, listed_but_present;
  int with_cuda = 0;
  for (int i = 0; i < kNumOps; ++i) {
    const OpId op = static_cast<OpId>(i);
    if (!has_device_kernel(DeviceType::CPU, op) || !takes_a_tensor(op)) continue;
    const bool has_cuda = has_device_kernel(DeviceType::CUDA, op);
    const bool is_listed = std::find(pending.begin(), pending.end(), op) != pending.end();
    with_cuda += has_cuda;
    if (!has_cuda && !is_listed) missing += " " + std::string(op_info(op).name);
    if (has_cuda && is_listed) listed_but_present += " " + std::string(op_info(op).name);
  }
  EXPECT_EQ(missing, "") << "ops with a CPU kernel, no CUDA kernel, and not listed as pending";
  EXPECT_EQ(listed_but_present, "") << "listed as pending but they have a CUDA kernel now";
  RecordProperty("ops_with_cuda_kernels", with_cuda);
  RecordProperty("ops_pending", static_cast<int>(pending.size()));
}

// ---- Comparing a CUDA run with the CPU run --------------------------------------------

// An op's outcome: its first output, or the message of the error it raised.
struct Outcome {
  IValue value;
  std::string error;
};

Outcome run(OpId op, const std::vector<IValue>& args, uint32_t out = 0) {
  try {
    // max.dim and min.dim have two outputs; registers for fewer would be overrun.
    return {call_op(op, args, std::max(out + 1, 2u)).at(out), ""};
  } catch (const Error& e) {
    return {IValue(), e.what()};
  }
}

// A view of `t` on `d` with the same sizes, strides and offset (copies keep neither).
Tensor same_layout_on(const Tensor& t, Device d) {
  Tensor base = Tensor::empty(
      DimVector{static_cast<int64_t>(t.storage()->nbytes() / element_size(t.dtype()))}, t.dtype(),
      d);
  Tensor src = t.as_strided(DimVector{base.numel()}, DimVector{1}, 0);
  copy_into(base, src);
  return base.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

double tolerance(DType t) { return t == DType::Float32 ? 2e-5 : t == DType::Float64 ? 1e-12 : 0; }

std::string describe(OpId op, const std::vector<IValue>& args) {
  std::string s = std::string(op_info(op).name) + "(";
  for (const IValue& a : args) {
    if (a.is_tensor() && a.tensor_impl()) {
      Tensor t = a.to_tensor();
      s += std::string(dtype_name(t.dtype())) + shape_str(t.sizes()) +
           (t.is_contiguous() ? "" : "(strided)") + (t.is_wrapped_number() ? "(number)" : "") +
           ", ";
    } else {
      s += a.tag_name() + std::string(", ");
    }
  }
  return s + ")";
}

void expect_same(const Tensor& cpu, const Tensor& gpu, const std::string& what) {
  ASSERT_TRUE(gpu.device().is_cuda()) << what << ": the result is on " << gpu.device().str();
  ASSERT_EQ(cpu.dtype(), gpu.dtype()) << what;
  ASSERT_EQ(cpu.sizes(), gpu.sizes()) << what;
  Tensor a = Tensor::empty(cpu.sizes(), DType::Float64),
         b = Tensor::empty(gpu.sizes(), DType::Float64);
  copy_into(a, cpu);
  copy_into(b, gpu);
  const double* x = a.data_ptr<double>();
  const double* y = b.data_ptr<double>();
  double tol = tolerance(cpu.dtype());
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i])) << what << " at " << i << ": cpu nan, cuda " << y[i];
    } else if (std::isinf(x[i])) {
      EXPECT_EQ(x[i], y[i]) << what << " at " << i;
    } else {
      EXPECT_NEAR(x[i], y[i], tol * std::max(1.0, std::abs(x[i]))) << what << " at " << i;
    }
  }
}

// Runs `op` on the CPU and with its tensors on the GPU (same layouts); both must agree
// on output `out`.
void compare(OpId op, const std::vector<IValue>& cpu_args, uint32_t out = 0) {
  auto on_gpu = [](const IValue& a) {
    if (a.is_tensor() && a.tensor_impl() && !a.to_tensor().is_wrapped_number()) {
      return IValue(same_layout_on(a.to_tensor(), kGpu));
    }
    return a;
  };
  std::vector<IValue> gpu_args;
  for (const IValue& a : cpu_args) {
    const bool has_tensors =
        a.is_list() && std::any_of(a.to_list().elements.begin(), a.to_list().elements.end(),
                                   [](const IValue& e) { return e.is_tensor(); });
    if (has_tensors) {
      std::vector<IValue> elems;
      for (const IValue& e : a.to_list().elements) elems.push_back(on_gpu(e));
      gpu_args.push_back(IValue::list(std::move(elems)));
    } else {
      gpu_args.push_back(on_gpu(a));
    }
  }
  std::string what = describe(op, cpu_args);
  Outcome c = run(op, cpu_args, out), g = run(op, gpu_args, out);
  if (!c.error.empty() || !g.error.empty()) {
    EXPECT_EQ(c.error, g.error) << what;
    return;
  }
  ASSERT_TRUE(c.value.is_tensor() && g.value.is_tensor()) << what;
  expect_same(c.value.to_tensor(), g.value.to_tensor(), what);
}

Tensor values_tensor(std::vector<int64_t> shape, DType dtype, int salt = 0) {
  Tensor d = Tensor::empty(shape, DType::Float64);
  double* p = d.data_ptr<double>();
  static const double pool[] = {-2.5, -1, -0.5, 0, 0.25, 0.5, 1, 1.5, 2, 3, -3, 0.75, 7, -0.125};
  for (int64_t i = 0; i < d.numel(); ++i) p[i] = pool[(i * 5 + salt) % 14];
  if (dtype == DType::Float64) return d;
  Tensor out = Tensor::empty(shape, dtype);
  copy_into(out, d);
  return out;
}

// Operand layouts: contiguous [3, 5], a transposed [5, 3] view, 0-dim, zero-size [0, 4].
std::vector<Tensor> layouts(DType dtype, int salt = 0) {
  Tensor t = values_tensor({5, 3}, dtype, salt);
  return {values_tensor({3, 5}, dtype, salt), call_op(OpId::t, {IValue(t)}).at(0).to_tensor(),
          values_tensor(std::vector<int64_t>{}, dtype, salt + 3),
          values_tensor({0, 4}, dtype, salt)};
}

constexpr DType kDTypes[] = {DType::Bool, DType::Int64, DType::Float32, DType::Float64};

// The arguments after self for the unary ops that take some.
std::vector<std::vector<IValue>> unary_extras(OpId op) {
  switch (op) {
    case OpId::clamp:
    case OpId::clip:
      return {{IValue(-0.5), IValue(1.0)},
              {IValue(), IValue(int64_t{1})},
              {IValue(int64_t{0}), IValue()}};
    case OpId::leaky_relu:
      return {{IValue(0.2)}};
    case OpId::hardtanh:
      return {{IValue(-0.5), IValue(1.0)}, {IValue(int64_t{-1}), IValue(int64_t{1})}};
    case OpId::logit:
      return {{IValue()}, {IValue(0.2)}};
    case OpId::elu:
      return {{IValue(1.5)}};
    case OpId::softplus:
      return {{IValue(int64_t{1}), IValue(int64_t{20})}, {IValue(2.0), IValue(1.0)}};
    case OpId::gelu:
      return {{IValue(std::string("none"))}, {IValue(std::string("tanh"))}};
    default:
      return {{}};
  }
}

TEST(CudaKernels, UnaryOpsMatchTheCpu) {
  REQUIRE_GPU();
  std::vector<OpId> ops = {
#define TSL_ID(name) OpId::name,
      TSL_CUDA_UNARY_OPS(TSL_ID)
#undef TSL_ID
  };
  for (OpId op : ops) {
    for (DType dt : kDTypes) {
      for (const Tensor& x : layouts(dt)) {
        for (const std::vector<IValue>& extra : unary_extras(op)) {
          std::vector<IValue> args{IValue(x)};
          args.insert(args.end(), extra.begin(), extra.end());
          compare(op, args);
        }
      }
    }
  }
}

TEST(CudaKernels, BinaryOpsMatchTheCpu) {
  REQUIRE_GPU();
  std::vector<OpId> ops = {
#define TSL_ID(name) OpId::name,
      TSL_CUDA_BINARY_OPS(TSL_ID)
#undef TSL_ID
  };
  for (OpId op : ops) {
    bool alpha = op == OpId::add || op == OpId::sub || op == OpId::add_ || op == OpId::sub_;
    for (DType da : kDTypes) {
      for (DType db : kDTypes) {
        std::vector<Tensor> as = layouts(da), bs = layouts(db, 7);
        // Same shapes, broadcasting ([3, 5] with a row [5] and a column [3, 1]), 0-dim
        // (on the device), Python numbers.
        std::vector<std::pair<Tensor, Tensor>> pairs = {
            {as[0], bs[0]},
            {as[1], bs[0]},
            {as[0], bs[1]},
            {as[0], values_tensor({5}, db, 2)},
            {values_tensor({3, 1}, da), values_tensor({1, 5}, db)},
            {as[0], bs[2]},
            {as[2], bs[0]},
            {as[3], values_tensor({4}, db)}};
        if (da == DType::Float32) {
          pairs.push_back({as[0], wrap_number(IValue(2.5))});
          pairs.push_back({as[0], wrap_number(IValue(int64_t{2}))});
        }
        for (const auto& [a, b] : pairs) {
          std::vector<IValue> args{IValue(a), IValue(b)};
          if (alpha) args.emplace_back(int64_t{1});
          if (op == OpId::div) {
            for (const char* mode : {"floor", "trunc"}) {
              compare(op, {IValue(a), IValue(b), IValue(std::string(mode))});
            }
            args.emplace_back();  // rounding_mode=None
          }
          compare(op, args);
          if (alpha && is_floating(da) && is_floating(db)) {
            args.back() = IValue(0.5);
            compare(op, args);
          }
        }
      }
    }
  }
}

// Note [Two walks of an elementwise loop]: flat loops whose pointers are aligned take
// the vectorized walk, with a tail when the length is not a multiple of its packs;
// others (a pointer one element off) the strided one. Both give the CPU's numbers.
TEST(CudaKernels, VectorizedAndStridedWalksMatchTheCpu) {
  REQUIRE_GPU();
  for (DType dt : kDTypes) {
    for (int64_t n : {1, 3, 4, 9, 1027, 70001}) {
      for (int64_t shift : {0, 1}) {
        Tensor base = values_tensor({n + 1}, dt), other = values_tensor({n + 1}, dt, 5);
        Tensor x = base.as_strided(DimVector{n}, DimVector{1}, shift);
        Tensor y = other.as_strided(DimVector{n}, DimVector{1}, 1 - shift);
        compare(OpId::neg, {IValue(x)});
        compare(OpId::abs, {IValue(x)});
        compare(OpId::add, {IValue(x), IValue(y), IValue(int64_t{1})});
        compare(OpId::mul, {IValue(x), IValue(x)});
        compare(OpId::mul, {IValue(x), wrap_number(IValue(int64_t{3}))});
        compare(OpId::lt, {IValue(x), IValue(y)});
        compare(OpId::to_dtype, {IValue(x), IValue(DType::Float64)});
        compare(OpId::to_dtype, {IValue(x), IValue(DType::Bool)});
        Tensor cond = run(OpId::gt, {IValue(x), IValue(y)}).value.to_tensor();
        compare(OpId::where, {IValue(cond), IValue(x), IValue(y)});
      }
    }
  }
}

TEST(CudaKernels, WhereMatchesTheCpu) {
  REQUIRE_GPU();
  Tensor cond = call_op(OpId::gt, {IValue(values_tensor({3, 5}, DType::Float32)), IValue(0.2)})
                    .at(0)
                    .to_tensor();
  for (DType da : kDTypes) {
    for (DType db : {DType::Float32, DType::Int64}) {
      compare(OpId::where,
              {IValue(cond), IValue(values_tensor({3, 5}, da)), IValue(values_tensor({5}, db, 3))});
      compare(OpId::where,
              {IValue(cond), IValue(values_tensor({3, 5}, da)), IValue(wrap_number(IValue(0.0)))});
    }
  }
}

TEST(CudaKernels, SumAndMeanMatchTheCpu) {
  REQUIRE_GPU();
  using Dims = std::optional<std::vector<int64_t>>;
  for (DType dt : kDTypes) {
    Tensor x = values_tensor({4, 5, 6}, dt);
    Tensor xt = call_op(OpId::transpose, {IValue(x), IValue(int64_t{0}), IValue(int64_t{2})})
                    .at(0)
                    .to_tensor();
    for (const Tensor& in :
         {x, xt, values_tensor(std::vector<int64_t>{}, dt), values_tensor({0, 3}, dt)}) {
      for (Dims dims : {Dims(), Dims(std::vector<int64_t>{0}), Dims(std::vector<int64_t>{-1}),
                        Dims(std::vector<int64_t>{0, 2})}) {
        if (dims && in.dim() < 3 && (*dims)[0] != 0 && (*dims)[0] != -1) continue;
        for (bool keepdim : {false, true}) {
          IValue d = dims ? IValue::int_list(*dims) : IValue();
          compare(OpId::sum, {IValue(in), d, IValue(keepdim), IValue()});
          compare(OpId::mean, {IValue(in), d, IValue(keepdim), IValue()});
        }
      }
    }
  }
  // Columns summed in chunks of rows, then over the chunks (few outputs, many rows: a
  // bias gradient), once or twice over.
  for (DType dt : kDTypes) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{600, 300}, std::vector<int64_t>{5000, 7},
          std::vector<int64_t>{3, 70, 5}}) {
      Tensor in = values_tensor(shape, dt);
      compare(OpId::sum,
              {IValue(in), IValue::int_list(std::vector<int64_t>{0}), IValue(false), IValue()});
      compare(OpId::mean,
              {IValue(in), IValue::int_list(std::vector<int64_t>{-2}), IValue(true), IValue()});
      compare(OpId::amax, {IValue(in), IValue::int_list(std::vector<int64_t>{-2}), IValue(false)});
      compare(OpId::any, {IValue(in), IValue(int64_t{-2}), IValue(false)});
    }
  }
  // The other reductions share the CPU kernels' checks; the loops are the device's.
  for (DType dt : kDTypes) {
    Tensor x = values_tensor({4, 5, 6}, dt);
    Tensor xt = call_op(OpId::transpose, {IValue(x), IValue(int64_t{0}), IValue(int64_t{2})})
                    .at(0)
                    .to_tensor();
    for (const Tensor& in :
         {x, xt, values_tensor(std::vector<int64_t>{}, dt), values_tensor({0, 3}, dt)}) {
      compare(OpId::max, {IValue(in)});
      compare(OpId::min, {IValue(in)});
      for (int64_t d : {0, -1}) {
        for (bool keepdim : {false, true}) {
          compare(OpId::prod, {IValue(in), IValue(d), IValue(keepdim), IValue()});
          compare(OpId::any, {IValue(in), IValue(d), IValue(keepdim)});
          compare(OpId::all, {IValue(in), IValue(d), IValue(keepdim)});
          compare(OpId::amax,
                  {IValue(in), IValue::int_list(std::vector<int64_t>{d}), IValue(keepdim)});
          compare(OpId::amin,
                  {IValue(in), IValue::int_list(std::vector<int64_t>{d}), IValue(keepdim)});
        }
      }
      compare(OpId::prod, {IValue(in), IValue(), IValue(false), IValue()});
      for (int64_t d : {0, -1}) {
        for (bool keepdim : {false, true}) {
          for (uint32_t k : {0u, 1u}) {
            compare(OpId::max_dim, {IValue(in), IValue(d), IValue(keepdim)}, k);
            compare(OpId::min_dim, {IValue(in), IValue(d), IValue(keepdim)}, k);
          }
          compare(OpId::argmax, {IValue(in), IValue(d), IValue(keepdim)});
          compare(OpId::argmin, {IValue(in), IValue(d), IValue(keepdim)});
        }
      }
      compare(OpId::argmax, {IValue(in), IValue(), IValue(false)});
      compare(OpId::any, {IValue(in), IValue(), IValue(false)});
      compare(OpId::all, {IValue(in), IValue(), IValue(false)});
    }
  }
  Tensor with_nan =
      call_op(OpId::log, {IValue(values_tensor({3, 4}, DType::Float32))}).at(0).to_tensor();
  compare(OpId::amax, {IValue(with_nan), IValue::int_list(std::vector<int64_t>{1}), IValue(false)});
  compare(OpId::max, {IValue(with_nan)});
  compare(OpId::argmax, {IValue(with_nan), IValue(int64_t{1}), IValue(false)});
  // Ties give the first position, in long rows too (several threads per row).
  Tensor ties = call_op(OpId::zeros, {IValue::int_list(std::vector<int64_t>{2, 3000}), IValue(),
                                      IValue(), IValue(false)})
                    .at(0)
                    .to_tensor();
  compare(OpId::argmax, {IValue(ties), IValue(int64_t{1}), IValue(false)});
  compare(OpId::argmin, {IValue(ties), IValue(int64_t{0}), IValue(false)});
  // var, std, logsumexp and norm: compositions of device kernels, equal to rounding.
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = values_tensor({4, 5, 6}, dt);
    for (bool unbiased : {true, false}) {
      compare(OpId::var, {IValue(x), IValue(unbiased)});
      compare(OpId::std, {IValue(x), IValue(unbiased)});
      compare(OpId::var_dim, {IValue(x), IValue::int_list(std::vector<int64_t>{1}),
                              IValue(unbiased), IValue(true)});
      compare(OpId::std_dim, {IValue(x), IValue::int_list(std::vector<int64_t>{0, 2}),
                              IValue(unbiased), IValue(false)});
    }
    for (bool keepdim : {false, true}) {
      compare(OpId::logsumexp,
              {IValue(x), IValue::int_list(std::vector<int64_t>{1}), IValue(keepdim)});
      for (double order : {2.0, 1.0, 0.0, 3.0, double(INFINITY), -double(INFINITY)}) {
        compare(OpId::norm, {IValue(x), IValue(order), IValue::int_list(std::vector<int64_t>{2}),
                             IValue(keepdim)});
      }
    }
    compare(OpId::norm, {IValue(x), IValue(2.0), IValue(), IValue(false)});
  }
  // Long rows take the two-pass path.
  Tensor big = values_tensor({3, 100000}, DType::Float64);
  compare(OpId::sum, {IValue(big), IValue(), IValue(false), IValue()});
  compare(OpId::sum,
          {IValue(big), IValue::int_list(std::vector<int64_t>{1}), IValue(false), IValue()});
  compare(OpId::sum_to_size, {IValue(values_tensor({4, 3, 5}, DType::Float32)),
                              IValue::int_list(std::vector<int64_t>{3, 1})});
}

TEST(CudaKernels, MatrixProductsMatchTheCpu) {
  REQUIRE_GPU();
  // int64 products are PyTorch's CUDA error (cuBLAS has none); the CPU computes them.
  Outcome ints = run(OpId::mm, {IValue(copy_to_device(values_tensor({2, 2}, DType::Int64), kGpu)),
                                IValue(copy_to_device(values_tensor({2, 2}, DType::Int64), kGpu))});
  EXPECT_EQ(ints.error, "\"addmm_cuda\" not implemented for 'Long'");
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor a = values_tensor({7, 5}, dt), b = values_tensor({5, 3}, dt, 1);
    Tensor at = call_op(OpId::t, {IValue(values_tensor({5, 7}, dt))}).at(0).to_tensor();
    Tensor bt = call_op(OpId::t, {IValue(values_tensor({3, 5}, dt))}).at(0).to_tensor();
    for (const Tensor& x : {a, at})
      for (const Tensor& y : {b, bt}) compare(OpId::mm, {IValue(x), IValue(y)});
    compare(OpId::mm, {IValue(a), IValue(a)});  // shape error
    compare(OpId::bmm,
            {IValue(values_tensor({2, 4, 5}, dt)), IValue(values_tensor({2, 5, 3}, dt, 2))});
    compare(OpId::mv, {IValue(a), IValue(values_tensor({5}, dt))});
    compare(OpId::dot, {IValue(values_tensor({5}, dt)), IValue(values_tensor({5}, dt, 4))});
    std::vector<std::vector<int64_t>> shapes[] = {
        {{5}, {5}},          {{7, 5}, {5}},    {{5}, {5, 3}},
        {{2, 7, 5}, {5, 3}}, {{2, 7, 5}, {5}}, {{2, 1, 7, 5}, {3, 5, 4}},
        {{5}, {2, 5, 3}},    {{0, 5}, {5, 3}}, {{7, 0}, {0, 3}}};
    for (const auto& s : shapes) {
      compare(OpId::matmul, {IValue(values_tensor(s[0], dt)), IValue(values_tensor(s[1], dt, 3))});
    }
    Tensor w = values_tensor({4, 5}, dt, 5), bias = values_tensor({4}, dt, 6);
    for (const Tensor& in : {values_tensor({5}, dt), a, values_tensor({2, 3, 5}, dt)}) {
      compare(OpId::linear, {IValue(in), IValue(w), IValue(bias)});
      compare(OpId::linear, {IValue(in), IValue(w), IValue()});
    }
  }
}

TEST(CudaKernels, SoftmaxAndLossesMatchTheCpu) {
  REQUIRE_GPU();
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor x = values_tensor({4, 5, 3}, dt);
    for (int64_t dim : {0, 1, 2, -1}) {
      for (OpId op : {OpId::softmax, OpId::log_softmax}) {
        compare(op, {IValue(x), IValue(dim), IValue()});
        compare(op, {IValue(x), IValue(dim), IValue(DType::Float64)});
      }
    }
    compare(OpId::softmax,
            {IValue(values_tensor(std::vector<int64_t>{}, dt)), IValue(int64_t{0}), IValue()});
    compare(OpId::log_softmax, {IValue(values_tensor({0, 3}, dt)), IValue(int64_t{1}), IValue()});
  }
  Tensor big = values_tensor({3, 3000}, DType::Float32);
  compare(OpId::log_softmax, {IValue(big), IValue(int64_t{1}), IValue()});
  Tensor logits = values_tensor({6, 4}, DType::Float32);
  Tensor target = Tensor::from_vector<int64_t>({0, 3, 1, 2, 3, 1});
  Tensor ignored = Tensor::from_vector<int64_t>({0, -100, 1, 2, -100, 1});
  Tensor bad = Tensor::from_vector<int64_t>({0, 4, 1, 2, 3, 1});
  Tensor weight = Tensor::from_vector<float>({0.5, 1, 2, 0.25});
  Tensor spatial = values_tensor({2, 4, 3}, DType::Float32);
  Tensor spatial_target =
      Tensor::from_vector<int64_t>({0, 1, 2, 3, 3, 0}, std::vector<int64_t>{2, 3});
  for (const char* red : {"mean", "sum", "none"}) {
    IValue r{std::string(red)};
    for (OpId op : {OpId::nll_loss, OpId::cross_entropy}) {
      std::vector<IValue> tail;
      if (op == OpId::cross_entropy) tail.emplace_back(0.0);
      auto args = [&](const Tensor& in, const Tensor& t, IValue w) {
        std::vector<IValue> a{IValue(in), IValue(t), std::move(w), IValue(int64_t{-100}), r};
        a.insert(a.end(), tail.begin(), tail.end());
        return a;
      };
      compare(op, args(logits, target, IValue()));
      compare(op, args(logits, ignored, IValue()));
      compare(op, args(logits, target, IValue(weight)));
      compare(op, args(logits, ignored, IValue(weight)));
      compare(op, args(logits, bad, IValue()));  // "Target 4 is out of bounds."
      compare(op, args(spatial, spatial_target, IValue()));
      compare(op, args(values_tensor({4}, DType::Float32), Tensor::from_vector<int64_t>({2}),
                       IValue()));
    }
    compare(OpId::mse_loss, {IValue(logits), IValue(values_tensor({6, 4}, DType::Float32, 2)), r});
    compare(OpId::mse_loss, {IValue(logits), IValue(values_tensor({4}, DType::Float64, 2)), r});
    // Probability targets.
    Tensor probs = call_op(OpId::softmax, {IValue(values_tensor({6, 4}, DType::Float32, 3)),
                                           IValue(int64_t{1}), IValue()})
                       .at(0)
                       .to_tensor();
    compare(OpId::cross_entropy,
            {IValue(logits), IValue(probs), IValue(), IValue(int64_t{-100}), r, IValue(0.0)});
    compare(OpId::cross_entropy,
            {IValue(logits), IValue(probs), IValue(weight), IValue(int64_t{-100}), r, IValue(0.0)});
  }
}

TEST(CudaKernels, ScatterAddMatchesTheCpu) {
  REQUIRE_GPU();
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor self = values_tensor({3, 5}, dt);
    Tensor index = Tensor::from_vector<int64_t>({0, 4, 1, 2, 2, 3}, std::vector<int64_t>{3, 2});
    Tensor src = values_tensor({3, 2}, dt, 4);
    compare(OpId::scatter_add, {IValue(self), IValue(int64_t{1}), IValue(index), IValue(src)});
    Tensor col = Tensor::from_vector<int64_t>({2, 0, 1}, std::vector<int64_t>{3, 1});
    compare(OpId::scatter_add,
            {IValue(self), IValue(int64_t{0}), IValue(col), IValue(values_tensor({3, 1}, dt))});
    Tensor out_of_range =
        Tensor::from_vector<int64_t>({0, 5, 1, 2, 2, 3}, std::vector<int64_t>{3, 2});
    compare(OpId::scatter_add,
            {IValue(self), IValue(int64_t{1}), IValue(out_of_range), IValue(src)});
  }
}

TEST(CudaKernels, JoinsAndMasksMatchTheCpu) {
  REQUIRE_GPU();
  for (DType dt : kDTypes) {
    Tensor a = values_tensor({2, 3}, dt), b = values_tensor({4, 3}, dt, 1);
    Tensor bt = call_op(OpId::t, {IValue(values_tensor({3, 4}, dt, 2))}).at(0).to_tensor();
    compare(OpId::cat, {IValue::list({IValue(a), IValue(b), IValue(bt)}), IValue(int64_t{0})});
    compare(OpId::cat, {IValue::list({IValue(a), IValue(a)}), IValue(int64_t{1})});
    compare(OpId::stack, {IValue::list({IValue(a), IValue(a)}), IValue(int64_t{1})});
    compare(OpId::repeat, {IValue(a), IValue::int_list(std::vector<int64_t>{2, 1, 3})});
    compare(OpId::flip, {IValue(bt), IValue::int_list(std::vector<int64_t>{0})});
    compare(OpId::flip,
            {IValue(values_tensor({2, 3, 4}, dt)), IValue::int_list(std::vector<int64_t>{0, 2})});
    compare(OpId::select_scatter,
            {IValue(b), IValue(values_tensor({3}, dt, 4)), IValue(int64_t{0}), IValue(int64_t{2})});
    compare(OpId::slice_scatter,
            {IValue(b), IValue(values_tensor({4, 2}, dt, 4)), IValue(int64_t{1}),
             IValue(int64_t{0}), IValue(int64_t{3}), IValue(int64_t{2})});
    Tensor mask = call_op(OpId::gt, {IValue(values_tensor({2, 3}, DType::Float32, 5)), IValue(0.2)})
                      .at(0)
                      .to_tensor();
    compare(OpId::masked_fill_scalar, {IValue(a), IValue(mask), IValue(2.5)});
    compare(OpId::masked_fill_scalar,
            {IValue(values_tensor({3}, dt)), IValue(mask), IValue(int64_t{-1})});
    for (int64_t k : {-1, 0, 2}) {
      compare(OpId::tril, {IValue(values_tensor({2, 3, 4}, dt)), IValue(k)});
      compare(OpId::triu, {IValue(b), IValue(k)});
    }
  }
}

TEST(CudaKernels, GathersMatchTheCpu) {
  REQUIRE_GPU();
  for (DType dt : kDTypes) {
    Tensor self = values_tensor({3, 5}, dt);
    Tensor st = call_op(OpId::t, {IValue(values_tensor({5, 3}, dt, 1))}).at(0).to_tensor();
    Tensor index = Tensor::from_vector<int64_t>({0, 4, 1, 2, 2, 3}, std::vector<int64_t>{3, 2});
    for (const Tensor& s : {self, st}) {
      compare(OpId::gather, {IValue(s), IValue(int64_t{1}), IValue(index)});
      compare(OpId::gather,
              {IValue(s), IValue(int64_t{0}),
               IValue(Tensor::from_vector<int64_t>({2, 0, 1}, std::vector<int64_t>{1, 3}))});
      compare(OpId::index_select,
              {IValue(s), IValue(int64_t{1}), IValue(Tensor::from_vector<int64_t>({4, 0, 4}))});
      compare(OpId::index_select,
              {IValue(s), IValue(int64_t{0}), IValue(Tensor::from_vector<int64_t>({2}))});
      compare(OpId::index_select,
              {IValue(s), IValue(int64_t{0}), IValue(Tensor::from_vector<int64_t>({3}))});
      compare(OpId::gather,
              {IValue(s), IValue(int64_t{1}),
               IValue(Tensor::from_vector<int64_t>({0, 5}, std::vector<int64_t>{1, 2}))});
    }
  }
}

Tensor ids(std::vector<int64_t> v, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return Tensor::from_vector<int64_t>(v, shape);
}

IValue index_list(std::vector<std::optional<Tensor>> indices) {
  std::vector<IValue> elems;
  for (auto& i : indices) elems.push_back(i ? IValue(*i) : IValue());
  return IValue::list(std::move(elems));
}

TEST(CudaKernels, AdvancedIndexingMatchesTheCpu) {
  REQUIRE_GPU();
  Tensor mask = Tensor::from_vector<bool>({true, false, true}, std::vector<int64_t>{3});
  Tensor mask2 = Tensor::empty(DimVector{3, 5}, DType::Bool);
  for (int64_t i = 0; i < 15; ++i) mask2.data_ptr<bool>()[i] = i % 3 != 1;
  const std::vector<std::vector<std::optional<Tensor>>> cases = {
      {ids({2, 0, -2})},                      // one index, a negative one
      {ids({1, -1}, {2, 1})},                 // a 2-D index
      {std::nullopt, ids({4, 0, 3})},         // the second dim
      {ids({0, 2}), ids({1, -5})},            // two indices, paired
      {ids({0, 2}, {2, 1}), ids({1, 3, 4})},  // broadcast together
      {mask},                                 // a bool mask
      {mask2},                                // a mask over both dims
      {ids({3})},                             // out of range: the same error
      {std::nullopt, ids({-6})},              // below -size
      {ids({}, {0})},                         // empty
  };
  for (DType dt : kDTypes) {
    Tensor self = values_tensor({3, 5}, dt);
    Tensor st = call_op(OpId::t, {IValue(values_tensor({5, 3}, dt, 1))}).at(0).to_tensor();
    for (const Tensor& s : {self, st}) {
      for (const auto& c : cases) {
        compare(OpId::index, {IValue(s), index_list(c)});
        if (c.size() == 1 && c[0]->dtype() == DType::Bool && c[0]->dim() == 2) continue;
        Tensor picked = run(OpId::index, {IValue(s), index_list(c)}).value.is_tensor()
                            ? run(OpId::index, {IValue(s), index_list(c)}).value.to_tensor()
                            : Tensor();
        if (!picked.defined()) continue;
        Tensor values = values_tensor(
            std::vector<int64_t>(picked.sizes().begin(), picked.sizes().end()), dt, 4);
        compare(OpId::index_put, {IValue(s), index_list(c), IValue(values), IValue(false)});
        compare(OpId::index_put, {IValue(s), index_list(c), IValue(values), IValue(true)});
        Tensor target = call_op(OpId::clone, {IValue(s)}).at(0).to_tensor();
        compare(OpId::index_put_, {IValue(target), index_list(c), IValue(values), IValue(false)});
      }
      // Duplicates: the last write wins, as on the CPU; accumulating sums them all.
      const std::vector<std::pair<IValue, std::vector<int64_t>>> duplicates = {
          {index_list({ids({1, 1, 0, 1})}), {4, 5}},
          {index_list({ids({2, 0, -1})}), {3, 5}},
          {index_list({ids({0, 0}), ids({4, -1})}), {2}}};
      for (const auto& [dup, shape] : duplicates) {
        Tensor v = values_tensor(shape, dt, 1);
        compare(OpId::index_put, {IValue(s), dup, IValue(v), IValue(false)});
        Tensor target = call_op(OpId::clone, {IValue(s)}).at(0).to_tensor();
        compare(OpId::index_put_, {IValue(target), dup, IValue(v), IValue(false)});
        if (dt != DType::Bool) compare(OpId::index_put, {IValue(s), dup, IValue(v), IValue(true)});
      }
      for (int64_t dim : {0, 1}) {
        Tensor index = dim == 0 ? ids({2, 0, 2, 1}) : ids({4, 4, 0});
        std::vector<int64_t> src_shape =
            dim == 0 ? std::vector<int64_t>{4, 5} : std::vector<int64_t>{3, 3};
        for (IValue alpha : {IValue(int64_t{1}), IValue(int64_t{2})}) {
          compare(OpId::index_add, {IValue(s), IValue(dim), IValue(index),
                                    IValue(values_tensor(src_shape, dt, 3)), alpha});
        }
        compare(OpId::index_add, {IValue(s), IValue(dim), IValue(ids({0, 9, 1, 2})),
                                  IValue(values_tensor({4, 5}, dt)), IValue(int64_t{1})});
      }
    }
  }
}

TEST(CudaKernels, CompositionsMatchTheCpu) {
  REQUIRE_GPU();
  for (DType dt : kDTypes) {
    Tensor v = values_tensor({4}, dt);
    Tensor m = values_tensor({3, 5}, dt, 1);
    Tensor mt = call_op(OpId::t, {IValue(values_tensor({5, 3}, dt, 2))}).at(0).to_tensor();
    for (int64_t d : {0, 1, -2, 7}) {
      compare(OpId::diag, {IValue(v), IValue(d)});
      compare(OpId::diag, {IValue(m), IValue(d)});
      compare(OpId::diag, {IValue(mt), IValue(d)});
    }
    compare(OpId::diag_backward, {IValue(values_tensor({6, 6}, dt)),
                                  IValue::int_list(std::vector<int64_t>{4}), IValue(int64_t{2})});
    compare(OpId::diag_backward,
            {IValue(values_tensor({3}, dt)), IValue::int_list(std::vector<int64_t>{3, 5}),
             IValue(int64_t{1})});
    compare(OpId::outer, {IValue(v), IValue(values_tensor({3}, dt, 1))});
    compare(OpId::outer, {IValue(v), IValue(values_tensor({3}, DType::Float64, 1))});
    for (int64_t dim : {0, 1, -1}) {
      compare(OpId::cumsum, {IValue(m), IValue(dim), IValue()});
      compare(OpId::cumsum, {IValue(mt), IValue(dim), IValue()});
      compare(OpId::cumsum, {IValue(m), IValue(dim), IValue(DType::Float64)});
    }
    // Rows longer than one tile of the block scan.
    compare(OpId::cumsum, {IValue(values_tensor({3, 2500}, dt)), IValue(int64_t{1}), IValue()});
    compare(OpId::cumsum, {IValue(values_tensor({5000}, dt)), IValue(int64_t{0}), IValue()});
    // Floats only: PyTorch's CUDA bmm has no integer kernel ("addmm_cuda" not
    // implemented for 'Long'), and neither has TSL's (cuBLAS).
    if (is_floating(dt)) {
      Tensor b3 = values_tensor({2, 3, 4}, dt), b4 = values_tensor({2, 4, 5}, dt, 1);
      for (IValue beta : {IValue(int64_t{0}), IValue(int64_t{1}), IValue(2.0)}) {
        compare(OpId::baddbmm, {IValue(values_tensor({3, 5}, dt, 2)), IValue(b3), IValue(b4), beta,
                                IValue(int64_t{3})});
      }
    }
  }
  // allclose: the same verdicts, on the device for floats and on copies for the rest.
  for (DType dt : kDTypes) {
    Tensor a = values_tensor({3, 5}, dt), b = values_tensor({3, 5}, dt, 1);
    for (const auto& [x, y] : {std::pair{a, a}, std::pair{a, b}}) {
      for (double tol : {0.0, 1e-5, 10.0}) {
        std::vector<IValue> args = {IValue(x), IValue(y), IValue(tol), IValue(tol), IValue(true)};
        bool cpu = call_op(OpId::allclose, args).at(0).to_bool();
        args[0] = IValue(same_layout_on(x, kGpu));
        args[1] = IValue(same_layout_on(y, kGpu));
        EXPECT_EQ(cpu, call_op(OpId::allclose, args).at(0).to_bool()) << dtype_name(dt) << tol;
      }
    }
  }
  Tensor nan = Tensor::from_vector<double>({1.0, std::nan(""), 2.0});
  Tensor near = Tensor::from_vector<double>({1.0 + 1e-9, std::nan(""), 2.0});
  for (bool equal_nan : {false, true}) {
    std::vector<IValue> args = {IValue(same_layout_on(nan, kGpu)),
                                IValue(same_layout_on(near, kGpu)), IValue(1e-5), IValue(1e-8),
                                IValue(equal_nan)};
    EXPECT_EQ(call_op(OpId::allclose, args).at(0).to_bool(), equal_nan);
  }
  // einsum: contractions (bmm), broadcast products, diagonals, sums; einsum_backward
  // writes a repeated output subscript (a diagonal of zeros elsewhere).
  for (DType dt : {DType::Int64, DType::Float32, DType::Float64}) {
    Tensor a = values_tensor({3, 4}, dt), b = values_tensor({4, 5}, dt, 1);
    Tensor sq = values_tensor({4, 4}, dt, 2), v = values_tensor({4}, dt, 3);
    Tensor at = call_op(OpId::t, {IValue(values_tensor({4, 3}, dt, 4))}).at(0).to_tensor();
    auto list = [](std::vector<Tensor> ts) {
      std::vector<IValue> e;
      for (Tensor& t : ts) e.emplace_back(t);
      return IValue::list(std::move(e));
    };
    const std::vector<std::pair<std::string, std::vector<Tensor>>> cases = {
        {"ij,jk->ik", {a, b}},
        {"ij,jk->ik", {at, b}},
        {"ij,j->i", {a, v}},
        {"i,j->ij", {v, v}},
        {"ii->i", {sq}},
        {"ii", {sq}},
        {"ij->", {a}},
        {"ij->ji", {a}},
        {"bij,bjk->bik", {values_tensor({2, 3, 4}, dt), values_tensor({2, 4, 5}, dt, 1)}},
        {"ij,ij->ij", {a, a}}};
    for (const auto& [eq, ts] : cases) {
      // A contraction is a bmm, which PyTorch's CUDA backend (and TSL's) has for floats
      // only: "addmm_cuda" not implemented for 'Long'.
      const bool contracts = eq == "ij,jk->ik" || eq == "ij,j->i" || eq == "bij,bjk->bik";
      if (contracts && !is_floating(dt)) continue;
      compare(OpId::einsum, {IValue(eq), list(ts), IValue()});
    }
    compare(OpId::einsum_backward, {IValue(std::string("i->ii")), list({v}),
                                    IValue::int_list(std::vector<int64_t>{4, 4})});
  }
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor p = values_tensor({3, 5}, dt);
    p = call_op(OpId::sigmoid, {IValue(p)}).at(0).to_tensor();
    Tensor y =
        call_op(OpId::gt, {IValue(values_tensor({3, 5}, dt, 1)), IValue(0.0)}).at(0).to_tensor();
    y = call_op(OpId::to_dtype, {IValue(y), IValue(dt)}).at(0).to_tensor();
    Tensor w = values_tensor({5}, dt, 2);
    for (const char* red : {"none", "mean", "sum"}) {
      compare(OpId::binary_cross_entropy,
              {IValue(p), IValue(y), IValue(), IValue(std::string(red))});
      compare(OpId::binary_cross_entropy,
              {IValue(p), IValue(y), IValue(w), IValue(std::string(red))});
    }
    compare(OpId::binary_cross_entropy, {IValue(values_tensor({3, 5}, dt)), IValue(y), IValue(),
                                         IValue(std::string("mean"))});  // out of [0, 1]
    // normal(mean, std): the CPU's numbers from the same seed.
    Tensor mean = values_tensor({2, 3}, dt),
           sd = call_op(OpId::abs, {IValue(values_tensor({2, 3}, dt, 1))}).at(0).to_tensor();
    call_op(OpId::manual_seed, {IValue(int64_t{3})});
    Tensor cpu = call_op(OpId::normal_tensors, {IValue(mean), IValue(sd)}).at(0).to_tensor();
    call_op(OpId::manual_seed, {IValue(int64_t{3})});
    Tensor gpu = call_op(OpId::normal_tensors,
                         {IValue(same_layout_on(mean, kGpu)), IValue(same_layout_on(sd, kGpu))})
                     .at(0)
                     .to_tensor();
    expect_same(cpu, gpu, "normal(mean, std)");
  }
  Tensor classes = ids({2, 0, 4, 4, 1}, {5});
  for (int64_t n : {-1, 5, 7, 3}) compare(OpId::one_hot, {IValue(classes), IValue(n)});
  compare(OpId::one_hot, {IValue(ids({0, -1})), IValue(int64_t{-1})});
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor weight = values_tensor({6, 3}, dt);
    compare(OpId::embedding, {IValue(ids({5, 0, 2, 2}, {2, 2})), IValue(weight), IValue(), IValue(),
                              IValue(2.0), IValue(false), IValue(false)});
    compare(OpId::embedding, {IValue(ids({6})), IValue(weight), IValue(), IValue(), IValue(2.0),
                              IValue(false), IValue(false)});
    Tensor x = values_tensor({4, 2, 5}, dt);
    Tensor w = values_tensor({2, 5}, dt, 1), b = values_tensor({2, 5}, dt, 2);
    compare(OpId::layer_norm, {IValue(x), IValue::int_list(std::vector<int64_t>{2, 5}), IValue(w),
                               IValue(b), IValue(1e-5), IValue(true)});
    compare(OpId::layer_norm, {IValue(x), IValue::int_list(std::vector<int64_t>{5}), IValue(),
                               IValue(), IValue(1e-5), IValue(true)});
    // dropout: the CPU's mask, drawn from the same seed.
    for (double p : {0.0, 0.3, 1.0}) {
      call_op(OpId::manual_seed, {IValue(int64_t{7})});
      Tensor cpu = call_op(OpId::dropout, {IValue(x), IValue(p), IValue(true)}).at(0).to_tensor();
      call_op(OpId::manual_seed, {IValue(int64_t{7})});
      Tensor gpu =
          call_op(OpId::dropout, {IValue(same_layout_on(x, kGpu)), IValue(p), IValue(true)})
              .at(0)
              .to_tensor();
      expect_same(cpu, gpu, "dropout p=" + std::to_string(p));
    }
  }
}

TEST(CudaKernels, SortAndTopkMatchTheCpu) {
  REQUIRE_GPU();
  // Specials: NaN after every number, -0.0 equal to 0.0 (kept bit for bit), ties.
  Tensor specials = Tensor::from_vector<double>(
      {3, std::nan(""), -0.0, 1, 0.0, -INFINITY, 1, -std::nan(""), INFINITY, -2, 0.0, 1},
      std::vector<int64_t>{2, 6});
  for (DType dt : kDTypes) {
    Tensor wide = values_tensor({4, 40}, dt);  // ties: the pool repeats every 14
    Tensor st = call_op(OpId::t, {IValue(values_tensor({40, 3}, dt, 2))}).at(0).to_tensor();
    Tensor one_row = values_tensor({3000}, dt, 1);
    std::vector<Tensor> inputs = {wide, st, one_row, values_tensor(std::vector<int64_t>{}, dt),
                                  values_tensor({0, 3}, dt)};
    if (is_floating(dt)) {
      Tensor s = Tensor::empty(specials.sizes(), dt);
      copy_into(s, specials);
      inputs.push_back(s);
    }
    for (const Tensor& x : inputs) {
      for (int64_t dim : {0, -1}) {
        for (bool descending : {false, true}) {
          // The stable sort's order is defined: values and indices must agree.
          for (uint32_t out : {0u, 1u}) {
            compare(OpId::sort_stable, {IValue(x), IValue(true), IValue(dim), IValue(descending)},
                    out);
          }
          // The unstable one may order ties differently: the values agree.
          compare(OpId::sort, {IValue(x), IValue(dim), IValue(descending)}, 0);
        }
        if (dt == DType::Bool) continue;
        const int64_t size = x.dim() == 0 ? 1 : x.sizes()[dim < 0 ? dim + x.dim() : dim];
        for (int64_t k : {int64_t{0}, int64_t{1}, size / 2, size, size + 1}) {
          for (bool largest : {true, false}) {
            compare(OpId::topk, {IValue(x), IValue(k), IValue(dim), IValue(largest), IValue(true)},
                    0);
          }
        }
      }
    }
  }
}

IValue ints(std::vector<int64_t> v) { return IValue::int_list(v); }

TEST(CudaKernels, ConvolutionsAndPoolsMatchTheCpu) {
  REQUIRE_GPU();
  struct Conv {
    std::vector<int64_t> input, weight, stride, padding, dilation;
    int64_t groups;
  };
  const std::vector<Conv> convs = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1}, {0}, {1}, 1},
      {{2, 4, 9, 8}, {6, 2, 3, 2}, {2, 1}, {1, 2}, {1}, 2},  // strides, padding, groups
      {{1, 2, 10, 10}, {3, 2, 3, 3}, {1}, {2}, {2, 3}, 1},   // dilation
      {{3, 8, 8}, {5, 3, 1, 1}, {1}, {0}, {1}, 1},           // unbatched; bad channels
      {{2, 2, 5, 5}, {2, 2, 1, 1}, {1}, {0}, {1}, 1}};       // 1x1
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    for (const Conv& c : convs) {
      Tensor x = values_tensor(c.input, dt), w = values_tensor(c.weight, dt, 1);
      Tensor b = values_tensor({c.weight[0]}, dt, 2);
      std::vector<IValue> geometry = {ints(c.stride), ints(c.padding), ints(c.dilation),
                                      IValue(c.groups)};
      std::vector<IValue> args = {IValue(x), IValue(w), IValue(b)};
      args.insert(args.end(), geometry.begin(), geometry.end());
      compare(OpId::conv2d, args);
      args[2] = IValue();
      compare(OpId::conv2d, args);
      Outcome y = run(OpId::conv2d, args);
      if (!y.error.empty()) continue;
      Tensor grad = values_tensor(std::vector<int64_t>(y.value.to_tensor().sizes().begin(),
                                                       y.value.to_tensor().sizes().end()),
                                  dt, 3);
      std::vector<IValue> gi = {IValue(grad), IValue(w), ints(c.input)};
      gi.insert(gi.end(), geometry.begin(), geometry.end());
      compare(OpId::conv2d_input_backward, gi);
      std::vector<IValue> gw = {IValue(grad), IValue(x), ints(c.weight)};
      gw.insert(gw.end(), geometry.begin(), geometry.end());
      compare(OpId::conv2d_weight_backward, gw);
    }
  }
  struct Pool {
    std::vector<int64_t> kernel, stride, padding, dilation;
    bool ceil_mode;
  };
  const std::vector<Pool> pools = {{{2}, {}, {0}, {1}, false},          {{3}, {2}, {1}, {1}, false},
                                   {{3, 2}, {2, 1}, {1, 0}, {1}, true}, {{2}, {2}, {0}, {2}, false},
                                   {{3}, {2}, {1}, {1}, true},          {{2}, {3}, {1}, {1}, true}};
  Tensor specials = Tensor::from_vector<double>(
      {-INFINITY, -INFINITY, 1, std::nan(""), -INFINITY, 2, 0, -0.0, 3, -1, -INFINITY, 4},
      std::vector<int64_t>{1, 1, 3, 4});
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor s = Tensor::empty(specials.sizes(), dt);
    copy_into(s, specials);
    for (const Tensor& x : {values_tensor({2, 3, 7, 6}, dt), values_tensor({3, 5, 5}, dt), s}) {
      for (const Pool& p : pools) {
        IValue stride = p.stride.empty() ? IValue() : ints(p.stride);
        compare(OpId::max_pool2d, {IValue(x), ints(p.kernel), stride, ints(p.padding),
                                   ints(p.dilation), IValue(p.ceil_mode), IValue(false)});
        compare(OpId::max_pool2d_indices, {IValue(x), ints(p.kernel), stride, ints(p.padding),
                                           ints(p.dilation), IValue(p.ceil_mode)});
        if (p.dilation[0] != 1) continue;
        for (bool include_pad : {true, false}) {
          for (IValue divisor : {IValue(), IValue(int64_t{3})}) {
            compare(OpId::avg_pool2d, {IValue(x), ints(p.kernel), stride, ints(p.padding),
                                       IValue(p.ceil_mode), IValue(include_pad), divisor});
            Outcome y = run(OpId::avg_pool2d, {IValue(x), ints(p.kernel), stride, ints(p.padding),
                                               IValue(p.ceil_mode), IValue(include_pad), divisor});
            if (!y.error.empty()) continue;
            Tensor grad = values_tensor(std::vector<int64_t>(y.value.to_tensor().sizes().begin(),
                                                             y.value.to_tensor().sizes().end()),
                                        dt, 1);
            compare(OpId::avg_pool2d_backward,
                    {IValue(grad), IValue(x), ints(p.kernel), stride, ints(p.padding),
                     IValue(p.ceil_mode), IValue(include_pad), divisor});
          }
        }
      }
    }
  }
}

TEST(CudaTensors, CopiesPrintingAndFactories) {
  REQUIRE_GPU();
  Tensor x = values_tensor({3, 5}, DType::Float32);
  Tensor xt = call_op(OpId::t, {IValue(x)}).at(0).to_tensor();
  Tensor g = call_op(OpId::to_device, {IValue(xt), IValue(kGpu)}).at(0).to_tensor();
  EXPECT_TRUE(g.device().is_cuda());
  Tensor back = call_op(OpId::to_device, {IValue(g), IValue(kCPU)}).at(0).to_tensor();
  expect_same(xt.contiguous(), copy_to_device(back, kGpu), "round trip");
  EXPECT_EQ(format_tensor(call_op(OpId::to_device,
                                  {IValue(Tensor::from_vector<float>({1, 2.5})), IValue(kGpu)})
                              .at(0)
                              .to_tensor()),
            "tensor([1.0000, 2.5000], device='cuda:0')");
  // dtype conversion and clone on the device, strided copies in place.
  compare(OpId::to_dtype, {IValue(xt), IValue(DType::Int64)});
  compare(OpId::clone, {IValue(xt)});
  compare(OpId::contiguous, {IValue(xt)});
  Tensor z = call_op(OpId::zeros, {IValue::int_list(std::vector<int64_t>{2, 3}), IValue(),
                                   IValue(kGpu), IValue(false)})
                 .at(0)
                 .to_tensor();
  EXPECT_TRUE(z.device().is_cuda());
  expect_same(call_op(OpId::zeros, {IValue::int_list(std::vector<int64_t>{2, 3}), IValue(),
                                    IValue(), IValue(false)})
                  .at(0)
                  .to_tensor(),
              z, "zeros");
  Tensor f = call_op(OpId::full, {IValue::int_list(std::vector<int64_t>{4}), IValue(1.5),
                                  IValue(DType::Float64), IValue(kGpu), IValue(false)})
                 .at(0)
                 .to_tensor();
  EXPECT_EQ(format_tensor(f),
            "tensor([1.5000, 1.5000, 1.5000, 1.5000], device='cuda:0', dtype=torch.float64)");
  Tensor ol =
      call_op(OpId::ones_like, {IValue(g), IValue(), IValue(), IValue(false)}).at(0).to_tensor();
  EXPECT_TRUE(ol.device().is_cuda()) << "ones_like keeps the device";
  EXPECT_TRUE(call_op(OpId::cuda_is_available, {}).at(0).to_bool());
  Tensor one = copy_to_device(Tensor::from_vector<double>({2.5}), kGpu);
  EXPECT_EQ(one.item().to_double(), 2.5);
}

TEST(CudaTensors, MixedDevicesAreAnErrorExceptCpuScalars) {
  REQUIRE_GPU();
  Tensor cpu = values_tensor({3}, DType::Float32);
  Tensor gpu = copy_to_device(cpu, kGpu);
  Outcome r = run(OpId::add, {IValue(gpu), IValue(cpu), IValue(int64_t{1})});
  EXPECT_EQ(r.error,
            "Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and cpu!");
  Outcome s =
      run(OpId::mul, {IValue(gpu), IValue(values_tensor(std::vector<int64_t>{}, DType::Float32))});
  EXPECT_EQ(s.error, "");
}

TEST(CudaAllocator, FreedBlocksAreReused) {
  REQUIRE_GPU();
  for (int i = 0; i < 3; ++i) {
    Tensor t = Tensor::empty(DimVector{1000, 1000}, DType::Float32, kGpu);
  }
  int64_t before = cuda::allocator_stats().device_mallocs;
  for (int i = 0; i < 100; ++i) {
    Tensor a = Tensor::empty(DimVector{1000, 1000}, DType::Float32, kGpu);
    Tensor b = Tensor::empty(DimVector{100}, DType::Float32, kGpu);
  }
  EXPECT_EQ(cuda::allocator_stats().device_mallocs, before);
}

// The MLP training step of bench/mlp.tsl compiled and run on the GPU (the default
// device): after a few warm-up steps, 100 steps call cudaMalloc zero times (the caching
// allocator serves every block), and the loss goes down.
TEST(CudaAllocator, SteadyStateTrainingStepsNeverCallCudaMalloc) {
  REQUIRE_GPU();
  set_default_device(kGpu);
  CompilationUnit unit;
  auto run_code = [&](const std::string& code) {
    unit.run_source(std::make_shared<Source>("<test>", code), false);
  };
  int64_t start = cuda::allocator_stats().device_mallocs;
  run_code(kMlpTrainingStep);
  run_code(
      "first = torch.zeros(1)\n"
      "for i in range(5):\n"
      "    w1, b1, w2, b2, first = step(w1, b1, w2, b2, x, t, 0.1)\n");
  int64_t before = cuda::allocator_stats().device_mallocs;
  EXPECT_GT(before, start) << "the warm-up steps did not run on the GPU";
  run_code(
      "value = torch.zeros(1)\n"
      "for i in range(100):\n"
      "    w1, b1, w2, b2, value = step(w1, b1, w2, b2, x, t, 0.1)\n"
      "assert value.item() < first.item()\n");
  EXPECT_EQ(cuda::allocator_stats().device_mallocs, before);
  set_default_device(kCPU);
}

}  // namespace
}  // namespace tsl
