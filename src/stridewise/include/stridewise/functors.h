// stridewise/functors.h: elementwise functors shared by the CPU and CUDA kernels.
//
// A functor maps OpMath values to an OpMath value; loads, casts and the one rounding to the
// storage type happen in the kernel. Functors are host-device so both backends give the same bits.
#pragma once
#include "types.h"
#include "bf16_fmod.h"   // bfloat16 fmod by table (device)

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
// (outer products +13-17% in 16-bit and int32).
template <class F, class = void> struct HasPrepare { enum { value = 0 }; };
template <class F> struct HasPrepare<F, decltype((void)&F::prepare, void())> { enum { value = 1 }; };
template <class F, class = void> struct HasFast { enum { value = HasPrepare<F>::value }; };
template <class F> struct HasFast<F, decltype((void)&F::fast, void())> { enum { value = 1 }; };
// VectorExact<F>: F's exact form (operator()) is branch-free on the host (F::kVectorExact), so
// a pack the fast path flags is redone in an `omp simd` loop too. Forms with idiv or a libm
// call stay unrolled: in the simd loop int64's idiv packs ran 10-20% slower.
template <class F, class = void> struct VectorExact { enum { value = 0 }; };
template <class F> struct VectorExact<F, decltype((void)F::kVectorExact, void())> {
  enum { value = F::kVectorExact };
};
// ExactPack<F> (F::kExactPack): F redoes a flagged pack in one call,
// `template <int P> static void exact(R* y, const M* a, const M* b)`, whose lanes run in step
// for as long as the pack's widest case needs (double fmod: fmod_wide_pack); its operator()
// serves single elements.
template <class F, class = void> struct ExactPack { enum { value = 0 }; };
template <class F> struct ExactPack<F, decltype((void)F::kExactPack, void())> {
  enum { value = F::kExactPack };
};
template <class F, int P, class R, class... A>   // a template, as call_fast
SW_HOST_DEVICE SW_INLINE void exact_pack(R* y, A*... a) { F::template exact<P>(y, a...); }
// x prepared as F's last argument: F::prepare(x), or x itself where F has no `prepare`; and
// the type a kernel keeps for it.
template <class F, class X> SW_HOST_DEVICE SW_INLINE auto prepare(X x) {
  if constexpr (HasPrepare<F>::value) return F::prepare(x);
  else return x;
}
template <class F, class M> struct Prepared { typedef decltype(prepare<F>(M())) type; };
// FlagsFirst<F> (F::kFlagsFirst): the kernel first asks `static bool wide(args...)` (same
// arguments as `fast`, a prepared divisor included) of every lane, and runs `fast` (which then
// needs no checks of its own) only where no lane of the warp's packs wants the exact form,
// which then runs alone: a pack of quotients past the fast path's range (float remainder)
// costs the exact form plus a cheap check, not both forms. The warp decides as one (any_lane):
// with a pack's flag alone, a warp that held flagged and unflagged packs ran both forms in turn.
// Constant<F> (F::kConstant): F's result depends on no operand (isnan of an integer), so a
// kernel's loads are dead and only its stores move bytes: the host's loop widens its packs
// to 64 bytes of the result (cpu/loops.h wide_elements).
template <class F, class = void> struct Constant { enum { value = 0 }; };
template <class F> struct Constant<F, decltype((void)F::kConstant, void())> {
  enum { value = F::kConstant };
};
template <class F, class = void> struct FlagsFirst { enum { value = 0 }; };
template <class F> struct FlagsFirst<F, decltype((void)F::kFlagsFirst, void())> {
  enum { value = F::kFlagsFirst };
};
// ShortForm<F> (F::kShortForm, with FlagsFirst): F also has a shorter fast form,
// `fast_short`, exact where `far(args...)` is false (a narrower range than `fast`'s, so
// `far` flags a superset of `wide`). The kernel asks `far` of a pack's lanes first and takes
// `fast_short` where no lane of the warp is far (any_lane), else `wide` and `fast` as above:
// a warp decides as one, so a warp that mixes the ranges runs one form, never both.
template <class F, class = void> struct ShortForm { enum { value = 0 }; };
template <class F> struct ShortForm<F, decltype((void)F::kShortForm, void())> {
  enum { value = F::kShortForm };
};

// The flag `fast` sets, and the loop that runs `fast` over a pack. The device unrolls it.
// The host makes it an `omp simd` loop and the flag an int: GCC 12 vectorizes neither a
// reduction in straight-line (fully unrolled) code nor one over bool, so with the device's
// form the host's fast path stayed scalar.
#if defined(__CUDA_ARCH__)
typedef bool FastFlag;
#define SW_FAST_LOOP(P) SW_UNROLL
#define SW_SIMD_MAX(v) SW_UNROLL
#define SW_SIMD_OR(v) SW_UNROLL
#else
typedef i64 FastFlag;
#define SW_PRAGMA(x) _Pragma(#x)
#define SW_FAST_LOOP(P) SW_PRAGMA(omp simd safelen(P))
#define SW_SIMD_MAX(v) SW_PRAGMA(omp simd reduction(max : v))   // a loop that also takes v's max
#define SW_SIMD_OR(v) SW_PRAGMA(omp simd reduction(| : v))     // ... or ors into v (FlagsFirst)
#endif

// How a generated Op computes a pack (Op::compute): kEither, through F's fast path and again
// exactly if a lane sets the flag; kFast, the fast path only, returning the flag so that a
// kernel can test a whole batch's flags at once (kernels.cuh run_packs kBatch); kExact, F
// itself.
enum Path { kEither, kFast, kExact };

// F::fast with the flag last; a template, so the generated kernel's branch on HasFast<F>
// compiles only where it is taken. The kernel passes its pack width P too: with only
// uniform operands (u.v1, ...) the call's arguments depend on no template parameter, and
// GCC deduced the return type (instantiating F::fast) even inside a discarded branch.
template <class F, int P, class... A>
SW_HOST_DEVICE SW_INLINE auto call_fast(FastFlag& slow, A... a) { return F::fast(a..., slow); }
template <class F, int P, class... A>   // FlagsFirst's range check, with call_fast's arguments
SW_HOST_DEVICE SW_INLINE void call_wide(FastFlag& slow, A... a) { slow |= F::wide(a...); }
template <class F, int P, class... A>   // ShortForm's range check and form
SW_HOST_DEVICE SW_INLINE void call_far(FastFlag& far, A... a) { far |= F::far(a...); }
template <class F, int P, class... A>
SW_HOST_DEVICE SW_INLINE auto call_short(FastFlag& slow, A... a) { return F::fast_short(a..., slow); }
// Whether p holds for any converged lane of the warp (the host: this thread's p).
SW_HOST_DEVICE SW_INLINE bool any_lane(bool p) {
#if defined(__CUDA_ARCH__)
  return __any_sync(__activemask(), p);
#else
  return p;
#endif
}

// F itself, the exact form a kernel redoes a flagged pack with; kOutline: as a call, so that
// its registers stay out of the fast path's where the two together crowd a kernel (the tiled
// kernel's bfloat16 remainder, short_rows' resident float32: KernelTables.outline_exact).
template <class F, class... A>
static SW_NOINLINE SW_HOST_DEVICE auto call_outlined(A... a) { return F()(a...); }
template <class F, bool kOutline, class... A>
SW_HOST_DEVICE SW_INLINE auto call_exact(A... a) {
  if constexpr (kOutline) return call_outlined<F>(a...);
  else return F()(a...);
}

// One element through F's fast path where it holds, else F itself: the order a kernel's
// pack takes (FlagsFirst's check first), for code that calls a functor on lone values, such
// as `sw.fuse`'s preamble functions (F itself is the exact form alone: float remainder's
// is ~90 instructions on the device, its fast path ~20).
template <class F, class... A>
SW_HOST_DEVICE SW_INLINE auto call_one(A... a) {
  if constexpr (HasFast<F>::value) {
    FastFlag slow = 0;
    if constexpr (FlagsFirst<F>::value) {
      if (F::wide(a...)) return F()(a...);
      return F::fast(a..., slow);
    } else {
      const auto r = F::fast(a..., slow);
      return slow ? F()(a...) : r;
    }
  } else {
    return F()(a...);
  }
}

// 1 / x within 2^-43.3 (relative) with no division, for x in [2^-100, 2^100] (outside it the
// result is finite garbage, never a trap). r0 is the float reciprocal: __fdividef(1, x) is
// within 2 ulp on the device (the host's IEEE 1.0f / x within half of one), so with x's
// rounding to float, d = 1 - x * r0 is below 1.25 * 2^-22 in magnitude. A Newton step
// r0 + r0 * round(d) leaves x * r1 - 1 = -d^2 plus roundings: within 2^-43.36 + 2^-53. A
// division is a Newton sequence too, but with a correctly rounded quotient and a branch to a
// slow path per element, which kept a pack's elements from overlapping.
// __fdividef, unlike inline asm, is an intrinsic the compiler shares between packs with the
// same x even across the packs' slow-path branches (how the rows kernel shared a repeated
// operand's reciprocal before divisors were prepared).
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

// fmod of any two floats, exactly, in double, at a cost bound by the exponent gap (the
// host's slow lanes take it in place of libm's fmodf, whose loop costs a step per bit of the
// quotient; the device's exact path is fmod_wide_fast, below). With
// B = m 2^e (m in [1, 2), exact: a float's significand), x = A 2^-e and y = m: fmod(A, B) =
// fmod(x, m) 2^e, every scaling exact in double. inv is rcp_newton(m) (within 2^-43.3) after a
// second Newton step: within 2^-86 + 2^-53 of 1 / m. While x >= 2^48 (x = X 2^(s + 47), X in
// [1, 2)), x is reduced modulo ms = m 2^s: u = up 2^-s with up = inv (1 + 2^-50) (rounded),
// so x * u is at least x / ms (the bias beats inv's error and three roundings, 2^-50.6) and
// above it by less than 2^48 2^-49.4 < 0.38: q = trunc(x * u) is n or n + 1, and r = x - q ms
// is exact (the fma forms q ms exactly): x and ms are multiples of 2^(s-23) (24-bit
// significands; what reductions leave stays a multiple of the larger grid) and
// |r| <= ms < 2^(s+1), 25 bits; r < 0 gets ms added. Each pass lowers x's exponent by at
// least 47 (at most 6 passes for float's 2^277 range); the last step is the same with m.
// The result is a multiple of B's grid below B, so converting it to float is exact.
// tests/test_remainder_cpu.py checks the argument as arithmetic, the host build against NumPy.
SW_HOST_DEVICE SW_INLINE float fmod_wide_exact(float a, float b) {
  const double A = fabs((double)a), B = fabs((double)b), top = 0x1.fffffffffffffp1023;
  if (!(A <= top) || !(B > 0.0)) return bit_cast<float>(0x7fffffffu);   // inf or NaN a, 0 or NaN b
  if (!(B <= top)) return a;                                           // b = +-inf
  const u64 bits = bit_cast<u64>(B);
  const i32 e = (i32)(bits >> 52) - 1023;
  const double m = bit_cast<double>((bits & 0x000fffffffffffffull) | (1023ull << 52));
  const double inv0 = rcp_newton(m), inv = fma(inv0, fma(-m, inv0, 1.0), inv0);
  const double up = fma(inv, 0x1p-50, inv);
  double x = A * bit_cast<double>((u64)(1023 - e) << 52);
  for (;;) {
    const i32 s = (i32)(bit_cast<u64>(x) >> 52) - 1023 - 47;
    if (s <= 0) break;
    const double ms = bit_cast<double>(bit_cast<u64>(m) + ((u64)s << 52));
    const double u = bit_cast<double>(bit_cast<u64>(up) - ((u64)s << 52));
    const double r = fma(-trunc(x * u), ms, x);
    x = r < 0.0 ? r + ms : r;
  }
  const double r = fma(-trunc(x * up), m, x);
  const double y = (r < 0.0 ? r + m : r) * bit_cast<double>((u64)(1023 + e) << 52);
  return copysignf((float)y, a);
}

