// CPU linear-algebra kernels against values computed with PyTorch 1.13, and large
// products against a double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "runtime/kernels/cpu/linalg_gemm.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/ivalue.h"
#include "runtime/tensor/parallel.h"
#include "runtime/tensor/tensor.h"
#include "tests/tensor/kernel_test_util.h"

namespace tsl {
namespace {

using test::error_of;
using test::ramp;
using test::run;
using test::values;

Tensor transposed(const Tensor& t) {
  std::vector<int64_t> sizes{t.sizes()[1], t.sizes()[0]};
  std::vector<int64_t> strides{t.strides()[1], t.strides()[0]};
  return t.as_strided(sizes, strides, t.storage_offset());
}

void expect_tensor(const Tensor& t, std::vector<int64_t> shape, DType dtype,
                   std::vector<double> expected) {
  EXPECT_EQ(t.sizes(), DimVector(shape));
  EXPECT_EQ(t.dtype(), dtype);
  EXPECT_EQ(values(t), expected);
}

TEST(Linalg, MatrixProducts) {
  Tensor a = ramp({2, 3}), b = ramp({3, 4}, 5, 9);
  // ramp(2,3) @ ramp(3,4,k=5,m=9)
  std::vector<double> mm = {3.0, -3.75, 3.0, -3.75, -0.25, 3.0, -0.5, 2.75};
  expect_tensor(run(OpId::mm, {a, b}), {2, 4}, DType::Float32, mm);
  expect_tensor(run(OpId::matmul, {a, b}), {2, 4}, DType::Float32, mm);
  // float64 gives the same exact values
  expect_tensor(
      run(OpId::mm, {ramp({2, 3}, 3, 7, DType::Float64), ramp({3, 4}, 5, 9, DType::Float64)}),
      {2, 4}, DType::Float64, mm);
  // Transposed operands (column-major maps): ramp(3,2).t() @ ramp(4,3,k=5,m=9).t()
  expect_tensor(run(OpId::mm, {transposed(ramp({3, 2})), transposed(ramp({4, 3}, 5, 9))}), {2, 4},
                DType::Float32, {2.75, -1.0, 4.25, 2.75, 0.5, -1.75, -1.75, 0.5});
  // int64: [[-2, 0, 2], [0, 2, -2]] @ [[-2, 2, -2, 2], [0, 4, 0, 4], [0, -2, 2, -2]]
  Tensor ai = Tensor::from_vector<int64_t>({-2, 0, 2, 0, 2, -2}, std::vector<int64_t>{2, 3});
  Tensor bi = Tensor::from_vector<int64_t>({-2, 2, -2, 2, 0, 4, 0, 4, 0, -2, 2, -2},
                                           std::vector<int64_t>{3, 4});
  expect_tensor(run(OpId::matmul, {ai, bi}), {2, 4}, DType::Int64, {4, -8, 8, -8, 0, 12, -4, 12});
}

TEST(Linalg, VectorsAndMatmulRanks) {
  Tensor a = ramp({2, 3}), b = ramp({3, 4}, 5, 9), v = ramp({3}, 5, 9);
  // a @ v, v @ b, v @ ramp(3)
  expect_tensor(run(OpId::mv, {a, v}), {2}, DType::Float32, {0.75, 2.75});
  expect_tensor(run(OpId::matmul, {a, v}), {2}, DType::Float32, {0.75, 2.75});
  expect_tensor(run(OpId::matmul, {v, b}), {4}, DType::Float32, {1.25, 2.0, 0.5, 1.25});
  expect_tensor(run(OpId::matmul, {v, ramp({3})}), {}, DType::Float32, {0.75});
  expect_tensor(run(OpId::dot, {v, ramp({3})}), {}, DType::Float32, {0.75});
  // torch.bmm(ramp(2,2,3), ramp(2,3,2,k=5,m=9))
  std::vector<double> bmm = {1.5, 1.5, 0.25, -1.0, -0.75, 3.5, 0.75, 3.5};
  expect_tensor(run(OpId::bmm, {ramp({2, 2, 3}), ramp({2, 3, 2}, 5, 9)}), {2, 2, 2}, DType::Float32,
                bmm);
  expect_tensor(run(OpId::matmul, {ramp({2, 2, 3}), ramp({2, 3, 2}, 5, 9)}), {2, 2, 2},
                DType::Float32, bmm);
  // Broadcast batches: ramp(2,1,2,3) @ ramp(3,3,2,k=5,m=9)
  expect_tensor(run(OpId::matmul, {ramp({2, 1, 2, 3}), ramp({3, 3, 2}, 5, 9)}), {2, 3, 2, 2},
                DType::Float32,
                {1.5,  1.5,   0.25,  -1.0, 1.5,   -5.25, -0.5, -1.75, 1.5,   1.5,   -1.25, -0.25,
                 0.75, -1.75, -2.25, 2.75, -0.75, 3.5,   0.75, 3.5,   -2.25, -0.25, 3.75,  -0.25});
  // ramp(2,2,3) @ v; v @ ramp(2,3,2,k=5,m=9); ramp(2,2,3) @ ramp(3,2,k=5,m=9)
  expect_tensor(run(OpId::matmul, {ramp({2, 2, 3}), v}), {2, 2}, DType::Float32,
                {0.75, 2.75, -2.25, -3.75});
  expect_tensor(run(OpId::matmul, {v, ramp({2, 3, 2}, 5, 9)}), {2, 2}, DType::Float32,
                {1.75, -2.0, -0.5, -4.25});
  expect_tensor(run(OpId::matmul, {ramp({2, 2, 3}), ramp({3, 2}, 5, 9)}), {2, 2, 2}, DType::Float32,
                {1.5, 1.5, 0.25, -1.0, 0.75, -1.75, -2.25, 2.75});
  // torch.outer(ramp(3), ramp(2,k=5,m=9)); mixed dtypes promote
  expect_tensor(run(OpId::outer, {ramp({3}), ramp({2}, 5, 9)}), {3, 2}, DType::Float32,
                {2.25, -1.5, -0.0, 0.0, -2.25, 1.5});
  EXPECT_EQ(run(OpId::outer, {ramp({3}), ramp({2}, 5, 9, DType::Float64)}).dtype(), DType::Float64);
}

TEST(Linalg, Linear) {
  // F.linear(ramp(2,2,3), ramp(4,3,k=5,m=9), ramp(4,k=2,m=5))
  expect_tensor(run(OpId::linear, {ramp({2, 2, 3}), ramp({4, 3}, 5, 9), ramp({4}, 2, 5)}),
                {2, 2, 4}, DType::Float32,
                {-0.75, 0.25, 1.25, -0.25, 1.25, -3.75, 2.5, 1.75, -3.75, 1.0, -3.25, -3.25, -5.25,
                 4.0, -0.25, -4.75});
  // F.linear(ramp(3), ramp(4,3,k=5,m=9))
  expect_tensor(run(OpId::linear, {ramp({3}), ramp({4, 3}, 5, 9), IValue()}), {4}, DType::Float32,
                {0.75, 0.75, 0.75, 0.75});
  EXPECT_EQ(error_of([&] {
              run(OpId::linear, {ramp({2, 3}), ramp({4, 5}), IValue()});
            }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)");
}

TEST(Linalg, Baddbmm) {
  // torch.baddbmm(ramp(3), ramp(2,2,4), ramp(2,4,3,k=5,m=9), beta=0.5, alpha=2)
  expect_tensor(run(OpId::baddbmm, {ramp({3}), ramp({2, 2, 4}), ramp({2, 4, 3}, 5, 9), 0.5, 2.0}),
                {2, 2, 3}, DType::Float32,
                {5.25, 3.5, 6.25, -2.25, 2.5, -1.75, 3.75, 5.5, 7.25, 0.75, 0.5, 0.25});
  // int64: torch.baddbmm(ramp(1,3).long(), ramp(1,2,4).long() * 2, ramp(1,4,3,k=5,m=9).long(),
  // beta=2, alpha=3)
  auto to_long = [](const Tensor& t) { return run(OpId::to_dtype, {t, DType::Int64}); };
  Tensor b1 = run(OpId::mul, {to_long(ramp({1, 2, 4})), int64_t{2}});
  expect_tensor(run(OpId::baddbmm, {to_long(ramp({1, 3})), b1, to_long(ramp({1, 4, 3}, 5, 9)),
                                    int64_t{2}, int64_t{3}}),
                {1, 2, 3}, DType::Int64, {4, 6, 8, -8, 0, -10});
  // beta 0 ignores self, NaNs included; self of another dtype takes batch1's.
  Tensor nans = Tensor::from_vector<double>({NAN, NAN, NAN});
  Tensor ones14 =
      run(OpId::ones, {IValue::int_list(std::vector<int64_t>{1, 1, 4}), IValue(), IValue(), false});
  Tensor ones43 =
      run(OpId::ones, {IValue::int_list(std::vector<int64_t>{1, 4, 3}), IValue(), IValue(), false});
  expect_tensor(run(OpId::baddbmm, {nans, ones14, ones43, 0.0, 1.0}), {1, 1, 3}, DType::Float32,
                {4, 4, 4});
  // A transposed batch (non-contiguous) and zero-size batches.
  Tensor t =
      ramp({2, 4, 2}).as_strided(std::vector<int64_t>{2, 2, 4}, std::vector<int64_t>{8, 1, 2}, 0);
  Tensor reference = run(OpId::add, {run(OpId::bmm, {t, ramp({2, 4, 3}, 5, 9)}), ramp({3}), 1.0});
  EXPECT_EQ(values(run(OpId::baddbmm, {ramp({3}), t, ramp({2, 4, 3}, 5, 9), 1.0, 1.0})),
            values(reference));
  Tensor e = Tensor::empty(std::vector<int64_t>{0, 2, 4}, DType::Float32);
  EXPECT_EQ(
      run(OpId::baddbmm,
          {ramp({3}), e, Tensor::empty(std::vector<int64_t>{0, 4, 3}, DType::Float32), 1.0, 1.0})
          .sizes(),
      DimVector({0, 2, 3}));
  EXPECT_EQ(error_of([&] {
              run(OpId::baddbmm, {ramp({4}), ramp({2, 3, 4}), ramp({2, 4, 3}), 1.0, 1.0});
            }),
            "The expanded size of the tensor (3) must match the existing size (4) at "
            "non-singleton dimension 2.  Target sizes: [2, 3, 3].  Tensor sizes: [4]");
  EXPECT_EQ(error_of([&] {
              run(OpId::baddbmm,
                  {ramp({3}), ramp({1, 1, 4}, 3, 7, DType::Float64), ramp({1, 4, 3}), 1.0, 1.0});
            }),
            "expected scalar type Double but found Float");
}

TEST(Linalg, EmptyOperands) {
  // torch.ones(2, 0) @ torch.ones(0, 3) -> zeros(2, 3)
  Tensor a = Tensor::empty(std::vector<int64_t>{2, 0}, DType::Float32);
  Tensor b = Tensor::empty(std::vector<int64_t>{0, 3}, DType::Float32);
  expect_tensor(run(OpId::mm, {a, b}), {2, 3}, DType::Float32, {0, 0, 0, 0, 0, 0});
  expect_tensor(run(OpId::mm, {b, Tensor::empty(std::vector<int64_t>{3, 1}, DType::Float32)}),
                {0, 1}, DType::Float32, {});
}

TEST(Linalg, Errors) {
  Tensor a = ramp({2, 3});
  auto f64 = ramp({3, 5}, 3, 7, DType::Float64);
  EXPECT_EQ(error_of([&] {
              run(OpId::mm, {a, ramp({4, 5})});
            }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  EXPECT_EQ(error_of([&] {
              run(OpId::matmul, {a, ramp({4, 5})});
            }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  EXPECT_EQ(error_of([&] {
              run(OpId::mm, {a, f64});
            }),
            "expected scalar type Float but found Double");
  EXPECT_EQ(error_of([&] { run(OpId::matmul, {a, ramp({4})}); }), "size mismatch, got 2, 2x3,4");
  EXPECT_EQ(error_of([&] {
              run(OpId::matmul, {ramp({3}), ramp({4})});
            }),
            "inconsistent tensor size, expected tensor [3] and src [4] to have the same number "
            "of elements, but got 3 and 4 elements respectively");
  EXPECT_EQ(error_of([&] {
              run(OpId::dot, {ramp({3}), ramp({3}, 3, 7, DType::Float64)});
            }),
            "dot : expected both vectors to have same dtype, but found Float and Double");
  EXPECT_EQ(error_of([&] {
              run(OpId::dot, {ramp({3, 2}), ramp({3})});
            }),
            "1D tensors expected, but got 2D and 1D tensors");
  EXPECT_EQ(error_of([&] {
              run(OpId::matmul, {ramp({2, 2, 3}), ramp({3, 2, 4})});
            }),
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
            "dimension 0");
  EXPECT_EQ(
      error_of([&] {
        run(OpId::bmm, {ramp({2, 2, 3}), ramp({3, 3, 4})});
      }),
      "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3].");
  EXPECT_EQ(error_of([&] { run(OpId::bmm, {a, ramp({2, 3, 4})}); }), "batch1 must be a 3D tensor");
  EXPECT_EQ(error_of([&] { run(OpId::mm, {ramp({2}), a}); }), "self must be a matrix");
  EXPECT_EQ(error_of([&] {
              run(OpId::matmul, {Tensor::scalar(1.0, DType::Float32), a});
            }),
            "both arguments to matmul need to be at least 1D, but they are 0D and 2D");
  Tensor bools = Tensor::empty(std::vector<int64_t>{2, 2}, DType::Bool);
  EXPECT_EQ(error_of([&] {
              run(OpId::matmul, {bools, bools});
            }),
            "\"addmm_impl_cpu_\" not implemented for 'Bool'");
}

// Products big enough for the threaded path, with strided and transposed operands,
// against a double-precision reference.
TEST(Linalg, LargeProductsMatchReference) {
  int64_t m = 300, k = 257, n = 190;
  Tensor a = ramp({m, k}, 7, 13), bt = ramp({n, k}, 5, 11);
  Tensor b = transposed(bt);  // [k, n], column-major
  Tensor c = run(OpId::matmul, {a, b});
  const float* pa = a.data_ptr<float>();
  const float* pb = bt.data_ptr<float>();
  std::vector<double> got = values(c);
  double max_err = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t p = 0; p < k; ++p) ref += static_cast<double>(pa[i * k + p]) * pb[j * k + p];
      max_err = std::max(max_err, std::abs(got[i * n + j] - ref));
    }
  }
  EXPECT_LT(max_err, 1e-3);
  // A batched product with a broadcast batch and a strided (every other column) operand.
  Tensor wide = ramp({k, 2 * n}, 3, 17);
  Tensor strided = wide.as_strided(std::vector<int64_t>{k, n}, std::vector<int64_t>{2 * n, 2}, 0);
  Tensor batch = ramp({3, m, k}, 7, 13);
  Tensor bc = run(OpId::matmul, {batch, strided});
  std::vector<double> bv = values(bc);
  const float* pw = wide.data_ptr<float>();
  const float* px = batch.data_ptr<float>();
  int64_t i = 2 * m * n + 17 * n + 33;  // batch 2, row 17, column 33
  double ref = 0;
  for (int64_t p = 0; p < k; ++p) {
    ref += static_cast<double>(px[2 * m * k + 17 * k + p]) * pw[p * 2 * n + 2 * 33];
  }
  EXPECT_NEAR(bv[i], ref, 1e-3);
}

// linear through the packed GEMM path (bias copied in first, then accumulated).
TEST(Linalg, LargeLinearWithBias) {
  int64_t rows = 40, in = 30, out = 20;
  Tensor x = ramp({rows, in}, 7, 13), w = ramp({out, in}, 5, 11), b = ramp({out}, 3, 7);
  std::vector<double> got = values(run(OpId::linear, {x, w, b}));
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < out; ++j) {
      double ref = pb[j];
      for (int64_t p = 0; p < in; ++p) ref += static_cast<double>(px[i * in + p]) * pw[j * in + p];
      ASSERT_NEAR(got[i * out + j], ref, 1e-4) << i << ", " << j;
    }
  }
  // int64 matmul of the same shapes matches the float result on integer data.
  Tensor xi = ramp({rows, in}, 7, 13, DType::Float64);
  Tensor xl = Tensor::empty(xi.sizes(), DType::Int64);
  Tensor xf = Tensor::empty(xi.sizes(), DType::Float64);
  for (int64_t i = 0; i < xi.numel(); ++i) {
    xl.data_ptr<int64_t>()[i] = static_cast<int64_t>(xi.data_ptr<double>()[i] * 2);
    xf.data_ptr<double>()[i] = static_cast<double>(xl.data_ptr<int64_t>()[i]);
  }
  Tensor xlt = transposed(xl), xft = transposed(xf);
  EXPECT_EQ(values(run(OpId::matmul, {xlt, xl})), values(run(OpId::matmul, {xft, xf})));
}

// The GEMM primitive on each library the build has (OpenBLAS and Eigen; Note [GEMM
// through BLAS]): every operand layout, both C modes, shapes split by rows and by
// columns over the pool, against a double-precision reference. Integer-valued data make
// every product and sum exact, so both libraries must give identical bits.
template <typename T>
void check_gemm_layouts(cpu::GemmLibrary library) {
  cpu::set_gemm_library(library);
  struct Shape {
    int64_t m, k, n;
  };
  // Tiny, matrix-vector, small, and large enough to thread (split by rows; by columns).
  for (Shape s : {Shape{3, 4, 5}, Shape{1, 7, 9}, Shape{9, 7, 1}, Shape{33, 17, 20},
                  Shape{300, 130, 70}, Shape{40, 150, 500}}) {
    auto value = [](int64_t i, int64_t j, int salt) {
      return static_cast<T>((i * 7 + j * 3 + salt) % 9 - 4);
    };
    // Storage for three layouts of each operand: row-major, column-major, and every
    // other element of a row-major buffer twice as wide (copied before the product).
    std::vector<T> a_store(2 * s.m * s.k), b_store(2 * s.k * s.n);
    for (int layout_a = 0; layout_a < 3; ++layout_a) {
      for (int layout_b = 0; layout_b < 3; ++layout_b) {
        auto fill = [&](std::vector<T>& store, int64_t rows, int64_t cols, int layout,
                        int salt) -> cpu::MatView<T> {
          for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < cols; ++j) {
              T v = value(i, j, salt);
              if (layout == 0) store[i * cols + j] = v;
              if (layout == 1) store[j * rows + i] = v;
              if (layout == 2) store[i * 2 * cols + 2 * j] = v;
            }
          }
          if (layout == 0) return {store.data(), rows, cols, cols, 1};
          if (layout == 1) return {store.data(), rows, cols, 1, rows};
          return {store.data(), rows, cols, 2 * cols, 2};
        };
        cpu::MatView<T> a = fill(a_store, s.m, s.k, layout_a, 1);
        cpu::MatView<T> b = fill(b_store, s.k, s.n, layout_b, 2);
        for (bool accumulate : {false, true}) {
          int64_t ldc = s.n + 3;
          // C starts as NaN (overwritten) or as 1 (accumulated into).
          std::vector<T> c(s.m * ldc, accumulate ? T(1) : std::numeric_limits<T>::quiet_NaN());
          cpu::gemm<T>(a, b, c.data(), ldc, accumulate);
          for (int64_t i = 0; i < s.m; ++i) {
            for (int64_t j = 0; j < s.n; ++j) {
              double ref = accumulate ? 1 : 0;
              for (int64_t p = 0; p < s.k; ++p) {
                ref += static_cast<double>(value(i, p, 1)) * static_cast<double>(value(p, j, 2));
              }
              ASSERT_EQ(static_cast<double>(c[i * ldc + j]), ref)
                  << "m=" << s.m << " k=" << s.k << " n=" << s.n << " layouts " << layout_a
                  << layout_b << " accumulate=" << accumulate << " at " << i << ", " << j;
            }
          }
        }
      }
    }
  }
}

