// stridewise/complex.h: complex64 and complex128 (sw::complex<float>, sw::complex<double>)
// and the built-in functors' complex forms, shared by the CPU and CUDA backends.
//
// A minimal struct of two floats (NVRTC has neither <complex> nor thrust's headers), laid out
// as NumPy, torch and CuPy store complex values: real part first, 8 or 16 bytes aligned to
// their size. Arithmetic rounds where the source puts it on both backends: the host compiles
// with -ffp-contract=off, and the device spells each rounding (mul_rn, add_rn: NVRTC fuses
// a * b + c into an fma by default), so a kernel gives the same bits on both.
//
// Where the libraries differ, the functors take the owning library's formula (Convention):
// - multiply: NumPy's SIMD loop forms ar * br - ai * bi as fma(ar, br, -(ai * bi)) and the
//   imaginary part as fma(ar, bi, ai * br) (x86-64 with FMA, which NumPy dispatches to);
//   torch's CPU kernel rounds each product (ar * br - ai * bi). square is multiply(a, a).
// - divide: NumPy's Smith division (torch's CPU kernel scales by an approximate reciprocal
//   and is not reproduced bit for bit: within COMPLEX_TOLERANCE_ULP there).
// - abs: NumPy's max * sqrt(1 + (min / max)^2) with one fma; torch's hypot.
// - exp, log, sqrt, sin, cos, tanh, pow: the C library's cexp, clog, ... on the host (what
//   NumPy and torch call on the CPU: bit for bit there); on the device `formulas`, with the
//   C library's special values and within COMPLEX_TOLERANCE_ULP of it elsewhere. pow follows
//   NumPy's npy_cpow: x ** 0 = 1, integer exponents |n| < 100 by repeated multiplication
//   (then 1 / r for n < 0), else the library's cpow.
#pragma once
#include "ops.h"   // the functors specialized below (ops.h includes this file last)

namespace sw {

template <class R>
struct alignas(2 * sizeof(R)) complex {
  R re, im;
  complex() = default;
  SW_HOST_DEVICE constexpr complex(R r, R i = R(0)) : re(r), im(i) {}
  template <class S>   // complex<double>(complex<float>) and back, as thrust converts
  SW_HOST_DEVICE constexpr complex(const complex<S>& z) : re((R)z.re), im((R)z.im) {}
  SW_HOST_DEVICE constexpr R real() const { return re; }
  SW_HOST_DEVICE constexpr R imag() const { return im; }
  SW_HOST_DEVICE SW_INLINE void real(R r) { re = r; }
  SW_HOST_DEVICE SW_INLINE void imag(R i) { im = i; }
};

template <class T> struct IsComplex { enum { value = 0 }; };
template <class R> struct IsComplex<complex<R> > { enum { value = 1 }; };

// One rounding each, never contracted into an fma (the device's default is to fuse).
SW_HOST_DEVICE SW_INLINE float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
SW_HOST_DEVICE SW_INLINE double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
SW_HOST_DEVICE SW_INLINE float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
SW_HOST_DEVICE SW_INLINE double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
template <class R> SW_HOST_DEVICE SW_INLINE R sub_rn(R a, R b) { return add_rn(a, -b); }
// a - b where b is a product: on the host the negation flips b's sign bit as an integer.
// GCC 12's vectorizer recognizes a complex product (ar br - ai bi, ar bi + ai br) and emits
// fused vfmaddsub for it even under -ffp-contract=off (half the float32 products came out
// fused); an integer negation is outside the pattern.
SW_HOST_DEVICE SW_INLINE float sub_product(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, -b);
#else
  return a + bit_cast<float>(bit_cast<u32>(b) ^ 0x80000000u);
#endif
}
SW_HOST_DEVICE SW_INLINE double sub_product(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, -b);
#else
  return a + bit_cast<double>(bit_cast<u64>(b) ^ 0x8000000000000000ull);
#endif
}
SW_HOST_DEVICE SW_INLINE float fma_rn(float a, float b, float c) { return fmaf(a, b, c); }
SW_HOST_DEVICE SW_INLINE double fma_rn(double a, double b, double c) { return fma(a, b, c); }