// fmod of doubles, exactly, for any operands, with every lane of a pack in step (an `omp simd`
// loop per step) and no subnormal arithmetic: the host's exact path for the double lanes its
// fast path leaves (quotients of 2^52 and more: huge quotients, subnormal divisors, dividends
// near the maximum; the device reduces such lanes one by one in 96-bit windows,
// fmod_wide_lane below), in place of the C library's fmod, which takes a step per bit of the
// quotient (2098 for a subnormal divisor: about 3 us on the host; on the H200 43 ms for 2^27
// such elements).
// With A = ma 2^ea and B = mb 2^eb (ma, mb in [1, 2), exact:
// a subnormal i 2^-1074 is t 2^-1022 with t = (1 + i 2^-52) - 1, normal), G = ea - eb and
// n = floor(G / 49): fmod(A, B) = fmod(x, mb) 2^eb for x = ma 2^(G - 49 n) 2^(49 n), reduced
// 49 bits at a time in a window of fixed scale. x starts as ma 2^(G - 49 n) < 2^49; each of
// n steps takes q = the integer nearest x inv (inv = 1 / mb rounded; x inv + 1.5 2^52 rounds
// once onto the integers, as |x inv| < 2^51) and x = (x - q mb) 2^49 in one fma (x 2^49 and
// mb 2^49 exact): |x inv - x / mb| <= 2^49.02 2^-53 < 0.07, so |x - q mb| < 0.57 mb < 1.14,
// and x - q mb is a multiple of 2^-52 (x's grid never finer than mb's), so exact; scaled, it
// is again below 2^49.02. A last step without the scaling leaves r in (-0.57 mb, 0.57 mb),
// and r + mb where negative is fmod(x, mb), a multiple of B's grid (2^-1074 at the finest)
// in window units. The result r 2^eb is put together from bits: an add to r's exponent
// field where it is normal; where it is subnormal, its bits are the integer r 2^(eb + 1074)
// < 2^52, the low bits of that plus 2^52 (exact). Subnormal arithmetic would cost a
// microcode assist per instruction on x86 (3x on subnormal divisors), and int64 <-> double
// conversions and division kept parts of the loops scalar. n = g / 49 is (g 1338) >> 16,
// exact for g < 2200. Lanes need n steps each; the pack runs the most any lane needs, and a lane's
// x enters when its own steps begin (x is 0 before: a step leaves 0 as 0). Specials run on
// stand-ins and take their result at the end: a for b = +-inf and a finite, and for
// |a| < |b| (G < 0) or a = 0; NaN for a = +-inf, b = 0 or NaN.
// tests/test_remainder_cpu.py checks every branch against NumPy (random bit patterns,
// subnormals, gaps of every size, specials).
SW_HOST_DEVICE SW_INLINE double fmod_wide_normalize(u64 i, i64& e) {   // i: positive, finite, nonzero
  const u64 sub = 0ull - (u64)(i < (1ull << 52));
  const u64 t = bit_cast<u64>(bit_cast<double>(i | 0x3ff0000000000000ull) - 1.0);
  const u64 j = (t & sub) | (i & ~sub);
  e = (i64)(j >> 52) - 1023 - (i64)(sub & 1022);
  return bit_cast<double>((j & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
}
template <int P>
SW_HOST_DEVICE SW_INLINE void fmod_wide_pack(double* y, const double* a, const double* b) {
  const u64 top = 0x7ff0000000000000ull, mag = 0x7fffffffffffffffull;
  double x0[P], inv[P], m[P], x[P];
  i64 n[P], eb[P];
  u64 keep[P], nan[P];
  i64 steps = 0;
  SW_SIMD_MAX(steps)
  for (int e = 0; e < P; ++e) {
    const u64 ia = bit_cast<u64>(a[e]) & mag, ib = bit_cast<u64>(b[e]) & mag;
    const u64 bad = 0ull - (u64)((ia >= top) | (ib - 1 >= top - 1));       // a inf/NaN; b 0, inf, NaN
    const u64 iA = (ia & ~bad) | (0x3ff0000000000000ull & (0ull - (u64)(ia == 0)));
    const u64 iB = (ib & ~bad) | (0x3ff0000000000000ull & bad);
    i64 ea;
    const double ma = fmod_wide_normalize(iA & ~bad, ea);
    m[e] = fmod_wide_normalize(iB, eb[e]);
    const i64 G = ea - eb[e];
    const u64 small = 0ull - (u64)((G < 0) | (ia == 0));
    keep[e] = (small & ~bad) | (bad & (0ull - (u64)((ia < top) & (ib == top))));
    nan[e] = bad & ~keep[e];
    const i64 g = G & ~(i64)small;
    n[e] = (g * 1338) >> 16;                                       // g / 49
    steps = n[e] > steps ? n[e] : steps;
    x0[e] = ma * bit_cast<double>((u64)(1023 + g - 49 * n[e]) << 52);
    inv[e] = 1.0 / m[e];
    x[e] = 0.0;
  }
  for (i64 i = steps; i > 0; --i) {
    SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) {
      const double xe = i == n[e] ? x0[e] : x[e];
      const double q = fma(xe, inv[e], 0x1.8p52) - 0x1.8p52;
      x[e] = fma(-q, m[e] * 0x1p49, xe * 0x1p49);
    }
  }
  SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) {
    const double xe = n[e] == 0 ? x0[e] : x[e];
    double r = fma(-(fma(xe, inv[e], 0x1.8p52) - 0x1.8p52), m[e], xe);
    r += bit_cast<double>(bit_cast<u64>(m[e]) & (u64)((i64)bit_cast<u64>(r) >> 63));
    const u64 br = bit_cast<u64>(r);
    const i64 k = (eb[e] + 1074) & 1023;                               // < 104 where subnormal
    const u64 sub = bit_cast<u64>(fma(r, bit_cast<double>((u64)(k + 1023) << 52), 0x1p52)) &
                    0x000fffffffffffffull;
    const u64 rb = br == 0 ? 0ull : (i64)(br >> 52) + eb[e] >= 1 ? br + ((u64)eb[e] << 52) : sub;
    const u64 ia = bit_cast<u64>(a[e]);
    const u64 res = (rb & ~(keep[e] | nan[e])) | (ia & mag & keep[e]) | (0x7ff8000000000000ull & nan[e]);
    y[e] = bit_cast<double>(res | (ia & ~mag));
  }
}

// x 2^k by an add to x's exponent field (x and the result normal): on the device, to the high
// word alone (a 64-bit add there is two instructions and a carry).
SW_HOST_DEVICE SW_INLINE double times_pow2(double x, i32 k) {
#if defined(__CUDA_ARCH__)
  return __hiloint2double(__double2hiint(x) + k * (1 << 20), __double2loint(x));
#else
  return bit_cast<double>(bit_cast<u64>(x) + ((u64)(i64)k << 52));
#endif
}
// A double's high word, and x with its high word replaced (the low word kept in place).
SW_HOST_DEVICE SW_INLINE i32 high_word(double x) {
#if defined(__CUDA_ARCH__)
  return __double2hiint(x);
#else
  return (i32)(bit_cast<u64>(x) >> 32);
#endif
}
SW_HOST_DEVICE SW_INLINE double with_high_word(double x, i32 h) {
#if defined(__CUDA_ARCH__)
  return __hiloint2double(h, __double2loint(x));
#else
  return bit_cast<double>(((u64)(u32)h << 32) | (bit_cast<u64>(x) & 0xffffffffull));
#endif
}

// v = m 2^e with m in [1, 2), for v positive, finite and nonzero: fmod_wide_normalize's
// result for one lane, on 32-bit words, a subnormal v scaled by 2^64 first (exact), which
// leaves it normal (the pack form's masks and 64-bit integers cost a device lane more).
SW_HOST_DEVICE SW_INLINE double lane_normalize(double v, i32& e) {
  const bool sub = high_word(v) < 0x00100000;
  const double w = sub ? v * 0x1p64 : v;
  const i32 h = high_word(w);
  e = (h >> 20) - (sub ? 1023 + 64 : 1023);
  return with_high_word(w, (h & 0x000fffff) | 0x3ff00000);
}
// x 2^(8 K) for x = +0 or x's exponent field in [8, 2047 - 8 K): x's high word read as a
// float, whose exponent field is the top 8 bits of x's 11, times 2^K adds 8 K to x's exponent
// in one float multiply (exact: that float is normal) and keeps +0 at +0, where an add to the
// exponent would need a test for zero. The exact lanes' step between windows (K = 12 for
// float64's 96 bits, 11 for float32's 88).
template <int K> SW_HOST_DEVICE SW_INLINE double times_2_8k(double x) {
  return with_high_word(x, bit_cast<i32>(bit_cast<float>(high_word(x)) * (float)(1 << K)));
}
// The exact lanes' reduction of x modulo m in windows of 2H bits: each a step modulo m 2^H
// then one modulo m, and x 2^(2H) between windows (windows: how many follow the first). -q d
// is c - (x inv + c rounded) for c = 1.5 2^(52 + H) (x inv rounded onto the multiples of 2^H:
// q 2^H for d = m 2^H) or 1.5 2^52 (d = m): exact, with no negation carried in the loop and
// no scaled m or inv held beside m and inv. The callers' comments bound each step and show
// it exact (fmod_wide_lane: H = 48, fmod_wide_fast: 44).
template <int H>
SW_HOST_DEVICE SW_INLINE double reduce_windows(double x, double m, double inv, i32 windows) {
  constexpr double c = 0x1.8p52 * (double)(1ull << H);
  SW_ROLLED for (i32 i = windows;; --i) {
    x = fma(c - fma(x, inv, c), m, x);
    x = fma(0x1.8p52 - fma(x, inv, 0x1.8p52), m, x);
    if (i == 0) return x;
    x = times_2_8k<H / 4>(x);
  }
}

// fmod of doubles for one lane, exactly, for any operands: the device's exact path for the
// double lanes its fast path leaves (a pack's slow lanes run one by one there), with
// branches where fmod_wide_pack has masks (whose live masks and arrays held 56 registers in
// every float64 kernel). Those lanes are bound by issue (ncu, H100: 79% of issue slots
// busy, the double pipe 60%), so this form is counted in instructions: 32-bit words where
// fmod_wide_pack has 64-bit integers, a window of 96 bits, and the result scaled by products.
// With A = ma 2^ea, B = m 2^eb (ma, m in [1, 2), lane_normalize), g = ea - eb >= 0 (|a| >=
// |b| here) and N = floor(g / 96): fmod(A, B) = fmod(x, m) 2^eb for x = ma 2^(g - 96 N)
// 2^(96 N). x starts as ma 2^(g - 96 N) in [1, 2^96); a window reduces x modulo m48 = m 2^48,
// then modulo m, and each of the N windows after it starts from x 2^96 (times_2_8k: x is
// then +0, an exact zero from the fma being +0, or a nonzero multiple of 2^-52 below 2^1.1).
// A step modulo d (m48 or m) with inv = 1 / m rounded and x / d < 2^48 c takes q = the
// integer nearest x inv 2^-48 (x inv + 1.5 2^100 rounded once onto the multiples of 2^48, as
// |x inv| < 2^99) or x inv (x inv + 1.5 2^52 onto the integers, as |x inv| < 2^51), and
// x - q d in one fma: |q - x / d| <= 1/2 + 2^48 c 2^-53, so from c < 1 (x < 2^96 m at a
// window's start, r 2^96 after it) each step leaves |x - q d| < 0.54 d, and the next step
// again has x / d < 0.54 2^48 (reduce_windows<48>). x - q d is exact: where x's grid is no
// finer than d's, a multiple of d's grid below 0.54 d (53 bits of it); where it is finer,
// x < d, and x - q d is x (q = 0) or, as q = 1 needs x >= d / 2, exact (Sterbenz). The last
// step leaves r in (-0.54 m, 0.54 m), and r + m where negative is fmod(x, m), a multiple of
// B's grid in window units, so r 2^eb is a double: one exact product where 2^eb is normal,
// and where eb < -1022, r 2^(eb + 1022) then 2^-1022, both exact too.
// Specials: a for b = +-inf with a finite and for |a| < |b| (a = 0 among them); NaN for
// a = +-inf, b = 0 or NaN. tests/test_remainder_cpu.py builds it for the host and checks it
// against NumPy's fmod.
SW_HOST_DEVICE SW_INLINE double fmod_wide_lane(double a, double b) {
  const u64 top = 0x7ff0000000000000ull, mag = 0x7fffffffffffffffull;
  const u64 ia = bit_cast<u64>(a) & mag, ib = bit_cast<u64>(b) & mag;
  if ((ia >= top) | (ib - 1 >= top - 1))            // a inf or NaN; b 0, inf or NaN
    return (ia < top) & (ib == top) ? a : bit_cast<double>(0x7ff8000000000000ull);
  if (ia < ib) return a;
  i32 ea, eb;
  const double ma = lane_normalize(bit_cast<double>(ia), ea), m = lane_normalize(bit_cast<double>(ib), eb);
  const i32 g = ea - eb, windows = (g * 2731) >> 18;   // g / 96 (exact for g < 8192)
  const double inv = 1.0 / m;
  double x = reduce_windows<48>(times_pow2(ma, g - 96 * windows), m, inv, windows);
  if (x < 0.0) x += m;
  const double r = x * times_pow2(1.0, eb < -1022 ? eb + 1022 : 0) * times_pow2(1.0, eb < -1022 ? -1022 : eb);
  return bit_cast<double>(bit_cast<u64>(r) | (bit_cast<u64>(a) & ~mag));
}

// Divisors prepared for the remainder fast paths (HasPrepare): b and what depends on it alone.
template <class M> struct Divisor;

