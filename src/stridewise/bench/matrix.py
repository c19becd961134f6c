"""Bench: stridewise against what users would otherwise run, case by case (docs/baselines.md).

`run(...)` measures the case matrix (broadcast modes x dtypes) for `remainder` and returns a
plain dict (the JSON document); `print_report`, `write_json` and `plot` present it. On a GPU
the anchors are torch eager, torch.compile, CuPy and the naive materialized path, with the
copy / read / write ceilings measured in the same run; on the CPU they are NumPy and torch.
Every stridewise result is checked bit for bit before it is timed, so a wrong kernel never
posts a number. The implementations of a cell are timed in interleaved rounds, on either device.
"""
from __future__ import annotations

import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import zlib

import numpy as np

from stridewise.bench import values as bench_values

__all__ = ["CASES", "DTYPES", "run", "print_report", "write_json", "plot"]

DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")
# Selectable with --dtypes, outside the default matrix. bool has no remainder in torch: its
# cells measure bitwise_xor (NumPy's and torch's xor on bool), the other dtypes remainder.
EXTRA_DTYPES = ("int8", "uint8", "bool")
_OP = {"bool": "bitwise_xor"}


def op_name(dtype: str) -> str:
    """The op a cell of `dtype` measures (the same name in stridewise, NumPy, torch, CuPy)."""
    return _OP.get(dtype, "remainder")

