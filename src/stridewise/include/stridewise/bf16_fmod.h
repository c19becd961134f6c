// stridewise/bf16_fmod.h: fmod of two bfloat16 values on the device, exactly, in a fixed
// sequence of integer and float instructions and one table read: its cost does not depend on
// the values (quotients up to 2^253, subnormals and special values included).
//
// A bfloat16 has 8 significant bits. Unnormalized, a finite x is f 2^(e - 134) with the
// integers e = max(E, 1) (E its exponent field) and f its mantissa field plus 128 where E > 0
// (f in [1, 255], or 0 for a zero). With A = |a| = fa 2^(ea - 134), B = |b| = fb 2^(eb - 134)
// (b finite, nonzero) and d = ea - eb:
// - d < 0: ea < eb, so B is normal (fb >= 128) and A < 2^(ea - 126) <= 2^(eb - 127) <= B:
//   fmod(A, B) = A.
// - d >= 0: fmod(A, B) = (fa 2^d mod fb) 2^(eb - 134). With h = d >> 3 and k = d & 7, 2^d is
//   congruent modulo fb to T 2^k, T from a table of 32 x 256 entries (d <= 253: h <= 31): T is
//   2^(8h) mod fb, or fb where that is 0 (so every entry is a nonzero integer, at most fb).
//   So fmod(A, B) = (x mod fb) 2^(eb - 134) with the integer x = fa T 2^k < 2^8 2^8 2^7 = 2^23,
//   exact in float, and x / fb < 2^15 (T <= fb).
// In float, scaled by 2^-7 so that every value stays in the normal range: x1 = x 2^-7 is
// (A 2^(128 - ea)) (T 2^(k - 1)), an exact product of fa 2^-6 and the table's T 2^-1 (exact
// in bfloat16: T has at most 8 significant bits) with k added to its exponent field; and
// m1 = fb 2^-7 = B 2^(127 - eb) (the power 2^-127, a subnormal float, for eb = 254). With
// u = rcp.approx(m1) (within 1 ulp: 2^-23 relative), x1 u is within 2^15 2^-23 = 2^-8 of
// x / fb, so q = x1 u rounded to an integer (one fma with 1.5 2^23: the sum lies where the
// spacing is 1) is n = floor(x / fb) or n + 1, and r1 = x1 - q m1 = (x - q fb) 2^-7 is exact
// in one fma (|x - q fb| <= fb < 2^8), in [-m1, m1); m1 added to a negative r1 (exact) leaves
// (x mod fb) 2^-7, and times 2^(eb - 127) (the float whose bits are eb's exponent field) it is
// fmod(A, B), exact: a multiple of 2^(eb - 134) below B.
// Special values need one select: a = +-inf or NaN has ea = 255 and x1 = A 0 = NaN (d >= 0);
// b = 0 has m1 = 0, u = inf and r1 = NaN (d >= 0: eb = 1); b = +-inf has eb = 255, d < 0 for a
// finite a, and the result A; only b = NaN (d < 0 too) must not take A, and takes r1 = NaN
// (m1 = NaN). A zero a gives +-0 (x = 0, or A). The table's row is masked to [0, 31] and its
// column is fb's (0 for a zero b), so every lane reads inside the table, whatever it holds.
// tests/test_remainder_cpu.py runs this arithmetic in NumPy over every pair of bfloat16
// magnitudes, with the reciprocal 1 ulp either way, against NumPy's fmod, and
// tests/test_cuda.py every signed pair on the device, both conventions.
#pragma once
#include "types.h"

#if !defined(__CUDACC_RTC__)
#include <math.h>
#endif

