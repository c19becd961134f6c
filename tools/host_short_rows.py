"""Rows against General on the host by row length, per op and dtype, beside torch CPU.

    python tools/host_short_rows.py > bench/cpu-fortyfirst-short-rows-by-op.txt

Each case is a sliced dividend (R, L + 1)[:, 1:] beside a transposed divisor (L, R).T, 2^20
outputs, rows of L = 2 to 32 elements, 2 threads; both explicit algorithms are checked
against torch's own op first, then timed (minima of 5 rounds of 20 calls). The last column is
the mode Auto picks. It shows where the host's short-row choice depends on the op, which
Auto's modes (keyed by dtype) do not see.
"""
import time

import numpy as np
import torch

import stridewise as sw

OPS = ("add", "multiply", "remainder")
DTYPES = ("float32", "float64", "float16", "int32", "int8")
LENGTHS = (2, 4, 8, 16, 32)


def best_us(fn, calls: int = 20, rounds: int = 5) -> float:
    """The fastest of `rounds` rounds of `calls` calls, in us per call (after one warm call)."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best * 1e6


def operands(dtype: str, length: int, rng):
    """A sliced dividend and a transposed divisor of 2^20 elements in rows of `length`."""
    rows = (1 << 20) // length
    if dtype.startswith("int"):
        a = rng.integers(-100, 100, (rows, length + 1)).astype(dtype)
        b = rng.integers(1, 100, (length, rows)).astype(dtype)
    else:
        a = (rng.standard_normal((rows, length + 1)) * 100).astype(dtype)
        b = (rng.random((length, rows)) * 9 + 1).astype(dtype)
    return torch.from_numpy(a)[:, 1:], torch.from_numpy(b).t()


def same(got, want) -> bool:
    nan = got.isnan() & want.isnan() if got.dtype.is_floating_point else torch.zeros_like(got, dtype=torch.bool)
    return bool(((got == want) | nan).all())


def main() -> None:
    torch.set_num_threads(2)
    rng = np.random.default_rng(5)
    print("op dtype L : rows_us general_us torch_us | torch/rows torch/general auto")
    for op in OPS:
        f, tf = getattr(sw, op), getattr(torch, op)
        for dtype in DTYPES:
            for length in LENGTHS:
                a, b = operands(dtype, length, rng)
                want = tf(a, b)
                us = {}
                for name, alg in (("rows", sw.Rows()), ("general", sw.General())):
                    assert same(f(a, b, algorithm=alg), want), (op, dtype, length, name)
                    us[name] = best_us(lambda: f(a, b, algorithm=alg))
                us["torch"] = best_us(lambda: tf(a, b))
                print(f"{op} {dtype} {length} : {us['rows']:.0f} {us['general']:.0f} {us['torch']:.0f} | "
                      f"{us['torch'] / us['rows']:.2f} {us['torch'] / us['general']:.2f} "
                      f"{sw.explain(f, a, b).mode}", flush=True)


if __name__ == "__main__":
    main()
