"""Built-in ops on the CPU backend against NumPy and torch: bit for bit where the op is exact,
within its row's tolerance where it is not (transcendentals, float pow, 16-bit fma). Every
row of the op table is tested in every compute dtype it lists (TABLE_CASES); each documented
departure from one library is declared beside the oracles and asserted as such."""
import zlib
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import stridewise as sw
from conftest import DTYPES
from oracle import NP, numpy_op, same_bits, torch_remainder
from stridewise.ops import builtins as _builtins
from stridewise.ops.builtins import OPS, ROWS, SUPPORTED, TOLERANCE_ULP

torch = pytest.importorskip("torch")

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int32", "int64")


# -- helpers --------------------------------------------------------------------------------

def to_torch(x: np.ndarray):
    if x.dtype == NP["bfloat16"]:
        return torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(x)


def from_torch(t) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def ulp_diff(got, want) -> int:
    """Largest distance in units in the last place (NaN vs NaN counts as equal)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype.kind in "iub":
        return int(np.max(np.abs(got.astype(np.int64) - want), initial=0))
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[got.dtype.itemsize]
    top = np.int64(1) << (8 * got.dtype.itemsize - 1)

    def ordered(x):
        i = x.view(bits).astype(np.int64)
        return np.where(i < 0, -(i + top), i)          # sign-magnitude -> ordered integers

    nan = np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
    d = np.where(nan, 0, np.abs(ordered(got) - ordered(want)))
    return int(d.max(initial=0))


def values(rng, dtype, n=4099, lo=None):
    """Random values plus the special ones (NaN, +-inf, +-0, extremes), unaligned length."""
    if dtype in INTS:
        x = rng.integers(-1000, 1000, n).astype(NP[dtype])
        info = np.iinfo(NP[dtype])
        x[:5] = [info.min, info.max, -1, 0, 1]
        return x
    x = (rng.standard_normal(n) * 10).astype(NP[dtype])
    x[:7] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0]
    if lo is not None:
        x = np.abs(x) + NP[dtype].type(lo)
    return x


def undefined_to_zero(x: np.ndarray, dst: str) -> np.ndarray:
    """x with every value whose float -> `dst` conversion is undefined (NaN, inf, outside
    the integer range) set to 0. Decided in float64 with plain comparisons, so it holds for
    bfloat16 whatever ml_dtypes' own ufuncs (nan_to_num, isfinite) do with the type."""
    wide = x.astype(np.float64)
    info = np.iinfo(NP[dst])
    ok = (wide >= info.min) & (wide < -float(info.min))          # NaN compares false
    return np.where(ok, wide, 0.0).astype(x.dtype)


# -- every row of the op table, against NumPy and torch ---------------------------------------
# One case per (row, compute dtype): a new row is tested with no change here. What a row's
# NumPy ufunc and torch function cannot stand for is declared below, beside the oracles.

def sample(rng, dtype: str, n: int = 4099) -> np.ndarray:
    """Random values of `dtype` with every special one (NaN, +-inf, +-0, extremes), values that
    meet often (small integers, rounded floats), at an unaligned length."""
    if dtype == "bool":
        return rng.random(n) < 0.5
    dt = NP[dtype]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        x[:4] = [info.min, info.max, 0, 1]
        x[4:80] = rng.integers(-3 if info.min else 0, 4, 76)
        return x
    x = (rng.standard_normal(n) * 4).astype(dt)
    x[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5]
    x[8:80] = np.round(x[8:80].astype(np.float64)).astype(dt)
    return x


def _shift_counts(args, dtype, rng):
    bits = 8 * NP[dtype].itemsize                  # counts in and outside [0, bits)
    args[1] = rng.integers(-2 if NP[dtype].kind == "i" else 0, bits + 3, args[1].size).astype(NP[dtype])
    return args


def _pow_operands(args, dtype, rng):
    if NP[dtype].kind in "iu":                     # NumPy raises on a negative exponent array
        args[1] = rng.integers(0, 40, args[1].size).astype(NP[dtype])
    else:                                          # bases and exponents where pow is finite
        args[0][8:] = (rng.random(args[0].size - 8) * 4).astype(NP[dtype])
        args[1][8:] = (rng.random(args[1].size - 8) * 6 - 3).astype(NP[dtype])
    return args


def _clip_bounds(args, dtype, rng):
    lo, hi = np.minimum(args[1], args[2]), np.maximum(args[1], args[2])
    hi[:20] = lo[:20] if dtype == "bool" else lo[:20] - NP[dtype].type(1)   # crossed bounds
    return [args[0], lo, hi]


def _bool_condition(args, dtype, rng):
    return [rng.random(args[0].size) < 0.5, *args[1:]]


# Inputs beyond sample(): the domain an op's arguments need.
OPERANDS = {"left_shift": _shift_counts, "right_shift": _shift_counts, "pow": _pow_operands,
            "clip": _clip_bounds, "where": _bool_condition}


def operands(row, dtype, rng):
    args = [sample(rng, dtype) for _ in row.params]
    args[1:] = [np.roll(a, 3 * k) for k, a in enumerate(args[1:], 1)]   # specials meet randoms
    return OPERANDS.get(row.name, lambda a, d, r: a)(args, dtype, rng)


def exact_fma(x, y, z):
    """x * y + z rounded once to the inputs' dtype (ties to even), from exact rational
    arithmetic; integers wrap as NumPy's do; non-finite and zero results from float64
    arithmetic, where no rounding is at stake; 16-bit floats from the float64 result."""
    dt = x.dtype
    if dt.kind in "iu":
        with np.errstate(all="ignore"):
            return x * y + z
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)
    if dt.itemsize == 2:
        return wide.astype(dt)
    out = wide.astype(dt)
    for i in np.flatnonzero(np.isfinite(wide)):
        q = Fraction(float(x[i])) * Fraction(float(y[i])) + Fraction(float(z[i]))
        if q == 0:                      # a zero's sign: float64's, exact here (x * y == -z)
            continue
        r = dt.type(float(q))           # float(q) rounds once to float64; float32 may be 1 off
        cands = [c for c in (np.nextafter(r, dt.type(-np.inf)), r, np.nextafter(r, dt.type(np.inf)))
                 if np.isfinite(c)]
        out[i] = min(cands, key=lambda c: (abs(Fraction(float(c)) - q),
                                           int(np.array(c).view(f"u{dt.itemsize}")) & 1))
    return out


