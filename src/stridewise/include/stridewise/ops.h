// stridewise/ops.h: the built-in elementwise functors (unary, binary, ternary, cast).
//
// OneFlow style: each functor is a tiny host-device struct over OpMath values (float for the
// 16-bit types), so the CPU and CUDA kernels share one definition and give the same bits.
// Signed integer arithmetic goes through the unsigned type: overflow wraps (as NumPy and torch
// do in practice) instead of being undefined behaviour the optimiser may exploit.
#pragma once
#include "functors.h"

namespace sw {

// Unsigned<T>: the type T's wrapping arithmetic runs in. 8- and 16-bit types widen to u32:
// their own unsigned types promote to int, where u16 * u16 may overflow (undefined).
template <class T> struct Unsigned { typedef T type; };   // floats and bool
template <> struct Unsigned<i8> { typedef u32 type; };
template <> struct Unsigned<u8> { typedef u32 type; };
template <> struct Unsigned<i16> { typedef u32 type; };
template <> struct Unsigned<u16> { typedef u32 type; };
template <> struct Unsigned<i32> { typedef u32 type; };
template <> struct Unsigned<u32> { typedef u32 type; };
template <> struct Unsigned<i64> { typedef u64 type; };
template <> struct Unsigned<u64> { typedef u64 type; };

template <class T> SW_HOST_DEVICE SW_INLINE bool is_nan(T x) { return x != x; }  // false for ints
template <class T> SW_HOST_DEVICE SW_INLINE T wrap(typename Unsigned<T>::type x) { return (T)x; }
#define SW_U(x) ((typename Unsigned<T>::type)(x))

template <class T> struct AddFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return (T)(SW_U(a) + SW_U(b)); }
};
template <class T> struct SubtractFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return (T)(SW_U(a) - SW_U(b)); }
};
template <class T> struct MultiplyFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return (T)(SW_U(a) * SW_U(b)); }
};
// Floats have no unsigned twin: Unsigned<float> is float, so the same bodies are plain IEEE ops.
template <class T> struct NegativeFunctor {  // -a, not 0 - a: negative(+0) is -0
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const {
    if constexpr (IsInt<T>::value) return (T)(SW_U(0) - SW_U(a));
    else return -a;
  }
};

// Apply2 for add, subtract and multiply on half2 / bfloat162. Exact: float32 has
// 24 >= 2 * 11 + 2 significant bits, so rounding a float32 sum, difference or product to
// float16 or bfloat16 gives the directly rounded result (double rounding is innocuous), and
// one 16-bit-pair instruction rounds directly. bfloat16 uses fma (sm_80+): a * 1 + b,
// b * -1 + a, a * b + -0 (-0 keeps the sign of a zero product). All 2^32 pairs per dtype and
// op are compared with the float32 path in tests/test_cuda.py.
#if defined(__CUDA_ARCH__)
#define SW_APPLY2(Functor, S, body)                                              \
  template <> struct Apply2<Functor<float>, S> {                                 \
    enum { value = 1 };                                                          \
    SW_DEVICE SW_INLINE static Pair<S> run(Pair<S> a, Pair<S> b) {               \
      const u32 x = bit_cast<u32>(a), y = bit_cast<u32>(b);                      \
      u32 r;                                                                     \
      body;                                                                      \
      return bit_cast<Pair<S> >(r);                                              \
    }                                                                            \
  };
SW_APPLY2(AddFunctor, half, asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y)))
SW_APPLY2(SubtractFunctor, half, asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y)))
SW_APPLY2(MultiplyFunctor, half, asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y)))
#if __CUDA_ARCH__ >= 800
SW_APPLY2(AddFunctor, bfloat16,
          asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(0x3f803f80u), "r"(y)))
SW_APPLY2(SubtractFunctor, bfloat16,
          asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(y), "r"(0xbf80bf80u), "r"(x)))
SW_APPLY2(MultiplyFunctor, bfloat16,
          asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(0x80008000u)))
#endif
#undef SW_APPLY2
#endif

template <class T> struct DivideFunctor {  // floats only: integer inputs promote first
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return a / b; }
};
// torch's CUDA division by a number (a Python scalar or CPU 0-d tensor): a times b's
// reciprocal, in the compute dtype's math type; one bit may differ from a / b. The reciprocal
// is loop-invariant (b is a kernel parameter), so the compiler hoists it.
template <class T> struct DivideByNumberFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return a * (T(1) / b); }
};

