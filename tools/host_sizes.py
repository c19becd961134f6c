"""Host calls across sizes: stridewise's CPU kernels against torch CPU and NumPy, 2^12 to 2^22
elements, where the thread rule (cpu/loops.h worth_threads) and the split (split_static)
decide the time.

    PYTHONPATH=src python tools/host_sizes.py --lib sw [--ops add,remainder] [--dtypes float32,uint8]
    python tools/host_sizes.py --compare A.json,B.json,...    a table of saved runs

One library a process (each OpenMP runtime's spinning threads would slow the other's), every
call into a preallocated out= over the same arrays, as a loop body calls it; the time is the
median of 7 loops of about 2^24 elements each, after warm-up. Results go to --json; --compare
prints them side by side, in us per call, with stridewise's ratio to each anchor.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

OPS = ("add", "maximum", "equal", "floor", "remainder", "exp", "sin", "sigmoid")
UNARY = ("floor", "exp", "sin", "sigmoid")
FLOAT_ONLY = ("exp", "sin", "sigmoid")


def operands(op: str, dtype: str, n: int):
    rng = np.random.default_rng(0)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        a = rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(dtype)
        b = rng.integers(1, min(info.max, 100), n).astype(dtype)
    else:
        a = (rng.standard_normal(n) * 10).astype(dtype)
        b = (rng.standard_normal(n) + 4).astype(dtype)
    return (a,) if op in UNARY else (a, b)


def call(lib: str, op: str, args, out):
    if lib == "numpy":
        f = getattr(np, op)
        return lambda: f(*args, out=out)
    if lib == "torch":
        import torch
        torch.set_num_threads(2)
        targs, tout = [torch.from_numpy(a) for a in args], torch.from_numpy(out)
        f = getattr(torch, {"equal": "eq"}.get(op, op))
        return lambda: f(*targs, out=tout)
    import stridewise as sw
    f = getattr(sw, op)
    return lambda: f(*args, out=out)


def run(lib: str, ops, dtypes, sizes) -> dict:
    results = {}
    for op in ops:
        for dtype in dtypes:
            if op in FLOAT_ONLY and not dtype.startswith("float"):
                continue
            for lg in sizes:
                n = 1 << lg
                args = operands(op, dtype, n)
                out = np.empty(n, bool if op == "equal" else args[0].dtype)
                try:
                    fn = call(lib, op, args, out)
                    fn()
                except (AttributeError, TypeError, RuntimeError) as e:   # not in this library
                    print(f"{lib} {op} {dtype}: {type(e).__name__}", flush=True)
                    break
                for _ in range(max(3, 2 ** 18 // n)):
                    fn()
                reps, times = max(1, 2 ** 24 // n // 8), []
                for _ in range(7):
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        fn()
                    times.append((time.perf_counter() - t0) / reps * 1e6)
                results[f"{op} {dtype} 2^{lg}"] = statistics.median(times)
                print(f"{lib:6s} {op:10s} {dtype:8s} 2^{lg:<3d} {results[f'{op} {dtype} 2^{lg}']:10.2f} us",
                      flush=True)
    return results


def compare(paths) -> None:
    runs = {p: json.load(open(p)) for p in paths}
    names = list(runs)
    print("| case | " + " | ".join(runs[p]["label"] for p in names) + " | "
          + " | ".join(f"{runs[names[0]]['label']} vs {runs[p]['label']}" for p in names[1:]) + " |")
    print("|---" * (2 * len(names)) + "|")
    for case in runs[names[0]]["results"]:
        ts = [runs[p]["results"].get(case) for p in names]
        cells = [f"{t:.2f}" if t else "-" for t in ts]
        ratios = [f"{t / ts[0]:.2f}x" if t and ts[0] else "-" for t in ts[1:]]
        print(f"| {case} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", choices=("sw", "torch", "numpy"))
    ap.add_argument("--label", help="the run's name in --compare (default: --lib)")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--dtypes", default="float32,uint8,int64")
    ap.add_argument("--sizes", default="12,14,15,16,17,18,20,22")
    ap.add_argument("--json")
    ap.add_argument("--compare")
    args = ap.parse_args(argv)
    if args.compare:
        return compare(args.compare.split(","))
    results = run(args.lib, args.ops.split(","), args.dtypes.split(","),
                  [int(s) for s in args.sizes.split(",")])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"label": args.label or args.lib, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
