// stridewise/pack.h: Pack<T, P>, P consecutive elements moved as one aligned access,
// and the layout of the 8-byte argument slots every generated entry point receives.
#pragma once
#include "common.h"

namespace sw {

template <class T, int P, bool kWords = sizeof(T) == 1 && P % 4 == 0>
struct alignas(sizeof(T) * P) Pack {
  T elem[P];
};
#if defined(__CUDA_ARCH__)
// On the device a pack of 1-byte elements is also its 32-bit words: NVVM then keeps it in
// registers as words wherever words alone are read (words.h, the word forms of int8, uint8
// and bool), where a byte array alone was taken apart into its bytes after the load and
// put together again for each word (int8 contiguous remainder: 20 -> 13 instructions an element).
template <class T, int P>
struct alignas(sizeof(T) * P) Pack<T, P, true> {
  union {
    T elem[P];
    u32 words[P / 4];
  };
};
#else
// On the host a pack of bool holds its lanes as bytes, 0 or 1 (load_pack reads the truth):
// GCC 12's vectorizer finds no vector type for a loop that loads bool lanes beside wider
// ones ("no vectype"), where it widens bytes (where(c, x, y), a mask times float32).
template <int P, bool kWords>
struct alignas(P) Pack<bool, P, kWords> {
  typename Lane<bool>::type elem[P];
};
#endif

#if !defined(__CUDA_ARCH__)
// The host moves a pack as its elements (4- and 8-byte ones) or as vectors of bytes (narrower
// ones, whose element loops GCC vectorized worse), never as a memcpy of the pack: GCC's
// tuning for some CPUs (znver3) expands that memcpy into 16-byte moves, and the vectorized
// arithmetic then reads the 32-byte halves of the stack copy those moves wrote, a
// store-to-load forwarding stall per pack (one Zen3 core: float32 add at 2^16 87-93 -> 27-28
// us, float64 multiply at 2^18 524-548 -> 139-203, uint8 add at 2^20 362-391 -> 93-95;
// docs/decisions.md). Loads take the widest vector the registers hold (kHostVector): a wider
// vector type (one 64-byte vector for a wide int8 pack without AVX-512) is lowered through
// 8-byte integer registers and the stack, which ran int8 and int16 add, multiply and maximum
// at half torch CPU's speed. Stores take the same width, but float16 and bfloat16 16 bytes at
// a time (kHalfStore): their conversions give 16-byte pieces, which a wider store read back
// from the stack across two stores, the same stall (float16 add at 2^20 on one Zen 4 thread
// 117 -> 558 us with 32-byte stores, 109 with 16); 16-byte stores of the integer types'
// 32-byte results cost an extract each (int8 floor 42 -> 37 us, int16 bitwise_and 109 -> 85
// with 32-byte ones, torch CPU 37 and 83). With AVX-512 both take 64 bytes: GCC then keeps the pack
// in registers (no stack access in the int8 and float16 add loops).
template <int N> struct HostBytes {
  typedef unsigned char type __attribute__((vector_size(N), aligned(1)));
};
#if defined(__AVX512F__)
static const int kHostVector = 64, kHalfStore = 64;
#elif defined(__AVX__)
static const int kHostVector = 32, kHalfStore = 16;
#else
static const int kHostVector = 16, kHalfStore = 16;
#endif
#endif

// A bool operand reads each byte as its truth, any nonzero byte as true, as NumPy and torch
// do for a bool array over other bytes (uint8 memory viewed as bool). C++ assumes a bool's
// byte is 0 or 1: read as it lies, a byte of 2 cast to 2.0 and its logical_not was 3. Every
// loader below passes what it reads through these; for other types they are the identity.
template <class T> struct IsBool { enum { value = 0 }; };
template <> struct IsBool<bool> { enum { value = 1 }; };
template <class T, class Index>
SW_HOST_DEVICE SW_INLINE T read_one(const T* a, Index i) {
  if constexpr (IsBool<T>::value) return reinterpret_cast<const u8*>(a)[i] != 0;
  else return a[i];
}
template <class T, int P>
SW_HOST_DEVICE SW_INLINE Pack<T, P> truth(const Pack<T, P>& v) {
  if constexpr (IsBool<T>::value) {
    Pack<T, P> r;
#if defined(__CUDA_ARCH__)
    if constexpr (P % 4 == 0) {   // by words: bit 0 of each byte ORs its eight bits
      r = v;
      SW_UNROLL for (int i = 0; i < P / 4; ++i) {
        u32 t = r.words[i] | (r.words[i] >> 4);
        t |= t >> 2;
        r.words[i] = (t | (t >> 1)) & 0x01010101u;
      }
      return r;
    }
#endif
    u8 b[P];
    SW_MEMCPY(b, &v, P);
    SW_UNROLL for (int e = 0; e < P; ++e) b[e] = b[e] != 0;
    SW_MEMCPY(&r, b, P);
    return r;
  } else {
    return v;
  }
}

// Kernels built without SLP vectorization (backends/cpu.py: those reading bool operands) move
// every pack as one vector of bytes: their element loops stayed scalar stores that the
// vectorized compute loop then read back whole, a store-forwarding stall a pack.
#ifndef SW_NO_SLP
#define SW_NO_SLP 0
#endif
// Typed pointer arithmetic widens to 64 bits, so a 32-bit element index never overflows in
// bytes. The device moves a pack as one aligned access (the plan aligns packs of kPack); the
// host copies, so cpu/loops.h may also move packs wider than the plan aligned.
template <class T, int P, class Index>
SW_HOST_DEVICE SW_INLINE Pack<T, P> load_pack(const char* base, Index off) {
#if defined(__CUDA_ARCH__)
  return truth(*reinterpret_cast<const Pack<T, P>*>(reinterpret_cast<const T*>(base) + off));
#else
  const T* a = reinterpret_cast<const T*>(base) + off;
  Pack<T, P> v;
  if constexpr (sizeof(T) >= 4 && !SW_NO_SLP) {
    SW_UNROLL for (int e = 0; e < P; ++e) v.elem[e] = a[e];
  } else {
    constexpr int N = sizeof(v) < kHostVector ? sizeof(v) : kHostVector;
    typedef typename HostBytes<N>::type W;
    SW_UNROLL for (int c = 0; c < (int)sizeof(v); c += N) {
      W w = *reinterpret_cast<const W*>(reinterpret_cast<const char*>(a) + c);
      if constexpr (IsBool<T>::value) w = (W)(w != 0) & (u8)1;   // truth, as one vector compare
      SW_MEMCPY(reinterpret_cast<char*>(&v) + c, &w, N);
    }
  }
  return v;
#endif
}

// load_pack for a dense operand in global memory, where the tuning asks for it
// (Algorithm.keep_loads): a 16-byte pack is read with an L2 evict_last policy on sm_80 and
// later. Streamed inputs are never read again, yet on the H200 this measured faster in some
// kernels (contiguous +1-3%, float16 scalars and float32 rows +4-6%) and slower in others
// (float32 scalars -8%, int64 rows -12%): the tuning picks. Never for a
// pointer into shared or local memory (the table of a period, a staged block).
template <class T, int P, class Index>
SW_HOST_DEVICE SW_INLINE Pack<T, P> load_kept(const char* base, Index off) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (sizeof(Pack<T, P>) == 16) {
    const T* a = reinterpret_cast<const T*>(base) + off;
    u64 policy;
    uint4 w;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w) : "l"(a), "l"(policy) : "memory");
    return truth(bit_cast<Pack<T, P>>(w));
  }
