"""Cold CPU compile: the first call of distinct kernels in an empty kernel cache.

    python tools/cold_compile.py [--repeat 3]

Each repeat runs a fresh process per setting (STRIDEWISE_PCH=1 and 0, interleaved) with its
own empty cache; a process's first call also pays the precompiled header's one-time build
(reported apart), then each kernel's first call is timed (wall, then the g++ child's CPU).
Prints per-kernel medians over the repeats. On a shared machine read the CPU column too.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, time
import numpy as np
import stridewise as sw

def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

a = np.linspace(-9, 9, 4099, dtype=np.float32)
m = a[:4096].reshape(64, 64)
cases = [
    ("warm-up (pch build)", lambda: sw.negative(a)),
    ("remainder f32", lambda: sw.remainder(a, a[::-1])),
    ("add f32 rows", lambda: sw.add(m, m[0])),
    ("sin f64", lambda: sw.sin(a.astype(np.float64))),
    ("where f32", lambda: sw.where(a > 0, a, a[::-1])),
    ("maximum i32", lambda: sw.maximum(a.astype(np.int32), 3)),
    ("cast f16", lambda: sw.cast(a, "float16")),
    ("fma f32", lambda: sw.fma(a, a, a)),
    ("user kernel", lambda: sw.ElementwiseKernel("T x, T y", "T z", "z = x * y + 1")(a, a)),
]
out = {}
for name, f in cases:
    t, c = time.perf_counter(), cpu()
    f()
    out[name] = (time.perf_counter() - t, cpu() - c)
print(json.dumps(out))
"""


def run(pch: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="cold-") as cache:
        env = {**os.environ, "STRIDEWISE_CACHE_DIR": cache, "STRIDEWISE_PCH": pch}
        proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                              text=True, check=True)
        return json.loads(proc.stdout)


def main() -> None:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
    results = {"1": [], "0": []}
    for _ in range(repeat):
        for pch in ("1", "0"):
            results[pch].append(run(pch))
    names = list(results["1"][0])
    print(f"{'first call':24} {'pch wall':>9} {'cpu':>6} {'no-pch wall':>12} {'cpu':>6}   (s, median of {repeat})")
    for name in names:
        row = [statistics.median(r[name][i] for r in results[p]) for p in ("1", "0") for i in (0, 1)]
        print(f"{name:24} {row[0]:9.3f} {row[1]:6.3f} {row[2]:12.3f} {row[3]:6.3f}")
    kernels = names[1:]
    for p, label in (("1", "pch"), ("0", "no pch")):
        per = [statistics.median(r[n][0] for r in results[p]) for n in kernels]
        print(f"median over kernels, {label}: {statistics.median(per):.3f} s")


if __name__ == "__main__":
    main()
