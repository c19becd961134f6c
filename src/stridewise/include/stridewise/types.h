// stridewise/types.h: float16 and bfloat16 storage types with exact round-to-nearest-even
// conversions, plus the cast and opmath rules every functor uses.
//
// Both types are 2-byte storage only; arithmetic happens in float32 (OpMath) and rounds once
// on store, which is exactly what torch and NumPy do for these dtypes.
#pragma once
#include "common.h"
#if defined(__F16C__) && defined(__clang__)
#include <immintrin.h>   // GCC takes F16C's builtin directly (float_to_half below)
#endif

namespace sw {

struct alignas(2) half { u16 bits; };
struct alignas(2) bfloat16 { u16 bits; };

SW_HOST_DEVICE SW_INLINE float half_to_float(u16 h) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#elif !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
  // Branch-free so GCC vectorizes it across a pack where F16C is missing (with it, a kernel's
  // packs convert 8 or 16 lanes at a time: HostLanes, below; _cvtsh_ss is one lane only): the
  // significand as an integer m (the implicit bit set for a normal half), converted exactly,
  // times 2^(max(e, 1) - 25) gives every finite value, with no subnormal float anywhere: a
  // multiply with a subnormal operand takes a microcode assist on Intel cores (~150 cycles;
  // scaling the bits in place by 2^112 made a subnormal half 40x dearer than a normal one).
  // An all-ones exponent becomes inf/NaN with the mantissa kept (m's float carries it there).
  const u32 e = (h >> 10) & 0x1fu, sub = (u32)0 - (u32)(e == 0);
  const u32 m = (h & 0x3ffu) | (0x400u & ~sub);
  const u32 inf_nan = (u32)0 - (u32)(e == 0x1fu);
  const float v = (float)(i32)m * bit_cast<float>(((e | (1u & sub)) + 102u) << 23);
  const u32 bits = bit_cast<u32>(v) | (inf_nan & 0x7f800000u);
  return bit_cast<float>(bits | ((u32)(h & 0x8000u) << 16));
#else
  const u32 sign = (u32)(h & 0x8000u) << 16;
  u32 exp = (h >> 10) & 0x1Fu;
  u32 man = h & 0x3FFu;
  u32 bits;
  if (exp == 0x1Fu) {
    bits = sign | 0x7F800000u | (man << 13);            // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);   // normal: rebias 15 -> 127
  } else if (man == 0) {
    bits = sign;                                        // signed zero
  } else {                                              // subnormal: normalise
    int e = -1;
    do { man <<= 1; ++e; } while ((man & 0x400u) == 0);
    bits = sign | ((u32)(112 - e) << 23) | ((man & 0x3FFu) << 13);
  }
  return bit_cast<float>(bits);
#endif
}

SW_HOST_DEVICE SW_INLINE u16 float_to_half(float f) {
#if defined(__CUDA_ARCH__)
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#elif defined(__F16C__) && !defined(__clang__)
  // F16C rounds to nearest even (immediate 0, MXCSR unused) and quiets NaN as the code below.
  // GCC's builtin, exactly as _cvtss_sh expands it: <immintrin.h> (every AVX-512 header under
  // -march=native) took 0.2 s of each 0.5-0.7 s cold build.
  typedef float V4sf __attribute__((vector_size(16)));
  typedef short V8hi __attribute__((vector_size(16)));
  const V8hi h = __builtin_ia32_vcvtps2ph(V4sf{f, 0, 0, 0}, 0);
  return (u16)__builtin_ia32_vec_ext_v8hi(h, 0);
#elif defined(__F16C__)
  return (u16)_cvtss_sh(f, 0);
#else
  const u32 x = bit_cast<u32>(f);
  const u32 sign = (x >> 16) & 0x8000u;
  const u32 ax = x & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) {                               // inf / NaN: keep NaN quiet
    return (u16)(sign | 0x7C00u | (ax > 0x7F800000u ? (0x200u | ((ax >> 13) & 0x3FFu)) : 0u));
  }
  if (ax >= 0x477FF000u) return (u16)(sign | 0x7C00u);   // rounds to >= 65520: overflow
  if (ax < 0x38800000u) {                                // below 2^-14: subnormal or zero
    if (ax < 0x33000000u) return (u16)sign;              // <= 2^-25 rounds to zero (tie to even)
    const u32 e = ax >> 23;
    const u32 m = (ax & 0x7FFFFFu) | 0x800000u;
    const u32 shift = 126u - e;                          // 14..24
    u32 r = m >> shift;
    const u32 rem = m & ((1u << shift) - 1u);
    const u32 halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return (u16)(sign | r);
  }
  u32 r = ax - 0x38000000u;                              // rebias 127 -> 15
  r = (r + 0xFFFu + ((r >> 13) & 1u)) >> 13;             // round to nearest even
  return (u16)(sign | r);
