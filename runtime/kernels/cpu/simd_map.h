// One SIMD form for every element: the unfused kernels (elementwise_unary.cpp), the
// fused chunk loop (chunk_ops.h) and the compiled fusion kernels
// (codegen.cpp) all evaluate the formulas' packet functions (exp, tanh, sigmoid, ...:
// SLEEF's or Eigen's, Note [Vector math] in formulas.h) one whole packet at a time, so an element's
// bits depend on its value only, never on where a chunk or a thread's range begins.
//
// Eigen's own loop over a dynamic-size Map would peel an unaligned head and finish a
// tail with its scalar functions (std::exp), whose last bit differs from the packet
// form's for some inputs: on AVX2 a fused group and the same ops unfused differed by
// an ulp (Fusion.ConversionsToTheOwnDtypeRunFused), because they split arrays
// differently.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

// GCC 12 reports false -W(maybe-)uninitialized warnings inside its own AVX-512 intrinsics
// (GCC bug 105593) when Eigen's packet math is inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

namespace tsl::cpu {

// dst[0, n) = pop(src[0, n)), `pop` a function of one full packet of T (`const auto& p`)
// to a packet: whole packets, then the last, partial one padded with copies of its
// first element. dst may be src.
template <typename T, typename PacketOp>
void simd_map_packets(T* dst, const T* src, int64_t n, PacketOp pop) {
  using P = typename Eigen::internal::packet_traits<T>::type;
  constexpr int64_t kLanes = Eigen::internal::unpacket_traits<P>::size;
  int64_t whole = n / kLanes * kLanes;
  for (int64_t i = 0; i < whole; i += kLanes) {
    Eigen::internal::pstoreu(dst + i, pop(Eigen::internal::ploadu<P>(src + i)));
  }
  if (whole == n) return;
  alignas(64) T in[kLanes];
  alignas(64) T out[kLanes];
  int64_t m = n - whole;
  std::memcpy(in, src + whole, static_cast<size_t>(m) * sizeof(T));
  for (int64_t l = m; l < kLanes; ++l) in[l] = in[0];
  Eigen::internal::pstore(out, pop(Eigen::internal::pload<P>(in)));
  std::memcpy(dst + whole, out, static_cast<size_t>(m) * sizeof(T));
}

// dst[0, n) = aop(src[0, n)), `aop` an Eigen array expression of its argument (`const
// auto& a`), evaluated on one packet at a time as a fixed-size array (simd_map_packets:
// the last, partial packet padded with copies of its first element). dst may be src.
template <typename T, typename ArrayOp>
void simd_map(T* dst, const T* src, int64_t n, ArrayOp aop) {
  using P = typename Eigen::internal::packet_traits<T>::type;
  constexpr int kLanes = Eigen::internal::unpacket_traits<P>::size;
  using Lanes = Eigen::Array<T, kLanes, 1>;
  simd_map_packets(dst, src, n, [&aop](const P& p) {
    alignas(64) T in[kLanes];
    alignas(64) T out[kLanes];
    Eigen::internal::pstore(in, p);
    Eigen::Map<Lanes, Eigen::Aligned64> result(out);
    result = aop(Eigen::Map<const Lanes, Eigen::Aligned64>(in));
    return Eigen::internal::pload<P>(out);
  });
}

}  // namespace tsl::cpu