#endif
  return load_pack<T, P>(base, off);
}

// load_pack for a "shifted" operand: dense, but its packs are not aligned where the output's
// are (a misaligned slice, rows of odd length; the plan aligns the output's packs). On the
// device a 16-byte pack of 1- or 2-byte elements reads the five 4-byte words it straddles
// (four where it starts on a word) and funnel-shifts neighbours together by the pack's byte
// offset in its first word. Lanes take consecutive packs, so the words a lane reads are its
// neighbours' too (L1 hits) and DRAM moves what aligned packs would. Two aligned 16-byte words
// shifted together measured 67% of copy in float16 misaligned rows: picking the words by the
// run-time misalignment cost a select chain per pack. The fifth word reaches up to 3 bytes
// past the pack: the kernels leave a run's last P - 1 elements out of its packs
// (kernels.cuh unshifted_packs), so that read stays inside the run.
// Wider elements load one by one (int32 misaligned rows at 96% of copy): the two words held
// 6-8 more registers, which put float32 rows over 64 (no 1024-thread blocks).
template <class T, int P, class Index>
SW_HOST_DEVICE SW_INLINE Pack<T, P> load_shifted(const char* base, Index off) {
#if defined(__CUDA_ARCH__)
  enum { B = sizeof(T) * P };
  if constexpr (P > 1 && sizeof(T) >= 4) {
    // 4- and 8-byte elements: one aligned load each, as many registers as the pack
    Pack<T, P> v;
    SW_UNROLL for (int e = 0; e < P; ++e) v.elem[e] = reinterpret_cast<const T*>(base)[off + e];
    return v;
  } else if constexpr (P > 1) {
    const char* a = reinterpret_cast<const char*>(reinterpret_cast<const T*>(base) + off);
    if constexpr (B == 16) {
      const u32 mis = (u32)(reinterpret_cast<u64>(a) & 3), sh = mis * 8;
      const u32* w = reinterpret_cast<const u32*>(a - mis);
      u32 s[5];
      SW_UNROLL for (int i = 0; i < 4; ++i) s[i] = w[i];
      s[4] = mis ? w[4] : 0u;
      uint4 r;
      r.x = __funnelshift_r(s[0], s[1], sh);
      r.y = __funnelshift_r(s[1], s[2], sh);
      r.z = __funnelshift_r(s[2], s[3], sh);
      r.w = __funnelshift_r(s[3], s[4], sh);
      return truth(bit_cast<Pack<T, P>>(r));
    } else {
      // narrower packs: the two aligned B-byte words the pack straddles, shifted together
      typedef typename UnsignedOf<B>::type W;
      const u32 mis = (u32)(reinterpret_cast<u64>(a) & (B - 1));
      const char* lo = a - mis;
      const char* hi = mis ? lo + B : lo;
      const W w0 = *reinterpret_cast<const W*>(lo), w1 = *reinterpret_cast<const W*>(hi);
      const u32 sh = mis * 8;     // below 8 * B
      const W r = sh ? (W)((w0 >> sh) | (w1 << (8 * B - sh))) : w0;
      return truth(bit_cast<Pack<T, P>>(r));
    }
  }
#endif
  return load_pack<T, P>(base, off);
}