// fmod: C's fmod for floats (exact); integers truncate, and a zero divisor gives 0 (NumPy's
// answer; never a trap), as does -1 so INT_MIN % -1 is never evaluated.
template <class T> SW_HOST_DEVICE SW_INLINE T int_fmod(T a, T b) {
  return (b == 0 || minus_one(b)) ? T(0) : T(a % b);
}
template <class T> struct FmodFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    if constexpr (IsInt<T>::value) return int_fmod(a, b);
    else return sw_fmod(a, b);
  }
};
#if !defined(__CUDA_ARCH__)
// float32 on the host (the 16-bit floats have their own: bf16_ops.h): fmod_double's vectorized
// fast path, fmod_double_steps_pack for the packs it leaves.
template <> struct FmodFunctor<float> {
  enum { kExactPack = 1 };
  SW_INLINE float operator()(float a, float b) const { return fmod_double_steps(a, b); }
  SW_INLINE static float fast(float a, float b, FastFlag& slow) { return fmod_double(a, b, slow); }
  template <int P> SW_INLINE static void exact(float* y, const float* a, const float* b) {
    fmod_double_steps_pack<P>(y, a, b);
  }
};
// float64: fmod_fast_any (specials as ordinary lanes), fmod_wide_pack for the packs with a
// quotient of 2^52 or more.
template <> struct FmodFunctor<double> {
  enum { kExactPack = 1 };
  SW_INLINE double operator()(double a, double b) const { return sw_fmod(a, b); }
  SW_INLINE static double fast(double a, double b, FastFlag& slow) { return fmod_fast_any(a, b, slow); }
  template <int P> SW_INLINE static void exact(double* y, const double* a, const double* b) {
    fmod_wide_pack<P>(y, a, b);
  }
};
// int64: remainder's vectorized division (functors.h int64_divmod), for every divisor (0
// included) with AVX-512DQ, else for divisors below 2^50, asked first, and a flagged pack
// by int64_divide_pack (functors.h Int64HostDivision).
template <> struct FmodFunctor<i64> : Int64HostDivision<kInt64Fmod> {
  SW_INLINE i64 operator()(i64 a, i64 b) const { return int_fmod(a, b); }
};
// int32: remainder's double division (functors.h int32_divide_host), exact for every pair.
template <> struct FmodFunctor<i32> {
  SW_INLINE i32 operator()(i32 a, i32 b) const { return int32_divide_host(a, b).r; }
};
// The narrower integers compute in a wider type's functor, as remainder's do: every 8- and
// 16-bit pair is an int32 case, every uint32 one an int64 case, and |a % b| <= |a| narrows.
template <> struct FmodFunctor<i8> : FmodFunctor<i32> {};
template <> struct FmodFunctor<u8> : FmodFunctor<i32> {};
template <> struct FmodFunctor<i16> : FmodFunctor<i32> {};
template <> struct FmodFunctor<u16> : FmodFunctor<i32> {};
template <> struct FmodFunctor<u32> : FmodFunctor<i64> {};
#endif

SW_HOST_DEVICE SW_INLINE float sw_floor(float x) { return floorf(x); }
SW_HOST_DEVICE SW_INLINE double sw_floor(double x) { return floor(x); }
SW_HOST_DEVICE SW_INLINE float sw_copysign(float x, float y) { return copysignf(x, y); }
SW_HOST_DEVICE SW_INLINE double sw_copysign(double x, double y) { return copysign(x, y); }

