// stridewise/cpu/vmath.h: vector math for CPU kernels on the host (glibc's libmvec, and own
// routines where libmvec's error is above stridewise's tolerances), with every element's
// result independent of where it sits.
//
// A user operation's unqualified expf, sinf, cosf, tanhf, logf, powf, exp, sin, cos, tanh, log
// and pow (by their arguments' types: the list below), and the built-in math functors (math.h),
// resolve here (UserMath, a base of the generated UserOp and of the functors), and their
// element loops are `omp simd` loops (SW_USER_LOOP), so GCC calls the functions' vector clones
// for whole packs. libmvec's variants per ISA differ in their last bits (its AVX2 and AVX-512
// tanhf disagree on ~40% of inputs), and GCC picks whichever clone fits the loop it vectorized
// (or the scalar function, for a tail). So every clone and the scalar function go through ONE
// routine, the home: a clone pads or splits its lanes, the scalar function runs one lane.
// Each lane is computed from that lane alone (special inputs go to the scalar libm per lane),
// so an element's bits do not depend on its position, the mode, the pack or the hoisted form.
//
// Compiled in only where the CPU backend found libmvec (-DSW_VMATH=1 -l:libmvec.so.1) and the
// build has AVX2 and FMA (the own routines' exact products need it); elsewhere UserMath is
// empty and the operation calls libm as written.
#pragma once
#if defined(SW_VMATH) && defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

// The home: libmvec's widest routines this build can run, AVX-512's (16 floats, 8 doubles)
// or AVX2's (8, 4). Kernels build with -mprefer-vector-width=512 (backends/cpu.py), so on an
// AVX-512 host GCC calls the 16-lane clone, which is the home itself: on a Zen 5, 2^20 lanes
// on one thread, powf 1912 -> 1265 us, tanhf 537 -> 203, pow 3738 -> 2284 against two AVX2
// calls. The two ISAs' routines differ in their last bits (tanhf on ~40% of inputs); a build
// uses one of them for every lane, so an element's bits never depend on its position.
#if defined(__AVX512F__)
#define SW_VM_ISA e
#define SW_VM_WF 16
#define SW_VM_WD 8
typedef __m512 sw_vm_hf;
typedef __m512d sw_vm_hd;
#else
#define SW_VM_ISA d
#define SW_VM_WF 8
#define SW_VM_WD 4
typedef __m256 sw_vm_hf;
typedef __m256d sw_vm_hd;
#endif
#define SW_VM_HOME(isa, w, args, name) _ZGV##isa##N##w##args##_##name
#define SW_VM_HOME_(isa, w, args, name) SW_VM_HOME(isa, w, args, name)

