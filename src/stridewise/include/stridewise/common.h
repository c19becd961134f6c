// stridewise/common.h: macros, index types and the argument slot shared by every kernel.
// Dependency-free on purpose: NVRTC has no <cstdint>, and the CPU build must not need CUDA.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SW_HOST_DEVICE __host__ __device__
#define SW_DEVICE __device__
#define SW_INLINE __forceinline__
#define SW_NOINLINE __noinline__
#define SW_RESTRICT __restrict__
// NVRTC knows memcpy (not __builtin_memcpy) in device code without any header.
#define SW_MEMCPY memcpy
#else
#define SW_HOST_DEVICE
#define SW_DEVICE
#define SW_INLINE inline __attribute__((always_inline))
#define SW_NOINLINE __attribute__((noinline))
#define SW_RESTRICT __restrict__
#define SW_MEMCPY __builtin_memcpy
#endif

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
// libstdc++'s <cmath> declares C++17's special functions (std::cyl_bessel_j, std::expint,
// std::riemann_zeta, ...) through non-template float and long double wrappers, whose
// templates every translation unit then instantiates: 26 of a 156 ms kernel build, with the
// precompiled header or without. No kernel calls them, and NVRTC has none, so they are left
// out: <cmath> tests this macro of libstdc++'s configuration, which <cstddef> has defined.
#include <cstddef>
#if defined(__GLIBCXX__)
#undef _GLIBCXX_USE_STD_SPEC_FUNCS
#endif
#endif

namespace sw {

typedef long long i64;
typedef unsigned long long u64;
typedef int i32;
typedef unsigned int u32;
typedef unsigned short u16;
typedef signed char i8;
typedef unsigned char u8;
typedef short i16;

// The unsigned integer of `Bytes` bytes: a value's bits as one word.
template <int Bytes> struct UnsignedOf;
template <> struct UnsignedOf<1> { typedef u8 type; };
template <> struct UnsignedOf<2> { typedef u16 type; };
template <> struct UnsignedOf<4> { typedef u32 type; };
template <> struct UnsignedOf<8> { typedef u64 type; };

// Same<A, B>::value: whether A and B are one type (NVRTC has no <type_traits>).
template <class A, class B> struct Same { enum { value = 0 }; };
template <class A> struct Same<A, A> { enum { value = 1 }; };

// Every host-written argument is one 8-byte slot, so the host packs a flat little-endian
// record and both backends read the same layout: pointers, extents, strides and scalars.
union Slot {
  char* ptr;
  i64 i;
  double f64;
  float f32;
  i32 i32v;
  u16 u16v;
};

// Whether the headers are being built for the host, as a constant for `if constexpr` (forms
// chosen for GCC's vectorizer that the device leaves as they are).
#if defined(__CUDA_ARCH__)
enum { kOnHost = 0 };
#else
enum { kOnHost = 1 };
#endif

// The type a pack holds a T lane as (pack.h Pack): bool as a byte on the host.
template <class T> struct Lane { typedef T type; };
#if !defined(__CUDA_ARCH__)
template <> struct Lane<bool> { typedef u8 type; };
#endif

template <class T, class U>
SW_HOST_DEVICE SW_INLINE T bit_cast(const U& u) {
  static_assert(sizeof(T) == sizeof(U), "bit_cast needs equal sizes");
  T t;
  SW_MEMCPY(&t, &u, sizeof(T));
  return t;
}

// A scalar parameter sits in the low bytes of its slot (the host is little-endian, as is CUDA).
template <class T>
SW_HOST_DEVICE SW_INLINE T slot_get(const Slot& s) {
  T t;
  SW_MEMCPY(&t, &s, sizeof(T));
  return t;
}

}  // namespace sw

// SW_ROLLED: a loop of a few data-dependent trips (the exact lanes' windows), kept rolled:
// NVRTC otherwise unrolls it by 4 behind a peeled trip, code no lane runs. (GCC takes no
// unroll pragma on a loop without a condition, and unrolls none without -funroll-loops.)
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SW_UNROLL _Pragma("unroll")
#define SW_ROLLED _Pragma("unroll 1")
#else
#define SW_UNROLL _Pragma("GCC unroll 16")
#define SW_ROLLED
#endif