#endif
}

SW_HOST_DEVICE SW_INLINE float bfloat16_to_float(u16 b) { return bit_cast<float>((u32)b << 16); }

SW_HOST_DEVICE SW_INLINE u16 float_to_bfloat16(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u16 h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  // nearest even, and NaN kept quiet, as masks so that a loop around it vectorizes
  const u32 x = bit_cast<u32>(f), nan = 0u - (u32)((x & 0x7FFFFFFFu) > 0x7F800000u);
  return (u16)((((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16) & ~nan) | (((x >> 16) | 0x40u) & nan));
#endif
}

// OpMath<T>: the type arithmetic runs in. 16-bit floats compute in float32 and round once.
template <class T> struct OpMath { typedef T type; };
template <> struct OpMath<half> { typedef float type; };
template <> struct OpMath<bfloat16> { typedef float type; };

template <bool C, class A, class B> struct If { typedef A type; };
template <class A, class B> struct If<false, A, B> { typedef B type; };

// A float -> integer conversion is undefined behaviour in C++ for NaN, infinities and values
// whose truncation the integer type cannot hold. The host defines it as x86's truncating
// conversions (cvttss2si / cvttsd2si) do, which is NumPy's result on x86 and what the host's
// vectorized code gave before for every target but uint64: a 32- or 64-bit signed target
// gets its minimum (the "integer indefinite"); narrower targets truncate through int32 and
// wrap; uint32 and uint64 go through the signed type of their width, values from 2^31
// (2^63) up after subtracting it, the top bit then flipped back. Written with masks, it
// vectorizes into the conversion plus a compare and an and/or per lane. The device keeps
// its own conversion (PTX's cvt is defined for every input).
template <class I, class F> SW_HOST_DEVICE SW_INLINE I trunc_or_min(F x) {
  typedef typename If<sizeof(F) == 8, u64, u32>::type B;     // F's bits
  const B bits = bit_cast<B>(x), sign = (B)1 << (sizeof(B) * 8 - 1);
  const B top = bit_cast<B>((F)((u64)1 << (sizeof(I) * 8 - 1)));   // 2^31 or 2^63, exact
  // |x| < top, from the bits (NaN and inf are above): masks, not selects on a float
  // compare, which GCC's SLP vectorizer left scalar (2x slower casts)
  const bool in = (bits & ~sign) < top;
  const I r = (I)bit_cast<F>(bits & ((B)0 - (B)in));         // 0 outside: always defined
  return r | ((I)((u64)1 << (sizeof(I) * 8 - 1)) & (I)((I)in - (I)1));
}
template <class To, class F> SW_HOST_DEVICE SW_INLINE To float_to_int(F x) {
  if constexpr (sizeof(To) < 4) {
    return (To)trunc_or_min<i32>(x);                             // wraps, as int32 -> To
  } else if constexpr (To(-1) < To(0)) {
    return trunc_or_min<To>(x);
  } else {                       // uint32, uint64: through the signed type of their width
    typedef typename If<sizeof(To) == 8, i64, i32>::type S;
    typedef typename If<sizeof(F) == 8, u64, u32>::type B;
    const F half = (F)((u64)1 << (sizeof(To) * 8 - 1));
    const To high = (To)((u64)1 << (sizeof(To) * 8 - 1));
    const B bits = bit_cast<B>(x);
    const B inf = sizeof(F) == 8 ? (B)0x7ff0000000000000ull : (B)0x7f800000u;
    const bool ge = (bits >= bit_cast<B>(half)) & (bits <= inf);   // x >= half (not NaN)
    const To mask = (To)0 - (To)ge;
    return (((To)trunc_or_min<S>(x - half) ^ high) & mask) | ((To)trunc_or_min<S>(x) & ~mask);
  }
}
// From float or double (not bool, not an integer), To an integer type (bool: 0.5 is true).
template <class To, class From> struct IsFloatToInt {
  enum { value = sizeof(From) >= 4 && From(0.5) != From(0) && To(0.5) == To(0) };
};

// Convert<To, From>: a cast in registers, so mixed dtypes never need a temporary array.
template <class To, class From> struct Convert {
  SW_HOST_DEVICE SW_INLINE static To apply(From x) {
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
    if constexpr (IsFloatToInt<To, From>::value) return float_to_int<To>(x);
    else
#endif
    return (To)x;
  }
};
template <class To> struct Convert<To, half> {
  SW_HOST_DEVICE SW_INLINE static To apply(half x) { return Convert<To, float>::apply(half_to_float(x.bits)); }
};
template <class To> struct Convert<To, bfloat16> {
  SW_HOST_DEVICE SW_INLINE static To apply(bfloat16 x) {
    return Convert<To, float>::apply(bfloat16_to_float(x.bits));
  }
};
template <class From> struct Convert<half, From> {
  SW_HOST_DEVICE SW_INLINE static half apply(From x) { half h; h.bits = float_to_half((float)x); return h; }
};
template <class From> struct Convert<bfloat16, From> {
  SW_HOST_DEVICE SW_INLINE static bfloat16 apply(From x) {
    bfloat16 h; h.bits = float_to_bfloat16((float)x); return h;
  }
};
template <> struct Convert<half, half> {
  SW_HOST_DEVICE SW_INLINE static half apply(half x) { return x; }
};
template <> struct Convert<bfloat16, bfloat16> {
  SW_HOST_DEVICE SW_INLINE static bfloat16 apply(bfloat16 x) { return x; }
};
template <> struct Convert<half, bfloat16> {
  SW_HOST_DEVICE SW_INLINE static half apply(bfloat16 x) {
    half h; h.bits = float_to_half(bfloat16_to_float(x.bits)); return h;
  }
};
template <> struct Convert<bfloat16, half> {
  SW_HOST_DEVICE SW_INLINE static bfloat16 apply(half x) {
    bfloat16 h; h.bits = float_to_bfloat16(half_to_float(x.bits)); return h;
  }
};

// GCC 12's SLP vectorizer drops a double -> float -> double round trip in a 2-lane group
// (wrong code at -O2, and at -O3 -march=native), so the host hides the float from it.
template <> struct Convert<float, double> {
  SW_HOST_DEVICE SW_INLINE static float apply(double x) {
    float f = (float)x;
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__) && defined(__GNUC__) && !defined(__clang__)
#if defined(__x86_64__)
    __asm__("" : "+x"(f));
#elif defined(__aarch64__)
    __asm__("" : "+w"(f));
#endif
#endif
    return f;
  }
};