template <class R> SW_HOST_DEVICE SW_INLINE complex<R> operator+(complex<R> a, complex<R> b) {
  return complex<R>(add_rn(a.re, b.re), add_rn(a.im, b.im));
}
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> operator-(complex<R> a, complex<R> b) {
  return complex<R>(sub_rn(a.re, b.re), sub_rn(a.im, b.im));
}
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> operator-(complex<R> a) {
  return complex<R>(-a.re, -a.im);
}
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> operator+(complex<R> a) { return a; }
// The textbook product, each product rounded (torch's CPU kernel, thrust, NumPy's scalar C).
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> operator*(complex<R> a, complex<R> b) {
  return complex<R>(sub_product(mul_rn(a.re, b.re), mul_rn(a.im, b.im)),
                    add_rn(mul_rn(a.re, b.im), mul_rn(a.im, b.re)));
}
// Smith's division as NumPy writes it (loops.c.src and npy_math's cdiv; torch's c10::complex
// copies it): a zero divisor divides each part by |br| = 0, giving inf or NaN parts. Its
// subtractions negate as integers too (sub_product): GCC fused a + b * rat, b - a * rat as
// a complex product where rows peeled a lane.
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> operator/(complex<R> a, complex<R> b) {
  const R abr = fabs(b.re), abi = fabs(b.im);
  if (abr >= abi) {
    if (abr == R(0) && abi == R(0)) return complex<R>(a.re / abr, a.im / abi);
    const R rat = b.im / b.re;
    const R scl = R(1) / add_rn(b.re, mul_rn(b.im, rat));
    return complex<R>(mul_rn(add_rn(a.re, mul_rn(a.im, rat)), scl),
                      mul_rn(sub_product(a.im, mul_rn(a.re, rat)), scl));
  }
  const R rat = b.re / b.im;
  const R scl = R(1) / add_rn(b.im, mul_rn(b.re, rat));
  return complex<R>(mul_rn(add_rn(mul_rn(a.re, rat), a.im), scl),
                    mul_rn(sub_product(mul_rn(a.im, rat), a.re), scl));
}
// Mixed with a real value (user kernels write 2 * z, z / 2.0f): the real promoted first.
#define SW_COMPLEX_MIXED(op)                                                              \
  template <class R> SW_HOST_DEVICE SW_INLINE complex<R> operator op(complex<R> a, R b) {  \
    return a op complex<R>(b);                                                            \
  }                                                                                       \
  template <class R> SW_HOST_DEVICE SW_INLINE complex<R> operator op(R a, complex<R> b) {  \
    return complex<R>(a) op b;                                                            \
  }
SW_COMPLEX_MIXED(+) SW_COMPLEX_MIXED(-) SW_COMPLEX_MIXED(*) SW_COMPLEX_MIXED(/)
#undef SW_COMPLEX_MIXED
template <class R> SW_HOST_DEVICE SW_INLINE complex<R>& operator+=(complex<R>& a, complex<R> b) { return a = a + b; }
template <class R> SW_HOST_DEVICE SW_INLINE complex<R>& operator-=(complex<R>& a, complex<R> b) { return a = a - b; }
template <class R> SW_HOST_DEVICE SW_INLINE complex<R>& operator*=(complex<R>& a, complex<R> b) { return a = a * b; }
template <class R> SW_HOST_DEVICE SW_INLINE complex<R>& operator/=(complex<R>& a, complex<R> b) { return a = a / b; }
template <class R> SW_HOST_DEVICE SW_INLINE bool operator==(complex<R> a, complex<R> b) {
  return a.re == b.re && a.im == b.im;
}
template <class R> SW_HOST_DEVICE SW_INLINE bool operator!=(complex<R> a, complex<R> b) { return !(a == b); }

// NumPy's lexicographic order (loops.c.src CLT, CLE, ...): by the real parts where neither
// imaginary part is NaN, by the imaginary parts where the real parts are equal. torch has no
// order on complex values; the ops that use it are NumPy's only (_complex.NUMPY_ONLY).
#define SW_COMPLEX_ORDER(op, strict)                                                     \
  template <class R> SW_HOST_DEVICE SW_INLINE bool operator op(complex<R> a, complex<R> b) { \
    return (a.re strict b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im op b.im); \
  }
SW_COMPLEX_ORDER(<, <) SW_COMPLEX_ORDER(<=, <) SW_COMPLEX_ORDER(>, >) SW_COMPLEX_ORDER(>=, >)
#undef SW_COMPLEX_ORDER

template <class R> SW_HOST_DEVICE SW_INLINE R real(complex<R> z) { return z.re; }
template <class R> SW_HOST_DEVICE SW_INLINE R imag(complex<R> z) { return z.im; }
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> conj(complex<R> z) { return complex<R>(z.re, -z.im); }
template <class R> SW_HOST_DEVICE SW_INLINE R norm(complex<R> z) { return add_rn(mul_rn(z.re, z.re), mul_rn(z.im, z.im)); }

