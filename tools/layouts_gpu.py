"""The layouts matrix on a GPU, the JSON written after every cell (so a run cut short still
returns what it measured).

    python tools/layouts_gpu.py OUT.json [--dtypes float16,bfloat16,...] [--cases ...]

An older source tree runs the same cells with its own src on PYTHONPATH (and its own
STRIDEWISE_CACHE_DIR), in the same call, for a before/after on one machine.

Same cells, verification and timing as `stridewise bench --layouts --device cuda`
(bench_layouts.run_cell); the dtypes run in the order given, so the ones that matter most
come back first.
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys

from stridewise.bench import matrix as bench
from stridewise.bench import layouts as bench_layouts


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--dtypes", default="float16,bfloat16,int32,float32,float64,int64")
    ap.add_argument("--cases", default=",".join(bench_layouts.LAYOUTS))
    ap.add_argument("--log2", type=int, default=bench.GPU_LOG2)
    args = ap.parse_args(argv)
    import torch
    doc = {"meta": {**bench._describe_device("cuda"), "matrix": "layouts",
                    "date": datetime.datetime.now().isoformat(timespec="seconds"),
                    "command": "python " + " ".join(sys.argv), "commit": bench._commit(),
                    "log2_elements": args.log2, "loadavg_start": bench._loadavg()},
           "ceilings": bench.ceilings_cuda(), "cells": []}
    print("ceilings", {k: round(v) for k, v in doc["ceilings"].items()}, flush=True)
    done = set()
    for dtype in args.dtypes.split(","):
        for case in args.cases.split(","):
            if case in bench_layouts.FIXED_DTYPE:
                if case in done:
                    continue
                done.add(case)
            cell = bench_layouts.run_cell(case, dtype, "cuda", args.log2, doc["ceilings"])
            torch.cuda.empty_cache()
            if cell is None:
                continue
            doc["cells"].append(cell)
            r = cell["impls"].get("stridewise", {})
            sp = cell.get("speedup", {})
            print(f"{case:20s} {cell['dtype']:16s} verified {cell['verified']} "
                  f"{r.get('gbps', 0):7.0f} GB/s {r.get('pct_ceiling', 0):5.1f}% "
                  + " ".join(f"{k} {v:.2f}x" for k, v in sp.items())
                  + ("" if "gbps" in r else f" {r.get('error', '')[:120]}"), flush=True)
            doc["meta"]["loadavg_end"] = bench._loadavg()
            with open(args.json, "w") as f:
                json.dump(doc, f, indent=1, default=str)


if __name__ == "__main__":
    main()
