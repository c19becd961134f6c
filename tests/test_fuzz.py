"""A differential fuzz of every op of the table against the owning library's own op.

Each example draws an op from `ROWS`, a library (NumPy, torch, or CuPy on the GPU, whose
values and dtypes are NumPy's and whose layouts are its own ops'), and operands as users pass
them: arrays of any dtype the library has (mixed across operands), Python numbers (bool, int of
any size, float incl. NaN, inf and -0.0, complex), NumPy scalars, 0-d arrays and tensors,
broadcast shapes with dims of size 1 or 0, and layouts (F-order, transposed, channels_last,
reversed, strided, offset by one element), with values rich in edge cases (0, -0.0, NaN, +-inf,
subnormals, integer MIN, MAX and -1, huge). Sometimes it passes an `out=` of any dtype and
layout, or an input as its own out. stridewise must do what the library does: raise where it
raises (and leave out= as it was), else the same result type, dtype, shape, output strides
and values, bit for bit (any NaN matches any NaN), or within the row's documented tolerance.

The library's op is the oracle, except where stridewise departs from it on purpose (the
module docstring of ops/builtins.py and docs/semantics.md); those departures are the
`_departure` rules below, each with its reason. tools/fuzz.py is the long-running fuzz of the
modes and kernel keys; this one keeps every op's calling conventions under test in CI.
"""
import math
import os

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import stridewise as sw
from oracle import NP, complex_ulps, numpy_op, same_values
from stridewise.ops.builtins import COMPLEX_TOLERANCE_ULP, ROWS

torch = pytest.importorskip("torch")

BF16 = NP["bfloat16"]
NUMPY_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128")
# torch's uint16/32/64 have "limited support": few ops have kernels for them
TORCH_DTYPES = tuple(d for d in NUMPY_DTYPES if d not in ("uint16", "uint32", "uint64"))
CUPY_DTYPES = tuple(d for d in NUMPY_DTYPES if d != "bfloat16")     # CuPy has no bfloat16
NUMBERS = (True, False, 0, 1, -1, 3, 127, 255, -129, 70000, 2**31, -2**63, 2**64 - 1, 2**70,
           0.0, -0.0, 2.5, -0.5, math.nan, math.inf, -math.inf, 1e-310, 1e300, 1 + 2j, -1j)
NUMPY_SCALARS = (np.float32(2), np.float16(-0.0), np.int8(-3), np.uint8(200), np.int64(-1),
                 np.float64(np.nan), np.bool_(True), np.complex64(1j))
DIVIDES = ("remainder", "fmod", "floor_divide")


def torch_fn(row):
    return {"clip": torch.clamp, "where": torch.where}.get(row.name) or (
        getattr(torch, row.torch_name) if row.torch_name else None)


def numpy_fn(row):
    return {"where": np.where, "clip": np.clip}.get(row.name) or (
        getattr(np, row.ufunc) if row.ufunc else None)


FUZZED = sorted(n for n, r in ROWS.items() if numpy_fn(r) is not None)
TORCH_FUZZED = sorted(n for n, r in ROWS.items() if torch_fn(r) is not None)


def special(dtype: str) -> np.ndarray:
    """The values that tell implementations apart, in `dtype`."""
    dt = NP[dtype]
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [0, 1, 2, 3, 7, info.max, info.min, info.max - 1]
        vals += [-1, -2, -7, info.min + 1] if dt.kind == "i" else [info.max // 2]
        return np.array(vals, dtype=object).astype(dt)
    real = NP["float32"] if dt.kind == "c" and dt.itemsize == 8 else NP["float64"] if dt.kind == "c" else dt
    fi = ml_dtypes.finfo(real) if real == BF16 else np.finfo(real)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.0, 7.0, math.nan, math.inf, -math.inf,
            float(fi.max), -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
            -float(fi.smallest_subnormal), 1e30, -1e-30]
    with np.errstate(all="ignore"):
        v = np.array(vals, np.float64).astype(real)
    if dt.kind == "c":
        with np.errstate(all="ignore"):
            return (v[:, None] + 1j * v[None, :].astype(dt)).ravel().astype(dt)
    return v


