// The float and double formulas of the ops a FusionGroup runs fused on CUDA (one
// function tsl_<formula> per row of runtime/fused_ops.def), in one place for the two
// programs that must compute them alike: the unfused kernels (elementwise_unary.cu,
// compiled by nvcc) and the kernel generated for each FusionGroup
// (runtime/fusion/device_kernels.cpp, compiled at run time by NVRTC), which embeds this file's
// text. So it includes nothing, names the C math functions (expf, exp)
// rather than std:: overloads (NVRTC has no standard headers), and no line of it may
// contain the delimiter of the raw string CMake wraps it in (CMakeLists.txt:
// cuda_formulas_text.cpp). See Note [Fused kernels on CUDA] in runtime/fusion/device_kernels.cpp.
#ifndef TSL_CUDA_FORMULAS_CUH
#define TSL_CUDA_FORMULAS_CUH

#define TSL_FORMULA __host__ __device__ __forceinline__

// tsl_NAME(v) for float and double: the C library's function of each type.
#define TSL_C_MATH(name, float_fn, double_fn)                   \
  TSL_FORMULA float tsl_##name(float v) { return float_fn(v); } \
  TSL_FORMULA double tsl_##name(double v) { return double_fn(v); }
TSL_C_MATH(exp, expf, exp)
TSL_C_MATH(log, logf, log)
TSL_C_MATH(log1p, log1pf, log1p)
TSL_C_MATH(expm1, expm1f, expm1)
TSL_C_MATH(sin, sinf, sin)
TSL_C_MATH(cos, cosf, cos)
TSL_C_MATH(tanh, tanhf, tanh)
TSL_C_MATH(sqrt, sqrtf, sqrt)
TSL_C_MATH(abs, fabsf, fabs)
#undef TSL_C_MATH

template <typename T>
TSL_FORMULA T tsl_reciprocal(T v) {
  return T(1) / v;
}
template <typename T>
TSL_FORMULA T tsl_rsqrt(T v) {
  return T(1) / tsl_sqrt(v);
}
template <typename T>
TSL_FORMULA T tsl_sigmoid(T v) {
  return T(1) / (T(1) + tsl_exp(-v));
}
template <typename T>
TSL_FORMULA T tsl_silu(T v) {
  return v / (T(1) + tsl_exp(-v));
}
template <typename T>
TSL_FORMULA T tsl_relu(T v) {
  return v < T(0) ? T(0) : v;
}
// The slope in T (a Python float converted once).
template <typename T>
TSL_FORMULA T tsl_leaky_relu(T v, T slope) {
  return v > T(0) ? v : T(v * slope);
}
// An absent bound clamps nothing.
template <typename T>
TSL_FORMULA T tsl_clamp(T v, bool has_lo, T lo, bool has_hi, T hi) {
  T m = has_lo && v < lo ? lo : v;
  return has_hi && m > hi ? hi : m;
}

// log(x / (1 - x)), x clamped to [eps, 1 - eps] first when eps is given (the CPU's logit).
template <typename T>
TSL_FORMULA T tsl_logit(T v, bool has_eps, T eps) {
  if (has_eps) {
    T hi = T(1) - eps;
    v = v < eps ? eps : (v > hi ? hi : v);
  }
  return tsl_log(v / (T(1) - v));
}

// ---- The steps of fused kernels only (device code) ----------------------------------
// A step's operands are T values, bools as T(0) or T(1) (Note [Bool values in the fused
// program]), then its values: the slope; clamp's bounds, -inf and +inf where absent.
#define TSL_FUSED_FORMULA __device__ __forceinline__

