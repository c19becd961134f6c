"""GB/s of Auto() per case and dtype at several `waves` values of the CUDA tuning (2^27).

    PYTHONPATH=src python tools/waves_ab.py --cases permuted,short_rows --dtypes float16 --waves 32,2,1
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools

import stridewise as sw
from stridewise import _ops, bench, tuning


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="permuted,short_rows")
    ap.add_argument("--dtypes", default="float16,bfloat16")
    ap.add_argument("--waves", default="32,4,2,1")
    args = ap.parse_args(argv)
    waves = [int(w) for w in args.waves.split(",")]
    print("case/dtype".ljust(24) + "".join(f"w{w}".rjust(8) for w in waves))
    for case, dtype in itertools.product(args.cases.split(","), args.dtypes.split(",")):
        a, b, out = bench._make_case(case, dtype, 27, "torch", "cuda")
        shipped = tuning.elementwise_tuning("cuda", None, dtype)
        line = []
        for w in waves:
            tuning.register_tuning("cuda", None, dataclasses.replace(shipped, waves=w), dtype)
            _ops._MEMO.clear()
            _ops._CALLS.clear()
            t = bench.time_cuda(lambda: sw.remainder(a, b, out=out))
            line.append(bench.compulsory_bytes(a, b, out) / t / 1e9)
        tuning.register_tuning("cuda", None, shipped, dtype)
        print(f"{case}/{dtype}".ljust(24) + "".join(f"{v:8.0f}" for v in line), flush=True)


if __name__ == "__main__":
    main()