@st.composite
def values(draw, dtype: str, shape: tuple) -> np.ndarray:
    """Values of `dtype` drawn from its special ones (a seed picks them: arrays of a few hundred
    elements cost hypothesis nothing)."""
    pool = special(dtype)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return pool[rng.integers(len(pool), size=shape)]


def numpy_layout(x: np.ndarray, layout: str, xp=np) -> np.ndarray:
    """The same values held in another layout (xp: NumPy, or CuPy for its arrays)."""
    if x.ndim == 0 or layout == "C":
        return x
    if layout == "F":
        return xp.asfortranarray(x)
    if layout == "transposed":
        return xp.ascontiguousarray(xp.swapaxes(x, 0, -1)).swapaxes(0, -1)
    if layout == "reversed":
        return xp.flip(xp.ascontiguousarray(xp.flip(x, -1)), -1)
    if layout == "strided":
        return xp.repeat(x, 2, axis=-1)[..., ::2]
    flat = xp.empty(x.size + 1, x.dtype)            # offset: one element past an aligned start
    y = flat[1:].reshape(x.shape)
    y[...] = x
    return y


def to_cupy(x: np.ndarray, layout: str):
    """A CuPy array of x's values in `layout` (a NumPy scalar becomes a 0-d array)."""
    import cupy
    return numpy_layout(cupy.asarray(x), layout, cupy)


def is_cupy(x) -> bool:
    return type(x).__module__.startswith("cupy")


def to_torch(x: np.ndarray, layout: str, device: str = "cpu"):
    t = torch.from_numpy(np.ascontiguousarray(x.view(np.int16) if x.dtype == BF16 else x))
    t = (t.view(torch.bfloat16) if x.dtype == BF16 else t).to(device)
    if t.dim() == 0 or layout == "C":
        return t.clone()
    if layout == "channels_last" and t.dim() == 4:
        return t.contiguous(memory_format=torch.channels_last)
    if layout in ("F", "transposed", "channels_last"):
        return t.permute(*reversed(range(t.dim()))).contiguous().permute(*reversed(range(t.dim())))
    if layout == "strided":
        return t.repeat_interleave(2, dim=-1)[..., ::2]
    flat = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
    y = flat[1:].view(t.shape)
    y.copy_(t)
    return y


# sizes of 0 and 1 (broadcast), small ones, and rows long enough for the vector loops and
# their tails
SHAPES = st.lists(st.sampled_from((0, 1, 1, 2, 3, 5, 17, 67)), min_size=0, max_size=4).filter(
    lambda s: math.prod(s) <= 2000)


@st.composite
def call(draw, lib: str, device: str = "cpu"):
    """(row, args, out= as (dtype, layout) or None, alias None, "out" or "inplace").
    `device`: where torch's tensors live; on CUDA a 0-d tensor is sometimes a CPU one, which
    torch takes as a number."""
    names = TORCH_FUZZED if lib == "torch" else FUZZED
    row = ROWS[draw(st.sampled_from(names))]
    dtypes = {"numpy": NUMPY_DTYPES, "torch": TORCH_DTYPES, "cupy": CUPY_DTYPES}[lib]
    shape = tuple(draw(SHAPES))
    first = draw(st.sampled_from(dtypes))
    layouts = ("C", "F", "transposed", "strided", "offset") + (
        ("channels_last",) if lib == "torch" else ("reversed",))
    args = []
    for k in range(len(row.params)):
        kind = "array" if k == 0 else draw(st.sampled_from(
            ("array", "array", "array", "number", "number", "zerod")
            + (("npscalar",) if lib != "torch" else ())
            + (("none",) if row.name == "clip" and not any(a is None for a in args) else ())))
        if kind == "none":          # clip with one bound (np.clip(x, None, hi), clamp(max=))
            args.append(None)
            continue
        if kind == "number":
            args.append(draw(st.sampled_from(NUMBERS)))
            continue
        if kind == "npscalar":
            args.append(draw(st.sampled_from(NUMPY_SCALARS)))
            continue
        dtype = first if draw(st.booleans()) else draw(st.sampled_from(dtypes))
        if row.name == "where" and k == 0:
            dtype = "bool" if lib == "torch" or draw(st.booleans()) else dtype
        # a broadcast operand: drop leading dims, set some to 1
        sub = shape[draw(st.integers(0, len(shape))):] if k and draw(st.booleans()) else shape
        if kind == "zerod":
            sub = ()
        sub = tuple(1 if s and draw(st.integers(0, 4)) == 0 else s for s in sub)
        x = draw(values(dtype, sub))
        if not sub and draw(st.booleans()):
            x = np.asarray(x)    # a 0-d array, else a NumPy scalar (0-d tensors either way)
        layout = draw(st.sampled_from(layouts))
        where = "cpu" if kind == "zerod" and draw(st.booleans()) else device
        args.append({"numpy": numpy_layout, "cupy": to_cupy}[lib](x, layout) if lib != "torch"
                    else to_torch(x, layout, where))
    args = fit_domain(row, lib, args)
    out, alias = None, None
    choice = draw(st.integers(0, 5))
    if choice == 0:
        out = (draw(st.sampled_from(dtypes)), draw(st.sampled_from(layouts)))
    elif choice == 1 and row.name != "where":
        alias = "out"            # x1 as its own out
    elif choice == 2 and row.inplace:
        alias = "inplace"        # remainder_(x1, x2): x1's out, by the same rule
    return row, args, out, alias