TEST(Linalg, GemmOnEveryLibraryAndLayout) {
  std::vector<cpu::GemmLibrary> libraries{cpu::GemmLibrary::Eigen};
  if (cpu::blas_available()) libraries.push_back(cpu::GemmLibrary::Blas);
  cpu::GemmLibrary before = cpu::gemm_library();
  for (cpu::GemmLibrary library : libraries) {
    SCOPED_TRACE(library == cpu::GemmLibrary::Blas ? "OpenBLAS" : "Eigen");
    check_gemm_layouts<float>(library);
    check_gemm_layouts<double>(library);
  }
  cpu::set_gemm_library(before);
}

// A product whose terms are all -0 is +0 on both libraries (BLAS's beta = 0 semantics,
// which PyTorch prints): 0 * -1 + 0 * -1.
TEST(Linalg, GemmOfNegativeZeroTermsIsPositiveZero) {
  cpu::GemmLibrary before = cpu::gemm_library();
  for (cpu::GemmLibrary library : {cpu::GemmLibrary::Eigen, cpu::GemmLibrary::Blas}) {
    cpu::set_gemm_library(library);
    // 24 x 24 goes through the packed path on either library.
    std::vector<float> a(24 * 24, 0.0f), b(24 * 24, -1.0f), c(24 * 24, 5.0f);
    cpu::gemm<float>({a.data(), 24, 24, 24, 1}, {b.data(), 24, 24, 24, 1}, c.data(), 24, false);
    EXPECT_FALSE(std::signbit(c[0]));
    EXPECT_EQ(c[0], 0.0f);
  }
  cpu::set_gemm_library(before);
}

