// stridewise/raw.h: what a user kernel's raw arguments and flat index are, on both backends.
//
// A `raw T x` argument is the whole array, indexed by hand as in CuPy: x[j] is the element at
// C-order flat index j of x's own shape (whatever its strides), x[idx] the element at the
// multi-index idx, and x.size(), x.shape(), x.strides() (bytes) describe it, as CuPy's CArray.
// The host writes its record into consecutive argument slots (pointer, size, shape, strides),
// which the kernel reads once per thread. `_ind` is the loop: _ind.size() elements, and `i`,
// the element's C-order flat index over the broadcast shape (or over size=).
#pragma once
#include "types.h"
#if !defined(__CUDACC_RTC__)
#include <cstddef>   // ptrdiff_t (NVRTC has it built in)
#endif

namespace sw {

// 16-bit floats are storage types (types.h): a raw element of one reads and writes as float,
// the placeholder's C type; every other element is a plain reference.
template <class T>
struct Ref16 {
  T* p;
  SW_HOST_DEVICE SW_INLINE operator float() const { return convert<float>(*p); }
  SW_HOST_DEVICE SW_INLINE const Ref16& operator=(float v) const { *p = convert<T>(v); return *this; }
  SW_HOST_DEVICE SW_INLINE const Ref16& operator=(const Ref16& o) const { *p = *o.p; return *this; }
  SW_HOST_DEVICE SW_INLINE const Ref16& operator+=(float v) const { return *this = float(*this) + v; }
  SW_HOST_DEVICE SW_INLINE const Ref16& operator-=(float v) const { return *this = float(*this) - v; }
  SW_HOST_DEVICE SW_INLINE const Ref16& operator*=(float v) const { return *this = float(*this) * v; }
  SW_HOST_DEVICE SW_INLINE const Ref16& operator/=(float v) const { return *this = float(*this) / v; }
};
template <class T> struct RawRef { typedef T& type; static SW_HOST_DEVICE SW_INLINE type at(T* p) { return *p; } };
template <> struct RawRef<half> {
  typedef Ref16<half> type;
  static SW_HOST_DEVICE SW_INLINE type at(half* p) { return type{p}; }
};
template <> struct RawRef<bfloat16> {
  typedef Ref16<bfloat16> type;
  static SW_HOST_DEVICE SW_INLINE type at(bfloat16* p) { return type{p}; }
};

template <class T, int N, bool C>
struct Raw {
  enum { ndim = N, kDims = N > 0 ? N : 1 };
  char* ptr;
  ptrdiff_t n;
  ptrdiff_t extent[kDims];
  ptrdiff_t stride[kDims];   // bytes

  SW_HOST_DEVICE SW_INLINE T* data() const { return reinterpret_cast<T*>(ptr); }
  SW_HOST_DEVICE SW_INLINE ptrdiff_t size() const { return n; }
  SW_HOST_DEVICE SW_INLINE const ptrdiff_t* shape() const { return extent; }
  SW_HOST_DEVICE SW_INLINE const ptrdiff_t* strides() const { return stride; }
  // Element at C-order flat index j of this array's shape.
  typedef typename RawRef<T>::type Ref;
  SW_HOST_DEVICE SW_INLINE Ref operator[](i64 j) const {
    if (C) return RawRef<T>::at(data() + j);
    ptrdiff_t off = 0;
    for (int d = N - 1; d >= 0; --d) {
      const i64 q = j / extent[d];
      off += (j - q * extent[d]) * stride[d];
      j = q;
    }
    return RawRef<T>::at(reinterpret_cast<T*>(ptr + off));
  }
  // Element at a multi-index (one entry per dim).
  template <class I>
  SW_HOST_DEVICE SW_INLINE Ref operator[](const I (&idx)[kDims]) const {
    ptrdiff_t off = 0;
    for (int d = 0; d < N; ++d) off += (ptrdiff_t)idx[d] * stride[d];
    return RawRef<T>::at(reinterpret_cast<T*>(ptr + off));
  }
};

// The loop of an indexed kernel: its size (CuPy's _ind.size()) and this element's flat index.
struct Indexer {
  i64 index;
  i64 n;
  SW_HOST_DEVICE SW_INLINE ptrdiff_t size() const { return (ptrdiff_t)n; }
};

}  // namespace sw
