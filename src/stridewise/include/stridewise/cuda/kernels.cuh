// stridewise/cuda/kernels.cuh: one __device__ kernel body per mode, mirroring cpu/loops.h.
//
// Each body walks the output in its own memory order and hands the generated Op the element
// offset of every array operand (the Op knows how each operand is read). The generated entry
// point passes two slot arrays: `s`, the record the host packs per call (pack.h Layout), and
// `x`, launch facts the host fixes once per plan (Geometry first, then per-mode extras).
// Grid and block size come from the launch, never from the source.
//
// Several packs in flight: each thread issues the loads of up to kLoads packs (Op::load)
// before it computes and stores any of them (Op::compute, Op::put). A store may alias a later
// load as far as the compiler knows, so with Op::apply per pack only one pack per thread would
// be in flight, and the bandwidth would hang on occupancy.
#pragma once
#include "../pack.h"

namespace sw {
namespace cuda {

static const int kLoads = 4;

// Loop counters: unsigned 32-bit when the plan's Index is 32-bit (every count is then below
// 2^31, so a counter plus a grid stride cannot wrap), 64-bit otherwise. Offsets stay Index.
template <class Index> struct Counter { typedef u32 type; };
template <> struct Counter<i64> { typedef i64 type; };

// x[0]: packs (or elements) each thread takes per step, and the row-group width (rows) or
// tile edge (tiled). Both are powers of two fixed by the host from the algorithm.
struct Geometry {
  i32 items;
  i32 group;
};

SW_DEVICE SW_INLINE Geometry geometry(const Slot* x) { return slot_get<Geometry>(x[0]); }

template <class C> SW_DEVICE SW_INLINE C global_thread() { return (C)blockIdx.x * blockDim.x + threadIdx.x; }

// Division by a fixed divisor d as a multiply-high, add and shift (Granlund-Montgomery as in
// torch's IntDivider): with s = ceil(log2 d) and m = floor(2^W (2^s - d) / d) + 1, the
// quotient of n < 2^(W-1) is (mulhi(n, m) + n) >> s. The host computes m and s once per plan.
SW_DEVICE SW_INLINE i32 fast_div(i32 n, const Slot& magic, const Slot& shift) {
  return (i32)((__umulhi((u32)n, (u32)magic.i) + (u32)n) >> shift.i);
}
SW_DEVICE SW_INLINE i64 fast_div(i64 n, const Slot& magic, const Slot& shift) {
  return (i64)((__umul64hi((u64)n, (u64)magic.i) + (u64)n) >> shift.i);
}

// Flat offsets: every dense operand sits at i; a periodic one (short_rows only) at i mod
// period, one division per pack (load steps the phase within the pack). kFastDiv: the
// division as fast_div, x[1 + 2 m] and x[2 + 2 m] holding the magic and shift of the m-th
// periodic operand's period (a `%` is about 14 instructions). Without it the form stays
// `per ? i % per : i` for every operand: a compile-time test of periodic(k) there measured
// 2-5% slower in the memory-bound dtypes.
template <class Op, bool kPeriodic, bool kFastDiv = false>
SW_DEVICE SW_INLINE void flat_offsets(const Frame<Op>& f, const Slot* x, typename Op::Index i,
                                      typename Op::Index* off) {
  int m = 0;
  SW_UNROLL for (int k = 0; k < Op::kArrays; ++k) {
    if (kFastDiv && Op::periodic(k)) {
      off[k] = i - fast_div(i, x[1 + 2 * m], x[2 + 2 * m]) * f.period(k);
      ++m;
    } else if (kPeriodic && !kFastDiv) {
      const typename Op::Index per = f.period(k);
      off[k] = per ? i % per : i;
    } else {
      off[k] = i;
    }
  }
}

// The packs a thread owns in one step: pack(t) for t in [0, count), skipping those at or past
// `packs`; `offsets(q, j, off)` fills the operand offsets of pack q, the j-th of its batch, into
// the arrays `p`. Loads of up to L packs (a batch; kLoads unless the kernel compiles fewer, as
// contiguous does for fewer registers) are issued before any of them is stored.
// kShare: a batch is one pack column, pack(t0), in `rows` <= L rows (j), which share
// their repeated operands (rows with R > 1), read once with the first, always in range.
// kBatch: the batch's packs all go through the functor's fast path, then (if a lane needs it)
// all again exactly, then to their stores, so one branch guards the batch and the packs'
// arithmetic interleaves: for a long remainder (int64) that waits on its own latency; it
// costs registers, which the memory-bound kernels pay in occupancy.
// Without it each pack has its own branch (Op::apply's order).
// A functor without a fast path (its arithmetic has no branch) runs eager batches: every pack
// is loaded, one out of range from pack t0's offsets (in range), then computed and stored, there
// with pack t0's own bits at pack t0's place, so the batch is one block without branches.
// Guarded by `live`, bool xor's arithmetic merged into each pack's load branch and waited there
// (a rows bool xor at 39% of copy, 79% eager; H200). The guards stay where eager lost: a functor
// with a fast path (ptxas then waited on the first pack before loading the others: float16
// remainder contiguous -10%, rows -6%) and a batch with an operand broadcast along its rows (a
// bool outer product -7%); a shared batch keeps them too (no eager form of it was measured).
// `resident`: the In whose repeated operands every pack of the thread shares (short_rows at
// one phase of the period), read and prepared once before the loop; each pack reloads the rest.
// kShort: the functor's short form first where a warp's lanes allow it (functors.h ShortForm;
// tuning.py KernelTables.short_form). kOutline: a flagged pack's exact form as a call
// (functors.h call_exact; tuning.py KernelTables.outline_exact).
template <class Op, int P, bool kShare = false, bool kBatch = false, int L = kLoads, bool kShort = false,
          bool kOutline = false, class C, class Pack, class Offsets>
SW_DEVICE SW_INLINE void run_packs(const Frame<Op>& f, char* const* p, C count, C packs,
                                   const Pack& pack, const Offsets& offsets, C rows = L,
                                   const typename Op::template In<P>* resident = nullptr) {
  typedef typename Op::Index Index;
  enum { kEager = Op::kPure && !Op::kBcast && !kBatch && !kShare && !HasFast<typename Op::F>::value };
  for (C t0 = 0; t0 < count; t0 += L) {
    if (pack(t0) >= packs) break;           // a thread's packs ascend with t
    // Pack t0 is in range from here on; saying so (j == 0 ||) lets the compiler reuse what
    // the first pack computed from shared values in the others. A shared batch's packs are
    // told apart by j alone: its column computed per j cost 15 instructions per row.
    typename Op::template In<P> in[L];
    typename Op::template Out<P> out[L];
    Index off[L][Op::kArrays];
    bool live[L];
    const C q0 = pack(t0);
    SW_UNROLL for (int j = 0; j < L; ++j) {
      const C q = kShare ? q0 : pack(t0 + j);
      live[j] = j == 0 || (kShare ? (C)j < rows : t0 + j < count && q < packs);
      if constexpr (kEager) {
        offsets(live[j] ? q : q0, j, off[j]);
        in[j] = resident ? Op::template reload<P>(p, off[j], f.u, *resident)
                         : Op::template load<P>(p, off[j], f.u);
      } else {
        // the shared values are in[0]'s on every path; with kBatch a pack out of range
        // computes on pack 0's operands and is never stored
        if ((kShare || kBatch) && j > 0) in[j] = in[0];
        if (live[j]) {
          offsets(q, j, off[j]);
          in[j] = resident ? Op::template reload<P>(p, off[j], f.u, *resident)
                  : kShare && j > 0 ? Op::template reload<P>(p, off[j], f.u, in[0])
                                    : Op::template load<P>(p, off[j], f.u);
        }
      }
    }
    if constexpr (kBatch) {
      FastFlag slow = 0;
      SW_UNROLL for (int j = 0; j < L; ++j) {
        if (Op::kPure || live[j]) {
          const FastFlag s = Op::template compute<P, kFast>(p, off[j], f.u, in[j], out[j]);
          if (live[j]) slow |= s;
        }
      }
      if (slow) SW_UNROLL for (int j = 0; j < L; ++j) {
        if (live[j]) Op::template compute<P, kExact>(p, off[j], f.u, in[j], out[j]);
      }
      SW_UNROLL for (int j = 0; j < L; ++j) {
        if (live[j]) Op::template put<P>(p, off[j], out[j]);
      }
    } else if constexpr (kEager) {
      SW_UNROLL for (int j = 0; j < L; ++j) Op::template compute<P>(p, off[j], f.u, in[j], out[j]);
      SW_UNROLL for (int j = 0; j < L; ++j) Op::template put<P>(p, off[j], out[j]);
    } else {
      SW_UNROLL for (int j = 0; j < L; ++j) {
        if (!live[j]) continue;
        Op::template compute<P, kEither, kShort, kOutline>(p, off[j], f.u, in[j], out[j]);
        Op::template put<P>(p, off[j], out[j]);
      }
    }
  }
}

// short_rows: each periodic operand whose period is short enough gets its table of packs
// (pack.h period_table), built by the whole block before any load; the generated Op reads
// a pack at phase ph from entry ph.
template <class Op>
SW_DEVICE SW_INLINE void build_period_tables(const Frame<Op>& f) {
  typedef typename Op::Index Index;
  enum { P = Op::kPack };
  char* table = period_tables<Op::kPeriodicOperands>();
  SW_UNROLL for (int k = 0; k < Op::kArrays; ++k) {
    if (!Op::periodic(k)) continue;
    const Index per = f.period(k);
    if (period_table<P>(per, Op::size(k))) {
      SW_WITH_WORD(Op::size(k), E, {
        for (Index i = threadIdx.x; i < per * P; i += blockDim.x)
          reinterpret_cast<E*>(table)[i] = reinterpret_cast<const E*>(f.p[k])[(i / P + i % P) % per];
      });
    }
    table += kPeriodTableBytes;
  }
  __syncthreads();
}

// Whole packs in a run of m elements after its head. A shifted operand's load (pack.h
// load_shifted) reads the aligned word after its pack's last byte, up to P - 1 elements on: the
// last P - 1 elements then go one by one, so no read leaves the run (or its allocation).
template <class Op, class C>
SW_DEVICE SW_INLINE C unshifted_packs(C m) {
  enum { P = Op::kPack };
  if constexpr (Op::kShifted) return m > (C)(P - 1) ? (m - (C)(P - 1)) / P : 0;
  return m / P;
}

// contiguous, scalar, short_rows: the output is one dense run of n elements. The first
// `aux` elements (the head peel) and those after the last pack (the tail) go one by one, one
// element per thread; everything between goes as aligned P-element packs. A block step
// covers blockDim * items consecutive packs, lane t taking t, t + blockDim, ..., so each
// warp access is coalesced and a thread has `items` independent packs per step, L of them
// in flight at a time.
template <class Op, bool kPeriodic, bool kFastDiv = false, int L = kLoads, bool kOutline = false>
SW_DEVICE SW_INLINE void flat_kernel(const Slot* s, const Slot* x) {
  typedef typename Op::Index Index;
  typedef typename Counter<Index>::type C;
  enum { P = Op::kPack };
  const Frame<Op> f(s);
  const Geometry g = geometry(x);
  const C n = (C)f.n();
  const C head = (C)f.aux() < n ? (C)f.aux() : n;
  const C packs = unshifted_packs<Op>(n - head);
  const C tail = head + packs * P;
  const C tid = global_thread<C>();
  if constexpr (kPeriodic && Op::kPeriodicOperands > 0) build_period_tables<Op>(f);
  Index off[Op::kArrays];
  if (tid < head) {
    flat_offsets<Op, kPeriodic, kFastDiv>(f, x, (Index)tid, off);
    Op::template apply<1>(f.p, off, f.u);
  }
  if (tid < n - tail) {
    flat_offsets<Op, kPeriodic, kFastDiv>(f, x, (Index)(tail + tid), off);
    Op::template apply<1>(f.p, off, f.u);
  }
  const C block = blockDim.x, items = g.items;
  const C step = (C)gridDim.x * block * items;
  for (C b = (C)blockIdx.x * block * items + threadIdx.x; b < packs; b += step) {
    run_packs<Op, P, false, false, L, false, kOutline>(
        f, f.p, items, packs, [&](C t) { return b + t * block; },
        [&](C q, int, Index* o) { flat_offsets<Op, kPeriodic, kFastDiv>(f, x, (Index)(head + q * P), o); });
  }
}

// short_rows with resident operands ("repeated" there: periodic operands of one period,
// the run starting on a pack, modes/short_rows.py). Its packs repeat the period's phases every
// R packs, R = period / gcd(period, P): the period itself where it is whole packs, else the
// packs of lcm(period, P) elements (6-element rows of 8-element packs: 3). The grid's threads,
// rounded down to a multiple of R, walk the packs with that stride, so each thread meets one
// phase: it reads those operands (pack.h load_wrapped), and prepares them (a divisor's
// reciprocal), once, where the periodic walk pays an index mod period, a table load and the
// functor's own setup per pack. The elements after the last pack go one by one.
template <class Op, int L = kLoads, bool kOutline = false>
SW_DEVICE SW_INLINE void resident_kernel(const Slot* s, const Slot* x) {
  typedef typename Op::Index Index;
  typedef typename Counter<Index>::type C;
  enum { P = Op::kPack };
  const Frame<Op> f(s);
  const C n = (C)f.n();
  const C packs = unshifted_packs<Op>(n);
  const C tail = packs * P;
  const C tid = global_thread<C>();
  Index per = 1, off[Op::kArrays];
  SW_UNROLL for (int k = 0; k < Op::kArrays; ++k) if (Op::repeated(k)) per = f.period(k);
  if (tid < n - tail) {
    SW_UNROLL for (int k = 0; k < Op::kArrays; ++k)
      off[k] = Op::repeated(k) ? (Index)((tail + tid) % (C)per) : (Index)(tail + tid);
    Op::template apply<1>(f.p, off, f.u);
  }
  // P is a power of two: gcd(per, P) is per's lowest set bit, capped at P
  const C low = (C)(per & -per), period = (C)per / (low < (C)P ? low : (C)P);
  const C threads = (C)gridDim.x * blockDim.x;
  if (threads < period) {   // a grid smaller than one period (configure never launches one)
    for (C q = tid; q < packs; q += threads) {
      SW_UNROLL for (int k = 0; k < Op::kArrays; ++k)
        off[k] = Op::repeated(k) ? (Index)(q * P % (C)per) : (Index)q * P;
      Op::template apply<P>(f.p, off, f.u);
    }
    return;
  }
  const C lanes = threads - threads % period;
  if (tid >= lanes || tid >= packs) return;
  const Index phase = (Index)(tid % period * P % (C)per);
  SW_UNROLL for (int k = 0; k < Op::kArrays; ++k) off[k] = Op::repeated(k) ? phase : (Index)tid * P;
  const typename Op::template In<P> first = Op::template load<P>(f.p, off, f.u);
  const C items = geometry(x).items, step = lanes * items;
  for (C b = tid; b < packs; b += step) {
    run_packs<Op, P, false, false, L, false, kOutline>(
        f, f.p, items, packs, [&](C t) { return b + t * lanes; },
        [&](C q, int, Index* o) {
          SW_UNROLL for (int k = 0; k < Op::kArrays; ++k) o[k] = Op::repeated(k) ? phase : (Index)q * P;
        }, (C)L, &first);
  }
}

template <class Op, int L = kLoads>
SW_DEVICE void contiguous_kernel(const Slot* s, const Slot* x) { flat_kernel<Op, false, false, L>(s, x); }
template <class Op> SW_DEVICE void scalar_kernel(const Slot* s, const Slot* x) { flat_kernel<Op, false>(s, x); }
template <class Op, bool kFastDiv = false, int L = kLoads, bool kOutline = false>
SW_DEVICE void short_rows_kernel(const Slot* s, const Slot* x) {
  if constexpr (Op::kRepeated != 0) resident_kernel<Op, L, kOutline>(s, x);
  else flat_kernel<Op, true, kFastDiv, L, kOutline>(s, x);
}

// Offsets of the first element of row h0 of `slab`, a multi-index over the dims before the
// rows' own: dims [0, D - 1) for R = 1 (h0 = 0), [0, D - 2) with dim D - 2 holding h0
// otherwise. The outermost dim takes what is left without a division.
template <class Op, int R, class C>
SW_DEVICE SW_INLINE void row_offsets(const Frame<Op>& f, C slab, C h0, typename Op::Index* off) {
  enum { D = Op::kDims, kLast = R > 1 ? D - 3 : D - 2 };
  SW_UNROLL for (int k = 0; k < Op::kArrays; ++k)
    off[k] = R > 1 ? (typename Op::Index)h0 * f.stride(k, D - 2) : 0;
  SW_UNROLL for (int d = kLast; d >= 0; --d) {
    const C ext = (C)f.shape(d), q = d > 0 ? slab / ext : 0, xd = slab - q * ext;
    slab = q;
    SW_UNROLL for (int k = 0; k < Op::kArrays; ++k) off[k] += (typename Op::Index)xd * f.stride(k, d);
  }
}

// Elements of a row before output 0's first aligned pack, the row's first element at offset
// off0: the plan misaligns every output and every "dense" input alike (the others load
// "shifted"), so after this peel all of them move in aligned packs, whatever the row's
// start (a misaligned slice, odd row lengths). The offset may be negative: the u64 sum wraps
// by a multiple of P.
template <class Op, class C>
SW_DEVICE SW_INLINE C row_head(const Frame<Op>& f, typename Op::Index off0, C len) {
  enum { P = Op::kPack };
  if (P == 1) return 0;
  const C mis = (C)((reinterpret_cast<u64>(f.p[0]) / Op::size(0) + (u64)off0) % P);
  const C h = (C)((P - mis) % P);
  return h < len ? h : len;
}

// rows: the output's innermost dim is unit-stride. A block holds `groups` groups of `group`
// threads; a chunk is group * items packs of one row, and a work unit is `span` consecutive
// chunks of R rows, so long rows spread over many blocks, short rows do not leave a whole
// block idle, and the row's offsets are paid once per unit, never per element. Within a
// unit, lane l of a group takes packs l, l + group, l + 2 group, ... (coalesced).
// R is 1 unless some operand is "repeated" (the same row for every index of dim D - 2: a row
// vector, the divisor of an outer product). Then a unit covers R = L consecutive rows of
// one slab of dim D - 2, and a thread's batch is one pack column in those R rows: the repeated
// operand's pack has one offset for the whole batch, so it is loaded once and whatever the
// functor derives from it alone (a divisor's reciprocal) is computed once per R packs
// (outer products: +11-21%). The R rows must peel alike, so that one pack column is one
// column of the repeated row: they are G = Op::kRowSpacing rows apart, G the fewest rows
// after which the output's rows start at the same phase again (1 where every row starts on
// a pack; rows of odd length: P). A slab's rows then go as sets h0 + i G, i < R, G sets
// to each G R rows, the last ones short or empty. A row's
// packs start after its head (row_head); the unit's last chunk also writes the head and the
// < P tail elements of each row, one per lane.
// configure() in backends/cuda.py sizes the units and passes them from x[1]: span, units per
// row set, units in all, groups per block, then the magic and shift (fast_div) of units, of
// row sets per slab and of group, so that a unit (often a block's only one) divides by
// multiply-highs (its setup went from ~270 instructions to a few dozen).
// L: packs in flight (run_packs), fewer where a heavy functor's registers would cost
// occupancy (tuning.py KernelTables.loads; modes/rows.py sizes units by the same L).
template <class Op, bool kBatch = false, int L = kLoads, bool kShort = false>
SW_DEVICE void rows_kernel(const Slot* s, const Slot* x) {
  typedef typename Op::Index Index;
  typedef typename Counter<Index>::type C;
  enum { NA = Op::kArrays, D = Op::kDims, P = Op::kPack, R = Op::kRepeated && D >= 2 ? L : 1,
         G = R > 1 ? Op::kRowSpacing : 1 };
  const Frame<Op> f(s);
  const Geometry g = geometry(x);
  const C len = (C)f.shape(D - 1);
  const C height = R > 1 ? (C)f.shape(D >= 2 ? D - 2 : 0) : 1;   // a unit's rows share one slab
  const C per_slab = (height + G * R - 1) / (G * R) * G;
  const C group = g.group, chunk = group * g.items;
  const C span = (C)x[1].i, units = (C)x[2].i, work = (C)x[3].i, groups = (C)x[4].i;
  const C gi = (C)fast_div((Index)threadIdx.x, x[9], x[10]), lane = threadIdx.x - gi * group;
  Index step[NA], down[NA], base[NA];
  SW_UNROLL for (int k = 0; k < NA; ++k) {
    step[k] = f.stride(k, D - 1);
    down[k] = R > 1 && !Op::repeated(k) ? f.stride(k, D >= 2 ? D - 2 : 0) * G : 0;
  }
  for (C w = (C)blockIdx.x * groups + gi; w < work; w += (C)gridDim.x * groups) {
    const C set = (C)fast_div((Index)w, x[5], x[6]), c = w - set * units;
    const C slab = R > 1 ? (C)fast_div((Index)set, x[7], x[8]) : set;
    const C s0 = set - slab * per_slab, h0 = s0 / G * G * R + s0 % G;
    if (G > 1 && h0 >= height) continue;    // an empty set of the slab's last G R rows
    const C left = (height - h0 + G - 1) / G, nr = left < (C)R ? left : (C)R;
    row_offsets<Op, R>(f, slab, h0, base);
    const C head = Op::kRowHeads ? row_head<Op>(f, base[0], len) : 0;
    const C packs = unshifted_packs<Op>(len - head), ends = len - packs * P;   // head, tail
    const C first = c * span * chunk + lane;
    run_packs<Op, P, (R > 1), kBatch, L, kShort>(f, f.p, span * g.items * R, packs,
                     [&](C t) { return first + t / R * group; },
                     [&](C q, int j, Index* o) {
                       SW_UNROLL for (int k = 0; k < NA; ++k)
                         o[k] = base[k] + (Index)(head + q * P) * step[k] + (Index)j * down[k];
                     }, nr);
    if (c == units - 1) {
      for (C e = lane; e < ends; e += group) {
        const Index xi = (Index)(e < head ? e : e + packs * P);
        for (C j = 0; j < nr; ++j) {
          Index off[NA];
          SW_UNROLL for (int k = 0; k < NA; ++k) off[k] = base[k] + xi * step[k] + (Index)j * down[k];
          Op::template apply<1>(f.p, off, f.u);
        }
      }
    }
  }
}

// tiled: some input is unit-stride along dim `aux` (j), the output along the last dim (i).
// A block takes one tile at a time, TJ rows (j) by T packs (T * P elements of i), T = group
// and TJ = kRows (square tiles, TJ = T, where kRows is 0), and its threads take the tile's
// P x P blocks. For each staged operand a thread loads a block as P packs along j (its unit
// stride) and transposes it in registers into P packs along i (transpose), so the block's
// P rows then run through the Op like any rows pack: Op::load reads a staged operand's pack
// from the thread's transposed block, every other operand and the output move in whole
// packs, up to kLoads packs in flight (run_packs).
// No shared memory and no barrier: a warp's 32 blocks are 8 along i by 4 along j, so each
// load of a staged operand reads 64 contiguous bytes of 8 columns, and each row's loads and
// stores are 128 contiguous bytes. The plan makes both tile dims'
// extents multiples of P, so a block is whole or absent; configure() keeps T >= max(P, 8)
// and TJ a multiple of P.
// Tiles go to blocks in groups of x[1] consecutive tiles along j (the last group of a column
// of tiles may be shorter), i after that: neighbouring blocks then read one longer run of
// each staged column. Tall, narrow tiles measured fastest (+1-3%): 16-bit
// tiles of 128 rows by 8 packs give each thread of a 128-thread block one P x P block, and
// its 4 warps read 256 bytes of each of the tile's 64 staged columns together; float32,
// float64 and int64 take 64 rows by 8 packs (tuning.py KernelTables.tile_rows).
// A j shorter than half the tile takes tiles as short as fit it (down to one pack) and as
// many times wider, so every thread still has a P x P block: tiles of 64 rows over 16
// channels left three quarters of a block idle (modes/tiled.py fitted_tile, the launch's
// copy; Auto counts them down to tuning.py tiled_min_rows). Staged tiles keep their
// compiled shape.
// kCols (Algorithm `stage`): the tile is kCols packs wide, compiled in, and the block first
// copies each staged operand's tile into shared memory (Stage below) with cp.async, whole
// 128-byte runs of its columns and no register held across the loads' latency; the threads
// then transpose their P x P blocks from there. int32 gained 2-5%.
static const int kBlockCols = 8;  // a warp's blocks along i

// P packs of P elements, column c at src + c * si, as the P packs of the block's rows;
// row e is written to rows[e] (16 bytes each, the pack's bits in its low bytes).
template <int P, class E, class Index>
SW_DEVICE SW_INLINE void transpose(uint4* rows, const E* src, Index si) {
  Pack<E, P> col[P];
  SW_UNROLL for (int c = 0; c < P; ++c)
    col[c] = load_pack<E, P>(reinterpret_cast<const char*>(src), (Index)c * si);
  SW_UNROLL for (int e = 0; e < P; ++e) {
    Pack<E, P> row;
    SW_UNROLL for (int c = 0; c < P; ++c) row.elem[c] = col[c].elem[e];
    *reinterpret_cast<Pack<E, P>*>(rows + e) = row;
  }
}

// 16 bytes from global to shared memory, held in no register (cp.async, sm_80 and later).
SW_DEVICE SW_INLINE void copy_async16(void* dst, const void* src) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
               ::"r"((u32)__cvta_generic_to_shared(dst)), "l"(src) : "memory");
#else
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
#endif
}
SW_DEVICE SW_INLINE void copy_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// The shared-memory tiles of a block's staged operands (tiled with kCols): an operand is
// staged if its packs are 16 bytes and its tile fits the 48 KiB a block may declare after
// those before it; any other staged operand is transposed from global memory as before.
// Column c of a tile (TJ elements along j, CH chunks of 16 bytes) starts at chunk c * CH and
// holds its chunk h at h ^ (c / P mod 8): the 8 lanes of a quarter warp read chunk h of 8
// blocks' columns (P apart), and the swizzle puts them in 8 different bank groups.
template <class Op, int kCols, int TJ>
struct Stage {
  enum { P = Op::kPack, CH = TJ / P, kChunks = kCols * P * CH, kSwizzle = (CH < 8 ? CH : 8) - 1 };
  SW_HOST_DEVICE static constexpr bool wide(int k) { return Op::staged(k) && Op::size(k) * P == 16; }
  SW_HOST_DEVICE static constexpr int slot(int k) {   // operand k's tile, or -1
    int n = 0;
    for (int i = 0; i < k; ++i) n += wide(i);
    return kCols && wide(k) && (n + 1) * kChunks * 16 <= 48 * 1024 ? n : -1;
  }
  SW_HOST_DEVICE static constexpr int count() {
    int n = 0;
    for (int k = 0; k < Op::kArrays; ++k) n += slot(k) >= 0;
    return n;
  }
  SW_DEVICE static SW_INLINE int at(int c, int h) { return c * CH + (h ^ (c / P & kSwizzle)); }
};