// floor_divide: NumPy's and torch's shared definition through fmod, which is exact where
// floor(a / b) is not (a / b may round up to an integer). A zero divisor gives a / b.
// Integers: a zero divisor gives 0 (NumPy; torch raises), INT_MIN // -1 wraps to INT_MIN.
// Unsigned types have no sign fix-up (their compares with 0 are constant).
template <class T> SW_HOST_DEVICE SW_INLINE T int_floor_divide(T a, T b) {
  if (b == 0) return 0;
  if (minus_one(b)) return wrap<T>(SW_U(0) - SW_U(a));
  const T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
}
template <class T> struct FloorDivideFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    if constexpr (IsInt<T>::value) return int_floor_divide(a, b);
    else return float_floor_divide(a, b);
  }
  SW_HOST_DEVICE SW_INLINE static T float_floor_divide(T a, T b) {
    if (b == 0) return a / b;
    const T mod = sw_fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div == 0) return sw_copysign(T(0), a / b);
    T fl = sw_floor(div);
    if (div - fl > T(0.5)) fl += T(1);
    return fl;
  }
};
// NumPy's floor_divide steps in float from mod = fmod(a, b) (npy_floor_divide; torch's
// div_floor_floating is the same): the quotient (a - mod) / b, less 1 where mod is nonzero and
// of a sign other than b's; its floor, plus 1 where the quotient is more than 1/2 above it.
// A zero quotient gives a zero of a / b's sign and b = +-0 gives a / b (inf of the quotient's
// sign, NaN for a zero or NaN a), both from the sign bits, not a second division: on the GPU
// a warp with one such lane otherwise ran a full IEEE division for it. Round rounds the floor
// and the floor + 1 (torch's CUDA 16-bit form rounds them to its type; NoRounding keeps float).
struct NoRounding {
  SW_HOST_DEVICE SW_INLINE static float r(float x) { return x; }
};
template <class Round> SW_HOST_DEVICE SW_INLINE float floor_rounded(float div) {
  const float fl = Round::r(sw_floor(div));
  return div - fl > 0.5f ? Round::r(fl + 1.0f) : fl;
}
template <class Round> SW_HOST_DEVICE SW_INLINE float floor_divide_steps(float a, float b, float mod) {
  const u32 sq = (bit_cast<u32>(a) ^ bit_cast<u32>(b)) & 0x80000000u;
  float div = (a - mod) / b;
  if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) div -= 1.0f;
  const float q = floor_rounded<Round>(div);
  const float by_zero = bit_cast<float>(fabsf(a) > 0.0f ? 0x7f800000u | sq : 0x7fc00000u);
  return b == 0.0f ? by_zero : div == 0.0f ? bit_cast<float>(sq) : q;
}
#if defined(__CUDA_ARCH__)
// float fmod and floor_divide on the GPU (float32, and the 16-bit floats, which compute in
// float): remainder's range check first (remainder_wide with step 0: quotients of 2^60 and
// more, subnormal and huge divisors), then remainder's fast path without its checks on
// a' = |a| with b's sign, whose floor modulus by b is |a| mod |b| with b's sign (a' and b
// agree in sign, so no rounding of a' + b arises); a's sign copied in gives fmod, as Bf16Fmod
// does. A warp with a flagged lane redoes its packs by fmod_wide, exact for every pair.
// Before, each element ran sw_fmod: step 0's checks, and a call for the lanes it left.
// kStep0: the fast path's step 0 (float and float16; bfloat16's Bf16Fmod range check leaves
// only quotients its last step takes).
template <bool kStep0> struct FmodFlagsFirst {
  enum { kFlagsFirst = 1 };
  SW_DEVICE SW_INLINE static Divisor<float> prepare(float b) { return Divisor<float>::make(b); }
  SW_DEVICE SW_INLINE static bool wide(float a, float b) { return remainder_wide<kStep0>(a, b); }
  SW_DEVICE SW_INLINE static bool wide(float a, const Divisor<float>& d) { return remainder_wide<kStep0>(a, d); }
  SW_DEVICE SW_INLINE static float fast(float a, float b, FastFlag& slow) {
    return copysignf(remainder_fast<kNumpy, kStep0, false>(copysignf(a, b), b, slow), a);
  }
  SW_DEVICE SW_INLINE static float fast(float a, const Divisor<float>& d, FastFlag& slow) {
    return copysignf(remainder_fast<kNumpy, kStep0, false>(copysignf(a, d.b), d, slow), a);
  }
};
template <> struct FmodFunctor<float> : FmodFlagsFirst<true> {
  SW_DEVICE SW_INLINE float operator()(float a, float b) const { return fmod_wide(a, b); }
};
template <class Round> struct FloorDivideFlagsFirst : FmodFlagsFirst<true> {
  typedef FmodFlagsFirst<true> Fmod;
  SW_DEVICE SW_INLINE float operator()(float a, float b) const {
    return floor_divide_steps<Round>(a, b, fmod_wide(a, b));
  }
  SW_DEVICE SW_INLINE static float fast(float a, float b, FastFlag& slow) {
    return floor_divide_steps<Round>(a, b, Fmod::fast(a, b, slow));
  }
  SW_DEVICE SW_INLINE static float fast(float a, const Divisor<float>& d, FastFlag& slow) {
    return floor_divide_steps<Round>(a, d.b, Fmod::fast(a, d, slow));
  }
};
template <> struct FloorDivideFunctor<float> : FloorDivideFlagsFirst<NoRounding> {};
// int64 on the GPU: remainder's division (functors.h Int64DeviceDivision) in place of `%`
// and `/`, long subroutines.
template <> struct FmodFunctor<i64> : Int64DeviceDivision<kInt64Fmod> {
  SW_DEVICE SW_INLINE i64 operator()(i64 a, i64 b) const { return int64_fmod_fast(a, prepare(b)); }
};
template <> struct FloorDivideFunctor<i64> : Int64DeviceDivision<kInt64FloorDivide> {
  SW_DEVICE SW_INLINE i64 operator()(i64 a, i64 b) const { return int64_floor_divide_fast(a, prepare(b)); }
};
#endif
#if !defined(__CUDA_ARCH__)
template <> struct FloorDivideFunctor<i64> : Int64HostDivision<kInt64FloorDivide> {   // as FmodFunctor<i64>
  SW_INLINE i64 operator()(i64 a, i64 b) const { return int_floor_divide(a, b); }
};
// int32: the truncated quotient less 1 where r != 0 and r's sign differs from b's, in
// double (in [-2^31, 2^31]); a zero divisor gives 0, and INT_MIN // -1 (q = 2^31) wraps to
// INT_MIN as NumPy's does, by 2^32 taken off before the conversion.
template <> struct FloorDivideFunctor<i32> {
  SW_INLINE i32 operator()(i32 a, i32 b) const {
    const DivMod32 d = int32_divide_host(a, b);
    const double q = d.q - (double)((d.r != 0) & ((d.r ^ b) < 0));
    return (i32)(q - 0x1p32 * (double)(q >= 0x1p31)) & -(i32)(b != 0);
  }
};
// As FmodFunctor's: the 8- and 16-bit quotients (-128 // -1 = 128 included) narrow as NumPy's
// wrap, uint32's fit int64.
template <> struct FloorDivideFunctor<i8> : FloorDivideFunctor<i32> {};
template <> struct FloorDivideFunctor<u8> : FloorDivideFunctor<i32> {};
template <> struct FloorDivideFunctor<i16> : FloorDivideFunctor<i32> {};
template <> struct FloorDivideFunctor<u16> : FloorDivideFunctor<i32> {};
template <> struct FloorDivideFunctor<u32> : FloorDivideFunctor<i64> {};