#if defined(__CUDA_ARCH__)
SW_DEVICE SW_INLINE float sw_inf_dev() { return __int_as_float(0x7f800000); }
// rcp.approx: within 1 ulp of 1 / x; a subnormal x gives inf (ftz).
SW_DEVICE SW_INLINE float rcp_approx(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// Device fmod: with A = |a|, B = |b|, n = trunc(A / B) and q = n or n + 1, A - q * B is exact
// in one fma (a multiple of the smaller ulp, below B in magnitude) and adding B back is
// exact. This replaces fmod's bit loop, which made float64 remainder compute-bound.
// double: q from rcp_newton(B) scaled up by 2^-42: with its error below 2^-43.3
// and two roundings of 2^-53, A * up lies in [A / B, A / B (1 + 2^-41.5)], so for
// A / B < 2^40 it is less than 0.36 above A / B and q = n or n + 1 (for a subnormal product
// A / B is tiny and q = 0 = n); A * up >= A / B, so q < 2^40 checks the quotient, and the
// divisor's range check is prepared with up. Nothing here branches, so a pack's elements overlap.
// Zero, inf, NaN, extreme divisors and huge quotients set `slow` (fmod then).
// (float: remainder_fast and fmod_wide below.)
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
static __noinline__ SW_DEVICE double fmod_slow(double a, double b) { return fmod_wide_lane(a, b); }
SW_DEVICE SW_INLINE double sw_fmod(double a, double b) {
  FastFlag slow = false;
  const double r = fmod_fast(a, b, slow);
  return slow ? fmod_slow(a, b) : r;
}
#else
// Host fmod without glibc's bit loop (about 23 ns per call, 6-13x slower than this).
// With A = |a|, B = |b| and n = trunc(A / B) < 2^k, the rounded quotient
// q = trunc(A / B) is n or n + 1 (rounding is monotone and n is representable), and
// A - q * B is exactly representable (a multiple of the smaller ulp, below 2B in magnitude),
// so one exact product-difference and one add of B give fmod exactly. Zero, inf, NaN and
// huge quotients take fmod_slow: fmod_wide_exact for float, fmod_wide_pack for double.
// The slow paths are opaque, cold calls: with -fno-math-errno libm's fmod counts as pure, and
// this keeps GCC from ever speculating it into the common path.
__attribute__((noipa, cold)) inline float fmod_slow(float a, float b) { return fmod_wide_exact(a, b); }
__attribute__((noipa, cold)) inline double fmod_slow(double a, double b) {
  double y;
  fmod_wide_pack<1>(&y, &a, &b);
  return y;
}
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

// fmod of any two floats, exactly, in double, with no rounding instruction and a loop of at
// most 4 windows (one per 88 bits of the quotient): the device's exact path for the float
// lanes its fast paths leave (subnormal divisors, quotients past 2^40 or 2^60), counted in
// instructions as float64's fmod_wide_lane is. fmod_wide_exact (above) costs a truncation
// (a quarter-rate instruction) per step and conversions to and from float around its
// reciprocal; here those are an fma with 1.5 * 2^52 and bit moves.
// With A = ma 2^ea and B = m 2^eb (ma, m in [1, 2): a float's at most 24 significant bits;
// both normal in double even where a or b is subnormal), g = ea - eb >= 0 (|a| >= |b| here)
// and N = floor(g / 88): fmod(A, B) = fmod(x, m) 2^eb for x = A 2^-eb, which starts as
// ma 2^(g - 88 N) in [1, 2^88) and is scaled by 2^88 between windows (times_2_8k, which
// keeps +0 at +0). u = r0 (2 - m r0) with r0 the float reciprocal of m within 1 ulp (2^-23
// relative): 1 - m r0 is exact (a multiple of 2^-47 below 2^-23), so |u m - 1| <= 2^-46 +
// 2^-53 (= eps, < 2^-45.98). A window is a step modulo d = m44 = m 2^44 then one modulo
// d = m. A step with |x / d| < 2^44 takes q = the integer nearest x u 2^-44 (x u + 1.5 2^96
// rounded once onto the multiples of 2^44, as |x u| < 2^95) or x u (x u + 1.5 2^52 onto the
// integers, as |x u| < 2^51): |q - x / d| <= 1/2 + 2^44 eps < 0.76, and x - q d in one
// fma (reduce_windows<44>). So each step leaves |x - q d| < 0.76 d, the next has
// |x / d| < 0.76 2^44, and a window's start x < 2^88 m (0.76 m 2^88 after the first). x - q d
// is exact: x and m are multiples of 2^-23 (x >= 1 at the first window's start, a multiple of
// 2^65 at a later one's); where x's grid is no finer than d's, x - q d is a multiple of d's
// grid below 0.76 d (25 bits); where it is finer, x's exponent is below d's, so x < d and q
// is 0 or 1, and x - d (|x - d| < d) is a multiple of x's grid, which is at least d's / 8
// (q = 1 needs x > 0.24 d): 27 bits. The last step leaves r in (-0.76 m, 0.76 m); r + m where
// negative is fmod(x, m), a multiple of 2^-23 below m, and r 2^eb is a float (a multiple of
// b's grid below |b|).
// Specials: a for b = +-inf with a finite and for |a| < |b| (a = 0 among them); NaN for
// a = +-inf, b = 0 or NaN. tests/test_remainder_cpu.py checks the argument as arithmetic with
// the float reciprocal anywhere within 1 ulp of 1 / m, and the host build (a correctly
// rounded reciprocal) against NumPy.
SW_HOST_DEVICE SW_INLINE float fmod_wide_fast(float a, float b) {
  const u32 ia = bit_cast<u32>(a) & 0x7fffffffu, ib = bit_cast<u32>(b) & 0x7fffffffu;
  if ((ia >= 0x7f800000u) | (ib - 1u >= 0x7f7fffffu))   // a inf or NaN; b 0, inf or NaN
    return (ia < 0x7f800000u) & (ib == 0x7f800000u) ? a : bit_cast<float>(0x7fffffffu);
  if (ia < ib) return a;
  const u64 bB = bit_cast<u64>((double)bit_cast<float>(ib)), e = bB & 0x7ff0000000000000ull;
  const u64 bm = (bB ^ e) | 0x3ff0000000000000ull;                   // m's bits
  const double m = bit_cast<double>(bm);
  double x = times_pow2((double)bit_cast<float>(ia), 1023 - (i32)(e >> 52));   // A 2^-eb
  const float mf = bit_cast<float>(((u32)(bm >> 29) & 0x007fffffu) | 0x3f800000u);   // m, exactly
#if defined(__CUDA_ARCH__)
  float rf;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(rf) : "f"(mf));
#else
  const float rf = 1.0f / mf;
#endif
  // rf in [0.5, 1] as a double: its bits moved into place, the exponent rebased
  const double r0 = bit_cast<double>(((u64)bit_cast<u32>(rf) << 29) + ((u64)(1023 - 127) << 52));
  const double u = fma(r0, fma(-m, r0, 1.0), r0);
  const i32 g = (high_word(x) >> 20) - 1023, windows = (g * 745) >> 16;   // g / 88 (g < 300)
  x = reduce_windows<44>(times_pow2(x, -88 * windows), m, u, windows);
  const double r = (x < 0.0 ? x + m : x) * bit_cast<double>(e);
  return copysignf((float)r, a);
}

// NVRTC has no __builtin_inff; the device intrinsic builds the same bits.
SW_HOST_DEVICE SW_INLINE float sw_inf() {
#if defined(__CUDA_ARCH__)
  return __int_as_float(0x7f800000);
#else
  return __builtin_inff();
#endif
}

#if defined(__CUDA_ARCH__)
// The device's float remainder, whose cost does not depend on the operands' values within
// |a / b| < 2^40 (every float16 pair; bfloat16) or, with step 0 (float32), 2^60: every pair
// short of extreme quotients or divisors. Steps of the form below, with no branch or call:
// Step form (from the signed quotient, fewer instructions than fmod then a sign fix):
// w = x * rcp.approx(y) is within 2^-22.4 of x / y (relative); w + |w| 2^-21 is then at least x / y and, for
// |x / y| < 2^20 + 1, less than 0.8 above it, so q = its floor is n = floor(x / y) or n + 1
// (a subnormal w only occurs for |x / y| < 1, where q in {-1, 0, 1} is n or n + 1 too).
// r = x - q * y is then the floor modulus, or that minus y; one fma gives either exactly (a
// multiple of the smaller ulp, |r| <= |y|) except the modulus x + y of |x| < |y| with
// opposite signs, which it rounds once, as torch's fmod + b does.
// Step 1 reduces A = |a| modulo Bs = |b| 2^20 (a multiple of b, so the floor modulus is
// kept): q1 = floor(A * rcp1) with rcp1 = |rcp| 2^-20 (1 + 2^-21) (the bias folded in: one
// rounding of rcp1 and one of the product leave A * rcp1 in [A / Bs, A / Bs + 0.75) for
// A / Bs < 2^20), so q1 = n1 or n1 + 1 and r1 = A - q1 Bs is exact, in [-Bs, Bs). q1 < 2^20
// implies A / Bs <= A * rcp1 < 2^20, so checking q1 checks the step, and |a / b| < 2^40
// passes it. With an unprepared divisor the product q1 Bs is formed as (q1 2^20) |b| (exact:
// q1 2^20 is), which spares clamping Bs. Step 2 is the form on x = r1 with the sign of a
// times b's flipped in and y = |b|: a2 = r1 with a's sign is a - k b for an integer k,
// |a2 / b| <= 2^20, and x = a2 sgn(b), whose floor modulus by |b| is a2's by b times sgn(b),
// so no step needs b's sign until the last. For |a| >= |b| the floor modulus and torch's
// fmod + b are both multiples of ulp(b) below |b|, exact; for |a| < |b|, q1 = 0 and x = +-a.
// A negative r gets |b| added (exact, or for |a| < |b| against b's sign the one rounding of
// a + b, as torch's), leaving r in [0, |b|); then b's sign, and a zero takes the dividend's
// sign (torch: fmod's) or the divisor's (NumPy).
// Special values are ordinary lanes: b = 0 or a = +-inf make r1 NaN (0 * inf or inf - inf),
// NaN stays NaN, and b = +-inf gives rcp = 0, q1 = q = 0 and r = x, with the fma's divisors
// (Bs, Bc) clamped to the largest float so 0 * inf never arises; b's own inf is then added
// where the signs differ (r = x < 0), as torch does. So q1 >= 2^20 sets `slow` only where r1
// is not NaN (q1 = inf from an overflowing A * rcp1 leaves r1 = -inf, and sets it).
// A subnormal divisor (rcp.approx.ftz gives inf) and |b| in (2^100, inf) (a reciprocal near
// or below the subnormal range) set `slow` too, through the prepared flag `wide`; those and
// quotients of 2^40 and more take fmod_wide (bfloat16: bf16_fmod). float32 and bfloat16
// find those lanes first (remainder_wide, FlagsFirst; bfloat16 two lanes at a time, Wide2)
// and run this without the checks. tests/test_remainder_cpu.py checks this argument as float
// arithmetic, with the reciprocal 1 ulp either way and both forms of q1 Bs, and
// tests/test_cuda.py every float16 and bfloat16 pair, with the divisors dense and prepared.
template <> struct Divisor<float> {
  float b, rcp, rcp1, Bs, rcp0, Bs0, Bc;   // ~1/b; steps 1 and 0; |b| clamped finite
  bool wide, wide0;   // |b| subnormal or in (2^100, inf) (2^86 with step 0): fmod_wide's
  // The dividends (finite |a|) from which a lane is fmod_wide's (remainder_wide): |b| 2^39
  // (2^59 with step 0), below the range check's 2^40 (2^60) by one bit so that |a| < lim
  // keeps every quotient check clear; 0 where b is itself wide, inf where b is 0, inf or NaN
  // (the fast path's arithmetic gives those).
  float lim, lim0;
  SW_DEVICE SW_INLINE static Divisor make(float b) {
    const float B = fabsf(b), rcp = rcp_approx(b), big = 0x1.fffffep127f;
    const u32 e = __float_as_uint(B);
    const bool wide = (e - 0x00800000u > 0x71000000u) & (e - 1u < 0x7f7fffffu),
               wide0 = (e - 0x00800000u > 0x6a000000u) & (e - 1u < 0x7f7fffffu),
               plain = e - 1u < 0x7f7fffffu;
    return {b, rcp, fabsf(rcp) * (0x1p-20f * (1.0f + 0x1p-21f)), fminf(B * 0x1p20f, big),
            fabsf(rcp) * (0x1p-40f * (1.0f + 0x1p-21f)), fminf(B * 0x1p40f, big),
            fminf(B, big), wide, wide0,
            !plain ? sw_inf_dev() : wide ? 0.0f : B * 0x1p39f,
            !plain ? sw_inf_dev() : wide0 ? 0.0f : B * 0x1p59f};
  }
};
// Whether a's lane needs fmod_wide (a FlagsFirst functor's check, before any value): |a|
// finite and at least d's limit. Otherwise remainder_fast's checks stay clear, so it runs
// without them (kChecks).
template <bool kStep0>
SW_DEVICE SW_INLINE bool remainder_wide(float a, const Divisor<float>& d) {
  const float A = fabsf(a);
  return !(A < (kStep0 ? d.lim0 : d.lim)) & (A < sw_inf_dev());
}
// The same for a divisor of its own (dense): compares with predicates chained, no selects.
template <bool kStep0>
SW_DEVICE SW_INLINE bool remainder_wide(float a, float b) {
  const float A = fabsf(a), B = fabsf(b), inf = sw_inf_dev();
  const bool in = (B >= 0x1p-126f) & (B <= (kStep0 ? 0x1p86f : 0x1p100f));
  return (A < inf) & (B > 0.0f) & (B < inf) & (!in | (A >= B * (kStep0 ? 0x1p59f : 0x1p39f)));
}
// kStep0: one more step first, modulo Bs0 = |b| 2^40, the same argument with 2^40 for 2^20
// (rcp0 stays normal for |b| <= 2^86, which `wide0` checks): quotients below 2^60 then stay
// on the fast path, for 4 instructions more per element. Its r0 in [-Bs0, Bs0) gets Bs0 added
// where negative (exact: for A < Bs0 it gives A back, else a multiple of ulp(Bs0) below Bs0),
// and step 1 sees A < Bs0, so its quotient needs no check. float32 takes it, and bfloat16's
// exact form; float16 (quotients below 2^40) does not.
// The sign bit of x times y, in one instruction on the floats: where x and y are 16-bit
// values widened, the compiler otherwise forms it on the packed storage and takes each
// lane's bit out with a shift or a byte permute (1-2 instructions more a lane).
SW_DEVICE SW_INLINE u32 sign_product(float x, float y) {
  u32 r;
  asm("lop3.b32 %0, %1, %2, %3, 0x28;" : "=r"(r) : "r"(__float_as_uint(x)), "r"(__float_as_uint(y)), "r"(0x80000000u));
  return r;
}
template <Convention C, bool kStep0, bool kChecks = true, bool kDense = false>
SW_DEVICE SW_INLINE float remainder_fast(float a, const Divisor<float>& d, FastFlag& slow) {
  float A = fabsf(a);
  if constexpr (kStep0) {
    const float q0 = floorf(A * d.rcp0);
    const float r0 = fmaf(-q0, d.Bs0, A);
    if constexpr (kChecks) slow |= d.wide0 | ((q0 >= 0x1p20f) & (r0 == r0));
    A = r0 < 0.0f ? r0 + d.Bs0 : r0;
  }
  const float q1 = floorf(A * d.rcp1);
  // q1 Bs as (q1 2^20) Bc, the same exact product, where the divisor is not prepared: one
  // clamp an element fewer (q1 2^20 is exact, and q1 = 0 wherever b = +-inf)
  const float r1 = kDense ? fmaf(-q1 * 0x1p20f, d.Bc, A) : fmaf(-q1, d.Bs, A);
  if constexpr (!kStep0 && kChecks) slow |= d.wide | ((q1 >= 0x1p20f) & (r1 == r1));
  // x = a2 with b's sign folded in (a2 = r1 with a's sign), reduced modulo |b|: the floor
  // modulus of a2 by b is that of x by |b| times b's sign, so no step below needs b's sign
  const u32 z = sign_product(a, d.b);
  const float x = __uint_as_float(__float_as_uint(r1) ^ z);
  const float w = x * fabsf(d.rcp);
  const float q = floorf(fmaf(fabsf(w), 0x1p-21f, w));
  float r = fmaf(-q, d.Bc, x);
  if (r < 0.0f) r += fabsf(d.b);   // now in [+0, |b|), or -0 where x is -0
  const u32 sb = __float_as_uint(d.b) & 0x80000000u;
  if (C == kNumpy) return __uint_as_float((__float_as_uint(r) & 0x7fffffffu) | sb);
  // Then b's sign, and a zero a's, without a select: that is b's sign flipped by z, the sign
  // of a times b's; a sum of zeros rounded down is -0 when either is (r is -0 only where x
  // is, so where z is negative: r1 is never -0), and adding a zero leaves a nonzero r as it is.
  return __uint_as_float(__float_as_uint(__fadd_rd(r, __uint_as_float(z))) ^ sb);
}
template <Convention C, bool kStep0, bool kChecks = true>
SW_DEVICE SW_INLINE float remainder_fast(float a, float b, FastFlag& slow) {
  return remainder_fast<C, kStep0, kChecks, true>(a, Divisor<float>::make(b), slow);
}
// The lanes remainder_fast leaves: fmod_wide_fast (above), inline: with the check first
// (FlagsFirst) it runs in a branch of its own, so its registers do not add to the fast
// path's, and a call cost ~10 of its ~90 instructions per lane.
SW_DEVICE SW_INLINE float fmod_wide(float a, float b) { return fmod_wide_fast(a, b); }
// As a call, for the paths whose exact form follows their fast path on the same lanes
// (fmod, float16), where an inline copy per lane would add its registers to the fast path's.
static __noinline__ SW_DEVICE float fmod_wide_call(float a, float b) { return fmod_wide_fast(a, b); }
SW_DEVICE SW_INLINE float sw_fmod(float a, float b) {
  // remainder_fast of magnitudes is fmod's magnitude (a +0 for a zero), a's sign copied in
  FastFlag slow = false;
  const float r = remainder_fast<kTorch, true>(fabsf(a), fabsf(b), slow);
  return slow ? fmod_wide_call(a, b) : copysignf(r, a);
}
#endif