namespace sw {
namespace vm {
// A clone's lanes into the home routine's vector, the rest padded with its first lane (any
// valid input: a padding lane is discarded, and a copy never takes libm's special-input
// path unless the first lane does), and the home's result back to the clone's width.
// Intrinsics, not memcpy through arrays: those stalled on store forwarding (10x slower).
SW_INLINE __m256 widen8(__m128 x) { return _mm256_insertf128_ps(_mm256_set1_ps(_mm_cvtss_f32(x)), x, 0); }
SW_INLINE __m256d widen4(__m128d x) { return _mm256_insertf128_pd(_mm256_set1_pd(_mm_cvtsd_f64(x)), x, 0); }
#if defined(__AVX512F__)
SW_INLINE __m512 widen(__m256 x) {
  return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_set1_ps(_mm256_cvtss_f32(x))),
                                             _mm256_castps_pd(x), 0));
}
SW_INLINE __m512 widen(__m128 x) { return widen(widen8(x)); }
SW_INLINE __m512 widen(__m512 x) { return x; }
SW_INLINE __m512d widen(__m256d x) {
  return _mm512_insertf64x4(_mm512_set1_pd(_mm256_cvtsd_f64(x)), x, 0);
}
SW_INLINE __m512d widen(__m128d x) { return widen(widen4(x)); }
SW_INLINE __m512d widen(__m512d x) { return x; }
SW_INLINE void narrow(__m512 r, __m128* v) { *v = _mm512_castps512_ps128(r); }
SW_INLINE void narrow(__m512 r, __m256* v) { *v = _mm512_castps512_ps256(r); }
SW_INLINE void narrow(__m512 r, __m512* v) { *v = r; }
SW_INLINE void narrow(__m512d r, __m128d* v) { *v = _mm512_castpd512_pd128(r); }
SW_INLINE void narrow(__m512d r, __m256d* v) { *v = _mm512_castpd512_pd256(r); }
SW_INLINE void narrow(__m512d r, __m512d* v) { *v = r; }
SW_INLINE __m512 splat(float x) { return _mm512_set1_ps(x); }
SW_INLINE __m512d splat(double x) { return _mm512_set1_pd(x); }
SW_INLINE float first(__m512 r) { return _mm512_cvtss_f32(r); }
SW_INLINE double first(__m512d r) { return _mm512_cvtsd_f64(r); }
SW_INLINE __m512 trunc_lanes(__m512 x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
SW_INLINE __m512d trunc_lanes(__m512d x) { return _mm512_roundscale_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
#else
SW_INLINE __m256 widen(__m128 x) { return widen8(x); }
SW_INLINE __m256 widen(__m256 x) { return x; }
SW_INLINE __m256d widen(__m128d x) { return widen4(x); }
SW_INLINE __m256d widen(__m256d x) { return x; }
SW_INLINE void narrow(__m256 r, __m128* v) { *v = _mm256_castps256_ps128(r); }
SW_INLINE void narrow(__m256 r, __m256* v) { *v = r; }
SW_INLINE void narrow(__m256d r, __m128d* v) { *v = _mm256_castpd256_pd128(r); }
SW_INLINE void narrow(__m256d r, __m256d* v) { *v = r; }
SW_INLINE __m256 splat(float x) { return _mm256_set1_ps(x); }
SW_INLINE __m256d splat(double x) { return _mm256_set1_pd(x); }
SW_INLINE float first(__m256 r) { return _mm256_cvtss_f32(r); }
SW_INLINE double first(__m256d r) { return _mm256_cvtsd_f64(r); }
SW_INLINE __m256 trunc_lanes(__m256 x) { return _mm256_round_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
SW_INLINE __m256d trunc_lanes(__m256d x) { return _mm256_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
#endif
template <class V, class Home>
SW_INLINE V over(Home home, V x, V y) {
  V v;
  narrow(home(widen(x), widen(y)), &v);
  return v;
}
template <class E, class Home>
SW_INLINE E one(Home home, E x, E y) { return first(home(splat(x), splat(y))); }

// How a home calls its routine: as it is, or (pow) with a negative base's lanes as the C
// library defines them from |x|. libmvec hands every lane it does not take itself to the
// scalar libm, negative bases included: half of a random base's lanes, 9 ns an element. glibc's
// pow and powf give (-x)^y = -(x^y) for odd integral y, x^y for even or infinite y, and for
// a finite x < 0 with finite non-integral y the invalid operation's NaN (x86's, sign set); a
// NaN x or y keeps the routine's own lane (pow(-1, NaN) is NaN, where |x| would give 1).
// GCC's vector extensions: a compare gives integer lanes of all ones or zeros, `?:` selects.
template <class H, class F> SW_INLINE H plain(F f, H x, H y) { return f(x, y); }
template <class H, class F> SW_INLINE H pow_signs(F f, H x, H y) {
  typedef __typeof__(x[0]) E;
  typedef __typeof__(x < y) I;                        // the lanes' integers, as wide as E
  const I sign = (I)(-H{});                           // -0.0's bits
  const I either_nan = (x != x) | (y != y);
  const H r = f(either_nan ? x : (H)((I)x & ~sign), y);
  const H t = trunc_lanes(y), h = y * E(0.5);
  const I odd = (y == t) & (h != trunc_lanes(h));     // an infinity is whole and even
  const I flip = (I)x & sign & odd & ~(x != x);
  const I invalid = (x < E(0)) & (x > E(-__builtin_inf())) & (y != t) & (y - y == E(0));
  return invalid ? (H)(sign | (I)(H{} + E(__builtin_nan("")))) : (H)((I)r ^ flip);
}

// exp of doubles: libmvec's is 3 ulp from the correctly rounded result (float64's tolerance is
// 2 ulp of NumPy, itself within 1), and glibc's scalar exp one element at a time ran 0.46x
// torch CPU. Here: x = k ln 2 + r, |r| <= ln 2 / 2 (ln 2 in two parts, each product rounded
// once by an FMA), e^r to degree 13 by Taylor's coefficients (the first term left out,
// 4e-18 < 2^-56), and 2^k added to the exponent's bits. Every lane with |x| > 708 (a result
// that overflows, is subnormal or underflows) or NaN is the C library's exp, lane by lane.
// Within 1 ulp of the correctly rounded result (tests/test_vmath.py, against mpmath).
#if defined(__AVX512F__)
SW_INLINE __m512d fma_lanes(__m512d a, __m512d b, __m512d c) { return _mm512_fmadd_pd(a, b, c); }
// any lane of a compare's mask set (lanes of all ones or zeros, 32 or 64 bits wide)
template <class M> SW_INLINE bool any_lane(M m) { return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) != 0; }
#else
SW_INLINE __m256d fma_lanes(__m256d a, __m256d b, __m256d c) { return _mm256_fmadd_pd(a, b, c); }
template <class M> SW_INLINE bool any_lane(M m) { return _mm256_movemask_ps((__m256)m) != 0; }
#endif
// A vector's lanes as unsigned integers of their width, for arithmetic on bits: it wraps,
// where a compare's signed lanes would overflow (undefined) on lanes libm's results replace.
template <class H> struct BitsOf {
  typedef typename UnsignedOf<sizeof(H{}[0])>::type U;
  typedef U type __attribute__((vector_size(sizeof(H))));
};
template <class H> SW_INLINE H exp_lanes(H x) {
  typedef __typeof__(x < x) I;
  typedef typename BitsOf<H>::type U;
  const H shift = H{} + 0x1.8p52;                     // k rounded to an integer in the low bits
  const H kd = fma_lanes(x, H{} + 0x1.71547652b82fep0, shift);
  const H k = kd - shift;
  H r = fma_lanes(k, H{} - 0x1.62e42fefa39efp-1, x);
  r = fma_lanes(k, H{} - 0x1.abc9e3b39803fp-56, r);
  static const double c[] = {0x1.6124613a86d09p-33, 0x1.1eed8eff8d898p-29, 0x1.ae64567f544e4p-26,
                             0x1.27e4fb7789f5cp-22, 0x1.71de3a556c734p-19, 0x1.a01a01a01a01ap-16,
                             0x1.a01a01a01a01ap-13, 0x1.6c16c16c16c17p-10, 0x1.1111111111111p-7,
                             0x1.5555555555555p-5, 0x1.5555555555555p-3, 0x1p-1};   // 1/13! .. 1/2!
  H q = H{} + c[0];
  for (int i = 1; i < 12; ++i) q = fma_lanes(q, r, H{} + c[i]);
  const H e = 1.0 + fma_lanes(r * r, q, r);           // e^r in [0.70, 1.42]
  H out = (H)((U)e + (((U)kd - (U)shift) << 52));
  const I special = ~((x < 708.0) & (x > -708.0));    // NaN too
  if (__builtin_expect(any_lane(special), 0))
    for (int i = 0; i < int(sizeof(H) / sizeof(double)); ++i)
      if (special[i]) out[i] = ::exp(x[i]);
  return out;
}
template <class H, class F> SW_INLINE H own_exp(F, H x, H) { return exp_lanes(x); }

// sin and cos of doubles: libmvec's are 3-4 ulp from the correctly rounded result, and glibc's
// scalar ones ran 0.16x torch CPU. x = k pi/2 + r with pi/2 in three parts: x - k P1 is exact
// (a multiple of 2^-52 below 1), k P2 is split exactly by an FMA, so r is a double-double with
// an error near k 2^-131, where no double below 2^28 comes closer to a multiple of pi/2 than
// 2^-61 (r's relative error stays below 2^-70). sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 +
// r^4 C(r^2) by Taylor's coefficients to r^17 and r^18 (the next terms 2^-62 of the result),
// cos's 1 - r^2/2 with its rounding error carried (r^2 exact by an FMA), r's low part through the
// derivatives. The quadrant k mod 4 picks +-sin r or +-cos r (cos x = sin(x + pi/2): quarter
// = 1). |x| < 2^-26 gives sin x = x (its sign kept at -0.0). Lanes with |x| >= 2^28, an
// infinity or NaN are the C library's, lane by lane. Within an ulp of the correctly rounded
// result (tests/test_vmath.py, against mpmath).
template <class H> SW_INLINE H sincos_lanes(H x, int quarter) {
  typedef __typeof__(x < x) I;
  typedef typename BitsOf<H>::type U;
  const H shift = H{} + 0x1.8p52;
  const H kd = fma_lanes(x, H{} + 0x1.45f306dc9c883p-1, shift);   // x 2/pi to an integer
  const H k = kd - shift;
  const H p2 = H{} + 0x1.1a62633145c07p-54;
  const H r1 = fma_lanes(k, H{} - 0x1.921fb54442d18p+0, x);   // exact
  const H t = k * p2, t_err = fma_lanes(k, p2, -t);
  const H r = r1 - t;                                       // two-sum of r1 and -t
  const H rr = r - r1;
  const H r_lo = ((r1 - (r - rr)) + (-t - rr)) - fma_lanes(k, H{} - 0x1.f1976b7ed8fbcp-110, t_err);
  const H z = r * r, z_lo = fma_lanes(r, r, -z);
  static const double cs[] = {0x1.952c77030ad4ap-49, -0x1.ae7f3e733b81fp-41,
                              0x1.6124613a86d09p-33, -0x1.ae64567f544e4p-26, 0x1.71de3a556c734p-19,
                              -0x1.a01a01a01a01ap-13, 0x1.1111111111111p-7, -0x1.5555555555555p-3};
  static const double cc[] = {-0x1.6827863b97d97p-53, 0x1.ae7f3e733b81fp-45,
                              -0x1.93974a8c07c9dp-37, 0x1.1eed8eff8d898p-29, -0x1.27e4fb7789f5cp-22,
                              0x1.a01a01a01a01ap-16, -0x1.6c16c16c16c17p-10, 0x1.5555555555555p-5};
  H ps = H{} + cs[0], pc = H{} + cc[0];
  for (int i = 1; i < 8; ++i) {
    ps = fma_lanes(ps, z, H{} + cs[i]);
    pc = fma_lanes(pc, z, H{} + cc[i]);
  }
  const H sin_r = r + fma_lanes(r * z, ps, r_lo * (1.0 - 0.5 * z));
  const H hz = 0.5 * z, w = 1.0 - hz;
  const H cos_r = w + (((1.0 - w) - hz) + fma_lanes(z * z, pc, -(r * r_lo + 0.5 * z_lo)));
  const U n = (U)kd + (unsigned long long)quarter;
  const H mag = (n & 1) != 0 ? cos_r : sin_r;
  H out = (H)((U)mag ^ ((n & 2) << (8 * sizeof(double) - 2)));
  if (quarter == 0) {
    const H ax = (H)((I)x & ~(I)(-H{}));
    out = ax < 0x1p-26 ? x : out;
  }
  const I special = ~((x < 0x1p28) & (x > -0x1p28));   // NaN too
  if (__builtin_expect(any_lane(special), 0))
    for (int i = 0; i < int(sizeof(H) / sizeof(double)); ++i)
      if (special[i]) out[i] = quarter ? ::cos(x[i]) : ::sin(x[i]);
  return out;
}
template <class H, class F> SW_INLINE H own_sin(F, H x, H) { return sincos_lanes(x, 0); }
template <class H, class F> SW_INLINE H own_cos(F, H x, H) { return sincos_lanes(x, 1); }

// log of floats in double precision: libmvec's logf is 4-6 ulp from NumPy's (float32's
// tolerance is 4), and glibc's scalar logf ran 0.49x torch CPU. x = 2^k z with z in
// [0.699, 1.398) (0x3f330000 up), split by z's top 4 bits into 16 intervals, each with a
// double near 1/c for its centre c (1 exactly for the one holding 1.0, so that no cancellation
// meets x near 1) and log(c) rounded from mpmath: r = z / c - 1 by an FMA, |r| < 0.03, log1p(r)
// by Taylor to r^7 (the next term's share 2^-37), log x = k ln 2 + log c + log1p(r) in
// doubles, rounded once to float. Zero, negative, subnormal, infinite and NaN lanes are the C
// library's logf, lane by lane. The tables are read by a permute (AVX-512) or a lane at a time
// (AVX2, whose gather read 1073 against 870 us at 2^20).
// (The same form with log z = 2 atanh((z - 1) / (z + 1)) took two double divisions a pack:
// 0.36x NumPy's AVX-512 logf.)
alignas(64) static const double kLogfInvC[16] = {
    0x1.661ec6a5122f9p+0, 0x1.571ed3c506b3ap+0, 0x1.49539e3b2d067p+0, 0x1.3c995a47babe7p+0,
    0x1.30d190130d190p+0, 0x1.25e22708092f1p+0, 0x1.1bb4a4046ed29p+0, 0x1.12358e75d3033p+0,
    0x1.0953f39010954p+0, 0x1.0000000000000p+0, 0x1.e573ac901e574p-1, 0x1.ca4b3055ee191p-1,
    0x1.b2036406c80d9p-1, 0x1.9c2d14ee4a102p-1, 0x1.886e5f0abb04ap-1, 0x1.767dce434a9b1p-1};
alignas(64) static const double kLogfLogC[16] = {
    -0x1.57bf753c8d1fbp-2, -0x1.2bef07cdc9355p-2, -0x1.01eae5626c691p-2, -0x1.b31d8575bce3bp-3,
    -0x1.6574ebe8c1339p-3, -0x1.1aa2b7e23f729p-3, -0x1.a4e7640b1bc38p-4, -0x1.1973bd1465561p-4,
    -0x1.252f32f8d1840p-5, 0x0.0p+0, 0x1.b42dd711971b9p-5, 0x1.c5e548f5bc743p-4,
    0x1.526e5e3a1b438p-3, 0x1.bc286742d8cd4p-3, 0x1.1058bf9ae4ad4p-2, 0x1.404308686a7e4p-2};
// A float home's lanes as two halves of doubles (h = 0, 1), a table entry per lane, and back.
#if defined(__AVX512F__)
typedef __m512d sw_vm_half;
typedef __m512i sw_vm_int;
template <int h> SW_INLINE __m512d half_pd(__m512 x) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), h)));
}
template <int h> SW_INLINE __m512d half_pd(__m512i k) {
  return _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(k, h));
}
template <int h> SW_INLINE __m512d half_lookup(const double* t, __m512i i) {
  return _mm512_permutex2var_pd(_mm512_load_pd(t), _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(i, h)),
                                _mm512_load_pd(t + 8));
}
SW_INLINE __m512 join_ps(__m512d lo, __m512d hi) {
  return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo))),
                                             _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1));
}
#else
typedef __m256d sw_vm_half;
typedef __m256i sw_vm_int;
template <int h> SW_INLINE __m256d half_pd(__m256 x) { return _mm256_cvtps_pd(_mm256_extractf128_ps(x, h)); }
template <int h> SW_INLINE __m256d half_pd(__m256i k) {
  return _mm256_cvtepi32_pd(_mm256_extracti128_si256(k, h));
}
template <int h> SW_INLINE __m256d half_lookup(const double* t, __m256i i) {
  const __m128i q = _mm256_extracti128_si256(i, h);
  return _mm256_set_pd(t[_mm_extract_epi32(q, 3)], t[_mm_extract_epi32(q, 2)],
                       t[_mm_extract_epi32(q, 1)], t[_mm_cvtsi128_si32(q)]);
}
SW_INLINE __m256 join_ps(__m256d lo, __m256d hi) {
  return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}
