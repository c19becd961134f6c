// The functors behind the keywords NumPy and torch users pass to an op (ops/keywords.py):
// where= wraps an op's functor, alpha= and rounding_mode="trunc" are ops of their own.
#pragma once
#include "ops.h"

namespace sw {

#define SW_KU(x) ((typename Unsigned<T>::type)(x))

// where=: F's value where the mask holds, rounded to the op's result type R before out's type
// O (NumPy's loop runs in R, then casts into out); out keeps its own value elsewhere. One
// kernel: out is read and written in place of a second pass.
template <class F, class R> struct MaskedInto {
  template <class A, class O>
  SW_HOST_DEVICE SW_INLINE void operator()(bool m, A a, O& y) const {
    if (m) y = convert<O>(convert<R>(F()(a)));
  }
  template <class A, class B, class O>
  SW_HOST_DEVICE SW_INLINE void operator()(bool m, A a, B b, O& y) const {
    if (m) y = convert<O>(convert<R>(F()(a, b)));
  }
  template <class A, class B, class C, class O>
  SW_HOST_DEVICE SW_INLINE void operator()(bool m, A a, B b, C c, O& y) const {
    if (m) y = convert<O>(convert<R>(F()(a, b, c)));
  }
};

// alpha=: torch's add, a + alpha * b (sub passes -alpha), as one fused multiply-add in the
// math type: torch's CPU vector loop is fmadd(b, alpha, a) and CUDA contracts the same
// expression. Integers wrap; bool is a or (alpha and b); complex is a + alpha * b.
template <class T> struct AddScaledFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b, T alpha) const {
    if constexpr (IsInt<T>::value) return (T)(SW_KU(a) + SW_KU(alpha) * SW_KU(b));
    else if constexpr (IsComplex<T>::value) return a + alpha * b;
    else return FmaFunctor<T>()(b, alpha, a);
  }
};
template <> struct AddScaledFunctor<bool> {
  SW_HOST_DEVICE SW_INLINE bool operator()(bool a, bool b, bool alpha) const { return a || (alpha && b); }
};

// rounding_mode="trunc": the quotient rounded toward zero. Integers divide as C does; x / 0
// gives 0 (floor_divide's policy: torch raises ZeroDivisionError on the CPU) and MIN / -1
// wraps to MIN. Floats: trunc(a / b) in the math type, rounded once on store (float32,
// float64, and torch's CPU 16-bit division by a number).
template <class T> struct TruncDivideFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    if constexpr (IsInt<T>::value) {
      if (b == 0) return T(0);
      if constexpr (T(-1) < T(0)) {
        if (b == T(-1)) return (T)(SW_KU(0) - SW_KU(a));
      }
      return (T)(a / b);
    } else {
      return trunc(a / b);
    }
  }
};
template <> struct TruncDivideFunctor<bool> {   // NumPy's bool // bool promotes first
  SW_HOST_DEVICE SW_INLINE bool operator()(bool a, bool b) const { return b && a; }
};
// 16-bit floats: the quotient rounded to S (float16 or bfloat16) before trunc, as NumPy's
// np.trunc(a / b) and torch's Half and BFloat16 division of two tensors round it.
template <class S> struct TruncDivideRounded16 {
  SW_HOST_DEVICE SW_INLINE float operator()(float a, float b) const {
    return trunc(convert<float>(convert<S>(a / b)));
  }
};
// torch's CUDA division by a number: a times the number's reciprocal in the math type.
template <class M> struct TruncDivideByNumberFunctor {
  SW_HOST_DEVICE SW_INLINE M operator()(M a, M b) const { return trunc(a * (M(1) / b)); }
};

#undef SW_KU
}  // namespace sw
