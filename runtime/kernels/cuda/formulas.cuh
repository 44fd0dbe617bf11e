// The float and double formulas of the unary ops a FusionGroup runs fused on CUDA, in
// one place for the two programs that must compute them alike: the unfused kernels
// (elementwise_unary.cu, compiled by nvcc) and the kernel generated for each
// FusionGroup (runtime/fusion_device.cpp, compiled at run time by NVRTC), which embeds
// this file's text. So it includes nothing, names the C math functions (expf, exp)
// rather than std:: overloads (NVRTC has no standard headers), and no line of it may
// contain the delimiter of the raw string CMake wraps it in (CMakeLists.txt:
// cuda_formulas_text.cpp). See Note [Fused kernels on CUDA] in runtime/fusion_device.cpp.
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

#endif  // TSL_CUDA_FORMULAS_CUH
