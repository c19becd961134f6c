"""Every built-in op x dtype against the library's own op, on torch tensors (torch's) or NumPy
arrays (NumPy's ufunc): where the backend falls off its path for a whole class of calls (an op,
a dtype) that no bench matrix names.

    python tools/op_sweep.py [OUT.json] [--lib torch|numpy] [--device cpu] [--threads 1]
                             [--log2 20] [--ops exp,pow] [--dtypes float64,bfloat16]

Each (op, dtype) with a counterpart in the library: contiguous operands of 2^log2 elements
drawn as user data is (normal values times 3; positive divisors, logarithm and square-root
arguments; shift counts below 7; random bools), `out=` given on both sides. The result is
checked against the library's (floats within TOLERANCE_ULP and at least one ulp, since
torch's CPU sqrt is not correctly rounded everywhere; exact otherwise; NaN where the
library's is NaN) before it is timed: medians of interleaved rounds, each round the best of 3
calls. NumPy's bfloat16 is ml_dtypes'. `--threads` is torch's and stridewise's alike: torch
loads the libgomp.so.1 that the CPU kernels then bind to (1 matches NumPy's loops). The
table, worst first, and a summary (calls under 0.9x and 0.5x, geometric mean); the JSON
holds every row.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time

import numpy as np
import torch

import stridewise as sw
from stridewise.ops import builtins

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64",
          "bool"]
POSITIVE_SECOND = {"pow", "remainder", "fmod", "floor_divide", "divide", "reciprocal"}
POSITIVE = {"log", "sqrt"}


def operands(name: str, dtype: str, n: int, g: torch.Generator, nin: int) -> list:
    td = getattr(torch, dtype)

    def one(positive: bool):
        if dtype == "bool":
            return torch.rand(n, generator=g) > 0.5
        if td.is_floating_point:
            x = torch.randn(n, generator=g) * 3
            return (x.abs() + 0.5 if positive else x).to(td)
        info = torch.iinfo(td)
        lo = 1 if positive else max(info.min, -100)
        return torch.randint(lo, min(info.max, 100), (n,), generator=g).to(td)

    args = [one(name in POSITIVE or (i == 1 and name in POSITIVE_SECOND)) for i in range(nin)]
    if name in ("left_shift", "right_shift"):
        args[1] = args[1].abs() % 7
    if name == "where":
        args[0] = torch.rand(n, generator=g) > 0.5
    return args


def agrees(got: torch.Tensor, want: torch.Tensor, ulp: int) -> bool:
    if got.dtype != want.dtype:
        return False
    if not got.is_floating_point():
        return bool(torch.equal(got, want))
    g, w = got.double().cpu().numpy(), want.double().cpu().numpy()
    nan = np.isnan(w)
    if not np.array_equal(nan, np.isnan(g)):
        return False
    spacing = np.spacing(np.abs(want.float().cpu().numpy()).astype(
        np.float32 if got.element_size() <= 4 else np.float64)).astype(np.float64)
    if got.element_size() == 2:            # a 16-bit type's spacing, from its own mantissa
        spacing = spacing * (2.0 ** (23 - (10 if got.dtype == torch.float16 else 7)))
    return bool(np.all((g == w) | nan | (np.abs(g - w) <= ulp * spacing)))


def own(row, lib: str):
    """The library's own function for a row, or None."""
    if lib == "numpy":
        return getattr(np, row.ufunc, None) if row.ufunc else None
    return getattr(torch, row.torch_name, None) if row.torch_name else None


class NumpyLib:
    """NumPy arrays from the sweep's torch operands (bfloat16 through ml_dtypes), and back."""

    def __init__(self):
        import ml_dtypes
        self.bf16 = ml_dtypes.bfloat16

    def array(self, t: torch.Tensor) -> np.ndarray:
        if t.dtype == torch.bfloat16:
            return t.float().numpy().astype(self.bf16)
        return t.numpy()

    def tensor(self, x: np.ndarray) -> torch.Tensor:
        if x.dtype == self.bf16:
            return torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16)
        return torch.from_numpy(np.ascontiguousarray(x))

    @staticmethod
    def empty_like(x: np.ndarray) -> np.ndarray:
        return np.empty_like(x)