#endif
template <int h, class H> SW_INLINE sw_vm_half logf_half(H z, sw_vm_int k, sw_vm_int i) {
  typedef sw_vm_half D;
  const D r = fma_lanes(half_pd<h>(z), half_lookup<h>(kLogfInvC, i), D{} - 1.0);
  static const double c[] = {0x1.2492492492492p-3, -0x1.5555555555555p-3, 0x1.999999999999ap-3,
                             -0x1p-2, 0x1.5555555555555p-2, -0x1p-1};   // 1/7 .. -1/2
  D p = D{} + c[0];
  for (int n = 1; n < 6; ++n) p = fma_lanes(p, r, D{} + c[n]);
  const D log1p_r = fma_lanes(r * r, p, r);
  return fma_lanes(half_pd<h>(k), D{} + 0x1.62e42fefa39efp-1, half_lookup<h>(kLogfLogC, i) + log1p_r);
}
template <class H> SW_INLINE H logf_lanes(H x) {
  typedef __typeof__(x < x) I;
  typedef typename BitsOf<H>::type U;
  const U t = (U)x - 0x3f330000u;
  const I k = (I)t >> 23, i = (I)((t >> 19) & 15u);
  const H z = (H)((U)x - (t & 0xff800000u));          // x / 2^k
  H out = join_ps(logf_half<0>(z, (sw_vm_int)k, (sw_vm_int)i), logf_half<1>(z, (sw_vm_int)k, (sw_vm_int)i));
  const I special = ~((x >= 0x1p-126f) & (x < __builtin_inff()));   // NaN too
  if (__builtin_expect(any_lane(special), 0))
    for (int n = 0; n < int(sizeof(H) / sizeof(float)); ++n)
      if (special[n]) out[n] = ::logf(x[n]);
  return out;
}
template <class H, class F> SW_INLINE H own_logf(F, H x, H) { return logf_lanes(x); }
}  // namespace vm
}  // namespace sw