// Casts: to a real type the real part (NumPy and torch drop the imaginary part), to bool
// "nonzero", from a real type (re, 0). The 16-bit floats go through float.
template <class To, class R> struct Convert<To, complex<R> > {
  SW_HOST_DEVICE SW_INLINE static To apply(complex<R> x) { return convert<To>(x.re); }
};
template <class R> struct Convert<bool, complex<R> > {
  SW_HOST_DEVICE SW_INLINE static bool apply(complex<R> x) { return x.re != R(0) || x.im != R(0); }
};
template <class R, class From> struct Convert<complex<R>, From> {
  SW_HOST_DEVICE SW_INLINE static complex<R> apply(From x) { return complex<R>(convert<R>(x)); }
};
template <class R, class S> struct Convert<complex<R>, complex<S> > {
  SW_HOST_DEVICE SW_INLINE static complex<R> apply(complex<S> x) {
    return complex<R>(convert<R>(x.re), convert<R>(x.im));
  }
};
template <class R> struct Convert<complex<R>, complex<R> > {
  SW_HOST_DEVICE SW_INLINE static complex<R> apply(complex<R> x) { return x; }
};
#define SW_COMPLEX_HALF(H, to_float, from_float)                                           \
  template <class R> struct Convert<complex<R>, H> {                                        \
    SW_HOST_DEVICE SW_INLINE static complex<R> apply(H x) { return complex<R>((R)to_float(x.bits)); } \
  };                                                                                        \
  template <class R> struct Convert<H, complex<R> > {                                       \
    SW_HOST_DEVICE SW_INLINE static H apply(complex<R> x) { return convert<H>(x.re); }      \
  };
SW_COMPLEX_HALF(half, half_to_float, float_to_half)
SW_COMPLEX_HALF(bfloat16, bfloat16_to_float, float_to_bfloat16)
#undef SW_COMPLEX_HALF