#if !defined(__CUDA_ARCH__)
// Host fmods whose cost does not depend on the values: branch-free, so GCC vectorizes them
// across a pack, and special values are ordinary lanes. Shared facts:
// - rn(p) = (p + 1.5 * 2^23) - 1.5 * 2^23 (2^52 in double) rounds p to a nearest integer for
//   |p| < 2^22 (2^51): the sum lies where the ulp is 1, so it rounds once and the subtraction
//   is exact. (A vector trunc or floor needs -fno-trapping-math in GCC 12.) If p is within
//   e < 1/2 of x, rn(p) is n = floor(x) or n + 1: p > n - 1/2 and p < n + 3/2.
// - With q = n or n + 1, r = A - q B lies in [-B, B); where it is representable one fma (or
//   an exact product) gives it exactly, and r < 0 (never -0: an exact zero rounds to +0)
//   gets B added, exactly, giving fmod(A, B) for A, B >= 0. The sign bit of r is the mask.
// - No operation sees a subnormal float: a multiply or divide with one takes a microcode
//   assist on Intel cores (~150 cycles, 40x a normal lane).

// fmod of two 16-bit float values (float16 or bfloat16, as floats), exactly, in float, for
// every float16 pair and every bfloat16 pair that bf16_far_host leaves (bf16_fmod.h): with
// B = |b| and A = |a|, B normal and below 2^101 and A / B < 2^39 (b zero, inf or NaN below).
// With e(x) the exponent of x, an operand of at most 11 significant bits (float16's
// subnormals too) and x 2^20 are multiples of u(x) = 2^(e(x) - 10), and for x >= y u(y)
// divides u(x). x = A / B < 2^39; inv = 1 / B (one rounding, normal: 2^-101 < inv <= 2^126).
// Step 1 reduces modulo Bs = B 2^20 (exact), with inv1 = inv 2^-20 (exact): p1 = A inv1 is
// within 2^-22.9 x1 < 0.13 of x1 = A / Bs < 2^20, so q1 = rn(p1) is n1 or n1 + 1 and
// r1 = A - q1 Bs is in [-Bs, Bs). It is exact: for n1 >= 1, A >= Bs, both are multiples of
// u(Bs) and |r1| <= Bs < 2^11 u(Bs); for n1 = 0, q1 = 1 needs x1 > 0.37, so u(A) >= u(Bs) / 4
// and |r1| < 2^13 min(u(A), u(Bs)). r1 = A - k Bs (k an integer) has A's remainder modulo B
// and |r1 / B| <= 2^20; a negative r1 goes to step 2 as it is (rn covers negative p).
// Step 2: p = r1 inv is within 0.13 of x = r1 / B, q = rn(p) is n or n + 1 and r = r1 - q B
// is in [-B, B). It is exact: where q1 = 1 or A >= B, r1 is a multiple of u(B) (u(Bs) and,
// by the above, u(A) are), and so is r, with |r| <= B < 2^11 u(B); else r1 = A < B, and q = 1
// needs A > 0.37 B, so u(A) >= u(B) / 4 and |r| < 2^13 u(A).
// No subnormal for float16 (B >= 2^-24, A <= 65504, a nonzero A >= 2^-24): p1, p, r1 and r
// are zero or above 2^-61. A bfloat16 pair with A / B below 2^-100 or B below 2^-100 may form
// a subnormal on the way, exactly still (a p1 or p below 1/2 gives q = 0 whatever its
// rounding, and a remainder is A or a multiple of u(B) / 4 >= 2^-138), at the price of
// Intel's assist in such rare lanes.
// Specials: b = 0 gives inv = inf and r1 = fma(-inf or NaN, 0, A) = NaN; a = +-inf gives
// r1 = inf - inf = NaN; b = +-inf gives inv = 0, q1 = 0 and r1 = 0 * inf = NaN, and a finite
// a then takes A by a mask (fmod(a, inf) = a); NaN stays NaN. Quotients up to 2^39 cost what
// narrow ones do. tests/test_remainder_cpu.py runs every float16 dividend against every 61st
// divisor, every bfloat16 dividend against divisors across the range, and the bfloat16
// range's edges on both sides, both conventions.
SW_INLINE float fmod_short(float a, float b) {
  const u32 iA = bit_cast<u32>(a) & 0x7fffffffu, iB = bit_cast<u32>(b) & 0x7fffffffu;
  const float A = bit_cast<float>(iA), B = bit_cast<float>(iB);
  const float inv = 1.0f / B, Bs = B * 0x1p20f, inv1 = inv * 0x1p-20f;
  const float r1 = fmaf(-((A * inv1 + 0x1.8p23f) - 0x1.8p23f), Bs, A);
  const float r = fmaf(-((r1 * inv + 0x1.8p23f) - 0x1.8p23f), B, r1);
  const u32 m = bit_cast<u32>(r + bit_cast<float>(iB & (u32)((i32)bit_cast<u32>(r) >> 31)));
  const u32 keep = (u32)0 - (u32)((iB == 0x7f800000u) & (iA < 0x7f800000u));   // b = +-inf
  return bit_cast<float>((m & ~keep) | (iA & keep) | (bit_cast<u32>(a) & 0x80000000u));
}

// fmod of two floats (float32 or bfloat16 values) in double, exactly where the quotient is
// below 2^50, and `slow` set where it is not. Doubles hold every float as a normal number,
// so subnormal operands cost nothing extra. d = A / B is within 2^-53 d of x < 2^50 (< 1/8),
// q = rn(d) is n or n + 1, and r = fma(-q, B, A) is exact: for A >= B both are multiples of
// B's 24-bit grid and |r| < B; for A < B, q = 1 needs d >= 1/2, so A >= B / 2 (Sterbenz).
// b = +-inf: d = 0 (q = 0), and the fma takes Bc = 2^200 in place of inf (0 * inf is NaN),
// so r = A. b = 0 or a = +-inf: d = inf or NaN, q = NaN (inf - inf) and r is NaN; NaN stays
// NaN. Only finite quotients of 2^50 and more set `slow` (fmod_double_steps then).
SW_INLINE float fmod_double(float a, float b, FastFlag& slow) {
  const double A = fabsf(a), B = fabsf(b);
  const u64 inf = 0ull - (u64)(bit_cast<u64>(B) == 0x7ff0000000000000ull);
  const double Bc = bit_cast<double>((bit_cast<u64>(B) & ~inf) | (0x4c70000000000000ull & inf));
  const double d = A / B;
  slow |= (FastFlag)((d >= 0x1p50) & (d < __builtin_inf()));
  const double r = fma(-((d + 0x1.8p52) - 0x1.8p52), Bc, A);
  const double m = r + bit_cast<double>(bit_cast<u64>(Bc) & (u64)((i64)bit_cast<u64>(r) >> 63));
  return bit_cast<float>(bit_cast<u32>((float)m) | (bit_cast<u32>(a) & 0x80000000u));
}

