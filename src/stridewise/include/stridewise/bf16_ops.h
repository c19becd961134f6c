// stridewise/bf16_ops.h: fmod and floor_divide chosen by storage type. Every dtype computes
// in its OpMath type's functor (ops.h), except the 16-bit floats: bfloat16, whose lanes past
// the fast path's range take remainder's table (bf16_fmod.h) in place of float's exact steps
// (a bfloat16 has 8 significant bits, which the table's argument needs, and a float32 value
// does not), and on the host float16, whose every pair one float form serves (fmod_short).
// Only operands of the 16-bit type reach these functors: an operand of another dtype is
// rounded to it on load, and torch's unrounded float32 number makes the op compute in float
// (pipeline.py torch_numbers).
#pragma once
#include "ops.h"

namespace sw {

template <class T> struct FmodSelect { typedef FmodFunctor<typename OpMath<T>::type> type; };
template <class T, Convention C = kNumpy> struct FloorDivideSelect {
  typedef FloorDivideFunctor<typename OpMath<T>::type> type;
};
// The op table's functors (ops/builtins.py): FmodOf<T> is FmodFunctor<OpMath<T>> itself for
// every T but bfloat16, so those kernels are the same types as before; FloorDivideOf<T, C>
// likewise but for bfloat16 (host) and torch's 16-bit floats (below).
template <class T> using FmodOf = typename FmodSelect<T>::type;
template <class T, Convention C = kNumpy> using FloorDivideOf = typename FloorDivideSelect<T, C>::type;

// torch's float16 and bfloat16 floor_divide (c10::div_floor_floating on c10::Half and
// BFloat16 operands) rounds to the 16-bit type between steps, so a result can land one step
// away from NumPy's, which computes in float32 and rounds once. Which steps round differs by
// device (probed against torch 2.11 on an H200 and 2.13 on the CPU, 2^20 random pairs, no
// difference left): on the CPU (Vectorized<Half>) every step, a - mod, the division and the
// -1 fix; on CUDA the quotient stays in float and only its floor rounds before the +1 fix.
// A number divides by its float reciprocal on CUDA (div_floor_kernel_cuda's is_cpu_scalar
// branch); on the CPU a number, or a divisor of one value broadcast (TensorIterator's
// is_scalar), takes NumPy's form in float32: ElementwiseOp.torch_numbers picks. fmod is exact
// in any precision.
#if !defined(__CUDA_ARCH__)
// The host's steps in a 16-bit float T: x rounded to T and back, branch-free so that GCC
// vectorizes it (F16C's one-lane conversion keeps a loop scalar), and T's exact fmod.
template <class T> struct Short16;
template <> struct Short16<half> {
  enum { kChecked = 0 };   // fmod_short holds for every pair
#if defined(__F16C__) && !defined(__clang__)
  enum { kRoundPack = 1 };
  template <int P> static SW_INLINE void round_pack(float* v) {   // P a multiple of 8
    constexpr int N = host_lanes(P);
    SW_UNROLL for (int e = 0; e < P; e += N) store_lanes(v + e, HostLanes<half>::widen(narrow_lanes<half, N>(v + e)));
  }
#else
  enum { kRoundPack = 0 };
#endif
  // x + M - M with M = 1.5 2^23 q rounds x to a multiple of q, to nearest even (the sum lies
  // where the spacing is q), and q = 2^(e - 10), or 2^-24 below float16's normals, is
  // float16's spacing at x; 65536 and more is inf (x from 65520 up), NaN stays NaN, and x's
  // sign stays on a zero.
  static SW_INLINE float round(float x) {
    const u32 ix = bit_cast<u32>(x), e = (ix >> 23) & 0xffu;
    const u32 q = e < 113u ? 103u : e > 143u ? 133u : e - 10u;   // q's exponent field
    const float M = bit_cast<float>(((q + 23u) << 23) | 0x400000u);
    const u32 r = bit_cast<u32>((x + M) - M) | (ix & 0x80000000u), ar = r & 0x7fffffffu;
    const u32 over = 0u - (u32)((ar >= 0x47800000u) & (ar <= 0x7f800000u));
    return bit_cast<float>((r & ~over) | (((ix & 0x80000000u) | 0x7f800000u) & over));
  }
  static SW_INLINE float fmod(float a, float b) { return fmod_short(a, b); }
};
template <> struct Short16<bfloat16> {
  enum { kChecked = 1, kRoundPack = 0 };   // fmod_short where bf16_far_host passes, the table elsewhere
  static SW_INLINE float round(float x) { return bfloat16_to_float(float_to_bfloat16(x)); }
  static SW_INLINE float fmod(float a, float b) { return bf16_fmod_host(a, b); }
};
#endif

#if defined(__CUDA_ARCH__)
#define SW_TORCH_EVERY_STEP false
#else
#define SW_TORCH_EVERY_STEP true
#endif
template <class T, bool EveryStep = SW_TORCH_EVERY_STEP> struct TorchFloorDivide16;
#undef SW_TORCH_EVERY_STEP
// CUDA's: the quotient in float, and the floor and floor + 1 rounded to T before the +1 fix
// (for a quotient that rounded below an integer): float's steps and, on the device, its fmod
// flags first (FloorDivideFlagsFirst). A host build serves tests/test_numbers.py.
template <class T> struct RoundTo {
  SW_HOST_DEVICE SW_INLINE static float r(float x) { return convert<float>(convert<T>(x)); }
};
#if defined(__CUDA_ARCH__)
template <class T> struct TorchFloorDivide16<T, false> : FloorDivideFlagsFirst<RoundTo<T>> {};
#else
template <class T> struct TorchFloorDivide16<T, false> {
  SW_INLINE float operator()(float a, float b) const {
    return floor_divide_steps<RoundTo<T>>(a, b, sw_fmod(a, b));
  }
};
#endif
#if !defined(__CUDA_ARCH__)
template <class T> struct TorchFloorDivide16<T, true> {
  // The CPU's steps, each rounded to T, as masks and selects so that GCC vectorizes them (the
  // element form, with F16C's one-lane conversion and float's six-step fmod per element, ran
  // at 0.05x torch CPU), from T's exact fmod: for bfloat16 fmod_short where its range check
  // passes, asked first, as Bf16Fmod. float16 with F16C takes its steps a whole pack at a
  // time (Short16<half>::round_pack; FlagsFirst with every lane flagged, then ExactPack), so that
  // each rounding is two F16C conversions of 8 or 16 lanes, not ~14 integer and float instructions.
  enum { kRoundPack = Short16<T>::kRoundPack, kVectorExact = 1, kFlagsFirst = Short16<T>::kChecked || kRoundPack,
         kExactPack = kRoundPack };
  SW_INLINE float operator()(float a, float b) const { return from_fmod(a, b, Short16<T>::fmod(a, b)); }
  SW_INLINE static bool wide(float a, float b) { return kRoundPack || bf16_far_host(a, b); }
  SW_INLINE static float fast(float a, float b, FastFlag&) { return from_fmod(a, b, fmod_short(a, b)); }
  template <int P> SW_INLINE static void exact(float* y, const float* a, const float* b) {
    if constexpr (P % 8 == 0 && kRoundPack) {
      float t[P], d[P], fl[P], up[P];
      SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = fmod_short(a[e], b[e]), t[e] = a[e] - y[e];
      Short16<T>::template round_pack<P>(t);
      SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) d[e] = t[e] / b[e];
      Short16<T>::template round_pack<P>(d);
      SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) t[e] = d[e] - 1.0f;
      Short16<T>::template round_pack<P>(t);
      SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) d[e] = fix_of(b[e], y[e]) ? t[e] : d[e], fl[e] = sw_floor(d[e]);
      Short16<T>::template round_pack<P>(fl);
      SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) up[e] = fl[e] + 1.0f;
      Short16<T>::template round_pack<P>(up);
      SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = finish(a[e], b[e], d[e], fl[e], up[e]);
    } else {
      SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = TorchFloorDivide16()(a[e], b[e]);
    }
  }
  // torch's -1 fix: mod nonzero, of a sign other than b's (sign bits: b = +-0 and NaN lanes
  // take another result below)
  SW_INLINE static bool fix_of(float b, float mod) {
    const u32 um = bit_cast<u32>(mod);
    return ((um & 0x7fffffffu) != 0) & (((um ^ bit_cast<u32>(b)) & 0x80000000u) != 0);
  }
  // The last step from the quotient div (the fix applied, rounded), its floor fl and fl + 1
  // (each rounded): fl, or fl + 1 where div - fl > 1/2; a zero of a / b's sign for a zero div;
  // a / b for b = +-0 (inf of the quotient's sign, NaN for a zero or NaN a).
  SW_INLINE static float finish(float a, float b, float div, float fl, float up) {
    const u32 sign = 0x80000000u, ub = bit_cast<u32>(b), aa = bit_cast<u32>(a) & ~sign;
    const u32 sq = (bit_cast<u32>(a) ^ ub) & sign, more = 0u - (u32)(div - fl > 0.5f);
    const u32 q = (bit_cast<u32>(up) & more) | (bit_cast<u32>(fl) & ~more);
    const u32 zero = 0u - (u32)(div == 0.0f), bzero = 0u - (u32)((ub & ~sign) == 0);
    const u32 nan = 0u - (u32)((aa == 0) | (aa > 0x7f800000u));
    const u32 by_zero = ((0x7f800000u | sq) & ~nan) | (0x7fc00000u & nan);
    const u32 r = (q & ~zero) | (sq & zero);
    return bit_cast<float>((r & ~bzero) | (by_zero & bzero));
  }
  SW_INLINE static float from_fmod(float a, float b, float mod) {
    typedef Short16<T> S;
    const float d0 = S::round(S::round(a - mod) / b);
    const float div = fix_of(b, mod) ? S::round(d0 - 1.0f) : d0;
    const float fl = S::round(sw_floor(div));
    return finish(a, b, div, fl, S::round(fl + 1.0f));
  }
};
#endif
template <> struct FloorDivideSelect<half, kTorch> { typedef TorchFloorDivide16<half> type; };
template <> struct FloorDivideSelect<bfloat16, kTorch> { typedef TorchFloorDivide16<bfloat16> type; };