// -- the complex functions the device computes ---------------------------------------------
// C99 Annex G's special values (infinite and NaN parts, signed zeros), which the C library
// that NumPy and torch call on the CPU gives, and for finite arguments the textbook formulas,
// scaled where a step would overflow or lose a subnormal's bits; each part within a few ulp
// of the C library's (COMPLEX_TOLERANCE_ULP). Compiled on the host too, where the tests call
// them in a CPU user kernel and compare them with NumPy (tests/test_complex.py).
namespace formulas {
template <class R> SW_HOST_DEVICE SW_INLINE bool finite(R x) { return x - x == R(0); }
template <class R> SW_HOST_DEVICE SW_INLINE bool infinite(R x) { return x == x && x - x != R(0); }
SW_HOST_DEVICE SW_INLINE void sin_cos(float y, float* s, float* c) { sincosf(y, s, c); }
SW_HOST_DEVICE SW_INLINE void sin_cos(double y, double* s, double* c) { sincos(y, s, c); }
// max(): the largest finite value; lift(): 2^digits (lift^2 makes a subnormal normal, with room
// above); log_max(): below log(max()), where e^x is still finite.
template <class R> struct Range;
template <> struct Range<float> {
  SW_HOST_DEVICE static constexpr float max() { return 3.4028234663852886e38f; }
  SW_HOST_DEVICE static constexpr float lift() { return 16777216.0f; }
  SW_HOST_DEVICE static constexpr float log_max() { return 88.0f; }
};
template <> struct Range<double> {
  SW_HOST_DEVICE static constexpr double max() { return 1.7976931348623157e308; }
  SW_HOST_DEVICE static constexpr double lift() { return 9007199254740992.0; }
  SW_HOST_DEVICE static constexpr double log_max() { return 709.0; }
};

// The library's hypot, finite wherever the result is: CUDA's rounds (max, 1) up to inf, so an
// infinite result of finite parts is computed again as big * sqrt(1 + (small / big)^2),
// which is big itself where small / big is below half an ulp.
template <class R> SW_HOST_DEVICE SW_INLINE R hypot(R x, R y) {
  const R h = ::hypot(x, y);
  if (finite(h) || !finite(x) || !finite(y)) return h;
  const R ax = fabs(x), ay = fabs(y), big = ax > ay ? ax : ay, r = (ax > ay ? ay : ax) / big;
  return mul_rn(::sqrt(fma_rn(r, r, R(1))), big);
}
// e^x (cos y + i sin y); past log(max) as e^(x/2) twice, so e^x cos y stays finite where it is.
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> exp(complex<R> z) {
  const R x = z.re, y = z.im, inf = R(1) / R(0), nan = inf - inf;
  if (y == R(0)) return complex<R>(::exp(x), y);          // the real axis, NaN and -inf too
  if (!finite(y)) {
    if (infinite(x)) return x > R(0) ? complex<R>(x, nan) : complex<R>(R(0), copysign(R(0), y));
    return complex<R>(nan, nan);
  }
  if (x != x) return complex<R>(nan, nan);
  R s, c;
  sin_cos(y, &s, &c);
  if (infinite(x)) {
    const R v = x > R(0) ? x : R(0);
    return complex<R>(copysign(v, c), copysign(v, s));
  }
  if (x > Range<R>::log_max()) {
    const R e = ::exp(R(0.5) * x);
    return complex<R>(mul_rn(mul_rn(e, c), e), mul_rn(mul_rn(e, s), e));
  }
  const R e = ::exp(x);
  return complex<R>(mul_rn(e, c), mul_rn(e, s));
}
// log|z| + i arg z; |z| near 1 as log1p(x^2 + y^2 - 1) / 2 (fma keeps the difference), and
// |z| past the range, or subnormal, scaled first.
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> log(complex<R> z) {
  const R x = z.re, y = z.im, inf = R(1) / R(0), nan = inf - inf;
  if (x != x || y != y) return complex<R>(infinite(x) || infinite(y) ? inf : nan, nan);
  const R ax = fabs(x), ay = fabs(y), big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
  const R ln2 = R(0.6931471805599453);
  R re;
  if (big == inf) re = inf;
  else if (big == R(0)) re = -inf;
  else if (big > R(0.5) && big < R(2)) re = R(0.5) * log1p(fma_rn(small, small, fma_rn(big, big, R(-1))));
  else if (big > R(0.25) * Range<R>::max()) re = ::log(hypot(R(0.25) * x, R(0.25) * y)) + R(2) * ln2;
  else if (big < R(1) / (Range<R>::lift() * Range<R>::lift() * Range<R>::lift())) {
    const R k = Range<R>::lift() * Range<R>::lift();
    re = ::log(hypot(x * k, y * k)) - R(sizeof(R) == 4 ? 48 : 106) * ln2;
  } else re = ::log(hypot(x, y));
  return complex<R>(re, atan2(y, x));
}
// t = sqrt((|x| + |z|) / 2), then (t, y / 2t) for x >= 0 and (|y| / 2t, copysign(t, y)) for
// x < 0; |z| near the range scaled by 1/4, subnormal parts by lift^2 (results by 1/lift).
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> sqrt(complex<R> z) {
  const R x = z.re, y = z.im, inf = R(1) / R(0);
  if (x == R(0) && y == R(0)) return complex<R>(R(0), y);
  if (infinite(y)) return complex<R>(inf, y);
  if (x != x) return complex<R>(x, x);                          // NaN real part: NaN
  if (infinite(x)) {
    if (x > 0) return complex<R>(x, y != y ? y : copysign(R(0), y));
    return complex<R>(y != y ? y : R(0), copysign(inf, y));     // sqrt(-inf + iy) = (0, +-inf)
  }
  const R big = fabs(x) > fabs(y) ? fabs(x) : fabs(y);
  R sx = x, sy = y, back = R(1);
  if (big > R(0.25) * Range<R>::max()) {
    sx = R(0.25) * x, sy = R(0.25) * y, back = R(2);
  } else if (big < R(1) / Range<R>::lift()) {
    sx = x * (Range<R>::lift() * Range<R>::lift()), sy = y * (Range<R>::lift() * Range<R>::lift());
    back = R(1) / Range<R>::lift();
  }
  const R t = ::sqrt(add_rn(R(0.5) * fabs(sx), R(0.5) * hypot(sx, sy)));
  if (sx >= R(0)) return complex<R>(t * back, sy / (R(2) * t) * back);
  return complex<R>(fabs(sy) / (R(2) * t) * back, copysign(t, sy) * back);
}
// sinh and cosh (sinh x cos y + i cosh x sin y, cosh x cos y + i sinh x sin y) with Annex G's
// special values; sin z = -i sinh(iz), cos z = cosh(iz), as the standard defines them.
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> sinh(complex<R> z) {
  const R x = z.re, y = z.im, inf = R(1) / R(0), nan = inf - inf;
  if (y == R(0) && x == x) return complex<R>(::sinh(x), y);
  if (!finite(y)) {
    if (x == R(0) || infinite(x)) return complex<R>(x, nan);
    return complex<R>(nan, nan);
  }
  if (x != x) return complex<R>(nan, y == R(0) ? y : nan);
  R s, c;
  sin_cos(y, &s, &c);
  if (infinite(x)) return complex<R>(mul_rn(x, c), mul_rn(inf, s));
  if (fabs(x) > Range<R>::log_max()) {     // e^|x| / 2 as two halves: finite where the result is
    const R h = ::exp(R(0.5) * fabs(x));
    const R re = mul_rn(mul_rn(c, h), R(0.5) * h);
    return complex<R>(x < R(0) ? -re : re, mul_rn(mul_rn(s, h), R(0.5) * h));
  }
  return complex<R>(mul_rn(::sinh(x), c), mul_rn(::cosh(x), s));
}
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> cosh(complex<R> z) {
  const R x = z.re, y = z.im, inf = R(1) / R(0), nan = inf - inf;
  if (y == R(0) && x == x) return complex<R>(::cosh(x), mul_rn(copysign(R(0), x), y));
  if (!finite(y)) {
    if (x == R(0)) return complex<R>(nan, R(0));
    return complex<R>(infinite(x) ? inf : nan, nan);
  }
  if (x != x) return complex<R>(nan, y == R(0) ? y : nan);
  R s, c;
  sin_cos(y, &s, &c);
  if (infinite(x)) return complex<R>(mul_rn(inf, c), mul_rn(x, s));
  if (fabs(x) > Range<R>::log_max()) {
    const R h = ::exp(R(0.5) * fabs(x));
    const R im = mul_rn(mul_rn(s, h), R(0.5) * h);
    return complex<R>(mul_rn(mul_rn(c, h), R(0.5) * h), x < R(0) ? -im : im);
  }
  return complex<R>(mul_rn(::cosh(x), c), mul_rn(::sinh(x), s));
}
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> sin(complex<R> z) {
  if (!finite(z.re) && infinite(z.im)) return complex<R>(z.re - z.re, fabs(z.im));   // as glibc's
  const complex<R> w = formulas::sinh(complex<R>(-z.im, z.re));
  return complex<R>(w.im, -w.re);
}
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> cos(complex<R> z) {
  return formulas::cosh(complex<R>(-z.im, z.re));
}
// Kahan's ctanh (as FreeBSD's msun writes it): with t = tan(y), beta = 1 + t^2, s = sinh(x),
// rho = sqrt(1 + s^2): tanh(z) = (beta rho s + i t) / (1 + beta s^2); past |x| = 22 the real
// part is +-1 and the imaginary part 4 sin(y) cos(y) e^(-2|x|), never inf / inf.
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> tanh(complex<R> z) {
  const R x = z.re, y = z.im, inf = R(1) / R(0), nan = inf - inf;
  if (x != x) return complex<R>(x, y == R(0) ? y : x);
  if (infinite(x)) {
    if (!finite(y)) return complex<R>(copysign(R(1), x), copysign(R(0), y));
    R sy, cy;
    sin_cos(y, &sy, &cy);
    return complex<R>(copysign(R(1), x), copysign(R(0), mul_rn(sy, cy)));
  }
  if (!finite(y)) return complex<R>(x == R(0) ? x : nan, nan);
  if (fabs(x) >= R(22)) {
    const R e = ::exp(-fabs(x));
    R sy, cy;
    sin_cos(y, &sy, &cy);
    return complex<R>(copysign(R(1), x), R(4) * sy * cy * e * e);
  }
  if (y == R(0)) return complex<R>(::tanh(x), y);
  const R t = ::tan(y), beta = R(1) + t * t, sh = ::sinh(x), rho = ::sqrt(R(1) + sh * sh);
  const R denom = R(1) + beta * sh * sh;
  return complex<R>(beta * rho * sh / denom, t / denom);
}
// C's complex product (Annex G.5.1): where the textbook form gives NaN in both parts, an
// infinite factor or product makes the result infinite, as the C library's cpow multiplies.
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> c_mul(complex<R> a, complex<R> b) {
  const R ac = mul_rn(a.re, b.re), bd = mul_rn(a.im, b.im), ad = mul_rn(a.re, b.im), bc = mul_rn(a.im, b.re);
  R x = sub_product(ac, bd), y = add_rn(ad, bc);
  if (x == x || y == y) return complex<R>(x, y);
  bool again = false;
  const auto box = [](R v) { return copysign(infinite(v) ? R(1) : R(0), v); };
  const auto zero_nan = [](R v) { return v != v ? copysign(R(0), v) : v; };
  if (infinite(a.re) || infinite(a.im)) {
    a = complex<R>(box(a.re), box(a.im)), b = complex<R>(zero_nan(b.re), zero_nan(b.im)), again = true;
  }
  if (infinite(b.re) || infinite(b.im)) {
    b = complex<R>(box(b.re), box(b.im)), a = complex<R>(zero_nan(a.re), zero_nan(a.im)), again = true;
  }
  if (!again && (infinite(ac) || infinite(bd) || infinite(ad) || infinite(bc))) {
    a = complex<R>(zero_nan(a.re), zero_nan(a.im)), b = complex<R>(zero_nan(b.re), zero_nan(b.im));
    again = true;
  }
  if (again) {
    const R inf = R(1) / R(0);
    x = inf * sub_product(mul_rn(a.re, b.re), mul_rn(a.im, b.im));
    y = inf * add_rn(mul_rn(a.re, b.im), mul_rn(a.im, b.re));
  }
  return complex<R>(x, y);
}
// a ** b as the C library's cpow: exp(b log a), C's product between.
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> pow(complex<R> a, complex<R> b) {
  return formulas::exp(c_mul(b, formulas::log(a)));
}
}  // namespace formulas

