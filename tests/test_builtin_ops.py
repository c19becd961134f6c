"""Built-in ops on the CPU backend against NumPy and torch: bit for bit where the op is exact,
within stridewise._builtins.TOLERANCE_ULP where it is not (transcendentals, float pow, 16-bit
fma). Each documented departure from one library is asserted as such, not skipped."""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import stridewise as sw
from conftest import DTYPES
from oracle import NP, numpy_op, same_bits
from stridewise._builtins import OPS, SUPPORTED, TOLERANCE_ULP

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


def vs_numpy(name, *args):
    return numpy_op(getattr(np, {"pow": "power", "abs": "absolute"}.get(name, name)), *args)


# -- binary ops -----------------------------------------------------------------------------

EXACT_BINARY = ("add", "subtract", "multiply", "divide", "fmod", "floor_divide", "maximum", "minimum")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", EXACT_BINARY)
def test_exact_binary_vs_numpy(name, dtype):
    rng = np.random.default_rng(abs(hash((name, dtype))) % 2**32)
    x, y = values(rng, dtype), values(rng, dtype)
    y = np.roll(y, 3)                                  # pair specials with specials and randoms
    got = getattr(sw, name)(x, y)
    want = vs_numpy(name, x, y)
    assert got.dtype == want.dtype and same_bits(got, want), name


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", EXACT_BINARY)
def test_exact_binary_vs_torch(name, dtype):
    rng = np.random.default_rng(7)
    x, y = values(rng, dtype), np.roll(values(rng, dtype), 3)
    if dtype in INTS and name in ("fmod", "floor_divide"):
        y[y == 0] = 7                                  # torch raises on x // 0 and x % 0
    got = from_torch(getattr(sw, name)(to_torch(x), to_torch(y)))
    want = from_torch(getattr(torch, name)(to_torch(x), to_torch(y)))
    assert got.dtype == want.dtype
    if name in ("maximum", "minimum"):
        # torch's own vector and scalar CPU paths disagree on the sign of a +-0 tie; stridewise
        # follows NumPy (second operand), so compare values, NaN positions and all.
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
    elif name == "floor_divide" and dtype in ("float16", "bfloat16"):
        # torch rounds intermediates to 16 bits and can miss the floor by one (bfloat16:
        # -9.4375 // 0.1016 gives -94, where the quotient is -92.9); NumPy and stridewise
        # compute in float32 and round once. Same NaN positions, values within 1.
        g, w = got.astype(np.float64), want.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        finite = np.isfinite(g) & np.isfinite(w)
        np.testing.assert_array_equal(g[~finite], w[~finite])
        assert np.all(np.abs(g[finite] - w[finite]) <= 1)
    else:
        assert same_bits(got, want), name


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


def test_maximum_minimum_nan_and_signed_zero_follow_numpy():
    x = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 2.0])
    y = np.array([1.0, np.nan, np.nan, 0.0, -0.0, 3.0])
    for name in ("maximum", "minimum"):
        assert same_bits(getattr(sw, name)(x, y), getattr(np, name)(x, y))


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
    np.testing.assert_array_equal(sw.pow(a, b), [1, -1, 1, 0, 0, 0])
    assert torch.equal(sw.pow(to_torch(a), to_torch(b)), torch.pow(to_torch(a), to_torch(b)))
    with pytest.raises(ValueError, match="negative integer powers"):
        sw.pow(a, -1)


# -- unary ops ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["relu", "abs", "negative"])
def test_exact_unary(name, dtype):
    rng = np.random.default_rng(3)
    x = values(rng, dtype)
    got = getattr(sw, name)(x)
    want = np.where(x < 0, np.zeros_like(x), x) if name == "relu" else vs_numpy(name, x)
    assert same_bits(got, want)
    tgot = from_torch(getattr(sw, name)(to_torch(x)))
    assert same_bits(tgot, from_torch(getattr(torch, name)(to_torch(x))))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos"])
def test_transcendentals_within_tolerance(name, dtype):
    rng = np.random.default_rng(13)
    x = values(rng, dtype, lo=0 if name in ("log", "sqrt") else None)
    if dtype in INTS:
        x = np.abs(x) % 50 if name != "exp" else x % 30
    got, want = getattr(sw, name)(x), vs_numpy(name, x)
    tol = TOLERANCE_ULP.get(name, {}).get(str(got.dtype), 0)
    assert got.dtype == want.dtype and ulp_diff(got, want) <= tol
    tgot = from_torch(getattr(sw, name)(to_torch(x)))
    twant = from_torch(getattr(torch, name)(to_torch(x)))
    # torch's sqrt comes from Sleef's u05 routines: within 1 ulp, not correctly rounded.
    ttol = max(tol, 1) if name == "sqrt" and tgot.dtype.itemsize >= 4 else tol
    assert tgot.dtype == twant.dtype and ulp_diff(tgot, twant) <= ttol


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_pow_within_tolerance(dtype):
    rng = np.random.default_rng(17)
    x = (rng.random(3000) * 4).astype(NP[dtype])
    y = (rng.random(3000) * 6 - 3).astype(NP[dtype])
    got = sw.pow(x, y)
    assert ulp_diff(got, vs_numpy("pow", x, y)) <= TOLERANCE_ULP["pow"][dtype]
    tgot = from_torch(sw.pow(to_torch(x), to_torch(y)))
    assert ulp_diff(tgot, from_torch(torch.pow(to_torch(x), to_torch(y)))) <= TOLERANCE_ULP["pow"][dtype]


