"""The measurement behind Auto's hoisting rule (tuning.py hoist_work_per_byte): each fused-bench
case as a user kernel, hoisted (hoist=True) against unhoisted (hoist=False), with the rule's
inputs (_hoist.rule_inputs: operations saved and bytes moved per output element).

Each variant is checked bit for bit against the other first; times are medians of interleaved
rounds (each round runs both, in alternating order).

    python tools/hoist_rule.py [cpu|cuda] [--rounds 11] [--cases norm,distance]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import stridewise as sw
from stridewise.codegen import hoist as _hoist
from stridewise.bench.fused import CASES, _host, _names, _on_device


def _sync(device):
    if device == "cuda":
        import torch
        torch.cuda.synchronize()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("device", nargs="?", default="cpu")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--cases", default="")
    ap.add_argument("--dtypes", default="float32,float64")
    a = ap.parse_args()
    want = [c for c in a.cases.split(",") if c]
    for case in CASES:
        if want and not any(case.name.startswith(w) for w in want):
            continue
        for dtype in a.dtypes.split(","):
            shapes = case.shapes[a.device]
            arrs = (_on_device(shapes, dtype, "cuda") if a.device == "cuda"
                    else _host(case, shapes, dtype))
            args = [arrs[n] for n in _names(case) if n in arrs] + list(case.scalars.values())
            k = sw.ElementwiseKernel(case.params, "T out", case.operation, preamble=case.preamble,
                                     name=case.name.split()[0])
            on, off = sw.Auto(hoist=True), sw.Auto(hoist=False)
            x, y = k(*args, algorithm=on), k(*args, algorithm=off)
            same = np.asarray(x.cpu() if hasattr(x, "cpu") else x).tobytes() == \
                np.asarray(y.cpu() if hasattr(y, "cpu") else y).tobytes()
            ex = sw.explain(k, *args)
            reps = 20 if a.device == "cuda" else 3
            times = {"hoisted": [], "unhoisted": []}
            for r in range(a.rounds):
                order = [("hoisted", on), ("unhoisted", off)][::1 if r % 2 else -1]
                for name, alg in order:
                    _sync(a.device)
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        k(*args, x if name == "hoisted" else y, algorithm=alg)
                    _sync(a.device)
                    times[name].append((time.perf_counter() - t0) / reps)
            h, u = (statistics.median(times[n]) * 1e3 for n in ("hoisted", "unhoisted"))
            print(f"{case.name:20s} {dtype}  hoisted {h:8.3f} ms  unhoisted {u:8.3f} ms  "
                  f"hoisted/unhoisted speed {u / h:5.2f}x  bitwise {same}  "
                  f"Auto: {ex.hoist_note}", flush=True)


if __name__ == "__main__":
    main()
