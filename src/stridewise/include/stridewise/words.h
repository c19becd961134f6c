// stridewise/words.h: four 1-byte lanes of a pack as one 32-bit word.
#pragma once
#include "types.h"
#include "pack.h"

namespace sw {

// Apply4<F, S>: an exact four-lane form of functor F on 1-byte storage S (int8, uint8, bool),
// used by the generated kernel for packs whose operands and output are all S (codegen/words.py).
// Element by element the device spends most of a byte's instructions taking it out of its
// word (a byte permute and a sign extension), widening it and putting the result back; a
// word form works on the bytes where they lie. A specialization (value 1) provides
// `static u32 run(A a, B b)`, the result word, for each operand given as
//   - a word of four consecutive elements (u32),
//   - `splat(v)`, one value along the pack (a broadcast operand or a scalar), or
//   - `prepare(word)`, D, for a last operand shared by a batch's packs (an outer product's
//     divisor row: functors.h HasPrepare's role), prepared once per batch.
// The result must equal F's, lane by lane, bit for bit.
template <class F, class S> struct Apply4 {
  enum { value = 0 };
  typedef u32 D;
  SW_HOST_DEVICE SW_INLINE static D prepare(u32 w) { return w; }
};
// Apply4 for a P-element pack: P-dependent, so a generated branch on it compiles only if taken.
template <int P, class F, class S> struct Apply4Pack : Apply4<F, S> {
  enum { value = P % 4 == 0 && Apply4<F, S>::value };
};

// Word w (elements 4w .. 4w + 3) of a pack of 1-byte elements (aligned: Pack's alignas), of
// a plain array of them (a strided or periodic operand: assembled), and a pack's store.
template <class T, int P>
SW_HOST_DEVICE SW_INLINE u32 word4(const Pack<T, P>& x, int w) {
  static_assert(sizeof(T) == 1 && P % 4 == 0, "words of 1-byte packs");
#if defined(__CUDA_ARCH__)
  return x.words[w];
#else
  u32 v;   // the host's Pack has no word view: a copy, which aliases nothing
  __builtin_memcpy(&v, x.elem + 4 * w, 4);
  return v;
#endif
}
template <class T, int P>
SW_HOST_DEVICE SW_INLINE u32 word4(const T (&x)[P], int w) {
  static_assert(sizeof(T) == 1 && P % 4 == 0, "words of 1-byte elements");
  u32 v = 0;
  SW_UNROLL for (int i = 0; i < 4; ++i) v |= (u32)bit_cast<u8>(x[4 * w + i]) << (8 * i);
  return v;
}
template <class T, int P>
SW_HOST_DEVICE SW_INLINE void set_word4(Pack<T, P>& x, int w, u32 v) {
  static_assert(sizeof(T) == 1 && P % 4 == 0, "words of 1-byte packs");
#if defined(__CUDA_ARCH__)
  x.words[w] = v;
#else
  __builtin_memcpy(x.elem + 4 * w, &v, 4);
#endif
}
// v in each byte of a word
template <class T> SW_HOST_DEVICE SW_INLINE u32 splat_byte(T v) {
  return 0x01010101u * (u32)bit_cast<u8>(v);
}

// Bytes of w that are not zero, as 0x80 in each (exact per byte: no carry crosses a byte).
SW_HOST_DEVICE SW_INLINE u32 nonzero_bytes(u32 w) {
  return (((w & 0x7f7f7f7fu) + 0x7f7f7f7fu) | w) & 0x80808080u;
}

}  // namespace sw
