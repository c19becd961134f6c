"""Run bench cases once each between cudaProfilerStart/Stop, for Nsight Compute.

    ncu --clock-control none --profile-from-start off --section SpeedOfLight ... \
        python tools/ncu_cases.py --cases permuted,row --dtypes bfloat16 --impls sw,compile
        python tools/ncu_cases.py --cases contiguous --dtypes float64 --values subnormal_divisors --impls sw

A case may name a cell of the layouts matrix (stridewise.bench.layouts, e.g.
bias_channels_last) as well as one of the first matrix. Each (case, dtype, impl) is warmed up first (compiles, caches), then launched once inside the
profiled range, so the report holds exactly one kernel per line of the printed index.
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools

import torch

import stridewise as sw
from stridewise.bench import layouts as bench_layouts
from stridewise.bench import matrix as bench


def _operands(case: str, dtype: str, log2: int, values: str = "narrow"):
    """(a, b, out) of a first-matrix case with the named value distribution
    (stridewise.bench.values), or of a layouts cell (torch tensors, narrow values, out allocated
    in the layout stridewise gives)."""
    if case not in bench_layouts.LAYOUTS:
        return bench._make_case(case, dtype, log2, "torch", "cuda", values)
    if values != "narrow":
        raise SystemExit(f"{case} is a layouts cell: its values are narrow (--values narrow)")
    _, build, _ = bench_layouts.LAYOUTS[case]
    R, C = bench._shape_rc(log2)
    a, b = build(bench_layouts._new("torch", dtype, "cuda", 0), R, C)
    return a, b, sw.remainder(a, b)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="permuted")
    ap.add_argument("--dtypes", default="bfloat16")
    ap.add_argument("--impls", default="sw,compile",
                    help="sw, kept / plain (sw with keep_loads on / off), eager (torch), compile")
    ap.add_argument("--log2", type=int, default=27)
    ap.add_argument("--values", default="narrow", help="a value distribution of the first matrix's "
                    "cases (stridewise.bench.values: narrow, subnormal_divisors, ...)")
    args = ap.parse_args(argv)
    runs = []
    for case, dtype, impl in itertools.product(args.cases.split(","), args.dtypes.split(","),
                                               args.impls.split(",")):
        a, b, out = _operands(case, dtype, args.log2, args.values)
        if impl in ("sw", "kept", "plain"):
            alg = sw.explain(sw.remainder, a, b, out=out).algorithm
            if impl != "sw":
                alg = dataclasses.replace(alg, keep_loads=impl == "kept")
            fn = lambda a=a, b=b, out=out, alg=alg: sw.remainder(a, b, out=out, algorithm=alg)
        elif impl == "eager":   # into stridewise's output, as the bench's anchors
            fn = lambda a=a, b=b, out=out: torch.remainder(a, b, out=out)
        else:
            f = torch.compile(lambda x, y: torch.remainder(x, y), dynamic=False)
            fn = lambda a=a, b=b, f=f: f(a, b)
        for _ in range(3):
            fn()
        runs.append((f"{case}/{dtype}/{args.values}/{impl}", fn))
    torch.cuda.synchronize()
    for i, (name, fn) in enumerate(runs):
        torch.cuda.profiler.start()
        fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        print(f"kernel {i}: {name}", flush=True)


if __name__ == "__main__":
    main()