// -- the math functions ---------------------------------------------------------------------
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
// The host calls the C library's complex functions (GCC's builtins name them), as NumPy and
// torch do on the CPU.
template <class R> struct CBuiltin;
#define SW_CBUILTIN(R, sfx)                                                               \
  template <> struct CBuiltin<R> {                                                        \
    typedef __complex__ R C;                                                              \
    static SW_INLINE C to(complex<R> z) { C c; __real__ c = z.re; __imag__ c = z.im; return c; } \
    static SW_INLINE complex<R> from(C c) { return complex<R>(__real__ c, __imag__ c); }  \
    static SW_INLINE complex<R> exp(complex<R> z) { return from(__builtin_cexp##sfx(to(z))); } \
    static SW_INLINE complex<R> log(complex<R> z) { return from(__builtin_clog##sfx(to(z))); } \
    static SW_INLINE complex<R> sqrt(complex<R> z) { return from(__builtin_csqrt##sfx(to(z))); } \
    static SW_INLINE complex<R> sin(complex<R> z) { return from(__builtin_csin##sfx(to(z))); } \
    static SW_INLINE complex<R> cos(complex<R> z) { return from(__builtin_ccos##sfx(to(z))); } \
    static SW_INLINE complex<R> tanh(complex<R> z) { return from(__builtin_ctanh##sfx(to(z))); } \
    static SW_INLINE complex<R> pow(complex<R> a, complex<R> b) {                         \
      return from(__builtin_cpow##sfx(to(a), to(b)));                                     \
    }                                                                                     \
  };
SW_CBUILTIN(float, f)
SW_CBUILTIN(double, )
#undef SW_CBUILTIN
template <class R> SW_INLINE complex<R> exp(complex<R> z) { return CBuiltin<R>::exp(z); }
template <class R> SW_INLINE complex<R> log(complex<R> z) { return CBuiltin<R>::log(z); }
template <class R> SW_INLINE complex<R> sqrt(complex<R> z) { return CBuiltin<R>::sqrt(z); }
template <class R> SW_INLINE complex<R> sin(complex<R> z) { return CBuiltin<R>::sin(z); }
template <class R> SW_INLINE complex<R> cos(complex<R> z) { return CBuiltin<R>::cos(z); }
template <class R> SW_INLINE complex<R> tanh(complex<R> z) { return CBuiltin<R>::tanh(z); }
template <class R> SW_INLINE complex<R> cpow(complex<R> a, complex<R> b) { return CBuiltin<R>::pow(a, b); }
template <class R> SW_INLINE R abs(complex<R> z) { return hypot(z.re, z.im); }
template <class R> SW_INLINE R magnitude(complex<R> z) { return hypot(z.re, z.im); }
#else
// The device: the formulas below (exp, log, sqrt, sin, cos, tanh; pow as exp(b log a)).
template <class R> SW_DEVICE SW_INLINE R abs(complex<R> z) { return hypot(z.re, z.im); }   // torch's
template <class R> SW_DEVICE SW_INLINE R magnitude(complex<R> z) { return formulas::hypot(z.re, z.im); }
template <class R> SW_DEVICE SW_INLINE complex<R> exp(complex<R> z) { return formulas::exp(z); }
template <class R> SW_DEVICE SW_INLINE complex<R> log(complex<R> z) { return formulas::log(z); }
template <class R> SW_DEVICE SW_INLINE complex<R> sqrt(complex<R> z) { return formulas::sqrt(z); }
template <class R> SW_DEVICE SW_INLINE complex<R> sin(complex<R> z) { return formulas::sin(z); }
template <class R> SW_DEVICE SW_INLINE complex<R> cos(complex<R> z) { return formulas::cos(z); }
template <class R> SW_DEVICE SW_INLINE complex<R> tanh(complex<R> z) { return formulas::tanh(z); }
template <class R> SW_DEVICE SW_INLINE complex<R> cpow(complex<R> a, complex<R> b) { return formulas::pow(a, b); }
#endif

// NumPy's npy_cpow: the special cases and integer exponents, then the library's cpow (the
// device's formula where kFormulas: the tests run it on the host).
template <bool kFormulas = false, class R>
SW_HOST_DEVICE SW_INLINE complex<R> numpy_pow(complex<R> a, complex<R> b) {
  if (b.re == R(0) && b.im == R(0)) return complex<R>(R(1), R(0));
  if (a.re == R(0) && a.im == R(0)) {   // NumPy 2: 0 for any exponent of positive real part
    if (b.re > R(0)) return complex<R>(R(0), R(0));
    const R nan = R(0) / R(0);
    return complex<R>(nan, nan);
  }
  if (b.im == R(0) && b.re > R(-100) && b.re < R(100) && (R)(i64)b.re == b.re) {
    i64 n = (i64)b.re;
    if (n == 1) return a;
    if (n == 2) return a * a;
    if (n == 3) return a * (a * a);
    if (n < 0) n = -n;
    complex<R> acc(R(1), R(0)), p = a;
    for (i64 mask = 1;; mask <<= 1) {
      if (n & mask) acc = acc * p;
      if (n < (mask << 1)) break;
      p = p * p;
    }
    return b.re < R(0) ? complex<R>(R(1), R(0)) / acc : acc;
  }
  return kFormulas ? formulas::pow(a, b) : cpow(a, b);
}

// -- the built-in functors' complex forms ----------------------------------------------------
// add, subtract, negative, divide, where, cast, equal, not_equal, isnan, isfinite, the
// logical ops, exp, log, sqrt, sin, cos and tanh take the generic functors (the operators and
// the functions above, found by argument-dependent lookup). The rest, by convention:
template <class T, Convention C> struct ComplexMultiplyFunctor;
template <class R, Convention C> struct ComplexMultiplyFunctor<complex<R>, C> {
  SW_HOST_DEVICE SW_INLINE complex<R> operator()(complex<R> a, complex<R> b) const {
    if (C == kTorch) return a * b;
    return complex<R>(fma_rn(a.re, b.re, -mul_rn(a.im, b.im)), fma_rn(a.re, b.im, mul_rn(a.im, b.re)));
  }
};
template <class T, Convention C> struct ComplexSquareFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a) const { return ComplexMultiplyFunctor<T, C>()(a, a); }
};
// |z| in the real type: NumPy's SIMD loop (an inf part gives inf, else a NaN part NaN; then
// max * sqrt(fma(r, r, 1)), r = min / max, 0 where max is 0 or min inf), torch's hypot.
template <class T, Convention C> struct ComplexAbsFunctor;
template <class R, Convention C> struct ComplexAbsFunctor<complex<R>, C> {
  SW_HOST_DEVICE SW_INLINE R operator()(complex<R> z) const {
    if (C == kTorch) return abs(z);
    const R inf = R(1) / R(0);
    R re = fabs(z.re), im = fabs(z.im);
    if (re == inf || im == inf) return inf;
    if (re != re || im != im) return re + im;            // NaN
    const R big = re > im ? re : im, small = re > im ? im : re;
    const R r = big == R(0) ? R(0) : small / big;
    return mul_rn(::sqrt(fma_rn(r, r, R(1))), big);
  }
};
// 1 / z: NumPy's own loop (one ratio, then 1 / d and -r / d); torch's complex division.
template <class T, Convention C> struct ComplexReciprocalFunctor;
template <class R, Convention C> struct ComplexReciprocalFunctor<complex<R>, C> {
  SW_HOST_DEVICE SW_INLINE complex<R> operator()(complex<R> z) const {
    if (C == kTorch) return complex<R>(R(1)) / z;
    if (fabs(z.im) <= fabs(z.re)) {
      const R r = z.im / z.re, d = add_rn(z.re, mul_rn(z.im, r));
      return complex<R>(R(1) / d, -r / d);
    }
    const R r = z.re / z.im, d = add_rn(mul_rn(z.re, r), z.im);
    return complex<R>(r / d, R(-1) / d);
  }
};
template <class T, Convention C> struct ComplexPowFunctor;
template <class R, Convention C> struct ComplexPowFunctor<complex<R>, C> {
  SW_HOST_DEVICE SW_INLINE complex<R> operator()(complex<R> a, complex<R> b) const {
    return C == kNumpy ? numpy_pow(a, b) : cpow(a, b);
  }
};
// torch's pow of a complex tensor by a number (at::pow's Scalar overload): 0 fills ones and 1
// copies the base, whatever it holds (exp(0 log z) is NaN for an infinite z); its other
// special exponents (0.5, 2, 3, -0.5, -1, -2) are sqrt, products and one over them. torch's
// vector kernel divides by its own reciprocal, so those by -1/2, -1 and -2 land within the
// division's tolerance of torch's, not on its bits (the product by 2 and 3 too, near overflow).
template <class T, Convention C> struct TorchComplexPowByNumber;
template <class R, Convention C> struct TorchComplexPowByNumber<complex<R>, C> {
  SW_HOST_DEVICE SW_INLINE complex<R> operator()(complex<R> a, complex<R> b) const {
    if (b.im == R(0)) {
      if (b.re == R(0)) return complex<R>(R(1), R(0));
      if (b.re == R(1)) return a;
      if (b.re == R(0.5)) return sqrt(a);
      if (b.re == R(2)) return a * a;
      if (b.re == R(3)) return a * a * a;
      if (b.re == R(-0.5)) return complex<R>(R(1)) / sqrt(a);
      if (b.re == R(-1)) return complex<R>(R(1)) / a;
      if (b.re == R(-2)) return complex<R>(R(1)) / (a * a);
    }
    return ComplexPowFunctor<complex<R>, C>()(a, b);
  }
};
// maximum / minimum as NumPy's complex loops: x1 where it has a NaN part or x1 >= x2 (<=),
// else x2 (a tie keeps x1, unlike the real loops).
template <class R> struct MaximumFunctor<complex<R> > {
  SW_HOST_DEVICE SW_INLINE complex<R> operator()(complex<R> a, complex<R> b) const {
    return (a != a || a >= b) ? a : b;
  }
};
template <class R> struct MinimumFunctor<complex<R> > {
  SW_HOST_DEVICE SW_INLINE complex<R> operator()(complex<R> a, complex<R> b) const {
    return (a != a || a <= b) ? a : b;
  }
};
// sign as NumPy 2 (z / |z|, through hypot: `magnitude`, the C library's on the host, one that
// overflows only where the C library's does on the device): a NaN |z| gives NaN in both parts; an infinite
// part (the other finite) gives that part's sign and 0; both infinite NaN; 0 gives 0.
template <class T> struct ComplexSignFunctor;
template <class R> struct ComplexSignFunctor<complex<R> > {
  SW_HOST_DEVICE SW_INLINE complex<R> operator()(complex<R> z) const {
    const R inf = R(1) / R(0), nan = inf - inf, m = magnitude(z);
    if (m != m) return complex<R>(nan, nan);
    if (m == inf) {
      const bool re = fabs(z.re) == inf, im = fabs(z.im) == inf;
      if (re && im) return complex<R>(nan, nan);
      return re ? complex<R>(z.re > R(0) ? R(1) : R(-1), R(0)) : complex<R>(R(0), z.im > R(0) ? R(1) : R(-1));
    }
    if (m == R(0)) return complex<R>(R(0), R(0));
    return complex<R>(z.re / m, z.im / m);
  }
};
// clip as NumPy's clip loop: min(max(x, lo), hi), where max keeps x1 if it has a NaN part or
// is greater, ordered by the real parts, or by the imaginary parts where those are equal
// (its own order: a NaN part in x2 does not make x1 unordered, unlike maximum's).
template <class R> struct ClipFunctor<complex<R> > {
  SW_HOST_DEVICE SW_INLINE static bool above(complex<R> a, complex<R> b) {
    return a.re == b.re ? a.im > b.im : a.re > b.re;
  }
  SW_HOST_DEVICE SW_INLINE complex<R> operator()(complex<R> x, complex<R> lo, complex<R> hi) const {
    x = (x != x || above(x, lo)) ? x : lo;
    return (x != x || above(hi, x)) ? x : hi;
  }
};
// isinf: either part infinite (a NaN in the other part included), as NumPy and torch say.
template <class R> struct IsInfFunctor<complex<R> > {
  SW_HOST_DEVICE SW_INLINE bool operator()(complex<R> a) const {
    const R inf = R(1) / R(0);
    return fabs(a.re) == inf || fabs(a.im) == inf;
  }
};

// What user code (CuPy's complex<float>, PyCUDA's pycuda::complex<float>) calls by name.
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> pow(complex<R> a, complex<R> b) { return cpow(a, b); }
template <class R> SW_HOST_DEVICE SW_INLINE complex<R> pow(complex<R> a, R b) { return cpow(a, complex<R>(b)); }
template <class R> SW_HOST_DEVICE SW_INLINE R arg(complex<R> z) { return atan2(z.im, z.re); }

}  // namespace sw
