"""Fused-expression bench: expressions users write, each as one stridewise user kernel (with and
without broadcast-invariant hoisting) and through sw.fuse, against NumPy eager and numexpr on the
CPU, and torch eager, torch.compile, CuPy's ElementwiseKernel and cupy.fuse on the GPU.

`run_fused(device)` returns plain rows that `python -m stridewise.bench.fused [cpu|cuda]
[scale]` prints; every result is checked against the eager one before it is timed, and the
hoisted kernel against the unhoisted one bit for bit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["EXPRESSION", "CASES", "run_fused", "format_rows"]

EXPRESSION = "sin(a*b) + sqrt(c) + cos(a) / log(cos(b) + 2)"

# The host has no rsqrt; CUDA has it for float and double.
_RSQRT = """#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
inline float rsqrt(float v) { return 1.0f / sqrtf(v); }
inline double rsqrt(double v) { return 1.0 / sqrt(v); }
#endif"""


@dataclass
class Case:
    """One expression: its arguments' shapes per device (2^26 outputs on the GPU, the seed's
    2^28 as measured in the issue; 2^21-2^24 on the CPU), the user kernel's text, and the same
    expression in each library's eager ops."""

    name: str
    shapes: dict                  # "cuda" / "cpu" -> {argument: shape}
    params: str                   # the user kernel's in_params (arrays, then scalars)
    operation: str
    eager: object                 # (library module, *args) -> result
    fused: object                 # (sw-like module, *args) -> result, for sw.fuse and cupy.fuse
    scalars: dict = field(default_factory=dict)
    numexpr: str | None = None
    preamble: str = ""
    circular: float = 0.0         # compare modulo this period (a phase wrap)


def _seed(lib, a, b, c):
    return lib.sin(a * b) + lib.sqrt(c) + lib.cos(a) / lib.log(lib.cos(b) + 2)


def _norm(lib, x, mean, var, gamma, beta, eps):
    rsqrt = getattr(lib, "rsqrt", None) or (lambda v: 1 / lib.sqrt(v))
    return (x - mean) * rsqrt(var + eps) * gamma + beta


def _gelu(lib, x, b):
    v = x + b
    return 0.5 * v * (1 + lib.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))


def _gelu_fused(lib, x, b):   # tanh(z) = 1 - 2 / (exp(2z) + 1): sw and cupy.fuse have exp
    v = x + b
    z = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    return 0.5 * v * (2 - 2 / (lib.exp(2 * z) + 1))


def _dist(lib, x, y, cx, cy):
    return lib.sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy))


def _phase(lib, omega, t, phi, period):
    return lib.remainder(omega * t + phi, period)


def _fused_norm(sw, x, mean, var, gamma, beta, eps):
    return (x - mean) * (1 / sw.sqrt(var + eps)) * gamma + beta


