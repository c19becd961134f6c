"""GB/s of Auto() per case and dtype at several values of one CUDA tuning field (2^27 default).

    PYTHONPATH=src python tools/waves_ab.py --cases permuted,short_rows --dtypes float16 --waves 32,2,1
    PYTHONPATH=src python tools/waves_ab.py --cases contiguous --field items_per_thread --values 1,2,4 \
        --set waves=64 --torch

The field's per-mode overrides in the tuning are dropped while it is swept. --set fixes other
fields for every column; --torch adds torch eager's GB/s on the same operands (into a buffer of
its own) as a last column.
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools

import stridewise as sw
from stridewise import tuning
from stridewise.launch import pipeline as _ops
from stridewise.bench import matrix as bench


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="permuted,short_rows")
    ap.add_argument("--dtypes", default="float16,bfloat16")
    ap.add_argument("--field", default="waves", help="an ElementwiseTuning field (integer)")
    ap.add_argument("--values", "--waves", default="32,4,2,1", help="the field's values, a column each")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="another integer field fixed for every column (repeatable)")
    ap.add_argument("--torch", action="store_true", help="also torch eager, in the same process")
    ap.add_argument("--log2", type=int, default=27, help="output elements, as a power of two")
    args = ap.parse_args(argv)
    values = [int(v) for v in args.values.split(",")]
    fixed = {k: int(v) for k, v in (s.split("=", 1) for s in args.set)}
    print("case/dtype".ljust(24) + "".join(f"{v}".rjust(8) for v in values)
          + ("   torch" if args.torch else ""))
    for case, dtype in itertools.product(args.cases.split(","), args.dtypes.split(",")):
        a, b, out = bench._make_case(case, dtype, args.log2, "torch", "cuda")
        shipped = tuning.elementwise_tuning("cuda", None, dtype)
        swept = {args.field, *fixed}
        base = dataclasses.replace(shipped, **fixed, modes=tuple(
            m for m in shipped.modes if m[1] not in swept))
        line = []
        for v in values:
            tuning.register_tuning("cuda", None, dataclasses.replace(base, **{args.field: v}), dtype)
            _ops._MEMO.clear()
            _ops._CALLS.clear()
            t = bench.time_cuda(lambda: sw.remainder(a, b, out=out))
            line.append(bench.compulsory_bytes(a, b, out) / t / 1e9)
        tuning.register_tuning("cuda", None, shipped, dtype)
        if args.torch:
            import torch

            o2 = torch.empty_like(out)
            t = bench.time_cuda(lambda: torch.remainder(a, b, out=o2))
            line.append(bench.compulsory_bytes(a, b, out) / t / 1e9)
        print(f"{case}/{dtype}".ljust(24) + "".join(f"{v:8.0f}" for v in line), flush=True)


if __name__ == "__main__":
    main()
