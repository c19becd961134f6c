"""How much of a layouts cell's gap is the op's arithmetic and how much its loads: stridewise's
`add` (a few instructions per element) beside its `remainder` on the same operands, with
torch's add as the anchor, GB/s of compulsory bytes.

    python tools/layouts_ops.py OUT.json [--cases ...] [--dtypes float16,bfloat16,float32]
"""
from __future__ import annotations

import argparse
import json
import zlib

from stridewise.bench import matrix as bench
from stridewise.bench import layouts as bl


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--cases", default="misaligned,odd_rows,middle_bcast,bias_channels_last,outer_3d,both_transposed")
    ap.add_argument("--dtypes", default="float16,bfloat16,float32")
    ap.add_argument("--log2", type=int, default=bench.GPU_LOG2)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args(argv)
    import torch
    import stridewise as sw
    dev = args.device
    doc = {"ceilings": bench.ceilings_cuda() if dev == "cuda" else bench.ceilings_cpu(20), "cells": []}
    R, C = bench._shape_rc(args.log2)
    for dtype in args.dtypes.split(","):
        for case in args.cases.split(","):
            _, build, where = bl.LAYOUTS[case]
            if where != "any":
                continue
            a, b = build(bl._new("torch", dtype, dev, zlib.crc32(f"{case}/{dtype}".encode())), R, C)
            ok = bench.same_bits(sw.add(a, b), torch.add(a, b))
            nbytes = bench.compulsory_bytes(a, b, torch.add(a, b))
            t = bench.time_interleaved({"sw.add": lambda a=a, b=b: sw.add(a, b),
                                        "torch.add": lambda a=a, b=b: torch.add(a, b),
                                        "sw.remainder": lambda a=a, b=b: sw.remainder(a, b)}, dev, nbytes)
            row = {"case": case, "dtype": dtype, "add_verified": bool(ok),
                   **{k: v.get("gbps") for k, v in t.items()}}
            doc["cells"].append(row)
            print(f"{case:20s} {dtype:9s} add ok {ok}  " + "  ".join(
                f"{k} {v:6.0f} ({100 * v / doc['ceilings']['copy']:.0f}%)" for k, v in row.items()
                if k not in ("case", "dtype", "add_verified") and v), flush=True)
            del a, b
            if dev == "cuda":
                torch.cuda.empty_cache()
            with open(args.json, "w") as f:
                json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
