// stridewise/cpu/vmath.h: glibc's vector math (libmvec) for user kernels on the host, with
// every element's result independent of where it sits.
//
// A user operation's unqualified expf, sinf, cosf, tanhf, powf, tanh, log and pow (by their
// arguments' types: the list below) resolve here (UserMath, a base of the generated UserOp),
// and the element loop of a user kernel is an `omp simd` loop (SW_USER_LOOP), so GCC calls the
// functions' vector clones for whole packs.
// libmvec's variants per ISA differ in their last bits (its AVX2 and AVX-512 tanhf disagree
// on ~40% of inputs), and GCC picks whichever clone fits the loop it vectorized (or the scalar
// function, for a tail). So every clone and the scalar function go through ONE routine,
// libmvec's AVX2 one: a clone pads or splits its lanes, the scalar function runs one lane. libmvec computes each lane from that lane alone (special
// inputs go to the scalar libm per lane), so an element's bits do not depend on its position,
// the mode, the pack or the hoisted form.
//
// Compiled in only where the CPU backend found libmvec (-DSW_VMATH=1 -l:libmvec.so.1);
// elsewhere UserMath is empty and the operation calls libm as written.
#pragma once
#if defined(SW_VMATH) && defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

// The home: libmvec's AVX2 routines (8 floats, 4 doubles), also where AVX-512 is present:
// GCC vectorizes for 256-bit registers there, so its clones map one to one, and a wrapper that
// widened them to the AVX-512 routines ran 10x slower than either routine alone.
#define SW_VM_ISA d
#define SW_VM_WF 8
#define SW_VM_WD 4
typedef __m256 sw_vm_hf;
typedef __m256d sw_vm_hd;
#define SW_VM_HOME(isa, w, args, name) _ZGV##isa##N##w##args##_##name
#define SW_VM_HOME_(isa, w, args, name) SW_VM_HOME(isa, w, args, name)

namespace sw {
namespace vm {
// A clone's lanes into the home routine's vector, the rest padded with its first lane (any
// valid input: a padding lane is discarded, and a copy never takes libm's special-input
// path unless the first lane does), and the home's result back to the clone's width.
// Intrinsics, not memcpy through arrays: those stalled on store forwarding (10x slower).
SW_INLINE __m256 widen(__m128 x) { return _mm256_insertf128_ps(_mm256_set1_ps(_mm_cvtss_f32(x)), x, 0); }
SW_INLINE __m256 widen(__m256 x) { return x; }
SW_INLINE __m256d widen(__m128d x) { return _mm256_insertf128_pd(_mm256_set1_pd(_mm_cvtsd_f64(x)), x, 0); }
SW_INLINE __m256d widen(__m256d x) { return x; }
SW_INLINE void narrow(__m256 r, __m128* v) { *v = _mm256_castps256_ps128(r); }
SW_INLINE void narrow(__m256 r, __m256* v) { *v = r; }
SW_INLINE void narrow(__m256d r, __m128d* v) { *v = _mm256_castpd256_pd128(r); }
SW_INLINE void narrow(__m256d r, __m256d* v) { *v = r; }
SW_INLINE __m256 splat(float x) { return _mm256_set1_ps(x); }
SW_INLINE __m256d splat(double x) { return _mm256_set1_pd(x); }
SW_INLINE float first(__m256 r) { return _mm256_cvtss_f32(r); }
SW_INLINE double first(__m256d r) { return _mm256_cvtsd_f64(r); }
template <class V, class Home>
SW_INLINE V over(Home home, V x, V y) {
  V v;
  narrow(home(widen(x), widen(y)), &v);
  return v;
}
#if defined(__AVX512F__)
// an AVX-512 clone (GCC vectorizes 512 bits wide only where asked to): two halves
template <class Home>
SW_INLINE __m512 over(Home home, __m512 x, __m512 y) {
  const __m256d lo = _mm256_castps_pd(home(_mm512_castps512_ps256(x), _mm512_castps512_ps256(y)));
  const __m256d hi = _mm256_castps_pd(home(
      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)),
      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1))));
  return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1));
}
template <class Home>
SW_INLINE __m512d over(Home home, __m512d x, __m512d y) {
  const __m256d lo = home(_mm512_castpd512_pd256(x), _mm512_castpd512_pd256(y));
  const __m256d hi = home(_mm512_extractf64x4_pd(x, 1), _mm512_extractf64x4_pd(y, 1));
  return _mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1);
}
#endif
template <class E, class Home>
SW_INLINE E one(Home home, E x, E y) { return first(home(splat(x), splat(y))); }