// Products running at once: a large product split over TSL's pool, and products called
// from several pool threads. Debian's serial OpenBLAS shares its work buffers between
// concurrent calls: two-thread conv2d results were off by up to 65 in one element in
// 400 (found from cnn_digits printing other numbers on every run). Each result is
// checked against the product in float64.
TEST(Linalg, ProductsRunningAtOnceAreRight) {
  int threads_before = num_threads();
  set_num_threads(2);
  cpu::GemmLibrary before = cpu::gemm_library();
  // conv2d's shape: 32 filters of 16x3x3 over 256 8x8 images, split along n.
  const int64_t m = 32, k = 144, n = 16384;
  std::vector<float> a(m * k), b(k * n);
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int32_t>(state >> 8) % 2001 - 1000) / 500.0f;
  };
  for (float& v : a) v = next();
  for (float& v : b) v = next();
  std::vector<double> ref(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) ref[i * n + j] += double(a[i * k + p]) * b[p * n + j];
  auto worst_error = [&](const std::vector<float>& c, int64_t rows) {
    double worst = 0;
    for (int64_t i = 0; i < rows * n; ++i) worst = std::max(worst, std::abs(c[i] - ref[i]));
    return worst;
  };
  for (cpu::GemmLibrary library : {cpu::GemmLibrary::Eigen, cpu::GemmLibrary::Blas}) {
    cpu::set_gemm_library(library);
    SCOPED_TRACE(cpu::gemm_library() == cpu::GemmLibrary::Blas ? "OpenBLAS" : "Eigen");
    for (int rep = 0; rep < 10; ++rep) {
      std::vector<float> c(m * n, 0.0f);
      cpu::gemm<float>({a.data(), m, k, k, 1}, {b.data(), k, n, n, 1}, c.data(), n, false);
      ASSERT_LT(worst_error(c, m), 1e-3) << "split product, run " << rep;
    }
    // conv2d's per-image products from the pool's threads at once: w [32, 144] times
    // an image's columns [144, 64] (the first 64 columns of b), added to a bias.
    const int64_t images = 64, l = 64;
    std::vector<float> out(images * m * l), cols(k * l);
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < l; ++c) cols[r * l + c] = b[r * n + c];
    for (int rep = 0; rep < 5; ++rep) {
      std::fill(out.begin(), out.end(), 0.5f);
      parallel_for(images, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          cpu::gemm<float>({a.data(), m, k, k, 1}, {cols.data(), k, l, l, 1},
                           out.data() + i * m * l, l, /*accumulate=*/true, /*allow_threads=*/false);
        }
      });
      double worst = 0;
      for (int64_t i = 0; i < images; ++i)
        for (int64_t r = 0; r < m; ++r)
          for (int64_t c = 0; c < l; ++c)
            worst = std::max(worst, std::abs(out[(i * m + r) * l + c] - 0.5 - ref[r * n + c]));
      ASSERT_LT(worst, 1e-3) << "per-image products, run " << rep;
    }
  }
  cpu::set_gemm_library(before);
  set_num_threads(threads_before);
}

}  // namespace
}  // namespace tsl