// double -> half rounds once, as NumPy does (through float it would round twice). Rounding to
// odd into float keeps enough guard bits (24 >= 11 + 2) for the final round to nearest even.
SW_HOST_DEVICE SW_INLINE u16 double_to_half(double d) {
#if defined(__CUDA_ARCH__)
  u16 h;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d));
  return h;
#else
  float f = (float)d;
  if (d == d && (double)f != d) {
    u32 b = bit_cast<u32>(f);
    if (!(b & 1u)) b += (((double)f < d) == (d > 0)) ? 1u : 0xFFFFFFFFu;  // toward d
    f = bit_cast<float>(b);
  }
  return float_to_half(f);
#endif
}
template <> struct Convert<half, double> {
  SW_HOST_DEVICE SW_INLINE static half apply(double x) { half h; h.bits = double_to_half(x); return h; }
};

template <class To, class From>
SW_HOST_DEVICE SW_INLINE To convert(From x) { return Convert<To, From>::apply(x); }

// Element e of a pack's elements as OpMath type M (the kernel's input conversion).
// bfloat16 on the device reads the 32-bit word that holds the element: the high one is
// then a mask, where extracting 16 bits first cost a byte permute and a shift.
template <class M, int P, class T>
SW_HOST_DEVICE SW_INLINE M widen(const T (&x)[P], int e) { return convert<M>(x[e]); }
#if defined(__CUDA_ARCH__)
template <class M, int P>
SW_DEVICE SW_INLINE M widen(const bfloat16 (&x)[P], int e) {
  if constexpr (P % 2 == 0) {   // a pack of P >= 2 is aligned to 4 bytes or more
    const u32 w = reinterpret_cast<const u32*>(x)[e / 2];
    return (M)__uint_as_float(e & 1 ? w & 0xffff0000u : w << 16);
  } else {
    return convert<M>(x[e]);
  }
}
#endif

