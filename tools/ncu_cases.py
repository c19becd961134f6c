"""Run bench cases once each between cudaProfilerStart/Stop, for Nsight Compute.

    ncu --clock-control none --profile-from-start off --section SpeedOfLight ... \
        python tools/ncu_cases.py --cases permuted,row --dtypes bfloat16 --impls sw,compile

Each (case, dtype, impl) is warmed up first (compiles, caches), then launched once inside the
profiled range, so the report holds exactly one kernel per line of the printed index.
"""
from __future__ import annotations

import argparse
import itertools

import torch

import stridewise as sw
from stridewise import bench


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="permuted")
    ap.add_argument("--dtypes", default="bfloat16")
    ap.add_argument("--impls", default="sw,compile", help="sw, eager (torch), compile")
    ap.add_argument("--log2", type=int, default=27)
    args = ap.parse_args(argv)
    runs = []
    for case, dtype, impl in itertools.product(args.cases.split(","), args.dtypes.split(","),
                                               args.impls.split(",")):
        a, b, out = bench._make_case(case, dtype, args.log2, "torch", "cuda")
        if impl == "sw":
            fn = lambda a=a, b=b, out=out: sw.remainder(a, b, out=out)
        elif impl == "eager":
            o2 = torch.empty_like(out)
            fn = lambda a=a, b=b, o2=o2: torch.remainder(a, b, out=o2)
        else:
            f = torch.compile(lambda x, y: torch.remainder(x, y), dynamic=False)
            fn = lambda a=a, b=b, f=f: f(a, b)
        for _ in range(3):
            fn()
        runs.append((f"{case}/{dtype}/{impl}", fn))
    torch.cuda.synchronize()
    for i, (name, fn) in enumerate(runs):
        torch.cuda.profiler.start()
        fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        print(f"kernel {i}: {name}", flush=True)


if __name__ == "__main__":
    main()
