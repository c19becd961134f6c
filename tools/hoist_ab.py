"""Where to compute a broadcast-invariant subexpression on the CPU: a pre-pass (what stridewise
does) against computing it inside the kernel, once per row or once per tile.

The seed sin(a*b) + sqrt(c) + cos(a)/log(cos(b)+2), a (A,1,C), b (1,B,1), c (B,C), is written
by hand five ways in C++ and built with the CPU backend's flags:
- unhoisted: everything at every output element;
- prepass:   cos(a) (A,C), log(cos(b)+2) (B), sqrt(c) (B,C) into temporaries first, then one
             pass reads them (the same arithmetic, so the same bits);
- row:       log(cos(b)+2) once per output row (what is invariant along the inner axis), the
             rest per element;
- tile:      per tile of TA x TB rows, cos(a) for its TA rows and sqrt(c) for its TB rows into
             a buffer on the stack, log(cos(b)+2) per row: each value computed once per tile;
- the normalization (x - mean) * rsqrt(var + eps) * gamma + beta per channel: unhoisted,
  prepass, row.

Every variant is checked bit for bit against `unhoisted` before it is timed; times are medians
of interleaved rounds (each round runs every variant once, in a rotating order).

    python tools/hoist_ab.py [--log2 21] [--rounds 15] [--dtypes float64,float32]
"""
from __future__ import annotations