// One function: libmvec's routine `lib` (float or double) in the home, the scalar function
// `sw_vm_<fn>` GCC's vectorizer knows to have clones, and those clones for every ISA this
// build can run. The scalar function and the clones are defined under their assembler names
// only (hidden: one copy per kernel library), so GCC never makes clones of its own.
#define SW_VM_CLONE1(V, isa, n, fn, E, W, H, home)                                        \
  extern "C" __attribute__((visibility("hidden"))) V                                       \
  sw_vm_clone_##isa##_##fn(V x) __asm__("_ZGV" #isa "N" #n "v_sw_vm_" #fn);             \
  extern "C" V sw_vm_clone_##isa##_##fn(V x) {                                            \
    return sw::vm::over(home, x, x);                                                       \
  }
#define SW_VM_CLONE2(V, isa, n, fn, E, W, H, home)                                        \
  extern "C" __attribute__((visibility("hidden"))) V                                       \
  sw_vm_clone_##isa##_##fn(V x, V y) __asm__("_ZGV" #isa "N" #n "vv_sw_vm_" #fn);       \
  extern "C" V sw_vm_clone_##isa##_##fn(V x, V y) {                                       \
    return sw::vm::over(home, x, y);                                                       \
  }
// the clones GCC may call, per ISA this build has: simdlen b 4, c 8, d 8, e 16 floats
// (half as many doubles)
#if defined(__AVX512F__)
#define SW_VM_CLONES(K, lib, E, W, H, home, V4, V8, V16, n4, n8, n16)                      \
  SW_VM_CLONE##K(V4, b, n4, lib, E, W, H, home) SW_VM_CLONE##K(V8, c, n8, lib, E, W, H, home) \
  SW_VM_CLONE##K(V8, d, n8, lib, E, W, H, home) SW_VM_CLONE##K(V16, e, n16, lib, E, W, H, home)