template <class Op, int kRows = 0, int kCols = 0, bool kOutline = false>
SW_DEVICE void tiled_kernel(const Slot* s, const Slot* x) {
  typedef typename Op::Index Index;
  typedef typename Counter<Index>::type C;
  enum { NA = Op::kArrays, D = Op::kDims, P = Op::kPack };
  const Frame<Op> f(s);
  const Geometry g = geometry(x);
  const int jd = (int)f.aux(), id = D - 1;
  const C nj = (C)f.shape(jd), ni = (C)f.shape(id);
  int T = kCols ? kCols : g.group, TJ = kRows ? kRows : T;
  if (!kCols)                                     // fitted to a short j, as wide again
    while (TJ > P && (C)(TJ / 2) >= nj) TJ /= 2, T *= 2;
  const int height = TJ / P, blocks = height * T;
  const C tj = (nj + TJ - 1) / TJ, ti = (ni + T * P - 1) / (T * P);
  const C tiles = tj * ti, work = (C)(f.n() / ((i64)nj * ni)) * tiles, gj = (C)x[1].i;
  uint4 rows[NA][P];                              // a staged operand's transposed block
  char* q[NA];                                    // where Op::load reads operand k
  SW_UNROLL for (int k = 0; k < NA; ++k) q[k] = Op::staged(k) ? reinterpret_cast<char*>(rows[k]) : f.p[k];
  Index step[NA], corner[NA];
  SW_UNROLL for (int k = 0; k < NA; ++k) step[k] = f.stride(k, jd);
  typedef Stage<Op, kCols, kRows ? kRows : kCols> S;
  __shared__ __align__(16) uint4 tiles_in[S::count() ? S::count() : 1][S::count() ? S::kChunks : 1];
  for (C w = blockIdx.x; w < work; w += gridDim.x) {
    C rest = w / tiles;
    const C local = w - rest * tiles, g0 = local / (ti * gj) * gj;   // the group's first j tile
    const C gs = tj - g0 < gj ? tj - g0 : gj, in_group = local - g0 * ti;
    const C bi = in_group / gs, bj = g0 + in_group % gs;
    const C j0 = bj * TJ, i0 = bi * T * P;
    SW_UNROLL for (int k = 0; k < NA; ++k) corner[k] = (Index)j0 * step[k] + (Index)i0 * f.stride(k, id);
    SW_UNROLL for (int d = D - 1; d >= 0; --d) {  // the batch index over the other dims
      if (d == jd || d == id) continue;
      const C ext = (C)f.shape(d), xd = rest % ext;
      rest /= ext;
      SW_UNROLL for (int k = 0; k < NA; ++k) corner[k] += (Index)xd * f.stride(k, d);
    }
    const int nrows = (int)(nj - j0 < (C)TJ ? nj - j0 : (C)TJ);
    const int ncols = (int)(ni - i0 < (C)(T * P) ? ni - i0 : (C)(T * P));
    if constexpr (S::count() > 0) {
      __syncthreads();                            // every thread is done with the last tile
      SW_UNROLL for (int k = 0; k < NA; ++k) {
        if (S::slot(k) < 0) continue;
        const char* src = f.p[k] + (i64)corner[k] * Op::size(k);
        for (int t = threadIdx.x; t < S::kChunks; t += blockDim.x) {
          const int c = t / S::CH, h = t % S::CH;   // 8 consecutive lanes: 128 bytes of a column
          if (c < ncols && h * P < nrows)
            copy_async16(&tiles_in[S::slot(k)][S::at(c, h)], src + ((i64)c * f.stride(k, id) + h * P) * Op::size(k));
        }
      }
      copy_async_wait();
      __syncthreads();
    }
    for (int b = threadIdx.x; b < blocks; b += blockDim.x) {
      const int r0 = b / kBlockCols % height * P;
      const int c0 = (b % kBlockCols + b / (kBlockCols * height) * kBlockCols) * P;
      if (r0 >= nrows || c0 >= ncols) continue;
      Index at[NA];                               // operand offsets of the block's row 0
      SW_UNROLL for (int k = 0; k < NA; ++k) {
        at[k] = corner[k] + (Index)r0 * step[k] + (Index)c0 * f.stride(k, id);
        if (!Op::staged(k)) continue;
        if (S::slot(k) >= 0)                      // the block's columns c0.. share one swizzle
          SW_WITH_WORD(Op::size(k), E, transpose<P>(rows[k], reinterpret_cast<const E*>(
                       &tiles_in[S::slot(k)][S::at(c0, r0 / P)]), (Index)S::CH * P));
        else
          SW_WITH_WORD(Op::size(k), E,
                       transpose<P>(rows[k], reinterpret_cast<const E*>(f.p[k]) + at[k], f.stride(k, id)));
      }
      // unrolled batches of rows, so a row's place in `rows` is a constant (registers)
      SW_UNROLL for (int e0 = 0; e0 < P; e0 += kLoads) {
        const int n = P < kLoads ? P : kLoads;
        run_packs<Op, P, false, false, kLoads, false, kOutline>(
            f, q, (C)n, (C)n, [&](C t) { return t; }, [&](C t, int, Index* o) {
          const int e = e0 + (int)t;
          SW_UNROLL for (int k = 0; k < NA; ++k)
            o[k] = Op::staged(k) ? (Index)(e * (16 / Op::size(k))) : at[k] + (Index)e * step[k];
        });
      }
    }
  }
}