// A resident operand's pack (short_rows' "repeated": one period of `per` elements): elements
// off, off + 1, ... wrapping to 0 at the period, so a period need not be whole packs, nor its
// start aligned. One pack load where the pack lies whole in the period (on the device, on its
// alignment); elements otherwise. The resident kernel reads it once per thread.
template <class T, int P, class Index>
SW_HOST_DEVICE SW_INLINE Pack<T, P> load_wrapped(const char* base, Index off, Index per) {
  const T* a = reinterpret_cast<const T*>(base);
  bool whole = off + P <= per;
#if defined(__CUDA_ARCH__)
  whole = whole && reinterpret_cast<u64>(a + off) % sizeof(Pack<T, P>) == 0;
#endif
  if (whole) return load_pack<T, P>(base, off);
  Pack<T, P> v;
  Index ph = off;
  SW_UNROLL for (int e = 0; e < P; ++e) {
    v.elem[e] = read_one(a, ph);
    if (++ph == per) ph = 0;
  }
  return v;
}

template <class T, int P, class Index>
SW_HOST_DEVICE SW_INLINE void store_pack(char* base, Index off, const Pack<T, P>& v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<Pack<T, P>*>(reinterpret_cast<T*>(base) + off) = v;
#else
  T* a = reinterpret_cast<T*>(base) + off;
  if constexpr (sizeof(T) >= 4 && !SW_NO_SLP) {
    SW_UNROLL for (int e = 0; e < P; ++e) a[e] = v.elem[e];
  } else {
    constexpr int S = Same<T, half>::value || Same<T, bfloat16>::value ? kHalfStore : kHostVector;
    constexpr int N = sizeof(v) < S ? sizeof(v) : S;
    typedef typename HostBytes<N>::type W;
    SW_UNROLL for (int c = 0; c < (int)sizeof(v); c += N) {
      W w;
      SW_MEMCPY(&w, reinterpret_cast<const char*>(&v) + c, N);
      *reinterpret_cast<W*>(reinterpret_cast<char*>(a) + c) = w;
    }
  }
#endif
}