// torch's CUDA floor_divide of a 16-bit tensor by a number: the number in float32 and its
// float reciprocal.
template <class T> struct TorchFloorDivideByNumber16 {
  SW_HOST_DEVICE SW_INLINE float operator()(float a, float b) const {
    if (b == 0) return a / b;
    const float inv = 1.0f / b, mod = sw_fmod(a, b);
    float div = (a - mod) * inv;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0f;
    return div == 0 ? sw_copysign(0.0f, a * inv) : floor_rounded<RoundTo<T>>(div);
  }
};

// fmod of bfloat16 operands (as floats). Fast path and exact form are remainder's for
// bfloat16 (functors.h ShortRemainderFunctor<true>), on magnitudes:
// - device: the range check first (remainder_wide without step 0: finite |a| >= |b| 2^39,
//   subnormal or huge |b|), and two lanes at a time (Wide2); unflagged lanes take
//   remainder_fast without step 0 and its checks, on a' = |a| with b's sign: its floor modulus
//   of a' by b is then |a| mod |b| with b's sign (a' and b agree in sign, so no rounding of
//   a + b arises), and a's sign copied in gives fmod. A warp with a flagged lane redoes its
//   packs as remainder does: bf16_fmod in every lane, which is fmod (a's sign) for every
//   bfloat16 pair. A prepared divisor is remainder's (Divisor). H200, 2^27, contiguous,
//   against FmodFunctor<float> (step 0 in every lane, the rest a call): narrow 189 against
//   220-222 us, subnormal divisors 264 against 697-702, near max 264 against 638-642,
//   huge quotients 264 against 222-223.
// The float functor's step 0 in every lane would keep huge quotients at 222 us but leaves
//   narrow at 0.85x torch eager; this form is at 1.0x torch eager or more in every cell.
// - host: remainder's too: bf16_far_host first, fmod_short (float, 8 lanes a vector) where
//   no lane of the pack is flagged, else bf16_fmod_host in every lane.
// tests/test_cuda_bf16_ops.py runs every bfloat16 pair through fmod and floor_divide on the
// device, divisors dense and prepared; tests/test_bf16_ops.py every dividend by the host
// table's divisors.
#if defined(__CUDA_ARCH__)
struct Bf16Fmod : FmodFlagsFirst<false> {
  SW_DEVICE SW_INLINE float operator()(float a, float b) const { return bf16_fmod(a, b); }
#else
struct Bf16Fmod {
  enum { kFlagsFirst = 1, kVectorExact = 1 };
  SW_INLINE float operator()(float a, float b) const { return bf16_fmod_host(a, b); }
  SW_INLINE static bool wide(float a, float b) { return bf16_far_host(a, b); }
  SW_INLINE static float fast(float a, float b, FastFlag&) { return fmod_short(a, b); }
#endif
};

#if !defined(__CUDA_ARCH__)
// floor_divide of bfloat16 operands on the host: NumPy's definition (floor_divide_from_fmod)
// from Bf16Fmod's exact fmod. The device keeps FloorDivideFunctor<float> (float's fmod with
// step 0 per element, its rare lanes a call): flags first with this fmod, huge quotients read
// 803-809 against 373-388 us contiguous and 1684-1686 against 379-390 outer (below torch
// eager), narrow 466-470 against 524-544 and subnormal divisors 819-823 against 1170-1195
// (H200, 2^27, two rounds).
struct Bf16FloorDivide : Bf16Fmod {
  SW_INLINE float operator()(float a, float b) const {
    return floor_divide_from_fmod(a, b, bf16_fmod_host(a, b));
  }
  SW_INLINE static float fast(float a, float b, FastFlag&) {
    return floor_divide_from_fmod(a, b, fmod_short(a, b));
  }
};
template <> struct FloorDivideSelect<bfloat16, kNumpy> { typedef Bf16FloorDivide type; };

// float16 on the host: fmod_short (functors.h), exact for every pair, so no fast path and no
// flag: float's double form ran 4 lanes a vector and a division each.
struct HalfFmod {
  SW_INLINE float operator()(float a, float b) const { return fmod_short(a, b); }
};
struct HalfFloorDivide {
  SW_INLINE float operator()(float a, float b) const { return floor_divide_from_fmod(a, b, fmod_short(a, b)); }
};
template <> struct FmodSelect<half> { typedef HalfFmod type; };
template <> struct FloorDivideSelect<half, kNumpy> { typedef HalfFloorDivide type; };
#endif

template <> struct FmodSelect<bfloat16> { typedef Bf16Fmod type; };

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The range check two lanes at a time: remainder's (it reads magnitudes only).
template <> struct Wide2<Bf16Fmod, bfloat16> : Wide2<RemainderFunctor<bfloat16, kTorch>, bfloat16> {};
#endif

}  // namespace sw
