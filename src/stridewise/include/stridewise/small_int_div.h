// stridewise/small_int_div.h: 8- and 16-bit integer remainder, fmod and floor_divide.
// functors.h includes it last (remainder) and ops.h specializes fmod and floor_divide with it.
#pragma once
#include "functors.h"
#include "words.h"

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

// The 8-bit remainder four lanes to a word (words.h Apply4), the argument above with its
// integers placed on float grids by byte permutes: a permute puts byte k of a word into the
// mantissa of a constant, so a float is one instruction away from the word. kG15: 1.5 2^15,
// whose floats are 2^-8 apart, so bits 0x4740 u f (bytes) are 1.5 2^15 + u + f / 256; kOneGrid
// bits 0x4b4000 u are 1.5 2^23 + u. Element by element, extracting, sign-extending and
// placing each byte took int8 14 integer-pipe instructions an element (73% of copy).
//   - b' = b, or 1 where b = 0. Signed: byte by byte in the word (nonzero_bytes), flipped
//     (u = b' ^ 0x80 = b' + 128, unsigned), so fb = bits 0x4b4000 u and nb = 1.5 2^23 + 128 -
//     fb = -b'. Unsigned: fb = max(fb, grid + 1) on the grid itself (bytes 0 and 2 on
//     kOneGrid, 1 and 3 on kG15), nb = grid - fb.
//   - x = a + d, d in (0, 1) for b' > 0 and in (-1, 0) for b' < 0, gives floor(a / b') as
//     x = a + s / 2 above: x / b' is at least min(|d|, 1 - |d|) / |b'| from every integer.
//     Unsigned: bits 0x4740 a 80 less 1.5 2^15, d = 1/2. Signed, from one dividend along the
//     pack (its float, bits 0x4740 u 80, computed once): less c = bits 0x4740 80 B per lane,
//     B the byte b' read unsigned, so d = 1/2 - B / 256, in (0, 1/2) for b' > 0 and in
//     (-1/2, 0) for b' < 0 but for b' = -128, where d = 0: there x / b' = a / -128 and
//     rcp.approx(128) is 2^-7 exactly, so the ceiling below is exact as well.
//     Signed, from a dividend word: d = 1/2 in every lane (the flipped byte's float less
//     1.5 2^15 + 128). Where b' < 0 divides a, x / b' is then 1 / (2|b'|) below the quotient
//     (as far from it as from the next integer), so y is one off and the byte comes out b'
//     instead of 0. No remainder by b' is b' (0 <= r < b' or b' < r <= 0), so bytes equal to
//     b' are set to 0: five instructions a word. A d per lane there took two sign words per
//     divisor word (int8's resident short rows held 95 registers, 80 this way: bias
//     channels_last 80 -> 72 us on the H200).
//     Each difference is exact (one binade, one grid).
//   - y = fma_ru(x, rcp.approx(nb), 1.5 2^23) has bits 0x4b400000 - q, as above.
//   - a - q b' modulo 256: the word a plus y times a multiplier with b' at the result's byte
//     and zeros below it (no carry reaches that byte), three permutes gathering the bytes.
//     Signed: b' masked to byte k. Unsigned: fb's own bits, whose byte 0 (kOneGrid) or 1 (kG15)
//     is b', lanes 2 and 3 adding to the word shifted down 16 (a mask each cost uint8's
//     outer product 2%).
// tests/test_small_int_div.py checks this step by step on every pair in every lane (word_model).
constexpr float kG15F = 49152.0f;            // 1.5 2^15, floats 2^-8 apart; bits 0x47400000

// 0xff in each byte of x whose bit 7 is set, else 0: prmt's sign mode (a selector nibble's
// bit 3), which __byte_perm does not pass on (it keeps each nibble's low 3 bits; SASS).
SW_DEVICE SW_INLINE u32 sign_bytes(u32 x) {
  u32 r;
  asm("prmt.b32 %0, %1, 0, 0xba98;" : "=r"(r) : "r"(x));
  return r;
}