#elif defined(__AVX2__)
#define SW_VM_CLONES(K, lib, E, W, H, home, V4, V8, V16, n4, n8, n16)                      \
  SW_VM_CLONE##K(V4, b, n4, lib, E, W, H, home) SW_VM_CLONE##K(V8, c, n8, lib, E, W, H, home) \
  SW_VM_CLONE##K(V8, d, n8, lib, E, W, H, home)
#elif defined(__AVX__)
#define SW_VM_CLONES(K, lib, E, W, H, home, V4, V8, V16, n4, n8, n16)                      \
  SW_VM_CLONE##K(V4, b, n4, lib, E, W, H, home) SW_VM_CLONE##K(V8, c, n8, lib, E, W, H, home)
#else
#define SW_VM_CLONES(K, lib, E, W, H, home, V4, V8, V16, n4, n8, n16)                      \
  SW_VM_CLONE##K(V4, b, n4, lib, E, W, H, home)
#endif
// One (function, type): the home's declaration, the scalar function with its simd attribute
// (GCC's vectorizer calls its clones), its one-lane definition, and the clones.
#define SW_VM_DEFINE(K, fn, lib, E, H, W, args, V4, V8, V16, n4, n8, n16, params, pass, form) \
  extern "C" H SW_VM_HOME_(SW_VM_ISA, W, args, lib) params;                                \
  extern "C" E sw_vm_##fn(SW_VM_ARGS##K(E)) __attribute__((simd("notinbranch"), const, nothrow)); \
  namespace sw { namespace vm {                                                            \
  SW_INLINE H call_##fn(H x, H y) { (void)y; return SW_VM_HOME_(SW_VM_ISA, W, args, lib) pass; } \
  SW_INLINE H home_##fn(H x, H y) { return form(call_##fn, x, y); }                        \
  }}                                                                                       \
  extern "C" __attribute__((visibility("hidden"))) E sw_vm_one_##fn(SW_VM_ARGS##K(E))      \
      __asm__("sw_vm_" #fn);                                                               \
  extern "C" E sw_vm_one_##fn(SW_VM_PARAMS##K(E)) {                                        \
    return sw::vm::one(sw::vm::home_##fn, SW_VM_PASS##K);                                  \
  }                                                                                        \
  SW_VM_CLONES(K, fn, E, W, H, sw::vm::home_##fn, V4, V8, V16, n4, n8, n16)
#define SW_VM_ARGS1(E) E
#define SW_VM_ARGS2(E) E, E
#define SW_VM_PARAMS1(E) E x
#define SW_VM_PARAMS2(E) E x, E y
#define SW_VM_PASS1 x, x
#define SW_VM_PASS2 x, y
#define SW_VM_FLOAT(K, fn, name, args, params, pass, form)                                 \
  SW_VM_DEFINE(K, fn, name##f, float, sw_vm_hf, SW_VM_WF, args, __m128, __m256, __m512, 4, 8, 16, params, pass, form)
#define SW_VM_DOUBLE(K, fn, name, args, params, pass, form)                                \
  SW_VM_DEFINE(K, fn, name, double, sw_vm_hd, SW_VM_WD, args, __m128d, __m256d, __m512d, 2, 4, 8, params, pass, form)

// Which functions, per type, and how: libmvec's routine where it is within stridewise's
// tolerances of NumPy (ops/builtins.py TOLERANCE_ULP: 4 ulp float32, 2 ulp float64) over 3 x
// 2^20 inputs of every exponent; own routines for logf (libmvec's 4-6 ulp from NumPy's) and
// double exp, sin, cos (3-4 ulp).
SW_VM_FLOAT(1, expf, exp, v, (sw_vm_hf), (x), sw::vm::plain)
SW_VM_FLOAT(1, sinf, sin, v, (sw_vm_hf), (x), sw::vm::plain)
SW_VM_FLOAT(1, cosf, cos, v, (sw_vm_hf), (x), sw::vm::plain)
SW_VM_FLOAT(1, tanhf, tanh, v, (sw_vm_hf), (x), sw::vm::plain)
SW_VM_FLOAT(2, powf, pow, vv, (sw_vm_hf, sw_vm_hf), (x, y), sw::vm::pow_signs)
SW_VM_FLOAT(1, logf, log, v, (sw_vm_hf), (x), sw::vm::own_logf)
// libmvec's logf itself for a result rounded to 16 bits (math.h LogFunctor): 6 ulp of float32
// move such a result by at most its one ulp of tolerance, and the own form, in doubles, is
// slower (float16 log 226-283 us at 2^20 through this, float32's 391 through the own form).
SW_VM_FLOAT(1, logf16, log, v, (sw_vm_hf), (x), sw::vm::plain)
#define SW_VM_LOGF16 1
SW_VM_DOUBLE(1, exp, exp, v, (sw_vm_hd), (x), sw::vm::own_exp)
SW_VM_DOUBLE(1, sin, sin, v, (sw_vm_hd), (x), sw::vm::own_sin)
SW_VM_DOUBLE(1, cos, cos, v, (sw_vm_hd), (x), sw::vm::own_cos)
SW_VM_DOUBLE(1, tanh, tanh, v, (sw_vm_hd), (x), sw::vm::plain)
SW_VM_DOUBLE(1, log, log, v, (sw_vm_hd), (x), sw::vm::plain)
SW_VM_DOUBLE(2, pow, pow, vv, (sw_vm_hd, sw_vm_hd), (x, y), sw::vm::pow_signs)

// libm's spelling for everything else (integers, half, mixed types), looked up as the
// operation would have looked it up: at namespace scope, with argument-dependent lookup.
#define SW_VM_FORWARD1(name) \
  template <class X> SW_INLINE auto sw_vm_libm_##name(X x) -> decltype(name(x)) { return name(x); }
#define SW_VM_FORWARD2(name) \
  template <class X, class Y> SW_INLINE auto sw_vm_libm_##name(X x, Y y) -> decltype(name(x, y)) { return name(x, y); }
SW_VM_FORWARD1(exp) SW_VM_FORWARD1(log) SW_VM_FORWARD1(sin) SW_VM_FORWARD1(cos)
SW_VM_FORWARD1(tanh) SW_VM_FORWARD2(pow)

namespace sw {
#define SW_VM_MEMBER(E, name, lib)                                                         \
  static SW_INLINE E name(E x) { return sw_vm_##lib(x); }
#define SW_VM_LIBM1(name)                                                                  \
  template <class X> static SW_INLINE auto name(X x) -> decltype(sw_vm_libm_##name(x)) {  \
    return sw_vm_libm_##name(x);                                                          \
  }
// A user operation's unqualified calls find these members first (class scope before
// namespace scope): the types above exactly, anything else as libm would take it.
struct UserMath {
  SW_VM_MEMBER(float, exp, expf) SW_VM_MEMBER(double, exp, exp) SW_VM_LIBM1(exp)
  SW_VM_MEMBER(float, sin, sinf) SW_VM_MEMBER(double, sin, sin) SW_VM_LIBM1(sin)
  SW_VM_MEMBER(float, cos, cosf) SW_VM_MEMBER(double, cos, cos) SW_VM_LIBM1(cos)
  SW_VM_MEMBER(float, tanh, tanhf) SW_VM_MEMBER(double, tanh, tanh) SW_VM_LIBM1(tanh)
  SW_VM_MEMBER(float, log, logf) SW_VM_MEMBER(double, log, log) SW_VM_LIBM1(log)
  static SW_INLINE float pow(float x, float y) { return sw_vm_powf(x, y); }
  static SW_INLINE double pow(double x, double y) { return sw_vm_pow(x, y); }
  template <class X, class Y>
  static SW_INLINE auto pow(X x, Y y) -> decltype(sw_vm_libm_pow(x, y)) { return sw_vm_libm_pow(x, y); }
};
}  // namespace sw
#undef SW_USER_LOOP
#define SW_USER_LOOP(P) _Pragma("omp simd")
#else
namespace sw {
struct UserMath {};
}  // namespace sw
#endif
