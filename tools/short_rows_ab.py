"""Auto, ShortRows and Rows (with and without shared rows) on an (M, C) array by a C-long row.

    python tools/short_rows_ab.py

Rows of 256 bytes to 2 KB, float32, float64 and float16, 2^26 outputs on the GPU: where the
short-row boundary (tuning.py short_row_bytes) and sharing a repeated row (share_all_rows)
pay, per dtype. Every algorithm's result is checked against torch's first; medians of two
interleaved rounds.
"""
import statistics, torch, stridewise as sw
from stridewise.bench import matrix as bench
for dtype in ("float32", "float64", "float16"):
    dt = getattr(torch, dtype)
    for C in (64, 128, 256, 512):
        row_bytes = C * dt.itemsize
        if not 256 <= row_bytes <= 2048:
            continue
        M = (1 << 26) // C
        a = (torch.rand(M, C, device="cuda") * 200 - 100).to(dt)
        b = (torch.rand(C, device="cuda") * 9.5 + 0.5).to(dt)
        ref = torch.remainder(a, b)
        algs = {"Auto": sw.Auto(), "ShortRows": sw.ShortRows(), "Rows": sw.Rows(),
                "Rows(share)": sw.Rows(share_rows=True)}
        fns = {}
        for k, alg in algs.items():
            got = sw.remainder(a, b, algorithm=alg)
            assert bool(((got == ref) | (got.isnan() & ref.isnan())).all()), k
            fns[k] = lambda alg=alg: sw.remainder(a, b, algorithm=alg)
        nbytes = bench.compulsory_bytes(a, b, ref)
        ts = {k: [] for k in fns}
        for _ in range(2):
            for k, r in bench.time_interleaved(fns, "cuda", nbytes).items():
                ts[k].append(r["time_s"] * 1e6)
        auto = str(sw.explain(sw.remainder, a, b).algorithm).split("(")[0]
        print(f"{dtype:8s} C={C:4d} row {row_bytes:5d} B  Auto picks {auto:9s} " +
              "  ".join(f"{k} {statistics.median(v):7.1f}" for k, v in ts.items()), flush=True)
