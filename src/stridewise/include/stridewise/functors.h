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

SW_HOST_DEVICE SW_INLINE float sw_fmod(float a, float b) { return fmodf(a, b); }
SW_HOST_DEVICE SW_INLINE double sw_fmod(double a, double b) { return fmod(a, b); }

// NVRTC has no __builtin_inff; the device intrinsic builds the same bits.
SW_HOST_DEVICE SW_INLINE float sw_inf() {
#if defined(__CUDA_ARCH__)
  return __int_as_float(0x7f800000);
#else
  return __builtin_inff();
#endif
}

// fmod for operands that came from float16 or bfloat16 (at most 11 significant bits).
// With A = |a|, B = |b| and A / B < 2^22, q = trunc(A / B) is off by at most one, and
// r = A - q * B is exact in one fused operation because r and r +- B fit in 24 bits.
// One compare-and-add fixes the off-by-one. Everything else (inf, NaN, zero divisor,
// huge quotients) takes fmodf. Proven over all 2^32 pairs per dtype (tests/gpu).
SW_HOST_DEVICE SW_INLINE float fmod_short(float a, float b) {
  const float A = fabsf(a), B = fabsf(b);
  if (!(A < B * 4194304.0f) || !(B < sw_inf())) return fmodf(a, b);
  const float q = truncf(A / B);
#if defined(__CUDA_ARCH__)
  float r = fmaf(-q, B, A);
#else
  // The host has no guaranteed FMA; the double product of a 22-bit q and an 11-bit B is exact.
  float r = (float)((double)A - (double)q * (double)B);
#endif
  if (r < 0.0f) r += B;
  else if (r >= B) r -= B;
  return copysignf(r, a);
}

template <class T, Convention C>
struct RemainderFunctor {
  typedef typename OpMath<T>::type M;
  SW_HOST_DEVICE SW_INLINE M operator()(M a, M b) const {
    M m = sw_fmod(a, b);
    return adjust(m, b);
  }
  SW_HOST_DEVICE SW_INLINE static M adjust(M m, M b) {
    // torch compares with < 0, so a zero keeps fmod's sign (the dividend's); NumPy gives
    // a zero the divisor's sign.
    if (m != 0) {
      if ((m < 0) != (b < 0)) m += b;
    } else if (C == kNumpy) {
      m = copysign_(M(0), b);
    }
    return m;
  }
  SW_HOST_DEVICE SW_INLINE static float copysign_(float x, float y) { return copysignf(x, y); }
  SW_HOST_DEVICE SW_INLINE static double copysign_(double x, double y) { return copysign(x, y); }
};

template <class T, Convention C>
struct ShortRemainderFunctor {
  SW_HOST_DEVICE SW_INLINE float operator()(float a, float b) const {
    return RemainderFunctor<float, C>::adjust(fmod_short(a, b), b);
  }
};
template <Convention C> struct RemainderFunctor<half, C> : ShortRemainderFunctor<half, C> {};
template <Convention C> struct RemainderFunctor<bfloat16, C> : ShortRemainderFunctor<bfloat16, C> {};

// Integers: a zero divisor gives 0 (NumPy's answer, and never a trap), and -1 gives 0 so
// INT_MIN / -1 is never evaluated. Both conventions agree on integers.
template <class T>
SW_HOST_DEVICE SW_INLINE T int_remainder(T a, T b) {
  if (b == 0 || b == -1) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
template <Convention C> struct RemainderFunctor<i32, C> {
  SW_HOST_DEVICE SW_INLINE i32 operator()(i32 a, i32 b) const { return int_remainder(a, b); }
};
template <Convention C> struct RemainderFunctor<i64, C> {
  SW_HOST_DEVICE SW_INLINE i64 operator()(i64 a, i64 b) const { return int_remainder(a, b); }
};

}  // namespace sw