// floor_divide of floats from an exact fmod, as masks and selects so GCC vectorizes it
// across a pack: NumPy's npy_floor_divide (npy_divmod), step for step, with the same IEEE
// operations, so the same bits. div = (a - mod) / b, less 1 where mod != 0 and its sign
// differs from b's (a NaN mod comes with a NaN div, and b = +-0 takes a / b, so sign bits
// serve as NumPy's compares); then floor(div), plus 1 where div - floor(div) > 1/2; a zero
// div gives copysign(0, a / b). floor without a rounding instruction (a vector floor needs
// -fno-trapping-math in GCC 12): for |div| < 2^52 (2^23 in float), t = (|div| + 2^52) - 2^52
// rounds |div| to an integer exactly (the sum lies where the spacing is 1), t with div's
// sign is within 1/2 of div, and floor(div) is t, or t - 1 where t > div (both exact);
// larger, infinite or NaN div are their own floor.
template <class M> SW_INLINE M floor_divide_from_fmod(M a, M b, M mod) {
  typedef typename Bits<M>::type U;
  const U sign = U(1) << (sizeof(U) * 8 - 1);
  const M big = sizeof(M) == 4 ? M(0x1p23) : M(0x1p52), q = a / b;
  const U ub = bit_cast<U>(b), um = bit_cast<U>(mod);
  const U fix = U(0) - U(((um & ~sign) != 0) & (((um ^ ub) & sign) != 0));
  const M div = (a - mod) / b - bit_cast<M>(bit_cast<U>(M(1)) & fix);
  const U ud = bit_cast<U>(div), ad = ud & ~sign;
  const M t = bit_cast<M>(bit_cast<U>((bit_cast<M>(ad) + big) - big) | (ud & sign));
  const U small = U(0) - U(bit_cast<M>(ad) < big);
  const U below = U(0) - U(t > div);
  M fl = bit_cast<M>((bit_cast<U>(M(t - bit_cast<M>(bit_cast<U>(M(1)) & below))) & small) | (ud & ~small));
  fl = fl + bit_cast<M>(bit_cast<U>(M(1)) & (U(0) - U(div - fl > M(0.5))));
  const U zero = U(0) - U(ad == 0), bzero = U(0) - U((ub & ~sign) == 0);
  const U r = (bit_cast<U>(fl) & ~zero) | (((bit_cast<U>(q) & sign)) & zero);
  return bit_cast<M>((r & ~bzero) | (bit_cast<U>(q) & bzero));
}
// float32 (and the 16-bit floats' torch-number forms, pipeline.py torch_numbers):
// fmod_double's fast path, fmod_double_steps_pack for the lanes it leaves, both vectorized.
// float64: fmod_fast_any, and fmod_wide_pack for packs with quotients of 2^52 and more.
template <> struct FloorDivideFunctor<float> {
  enum { kExactPack = 1 };
  SW_INLINE float operator()(float a, float b) const { return floor_divide_from_fmod(a, b, fmod_double_steps(a, b)); }
  SW_INLINE static float fast(float a, float b, FastFlag& slow) {
    return floor_divide_from_fmod(a, b, fmod_double(a, b, slow));
  }
  template <int P> SW_INLINE static void exact(float* y, const float* a, const float* b) {
    fmod_double_steps_pack<P>(y, a, b);
    SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = floor_divide_from_fmod(a[e], b[e], y[e]);
  }
};
template <> struct FloorDivideFunctor<double> {
  enum { kExactPack = 1 };
  SW_INLINE double operator()(double a, double b) const { return floor_divide_from_fmod(a, b, sw_fmod(a, b)); }
  SW_INLINE static double fast(double a, double b, FastFlag& slow) {
    return floor_divide_from_fmod(a, b, fmod_fast_any(a, b, slow));
  }
  template <int P> SW_INLINE static void exact(double* y, const double* a, const double* b) {
    fmod_wide_pack<P>(y, a, b);
    SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = floor_divide_from_fmod(a[e], b[e], y[e]);
  }
};
#endif
#if defined(__CUDA_ARCH__)
// 8- and 16-bit on the GPU: remainder's float division (small_int_div.h), which truncates
// for fmod and gives the quotient for floor_divide.
#define SW_SMALL_INT_DIVISION(T)                                                    \
  template <> struct FmodFunctor<T> : SmallIntDivision<T, kTruncMod> {};            \
  template <> struct FloorDivideFunctor<T> : SmallIntDivision<T, kFloorQuot> {};
SW_SMALL_INT_DIVISION(i8)
SW_SMALL_INT_DIVISION(u8)
SW_SMALL_INT_DIVISION(i16)
SW_SMALL_INT_DIVISION(u16)
#undef SW_SMALL_INT_DIVISION
#endif

// maximum / minimum: a NaN in either operand wins (NumPy and torch); on a tie (+0 vs -0)
// the second operand is returned, as NumPy does.
// Which operand a +-0 tie returns is each library's loop's: NumPy's float16 maximum and
// minimum return the first (its float32 and float64 loops, and torch's vector paths, the
// second); NumPy's float32 and float64 clip return the bound (its float16 loop, its branch
// for bounds of one value each and torch's scalar path keep x: builtins._clip_ties picks).
template <class T, Convention C> struct TieFirst { static constexpr bool value = false; };
template <> struct TieFirst<half, kNumpy> { static constexpr bool value = true; };
template <class T, Convention C> struct TieBound { static constexpr bool value = false; };
template <> struct TieBound<float, kNumpy> { static constexpr bool value = true; };
template <> struct TieBound<double, kNumpy> { static constexpr bool value = true; };

