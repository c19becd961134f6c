"""A/B of the rows kernel's packs in flight on a GPU: one process per variant, rounds
interleaved by the caller (`--rows-loads N` compiles N packs in flight into every rows kernel
of the listed dtypes, over the tuning's table; 0: the tuning as it stands).

    python tools/rows_loads_ab.py OUT.jsonl --variant NAME [--rows-loads 2] [--dtypes ...]

Cells: the bench's `row` case (2^27 outputs) and the rows-mode layouts of bench.layouts,
each verified bit for bit against torch's own op before it is timed (CUDA events, median
of repeats of back-to-back allocating calls). GB/s counts each operand's bytes once.
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

CELLS = [("row", "bool"), ("row", "float16"), ("row", "bfloat16"), ("row", "int8"),
         ("row", "uint8"), ("row", "float32"), ("row_add", "float16"),
         ("misaligned", "float16"), ("misaligned", "bfloat16"), ("odd_rows", "float16"),
         ("odd_rows", "bfloat16"), ("middle_bcast", "float16"), ("middle_bcast", "bfloat16"),
         ("bias_channels_last", "float16"), ("outer_3d", "bfloat16"), ("outer_3d", "float16"),
         ("contiguous", "bool"), ("contiguous", "float16"), ("permuted", "float32")]


def _args(case, dtype, R, C):
    new = bench_layouts._new("torch", dtype, "cuda", 1234)
    if case in ("row", "row_add", "contiguous", "permuted"):
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


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--variant", required=True)
    ap.add_argument("--rows-loads", type=int, default=0)
    ap.add_argument("--loads-dtypes", default="bool,int8,uint8,float16,bfloat16")
    ap.add_argument("--log2", type=int, default=27)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--cells", default="")
    ap.add_argument("--torch", action="store_true", help="time torch eager on each cell too")
    ap.add_argument("--copy", action="store_true", help="measure the copy ceiling first")
    a = ap.parse_args(argv)
    if a.rows_loads:
        loads = tuning._CUDA_KERNELS.loads
        for dt in a.loads_dtypes.split(","):
            loads[("rows", dt)] = a.rows_loads
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
    with open(a.out, "a") as f:
        for case, dtype in cells:
            x, y = _args(case, dtype, R, C)
            name = _op(case, dtype)
            ours = getattr(sw, name)
            ref = getattr(torch, name)(x, y)
            got = ours(x, y)
            bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[got.element_size()]
            ok = (got.shape == ref.shape and got.dtype == ref.dtype and got.stride() == ref.stride()
                  and bool((got.contiguous().view(bits) == ref.contiguous().view(bits)).all()))
            mode = sw.explain(ours, x, y).mode if hasattr(sw, "explain") else "?"
            moved = sum(t.numel() * t.element_size() for t in (x, y, got) if t.dim())
            times = []
            us = _time(lambda: ours(x, y), a.reps, a.calls, times)
            rec = dict(variant=a.variant, case=case, dtype=dtype, op=name, mode=str(mode),
                       verified=ok, us=round(us, 2), gbps=round(moved / us / 1e3, 1),
                       spread=round((max(times) - min(times)) / us, 3), t=time.time())
            if a.torch:
                theirs = getattr(torch, name)
                rec["torch_us"] = round(_time(lambda: theirs(x, y), a.reps, a.calls), 2)
            f.write(json.dumps(rec) + "\n")
            f.flush()
            print(f"{a.variant:10s} {case:20s} {dtype:9s} {rec['mode']:10s} ok={ok} "
                  f"{us:8.1f} us {rec['gbps']:7.1f} GB/s", flush=True)
            del x, y, got, ref
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