import argparse
import ctypes
import hashlib
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SRC = r"""
#include <cmath>
#include <cstdint>
#include <vector>
typedef long long I;
template <class T> static inline T rs(T v) { return T(1) / std::sqrt(v); }

template <class T> void seed_unhoisted(const T* a, const T* b, const T* c, T* o, I A, I B, I C) {
  #pragma omp parallel for collapse(2)
  for (I i = 0; i < A; ++i) for (I j = 0; j < B; ++j) {
    T* r = o + (i * B + j) * C;
    for (I k = 0; k < C; ++k)
      r[k] = std::sin(a[i * C + k] * b[j]) + std::sqrt(c[j * C + k]) + std::cos(a[i * C + k]) / std::log(std::cos(b[j]) + 2);
  }
}
template <class T> void seed_prepass(const T* a, const T* b, const T* c, T* o, I A, I B, I C,
                                     T* ca, T* lb, T* sc) {
  #pragma omp parallel for
  for (I n = 0; n < A * C; ++n) ca[n] = std::cos(a[n]);
  for (I j = 0; j < B; ++j) lb[j] = std::log(std::cos(b[j]) + 2);
  #pragma omp parallel for
  for (I n = 0; n < B * C; ++n) sc[n] = std::sqrt(c[n]);
  #pragma omp parallel for collapse(2)
  for (I i = 0; i < A; ++i) for (I j = 0; j < B; ++j) {
    T* r = o + (i * B + j) * C;
    for (I k = 0; k < C; ++k)
      r[k] = std::sin(a[i * C + k] * b[j]) + sc[j * C + k] + ca[i * C + k] / lb[j];
  }
}
template <class T> void seed_row(const T* a, const T* b, const T* c, T* o, I A, I B, I C) {
  #pragma omp parallel for collapse(2)
  for (I i = 0; i < A; ++i) for (I j = 0; j < B; ++j) {
    T* r = o + (i * B + j) * C;
    const T l = std::log(std::cos(b[j]) + 2), bj = b[j];
    for (I k = 0; k < C; ++k)
      r[k] = std::sin(a[i * C + k] * bj) + std::sqrt(c[j * C + k]) + std::cos(a[i * C + k]) / l;
  }
}
template <class T, int TA, int TB, int KC>
void seed_tile(const T* a, const T* b, const T* c, T* o, I A, I B, I C) {
  #pragma omp parallel for collapse(3)
  for (I i0 = 0; i0 < A; i0 += TA) for (I j0 = 0; j0 < B; j0 += TB) for (I k0 = 0; k0 < C; k0 += KC) {
    T ca[TA][KC], sc[TB][KC], lb[TB];
    const I ni = i0 + TA < A ? TA : A - i0, nj = j0 + TB < B ? TB : B - j0;
    const I nk = k0 + KC < C ? KC : C - k0;
    for (I i = 0; i < ni; ++i) for (I k = 0; k < nk; ++k) ca[i][k] = std::cos(a[(i0 + i) * C + k0 + k]);
    for (I j = 0; j < nj; ++j) {
      lb[j] = std::log(std::cos(b[j0 + j]) + 2);
      for (I k = 0; k < nk; ++k) sc[j][k] = std::sqrt(c[(j0 + j) * C + k0 + k]);
    }
    for (I i = 0; i < ni; ++i) for (I j = 0; j < nj; ++j) {
      T* r = o + ((i0 + i) * B + j0 + j) * C + k0;
      const T* ar = a + (i0 + i) * C + k0;
      const T bj = b[j0 + j], l = lb[j];
      for (I k = 0; k < nk; ++k) r[k] = std::sin(ar[k] * bj) + sc[j][k] + ca[i][k] / l;
    }
  }
}
// norm: x (N, Ch, L), per-channel mean, var, gamma, beta (Ch)
template <class T> void norm_unhoisted(const T* x, const T* m, const T* v, const T* g, const T* be,
                                       T eps, T* o, I N, I Ch, I L) {
  #pragma omp parallel for collapse(2)
  for (I n = 0; n < N; ++n) for (I ch = 0; ch < Ch; ++ch) {
    const T* xr = x + (n * Ch + ch) * L; T* r = o + (n * Ch + ch) * L;
    for (I k = 0; k < L; ++k) r[k] = (xr[k] - m[ch]) * rs(v[ch] + eps) * g[ch] + be[ch];
  }
}
template <class T> void norm_prepass(const T* x, const T* m, const T* v, const T* g, const T* be,
                                     T eps, T* o, I N, I Ch, I L, T* h) {
  for (I ch = 0; ch < Ch; ++ch) h[ch] = rs(v[ch] + eps);
  #pragma omp parallel for collapse(2)
  for (I n = 0; n < N; ++n) for (I ch = 0; ch < Ch; ++ch) {
    const T* xr = x + (n * Ch + ch) * L; T* r = o + (n * Ch + ch) * L;
    for (I k = 0; k < L; ++k) r[k] = (xr[k] - m[ch]) * h[ch] * g[ch] + be[ch];
  }
}
template <class T> void norm_row(const T* x, const T* m, const T* v, const T* g, const T* be,
                                 T eps, T* o, I N, I Ch, I L) {
  #pragma omp parallel for collapse(2)
  for (I n = 0; n < N; ++n) for (I ch = 0; ch < Ch; ++ch) {
    const T* xr = x + (n * Ch + ch) * L; T* r = o + (n * Ch + ch) * L;
    const T mc = m[ch], h = rs(v[ch] + eps), gc = g[ch], bc = be[ch];
    for (I k = 0; k < L; ++k) r[k] = (xr[k] - mc) * h * gc + bc;
  }
}
#define SEED(T, S) \
extern "C" void seed_unhoisted_##S(const T* a, const T* b, const T* c, T* o, I A, I B, I C, T* ca, T* lb, T* sc) { seed_unhoisted<T>(a, b, c, o, A, B, C); } \
extern "C" void seed_prepass_##S(const T* a, const T* b, const T* c, T* o, I A, I B, I C, T* ca, T* lb, T* sc) { seed_prepass<T>(a, b, c, o, A, B, C, ca, lb, sc); } \
extern "C" void seed_row_##S(const T* a, const T* b, const T* c, T* o, I A, I B, I C, T* ca, T* lb, T* sc) { seed_row<T>(a, b, c, o, A, B, C); } \
extern "C" void seed_tile_##S(const T* a, const T* b, const T* c, T* o, I A, I B, I C, T* ca, T* lb, T* sc) { seed_tile<T, 8, 8, 256>(a, b, c, o, A, B, C); } \
extern "C" void norm_unhoisted_##S(const T* x, const T* m, const T* v, const T* g, const T* be, T eps, T* o, I N, I Ch, I L, T* h) { norm_unhoisted<T>(x, m, v, g, be, eps, o, N, Ch, L); } \
extern "C" void norm_prepass_##S(const T* x, const T* m, const T* v, const T* g, const T* be, T eps, T* o, I N, I Ch, I L, T* h) { norm_prepass<T>(x, m, v, g, be, eps, o, N, Ch, L, h); } \
extern "C" void norm_row_##S(const T* x, const T* m, const T* v, const T* g, const T* be, T eps, T* o, I N, I Ch, I L, T* h) { norm_row<T>(x, m, v, g, be, eps, o, N, Ch, L); }
SEED(float, f32)
SEED(double, f64)
"""