// The conditions combine with | (not ||): one select a lane, which the host vectorizes (with
// || GCC kept a branch per element, 8x slower than torch's vector loop).
// bool: or and and (equal bools are the same bits, so a tie's pick is no choice), which GCC
// vectorizes where the select over bool lanes read from bytes became a branch an element.
template <class T, bool First = false> struct MaximumFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    if constexpr (Same<T, bool>::value) return a | b;
    else return ((a > b) | (First & (a == b)) | is_nan(a)) ? a : b;
  }
};
template <class T, bool First = false> struct MinimumFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    if constexpr (Same<T, bool>::value) return a & b;
    else return ((a < b) | (First & (a == b)) | is_nan(a)) ? a : b;
  }
};

// relu as torch defines it (clamp_min(x, 0)): NaN stays NaN and -0 stays -0.
template <class T> struct ReluFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return a < T(0) ? T(0) : a; }
};

template <class T> struct AbsFunctor {  // integers: |INT_MIN| wraps to INT_MIN, as in NumPy
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return a < T(0) ? T(SW_U(0) - SW_U(a)) : a; }
};
template <> struct AbsFunctor<bool> {   // NumPy's absolute(bool) is the identity
  SW_HOST_DEVICE SW_INLINE bool operator()(bool a) const { return a; }
};
template <> struct AbsFunctor<float> {  // fabs also clears the sign of -0 and of NaN
  SW_HOST_DEVICE SW_INLINE float operator()(float a) const { return fabsf(a); }
};
template <> struct AbsFunctor<double> {
  SW_HOST_DEVICE SW_INLINE double operator()(double a) const { return fabs(a); }
};

// sqrt: correctly rounded by IEEE 754, so exact everywhere. The other math functors live in
// math.h.
template <class T> struct SqrtFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return sqrt(a); }
};

// where: the condition arrives as bool; both branches are already the promoted type. The host
// selects by a mask of the bits, which GCC 12 vectorizes better than `c ? x : y` for 8-byte
// lanes (2^20, one thread, random conditions: float64 461 -> 330 us, int64 442 -> 344; the
// others equal); complex128 has no 16-byte integer and selects whole.
template <class T> struct WhereFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(bool c, T x, T y) const {
#if !defined(__CUDA_ARCH__)
    if constexpr (Same<T, bool>::value) {   // GCC folds a bool's not to a bit it keeps scalar
      return y ^ (c & (x ^ y));
    } else if constexpr (sizeof(T) <= 8) {
      typedef typename UnsignedOf<sizeof(T)>::type B;
      const B m = B(0) - B(c);
      return bit_cast<T>(B((bit_cast<B>(x) & m) | (bit_cast<B>(y) & B(~m))));
    }
#endif
    return c ? x : y;
  }
};

// fma: x * y + z with one rounding for float and double. The 16-bit types compute in float32
// (their product is exact there) and round twice, float32 then 16-bit: within 1 ulp.
template <class T> struct FmaFunctor {  // integers: wrapping multiply-add
  SW_HOST_DEVICE SW_INLINE T operator()(T x, T y, T z) const {
    return (T)(SW_U(x) * SW_U(y) + SW_U(z));
  }
};
template <> struct FmaFunctor<float> {
  SW_HOST_DEVICE SW_INLINE float operator()(float x, float y, float z) const { return fmaf(x, y, z); }
};
template <> struct FmaFunctor<double> {
  SW_HOST_DEVICE SW_INLINE double operator()(double x, double y, double z) const { return fma(x, y, z); }
};

// cast: the identity on the input's OpMath value; the kernel's store does the one conversion,
// two elements per instruction where the device converts pairs (types.h Convert2: float32
// to half2 / bfloat162), so a cast to a 16-bit float runs its Apply2 path there.
template <class T> struct CastFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return a; }
};

// Comparisons and logical ops: bool results over the promoted OpMath values (NaN compares
// unequal to everything, as in both libraries).
#define SW_BOOL_FUNCTOR2(Name, expr)                                             \
  template <class T> struct Name {                                               \
    SW_HOST_DEVICE SW_INLINE bool operator()(T a, T b) const { return expr; }    \
  };
