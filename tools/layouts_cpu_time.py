"""The CPU layouts matrix by CPU time per call, one thread each: stridewise, NumPy, torch.

    python tools/layouts_cpu_time.py OUT.json [--log2 20] [--rounds 15] [--dtypes ...] [--cases ...]

On a shared machine whose load exceeds its cores, wall-clock medians measure the scheduler:
a call waits whole time slices for a core. The CPU time a call's thread spends is what the
implementation costs, so here every implementation runs on one thread (OMP_NUM_THREADS=1,
torch.set_num_threads(1)), all its work in the calling thread, and each call is timed by
time.thread_time in interleaved rounds (median; wall-clock medians beside it). The cells,
data and bit-for-bit checks (values and strides against NumPy's own op) are
`stridewise bench --layouts --device cpu`'s (bench_layouts).
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"      # before libgomp or torch start their pools

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import zlib  # noqa: E402

import numpy as np  # noqa: E402

from stridewise.bench import matrix as bench  # noqa: E402
from stridewise.bench import layouts as bl  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--log2", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--dtypes", default=",".join(bench.DTYPES))
    ap.add_argument("--cases", default=",".join(bl.LAYOUTS))
    args = ap.parse_args(argv)
    import torch
    import stridewise as sw
    torch.set_num_threads(1)
    R, C = bench._shape_rc(args.log2)
    doc = {"meta": {**bench._describe_device("cpu"), "matrix": "layouts, CPU time, one thread",
                    "date": datetime.datetime.now().isoformat(timespec="seconds"),
                    "commit": bench._commit(), "log2_elements": args.log2,
                    "loadavg_start": bench._loadavg()}, "cells": []}
    done = set()
    for dtype in args.dtypes.split(","):
        for case in args.cases.split(","):
            if case in bl.FIXED_DTYPE:
                if case in done:
                    continue
                done.add(case)
            _, build, _ = bl.LAYOUTS[case]
            a, b = build(bl._new("numpy", dtype, "cpu", zlib.crc32(f"{case}/{dtype}".encode())), R, C)
            ref = np.remainder(a, b)
            got = sw.remainder(a, b)
            ok = bool(bench.same_bits(got, ref)) and got.strides == ref.strides
            fns = {"stridewise": lambda a=a, b=b: sw.remainder(a, b),
                   "numpy": lambda a=a, b=b: np.remainder(a, b)}
            try:
                ta, tb = bench._to_torch(a), bench._to_torch(b)
                fns["torch"] = lambda ta=ta, tb=tb: torch.remainder(ta, tb)
            except Exception:  # noqa: BLE001 - torch has no negative steps
                pass
            cpu_t = {k: [] for k in fns}
            wall_t = {k: [] for k in fns}
            for f in fns.values():
                f()
            names = list(fns)
            for r in range(args.rounds):
                for k in names[r % len(names):] + names[:r % len(names)]:
                    w, c = time.perf_counter(), time.thread_time()
                    fns[k]()
                    cpu_t[k].append(time.thread_time() - c)
                    wall_t[k].append(time.perf_counter() - w)
            cell = {"case": case, "dtype": bl.FIXED_DTYPE.get(case, dtype), "verified": ok,
                    "cpu_s": {k: statistics.median(v) for k, v in cpu_t.items()},
                    "wall_s": {k: statistics.median(v) for k, v in wall_t.items()}}
            doc["cells"].append(cell)
            s = cell["cpu_s"]["stridewise"]
            print(f"{case:20s} {cell['dtype']:16s} ok={ok} cpu sw {s * 1e3:7.3f} ms  "
                  + "  ".join(f"{k} {v * 1e3:7.3f} ms ({v / s:.2f}x)" for k, v in cell["cpu_s"].items()
                              if k != "stridewise"), flush=True)
            doc["meta"]["loadavg_end"] = bench._loadavg()
            with open(args.json, "w") as f:
                json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