def fit_domain(row, lib, args):
    """Inputs the oracle defines: CuPy computes negative integer exponents in an array (pow:
    stridewise gives torch's trunc(a ** b), documented), where NumPy raises (and stridewise
    does too); torch raises on integer division by zero and traps INT_MIN // -1 on the CPU
    (stridewise gives NumPy's 0 and wrap)."""
    def integral(a):
        if isinstance(a, torch.Tensor):
            return not (a.dtype.is_floating_point or a.dtype.is_complex)
        return (isinstance(a, np.ndarray) or is_cupy(a)) and a.dtype.kind in "biu"

    def fix(a, bad, good):
        if integral(a):
            a = a.clone() if lib == "torch" else a.copy()
            a[bad(a)] = good
        return a
    if row.name == "pow" and lib == "cupy":
        args[1] = fix(args[1], lambda a: a < 0, 2)
        if isinstance(args[1], np.integer) and args[1] < 0:    # a NumPy scalar: a 0-d array
            args[1] = args[1].dtype.type(2)
    if row.name in DIVIDES and lib == "torch":
        args[1] = fix(args[1], lambda a: (a == 0) | (a == -1),
                      True if getattr(args[1], "dtype", None) == torch.bool else 3)
        if type(args[1]) in (bool, int) and args[1] in (0, -1):
            args[1] = 3
    return args


def _result(fn, args, out=None):
    try:
        return fn(*args) if out is None else fn(*args, out=out), None
    except Exception as e:     # noqa: BLE001 -- any refusal; the kind is compared below
        return None, e


def _dtype(x):
    return x.dtype if hasattr(x, "dtype") else type(x)


def ulps(got: np.ndarray, want: np.ndarray) -> int:
    """Largest distance in units in the last place; NaN matches NaN (complex: per part)."""
    if got.dtype.kind == "c":
        return max(ulps(got.real, want.real), ulps(got.imag, want.imag))
    if got.dtype.kind in "biu":
        return 0 if np.array_equal(got, want) else 1 << 62
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[got.dtype.itemsize]
    top = np.int64(1) << (8 * got.dtype.itemsize - 1)

    def ordered(x):
        i = np.ascontiguousarray(x).view(bits).astype(np.int64)
        return np.where(i < 0, -(i + top), i)
    gn, wn = np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
    d = np.where(gn | wn, 0, np.abs(ordered(got) - ordered(want)))
    return int(max(d.max(initial=0), (gn != wn).any() << 62))


def tolerance(row, dtype: np.dtype, lib: str) -> int:
    if dtype.kind == "c":       # CuPy's: the device's formulas
        where = "cuda" if lib == "cupy" else lib
        return COMPLEX_TOLERANCE_ULP.get(row.name, {}).get(f"{where} {dtype}", 0)
    tol = row.ulp.get(str(dtype), 0)
    if lib == "torch" and row.name == "sqrt":
        tol = max(tol, 1)                  # torch's sqrt is Sleef's u05: within 1 ulp
    return tol