SW_BOOL_FUNCTOR2(EqualFunctor, a == b)
SW_BOOL_FUNCTOR2(NotEqualFunctor, a != b)
SW_BOOL_FUNCTOR2(LessFunctor, a < b)
SW_BOOL_FUNCTOR2(LessEqualFunctor, a <= b)
SW_BOOL_FUNCTOR2(GreaterFunctor, a > b)
SW_BOOL_FUNCTOR2(GreaterEqualFunctor, a >= b)
// & and |, not && and ||: both sides are plain compares, and short-circuiting made the host's
// bool loops a branch an element (logical_and of random bools 0.01x torch CPU).
SW_BOOL_FUNCTOR2(LogicalOrFunctor, (a != T(0)) | (b != T(0)))
// and and xor of 4- and 8-byte integers on the host as one compare or none: as two compares,
// GCC 12 sized the loop's vectors by the bool result (16 bytes: int64 two lanes a vector) and
// chained masked compares through the AVX-512 mask registers, spilling them. Both operands
// are nonzero where their unsigned minimum is; an 8-byte integer's truth is the sign bit of
// x | -x (the most negative value's too), so xor is bit operations and one shift (int32's
// read 5% slower so, and keeps its compares). One core, 2^20, us (compares / these / NumPy):
// int64 logical_and 266 / 157 / 197, logical_xor 332 / 236 / 222, int32 logical_and
// 103 / 93 / 93. GCC makes or's compares one already, of a | b.
template <class T> struct LogicalAndFunctor {
  SW_HOST_DEVICE SW_INLINE bool operator()(T a, T b) const {
    if constexpr (kOnHost && IsInt<T>::value && sizeof(T) >= 4)
      return (SW_U(a) < SW_U(b) ? SW_U(a) : SW_U(b)) != 0;
    else return (a != T(0)) & (b != T(0));
  }
};
template <class T> struct LogicalXorFunctor {
  SW_HOST_DEVICE SW_INLINE bool operator()(T a, T b) const {
    if constexpr (kOnHost && IsInt<T>::value && sizeof(T) == 8)
      return (bool)(((SW_U(a) | (0 - SW_U(a))) ^ (SW_U(b) | (0 - SW_U(b)))) >> 63);
    else return (a != T(0)) != (b != T(0));
  }
};
// add of bools is or (NumPy's and torch's): as a wrapped byte sum tested against 0 it ran
// 0.52x NumPy's at 2^20 on one core
template <> struct AddFunctor<bool> : LogicalOrFunctor<bool> {};
#undef SW_BOOL_FUNCTOR2
// An int64 against a uint64 as NumPy 2's exact loops compare them (qQ->?, Qq->?): a negative
// int64 is below every uint64, the others compare as uint64s. F: the comparison, of ints.
template <class F> struct MixedIntCompare {
  SW_HOST_DEVICE SW_INLINE static int order(i64 a, u64 b) {
    return a < 0 || u64(a) < b ? -1 : u64(a) > b ? 1 : 0;
  }
  SW_HOST_DEVICE SW_INLINE bool operator()(i64 a, u64 b) const { return F()(order(a, b), 0); }
  SW_HOST_DEVICE SW_INLINE bool operator()(u64 a, i64 b) const { return F()(0, order(b, a)); }
};
template <class T> struct LogicalNotFunctor {
  SW_HOST_DEVICE SW_INLINE bool operator()(T a) const { return a == T(0); }
};
// not of a bool as a compare of its byte: GCC 12 folds `!a` (and every spelling of it) to a
// one-bit not that it cannot vectorize where bool lanes are AVX-512 masks (0.07x torch CPU).
template <> struct LogicalNotFunctor<bool> {
  SW_HOST_DEVICE SW_INLINE bool operator()(bool a) const { return bit_cast<u8>(a) == 0; }
};
// Integers are finite: a constant. A float's magnitude against the largest finite value, one
// compare (NaN compares false); isinf as !isnan & !isfinite read two compares and an
// and, 0.48x NumPy's float64 isinf at 2^20 on one core. Complex: a - a is 0 exactly for
// finite values (inf - inf and NaN - NaN are NaN); its isinf is complex.h's.
template <class T> struct IsReal { enum { value = Same<T, float>::value || Same<T, double>::value }; };
template <class T> SW_HOST_DEVICE SW_INLINE constexpr T largest_finite() {
  if constexpr (Same<T, float>::value) return 0x1.fffffep127f;
  else return 0x1.fffffffffffffp1023;
}
// Of integers the three tests are constants: the kernel reads nothing (functors.h Constant).
template <class T> struct IsNanFunctor {
  enum { kConstant = IsInt<T>::value };
  SW_HOST_DEVICE SW_INLINE bool operator()(T a) const {
    if constexpr (IsInt<T>::value) return false;
    else return is_nan(a);
  }
};
template <class T> struct IsFiniteFunctor {
  enum { kConstant = IsInt<T>::value };
  SW_HOST_DEVICE SW_INLINE bool operator()(T a) const {
    if constexpr (IsInt<T>::value) return true;
    else if constexpr (IsReal<T>::value) return fabs(a) <= largest_finite<T>();
    else return a - a == T(0);
  }
};
template <class T> struct IsInfFunctor {
  enum { kConstant = IsInt<T>::value };
  SW_HOST_DEVICE SW_INLINE bool operator()(T a) const {
    if constexpr (IsInt<T>::value) return false;
    else return fabs(a) > largest_finite<T>();
  }
};

// Bitwise ops on integers and bool (bool: and, or, xor, not).
template <class T> struct BitwiseAndFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return (T)(a & b); }
};
template <class T> struct BitwiseOrFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return (T)(a | b); }
};
template <class T> struct BitwiseXorFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return (T)(a ^ b); }
};
template <> struct BitwiseXorFunctor<bool> {   // any nonzero byte is true (words.h below)
  SW_HOST_DEVICE SW_INLINE bool operator()(bool a, bool b) const {
    return (bit_cast<u8>(a) != 0) != (bit_cast<u8>(b) != 0);
  }
};
#if defined(__CUDA_ARCH__)
// Comparisons and logical ops of int8 and uint8 (logical ops of bool too) four lanes to a
// word of bools. Element by element each byte is taken out and sign- or zero-extended, set
// into a predicate and widened back (SASS of contiguous int8 less: 368 instructions, 168 as
// words). As words, every step is exact per byte (no carry or borrow crosses one):
//   d = (a | 0x80) - (b & 0x7f) never borrows, and its top bit says a's low 7 bits >= b's;
//   a < b where the top bits differ is b's top bit set (unsigned) or a's (signed), and where
//   they agree is d's top bit clear: one three-input logic op each;
//   a == b where a ^ b has no bit set (nonzero_bytes); the result is the top bit moved to bit 0.
// Argument checked over every pair of bytes in NumPy (tests/test_words.py).
template <class T> struct BytesOf {   // the word ops of 1-byte storage T
  SW_DEVICE SW_INLINE static u32 splat(T v) { return splat_byte(v); }
  SW_DEVICE SW_INLINE static u32 bools(u32 top) { return (top & 0x80808080u) >> 7; }
  SW_DEVICE SW_INLINE static u32 less(u32 a, u32 b) {   // a < b: in each byte's top bit
    const u32 d = (a | 0x80808080u) - (b & 0x7f7f7f7fu);
    return ((Same<T, i8>::value ? a & ~b : ~a & b) | (~(a ^ b) & ~d));
  }
};
#define SW_BYTE_WORDS(Functor, T, expr)                                      \
  template <> struct Apply4<Functor<T>, T> : Apply4<void, void>, BytesOf<T> { \
    enum { value = 1 };                                                       \
    SW_DEVICE SW_INLINE static u32 run(u32 a, u32 b) { return bools(expr); }  \
  };
