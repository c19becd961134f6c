// stridewise/math.h: the math functors (exp, log, sin, cos, tanh, sigmoid, pow) and what their
// unqualified calls find first, as a user operation's do (UserOp derives from sw::UserMath):
// on the host with libmvec, sw::UserMath's vector math (cpu/vmath.h), called for whole packs
// from an `omp simd` element loop (SW_USER_LOOP; Op::compute's plain loop is one too);
// elsewhere nothing, and libm as written.
//
// Apart from ops.h because vmath.h defines the libmvec wrappers: only the kernels that call
// them carry them (the precompiled header holds ops.h, not this; backends/_pch.py).
#pragma once
#include "ops.h"

#define SW_USER_LOOP(P) SW_UNROLL
#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#include "cpu/vmath.h"
#else
namespace sw {
struct UserMath {};
}  // namespace sw
#endif

namespace sw {

// The functors sit in namespace sw, whose complex exp, log, ... (complex.h) would hide the C
// library's functions from an unqualified call that UserMath does not answer (the device; a
// host without libmvec).
using ::exp;
using ::log;
using ::sin;
using ::cos;
using ::tanh;
using ::pow;
using ::sqrt;

// Transcendentals: the C library's or libmvec's (host: UserMath above) or CUDA's (device)
// overloads, float or double. They agree with NumPy and torch to a few ulp, not bit for bit
// (ops/builtins.py TOLERANCE_ULP).
#define SW_MATH_FUNCTOR(Name, f)                                                   \
  template <class T> struct Name : UserMath {                                      \
    SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return f(a); }              \
  };
SW_MATH_FUNCTOR(ExpFunctor, exp)
SW_MATH_FUNCTOR(SinFunctor, sin)
SW_MATH_FUNCTOR(CosFunctor, cos)
#undef SW_MATH_FUNCTOR
// log of T, computed in M. A float16 or bfloat16 result takes libmvec's logf on the host
// (cpu/vmath.h): within its 1-ulp tolerance, and faster than float32's own form in doubles.
template <class M, class T = M> struct LogFunctor : UserMath {
  SW_HOST_DEVICE SW_INLINE M operator()(M a) const { return log(a); }
};
#if defined(SW_VM_LOGF16)
template <> struct LogFunctor<float, half> {
  SW_INLINE float operator()(float a) const { return sw_vm_logf16(a); }
};
template <> struct LogFunctor<float, bfloat16> : LogFunctor<float, half> {};
#endif

// pow: the C library's pow for floats. Integers square-and-multiply with wrapping; a negative
// exponent gives trunc(a ** b): 1 for a = 1, +-1 for a = -1, else 0 (torch's definition;
// NumPy raises, and so does stridewise when the exponent is a Python int).
template <class T> SW_HOST_DEVICE SW_INLINE T int_pow(T a, T b) {
  if (b < 0) {   // signed only
    if (a == 1) return 1;
    if (minus_one(a)) return (b & 1) ? T(-1) : T(1);
    return 0;
  }
  typename Unsigned<T>::type r = 1, x = (typename Unsigned<T>::type)a;   // wrapping
  for (; b; b >>= 1) {
    if (b & 1) r *= x;
    x *= x;
  }
  return (T)r;
}
// int_pow's steps for exponents below 256, branch-free: eight steps whatever the exponent, so
// the lanes of a pack run in step and vectorize (int_pow takes a branch per bit and kept the
// host's loop scalar, about 19 ns an element). Past the eighth step every bit is 0 and
// int_pow's further squarings change nothing, so the result is its own.
template <class T> SW_HOST_DEVICE SW_INLINE T int_pow_small(T a, T b, FastFlag& slow) {
  typedef typename Unsigned<T>::type U;   // at least 32 bits: wrapping products without UB
  U r = 1, x = (U)a, e = (U)b;
  slow |= e >= 256u;                      // a negative or larger exponent: int_pow
  SW_UNROLL for (int i = 0; i < 8; ++i) {
    r = (e & 1u) ? r * x : r;
    x *= x;
    e >>= 1;
  }
  return (T)r;
}
#if !defined(__CUDA_ARCH__)
// int_pow for a pack int_pow_small flags (a negative exponent, or one past 255) on the host:
// the lanes in step for as many steps as the pack's largest exponent has bits, in `omp simd`
// loops (int_pow's per-lane loop: 6.7 ms for 2^20 int16 lanes with one exponent in 97 past
// 255, the packs nearly all flagged).
template <int P, class T> SW_INLINE void int_pow_pack(T* y, const T* a, const T* b) {
  typedef typename Unsigned<T>::type U;
  U r[P], x[P], e[P], left = 0;
  SW_SIMD_OR(left) for (int l = 0; l < P; ++l) {
    r[l] = 1;
    x[l] = (U)a[l];
    e[l] = b[l] < T(0) ? U(0) : (U)b[l];
    left |= e[l];
  }
  while (left) {
    U next = 0;
    SW_SIMD_OR(next) for (int l = 0; l < P; ++l) {
      r[l] = (e[l] & 1u) ? r[l] * x[l] : r[l];
      x[l] *= x[l];
      e[l] >>= 1;
      next |= e[l];
    }
    left = next;
  }
  SW_FAST_LOOP(P) for (int l = 0; l < P; ++l) {   // a negative exponent: int_pow's trunc(a ** b)
    const T neg = a[l] == T(1) ? T(1) : minus_one(a[l]) ? ((b[l] & 1) ? T(-1) : T(1)) : T(0);
    y[l] = b[l] < T(0) ? neg : (T)r[l];
  }
}
#endif
template <class T, bool = IsInt<T>::value> struct PowFunctor : UserMath {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return pow(a, b); }
};
template <class T> struct PowFunctor<T, true> {
  SW_HOST_DEVICE SW_INLINE static T fast(T a, T b, FastFlag& slow) { return int_pow_small(a, b, slow); }
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return int_pow(a, b); }
#if !defined(__CUDA_ARCH__)
  enum { kExactPack = 1 };
  template <int P> SW_INLINE static void exact(T* y, const T* a, const T* b) { int_pow_pack<P>(y, a, b); }
#endif
};

// torch's pow of floats by a number (its Scalar overload; on CUDA a CPU 0-d tensor too): an
// exponent of 0.5 is sqrt and -0.5 one over it (CUDA: rsqrt), so pow(-0.0, 0.5) is -0.0 and
// pow(-0.0, -0.5) is -inf where C's pow gives +0 and +inf. Its other special exponents (2, 3,
// -1, -2) give pow's values within its tolerance.
template <class T> struct TorchPowByNumberFunctor : UserMath {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    if (b == T(0.5)) return sqrt(a);
#if defined(__CUDA_ARCH__)
    if (b == T(-0.5)) return rsqrt(a);
#else
    if (b == T(-0.5)) return T(1) / sqrt(a);
#endif
    return pow(a, b);
  }
};

// NumPy's float32 and float64 pow by one exponent value (its loop's exponent stride 0): 0.5
// is sqrt, as torch's (pipeline.py numpy_numbers); its other special exponents (-1, 0, 1, 2)
// give pow's values within its tolerance.
template <class T> struct NumpyPowByOneValueFunctor : UserMath {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const { return b == T(0.5) ? sqrt(a) : pow(a, b); }
};

template <class T> struct TanhFunctor : UserMath {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return tanh(a); }
};
template <class T> struct SigmoidFunctor : UserMath {   // torch's 1 / (1 + exp(-x))
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return T(1) / (T(1) + exp(-a)); }
};

}  // namespace sw