def host(x) -> np.ndarray:
    if is_cupy(x):
        return x.get()
    if isinstance(x, torch.Tensor):
        x = x.cpu()
        return x.view(torch.int16).numpy().view(BF16) if x.dtype == torch.bfloat16 else x.numpy()
    return np.asarray(x)


def check(row, lib, got, want, strides=True, computed=None, loops=()):
    """computed: the dtype the op computes in where it is cast into an out= of another (the
    tolerance is that dtype's); loops: torch_loops' results, where torch has two."""
    assert type(got) is type(want), (type(got), type(want))
    assert _dtype(got) == _dtype(want), (_dtype(got), _dtype(want))
    g, w = host(got), host(want)
    assert g.shape == w.shape
    if strides and w.size > 1 and (isinstance(want, torch.Tensor) or hasattr(want, "strides")):
        assert (got.stride() if lib == "torch" else got.strides) == (
            want.stride() if lib == "torch" else want.strides), "output strides"
    if lib == "torch" and row.name in ("maximum", "minimum", "clip") and w.dtype.kind == "f":
        # torch's vector and scalar CPU paths disagree on the sign of a +-0 tie (documented)
        g, w = g.astype(np.float64) + 0.0, w.astype(np.float64) + 0.0
    if lib == "torch" and row.name in ("add", "subtract") and w.dtype.kind == "c":
        # torch's CPU kernels compute x + alpha * y with alpha = 1 as a complex product, which
        # turns an infinite part into NaN (inf + 1j gives inf + nanj); stridewise adds as NumPy
        g, w = g.copy(), w.copy()
        g[~np.isfinite(w)] = w[~np.isfinite(w)]
    if computed is not None and computed.kind == "f" and w.dtype.kind == "c":
        assert ulps(g.imag, w.imag) == 0, (g, w)           # a real result in a complex out
        g, w = g.real, w.real
    if computed is not None and computed.kind in "fc" and w.dtype.kind in "fc" \
            and computed.itemsize < w.dtype.itemsize and (computed.kind == "c") == (w.dtype.kind == "c"):
        g, w = g.astype(computed), w.astype(computed)      # in the units it was computed in
    if loops and w.dtype.kind == "c":
        # either torch loop's special values; the rest within the tolerance, norm-wise
        loops = [x.astype(w.dtype) for x in loops]
        either = same_values(g, w) | same_values(g, loops[0]) | same_values(g, loops[1])
        assert complex_ulps(g[~either], w[~either]) <= tolerance(row, w.dtype, lib), (g, w, loops)
        return
    assert ulps(g, w) <= tolerance(row, computed or w.dtype, lib), (g, w)


# torch's CPU complex kernels differ from themselves: the scalar loop (strided operands, and a
# dense loop's last elements) fuses a product that the vectorized loop rounds (GCC contracts
# c10::complex's arithmetic), so near overflow one gives inf where the other gives NaN, and
# the vectorized division scales by an approximate reciprocal. stridewise gives one formula
# in every layout (docs/semantics.md, Complex numbers); an element may match either loop.
TORCH_TWO_LOOPS = ("multiply", "square", "divide", "reciprocal", "sigmoid", "pow")


def torch_loops(row, args, shape) -> tuple:
    """Each element's result from torch's vectorized CPU loop and from its scalar loop, as
    host arrays of `shape`: the operands with dimensions broadcast to it and flattened, each
    element repeated over whole vector chunks (32 times), then as stride-2 copies, which
    TensorIterator runs through its scalar loop. Numbers and 0-d tensors stay as they are
    (they promote otherwise)."""
    fn = torch_fn(row)

    def each(a, spread):
        if not isinstance(a, torch.Tensor) or a.dim() == 0:
            return a
        return spread(a.broadcast_to(shape).reshape(-1))

    def strided(a):
        s = torch.empty(2 * a.numel(), dtype=a.dtype)[::2]
        return s.copy_(a)
    vector = fn(*(each(a, lambda a: a.repeat_interleave(32)) for a in args))[::32]
    scalar = fn(*(each(a, strided) for a in args))
    return tuple(host(x).reshape(shape) for x in (vector, scalar))