template <class T> struct SmallRemainder4 : Apply4<void, void> {
  enum { value = 1 };
  static constexpr bool kSigned = T(-1) < T(0);
  // The divisor word: the reciprocals; signed, b' and c per lane (for a dividend along the
  // pack); unsigned, m: fb's bits per lane. A kernel keeps what its path reads.
  struct D { float r[4]; float c[4]; u32 b; u32 m[4]; };
  struct Splat { u32 w; float ga; };                 // one dividend along the pack
  static constexpr u32 kFlip = kSigned ? 0x80808080u : 0u;

  // 1.5 2^15 + a (+ 128 signed) + 1/2, from byte 0 of the word (a dividend along the pack)
  SW_DEVICE SW_INLINE static float grid_a(u32 w) {
    return __uint_as_float(__byte_perm(w ^ kFlip, 0x47400080u, 0x7604u));
  }
  SW_DEVICE SW_INLINE static D prepare(u32 wb) {
    D d;
    if constexpr (kSigned) {
      d.b = wb + ((nonzero_bytes(wb) ^ 0x80808080u) >> 7);
      const u32 f = d.b ^ kFlip;
      SW_UNROLL for (int k = 0; k < 4; ++k) {
        const float fb = __uint_as_float(__byte_perm(f, 0x4b400000u, 0x7650u | k));
        d.r[k] = rcp_approx((kOneGridF + 128.0f) - fb);
        d.c[k] = __uint_as_float(__byte_perm(d.b, 0x47408000u, 0x7650u + k));
      }
    } else {
      SW_UNROLL for (int k = 0; k < 4; ++k) {
        const bool one = k % 2 == 0;     // bytes 0 and 2 on kOneGrid, 1 and 3 on kG15
        const float g = one ? kOneGridF : kG15F;
        const float fb = fmaxf(__uint_as_float(one ? __byte_perm(wb, 0x4b400000u, 0x7650u | k)
                                                   : __byte_perm(wb, 0x47400000u, 0x7604u | (k << 4))),
                               g + 1.0f);
        d.r[k] = rcp_approx(g - fb);
        d.m[k] = __float_as_uint(fb);
      }
    }
    return d;
  }
  SW_DEVICE SW_INLINE static Splat splat(T v) {
    const u32 w = splat_byte(v);
    return {w, grid_a(w)};
  }
  SW_DEVICE SW_INLINE static D divisor(u32 w) { return prepare(w); }
  SW_DEVICE SW_INLINE static D divisor(const Splat& s) { return prepare(s.w); }
  SW_DEVICE SW_INLINE static const D& divisor(const D& d) { return d; }

  // x for lane k: from a dividend word a + 1/2 (1.5 2^15 + 128 below the signed grid's
  // float); along the pack, signed, a + 1/2 - B / 256 (c per lane, as above)
  SW_DEVICE SW_INLINE static float x_of(u32 a, const D&, int k) {
    return __uint_as_float(__byte_perm(a ^ kFlip, 0x47400080u, 0x7604u | (k << 4)))
           - (kSigned ? kG15F + 128.0f : kG15F);
  }
  SW_DEVICE SW_INLINE static float x_of(const Splat& a, const D& d, int k) {
    return a.ga - (kSigned ? d.c[k] : kG15F);
  }
  SW_DEVICE SW_INLINE static u32 word(u32 a) { return a; }
  SW_DEVICE SW_INLINE static u32 word(const Splat& a) { return a.w; }
  // whether a dividend of type A lies along the pack
  SW_DEVICE SW_INLINE static constexpr bool along(const Splat*) { return true; }
  SW_DEVICE SW_INLINE static constexpr bool along(const void*) { return false; }

  template <class A, class B>
  SW_DEVICE SW_INLINE static u32 run(const A& a, const B& b) {
    const D d = divisor(b);
    const u32 w = word(a);
    u32 t[4];
    SW_UNROLL for (int k = 0; k < 4; ++k) {
      const u32 y = __float_as_uint(__fmaf_ru(x_of(a, d, k), d.r[k], kOneGridF));   // 0x4b400000 - q
      if constexpr (kSigned) t[k] = w + y * (k == 0 ? d.b : d.b & (0xffu << (8 * k)));
      else t[k] = (k < 2 ? w : w >> 16) + y * d.m[k];
    }
    if constexpr (kSigned) {  // byte k of t[k]; from a dividend word, 0 where it equals b' (above)
      const u32 v = __byte_perm(__byte_perm(t[0], t[1], 0x3250u), __byte_perm(t[2], t[3], 0x7210u), 0x7610u);
      if constexpr (along(static_cast<const A*>(nullptr))) return v;
      const u32 e = v ^ d.b, ne = ((e & 0x7f7f7f7fu) + 0x7f7f7f7fu) | e;   // bit 7: byte != b'
      return v & sign_bytes(ne);
    } else                    // bytes 0, 1 of t[0], t[1] and of t[2], t[3]
      return __byte_perm(__byte_perm(t[0], t[1], 0x3250u), __byte_perm(t[2], t[3], 0x3250u), 0x5410u);
  }
};
#else
// The host computes them as int32, whose double division vectorizes.
template <class T, Convention C> struct SmallRemainder : RemainderFunctor<i32, C> {};
#endif

// Both conventions agree on integers.
template <Convention C> struct RemainderFunctor<i8, C> : SmallRemainder<i8, C> {};
template <Convention C> struct RemainderFunctor<u8, C> : SmallRemainder<u8, C> {};
template <Convention C> struct RemainderFunctor<i16, C> : SmallRemainder<i16, C> {};
template <Convention C> struct RemainderFunctor<u16, C> : SmallRemainder<u16, C> {};
#if defined(__CUDA_ARCH__)
template <Convention C> struct Apply4<RemainderFunctor<i8, C>, i8> : SmallRemainder4<i8> {};
template <Convention C> struct Apply4<RemainderFunctor<u8, C>, u8> : SmallRemainder4<u8> {};
#endif

}  // namespace sw
