"""Independent oracles: NumPy implementations of the remainder conventions, and test grids."""
import ml_dtypes
import numpy as np

NP = {
    "float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32), "float64": np.dtype(np.float64),
    "int32": np.dtype(np.int32), "int64": np.dtype(np.int64),
    **{n: np.dtype(n) for n in ("int8", "int16", "uint8", "uint16", "uint32", "uint64", "bool",
                                "complex64", "complex128")},
}


def torch_remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """torch.remainder on CUDA, written from its formula: fmod, then add b where the signs
    differ (compared with < 0); 16-bit floats in float32, rounded once; integer x % 0 is 0."""
    dt = np.result_type(a, b)
    if dt.kind == "f" or dt == NP["bfloat16"]:
        wide = np.float64 if dt == np.float64 else np.float32
        x, y = a.astype(wide), b.astype(wide)
        with np.errstate(all="ignore"):
            m = np.fmod(x, y)
            fix = (m != 0) & ((m < 0) != (y < 0))
            m = np.where(fix, m + y, m)
        return m.astype(dt)
    a, b = np.broadcast_arrays(a.astype(dt), b.astype(dt))
    safe = np.where((b == 0) | (b == -1), 1, b)
    r = np.fmod(a, safe)                        # C truncated remainder
    r = np.where((r != 0) & ((r < 0) != (safe < 0)), r + safe, r)
    return np.where((b == 0) | (b == -1), 0, r).astype(dt)


def numpy_op(ufunc, *args):
    """NumPy's `ufunc` with errors silenced. bfloat16 operands are computed in float32 and
    rounded once, ml_dtypes' definition (and stridewise's) written out here, so the oracle
    does not depend on which ufuncs an ml_dtypes release registers for the type or how."""
    args = [np.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    bf16 = [isinstance(a, (np.ndarray, np.generic)) and a.dtype == NP["bfloat16"] for a in args]
    with np.errstate(all="ignore"):
        if not any(bf16):
            return ufunc(*args)
        # arrays first: result_type(2.5, bfloat16 array) is float32, the ufunc's is bfloat16;
        # np.where's condition takes no part in its result's dtype, nor clip's missing bound
        # (result_type reads None as float64)
        typed = [a for a in (args[1:] if ufunc is np.where else args) if a is not None]
        result = np.result_type(*sorted(typed, key=lambda a: not hasattr(a, "dtype")))
        if result == NP["bfloat16"] and ufunc not in (np.logical_and, np.logical_or,
                                                      np.logical_xor):
            # a Python number takes the array's dtype first (NEP 50): 70000 is bfloat16's
            # 70144, and a float its bfloat16 rounding (np.where's condition stays a truth);
            # NumPy's logical ops read an int as an int64 whatever the dtype
            args = [np.asarray(a, result) if type(a) in (int, float) and not (
                        ufunc is np.where and k == 0) else a for k, a in enumerate(args)]
            bf16 = [w or type(a) is np.ndarray and a.dtype == result for a, w in zip(args, bf16)]
        r = ufunc(*[a.astype(np.float32) if w else a for a, w in zip(args, bf16)])
        return r.astype(result) if r.dtype == np.float32 else r


def numpy_remainder(a, b):
    return numpy_op(np.remainder, a, b)


def special_values(name: str) -> np.ndarray:
    """Every value class the semantics distinguish, for a full a x b grid."""
    dt = NP[name]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, info.min, info.max, info.min + 1, info.max - 1]
        return np.array(vals, dtype=dt)
    fi = ml_dtypes.finfo(dt) if name == "bfloat16" else np.finfo(dt)
    tiny, sub, big = float(fi.tiny), float(fi.smallest_subnormal), float(fi.max)
    vals = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, 5.5, -7.25, 1e3, -1e3,
            np.inf, -np.inf, np.nan, tiny, -tiny, sub, -sub, 3 * sub, big, -big, big / 3,
            float(fi.eps), 1 + float(fi.eps), 0.1, -0.1, 65504.0, 1e17, -1e17, 1e-30]
    with np.errstate(over="ignore"):
        return np.array(vals, dtype=np.float64).astype(dt)