CASES = [
    Case("seed", {"cuda": {"a": (64, 1, 4096), "b": (1, 1024, 1), "c": (1024, 4096)},
                  "cpu": {"a": (16, 1, 1024), "b": (1, 128, 1), "c": (128, 1024)}},
         "T a, T b, T c", "out = sin(a*b) + sqrt(c) + cos(a)/log(cos(b)+2)", _seed, _seed,
         numexpr="sin(a*b) + sqrt(c) + cos(a)/log(cos(b)+2)"),
    Case("norm per channel", {"cuda": {"x": (16, 256, 16384), "mean": (256, 1), "var": (256, 1),
                                       "gamma": (256, 1), "beta": (256, 1)},
                              "cpu": {"x": (8, 64, 4096), "mean": (64, 1), "var": (64, 1),
                                      "gamma": (64, 1), "beta": (64, 1)}},
         "T x, T mean, T var, T gamma, T beta, T eps",
         "out = (x - mean) * rsqrt(var + eps) * gamma + beta", _norm, _fused_norm,
         scalars={"eps": 1e-5}, numexpr="(x - mean) * (1 / sqrt(var + eps)) * gamma + beta",
         preamble=_RSQRT),
    Case("gelu + column bias", {"cuda": {"x": (8192, 8192), "b": (8192,)},
                                "cpu": {"x": (2048, 1024), "b": (1024,)}},
         "T x, T b",
         "T v = x + b; out = (T)0.5 * v * (1 + tanh((T)0.7978845608028654 * (v + (T)0.044715 * v * v * v)))",
         _gelu, _gelu_fused, numexpr="0.5 * (x + b) * (1 + tanh(0.7978845608028654 * ((x + b) + "
         "0.044715 * (x + b) * (x + b) * (x + b))))"),
    Case("distance on a grid", {"cuda": {"x": (1, 8192), "y": (8192, 1)},
                                "cpu": {"x": (1, 1024), "y": (2048, 1)}},
         "T x, T y, T cx, T cy", "out = sqrt((x - cx)*(x - cx) + (y - cy)*(y - cy))", _dist, _dist,
         scalars={"cx": 0.3, "cy": -0.2}, numexpr="sqrt((x - cx)**2 + (y - cy)**2)"),
    Case("phase wrap per row", {"cuda": {"omega": (8192, 1), "t": (1, 8192), "phi": (8192, 1)},
                                "cpu": {"omega": (2048, 1), "t": (1, 1024), "phi": (2048, 1)}},
         "T omega, T t, T phi, T period",
         "T r = fmod(omega * t + phi, period); out = r != 0 && ((r < 0) != (period < 0)) ? r + period : r",
         _phase, _phase, scalars={"period": 2 * math.pi}, circular=2 * math.pi,
         numexpr=None),
]
RTOL = {"float32": 2e-4, "float64": 1e-11}


def _close(got, want, dtype, period):
    """Whether got is want within the dtype's tolerance (NumPy arrays or torch tensors: a GPU
    result is compared where it lies, not copied back)."""
    if hasattr(got, "double"):
        d = (got.double() - want.double()).abs()
        if period:
            d = d.minimum((period - d).abs())
        return bool((d <= RTOL[dtype] * (1 + want.double().abs())).all())
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    d = np.abs(got - want)
    if period:
        d = np.minimum(d, np.abs(period - d))
    return bool(np.all(d <= RTOL[dtype] * (1 + np.abs(want))))


def _same_bits(x, y) -> bool:
    if hasattr(x, "view") and hasattr(x, "element_size"):
        import torch

        ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
        return x.shape == y.shape and bool(torch.equal(x.view(ints), y.view(ints)))
    return np.asarray(x).tobytes() == np.asarray(y).tobytes()