def build() -> ctypes.CDLL:
    from stridewise.backends import cpu

    path = Path("/tmp") / f"hoist_ab_{hashlib.sha1(SRC.encode()).hexdigest()[:12]}.so"
    if not path.exists():
        src = path.with_suffix(".cpp")
        src.write_text(SRC)
        subprocess.run(["g++", *cpu.FLAGS, str(src), "-o", str(path)], check=True)
    return ctypes.CDLL(str(path))


def ptr(x):
    return ctypes.c_void_p(x.ctypes.data)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2", type=int, default=21, help="outputs: 2^log2 (seed and norm)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--dtypes", default="float64,float32")
    a = ap.parse_args(argv)
    lib = build()
    rng = np.random.default_rng(0)
    rows = []
    for dtype in a.dtypes.split(","):
        s = {"float32": "f32", "float64": "f64"}[dtype]
        ct = ctypes.c_float if dtype == "float32" else ctypes.c_double
        # the seed: (A, B, C) = (2^(n-17), 128, 1024), the CPU bench's shapes at n = 21
        A, B, C = 1 << (a.log2 - 17), 128, 1024
        x = {"a": rng.random((A, 1, C)), "b": rng.random((1, B, 1)), "c": rng.random((B, C))}
        x = {k: (v + 0.1).astype(dtype) for k, v in x.items()}
        tmp = [np.empty(A * C, dtype), np.empty(B, dtype), np.empty(B * C, dtype)]
        outs = {v: np.empty((A, B, C), dtype) for v in ("unhoisted", "prepass", "row", "tile")}
        seed = {v: (lambda v=v: getattr(lib, f"seed_{v}_{s}")(
            ptr(x["a"]), ptr(x["b"]), ptr(x["c"]), ptr(outs[v]), ctypes.c_longlong(A),
            ctypes.c_longlong(B), ctypes.c_longlong(C), *map(ptr, tmp))) for v in outs}
        eager = lambda: np.sin(x["a"] * x["b"]) + np.sqrt(x["c"]) + np.cos(x["a"]) / np.log(np.cos(x["b"]) + 2)  # noqa: E731
        # the norm: (N, Ch, L) = (2^(n-18), 64, 4096)
        N, Ch, L = 1 << (a.log2 - 18), 64, 4096
        y = {"x": rng.random((N, Ch, L))} | {k: rng.random((Ch, 1)) + 0.1 for k in ("m", "v", "g", "be")}
        y = {k: v.astype(dtype) for k, v in y.items()}
        h = np.empty(Ch, dtype)
        nouts = {v: np.empty((N, Ch, L), dtype) for v in ("unhoisted", "prepass", "row")}
        norm = {v: (lambda v=v: getattr(lib, f"norm_{v}_{s}")(
            *(ptr(y[k]) for k in ("x", "m", "v", "g", "be")), ct(1e-5), ptr(nouts[v]),
            ctypes.c_longlong(N), ctypes.c_longlong(Ch), ctypes.c_longlong(L), ptr(h)))
            for v in nouts}
        neager = lambda: (y["x"] - y["m"]) * (1 / np.sqrt(y["v"] + np.asarray(1e-5, dtype))) * y["g"] + y["be"]  # noqa: E731
        for label, fns, res, np_fn in (("seed", seed, outs, eager), ("norm", norm, nouts, neager)):
            for f in fns.values():
                f()
            for v in res:
                assert res[v].tobytes() == res["unhoisted"].tobytes(), (label, dtype, v)
            fns = dict(fns, numpy=np_fn)
            times = {k: [] for k in fns}
            names = list(fns)
            for r in range(a.rounds):
                for k in names[r % len(names):] + names[:r % len(names)]:
                    t = time.perf_counter()
                    fns[k]()
                    times[k].append(time.perf_counter() - t)
            med = {k: statistics.median(v) for k, v in times.items()}
            for k, t in med.items():
                rows.append((label, dtype, k, t, med["unhoisted"] / t, med["numpy"] / t))
    print(f"| expression | dtype | variant | median | vs unhoisted | vs NumPy eager |")
    print("|---|---|---|---|---|---|")
    for label, dtype, k, t, u, n in rows:
        print(f"| {label} | {dtype} | {k} | {t * 1e3:.2f} ms | {u:.2f}x | {n:.2f}x |")


if __name__ == "__main__":
    sys.exit(main())