def grid(name: str):
    v = special_values(name)
    return np.repeat(v, v.size), np.tile(v, v.size)


def random_values(rng, name: str, shape):
    dt = NP[name]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(-1000, 1000, size=shape, dtype=np.int64)
        x[rng.random(shape) < 0.05] = info.min
        return x.astype(dt)
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, size=shape)
    return x.astype(dt)


def same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit equality, except that any NaN matches any NaN (payloads are free)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind in "iub":
        return np.array_equal(got, want)
    if got.dtype.kind == "c":
        return same_bits(got.real, want.real) and same_bits(got.imag, want.imag)
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    g, w = got.view(bits), want.view(bits)
    gnan = np.isnan(got.astype(np.float64))
    wnan = np.isnan(want.astype(np.float64))
    return bool(np.array_equal(gnan, wnan) and np.array_equal(g[~gnan], w[~wnan]))


def same_values(got, want) -> np.ndarray:
    """Per element: equal bits, or NaN in the same parts (NumPy and glibc leave NaN payloads
    and signs to the hardware)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype == bool:
        return got == want
    parts = 2 if got.dtype.kind == "c" else 1
    g = np.ascontiguousarray(got).reshape(-1).view(got.real.dtype).reshape(-1, parts)
    w = np.ascontiguousarray(want).reshape(-1).view(want.real.dtype).reshape(-1, parts)
    bits = g.view(f"u{g.itemsize}") == w.view(f"u{w.itemsize}")
    return ((bits | (np.isnan(g) & np.isnan(w))).all(axis=1)).reshape(got.shape)


def complex_ulps(got, want) -> float:
    """Largest norm-wise difference: max over parts of |got - want| in ulps of the larger part
    of want (finite results). A non-finite result's inf and NaN parts must match exactly, and
    a finite part beside one (one part of a quotient overflowed) counts in its own ulps."""
    got, want = np.asarray(got), np.asarray(want)
    real = got.real.dtype
    finite = np.isfinite(want.real) & np.isfinite(want.imag)
    tiny = np.finfo(real).tiny
    worst = 0.0
    for gp, wp in ((got[~finite].real, want[~finite].real), (got[~finite].imag, want[~finite].imag)):
        sure = ~np.isfinite(wp)
        assert same_values(gp[sure], wp[sure]).all() and np.isfinite(gp[~sure]).all()
        if (~sure).any():
            unit = np.spacing(np.maximum(np.abs(wp[~sure]), tiny).astype(real))
            worst = max(worst, float(np.max(np.abs(gp[~sure] - wp[~sure]) / unit)))
    g, w = got[finite], want[finite]
    big = np.maximum(np.abs(w.real), np.abs(w.imag)) if np.iscomplexobj(w) else np.abs(w)
    unit = np.spacing(np.maximum(big, tiny).astype(real))
    err = np.maximum(np.abs((g - w).real), np.abs((g - w).imag)) if np.iscomplexobj(w) else np.abs(g - w)
    return max(worst, float(np.max(err / unit)) if err.size else 0.0)


def mismatches(got, want, a, b, limit=8):
    got, want = np.asarray(got).ravel(), np.asarray(want).ravel()
    a, b = np.broadcast_arrays(a, b)
    bad = []
    for i in range(got.size):
        if not same_bits(got[i:i + 1], want[i:i + 1]):
            bad.append((a.ravel()[i], b.ravel()[i], got[i], want[i]))
            if len(bad) == limit:
                break
    return bad


def cuda_reference(source: str, name: str = "reference"):
    """(device, kernel): an independent reference kernel, NVRTC-compiled from `source` for the
    current torch device (the GPU tests' oracles written from the definitions)."""
    import torch
    from cuda.core import Device, Program, ProgramOptions

    dev = Device(torch.cuda.current_device())
    dev.set_current()
    prog = Program(source, "c++", options=ProgramOptions(arch=f"sm_{dev.arch}"))
    return dev, prog.compile("cubin").get_kernel(name)