def best(f, k: int = 3) -> float:
    t = []
    for _ in range(k):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return min(t)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", nargs="?")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--log2", type=int, default=20)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--ops", default="")
    p.add_argument("--dtypes", default=",".join(DTYPES))
    p.add_argument("--lib", choices=("torch", "numpy"), default="torch")
    a = p.parse_args()
    if a.lib == "numpy" and a.device != "cpu":
        p.error("--lib numpy runs on the CPU: leave --device out (or take --lib torch for cuda)")
    torch.set_num_threads(a.threads)
    lib = NumpyLib() if a.lib == "numpy" else None
    ops = set(filter(None, a.ops.split(",")))
    g = torch.Generator().manual_seed(0)
    rows, cases = [], [(name, row, dt) for name, row in builtins.ROWS.items()
                       for dt in a.dtypes.split(",") if dt in row.dtypes
                       and (not ops or name in ops) and own(row, a.lib) is not None]
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    for i, (name, row, dt) in enumerate(cases, 1):
        tf, f = own(row, a.lib), getattr(sw, name)
        args = [x.to(a.device) for x in operands(name, dt, 1 << a.log2, g, len(row.params))]
        if lib:
            args = [lib.array(x) for x in args]
        try:
            want = tf(*args)
        except (RuntimeError, TypeError):
            continue                                   # the library has no such loop
        empty = lib.empty_like if lib else torch.empty_like
        out, theirs = empty(want), empty(want)
        f(*args, out=out)
        ulp = builtins.TOLERANCE_ULP.get(name, {}).get(dt, 0)
        ok = agrees(*((lib.tensor(out), lib.tensor(want)) if lib else (out, want)), max(ulp, 1))
        try:
            tf(*args, out=theirs)
            tcall = lambda: tf(*args, out=theirs)   # noqa: E731
        except (RuntimeError, TypeError):
            tcall = lambda: tf(*args)              # noqa: E731
        scall = lambda: f(*args, out=out)          # noqa: E731
        for _ in range(2):
            scall(), tcall()
        sync()
        ours, torchs = [], []
        for r in range(a.rounds):                  # interleaved, each side first in turn
            for side in ((scall, ours), (tcall, torchs))[:: 1 if r % 2 else -1]:
                side[1].append(best(lambda: (side[0](), sync())))
        s, t = statistics.median(ours) * 1e6, statistics.median(torchs) * 1e6
        rows.append({"op": name, "dtype": dt, "us": s, "torch_us": t, "speedup": t / s,
                     "agrees": ok})
        print(f"[{i}/{len(cases)}] {name:14s} {dt:9s} {s:9.1f} us  {a.lib} {t:9.1f} us  "
              f"{t / s:5.2f}x{'' if ok else '  DIFFERS from ' + a.lib}", flush=True)
        if a.out:
            with open(a.out, "w") as fh:
                json.dump({"lib": a.lib, "device": a.device, "threads": a.threads,
                           "log2": a.log2, "torch": torch.__version__, "numpy": np.__version__,
                           "rows": rows}, fh, indent=1)
    rows.sort(key=lambda r: r["speedup"])
    print("\nworst first:")
    for r in rows[:30]:
        print(f"  {r['op']:14s} {r['dtype']:9s} {r['us']:9.1f} us  {a.lib} {r['torch_us']:9.1f} us"
              f"  {r['speedup']:5.2f}x")
    sp = [r["speedup"] for r in rows]
    print(f"\n{len(rows)} calls: {sum(x < 0.9 for x in sp)} under 0.9x {a.lib}, "
          f"{sum(x < 0.5 for x in sp)} under 0.5x; geometric mean "
          f"{math.exp(sum(map(math.log, sp)) / len(sp)):.2f}x; "
          f"{sum(not r['agrees'] for r in rows)} differ from {a.lib}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
