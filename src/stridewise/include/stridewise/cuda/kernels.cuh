// stridewise/cuda/kernels.cuh: one __device__ kernel body per mode, mirroring cpu/loops.h.
//
// Each body walks the output in its own memory order and hands Op::apply<P> the element
// offset of every array operand (the generated Op knows how each operand is read). The
// generated entry point passes two slot arrays: `s`, the record the host packs per call
// (pack.h Layout), and `x`, launch facts the host fixes once per plan (Geometry first,
// then per-mode extras). Grid and block size come from the launch, never from the source.
//
// Loop counters are 64-bit everywhere: offsets fit the plan's Index, but a counter plus a
// grid stride may not fit int32 near 2^31. Offsets themselves stay in Index.
#pragma once
#include "../pack.h"

namespace sw {
namespace cuda {

// x[0]: packs (or elements) each thread takes per step, and the row-group width (rows) or
// tile edge (tiled). Both are powers of two fixed by the host from the algorithm.
struct Geometry {
  i32 items;
  i32 group;
};

SW_DEVICE SW_INLINE Geometry geometry(const Slot* x) { return slot_get<Geometry>(x[0]); }

SW_DEVICE SW_INLINE i64 global_thread() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }

// Flat offsets: every dense operand sits at i; a periodic one (short_rows only) at i mod
// period, one division per pack (apply steps the phase within the pack).
template <class Op, bool kPeriodic>
SW_DEVICE SW_INLINE void flat_offsets(const Frame<Op>& f, typename Op::Index i, typename Op::Index* off) {
  SW_UNROLL for (int k = 0; k < Op::kArrays; ++k) {
    if (kPeriodic) {
      const typename Op::Index per = f.period(k);
      off[k] = per ? i % per : i;
    } else {
      off[k] = i;
    }
  }
}

// contiguous, scalar, short_rows: the output is one dense run of n elements. The first
// `aux` elements (the head peel) and the last < P elements (the tail) go one by one, one
// element per thread; everything between goes as aligned P-element packs. A block step
// covers blockDim * items consecutive packs, lane t taking t, t + blockDim, ..., so each
// warp access is coalesced and a thread has `items` independent packs per step.
template <class Op, bool kPeriodic>
SW_DEVICE SW_INLINE void flat_kernel(const Slot* s, const Slot* x) {
  typedef typename Op::Index Index;
  enum { P = Op::kPack };
  const Frame<Op> f(s);
  const Geometry g = geometry(x);
  const i64 n = f.n();
  const i64 head = f.aux() < n ? f.aux() : n;
  const i64 packs = (n - head) / P;
  const i64 tail = head + packs * P;
  const i64 tid = global_thread();
  Index off[Op::kArrays];
  if (tid < head) {
    flat_offsets<Op, kPeriodic>(f, (Index)tid, off);
    Op::template apply<1>(f.p, off, f.u);
  }
  if (tid < n - tail) {
    flat_offsets<Op, kPeriodic>(f, (Index)(tail + tid), off);
    Op::template apply<1>(f.p, off, f.u);
  }
  const i64 block = blockDim.x, items = g.items;
  const i64 step = (i64)gridDim.x * block * items;
  for (i64 b = (i64)blockIdx.x * block * items + threadIdx.x; b < packs; b += step) {
#pragma unroll 4
    for (i64 j = 0; j < items; ++j) {
      const i64 q = b + j * block;
      if (q < packs) {
        flat_offsets<Op, kPeriodic>(f, (Index)(head + q * P), off);
        Op::template apply<P>(f.p, off, f.u);
      }
    }
  }
}

template <class Op> SW_DEVICE void contiguous_kernel(const Slot* s, const Slot* x) { flat_kernel<Op, false>(s, x); }
template <class Op> SW_DEVICE void scalar_kernel(const Slot* s, const Slot* x) { flat_kernel<Op, false>(s, x); }
template <class Op> SW_DEVICE void short_rows_kernel(const Slot* s, const Slot* x) { flat_kernel<Op, true>(s, x); }

// Offsets of the first element of row `r` (its multi-index over dims [0, D-1)).
template <class Op>
SW_DEVICE SW_INLINE void row_offsets(const Frame<Op>& f, typename Op::Index r, typename Op::Index* off) {
  SW_UNROLL for (int k = 0; k < Op::kArrays; ++k) off[k] = 0;
  SW_UNROLL for (int d = Op::kDims - 2; d >= 0; --d) {
    const typename Op::Index ext = f.shape(d), q = r / ext, xd = r - q * ext;
    r = q;
    SW_UNROLL for (int k = 0; k < Op::kArrays; ++k) off[k] += xd * f.stride(k, d);
  }
}

// rows: the output's innermost dim is unit-stride. A block holds blockDim / group groups
// of `group` threads; a chunk is group * items packs of one row, and a work unit is up to
// kRowUnitPacks / items consecutive chunks of one row, so long rows spread over many blocks,
// short rows do not leave a whole block idle, and the row's offsets (divisions) are paid
// once per unit of ~16 packs per thread, never per element. The row's last unit also
// writes the < P tail elements one per lane. configure() in backends/cuda.py mirrors this.
static const i64 kRowUnitPacks = 16;

template <class Op>
SW_DEVICE void rows_kernel(const Slot* s, const Slot* x) {
  typedef typename Op::Index Index;
  enum { NA = Op::kArrays, D = Op::kDims, P = Op::kPack };
  const Frame<Op> f(s);
  const Geometry g = geometry(x);
  const i64 len = f.shape(D - 1);
  const i64 rows = f.n() / len;
  const i64 packs = len / P, rem = len - packs * P;
  const i64 group = g.group, items = g.items, chunk = group * items;
  const i64 chunks = packs > 0 ? (packs + chunk - 1) / chunk : 1;
  const i64 per_unit = kRowUnitPacks / items > 1 ? kRowUnitPacks / items : 1;
  const i64 span = chunks < per_unit ? chunks : per_unit;
  const i64 units = (chunks + span - 1) / span;
  const i64 work = rows * units;
  const i64 groups = blockDim.x / group;
  const i64 lane = threadIdx.x % group;
  const bool narrow = work <= 0x7fffffff;   // 32-bit division when the unit count allows
  Index step[NA], base[NA], off[NA];
  SW_UNROLL for (int k = 0; k < NA; ++k) step[k] = f.stride(k, D - 1);
  for (i64 w = (i64)blockIdx.x * groups + threadIdx.x / group; w < work; w += (i64)gridDim.x * groups) {
    const i64 r = narrow ? (i64)((u32)w / (u32)units) : w / units, c = w - r * units;
    row_offsets(f, (Index)r, base);
    for (i64 cs = 0; cs < span; ++cs) {
      const i64 cc = c * span + cs;
      if (cc >= chunks) break;
#pragma unroll 4
      for (i64 j = 0; j < items; ++j) {
        const i64 q = cc * chunk + j * group + lane;
        if (q < packs) {
          SW_UNROLL for (int k = 0; k < NA; ++k) off[k] = base[k] + (Index)(q * P) * step[k];
          Op::template apply<P>(f.p, off, f.u);
        }
      }
    }
    if (c == units - 1 && lane < rem) {
      const Index xi = (Index)(packs * P + lane);
      SW_UNROLL for (int k = 0; k < NA; ++k) off[k] = base[k] + xi * step[k];
      Op::template apply<1>(f.p, off, f.u);
    }
  }
}

// x[1 + k] of tiled: operand k's element size in bytes, plus 256 when it is staged
// through shared memory (unit-stride along the tile dim `aux`, not along the last dim).
SW_DEVICE SW_INLINE void copy_elem(char* dst, const char* src, int size) {
  if (size == 8) *reinterpret_cast<u64*>(dst) = *reinterpret_cast<const u64*>(src);
  else if (size == 4) *reinterpret_cast<u32*>(dst) = *reinterpret_cast<const u32*>(src);
  else *reinterpret_cast<u16*>(dst) = *reinterpret_cast<const u16*>(src);
}

// tiled: some input is unit-stride along dim `aux` (j), the output along the last dim (i).
// A block takes one T x T tile (T = group) of one batch index at a time. Transposed inputs
// are first copied into shared memory with consecutive lanes walking j (their unit stride),
// into a [T][T + 1] tile (the pad keeps both phases free of bank conflicts); then lanes walk
// i, so the output and every other operand are read and written with consecutive lanes on
// consecutive addresses, and apply<1> reads the staged operands from shared memory.
template <class Op>
SW_DEVICE void tiled_kernel(const Slot* s, const Slot* x) {
  typedef typename Op::Index Index;
  enum { NA = Op::kArrays, D = Op::kDims };
  extern __shared__ __align__(16) char smem[];
  const Frame<Op> f(s);
  const Geometry g = geometry(x);
  const int T = g.group, jd = (int)f.aux(), id = D - 1;
  const Index nj = f.shape(jd), ni = f.shape(id);
  const i64 tj = ((i64)nj + T - 1) / T, ti = ((i64)ni + T - 1) / T;
  const i64 batches = f.n() / ((i64)nj * ni);
  const i64 work = batches * tj * ti;
  const int tx = threadIdx.x % T, ty = threadIdx.x / T, ny = blockDim.x / T;
  char* q[NA];
  int size[NA];
  bool staged[NA];
  {
    int acc = 0;
    SW_UNROLL for (int k = 0; k < NA; ++k) {
      const int info = (int)x[1 + k].i;
      size[k] = info & 255;
      staged[k] = info >= 256;
      q[k] = staged[k] ? smem + acc : f.p[k];
      if (staged[k]) acc += (T * (T + 1) * size[k] + 15) & ~15;
    }
  }
  Index base[NA], off[NA];
  for (i64 w = blockIdx.x; w < work; w += gridDim.x) {
    i64 rest = w;
    const i64 bi = rest % ti;
    rest /= ti;
    const i64 bj = rest % tj;
    rest /= tj;
    SW_UNROLL for (int k = 0; k < NA; ++k) base[k] = 0;
    SW_UNROLL for (int d = D - 1; d >= 0; --d) {  // batch index over the other dims
      if (d == jd || d == id) continue;
      const i64 ext = f.shape(d), xd = rest % ext;
      rest /= ext;
      SW_UNROLL for (int k = 0; k < NA; ++k) base[k] += (Index)xd * f.stride(k, d);
    }
    const Index j0 = (Index)(bj * T), i0 = (Index)(bi * T);
    SW_UNROLL for (int k = 0; k < NA; ++k) {
      if (!staged[k]) continue;
      for (int r = ty; r < T; r += ny) {          // lanes walk j: the operand's unit stride
        const Index gj = j0 + tx, gi = i0 + r;
        if (gj < nj && gi < ni)
          copy_elem(q[k] + (tx * (T + 1) + r) * size[k],
                    f.p[k] + (i64)(base[k] + gj * f.stride(k, jd) + gi * f.stride(k, id)) * size[k], size[k]);
      }
    }
    __syncthreads();
    for (int r = ty; r < T; r += ny) {            // lanes walk i: the output's unit stride
      const Index gj = j0 + r, gi = i0 + tx;
      if (gj < nj && gi < ni) {
        SW_UNROLL for (int k = 0; k < NA; ++k)
          off[k] = staged[k] ? (Index)(r * (T + 1) + tx) : base[k] + gj * f.stride(k, jd) + gi * f.stride(k, id);
        Op::template apply<1>(q, off, f.u);
      }
    }
    __syncthreads();                              // the next tile overwrites shared memory
  }
}

// Division by a fixed divisor d as a multiply-high, add and shift (Granlund-Montgomery as in
// torch's IntDivider): with s = ceil(log2 d) and m = floor(2^W (2^s - d) / d) + 1, the
// quotient of n < 2^(W-1) is (mulhi(n, m) + n) >> s. The host computes m and s once per plan.
SW_DEVICE SW_INLINE i32 fast_div(i32 n, const Slot& magic, const Slot& shift) {
  return (i32)((__umulhi((u32)n, (u32)magic.i) + (u32)n) >> shift.i);
}
SW_DEVICE SW_INLINE i64 fast_div(i64 n, const Slot& magic, const Slot& shift) {
  return (i64)((__umul64hi((u64)n, (u64)magic.i) + (u64)n) >> shift.i);
}

// general: any strides over at most 8 dims. Element e of the output's walk goes to lane
// e mod blockDim of its block step (coalesced on the output); each element's multi-index
// comes from fast divisions, x[1 + 2d] / x[2 + 2d] holding dim d's magic and shift.
template <class Op>
SW_DEVICE void general_kernel(const Slot* s, const Slot* x) {
  typedef typename Op::Index Index;
  enum { NA = Op::kArrays, D = Op::kDims };
  const Frame<Op> f(s);
  const Geometry g = geometry(x);
  const i64 n = f.n(), block = blockDim.x, items = g.items;
  const i64 step = (i64)gridDim.x * block * items;
  Index off[NA];
  for (i64 b = (i64)blockIdx.x * block * items + threadIdx.x; b < n; b += step) {
#pragma unroll 4
    for (i64 j = 0; j < items; ++j) {
      const i64 e = b + j * block;
      if (e < n) {
        Index rest = (Index)e;
        SW_UNROLL for (int k = 0; k < NA; ++k) off[k] = 0;
        SW_UNROLL for (int d = D - 1; d >= 0; --d) {
          const Index qd = fast_div(rest, x[1 + 2 * d], x[2 + 2 * d]);
          const Index xd = rest - qd * f.shape(d);
          rest = qd;
          SW_UNROLL for (int k = 0; k < NA; ++k) off[k] += xd * f.stride(k, d);
        }
        Op::template apply<1>(f.p, off, f.u);
      }
    }
  }
}

}  // namespace cuda
}  // namespace sw
