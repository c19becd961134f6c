// stridewise/cpu/loops.h: one OpenMP loop per mode. Each walks the output in its own memory
// order and hands Op::apply<P> the element offset of every array operand; the generated Op
// knows how each operand is read (dense pack, broadcast, strided, periodic or uniform).
#pragma once
#include <omp.h>
#include <unistd.h>
#include "../pack.h"

namespace sw {
namespace cpu {

// Threads start where they pay (a region costs about 1-2 us to start and join on two cores):
// for a cheap op (Op::kCheap: its arithmetic hides behind its memory traffic) from 320 KB
// moved (uint8 add: 2^16 elements 4.2 us serial against 4.7 in two threads, 2^17 7.2 against
// 5.9; float32 add ties at 2^15, 384 KB), for any other op from 2^15 elements, torch's grain
// size, where its arithmetic alone outweighs the region (float32 remainder at 2^15: 30 us on
// one thread against 19 on two).
static const long long kParallelMin = 1 << 15, kParallelBytes = 320 << 10;
// The rows loop's parts: a row longer than this is split, and past the caches its dynamic
// chunks (parallel_for) are about this many elements (the flat loop's are kChunkBytes below).
static const long long kChunk = 1 << 13;

// Flat offsets for modes where the output is one dense run: dense operands sit at i,
// periodic and resident ones at i mod period (one division per pack; apply steps within the
// pack). Only those read a period: the others' offsets need no load (the compiler cannot
// keep a slot in a register across the stores, which may alias it).
template <class Op>
SW_INLINE void flat_offsets(const Frame<Op>& f, typename Op::Index i, typename Op::Index* off) {
  for (int k = 0; k < Op::kArrays; ++k) {
    const typename Op::Index per = Op::periodic(k) || Op::repeated(k) ? f.period(k) : 0;
    off[k] = per ? i % per : i;
  }
}

// The host moves kWide packs per call (pack.h copies, so wider than the plan aligned): the
// functor's vectorized fast path then runs over 64 bytes, and its per-call work (the slow-lane
// test, loads and stores) is paid once per 64 bytes instead of per 16.
static const int kWide = 4;
// The elements of a wide pack: kWide packs, doubled while the narrowest operand's part is under
// 16 bytes. GCC 12 finds no vector type for 8 one-byte lanes beside 8-byte ones ("no
// vectype"), so float64 and int64 comparisons and logical ops ran element by element
// (float64 less 798 -> 158 us at 2^20 on one thread, torch CPU 347). A kernel that reads bool
// operands (SW_NO_SLP) doubles to 64 bytes of bool: GCC gives every type in a loop the vector
// size of its bytes, so 16 bool lanes kept int32 in 16-byte vectors (bool * int32 at 2^20 on
// one thread 385 -> 94 us, torch CPU 159). A constant result (functors.h Constant) does too:
// its loop moves only the stores, 16 bytes a step at 16.8 us for isnan of 2^20 int32.
template <class Op> constexpr int wide_elements() {
  int narrowest = Op::size(0), w = kWide * Op::kPack;
  for (int k = 1; k < Op::kArrays; ++k) narrowest = Op::size(k) < narrowest ? Op::size(k) : narrowest;
  while (w * narrowest < (SW_NO_SLP || Constant<typename Op::F>::value ? 64 : 16)) w *= 2;
  return w;
}
// Dense operands are prefetched this many bytes ahead of the wide packs. A kernel whose
// arithmetic takes as long as its memory traffic (int64 remainder: ~1.6 ns of vector work and
// ~1 ns of DRAM per element on one core) otherwise adds the two: the out-of-order window
// covers only a few dozen elements of the arithmetic, not a DRAM latency's worth. A cheap
// op's flat loop (Op::kCheap) has nothing to overlap and leaves its streams to the hardware's
// prefetcher: with the hints a float32 add by a scalar ran 1.17-1.30x slower at 2^18-2^24.
static const int kPrefetch = 2048;

// Prefetch operand k kPrefetch bytes past its element i: the output (k = 0) for writing.
// The hint is a constant in each branch: __builtin_prefetch rejects a variable one, and a
// loop index folds to a constant only when the optimizer unrolls (not at -Og or -O0).
template <class Op, class Index>
SW_INLINE void prefetch_ahead(char* const* p, int k, Index i) {
  const char* at = p[k] + (i64)i * Op::size(k) + kPrefetch;
  if (k == 0) __builtin_prefetch(at, 1);
  else __builtin_prefetch(at, 0);
}

// A part's body (parallel_for) is compiled once and called per part: inlined into the serial,
// static and dynamic call sites, the whole pack loop was compiled three times (every kernel's
// build 35% slower).
#define SW_PART_BODY __attribute__((noinline))

// Bytes the threads' own caches hold: per-core L2 times the threads (1 MiB a core where the
// system does not say).
inline long long cached_bytes() {
  static const long long per_core = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? (long long)l2 : 1LL << 20;
  }();
  return per_core * omp_get_max_threads();
}
// Bytes the last-level cache holds (the threads' own caches where the system does not say).
inline long long shared_bytes() {
  static const long long llc = [] {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? (long long)l3 : 0LL;
  }();
  return llc > cached_bytes() ? llc : cached_bytes();
}

// body(j0, j1) over the parts of [0, n), in parallel where `parallel`; split statically, one
// part per thread, where `one_part_each` (split_static), else in dynamic chunks.
template <class Index, class Body>
SW_INLINE void parallel_for(Index n, Index chunk, bool parallel, bool one_part_each, const Body& body) {
  if (!parallel) {      // no OpenMP region at all: even a one-thread region costs its start
    body(Index(0), n);
  } else if (one_part_each) {
#pragma omp parallel
    {
      const long long t = omp_get_thread_num(), T = omp_get_num_threads();
      body(Index(n * t / T), Index(n * (t + 1) / T));
    }
  } else {
    const Index parts = (n + chunk - 1) / chunk;
#pragma omp parallel for schedule(dynamic, 1)
    for (Index c = 0; c < parts; ++c) body(c * chunk, n - c * chunk < chunk ? n : (c + 1) * chunk);
  }
}

// Bytes a loop over n outputs moves: every operand but the ones read again and again (a
// periodic or repeated row, from cache), each element once.
template <class Op> SW_INLINE long long loop_bytes(long long n) {
  long long per = 0;
  for (int k = 0; k < Op::kArrays; ++k)
    per += Op::periodic(k) || Op::repeated(k) ? 0 : Op::size(k);
  return per * n;
}

template <class Op> SW_INLINE bool worth_threads(long long n) {
  return Op::kCheap ? loop_bytes<Op>(n) >= kParallelBytes : n >= kParallelMin;
}

// Whether a loop is split statically, one part per thread, as torch's parallel_for splits.
// Where its data fits the threads' own caches, the next call over the same arrays finds each
// thread's part there (two cores, float32 add at 2^16-2^18 elements: 1.5-1.7x faster than
// dynamic chunks, whose parts move between cores). A cheap op's loop up to twice the
// last-level cache is bound by that cache, where one stream a thread beats interleaved chunks
// (float32 add of a row, 2048 x 2048: 602 -> 391 us; docs/decisions.md). Larger loops, and
// the others, go in dynamic chunks: on a shared machine a descheduled thread would otherwise
// hold a static half of the loop for a whole scheduler quantum (4 ms) while the other core
// idles, and an op that computes more than it moves is bound by its threads' balance.
template <class Op> SW_INLINE bool split_static(long long n) {
  const long long bytes = loop_bytes<Op>(n);
  return bytes <= cached_bytes() || (Op::kCheap && bytes <= 2 * shared_bytes());
}

// flat_loop hands out chunks of kChunkBytes of the output, at least 8 of them a loop: one
// atomic per chunk stays far below its work in every dtype, and a short loop still spreads
// over the threads. (Chunks of kChunk elements, 8 KB of 1-byte output, held uint8 add at
// 2^22 elements to 0.75x torch CPU on two cores; 128 KB ones read 1.07-1.15x.)
static const long long kChunkBytes = 1 << 17;
template <class Op, class Index> SW_INLINE Index chunk_of(Index n) {
  const Index bytes = kChunkBytes / Op::size(0), spread = n / 8;
  return bytes < spread ? bytes : spread;
}

// contiguous and scalar: peel `aux` head elements so every pack is aligned, then wide packs,
// then the tail, under one wide pack. A pack loop for it (apply<P>) would be a third
// instantiation of the op, a fifth of the kernel's build (int8 add 133 -> 104 ms), so a
// built-in op takes the last wide pack again, whose first elements it rewrites with the same
// values, unless an output is also an input (which that pack would read back): those tails
// go element by element (float16 remainder in place, a 31-element tail: 5.03 us a call at
// 1023 elements, where packs first took 4.75). A user kernel's go in packs first where the
// op has arithmetic to amortize, then element by element.
template <class Op>
SW_INLINE bool outputs_are_inputs(const Frame<Op>& f) {
  for (int j = 0; j < Op::kOutputs; ++j)
    for (int k = Op::kOutputs; k < Op::kArrays; ++k)
      if (f.p[j] == f.p[k]) return true;
  return false;
}
template <class Op>
void flat_loop(const Slot* slots) {
  typedef typename Op::Index Index;
  // a resident operand (short_rows' "repeated") is one period long: its packs never wider
  enum { P = Op::kPack, W = Op::kRepeated ? Op::kPack : wide_elements<Op>() };
  const Frame<Op> f(slots);
  const Index n = f.n(), head = f.aux() < n ? f.aux() : n;
  const Index wides = (n - head) / W;
  Index off[Op::kArrays];
  for (Index i = 0; i < head; ++i) { flat_offsets(f, i, off); Op::template apply<1>(f.p, off, f.u); }
  const Index chunk = chunk_of<Op>(n) / W > 0 ? chunk_of<Op>(n) / W : 1;
  parallel_for(wides, chunk, worth_threads<Op>(n), split_static<Op>(n),
               [&](Index j0, Index j1) SW_PART_BODY {
    const Frame<Op> g = f;      // a part's own copies: the shared ones, stores could alias
    const Index from = head;
    for (Index j = j0; j < j1; ++j) {
      Index o[Op::kArrays];
      flat_offsets(g, from + j * W, o);
      if (!Op::kCheap)   // a cheap op's streams: the hardware's prefetch alone
        for (int k = 0; k < Op::kArrays; ++k)
          if (!Op::periodic(k)) prefetch_ahead<Op>(g.p, k, o[k]);
      Op::template apply<W>(g.p, o, g.u);
    }
  });
  Index i = head + wides * W;
  if constexpr (Op::kRecompute) {
    if (i < n && wides > 0 && !outputs_are_inputs(f)) {
      flat_offsets(f, n - W, off);
      Op::template apply<W>(f.p, off, f.u);
      i = n;
    }
  } else if constexpr (!Op::kCheap) {
    for (; i + P <= n; i += P) { flat_offsets(f, i, off); Op::template apply<P>(f.p, off, f.u); }
  }
  for (; i < n; ++i) { flat_offsets(f, i, off); Op::template apply<1>(f.p, off, f.u); }
}

template <class Op> void contiguous_loop(const Slot* s) { flat_loop<Op>(s); }
template <class Op> void scalar_loop(const Slot* s) { flat_loop<Op>(s); }
template <class Op> void short_rows_loop(const Slot* s) { flat_loop<Op>(s); }

// The multi-index over dims [0, kTop] of flat index r (idx) and each operand's offset
// there (off), and the odometer step from one such index to the next: a loop divides once
// where it starts, then only adds (general_loop over every dim, rows_loop over the rows).
template <class Op, int kTop>
SW_INLINE void index_of(const Frame<Op>& f, typename Op::Index r, typename Op::Index* idx,
                        typename Op::Index* off) {
  for (int k = 0; k < Op::kArrays; ++k) off[k] = 0;
  for (int d = kTop; d >= 0; --d) {
    const typename Op::Index ext = f.shape(d), q = r / ext, x = r - q * ext;
    r = q;
    idx[d] = x;
    for (int k = 0; k < Op::kArrays; ++k) off[k] += x * f.stride(k, d);
  }
}
template <class Op, int kTop>
SW_INLINE void next_index(const Frame<Op>& f, typename Op::Index* idx, typename Op::Index* off) {
  for (int d = kTop; d >= 0; --d) {
    for (int k = 0; k < Op::kArrays; ++k) off[k] += f.stride(k, d);
    if (++idx[d] < f.shape(d)) break;
    for (int k = 0; k < Op::kArrays; ++k) off[k] -= idx[d] * f.stride(k, d);
    idx[d] = 0;
  }
}

// A row's last x1 - x elements (fewer than 2 N) in halving packs, N, N / 2, ... 1 each at
// most once: a cheap op's short rows (8 int8 elements a row, 16 a pack) otherwise went
// element by element, each through the one-element path.
template <class Op, int N, class Index, class At>
SW_INLINE void row_tail(const Frame<Op>& g, Index& x, Index x1, const At& at) {
  if constexpr (N >= 1) {
    if (x + N <= x1) {
      Op::template apply<N>(g.p, at(x), g.u);
      x += N;
    }
    row_tail<Op, N / 2>(g, x, x1, at);
  }
}

// rows: the output's innermost dim is unit-stride; offsets are computed once per part of
// the loop, then stepped from row to row like an odometer (general_loop's): two 64-bit
// divisions a row cost more than a short row's arithmetic (uint8 add, (16000, 64) by a
// 64-element row, was 0.26x torch CPU). A row longer than kChunk is split into parts of
// about kChunk elements (whole wide packs): a long row (a strided slice merges into one)
// must spread over the threads too.
template <class Op>
void rows_loop(const Slot* slots) {
  typedef typename Op::Index Index;
  const Frame<Op> f(slots);
  enum { NA = Op::kArrays, D = Op::kDims, P = Op::kPack, W = wide_elements<Op>() };
  const Index len_ = f.shape(D - 1);
  const Index rows = len_ ? f.n() / len_ : 0;
  const Index part_ = len_ > kChunk ? kChunk / W * W : len_;
  const Index parts_ = part_ ? (len_ + part_ - 1) / part_ : 0;
  const Index work = rows * parts_;
  const Index chunk = parts_ > 1 ? 1 : kChunk / (len_ ? len_ : 1);
  parallel_for(work, chunk, worth_threads<Op>(f.n()) && work > 1, split_static<Op>(f.n()),
               [&](Index w0, Index w1) SW_PART_BODY {
    if (w0 >= w1) return;       // (parts is 0 where there is no work)
    const Frame<Op> g = f;      // a part's own copy: the shared one, stores could alias
    const Index len = len_, part = part_, parts = parts_;   // and of these (captured by reference)
    Index base[NA], off[NA], step[NA], idx[D > 1 ? D - 1 : 1];
    const Index r0 = w0 / parts;
    Index piece = w0 - r0 * parts;  // the part of row r0 that w0 is
    index_of<Op, D - 2>(g, r0, idx, base);
    for (int k = 0; k < NA; ++k) step[k] = g.stride(k, D - 1);
    const auto at = [&](Index x) {
      for (int k = 0; k < NA; ++k) off[k] = base[k] + x * step[k];
      return off;
    };
    for (Index w = w0; w < w1; ++w) {
      const Index x0 = piece * part, x1 = x0 + part < len ? x0 + part : len;
      Index x = x0;
      for (; x + W <= x1; x += W) {
        if (!Op::kCheap)   // the unit-stride operands, as flat_loop's
          for (int k = 0; k < NA; ++k)
            if (step[k] == 1) prefetch_ahead<Op>(g.p, k, base[k] + x);
        Op::template apply<W>(g.p, at(x), g.u);
      }
      for (; x + P <= x1; x += P) Op::template apply<P>(g.p, at(x), g.u);
      if constexpr (Op::kCheap) row_tail<Op, P / 2>(g, x, x1, at);
      else for (; x < x1; ++x) Op::template apply<1>(g.p, at(x), g.u);
      if (++piece < parts) continue;
      piece = 0;
      next_index<Op, D - 2>(g, idx, base);   // the next row
    }
  });
}

// tiled: some input is unit-stride along dim `aux` (j), the output along the last dim (i).
// Each thread takes tiles of TJ rows (j) by TI columns (i): it copies every staged operand's
// tile into its own buffer (reading along j, the operand's unit stride), then walks the
// tile's rows along i, where Op::apply reads the staged operands from the buffers as dense
// runs. cuda/kernels.cuh's tiled_kernel does the same with P x P blocks transposed in
// registers.
// Where the output's rows allow, tiles are wide and short:
// rows of kRunBytes keep every dense stream in long runs the prefetchers follow, and 4 rows
// a tile read each staged column's cache line in pieces over consecutive tiles, which take
// the next rows (j) of the same columns while those lines are still in cache. Shorter rows
// take square tiles of 64, and so do 8-byte operands too large for a last-level cache
// (there wide tiles lost up to 25% on the 2-core EPYC, which has 32 MiB of L3 per core
// complex; sysconf reports the socket's total). Consecutive tiles go along j in both shapes.
// Both shapes are constants: a run-time tile width cost 15-25%.
static const int kRunBytes = 4096, kWideRows = 4, kSquare = 64;
static const long long kCachedBytes = 32LL << 20;

template <class Op>
constexpr int widest() {
  int s = 1;
  for (int k = 0; k < Op::kArrays; ++k) s = Op::size(k) > s ? Op::size(k) : s;
  return s;
}

// Bytes of operand k's buffer for a tile of `elems` elements (0 unless staged), rounded to
// whole cache lines, and of all of them.
template <class Op>
constexpr int staged_bytes(int k, int elems) {
  return Op::staged(k) ? (elems * Op::size(k) + 63) & ~63 : 0;
}

template <class Op>
constexpr int tile_bytes(int elems) {
  int bytes = 0;
  for (int k = 0; k < Op::kArrays; ++k) bytes += staged_bytes<Op>(k, elems);
  return bytes;
}

template <class E, class Index>
SW_INLINE void stage(E* tile, int width, const E* src, Index si, Index rows, Index cols) {
  for (Index c = 0; c < cols; ++c)
    for (Index r = 0; r < rows; ++r) tile[r * width + c] = src[r + c * si];
}

template <class Op, int TJ, int TI>
void tiles(const Frame<Op>& f) {
  typedef typename Op::Index Index;
  enum { NA = Op::kArrays, D = Op::kDims, V = wide_elements<Op>() };
  const int jd = (int)f.aux(), id = D - 1;
  const Index nj = f.shape(jd), ni = f.shape(id);
  const Index tj = (nj + TJ - 1) / TJ, ti = (ni + TI - 1) / TI;
  const Index work = f.n() / (nj * ni) * tj * ti;
#pragma omp parallel if (worth_threads<Op>(f.n()))
  {
    alignas(64) char buffers[tile_bytes<Op>(TJ * TI)];
    char* q[NA];                                 // where Op::apply reads operand k
    for (int k = 0, used = 0; k < NA; used += staged_bytes<Op>(k, TJ * TI), ++k)
      q[k] = Op::staged(k) ? buffers + used : f.p[k];
#pragma omp for schedule(dynamic, 1)
    for (Index w = 0; w < work; ++w) {
      Index rest = w;                            // consecutive tiles: the next rows (j)
      const Index bj = rest % tj; rest /= tj;
      const Index bi = rest % ti; rest /= ti;
      const Index j0 = bj * TJ, i0 = bi * TI;
      Index corner[NA], off[NA];
      for (int k = 0; k < NA; ++k) corner[k] = j0 * f.stride(k, jd) + i0 * f.stride(k, id);
      for (int d = D - 1; d >= 0; --d) {         // the batch index over the other dims
        if (d == jd || d == id) continue;
        const Index ext = f.shape(d), x = rest % ext;
        rest /= ext;
        for (int k = 0; k < NA; ++k) corner[k] += x * f.stride(k, d);
      }
      const Index rows = nj - j0 < TJ ? nj - j0 : TJ, cols = ni - i0 < TI ? ni - i0 : TI;
      for (int k = 0; k < NA; ++k) {
        if (!Op::staged(k)) continue;
        SW_WITH_WORD(Op::size(k), E,
                     stage(reinterpret_cast<E*>(q[k]), TI, reinterpret_cast<const E*>(f.p[k]) + corner[k],
                           f.stride(k, id), rows, cols));
      }
      for (Index r = 0; r < rows; ++r) {
        const auto at = [&](Index i) {
          for (int k = 0; k < NA; ++k)
            off[k] = Op::staged(k) ? r * TI + i : corner[k] + r * f.stride(k, jd) + i * f.stride(k, id);
          return off;
        };
        // Unstaged strided operands step along the last dim inside apply, so a run of V
        // elements is one call whose arithmetic the compiler can vectorize.
        Index i = 0;
        for (; i + V <= cols; i += V) Op::template apply<V>(q, at(i), f.u);
        for (; i < cols; ++i) Op::template apply<1>(q, at(i), f.u);
      }
    }
  }
}

template <class Op>
void tiled_loop(const Slot* slots) {
  const Frame<Op> f(slots);
  enum { TI = kRunBytes / widest<Op>() };
  if (f.n() == 0) return;
  long long bytes = 0;
  for (int k = 0; k < Op::kArrays; ++k) bytes += (long long)f.n() * Op::size(k);
  if (f.shape(Op::kDims - 1) >= TI && (widest<Op>() <= 4 || bytes <= kCachedBytes))
    tiles<Op, kWideRows, TI>(f);
  else
    tiles<Op, kSquare, kSquare>(f);
}

// general: any strides. Each thread takes a chunk, divides once at its start, then steps
// the multi-index like an odometer, so there is no division per element.
template <class Op>
void general_loop(const Slot* slots) {
  typedef typename Op::Index Index;
  const Frame<Op> f(slots);
  enum { NA = Op::kArrays, D = Op::kDims };
  const Index n = f.n();
  const Index chunk = 1 << 14;
  const Index chunks = (n + chunk - 1) / chunk;
  const Index len = f.shape(D - 1);
#pragma omp parallel for schedule(dynamic, 1) if (worth_threads<Op>(n))
  for (Index c = 0; c < chunks; ++c) {
    Index idx[D], base[NA], off[NA], step[NA];
    index_of<Op, D - 1>(f, c * chunk, idx, base);
    for (int k = 0; k < NA; ++k) {
      step[k] = f.stride(k, D - 1);
      base[k] -= idx[D - 1] * step[k];      // the row's start
    }
    Index x = idx[D - 1], i = c * chunk;
    const Index end = (c + 1) * chunk < n ? (c + 1) * chunk : n;
    while (i < end) {
      const Index x1 = len - x < end - i ? len : x + (end - i);
      for (int k = 0; k < NA; ++k) off[k] = base[k] + x * step[k];
      i += x1 - x;
      for (; x < x1; ++x) {
        Op::template apply<1>(f.p, off, f.u);
        for (int k = 0; k < NA; ++k) off[k] += step[k];
      }
      x = 0;
      next_index<Op, D - 2>(f, idx, base);   // the next row
    }
  }
}

}  // namespace cpu
}  // namespace sw
