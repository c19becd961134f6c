"""Fused-kernel bench: the seed's three-input expression as one stridewise user kernel, against
the same expression in torch eager (several kernels, temporaries), torch.compile (GPU) and
NumPy (CPU).

`run_fused(device)` returns plain rows that `bench.py` (or `python -m stridewise.bench_fused`)
prints; every stridewise result is checked against the eager result before it is timed.
"""
from __future__ import annotations

import numpy as np

__all__ = ["EXPRESSION", "SHAPES", "run_fused", "format_rows"]

EXPRESSION = "sin(a*b) + sqrt(c) + cos(a) / log(cos(b) + 2)"
# The baselines' shapes (docs/baselines.md) on the GPU (2^28 output elements); a 2^22-element version for the CPU.
SHAPES = {
    "cuda": {"a": (64, 1, 32, 16, 256), "b": (8, 64, 4, 32, 16, 1), "c": (32, 16, 256),
             "out": (8, 64, 4, 32, 16, 256)},
    "cpu": {"a": (8, 1, 32, 16, 64), "b": (4, 8, 4, 32, 16, 1), "c": (32, 16, 64),
            "out": (4, 8, 4, 32, 16, 64)},
}
# float32 runs in float32 math in every implementation; the fused kernel and eager then differ
# by a few ulps of the intermediate values, hence these check tolerances.
RTOL = {"float32": 1e-4, "float64": 1e-11}


def _kernel(dtype: str):
    from . import ElementwiseKernel

    c = {"float32": "float", "float64": "double"}[dtype]
    return ElementwiseKernel(
        f"{c} *out, {c} *a, {c} *b, {c} *c",
        "out[i] = sin(a[i] * b[i]) + sqrt(c[i]) + cos(a[i]) / log(cos(b[i]) + 2)",
        name=f"seed_{dtype}", broadcasting=True)


def _eager(lib):
    def f(a, b, c):
        return lib.sin(a * b) + lib.sqrt(c) + lib.cos(a) / lib.log(lib.cos(b) + 2)
    return f


def run_fused(device: str = "cpu", dtypes=("float32", "float64")) -> list[dict]:
    """Time the fused expression per dtype and implementation.

    Returns
    -------
    Rows of {"dtype", "impl", "time_s" or "error", "gbps", "extra_bytes"}; GB/s counts the
    compulsory bytes (a, b and c read once, out written once), and extra_bytes is the peak
    device memory beyond inputs and output (GPU only; None elsewhere).
    """
    from .bench import time_interleaved

    shapes = SHAPES["cuda" if device.startswith("cuda") else "cpu"]
    rows = []
    for dtype in dtypes:
        rng = np.random.default_rng(0)
        host = {k: (rng.random(s) + 0.1).astype(dtype) for k, s in shapes.items() if k != "out"}
        nbytes = (sum(x.nbytes for x in host.values())
                  + int(np.prod(shapes["out"])) * np.dtype(dtype).itemsize)
        k = _kernel(dtype)
        if device == "cpu":
            a, b, c = host["a"], host["b"], host["c"]
            out = np.empty(shapes["out"], dtype)
            impls = {"stridewise fused": lambda: k(out, a, b, c), "numpy": lambda: _eager(np)(a, b, c)}
            try:
                import torch

                ta, tb, tc = (torch.from_numpy(x) for x in (a, b, c))
                impls["torch eager"] = lambda: _eager(torch)(ta, tb, tc)
            except ImportError:
                pass
            check = _eager(np)(a, b, c)
            got = lambda: k(out, a, b, c)  # noqa: E731
        else:
            import torch

            a, b, c = (torch.from_numpy(host[n]).to(device) for n in "abc")
            out = torch.empty(shapes["out"], dtype=getattr(torch, dtype), device=device)
            eager = _eager(torch)
            impls = {"stridewise fused": lambda: k(out, a, b, c), "torch eager": lambda: eager(a, b, c)}
            try:
                compiled = torch.compile(eager)
                compiled(a, b, c)
                impls["torch.compile"] = lambda: compiled(a, b, c)
            except Exception as e:  # noqa: BLE001 - an anchor that cannot run is reported
                rows.append({"dtype": dtype, "impl": "torch.compile", "error": str(e)[:200]})
            check = eager(a, b, c)
            got = lambda: k(out, a, b, c)  # noqa: E731
        got()
        got_np = out if isinstance(out, np.ndarray) else out.cpu().numpy()
        ref_np = check if isinstance(check, np.ndarray) else check.cpu().numpy()
        if not np.allclose(got_np, ref_np, rtol=RTOL[dtype], atol=0):
            rows.append({"dtype": dtype, "impl": "stridewise fused", "error": "result mismatch"})
            impls.pop("stridewise fused")
        extras = {}
        for name, fn in impls.items():
            extra = None
            if device != "cpu":
                import torch

                torch.cuda.synchronize()
                base = torch.cuda.memory_allocated()
                torch.cuda.reset_peak_memory_stats()
                fn()
                torch.cuda.synchronize()
                extra = torch.cuda.max_memory_allocated() - base
                if name == "stridewise fused":
                    extra = max(0, extra)
                else:  # the eager result itself is the output, not a temporary
                    extra = max(0, extra - int(np.prod(shapes["out"])) * np.dtype(dtype).itemsize)
            extras[name] = extra
        for name, r in time_interleaved(impls, "cuda" if device != "cpu" else "cpu", nbytes).items():
            rows.append({"dtype": dtype, "impl": name, "extra_bytes": extras[name], **r})
    return rows


def format_rows(rows: list[dict]) -> str:
    """A markdown table of `run_fused` rows."""
    lines = ["| dtype | implementation | time | GB/s (compulsory) | extra memory |",
             "|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['dtype']} | {r['impl']} | error: {r['error']} | | |")
            continue
        extra = "-" if r.get("extra_bytes") is None else f"{r['extra_bytes'] / 2**30:.2f} GiB"
        lines.append(f"| {r['dtype']} | {r['impl']} | {r['time_s'] * 1e3:.3f} ms | "
                     f"{r['gbps']:.2f} | {extra} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    print(f"{EXPRESSION} on {dev}\n")
    print(format_rows(run_fused(dev)))
