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
template <class T> struct PowFunctor : UserMath {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    if constexpr (IsInt<T>::value) return int_pow(a, b);
    else return pow(a, b);
  }
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

template <class T> struct TanhFunctor : UserMath {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return tanh(a); }
};
template <class T> struct SigmoidFunctor : UserMath {   // torch's 1 / (1 + exp(-x))
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return T(1) / (T(1) + exp(-a)); }
};

}  // namespace sw
