"""Bench, second matrix: the layouts users bring (`stridewise bench --layouts`).

The first matrix (bench.CASES) covers the broadcast modes on fresh arrays, writing into a
given `out`. These cells are what user code produces instead: a per-channel bias on NCHW and
channels_last activations, broadcasts along a middle axis, batched columns, a 3-d outer
product, misaligned slices and rows of odd length, negative and inner steps, float16 with
float32, two transposed operands, an NCHW tensor beside a channels_last one and, on the CPU,
F-ordered NumPy arrays. Every call allocates its output, as user code does, so the output's
layout is part of what is measured: each cell is verified bit for bit, strides included,
against the owning library's own op before anything is timed. The document has bench.run's
form (print_report, markdown_report and write_json take it as they are).
"""
from __future__ import annotations

import datetime
import math
import sys
import time
import zlib

import numpy as np

from stridewise.bench import matrix as bench
from stridewise.bench import values as bench_values

__all__ = ["LAYOUTS", "run", "run_cell"]


def _perm(x, *axes):
    return x.permute(*axes) if hasattr(x, "permute") else x.transpose(axes)


def _nchw(R, C, channels=64):
    """(N, channels, H, W) with N*channels*H*W about R*C."""
    n = max(1, R * C // (channels * 256 * 512))
    rest = max(1, R * C // (n * channels))
    h = max(1, math.isqrt(rest // 2))
    return n, channels, h, rest // h


def _channels_last(new, R, C, channels):
    n, c, h, w = _nchw(R, C, channels)
    return _perm(new((n, h, w, c), "a"), 0, 3, 1, 2), new((1, c, 1, 1), "b")


def _beside_channels_last(new, R, C, channels):
    """An NCHW tensor beside a channels_last one of its shape (a skip connection across a
    change of memory format): the second is a transpose whose tile dim is the channels."""
    n, c, h, w = _nchw(R, C, channels)
    return new((n, c, h, w), "a"), _perm(new((n, h, w, c), "b"), 0, 3, 1, 2)


# name: (label, builder(new, R, C) -> (a, b), where). `new(shape, role[, dtype])` makes data of
# the cell's dtype (or the one named); where: "any", "cpu" (NumPy only) or "numpy-views"
# (negative steps: NumPy on the CPU, CuPy on the GPU, as torch has none).
LAYOUTS = {
    "bias_nchw": ("NxCxHxW ⊙ 1xCx1x1",
                  lambda new, R, C: (new(_nchw(R, C), "a"), new((1, 64, 1, 1), "b")), "any"),
    "bias_channels_last": ("NxCxHxW channels_last ⊙ 1xCx1x1",
                           lambda new, R, C: _channels_last(new, R, C, 64), "any"),
    # images: three channels, a period shorter than a pack
    "rgb_channels_last": ("Nx3xHxW channels_last ⊙ 1x3x1x1",
                          lambda new, R, C: _channels_last(new, R, C, 3), "any"),
    "beside_channels_last": ("NxCxHxW ⊙ NxCxHxW channels_last, C = 16",
                             lambda new, R, C: _beside_channels_last(new, R, C, 16), "any"),
    "middle_bcast": ("8x(R/8)xC ⊙ 8x1xC",
                     lambda new, R, C: (new((8, R // 8, C), "a"), new((8, 1, C), "b")), "any"),
    "batched_columns": ("8x(R/8)xC ⊙ 8x(R/8)x1",
                        lambda new, R, C: (new((8, R // 8, C), "a"), new((8, R // 8, 1), "b")), "any"),
    "outer_3d": ("Kx1xK ⊙ 1xKx1", lambda new, R, C: (
        new((round((R * C) ** (1 / 3)), 1, round((R * C) ** (1 / 3))), "a"),
        new((1, round((R * C) ** (1 / 3)), 1), "b")), "any"),
    "misaligned": ("(R+1)x(C+1)[1:, 1:] ⊙ (C+1)[1:]",
                   lambda new, R, C: (new((R + 1, C + 1), "a")[1:, 1:], new((C + 1,), "b")[1:]), "any"),
    "odd_rows": ("(R-1)x(C-3) ⊙ C-3",
                 lambda new, R, C: (new((R - 1, C - 3), "a"), new((C - 3,), "b")), "any"),
    "negative_steps": ("RxC[::-1, ::-1] ⊙ RxC",
                       lambda new, R, C: (new((R, C), "a")[::-1, ::-1], new((R, C), "b")), "numpy-views"),
    "inner_step3": ("(Rx3C)[:, ::3] ⊙ RxC",
                    lambda new, R, C: (new((R, 3 * C), "a")[:, ::3], new((R, C), "b")), "any"),
    "f16_with_f32": ("RxC float16 ⊙ C float32",
                     lambda new, R, C: (new((R, C), "a", "float16"), new((C,), "b", "float32")), "any"),
    "both_transposed": ("(CxR).T ⊙ (CxR).T",
                        lambda new, R, C: (new((C, R), "a").T, new((C, R), "b").T), "any"),
    "f_order": ("RxC F-order ⊙ RxC F-order", lambda new, R, C: (
        np.asfortranarray(new((R, C), "a")), np.asfortranarray(new((R, C), "b"))), "cpu"),
}
FIXED_DTYPE = {"f16_with_f32": "float16+float32"}


def _new(lib: str, dtype: str, device: str, seed: int):
    """`new(shape, role, dtype)`: the bench's narrow operands (bench_values), as `lib` arrays."""
    d = bench_values.drawer("numpy" if lib == "numpy" else "torch", seed,
                            "cuda" if device == "cuda" else "cpu")

    def new(shape, role, dt=None):
        x = bench_values.draw("narrow", role, dt or dtype, d, shape)
        if lib == "cupy":
            import cupy
            return cupy.from_dlpack(x)
        return x
    return new


def _lib_for(where: str, device: str) -> str | None:
    if device == "cpu":
        return "numpy"
    return {"any": "torch", "numpy-views": "cupy", "cpu": None}[where]


def _strides(x) -> tuple:
    return tuple(x.stride()) if hasattr(x, "stride") and callable(x.stride) else tuple(x.strides)


def _moved_bytes(x) -> int:
    """Bytes DRAM moves to read x once: its own elements, each strided one in a 32-byte
    sector shared with at most 32 / (step * itemsize) others."""
    if not hasattr(x, "shape"):
        return 0
    shape, strides = tuple(x.shape), _strides(x)
    isz = x.element_size() if hasattr(x, "element_size") else x.itemsize
    if hasattr(x, "strides") and not hasattr(x, "element_size"):
        strides = tuple(s // isz for s in strides)
    own = [(n, abs(s)) for n, s in zip(shape, strides) if s and n > 1]
    elems = math.prod(n for n, _ in own)
    inner = min((s for _, s in own), default=1)
    return elems * (isz if inner <= 1 else min(inner * isz, 32))


def _ceiling(a, b, out, nbytes: int, ceilings: dict) -> tuple[str, float]:
    if "copy" not in ceilings:
        return "", 0.0
    out_bytes = bench.compulsory_bytes(None, None, out)
    if (nbytes - out_bytes) * 8 < out_bytes and "write" in ceilings:
        return "write", ceilings["write"]
    moved = _moved_bytes(a) + _moved_bytes(b) + out_bytes
    if moved > nbytes * 1.01:
        return "copy, sector-adjusted", ceilings["copy"] * nbytes / moved
    return "copy", ceilings["copy"]


def _anchors(lib: str, a, b, dtype: str, device: str, compile_times: dict) -> dict:
    """name -> allocating callable (or the Exception that stands for it)."""
    if lib == "numpy":
        anchors = {"numpy": lambda: np.remainder(a, b)}
        try:
            import torch
            ta, tb = bench._to_torch(a), bench._to_torch(b)
            anchors["torch"] = lambda: torch.remainder(ta, tb)
        except Exception as e:  # noqa: BLE001
            anchors["torch"] = e
        return anchors
    if lib == "cupy":
        import cupy
        return {"cupy": lambda: cupy.remainder(a, b),
                "torch": ValueError("n/a: torch has no negative steps")}
    import torch
    anchors = {"torch": lambda: torch.remainder(a, b)}
    try:
        torch._dynamo.reset()
        fn = torch.compile(lambda x, y: torch.remainder(x, y), dynamic=False)
        t = time.perf_counter()
        fn(a, b)
        torch.cuda.synchronize()
        compile_times["torch.compile"] = time.perf_counter() - t
        anchors["torch.compile"] = lambda: fn(a, b)
    except Exception as e:  # noqa: BLE001
        anchors["torch.compile"] = e
    if "bfloat16" not in dtype:
        try:
            import cupy
            ca, cb = cupy.from_dlpack(a), cupy.from_dlpack(b)
            anchors["cupy"] = lambda: cupy.remainder(ca, cb)
        except Exception as e:  # noqa: BLE001
            anchors["cupy"] = e
    return anchors


def _reference(lib: str, a, b):
    if lib == "numpy":
        return np.remainder(a, b)
    if lib == "cupy":
        import cupy
        return cupy.remainder(a, b)
    import torch
    return torch.remainder(a, b)


def _same(x, ref, lib: str, a, b) -> bool:
    if lib == "cupy":
        # values against NumPy on the host (stridewise's convention for CuPy arrays; CuPy's
        # own float16 remainder differed from it in some bits on the H200), strides by CuPy's op
        return bool(bench.same_bits(x.get(), np.remainder(a.get(), b.get())))
    return bench.same_bits(x, ref)


def run_cell(case: str, dtype: str, device: str, log2: int, ceilings: dict) -> dict | None:
    """Build, verify (values and strides) and time one cell; None where it does not apply."""
    import stridewise as sw

    label, build, where = LAYOUTS[case]
    lib = _lib_for(where, device)
    if lib is None:
        return None
    R, C = bench._shape_rc(log2)
    a, b = build(_new(lib, dtype, device, zlib.crc32(f"{case}/{dtype}".encode())), R, C)
    dtype = FIXED_DTYPE.get(case, dtype)
    cell = {"case": case, "dtype": dtype, "label": label, "lib": lib,
            "a_shape": list(a.shape), "b_shape": list(b.shape), "impls": {}, "compile_s": {}}
    ref = _reference(lib, a, b)
    cell["out_shape"], cell["ref_strides"] = list(ref.shape), list(_strides(ref))
    nbytes = bench.compulsory_bytes(a, b, ref)
    cell["bytes"] = nbytes
    sync = (lambda: None) if device == "cpu" else __import__("torch").cuda.synchronize
    try:
        t = time.perf_counter()
        got = sw.remainder(a, b)
        sync()
        cell["compile_s"]["stridewise"] = time.perf_counter() - t
        cell["strides"] = list(_strides(got))
        cell["strides_match"] = cell["strides"] == cell["ref_strides"]
        cell["verified"] = _same(got, ref, lib, a, b) and cell["strides_match"]
        if not cell["verified"]:
            cell["impls"]["stridewise"] = {"error": "values or strides differ from the library's "
                                                    "own op; not timed"}
        del got
    except Exception as e:  # noqa: BLE001
        cell["verified"] = False
        cell["impls"]["stridewise"] = {"error": f"{type(e).__name__}: {e}"[:300]}
    anchors = _anchors(lib, a, b, dtype, device, cell["compile_s"])
    # torch.compile may be faster by being inexact (bfloat16): count its results that differ
    # from eager, as the first matrix does, so no one takes an inexact time for a bar
    if callable(anchors.get("torch.compile")):
        cell["differs_from_eager"] = {"torch.compile": bench.differing(anchors["torch.compile"](), ref)}
    if lib == "torch" and callable(anchors.get("cupy")):   # and CuPy's: a - floor(a / b) b for floats
        import torch
        cell.setdefault("differs_from_eager", {})["cupy"] = bench.differing(
            torch.from_dlpack(anchors["cupy"]()), ref)
    fns = {"stridewise": lambda: sw.remainder(a, b)} if cell["verified"] else {}
    for name, fn in anchors.items():
        if isinstance(fn, Exception):
            cell["impls"][name] = {"error": str(fn)[:200]}
        else:
            fns[name] = fn
    cell["impls"].update(bench.time_interleaved(fns, device, nbytes))
    cname, cgbps = _ceiling(a, b, ref, nbytes, ceilings)
    cell["ceiling"], cell["ceiling_gbps"] = cname, cgbps
    r = cell["impls"].get("stridewise", {})
    if "time_s" in r:
        if cgbps:
            r["pct_ceiling"] = 100 * r["gbps"] / cgbps
            r["pct_copy"] = 100 * r["gbps"] / ceilings["copy"]
        cell["speedup"] = {k: x["time_s"] / r["time_s"] for k, x in cell["impls"].items()
                           if k != "stridewise" and "time_s" in x}
    return cell


def run(device: str = "auto", cases=None, dtypes=None, log2: int | None = None,
        progress: bool = True) -> dict:
    """The layouts matrix as a bench document (bench.run's form, "matrix": "layouts")."""
    device = bench.resolve_device(device)
    cases = list(cases or LAYOUTS)
    dtypes = list(dtypes or bench.DTYPES)
    for c in cases:
        if c not in LAYOUTS:
            raise ValueError(f"unknown layout case {c!r}; choose from {', '.join(LAYOUTS)}")
    for d in dtypes:
        if d not in bench.DTYPES:
            raise ValueError(f"unknown dtype {d!r}; choose from {', '.join(bench.DTYPES)}")
    log2 = log2 or (bench.GPU_LOG2 if device == "cuda" else bench.CPU_LOG2)
    doc = {"meta": {**bench._describe_device(device), "matrix": "layouts",
                    "date": datetime.datetime.now().isoformat(timespec="seconds"),
                    "command": " ".join(["stridewise", *sys.argv[1:]]) if sys.argv else "",
                    "commit": bench._commit(), "log2_elements": log2,
                    "loadavg_start": bench._loadavg()},
           "ceilings": {}, "cells": []}
    work = [(c, d) for c in cases for d in (dtypes[:1] if c in FIXED_DTYPE else dtypes)]
    with bench._progress(progress) as bar:
        task = bar.add_task("ceilings", total=len(work) + 1)
        doc["ceilings"] = (bench.ceilings_cuda() if device == "cuda"
                           else bench.ceilings_cpu(min(25, log2 + 2)))
        bar.advance(task)
        for case, dtype in work:
            bar.update(task, description=f"{case} {dtype}")
            cell = run_cell(case, dtype, device, log2, doc["ceilings"])
            if cell is not None:
                doc["cells"].append(cell)
            if device == "cuda":
                import torch
                torch.cuda.empty_cache()
            bar.advance(task)
    doc["meta"]["loadavg_end"] = bench._loadavg()
    return doc