// fmod of any two floats, exactly, in steps of fmod_double's form, a pack's lanes in step
// for as many steps as its widest gap needs (no branch within a step). With G = eA - eB (the
// exponents), step i reduces A modulo Bs = B 2^k, k = max(0, G - 49 i) (exact: the exponent's
// bits), with is = inv 2^-k (inv = 1 / B, one rounding; is >= 2^-355, normal):
// q = rn(A is), A = A - q Bs. The schedule depends on G only, so each step's Bs and is are
// ready before its A (a short dependency chain: the steps take twice as long with k from each
// A's own exponent). Invariant: before step i, |A| <= B 2^k' with k' the previous step's k
// (A's own 2^(eA+1) for the first) and A a multiple of the 24-bit grid of B 2^k'. So
// |A / Bs| <= 2^(k' - k + 1) <= 2^50, A is is within 2^-51.9 of it (< 0.27), q = rn(A is) is
// n or n + 1 (rn covers a negative A), and the new A is in [-Bs, Bs) on Bs's grid: exact, in
// one fma (for |A| < B, q = +-1 needs |A| >= B / 2 as in fmod_double). The pack takes
// max(1, ceil(max G / 49)) steps (G <= 276, 2^127 over 2^-149: at most 6; one element takes
// 6), so its last step has
// k = 0 in every lane and leaves A in [-B, B); B added to a negative A gives fmod(|a|, |b|).
// Specials run on stand-ins (A = 0, B = 1) and take their result at the end: a for b = +-inf
// and a finite, else NaN for a = +-inf, b = 0 or NaN. A pack of huge quotients (to 2^60)
// takes 2 steps where the fixed six took 6.
template <int P> SW_INLINE void fmod_double_steps_form(float* y, const float* a, const float* b) {
  const u64 top = 0x7ff0000000000000ull;
  double A[P];
  u64 iB[P], iinv[P], special[P], keep[P];
  i64 G[P], gmax = 0;
  SW_SIMD_MAX(gmax)
  for (int e = 0; e < P; ++e) {
    const u64 iA = bit_cast<u64>((double)fabsf(a[e])), iB0 = bit_cast<u64>((double)fabsf(b[e]));
    special[e] = 0ull - (u64)((iA >= top) | (iB0 - 1 >= top - 1));   // A inf/NaN; B 0, inf, NaN
    keep[e] = 0ull - (u64)((iA < top) & (iB0 == top));              // b = +-inf, a finite
    iB[e] = (iB0 & ~special[e]) | (0x3ff0000000000000ull & special[e]);
    iinv[e] = bit_cast<u64>(1.0 / bit_cast<double>(iB[e]));
    A[e] = bit_cast<double>(iA & ~special[e]);
    G[e] = (i64)(bit_cast<u64>(A[e]) >> 52) - (i64)(iB[e] >> 52);
    gmax = G[e] > gmax ? G[e] : gmax;
  }
  // one element takes all six (a constant: branch-free, so a caller's loop over elements
  // vectorizes; the exact form of a kernel without a fast path, such as a strided output's)
  const i64 steps = P == 1 ? 6 : gmax > 49 ? (gmax + 48) / 49 : 1;
  for (i64 step = 1; step <= steps; ++step) {
    SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) {
      i64 k = G[e] - 49 * step;
      k &= ~(k >> 63);
      const double Bs = bit_cast<double>(iB[e] + ((u64)k << 52));
      const double is = bit_cast<double>(iinv[e] - ((u64)k << 52));
      A[e] = fma(-((A[e] * is + 0x1.8p52) - 0x1.8p52), Bs, A[e]);
    }
  }
  SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) {
    const double r = A[e] + bit_cast<double>(iB[e] & (u64)((i64)bit_cast<u64>(A[e]) >> 63));
    const u32 m = bit_cast<u32>((float)r), sp = (u32)special[e], kp = (u32)keep[e];
    const u32 res = (m & ~sp) | (0x7fc00000u & sp & ~kp) | ((bit_cast<u32>(a[e]) & 0x7fffffffu) & kp);
    y[e] = bit_cast<float>(res | (bit_cast<u32>(a[e]) & 0x80000000u));
  }
}
// A flagged pack's exact form, not inlined: inline, the kernels kept its operands in
// registers along the fast path and spilled (float32 remainder's unflagged packs 4-10%
// slower). One element stays inline (as a call, a strided output took 2.7x as long).
// Being a call anyway, it is compiled once for the host's pack widths into the support
// library (backends/_support.py) where the build names one: SW_SUPPORT, an inline namespace
// of that library's own, so a kernel binds only to the library of its own headers and flags.
// Kernels then skip a third of their build (float32 remainder 363 -> 255 ms); without one
// (no disk cache) each kernel instantiates its own. Exported: the library hides the rest.
#if defined(SW_SUPPORT)
#define SW_SUPPORT_WIDTHS(X) X(1) X(2) X(4) X(8) X(16) X(32) X(64)
inline namespace SW_SUPPORT {
#endif
template <int P> SW_NOINLINE __attribute__((visibility("default"))) void fmod_double_steps_pack(float* y, const float* a, const float* b) {
  fmod_double_steps_form<P>(y, a, b);
}
#if defined(SW_SUPPORT)
#define SW_EXTERN_PACK(P) extern template void fmod_double_steps_pack<P>(float*, const float*, const float*);
SW_SUPPORT_WIDTHS(SW_EXTERN_PACK)
#undef SW_EXTERN_PACK
}  // inline namespace SW_SUPPORT
#endif
SW_INLINE float fmod_double_steps(float a, float b) {
  float y;
  fmod_double_steps_form<1>(&y, &a, &b);
  return y;
}

// fmod_fast (double, above) with special values as ordinary lanes: they run on stand-ins
// (0 by 1) and take their fmod by masks: a for a finite a and b = +-inf, else NaN (a = +-inf
// or NaN, b = 0 or NaN). Only quotients of 2^52 and more set `slow`.
SW_INLINE double fmod_fast_any(double a, double b, FastFlag& slow) {
  const u64 top = 0x7ff0000000000000ull, ua = bit_cast<u64>(a) & ~(1ull << 63), ub = bit_cast<u64>(b) & ~(1ull << 63);
  const u64 special = 0ull - (u64)((ua >= top) | (ub - 1 >= top - 1));   // a inf/NaN; b 0, inf, NaN
  const u64 keep = 0ull - (u64)((ua < top) & (ub == top));              // b = +-inf, a finite
  const double m = fmod_fast(bit_cast<double>(bit_cast<u64>(a) & ~special),
                             bit_cast<double>((bit_cast<u64>(b) & ~special) | (0x3ff0000000000000ull & special)), slow);
  return bit_cast<double>((bit_cast<u64>(m) & ~special) | (bit_cast<u64>(a) & keep) |
                          (0x7ff8000000000000ull & special & ~keep));
}
#endif

template <class M> struct Bits;
template <> struct Bits<float> { typedef u32 type; };
template <> struct Bits<double> { typedef u64 type; };

template <class T, Convention C>
struct RemainderFunctor {
  typedef typename OpMath<T>::type M;
  SW_HOST_DEVICE SW_INLINE M operator()(M a, M b) const {
#if defined(__CUDA_ARCH__)
    // A pack that the fast path leaves (float32: quotients of 2^60 and more, extreme
    // divisors) is redone in fmod_wide for every lane, which is exact for all.
    if constexpr (sizeof(M) == 4) return adjust(fmod_wide(a, b), b);
#endif
#if !defined(__CUDA_ARCH__)
    // The host's lanes that `fast` leaves (quotients of 2^50 and more), vectorized too.
    if constexpr (sizeof(M) == 4) return adjust(fmod_double_steps(a, b), b);
#endif
    M m = sw_fmod(a, b);
    return adjust(m, b);
  }
#if defined(__CUDA_ARCH__)
  // float: flags first (remainder_wide), then the fast path without its checks; a warp whose
  // quotients are all below 2^40 takes it without step 0 (ShortForm: 5 instructions an
  // element fewer), one with any lane from 2^40 to 2^60 with step 0
  enum { kFlagsFirst = sizeof(M) == 4, kShortForm = sizeof(M) == 4 };
  SW_DEVICE SW_INLINE static Divisor<M> prepare(M b) { return Divisor<M>::make(b); }
  SW_DEVICE SW_INLINE static bool wide(M a, M b) { return remainder_wide<true>(a, b); }
  SW_DEVICE SW_INLINE static bool wide(M a, const Divisor<M>& d) { return remainder_wide<true>(a, d); }
  SW_DEVICE SW_INLINE static bool far(M a, M b) { return remainder_wide<false>(a, b); }
  SW_DEVICE SW_INLINE static bool far(M a, const Divisor<M>& d) { return remainder_wide<false>(a, d); }
  SW_DEVICE SW_INLINE static M fast_short(M a, M b, FastFlag& slow) { return remainder_fast<C, false, false>(a, b, slow); }
  SW_DEVICE SW_INLINE static M fast_short(M a, const Divisor<M>& d, FastFlag& slow) {
    return remainder_fast<C, false, false>(a, d, slow);
  }
  SW_DEVICE SW_INLINE static M fast(M a, M b, FastFlag& slow) {
    if constexpr (sizeof(M) == 4) return remainder_fast<C, true, false>(a, b, slow);
    else return fast(a, prepare(b), slow);
  }
  SW_DEVICE SW_INLINE static M fast(M a, const Divisor<M>& d, FastFlag& slow) {
    if constexpr (sizeof(M) == 4) return remainder_fast<C, true, false>(a, d, slow);
    else return adjust(fmod_fast(a, d, slow), d.b);
  }
#else
  enum { kExactPack = 1 };
  SW_INLINE static M fast(M a, M b, FastFlag& slow) {
    if constexpr (sizeof(M) == 4) return adjust(fmod_double(a, b, slow), b);
    else return adjust(fmod_fast_any(a, b, slow), b);
  }
  template <int P> SW_INLINE static void exact(M* y, const M* a, const M* b) {
    if constexpr (sizeof(M) == 4) fmod_double_steps_pack<P>(y, a, b);
    else fmod_wide_pack<P>(y, a, b);
    SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = adjust(y[e], b[e]);
  }
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
    // unpredictable, and GCC turns float compares back into branches.
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
  // `prepare` and `fast` are float's, whose fast path is exact for every float, so for 16-bit
  // operands too (the host's 16-bit floats have their own, fmod_short, below). On the device both skip
  // step 0: float16's quotients are below 2^40, so its fast path covers every pair;
  // bfloat16's contiguous kernel is bound by instructions, and step 0 cost 219 against 190 us
  // at 2^27 (0.89x torch eager), while its quotients past 2^40 take bf16_fmod, flags first.
#if defined(__CUDA_ARCH__)
  // float16 never leaves its fast path (above); float's short form is no shorter than their
  // fast path, so they do not inherit it (ShortForm)
  enum { kFlagsFirst = kBf16, kShortForm = 0 };
  SW_DEVICE SW_INLINE float operator()(float a, float b) const {
    // float16's packs are redone only by its two-lane form (Fast2), for quotients past 500:
    // the fast path serves them. bfloat16's exact form is the table, bf16_fmod, in every lane
    // of a warp that has a flagged lane (FlagsFirst): branch-free, so a pack's lanes overlap.
    // Per lane, step 0's range first and the fast path with step 0 below 2^60, it read 1.1x
    // faster on huge quotients (quotients to 2^60, no lane past it) and 1.2-1.4x slower on
    // subnormal divisors and near the maximum (docs/decisions.md).
    if constexpr (kBf16) return RemainderFunctor<float, C>::adjust(bf16_fmod(a, b), b);
    FastFlag slow = false;
    const float r = remainder_fast<C, false>(a, b, slow);
    return slow ? RemainderFunctor<float, C>::adjust(fmod_wide_call(a, b), b) : r;
  }
  // Both run without the checks: bfloat16 because its flags come first; float16 because
  // they cannot fire for its values. Every float16 |b| is 0, inf, NaN or in [2^-24, 65504]
  // (never `wide`), and A / Bs <= 65504 / 2^-4 = 2^20 - 512, so A rcp1 < 2^20 - 511 and
  // q1 < 2^20. Checked, they cost float16's kernels ~5 instructions an element and kept the
  // exact form's code in them (tiled 4776 -> 1672 instructions, rows/dense 1344 -> 464, SASS).
  SW_DEVICE SW_INLINE static bool wide(float a, float b) { return remainder_wide<false>(a, b); }
  SW_DEVICE SW_INLINE static bool wide(float a, const Divisor<float>& d) {
    return remainder_wide<false>(a, d);
  }
  SW_DEVICE SW_INLINE static float fast(float a, float b, FastFlag& slow) {
    return remainder_fast<C, false, false>(a, b, slow);
  }
  SW_DEVICE SW_INLINE static float fast(float a, const Divisor<float>& d, FastFlag& slow) {
    return remainder_fast<C, false, false>(a, d, slow);
  }
#else
  // On the host both take fmod_short, 8 lanes a vector: float16 for every pair (it never
  // sets `slow`); bfloat16 where bf16_far_host leaves the pair, asked first, and
  // bf16_fmod_host for a flagged pack (its quotients reach 2^261), in a vector loop too.
  enum { kVectorExact = 1, kExactPack = 0, kFlagsFirst = kBf16 };
  SW_INLINE float operator()(float a, float b) const {
    if constexpr (kBf16) return RemainderFunctor<float, C>::adjust(bf16_fmod_host(a, b), b);
    else return RemainderFunctor<float, C>::adjust(fmod_short(a, b), b);
  }
  SW_INLINE static bool wide(float a, float b) { return bf16_far_host(a, b); }
  SW_INLINE static float fast(float a, float b, FastFlag&) {
    return RemainderFunctor<float, C>::adjust(fmod_short(a, b), b);
  }
#endif
};
template <Convention C> struct RemainderFunctor<half, C> : ShortRemainderFunctor<false, C> {};
template <Convention C> struct RemainderFunctor<bfloat16, C> : ShortRemainderFunctor<true, C> {};

