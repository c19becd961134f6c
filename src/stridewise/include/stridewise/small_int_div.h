// stridewise/small_int_div.h: 8- and 16-bit integer remainder, fmod and floor_divide.
// functors.h includes it last (remainder) and ops.h specializes fmod and floor_divide with it.
#pragma once
#include "functors.h"

namespace sw {

#if defined(__CUDA_ARCH__)
// The GPU divides 8- and 16-bit operands in float with full-rate instructions and one
// rcp.approx per divisor: the int32 form (u32_reciprocal, u32_mod) spends three low-rate
// instructions (I2F, MUFU, F2I: 16 a clock per SM) and a dozen integer ones on every element,
// which made 8-bit remainder compute-bound at half of the copy's bandwidth.
// Integers cross to float and back on grids, without conversions: the floats in [2^22, 2^23)
// are 0.5 apart, so bits kHalfGrid + n are the float 1.5 2^22 + n / 2 for |n| < 2^21; those in
// [2^23, 2^24) are 1 apart, so an fma y = x * r + 1.5 2^23, rounded once toward -inf (+inf),
// is 1.5 2^23 + floor(x r) (ceil) for |x r| < 2^22, with bits 0x4b400000 + floor(x r), whose
// low 22 bits are floor(x r)'s (0x4b400000 is a multiple of 2^22).
// Exactness, for |a| < 2^16 and 1 <= |b| <= 2^16, s = sign(b): write a / b = n + j / |b| with
// n = floor(a / b), 0 <= j < |b|. Floor: x = a + s / 2 gives x / b = n + (j + 1/2) / |b|;
// ceiling: x = a + b - s / 2 gives x / b = n + 1 + (j - 1/2) / |b|, whose floor is n for j = 0
// and n + 1 otherwise, ceil(a / b) both times. Either way x / b is at least 1 / (2|b|) from
// every integer and has floor(x / b) = the quotient wanted. r = rcp.approx(b) = (1 + e) / b
// with |e| <= 2^-22 (rcp.approx is within 1 ulp, 2^-23 relative), so x r is within
// |x| 2^-22 / |b| <= (|a| + |b|) 2^-22 / |b| < 1 / (2|b|) of x / b: on the same side of every
// integer, and floor(x r) = floor(x / b). x = (1.5 2^22 + a) - c is exact: c = 1.5 2^22 + a - x
// depends on b alone (prepared; an outer product's row shares 1.5 2^22 + a), and both are
// floats on the 0.5 grid of one binade (|2a|, |2(x - a)| < 2^18). rcp.approx(-b) = (1 + e') / -b
// puts x r' that close to -x / b, so ceil(x r') = -floor(x / b): the remainders round up
// with r' and get bits 0x4b400000 - q, and a + bits * b = a - q b modulo 2^22, whose low 16
// bits are the remainder (|a - q b| < |b|). The quotient's low bits are q's, wrapped (MIN // -1
// is MIN). Remainder floors (x = a + s / 2), fmod truncates (floor where a and b have one
// sign, ceiling where they differ: a select on a's sign between two prepared c).
// A zero divisor: the remainders divide by 1 (a - a = 0); the quotient takes r = 0, so y is
// 1.5 2^23 and q = 0. tests/test_small_int_div.py checks the argument step by step in
// NumPy on every 8-bit pair and every 16-bit divisor, with rcp.approx 2 ulp either way.
enum SmallDiv { kFloorMod, kTruncMod, kFloorQuot };   // remainder, fmod, floor_divide

constexpr i32 kHalfGrid = 0x4ac00000;       // 1.5 2^22, floats 0.5 apart
constexpr float kHalfGridF = 6291456.0f;
constexpr float kOneGridF = 12582912.0f;    // 1.5 2^23, floats 1 apart; bits 0x4b400000

// A divisor prepared (HasPrepare): what depends on b alone.
template <class T, SmallDiv K> struct SmallDivisor {
  i32 b;            // the divisor; the remainders divide by 1 for 0
  float cpos, cneg; // 1.5 2^22 + a - x for a >= 0 and for a < 0 (x = cvt(a) - c)
  float r;          // rcp.approx(-b), or for the quotient rcp.approx(b) and 0 for b = 0
  SW_DEVICE SW_INLINE static SmallDivisor make(T b0) {
    const i32 b = K == kFloorQuot ? (i32)b0 : (i32)b0 + (b0 == 0);
    const i32 s = T(-1) < T(0) && b < 0 ? -1 : 1;
    const float cf = __int_as_float(kHalfGrid - s);           // floor: x = a + s / 2
    const float cc = __int_as_float(kHalfGrid - 2 * b + s);   // ceiling: x = a + b - s / 2
    const float fb = __int_as_float(kHalfGrid + 2 * b);   // 1.5 2^22 + b
    SmallDivisor d;
    d.b = b;
    d.cpos = K == kTruncMod && s < 0 ? cc : cf;
    d.cneg = K == kTruncMod && s > 0 ? cc : cf;
    if constexpr (K == kFloorQuot) d.r = b == 0 ? 0.0f : rcp_approx(fb - kHalfGridF);
    else d.r = rcp_approx(kHalfGridF - fb);
    return d;
  }
};

template <class T, SmallDiv K>
SW_DEVICE SW_INLINE T small_int_div(T a, const SmallDivisor<T, K>& d) {
  const float c = K == kTruncMod && a < T(0) ? d.cneg : d.cpos;
  const float x = __int_as_float(kHalfGrid + 2 * (i32)a) - c;
  if constexpr (K == kFloorQuot) return (T)__float_as_uint(__fmaf_rd(x, d.r, kOneGridF));
  const u32 y = __float_as_uint(__fmaf_ru(x, d.r, kOneGridF));   // 0x4b400000 - q
  return (T)((u32)(i32)a + y * (u32)d.b);
}

// remainder (kFloorMod), fmod and floor_divide of 8- and 16-bit operands; `slow` is never set.
template <class T, SmallDiv K> struct SmallIntDivision {
  typedef SmallDivisor<T, K> D;
  SW_DEVICE SW_INLINE static D prepare(T b) { return D::make(b); }
  SW_DEVICE SW_INLINE static T fast(T a, T b, FastFlag&) { return small_int_div(a, prepare(b)); }
  SW_DEVICE SW_INLINE static T fast(T a, const D& d, FastFlag&) { return small_int_div(a, d); }
  SW_DEVICE SW_INLINE T operator()(T a, T b) const { return small_int_div(a, prepare(b)); }
};
template <class T, Convention C> struct SmallRemainder : SmallIntDivision<T, kFloorMod> {};
#else
// The host computes them as int32, whose double division vectorizes.
template <class T, Convention C> struct SmallRemainder : RemainderFunctor<i32, C> {};
#endif

// Both conventions agree on integers.
template <Convention C> struct RemainderFunctor<i8, C> : SmallRemainder<i8, C> {};
template <Convention C> struct RemainderFunctor<u8, C> : SmallRemainder<u8, C> {};
template <Convention C> struct RemainderFunctor<i16, C> : SmallRemainder<i16, C> {};
template <Convention C> struct RemainderFunctor<u16, C> : SmallRemainder<u16, C> {};

}  // namespace sw