# name: (a ⊙ b label in output rows R and columns C, builder(new, R, C) -> (a, b)).
# `new(shape, role)` makes random data; role "a" is the dividend, "b" the divisor.
CASES = {
    "contiguous": ("RxC ⊙ RxC", lambda new, R, C: (new((R, C), "a"), new((R, C), "b"))),
    "scalar_tensor": ("RxC ⊙ 0-d tensor", lambda new, R, C: (new((R, C), "a"), new((), "b"))),
    "python_scalar": ("RxC ⊙ Python scalar", lambda new, R, C: (new((R, C), "a"), None)),
    "row": ("RxC ⊙ C", lambda new, R, C: (new((R, C), "a"), new((C,), "b"))),
    "column": ("RxC ⊙ Rx1", lambda new, R, C: (new((R, C), "a"), new((R, 1), "b"))),
    "outer": ("Rx1 ⊙ 1xC", lambda new, R, C: (new((R, 1), "a"), new((1, C), "b"))),
    "short_rows": ("(RC/6)x6 ⊙ 1x6", lambda new, R, C: (new((R * C // 6, 6), "a"), new((1, 6), "b"))),
    "crossed_3d": ("(R/16)x16xC ⊙ (R/16)x1xC",
                   lambda new, R, C: (new((R // 16, 16, C), "a"), new((R // 16, 1, C), "b"))),
    "permuted": ("(CxR).T ⊙ RxC", lambda new, R, C: (new((C, R), "a").T, new((R, C), "b"))),
    "strided_slice": ("(Rx2C)[:, ::2] ⊙ RxC",
                      lambda new, R, C: (new((R, 2 * C), "a")[:, ::2], new((R, C), "b"))),
}

# The Python-scalar divisor, per kind; negative, so the sign adjustment is exercised.
_PY_SCALAR = {"f": -2.75, "i": -7, "b": True}

GPU_LOG2 = 27        # docs/baselines.md: every output 2^27 elements
CPU_LOG2 = 22
QUICK_LOG2 = {"cuda": 24, "cpu": 18}
QUICK_CASES = ("contiguous", "row", "outer", "short_rows", "permuted")
QUICK_DTYPES = ("float16", "float32", "int64")


def _shape_rc(log2: int) -> tuple[int, int]:
    """Output rows and columns for 2^log2 elements (R >= 16 so the 3-d case splits)."""
    log2 = max(log2, 8)
    return 2 ** (log2 // 2), 2 ** ((log2 + 1) // 2)


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


# ---------------------------------------------------------------- data

def _np_dtype(dtype: str):
    if dtype == "bfloat16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return np.dtype(dtype)


def _make_case(case: str, dtype: str, log2: int, lib: str, device: str = "cpu", values: str = "narrow"):
    """(a, b, out) of one case, operands drawn from value distribution `values`
    (bench_values.VALUES); b is a Python number in the python_scalar case."""
    R, C = _shape_rc(log2)
    seed = zlib.crc32(f"{case}/{dtype}".encode() + (b"" if values == "narrow" else f"/{values}".encode()))
    d = bench_values.drawer(lib, seed, device)
    new = lambda shape, role: bench_values.draw(values, role, dtype, d, shape)   # noqa: E731
    a, b = CASES[case][1](new, R, C)
    if b is None:
        b = _PY_SCALAR["f" if _is_float(dtype) else "b" if dtype == "bool" else "i"]
        b = -b if dtype.startswith("uint") else b     # in an unsigned dtype's range (NEP 50)
    shape = np.broadcast_shapes(tuple(a.shape), tuple(getattr(b, "shape", ())))
    # The output takes the library's promotion (NumPy makes bfloat16 ⊙ float a float32).
    if lib == "numpy":
        with np.errstate(all="ignore"):
            out = np.empty(shape, getattr(np, op_name(dtype))(a.ravel()[:1], b).dtype)
    else:
        import torch
        out = torch.empty(shape, dtype=torch.result_type(a, b), device=device)
    return a, b, out


def _to_torch(x):
    """A NumPy array as a torch CPU tensor sharing memory (strides kept); numbers pass through."""
    import torch
    if not isinstance(x, np.ndarray):
        return x
    if x.dtype == _np_dtype("bfloat16"):
        return torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(x)


def compulsory_bytes(a, b, out) -> int:
    """Each input's own elements read once plus the output written once."""
    def nbytes(x):
        if not hasattr(x, "shape"):
            return 0
        n = math.prod(x.shape)
        return n * (x.itemsize if hasattr(x, "itemsize") else x.element_size())
    return nbytes(a) + nbytes(b) + nbytes(out)


# ---------------------------------------------------------------- verification

def same_bits(x, ref) -> bool:
    """True when x and ref are equal bit for bit, except that any NaN matches any NaN."""
    if type(x).__module__.startswith("torch") and type(ref).__module__.startswith("torch"):
        return _same_bits_torch(x, ref)
    x, ref = _as_numpy(x), _as_numpy(ref)
    if x.shape != ref.shape or x.dtype != ref.dtype:
        return False
    if x.dtype.kind in "iu":
        return bool(np.array_equal(x, ref))
    ints = np.dtype(f"u{x.dtype.itemsize}")
    xb, rb = x.view(ints), ref.view(ints)
    xf, rf = x.astype(np.float32), ref.astype(np.float32)
    return bool(np.all((xb == rb) | (np.isnan(xf) & np.isnan(rf))))


def differing(x, ref) -> int:
    """How many elements of x differ from ref bit for bit (any NaN matches any NaN)."""
    import torch
    x, ref = x.contiguous(), ref.contiguous()
    if not x.dtype.is_floating_point:
        return int((x != ref).sum())
    ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    same = (x.view(ints) == ref.view(ints)) | (torch.isnan(x) & torch.isnan(ref))
    return int((~same).sum())


def _same_bits_torch(x, ref) -> bool:
    """same_bits on the tensors' own device (a GPU-sized result never goes to the host)."""
    import torch
    if x.shape != ref.shape or x.dtype != ref.dtype:
        return False
    if not x.dtype.is_floating_point:
        return bool(torch.equal(x, ref))
    ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    x, ref = x.contiguous(), ref.contiguous()
    same = (x.view(ints) == ref.view(ints)) | (torch.isnan(x) & torch.isnan(ref))
    return bool(same.all())


def _as_numpy(x):
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x)
    import torch
    x = x.detach().cpu().contiguous()
    if x.dtype == torch.bfloat16:
        return x.view(torch.int16).numpy().view(_np_dtype("bfloat16"))
    return x.numpy()


# ---------------------------------------------------------------- timing

def time_cpu(fn, budget: float = 0.4, min_reps: int = 3, max_reps: int = 15) -> float:
    """Median seconds of `fn()` after one warm-up, with as many runs as fit `budget` (bounded)."""
    t = time.perf_counter()
    fn()
    first = time.perf_counter() - t
    reps = int(min(max_reps, max(min_reps, budget / max(first, 1e-9))))
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _error(e: Exception) -> dict:
    """An anchor's failure as a record: the exception's type and first line."""
    return {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}


def _batch_cpu(fn):
    """Warm `fn` up; return a timer of one call, in seconds."""
    fn()

    def batch():
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    return batch


def _batch_cuda(fn, warmup: int = 3):
    """Warm `fn` up; return a timer of one batch of calls lasting about a millisecond, in
    seconds per call (CUDA events around the batch, synchronized after it)."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def run(inner):
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / inner
    for _ in range(warmup):
        fn()
    inner = max(1, min(200, int(1e-3 / max(run(1), 1e-7))))
    return lambda: run(inner)


# Interleaved rounds per device: (seconds the rounds may take, fewest rounds, most rounds).
_ROUNDS = {"cpu": (1.5, 5, 15), "cuda": (0.2, 15, 41)}


def time_interleaved(fns: dict, device: str, nbytes: int | None = None) -> dict:
    """Median seconds per call of each callable, timed in interleaved rounds.

    Parameters
    ----------
    fns : name -> a callable, or a list of callables to cycle (buffer sets rotated past a cache).
    device : "cuda" (batches of about a millisecond between CUDA events) or "cpu" (one call).
    nbytes : bytes one call moves; when given, each timed record also holds its GB/s.

    Returns
    -------
    name -> {"time_s": median[, "gbps": ...]} or {"error": "..."}: a callable that raises is
    recorded, never raised, and left out of the rounds.

    Each round times every callable once, starting one further along the list each round, so
    a drifting machine (another job's burst, a GPU's clocks) touches every implementation
    alike instead of whichever ran then.
    """
    device = "cuda" if device == "cuda" else "cpu"
    make = _batch_cuda if device == "cuda" else _batch_cpu
    res, live = {}, {}
    for name, fn in fns.items():
        try:
            live[name] = make(_cycle(fn))
        except Exception as e:  # noqa: BLE001 - any anchor failure is recorded, not raised
            res[name] = _error(e)
    names = list(live)
    if not names:
        return res
    t = time.perf_counter()
    times = {name: [live[name]()] for name in names}
    budget, lo, hi = _ROUNDS[device]
    rounds = int(min(hi, max(lo, budget / max(time.perf_counter() - t, 1e-9))))
    for r in range(1, rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times[name].append(live[name]())
    for name, ts in times.items():
        res[name] = {"time_s": statistics.median(ts)}
        if nbytes is not None:
            res[name]["gbps"] = nbytes / res[name]["time_s"] / 1e9
    return res


def time_cuda(fns, reps: int = 15, warmup: int = 3) -> float:
    """Median seconds per call, timed with CUDA events, cycling through `fns`.

    Pass several closures over different buffers to rotate them when one set fits in L2.
    Calls are batched so that one timed batch lasts about a millisecond: below that the
    figure is the per-call throughput including host overhead, which is what a user sees.
    """
    batch = _batch_cuda(_cycle(fns), warmup)
    return statistics.median(batch() for _ in range(reps))


# ---------------------------------------------------------------- anchors per backend

def _cpu_anchors(a, b, out, op: str = "remainder"):
    """name -> zero-argument callable, for NumPy (and torch CPU when installed).

    Every anchor writes `out`, the array stridewise writes (see _gpu_anchors).
    """
    def numpy_remainder():
        with np.errstate(all="ignore"):
            return getattr(np, op)(a, b, out=out)
    anchors = {"numpy": numpy_remainder}
    try:
        import torch
    except ImportError:
        return anchors
    ta, tb, to = _to_torch(a), _to_torch(b), _to_torch(out)
    anchors["torch"] = lambda: getattr(torch, op)(ta, tb, out=to)
    return anchors


def _torch_remainder(a, b) -> np.ndarray:
    """torch's remainder written from its definition, exactly, on NumPy: fmod (16-bit floats
    in float32), then b added where a nonzero result's sign differs from b's; integer x % 0
    and x % -1 give 0."""
    dt = np.result_type(a, b)
    with np.errstate(all="ignore"):
        if dt.kind in "iu":
            a, b = np.broadcast_arrays(a.astype(dt), b.astype(dt))
            safe = np.where((b == 0) | (b == -1), 1, b)
            r = np.fmod(a, safe)
            r = np.where((r != 0) & ((r < 0) != (safe < 0)), r + safe, r)
            return np.where((b == 0) | (b == -1), 0, r).astype(dt)
        wide = np.float64 if dt == np.float64 else np.float32
        x, y = a.astype(wide), b.astype(wide)
        m = np.fmod(x, y)
        return np.where((m != 0) & ((m < 0) != (y < 0)), m + y, m).astype(dt)


def _gpu_anchors(a, b, out, dtype: str, compile_times: dict):
    """name -> callable (or an Exception recorded as the anchor's failure) for one CUDA case.

    Every anchor that takes an output writes `out`, the tensor stridewise writes: which of two
    buffers a kernel wrote moved torch and stridewise alike by up to 1.4%.
    """
    import torch

    f = getattr(torch, op_name(dtype))
    anchors = {"torch": lambda: f(a, b, out=out)}
    try:
        torch._dynamo.reset()
        if isinstance(b, (int, float)):
            fn = torch.compile(lambda x: f(x, b), dynamic=False)
            args = (a,)
        else:
            fn = torch.compile(lambda x, y: f(x, y), dynamic=False)
            args = (a, b)
        t = time.perf_counter()
        fn(*args)
        torch.cuda.synchronize()
        compile_times["torch.compile"] = time.perf_counter() - t
        anchors["torch.compile"] = lambda: fn(*args)
    except Exception as e:  # noqa: BLE001
        anchors["torch.compile"] = e
    if dtype != "bfloat16":
        try:
            import cupy
            ca = cupy.from_dlpack(a)
            cb = b if isinstance(b, (int, float)) else cupy.from_dlpack(b)
            co = cupy.from_dlpack(out)
            anchors["cupy"] = lambda: getattr(cupy, op_name(dtype))(ca, cb, out=co)
        except Exception as e:  # noqa: BLE001
            anchors["cupy"] = e
    if isinstance(b, (int, float)):
        anchors["naive"] = ValueError("n/a: nothing to materialize")
    else:
        shape = out.shape
        anchors["naive"] = lambda: f(
            a.expand(shape).contiguous(), b.expand(shape).contiguous(), out=out)
    return anchors


def ceilings_cuda(nbytes: int = 1 << 30, reps: int = 10) -> dict:
    """Copy (bytes read + written), read-only (torch sum) and write-only (fill_) GB/s."""
    import torch

    src = torch.ones(nbytes // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    out = {}
    out["copy"] = 2 * nbytes / time_cuda([lambda: dst.copy_(src)], reps) / 1e9
    out["read"] = nbytes / time_cuda([lambda: src.sum()], reps) / 1e9
    out["write"] = nbytes / time_cuda([lambda: dst.fill_(1.0)], reps) / 1e9
    del src, dst
    torch.cuda.empty_cache()
    return out


def ceilings_cpu(log2: int = 25) -> dict:
    """Copy GB/s on the CPU (bytes read + written), with all threads torch uses if present."""
    n = 1 << log2
    src = np.ones(n, np.float32)
    dst = np.empty_like(src)
    try:
        import torch
        ts, td = torch.from_numpy(src), torch.from_numpy(dst)
        t = time_cpu(lambda: td.copy_(ts), budget=0.3)
    except ImportError:
        t = time_cpu(lambda: np.copyto(dst, src), budget=0.3)
    return {"copy": 2 * src.nbytes / t / 1e9}


# ---------------------------------------------------------------- the matrix

def _ceiling_for(case: str, a, b, out, nbytes: int, ceilings: dict) -> tuple[str, float]:
    """Which ceiling a case is held to, in compulsory-byte GB/s: the write ceiling for an outer
    product (it reads almost nothing), a sector-adjusted copy for a strided slice, else copy."""
    if "copy" not in ceilings:
        return "", 0.0
    if case == "outer" and "write" in ceilings:
        return "write", ceilings["write"]
    if case == "strided_slice":
        # A stride-2 read moves whole 32-byte sectors: DRAM carries all of a's base row.
        moved = nbytes + math.prod(a.shape) * (a.element_size() if hasattr(a, "element_size") else a.itemsize)
        return "copy, sector-adjusted", ceilings["copy"] * nbytes / moved
    return "copy", ceilings["copy"]


def run_cell(case: str, dtype: str, device: str, log2: int, ceilings: dict, values: str = "narrow") -> dict:
    """Build, verify and time one (case, dtype, value distribution); returns the cell's record."""
    import stridewise as sw

    lib = "numpy" if device == "cpu" else "torch"
    op = op_name(dtype)
    a, b, out = _make_case(case, dtype, log2, lib, "cuda" if device == "cuda" else "cpu", values)
    nbytes = compulsory_bytes(a, b, out)
    cell = {"case": case, "dtype": dtype, "op": op, "values": values, "label": CASES[case][0],
            "a_shape": list(a.shape), "b_shape": list(getattr(b, "shape", ())),
            "out_shape": list(out.shape), "bytes": nbytes, "impls": {}, "compile_s": {}}
    if device == "cuda":
        import torch
        ref = getattr(torch, op)(a, b)                   # torch on CUDA is the exact oracle
        anchors = _gpu_anchors(a, b, out, dtype, cell["compile_s"])
        sync = torch.cuda.synchronize
    else:
        with np.errstate(all="ignore"):                  # specials: NaN is the answer
            ref = getattr(np, op)(a, b)                  # NumPy convention, exact
        anchors = _cpu_anchors(a, b, out, op)
        sync = lambda: None  # noqa: E731
    try:
        t = time.perf_counter()
        getattr(sw, op)(a, b, out=out)
        sync()
        cell["compile_s"]["stridewise"] = time.perf_counter() - t
        cell["verified"] = same_bits(out, ref)
        if not cell["verified"]:
            cell["impls"]["stridewise"] = {"error": "result differs from the reference; not timed"}
    except Exception as e:  # noqa: BLE001
        cell["verified"] = False
        cell["impls"]["stridewise"] = {"error": f"{type(e).__name__}: {e}"[:300]}
    # torch.compile may be faster by being inexact: count its results that differ from eager
    if device == "cuda" and callable(anchors.get("torch.compile")):
        cell["differs_from_eager"] = {"torch.compile": differing(anchors["torch.compile"](), ref)}
    # so may CuPy (its float remainder is a - floor(a / b) b): its anchor writes into out
    if device == "cuda" and callable(anchors.get("cupy")):
        anchors["cupy"]()
        cell.setdefault("differs_from_eager", {})["cupy"] = differing(out, ref)
    # torch CPU, likewise, against the exact result in its own convention
    # (the anchor writes into out); remainder's exact result in torch's convention, another
    # op's is the reference itself (bool's xor)
    if device == "cpu" and "torch" in anchors and isinstance(b, np.ndarray):
        anchors["torch"]()
        exact = _torch_remainder(a, b) if op == "remainder" else ref
        cell["differs_from_exact"] = {"torch": differing(_to_torch(out), _to_torch(exact))}
    del ref
    fns = {"stridewise": lambda: getattr(sw, op)(a, b, out=out)} if cell["verified"] else {}
    for name, fn in anchors.items():
        if isinstance(fn, Exception):
            cell["impls"][name] = {"error": str(fn)[:200]}
        else:
            fns[name] = fn
    cell["impls"].update(time_interleaved(fns, device, nbytes))
    cname, cgbps = _ceiling_for(case, a, b, out, nbytes, ceilings)
    cell["ceiling"], cell["ceiling_gbps"] = cname, cgbps
    sw_r = cell["impls"].get("stridewise", {})
    if "time_s" in sw_r:
        if cgbps:
            sw_r["pct_ceiling"] = 100 * sw_r["gbps"] / cgbps
            if "copy" in ceilings:
                sw_r["pct_copy"] = 100 * sw_r["gbps"] / ceilings["copy"]
        cell["speedup"] = {k: r["time_s"] / sw_r["time_s"] for k, r in cell["impls"].items()
                           if k != "stridewise" and "time_s" in r}
    return cell


# ---------------------------------------------------------------- host overhead, first call, sweep

def host_overhead(device: str, n: int = 1024, calls: int = 2000) -> dict:
    """Microseconds per warm call on `n`-element float32 arrays: stridewise vs the anchors."""
    import stridewise as sw

    if device == "cuda":
        import torch
        a = torch.rand(8, n // 8, device="cuda") + 1
        b = torch.rand(8, n // 8, device="cuda") + 1
        o = torch.empty_like(a)
        sync = torch.cuda.synchronize
        fns = {"stridewise out=": lambda: sw.remainder(a, b, out=o),
               "stridewise alloc": lambda: sw.remainder(a, b),
               "torch out=": lambda: torch.remainder(a, b, out=o),
               "torch alloc": lambda: torch.remainder(a, b)}
        try:
            import cupy
            ca, cb, co = (cupy.from_dlpack(x) for x in (a, b, o))
            fns["stridewise on cupy out="] = lambda: sw.remainder(ca, cb, out=co)
            fns["cupy out="] = lambda: cupy.remainder(ca, cb, out=co)
        except Exception:  # noqa: BLE001
            pass
    else:
        a = np.random.default_rng(0).uniform(1, 2, (8, n // 8)).astype(np.float32)
        b, o = a + 1, np.empty_like(a)
        sync = lambda: None  # noqa: E731
        fns = {"stridewise out=": lambda: sw.remainder(a, b, out=o),
               "stridewise alloc": lambda: sw.remainder(a, b),
               "numpy out=": lambda: np.remainder(a, b, out=o),
               "numpy alloc": lambda: np.remainder(a, b)}
        try:
            import torch
            ta, tb, to = _to_torch(a), _to_torch(b), _to_torch(o)
            fns["torch out="] = lambda: torch.remainder(ta, tb, out=to)
            fns["torch alloc"] = lambda: torch.remainder(ta, tb)
        except ImportError:
            pass
    res = {}
    for name, fn in fns.items():     # warm-up; a failing call is reported, not timed
        try:
            for _ in range(50):
                fn()
            sync()
            res[name] = float("inf")
        except Exception as e:  # noqa: BLE001
            res[name] = f"error: {type(e).__name__}: {e}"[:200]
    for _ in range(5):               # interleaved rounds: a drifting host touches every call alike
        for name, fn in fns.items():
            if isinstance(res[name], float):
                t = time.perf_counter()
                for _ in range(calls // 5):
                    fn()
                sync()
                res[name] = min(res[name], (time.perf_counter() - t) / (calls // 5) * 1e6)
    from stridewise._explain import _warm_path
    res["stridewise warm path"] = _warm_path()
    return res


_FIRST_CALL = r"""
import sys, time
device, dtype, case = sys.argv[1:4]
t0 = time.perf_counter()
import stridewise as sw
from stridewise.bench import matrix as bench
a, b, out = bench._make_case(case, dtype, 12, "numpy" if device == "cpu" else "torch", device)
sync = (lambda: None)
if device == "cuda":
    import torch
    torch.cuda.synchronize()
    sync = torch.cuda.synchronize
t1 = time.perf_counter()
sw.remainder(a, b, out=out)
sync()
t2 = time.perf_counter()
sw.remainder(a, b, out=out)
sync()
t3 = time.perf_counter()
print(t2 - t1, t3 - t2, t1 - t0)
"""


def first_call(device: str, kernels=(("float32", "contiguous"), ("float16", "row"),
                                      ("int64", "short_rows"))) -> dict:
    """Seconds for the first call in a fresh process: cold (empty cache dir) and warm disk cache."""
    import tempfile
    res = {}
    for dtype, case in kernels:
        name = f"{case}/{dtype}"
        try:
            with tempfile.TemporaryDirectory(prefix="stridewise-bench-cache-") as tmp:
                env = dict(os.environ, STRIDEWISE_CACHE_DIR=tmp)
                runs = []
                for _ in range(2):            # cold (compiles), then warm (disk cache hit)
                    proc = subprocess.run([sys.executable, "-c", _FIRST_CALL, device, dtype, case],
                                          env=env, capture_output=True, text=True, timeout=300)
                    if proc.returncode != 0:
                        raise RuntimeError(proc.stderr.strip().splitlines()[-1])
                    runs.append([float(x) for x in proc.stdout.split()])
            res[name] = {"cold_s": runs[0][0], "warm_disk_s": runs[1][0], "second_call_s": runs[1][1]}
        except Exception as e:  # noqa: BLE001
            res[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
    return res


def sweep(device: str, lo: int = 10, hi: int | None = None, step: int = 2) -> list[dict]:
    """float32 contiguous and row-broadcast remainder over sizes 2^lo..2^hi (capped by memory)."""
    import stridewise as sw

    cap = _memory_cap_log2(device)
    hi = min(hi or (30 if device == "cuda" else 26), cap)
    rows = []
    for log2 in range(lo, hi + 1, step):
        for case in ("contiguous", "row"):
            row = {"log2": log2, "case": case, "impls": {}}
            lib = "numpy" if device == "cpu" else "torch"
            sets = []
            nbytes = 0
            for k in range(_rotations(device, log2)):
                a, b, out = _make_case(case, "float32", log2, lib, device)
                nbytes = compulsory_bytes(a, b, out)
                sets.append((a, b, out))
            fns = {"stridewise": [lambda s=s: sw.remainder(s[0], s[1], out=s[2]) for s in sets]}
            if device == "cuda":
                import torch
                fns["torch"] = [lambda s=s: torch.remainder(s[0], s[1], out=s[2]) for s in sets]
                try:
                    torch._dynamo.reset()
                    f = torch.compile(lambda x, y: torch.remainder(x, y), dynamic=False)
                    f(*sets[0][:2])
                    fns["torch.compile"] = [lambda s=s: f(s[0], s[1]) for s in sets]
                except Exception as e:  # noqa: BLE001
                    row["impls"]["torch.compile"] = {"error": str(e)[:200]}
            else:
                fns["numpy"] = [lambda s=s: np.remainder(s[0], s[1], out=s[2]) for s in sets]
                try:
                    import torch
                    tsets = [tuple(_to_torch(x) for x in s) for s in sets]
                    fns["torch"] = [lambda s=s: torch.remainder(s[0], s[1], out=s[2]) for s in tsets]
                except ImportError:
                    pass
            row["impls"].update(time_interleaved(fns, device, nbytes))
            rows.append(row)
            del sets, fns
    return rows


def _cycle(fns):
    """One callable that calls `fns` (a list of callables) in turn; a callable as it is."""
    if callable(fns):
        return fns
    it = [0]

    def call():
        fns[it[0] % len(fns)]()
        it[0] += 1
    return call


def _rotations(device: str, log2: int) -> int:
    """Buffer sets to cycle so the working set exceeds the last-level cache (3x its size)."""
    cache = 32 << 20
    if device == "cuda":
        import torch
        cache = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 60 << 20)
    per_set = 12 << log2                       # float32 a, b, out
    return max(1, min(32, math.ceil(3 * cache / per_set)))


def _memory_cap_log2(device: str) -> int:
    """Largest log2 size whose float32 a, b, out (plus the anchors' output) fit a quarter of memory."""
    try:
        if device == "cuda":
            import torch
            free = torch.cuda.mem_get_info()[0]
        else:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except Exception:  # noqa: BLE001
        return 24
    return int(math.log2(free / 4 / 16))


# ---------------------------------------------------------------- the whole run

def _describe_device(device: str) -> dict:
    info = {"device": device, "cpu": _cpu_model(), "cores": os.cpu_count(),
            "python": platform.python_version(), "numpy": np.__version__}
    try:
        import torch
        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
        if device == "cuda":
            p = torch.cuda.get_device_properties(0)
            info["gpu"] = p.name
            info["sms"] = p.multi_processor_count
            info["l2_bytes"] = getattr(p, "L2_cache_size", None)
    except ImportError:
        pass
    try:
        import cupy
        info["cupy"] = cupy.__version__
    except Exception:  # noqa: BLE001
        pass
    return info


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _commit() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "") if out.returncode == 0 else "unknown"
    except Exception:  # noqa: BLE001
        return "unknown"


def resolve_device(device: str) -> str:
    """"auto" becomes "cuda" when torch sees a GPU, else "cpu"."""
    if device != "auto":
        return device
    try:
        import torch
        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def run(device: str = "auto", cases=None, dtypes=None, quick: bool = False, log2: int | None = None,
        extras: bool = True, do_sweep: bool = False, sweep_max: int | None = None,
        progress: bool = True, values=None) -> dict:
    """Run the bench and return its document (the --json content).

    Parameters
    ----------
    device : "cpu", "cuda" or "auto".
    cases, dtypes : subsets of CASES and DTYPES (default all; --quick picks a few).
    quick : few cases and dtypes at a small size (for the README).
    log2 : output elements per case as a power of two (default 27 on GPU, 22 on CPU).
    extras : also measure host overhead and first-call / cold-compile times.
    do_sweep, sweep_max : the float32 size sweep 2^10..2^sweep_max.
    values : value distributions (bench_values.VALUES; default all, --quick a few). "narrow"
        runs on every case; the others on the given cases, or by default on
        bench_values.VALUE_CASES (--quick: contiguous only).
    """
    device = resolve_device(device)
    value_cases = cases or (("contiguous",) if quick else bench_values.VALUE_CASES)
    values = bench_values.check(values or (bench_values.QUICK_VALUES if quick else bench_values.VALUES))
    if quick:
        cases = cases or QUICK_CASES
        dtypes = dtypes or QUICK_DTYPES
        log2 = log2 or QUICK_LOG2[device]
    cases = list(cases or CASES)
    dtypes = list(dtypes or DTYPES)
    for c in cases:
        if c not in CASES:
            raise ValueError(f"unknown case {c!r}; choose from {', '.join(CASES)}")
    for d in dtypes:
        if d not in DTYPES + EXTRA_DTYPES:
            raise ValueError(f"unknown dtype {d!r}; choose from {', '.join(DTYPES + EXTRA_DTYPES)}")
    log2 = log2 or (GPU_LOG2 if device == "cuda" else CPU_LOG2)
    doc = {"meta": {**_describe_device(device), "date": datetime.datetime.now().isoformat(timespec="seconds"),
                    "command": " ".join(["stridewise", *sys.argv[1:]]) if sys.argv else "",
                    "commit": _commit(), "log2_elements": log2, "loadavg_start": _loadavg()},
           "ceilings": {}, "cells": []}
    work = [(c, d, v) for c in cases for d in dtypes for v in values
            if bench_values.applies(v, d) and (v == "narrow" or c in value_cases)]
    with _progress(progress) as bar:
        task = bar.add_task("ceilings", total=len(work) + 1 + 2 * extras + do_sweep)
        doc["ceilings"] = (ceilings_cuda() if device == "cuda" else ceilings_cpu(min(25, log2 + 2)))
        bar.advance(task)
        for case, dtype, v in work:
            bar.update(task, description=f"{case} {dtype} {v}")
            doc["cells"].append(run_cell(case, dtype, device, log2, doc["ceilings"], v))
            if device == "cuda":
                import torch
                torch.cuda.empty_cache()
            bar.advance(task)
        # The extras never cost the matrix: a failure is recorded in place of the numbers.
        parts = ([("host_overhead_us", "host overhead", lambda: host_overhead(device)),
                  ("first_call", "first call (fresh processes)", lambda: first_call(device))]
                 if extras else [])
        if do_sweep:
            parts.append(("sweep", "size sweep", lambda: sweep(device, hi=sweep_max)))
        for key, description, part in parts:
            bar.update(task, description=description)
            try:
                doc[key] = part()
            except Exception as e:  # noqa: BLE001
                doc.setdefault("errors", {})[key] = f"{type(e).__name__}: {e}"[:300]
            bar.advance(task)
    doc["meta"]["loadavg_end"] = _loadavg()
    return doc


def _loadavg() -> str:
    """1/5/15-minute load averages: other work on a shared machine skews wall-clock times."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


class _NoBar:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def add_task(self, *a, **k):
        return 0

    def update(self, *a, **k):
        pass

    def advance(self, *a, **k):
        pass


def _progress(enabled: bool):
    if not enabled:
        return _NoBar()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    return Progress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), transient=True)


# ---------------------------------------------------------------- presentation

def anchors_of(doc: dict) -> list[str]:
    names = []
    for cell in doc["cells"]:
        for k in cell["impls"]:
            if k != "stridewise" and k not in names:
                names.append(k)
    return names


def _fmt_time(t: float) -> str:
    return f"{t * 1e3:.3f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} µs"


def table_rows(doc: dict) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the main table as plain strings (also used for BENCHMARKS.md)."""
    anchors = anchors_of(doc)
    gpu = doc["meta"]["device"] == "cuda"
    differs = sorted({k for c in doc["cells"] for k in c.get("differs_from_eager", {})})
    inexact = sorted({k for c in doc["cells"] for k in c.get("differs_from_exact", {})})
    header = ["case", "dtype", "values", "stridewise", "GB/s"] + (["% ceiling"] if gpu else [])
    header += list(anchors) + [f"vs {a}" for a in anchors] + [f"{k} ≠ eager" for k in differs]
    header += [f"{k} ≠ exact" for k in inexact]
    rows = []
    for cell in doc["cells"]:
        r = cell["impls"].get("stridewise", {})
        ok = "time_s" in r
        row = [cell["case"], cell["dtype"], cell.get("values", "narrow"),
               _fmt_time(r["time_s"]) if ok else ("FAILED" if not cell.get("verified") else r.get("error", "?")),
               f"{r['gbps']:.1f}" if ok else "-"]
        if gpu:
            row.append(f"{r['pct_ceiling']:.0f}%" + ("*" if "sector" in cell["ceiling"] else
                                                     "w" if cell["ceiling"] == "write" else "")
                       if ok and "pct_ceiling" in r else "-")
        for a in anchors:   # each anchor's time
            ar = cell["impls"].get(a, {})
            row.append(_fmt_time(ar["time_s"]) if "time_s" in ar else "-")
        for a in anchors:
            s = cell.get("speedup", {}).get(a)
            row.append(f"{s:.2f}x" if s else "-")
        for k in differs:
            n = cell.get("differs_from_eager", {}).get(k)
            row.append("-" if n is None else str(n))
        for k in inexact:
            n = cell.get("differs_from_exact", {}).get(k)
            row.append("-" if n is None else str(n))
        rows.append(row)
    return header, rows


def print_report(doc: dict, console=None) -> None:
    """The rich table (plus ceilings, host overhead, first call and sweep when present)."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    if not console.is_terminal:
        console.width = max(console.width, 180)     # a redirected table keeps whole columns
    m = doc["meta"]
    where = m.get("gpu") or f"{m['cpu']} ({m['cores']} cores)"
    console.print(f"[bold]stridewise bench[/] remainder on {m['device']}: {where}; "
                  f"output 2^{m['log2_elements']} elements per case; commit {m['commit']}")
    if doc["ceilings"]:
        console.print("ceilings (GB/s): " + ", ".join(f"{k} {v:.0f}" for k, v in doc["ceilings"].items()))
    header, rows = table_rows(doc)
    table = Table(show_lines=False)
    for h in header:
        table.add_column(h, justify="left" if h in ("case", "dtype", "values") else "right")
    for row in rows:
        table.add_row(*[f"[red]{c}[/]" if h.startswith("vs ") and c.endswith("x") and float(c[:-1]) < 1.0
                        else f"[red]{c}[/]" if c == "FAILED" else c for h, c in zip(header, row)])
    console.print(table)
    if doc["meta"]["device"] == "cuda":
        console.print("% ceiling: of the copy ceiling; w = of the write-only ceiling (outer); "
                      "* = of the sector-adjusted ceiling (strided slice)")
    bad = [f"{c['case']}/{c['dtype']}/{c.get('values', 'narrow')}" for c in doc["cells"] if not c.get("verified")]
    console.print(f"verified bit for bit: {len(doc['cells']) - len(bad)}/{len(doc['cells'])}"
                  + (f"  [red]not verified: {', '.join(bad)}[/]" if bad else ""))
    for key, err in doc.get("errors", {}).items():
        console.print(f"[red]{key} failed: {err}[/]")
    if "host_overhead_us" in doc:
        console.print("host overhead per call, 1024 elements (µs): " + ", ".join(
            f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in doc["host_overhead_us"].items()))
    if "first_call" in doc:
        for k, v in doc["first_call"].items():
            console.print(f"first call {k}: " + (", ".join(f"{n} {t * 1e3:.1f} ms" for n, t in v.items())
                                                if "error" not in v else v["error"]))
    if "sweep" in doc:
        t = Table(title="size sweep, float32 (GB/s)")
        names = sorted({n for r in doc["sweep"] for n in r["impls"]}, key=lambda n: n != "stridewise")
        for h in ["size", "case", *names]:
            t.add_column(h, justify="right")
        for r in doc["sweep"]:
            t.add_row(f"2^{r['log2']}", r["case"], *[
                (f"{r['impls'][n]['gbps']:.1f} ({_fmt_time(r['impls'][n]['time_s'])})"
                 if "gbps" in r["impls"].get(n, {}) else "-") for n in names])
        console.print(t)


def markdown_table(doc: dict) -> str:
    header, rows = table_rows(doc)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def markdown_report(doc: dict) -> str:
    """The run as Markdown (device, date, command, commit, table, extras), for BENCHMARKS.md."""
    m = doc["meta"]
    where = (f"{m['gpu']} ({m.get('sms')} SMs)" if m.get("gpu")
             else f"{m['cpu']}, {m['cores']} cores")
    versions = ", ".join(f"{k} {m[k]}" for k in ("numpy", "torch", "cupy") if k in m)
    out = [f"- device: {where}", f"- date: {m['date']}", f"- command: `{m['command']}`",
           f"- commit: {m['commit']}", f"- versions: python {m['python']}, {versions}",
           f"- load average (1/5/15 min) at start: {m.get('loadavg_start')}, at end: {m.get('loadavg_end')}"
           f" ({m['cores']} cores)",
           f"- output per case: 2^{m['log2_elements']} elements; GB/s counts compulsory bytes "
           "(each input's own elements once + the output once); times are medians of interleaved rounds after warm-up",
           "- ceilings (GB/s): " + ", ".join(f"{k} {v:.0f}" for k, v in doc["ceilings"].items()),
           "", markdown_table(doc), ""]
    bad = [f"{c['case']}/{c['dtype']}/{c.get('values', 'narrow')}" for c in doc["cells"] if not c.get("verified")]
    out.append(f"Verified bit for bit before timing: {len(doc['cells']) - len(bad)}/{len(doc['cells'])}"
               + (f" (not verified: {', '.join(bad)})" if bad else "") + ".")
    if "host_overhead_us" in doc:
        out += ["", "Host overhead per warm call, 1024 elements (µs): " + ", ".join(
            f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
            for k, v in doc["host_overhead_us"].items()) + "."]
    if "first_call" in doc:
        out += ["", "| first call in a fresh process | cold (compiles) | warm disk cache |", "|---|---|---|"]
        for k, v in doc["first_call"].items():
            out.append(f"| {k} | {v['cold_s'] * 1e3:.0f} ms | {v['warm_disk_s'] * 1e3:.1f} ms |"
                       if "error" not in v else f"| {k} | {v['error']} | |")
    if "sweep" in doc:
        names = sorted({n for r in doc["sweep"] for n in r["impls"]}, key=lambda n: n != "stridewise")
        out += ["", "| size | case | " + " | ".join(f"{n} GB/s (time)" for n in names) + " |",
                "|---|---|" + "---|" * len(names)]
        for r in doc["sweep"]:
            out.append(f"| 2^{r['log2']} | {r['case']} | " + " | ".join(
                f"{r['impls'][n]['gbps']:.1f} ({_fmt_time(r['impls'][n]['time_s'])})"
                if "gbps" in r["impls"].get(n, {}) else "-" for n in names) + " |")
    return "\n".join(out) + "\n"


def write_json(doc: dict, path: str) -> None:
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, default=str)


def plot(doc: dict, path: str) -> list[str]:
    """Bars of GB/s per case, one panel per dtype, one bar per implementation, ceiling lines;
    with a size sweep in `doc`, also `<path>-sweep.png`. Returns the paths written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dtypes = list(dict.fromkeys(c["dtype"] for c in doc["cells"]))
    cases = list(dict.fromkeys(c["case"] for c in doc["cells"]))
    impls = ["stridewise", *anchors_of(doc)]
    fig, axes = plt.subplots(len(dtypes), 1, figsize=(max(8, 1.3 * len(cases)), 2.8 * len(dtypes)),
                             squeeze=False, sharex=True)
    width = 0.8 / len(impls)
    for ax, dtype in zip(axes[:, 0], dtypes):
        cells = {c["case"]: c for c in doc["cells"]
                 if c["dtype"] == dtype and c.get("values", "narrow") == "narrow"}
        for j, name in enumerate(impls):
            xs, ys = [], []
            for i, case in enumerate(cases):
                r = cells.get(case, {}).get("impls", {}).get(name, {})
                if "gbps" in r:
                    xs.append(i + (j - (len(impls) - 1) / 2) * width)
                    ys.append(r["gbps"])
            ax.bar(xs, ys, width, label=name)
        styles = {"copy": "-", "write": "--", "read": ":"}
        for k, v in doc["ceilings"].items():
            ax.axhline(v, color="k", lw=0.8, ls=styles.get(k, "-."), label=f"{k} ceiling")
        ax.set_ylabel(f"{dtype}\nGB/s")
    axes[-1, 0].set_xticks(range(len(cases)))
    axes[-1, 0].set_xticklabels(cases, rotation=30, ha="right")
    axes[0, 0].legend(ncol=min(8, len(impls) + len(doc["ceilings"])), fontsize=7, loc="lower left",
                      bbox_to_anchor=(0, 1.02))
    m = doc["meta"]
    fig.suptitle(f"stridewise remainder, {m.get('gpu') or m['cpu']}, 2^{m['log2_elements']} elements, "
                 f"compulsory-byte GB/s", fontsize=9, y=1.0)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return [path] + ([_plot_sweep(doc, path, plt)] if doc.get("sweep") else [])


def _plot_sweep(doc: dict, path: str, plt) -> str:
    """GB/s against output size, one panel per case, a line per implementation (log-log)."""
    cases = list(dict.fromkeys(r["case"] for r in doc["sweep"]))
    impls = list(dict.fromkeys(name for r in doc["sweep"] for name in r["impls"]))
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 3.6), squeeze=False, sharey=True)
    for ax, case in zip(axes[0], cases):
        rows = [r for r in doc["sweep"] if r["case"] == case]
        for name in impls:
            pts = [(2 ** r["log2"], r["impls"][name]["gbps"]) for r in rows if name in r["impls"]]
            ax.plot(*zip(*pts), marker="o", ms=3, label=name)
        ax.axhline(doc["ceilings"]["copy"], color="k", lw=0.8, label="copy ceiling")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(case, fontsize=9)
        ax.set_xlabel("output elements (float32)")
        ax.grid(True, which="both", lw=0.3)
    axes[0, 0].set_ylabel("GB/s (compulsory bytes)")
    axes[0, 0].legend(fontsize=7)
    m = doc["meta"]
    fig.suptitle(f"stridewise remainder by size, {m.get('gpu') or m['cpu']}", fontsize=9)
    fig.tight_layout()
    out = path[:-4] + "-sweep.png" if path.endswith(".png") else path + "-sweep.png"
    fig.savefig(out, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return out