// A 16-byte element (complex128) copied as bits.
struct alignas(16) Word16 { u64 lo, hi; };

// Runs the statement(s) after E with E the unsigned word of `size` bytes (a constant in the
// kernels' unrolled operand loops): tiled and short_rows kernels copy operands as bits. A
// macro, as NVRTC 13.0 takes a generic lambda in device code for a host function.
#define SW_WITH_WORD(size, E, ...)                        \
  do {                                                    \
    if ((size) == 1) { typedef unsigned char E; __VA_ARGS__; } \
    else if ((size) == 2) { typedef sw::u16 E; __VA_ARGS__; }  \
    else if ((size) == 4) { typedef sw::u32 E; __VA_ARGS__; }  \
    else if ((size) == 8) { typedef sw::u64 E; __VA_ARGS__; }  \
    else { typedef sw::Word16 E; __VA_ARGS__; }                \
  } while (0)

// A periodic operand (short_rows) whose period is short enough has, on the device, a table
// in shared memory of its period's packs: entry ph holds elements ph, ph + 1, ... (mod the
// period) of one pack, so a pack at phase ph is one aligned load instead of P gathers. The
// kernel builds the tables (cuda/kernels.cuh) and the generated Op reads them; both decide
// with this rule.
static const int kPeriodTableBytes = 2048;
template <int kPack, class Index>
SW_HOST_DEVICE SW_INLINE bool period_table(Index period, int size) {
  return period > 0 && period * kPack * size <= kPeriodTableBytes;
}
#if defined(__CUDA_ARCH__)
// The block's tables, one of kPeriodTableBytes per periodic operand (NT of them): a named
// shared array, so the Op's loads from it compile to shared-memory loads.
template <int NT>
SW_DEVICE SW_INLINE char* period_tables() {
  __shared__ __align__(16) char tables[NT * kPeriodTableBytes];
  return tables;
}
#endif

template <class T, class Index>
SW_HOST_DEVICE SW_INLINE T load_one(const char* base, Index off) {
  return read_one(reinterpret_cast<const T*>(base), off);
}

// Slot layout of an entry point with NA array operands (outputs first) and D merged dims:
//   ptr[NA] | n | aux | shape[D] | stride[NA][D] | period[NA] | params...
// `aux` is the head peel before the first aligned pack (contiguous, scalar, short_rows), the
// tile dim (tiled), or 1 where rows start off a pack and each peels its own head (rows);
// `period` is the gather period of a periodic operand (short_rows).
template <int NA, int D>
struct Layout {
  enum {
    kPtr = 0,
    kN = NA,
    kAux = NA + 1,
    kShape = NA + 2,
    kStride = NA + 2 + D,
    kPeriod = NA + 2 + D + NA * D,
    kParam = NA + 2 + D + NA * D + NA,
  };
};

// The view every kernel body takes of its slot record: operand pointers, device scalars and
// host scalars read once (Op::uniform), and accessors for the rest of the Layout.
template <class Op>
struct Frame {
  typedef typename Op::Index Index;
  typedef Layout<Op::kArrays, Op::kDims> L;
  enum { NA = Op::kArrays, D = Op::kDims };
  const Slot* s;
  char* p[NA];
  typename Op::Uniform u;
  SW_HOST_DEVICE SW_INLINE explicit Frame(const Slot* slots) : s(slots), u(Op::uniform(slots)) {
    SW_UNROLL for (int k = 0; k < NA; ++k) p[k] = slots[L::kPtr + k].ptr;
  }
  SW_HOST_DEVICE SW_INLINE i64 n() const { return s[L::kN].i; }
  SW_HOST_DEVICE SW_INLINE i64 aux() const { return s[L::kAux].i; }
  SW_HOST_DEVICE SW_INLINE Index shape(int d) const { return (Index)s[L::kShape + d].i; }
  SW_HOST_DEVICE SW_INLINE Index stride(int k, int d) const { return (Index)s[L::kStride + k * D + d].i; }
  SW_HOST_DEVICE SW_INLINE Index period(int k) const { return (Index)s[L::kPeriod + k].i; }
};

}  // namespace sw