#define SW_BYTE_COMPARES(T)                                                   \
  SW_BYTE_WORDS(LessFunctor, T, less(a, b))                                   \
  SW_BYTE_WORDS(GreaterFunctor, T, less(b, a))                                \
  SW_BYTE_WORDS(LessEqualFunctor, T, ~less(b, a))                             \
  SW_BYTE_WORDS(GreaterEqualFunctor, T, ~less(a, b))                          \
  SW_BYTE_WORDS(EqualFunctor, T, ~nonzero_bytes(a ^ b))                       \
  SW_BYTE_WORDS(NotEqualFunctor, T, nonzero_bytes(a ^ b))
#define SW_BYTE_LOGICAL(T)                                                    \
  SW_BYTE_WORDS(LogicalAndFunctor, T, nonzero_bytes(a) & nonzero_bytes(b))    \
  SW_BYTE_WORDS(LogicalOrFunctor, T, nonzero_bytes(a | b))                    \
  SW_BYTE_WORDS(LogicalXorFunctor, T, nonzero_bytes(a) ^ nonzero_bytes(b))
SW_BYTE_COMPARES(i8) SW_BYTE_COMPARES(u8)
SW_BYTE_LOGICAL(i8) SW_BYTE_LOGICAL(u8) SW_BYTE_LOGICAL(bool)
// bool xor: any byte other than 0 is true, as NumPy and torch read a uint8 array viewed as
// bool, so the word of 0/1 bytes is the nonzero bits' xor. The element form tests each byte
// into a predicate and widens it back: 9 instructions a byte (a rows bool xor at 80% of copy
// on the H200); this is 2. The host keeps its vector loop.
SW_BYTE_WORDS(BitwiseXorFunctor, bool, nonzero_bytes(a) ^ nonzero_bytes(b))
#undef SW_BYTE_LOGICAL
#undef SW_BYTE_COMPARES
#undef SW_BYTE_WORDS
#endif
template <class T> struct InvertFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return (T)~SW_U(a); }
};
template <> struct InvertFunctor<bool> : LogicalNotFunctor<bool> {};
// Shifts as NumPy and torch define them: a count outside [0, bits) (negative included, as an
// unsigned compare) shifts everything out: 0, or for a right shift of a negative value -1.
// 8- and 16-bit ones on the host shift in wider lanes by a bounded count, which shifts every
// bit of the value out (or fills with its sign): as shifts with a compare for the range,
// GCC 12 did four lanes of work per byte. The lanes are the narrowest the host shifts by a
// per-lane count: with AVX-512BW (vpsllvw) 8-bit values in 16-bit lanes, the count bounded
// to the value's bits (the bits less 1 for a signed right shift); without it (AVX2 shifts no
// 8- or 16-bit lane by a variable count) 8- and 16-bit values in 32-bit lanes, the count
// bounded to 31: bounded to the value's bits there, GCC narrowed the lanes back to 16 bits
// and shifted element by element (1.5 ms at 2^20 on one Zen 4 thread, 0.06x torch CPU), as
// it did an unsigned right shift in an unsigned lane (hence a signed one: the value is not
// negative there). One core, 2^20, us (before / after / torch CPU): AVX-512, int8 left
// 54.3 / 27.7 / 43.9, right 55.2 / 27.2 / 44.4, uint8 left 47.3 / 31.2 / 43.6, right 47.6 /
// 27.4 / 44.0; AVX2, int8 left 1510 / 169 / 72, uint8 right 1588 / 193 / 90.
template <class T> struct NarrowShift {
#if defined(__AVX512BW__)
  typedef u16 Wide;     // an unsigned lane
  typedef i16 Signed;   // a signed one
  enum { kLaneBound = 0 };
#else
  typedef u32 Wide;
  typedef i32 Signed;
  enum { kLaneBound = 1 };
#endif
  enum { value = kOnHost && IsInt<T>::value && !Same<T, bool>::value && sizeof(T) < sizeof(Wide) };
  typedef typename UnsignedOf<sizeof(T)>::type U;
  // the count, bounded to `bits` (the value's) or to the lane's bits less 1; typed as the
  // value (AVX-512BW) or as the lane: either other way GCC narrowed or widened the lanes
  typedef typename If<kLaneBound, Wide, U>::type C;
  SW_HOST_DEVICE SW_INLINE static C count(T b, C bits) {
    const C most = kLaneBound ? C(8 * sizeof(Wide) - 1) : bits;
    return (U)b < most ? (C)(U)b : most;
  }
};
template <class T> struct LeftShiftFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    typedef NarrowShift<T> N;
    if constexpr (N::value) return (T)(typename N::U)((typename N::Wide)(typename N::U)a << N::count(b, 8 * sizeof(T)));
    else return SW_U(b) >= SW_U(8 * sizeof(T)) ? T(0) : (T)(SW_U(a) << SW_U(b));
  }
};
template <class T> struct RightShiftFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    typedef NarrowShift<T> N;
    if constexpr (N::value && T(-1) < T(0)) return (T)((typename N::Signed)a >> N::count(b, 8 * sizeof(T) - 1));
    else if constexpr (N::value) return (T)((typename N::Signed)(typename N::U)a >> N::count(b, 8 * sizeof(T)));
    else return SW_U(b) >= SW_U(8 * sizeof(T)) ? (a < T(0) ? T(-1) : T(0)) : (T)(a >> SW_U(b));
  }
};

