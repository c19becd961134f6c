"""A/B of the rows kernel's packs in flight on a GPU: each round times every cell under each
`--rows-loads` value in turn (N packs in flight compiled into the rows kernels of the
`--loads-dtypes`, over the tuning's table; 0: the tuning as it stands). A source tree runs
with its own src on PYTHONPATH, so trees alternate by process.

    python tools/rows_loads_ab.py OUT.jsonl --variant NAME [--rows-loads 0,2] [--rounds 2]
    python tools/rows_loads_ab.py --summary OUT.jsonl

Cells (CELLS, or `--cells case:dtype,...`): the bench's row, outer, contiguous and permuted
cases and bench.layouts' cells (2^27 outputs), each verified bit for bit against torch's own
op, strides included, under every variant before it is timed (CUDA events, median of repeats
of back-to-back allocating calls). GB/s counts each operand's bytes once.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

import stridewise as sw
from stridewise import tuning
from stridewise.bench import layouts as bench_layouts
from stridewise.bench import matrix as bench
from stridewise.launch import pipeline as _ops
from stridewise.modes import _mode

CELLS = [("row", "bool"), ("row", "float16"), ("row", "bfloat16"), ("row", "int8"),
         ("row", "uint8"), ("row", "float32"), ("row_add", "float16"),
         ("misaligned", "float16"), ("misaligned", "bfloat16"), ("odd_rows", "float16"),
         ("odd_rows", "bfloat16"), ("middle_bcast", "float16"), ("middle_bcast", "bfloat16"),
         ("bias_channels_last", "float16"), ("outer_3d", "bfloat16"), ("outer_3d", "float16"),
         ("bias_nchw", "float16"), ("bias_nchw", "bfloat16"), ("batched_columns", "float16"),
         ("batched_columns", "bfloat16"), ("outer", "float16"), ("outer", "int8"),
         ("outer", "bool"), ("contiguous", "bool"), ("contiguous", "float16"),
         ("contiguous", "int8"), ("permuted", "float32")]


def _args(case, dtype, R, C):
    new = bench_layouts._new("torch", dtype, "cuda", 1234)
    if case in ("row", "row_add", "contiguous", "permuted", "outer"):
        return bench.CASES["row" if case == "row_add" else case][1](new, R, C)
    return bench_layouts.LAYOUTS[case][1](new, R, C)


def _op(case, dtype):
    if case == "row_add":
        return "add"
    return bench.op_name(dtype)


def _time(fn, reps, calls, times=None) -> float:
    """Median microseconds per call over `reps` events-timed runs of `calls` calls."""
    times = [] if times is None else times
    for _ in range(3):
        fn()
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(calls):
            fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / calls * 1e3)
    return statistics.median(times)


def summary(path: str) -> None:
    """Per cell, each variant's median GB/s over its rounds, % of the copy ceiling measured in
    the same file, and the change against the first variant."""
    recs = [json.loads(line) for line in open(path)]
    copy = [r["gbps"] for r in recs if r["variant"] == "copy"]
    ceiling = statistics.median(copy) if copy else float("nan")
    print(f"copy ceiling {ceiling:.0f} GB/s")
    cells: dict = {}
    for r in recs:
        if r["variant"] != "copy":
            cells.setdefault((r["case"], r["dtype"]), {}).setdefault(r["variant"], []).append(r)
    for (case, dtype), by in cells.items():
        first = None
        parts = []
        for v, rs in by.items():
            g = statistics.median(r["gbps"] for r in rs)
            first = first or g
            ok = all(r["verified"] for r in rs)
            parts.append(f"{v} {g:6.0f} {100 * g / ceiling:3.0f}% {g / first - 1:+5.1%}{'' if ok else ' UNVERIFIED'}")
        t = [r for rs in by.values() for r in rs if "torch_us" in r]
        eager = f" | torch eager {t[0]['us'] and t[0]['torch_us'] / t[0]['us']:.2f}x" if t else ""
        print(f"{case:18s} {dtype:9s} {by[next(iter(by))][0]['mode']:10s} " + " | ".join(parts) + eager)


def main(argv=None):
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--summary"]:
        return summary(argv[1])
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--variant", required=True)
    ap.add_argument("--rows-loads", default="0")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--loads-dtypes", default="bool,int8,uint8,float16,bfloat16")
    ap.add_argument("--log2", type=int, default=27)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--cells", default="")
    ap.add_argument("--torch", action="store_true", help="time torch eager on each cell too")
    ap.add_argument("--copy", action="store_true", help="measure the copy ceiling first")
    a = ap.parse_args(argv)
    R, C = bench._shape_rc(a.log2)
    if a.copy:
        src = torch.empty(2 ** 28, dtype=torch.float32, device="cuda").normal_()
        dst = torch.empty_like(src)
        us = _time(lambda: dst.copy_(src), a.reps, a.calls)
        with open(a.out, "a") as f:
            f.write(json.dumps(dict(variant="copy", gbps=round(2 * src.numel() * 4 / us / 1e3, 1))) + "\n")
        print(f"copy ceiling {2 * src.numel() * 4 / us / 1e3:.0f} GB/s", flush=True)
        del src, dst
    cells = CELLS if not a.cells else [tuple(c.split(":")) for c in a.cells.split(",")]
    # an older tree's table may have another name; it is only touched where --rows-loads asks
    table = getattr(tuning._CUDA_KERNELS, "loads", {})
    own = dict(table)
    with open(a.out, "a") as f:
        for case, dtype in cells:
            x, y = _args(case, dtype, R, C)
            name = _op(case, dtype)
            ours, theirs = getattr(sw, name), getattr(torch, name)
            ref = theirs(x, y)
            bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[ref.element_size()]
            mode = sw.explain(ours, x, y).mode
            moved = sum(t.numel() * t.element_size() for t in (x, y, ref) if t.dim())
            for r in range(a.rounds):
                for n in map(int, a.rows_loads.split(",")):
                    table.clear()
                    table.update(own)
                    if n:
                        table.update({("rows", dt): n for dt in a.loads_dtypes.split(",")})
                    _mode._forget_prepared()    # the prepared calls hold the last table's kernels
                    got = ours(x, y)
                    ok = (got.shape == ref.shape and got.dtype == ref.dtype
                          and got.stride() == ref.stride()
                          and bool((got.contiguous().view(bits) == ref.contiguous().view(bits)).all()))
                    del got
                    times = []
                    us = _time(lambda: ours(x, y), a.reps, a.calls, times)
                    rec = dict(variant=f"{a.variant}L{n or 'T'}", round=r, case=case, dtype=dtype,
                               op=name, mode=str(mode), kernels=len(_ops._KERNELS), verified=ok,
                               us=round(us, 2), gbps=round(moved / us / 1e3, 1),
                               spread=round((max(times) - min(times)) / us, 3), t=time.time())
                    if a.torch and r == 0 and n == int(a.rows_loads.split(",")[0]):
                        rec["torch_us"] = round(_time(lambda: theirs(x, y), a.reps, a.calls), 2)
                    f.write(json.dumps(rec) + "\n")
                    f.flush()
                    print(f"{rec['variant']:8s} r{r} {case:18s} {dtype:9s} {rec['mode']:10s} "
                          f"ok={ok} {us:8.1f} us {rec['gbps']:7.1f} GB/s k={rec['kernels']}"
                          + (f" torch {rec['torch_us']:.1f} us" if "torch_us" in rec else ""), flush=True)
            del x, y, ref
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