// HostLanes<T>: float16 / bfloat16 <-> float, N lanes an instruction on the host, where one
// lane at a time would keep a loop scalar. N is host_lanes(P): 16 where AVX-512 is on, else
// 8. Kernels build with -mprefer-vector-width=512 (backends/cpu.py), so GCC's own vectors are
// as wide as these: a pack written in 32-byte pieces and read back in 64-byte ones (or the
// reverse) stalls on store forwarding at each read, and on an AVX-512 core 8-lane conversions
// inside 16-lane loops made float16 add 0.15x torch CPU and bfloat16 abs 0.06x.
// - float16 with F16C: vcvtph2ps / vcvtps2ph (nearest even, immediate 0), exact for every half,
//   subnormals included; GCC 12 vectorizes neither _Float16's conversion nor the one-lane
//   builtin (half_to_float's branch-free form took ~12 vector instructions for 8 lanes; NaN
//   payloads may come back quieted, as the store's conversion already quiets them).
// - bfloat16 with AVX2: a zero extension and a shift; the store rounds as float_to_bfloat16,
//   in integer lanes, then packs (element by element, GCC 12 kept each pack in a stack slot
//   written in 16-byte pieces and read in 32; its generic vector conversions took 5
//   instructions for 8 lanes).
// GCC's builtins, not <immintrin.h>: that header (every AVX-512 header under -march=native)
// took 0.2 s of each 0.5-0.7 s cold build.
template <class T> struct HostLanes { enum { value = 0 }; };
#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__) && !defined(__clang__)
#if defined(__AVX512F__)
enum { kHostLanes = 16 };
#else
enum { kHostLanes = 8 };
#endif
constexpr int host_lanes(int P) { return P % kHostLanes == 0 ? kHostLanes : 8; }
typedef float V8sf __attribute__((vector_size(32)));
typedef short V8hi __attribute__((vector_size(16)));
typedef short V16hi __attribute__((vector_size(32)));
typedef u32 V8su __attribute__((vector_size(32)));
typedef int V8si __attribute__((vector_size(32)));
typedef long long V4di __attribute__((vector_size(32)));
#if defined(__AVX512F__)
typedef float V16sf __attribute__((vector_size(64)));
typedef short V32hi __attribute__((vector_size(64)));
typedef u32 V16su __attribute__((vector_size(64)));
typedef int V16si __attribute__((vector_size(64)));
typedef long long V8di __attribute__((vector_size(64)));
#endif
template <class V, class E> SW_INLINE V load_lanes(const E* x) {
  V v;
  __builtin_memcpy(&v, x, sizeof v);
  return v;
}
template <class V, class E> SW_INLINE void store_lanes(E* dst, const V& v) { __builtin_memcpy(dst, &v, sizeof v); }
#if defined(__AVX512F__)
// Two narrowed groups as one register, so that a pack's results go out in one 64-byte store:
// stored apart and read back whole (GCC moves a 64-byte pack as one zmm), they stalled on
// store forwarding (float16 add 154 -> 66 us at 2^20, one thread). With AVX2, GCC moves the
// pack in 16-byte pieces, and a joined pair cost float16 add 72 -> 102 us.
SW_INLINE V32hi join_lanes(V16hi lo, V16hi hi) {
  return (V32hi)__builtin_ia32_inserti64x4_mask((V8di)__builtin_ia32_si512_256si((V8si)lo), (V4di)hi, 1,
                                                V8di{}, (u8)-1);
}
#endif
#if defined(__F16C__)
template <> struct HostLanes<half> {
  enum { value = 1 };
  static SW_INLINE V8sf widen(const V8hi& h) { return __builtin_ia32_vcvtph2ps256(h); }
  static SW_INLINE V8hi narrow(const V8sf& y) { return __builtin_ia32_vcvtps2ph256(y, 0); }
#if defined(__AVX512F__)
  static SW_INLINE V16sf widen(const V16hi& h) { return __builtin_ia32_vcvtph2ps512_mask(h, V16sf{}, (u16)-1, 4); }
  static SW_INLINE V16hi narrow(const V16sf& y) { return __builtin_ia32_vcvtps2ph512_mask(y, 0, V16hi{}, (u16)-1); }
#endif
};
#endif
#if defined(__AVX2__)
// float_to_bfloat16's rounding on the bits in 32-bit lanes, each result in [0, 0xffff]: the sum
// in unsigned lanes (it wraps, as the element form's), compares and selects in signed ones.
template <class VI, class VU> SW_INLINE VI bfloat16_round_lanes(VU x) {
  const VU hi = x >> 16;
  const VI even = (VI)((x + 0x7FFFu + (hi & 1u)) >> 16);
  return (VI)(x & 0x7FFFFFFFu) > 0x7F800000 ? (VI)(hi | 0x40u) : even;   // NaN: quieted
}
template <> struct HostLanes<bfloat16> {
  enum { value = 1 };
  static SW_INLINE V8sf widen(const V8hi& h) { return (V8sf)((V8su)__builtin_ia32_pmovzxwd256(h) << 16); }
  static SW_INLINE V8hi narrow(const V8sf& y) {
    const V8si r = bfloat16_round_lanes<V8si>((V8su)y);
    const V4di packed = (V4di)__builtin_ia32_packusdw256(r, r);   // lanes 0-3 | 4-7, twice
    return (V8hi)__builtin_ia32_extract128i256(__builtin_ia32_permdi256(packed, 0x08), 0);
  }
#if defined(__AVX512F__)
  static SW_INLINE V16sf widen(const V16hi& h) {
    return (V16sf)((V16su)__builtin_ia32_pmovzxwd512_mask(h, V16si{}, (u16)-1) << 16);
  }
  static SW_INLINE V16hi narrow(const V16sf& y) {   // vpmovdw: each lane's low 16 bits
    return __builtin_ia32_pmovdw512_mask(bfloat16_round_lanes<V16si>((V16su)y), V16hi{}, (u16)-1);
  }
#endif
};
#endif
// N lanes' vector types (16 only where AVX-512 is on), and HostLanes' conversions of N lanes
// in memory.
template <int N> struct Lanes { typedef V8sf f32; typedef V8hi b16; };
#if defined(__AVX512F__)
template <> struct Lanes<16> { typedef V16sf f32; typedef V16hi b16; };
#endif
template <class T, int N> SW_INLINE auto widen_lanes(const T* x) {
  return HostLanes<T>::widen(load_lanes<typename Lanes<N>::b16>(x));
}
template <class To, int N> SW_INLINE auto narrow_lanes(const float* y) {
  return HostLanes<To>::narrow(load_lanes<typename Lanes<N>::f32>(y));
}
#endif