def _departure(row, lib, args, error) -> bool:
    """Where stridewise raises and the library does not, on purpose (documented)."""
    if lib != "torch" and row.name == "reciprocal":     # NumPy's integer reciprocal
        return "float dtype first" in str(error)
    if lib == "torch" and "complex32" in str(error):    # torch's ComplexHalf: not a dtype here
        return True
    if lib == "torch" and row.name == "pow" and "dtype bool" in str(error):
        return True     # torch has no bool pow, but returns x for bool ** True (exponent 1)
    if lib != "torch" and row.name == "where" and isinstance(error, OverflowError):
        return True     # np.where casts an int beyond the range unsafely, where ufuncs raise
    if lib == "torch" and row.name == "where" and isinstance(error, OverflowError) and all(
            type(a) is int for a in args[1:]) and any(a >= 2**63 for a in args[1:]):
        return True     # torch types two ints of 2^63 and more as uint64; stridewise raises
    if lib != "torch" and row.name == "where" and args[0].dtype.kind == "c":
        return "condition must be real" in str(error)     # a real condition only (documented)
    return False


def numpy_reference(row, args, out):
    fn = numpy_fn(row)
    if out is None and any(getattr(a, "dtype", np.dtype(int)).kind == "c" for a in args):
        # NumPy's complex loops round otherwise for negative strides and broadcasts (scalar
        # code); stridewise gives its dense loop's result in every layout (docs/semantics.md):
        # values from dense copies, the layout from the call itself
        want, err = _with_out(fn, args, None)
        if err is None and isinstance(want, np.ndarray) and want.size:
            with np.errstate(all="ignore"):
                want[...] = fn(*[np.ascontiguousarray(np.broadcast_to(a, want.shape))
                                 if isinstance(a, np.ndarray) else a for a in args])
        return want, err
    if not any(getattr(a, "dtype", None) == BF16 for a in args):
        with np.errstate(all="ignore"):
            return _with_out(fn, args, out)
    # bfloat16: float32 and one rounding (ml_dtypes' definition, written out by oracle.numpy_op
    # so that the oracle does not depend on the loops an ml_dtypes release registers)
    want, err = _result(lambda *a: numpy_op(fn, *a), args)
    real = _result(fn, args)[0] if err is None and out is None else None
    if isinstance(real, np.ndarray) and isinstance(want, np.ndarray) and real.shape == want.shape:
        # the layout of NumPy's own call (a new dense array), in elements where that call
        # computes in another dtype (np.where(c, 0.5, x) is float32 by ml_dtypes' promotion)
        if real.dtype != want.dtype:
            k = want.dtype.itemsize
            real = np.lib.stride_tricks.as_strided(
                np.empty(max(real.size, 1), want.dtype), real.shape,
                tuple(st // real.itemsize * k for st in real.strides))
        real[...] = want
        want = real
    if err is None and out is not None:
        try:
            np.copyto(out, want, casting="same_kind")
        except TypeError as e:
            return None, e
        want = out
    return want, err


def cupy_reference(row, args, out):
    """NumPy's values and dtype on host copies, as a CuPy array in the layout CuPy's own op
    allocates (C-contiguous where CuPy has no such op or refuses the call). An out= takes
    the result by CuPy's rule: computed by the inputs' loop, then cast into out if same_kind
    allows (NumPy's own out= would pick its loop with out's dtype)."""
    import cupy
    want, err = numpy_reference(row, [host(a) if is_cupy(a) else a for a in args], None)
    if err is not None:
        return None, err
    theirs = getattr(cupy, numpy_fn(row).__name__, None)
    try:
        layout = theirs(*args) if out is None and theirs is not None else None
    except Exception:    # noqa: BLE001 -- CuPy's refusals are not the oracle's
        layout = None
    if out is not None:
        if not np.can_cast(np.asarray(want).dtype, out.dtype, "same_kind"):
            return None, TypeError("same_kind")
        out[...] = cupy.asarray(np.asarray(want).astype(out.dtype))
        return out, None
    if not (isinstance(layout, cupy.ndarray) and layout.shape == np.shape(want)
            and layout.dtype == np.asarray(want).dtype):
        layout = cupy.empty(np.shape(want), np.asarray(want).dtype)
    layout[...] = cupy.asarray(np.asarray(want))
    return layout, None


def torch_reference(row, args, out):
    fn = torch_fn(row)
    if row.name in ("remainder", "fmod"):
        # stridewise's torch remainder is torch's CUDA definition: fmod, then + b where the signs
        # differ (torch's CPU kernel computes a - b * floor(a / b)); its fmod is C's (torch's
        # CPU vector loop gives NaN for a subnormal divisor); written with torch's ops
        def fn(a, b, out=None):
            # in NumPy (torch's CPU fmod gives NaN for subnormal divisors in its vector loop);
            # 16-bit floats in float32, rounded once; read before out (maybe a) is written
            x, y = (np.array(host(v) if isinstance(v, torch.Tensor) else v) for v in (a, b))
            want = getattr(torch, row.name)(a, b, out=out)    # torch's dtype, layout and refusals
            common = torch.result_type(a, b)                 # computed in it, then cast into out
            if not common.is_floating_point:
                return want
            wide = np.float64 if common == torch.float64 else np.float32
            result = NP[str(common).removeprefix("torch.")]        # operands in it first
            with np.errstate(all="ignore"):
                x, y = x.astype(result).astype(wide), y.astype(result).astype(wide)
            with np.errstate(all="ignore"):
                m = np.fmod(x, y)
                r = m if row.name == "fmod" else np.where((m != 0) & ((m < 0) != (y < 0)), m + y, m)
            return want.copy_(torch.from_numpy(np.ascontiguousarray(r)).to(want.dtype))
    return _with_out(fn, args, out)


def _with_out(fn, args, out):
    """fn(*args, out=out); for functions without out= (np.where, torch.isnan, torch.relu, ...)
    the result cast into out by the library's out= rule, which stridewise's out= follows."""
    want, err = _result(fn, args, out)
    if out is None or "unexpected keyword argument 'out'" not in str(err):
        return want, err
    want, err = _result(fn, args)
    if err is not None:
        return want, err
    if isinstance(out, torch.Tensor):
        if not torch.can_cast(want.dtype, out.dtype):
            return None, TypeError("torch.can_cast")
        return out.copy_(want), None
    try:
        np.copyto(out, want, casting="same_kind")
    except TypeError as e:
        return None, e
    return out, None


def _cuda_departure(row, args, out_spec, alias, werr, gerr, ref) -> bool:
    """Where torch's CUDA kernels differ from its CPU ones, which stridewise follows on both
    devices (docs/semantics.md, "torch on CUDA")."""
    def complex_(a):
        return isinstance(a, (complex, torch.Tensor)) and (
            type(a) is complex or a.dtype.is_complex)
    result, err = ref(row, args, None)
    if any(complex_(a) for a in args) or (err is None and result.dtype.is_complex):
        return True     # its complex math (thrust's special values and roundings)
    if err is None and (out_spec is not None and NP[out_spec[0]] != host(result).dtype
                        or alias is not None and args[0].dtype != result.dtype):
        return True     # an out of another dtype: many CUDA kernels compute in the out's dtype
    numbers = [a for a in args[1:] if type(a) in (bool, int, float, complex) or
               isinstance(a, torch.Tensor) and a.device.type == "cpu"]
    if row.name in DIVIDES and any(type(a) is int for a in numbers):
        return True     # an int divisor that wraps to 0 or -1: no error, undefined bits
    if row.name == "floor_divide" and numbers and err is None and result.dtype.is_floating_point:
        return True     # by the number's reciprocal (float32 and float64 too)
    if row.name in ("where", "pow") and gerr is None and "cannot be converted" in str(werr):
        return True     # a number past the 16-bit range: raises on CUDA, inf on the CPU
    if row.name in ("left_shift", "right_shift") and any(
            (a < 0) if type(a) is int else isinstance(a, torch.Tensor) and
            not a.dtype.is_floating_point and bool((a < 0).any()) for a in args[1:]):
        return True     # a negative shift count: undefined
    if row.name == "clip" and any(type(a) in (int, float) for a in args[1:]):
        return True     # clamp by a number: NaN bounds ignored, no range check on CUDA
    return False


def _host_dtype(x):
    """x's dtype as NumPy's, or None where NumPy has none (torch's ComplexHalf)."""
    try:
        return host(x).dtype
    except (TypeError, KeyError, RuntimeError):
        return None


def _ill_conditioned(a, b) -> bool:
    """Whether complex a ** b leaves |a| in [1e-3, 10], |b| <= 3 anywhere (finite parts):
    beyond, exp(b log a) amplifies a 1-ulp difference in log a by |b log a| (TOLERANCE_ULP
    holds within; tests/test_complex.py tests the special values everywhere)."""
    a, b = (np.asarray(host(v) if hasattr(v, "shape") else v).astype(np.complex128) for v in (a, b))
    with np.errstate(all="ignore"):
        fa, fb = np.isfinite(a.real) & np.isfinite(a.imag), np.isfinite(b.real) & np.isfinite(b.imag)
        return bool((fa & ((np.abs(a) < 1e-3) | (np.abs(a.real) > 10) | (np.abs(a.imag) > 10))).any()
                    or (fb & ((np.abs(b.real) > 3) | (np.abs(b.imag) > 3))).any())


def run(lib: str, row, args, out_spec, alias, device: str = "cpu"):
    """Call stridewise and the library the same way; compare."""
    ref = {"numpy": numpy_reference, "torch": torch_reference, "cupy": cupy_reference}[lib]
    copy = (lambda a: a.clone()) if lib == "torch" else (lambda a: a.copy())
    is_array = torch.Tensor if lib == "torch" else np.ndarray
    if lib == "cupy":
        import cupy
        is_array = cupy.ndarray
    two_loops = lib == "torch" and device == "cpu" and row.name in TORCH_TWO_LOOPS
    plain, perr = ref(row, args, None) if alias is not None or two_loops else (None, None)
    loops = ()
    # (torch's complex32, which stridewise refuses: _departure)
    if two_loops and perr is None and plain.dtype.is_complex and plain.dtype != torch.complex32:
        loops = torch_loops(row, args, tuple(plain.shape))
    if alias is not None and tuple(args[0].shape) != tuple(np.shape(plain)):
        alias = None                   # only an input of the result's shape can be its out
    computed = None
    if alias is not None:
        computed = _host_dtype(plain)
        mine, theirs = list(args), [copy(a) if isinstance(a, is_array) else a for a in args]
        want, werr = ref(row, theirs, theirs[0])
        if alias == "inplace":
            got, gerr = _result(getattr(sw, row.name + "_"), mine)
        else:
            got, gerr = _result(getattr(sw, row.name), mine, mine[0])
        outs = (mine[0], theirs[0])
    elif out_spec is not None:
        want0, werr = ref(row, args, None)
        if werr is not None:
            return
        computed = _host_dtype(want0)
        if computed is None:        # torch's ComplexHalf: no dtype here, nothing to compare
            return
        shape = tuple(host(want0).shape)
        dtype, layout = out_spec
        blank = np.zeros(shape, NP[dtype])
        if lib != "torch":
            make = numpy_layout if lib == "numpy" else to_cupy
            o1, o2 = make(blank, layout), make(blank, layout)
        else:
            o1, o2 = to_torch(blank, layout, device), to_torch(blank, layout, device)
        want, werr = ref(row, args, o1)
        got, gerr = _result(getattr(sw, row.name), args, o2)
        outs = (o2, o1)
    else:
        want, werr = ref(row, args, None)
        got, gerr = _result(getattr(sw, row.name), args)
        outs = None
    if lib == "torch" and ("must be Tensor" in str(werr) or "invalid combination" in str(werr)):
        return          # torch.maximum(x, 2): a number where torch's signature takes only a tensor
    if lib == "torch" and row.name == "pow" and any(
            type(a) is float and 0 < abs(a) < 1.2e-38 for a in args):
        return          # open: torch reads a float exponent in double (x ** 1e-310: NaN for x < 0)
    if lib == "torch" and "ZeroDivisionError" in str(werr):
        return          # a number that wraps to 0 (int8 // 256): stridewise gives 0 (documented)
    if werr is not None and gerr is None and row.name == "abs" and _dtype(got) == torch.bool:
        return          # torch's CPU abs has no bool loop; its CUDA one and NumPy's: the identity
    if lib == "torch" and device == "cuda" and _cuda_departure(row, args, out_spec, alias, werr, gerr, ref):
        return
    if lib == "cupy" and row.name.startswith("logical") and any(type(a) in (float, complex) for a in args):
        return          # CuPy casts a float to the arrays' dtype there (NumPy takes its truth)
    if lib == "cupy" and row.name == "pow" and werr is None and host(want).dtype.kind == "c" \
            and _ill_conditioned(*args):
        return          # the device's exp(b log a) past |a| <= 10, |b| <= 3 (docs/semantics.md)
    if werr is not None:
        assert gerr is not None, f"{lib} raised {werr!r}; stridewise returned {got!r}"
        assert isinstance(gerr, (TypeError, ValueError, RuntimeError, OverflowError)), repr(gerr)
        if outs and alias is None:            # nothing written
            assert not host(outs[0]).any(), "a refused call wrote its out"
        return
    if gerr is not None:
        if _departure(row, lib, args, gerr):
            return
        raise AssertionError(f"stridewise raised {gerr!r}; {lib} returned {want!r}") from gerr
    if outs:
        assert got is outs[0]
        want, got = outs[1], outs[0]
    # an out= keeps its own strides, and takes the result computed in its own dtype
    check(row, lib, got, want, strides=outs is None, computed=computed, loops=loops)


def run_fake(row, args, device: str = "cpu"):
    """The call under torch's FakeTensorMode (what torch.compile and torch.export trace) must
    give the eager call's shape, dtype, strides and device, and raise where it raises."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    fn = getattr(sw, row.name)
    want, werr = _result(fn, args)
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args]
    with mode:
        got, gerr = _result(fn, fakes)
    if werr is not None or gerr is not None:
        assert werr is not None and gerr is not None, f"eager: {werr!r}; fake: {gerr!r}"
        # torch's schema refuses an int past 64 bits beside integer tensors before any check
        schema = isinstance(gerr, OverflowError) and "int too big to convert" in str(gerr)
        assert schema or isinstance(gerr, type(werr)), (werr, gerr)
        return
    for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
        assert (g.shape, g.dtype, g.stride(), g.device) == (w.shape, w.dtype, w.stride(), w.device), (g, w)


# CI runs a fixed, fast sample; STRIDEWISE_FUZZ_EXAMPLES=5000 runs a long, random one.
EXAMPLES = int(os.environ.get("STRIDEWISE_FUZZ_EXAMPLES", "0"))
# STRIDEWISE_FUZZ_SHRINK=0 reports a failure as drawn (shrinking recompiles kernels for minutes).
SETTINGS = settings(max_examples=EXAMPLES or 100, deadline=None, derandomize=not EXAMPLES,
                    suppress_health_check=list(HealthCheck),
                    phases=[p for p in Phase if p != Phase.shrink
                            or os.environ.get("STRIDEWISE_FUZZ_SHRINK") != "0"])


@SETTINGS
@given(st.data())
def test_every_op_against_numpy(data):
    with np.errstate(all="ignore"):       # the library's result, its warnings aside
        run("numpy", *data.draw(call("numpy")))


@SETTINGS
@given(st.data())
def test_every_op_against_torch(data):
    run("torch", *data.draw(call("torch")))


@SETTINGS
@given(st.data())
def test_every_op_under_fake_tensors(data):
    run_fake(*data.draw(call("torch"))[:2])


@pytest.mark.gpu
@SETTINGS
@given(st.data())
def test_every_op_against_torch_on_cuda(data):
    """The same calls with CUDA tensors, against torch's CUDA kernels."""
    run("torch", *data.draw(call("torch", "cuda")), device="cuda")


@pytest.mark.gpu
@SETTINGS
@given(st.data())
def test_every_op_with_cupy_arrays(data):
    """The NumPy calls with CuPy arrays: NumPy's values and dtypes, CuPy's layouts."""
    with np.errstate(all="ignore"):
        run("cupy", *data.draw(call("cupy")), device="cuda")