// How a home calls its routine: as it is, or (pow) with a negative base's lanes as the C
// library defines them from |x|. libmvec hands every lane it does not take itself to the
// scalar libm, negative bases included: half of a random base's lanes, 9 ns an element. glibc's
// pow and powf give (-x)^y = -(x^y) for odd integral y, x^y for even or infinite y, and for
// a finite x < 0 with finite non-integral y the invalid operation's NaN; a NaN x or y keeps
// the routine's own lane (pow(-1, NaN) is NaN, where |x| would give 1).
template <class H, class F> SW_INLINE H plain(F f, H x, H y) { return f(x, y); }
SW_INLINE __m256 pick(__m256 a, __m256 b, __m256 m) { return _mm256_blendv_ps(a, b, m); }
SW_INLINE __m256d pick(__m256d a, __m256d b, __m256d m) { return _mm256_blendv_pd(a, b, m); }
#define SW_VM_POW_SIGNS(H, s, E, ibits)                                                    \
  template <class F> SW_INLINE H pow_signs(F f, H x, H y) {                                \
    const H sign = _mm256_set1_##s(E(-0.0)), half = _mm256_set1_##s(E(0.5));              \
    const H nan_x = _mm256_cmp_##s(x, x, _CMP_UNORD_Q);                                   \
    const H either_nan = _mm256_or_##s(nan_x, _mm256_cmp_##s(y, y, _CMP_UNORD_Q));        \
    const H r = f(pick(_mm256_andnot_##s(sign, x), x, either_nan), y);                     \
    const H whole = _mm256_cmp_##s(y, _mm256_round_##s(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), \
                                   _CMP_EQ_OQ);  /* infinities too, NaN not */             \
    const H h = _mm256_mul_##s(y, half);                                                   \
    const H odd = _mm256_andnot_##s(                                                       \
        _mm256_cmp_##s(h, _mm256_round_##s(h, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), _CMP_EQ_OQ), \
        whole);                                                                            \
    const H flip = _mm256_and_##s(_mm256_andnot_##s(nan_x, _mm256_and_##s(x, sign)), odd); \
    const H invalid = _mm256_andnot_##s(                                                   \
        _mm256_or_##s(whole, either_nan),                                                  \
        _mm256_and_##s(_mm256_cmp_##s(x, _mm256_setzero_##s(), _CMP_LT_OQ),                \
                       _mm256_cmp_##s(x, _mm256_set1_##s(-__builtin_inf()), _CMP_GT_OQ))); \
    const H indefinite = _mm256_castsi256_##s(_mm256_set1_##ibits); /* x86's default NaN */ \
    return pick(_mm256_xor_##s(r, flip), indefinite, invalid);                             \
  }
SW_VM_POW_SIGNS(__m256, ps, float, epi32(int(0xffc00000u)))
SW_VM_POW_SIGNS(__m256d, pd, double, epi64x((long long)0xfff8000000000000ull))
#undef SW_VM_POW_SIGNS
}  // namespace vm
}  // namespace sw

// One function: libmvec's routine `lib` (float or double) as the home, the scalar function
// `sw_vm_<lib>` GCC's vectorizer knows to have clones, and those clones for every ISA this
// build can run. The scalar function and the clones are defined under their assembler names
// only (hidden: one copy per kernel library), so GCC never makes clones of its own.
#define SW_VM_CLONE1(V, isa, n, lib, E, W, H, home)                                        \
  extern "C" __attribute__((visibility("hidden"))) V                                       \
  sw_vm_clone_##isa##_##lib(V x) __asm__("_ZGV" #isa "N" #n "v_sw_vm_" #lib);             \
  extern "C" V sw_vm_clone_##isa##_##lib(V x) {                                            \
    return sw::vm::over(home, x, x);                                                       \
  }