// general: any strides over at most 8 dims. Element e of the output's walk goes to lane
// e mod blockDim of its block step (coalesced on the output); each element's multi-index
// comes from fast divisions, x[1 + 2d] / x[2 + 2d] holding dim d's magic and shift.
template <class Op>
SW_DEVICE void general_kernel(const Slot* s, const Slot* x) {
  typedef typename Op::Index Index;
  typedef typename Counter<Index>::type C;
  enum { NA = Op::kArrays, D = Op::kDims };
  const Frame<Op> f(s);
  const Geometry g = geometry(x);
  const C n = (C)f.n(), block = blockDim.x, items = g.items;
  const C step = (C)gridDim.x * block * items;
  for (C b = (C)blockIdx.x * block * items + threadIdx.x; b < n; b += step) {
    run_packs<Op, 1>(f, f.p, items, n, [&](C t) { return b + t * block; }, [&](C e, int, Index* off) {
      Index rest = (Index)e;
      SW_UNROLL for (int k = 0; k < NA; ++k) off[k] = 0;
      SW_UNROLL for (int d = D - 1; d >= 0; --d) {
        const Index qd = fast_div(rest, x[1 + 2 * d], x[2 + 2 * d]);
        const Index xd = rest - qd * f.shape(d);
        rest = qd;
        SW_UNROLL for (int k = 0; k < NA; ++k) off[k] += xd * f.stride(k, d);
      }
    });
  }
}

}  // namespace cuda
}  // namespace sw
