"""Time explicit algorithms against Auto on cells of the layouts matrix (GPU or CPU).

    python tools/algorithms_ab.py --cases bias_channels_last,outer_3d --dtypes float32,float64 \
        --algs "Auto();Rows(share_rows=True);Rows(share_rows=False);ShortRows()" [--rounds 3]

Each cell's operands are built as the layouts matrix builds them (stridewise.bench.layouts),
or the first matrix's (bench.CASES: outer, crossed_3d, ...) as torch tensors;
every algorithm's result is checked bit for bit, strides included, against the owning
library's own op before anything is timed (an algorithm that cannot run the cell is reported
as such), and then all of them, torch eager and torch.compile run in the same interleaved
rounds (bench.time_interleaved), `--rounds` times. It shows which explicit choice beats the
one Auto makes, per cell, before a tuning default is changed.
"""
from __future__ import annotations

import argparse
import json
import statistics
import zlib

import stridewise as sw
from stridewise import algorithms
from stridewise.bench import layouts as bench_layouts
from stridewise.bench import matrix as bench


def _algorithm(text: str):
    return eval(text, {k: getattr(algorithms, k) for k in dir(algorithms) if not k.startswith("_")})


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="bias_channels_last,outer_3d")
    ap.add_argument("--dtypes", default="float32")
    ap.add_argument("--algs", default="Auto();Rows(share_rows=True);Rows(share_rows=False)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--log2", type=int, default=bench.GPU_LOG2)
    ap.add_argument("--anchors", default="torch,torch.compile,numpy",
                    help="which of the library anchors to time beside them")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    algs = {text: _algorithm(text) for text in args.algs.split(";")}
    rows = []
    for case in args.cases.split(","):
        if case in bench_layouts.LAYOUTS:
            label, build, where = bench_layouts.LAYOUTS[case]
            lib = bench_layouts._lib_for(where, args.device)
        else:   # a cell of the first matrix (bench.CASES), as torch tensors
            label, lib = bench.CASES[case][0], "torch"
        for dtype in args.dtypes.split(","):
            R, C = bench._shape_rc(args.log2)
            if case in bench_layouts.LAYOUTS:
                a, b = build(bench_layouts._new(lib, dtype, args.device, zlib.crc32(f"{case}/{dtype}".encode())), R, C)
            else:
                a, b, _ = bench._make_case(case, dtype, args.log2, lib, args.device)
            ref = bench_layouts._reference(lib, a, b)
            nbytes = bench.compulsory_bytes(a, b, ref)
            fns, notes = {}, {}
            for text, alg in algs.items():
                try:
                    got = sw.remainder(a, b, algorithm=alg)
                    ok = bench_layouts._same(got, ref, lib, a, b) and \
                        bench_layouts._strides(got) == bench_layouts._strides(ref)
                    notes[text] = str(sw.explain(sw.remainder, a, b, algorithm=alg).algorithm)
                    if ok:
                        fns[text] = lambda alg=alg: sw.remainder(a, b, algorithm=alg)
                    else:
                        notes[text] = "values or strides differ: not timed"
                except Exception as e:  # noqa: BLE001 - an algorithm that cannot run the cell
                    notes[text] = f"{type(e).__name__}: {e}"[:160]
            anchors = args.anchors.split(",") if args.anchors else []
            if lib == "torch" and "torch.compile" not in anchors:   # no compile to pay for
                import torch
                if "torch" in anchors:
                    fns["torch"] = lambda a=a, b=b: torch.remainder(a, b)
            elif anchors:
                fns.update({k: v for k, v in bench_layouts._anchors(lib, a, b, dtype, args.device, {}).items()
                            if not isinstance(v, Exception) and k in anchors})
            times = {k: [] for k in fns}
            for _ in range(args.rounds):
                for k, r in bench.time_interleaved(fns, args.device, nbytes).items():
                    if "time_s" in r:
                        times[k].append(r["time_s"])
            print(f"{case} {dtype} ({label}; {nbytes / 1e6:.0f} MB)", flush=True)
            for k, ts in times.items():
                if ts:
                    med = statistics.median(ts)
                    print(f"  {k:40s} {med * 1e6:8.1f} us {nbytes / med / 1e9:7.0f} GB/s  "
                          f"[{', '.join(f'{t * 1e6:.1f}' for t in ts)}]  {notes.get(k, '')}", flush=True)
            for k, n in notes.items():
                if k not in fns:
                    print(f"  {k:40s} {n}", flush=True)
            rows.append({"case": case, "dtype": dtype, "times_us": {k: [t * 1e6 for t in ts] for k, ts in times.items()},
                         "algorithms": notes})
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