#define SW_VM_CLONE2(V, isa, n, lib, E, W, H, home)                                        \
  extern "C" __attribute__((visibility("hidden"))) V                                       \
  sw_vm_clone_##isa##_##lib(V x, V y) __asm__("_ZGV" #isa "N" #n "vv_sw_vm_" #lib);       \
  extern "C" V sw_vm_clone_##isa##_##lib(V x, V y) {                                       \
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
#define SW_VM_DEFINE(K, name, lib, E, H, W, args, V4, V8, V16, n4, n8, n16, params, pass, form) \
  extern "C" H SW_VM_HOME_(SW_VM_ISA, W, args, lib) params;                                \
  extern "C" E sw_vm_##lib(SW_VM_ARGS##K(E)) __attribute__((simd("notinbranch"), const, nothrow)); \
  namespace sw { namespace vm {                                                            \
  SW_INLINE H call_##lib(H x, H y) { (void)y; return SW_VM_HOME_(SW_VM_ISA, W, args, lib) pass; } \
  SW_INLINE H home_##lib(H x, H y) { return form(call_##lib, x, y); }                      \
  }}                                                                                       \
  extern "C" __attribute__((visibility("hidden"))) E sw_vm_one_##lib(SW_VM_ARGS##K(E))     \
      __asm__("sw_vm_" #lib);                                                              \
  extern "C" E sw_vm_one_##lib(SW_VM_PARAMS##K(E)) {                                       \
    return sw::vm::one(sw::vm::home_##lib, SW_VM_PASS##K);                                 \
  }                                                                                        \
  SW_VM_CLONES(K, lib, E, W, H, sw::vm::home_##lib, V4, V8, V16, n4, n8, n16)
#define SW_VM_ARGS1(E) E
#define SW_VM_ARGS2(E) E, E
#define SW_VM_PARAMS1(E) E x
#define SW_VM_PARAMS2(E) E x, E y
#define SW_VM_PASS1 x, x
#define SW_VM_PASS2 x, y
#define SW_VM_FLOAT(K, name, args, params, pass, form)                                     \
  SW_VM_DEFINE(K, name, name##f, float, sw_vm_hf, SW_VM_WF, args, __m128, __m256, __m512, 4, 8, 16, params, pass, form)
#define SW_VM_DOUBLE(K, name, args, params, pass, form)                                    \
  SW_VM_DEFINE(K, name, name, double, sw_vm_hd, SW_VM_WD, args, __m128d, __m256d, __m512d, 2, 4, 8, params, pass, form)

// Which functions, per type: those within stridewise's tolerances of NumPy (ops/builtins.py
// TOLERANCE_ULP: 4 ulp float32, 2 ulp float64) over 3 x 2^20 inputs of every exponent. Left
// to libm: logf (6 ulp from NumPy's) and double exp, sin, cos (3 ulp).
SW_VM_FLOAT(1, exp, v, (sw_vm_hf), (x), sw::vm::plain)
SW_VM_FLOAT(1, sin, v, (sw_vm_hf), (x), sw::vm::plain)
SW_VM_FLOAT(1, cos, v, (sw_vm_hf), (x), sw::vm::plain)
SW_VM_FLOAT(1, tanh, v, (sw_vm_hf), (x), sw::vm::plain)
SW_VM_FLOAT(2, pow, vv, (sw_vm_hf, sw_vm_hf), (x, y), sw::vm::pow_signs)
// logf only for a result rounded to 16 bits (math.h LogFunctor): 6 ulp of float32 moves such
// a result by at most its one ulp of tolerance.
SW_VM_FLOAT(1, log, v, (sw_vm_hf), (x), sw::vm::plain)
#define SW_VM_LOGF16 1
SW_VM_DOUBLE(1, tanh, v, (sw_vm_hd), (x), sw::vm::plain)
SW_VM_DOUBLE(1, log, v, (sw_vm_hd), (x), sw::vm::plain)
SW_VM_DOUBLE(2, pow, vv, (sw_vm_hd, sw_vm_hd), (x, y), sw::vm::pow_signs)

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
  SW_VM_MEMBER(float, exp, expf) SW_VM_LIBM1(exp)
  SW_VM_MEMBER(float, sin, sinf) SW_VM_LIBM1(sin)
  SW_VM_MEMBER(float, cos, cosf) SW_VM_LIBM1(cos)
  SW_VM_MEMBER(float, tanh, tanhf) SW_VM_MEMBER(double, tanh, tanh) SW_VM_LIBM1(tanh)
  SW_VM_MEMBER(double, log, log) SW_VM_LIBM1(log)
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