# NumPy's result for the rows without a NumPy ufunc of their meaning (row.ufunc None).
NUMPY_ORACLE = {
    "where": np.where,
    "relu": lambda x: np.where(x < 0, np.zeros_like(x), x),     # NaN < 0 is false: NaN stays
    "fma": exact_fma,
    "sigmoid": lambda x: (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(
        np.float64 if x.dtype.kind in "iu" else x.dtype),         # integers: NumPy's float64
    "clip": np.clip,
}
# torch's result where the row names no torch function, or torch's CPU function is not the
# op's definition (stridewise's remainder is torch's on CUDA: a zero keeps the dividend's sign).
TORCH_ORACLE = {"fma": exact_fma, "remainder": torch_remainder}


def numpy_result(row, args):
    fn = NUMPY_ORACLE.get(row.name) or getattr(np, row.ufunc)
    return numpy_op(fn, *args)


def _values_equal(got, want, row, dtype):
    # The library's result differs only in the sign of a zero tie: values, NaN included.
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


def _sleef_sqrt(got, want, row, dtype):
    # torch's sqrt comes from Sleef's u05 routines: within 1 ulp, not correctly rounded.
    assert ulp_diff(got, want) <= 1


# Where NumPy departs from the op's definition: the comparison made instead of the row's.
NUMPY_DEPARTURES: dict = {}
# Where torch departs from the op's definition.
TORCH_DEPARTURES = {
    # torch's vector and scalar CPU paths disagree on the sign of a +-0 tie with maximum,
    # minimum and clip's bounds; stridewise follows NumPy's float32 loops (maximum, minimum)
    # and torch's scalar path (clip).
    **{(op, d): _values_equal for op in ("maximum", "minimum", "clip") for d in DTYPES + ("bool",)},
    ("sqrt", "float32"): _sleef_sqrt, ("sqrt", "float64"): _sleef_sqrt,
}
# torch raises on an integer division by zero; the torch cases divide by nonzero integers.
NONZERO_DIVISOR = ("fmod", "floor_divide")


def assert_matches(row, got, want):
    """Result dtype, then bits (bool: values), or within the row's tolerance."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (row.name, got.dtype, want.dtype)
    tol = row.ulp.get(str(got.dtype), 0)
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
    elif tol:
        assert ulp_diff(got, want) <= tol, row.name
    else:
        assert same_bits(got, want), row.name


def check_numpy(row, dtype):
    args = operands(row, dtype, np.random.default_rng(zlib.crc32(f"{row.name} {dtype}".encode())))
    try:
        want = numpy_result(row, args)
    except TypeError:          # no NumPy loop (sign of bool, which torch defines): both refuse
        with pytest.raises(TypeError, match="no loop"):
            getattr(_builtins, row.name)(*args)
        return
    got = getattr(_builtins, row.name)(*args)
    compare = NUMPY_DEPARTURES.get((row.name, dtype))
    if compare:
        assert got.dtype == want.dtype
        compare(got, want, row, dtype)
    else:
        assert_matches(row, got, want)


def check_torch(row, dtype):
    args = operands(row, dtype, np.random.default_rng(7))
    if row.name in NONZERO_DIVISOR and NP[dtype].kind in "iu":
        args[1][args[1] == 0] = 7
    tensors = [to_torch(a) for a in args]
    if row.name in TORCH_ORACLE:
        want = TORCH_ORACLE[row.name](*args)
    else:
        try:
            want = from_torch(getattr(torch, row.torch_name)(*tensors))
        except (RuntimeError, TypeError) as e:        # no kernel for the dtype, e.g. uint16
            pytest.skip(f"torch has no {row.torch_name} for {dtype}: {str(e)[:60]}")
    got = from_torch(getattr(_builtins, row.name)(*tensors))
    compare = TORCH_DEPARTURES.get((row.name, dtype))
    if compare:
        assert got.dtype == want.dtype
        compare(got, want, row, dtype)
    else:
        assert_matches(row, got, want)


TABLE_CASES = [(name, dtype) for name, row in ROWS.items() for dtype in row.dtypes]


@pytest.mark.parametrize("name, dtype", TABLE_CASES)
def test_op_matches_numpy(name, dtype):
    check_numpy(ROWS[name], dtype)


@pytest.mark.parametrize("name, dtype", TABLE_CASES)
def test_op_matches_torch(name, dtype):
    check_torch(ROWS[name], dtype)


@pytest.mark.parametrize("name", [n for n, r in ROWS.items() if r.promote == "float"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16"])
def test_float_ops_compute_integers_in_the_librarys_float(name, dtype):
    """NumPy computes these ops on integers in float64 (its integer loops' resolution), torch in
    float32; where NumPy has only an integer loop (reciprocal) stridewise raises."""
    row = ROWS[name]
    x = np.arange(1, 60).astype(dtype)
    args = [x] * len(row.params)
    fn = getattr(_builtins, name)
    if np.dtype(numpy_result(row, args).dtype).kind in "iu":
        with pytest.raises(TypeError, match="float dtype first"):
            fn(*args)
    else:
        assert_matches(row, fn(*args), numpy_result(row, args))
    if dtype != "uint16":                             # torch promotes uint16 with nothing
        tensors = [torch.from_numpy(a) for a in args]
        want = getattr(torch, row.torch_name)(*tensors).numpy()
        assert want.dtype == np.float32
        got = fn(*tensors).numpy()
        compare = TORCH_DEPARTURES.get((name, "float32"))   # sqrt: Sleef's, on AVX-512 CPUs
        if compare:
            assert got.dtype == want.dtype
            compare(got, want, row, "float32")
        else:
            assert_matches(row, got, want)


# -- division, promotion, modes -----------------------------------------------------------

def test_division_promotes_integers_like_each_library():
    a, b = np.arange(-6, 6, dtype=np.int32), np.full(12, 4, np.int32)
    assert same_bits(sw.divide(a, b), a / b)                          # NumPy: float64
    got = sw.divide(to_torch(a), to_torch(b))
    assert got.dtype == torch.float32 and torch.equal(got, torch.divide(to_torch(a), to_torch(b)))


@pytest.mark.parametrize("dtype", INTS)
def test_integer_division_by_zero_and_overflow(dtype):
    info = np.iinfo(NP[dtype])
    a = np.array([7, -7, 0, info.min, info.min, info.max], NP[dtype])
    b = np.array([0, 0, 0, -1, 0, -1], NP[dtype])
    np.testing.assert_array_equal(sw.floor_divide(a, b), [0, 0, 0, info.min, 0, -info.max])
    np.testing.assert_array_equal(sw.fmod(a, b), np.zeros(6, NP[dtype]))
    with np.errstate(all="ignore"):
        assert same_bits(sw.floor_divide(a, b), np.floor_divide(a, b))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_maximum_minimum_clip_nan_and_signed_zero_follow_numpy(dtype):
    """A +-0 tie returns the operand NumPy's loop for the dtype returns (its float16 loops
    differ from its float32 and float64 ones), in short and long (vectorized) arrays."""
    x = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 2.0, 0.0, -0.0] * 9).astype(NP[dtype])
    y = np.array([1.0, np.nan, np.nan, 0.0, -0.0, 3.0, 0.0, -0.0] * 9).astype(NP[dtype])
    for n in (8, 72):
        for name in ("maximum", "minimum"):
            assert same_bits(getattr(sw, name)(x[:n], y[:n]), getattr(np, name)(x[:n], y[:n])), name
        if dtype == "bfloat16":
            continue     # ml_dtypes has no clip loop: NumPy's clip of bfloat16 is float32's
        for lo, hi in ((y[:n], x[:n]), (x[:n], y[:n])):
            assert same_bits(sw.clip(x[:n], lo, hi), np.clip(x[:n], lo, hi))


def test_scalars_and_mixed_dtypes_promote_like_the_library():
    x = np.arange(5, dtype=np.float32)
    assert sw.add(x, 2.5).dtype == np.float32 and sw.add(2, x).dtype == np.float32
    i = np.arange(5, dtype=np.int32)
    assert same_bits(sw.multiply(i, x), i * x)                        # float64 in NumPy
    got = sw.multiply(to_torch(i), to_torch(x))
    assert got.dtype == torch.float32 and torch.equal(got, to_torch(i) * to_torch(x))
    assert same_bits(sw.subtract(x, np.float64(0.5)), x - np.float64(0.5))


@pytest.mark.parametrize("case", ["rows", "tiled", "short_rows"])
def test_broadcast_modes_and_out(case):
    rng = np.random.default_rng(5)
    x = {"rows": rng.standard_normal((64, 300)), "tiled": rng.standard_normal((300, 64)).T,
         "short_rows": rng.standard_normal((999, 6))}[case]
    y = rng.standard_normal(x.shape[-1])
    # into a C-ordered out: an allocated one follows x (order='K'), so x.T needs no tiles
    assert sw.explain(sw.maximum, x, y, out=np.empty(x.shape)).mode == case
    if case == "tiled":
        assert sw.explain(sw.maximum, x, y).mode == "rows"
        assert sw.maximum(x, y).strides == np.maximum(x, y).strides == (8, 512)
    out = np.empty((x.shape[1], x.shape[0])).T
    assert sw.maximum(x, y, out=out) is out
    assert same_bits(out, np.maximum(x, y))


# -- pow --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTS)
def test_integer_pow(dtype):
    rng = np.random.default_rng(11)
    a = rng.integers(-20, 20, 2000).astype(NP[dtype])
    b = rng.integers(0, 40, 2000).astype(NP[dtype])                  # wraps, as NumPy does
    assert same_bits(sw.pow(a, b), np.power(a, b))
    assert torch.equal(sw.pow(to_torch(a), to_torch(b)), torch.pow(to_torch(a), to_torch(b)))
    a = np.array([1, -1, -1, 2, 0, -3], NP[dtype])
    b = np.array([-5, -3, -4, -1, -1, -2], NP[dtype])                 # torch's trunc(a ** b)
    assert torch.equal(sw.pow(to_torch(a), to_torch(b)), torch.pow(to_torch(a), to_torch(b)))
    if NP[dtype].kind == "i":                                         # NumPy raises on them
        with pytest.raises(ValueError, match="negative integer powers"):
            np.power(a, b)
        with pytest.raises(ValueError, match="negative integer powers"):
            sw.pow(a, b)
    with pytest.raises(ValueError, match="negative integer powers"):
        sw.pow(a, -1)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_integer_pow_of_every_exponent_size(dtype):
    """Every exponent below 256 (math.h int_pow_small's eight steps) and larger ones among
    them, so that packs mix that form with int_pow's loop; bases past the wrap, odd and even:
    NumPy's bits, and torch's where torch has the dtype's pow."""
    rng = np.random.default_rng(12)
    top = min(int(np.iinfo(NP[dtype]).max), 2**63 - 1)
    small = np.arange(min(top, 255) + 1)
    b = rng.permutation(np.concatenate([small, small, rng.integers(256 if top > 255 else 0, top, 700,
                                                                   endpoint=True)]))
    b = b.astype(NP[dtype])
    a = rng.integers(-300, 300, len(b)).astype(NP[dtype])
    for x, y in ((a, b), (a, np.sort(b)), (a[:300], b[:300].min())):   # sorted: whole packs of one form
        assert same_bits(sw.pow(x, y), np.power(x, y))
    if dtype in ("int8", "uint8", "int16", "int32", "int64"):
        assert torch.equal(sw.pow(to_torch(a), to_torch(b)), torch.pow(to_torch(a), to_torch(b)))
    if dtype in ("int8", "int16", "int32", "int64"):     # torch's trunc(a ** b) below 0, in packs
        a[::3], b[::5] = rng.choice([1, -1, 0, 2, -2], len(a[::3])), rng.integers(-99, 0, len(b[::5]))
        assert torch.equal(sw.pow(to_torch(a), to_torch(b)), torch.pow(to_torch(a), to_torch(b)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_masks_with_numbers(dtype):
    """A bool mask beside another dtype (the host's kernels that read bool operands hold its
    lanes as bytes and move 64 bytes of bool a pack: pack.h, cpu/loops.h): where, a mask times
    the data and a logical op with it, dense and strided, lengths off the packs, masks whose
    bytes are not 0 or 1 (a uint8 array viewed as bool: its truth), against NumPy's bits."""
    rng = np.random.default_rng(23)
    n = 64 * 37 + 13
    bytes_ = rng.integers(0, 4, n, dtype=np.uint8) * rng.integers(0, 2, n, dtype=np.uint8) * 63
    for c in (rng.random(n) < 0.5, bytes_.view(np.bool_)):
        x, y = values(rng, dtype, n), values(rng, dtype, n)
        for view in (slice(None), slice(3, None, 2)):
            cv, xv, yv = c[view], x[view], y[view]
            assert same_bits(sw.where(cv, xv, yv), numpy_op(np.where, cv, xv, yv))
            assert same_bits(sw.multiply(cv, xv), numpy_op(np.multiply, cv, xv))
            assert same_bits(sw.logical_and(cv, xv), numpy_op(np.logical_and, cv, xv))
            assert same_bits(sw.add(xv, cv), numpy_op(np.add, xv, cv))
            other = c[::-1][view]      # masks alone: their or, and, and a select between them
            assert same_bits(sw.maximum(cv, other), np.maximum(cv, other))
            assert same_bits(sw.minimum(cv, other), np.minimum(cv, other))
            assert same_bits(sw.where(cv, other, ~other), np.where(cv, other, ~other))


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_integer_tests_are_constants_at_every_length(name):
    """Of integers isnan, isinf and isfinite are constants, whose host loop moves 64-byte packs
    of the result (functors.h Constant): every length up to past two such packs, dense,
    strided and into a strided out=, against NumPy (torch: ones_like / zeros_like)."""
    for dtype in ("int8", "uint16", "int32", "int64", "bool"):
        x = np.arange(300).astype(dtype)
        for n in (*range(0, 140), 257, 300):
            for view in (x[:n], x[::-2][:n // 2]):
                assert same_bits(getattr(sw, name)(view), getattr(np, name)(view)), (dtype, n)
        out = np.empty(600, bool)[::2]
        assert getattr(sw, name)(x, out=out) is out and same_bits(out, getattr(np, name)(x))
        t = torch.from_numpy(x[::3].copy())
        assert torch.equal(getattr(sw, name)(t), getattr(torch, name)(t))


# -- where, cast, fma -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_where(dtype):
    rng = np.random.default_rng(19)
    c = rng.random((50, 1)) < 0.5
    x, y = values(rng, dtype, 50 * 41).reshape(50, 41), values(rng, dtype, 41)
    assert same_bits(sw.where(c, x, y), np.where(c, x, y))
    got = sw.where(torch.from_numpy(c), to_torch(x), to_torch(y))
    assert same_bits(from_torch(got), from_torch(torch.where(torch.from_numpy(c), to_torch(x), to_torch(y))))
    # a non-bool condition: NumPy reads its truth, torch refuses it
    assert same_bits(sw.where(c.astype(np.int32), x, y), np.where(c.astype(np.int32), x, y))
    with pytest.raises(TypeError, match="bool condition"):
        sw.where(torch.from_numpy(c.astype(np.int32)), to_torch(x), to_torch(y))
    # a Python number as the condition: NumPy takes its truth (0.5 and NaN are true); torch
    # raises for any condition but a tensor
    for number in (True, False, 0, 3, 0.5, 0.0, float("nan"), 2**70):
        want = np.where(number, x, y)
        got = sw.where(number, x, y)
        assert got.dtype == want.dtype and same_bits(got, want), number
    with pytest.raises(TypeError):
        torch.where(True, to_torch(x), to_torch(y))
    with pytest.raises(TypeError, match="bool condition"):
        sw.where(True, to_torch(x), to_torch(y))
    with pytest.raises(TypeError, match="condition must be real"):
        sw.where(1j, x, y)


# -- bool arrays over any bytes --------------------------------------------------------------

BOOL_ROWS = [n for n, r in ROWS.items() if "bool" in r.dtypes]
# (shape of the bytes, view taken of them): contiguous, strided, transposed (staged), a
# broadcast row against a column, a short period, one element
BOOL_LAYOUTS = {
    "contiguous": ((4099,), lambda x: x),
    "strided": ((3 * 1500,), lambda x: x[::3]),
    "transposed": ((65, 130), lambda x: x.T),
    "row": ((1, 41), lambda x: np.broadcast_to(x, (50, 41))),
    "period": ((6,), lambda x: np.broadcast_to(x, (700, 6))),
    "zero_d": ((), lambda x: x),
}


def odd_bools(rng, shape):
    """A bool view of bytes that are not all 0 or 1 (uint8 memory viewed as bool), and the
    bool array of its truth (any nonzero byte true), made by comparison: the oracle's input."""
    raw = rng.choice(np.array([0, 1, 2, 3, 64, 127, 128, 254, 255], np.uint8), size=shape)
    return raw.view(np.bool_), raw != 0


@pytest.mark.parametrize("layout", BOOL_LAYOUTS)
@pytest.mark.parametrize("name", BOOL_ROWS + ["cast", "where"])
def test_bool_operands_read_any_nonzero_byte_as_true(name, layout):
    """NumPy and torch read any nonzero byte of a bool array as True; so does every op here,
    in every layout (the oracle: the op on the bytes' truth, an ordinary bool array)."""
    shape, view = BOOL_LAYOUTS[layout]
    rng = np.random.default_rng(zlib.crc32(f"{name} {layout}".encode()))
    pairs = [odd_bools(rng, shape) for _ in range(3)]
    odd, truth = [view(p[0]) for p in pairs], [view(p[1]) for p in pairs]
    if name == "cast":
        for dst in DTYPES:
            assert same_bits(sw.cast(odd[0], dst), truth[0].astype(NP[dst])), dst
        return
    if name == "where":   # as the condition, and as both branches
        x = np.arange(odd[0].size, dtype=np.float32).reshape(odd[0].shape)
        assert same_bits(sw.where(odd[0], x, -x), np.where(truth[0], x, -x))
        np.testing.assert_array_equal(sw.where(truth[0], odd[1], odd[2]), np.where(truth[0], truth[1], truth[2]))
        return
    row = ROWS[name]
    n = len(row.params)
    tensors = [torch.from_numpy(np.ascontiguousarray(t)) for t in truth[:n]]
    try:
        want = numpy_result(row, truth[:n])
    except TypeError:      # no NumPy loop for bool (sign): both refuse; torch's result for torch
        with pytest.raises(TypeError, match="no loop"):
            getattr(_builtins, name)(*odd[:n])
        got = getattr(_builtins, name)(*(torch.from_numpy(np.ascontiguousarray(o.view(np.uint8))).view(torch.bool)
                                         for o in odd[:n]))
        want = getattr(torch, row.torch_name)(*tensors)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        return
    assert_matches(row, getattr(_builtins, name)(*odd[:n]), want)
    # and beside another dtype: the bool operand converts from its truth
    other = np.int8(5)
    assert same_bits(_builtins.add(odd[0], other), np.add(truth[0], other))


def test_bool_tensors_read_any_nonzero_byte_as_true():
    raw = torch.tensor([0, 1, 2, 127, 128, 255], dtype=torch.uint8)
    t, truth = raw.view(torch.bool), raw != 0
    assert sw.logical_not(t).tolist() == torch.logical_not(truth).tolist()
    assert sw.cast(t, torch.float32).tolist() == truth.float().tolist()
    assert sw.equal(t, True).tolist() == truth.tolist()
    assert sw.multiply(t, t.flip(0)).tolist() == torch.mul(truth, truth.flip(0)).tolist()


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["contiguous", "misaligned", "strided", "transposed", "row", "period"])
def test_bool_tensors_read_any_nonzero_byte_as_true_on_cuda(layout):
    """The device's loaders (whole packs, shifted packs, gathers, staged tiles, period tables)
    read a bool byte as its truth too."""
    g = torch.Generator().manual_seed(35)
    pick = torch.tensor([0, 1, 2, 3, 64, 127, 128, 254, 255], dtype=torch.uint8)
    shape = {"contiguous": (1 << 16,), "misaligned": (257, 1031), "strided": (3 << 14,),
             "transposed": (300, 130), "row": (1, 4101), "period": (6,)}[layout]
    view = {"contiguous": lambda x: x, "misaligned": lambda x: x[1:, 1:], "strided": lambda x: x[::3],
            "transposed": lambda x: x.t(), "row": lambda x: x.expand(64, 4101),
            "period": lambda x: x.expand(5000, 6)}[layout]
    raws = [pick[torch.randint(0, len(pick), shape, generator=g)].cuda() for _ in range(2)]
    odd, truth = [view(r.view(torch.bool)) for r in raws], [view(r != 0) for r in raws]
    x = torch.arange(odd[0].numel(), dtype=torch.float32, device="cuda").reshape(odd[0].shape)
    for got, want in [(sw.logical_not(odd[0]), torch.logical_not(truth[0])),
                      (sw.cast(odd[0], torch.float16), truth[0].half()),
                      (sw.equal(odd[0], True), truth[0]),
                      (sw.multiply(odd[0], odd[1]), truth[0] & truth[1]),
                      (sw.add(odd[0], torch.tensor(5, dtype=torch.int8, device="cuda")), truth[0] + torch.tensor(5, dtype=torch.int8, device="cuda")),
                      (sw.where(odd[0], x, -x), torch.where(truth[0], x, -x))]:
        assert got.dtype == want.dtype and torch.equal(got, want)


def nan_payloads(dtype):
    """(unsigned type, x bits, y bits, condition): NaNs of both signs with signaling and quiet
    payloads, each branch a permutation of the other."""
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[NP[dtype].itemsize]
    bits = 8 * NP[dtype].itemsize
    man = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52}[dtype]
    top = (1 << (bits - 1 - man)) - 1            # the exponent's all-ones
    nans = [(s << (bits - 1)) | (top << man) | p for s in (0, 1) for p in (1, 2, (1 << man) - 1, 1 << (man - 1), 3)]
    rng = np.random.default_rng(41)
    xb = np.array(nans * 40, dtype=u)
    return u, xb, rng.permutation(xb), rng.random(xb.size) < 0.5


@pytest.mark.parametrize("dtype", FLOATS)
def test_where_moves_bits(dtype):
    """where selects: each result is one branch's bits, NaN payloads and signaling NaNs
    included (a round trip through float32 quieted float16's and bfloat16's). The oracle
    selects the bits as unsigned integers."""
    u, xb, yb, c = nan_payloads(dtype)
    want = np.where(c, xb, yb)
    got = sw.where(c, xb.view(NP[dtype]), yb.view(NP[dtype]))
    assert got.dtype == NP[dtype] and np.array_equal(got.view(u), want)
    tgot = from_torch(sw.where(torch.from_numpy(c), to_torch(xb.view(NP[dtype])), to_torch(yb.view(NP[dtype]))))
    assert np.array_equal(tgot.view(u), want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_numpy_16bit_abs_negative_copysign_move_bits(dtype):
    """NumPy's float16 loops of abs, negative and copysign are bit operations (a signaling
    NaN keeps its quiet bit clear and its payload), and so are they for NumPy arrays of
    float16 and bfloat16 here: every 16-bit pattern, contiguous and strided, the divisor of
    copysign an array and a Python number. The oracle works on the bits as uint16; for
    float16 NumPy's own loops agree with it."""
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    x, y = bits.view(NP[dtype]), bits[::-1].copy().view(NP[dtype])
    for got, want in ((sw.abs(x), bits & 0x7FFF), (sw.negative(x), bits ^ 0x8000),
                      (sw.abs(x[::3]), bits[::3] & 0x7FFF),
                      (sw.copysign(x, y), (bits & 0x7FFF) | (bits[::-1] & 0x8000))):
        assert got.dtype == NP[dtype] and np.array_equal(got.view(np.uint16), want)
    # a Python float beside bfloat16 promotes as NumPy does with the installed ml_dtypes:
    # to bfloat16 with 0.7 (NEP 50), to float32 with 0.6 (NumPy's copysign then moves float32 bits)
    got, own = sw.copysign(x, -1.0), np.copysign(x, -1.0)
    assert got.dtype == own.dtype
    if own.dtype == x.dtype:
        assert np.array_equal(got.view(np.uint16), bits | 0x8000)
    else:
        assert np.array_equal(got.view(np.uint32), own.view(np.uint32))
    if dtype == "float16":
        assert np.array_equal(np.abs(x).view(np.uint16), bits & 0x7FFF)
        assert np.array_equal(np.copysign(x, y).view(np.uint16), sw.copysign(x, y).view(np.uint16))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_torch_16bit_abs_negative_copysign_quiet_a_nan(dtype):
    """torch tensors take the float path's bits (docs/semantics.md): the sign moved as NumPy's
    loops move it, and a NaN's quiet bit set, its payload kept (the host's conversions quiet a
    signaling NaN so). Every 16-bit pattern, contiguous, shifted by one element and strided; the
    oracle works on the bits as uint16."""
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    quiet, top = (0x0200, 0x7C00) if dtype == "float16" else (0x0040, 0x7F80)

    def quieted(b):
        return np.where((b & 0x7FFF) > top, b | quiet, b).astype(np.uint16)

    x = to_torch(bits.view(NP[dtype]))
    y = to_torch(bits[::-1].copy().view(NP[dtype]))
    for got, want in ((sw.abs(x), quieted(bits & 0x7FFF)), (sw.negative(x), quieted(bits ^ 0x8000)),
                      (sw.abs(x[1:]), quieted(bits[1:] & 0x7FFF)),
                      (sw.negative(x[::3]), quieted(bits[::3] ^ 0x8000)),
                      (sw.copysign(x, y), quieted((bits & 0x7FFF) | (bits[::-1] & 0x8000)))):
        assert got.dtype == x.dtype and np.array_equal(from_torch(got).view(np.uint16), want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_log_of_every_value(dtype):
    """log of every 16-bit pattern (subnormals, zeros, negatives, inf and NaN included)
    within the op's tolerance of NumPy's (float32's log, rounded once), NaN where NumPy's is,
    for NumPy arrays and torch tensors alike: on the host the 16-bit results take libmvec's
    logf (math.h LogFunctor), whose float32 error must not reach a second 16-bit ulp."""
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    x = bits.view(NP[dtype])
    with np.errstate(all="ignore"):
        want = np.log(x.astype(np.float32)).astype(NP[dtype])
    for got in (sw.log(x), from_torch(sw.log(to_torch(x))), sw.log(x[::-1])[::-1]):
        assert got.dtype == NP[dtype]
        assert np.array_equal(np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32)))
        assert ulp_diff(got, want) <= TOLERANCE_ULP["log"][dtype]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
def test_where_moves_bits_on_cuda(dtype):
    u, xb, yb, c = nan_payloads(dtype)
    got = sw.where(torch.from_numpy(c).cuda(), to_torch(xb.view(NP[dtype])).cuda(), to_torch(yb.view(NP[dtype])).cuda())
    assert np.array_equal(from_torch(got.cpu()).view(u), np.where(c, xb, yb))


def test_where_promotes_branches():
    c = np.array([True, False, True])
    got = sw.where(c, np.arange(3, dtype=np.int32), 0.5)
    assert same_bits(got, np.where(c, np.arange(3, dtype=np.int32), 0.5))


CAST_PAIRS = [(s, d) for s in DTYPES + ("bool",) for d in DTYPES + ("bool",) if s != d]


@pytest.mark.parametrize("src, dst", CAST_PAIRS)
def test_cast(src, dst):
    rng = np.random.default_rng(23)
    x = rng.random(3000) < 0.5 if src == "bool" else values(rng, src, 3000)
    if dst in INTS and src in FLOATS:
        x = undefined_to_zero(x, dst)                    # NaN, inf, out of range: undefined
    want = x.astype(np.bool_ if dst == "bool" else NP[dst])
    assert _same(sw.cast(x, dst), want)
    tgot = from_torch(sw.cast(to_torch(x), getattr(torch, dst)))
    twant = from_torch(to_torch(x).to(getattr(torch, dst)))
    if (src, dst) == ("float64", "float16"):
        # torch rounds through float32 (twice); stridewise rounds once, as NumPy does.
        assert ulp_diff(tgot, twant) <= 1
        tie = np.array([1 + 2**-11 + 2**-30])
        assert sw.cast(tie, "float16")[0] == np.float16(1 + 2**-10) == tie.astype(np.float16)[0]
    else:
        assert _same(tgot, twant)


def _same(got, want) -> bool:
    return np.array_equal(got, want) if want.dtype == np.bool_ else same_bits(got, want)


def _nearest(got, exact, dtype) -> bool:
    """got is the representable value of `dtype` nearest to the exact Fraction."""
    g = np.asarray(got, NP[dtype])
    lo, hi = np.nextafter(g, NP[dtype].type(-np.inf)), np.nextafter(g, NP[dtype].type(np.inf))
    err = abs(Fraction(float(g)) - exact)
    return err <= abs(Fraction(float(lo)) - exact) and err <= abs(Fraction(float(hi)) - exact)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fma_rounds_once(dtype):
    rng = np.random.default_rng(29)
    x, y = (rng.standard_normal(400) * 8).astype(NP[dtype]), (rng.standard_normal(400) * 8).astype(NP[dtype])
    z = -(x.astype(np.float64) * y).astype(NP[dtype])    # cancellation: where a split rounding shows
    z[::2] = (rng.standard_normal(200) * 8).astype(NP[dtype])
    got = sw.fma(x, y, z)
    for g, a, b, c in zip(got, x, y, z):
        assert _nearest(g, Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)), dtype)
    assert not same_bits(got, x * y + z)                 # fused is visibly not mul-then-add


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"] + list(INTS))
def test_fma_16bit_and_integers(dtype):
    rng = np.random.default_rng(31)
    x, y, z = (values(rng, dtype, 2000) for _ in range(3))
    got = sw.fma(x, y[:1], z)                            # broadcast one operand
    if dtype in INTS:
        assert same_bits(got, x * y[:1] + z)
    else:
        exact = (x.astype(np.float64) * y[:1].astype(np.float64) + z).astype(NP[dtype])
        assert ulp_diff(got, exact) <= TOLERANCE_ULP["fma"][dtype]


# -- the table --------------------------------------------------------------------------------

def test_supported_table_is_plain_data_and_enforced():
    assert set(SUPPORTED) == set(OPS) | {"cast"}
    assert all(isinstance(v, tuple) for v in SUPPORTED.values())
    assert SUPPORTED["divide"] == FLOATS + ("complex64", "complex128") and "int32" in SUPPORTED["add"]
    # bool is closed under add (or) but not subtract, in NumPy and torch alike
    assert sw.add(np.ones(3, bool), np.ones(3, bool)).dtype == np.bool_
    with pytest.raises(TypeError, match="bool"):
        sw.subtract(np.ones(3, bool), np.ones(3, bool))
    with pytest.raises(TypeError, match="unsupported dtype bool"):
        sw.subtract(torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool))
    with pytest.raises(TypeError, match="bool"):
        sw.negative(np.ones(3, bool))


def test_aliases_are_the_librarys_other_names():
    """Each alias names, in NumPy or torch, the op it stands for there (np.power is np.pow's
    ufunc, torch.eq is torch.equal's elementwise op), and is that op's function here."""
    x = np.array([5, -7, 12, 3], np.int32)
    y = np.array([3, 2, 5, 1], np.int32)
    for alias, name in _builtins.ALIASES.items():
        assert getattr(sw, alias) is getattr(sw, name)
        lib, mine = (np, x) if hasattr(np, alias) else (torch, torch.from_numpy(x))
        theirs = getattr(lib, alias)
        other = y if lib is np else torch.from_numpy(y)
        args = (mine,) if len(ROWS[name].params) == 1 else (mine, other)
        want, got = theirs(*args), getattr(sw, alias)(*args)
        assert got.dtype == want.dtype and np.array_equal(np.asarray(got), np.asarray(want)), alias


def test_cast_every_16bit_value_to_float32():
    """The host's branch-free half_to_float (types.h) and the bfloat16 widening, for all 65536
    bit patterns, against NumPy's and ml_dtypes' conversions (NaN as NaN)."""
    for dt in ("float16", "bfloat16"):
        x = np.arange(65536, dtype=np.uint16).view(NP[dt])
        assert same_bits(sw.cast(x, "float32"), x.astype(np.float32)), dt


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_cast_float32_to_16bit_at_every_rounding_edge(dtype):
    """The host's 8-lane float32 -> 16-bit stores (types.h Pack8) against torch's conversion:
    every upper half of the bits with lower halves at the rounding edges (ties either side of
    even, one past, all ones, zero) and random ones, so every exponent, sign, subnormal, inf
    and NaN, NaNs whose payload lies in the dropped bits included (NaN as any NaN). A cast,
    and a float32 product by 1 into a 16-bit out=, which rounds the same way."""
    rng = np.random.default_rng(16)
    hi = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    lo = np.array([0, 1, 0x0fff, 0x1000, 0x1001, 0x7fff, 0x8000, 0x8001, 0xffff], np.uint32)
    bits = np.concatenate([(hi[:, None] | lo[None, :]).ravel(), rng.integers(0, 1 << 32, 1 << 18, dtype=np.uint32)])
    x = torch.from_numpy(bits.view(np.float32))
    want = x.to(getattr(torch, dtype))
    for got in (sw.cast(x, want.dtype), sw.multiply(x, 1.0, out=torch.empty_like(want))):
        assert got.dtype == want.dtype
        assert _nan_aware_mismatches(got, want) == 0


def _transposed_where_operands(rng, dtype, rows, cols):
    """A bool condition and a dividend transposed (unit stride along dim 0), y contiguous."""
    c = (rng.random((cols, rows)) < 0.5).T
    x = values(rng, dtype, rows * cols).reshape(cols, rows).T
    return c, x, values(rng, dtype, rows * cols).reshape(rows, cols)


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_stages_transposed_operands_of_every_size(dtype):
    """`tiled` copies transposed operands into a tile as bits: 1-byte bool and every dtype
    (named: at these steps the host's Auto runs rows, tuning.py tiled_alias_bytes), and Auto
    agrees."""
    c, x, y = _transposed_where_operands(np.random.default_rng(23), dtype, 70, 37)
    assert "staged" in sw.explain(sw.where, c, x, y, algorithm=sw.Tiled()).kinds
    want = np.where(c, x, y)
    for alg in (sw.Tiled(), None):
        assert same_bits(sw.where(c, x, y, algorithm=alg), want), alg


# -- GPU and NVRTC ------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows, cols", [(300, 130), (256, 1024), (33, 8)])
def test_where_stages_transposed_operands_on_cuda(dtype, rows, cols):
    """The same on the GPU, with partial tiles and, at 256 x 1024, whole 16-byte packs: in
    tiles (Auto's choice where they are full enough, tuning.py tiled_min_fill) and as Auto
    runs it."""
    c, x, y = (to_torch(v).cuda() for v in _transposed_where_operands(np.random.default_rng(29), dtype, rows, cols))
    assert "staged" in sw.explain(sw.where, c, x, y, algorithm=sw.Tiled()).kinds
    want = from_torch(torch.where(c, x, y).cpu())
    for alg in (sw.Tiled(), None):
        assert same_bits(from_torch(sw.where(c, x, y, algorithm=alg).cpu()), want), alg


def _periodic_where_operands(dtype, period):
    """A bool condition c (period 4 x period) and y (period `period`) over a dense x."""
    rng = np.random.default_rng(31)
    c = rng.random((4, period)) < 0.5
    x = values(rng, dtype, 7 * 4 * period).reshape(7, 4, period)
    y = values(rng, dtype, period + 8)[:period]             # values() writes 7 specials first
    return c, x, y


def _check_periodic_mode(e, dtype, period):
    # rows keep full packs at any row length (each row peels its head), so short_rows takes
    # only rows shorter than the backend's short_row_bytes (tuning.py)
    short = period * NP[dtype].itemsize < sw.elementwise_tuning(e.backend, None, dtype).short_row_bytes
    assert e.mode == ("short_rows" if short else "rows"), e
    assert not short or e.kinds.count("periodic") == 2, e


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("period", [6, 100, 1030])
def test_where_with_two_periodic_operands(dtype, period):
    c, x, y = _periodic_where_operands(dtype, period)
    _check_periodic_mode(sw.explain(sw.where, c, x, y), dtype, period)
    assert same_bits(sw.where(c, x, y), np.where(c, x, y))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("period", [6, 100, 1030])
def test_where_with_two_periodic_operands_on_cuda(dtype, period):
    """The same on the GPU, which reads a short period from a shared-memory table of its
    packs and gathers a long one (pack.h period_table): at 100, y has a table and c (400 x 8
    bytes) does not in 16-bit; at 1030 neither has."""
    c, x, y = (to_torch(v).cuda() for v in _periodic_where_operands(dtype, period))
    _check_periodic_mode(sw.explain(sw.where, c, x, y), dtype, period)
    assert same_bits(from_torch(sw.where(c, x, y).cpu()), from_torch(torch.where(c, x, y).cpu()))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["add", "floor_divide", "maximum", "where", "cast", "fma", "sin"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int64"])
def test_ops_on_cuda(name, dtype):
    g = torch.Generator().manual_seed(0)
    dt = getattr(torch, dtype)
    x = (torch.randn(512, 300, generator=g) * 10).to(dt).cuda()
    y = (torch.randn(300, generator=g) * 10).to(dt).cuda()
    if dtype == "int64":
        y[y == 0] = 3
    if name == "sin" and dtype == "int64":
        return
    if name == "where":
        got, want = sw.where(x > y, x, y), torch.where(x > y, x, y)
    elif name == "cast":
        got, want = sw.cast(x, torch.float64), x.to(torch.float64)
    elif name == "fma":           # against x * y + x rounded once, from float64
        got = sw.fma(x, y, x)
        want = x * y + x if dtype == "int64" else (x.double() * y.double() + x.double()).to(dt)
    elif name == "sin":
        got, want = sw.sin(x), torch.sin(x)
    else:
        got, want = getattr(sw, name)(x, y), getattr(torch, name)(x, y)
    got, want = from_torch(got.cpu()), from_torch(want.cpu())
    if name in ("sin", "fma") and dtype != "int64":
        assert ulp_diff(got, want) <= (4 if name == "sin" else 1)
    else:
        assert same_bits(got, want), name


def _nan_aware_mismatches(got, want):
    """Elements whose bits differ, NaN matching any NaN (both torch tensors of one dtype)."""
    nan = torch.isnan(got) & torch.isnan(want)
    return int(((got.view(torch.int16) != want.view(torch.int16)) & ~nan).sum())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply"])
def test_apply2_every_16bit_pair(name, dtype):
    """The half2 / bfloat162 Apply2 path against float32 arithmetic rounded once, over all
    2^32 (a, b) pairs: a along the row, a block of b down the column (the rows mode)."""
    from stridewise.launch import pipeline as _ops

    tdt = getattr(torch, dtype)
    bits = torch.arange(-32768, 32768, dtype=torch.int32, device="cuda").to(torch.int16)
    a = bits.view(tdt)[None, :]
    af = a.float()
    chunk = 4096
    out = torch.empty((chunk, 65536), dtype=tdt, device="cuda")
    fn, ref = getattr(sw, name), getattr(torch, name)
    source = _ops._call(OPS[name], (a, bits[:chunk].view(tdt)[:, None]), out, dry=True).source
    assert "Apply2Pack" in source
    bad = 0
    for start in range(0, 65536, chunk):
        b = bits[start:start + chunk].view(tdt)[:, None]
        fn(a, b, out=out)
        bad += _nan_aware_mismatches(out, ref(af, b.float()).to(tdt))
    assert bad == 0


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_cast_every_float32_to_16bit(dtype):
    """cast's pairwise (half2 / bfloat162) conversion against torch's, for all 2^32 float32s."""
    tdt = getattr(torch, dtype)
    n = 1 << 28
    bad = 0
    for start in range(-(1 << 31), 1 << 31, n):
        x = torch.arange(start, start + n, dtype=torch.int64, device="cuda").to(torch.int32)
        x = x.view(torch.float32)
        bad += _nan_aware_mismatches(sw.cast(x, tdt), x.to(tdt))
    assert bad == 0


@pytest.mark.nvrtc
def test_every_op_compiles_with_nvrtc():
    """Every (op, dtype) the table lists, and a user kernel, compile for sm_90 (no GPU needed)."""
    pytest.importorskip("cuda.core")
    from nvrtc_batch import MID, compile_batched
    from stridewise.launch import pipeline as _ops

    sources = []
    for name, op in OPS.items():
        for dtype in op.dtypes:
            a = np.ones(64, NP[dtype])
            args = (a > 0, a, a) if name == "where" else (a,) * op.nin
            try:
                sources.append(_ops._call(op, args, dry=True).spec)
            except TypeError:          # a dtype torch defines and NumPy does not (sign of bool)
                sources.append(_ops._call(op, tuple(map(torch.from_numpy, args)), dry=True).spec)
    for dst in SUPPORTED["cast"]:
        sources.append(_ops._call(sw.ops.builtins._CASTS[dst], (np.ones(64, np.float64),), dry=True).spec)
    for a, b in [(np.ones(64, np.int64), np.ones(64, np.uint64)), (np.ones(64, np.uint64), np.ones(64, np.int64))]:
        sources.append(_ops._call(OPS["less"], (a, b), dry=True).spec)     # NumPy's exact int64 / uint64
    sources.append(_ops._call(OPS["pow"], (torch.ones(64, dtype=torch.complex64), 2.0), dry=True).spec)
    for name in ("abs", "negative", "copysign"):         # torch's 16-bit forms (Bits16's Quiet)
        for dtype in (torch.float16, torch.bfloat16):
            t = torch.ones(64, dtype=dtype)
            sources.append(_ops._call(OPS[name], (t,) * OPS[name].nin, dry=True).spec)
    k = sw.ElementwiseKernel("float *out, float *a, float *b", "out[i] = sin(a[i]) + max(a[i], b[i])")
    a = np.ones((8, 64), np.float32)
    sources.append(k._explain((np.empty_like(a), a, a[0]), {}).spec)
    assert compile_batched(sources, options=MID) == len(sources)


def test_readme_table_is_the_generated_one():
    """README.md's ops section is exactly what tools/op_table.py generates from the table
    (run `python tools/op_table.py --write` after changing a row)."""
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    begin, end = readme.index(_builtins.README_BEGIN), readme.index(_builtins.README_END)
    assert readme[begin:end + len(_builtins.README_END)] == _builtins.readme_section()
    for name, dtypes in SUPPORTED.items():
        assert f"| `{name}` | {', '.join(dtypes)} |" in _builtins.op_table(), name


def test_the_stub_is_the_generated_one_and_names_the_whole_module():
    """ops/builtins.pyi (what type checkers read for the module whose functions are made at
    import) is what the table generates, and declares every public name the module has."""
    import ast
    import types
    from pathlib import Path

    text = Path(_builtins.__file__).with_suffix(".pyi").read_text()
    assert text == _builtins.stub(), "run `python tools/op_table.py --write`"
    tree = ast.parse(text)
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    declared |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets}
    public = {n for n, v in vars(_builtins).items() if not n.startswith("_")
              and not isinstance(v, types.ModuleType) and getattr(v, "__module__", _builtins.__name__)
              in (_builtins.__name__, None) and n != "annotations"}
    assert public <= declared, public - declared


def test_each_row_is_a_public_function_with_its_signature():
    import inspect

    for name, row in ROWS.items():
        fn = getattr(sw, name)
        assert fn is getattr(_builtins, name) and name in sw.__all__
        params = list(inspect.signature(fn).parameters.values())
        assert [p.name for p in params[:len(row.params)]] == list(row.params)
        assert all(p.kind is p.POSITIONAL_ONLY for p in params[:len(row.params)])
        keywords = ["out", "convention", "algorithm"] if row.convention else ["out", "algorithm"]
        keywords += row.takes       # NumPy's ufunc keywords, alpha=, rounding_mode= (test_keywords.py)
        assert [p.name for p in params[len(row.params):]] == keywords
        # out is positional too where the op is a NumPy ufunc, as the ufunc's out is
        out_kind = params[len(row.params)].POSITIONAL_OR_KEYWORD if row.ufunc else params[0].KEYWORD_ONLY
        assert params[len(row.params)].kind is out_kind
        assert all(p.kind is p.KEYWORD_ONLY for p in params[len(row.params) + 1:])
        assert fn.__doc__.startswith(row.doc) and ", ".join(row.dtypes[:2]) in fn.__doc__
        assert sw.explain(name, *operands(row, row.dtypes[0], np.random.default_rng(0))).shape
    assert [n for n in sw.__all__ if n.endswith("_") and not n.startswith("_")] == ["remainder_"]


# -- a toy op, registered from here: one row is the whole change ------------------------------

TOY_CODE = """
namespace toy {
// 2 * a - b, integers wrapping (through the unsigned type, as ops.h's arithmetic does)
template <class T> struct TwiceMinusFunctor {
  SW_HOST_DEVICE SW_INLINE T operator()(T a, T b) const {
    typedef typename sw::Unsigned<T>::type U;
    if constexpr (sw::IsInt<T>::value) return (T)((U)a * 2u - (U)b);
    else return a * T(2) - b;
  }
};
}  // namespace toy
"""


def test_a_toy_op_is_one_row(monkeypatch):
    """A row whose functor is C++ from this test: registered, it is a public function of its
    own signature that runs end to end (NumPy arrays and torch CPU tensors, broadcast, out=),
    explain and the README table know it, and the table tests' checks apply to it unchanged;
    unregistered, it is gone."""
    row = _builtins.Row("toy_twice_minus", ("a", "b"), "toy::TwiceMinusFunctor<{M}>",
                        ("float32", "float64", "int8", "int32", "uint64"), None,
                        "2 * a - b; integers wrap.", torch=None, code=TOY_CODE)
    oracle = lambda a, b: (2 * a - b).astype(np.result_type(a, b))  # noqa: E731
    monkeypatch.setitem(NUMPY_ORACLE, row.name, oracle)
    monkeypatch.setitem(TORCH_ORACLE, row.name, oracle)
    fn = _builtins.register(row)
    try:
        assert fn.__name__ == row.name and row.name in _builtins.__all__
        assert "| `toy_twice_minus` | float32, float64, int8, int32, uint64 |" in _builtins.op_table()
        for dtype in row.dtypes:
            check_numpy(row, dtype)
            check_torch(row, dtype)
        rng = np.random.default_rng(5)
        x, y = rng.standard_normal((64, 300)).astype(np.float32), rng.standard_normal(300).astype(np.float32)
        out = np.empty((300, 64), np.float32).T
        assert fn(x, y, out=out) is out and same_bits(out, oracle(x, y))
        assert sw.explain(row.name, x, y).mode == "rows"
        t = fn(torch.from_numpy(x.T), torch.from_numpy(y[:64]))
        assert isinstance(t, torch.Tensor) and same_bits(t.numpy(), oracle(x.T, y[:64]))
        with pytest.raises(TypeError, match="unsupported dtype float16 for toy_twice_minus"):
            fn(np.ones(3, np.float16), np.ones(3, np.float16))
    finally:
        _builtins.unregister(row.name)
    assert not hasattr(_builtins, row.name) and row.name not in _builtins.__all__
    assert row.name not in _builtins.OPS and "toy_twice_minus" not in _builtins.op_table()
    with pytest.raises(ValueError, match="explain knows"):
        sw.explain(row.name, np.ones(3), np.ones(3))


@pytest.mark.nvrtc
def test_nvrtc_compile_errors_name_the_users_line():
    pytest.importorskip("cuda.core")
    from stridewise.codegen import source as _codegen
    from stridewise.backends import cuda

    k = sw.ElementwiseKernel("T x", "T z", "T t = x;\nz = t * w;", name="broken")
    spec = k._explain((np.ones(4),), {}).spec
    with pytest.raises(cuda.CompileError) as info:
        cuda.compile(_codegen.generate(spec, cuda.entry_point), spec.entry, "sm_90")
    msg = k._source.message(str(info.value))
    assert "operation line 2" in msg and ">   2 | z = t * w;" in msg


def test_host_float32_to_float16_rounds_as_numpy_at_every_exponent():
    """The host's 8-lane float -> half (types.h Pack8) against NumPy's astype: every float32
    sign, exponent and top 10 significand bits, with the dropped 13 bits at zero, just under,
    at and just over the half-way point and at their ends (ties to even, subnormal halves,
    overflow to inf, NaN), as cast and as an op's result."""
    hi = np.arange(1 << 19, dtype=np.uint32) << 13
    lo = np.array([0, 1, 0xfff, 0x1000, 0x1001, 0x1fff], np.uint32)
    x = (hi[:, None] | lo[None, :]).ravel().view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        h = x.astype(np.float16)
        cases = [(sw.cast(x, "float16"), h),
                 (sw.multiply(h, np.float16(3)), np.multiply(h, np.float16(3)))]
    for got, want in cases:
        assert got.dtype == np.float16
        nan = np.isnan(want)
        assert np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])
        assert np.isnan(got[nan]).all()


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "int8", "uint16"])
def test_logical_ops_of_integers_at_every_edge(dtype):
    """logical_and, logical_or and logical_xor of integers (the host takes and as the unsigned
    minimum against 0, and 8-byte xor from each operand's x | -x sign bit: ops.h): every pair
    of 0, +-1, the powers of two and the extremes (the most negative value, whose negation
    is itself), dense at lengths that leave pack tails, strided and broadcast, against NumPy."""
    info = np.iinfo(dtype)
    edges = {0, 1, info.max, info.min, info.max - 1, info.min + 1}
    edges |= {1 << k for k in range(info.bits - (info.min < 0))}
    edges |= {-(1 << k) for k in range(info.bits - 1)} if info.min < 0 else set()
    v = np.array(sorted(edges), dtype=dtype)
    a, b = np.repeat(v, v.size), np.tile(v, v.size)
    n = (a.size - 1) // 3
    for name in ("logical_and", "logical_or", "logical_xor"):
        f, g = getattr(sw, name), getattr(np, name)
        for x, y in ((a, b), (a[:-3], b[3:]), (a[::3][:n], b[1::3][:n]), (v[:, None], v[None, :])):
            got, want = f(x, y), g(x, y)
            assert got.dtype == want.dtype and np.array_equal(got, want), (name, x.shape)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16"])
def test_narrow_shifts_of_every_value(dtype):
    """left_shift and right_shift of every 8-bit pair, and of every 16-bit value by counts in
    and around [0, 16) and at the extremes (past the width and negative ones included:
    everything shifted out, or the sign filled in), which the host computes in wider lanes by
    a bounded count (ops.h NarrowShift), dense and strided, against NumPy."""
    bits = 8 * np.dtype(dtype).itemsize
    v = np.arange(1 << bits, dtype=f"uint{bits}").view(dtype)
    counts = v if bits == 8 else np.array([*range(-20, 40), -(1 << 15), (1 << 15) - 1, (1 << 16) - 1],
                                          dtype=np.int64).astype(f"uint{bits}").view(dtype)
    a, b = np.repeat(v, counts.size), np.tile(counts, v.size)
    for name in ("left_shift", "right_shift"):
        f, g = getattr(sw, name), getattr(np, name)
        for x, y in ((a, b), (a[1:], b[:-1]), (a[::-3], b[::3])):
            got, want = f(x, y), g(x, y)
            assert got.dtype == want.dtype and np.array_equal(got, want), (name, x.strides)