// Arithmetic rounded at every step, as the unfused kernels store every result: the _rn
// intrinsics never contract into an FMA with a neighbouring step.
TSL_FUSED_FORMULA float tsl_add(float a, float b) { return __fadd_rn(a, b); }
TSL_FUSED_FORMULA double tsl_add(double a, double b) { return __dadd_rn(a, b); }
TSL_FUSED_FORMULA float tsl_sub(float a, float b) { return __fsub_rn(a, b); }
TSL_FUSED_FORMULA double tsl_sub(double a, double b) { return __dsub_rn(a, b); }
TSL_FUSED_FORMULA float tsl_mul(float a, float b) { return __fmul_rn(a, b); }
TSL_FUSED_FORMULA double tsl_mul(double a, double b) { return __dmul_rn(a, b); }
TSL_FUSED_FORMULA float tsl_div(float a, float b) { return __fdiv_rn(a, b); }
TSL_FUSED_FORMULA double tsl_div(double a, double b) { return __ddiv_rn(a, b); }
TSL_FUSED_FORMULA float tsl_infinity(float) { return __int_as_float(0x7f800000); }
TSL_FUSED_FORMULA double tsl_infinity(double) { return __longlong_as_double(0x7ff0000000000000LL); }

template <typename T>
TSL_FUSED_FORMULA T tsl_neg(T v) {
  return -v;
}
template <typename T>
TSL_FUSED_FORMULA T tsl_square(T v) {
  return tsl_mul(v, v);
}
template <typename T>
TSL_FUSED_FORMULA T tsl_clamp(T v, T lo, T hi) {
  return tsl_clamp(v, true, lo, true, hi);
}

template <typename T>
TSL_FUSED_FORMULA T tsl_01(bool c) {
  return c ? T(1) : T(0);
}
template <typename T>
TSL_FUSED_FORMULA T tsl_eq(T a, T b) {
  return tsl_01<T>(a == b);
}
template <typename T>
TSL_FUSED_FORMULA T tsl_ne(T a, T b) {
  return tsl_01<T>(a != b);
}
template <typename T>
TSL_FUSED_FORMULA T tsl_lt(T a, T b) {
  return tsl_01<T>(a < b);
}
template <typename T>
TSL_FUSED_FORMULA T tsl_le(T a, T b) {
  return tsl_01<T>(a <= b);
}
template <typename T>
TSL_FUSED_FORMULA T tsl_gt(T a, T b) {
  return tsl_01<T>(a > b);
}
template <typename T>
TSL_FUSED_FORMULA T tsl_ge(T a, T b) {
  return tsl_01<T>(a >= b);
}
template <typename T>
TSL_FUSED_FORMULA T tsl_logical_and(T a, T b) {
  return tsl_01<T>(a != T(0) && b != T(0));
}
template <typename T>
TSL_FUSED_FORMULA T tsl_logical_or(T a, T b) {
  return tsl_01<T>(a != T(0) || b != T(0));
}
template <typename T>
TSL_FUSED_FORMULA T tsl_logical_xor(T a, T b) {
  return tsl_01<T>((a != T(0)) != (b != T(0)));
}
template <typename T>
TSL_FUSED_FORMULA T tsl_logical_not(T v) {
  return tsl_01<T>(v == T(0));
}
template <typename T>
TSL_FUSED_FORMULA T tsl_isnan(T v) {
  return tsl_01<T>(v != v);
}
template <typename T>
TSL_FUSED_FORMULA T tsl_isinf(T v) {
  return tsl_01<T>(tsl_abs(v) == tsl_infinity(v));
}
template <typename T>
TSL_FUSED_FORMULA T tsl_isfinite(T v) {
  return tsl_01<T>(tsl_abs(v) < tsl_infinity(v));
}
// where(cond, self, other).
template <typename T>
TSL_FUSED_FORMULA T tsl_where(T cond, T self, T other) {
  return cond != T(0) ? self : other;
}
// `to` the value's own dtype (Note [Conversions in the fused program]).
template <typename T>
TSL_FUSED_FORMULA T tsl_identity(T v) {
  return v;
}

#endif  // TSL_CUDA_FORMULAS_CUH
