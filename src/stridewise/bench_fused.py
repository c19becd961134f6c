"""Fused-expression bench: expressions users write, each as one stridewise user kernel (with and
without broadcast-invariant hoisting) and through sw.fuse, against eager evaluation (NumPy,
torch), numexpr on the CPU, and torch.compile, CuPy's ElementwiseKernel and cupy.fuse on the GPU.

`run_fused(device)` returns plain rows that `python -m stridewise.bench_fused [cpu|cuda]
[scale]` prints; every result is checked against the eager one before it is timed, and the
hoisted kernel against the unhoisted one bit for bit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

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
    """One expression: its arguments' shapes per device (2^28 outputs on the GPU, 2^21 on the
    CPU), the user kernel's text, and the same expression in each library's eager ops."""

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
    Case("norm per channel", {"cuda": {"x": (64, 256, 16384), "mean": (256, 1), "var": (256, 1),
                                       "gamma": (256, 1), "beta": (256, 1)},
                              "cpu": {"x": (8, 64, 4096), "mean": (64, 1), "var": (64, 1),
                                      "gamma": (64, 1), "beta": (64, 1)}},
         "T x, T mean, T var, T gamma, T beta, T eps",
         "out = (x - mean) * rsqrt(var + eps) * gamma + beta", _norm, _fused_norm,
         scalars={"eps": 1e-5}, numexpr="(x - mean) * (1 / sqrt(var + eps)) * gamma + beta",
         preamble=_RSQRT),
    Case("gelu + column bias", {"cuda": {"x": (16384, 16384), "b": (16384,)},
                                "cpu": {"x": (2048, 1024), "b": (1024,)}},
         "T x, T b",
         "T v = x + b; out = (T)0.5 * v * (1 + tanh((T)0.7978845608028654 * (v + (T)0.044715 * v * v * v)))",
         _gelu, _gelu_fused, numexpr="0.5 * (x + b) * (1 + tanh(0.7978845608028654 * ((x + b) + "
         "0.044715 * (x + b) * (x + b) * (x + b))))"),
    Case("distance on a grid", {"cuda": {"x": (1, 16384), "y": (16384, 1)},
                                "cpu": {"x": (1, 1024), "y": (2048, 1)}},
         "T x, T y, T cx, T cy", "out = sqrt((x - cx)*(x - cx) + (y - cy)*(y - cy))", _dist, _dist,
         scalars={"cx": 0.3, "cy": -0.2}, numexpr="sqrt((x - cx)**2 + (y - cy)**2)"),
    Case("phase wrap per row", {"cuda": {"omega": (16384, 1), "t": (1, 16384), "phi": (16384, 1)},
                                "cpu": {"omega": (2048, 1), "t": (1, 1024), "phi": (2048, 1)}},
         "T omega, T t, T phi, T period",
         "T r = fmod(omega * t + phi, period); out = r != 0 && ((r < 0) != (period < 0)) ? r + period : r",
         _phase, _phase, scalars={"period": 2 * math.pi}, circular=2 * math.pi,
         numexpr=None),
]
RTOL = {"float32": 2e-4, "float64": 1e-11}


def _close(got, want, dtype, period):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    d = np.abs(got - want)
    if period:
        d = np.minimum(d, np.abs(period - d))
    return bool(np.all(d <= RTOL[dtype] * (1 + np.abs(want))))


def _host(case: Case, shapes: dict, dtype: str, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {k: (rng.random(s) + 0.1).astype(dtype) for k, s in shapes.items()}


def _impls(case, device, dtype, host, out_shape):
    """name -> callable, the reference result and the stridewise outputs to check."""
    import stridewise as sw

    k = sw.ElementwiseKernel(case.params, "T out", case.operation, preamble=case.preamble,
                             name=case.name.split()[0])
    scal = list(case.scalars.values())
    fused = sw.fuse(lambda *a: case.fused(sw, *a), name=f"fused_{case.name.split()[0]}")
    off = sw.Auto(hoist=False)
    impls, checks = {}, {}
    if device == "cpu":
        args = list(host.values())
        out, out_off, out_f = (np.empty(out_shape, dtype) for _ in range(3))
        impls["sw kernel"] = lambda: k(*args, *scal, out)
        impls["sw kernel unhoisted"] = lambda: k(*args, *scal, out_off, algorithm=off)
        impls["sw.fuse"] = lambda: fused(*args, *scal, out=out_f)
        impls["numpy"] = lambda: case.eager(np, *args, *scal)
        try:
            import numexpr

            if case.numexpr:
                env = dict(host, **case.scalars)
                impls["numexpr"] = lambda: numexpr.evaluate(case.numexpr, local_dict=env)
        except ImportError:
            pass
        try:
            import torch

            targs = [torch.from_numpy(v) for v in args]
            impls["torch eager"] = lambda: case.eager(torch, *targs, *scal)
        except ImportError:
            pass
        ref = case.eager(np, *args, *scal)
        to_np = np.asarray
    else:
        import torch

        tdt = getattr(torch, dtype)
        args = [torch.from_numpy(v).to(device) for v in host.values()]
        out, out_off, out_f = (torch.empty(out_shape, dtype=tdt, device=device) for _ in range(3))
        impls["sw kernel"] = lambda: k(*args, *scal, out)
        impls["sw kernel unhoisted"] = lambda: k(*args, *scal, out_off, algorithm=off)
        impls["sw.fuse"] = lambda: fused(*args, *scal, out=out_f)
        eager = lambda *a: case.eager(torch, *a)   # noqa: E731
        impls["torch eager"] = lambda: eager(*args, *scal)
        try:
            compiled = torch.compile(eager)
            compiled(*args, *scal)
            impls["torch.compile"] = lambda: compiled(*args, *scal)
        except Exception as e:  # noqa: BLE001 - an anchor that cannot run is reported
            impls["torch.compile"] = e
        try:
            import cupy

            cargs = [cupy.asarray(v) for v in args]
            cout = cupy.asarray(out_f).copy()
            ck = cupy.ElementwiseKernel(case.params, "T out", case.operation,
                                        preamble=case.preamble, name=f"cupy_{k.name}")
            impls["cupy kernel"] = lambda: ck(*cargs, *scal, cout)
            cf = cupy.fuse(lambda *a: case.fused(cupy, *a))
            impls["cupy.fuse"] = lambda: cf(*cargs, *scal)
        except Exception as e:  # noqa: BLE001
            impls["cupy"] = e
        ref = eager(*args, *scal)

        def to_np(x):
            return x.cpu().numpy() if hasattr(x, "cpu") else np.asarray(x.get())
    for fn in (impls["sw kernel"], impls["sw kernel unhoisted"], impls["sw.fuse"]):
        fn()
    checks = {"sw kernel": to_np(out), "sw kernel unhoisted": to_np(out_off), "sw.fuse": to_np(out_f)}
    hoisted = sw.explain(k, *args, *scal, out).hoisted
    return impls, to_np(ref), checks, hoisted


def run_fused(device: str = "cpu", dtypes=("float32", "float64"), scale: float = 1.0,
              cases=None) -> list[dict]:
    """Time every case per dtype and implementation.

    scale: the CPU shapes' largest dim times this (a smaller run on a busy host).

    Returns
    -------
    Rows of {"case", "dtype", "impl", "time_s" or "error", "gbps", "hoisted", "bitwise"}: GB/s
    counts the compulsory bytes (every argument once, the output once); "hoisted" lists what
    the kernel computes once (text and shape), "bitwise" whether hoisted == unhoisted.
    """
    from .bench import time_interleaved

    rows = []
    where = "cuda" if device.startswith("cuda") else "cpu"
    for case in cases or CASES:
        shapes = dict(case.shapes[where])
        if where == "cpu" and scale != 1.0:
            shapes = {n: tuple(max(1, int(d * scale)) if d == max(s) and d > 1 else d for d in s)
                      for n, s in shapes.items()}
            shapes = _agree(shapes)
        out_shape = np.broadcast_shapes(*shapes.values())
        for dtype in dtypes:
            host = _host(case, shapes, dtype)
            nbytes = (sum(v.nbytes for v in host.values())
                      + int(np.prod(out_shape)) * np.dtype(dtype).itemsize)
            impls, ref, checks, hoisted = _impls(case, device, dtype, host, out_shape)
            bitwise = checks["sw kernel"].tobytes() == checks["sw kernel unhoisted"].tobytes()
            for name, got in checks.items():
                if not _close(got, ref, dtype, case.circular):
                    rows.append({"case": case.name, "dtype": dtype, "impl": name,
                                 "error": "result mismatch"})
                    impls.pop(name)
            errors = {n: f for n, f in impls.items() if isinstance(f, Exception)}
            for n, e in errors.items():
                rows.append({"case": case.name, "dtype": dtype, "impl": n, "error": str(e)[:120]})
                impls.pop(n)
            info = {"hoisted": [f"{h.text} {h.shape}" for h in hoisted], "bitwise": bitwise}
            for name, r in time_interleaved(impls, where, nbytes).items():
                rows.append({"case": case.name, "dtype": dtype, "impl": name, **info, **r})
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
    (everything that is not stridewise) of its case and dtype."""
    best = {}
    for r in rows:
        if "time_s" in r and not r["impl"].startswith("sw"):
            key = (r["case"], r["dtype"])
            best[key] = min(best.get(key, math.inf), r["time_s"])
    lines = ["| case | dtype | implementation | time | GB/s | vs best anchor | hoisted (bit-identical) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['dtype']} | {r['impl']} | error: {r['error']} | | | |")
            continue
        b = best.get((r["case"], r["dtype"]))
        speed = f"{b / r['time_s']:.2f}x" if b else "-"
        hoist = ""
        if r["impl"] == "sw kernel":
            hoist = ", ".join(r["hoisted"]) or "nothing"
            hoist += " (yes)" if r["bitwise"] else " (NO)"
        lines.append(f"| {r['case']} | {r['dtype']} | {r['impl']} | {r['time_s'] * 1e3:.3f} ms | "
                     f"{r['gbps']:.2f} | {speed} | {hoist} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    for c in CASES:
        print(format_rows(run_fused(dev, scale=scale, cases=[c])), flush=True)
