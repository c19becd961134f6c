// stridewise/user.h: what a user kernel's operation and preamble may assume, on both backends.
//
// CUDA code written for CuPy or PyCUDA says __device__ and calls min/max and the C math
// functions unqualified; the CPU build gets the same spellings here, so one preamble compiles
// for both.
#pragma once
#include "math.h"
#include "raw.h"

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#ifndef __device__
#define __device__
#endif
#ifndef __host__
#define __host__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
template <class A, class B> inline auto min(A a, B b) -> decltype(a + b) { return b < a ? b : a; }
template <class A, class B> inline auto max(A a, B b) -> decltype(a + b) { return a < b ? b : a; }
#endif

// complex<float> and complex<double> as CuPy's and PyCUDA's kernels spell them; the math
// functions (exp, abs, real, conj, ...) are found by argument-dependent lookup.
using sw::complex;
namespace pycuda {
using sw::complex;
using sw::real;
using sw::imag;
using sw::conj;
using sw::norm;
using sw::arg;
}  // namespace pycuda

// A user operation's unqualified math calls find sw::UserMath's first (UserOp derives from
// it), and its pack's element loop is SW_USER_LOOP: both from math.h, as the built-in math
// functors have them.
