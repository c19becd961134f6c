"""CPU kernels of several source trees, timed in one process: an A/B of a cpu/ header change.

    PYTHONPATH=src python tools/cpu_ab.py --trees .snapHead,. --cases int64:512:512,float16:2048:2048
    PYTHONPATH=src python tools/cpu_ab.py --trees old,. --cases bfloat16:2048:2048 --values narrow,near_max

Each case is a permuted view, `remainder(a.T, b)` with a (C, R) and b (R, C) of the dtype; the
kernel of each tree is built from that tree's header library (src/stridewise/include), checked
bit for bit against NumPy, then every tree's kernel is called in rounds, in a fresh random
order each round (the 2-core machine's noise moves whole minutes of runs, and a 2-thread
region after another one waits on its spinning threads). Prints min and median us per call.
With --values, each case is instead contiguous operands of those value distributions
(stridewise/bench/values.py), checked against NumPy's remainder in float32, rounded once.
"""
from __future__ import annotations

import argparse
import pathlib
import random
import statistics
import time

import numpy as np

from stridewise import cache as _cache
from stridewise.launch import pipeline as _ops
from stridewise.ops import builtins as _builtins
from stridewise.backends import cpu


def case(dtype: str, rows: int, cols: int, rng):
    """(a, b, out): a permuted view a (rows, cols), unit stride along rows, a dense b."""
    if "int" in dtype:
        base = rng.integers(-1000, 1000, (cols, rows))
        b = rng.integers(1, 1000, (rows, cols)) * rng.choice([-1, 1], (rows, cols))
    else:
        base, b = rng.standard_normal((cols, rows)) * 100, rng.standard_normal((rows, cols)) + 3
    return base.astype(dtype).T, b.astype(dtype), np.empty((rows, cols), dtype)


def values_case(dtype: str, n: int, values: str, seed: int):
    """(a, b, out): contiguous operands of n elements drawn from distribution `values`."""
    from stridewise.bench import values as _values
    d = _values.drawer("numpy", seed)
    a, b = (_values.draw(values, role, dtype, d, (n,)) for role in ("a", "b"))
    return a, b, np.empty(n, a.dtype)


def want_of(a, b):
    """NumPy's remainder, computed in float32 for a 16-bit float and rounded once."""
    with np.errstate(all="ignore"):
        if a.dtype.itemsize == 2 and a.dtype.kind != "i":
            return np.remainder(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
        return np.remainder(a, b)


def same(x, y):
    """Bit equality, any NaN matching any NaN."""
    nan = False if x.dtype.kind in "iu" else np.isnan(x.astype(np.float64)) & np.isnan(y.astype(np.float64))
    bits = lambda z: z.view(np.uint8).reshape(z.size, -1)   # noqa: E731
    return bool(np.all((bits(x) == bits(y)).all(1) | nan))


def kernel(tree: pathlib.Path, prepared):
    """The tree's build of the prepared call's source (its own cache key: header digest)."""
    _cache.INCLUDE_DIR = tree / "src" / "stridewise" / "include"
    _cache._digest[:] = [None, None]   # the digest follows INCLUDE_DIR
    entry = prepared.spec.entry
    return cpu.load(cpu.compile(prepared.source, entry, None), entry, None)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", required=True, help="source trees, comma-separated")
    ap.add_argument("--cases", default="int64:512:512,float32:2048:2048",
                    help="dtype:rows:cols of the output, comma-separated")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--values", help="value distributions, comma-separated: contiguous cases of rows * cols")
    args = ap.parse_args(argv)
    trees = [pathlib.Path(t).resolve() for t in args.trees.split(",")]
    shipped = _cache.INCLUDE_DIR
    rng = np.random.default_rng(0)
    try:
        jobs = [(spec, v) for spec in args.cases.split(",") for v in (args.values or "").split(",")]
        for spec, v in jobs:
            dtype, rows, cols = spec.split(":")
            if v:
                a, b, out = values_case(dtype, int(rows) * int(cols), v, 0)
            else:
                a, b, out = case(dtype, int(rows), int(cols), rng)
            prepared = _ops._call(_builtins.OPS["remainder"], (a, b), out, None, None, dry=True)
            slots = prepared.record.pack(*(x.__array_interface__["data"][0] for x in (out, a, b)),
                                         *prepared.static)
            want = want_of(a, b)
            fns = {}
            for tree in trees:
                fn = kernel(tree, prepared)
                out[...] = 0
                fn(slots)
                if not same(out, want):
                    raise SystemExit(f"{tree}: {spec} {v} differs from NumPy")
                fns[tree.name or str(tree)] = fn
            calls = max(1, int(1.6e6 / out.size))
            times = {name: [] for name in fns}
            order = list(fns)
            for _ in range(args.rounds):
                random.shuffle(order)
                for name in order:
                    t = time.perf_counter()
                    for _ in range(calls):
                        fns[name](slots)
                    times[name].append((time.perf_counter() - t) / calls * 1e6)
            print(f"{dtype} {rows}x{cols} {v} ({prepared.spec.mode})", flush=True)
            for name, ts in times.items():
                print(f"  {name:24s} min {min(ts):10.1f}  median {statistics.median(ts):10.1f} us")
    finally:
        _cache.INCLUDE_DIR = shipped
        _cache._digest[:] = [None, None]   # the digest follows INCLUDE_DIR


if __name__ == "__main__":
    main()