// A pack's elements as OpMath type M, for a kernel's compute loop: element e converted on
// demand (widen), or, where HostLanes converts T, the whole pack first.
template <class M, int P, class T, bool kLanes = false> struct Widened {
  const typename Lane<T>::type (&x)[P];
  SW_HOST_DEVICE SW_INLINE explicit Widened(const typename Lane<T>::type (&x)[P]) : x(x) {}
  SW_HOST_DEVICE SW_INLINE M operator[](int e) const { return widen<M>(x, e); }
};
template <class M, int P, class T> struct WidenedOf { typedef Widened<M, P, T> type; };
#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__) && !defined(__clang__)
template <int P> struct WidenedOf<float, P, half> {
  typedef Widened<float, P, half, P % 8 == 0 && HostLanes<half>::value> type;
};
template <int P> struct WidenedOf<float, P, bfloat16> {
  typedef Widened<float, P, bfloat16, P % 8 == 0 && HostLanes<bfloat16>::value> type;
};
template <int P, class T> struct Widened<float, P, T, true> {
  float v[P];
  SW_INLINE explicit Widened(const T (&x)[P]) {
    constexpr int N = host_lanes(P);
    SW_UNROLL for (int e = 0; e < P; e += N) store_lanes(v + e, widen_lanes<T, N>(x + e));
  }
  SW_INLINE float operator[](int e) const { return v[e]; }
};
#endif