namespace sw {

// T[h][m] = 2^(8h) mod m, or m where that is 0, times 2^-1, as bfloat16 bits (m = 0: 0).
struct Bf16ModTable { u16 t[32 * 256]; };
SW_HOST_DEVICE constexpr u16 bf16_half_bits(u32 v) {   // v/2 for an integer v in [1, 255]
  u32 e = 0;
  while ((v >> e) > 1) ++e;
  return (u16)(((127 - 1 + e) << 7) | (((v << 7) >> e) & 0x7f));
}
SW_HOST_DEVICE constexpr Bf16ModTable make_bf16_mod_table() {
  Bf16ModTable r{};
  for (u32 m = 1; m < 256; ++m) {
    u32 p = 1 % m;
    for (u32 h = 0; h < 32; ++h) {
      r.t[h * 256 + m] = bf16_half_bits(p == 0 ? m : p);
      p = (p << 8) % m;
    }
  }
  return r;
}

#if !defined(__CUDA_ARCH__)
// The host's form, for the packs its double fast path leaves (quotients of 2^50 and more):
// the same reduction on integers, so that no float operation sees a subnormal (an assist of
// ~150 cycles on Intel cores) and GCC vectorizes it (the table's entries as 32-bit integers,
// the lanes a vector gathers). fa, fb, ea, eb and d as above; T from the table;
// x = fa T 2^k < 2^23; x / fb rounded once is below n + 1 (x / fb is at least 1 / (fb 2^15)
// below it, more than its rounding error, 2^-24 x / fb), so rounded to an integer it is n or
// n + 1, and r = x - q fb (exact in one fma) plus fb where negative is x mod fb. Times
// 2^(eb - 134) in double (exact) it is fmod(A, B), and the float conversion is exact too.
// Special values by masks: A for d < 0 and b not NaN, NaN for a = +-inf or NaN or b = 0 or NaN.
struct Bf16ModInts { u32 t[32 * 256]; };
constexpr Bf16ModInts make_bf16_mod_ints() {
  Bf16ModInts r{};
  for (u32 m = 1; m < 256; ++m) {
    u32 p = 1 % m;
    for (u32 h = 0; h < 32; ++h) {
      r.t[h * 256 + m] = p == 0 ? m : p;
      p = (p << 8) % m;
    }
  }
  return r;
}
inline constexpr Bf16ModInts kBf16ModInts = make_bf16_mod_ints();

SW_INLINE float bf16_fmod_host(float a, float b) {
  const u32 ia = bit_cast<u32>(a) & 0x7fffffffu, ib = bit_cast<u32>(b) & 0x7fffffffu;
  const u32 ha = ia >> 16, hb = ib >> 16, Ea = ha >> 7, Eb = hb >> 7;
  const u32 ea = Ea | (u32)(Ea == 0), eb = Eb | (u32)(Eb == 0);
  const u32 fa = ha - ((ea - 1) << 7), fb = hb - ((eb - 1) << 7);
  const i32 d = (i32)ea - (i32)eb;
  const u32 t = kBf16ModInts.t[(((u32)d & 0xf8u) << 5) | fb];   // row (d >> 3) & 31, column fb
  const float x = (float)(i32)((fa * t) << ((u32)d & 7u)), m = (float)(i32)fb;
  const float q = (x / m + 0x1.8p23f) - 0x1.8p23f;
  float r = fmaf(-q, m, x);
  r = r < 0.0f ? r + m : r;
  const float res = (float)((double)r * bit_cast<double>((u64)(eb - 134 + 1023) << 52));
  const u32 keep = 0u - (u32)((d < 0) & (ib <= 0x7f800000u));
  const u32 nan = 0u - (u32)((ia >= 0x7f800000u) | (ib - 1u >= 0x7f800000u));
  const u32 bits = (((bit_cast<u32>(res) & ~keep) | (ia & keep)) & ~nan) | (0x7fc00000u & nan);
  return bit_cast<float>(bits | (bit_cast<u32>(a) & 0x80000000u));
}
// Whether a bfloat16 pair (as floats) is the table's on the host: outside the range where the
// host's fast form is exact (functors.h fmod_short: |b| normal and below 2^101, and
// |a / b| < 2^39; or b zero, infinite or NaN). On the magnitudes' bits, whose order is the
// values': with |a| = (1 + fa) 2^ea and |b| = (1 + fb) 2^eb, ia - ib is (ea - eb + fa - fb) 2^23,
// below 39 2^23 only where ea - eb <= 38, or 39 with fa < fb: either way |a / b| < 2^39.
SW_INLINE bool bf16_far_host(float a, float b) {
  const i32 ia = (i32)(bit_cast<u32>(a) & 0x7fffffffu), ib = (i32)(bit_cast<u32>(b) & 0x7fffffffu);
  const bool in = (ib >= 0x00800000) & (ib < 0x72000000);   // |b| in [2^-126, 2^101)
  const bool special = (ib == 0) | (ib >= 0x7f800000);
  return in ? (ia - ib >= 0x13800000) & (ia < 0x7f800000) : !special;
}
#endif

#if defined(__CUDA_ARCH__)
static __device__ const Bf16ModTable kBf16Mod = make_bf16_mod_table();

// b's part of bf16_fmod: its exponent field eb, fb's column in bytes, m1 and its reciprocal,
// and whether b is not NaN (apart, so that a row's divisor can be prepared once).
struct Bf16Divisor {
  float b, m1, u;
  u32 eb, col;
  bool real;
  SW_DEVICE SW_INLINE static Bf16Divisor make(float b) {
    const u32 ib = __float_as_uint(b) & 0x7fffffffu, eb = max(ib & 0x7f800000u, 0x00800000u);
    const float m1 = fabsf(b) * __uint_as_float(max((i32)(0x7f000000u - eb), 0x00400000));
    float u;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(u) : "f"(m1));
    return {b, m1, u, eb, (ib - eb + 0x00800000u) >> 15, ib <= 0x7f800000u};   // col: fb 2
  }
};

// fmod(a, b) for bfloat16 a and b (as floats: their low 16 bits are zero).
SW_DEVICE SW_INLINE float bf16_fmod(float a, const Bf16Divisor& b) {
  const u32 ia = __float_as_uint(a) & 0x7fffffffu;
  const u32 ea = max(ia & 0x7f800000u, 0x00800000u);              // e << 23
  const u32 d = ea - b.eb;                                        // d << 23
  const u32 off = ((d >> 17) & 0x3e00u) | b.col;                  // bytes: (h 256 + fb) 2
  const u32 t = __ldg((const unsigned short*)((const char*)kBf16Mod.t + off));
  const float tk = __uint_as_float(t * 0x10000u + (d & 0x03800000u));   // T 2^(k - 1)
  const float x1 = fabsf(a) * __uint_as_float(0x7f800000u - ea) * tk;
  const float q = fmaf(x1, b.u, 0x1.8p23f) - 0x1.8p23f;
  float r = fmaf(-q, b.m1, x1);
  r = r < 0.0f ? r + b.m1 : r;
  r = ((i32)d < 0) & b.real ? fabsf(a) : r * __uint_as_float(b.eb);
  return copysignf(r, a);
}
SW_DEVICE SW_INLINE float bf16_fmod(float a, float b) { return bf16_fmod(a, Bf16Divisor::make(b)); }
#endif

}  // namespace sw
