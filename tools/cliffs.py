"""Hunt for layouts that fall off the fast path: random operands as user code makes them.

    python tools/cliffs.py OUT.json [--cases 60] [--seed 7] [--log2 26] [--ops remainder,add]
                           [--dtypes float16,bfloat16,float32,float64,int32,int64] [--device cuda]

The bench matrices hold the layouts someone thought of. This draws others from the moves user
code makes on torch tensors: a permutation, a slice that drops the first row or column, a step
of 2 or 3, a flip, channels_last, a broadcast along any axis (a size-1 dimension or a 0-d
tensor), an F-ordered copy, sizes that are odd or one short of a power of two. Each case is
verified bit for bit, values and output strides, against torch's own op, then timed against
torch eager (allocating calls, interleaved rounds: bench.time_interleaved). The table, worst
first, shows where stridewise trails; the JSON is written after every case, so a run cut short
keeps what it measured.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys

import torch

import stridewise as sw
from stridewise.bench import matrix as bench

_TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
          "float64": torch.float64, "int32": torch.int32, "int64": torch.int64,
          "int8": torch.int8, "uint8": torch.uint8}


def _shape(rng: random.Random, log2: int) -> list[int]:
    """2 to 4 extents whose product is about 2^log2, some of them odd or a power of two less one."""
    nd = rng.choice((2, 2, 3, 3, 4))
    left, dims = log2, []
    for k in range(nd - 1):
        e = rng.randint(1, max(1, left - (nd - 1 - k) * 2)) if k < nd - 2 else max(1, left // 2)
        dims.append(e)
        left -= e
    dims.append(max(1, left))
    rng.shuffle(dims)
    out = []
    for e in dims:
        n = 1 << e
        n += rng.choice((0, 0, 0, -1, 1, 3, -3)) if n > 8 else 0
        out.append(max(1, n))
    return out


def _operand(rng: random.Random, shape: list[int], role: str, dtype, device: str):
    """One operand of `shape` (broadcastable to it) and the recipe that made it."""
    steps = []
    view = list(shape)
    if role == "b" and rng.random() < 0.5:   # a divisor broadcast along some axes
        keep = [rng.random() < 0.35 for _ in view]
        if not any(keep) and rng.random() < 0.3:
            steps.append("0-d")
            return _values(rng, (), role, dtype, device), steps
        view = [n if k else 1 for n, k in zip(view, keep)]
        if rng.random() < 0.5:   # drop leading ones, as user code writes `x % b_row`
            while len(view) > 1 and view[0] == 1:
                view.pop(0)
        steps.append("bcast" + str(tuple(view)))
    nd = len(view)
    move = rng.choice(("plain", "plain", "permute", "slice", "step", "flip", "channels_last", "f_order"))
    if move == "channels_last" and nd != 4:
        move = "permute"
    if move == "permute" and nd > 1:
        perm = list(range(nd))
        while perm == list(range(nd)):
            rng.shuffle(perm)
        inv = [perm.index(i) for i in range(nd)]
        x = _values(rng, [view[p] for p in perm], role, dtype, device).permute(*inv)
        steps.append(f"permute{tuple(inv)}")
    elif move == "slice":
        dims = [d for d in range(nd) if view[d] > 1]
        d = rng.choice(dims) if dims else 0
        big = list(view)
        big[d] += 1
        x = _values(rng, big, role, dtype, device).narrow(d, 1, view[d])
        steps.append(f"[1:] on dim {d}")
    elif move == "step":
        d = rng.randrange(nd)
        s = rng.choice((2, 3))
        big = list(view)
        big[d] *= s
        x = _values(rng, big, role, dtype, device)[(slice(None),) * d + (slice(None, None, s),)]
        steps.append(f"[::{s}] on dim {d}")
    elif move == "flip":
        d = rng.randrange(nd)
        x = _values(rng, view, role, dtype, device).flip(d)   # torch copies: a fresh array
        steps.append(f"flip({d}) (a copy)")
    elif move == "channels_last":
        x = _values(rng, view, role, dtype, device).contiguous(memory_format=torch.channels_last)
        steps.append("channels_last")
    elif move == "f_order" and nd > 1:
        x = _values(rng, view[::-1], role, dtype, device).permute(*range(nd - 1, -1, -1))
        steps.append("F order")
    else:
        x = _values(rng, view, role, dtype, device)
        steps.append("contiguous")
    return x, steps


def _values(rng: random.Random, shape, role: str, dtype, device: str):
    g = torch.Generator(device=device).manual_seed(rng.randrange(1 << 30))
    if dtype.is_floating_point:
        if role == "a":
            x = torch.randn(shape, generator=g, device=device, dtype=torch.float32) * 100
        else:
            x = torch.rand(shape, generator=g, device=device, dtype=torch.float32) * 9 + 1
            x = torch.where(torch.rand(shape, generator=g, device=device) < 0.5, -x, x)
        return x.to(dtype)
    info = torch.iinfo(dtype)
    if role == "a":
        return torch.randint(max(info.min, -(1 << 30)), min(info.max, 1 << 30), shape,
                             generator=g, device=device, dtype=dtype)
    return torch.randint(1, min(info.max, 1000), shape, generator=g, device=device, dtype=dtype)


def _plan(e) -> dict:
    return {"shape": list(e.shape), "strides": [list(x) for x in e.strides], "kinds": list(e.kinds),
            "pack": e.pack}


def run_case(rng: random.Random, log2: int, ops, dtypes, device: str, algorithms=()) -> dict:
    op, dt = rng.choice(ops), rng.choice(dtypes)
    dtype = _TORCH[dt]
    shape = _shape(rng, log2)
    a, sa = _operand(rng, shape, "a", dtype, device)
    b, sb = _operand(rng, shape, "b", dtype, device)
    if rng.random() < 0.25:   # the operands swapped: the broadcast one first
        a, b, sa, sb = b, a, sb, sa
        if op in ("remainder", "fmod", "floor_divide"):   # keep the divisor away from zero:
            b = torch.where(b == 0, torch.ones_like(b), b)   # integers' x // 0 is undefined in torch
    cell = {"op": op, "dtype": dt, "shape": list(torch.broadcast_shapes(a.shape, b.shape)),
            "a": sa, "b": sb, "a_strides": list(a.stride()), "b_strides": list(b.stride())}
    swf, tf = getattr(sw, op), getattr(torch, op)
    try:
        got, want = swf(a, b), tf(a, b)
        if got.stride() != want.stride() or got.dtype != want.dtype or not bench.same_bits(got, want):
            cell["mismatch"] = {"strides": [list(got.stride()), list(want.stride())],
                                "dtypes": [str(got.dtype), str(want.dtype)],
                                "differing": bench.differing(got, want) if got.shape == want.shape else -1}
            return cell
        nbytes = bench.compulsory_bytes(a, b, want)
        del got, want
        fns = {"sw": lambda: swf(a, b), "torch": lambda: tf(a, b)}
        for name in algorithms:   # explicit algorithms beside Auto's choice, where they run
            alg = getattr(sw, name)()
            try:
                swf(a, b, algorithm=alg)
            except ValueError:
                continue
            fns[name] = lambda alg=alg: swf(a, b, algorithm=alg)
        res = bench.time_interleaved(fns, device, nbytes)
        cell.update({k: v for k, v in res.items()})
        if "time_s" in res.get("sw", {}) and "time_s" in res.get("torch", {}):
            cell["vs_torch"] = res["torch"]["time_s"] / res["sw"]["time_s"]
            cell["alternatives"] = {n: res["torch"]["time_s"] / r["time_s"] for n, r in res.items()
                                    if n not in ("sw", "torch") and "time_s" in r}
            e = sw.explain(swf, a, b)
            cell["mode"] = str(e.mode)
            # the plan as each mode sees it (merged shape, strides, operand kinds), so that a
            # rule for Auto can be fitted to the cells afterwards
            cell["plans"] = {str(e.mode): _plan(e)}
            for name in algorithms:
                try:
                    e = sw.explain(swf, a, b, algorithm=getattr(sw, name)())
                except ValueError:
                    continue
                cell["plans"][str(e.mode)] = _plan(e)
    except Exception as e:  # noqa: BLE001 - a failing case is a finding, recorded
        cell["error"] = f"{type(e).__name__}: {e}"
    return cell


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--log2", type=int, default=26)
    ap.add_argument("--ops", default="remainder,remainder,add")
    ap.add_argument("--dtypes", default="float16,bfloat16,float32,float64,int32,int64")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", default="", help="comma-separated case numbers: replay those alone")
    ap.add_argument("--algorithms", default="", help="also time these explicit algorithms "
                    "(General,Rows,ShortRows,Tiled), each where it runs")
    args = ap.parse_args(argv)
    ops, dtypes = args.ops.split(","), args.dtypes.split(",")
    cells = []
    algorithms = [n for n in args.algorithms.split(",") if n]
    todo = [int(i) for i in args.only.split(",")] if args.only else range(args.cases)
    for n, i in enumerate(todo):
        rng = random.Random(args.seed * 100_003 + i)
        cell = run_case(rng, args.log2, ops, dtypes, args.device, algorithms)
        cell["case"] = i
        cells.append(cell)
        with open(args.json, "w") as f:
            json.dump({"seed": args.seed, "log2": args.log2, "cells": cells}, f, indent=1)
        r = cell.get("vs_torch")
        print(f"[{n + 1}/{len(todo)}] #{i} {cell['op']} {cell['dtype']} {tuple(cell['shape'])} "
              f"a: {' '.join(cell['a'])}; b: {' '.join(cell['b'])} -> "
              + (f"{r:.2f}x torch " + " ".join(f"{k} {v:.2f}x" for k, v in cell["alternatives"].items())
                 if r else cell.get("error") or f"MISMATCH {cell.get('mismatch')}"),
              file=sys.stderr, flush=True)
        if args.device == "cuda":
            torch.cuda.empty_cache()
    bad = [c for c in cells if "vs_torch" not in c]
    timed = sorted((c for c in cells if "vs_torch" in c), key=lambda c: c["vs_torch"])
    print("\nworst first: vs torch eager | op dtype shape | a | b | mode")
    for c in timed[:25]:
        print(f"#{c['case']} {c['vs_torch']:.2f}x | {c['op']} {c['dtype']} {tuple(c['shape'])} | {' '.join(c['a'])} "
              f"{tuple(c['a_strides'])} | {' '.join(c['b'])} {tuple(c['b_strides'])} | {c.get('mode', '')} "
              + " ".join(f"{k} {v:.2f}x" for k, v in c["alternatives"].items()))
    if timed:
        print(f"geometric mean {math.exp(sum(math.log(c['vs_torch']) for c in timed) / len(timed)):.2f}x "
              f"over {len(timed)} timed cases; below 1.0x: {sum(c['vs_torch'] < 1 for c in timed)}")
    for c in bad:
        print("FAILED", json.dumps(c))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
