"""GB/s of Auto() per case and dtype for several source trees, in alternating rounds.

    python tools/auto_ab.py --trees .snapHead,. --cases outer,crossed_3d --dtypes int64 --rounds 3
    python tools/auto_ab.py --trees old,. --cases contiguous --dtypes float16 --values narrow,wide --anchor
    python tools/auto_ab.py --trees old,. --cases contiguous --dtypes bfloat16 --op remainder,fmod --anchor
    python tools/auto_ab.py --trees old,. --cases bias_channels_last,outer --dtypes int8 --anchor

Cases are the bench matrix's (bench.CASES) or the layouts matrix's (bench.layouts.LAYOUTS:
torch operands, the output in torch's own layout). Each tree runs in its own process (its own
src/ on PYTHONPATH and its own kernel cache), so a round measures every tree once per cell;
rounds alternate the trees to spread the machine's drift over all of them (docs/decisions.md,
Method). With --anchor, each process also times torch eager (--anchor compile: torch.compile)
on the same cell in interleaved rounds with stridewise (bench.time_interleaved), and the table
shows stridewise's ratio to it there.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import itertools, json, sys, zlib
import stridewise as sw
from stridewise.bench import layouts, matrix as bench
import torch
cases, dtypes, log2, anchor = sys.argv[1].split(","), sys.argv[2].split(","), int(sys.argv[3]), sys.argv[4]
values, ops = sys.argv[5].split(","), sys.argv[6].split(",")
out = {}
for op_arg, case, dtype, v in itertools.product(ops, cases, dtypes, values):
    if v != "narrow" and not bench.bench_values.applies(v, dtype):
        continue
    if case in layouts.LAYOUTS:   # a cell of the layouts matrix (narrow values), out in torch's layout
        if v != "narrow":
            continue
        a, b = layouts.LAYOUTS[case][1](layouts._new("torch", dtype, "cuda", zlib.crc32(f"{case}/{dtype}".encode())),
                                        *bench._shape_rc(log2))
        o = torch.remainder(a, b) if dtype != "bool" else torch.bitwise_xor(a, b)
    else:
        a, b, o = bench._make_case(case, dtype, log2, "torch", "cuda", *([v] if v != "narrow" else []))
    cell = case + "/" + dtype + ("" if v == "narrow" else "/" + v)
    op = op_arg or bench.op_name(dtype)   # remainder; bool's cells bitwise_xor
    swf, tf = getattr(sw, op), getattr(torch, op)
    if op_arg:
        cell += "/" + op
    fns = {"sw": lambda: swf(a, b, out=o)}
    if anchor == "eager":
        fns["torch"] = lambda: tf(a, b, out=o)
    elif anchor == "compile":   # its own output, as torch.compile's users get it (bench/matrix.py)
        compiled = torch.compile(lambda x, y: tf(x, y), dynamic=False)
        fns["torch"] = lambda: compiled(a, b)
    if op == "floor_divide":   # torch's own floor_divide may differ: the count of differences
        g, w = swf(a, b, out=o), tf(a, b)
        ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}[g.element_size()]
        out[cell + " diff"] = int(((g.view(ints) != w.view(ints)) & ~(g.isnan() & w.isnan())).sum())
    else:
        assert bench.same_bits(swf(a, b, out=o), tf(a, b)), cell   # exact first
    t = bench.time_interleaved(fns, "cuda")
    out[cell] = bench.compulsory_bytes(a, b, o) / t["sw"]["time_s"] / 1e9
    out[cell + " us"] = t["sw"]["time_s"] * 1e6
    if anchor:
        out[cell + " /torch"] = t["torch"]["time_s"] / t["sw"]["time_s"]
    del a, b, o
    torch.cuda.empty_cache()
print(json.dumps(out))
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", required=True, help="comma-separated checkouts (each with src/)")
    ap.add_argument("--cases", default="outer")
    ap.add_argument("--dtypes", default="int64")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--log2", type=int, default=27)
    ap.add_argument("--values", default="narrow", help="value distributions (bench_values.VALUES); "
                    "every tree draws them with its own bench")
    ap.add_argument("--op", default="", help="comma-separated ops, each over every cell (default: "
                    "the bench's, remainder)")
    ap.add_argument("--anchor", nargs="?", const="eager", choices=("eager", "compile"),
                    help="also torch eager (or torch.compile), as a ratio per process")
    ap.add_argument("--out", help="also write every round's results (JSON) here, after each run, "
                    "so a run cut short keeps the rounds it finished")
    args = ap.parse_args(argv)
    trees = [Path(t).resolve() for t in args.trees.split(",")]
    results = {t: [] for t in trees}
    with tempfile.TemporaryDirectory() as caches:   # a kernel cache per tree, for this run
        for r in range(args.rounds):
            for n, t in (list(enumerate(trees)) if r % 2 == 0 else list(enumerate(trees))[::-1]):
                env = dict(os.environ, PYTHONPATH=str(t / "src"), STRIDEWISE_CACHE_DIR=f"{caches}/{n}")
                done = subprocess.run([sys.executable, "-c", _CHILD, args.cases, args.dtypes,
                                       str(args.log2), args.anchor or "", args.values, args.op], env=env,
                                      capture_output=True, text=True)
                if done.returncode:
                    sys.exit(f"{t}: {done.stderr[-2000:]}")
                results[t].append(json.loads(done.stdout.splitlines()[-1]))
                if args.out:
                    Path(args.out).write_text(json.dumps({str(k): v for k, v in results.items()}, indent=1))
                print(f"round {r + 1}/{args.rounds}: {t.name} done", file=sys.stderr, flush=True)
    width = 8 * args.rounds + 2
    print("cell".ljust(44) + "".join(t.name[:width - 2].rjust(width) for t in trees))
    for c in results[trees[0]][0]:
        fmt = "{:5.3f}" if c.endswith("/torch") else "{:4.0f}"
        print(c.ljust(44) + "".join(" / ".join(fmt.format(res[c]) for res in results[t]).rjust(width)
                                    for t in trees))


if __name__ == "__main__":
    main()