# -- where, cast, fma -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_where(dtype):
    rng = np.random.default_rng(19)
    c = rng.random((50, 1)) < 0.5
    x, y = values(rng, dtype, 50 * 41).reshape(50, 41), values(rng, dtype, 41)
    assert same_bits(sw.where(c, x, y), np.where(c, x, y))
    got = sw.where(torch.from_numpy(c), to_torch(x), to_torch(y))
    assert same_bits(from_torch(got), from_torch(torch.where(torch.from_numpy(c), to_torch(x), to_torch(y))))
    with pytest.raises(TypeError, match="bool condition"):
        sw.where(c.astype(np.int32), x, y)


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


def test_cast_every_16bit_value_to_float32():
    """The host's branch-free half_to_float (types.h) and the bfloat16 widening, for all 65536
    bit patterns, against NumPy's and ml_dtypes' conversions (NaN as NaN)."""
    for dt in ("float16", "bfloat16"):
        x = np.arange(65536, dtype=np.uint16).view(NP[dt])
        assert same_bits(sw.cast(x, "float32"), x.astype(np.float32)), dt


def _transposed_where_operands(rng, dtype, rows, cols):
    """A bool condition and a dividend transposed (unit stride along dim 0), y contiguous."""
    c = (rng.random((cols, rows)) < 0.5).T
    x = values(rng, dtype, rows * cols).reshape(cols, rows).T
    return c, x, values(rng, dtype, rows * cols).reshape(rows, cols)


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_stages_transposed_operands_of_every_size(dtype):
    """`tiled` copies transposed operands into a tile as bits: 1-byte bool and every dtype."""
    c, x, y = _transposed_where_operands(np.random.default_rng(23), dtype, 70, 37)
    assert sw.explain(sw.where, c, x, y).mode == "tiled"
    assert same_bits(sw.where(c, x, y), np.where(c, x, y))


# -- GPU and NVRTC ------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows, cols", [(300, 130), (256, 1024), (33, 8)])
def test_where_stages_transposed_operands_on_cuda(dtype, rows, cols):
    """The same on the GPU, with partial tiles and, at 256 x 1024, whole 16-byte packs."""
    c, x, y = (to_torch(v).cuda() for v in _transposed_where_operands(np.random.default_rng(29), dtype, rows, cols))
    assert sw.explain(sw.where, c, x, y).mode == "tiled"
    assert same_bits(from_torch(sw.where(c, x, y).cpu()), from_torch(torch.where(c, x, y).cpu()))


def _periodic_where_operands(dtype, period):
    """A bool condition c (period 4 x period) and y (period `period`) over a dense x."""
    rng = np.random.default_rng(31)
    c = rng.random((4, period)) < 0.5
    x = values(rng, dtype, 7 * 4 * period).reshape(7, 4, period)
    y = values(rng, dtype, period + 8)[:period]             # values() writes 7 specials first
    return c, x, y


def _check_periodic_mode(e, dtype, period):
    # rows keep full packs at any row length (each row peels its head), so short_rows takes
    # only rows shorter than a warp's packs (_plan.SHORT_ROW_BYTES)
    short = period * NP[dtype].itemsize < 512
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
    elif name == "floor_divide" and dtype == "float16":   # torch's 16-bit intermediates (CPU test)
        assert np.all(np.abs(got.astype(np.float64) - want) <= 1)
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
    from stridewise import _ops

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
    from nvrtc_batch import compile_batched
    from stridewise import _ops

    sources = []
    for name, op in OPS.items():
        for dtype in op.dtypes:
            a = np.ones(64, NP[dtype])
            args = (a > 0, a, a) if name == "where" else (a,) * op.nin
            sources.append(_ops._call(op, args, dry=True).spec)
    for dst in SUPPORTED["cast"]:
        sources.append(_ops._call(sw._builtins._CASTS[dst], (np.ones(64, np.float64),), dry=True).spec)
    k = sw.ElementwiseKernel("float *out, float *a, float *b", "out[i] = sin(a[i]) + max(a[i], b[i])")
    a = np.ones((8, 64), np.float32)
    sources.append(k._explain((np.empty_like(a), a, a[0]), {}).spec)
    assert compile_batched(sources) == len(sources)


def test_readme_table_matches_the_supported_data():
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    for name, dtypes in SUPPORTED.items():
        assert f"| `{name}` | {', '.join(dtypes)} |" in readme, name
    # the whole table, as sw._builtins.op_table() generates it (paste its output on a change)
    assert sw._builtins.op_table() in readme


@pytest.mark.nvrtc
def test_nvrtc_compile_errors_name_the_users_line():
    pytest.importorskip("cuda.core")
    from stridewise import _codegen
    from stridewise.backends import cuda

    k = sw.ElementwiseKernel("T x", "T z", "T t = x;\nz = t * w;", name="broken")
    spec = k._explain((np.ones(4),), {}).spec
    with pytest.raises(cuda.CompileError) as info:
        cuda.compile(_codegen.generate(spec, cuda.entry_point), spec.entry, "sm_90")
    msg = k._source.message(str(info.value))
    assert "operation line 2" in msg and ">   2 | z = t * w;" in msg