// Fast2<F, S>: a two-lane fast path of F on storage S (half2 / bfloat162) for a divisor pair
// prepared once (a kernel's shared divisor row, a uniform divisor, as HasPrepare's):
// `prepare(Pair<S> b)` -> D. The kernel first runs `begin(Pair<S> a, D, Flag& flag)` -> Part
// over the pack (the check, and what of the form the check reads), and where `slow(flag)`
// holds in no lane of the thread (of the warp with kVote, as FlagsFirst), `finish(Pair<S> a,
// D, Part)`, exact in every lane the check passes; otherwise the pack is redone element by
// element. Where `begin` is the check alone, data past the form costs its check, not the form
// too. The primary template is off; its D is the pair itself so a kernel may hold one
// regardless.
template <class F, class S> struct Fast2 {
  enum { value = 0, kVote = 0 };
  typedef Pair<S> D;
  SW_HOST_DEVICE SW_INLINE static D prepare(Pair<S> b) { return b; }
};
template <int P, class F, class S> struct Fast2Pack : Fast2<F, S> {
  enum { value = P % 2 == 0 && Fast2<F, S>::value };
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// The float16 remainder two lanes per instruction, for a prepared divisor pair
// (outer float16 +25%). With x = a / b and n = floor(x): rcp = sign(b) * 1/|b| rounded toward zero to half,
// from rcp.approx scaled down by 1 - 2^-22 (at most 1/|b|, within 2^-21 below), and NaN
// where it is not in (0, 65504) (b zero, inf, NaN or |b| <= 2^-16). So w = a * rcp lies between
// 0 and x, within |x| (2^-10 + 2^-21) + |a| 2^-24 of it (the last term: a subnormal rcp).
// One fma rounds w + 1536 to an integer (the ulp there is 1): q = rn(w). For |q| <= 500 the
// error is below 1/2, so q = n or n + 1, and r = a - q b is exact in one fma: for |a| >= |b|
// it is a multiple of ulp(b) below |b| in magnitude; for |a| < |b| with a and b of one sign,
// q = 1 needs x >= w >= 1/2 (Sterbenz); with opposite signs r is a or the one rounding of
// a + b, which equals torch's float a + b rounded to half (the float sum is exact unless the
// exponents differ by more than 13, and then both round to b). r against b's sign gets b
// added (exact, or that same rounding of a + b). A zero result is then +0 in every case and
// takes a's sign (torch) or b's (NumPy). `begin` computes the pack's results and keeps the
// largest |q| of each lane: |q| > 500 and NaN or inf operands (a NaN q, which max.NaN keeps)
// send the pack to the element form, each thread's own (docs/decisions.md: checking q before
// the rest of the form, and the warp's vote, measured and not kept). (In bfloat16 arithmetic
// alone the bound would be |q| <= 56; bfloat16's form, below, takes its quotient from float.)
// Every float16 pair runs through it in tests/test_cuda.py (test_every_16bit_pair,
// row_divisors), and tests/test_remainder_cpu.py models it lane by lane.
template <Convention C> struct Fast2<RemainderFunctor<half, C>, half> {
  enum { value = 1, kVote = 0 };
  struct D { u32 b, rcp, sign; };
  typedef u32 Flag;   // the largest |q| so far, in each lane
  typedef u32 Part;   // the result pair
  SW_DEVICE SW_INLINE static D prepare(Pair<half> b) {
    const u32 x = bit_cast<u32>(b), sign = x & 0x80008000u;
    u32 z, bad;
    asm("cvt.rz.f16x2.f32 %0, %1, %2;" : "=r"(z) : "f"(below_reciprocal(b.hi)), "f"(below_reciprocal(b.lo)));
    asm("{.reg .b32 z, l; set.eq.u32.f16x2 z, %1, %2; set.geu.u32.f16x2 l, %1, %3; or.b32 %0, z, l;}"
        : "=r"(bad) : "r"(z), "r"(0u), "r"(0x7bff7bffu));
    return {x, z | (bad & 0x7fff7fffu) | sign, sign};
  }
  SW_DEVICE SW_INLINE static Part begin(Pair<half> a2, const D& d, Flag& worst) {
    const u32 a = bit_cast<u32>(a2);
    const u32 nq = fma2(fma2(a, d.rcp, 0x66006600u), 0xbc00bc00u, 0x66006600u);   // -q
    asm("{.reg .b32 t; abs.f16x2 t, %2; max.NaN.f16x2 %0, %1, t;}" : "=r"(worst) : "r"(worst), "r"(nq));
    u32 r = fma2(nq, d.b, a), neg, zero;
    asm("set.lt.f16x2.f16x2 %0, %1, %2;" : "=r"(neg) : "r"(r ^ d.sign), "r"(0u));   // 1 or 0
    r = fma2(neg, d.b, r);
    if (C == kNumpy) return r | d.sign;
    asm("set.eq.u32.f16x2 %0, %1, %2;" : "=r"(zero) : "r"(r), "r"(0u));
    return r | (zero & a & 0x80008000u);
  }
  SW_DEVICE SW_INLINE static Pair<half> finish(Pair<half>, const D&, Part r) { return bit_cast<Pair<half> >(r); }
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

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The bfloat16 remainder two lanes per instruction, for a prepared divisor pair: the quotient
// from float, the rest in bfloat16 pair arithmetic, where an fma rounds once. With x = a / b,
// w = a rcp (rcp.approx, within 2^-22 of 1 / b) is within |x| 2^-21 of x, and one fma adding
// 1.5 * 2^23 (where the ulp is 1) rounds it to an integer, taken back out exactly: q = rn(w)
// is floor(x) or ceil(x) for |x| < 2^21. The check first (`begin`) passes a lane only
// where |a| < L = 2^8 |b|, so |q| <= 256, exact in bfloat16, and r = a - q b is exact in one
// bfloat16 fma: for |a| >= |b| a multiple of ulp(b) below |b| in magnitude (8 bits); for
// |a| < |b|, q = 0 (r = a) or q = +-1, which needs |w| >= 1/2, so |a| >= |b| / 2 (Sterbenz).
// r lies in (-|b|, |b|), congruent to a modulo b; against b's sign it gets b added by one
// fma: exact, or for |a| < |b| the one rounding of a + b, which is torch's (float's a + b
// rounded to bfloat16: the float sum is exact unless |a| < 2^-15 |b|, and then both give b).
// A zero is +0 unless a is -0 and b negative, and takes a's sign (torch) or b's (NumPy), as
// float16's form. The check flags a NaN or infinite a (A >= L, unordered included), and
// through L = NaN a divisor that is 0, subnormal (rcp.approx.ftz gives inf), at least 2^120
// (L would overflow), inf or NaN. tests/test_remainder_cpu.py models the argument lane by
// lane with the reciprocal anywhere within its ulp, and tests/test_cuda.py runs every
// bfloat16 pair through it (test_every_16bit_pair, row_divisors).
template <Convention C> struct Fast2<RemainderFunctor<bfloat16, C>, bfloat16> {
  enum { value = 1, kVote = 1 };
  struct D { u32 b, lim; float rcp_lo, rcp_hi; };
  typedef u32 Flag;   // the lanes flagged so far
  typedef char Part;  // nothing: the check alone comes first
  SW_DEVICE SW_INLINE static D prepare(Pair<bfloat16> b) {
    const u32 x = bit_cast<u32>(b);
    const float lo = __uint_as_float(x << 16), hi = __uint_as_float(x & 0xffff0000u);
    u32 lim;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(lim) : "f"(limit(hi)), "f"(limit(lo)));
    return {x, lim, rcp_approx(lo), rcp_approx(hi)};
  }
  SW_DEVICE SW_INLINE static Part begin(Pair<bfloat16> a2, const D& d, Flag& flag) {
    u32 ge;
    asm("set.geu.u32.bf16x2 %0, %1, %2;" : "=r"(ge) : "r"(bit_cast<u32>(a2) & 0x7fff7fffu), "r"(d.lim));
    flag |= ge;
    return 0;
  }
  SW_DEVICE SW_INLINE static Pair<bfloat16> finish(Pair<bfloat16> a2, const D& d, Part) {
    const u32 a = bit_cast<u32>(a2), sign = d.b & 0x80008000u;
    const float m = 0x1.8p23f;
    const float nq_lo = m - fmaf(__uint_as_float(a << 16), d.rcp_lo, m),
                nq_hi = m - fmaf(__uint_as_float(a & 0xffff0000u), d.rcp_hi, m);   // -q
    u32 nq, neg, zero;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(nq) : "f"(nq_hi), "f"(nq_lo));
    u32 r = fma2(nq, d.b, a);
    asm("set.lt.bf16x2.bf16x2 %0, %1, %2;" : "=r"(neg) : "r"(r ^ sign), "r"(0u));   // 1 or 0
    r = fma2(neg, d.b, r);
    if (C == kNumpy) return bit_cast<Pair<bfloat16> >(r | sign);
    asm("set.eq.u32.bf16x2 %0, %1, %2;" : "=r"(zero) : "r"(r), "r"(0u));
    return bit_cast<Pair<bfloat16> >(r | (zero & a & 0x80008000u));
  }
  SW_DEVICE SW_INLINE static bool slow(Flag flag) { return flag != 0; }
  SW_DEVICE SW_INLINE static float limit(float b) {
    const float B = fabsf(b);
    return B >= 0x1p-126f && B < 0x1p120f ? B * 0x1p8f : __int_as_float(0x7fffffff);
  }
  SW_DEVICE SW_INLINE static u32 fma2(u32 a, u32 b, u32 c) {
    u32 r;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
};
#endif

// Wide2<F, S>: FlagsFirst's check two lanes at a time on storage S, for dense operands (the
// kernel's pairs, as Apply2's): `wide(Pair<S> a, Pair<S> b, Flag& flag)` accumulates, and
// `slow(flag)` says whether some lane wants F's exact form. It must flag every lane F::wide
// flags and may flag others (they only take the exact form). The primary template is off.
template <class F, class S> struct Wide2 { enum { value = 0 }; };
template <int P, class F, class S> struct Wide2Pack : Wide2<F, S> {
  enum { value = P % 2 == 0 && Wide2<F, S>::value };
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// bfloat16 remainder_wide (kStep0 false) on bfloat162, in 10 instructions a pair where the
// scalar check takes 8 a lane (contiguous bfloat16 is bound by instructions). On the bits
// A = |a|, B = |b| (15 bits a lane; adding to a lane never carries into the next), a lane is
// flagged where A >= L' and B > 0 as bfloat16 compares (false for NaN), with A' = A + A * 0
// (NaN for an inf or NaN a) and L' = L + B * 0 (NaN for an inf or NaN b), L the bits
// B + 39 * 128: B 2^39 for a normal B (inf or NaN bits, never reached by a finite A, where it
// overflows, as the float product does), and its sign bit set (a negative L: every lane)
// where B < 2^-126 (the bits below 0x80) or B >= 2^90 (0x6c80 + 0x1380 carries into the
// sign bit). So it flags exactly what remainder_wide<false> flags, plus the finite dividends
// with B in [2^90, 2^100]. tests/test_remainder_cpu.py checks it against the scalar check on
// every pair of magnitudes, and tests/test_cuda.py runs every bfloat16 pair on the device.
template <Convention C> struct Wide2<RemainderFunctor<bfloat16, C>, bfloat16> {
  enum { value = 1 };
  typedef u32 Flag;
  SW_DEVICE SW_INLINE static void wide(Pair<bfloat16> a2, Pair<bfloat16> b2, Flag& flag) {
    const u32 A = bit_cast<u32>(a2) & 0x7fff7fffu, B = bit_cast<u32>(b2) & 0x7fff7fffu;
    const u32 L = (B + 0x13801380u) | (~(B + 0x7f807f80u) & 0x80008000u);
    u32 lim, mag, ge, pos;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(lim) : "r"(B), "r"(0u), "r"(L));
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(mag) : "r"(A), "r"(0u), "r"(A));
    asm("set.ge.u32.bf16x2 %0, %1, %2;" : "=r"(ge) : "r"(mag), "r"(lim));
    asm("set.gt.u32.bf16x2 %0, %1, %2;" : "=r"(pos) : "r"(B), "r"(0u));
    flag |= ge & pos;
  }
  SW_DEVICE SW_INLINE static bool slow(Flag flag) { return flag != 0; }
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
// (a branch per element serializes them): magnitudes in 32 unsigned bits (|INT_MIN| fits), a zero divisor
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

#if !defined(__CUDA_ARCH__)
// int32 division on the host, shared by remainder, fmod and floor_divide: a double division
// beats idiv and vectorizes. It is exact: for |a| < 2^31 the quotient's rounding error
// (2^-53 |a / b| < 1 / |b|) is below its distance to any other integer, so truncating it
// gives q = trunc(a / b) exactly (2^31 for INT_MIN / -1), and r = a - q b is formed exactly
// in double (|q b| <= |a|: integers below 2^32), |r| < |b|, so it converts to int32 (0 for
// b = -1: INT_MIN % -1 is never an idiv). q stays a double: only int32 <-> double
// conversions are vector instructions in AVX2 (int64 ones need AVX-512DQ; through int64 the
// form ran scalar on a Zen3 host, 5.1-5.6 ms at 2^20 against torch CPU's 2.4-2.9). A zero
// divisor divides by 1, leaving r = 0; floor_divide masks its quotient. The 1 comes from bits,
// not a compare: element by element GCC made `b | (b == 0)` a `sete` into the low byte of a
// register the previous element's last conversion wrote, a false dependency that chained the
// elements (uint8 floor_divide in rows of 15, one Zen 4 thread, 16.6 -> 3.8-4.0 ms at 2^20);
// `b == 0 ? 1 : b` broke it but cost the vector packs a blend (int16 fmod 608 -> 772 us).
struct DivMod32 { double q; i32 r; };
SW_INLINE DivMod32 int32_divide_host(i32 a, i32 b) {
  const u32 u = (u32)b;   // b, or 1 for 0: ~u & (u - 1) has its top bit set for u = 0 alone
  const double x = (double)a, d = (double)(i32)(u | ((~u & (u - 1)) >> 31));
  const double q = __builtin_trunc(x / d);
  return {q, (i32)(x - q * d)};
}
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
    // Masks, not branches: random signs make the adjustment unpredictable. b = 0 and -1
    // leave r = 0 (int32_divide_host), and so the result 0, NumPy's and torch's.
    const i32 r = int32_divide_host(a, b).r;
    return r + (b & -(i32)((r != 0) & ((r ^ b) < 0)));
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

// int64 division on the GPU without 64-bit integer division (a long subroutine, 2x slower
// than memory for divisors of 2^61 and more), the floor remainder and quotient that
// remainder, fmod and floor_divide take: two fixed sequences, a long form exact for every
// divisor and a short form exact below 2^42, chosen per warp, so that a warp whose divisors
// mix magnitudes runs one form (chosen per lane, a warp that mixed them ran both: outer
// products of negative divisors of every size at 455 us against 274 for small ones, H200,
// 2^27). `slow` is never set. A zero divisor divides by 1 (remainder 0).
// inv = 1/b (rcp_newton of V = |b|, b's sign) is within 2^-43.3 of it (relative).
// Step 1: x = a * inv (a and the product rounded once each) is a / b (1 + e), |e| <= 2^-43.2,
// and q0 = trunc(x) (saturating: 2^63 - 1 for a = -2^63, b = -1) is of x's sign with
// |q0| <= |x|: so q0 b has a's sign and |q0 b| <= |a| (1 + 2^-43.2), and r = a - q0 b lies
// between a and -a 2^-43.2, an int64 (exact in wrapping arithmetic), with
// X = r / b = a / b - q0 below 1 + |a / b| 2^-43.2 <= 1 + 2^19.8 / V in magnitude.
// Step 2: X = n + f with n = floor(X) and f a multiple of 1/V in [0, 1 - 1/V].
// Short form (V < 2^42): r is exact (|r| < V + 2^19.8), and y = fma(r, inv, |inv| / 2) lies
// within 2^-23.5 / V + 2^-43.3 (inv's error on |X|) + 2^-33.2 / V + 2^-53 (half's and y's
// roundings) of X + 1 / (2V): above X and below n + 1, so floor(y) = n and r - n b is the
// floor remainder R = f b, b's sign or zero.
// Long form (every V): r as a double is exact or rounded once (2^-53), and
// y = fma(r, inv, 2^-20) lies within 2^-23.4 of X + 2^-20 (inv's error on |X|: 2^-23.5; r's
// and y's roundings: 2^-33), so in (X, X + 1): floor(y) is n or n + 1, and n where f = 0.
// m = r - floor(y) b is then R (|R| < V), or R - b, nonzero and of the other sign, with
// |R - b| <= V and below 2^63 (f > 0 there); adding b to it leaves R. So b is added where
// b > 0 and m < 0, or b < 0 and m > 0: where (m + s) ^ s is negative, s = b >> 63 (all ones
// for b < 0, where (m - 1) ^ s is -m). That fix costs kernels that stream their inputs 2-14%
// on the H200, so the short form is taken wherever a warp allows it.
// The warp's choice is made where the divisor is prepared (Divisor<i64>::make, any_lane of
// V >= 2^42): a shared row's divisor is prepared once for many dividends. Against the long
// form alone, the streaming layouts gain up to 11% and outer products of large divisors
// lose 7-9% (13% with a vote in every division; docs/decisions.md). A lane's own divisor is
// among those voted on, so a lane takes the short form only where its V < 2^42.
// The GPU uses it as RemainderFunctor<i64>::fast (and ops.h FmodFunctor<i64> and
// FloorDivideFunctor<i64>), the divisor's part prepared (Divisor<i64>);
// tests/test_remainder_cpu.py checks both forms' argument as Python arithmetic (with
// rcp_newton's float reciprocal 2 ulp either way) and the host build against NumPy.
template <> struct Divisor<i64> {
  i64 b;            // 1 for a zero divisor
  double inv;       // ~1/b
  double half;      // |inv| / 2, the short form's offset
  bool zero;        // b = 0 (floor_divide's quotient is 0 there)
  bool big;         // the long form: |b| >= 2^42 in some lane of the warp (the host: this one)
  SW_HOST_DEVICE SW_INLINE static Divisor make(i64 b0) {
    const i64 b = b0 | (i64)(b0 == 0);
    const u64 V = b < 0 ? 0ull - (u64)b : (u64)b;
    const double r = rcp_newton((double)V);
    return {b, b < 0 ? -r : r, 0.5 * r, b0 == 0, any_lane(V >= (1ull << 42))};
  }
};
// The floor quotient beside the remainder: a = (q0 + q1) b + m, and the fix that adds b to m
// takes 1 off the quotient (wrapping: -2^63 // -1 is -2^63, NumPy's).
struct Int64DivMod { u64 q, m; };
SW_HOST_DEVICE SW_INLINE Int64DivMod int64_divmod_fast(i64 a, const Divisor<i64>& d) {
  const u64 q0 = (u64)trunc_i64((double)a * d.inv), r = (u64)a - q0 * (u64)d.b;
  if (!d.big) {
    const u64 q1 = (u64)floor_i64(fma((double)(i64)r, d.inv, d.half));
    return {q0 + q1, r - q1 * (u64)d.b};
  }
  const u64 q1 = (u64)floor_i64(fma((double)(i64)r, d.inv, 0x1p-20)), m = r - q1 * (u64)d.b;
  const u64 sb = (u64)(d.b >> 63);
  const u64 fix = (u64)((i64)((m + sb) ^ sb) >> 63);
  return {q0 + q1 + fix, m + ((u64)d.b & fix)};
}
SW_HOST_DEVICE SW_INLINE i64 int64_remainder_fast(i64 a, const Divisor<i64>& d, FastFlag&) {
  return (i64)int64_divmod_fast(a, d).m;
}
// fmod truncates: the floor remainder less b where it is nonzero and a's sign is not b's
// (0 for a zero divisor, as int_fmod).
SW_HOST_DEVICE SW_INLINE i64 int64_fmod_fast(i64 a, const Divisor<i64>& d) {
  const u64 m = int64_divmod_fast(a, d).m;
  return (i64)(m - ((u64)d.b & (0ull - (u64)((m != 0) & ((a ^ d.b) < 0)))));
}
// floor_divide: 0 for a zero divisor (NumPy's; int_floor_divide's)
SW_HOST_DEVICE SW_INLINE i64 int64_floor_divide_fast(i64 a, const Divisor<i64>& d) {
  return d.zero ? 0 : (i64)int64_divmod_fast(a, d).q;
}

enum Int64Op { kInt64Remainder, kInt64Fmod, kInt64FloorDivide };
#if defined(__CUDA_ARCH__)
// The device's part of the three int64 functors (the host's: Int64HostDivision below): the
// divisor prepared once (HasPrepare), with its warp's choice of form; `slow` is never set.
template <int kOp> struct Int64DeviceDivision {
  SW_DEVICE SW_INLINE static Divisor<i64> prepare(i64 b) { return Divisor<i64>::make(b); }
  SW_DEVICE SW_INLINE static i64 fast(i64 a, const Divisor<i64>& d, FastFlag& slow) {
    if constexpr (kOp == kInt64Remainder) return int64_remainder_fast(a, d, slow);
    else if constexpr (kOp == kInt64Fmod) return int64_fmod_fast(a, d);
    else return int64_floor_divide_fast(a, d);
  }
  SW_DEVICE SW_INLINE static i64 fast(i64 a, i64 b, FastFlag& slow) { return fast(a, prepare(b), slow); }
};
#endif

#if !defined(__CUDA_ARCH__)
// int64 division for the host's `omp simd` pack loop, for every b != 0, with every select
// written as masks. With U = |a| <= 2^63 and V = |b| < 2^62, the double quotient U * (1 / V)
// (four roundings: V, 1 / V, U, the product) is within U / V 2^-51 of U / V, and
// q0 = trunc of it: r = U - q0 V (exact in wrapping 64-bit arithmetic). For V < 2^50, q0 is
// within U / V 2^-51 + 1 of U / V, so |r| < U 2^-51 + V < 2^51: exact as a double, and a
// second quotient q1 = trunc(r / V), below 2^12 / V + 1 in magnitude and within 2^-39 of
// it, leaves r - q1 V in (-V, 2V). For V >= 2^50, U / V <= 2^13, so q0 is n - 1, n or n + 1
// (n = floor(U / V)), r is in [-V 2^-38, V (1 + 2^-38)] (an int64, as V < 2^62), r / V is
// below 1 + 2^-38 in magnitude and q1 (0, or 1 where r / V rounds to 1 or more) again leaves
// r - q1 V in (-V, 2V). One compare-and-add per side brings it into [0, V):
// U = Q V + R with Q = q0 + q1 - [r < 0] + [r >= V]. For V >= 2^62, U / V <= 2: two
// unsigned compare-and-subtracts give R and Q (those lanes divide by 1 in the double form).
// Conditional expressions and `&&` were if-converted by GCC 12 only in some layouts; where the
// operands come from a periodic or strided load they stayed branches ("control flow in loop"),
// the loop stayed scalar and lost 4-6x to idiv. So: |x| is (x ^ s) - s with s = x >> 63, and
// each correction is a mask. b = 0 divides by 1 in its lane, leaving R = 0 (the remainder and
// fmod of NumPy and torch) and Q masked to 0 (NumPy's floor_divide): a zero costs what any
// divisor does, and nothing sets `slow`. All arithmetic on possibly large values is unsigned.
// tests/test_remainder_cpu.py compares remainder with NumPy and with int64_remainder_fast,
// and fmod and floor_divide with NumPy, in every layout.
// The functors take this form where the CPU converts between int64 and double in vector
// registers (AVX-512DQ); elsewhere int64_divmod_50 below.
#if defined(__AVX512DQ__)
#define SW_HOST_INT64_DIVISION 1
#else
#define SW_HOST_INT64_DIVISION 0
#endif
struct DivMod64 { u64 Q, R, sa, sb; };
SW_INLINE DivMod64 int64_divmod_host(i64 a, i64 b) {
  const u64 sa = (u64)(a >> 63), sb = (u64)(b >> 63);
  const u64 U = ((u64)a ^ sa) - sa;
  const u64 V0 = ((u64)b ^ sb) - sb;
  const u64 zero = 0ull - (u64)(V0 == 0), big = 0ull - (u64)(V0 >= (1ull << 62));
  const u64 V = (V0 & ~(zero | big)) | (1ull & (zero | big));
  const double inv = 1.0 / (double)(i64)V;
  const u64 q0 = (u64)((double)U * inv);
  u64 r = U - q0 * V;
  const u64 q1 = (u64)(i64)((double)(i64)r * inv);
  r -= q1 * V;
  const u64 lo = (u64)((i64)r >> 63);              // r < 0: all ones
  r += V & lo;                                     // now in [0, 2V)
  const u64 hi = ~(u64)((i64)(r - V) >> 63);       // r >= V: all ones
  r -= V & hi;                                     // now in [0, V)
  const u64 c1 = 0ull - (u64)(U >= V0);            // V0 >= 2^62
  const u64 u1 = U - (V0 & c1);
  const u64 c2 = 0ull - (u64)(u1 >= V0);
  const u64 rb = u1 - (V0 & c2);
  return {(((q0 + q1 + lo - hi) & ~big) | ((0ull - c1 - c2) & big)) & ~zero, (r & ~big) | (rb & big), sa, sb};
}
// The same quotient and remainder without int64 <-> double conversion instructions, for the
// hosts that have none in vector registers (AVX2 alone, where GCC built them from scalar ones
// and the form above took 16.3-16.9 ms at 2^20 on one Zen3 core, twice idiv's time), for
// every dividend and V = |b| < 2^50. Every conversion is an offset: 2^52 + x is a double whose
// significand holds x < 2^52, so `x | bits(2^52)` reinterpreted, less 2^52, is x, and back the
// same way; U = |a| <= 2^63 converts as two exact doubles, H = Uh 2^32 - 2^52 and
// L = 2^52 + Ul (U = H + L). Then in double, V exact:
//   q = floor((H + L) / V), from (H + L) and 1 / V rounded: within 1 + (U / V) 2^-51.4 of
//   U / V, so r = U - q V is below V + 2^11.6 in magnitude. With p = q V rounded and
//   e = fma(q, V, -p) its exact error, r = ((H - p) + L) - e: each partial result is an
//   integer below 2^53 in magnitude (V < 2^50), so each operation is exact.
//   q2 = floor(fma(r, 1 / V, 1 / 2V)): r / V = n + f with f a multiple of 1 / V in
//   [0, 1 - 1 / V]; y is within (|r / V| + 1) 2^-52 < 1 / 2V of r / V + 1 / 2V for V < 2^50,
//   so above r / V and below n + 1: floor(y) = n, and R = fma(-q2, V, r) = r - n V is exact,
//   in [0, V). Q = q + q2 (q through 32-bit halves: it can reach 2^63).
// A lane with V >= 2^50 is past it (int64_past_50): the functors ask that of a pack's
// divisors first and redo such a pack with int64_divmod_any or int64_divmod_big below
// (Int64HostDivision); a zero divisor divides by 1, Q masked to 0, as above.
SW_INLINE double u52_to_double(u64 u) { return bit_cast<double>(u | 0x4330000000000000ull) - 0x1p52; }
SW_INLINE u64 double_to_u52(double x) { return bit_cast<u64>(x + 0x1p52) - 0x4330000000000000ull; }
// x <= 2^64 - 1 as a double rounded once: its 32-bit halves by offsets, H = xh 2^32 - 2^52 and
// L = 2^52 + xl, each exact, then their sum.
SW_INLINE double u64_to_double(u64 x) {
  return (bit_cast<double>((x >> 32) | 0x4530000000000000ull) - (0x1p84 + 0x1p52)) +
         bit_cast<double>((x & 0xffffffffull) | 0x4330000000000000ull);
}
SW_INLINE DivMod64 int64_divmod_50(i64 a, i64 b) {
  const u64 sa = (u64)(a >> 63), sb = (u64)(b >> 63);
  const u64 U = ((u64)a ^ sa) - sa, V0 = ((u64)b ^ sb) - sb;
  const u64 zero = 0ull - (u64)(V0 == 0);
  const double V = u52_to_double(V0 | (1ull & zero)), inv = 1.0 / V;
  const double H = bit_cast<double>((U >> 32) | 0x4530000000000000ull) - (0x1p84 + 0x1p52);
  const double L = bit_cast<double>((U & 0xffffffffull) | 0x4330000000000000ull);
  const double q = __builtin_floor((H + L) * inv);
  const double p = q * V, e = __builtin_fma(q, V, -p);
  const double r = ((H - p) + L) - e;
  const double q2 = __builtin_floor(__builtin_fma(r, inv, 0.5 * inv));
  const double qh = __builtin_floor(q * 0x1p-32);   // q = qh 2^32 + ql, each below 2^32
  const u64 Q = (double_to_u52(qh) << 32) + double_to_u52(q - qh * 0x1p32) +
                (bit_cast<u64>(q2 + 0x1.8p52) - bit_cast<u64>(0x1.8p52));
  return {Q & ~zero, double_to_u52(__builtin_fma(-q2, V, r)), sa, sb};
}
// The lanes int64_divmod_50 leaves, V = |b| >= 2^50 (so U / V <= 2^13), without `%` either:
// U and V as doubles (u64_to_double, one rounding each), their quotient (a third) and
// q0 = floor(of it (1 - 2^-40)) (a fourth): the four put U / V (1 + d), |d| < 2^-50.9, within
// (U / V - 2^-26.9, U / V) for U > 0 (0 for U = 0), so q0 is n - 1 or n, n = floor(U / V).
// t = U - q0 V is then in [0, 2V), exact in u64 (q0 V <= U, 2V <= 2^64; q0 < 2^32, so the
// product is two 32-bit multiplies), and t - V in [-V, V) is an int64 whose sign says t < V:
// one compare-and-subtract gives R and Q. The lanes below 2^50 compute garbage (b = 0: a
// division by 0), never a trap.
SW_INLINE DivMod64 int64_divmod_big(i64 a, i64 b) {
  const u64 sa = (u64)(a >> 63), sb = (u64)(b >> 63);
  const u64 U = ((u64)a ^ sa) - sa, V = ((u64)b ^ sb) - sb;
  const u64 q0 = double_to_u52(__builtin_floor(u64_to_double(U) / u64_to_double(V) * (1 - 0x1p-40)));
  const u64 t = U - ((u64)(u32)V * (u64)(u32)q0 + ((u64)(u32)(V >> 32) * (u64)(u32)q0 << 32));
  const u64 hi = ~(u64)((i64)(t - V) >> 63);       // t >= V: all ones
  return {q0 - hi, t - (V & hi), sa, sb};
}
// Every divisor without `%`: int64_divmod_50's lanes, and int64_divmod_big's where |b| >= 2^50
// (the pack the 50-bit form flags, redone as a whole in vector registers: with `%` in every
// lane such packs ran at torch CPU's speed, 0.9-1.0x).
SW_INLINE DivMod64 int64_divmod_any(i64 a, i64 b) {
  const DivMod64 s = int64_divmod_50(a, b), l = int64_divmod_big(a, b);
  const u64 big = 0ull - (u64)(((((u64)b ^ s.sb) - s.sb) >> 50) != 0);
  return {(s.Q & ~big) | (l.Q & big), (s.R & ~big) | (l.R & big), s.sa, s.sb};
}
// The host's form: kWide = int64_divmod_host (every divisor), else int64_divmod_50.
template <bool kWide = SW_HOST_INT64_DIVISION>
SW_INLINE DivMod64 int64_divmod(i64 a, i64 b) {
  if constexpr (kWide) return int64_divmod_host(a, b);
  else return int64_divmod_50(a, b);
}
// The three results from a DivMod64 of a and b.
SW_INLINE i64 int64_remainder_of(const DivMod64& d, i64 b) {
  const u64 m = (d.R ^ d.sa) - d.sa;               // a's sign
  const u64 fix = 0ull - (u64)((m != 0) & ((i64)(m ^ (u64)b) < 0));
  return (i64)(m + ((u64)b & fix));
}
SW_INLINE i64 int64_fmod_of(const DivMod64& d, i64) { return (i64)((d.R ^ d.sa) - d.sa); }
// floor(a / b): the truncated quotient with the operands' signs, less 1 where they differ
// and R != 0. |b| = 1 gives -a for b = -1, INT64_MIN // -1 wrapping to INT64_MIN as NumPy's.
SW_INLINE i64 int64_floor_divide_of(const DivMod64& d, i64) {
  const u64 s = d.sa ^ d.sb;
  return (i64)(((d.Q ^ s) - s) + (s & (0ull - (u64)(d.R != 0))));   // (x & 1) kept GCC 12 scalar
}
// Whether int64_divmod_50 leaves the lane: |b| >= 2^50 (b + 2^50 - 1 outside [0, 2^51 - 2]).
SW_INLINE bool int64_past_50(i64 b) { return (u64)b + ((1ull << 50) - 1) > (1ull << 51) - 2; }
template <int kOp> SW_INLINE i64 int64_result(const DivMod64& d, i64 b) {
  if constexpr (kOp == kInt64Remainder) return int64_remainder_of(d, b);
  else if constexpr (kOp == kInt64Fmod) return int64_fmod_of(d, b);
  else return int64_floor_divide_of(d, b);
}
// The functors' fast path: kOp's result by the host's form (never flagged: the 50-bit form's
// functors ask int64_past_50 first, Int64HostDivision below).
template <int kOp, bool kWide = SW_HOST_INT64_DIVISION>
SW_INLINE i64 int64_fast_host(i64 a, i64 b, FastFlag&) { return int64_result<kOp>(int64_divmod<kWide>(a, b), b); }
// One lane by the host's divider (`/`), for every divisor: b = 0 and b = -1 divide by 1 (no
// trap; INT64_MIN / -1 would overflow), their results as the vector forms give them
// (remainder and fmod 0; floor_divide 0 for b = 0, -a wrapping for b = -1, as NumPy's).
template <int kOp> SW_INLINE i64 int64_divide_idiv(i64 a, i64 b) {
  const i64 d = (b == 0) | (b == -1) ? 1 : b;
  const i64 q = a / d, r = a - q * d;
  if constexpr (kOp == kInt64Remainder) return r + (r != 0 && (r ^ b) < 0 ? b : 0);
  else if constexpr (kOp == kInt64Fmod) return r;
  else return b == 0 ? 0 : b == -1 ? (i64)(0ull - (u64)a) : q - (r != 0 && (r ^ b) < 0);
}
// A pack past the 50-bit form, exactly. Where the host's divider is fast (SW_FAST_IDIV,
// backends/cpu.py fast_divider: AMD Zen 4) `/` in every lane, which there beat the vector
// forms by 24-31% (large, negative divisors; a flagged pack's quotients are below 2^13 in
// its lanes past 2^50). Elsewhere int64_divmod_big alone where every divisor is past 2^50
// (|b| >= 2^61 on a Zen 3: 1.15x faster than `%`), else int64_divmod_any. Not inlined, and
// in the support library (as fmod_double_steps_pack, above, and for the same reasons):
// inline, the int64 kernels built 40% slower (remainder 221 -> 299 ms).
#if !defined(SW_FAST_IDIV)
#define SW_FAST_IDIV 0
#endif
#if defined(SW_SUPPORT)
inline namespace SW_SUPPORT {
#endif
template <int kOp, int P>
SW_NOINLINE __attribute__((visibility("default"))) void int64_divide_pack(i64* y, const i64* a, const i64* b) {
#if SW_FAST_IDIV
  for (int e = 0; e < P; ++e) y[e] = int64_divide_idiv<kOp>(a[e], b[e]);
#else
  FastFlag small = 0;
  SW_SIMD_OR(small) for (int e = 0; e < P; ++e) small |= !int64_past_50(b[e]);
  if (small) {
    SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = int64_result<kOp>(int64_divmod_any(a[e], b[e]), b[e]);
  } else {
    SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = int64_result<kOp>(int64_divmod_big(a[e], b[e]), b[e]);
  }
#endif
}
#if defined(SW_SUPPORT) && !SW_HOST_INT64_DIVISION
#define SW_EXTERN_PACK(P) extern template void int64_divide_pack<kInt64Remainder, P>(i64*, const i64*, const i64*); \
  extern template void int64_divide_pack<kInt64Fmod, P>(i64*, const i64*, const i64*); \
  extern template void int64_divide_pack<kInt64FloorDivide, P>(i64*, const i64*, const i64*);
SW_SUPPORT_WIDTHS(SW_EXTERN_PACK)
#undef SW_EXTERN_PACK
#endif
#if defined(SW_SUPPORT)
}  // inline namespace SW_SUPPORT
#endif
// The host's int64 remainder, fmod and floor_divide (their functors' base): the fast path, and
// where it is the 50-bit form, flags first (FlagsFirst: the divisors' check, then the form
// alone where no lane is past it) and a flagged pack redone by int64_divide_pack (ExactPack).
// uint32's operands (the same functors) are copied to int64; they are never past 2^50.
template <int kOp> struct Int64HostDivision {
  enum { kFlagsFirst = !SW_HOST_INT64_DIVISION, kExactPack = !SW_HOST_INT64_DIVISION };
  SW_INLINE static i64 fast(i64 a, i64 b, FastFlag& slow) { return int64_fast_host<kOp>(a, b, slow); }
  SW_INLINE static bool wide(i64, i64 b) { return int64_past_50(b); }
  template <int P> SW_INLINE static void exact(i64* y, const i64* a, const i64* b) {
    int64_divide_pack<kOp, P>(y, a, b);
  }
  template <int P, class A> SW_INLINE static void exact(i64* y, const A* a, const A* b) {
    i64 a2[P], b2[P];
    for (int e = 0; e < P; ++e) a2[e] = a[e], b2[e] = b[e];
    int64_divide_pack<kOp, P>(y, a2, b2);
  }
};
#endif

// The host uses its own branch-free forms (above), which GCC vectorizes in every layout;
// the device's form, built for the host, stayed scalar in periodic and strided layouts.
template <Convention C> struct RemainderFunctor<i64, C>
#if defined(__CUDA_ARCH__)
    : Int64DeviceDivision<kInt64Remainder>
#else
    : Int64HostDivision<kInt64Remainder>
#endif
{
  SW_HOST_DEVICE SW_INLINE i64 operator()(i64 a, i64 b) const { return int_remainder(a, b); }
};

// The other integer widths compute in a wider type's functor, fast paths included: every
// uint32 value is an int64 case, and the narrowing store is exact since |result| < |b|.
// 8- and 16-bit: small_int_div.h (below). uint64 has no wider type.
template <Convention C> struct RemainderFunctor<u32, C> : RemainderFunctor<i64, C> {};
template <Convention C> struct RemainderFunctor<u64, C> {
  SW_HOST_DEVICE SW_INLINE u64 operator()(u64 a, u64 b) const { return int_remainder(a, b); }
};

}  // namespace sw
#include "small_int_div.h"   // 8- and 16-bit integer remainder