// Rounding to integers: the identity on integers and bool.
#define SW_ROUND_FUNCTOR(Name, f)                                                  \
  template <class T> struct Name {                                                 \
    SW_HOST_DEVICE SW_INLINE T operator()(T a) const {                             \
      if constexpr (IsInt<T>::value) return a;                                     \
      else return f(a);                                                            \
    }                                                                              \
  };
SW_ROUND_FUNCTOR(FloorFunctor, floor)
SW_ROUND_FUNCTOR(CeilFunctor, ceil)
SW_ROUND_FUNCTOR(TruncFunctor, trunc)
#undef SW_ROUND_FUNCTOR

// sign: -1, 0 or 1 (+0 for either zero); NaN gives NaN in NumPy and 0 in torch.
template <class T, Convention C> struct SignFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const {
    if (C == kNumpy && is_nan(a)) return a;
    return (T)(T(a > T(0)) - T(a < T(0)));
  }
};
template <Convention C> struct SignFunctor<bool, C> {   // torch's sign(bool) is the identity
  SW_HOST_DEVICE SW_INLINE bool operator()(bool a) const { return a; }
};
template <class T> struct CopysignFunctor {   // floats only: integers promote first
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return sw_copysign(a, b); }
};
// NumPy's float16 abs, negative and copysign (and ml_dtypes' bfloat16 ones) move bits: a
// signaling NaN keeps its payload and its quiet bit clear, where the float path quiets it.
// NumPy arrays' abs, negative and copysign run these (Quiet = false), on the 16-bit storage.
// torch's and CuPy's take the float path's bits (Quiet = true; torch's CPU tail elements quiet
// such a NaN): on the host that is the same bit move with a NaN's quiet bit set, as the host's
// conversions quiet it keeping its payload (bfloat16 abs of torch tensors 63 -> 42 us at 2^20
// on one thread); the device computes in float, as its conversions give their own NaN.
template <class T, bool Quiet> struct Bits16 {
  template <class F, class... A> SW_HOST_DEVICE SW_INLINE static T run(u16 r, A... a) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
    if (Quiet) return convert<T>(F()(convert<float>(a)...));   // the kernel's own conversions
#endif
    const u16 exp = Same<T, half>::value ? 0x7c00u : 0x7f80u;
    const u16 quiet = Same<T, half>::value ? 0x0200u : 0x0040u;
    return bit_cast<T>((u16)(Quiet && (r & 0x7fffu) > exp ? r | quiet : r));
  }
};
template <class T, bool Quiet = false> struct AbsBits16 {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const {
    return Bits16<T, Quiet>::template run<AbsFunctor<float> >((u16)(bit_cast<u16>(a) & 0x7fffu), a);
  }
};
template <class T, bool Quiet = false> struct NegativeBits16 {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const {
    return Bits16<T, Quiet>::template run<NegativeFunctor<float> >((u16)(bit_cast<u16>(a) ^ 0x8000u), a);
  }
};
// copysign's sign comes from b's bits on both paths: the device's float16 -> float conversion
// gives a NaN of either sign as +NaN, where torch's CUDA copysign takes a NaN's sign bit too.
template <class T, bool Quiet = false> struct CopysignBits16 {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    return bit_cast<T>((u16)(bit_cast<u16>(AbsBits16<T, Quiet>()(a)) | (bit_cast<u16>(b) & 0x8000u)));
  }
};
template <class T> struct SquareFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return MultiplyFunctor<T>()(a, a); }
};
// 1 / a rounds once in float32 for the 16-bit types, then to 16 bits: exact (24 >= 2 * 11 + 2).
template <class T> struct ReciprocalFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return T(1) / a; }
};
// clip(x, lo, hi), as torch.clamp and NumPy's float16 loop: a NaN anywhere gives NaN, lo > hi
// gives hi, and x equal to a bound is kept (+0 stays +0 against a bound of -0; NumPy's
// float32 and float64 loops return the bound there).
template <class T, bool Bound = false> struct ClipFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T x, T lo, T hi) const {
    x = (x < lo || (Bound && x == lo) || is_nan(lo)) ? lo : x;
    return (x > hi || (Bound && x == hi) || is_nan(hi)) ? hi : x;
  }
};

#undef SW_U

}  // namespace sw
#include "bf16_ops.h"  // fmod and floor_divide by storage type: bfloat16's by table
#include "complex.h"   // complex64 / complex128 and their functors