def _host(case: Case, shapes: dict, dtype: str, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {k: (rng.random(s) + 0.1).astype(dtype) for k, s in shapes.items()}


def _on_device(shapes: dict, dtype: str, device: str, seed: int = 0) -> dict:
    """The operands drawn on the GPU itself (a 2 GiB host draw and copy would cost seconds)."""
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    return {k: torch.rand(s, generator=g, device=device, dtype=getattr(torch, dtype)) + 0.1
            for k, s in shapes.items()}


def _names(case: Case) -> list:
    return [p.split()[-1] for p in case.params.split(",")]


def _explicit(fn, lib, names, name: str):
    """fn(lib, *args) as a function of exactly these named arguments, called name: cupy.fuse
    reads the signature (no *args) and names its kernel after the function (no <lambda>)."""
    args = ", ".join(names)
    scope = {"fn": fn, "lib": lib}
    exec(f"def {name}({args}):\n    return fn(lib, {args})", scope)   # noqa: S102
    return scope[name]


def _impls(case, device, dtype, args, out_shape):
    """name -> callable returning its result, and the stridewise outputs checked bit for bit."""
    import stridewise as sw

    k = sw.ElementwiseKernel(case.params, "T out", case.operation, preamble=case.preamble,
                             name=case.name.split()[0])
    scal = list(case.scalars.values())
    names = _names(case)
    label = case.name.split()[0]
    fused = sw.fuse(_explicit(case.fused, sw, names, f"fused_{label}"), name=f"fused_{label}")
    off = sw.Auto(hoist=False)
    impls = {}
    if device == "cpu":
        out, out_off, out_f = (np.empty(out_shape, dtype) for _ in range(3))
    else:
        import torch

        out, out_off, out_f = (torch.empty(out_shape, dtype=getattr(torch, dtype), device=device)
                               for _ in range(3))
    impls["sw kernel"] = lambda: k(*args, *scal, out)
    impls["sw kernel unhoisted"] = lambda: k(*args, *scal, out_off, algorithm=off)
    impls["sw.fuse"] = lambda: fused(*args, *scal, out=out_f)
    if device == "cpu":
        impls["numpy"] = lambda: case.eager(np, *args, *scal)
        try:
            import numexpr

            if case.numexpr:
                env = dict(zip(names, args + scal))
                impls["numexpr"] = lambda: numexpr.evaluate(case.numexpr, local_dict=env)
        except ImportError:
            pass
    else:
        import torch

        eager = _explicit(case.eager, torch, names, f"eager_{label}")
        impls["torch eager"] = lambda: eager(*args, *scal)
        # a fresh compile per case and dtype, timed apart as the first call: Dynamo's
        # recompile limit (8 per wrapped code object) would otherwise run later ones eagerly
        torch._dynamo.reset()
        compiled = torch.compile(_explicit(case.eager, torch, names, f"compiled_{label}"),
                                 dynamic=False)
        impls["torch.compile"] = lambda: compiled(*args, *scal)
        try:
            import cupy

            cargs = [cupy.asarray(v) for v in args]
            cout = cupy.empty(out_shape, dtype)
            ck = cupy.ElementwiseKernel(case.params, "T out", case.operation,
                                        preamble=case.preamble, name=f"cupy_{k.name}")
            impls["cupy kernel"] = lambda: ck(*cargs, *scal, cout)
            cf = cupy.fuse(_explicit(case.fused, cupy, names, f"cupy_fused_{label}"))
            impls["cupy.fuse"] = lambda: cf(*cargs, *scal)
        except Exception as e:  # noqa: BLE001 - an anchor that cannot run is reported
            impls["cupy"] = e
    return impls, k, (out, out_off, out_f)


def _first_calls(impls: dict, device: str) -> tuple:
    """Each implementation called once (its compile included): name -> seconds, its result or
    the exception it raised."""
    import time

    sync = (lambda: __import__("torch").cuda.synchronize()) if device == "cuda" else (lambda: None)
    first, results = {}, {}
    for name, fn in impls.items():
        if isinstance(fn, Exception):
            results[name] = fn
            continue
        t = time.perf_counter()
        try:
            results[name] = fn()
            sync()
        except Exception as e:  # noqa: BLE001 - recorded as an error row
            results[name] = e
        first[name] = time.perf_counter() - t
    return first, results


def _as_torch(x, device):
    import torch

    return x if isinstance(x, torch.Tensor) else torch.as_tensor(x, device=device)


def run_fused(device: str = "cpu", dtypes: tuple = ("float32", "float64"), scale: float = 1.0,
              cases: list | None = None, log: Callable[[list], None] | None = None) -> list[dict]:
    """Time every case per dtype and implementation.

    scale: the CPU shapes' largest dim times this (a smaller run on a busy host).
    log: called with each case-dtype's rows as they are measured (a long run keeps its part).

    Returns
    -------
    Rows of {"case", "dtype", "impl", "time_s" or "error", "gbps", "first_s", "hoisted",
    "bitwise"}: GB/s counts the compulsory bytes (every argument once, the output once);
    "first_s" is the first call, compile included (torch.compile's compile is never in
    "time_s"); "hoisted" lists what the kernel computes once (text and shape), "bitwise" whether
    hoisted == unhoisted. Every result is checked against the eager one before it is timed.
    """
    import stridewise as sw

    from stridewise.bench.matrix import time_interleaved

    rows = []
    # "cpu" is the NumPy side; "cuda" (or "cpu:0", torch's CPU through the GPU side's code)
    # the torch side
    where = "cuda" if device.startswith("cuda") else "cpu"
    on_torch = device != "cpu"
    for case in cases or CASES:
        shapes = dict(case.shapes[where])
        if where == "cpu" and scale != 1.0:
            shapes = {n: tuple(max(1, int(d * scale)) if d == max(s) and d > 1 else d for d in s)
                      for n, s in shapes.items()}
            shapes = _agree(shapes)
        out_shape = np.broadcast_shapes(*shapes.values())
        for dtype in dtypes:
            part = []
            if not on_torch:
                args = list(_host(case, shapes, dtype).values())
            else:
                args = list(_on_device(shapes, dtype, device).values())
            nbytes = (sum(int(np.prod(s)) for s in shapes.values()) + int(np.prod(out_shape))) \
                * np.dtype(dtype).itemsize
            impls, k, outs = _impls(case, device, dtype, args, out_shape)
            first, results = _first_calls(impls, where)
            ref = results.get("torch eager" if on_torch else "numpy")
            hoisted = sw.explain(k, *args, *case.scalars.values(), outs[0]).hoisted
            bitwise = _same_bits(outs[0], outs[1])
            info = {"hoisted": [f"{h.text} {h.shape}" for h in hoisted], "bitwise": bitwise}
            for name, got in results.items():
                error = str(got)[:160] if isinstance(got, Exception) else None
                if error is None:
                    got = _as_torch(got, device) if on_torch else np.asarray(got)
                if error is None and not _close(got, ref, dtype, case.circular):
                    error = "result mismatch"
                if error:
                    part.append({"case": case.name, "dtype": dtype, "impl": name, "error": error})
                    impls.pop(name)
            del results, ref
            timed = time_interleaved(impls, where, nbytes)
            for name, r in timed.items():
                part.append({"case": case.name, "dtype": dtype, "impl": name, **info, **r,
                             "first_s": first.get(name)})
            rows += part
            if log:
                log(part)
    return rows


def _agree(shapes: dict) -> dict:
    """Scaled shapes made to broadcast again (a dim scaled in one argument, kept in another)."""
    nd = max(len(s) for s in shapes.values())
    padded = {n: (1,) * (nd - len(s)) + s for n, s in shapes.items()}
    dims = [min((s[j] for s in padded.values() if s[j] > 1), default=1) for j in range(nd)]
    return {n: tuple(dims[j + nd - len(s)] if d > 1 else 1 for j, d in enumerate(s))
            for n, s in shapes.items()}


def format_rows(rows: list[dict]) -> str:
    """A markdown table of `run_fused` rows, with each time's speed-up over the best anchor
    (everything that is not stridewise) of its case and dtype, and each first call."""
    best = {}
    for r in rows:
        if "time_s" in r and not r["impl"].startswith("sw"):
            key = (r["case"], r["dtype"])
            best[key] = min(best.get(key, math.inf), r["time_s"])
    lines = ["| case | dtype | implementation | time | GB/s | vs best anchor | first call "
             "| hoisted (bit-identical) |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['dtype']} | {r['impl']} | error: {r['error']} | | | | |")
            continue
        b = best.get((r["case"], r["dtype"]))
        speed = f"{b / r['time_s']:.2f}x" if b else "-"
        first = f"{r['first_s'] * 1e3:.0f} ms" if r.get("first_s") is not None else ""
        hoist = ""
        if r["impl"] == "sw kernel":
            hoist = ", ".join(r["hoisted"]) or "nothing"
            hoist += " (yes)" if r["bitwise"] else " (NO)"
        lines.append(f"| {r['case']} | {r['dtype']} | {r['impl']} | {r['time_s'] * 1e3:.3f} ms | "
                     f"{r['gbps']:.2f} | {speed} | {first} | {hoist} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """python -m stridewise.bench.fused [cpu|cuda] [scale] [--cases a,b] [--dtypes ..]
    [--json PATH]: the table per case as it is measured; --json rewrites PATH after each."""
    import argparse
    import json

    ap = argparse.ArgumentParser(prog="python -m stridewise.bench.fused")
    ap.add_argument("device", nargs="?", default="cpu")
    ap.add_argument("scale", nargs="?", type=float, default=1.0)
    ap.add_argument("--cases", help="comma-separated case names' first words (default: all)")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--json", help="write every row here, rewritten as each part ends")
    a = ap.parse_args(argv)
    pick = a.cases and a.cases.split(",")
    by = {c.name.split()[0]: c for c in CASES}
    cases = [by[n] for n in pick] if pick else CASES
    rows = []

    def log(part):
        rows.extend(part)
        print(format_rows(part), flush=True)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(rows, f, indent=1)

    run_fused(a.device, tuple(a.dtypes.split(",")), a.scale, cases, log)


if __name__ == "__main__":
    main()
