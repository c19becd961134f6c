// stridewise/functors.h: elementwise functors shared by the CPU and CUDA kernels.
//
// A functor maps OpMath values to an OpMath value; loads, casts and the one rounding to the
// storage type happen in the kernel. Functors are host-device so both backends give the same bits.
#pragma once
#include "types.h"

#if !defined(__CUDACC_RTC__)
#include <math.h>
#endif

namespace sw {

enum Convention { kTorch = 0, kNumpy = 1 };

// Apply2<F, S>: an exact two-lane form of functor F on storage type S (half2 / bfloat162 on
// the GPU), used by the generated kernel for pairs of a pack when every operand and the
// output are S. `value` is 0 unless a specialization (ops.h) provides `run`; the two-lane
// result must equal F in OpMath rounded once to S, bit for bit.
template <class F, class S> struct Apply2 { enum { value = 0 }; };
// Apply2 for a P-element pack: P-dependent, so a generated branch on it compiles only if taken.
template <int P, class F, class S> struct Apply2Pack : Apply2<F, S> {
  enum { value = P % 2 == 0 && Apply2<F, S>::value };
};

// Fast paths: a functor may provide `static M fast(args..., bool& slow)`, exact wherever it
// leaves `slow` alone and free to return anything where it sets it. The generated kernel runs
// `fast` on a whole pack without branches and calls the functor itself on that pack only if
// some lane set `slow` (special values), so the common path has no per-element branch.
// Prepared divisors: a binary functor whose fast path splits into a part that depends on its
// last argument alone (a divisor's reciprocal, its range check) may also provide
// `static D prepare(M b)` and a second `fast` that takes D in place of b. A kernel that reads
// one divisor for many dividends (rows with a repeated operand: the outer product) prepares
// it once with its load and hands the same D to every pack of the batch. Explicit, because
// the compiler does not share inline asm (rcp.approx) across the packs' slow-path branches
// (bench/NOTES.md G26).
template <class F, class = void> struct HasPrepare { enum { value = 0 }; };
template <class F> struct HasPrepare<F, decltype((void)&F::prepare, void())> { enum { value = 1 }; };
template <class F, class = void> struct HasFast { enum { value = HasPrepare<F>::value }; };
template <class F> struct HasFast<F, decltype((void)&F::fast, void())> { enum { value = 1 }; };
// x prepared as F's last argument: F::prepare(x), or x itself where F has no `prepare`; and
// the type a kernel keeps for it.
template <class F, class X> SW_HOST_DEVICE SW_INLINE auto prepare(X x) {
  if constexpr (HasPrepare<F>::value) return F::prepare(x);
  else return x;
}
template <class F, class M> struct Prepared { typedef decltype(prepare<F>(M())) type; };

// The flag `fast` sets, and the loop that runs `fast` over a pack. The device unrolls it.
// The host makes it an `omp simd` loop and the flag an int: GCC 12 vectorizes neither a
// reduction in straight-line (fully unrolled) code nor one over bool, so with the device's
// form the host's fast path stayed scalar (bench/NOTES.md).
#if defined(__CUDA_ARCH__)
typedef bool FastFlag;
#define SW_FAST_LOOP(P) SW_UNROLL
#else
typedef i64 FastFlag;
#define SW_PRAGMA(x) _Pragma(#x)
#define SW_FAST_LOOP(P) SW_PRAGMA(omp simd safelen(P))
#endif

// How a generated Op computes a pack (Op::compute): kEither, through F's fast path and again
// exactly if a lane sets the flag; kFast, the fast path only, returning the flag so that a
// kernel can test a whole batch's flags at once (kernels.cuh run_packs kBatch); kExact, F
// itself.
enum Path { kEither, kFast, kExact };

// F::fast with the flag last; a template, so the generated kernel's branch on HasFast<F>
// compiles only where it is taken.
template <class F, class... A>
SW_HOST_DEVICE SW_INLINE auto call_fast(FastFlag& slow, A... a) { return F::fast(a..., slow); }

// 1 / x within 2^-43.3 (relative) with no division, for x in [2^-100, 2^100] (outside it the
// result is finite garbage, never a trap). r0 is the float reciprocal: __fdividef(1, x) is
// within 2 ulp on the device (the host's IEEE 1.0f / x within half of one), so with x's
// rounding to float, d = 1 - x * r0 is below 1.25 * 2^-22 in magnitude. A Newton step
// r0 + r0 * round(d) leaves x * r1 - 1 = -d^2 plus roundings: within 2^-43.36 + 2^-53. A
// division is a Newton sequence too, but with a correctly rounded quotient and a branch to a
// slow path per element, which kept a pack's elements from overlapping (bench/NOTES.md G12).
// __fdividef, unlike inline asm, is an intrinsic the compiler shares between packs with the
// same x even across the packs' slow-path branches (how the rows kernel shared a repeated
// operand's reciprocal before divisors were prepared: G13, G26).
SW_HOST_DEVICE SW_INLINE double rcp_newton(double x) {
  const float xf = (float)x;
  float rf;
#if defined(__CUDA_ARCH__)
  rf = __fdividef(1.0f, xf);
#else
  rf = 1.0f / xf;
#endif
  const double r = rf;
  return fma(r, fma(-x, r, 1.0), r);
}

// Divisors prepared for the remainder fast paths (HasPrepare): b and what depends on it alone.
template <class M> struct Divisor;

#if defined(__CUDA_ARCH__)
// rcp.approx: within 1 ulp of 1 / x; a subnormal x gives inf (ftz).
SW_DEVICE SW_INLINE float rcp_approx(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// Device fmod: with A = |a|, B = |b|, n = trunc(A / B) and q = n or n + 1, A - q * B is exact
// in one fma (a multiple of the smaller ulp, below B in magnitude) and adding B back is
// exact. This replaces fmod's bit loop, which made float64 remainder compute-bound.
// float: q from the approximate reciprocal (one MUFU.RCP, within 1 ulp) scaled up by
// 2^-21, never below A / B and, for A / B < 2^20, less than 0.75 above it, so q = n or n + 1
// without an IEEE division; B in [2^-100, 2^100] keeps 1 / B a normal float. (__fdividef
// would let the compiler share the reciprocal between packs, but costs a range check per
// element, and float rows measured no gain from sharing: bench/NOTES.md G13.)
// double: the same with rcp_newton(B) scaled up by 2^-42: with its error below 2^-43.3
// and two roundings of 2^-53, A * up lies in [A / B, A / B (1 + 2^-41.5)], so for
// A / B < 2^40 it is less than 0.36 above A / B and q = n or n + 1 (for a subnormal product
// A / B is tiny and q = 0 = n); A * up >= A / B, so q < 2^40 checks the quotient, and the
// divisor's range check is prepared with up. Nothing here branches, so a pack's elements overlap.
// Zero, inf, NaN, extreme divisors and huge quotients set `slow` (fmodf / fmod then).
SW_DEVICE SW_INLINE float fmod_fast(float a, float b, FastFlag& slow) {
  const float A = fabsf(a), B = fabsf(b);
  slow |= !(A < B * 0x1p20f) || !(B >= 0x1p-100f) || !(B <= 0x1p100f);
  const float rcp = rcp_approx(B);                          // B is normal here: ftz is moot
  const float q = truncf(A * (rcp * (1.0f + 0x1p-21f)));   // hoisted when b is uniform
  const float r = fmaf(-q, B, A);
  return copysignf(r < 0.0f ? r + B : r, a);
}
template <> struct Divisor<double> {
  double b, B, up;
  bool slow;
  SW_DEVICE SW_INLINE static Divisor make(double b) {
    const double B = fabs(b), r1 = rcp_newton(B);
    return {b, B, fma(r1, 0x1p-42, r1), !(B >= 0x1p-100) || !(B <= 0x1p100)};
  }
};
SW_DEVICE SW_INLINE double fmod_fast(double a, const Divisor<double>& d, FastFlag& slow) {
  const double A = fabs(a);
  const double q = trunc(A * d.up);
  slow |= d.slow || !(q < 0x1p40);
  const double r = fma(-q, d.B, A);
  return copysign(r < 0.0 ? r + d.B : r, a);
}
SW_DEVICE SW_INLINE double fmod_fast(double a, double b, FastFlag& slow) {
  return fmod_fast(a, Divisor<double>::make(b), slow);
}
// The slow paths as calls: inlined, fmod's bit loop appeared once per element of every pack
// (half of each kernel's code) and its registers counted against the fast path's (bfloat16
// rows held 96, 78 with the call); the call's cost is paid only by a pack that needs it.
static __noinline__ SW_DEVICE float fmod_slow(float a, float b) { return fmodf(a, b); }
static __noinline__ SW_DEVICE double fmod_slow(double a, double b) { return fmod(a, b); }
SW_DEVICE SW_INLINE float sw_fmod(float a, float b) {
  FastFlag slow = false;
  const float r = fmod_fast(a, b, slow);
  return slow ? fmod_slow(a, b) : r;
}
SW_DEVICE SW_INLINE double sw_fmod(double a, double b) {
  FastFlag slow = false;
  const double r = fmod_fast(a, b, slow);
  return slow ? fmod_slow(a, b) : r;
}
#else
// Host fmod without glibc's bit loop (about 23 ns per call, 6-13x slower than this; see
// bench/NOTES.md). With A = |a|, B = |b| and n = trunc(A / B) < 2^k, the rounded quotient
// q = trunc(A / B) is n or n + 1 (rounding is monotone and n is representable), and
// A - q * B is exactly representable (a multiple of the smaller ulp, below 2B in magnitude),
// so one exact product-difference and one add of B give fmod exactly. Zero, inf, NaN and
// huge quotients take libm's fmod.
// The slow paths are opaque, cold calls: with -fno-math-errno libm's fmod counts as pure, and
// this keeps GCC from ever speculating it into the common path.
__attribute__((noipa, cold)) inline float fmod_slow(float a, float b) { return fmodf(a, b); }
__attribute__((noipa, cold)) inline double fmod_slow(double a, double b) { return fmod(a, b); }
SW_INLINE float sw_fmod(float a, float b) {
  // Doubles hold a 29-bit q times a 24-bit B exactly, so no FMA is needed.
  const double A = fabsf(a), B = fabsf(b);
  if (__builtin_expect(!(A < B * 536870912.0) || !(B < __builtin_inf()), 0)) return fmod_slow(a, b);
  const double q = trunc(A / B);
  double r = A - q * B;
  r = r < 0 ? r + B : r;
  return copysignf((float)r, a);
}
// Branch-free fast paths (RemainderFunctor::fast) that GCC vectorizes across a pack: every
// lane does the same work, with no call, branch or trunc (a vector trunc needs
// -fno-trapping-math in GCC 12). `slow` marks the lanes that need sw_fmod above.
// With A = |a|, B = |b| and A / B < 2^23 (float) or 2^52 (double), the quotient d = A / B
// rounds to within [n, n + 1] of n = floor(A / B) (rounding is monotone, n and n + 1 are
// representable), and q = (d + 2^23) - 2^23 rounds d to a nearest integer: q = n or n + 1.
// r = A - q * B is then representable and one fma forms it exactly. If q = n, r = fmod(A, B).
// If q = n + 1 with n = 0, d >= 1/2 so A >= B / 2 and r = A - B is exact (Sterbenz); with
// n >= 1, A >= B, so r is a multiple of ulp(B) below B in magnitude. r < 0 means q = n + 1,
// and r + B = fmod(A, B), exact. fma gives r = +0, never -0 (A >= 0), so r's sign bit picks
// the lanes that add B and fmod's sign (a's) can be or-ed in. B * 2^23 overflowing means
// B >= 2^105, and then A / B < 2^23 anyway (the same for double). Zero, inf or NaN divisors,
// inf or NaN dividends and larger quotients set `slow`.
SW_INLINE float fmod_fast(float a, float b, FastFlag& slow) {
  const u32 ia = bit_cast<u32>(a), iB = bit_cast<u32>(b) & 0x7fffffffu;
  const float A = fabsf(a), B = bit_cast<float>(iB);
  slow |= (FastFlag)!(A < B * 0x1p23f) | (FastFlag)(iB >= 0x7f800000u);
  const float d = A / B;
  const float q = (d + 0x1p23f) - 0x1p23f;
  const float r = fmaf(-q, B, A);
  const float m = r + bit_cast<float>(iB & (u32)((i32)bit_cast<u32>(r) >> 31));
  return bit_cast<float>(bit_cast<u32>(m) | (ia & 0x80000000u));
}
SW_INLINE double fmod_fast(double a, double b, FastFlag& slow) {
  const u64 ia = bit_cast<u64>(a), iB = bit_cast<u64>(b) & 0x7fffffffffffffffull;
  const double A = fabs(a), B = bit_cast<double>(iB);
  slow |= (FastFlag)!(A < B * 0x1p52) | (FastFlag)(iB >= 0x7ff0000000000000ull);
  const double d = A / B;
  const double q = (d + 0x1p52) - 0x1p52;
  const double r = fma(-q, B, A);
  const double m = r + bit_cast<double>(iB & (u64)((i64)bit_cast<u64>(r) >> 63));
  return bit_cast<double>(bit_cast<u64>(m) | (ia & 0x8000000000000000ull));
}
SW_INLINE double sw_fmod(double a, double b) {
  // fma forms A - q * B exactly; B * 2^51 overflowing means B >= 2^973, and then A / B < 2^51.
  const double A = fabs(a), B = fabs(b);
  if (__builtin_expect(!(A < B * 2251799813685248.0) || !(B < __builtin_inf()), 0)) return fmod_slow(a, b);
  const double q = trunc(A / B);
  double r = fma(-q, B, A);
  r = r < 0 ? r + B : r;
  return copysign(r, a);
}
#endif

// NVRTC has no __builtin_inff; the device intrinsic builds the same bits.
SW_HOST_DEVICE SW_INLINE float sw_inf() {
#if defined(__CUDA_ARCH__)
  return __int_as_float(0x7f800000);
#else
  return __builtin_inff();
#endif
}

// fmod for operands that came from float16 or bfloat16 (at most 11 significant bits). The
// device's sw_fmod is exact for every float and cheap, so it serves there. On the host: with
// A = |a|, B = |b| and A / B < 2^22, q = trunc(A / B) is off by at most one, and
// r = A - q * B is exact because r and r +- B fit in 24 bits; one compare-and-add fixes the
// off-by-one. Everything else (inf, NaN, zero divisor, huge quotients) takes fmodf. Tested
// over all 2^32 pairs per dtype on the GPU (tests/test_cuda.py) and every dividend against
// 256 divisors on the host (tests/test_remainder_cpu.py).
#if defined(__CUDA_ARCH__)
SW_DEVICE SW_INLINE float fmod_short(float a, float b) { return sw_fmod(a, b); }
#else
SW_INLINE float fmod_short(float a, float b) {
  const float A = fabsf(a), B = fabsf(b);
  if (!(A < B * 4194304.0f) || !(B < sw_inf())) return fmodf(a, b);
  const float q = truncf(A / B);
  // The host has no guaranteed FMA; the double product of a 22-bit q and an 11-bit B is exact.
  float r = (float)((double)A - (double)q * (double)B);
  // Selects, not branches: the off-by-one is data-dependent, and a mispredicted branch per
  // element costs more on the CPU than the whole fast path (bench/NOTES.md).
  r = r < 0.0f ? r + B : (r >= B ? r - B : r);
  return copysignf(r, a);
}
#endif

template <class M> struct Bits;
template <> struct Bits<float> { typedef u32 type; };
template <> struct Bits<double> { typedef u64 type; };

#if defined(__CUDA_ARCH__)
// The float remainder as a - q * b with q = floor(a / b) or one more, from the signed
// quotient: about five fewer instructions per element than fmod_fast then the sign fix, and
// instructions are what bound float rows and outer products (bench/NOTES.md G16).
// w = a * rcp.approx(b) is within 2^-22.4 of a / b (relative); w + |w| 2^-21 is then at least
// a / b and, for |a / b| < 2^20 + 1, less than 0.8 above it, so q = its floor is
// n = floor(a / b) or n + 1 (a subnormal w only occurs for |a / b| < 1, where q in {-1, 0, 1}
// is n or n + 1 too). r = a - q * b is then the floor modulus, or that minus b; one fma gives
// either exactly (a multiple of the smaller ulp, |r| <= |b|) except the modulus a + b of
// |a| < |b| with opposite signs, which it rounds once, as torch's fmod + b does. A nonzero r
// against b's sign gets b added (exact). A zero takes the dividend's sign (torch: fmod's,
// kept) or the divisor's (NumPy). Zero, inf, NaN, a subnormal divisor (rcp.ftz gives inf),
// |q| >= 2^20 and |b| > 2^100 set `slow`. The last is checked with q per element, or, for a
// prepared divisor, folded into its reciprocal (NaN there, so q fails its check): free where
// the divisor is shared, while folding it per element cost permuted float16 8% and checking
// it per shared element cost outer products 13% (bench/NOTES.md G26). The argument is checked
// as float arithmetic in tests/test_remainder_cpu.py, and every float16 and bfloat16 pair
// in tests/test_cuda.py, with the divisors dense and prepared.
// kBf16: bfloat16 operands (8 significant bits). A nonzero distance from a / b to an integer
// is then at least 2^-8 (for |a| >= |b|, a - n b is a multiple of ulp(b) > 2^-8 |b|), and the
// biased w, computed with the product rounded down (so a tiny negative a / b stays below 0
// instead of underflowing to zero), is at least a / b and less than |a / b| 2^-20.2 above
// it: for |q| < 2^12, q is floor(a / b) itself and r needs no fix-up, 3 instructions fewer
// per element (bench/NOTES.md G29). Larger quotients take the functor's exact path.
template <Convention C, bool kPrepared, bool kBf16 = false>
SW_DEVICE SW_INLINE float remainder_fast(float a, float b, float rcp, FastFlag& slow) {
  const float w = kBf16 ? __fmul_rd(a, rcp) : a * rcp;
  const float q = floorf(fmaf(fabsf(w), 0x1p-21f, w));
  slow |= !(fabsf(q) < (kBf16 ? 0x1p12f : 0x1p20f)) || (!kPrepared && !(fabsf(b) <= 0x1p100f));
  float r = fmaf(-q, b, a);
  // r with b's sign bit flipped in: negative (not -0) exactly when r is nonzero against b
  if (!kBf16 && __int_as_float(__float_as_int(r) ^ (__float_as_int(b) & 0x80000000)) < 0.0f) r += b;
  if (C == kNumpy) return copysignf(r, b);
  // A zero takes a's sign without a select: r is +0 here unless a is -0, and a sum of zeros
  // rounded down is -0 when either is; adding a zero leaves a nonzero r as it is.
  return __fadd_rd(r, copysignf(0.0f, a));
}
template <> struct Divisor<float> {
  float b, rcp;
  SW_DEVICE SW_INLINE static Divisor make(float b) {
    return {b, fabsf(b) <= 0x1p100f ? rcp_approx(b) : __int_as_float(0x7fffffff)};
  }
};
template <Convention C, bool kBf16 = false>
SW_DEVICE SW_INLINE float remainder_fast(float a, float b, FastFlag& slow) {
  return remainder_fast<C, false, kBf16>(a, b, rcp_approx(b), slow);
}
template <Convention C, bool kBf16 = false>
SW_DEVICE SW_INLINE float remainder_fast(float a, const Divisor<float>& d, FastFlag& slow) {
  return remainder_fast<C, true, kBf16>(a, d.b, d.rcp, slow);
}
#endif

template <class T, Convention C>
struct RemainderFunctor {
  typedef typename OpMath<T>::type M;
  SW_HOST_DEVICE SW_INLINE M operator()(M a, M b) const {
    M m = sw_fmod(a, b);
    return adjust(m, b);
  }
#if defined(__CUDA_ARCH__)
  SW_DEVICE SW_INLINE static Divisor<M> prepare(M b) { return Divisor<M>::make(b); }
  SW_DEVICE SW_INLINE static M fast(M a, M b, FastFlag& slow) {
    if constexpr (sizeof(M) == 4) return remainder_fast<C>(a, b, slow);
    else return fast(a, prepare(b), slow);
  }
  SW_DEVICE SW_INLINE static M fast(M a, const Divisor<M>& d, FastFlag& slow) {
    if constexpr (sizeof(M) == 4) return remainder_fast<C>(a, d, slow);
    else return adjust(fmod_fast(a, d, slow), d.b);
  }
#else
  SW_INLINE static M fast(M a, M b, FastFlag& slow) { return adjust(fmod_fast(a, b, slow), b); }
#endif
  SW_HOST_DEVICE SW_INLINE static M adjust(M m, M b) {
    // torch compares with < 0, so a zero keeps fmod's sign (the dividend's); NumPy gives
    // a zero the divisor's sign.
#if defined(__CUDA_ARCH__)
    if (m != 0) {
      if ((m < 0) != (b < 0)) m += b;
    } else if (C == kNumpy) {
      m = copysign_(M(0), b);
    }
    return m;
#else
    // The same on the host, as bit masks: the signs of random data make branches
    // unpredictable, and GCC turns float compares back into branches (bench/NOTES.md).
    // Sign bits stand in for < 0; they differ only for NaN m or b, where m + b is NaN too.
    typedef typename Bits<M>::type U;
    const U sign = U(1) << (sizeof(U) * 8 - 1);
    const U mb = bit_cast<U>(m), bb = bit_cast<U>(b);
    const U nonzero = U(0) - U((mb & ~sign) != 0);
    const U fix = nonzero & (U(0) - U(((mb ^ bb) & sign) != 0));
    U r = (bit_cast<U>(M(m + b)) & fix) | (mb & ~fix);
    if (C == kNumpy) r = (r & nonzero) | ((bb & sign) & ~nonzero);   // zero: the divisor's sign
    return bit_cast<M>(r);
#endif
  }
  SW_HOST_DEVICE SW_INLINE static float copysign_(float x, float y) { return copysignf(x, y); }
  SW_HOST_DEVICE SW_INLINE static double copysign_(double x, double y) { return copysign(x, y); }
};

template <bool kBf16, Convention C>   // operands of float16, or (kBf16) bfloat16
struct ShortRemainderFunctor : RemainderFunctor<float, C> {
  SW_HOST_DEVICE SW_INLINE float operator()(float a, float b) const {
    return RemainderFunctor<float, C>::adjust(fmod_short(a, b), b);
  }
  // `prepare` and `fast` are float's, whose fast path is exact for every float, so for 16-bit
  // operands too; on the host it vectorizes with types.h's branch-free half_to_float and
  // 64-byte packs (bench/NOTES.md 14). On the device `fast` picks remainder_fast's form for
  // the operands' width: bfloat16's needs no fix-up (kBf16).
#if defined(__CUDA_ARCH__)
  SW_DEVICE SW_INLINE static float fast(float a, float b, FastFlag& slow) {
    return remainder_fast<C, kBf16>(a, b, slow);
  }
  SW_DEVICE SW_INLINE static float fast(float a, const Divisor<float>& d, FastFlag& slow) {
    return remainder_fast<C, kBf16>(a, d, slow);
  }
#endif
};
template <Convention C> struct RemainderFunctor<half, C> : ShortRemainderFunctor<false, C> {};
template <Convention C> struct RemainderFunctor<bfloat16, C> : ShortRemainderFunctor<true, C> {};

// Fast2<F, S>: a two-lane fast path of F on storage S (half2 / bfloat162) for a divisor pair
// prepared once (a kernel's shared divisor row, as HasPrepare's): `prepare(Pair<S> b)` -> D,
// `fast(Pair<S> a, D, Flag& flag)` exact in every lane unless `slow(flag)` says otherwise,
// and then the kernel redoes the pack element by element. The primary template is off;
// its D is the pair itself so a kernel may hold one regardless.
template <class F, class S> struct Fast2 {
  enum { value = 0 };
  typedef Pair<S> D;
  SW_HOST_DEVICE SW_INLINE static D prepare(Pair<S> b) { return b; }
};
template <int P, class F, class S> struct Fast2Pack : Fast2<F, S> {
  enum { value = P % 2 == 0 && Fast2<F, S>::value };
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// The float16 remainder two lanes per instruction, for a prepared divisor pair (bench/NOTES.md
// G27). With x = a / b and n = floor(x): rcp = sign(b) * 1/|b| rounded toward zero to half,
// from rcp.approx scaled down by 1 - 2^-22 (at most 1/|b|, within 2^-21 below), and NaN
// where it is not in (0, 65504) (b zero, inf, NaN or below 2^-16). So w = a * rcp lies between
// 0 and x, within |x| (2^-10 + 2^-21) + |a| 2^-24 of it (the last term: a subnormal rcp).
// One fma rounds w + 1536 to an integer (the ulp there is 1): q = rn(w). For |q| <= 500 the
// error is below 1/2, so q = n or n + 1, and r = a - q b is exact in one fma: for |a| >= |b|
// it is a multiple of ulp(b) below |b| in magnitude; for |a| < |b| with a and b of one sign,
// q = 1 needs x >= w >= 1/2 (Sterbenz); with opposite signs r is a or the one rounding of
// a + b, which equals torch's float a + b rounded to half (the float sum is exact unless the
// exponents differ by more than 13, and then both round to b). r against b's sign gets b
// added (exact, or that same rounding of a + b). A zero result is then +0 in every case and
// takes a's sign (torch) or b's (NumPy). |q| > 500 and NaN or inf operands reach `slow`
// through the largest |q| (max.NaN keeps a NaN). bfloat16 has no such form: with 8 bits
// the bound is |q| <= 56, and the bench's quotients (up to 200) sent so many of its outer
// product's packs to the slow path that it ran 28-37% slower than float (G27). Every float16
// pair runs through it in tests/test_cuda.py (test_every_16bit_pair, row_divisors).
template <Convention C> struct Fast2<RemainderFunctor<half, C>, half> {
  enum { value = 1 };
  struct D { u32 b, rcp, sign; };
  typedef u32 Flag;   // the largest |q| so far, in each lane
  SW_DEVICE SW_INLINE static D prepare(Pair<half> b) {
    const u32 x = bit_cast<u32>(b), sign = x & 0x80008000u;
    u32 z, bad;
    asm("cvt.rz.f16x2.f32 %0, %1, %2;" : "=r"(z) : "f"(below_reciprocal(b.hi)), "f"(below_reciprocal(b.lo)));
    asm("{.reg .b32 z, l; set.eq.u32.f16x2 z, %1, %2; set.geu.u32.f16x2 l, %1, %3; or.b32 %0, z, l;}"
        : "=r"(bad) : "r"(z), "r"(0u), "r"(0x7bff7bffu));
    return {x, z | (bad & 0x7fff7fffu) | sign, sign};
  }
  SW_DEVICE SW_INLINE static Pair<half> fast(Pair<half> a2, const D& d, Flag& worst) {
    const u32 a = bit_cast<u32>(a2);
    const u32 nq = fma2(fma2(a, d.rcp, 0x66006600u), 0xbc00bc00u, 0x66006600u);   // -q
    asm("{.reg .b32 t; abs.f16x2 t, %2; max.NaN.f16x2 %0, %1, t;}" : "=r"(worst) : "r"(worst), "r"(nq));
    u32 r = fma2(nq, d.b, a), neg, zero;
    asm("set.lt.f16x2.f16x2 %0, %1, %2;" : "=r"(neg) : "r"(r ^ d.sign), "r"(0u));   // 1 or 0
    r = fma2(neg, d.b, r);
    if (C == kNumpy) return bit_cast<Pair<half> >(r | d.sign);
    asm("set.eq.u32.f16x2 %0, %1, %2;" : "=r"(zero) : "r"(r), "r"(0u));
    return bit_cast<Pair<half> >(r | (zero & a & 0x80008000u));
  }
  SW_DEVICE SW_INLINE static bool slow(Flag worst) {
    u32 r;
    asm("{.reg .pred p, q; setp.gtu.f16x2 p|q, %1, %2; or.pred p, p, q; selp.u32 %0, 1, 0, p;}"
        : "=r"(r) : "r"(worst), "r"(0x5fd05fd0u));   // 500
    return r;
  }
  SW_DEVICE SW_INLINE static float below_reciprocal(half b) {
    return rcp_approx(fabsf(convert<float>(b))) * (1.0f - 0x1p-22f);
  }
  SW_DEVICE SW_INLINE static u32 fma2(u32 a, u32 b, u32 c) {
    u32 r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
};
#endif

// Integers: a zero divisor gives 0 (NumPy's answer, and never a trap), and -1 gives 0 so
// INT_MIN / -1 is never evaluated. Both conventions agree on integers. Unsigned types have
// no sign fix-up.
template <class T>
SW_HOST_DEVICE SW_INLINE T int_remainder(T a, T b) {
  if (b == 0 || minus_one(b)) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
#if defined(__CUDA_ARCH__)
// U mod V for U <= 2^31 and 1 <= V <= 2^31, as a multiply-high by m ~ 2^32 / V that depends
// on V alone, so the compiler can share it between elements with the same divisor (the
// compiler's own `%` redoes it per element; the packs have no branch between them here, so
// inline asm is shared too). F = V rounded up to float; f = rcp.approx(F) is within 1 ulp
// of 1 / F, and subtracting 4 ulp (the bits) while scaling by 2^32 leaves
// m0 <= 2^32 / V, with m0 >= 2^32 / V (1 - 2^-20) - 1. A fixed-point Newton step
// m1 = m0 + m0 e / 2^32, e = 2^32 - V m0, stays at or below 2^32 / V and is within
// 2^32 / V (e / 2^32)^2 + 1 < 1.5 of it, so U m1 / 2^32 is within 1.5 U / 2^32 <= 0.75 below
// U / V, q = mulhi(U, m1) is n or n - 1 (n = floor(U / V)) and r = U - q V < 2V fits 32
// bits: one fix-up (tests/test_remainder_cpu.py checks the argument with 1 ulp either way).
SW_DEVICE SW_INLINE u32 u32_reciprocal(u32 V) {
  const float f = rcp_approx(__uint2float_ru(V));
  const u32 m = __float2uint_rz(__uint_as_float(__float_as_uint(f) + 0x0ffffffcu));
  return m + __umulhi(m, (0u - V) * m);
}
SW_DEVICE SW_INLINE u32 u32_mod(u32 U, u32 V, u32 m) {
  const u32 r = U - __umulhi(U, m) * V;
  return r - (r >= V ? V : 0u);
}

// int_remainder without its branch, which kept a pack's divisions from overlapping
// (bench/NOTES.md G12): magnitudes in 32 unsigned bits (|INT_MIN| fits), a zero divisor
// divides by 1, and both b = 0 and b = -1 then leave r = 0 and the result 0. The unsigned
// remainder is straight-line code. The floor modulus of magnitudes is |b| - r where the
// signs differ and r != 0, else r, and takes b's sign: selects, one negation. The divisor's
// part (V and its reciprocal) is prepared; nothing sets `slow`.
template <> struct Divisor<i32> {
  i32 b;
  u32 V, m;
  SW_DEVICE SW_INLINE static Divisor make(i32 b) {
    const u32 V0 = b < 0 ? 0u - (u32)b : (u32)b;
    const u32 V = V0 + (V0 == 0);
    return {b, V, u32_reciprocal(V)};
  }
};
#endif

template <Convention C> struct RemainderFunctor<i32, C> {
#if defined(__CUDA_ARCH__)
  SW_DEVICE SW_INLINE static Divisor<i32> prepare(i32 b) { return Divisor<i32>::make(b); }
  SW_DEVICE SW_INLINE static i32 fast(i32 a, i32 b, FastFlag& slow) { return fast(a, prepare(b), slow); }
  SW_DEVICE SW_INLINE static i32 fast(i32 a, const Divisor<i32>& d, FastFlag&) {
    const u32 U = a < 0 ? 0u - (u32)a : (u32)a;
    const u32 r = u32_mod(U, d.V, d.m);
    const u32 t = r != 0 && (a ^ d.b) < 0 ? d.V - r : r;
    return (i32)(d.b < 0 ? 0u - t : t);
  }
#endif
  SW_HOST_DEVICE SW_INLINE i32 operator()(i32 a, i32 b) const {
#if defined(__CUDA_ARCH__)
    FastFlag never = false;
    return fast(a, b, never);
#else
    // On the host a double division beats idiv and vectorizes. It is exact: for |a| < 2^31 the
    // quotient's rounding error (2^-53 |a / b| < 1 / |b|) is below its distance to any other
    // integer, so trunc gives a / b exactly, and a - q * b is formed exactly in 64 bits.
    // Masks, not branches: random signs make the adjustment unpredictable.
    const i32 keep = -(i32)((b != 0) & (b != -1));
    const i32 d = (b & keep) | (1 & ~keep);
    const i64 q = (i64)((double)a / (double)d);
    i32 r = (i32)((i64)a - q * (i64)d);
    r += d & -(i32)((r != 0) & ((r ^ d) < 0));
    return r & keep;
#endif
  }
};

// x as int64, saturating like the device's conversions (the host's cast is undefined outside
// the range; only slow-path lanes and a = INT64_MIN, b = -1 get there).
SW_HOST_DEVICE SW_INLINE i64 trunc_i64(double x) {
#if defined(__CUDA_ARCH__)
  return __double2ll_rz(x);
#else
  return !(x < 0x1p63) ? 0x7fffffffffffffffll : x < -0x1p63 ? (i64)(0ull - (1ull << 63)) : (i64)x;
#endif
}
SW_HOST_DEVICE SW_INLINE i64 floor_i64(double x) {
#if defined(__CUDA_ARCH__)
  return __double2ll_rd(x);
#else
  return trunc_i64(floor(x));
#endif
}

// int64 remainder without 64-bit integer division (a long subroutine on the GPU), for
// 0 < |b| < 2^42; `slow` is set otherwise. inv = 1/b (rcp_newton of |b|, b's sign) is within
// 2^-43.3 of it (relative). Step 1: q0 = trunc(a * inv) is within |a / b| 2^-43.2 + 1 of
// a / b (two more roundings), so r = a - q0 b (exact in wrapping 64-bit arithmetic) is below
// |a| 2^-43.2 + |b| < 2^43 in magnitude: exact as a double. Step 2: x = r / b = n + f with f
// a multiple of 1/|b| in [0, 1 - 1/|b|]; y = fma(r, inv, |inv| / 2) lies within
// 2^-23.5 / |b| + 2^-43.3 (inv's error on |x| <= 2^19.8 / |b| + 1, and y's rounding) of
// x + 1 / (2|b|), so for |b| < 2^42 it is above x and below n + 1: floor(y) = n exactly, and
// r - n b is the floor remainder, with b's sign, without a fix-up (the form with magnitudes and
// fix-ups ran 67 instructions per element in outer products: bench/NOTES.md G28). The GPU
// uses it as RemainderFunctor<i64>::fast, with inv, |inv| / 2 and the range check prepared
// (Divisor<i64>); tests/test_remainder_cpu.py checks the argument as Python arithmetic (with
// rcp_newton's float reciprocal 2 ulp either way) and the host build against NumPy.
template <> struct Divisor<i64> {
  i64 b;
  double inv, half;
  bool slow;
  SW_HOST_DEVICE SW_INLINE static Divisor make(i64 b) {
    const u64 V = b < 0 ? 0ull - (u64)b : (u64)b;
    const double r = rcp_newton((double)V);
    return {b, b < 0 ? -r : r, 0.5 * r, V - 1 >= (1ull << 42) - 1};   // V = 0 wraps: slow too
  }
};
SW_HOST_DEVICE SW_INLINE i64 int64_remainder_fast(i64 a, const Divisor<i64>& d, FastFlag& slow) {
  slow |= (FastFlag)d.slow;
  const u64 r = (u64)a - (u64)trunc_i64((double)a * d.inv) * (u64)d.b;
  return (i64)(r - (u64)floor_i64(fma((double)(i64)r, d.inv, d.half)) * (u64)d.b);
}

#if !defined(__CUDA_ARCH__)
// int64 remainder for the host's `omp simd` pack loop, for 0 < |b| < 2^50, with every select
// written as masks: with U = |a| <= 2^63 and V = |b|, the double quotient U * (1 / V) (three
// roundings) is within U / V 2^-51.4 of U / V, q0 = trunc of it within that plus 1, and
// r = U - q0 V (exact in wrapping 64-bit arithmetic) is below U 2^-51.4 + V < 2^51 in
// magnitude: exact as a double. A second quotient r / V, below 2^12 / V + 1 in magnitude and
// within 2^-39 of it, leaves r in (-V, 2V), which one compare-and-add per side brings into
// [0, V); then a's sign and the floor convention.
// Conditional expressions and `&&` were if-converted by GCC 12 only in some layouts; where the
// operands come from a periodic or strided load they stayed branches ("control flow in loop"),
// the loop stayed scalar and lost 4-6x to idiv (bench/NOTES.md 13 and 15). So: |x| is
// (x ^ s) - s with s = x >> 63; r < 0 gets V added, then r - V >= 0 gets V subtracted; a's
// sign is applied the same way; b is added where m != 0 and m, b differ in sign. A lane that
// sets `slow` divides by 1 instead, so no lane converts an out-of-range double or overflows
// (the pack is then redone with int_remainder). All arithmetic on possibly large values is
// unsigned (wrapping). tests/test_remainder_cpu.py compares it with NumPy and with
// int64_remainder_fast.
SW_INLINE i64 int64_remainder_fast_host(i64 a, i64 b, FastFlag& slow) {
  const u64 sa = (u64)(a >> 63), sb = (u64)(b >> 63);
  const u64 U = ((u64)a ^ sa) - sa;
  const u64 V0 = ((u64)b ^ sb) - sb;
  const u64 bad = 0ull - (u64)(V0 - 1 >= (1ull << 50) - 1);   // V0 = 0 wraps to the top: slow too
  slow |= (FastFlag)bad;
  const u64 V = (V0 & ~bad) | (1ull & bad);
  const double inv = 1.0 / (double)(i64)V;
  const u64 q0 = (u64)((double)U * inv);
  u64 r = U - q0 * V;
  r -= (u64)((i64)((double)(i64)r * inv) * (i64)V);
  r += V & (u64)((i64)r >> 63);                    // r < 0: r + V, now in [0, 2V)
  r -= V & ~(u64)((i64)(r - V) >> 63);             // r >= V: r - V, now in [0, V)
  const u64 m = (r ^ sa) - sa;                     // a's sign
  const u64 fix = 0ull - (u64)((m != 0) & ((i64)(m ^ (u64)b) < 0));
  return (i64)(m + ((u64)b & fix));
}
#endif

template <Convention C> struct RemainderFunctor<i64, C> {
  SW_HOST_DEVICE SW_INLINE i64 operator()(i64 a, i64 b) const { return int_remainder(a, b); }
  // The host uses its own branch-free form (above), which GCC vectorizes in every layout;
  // the device's form, built for the host, stayed scalar in periodic and strided layouts.
#if defined(__CUDA_ARCH__)
  SW_DEVICE SW_INLINE static Divisor<i64> prepare(i64 b) { return Divisor<i64>::make(b); }
  SW_DEVICE SW_INLINE static i64 fast(i64 a, i64 b, FastFlag& slow) { return fast(a, prepare(b), slow); }
  SW_DEVICE SW_INLINE static i64 fast(i64 a, const Divisor<i64>& d, FastFlag& slow) {
    return int64_remainder_fast(a, d, slow);
  }
#else
  static SW_INLINE i64 fast(i64 a, i64 b, FastFlag& slow) { return int64_remainder_fast_host(a, b, slow); }
#endif
};

// The other integer widths compute in a wider type's functor, fast paths included: every
// 8- and 16-bit value (and MIN % -1, x % 0) is an int32 case, every uint32 one an int64
// case, and the narrowing store is exact since |result| < |b|. uint64 has no wider type.
template <Convention C> struct RemainderFunctor<i8, C> : RemainderFunctor<i32, C> {};
template <Convention C> struct RemainderFunctor<u8, C> : RemainderFunctor<i32, C> {};
template <Convention C> struct RemainderFunctor<i16, C> : RemainderFunctor<i32, C> {};
template <Convention C> struct RemainderFunctor<u16, C> : RemainderFunctor<i32, C> {};
template <Convention C> struct RemainderFunctor<u32, C> : RemainderFunctor<i64, C> {};
template <Convention C> struct RemainderFunctor<u64, C> {
  SW_HOST_DEVICE SW_INLINE u64 operator()(u64 a, u64 b) const { return int_remainder(a, b); }
};

}  // namespace sw