// Two consecutive elements as one 2 x 16-bit (or wider) register: the half2 / bfloat162 unit.
template <class T> struct alignas(2 * sizeof(T)) Pair { T lo, hi; };
template <class T> SW_HOST_DEVICE SW_INLINE Pair<T> pair(T lo, T hi) { Pair<T> r = {lo, hi}; return r; }
template <class T> SW_HOST_DEVICE SW_INLINE void set_pair(T* dst, const Pair<T>& v) {
  SW_MEMCPY(dst, &v, sizeof(v));
}

// Convert2<To, From>: two elements in one instruction where the device has one (float to
// half2 / bfloat162 on sm_80+, the same round to nearest even as Convert); `value` says so.
template <class To, class From> struct Convert2 { enum { value = 0 }; };
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define SW_CONVERT2(To, ptx)                                                     \
  template <> struct Convert2<To, float> {                                       \
    enum { value = 1 };                                                          \
    SW_DEVICE SW_INLINE static Pair<To> apply(float lo, float hi) {              \
      u32 r;                                                                     \
      asm("cvt.rn." ptx "x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));      \
      return bit_cast<Pair<To> >(r);                                             \
    }                                                                            \
  };
SW_CONVERT2(half, "f16")
SW_CONVERT2(bfloat16, "bf16")
#undef SW_CONVERT2
#endif

// The one rounding of a pack of results to the storage type To, pairwise where Convert2
// allows, into the pack's lanes (a bool as its byte on the host: Lane).
template <int P, class To, class From>
SW_HOST_DEVICE SW_INLINE void convert_pack(typename Lane<To>::type* dst, const From* y) {
#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__) && !defined(__clang__)
  if constexpr (P % 8 == 0 && Same<From, float>::value && HostLanes<To>::value) {
    constexpr int N = host_lanes(P);
    if constexpr (N == 16 && P % 32 == 0) {
      SW_UNROLL for (int e = 0; e < P; e += 32)
        store_lanes(dst + e, join_lanes(narrow_lanes<To, N>(y + e), narrow_lanes<To, N>(y + e + N)));
    } else {
      SW_UNROLL for (int e = 0; e < P; e += N) store_lanes(dst + e, narrow_lanes<To, N>(y + e));
    }
    return;
  }
#endif
  if constexpr (P % 2 == 0 && Convert2<To, From>::value) {
    SW_UNROLL for (int e = 0; e < P; e += 2) set_pair(dst + e, Convert2<To, From>::apply(y[e], y[e + 1]));
  } else {
    SW_UNROLL for (int e = 0; e < P; ++e) dst[e] = convert<To>(y[e]);
  }
}

// IsInt<T>: the integer types and bool, which compute as they are stored (no OpMath).
template <class T> struct IsInt { enum { value = 0 }; };
#define SW_IS_INT(T) template <> struct IsInt<T> { enum { value = 1 }; };
SW_IS_INT(bool) SW_IS_INT(i8) SW_IS_INT(u8) SW_IS_INT(i16) SW_IS_INT(u16)
SW_IS_INT(i32) SW_IS_INT(u32) SW_IS_INT(i64) SW_IS_INT(u64)
#undef SW_IS_INT

// b == -1 for signed integer types; never for unsigned ones (where b == -1 would compare
// with the largest value: integer division's special cases are signed cases only).
template <class T> SW_HOST_DEVICE SW_INLINE bool minus_one(T b) {
  if constexpr (T(-1) < T(0)) return b == T(-1);
  else return false;
}

}  // namespace sw
