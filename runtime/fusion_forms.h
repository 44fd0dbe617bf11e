// The formulas of the fused ops that go through Eigen's SIMD functions, in one place
// for the two programs that must compute them alike: the chunk loop of the fused
// program (fusion_loop.cpp) and the C++ generated per FusionGroup (fusion_codegen.cpp),
// which embeds this file's text. So this header includes nothing of TSL's, and no line
// of it may contain the delimiter of the raw string CMake wraps it in (see
// CMakeLists.txt: fusion_forms_text.cpp). See Note [Compiled fusion kernels].
#pragma once

#include <cmath>

// X(op, limit, scalar, array): the FOp; the magnitude from which (and NaN) the SIMD
// form is not exact, so the kernel redoes those elements with the scalar formula of
// `v` (float64 uses eight times the limit, as the kernels do); the Eigen array
// expression of `e` whose SIMD form the unfused kernel runs. Their types are T.
#define TSL_FUSED_SIMD_FORMS(X)                                                 \
  X(Exp, 87.0, std::exp(v), e.exp())                                            \
  X(Log, INFINITY, std::log(v), e.log())                                        \
  X(Log1p, INFINITY, std::log1p(v), e.log1p())                                  \
  X(Expm1, 87.0, std::expm1(v), e.expm1())                                      \
  X(Sin, INFINITY, std::sin(v), e.sin())                                        \
  X(Cos, INFINITY, std::cos(v), e.cos())                                        \
  X(Reciprocal, INFINITY, T(1) / v, e.inverse())                                \
  X(Tanh, INFINITY, std::tanh(v), e.tanh())                                     \
  X(Sigmoid, 87.0, T(1) / (T(1) + std::exp(-v)), (T(1) + (-e).exp()).inverse()) \
  X(Silu, 87.0, v / (T(1) + std::exp(-v)), e / (T(1) + (-e).exp()))

// The bound below which (in magnitude) a SIMD form is exact, in T.
template <typename T>
constexpr T simd_form_bound(double limit) {
  return static_cast<T>(sizeof(T) == 8 ? limit * 8 : limit);
}
