"""remainder on the CPU backend, bit for bit against independent oracles."""
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stridewise as sw
from conftest import DTYPES
from oracle import NP, grid, mismatches, numpy_remainder, random_values, same_bits, torch_remainder

ORACLES = {"torch": torch_remainder, "numpy": numpy_remainder}


@pytest.mark.parametrize("convention", ["torch", "numpy"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_special_value_grid(dtype, convention):
    a, b = grid(dtype)
    got = sw.remainder(a, b, convention=convention)
    want = ORACLES[convention](a, b)
    assert same_bits(got, want), mismatches(got, want, a, b)


@pytest.mark.parametrize("convention", ["torch", "numpy"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_16bit_dividend_against_many_divisors(dtype, convention):
    """All 65536 bit patterns as dividends, against divisors across the whole range."""
    a = np.arange(65536, dtype=np.uint16).view(NP[dtype])
    divisors = np.arange(0, 65536, 257, dtype=np.uint16).view(NP[dtype])
    for b in divisors:
        got = sw.remainder(a, np.full_like(a, b), convention=convention)
        want = ORACLES[convention](a, np.full_like(a, b))
        assert same_bits(got, want), mismatches(got, want, a, b)


def test_default_convention_follows_the_library():
    torch = pytest.importorskip("torch")
    a, b = np.array([-4.0, 4.0]), np.array([2.0, -2.0])
    assert same_bits(sw.remainder(a, b), np.array([0.0, -0.0]))            # NumPy: divisor's sign
    got = sw.remainder(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert same_bits(got, np.array([-0.0, 0.0]))                             # torch: fmod's sign


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_zero_and_minus_one_never_trap(dtype):
    info = np.iinfo(NP[dtype])
    a = np.array([info.min, info.min, 7, -7, 0, info.max], dtype=NP[dtype])
    b = np.array([-1, 0, 0, 0, 0, -1], dtype=NP[dtype])
    assert np.array_equal(sw.remainder(a, b), np.zeros(6, NP[dtype]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_cpu_tensors(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a, b = random_values(rng, dtype, (64, 33)), random_values(rng, dtype, (33,))
    b[b == 0] = 1
    ta, tb = torch.from_numpy(a.view(np.uint16) if dtype == "bfloat16" else a), torch.from_numpy(
        b.view(np.uint16) if dtype == "bfloat16" else b)
    if dtype == "bfloat16":
        ta, tb = ta.view(torch.bfloat16), tb.view(torch.bfloat16)
    got = sw.remainder(ta, tb)
    assert isinstance(got, torch.Tensor) and got.dtype == ta.dtype
    raw = got.view(torch.uint16).numpy().view(NP[dtype]) if dtype == "bfloat16" else got.numpy()
    assert same_bits(raw, torch_remainder(a, b))


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_torch_promotion_with_scalars(dtype):
    torch = pytest.importorskip("torch")
    t = torch.arange(-6, 6).to(getattr(torch, dtype))
    for s in (3, 2.5, -4):
        got = sw.remainder(t, s)
        want = torch.remainder(t, s)
        assert got.dtype == want.dtype
        assert torch.equal(got, want) or dtype == "float16"


def test_numpy_promotion_follows_ufunc_resolution():
    a = np.arange(-5, 5, dtype=np.int32)
    assert sw.remainder(a, 2.5).dtype == np.remainder(a, 2.5).dtype
    assert sw.remainder(a, np.float32(3)).dtype == np.remainder(a, np.float32(3)).dtype
    h = np.arange(-5, 5, dtype=np.float16)
    assert sw.remainder(h, 3).dtype == np.float16
    assert same_bits(sw.remainder(h, 3), np.remainder(h, np.float16(3)))
    assert same_bits(sw.remainder(a, h), numpy_remainder(a, h))     # mixed: cast in registers


# -- layouts: every mode, broadcast, strided, empty, 0-d -----------------------------------
LAYOUTS = {
    "contiguous": ((64, 48), (64, 48), "contiguous"),
    "scalar": ((64, 48), (), "scalar"),
    "row": ((24, 512), (512,), "rows"),
    "column": ((24, 520), (24, 1), "rows"),
    "outer": ((24, 1), (1, 300), "rows"),
    "short_rows": ((700, 6), (1, 6), "short_rows"),
    "crossed": ((8, 4, 260), (8, 1, 260), "rows"),
    "long_rows": ((3, 20040), (20040,), "rows"),      # rows split into parts across threads
}


@pytest.mark.parametrize("case", list(LAYOUTS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_modes(case, dtype):
    sa, sb, mode = LAYOUTS[case]
    rng = np.random.default_rng(7)
    a, b = random_values(rng, dtype, sa), random_values(rng, dtype, sb)
    assert sw.explain(sw.remainder, a, b).mode == mode
    for convention in ("torch", "numpy"):
        got = sw.remainder(a, b, convention=convention)
        assert same_bits(got, ORACLES[convention](a, b))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tiled_and_general(dtype):
    rng = np.random.default_rng(3)
    a = random_values(rng, dtype, (96, 80)).T                 # permuted view
    b = random_values(rng, dtype, (80, 96))
    # tiles named: at this step the host's Auto runs rows (tuning.py tiled_alias_bytes)
    assert sw.explain(sw.remainder, a, b, algorithm=sw.Tiled()).mode == "tiled"
    want = numpy_remainder(a, b)
    assert same_bits(sw.remainder(a, b, algorithm=sw.Tiled()), want)
    assert same_bits(sw.remainder(a, b), want)
    out = np.empty((96, 80, 2), NP[dtype])[:, :, 0].T          # strided, transposed out
    c = random_values(rng, dtype, (80, 1))
    assert sw.explain(sw.remainder, b, c, out=out).mode == "general"
    sw.remainder(b, c, out=out)
    assert same_bits(out, numpy_remainder(b, c))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tiled_wide_tiles(dtype):
    """Rows of 4096 bytes and more take the wide, 4-row tiles (cpu/loops.h tiled_loop): a
    batch of 3, 11 rows (a last tile of 3) by one full tile width and 37 columns more."""
    rng = np.random.default_rng(5)
    cols = 4096 // np.dtype(NP[dtype]).itemsize + 37
    a = random_values(rng, dtype, (3, cols, 11)).transpose(0, 2, 1)     # unit stride along j
    b = random_values(rng, dtype, (3, 11, cols))
    tiled = sw.Tiled()   # named: 11 rows fill a third of a tile, where the host's Auto runs rows
    assert sw.explain(sw.remainder, a, b, algorithm=tiled).mode == "tiled"
    for convention in ("torch", "numpy"):
        assert same_bits(sw.remainder(a, b, convention=convention, algorithm=tiled), ORACLES[convention](a, b))
    assert same_bits(sw.remainder(b, a, algorithm=tiled), numpy_remainder(b, a))   # staged divisor
    assert same_bits(sw.remainder(a, b), numpy_remainder(a, b))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(50001,), (3, 20011), (7, 5, 1301), (4099, 3)])
def test_general_rows_across_chunk_bounds(dtype, shape):
    """`general` (a strided output) walks each row of its innermost dim in a run (cpu/loops.h
    general_loop): a 1-d output, rows longer than a thread's chunk of 2^14 elements (chunks
    end mid-row), 3-d, and many short rows; a broadcast divisor and a transposed dividend."""
    rng = np.random.default_rng(len(shape))
    out = np.full(shape + (2,), 7, NP[dtype])[..., 1]            # innermost step 2
    a = random_values(rng, dtype, shape[::-1]).T                 # transposed
    b = random_values(rng, dtype, (1,) * (len(shape) - 1) + shape[-1:])
    assert sw.explain(sw.remainder, a, b, out=out).mode == "general"
    sw.remainder(a, b, out=out)
    assert same_bits(out, numpy_remainder(a, b))
    assert (out.base[..., 0] == 7).all()                          # the gaps stay as they were


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_long_row_spreads_over_threads(dtype):
    """A strided slice whose dims merge into one 45005-element row (rows mode, split in parts)."""
    rng = np.random.default_rng(13)
    a = random_values(rng, dtype, (5, 2 * 9001))[:, ::2]
    b = random_values(rng, dtype, (5, 9001))
    plan = sw.explain(sw.remainder, a, b)
    assert plan.mode == "rows" and plan.shape == (45005,)
    assert same_bits(sw.remainder(a, b), numpy_remainder(a, b))


def test_strided_slice_and_python_scalar():
    rng = np.random.default_rng(5)
    base = random_values(rng, "float32", (40, 256))
    a = base[:, ::2]
    b = random_values(rng, "float32", (40, 128))
    assert same_bits(sw.remainder(a, b), numpy_remainder(a, b))
    assert same_bits(sw.remainder(a, 0.75), numpy_remainder(a, np.float32(0.75)))
    assert same_bits(sw.remainder(1.5, a), numpy_remainder(np.float32(1.5), a))


def test_negative_strides():
    rng = np.random.default_rng(9)
    a = random_values(rng, "float64", (30, 50))[::-1, ::-2]
    b = random_values(rng, "float64", (25,))[::-1]
    assert same_bits(sw.remainder(a, b), numpy_remainder(a, b))


def test_empty_and_zero_d():
    e = np.empty((0, 5), np.float32)
    assert sw.remainder(e, np.ones(5, np.float32)).shape == (0, 5)
    z = sw.remainder(np.float64(7.5) * np.ones(()), np.ones(()) * 2.0)
    assert z.shape == () and z == 1.5
    o = np.full((3, 0), 7.0)
    assert sw.remainder(np.ones((3, 1)), np.ones((1, 0)), out=o) is o


def test_out_into_noncontiguous_views_and_inplace():
    rng = np.random.default_rng(11)
    a, b = random_values(rng, "float32", (32, 64)), random_values(rng, "float32", (64,))
    buf = np.full((64, 64), 123.0, np.float32)
    out = buf[::2, ::-1]
    r = sw.remainder(a, b, out=out)
    assert r is out and same_bits(out, numpy_remainder(a, b))
    assert np.all(buf[1::2] == 123.0)                          # nothing else written
    x = a.copy()
    assert sw.remainder_(x, b) is x and same_bits(x, numpy_remainder(a, b))
    y = a.copy()
    sw.remainder(y, b, out=y)                                  # out identical to an input
    assert same_bits(y, numpy_remainder(a, b))


# -- hypothesis: random broadcasts and strided views ----------------------------------------
@st.composite
def strided_pair(draw):
    ndim = draw(st.integers(0, 5))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))

    def operand(full):
        keep = [draw(st.booleans()) for _ in full]
        s = tuple(n if k else 1 for n, k in zip(full, keep))
        s = s[draw(st.integers(0, len(s))):]                      # fewer leading dims
        steps = [draw(st.sampled_from([1, 1, 2, -1])) for _ in s]
        base = random_values(np.random.default_rng(draw(st.integers(0, 2**16))), dtype,
                             tuple(n * abs(k) for n, k in zip(s, steps)) or ())
        view = base[tuple(slice(None, None, k) for k in steps)] if s else base
        if len(s) >= 2 and draw(st.booleans()):                   # a transposed view
            perm = draw(st.permutations(range(len(s))))
            view = np.ascontiguousarray(view.transpose(perm)).transpose(np.argsort(perm))
        return view

    dtype = draw(st.sampled_from(DTYPES))
    return operand(shape), operand(shape), dtype, draw(st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strided_pair(), st.sampled_from(["torch", "numpy"]))
def test_hypothesis_broadcast_strided(case, convention):
    a, b, dtype, strided_out = case
    want = ORACLES[convention](a, b)
    if strided_out and want.ndim:
        buf = np.zeros(tuple(2 * n for n in want.shape), want.dtype)
        out = buf[tuple(slice(None, None, 2) for _ in want.shape)]
        sw.remainder(a, b, out=out, convention=convention)
        got = out
    else:
        got = sw.remainder(a, b, convention=convention)
    assert same_bits(got, want), mismatches(got, want, a, b)


# -- bad input: a clear error, and nothing written ------------------------------------------
def _untouched(out):
    return np.all(out == 42)


def test_errors_write_nothing():
    a, b = np.ones((4, 5), np.float32), np.ones((5,), np.float32)
    out = np.full((4, 5), 42, np.float32)
    with pytest.raises(ValueError, match="do not broadcast"):
        sw.remainder(a, np.ones(4, np.float32), out=out)
    with pytest.raises(ValueError, match="shape"):
        sw.remainder(a, b, out=np.full((5, 4), 42, np.float32))
    with pytest.raises(TypeError, match="dtype"):    # float32 into int32: not same_kind
        sw.remainder(a, b, out=np.full((4, 5), 42, np.int32))
    ro = np.full((4, 5), 42, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        sw.remainder(a, b, out=ro)
    with pytest.raises(ValueError, match="overlaps itself"):
        sw.remainder(a, b, out=np.lib.stride_tricks.as_strided(np.full(5, 42, np.float32), (4, 5), (0, 4)))
    torch = pytest.importorskip("torch")    # NumPy buffers an overlapping out; torch refuses
    buf = torch.full((30,), 42.0)
    with pytest.raises(ValueError, match="partially overlaps"):
        sw.remainder(buf[:20].reshape(4, 5), torch.from_numpy(b), out=buf[5:25].reshape(4, 5))
    assert bool((buf == 42).all())
    x = np.full((1, 5), 42, np.float32)
    with pytest.raises(ValueError, match="expand"):
        sw.remainder_(x, np.ones((4, 5), np.float32))
    assert _untouched(x) and _untouched(out)
    with pytest.raises(TypeError, match="unsupported dtype"):
        sw.remainder(np.ones(3, np.longdouble), np.ones(3, np.longdouble))
    with pytest.raises(TypeError, match="unsupported dtype"):
        sw.remainder(np.ones(3, np.complex64), 1)
    # a big-endian array is buffered as NumPy buffers it (test_call_conventions.py); a user
    # kernel refuses it, naming the fix, and writes nothing
    swapped, kept = np.arange(1, 9, dtype=">f4"), np.full(8, 42, np.float32)
    with pytest.raises(TypeError, match="byte order"):
        sw.ElementwiseKernel("T x", "T y", "y = x", name="swap")(swapped, kept)
    assert _untouched(kept)
    with pytest.raises(ValueError, match="convention"):
        sw.remainder(a, b, convention="python")
    with pytest.raises(TypeError, match="argument 1"):
        sw.remainder(a, "x")


def test_mixing_libraries_is_an_error():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="move them to one library"):
        sw.remainder(np.ones(3), torch.ones(3, dtype=torch.float64))


def _int64_operands():
    rng = np.random.default_rng(7)
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    edges = [lo, lo + 1, hi, hi - 1, 0, 1, -1, 2, -2, 3, 1 << 49, (1 << 50) - 1, 1 << 50,
             -(1 << 50) + 1, -(1 << 50), (1 << 53) + 1, (1 << 62) + 12345, -(1 << 62) - 777,
             (1 << 42) - 1, 1 << 42, -(1 << 42) - 1]
    divisors = [1, -1, 2, -2, 3, -3, 7, 1000, -1000, (1 << 31) - 1, 1 << 31, 3 ** 30,
                (1 << 42) - 1, -(1 << 42) + 1, (1 << 41) + 3, 1 << 42, -(1 << 42),
                (1 << 50) - 1, -(1 << 50) + 1, (1 << 49) + 3, 1 << 50, -(1 << 50), lo, hi, 0]
    a = [np.int64(x) for x in edges]
    b = [np.int64(x) for x in divisors]
    # random dividends over the whole range against divisors of every magnitude, and
    # dividends right at multiples of the divisor (where a quotient estimate is most fragile)
    bits = rng.integers(0, 51, 4000)
    rb = (rng.integers(1, 1 << 62, 4000, dtype=np.int64) >> (62 - bits)) | 1
    rb *= rng.choice([-1, 1], 4000)
    ra = rng.integers(lo, hi, 4000, dtype=np.int64, endpoint=True)
    k = rng.integers(-(hi // 4), hi // 4, 4000, dtype=np.int64) // np.maximum(np.abs(rb), 1)
    near = (k * rb) + rng.integers(-2, 3, 4000)
    A = np.concatenate([np.repeat(a, len(b)), ra, near])
    B = np.concatenate([np.tile(b, len(a)), rb, rb])
    return A, B


def _int64_large_divisor_operands():
    """Divisors of 2^42 and up to 2^63, both signs, against dividends over the whole range,
    at the int64 edges, and at and one either side of a multiple of the divisor."""
    rng = np.random.default_rng(11)
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    n = 20000
    bits = rng.integers(42, 64, n)
    B = np.array([int(rng.integers(1 << (int(k) - 1), (1 << int(k)) - 1)) | (1 << (int(k) - 1))
                  for k in bits], dtype=object)
    B = np.array([x if x < 1 << 63 else hi for x in B], dtype=object) * rng.choice([-1, 1], n)
    special = [lo, hi, 1 << 42, -(1 << 42), (1 << 61) + 1, -(1 << 62) - 1, lo + 1,
               1 << 62, -(1 << 62), (1 << 62) + 1, (1 << 62) - 1, -(1 << 62) + 1, 1 << 50]
    B = np.concatenate([B, special])
    m = len(B)
    edges = np.array([lo, lo + 1, hi, hi - 1, 0, 1, -1], dtype=object)
    k = np.array([int(rng.integers(-(2**63) // abs(int(x)), 2**63 // abs(int(x)))) for x in B], dtype=object)
    near = [max(lo, min(hi, int(q) * int(x) + int(d))) for q, x, d in zip(k, B, rng.integers(-1, 2, m))]
    A = np.concatenate([rng.integers(lo, hi, m, dtype=np.int64, endpoint=True).astype(object),
                        np.array(near, dtype=object), rng.choice(edges, m)])
    cross = np.array([(x, y) for x in edges for y in special], dtype=object)   # INT64_MIN / 2^62 = -2 ...
    return (np.concatenate([A, cross[:, 0]]).astype(np.int64),
            np.concatenate([np.tile(B, 3), cross[:, 1]]).astype(np.int64))


def test_int64_device_division_matches_numpy():
    """The GPU's int64 division (functors.h int64_divmod_fast: remainder, fmod and
    floor_divide), built for the host through a user kernel: equal to NumPy's for divisors of
    every size (zero, below 2^42 and 2^42 to 2^63), remainder never asking for the slow path."""
    k = sw.ElementwiseKernel("int64 a, int64 b", "int64 y, int64 f, int64 q, bool s",
                             "sw::FastFlag slow = 0;"
                             "const sw::Divisor<sw::i64> d = sw::Divisor<sw::i64>::make(b);"
                             "y = sw::int64_remainder_fast(a, d, slow);"
                             "f = sw::int64_fmod_fast(a, d);"
                             "q = sw::int64_floor_divide_fast(a, d);"
                             "s = slow != 0;",
                             name="int64_device_division")
    for A, B in (_int64_operands(), _int64_large_divisor_operands()):
        y, f, q, slow = k(A, B)
        assert not slow.any()
        with np.errstate(divide="ignore", over="ignore"):
            np.testing.assert_array_equal(y, np.remainder(A, B))
            np.testing.assert_array_equal(f, np.fmod(A, B))
            np.testing.assert_array_equal(q, np.floor_divide(A, B))


def _fast_path_boundary_operands(name, rng):
    """Operands around the host fast path's limits (functors.h fmod_fast): quotients near
    2^k up to and past the 2^23 (float) / 2^52 (double) cut, dividends at exact multiples of
    the divisor and one ulp either side, subnormal and huge or tiny divisors."""
    dt = NP[name]
    fi = np.finfo(dt)
    mant = 23 if dt == np.float32 else 52
    n = 3000
    b = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(fi.minexp - 10, fi.maxexp - 2, n)).astype(dt)
    b[: n // 10] = (rng.integers(1, 1 << 20, n // 10) * float(fi.smallest_subnormal)).astype(dt)
    b[n // 10: n // 5] = (rng.uniform(1, 2, n // 10) * 2.0 ** rng.integers(fi.maxexp - 30, fi.maxexp - 1, n // 10)).astype(dt)
    k = np.floor(2.0 ** rng.uniform(0, mant + 3, n))
    k[: n // 4] = 2.0 ** rng.integers(mant - 3, mant + 3, n // 4) + rng.integers(-2, 3, n // 4)
    with np.errstate(over="ignore", invalid="ignore"):
        exact = (k * b.astype(np.float64)).astype(dt) if dt == np.float32 else k * b
        frac = ((k + rng.uniform(0, 1, n)) * b.astype(np.float64)).astype(dt) if dt == np.float32 \
            else (k + rng.uniform(0, 1, n)) * b
    with np.errstate(over="ignore"):
        a = np.concatenate([exact, np.nextafter(exact, dt.type(np.inf)), np.nextafter(exact, dt.type(-np.inf)), frac,
                            (rng.uniform(0, 4, n) * b).astype(dt)])
    b = np.tile(b, 5)
    ok = np.isfinite(a)
    a, b = a[ok], b[ok]
    sa = rng.choice(np.array([-1, 1], dt), a.size)
    sb = rng.choice(np.array([-1, 1], dt), a.size)
    return (a * sa).astype(dt), (b * sb).astype(dt)


@pytest.mark.parametrize("convention", ["torch", "numpy"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_host_fast_path_boundaries(dtype, convention):
    """The vectorized host fast path and its fall-back to fmod, bit for bit, on values near
    the limits of its exactness argument, in packs (contiguous, and a row broadcast)."""
    rng = np.random.default_rng(7)
    a, b = _fast_path_boundary_operands(dtype, rng)
    got = sw.remainder(a, b, convention=convention)
    want = ORACLES[convention](a, b)
    assert same_bits(got, want), mismatches(got, want, a, b)
    m = a.size // 64 * 64
    a2, b2 = a[:m].reshape(-1, 64), b[:64]
    got = sw.remainder(a2, b2, convention=convention)
    want = ORACLES[convention](a2, b2)
    assert same_bits(got, want), mismatches(got, want, a2, np.broadcast_to(b2, a2.shape))


def _int64_multiples_whole_range():
    """Divisors of every length below 2^50 against dividends over the whole int64 range at,
    and one or a divisor less one either side of, a multiple of the divisor: where the
    50-bit form's second quotient must floor an exact integer (r / V = n) or one just below
    the next (f = 1 - 1 / V)."""
    rng = np.random.default_rng(13)
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    n = 30000
    bits = rng.integers(1, 51, n)
    B = [int(rng.integers(1 << (int(k) - 1), 1 << int(k))) * int(rng.choice([-1, 1])) for k in bits]
    A = []
    for b in B:
        k = int(rng.integers(lo // abs(b), hi // abs(b)))
        d = int(rng.choice([-1, 0, 1, abs(b) - 1, 1 - abs(b)]))
        A.append(max(lo, min(hi, k * b + d)))
    return np.array(A, dtype=np.int64), np.array(B, dtype=np.int64)


def _past_50_bits(B):
    """Where int64_divmod_50 asks for the slow path: |b| of 2^50 or more, whatever a."""
    return (np.abs(B.astype(object)) >= 1 << 50).astype(bool)


def _bounds_50():
    """Every pair of dividends and divisors at the 50-bit form's bound, at 2^51, 2^52 and 2^32
    (its conversions' offsets and halves) and at the int64 edges, each with both signs and
    one either side."""
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    around = lambda x: [x - 1, x, x + 1, -x - 1, -x, -x + 1]
    values = [lo, lo + 1, hi, hi - 1, 0, 1, -1, 2, -3, 7, *around(1 << 51), *around(1 << 50),
              *around(1 << 52), *around(1 << 32), *around((1 << 50) - 1)]
    pairs = np.array([(x, y) for x in values for y in values], dtype=np.int64)
    return pairs[:, 0].copy(), pairs[:, 1].copy()


@pytest.mark.parametrize("wide", [True, False])
def test_int64_host_fast_path_matches_integer_division(wide):
    """The host's branch-free forms (functors.h int64_fast_host<kOp, kWide>), element by
    element through a user kernel, both on any CPU: the wide form (int64_divmod_host, the
    kernels' with AVX-512DQ) holds for every divisor (a zero divisor is a lane like any
    other), the 50-bit one (int64_divmod_50, theirs otherwise) wherever int64_past_50 (the
    kernels' check first) says |b| is below 2^50, whatever the dividend; neither sets the
    flag. Each equals NumPy wherever it holds (0 for b = 0), and int64_remainder_fast (the
    GPU's) where that one is defined (b != 0). The operands, and the large-divisor ones,
    cover the wide form's two forms (|b| below 2^62 and from 2^62 up), the 2^50 boundary of
    its first form's arguments and of the narrow form."""
    k = sw.ElementwiseKernel(
        "int64 a, int64 b", "int64 y, bool s, bool past, int64 g",
        f"sw::FastFlag slow = 0, gslow = 0; y = sw::int64_fast_host<sw::kInt64Remainder, {str(wide).lower()}>(a, b, slow); "
        "s = slow != 0; past = sw::int64_past_50(b); "
        "g = sw::int64_remainder_fast(a, sw::Divisor<sw::i64>::make(b), gslow);",
        name="int64_fast_host")
    zeros = kept = 0
    for A, B in (_int64_operands(), _int64_large_divisor_operands(), _bounds_50(),
                 _int64_multiples_whole_range()):
        y, slow, past, g = k(A, B)
        np.testing.assert_array_equal(slow, False)
        np.testing.assert_array_equal(past, _past_50_bits(B))
        holds = np.ones_like(past) if wide else ~past
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(y[holds], np.remainder(A, B)[holds])
        np.testing.assert_array_equal(y[(B != 0) & holds], g[(B != 0) & holds])
        zeros += ((B == 0) & holds).sum()
        kept += holds.sum()
    assert zeros > 0 and kept > 4000


@pytest.mark.parametrize("wide", [True, False])
def test_int64_host_fmod_and_floor_divide_forms_match_numpy(wide):
    """fmod and floor_divide by int64_fast_host (functors.h) in both forms, as
    above, element by element through a user kernel: never flagged, and equal to NumPy
    wherever the form holds (0 for b = 0)."""
    w = str(wide).lower()
    k = sw.ElementwiseKernel(
        "int64 a, int64 b", "int64 f, int64 q, bool s",
        f"sw::FastFlag slow = 0; f = sw::int64_fast_host<sw::kInt64Fmod, {w}>(a, b, slow); "
        f"q = sw::int64_fast_host<sw::kInt64FloorDivide, {w}>(a, b, slow); s = slow != 0;",
        name="int64_divmod_host_forms")
    for A, B in (_int64_operands(), _int64_large_divisor_operands(), _bounds_50(),
                 _int64_multiples_whole_range()):
        f, q, slow = k(A, B)
        np.testing.assert_array_equal(slow, False)
        holds = np.ones(A.shape, bool) if wide else ~_past_50_bits(B)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(f[holds], np.fmod(A, B)[holds])
            np.testing.assert_array_equal(q[holds], np.floor_divide(A, B)[holds])


def _int64_multiples_past_50():
    """Divisors of every length from 51 to 64 bits (2^50 to INT64_MIN) against dividends over
    the whole range at, and one or a divisor less one either side of, a multiple: where
    int64_divmod_big's biased quotient is n - 1 and its one compare must carry it to n."""
    rng = np.random.default_rng(17)
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    B = [lo, hi, 1 << 50, -(1 << 50), 1 << 62, -(1 << 62), (1 << 62) - 1]
    for k in rng.integers(51, 64, 20000):
        B.append(int(rng.integers(1 << (int(k) - 1), (1 << int(k)) - 1)) * int(rng.choice([-1, 1])))
    A = []
    for b in B:
        q = int(rng.integers(lo // abs(b), hi // abs(b) + 1))
        d = int(rng.choice([-1, 0, 1, abs(b) - 1, 1 - abs(b)]))
        A.append(max(lo, min(hi, q * b + d)))
    return np.array(A, dtype=np.int64), np.array(B, dtype=np.int64)


def test_int64_exact_forms_match_numpy():
    """The int64 kernels' exact forms on a host without AVX-512DQ (functors.h, a flagged
    pack's int64_divide_pack), element by element through a user kernel on any CPU:
    int64_divmod_any for every divisor, int64_divmod_big where |b| is 2^50 or more,
    int64_divide_idiv (the host divider's form, SW_FAST_IDIV) for every divisor, and
    int64_divide_pack of one element (the host's choice), for remainder, fmod and
    floor_divide, against NumPy."""
    k = sw.ElementwiseKernel(
        "int64 a, int64 b", "int64 r, int64 f, int64 q, int64 rb, int64 fb, int64 qb, int64 rp, "
        "int64 ri, int64 fi, int64 qi",
        "const sw::DivMod64 d = sw::int64_divmod_any(a, b), g = sw::int64_divmod_big(a, b); "
        "r = sw::int64_remainder_of(d, b); f = sw::int64_fmod_of(d, b); "
        "q = sw::int64_floor_divide_of(d, b); rb = sw::int64_remainder_of(g, b); "
        "fb = sw::int64_fmod_of(g, b); qb = sw::int64_floor_divide_of(g, b); "
        "sw::int64_divide_pack<sw::kInt64Remainder, 1>(&rp, &a, &b); "
        "ri = sw::int64_divide_idiv<sw::kInt64Remainder>(a, b); "
        "fi = sw::int64_divide_idiv<sw::kInt64Fmod>(a, b); "
        "qi = sw::int64_divide_idiv<sw::kInt64FloorDivide>(a, b);",
        name="int64_exact_forms")
    big = 0
    for A, B in (_int64_operands(), _int64_large_divisor_operands(), _bounds_50(),
                 _int64_multiples_whole_range(), _int64_multiples_past_50()):
        r, f, q, rb, fb, qb, rp, ri, fi, qi = k(A, B)
        past = _past_50_bits(B)
        with np.errstate(all="ignore"):
            want = np.remainder(A, B), np.fmod(A, B), np.floor_divide(A, B)
        for got, w in zip((r, f, q, ri, fi, qi), want + want):
            assert same_bits(got, w), mismatches(got, w, A, B)
        for got, w in zip((rb, fb, qb), want):
            assert same_bits(got[past], w[past]), mismatches(got[past], w[past], A[past], B[past])
        assert same_bits(rp, want[0]), mismatches(rp, want[0], A, B)
        big += past.sum()
    assert big > 20000


def _int64_layouts(A, B):
    """(a, b) views of the operands in every host layout whose pack loop runs the fast path."""
    n = A.size // 48 * 48
    A, B = A[:n], B[:n]
    wide = np.empty((n // 48, 96), A.dtype)
    wide[:, ::2] = A.reshape(-1, 48)
    return {
        "contiguous": (A, B),
        "row": (A[: n // 96 * 96].reshape(-1, 96), B[:96]),
        "outer": (A[:300].reshape(-1, 1), B[:48].reshape(1, -1)),
        "short_rows": (A.reshape(-1, 6), B[:6].reshape(1, 6)),
        "short_rows_5": (A[: n // 5 * 5].reshape(-1, 5), B[:5].reshape(1, 5)),
        "short_rows_11": (A[: n // 11 * 11].reshape(-1, 11), B[:11].reshape(1, 11)),
        "strided": (wide[:, ::2], B.reshape(-1, 48)),
        "permuted": (np.ascontiguousarray(A.reshape(-1, 48).T).T, B.reshape(-1, 48)),
        "crossed": (A.reshape(-1, 4, 12), B[: n // 4].reshape(-1, 1, 12)),
    }


@pytest.mark.parametrize("convention", ["torch", "numpy"])
def test_int64_layouts_fast_and_slow_packs(convention):
    """int64 remainder in every layout, against NumPy: once with divisors below 2^50 (the
    50-bit form's), once with every divisor mixed in (2^50 and beyond, INT64_MIN, -1, and 0),
    and once with divisors of 2^50 and beyond only (packs whose every lane is past it)."""
    A, B = _int64_operands()
    rng = np.random.default_rng(11)
    perm = rng.permutation(A.size)
    A, B = A[perm], B[perm]
    mag = np.abs(B.astype(object))
    ok = np.array([0 < m < 1 << 50 for m in mag])
    A2, B2 = _int64_multiples_past_50()
    for name, (a, b) in {**{f"fast {k}": v for k, v in _int64_layouts(A[ok], B[ok]).items()},
                         **{f"mixed {k}": v for k, v in _int64_layouts(A, B).items()},
                         **{f"past 2^50 {k}": v for k, v in _int64_layouts(A2[:4800], B2[:4800]).items()}}.items():
        got = sw.remainder(a, b, convention=convention)
        want = ORACLES[convention](a, b)
        assert same_bits(got, want), (name, mismatches(got, want, a, b))


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float16"])
@pytest.mark.parametrize("period", [3, 5, 6, 8, 16, 17, 40])
def test_short_rows_periods(dtype, period):
    """Periodic operands (short_rows) whose period is below, equal to and above the host's
    pack widths, so the step back to the period's start lands anywhere in a pack; and Auto,
    which runs rows of 64 bytes and more in `rows` on the host (tuning.py short_row_bytes), but
    int64 rows of up to 8 elements in `general` (the int64 registration's rows_min_elements:
    rows of 8 by a row, 2^20, 0.97x / 1.18x torch CPU by Rows, 1.08x / 1.21x by General for
    remainder / add)."""
    rng = np.random.default_rng(period)
    a = random_values(rng, dtype, (4099, period))
    b = random_values(rng, dtype, (1, period))
    if dtype.startswith("int"):
        b[b == 0] = 3
    flat = sw.ShortRows()
    assert sw.explain(sw.remainder, a, b, algorithm=flat).mode == "short_rows"
    assert sw.explain(sw.remainder, a, b, algorithm=flat).kinds[2] == "periodic"
    assert same_bits(sw.remainder(a, b, algorithm=flat), numpy_remainder(a, b))
    auto = sw.explain(sw.remainder, a, b).mode
    want = "short_rows" if period * a.itemsize < 64 else "general" if dtype == "int64" and period < 9 else "rows"
    assert auto == want, auto
    assert same_bits(sw.remainder(a, b), numpy_remainder(a, b))


def _u32_mod_model(U, V, ulps):
    """functors.h u32_reciprocal / u32_mod step by step in NumPy, with rcp.approx(F) modelled
    as the correctly rounded float reciprocal moved `ulps` ulp (the hardware is within 1)."""
    F = V.astype(np.float32)                                   # V rounded up to float (cvt.rp)
    F = np.where(F.astype(np.float64) < V, np.nextafter(F, np.float32(np.inf)), F)
    f = (np.float32(1) / F).astype(np.float32)
    for _ in range(abs(ulps)):
        f = np.nextafter(f, np.float32(np.inf if ulps > 0 else 0))
    scaled = (f.view(np.uint32) + np.uint32(0x0FFFFFFC)).view(np.float32)
    m = np.trunc(scaled.astype(np.float64)).astype(np.uint64)  # cvt.rzi.u32: below 2^32 here
    assert (m < 2**32).all()
    e = (2**32 - V * m) % 2**32                                # (0 - V) * m, wrapping
    m = (m + ((m * e) >> np.uint64(32))) % 2**32
    r = (U - ((U * m) >> np.uint64(32)) * V) % 2**32           # wrapping, as the device's u32
    return np.where(r >= V, r - V, r)


@pytest.mark.parametrize("ulps", [-1, 0, 1])
def test_int32_device_division_argument(ulps):
    """The device's int32 remainder (functors.h u32_mod) checked as arithmetic: every divisor
    below 2^16 and near each power of two, random ones up to 2^31, against dividends at the
    top of the range and next to multiples, with the reciprocal anywhere within its 1 ulp."""
    rng = np.random.default_rng(7)
    pows = np.array([1 << k for k in range(1, 32)], np.int64)
    V = np.unique(np.concatenate([np.arange(1, 1 << 16), (pows[:, None] + np.arange(-3, 4)).ravel(),
                                  rng.integers(1, 2**31, 1 << 18)]))
    V = V[(V >= 1) & (V <= 2**31)].astype(np.uint64)
    for U in (np.full_like(V, 2**31), np.full_like(V, 2**31 - 1), V - 1, V,
              (np.uint64(2**31) // V) * V - 1, (np.uint64(2**31) // V) * V,
              rng.integers(0, 2**31 + 1, V.size).astype(np.uint64)):
        np.testing.assert_array_equal(_u32_mod_model(U, V, ulps), U % V)


def _fma(x, y, z):
    """x * y + z rounded once to double (Fraction arithmetic is exact; float() rounds once)."""
    from fractions import Fraction
    return float(Fraction(x) * Fraction(y) + Fraction(z))


def _rcp_newton_model(x, ulps):
    """functors.h rcp_newton with the float reciprocal moved `ulps` ulp from the correctly
    rounded one (__fdividef is within 2)."""
    f = np.float32(1) / np.float32(x)
    for _ in range(abs(ulps)):
        f = np.nextafter(f, np.float32(np.inf if ulps > 0 else 0))
    r = float(f)
    return _fma(r, _fma(-x, r, 1.0), r)


@pytest.mark.parametrize("ulps", [-2, 0, 2])
def test_float64_device_fmod_argument(ulps):
    """The device's float64 fast path (functors.h fmod_fast) checked as arithmetic against
    math.fmod: quotients up to the 2^40 limit, at exact multiples and one ulp either side,
    divisors across [2^-100, 2^100], with the float reciprocal anywhere within its 2 ulp."""
    import math
    rng = np.random.default_rng(8)
    for _ in range(3000):
        B = float(rng.uniform(1, 2) * 2.0 ** int(rng.integers(-100, 100)))
        k = math.floor(2.0 ** rng.uniform(0, 40))
        A = [k * B, math.nextafter(k * B, 0), math.nextafter(k * B, math.inf),
             float(rng.uniform(0, 2 ** 40)) * B][int(rng.integers(4))]
        r1 = _rcp_newton_model(B, ulps)
        q = math.trunc(A * _fma(r1, 2.0 ** -42, r1))
        if not (q < 2 ** 40 and 2.0 ** -100 <= B <= 2.0 ** 100):
            continue                                  # the slow path's, not the fast path's
        r = _fma(-q, B, A)
        assert (r + B if r < 0 else r) == math.fmod(A, B), (A, B, ulps)


def _rcp_model(b, ulps):
    """rcp.approx(b) modelled as the correctly rounded float32 reciprocal moved `ulps` ulp
    (away from zero where positive); zeros and infinities as they are."""
    f32 = np.float32
    rcp = f32(1) / b
    finite = (rcp != 0) & np.isfinite(rcp)
    for _ in range(abs(ulps)):
        rcp = np.where(finite, np.nextafter(rcp, np.copysign(f32(np.inf), rcp) if ulps > 0 else f32(0)), rcp)
    return rcp


def _remainder_fast_model(a, b, ulps, convention, step0=False, dense=False):
    """functors.h remainder_fast (float, two steps) step by step in NumPy, with rcp.approx(b)
    modelled as the correctly rounded float reciprocal moved `ulps` ulp (the hardware is
    within 1); each fma is exact in float64 here (at most 46 significant bits where the path
    keeps the lane) and rounded once to float32. `dense`: step 1's product as
    (q1 2^20) |b| (kDense) rather than q1 Bs. Returns the result and the mask of elements
    the fast path keeps (slow not set)."""
    f32, f64, u32 = np.float32, np.float64, np.uint32
    big = np.finfo(f32).max
    sign = u32(0x80000000)
    B = np.abs(b)
    rcp = _rcp_model(b, ulps)
    rcp = np.where((B < np.finfo(f32).tiny) & (B > 0), np.copysign(f32(np.inf), b), rcp)   # ftz
    # Divisor<float>
    rcp1 = np.abs(rcp) * f32(2.0**-20 * (1 + 2.0**-21))
    Bs = np.minimum(B * f32(2**20), big)
    Bc = np.minimum(B, big)
    wide = ((B < np.finfo(f32).tiny) & (B > 0)) | ((B > 2**100) & (B < np.inf))
    A = np.abs(a)
    if step0:
        rcp0 = np.abs(rcp) * f32(2.0**-40 * (1 + 2.0**-21))
        Bs0 = np.minimum(B * f32(2**40), big)
        q0 = np.floor(A * rcp0)
        r0 = (A.astype(f64) - q0.astype(f64) * Bs0).astype(f32)
        wide0 = ((B < np.finfo(f32).tiny) & (B > 0)) | ((B > 2**86) & (B < np.inf))
        keep = ~(wide0 | ((q0 >= 2**20) & (r0 == r0)))
        A = np.where(r0 < 0, r0 + Bs0, r0)
    q1 = np.floor(A * rcp1)
    if dense:
        r1 = (A.astype(f64) - (q1 * f32(2**20)).astype(f64) * Bc).astype(f32)
    else:
        r1 = (A.astype(f64) - q1.astype(f64) * Bs).astype(f32)
    if not step0:
        keep = ~(wide | ((q1 >= 2**20) & (r1 == r1)))
    z = (a.view(u32) ^ b.view(u32)) & sign       # the sign of a times b's
    x = (r1.view(u32) ^ z).view(f32)              # a2 = r1 with a's sign, times b's sign
    w = x * np.abs(rcp)
    q = np.floor((np.abs(w).astype(f64) * 2.0**-21 + w).astype(f32))
    r = (x.astype(f64) - q.astype(f64) * Bc).astype(f32)
    r = np.where(r < 0, r + B, r)
    sb = b.view(u32) & sign
    if convention == "numpy":
        return ((r.view(u32) & ~sign) | sb).view(f32), keep
    # __fadd_rd(r, z) then b's sign: a nonzero r as it is; a sum of zeros rounded down is -0
    # when either is
    minus = np.signbit(r) | (z != 0)
    r = np.where(r == 0, np.where(minus, f32(-0.0), f32(0.0)), r)
    return (r.view(u32) ^ sb).view(f32), keep


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("step0", [False, True])
@pytest.mark.parametrize("convention", ["torch", "numpy"])
@pytest.mark.parametrize("ulps", [-1, 0, 1])
def test_float_device_remainder_argument(ulps, convention, step0, dense):
    """The device's float remainder fast path (functors.h remainder_fast) checked as float32
    arithmetic against fmod and the sign fix: quotients of every size up to the 2^40 limit
    and past it, exact multiples and one ulp either side, both signs, divisors across the
    whole float range (subnormal and above 2^100 included), tiny and zero dividends, and inf,
    NaN and zero operands mixed in, with the reciprocal anywhere within its ulp. The fast path
    must keep every lane with |a / b| < 2^40 and b in [2^-126, 2^100] (step 0: 2^60 and
    2^86), and every special."""
    rng = np.random.default_rng(10)
    n = 1 << 17
    b = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-149, 128, n)).astype(np.float32)
    k = np.floor(2.0 ** rng.uniform(0, 62, n))
    with np.errstate(over="ignore"):   # products past the float range: inf, specials too
        kb = (k * b.astype(np.float64)).astype(np.float32)
        a = np.stack([kb, np.nextafter(kb, np.float32(0)), np.nextafter(kb, np.float32(np.inf)),
                      (rng.uniform(0, 2**21, n) * b).astype(np.float32),
                      (rng.uniform(0, 2**41, n) * b).astype(np.float32),
                      (rng.uniform(0, 2**61, n) * b).astype(np.float32),
                      (rng.uniform(0, 1, n) * b).astype(np.float32), b * np.float32(1 - 2**-24),
                      (b * 2.0 ** -rng.integers(1, 60, n)).astype(np.float32), np.zeros(n, np.float32)])
    a = a * rng.choice(np.float32([-1, 1]), a.shape)
    b = np.broadcast_to(b * rng.choice(np.float32([-1, 1]), n), a.shape).copy()
    specials = np.float32([np.inf, -np.inf, np.nan, 0.0, -0.0])
    sa, sb = rng.random(a.shape) < 0.03, rng.random(a.shape) < 0.03
    a[sa] = rng.choice(specials, sa.sum())
    b[sb] = rng.choice(specials, sb.sum())
    with np.errstate(all="ignore"):
        got, keep = _remainder_fast_model(a, b, ulps, convention, step0, dense)
        quotient = np.abs(a.astype(np.float64) / b)
    want = ORACLES[convention](a[keep], b[keep])
    B = np.abs(b)
    in_range = (B >= np.finfo(np.float32).tiny) & (B <= (2**86 if step0 else 2**100))
    must = ((quotient < (2**60 if step0 else 2**40)) | ~np.isfinite(a)) & in_range
    must |= ~np.isfinite(b) | (b == 0)
    assert keep[must].all(), (a[must & ~keep][:5], b[must & ~keep][:5])
    assert same_bits(got[keep], want), mismatches(got[keep], want, a[keep], b[keep])


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("ulps", [-1, 0, 1])
def test_float16_device_checks_cannot_fire(ulps, dense):
    """functors.h ShortRemainderFunctor: float16's device fast path runs without the float
    form's range checks, because they cannot fire for float16 values. Every float16 divisor
    (all 2^16 bit patterns, specials included) against the dividends that push the quotient
    furthest (+-65504, the largest subnormal's neighbours, one ulp below each power of two)
    and a spread of others, through the model of remainder_fast's two steps with the
    reciprocal anywhere within its ulp: the checks keep every lane, and every result is the
    oracle's, in both conventions."""
    b16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    a16 = np.concatenate([np.float16([65504, -65504, 6.1e-5, -6.1e-5, 0, 1, -1, 3.0, 0.1]),
                          np.nextafter(np.float16(2.0) ** np.arange(-14, 16).astype(np.float16),
                                       np.float16(0)),
                          np.random.default_rng(16).integers(0, 1 << 16, 64).astype(np.uint16).view(np.float16)])
    a = np.repeat(a16.astype(np.float32), b16.size)
    b = np.tile(b16.astype(np.float32), a16.size)
    for convention in ORACLES:
        with np.errstate(all="ignore"):
            got, keep = _remainder_fast_model(a, b, ulps, convention, False, dense)
        assert keep.all(), (a[~keep][:5], b[~keep][:5])
        want = ORACLES[convention](a, b)
        assert same_bits(got, want), mismatches(got, want, a, b)


def test_bfloat16_pair_check_flags_what_the_scalar_check_flags():
    """functors.h Wide2 (bfloat16 remainder_wide, two lanes at a time) modelled on the bits of
    every pair of bfloat16 magnitudes: it flags every lane that remainder_wide<false> (the
    scalar check, as float arithmetic) flags, and besides those only finite dividends by
    divisors in [2^90, 2^100], never an inf or NaN dividend or a zero, inf or NaN divisor."""
    f32, u32 = np.float32, np.uint32
    ia = np.arange(0x8000, dtype=u32)[None, :]
    to_f = lambda bits: (bits.astype(u32) << 16).view(f32)   # noqa: E731
    for start in range(0, 0x8000, 1024):
        ib = np.arange(start, start + 1024, dtype=u32)[:, None]
        A, B = to_f(ia), to_f(ib)
        with np.errstate(all="ignore"):
            # remainder_wide<false>(a, b) as the device computes it, in float
            scalar = (A < np.inf) & (B > 0) & (B < np.inf) & (
                ~((B >= f32(2.0**-126)) & (B <= f32(2.0**100))) | (A >= B * f32(2.0**39)))
            # Wide2: L = B + 39 * 128 with the sign bit set where B < 0x80; lim = fma(B, 0, L)
            # and mag = fma(A, 0, A) (exact here: a product by zero, then one sum); then
            # mag >= lim and B > 0 as bfloat16 compares
            L = ((ib + 0x1380) | (~(ib + 0x7F80) & 0x8000)) & 0xFFFF
            lim = B * f32(0) + to_f(L)
            mag = A * f32(0) + A
            pair = (mag >= lim) & (B > 0)
        assert not (scalar & ~pair).any()
        extra = pair & ~scalar
        band = (B >= f32(2.0**90)) & (B <= f32(2.0**100)) & (A < np.inf)
        assert not (extra & ~band).any()
        assert (pair | ~band).all()


def _round_bf16(x):
    """float64 values rounded once to bfloat16 (nearest, ties to even, subnormals on their
    2^-133 grid), as float32: the model of one bfloat16 fma's rounding."""
    m, e = np.frexp(x)                                     # |m| in [0.5, 1)
    quantum = np.ldexp(1.0, np.maximum(e - 8, -133))
    with np.errstate(invalid="ignore"):
        return (np.round(x / quantum) * quantum).astype(np.float32)


def _bf16_pair_model(a, b, ulps, convention):
    """functors.h Fast2<RemainderFunctor<bfloat16>> lane by lane in NumPy: the limit and the
    check (kept where |a| < 2^8 |b| for b in [2^-126, 2^120)), the quotient in float (fma
    exact in float64, rounded once to float32) with rcp.approx as the correctly rounded
    reciprocal moved `ulps` ulp, and each bfloat16 fma exact in float64 and rounded once
    (_round_bf16). Returns the result and the mask of lanes the check keeps."""
    f32 = np.float32
    B = np.abs(b)
    rcp = _rcp_model(b, ulps)
    lim = np.where((B >= f32(2.0**-126)) & (B < f32(2.0**120)), B * f32(256), f32(np.nan))
    keep = np.abs(a) < lim                                  # set.geu flags the rest
    m = 1.5 * 2.0**23
    nq = (m - (a.astype(np.float64) * rcp + m).astype(f32).astype(np.float64)).astype(f32)
    nq = _round_bf16(nq.astype(np.float64))                 # cvt.rn.bf16x2.f32
    r = _round_bf16(nq.astype(np.float64) * b + a)
    return _pair_signs(a, b, r, _round_bf16)[convention], keep


def _pair_signs(a, b, r, rounding):
    """The pair forms' last steps (functors.h Fast2): b added where r = a - q b is against b's
    sign (one fma, rounded by `rounding`), then a zero signed as each convention signs it
    (a's sign for torch, b's for NumPy); {convention: result}."""
    f32, u32 = np.float32, np.uint32
    sb = b.view(u32) & u32(0x80000000)
    neg = ((r.view(u32) ^ sb).view(f32) < 0).astype(f32)
    r = rounding(neg.astype(np.float64) * b + r)
    zero = r == 0
    return {"numpy": (r.view(u32) | sb).view(f32),
            "torch": (r.view(u32) | (zero * (a.view(u32) & u32(0x80000000))).astype(u32)).view(f32)}


@pytest.mark.parametrize("convention", ["torch", "numpy"])
@pytest.mark.parametrize("ulps", [-1, 0, 1])
def test_bfloat16_device_pair_form_argument(ulps, convention):
    """functors.h Fast2 for bfloat16 remainder (the prepared divisor pair's form) modelled in
    NumPy: every bfloat16 divisor (all 2^16 bit patterns, specials included) against
    dividends at and one ulp around its multiples k b for quotients up to 2^9, halves of it,
    tiny, zero and random ones, both signs, with the reciprocal anywhere within its ulp. Every
    lane the check keeps is the oracle's bit for bit, and it keeps every finite lane with
    |a| < 255 |b| for b in [2^-126, 2^119]."""
    from ml_dtypes import bfloat16
    rng = np.random.default_rng(27)
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    b16 = bits.view(bfloat16).astype(np.float32)
    k = np.concatenate([[0.5, 1, 2, 3, 127, 128, 255, 256, 257, 300],
                        np.floor(2.0 ** rng.uniform(0, 9, 22))])
    with np.errstate(all="ignore"):
        kb = (k[:, None] * b16[None, :]).astype(bfloat16)
        up, down = np.nextafter(kb.astype(np.float32), np.float32(np.inf)).astype(bfloat16), \
            np.nextafter(kb.astype(np.float32), np.float32(0)).astype(bfloat16)
        a = np.concatenate([kb, up, down,
                            (b16 * np.float32(2.0) ** -rng.integers(1, 140, (16, 1 << 16))).astype(bfloat16),
                            np.zeros((1, 1 << 16), bfloat16),
                            rng.integers(0, 1 << 16, (16, 1 << 16)).astype(np.uint16).view(bfloat16)])
    with np.errstate(invalid="ignore"):   # the random bits hold signalling NaNs
        a = a.astype(np.float32) * rng.choice(np.float32([-1, 1]), a.shape)
    b = np.broadcast_to(b16, a.shape).copy()
    with np.errstate(all="ignore"):
        got, keep = _bf16_pair_model(a, b, ulps, convention)
        quotient = np.abs(a.astype(np.float64) / b)
    want = ORACLES[convention](a[keep].astype(bfloat16), b[keep].astype(bfloat16)).astype(np.float32)
    B = np.abs(b)
    must = np.isfinite(a) & (B >= 2.0**-126) & (B <= 2.0**119) & (quotient < 255)
    assert keep[must].all(), (a[must & ~keep][:5], b[must & ~keep][:5])
    assert keep.sum() > a.size // 3
    assert same_bits(got[keep], want), mismatches(got[keep], want, a[keep], b[keep])


def _round_f16(x):
    """float64 values rounded once to float16 (NumPy converts double to half directly, to
    nearest, ties to even), as float32: the model of one half fma's rounding."""
    with np.errstate(all="ignore"):
        return np.asarray(x, np.float64).astype(np.float16).astype(np.float32)


def _f16_pair_model(a, b, ulps):
    """functors.h Fast2<RemainderFunctor<half>> lane by lane in NumPy: the reciprocal (rcp.approx
    as the correctly rounded one moved `ulps` ulp, scaled by 1 - 2^-22 in float, rounded toward
    zero to half, NaN where that is 0 or 65504 and up), each half fma exact in float64 and
    rounded once (_round_f16), and the check on the quotient (|q| <= 500, not NaN). Returns
    the result in each convention and the mask of lanes the check keeps."""
    f32 = np.float32
    with np.errstate(all="ignore"):
        B = np.abs(b)
        v = (_rcp_model(B, ulps) * f32(1 - 2.0**-22)).astype(np.float64)
        z = _round_f16(v)
        z = np.where(np.abs(z) > v, np.nextafter(z.astype(np.float16), np.float16(0)).astype(f32), z)   # rz
        bad = ~((z > 0) & (z < 65504))
        rcp = np.where(bad, f32(np.nan), np.copysign(z, b))
        w = _round_f16(a.astype(np.float64) * rcp + 1536)
        nq = _round_f16(1536 - w.astype(np.float64))                 # -q
        keep = np.abs(nq) <= 500                                     # setp.gtu flags the rest
        r = _round_f16(nq.astype(np.float64) * b + a)
    return _pair_signs(a, b, r, _round_f16), keep


@pytest.mark.parametrize("ulps", [-1, 0, 1])
def test_float16_device_pair_form_argument(ulps):
    """functors.h Fast2 for float16 remainder (the prepared divisor pair's form and its check
    on the quotient) modelled in NumPy: every float16 divisor (all 2^16 bit patterns, specials
    included) against dividends at and one ulp around its multiples k b for quotients up to
    2^9, halves of it, tiny, zero and random ones, both signs, with the reciprocal anywhere
    within its ulp. Every lane the check keeps is the oracle's bit for bit, and it keeps every
    finite lane with |a| < 499 |b| for |b| in (2^-16, 65504]."""
    rng = np.random.default_rng(35)
    b16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    k = np.concatenate([[0.5, 1, 2, 3, 127, 128, 255, 256, 257, 300, 500, 501],
                        np.floor(2.0 ** rng.uniform(0, 9, 8))])
    with np.errstate(all="ignore"):
        kb = (k[:, None] * b16[None, :]).astype(np.float16)
        up = np.nextafter(kb, np.float16(np.inf))
        down = np.nextafter(kb, np.float16(0))
        a = np.concatenate([kb, up, down,
                            (b16 * np.float32(2.0) ** -rng.integers(1, 40, (8, 1 << 16))).astype(np.float16),
                            np.zeros((1, 1 << 16), np.float16),
                            rng.integers(0, 1 << 16, (8, 1 << 16)).astype(np.uint16).view(np.float16)])
        a = a.astype(np.float32) * rng.choice(np.float32([-1, 1]), a.shape)
    b = np.broadcast_to(b16, a.shape).copy()
    with np.errstate(all="ignore"):
        got, keep = _f16_pair_model(a, b, ulps)
        quotient = np.abs(a.astype(np.float64) / b)
    B = np.abs(b)
    must = np.isfinite(a) & (B > 2.0**-16) & (B <= 65504) & (quotient < 499)
    assert keep[must].all(), (a[must & ~keep][:5], b[must & ~keep][:5])
    assert keep.sum() > a.size // 3
    a, b = a[keep].astype(np.float16), b[keep].astype(np.float16)
    for convention, oracle in ORACLES.items():   # the model's arithmetic is shared; each convention signs its zeros
        want = oracle(a, b).astype(np.float32)
        assert same_bits(got[convention][keep], want), mismatches(got[convention][keep], want, a, b)


def _fmod_wide_model(a, b, ulps):
    """functors.h fmod_wide as Python float (double) arithmetic, with rcp_newton's float
    reciprocal `ulps` ulp from the correctly rounded one."""
    import math
    A, B = abs(float(a)), abs(float(b))
    if not A < math.inf or not B > 0:
        return math.nan
    if not B < math.inf:
        return float(a)
    m, e = math.frexp(B)
    m, e = m * 2, e - 1                                  # B = m 2^e, m in [1, 2)
    inv0 = _rcp_newton_model(m, ulps)
    inv = _fma(inv0, _fma(-m, inv0, 1.0), inv0)
    up = _fma(inv, 2.0**-50, inv)
    x = A * 2.0**-e
    while True:
        s = math.frexp(x)[1] - 1 - 47 if x else -1
        if s <= 0:
            break
        ms, u = m * 2.0**s, up * 2.0**-s
        r = _fma(-math.trunc(x * u), ms, x)
        x = r + ms if r < 0 else r
    r = _fma(-math.trunc(x * up), m, x)
    return math.copysign(float(np.float32((r + m if r < 0 else r) * 2.0**e)), float(a))


@pytest.mark.parametrize("ulps", [-2, 0, 2])
def test_float_device_fmod_wide_argument(ulps):
    """functors.h fmod_wide (the float lanes remainder_fast leaves) checked as arithmetic
    against np.fmod: quotients up to float's 2^277, subnormal and huge divisors, dividends at
    exact multiples and one ulp either side, near the float maximum, and specials."""
    rng = np.random.default_rng(12)
    n = 4000
    f32 = np.float32
    b = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-149, 128, n)).astype(f32)
    a = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-149, 128, n)).astype(f32)
    k = np.floor(2.0 ** rng.uniform(0, 60, n))
    with np.errstate(all="ignore"):
        kb = (k * b.astype(np.float64)).astype(f32)
    kb = np.where(np.isfinite(kb) & (kb > 0), kb, a)
    a = np.concatenate([a, kb, np.nextafter(kb, f32(0)), np.nextafter(kb, f32(np.inf)),
                        np.full(n, np.finfo(f32).max), f32([np.inf, np.nan, 0.0, -0.0, 5.0, -5.0])])
    b = np.concatenate([b, b, b, b, b, f32([2.0, 2.0, 1e-45, -3.0, np.inf, 0.0])])
    a = a * rng.choice(f32([-1, 1]), a.size)
    b = b * rng.choice(f32([-1, 1]), b.size)
    got = np.array([_fmod_wide_model(x, y, ulps) for x, y in zip(a, b)], dtype=f32)
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    assert same_bits(got, want), mismatches(got, want, a, b)


def test_fmod_wide_exact_host_build_matches_numpy():
    """fmod_wide_exact (the device's wide lanes, the host's slow lanes) built for the host
    through a user kernel: equal to np.fmod over the whole float range, subnormals, the
    extremes and specials, dividends at multiples of the divisor and one ulp either side."""
    k = sw.ElementwiseKernel("float32 a, float32 b", "float32 y", "y = sw::fmod_wide_exact(a, b);",
                             name="fmod_wide_exact")
    rng = np.random.default_rng(14)
    n = 1 << 16
    f32 = np.float32
    b = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-149, 128, n)).astype(f32)
    with np.errstate(over="ignore"):
        kb = (np.floor(2.0 ** rng.uniform(0, 90, n)) * b.astype(np.float64)).astype(f32)
    a = np.concatenate([(rng.uniform(1, 2, n) * 2.0 ** rng.integers(-149, 128, n)).astype(f32),
                        kb, np.nextafter(kb, f32(0)), np.nextafter(kb, f32(np.inf))])
    b = np.tile(b, 4)
    specials = f32([np.inf, -np.inf, np.nan, 0.0, -0.0, np.finfo(f32).max, 1e-45])
    a[rng.random(a.size) < 0.02] = rng.choice(specials)
    b[rng.random(b.size) < 0.02] = rng.choice(specials)
    a *= rng.choice(f32([-1, 1]), a.size)
    b *= rng.choice(f32([-1, 1]), b.size)
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    got = k(a, b)
    assert same_bits(got, want), mismatches(got, want, a, b)


def _float64_wide_operands(rng, n):
    """float64 pairs off the fast path's range: quotients of 2^52 to 2^2097 (subnormal
    divisors, dividends near the maximum), random bit patterns, exact multiples of the divisor
    (by up to 2^60, and by powers of two up to 2^2097) and one ulp either side, and specials."""
    m = rng.uniform(1, 2, (6, n))
    b = np.concatenate([m[0] * 2.0 ** rng.integers(-1022, 1024, n),
                        rng.integers(1, 1 << 52, n).view(np.float64),         # subnormal
                        m[1] * 2.0 ** rng.integers(-1022, -900, n)])
    gap = rng.integers(0, 2100, 3 * n).astype(np.float64)
    with np.errstate(over="ignore", under="ignore"):
        a = np.where(gap < 1000, b * 2.0 ** gap, np.nan)
        a = np.where(np.isnan(a), np.finfo(np.float64).max * rng.uniform(0.5, 1, 3 * n), a)
        kb = np.floor(2.0 ** rng.uniform(0, 60, 3 * n)) * b
    # the small divisors times 2^900 up to the largest finite power: the remainder reaches 0
    # in the first step and stays 0 through up to 42 more (a zero's exponent must not grow)
    small = b[n:]
    far = np.ldexp(small, rng.integers(900, 1025 - np.frexp(small)[1], 2 * n))
    bits = rng.integers(0, 1 << 63, 2 * n).view(np.float64)
    a = np.concatenate([a, kb, np.nextafter(kb, 0), np.nextafter(kb, np.inf), far, bits[:n]])
    b = np.concatenate([b, b, b, b, small, bits[n:]])
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, np.finfo(np.float64).max, 5e-324, 1.0])
    a[rng.random(a.size) < 0.01] = rng.choice(specials)
    b[rng.random(b.size) < 0.01] = rng.choice(specials)
    return a * rng.choice([-1.0, 1.0], a.size), b * rng.choice([-1.0, 1.0], b.size)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "row"])
def test_float64_wide_host_path_matches_numpy(layout):
    """The host's exact double fmod for the lanes the fast path leaves (functors.h
    fmod_wide_pack: packs in step, and single elements through fmod_slow), for remainder in
    both conventions, fmod and floor_divide, bit for bit against NumPy and torch, in a dense layout (whole
    packs, a pack of 2 and single tail elements), a strided one (element by element) and a
    broadcast row."""
    rng = np.random.default_rng(21)
    a, b = _float64_wide_operands(rng, 1 << 12)
    a, b = a[: a.size // 64 * 64 - 3], b[: a.size // 64 * 64 - 3]
    if layout == "strided":
        a, b = np.repeat(a, 2)[::2], np.repeat(b, 3)[::3]
        assert a.strides == (16,) and b.strides == (24,)
    elif layout == "row":
        a, b = a[: a.size // 64 * 64].reshape(-1, 64), b[:64]
    with np.errstate(all="ignore"):
        want = {"fmod": np.fmod(a, b), "floor_divide": np.floor_divide(a, b)}
    got = {"fmod": sw.fmod(a, b), "floor_divide": sw.floor_divide(a, b)}
    for convention in ("numpy", "torch"):
        want[convention] = ORACLES[convention](a, b)
        got[convention] = sw.remainder(a, b, convention=convention)
    for k in want:
        assert same_bits(got[k], want[k]), (k, mismatches(got[k], want[k], a, np.broadcast_to(b, a.shape)))


def test_float64_wide_lane_matches_numpy():
    """functors.h fmod_wide_lane (the device's exact double fmod for the lanes its fast path
    leaves: fmod_wide_pack's steps for one lane, with branches) built for the host through a
    user kernel, bit for bit against NumPy's fmod over gaps of every size, subnormals and
    special values."""
    rng = np.random.default_rng(22)
    a, b = _float64_wide_operands(rng, 1 << 14)
    k = sw.ElementwiseKernel("float64 a, float64 b", "float64 y", "y = sw::fmod_wide_lane(a, b);",
                             "fmod_wide_lane_host")
    got = k(a, b)
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    assert same_bits(got, want), mismatches(got, want, a, b)


@pytest.mark.parametrize("ulps", [-2, 0, 2])
def test_int64_device_quotient_steps_argument(ulps):
    """int64_divmod_fast's two quotient steps and its one fix checked as arithmetic with
    Python integers and exactly rounded doubles, with rcp_newton's float reciprocal anywhere
    within its 2 ulp (the host build of the same code, tested above, sees the correctly
    rounded one): step 1's remainder is an int64; the long form's second floor, offset by
    2^-20, is the exact quotient or one more, one more only where the remainder is nonzero
    (an offset of 2^-30 fails below 2^42); below 2^42 the short form's, offset by |1/b| / 2,
    is the exact quotient (an offset of 0 fails). Dividends at -2^63, 2^63 - 1, random, and
    at and one either side of a multiple of b; divisors of every bit length up to 2^63, both
    signs, and zero (taken as 1)."""
    import math
    rng = np.random.default_rng(9)
    wrap = lambda x: (x + 2**63) % 2**64 - 2**63          # noqa: E731 - wrapping int64
    for _ in range(12000):
        bits = int(rng.integers(0, 65))         # 0: a zero divisor; 64: -2^63
        V = 2**63 if bits == 64 else int(rng.integers(1 << (bits - 1), (1 << bits) - 1, endpoint=True)) if bits else 0
        b0 = -V if V == 2**63 or rng.integers(2) else V
        b = b0 or 1
        V = abs(b)
        m = int(rng.integers(-(2**63) // V, 2**63 // V)) * b
        a = [-2**63, 2**63 - 1, int(rng.integers(-2**63, 2**63)), wrap(m + int(rng.integers(-1, 2)))][
            int(rng.integers(4))]
        r = _rcp_newton_model(float(V), ulps)
        inv = math.copysign(r, b)
        q0 = max(min(math.trunc(float(a) * inv), 2**63 - 1), -(2**63))   # the conversion saturates
        r1 = a - q0 * b
        assert -(2**63) <= r1 < 2**63, (a, b, ulps)          # exact in wrapping arithmetic
        q1 = math.floor(_fma(float(r1), inv, 2.0**-20))
        n = (r1 - r1 % b) // b                                # floor(r1 / b), exactly
        if V < 2**42:                           # the short form's floor is n itself
            assert math.floor(_fma(float(r1), inv, 0.5 * r)) == n, (a, b, ulps)
        assert q1 == n or (q1 == n + 1 and r1 % b != 0), (a, b, ulps)
        got, quot = r1 - q1 * b, q0 + q1
        assert -(2**63) <= got < 2**63, (a, b, ulps)
        if got != 0 and (got < 0) != (b < 0):
            got, quot = got + b, quot - 1
        assert got == a % b, (a, b0, ulps)       # a % 1 = 0 for a zero divisor
        assert wrap(quot) == wrap(a // b), (a, b0, ulps)   # -2^63 // -1 wraps, as NumPy's


@pytest.mark.parametrize("convention", ["numpy", "torch"])
def test_every_float16_dividend_by_the_divisors_that_leave_fast_paths(convention):
    """Every float16 bit pattern as the dividend (NaN, inf, subnormals, +-0 included) against
    divisors where quotients are huge or the divisor is special: every 97th subnormal, the
    smallest normals, +-0, +-inf, NaN, 1 and the largest values (the lanes that leave the
    host's fast path)."""
    a = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    sub = np.arange(1, 1024, 97, dtype=np.uint16).view(np.float16)
    special = np.array([6.1035e-05, 1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, -65504.0,
                        3.0, -7.0], np.float16)
    b = np.concatenate([sub, -sub, special])
    got = sw.remainder(a[:, None], b[None, :], convention=convention)
    want = ORACLES[convention](a[:, None], b[None, :])
    assert same_bits(got, want), mismatches(got, want, a[:, None], b[None, :])


@pytest.mark.parametrize("other", ["float16", "float32", "float64"])
def test_every_float16_converts_exactly(other):
    """The host's float16 -> float conversion of a kernel's packs (types.h Widened: F16C's
    8-lane instruction where the host has it, else half_to_float's branch-free form), for all
    65536 bit patterns (subnormals exact, NaN stays NaN), against NumPy's: each half times 1
    of `other` (float16 arithmetic in float, or a half read as float32 or float64), as a
    dense pack, a row of a broadcast, a strided view, a permuted one and a tail of 7."""
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    want = h.astype(np.result_type(h, np.dtype(other)))
    one = np.ones(h.size, other)
    layouts = {
        "dense": (h, one, want),
        "row": (h.reshape(256, 256), one[:256], want.reshape(256, 256)),
        "column": (h.reshape(256, 256), one[:256, None], want.reshape(256, 256)),
        "strided": (np.repeat(h, 2)[::2], one, want),
        "permuted": (h.reshape(256, 256).T, one.reshape(256, 256), want.reshape(256, 256).T),
        "tail": (h[:7], one[:7], want[:7]),
    }
    for name, (x, y, w) in layouts.items():
        got = sw.multiply(x, y)
        assert same_bits(got, w), (name, mismatches(got, w, *np.broadcast_arrays(x, y)))


@pytest.mark.parametrize("convention", ["numpy", "torch"])
def test_every_float16_dividend_by_every_61st_divisor(convention):
    """Every float16 bit pattern against every 61st one (1075 divisors: every exponent,
    subnormals, both signs, inf and NaN), as the host's float16 form runs them: one path for
    every pair, so each of these pairs is a fast-path pair. fmod and floor_divide too (in
    float32, as NumPy computes them, rounded once to float16)."""
    a = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    b = np.arange(0, 1 << 16, 61, dtype=np.uint32).astype(np.uint16).view(np.float16)
    for lo in range(0, b.size, 128):
        x, y = a[:, None], b[None, lo:lo + 128]
        got = sw.remainder(x, y, convention=convention)
        want = ORACLES[convention](x, y)
        assert same_bits(got, want), mismatches(got, want, x, y)
        if convention == "numpy":
            for name in ("fmod", "floor_divide"):
                got = getattr(sw, name)(x, y)
                with np.errstate(all="ignore"):
                    want = getattr(np, name)(x, y)
                assert same_bits(got, want), (name, mismatches(got, want, x, y))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_torch_16bit_floor_divide_of_every_dividend(dtype):
    """torch's CPU floor_divide of 16-bit tensors (bf16_ops.h TorchFloorDivide16: every step
    rounded to the 16-bit type; float16's a pack at a time with F16C, bfloat16's range check
    first) against torch's own: every bit pattern as a dividend, by every 251st pattern and the
    specials, in both signs (NaN as any NaN), into a dense out and element by element."""
    tdt = getattr(torch, dtype)
    a = torch.arange(1 << 16, dtype=torch.int32).to(torch.int16).view(tdt)[:, None]
    picks = np.r_[0:1 << 16:251, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0x7e00, 0x0080, 0x7f7f, 0x7f80, 0x7fc0]
    picks = np.concatenate([picks, picks | 0x8000]).astype(np.uint16)
    for lo in range(0, picks.size, 128):
        b = torch.from_numpy(picks[lo:lo + 128].view(np.int16)).view(tdt)[None, :]
        want = torch.floor_divide(a, b)
        # a dense output (packs of 8), and one of step 2, which runs element by element
        strided = torch.empty((a.shape[0], 2 * b.shape[1]), dtype=tdt)[:, ::2]
        for got in (sw.floor_divide(a, b), sw.floor_divide(a, b, out=strided)):
            assert got.dtype == want.dtype
            nan = torch.isnan(got) & torch.isnan(want)
            bad = (got.view(torch.int16) != want.view(torch.int16)) & ~nan
            assert not bool(bad.any()), (a.expand_as(bad)[bad][:8], b.expand_as(bad)[bad][:8], got[bad][:8], want[bad][:8])


def _every_exponent_gap(dtype, n, rng):
    """Pairs whose exponent gap covers the dtype's whole range (quotients from below 1 to
    2^277, subnormal operands), dividends at multiples of the divisor and one ulp either side,
    and specials, with both signs."""
    f32 = np.float32
    mant = 128 if dtype == "bfloat16" else 1 << 23
    draw = lambda: ((mant + rng.integers(0, mant, n)) / mant * 2.0 ** rng.integers(-150, 128, n))  # noqa: E731
    b = draw().astype(f32)
    with np.errstate(over="ignore"):
        kb = (np.floor(2.0 ** rng.uniform(0, 130, n)) * b.astype(np.float64)).astype(f32)
    a = np.concatenate([draw().astype(f32), kb, np.nextafter(kb, f32(0)), np.nextafter(kb, f32(np.inf))])
    b = np.tile(b, 4)
    specials = f32([np.inf, -np.inf, np.nan, 0.0, -0.0, np.finfo(f32).max, 1e-45, 1e-40])
    a[rng.random(a.size) < 0.02] = rng.choice(specials)
    b[rng.random(b.size) < 0.02] = rng.choice(specials)
    a *= rng.choice(f32([-1, 1]), a.size)
    b *= rng.choice(f32([-1, 1]), b.size)
    return a.astype(NP[dtype]), b.astype(NP[dtype])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_every_exponent_gap_fast_and_stepped_lanes(dtype):
    """float32 and bfloat16 on the host: one double step below quotients of 2^50, six fixed
    steps for the packs with a larger one (the two mixed in most packs here), specials as
    ordinary lanes; remainder in both conventions, fmod and floor_divide (whose quotient comes
    from the same fmod), dense and with a divisor row."""
    a, b = _every_exponent_gap(dtype, 1 << 15, np.random.default_rng(27))
    for x, y in ((a, b), (a.reshape(-1, 64), b[:64])):
        for convention, oracle in ORACLES.items():
            got = sw.remainder(x, y, convention=convention)
            want = oracle(x, y)
            assert same_bits(got, want), (convention, mismatches(got, want, *np.broadcast_arrays(x, y)))
        for name in ("fmod", "floor_divide"):
            got = getattr(sw, name)(x, y)
            with np.errstate(all="ignore"):   # bfloat16: in float32, rounded once
                want = getattr(np, name)(x.astype(np.float32), y.astype(np.float32)).astype(x.dtype)
            assert same_bits(got, want), (name, mismatches(got, want, *np.broadcast_arrays(x, y)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)), min_size=1, max_size=80),
       st.sampled_from(["torch", "numpy"]))
def test_hypothesis_float32_bit_patterns(pairs, convention):
    """Any float32 bit patterns (every exponent gap, subnormals, NaN payloads, infinities),
    through the host's fast and stepped forms, against the oracle; fmod and floor_divide
    against NumPy."""
    bits = np.array(pairs, dtype=np.uint64).astype(np.uint32)
    a, b = bits[:, 0].view(np.float32), bits[:, 1].view(np.float32)
    got = sw.remainder(a, b, convention=convention)
    want = ORACLES[convention](a, b)
    assert same_bits(got, want), mismatches(got, want, a, b)
    for name in ("fmod", "floor_divide"):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a, b)
        got = getattr(sw, name)(a, b)
        assert same_bits(got, want), (name, mismatches(got, want, a, b))


@pytest.mark.parametrize("name", ["fmod", "floor_divide"])
def test_int64_fmod_and_floor_divide_fast_and_slow_packs(name):
    """int64 fmod and floor_divide through the host's division (functors.h int64_divmod: the
    wide form with AVX-512DQ, the 50-bit one and int64_divide_pack past it otherwise) in
    every layout, against NumPy: the int64 edges, random dividends and dividends at and
    beside multiples of divisors of every size (0, -1, INT64_MIN, 2^50 and beyond, 2^62 and
    beyond) mixed in, then only those below 2^50, then only those of 2^50 and beyond."""
    A, B = _int64_operands()
    A2, B2 = _int64_large_divisor_operands()
    A, B = np.concatenate([A, A2[:4000]]), np.concatenate([B, B2[:4000]])
    perm = np.random.default_rng(5).permutation(A.size)
    A, B = A[perm], B[perm]
    ok = np.array([0 < m < 1 << 50 for m in np.abs(B.astype(object))])
    A2, B2 = _int64_multiples_past_50()
    for label, (a, b) in {**{f"fast {k}": v for k, v in _int64_layouts(A[ok], B[ok]).items()},
                          **{f"mixed {k}": v for k, v in _int64_layouts(A, B).items()},
                          **{f"past 2^50 {k}": v for k, v in _int64_layouts(A2[:4800], B2[:4800]).items()}}.items():
        got = getattr(sw, name)(a, b)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a, b)
        assert same_bits(got, want), (label, mismatches(got, want, *np.broadcast_arrays(a, b)))


def _fmod_wide_fast_model(a, b, ulps):
    """functors.h fmod_wide_fast as double arithmetic, m's float reciprocal the correctly
    rounded one (ulps 0) or the float furthest below (-1) or above (1) 1 / m within 1 ulp of
    it, as rcp.approx's may be."""
    import math
    from fractions import Fraction
    A, B = abs(float(a)), abs(float(b))
    if not A < math.inf or not 0 < B < math.inf:
        return float(a) if B == math.inf and A < math.inf else math.nan
    m, e = math.frexp(B)
    m, e = 2 * m, e - 1                                  # B = m 2^e, m in [1, 2)
    x = A * 2.0 ** -e
    rf, exact = np.float32(1) / np.float32(m), 1 / Fraction(m)
    if (ulps > 0 and Fraction(float(rf)) <= exact) or (ulps < 0 and Fraction(float(rf)) >= exact):
        rf = np.nextafter(rf, np.float32(np.inf if ulps > 0 else 0))
    r0 = float(rf)
    u = _fma(r0, _fma(-m, r0, 1.0), r0)
    if A < B:
        return float(a)
    g = math.frexp(x)[1] - 1
    windows = (g * 745) >> 16
    assert windows == g // 88
    x *= 2.0 ** (-88 * windows)
    for i in range(windows, -1, -1):
        for s in (44, 0):   # -q 2^s: q 2^s the multiple of 2^s nearest x u, by 1.5 2^(52 + s)
            big = 1.5 * 2.0 ** (52 + s)
            nq = big - _fma(x, u, big)
            assert abs(x * u) < 2.0 ** (51 + s) and abs(-nq / 2.0 ** s - x / (m * 2.0 ** s)) < 0.76
            x = _fma(nq, m, x)
        if i:
            x *= 2.0 ** 88
    return math.copysign(float(np.float32((x + m if x < 0 else x) * 2.0 ** e)), float(a))


def _wide_operands(rng, n):
    """Float pairs over the whole range: quotients up to 2^277, subnormal and huge divisors,
    dividends at multiples of the divisor and one ulp either side, the divisor times powers
    of two up to 2^276, the maximum, specials."""
    f32 = np.float32
    b = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-149, 128, n)).astype(f32)
    with np.errstate(over="ignore"):
        kb = (np.floor(2.0 ** rng.uniform(0, 90, n)) * b.astype(np.float64)).astype(f32)
    kb = np.where(np.isfinite(kb) & (kb > 0), kb, b)
    # b 2^k (exact where finite): a zero remainder carried through every window
    with np.errstate(over="ignore"):
        pb = (b.astype(np.float64) * 2.0 ** rng.integers(80, 277, n)).astype(f32)
    pb = np.where(np.isfinite(pb), pb, b)
    a = np.concatenate([(rng.uniform(1, 2, n) * 2.0 ** rng.integers(-149, 128, n)).astype(f32),
                        kb, np.nextafter(kb, f32(0)), np.nextafter(kb, f32(np.inf)), pb,
                        np.full(n, np.finfo(f32).max)])
    b = np.tile(b, 6)
    specials = f32([np.inf, -np.inf, np.nan, 0.0, -0.0, np.finfo(f32).max, 1e-45, 2.0 ** -126])
    a[rng.random(a.size) < 0.02] = rng.choice(specials)
    b[rng.random(b.size) < 0.02] = rng.choice(specials)
    a *= rng.choice(f32([-1, 1]), a.size)
    b *= rng.choice(f32([-1, 1]), b.size)
    return a, b


@pytest.mark.parametrize("ulps", [-1, 0, 1])
def test_float_device_fmod_wide_fast_argument(ulps):
    """functors.h fmod_wide_fast (the device's exact path for float lanes) checked as arithmetic
    against np.fmod with the float reciprocal anywhere within rcp.approx's 1 ulp: every
    quotient size up to float's 2^277 in windows of 88 bits, subnormal and huge divisors; each
    step's quotient within 0.76 of x / d, as the argument has it."""
    a, b = _wide_operands(np.random.default_rng(15 + ulps), 800)
    got = np.array([_fmod_wide_fast_model(x, y, ulps) for x, y in zip(a, b)], dtype=np.float32)
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    assert same_bits(got, want), mismatches(got, want, a, b)


def test_fmod_wide_fast_host_build_matches_numpy():
    """fmod_wide_fast built for the host through a user kernel (a correctly rounded
    reciprocal): equal to np.fmod over the whole float range, subnormals, extremes, specials."""
    k = sw.ElementwiseKernel("float32 a, float32 b", "float32 y", "y = sw::fmod_wide_fast(a, b);",
                             name="fmod_wide_fast")
    a, b = _wide_operands(np.random.default_rng(16), 1 << 16)
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    got = k(a, b)
    assert same_bits(got, want), mismatches(got, want, a, b)


# -- floor_divide of floats and int32 division on the host ----------------------------------
# floor_divide's quotient comes from the same exact fmod as remainder's (ops.h
# floor_divide_from_fmod); int32 fmod and floor_divide share remainder's double division
# (functors.h int32_divide_host). All run vectorized across a pack.

def _float64_gaps(n, rng):
    """float64 pairs over the whole exponent range (quotients past 2^52, whose packs take the
    scalar form, mixed with narrow ones in most packs), multiples of the divisor and one ulp
    either side, halfway quotients (k + 1/2) b, and specials, both signs."""
    draw = lambda: (1 + rng.random(n)) * 2.0 ** rng.integers(-1074, 1024, n)   # noqa: E731
    with np.errstate(over="ignore", under="ignore"):
        b = draw()
        narrow = rng.uniform(-1e3, 1e3, n) * b
        kb = np.floor(2.0 ** rng.uniform(0, 60, n)) * b
        half = (np.floor(2.0 ** rng.uniform(0, 50, n)) + 0.5) * b
    a = np.concatenate([draw(), narrow, kb, np.nextafter(kb, 0), np.nextafter(kb, np.inf), half])
    b = np.tile(b, 6)
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, np.finfo(np.float64).max, 5e-324, 1e-310])
    a[rng.random(a.size) < 0.02] = rng.choice(specials)
    b[rng.random(b.size) < 0.02] = rng.choice(specials)
    return a * rng.choice([-1.0, 1.0], a.size), b * rng.choice([-1.0, 1.0], b.size)


def test_float64_fast_and_scalar_packs():
    """float64 floor_divide, fmod and remainder (both conventions) on the host: fmod_fast_any
    (specials as ordinary lanes), and the scalar form for packs with a quotient of 2^52 or
    more; dense, with a divisor row and as an outer product."""
    a, b = _float64_gaps(1 << 14, np.random.default_rng(31))
    for x, y in ((a, b), (a.reshape(-1, 64), b[:64]), (a[:512, None], b[None, :96])):
        for name in ("floor_divide", "fmod"):
            with np.errstate(all="ignore"):
                want = getattr(np, name)(x, y)
            got = getattr(sw, name)(x, y)
            assert same_bits(got, want), (name, mismatches(got, want, *np.broadcast_arrays(x, y)))
        for convention, oracle in ORACLES.items():
            got = sw.remainder(x, y, convention=convention)
            want = oracle(x, y)
            assert same_bits(got, want), (convention, mismatches(got, want, *np.broadcast_arrays(x, y)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1)), min_size=1, max_size=80))
def test_hypothesis_float64_floor_divide_bit_patterns(pairs):
    """Any float64 bit patterns through floor_divide (and the fmod it shares), against NumPy."""
    bits = np.array(pairs, dtype=np.uint64)
    a, b = bits[:, 0].view(np.float64), bits[:, 1].view(np.float64)
    for name in ("floor_divide", "fmod"):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a, b)
        got = getattr(sw, name)(a, b)
        assert same_bits(got, want), (name, mismatches(got, want, a, b))


def test_floor_divide_special_value_grid():
    """Every pair of special values (signed zeros, infinities, NaN, subnormals, extremes,
    halfway and near-integer quotients) in every float dtype, against NumPy."""
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        a, b = grid(dtype)
        got = sw.floor_divide(a, b)
        with np.errstate(all="ignore"):   # bfloat16: in float32, rounded once
            want = (np.floor_divide(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
                    if dtype == "bfloat16" else np.floor_divide(a, b))
        assert same_bits(got, want), (dtype, mismatches(got, want, a, b))


def test_int32_double_division_argument():
    """functors.h int32_divide_host's claim as Python arithmetic (Python's float division is
    IEEE double's, correctly rounded): for every int32 a and d != 0, the rounded quotient
    converts to trunc(a / d), on the pairs closest to an integer from either side (a = k d
    +- 1 for the largest k) and the int32 edges."""
    rng = np.random.default_rng(41)
    lo, hi = -(1 << 31), (1 << 31) - 1
    d = [1, -1, 2, -2, 3, 7, -7, 46341, -46341, 65535, (1 << 30) + 1, hi, lo, lo + 1, hi - 1]
    d += [int(x) * int(s) for x, s in zip(rng.integers(1, 1 << 31, 3000), rng.choice([-1, 1], 3000))]
    for x in d:
        k = hi // abs(x)
        for a in {k * abs(x) - 1, k * abs(x), -(k * abs(x)) + 1, -(k * abs(x)), lo, hi, lo + 1, 0, x - 1}:
            if lo <= a <= hi:
                t = abs(a) // abs(x) * (1 if (a < 0) == (x < 0) else -1)    # trunc(a / x)
                assert int(a / x) == t, (a, x)
                assert lo <= a - t * x <= hi and abs(a - t * x) < abs(x)    # r fits int32


@pytest.mark.parametrize("name", ["remainder", "fmod", "floor_divide"])
def test_int32_division_in_every_layout(name):
    """int32 remainder, fmod and floor_divide (the host's double division, x // 0 = x % 0 = 0,
    MIN // -1 = MIN, MIN % -1 = 0) against NumPy in every host layout, on the int32 edges
    crossed, random pairs over the whole range, small and negative divisors, dividends at and
    beside multiples of the divisor."""
    rng = np.random.default_rng(47)
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    edges = np.array([lo, lo + 1, hi, hi - 1, 0, 1, -1, 2, -2, 3, 46341, -46341, 1 << 30], np.int64)
    n = 6000
    b = np.concatenate([rng.integers(lo, hi, n, endpoint=True), rng.integers(-9, 10, n),
                        -(rng.integers(1, 1 << 31, n) >> rng.integers(0, 31, n))])
    q = rng.integers(lo, hi, b.size) // np.maximum(np.abs(b), 1)
    near = np.clip(q * b + rng.integers(-1, 2, b.size), lo, hi)
    A = np.concatenate([np.repeat(edges, edges.size), rng.integers(lo, hi, b.size, endpoint=True), near])
    B = np.concatenate([np.tile(edges, edges.size), b, b])
    perm = rng.permutation(A.size)
    A, B = A[perm].astype(np.int32), B[perm].astype(np.int32)
    for label, (x, y) in _int64_layouts(A, B).items():
        got = getattr(sw, name)(x, y)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x, y)
        assert got.dtype == np.int32 and same_bits(got, want), (label, mismatches(got, want, *np.broadcast_arrays(x, y)))


def _rounded_quotient_model(x):
    """NumPy's last steps of npy_divmod on a quotient x (mod = 0, b = 1): floor(x), plus 1
    where x - floor(x) > 1/2; a zero keeps its sign."""
    with np.errstate(invalid="ignore"):
        fl = np.floor(x)
        r = np.where(x - fl > 0.5, fl + 1, fl)
    return np.where(x == 0, x, r).astype(x.dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_floor_without_a_rounding_instruction(dtype):
    """ops.h floor_divide_from_fmod's floor (|x| + 2^52 - 2^52 with x's sign, less 1 where
    above x; its own floor from 2^52 up, 2^23 in float) through a user kernel, at the
    boundaries: each side of 2^(p-1) and 2^p, halves, tiny and negative fractions, signed
    zeros, inf and NaN, and random bit patterns, against NumPy's floor."""
    f = np.dtype(dtype).type
    p = 24 if dtype == "float32" else 53
    c = "float" if dtype == "float32" else "double"
    k = sw.ElementwiseKernel(f"{dtype} x", f"{dtype} y", f"y = sw::floor_divide_from_fmod<{c}>(x, 1, 0);",
                             name=f"floor_emulation_{dtype}")
    edges = []
    for e in (p - 2, p - 1, p, p + 1):
        t = f(2.0 ** e)
        edges += [t, np.nextafter(t, f(0)), np.nextafter(t, f(np.inf)), t + f(0.5), t - f(0.5), t - f(1.5)]
    edges += [0.5, 1.5, 2.5, 0.49999997, 0.3, 1e-30, np.finfo(dtype).tiny, np.finfo(dtype).smallest_subnormal,
              np.finfo(dtype).max, 0.0, np.inf, np.nan]
    x = np.array(edges, dtype)
    x = np.concatenate([x, -x])
    bits = np.random.default_rng(53).integers(0, np.iinfo(np.uint64).max, 20000, dtype=np.uint64, endpoint=True)
    x = np.concatenate([x, bits.astype(np.uint32 if dtype == "float32" else np.uint64).view(dtype)])
    got, want = k(x), _rounded_quotient_model(x)
    assert same_bits(got, want), mismatches(got, want, x, x)


@pytest.mark.parametrize("dtype", ["int16", "uint16"])
def test_every_16bit_dividend_by_small_and_sampled_divisors(dtype):
    """Every int16 / uint16 dividend against every divisor of magnitude up to 300 (the largest
    quotients) and every 97th one, through the host's int32 division: remainder, fmod and
    floor_divide as an outer product and flat, against NumPy (values and dtype)."""
    info = np.iinfo(dtype)
    a = np.arange(info.min, info.max + 1).astype(dtype)
    b = np.unique(np.concatenate([np.arange(max(info.min, -300), 301), np.arange(info.min, info.max + 1, 97),
                                  [info.min, info.max]])).astype(dtype)
    for name in ("remainder", "fmod", "floor_divide"):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a[:, None], b[None, :])
        got = getattr(sw, name)(a[:, None], b[None, :])
        assert got.dtype == want.dtype and np.array_equal(got, want), name
        x, y = a[::7].copy(), np.resize(b, a[::7].size)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x, y)
        got = getattr(sw, name)(x, y)
        assert got.dtype == want.dtype and np.array_equal(got, want), name


def _bf16_fmod_table_model(ia, ib, ulps):
    """bf16_fmod.h (the device's bfloat16 fmod by table) as NumPy arithmetic on bfloat16
    magnitude bits ia, ib (uint32, below 0x8000, broadcast): the same integer steps on the
    float bits, the same float32 products, rcp.approx as the correctly rounded reciprocal moved
    `ulps` ulp, and the fma's integer rounding as rint of the exact (float64) product. The table
    is built here from its definition, 2^(8h) mod m (or m where that is 0), halved."""
    f32, u32 = np.float32, np.uint32
    table = np.array([[(pow(2, 8 * h, m) or m) / 2 if m else 0.0 for m in range(256)]
                      for h in range(32)], dtype=f32)
    xa, xb = (ia << u32(16)).astype(u32), (ib << u32(16)).astype(u32)
    A, B = xa.view(f32), xb.view(f32)
    ea = np.maximum(xa & u32(0x7F800000), u32(0x00800000))
    eb = np.maximum(xb & u32(0x7F800000), u32(0x00800000))
    d = ea - eb                                               # wraps, as u32 on the device
    h = ((d >> u32(17)) & u32(0x3E00)) >> u32(9)
    col = (xb - eb + u32(0x00800000)) >> u32(16)
    tk = (table[h, col].view(u32) + (d & u32(0x03800000))).view(f32)
    with np.errstate(all="ignore"):
        x1 = A * (u32(0x7F800000) - ea).view(f32) * tk
        m1 = B * np.maximum((u32(0x7F000000) - eb).view(np.int32), 0x00400000).astype(u32).view(f32)
        u = f32(1) / m1
        for _ in range(abs(ulps)):
            u = np.where(np.isfinite(u) & (u > 0), np.nextafter(u, f32(np.inf if ulps > 0 else 0)), u)
        q = np.rint(x1.astype(np.float64) * u.astype(np.float64))
        r = (x1.astype(np.float64) - q * m1.astype(np.float64)).astype(f32)
        r = np.where(r < 0, r + m1, r)
        keep = (d.view(np.int32) < 0) & (xb <= u32(0x7F800000))
        return np.where(keep, A, r * eb.view(f32))


@pytest.mark.parametrize("ulps", [-1, 0, 1])
def test_bfloat16_device_fmod_table_argument(ulps):
    """bf16_fmod.h's argument (the device's bfloat16 remainder: a table of 2^(8h) mod m and
    a few float steps) as NumPy arithmetic against np.fmod, with the reciprocal 1 ulp either
    way: every bfloat16 dividend magnitude against every 17th divisor magnitude (every 31st
    with the reciprocal moved) and every subnormal, smallest normal, largest, infinite and NaN
    divisor, so every exponent gap from -253 to 253, zeros, infinities and NaNs. (With step 1,
    every pair of magnitudes: 2^30, some minutes.)"""
    f32, u32 = np.float32, np.uint32
    ia = np.arange(0x8000, dtype=u32)[None, :]
    step = 17 if ulps == 0 else 31
    divisors = np.union1d(np.arange(0, 0x8000, step, dtype=u32),
                          np.r_[0:0x100, 0x7F00:0x8000].astype(u32))
    for start in range(0, divisors.size, 256):
        ib = divisors[start:start + 256][:, None]
        got = _bf16_fmod_table_model(ia, ib, ulps)
        with np.errstate(all="ignore"):
            want = np.fmod((ia << u32(16)).view(f32), (ib << u32(16)).view(f32))
        assert same_bits(got, want), mismatches(got, want, (ia << u32(16)).view(f32), (ib << u32(16)).view(f32))


@pytest.mark.parametrize("convention", ["torch", "numpy"])
def test_every_bfloat16_dividend_by_the_divisors_of_the_host_table_path(convention):
    """The host's bfloat16 packs past its double fast path (bf16_fmod_host: quotients of 2^50
    and more) against the NumPy oracle: every bfloat16 dividend by every subnormal divisor,
    the smallest normal ones, the largest, inf, NaN and zeros (both signs), and every 193rd."""
    bits = np.r_[0:0x100, 0x7E00:0x8000, 0:0x8000:193].astype(np.uint16)
    divisors = np.concatenate([bits, bits | np.uint16(0x8000)]).view(NP["bfloat16"])[:, None]
    a = np.arange(65536, dtype=np.uint16).view(NP["bfloat16"])[None, :]
    for start in range(0, divisors.shape[0], 256):
        b = divisors[start:start + 256]
        got = sw.remainder(a, b, convention=convention)
        want = ORACLES[convention](a, b)
        assert same_bits(got, want), mismatches(got, want, *np.broadcast_arrays(a, b))


def _bfloat16_at_exponents(eb, d, n, rng):
    """bfloat16 pairs (a, b) with b's exponent field eb and a's eb + d, random significands
    and signs, dividends at multiples of b and one bfloat16 step either side among them."""
    f32 = np.float32
    sig = lambda: (128 + rng.integers(0, 128, n)) / 128.0   # noqa: E731
    b = sig() * 2.0 ** (eb - 127)
    a = sig() * 2.0 ** (eb + d - 127)
    mult = np.floor(a / b)[: n // 2] * b[: n // 2]          # k b with k < 2^(d + 1): bfloat16 for d < 8
    a[: n // 2] = np.where(np.abs(mult) < np.finfo(f32).max, mult, a[: n // 2])
    a, b = a.astype(f32).astype(NP["bfloat16"]), b.astype(f32).astype(NP["bfloat16"])
    step = rng.choice([-1, 0, 1], n).astype(np.int16)
    a = (a.view(np.uint16).astype(np.int32) + step).clip(0, 0x7f7f).astype(np.uint16).view(NP["bfloat16"])
    sign = lambda: rng.choice([-1.0, 1.0], n).astype(NP["bfloat16"])   # noqa: E731
    return a * sign(), b * sign()


@pytest.mark.parametrize("convention", ["torch", "numpy"])
def test_bfloat16_host_fast_form_at_its_range_edges(convention):
    """The host's bfloat16 fast form (functors.h fmod_short) where bf16_fmod.h bf16_far_host
    lets it run: divisors of exponent 2^-100 and 2^100 (its ends), quotients near 2^39 and
    2^-101, and zero, infinite and NaN operands, in arrays of such pairs alone, so that every
    pack takes the fast form; then one step past each end, the table's; each also as an outer
    product of the same operands (ranges mixed). remainder, fmod and floor_divide against
    NumPy (in float32, rounded once)."""
    rng = np.random.default_rng(39)
    bf = NP["bfloat16"]
    inside = [(eb, d) for eb in (27, 28, 101, 127, 216, 226, 227) for d in (-100, -99, -1, 0, 7, 37, 38)
              if 1 <= eb + d <= 254]   # a normal (exponent field eb + d)
    # past an end: b's exponent, the quotient either way, a subnormal a (field 0)
    outside = [(26, 0), (228, 0), (127, 39), (200, 39), (127, -101), (227, -101), (20, 30), (240, -50),
               (127, 45), (60, 90), (127, -127), (27, -27)]
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -3.0], np.float32).astype(bf)
    for pairs in (inside, outside):
        a, b = (np.concatenate(x) for x in zip(*(_bfloat16_at_exponents(eb, d, 256, rng) for eb, d in pairs)))
        if pairs is inside:   # specials by each other and by in-range divisors stay fast
            x, y = np.meshgrid(specials, np.concatenate([specials, b[:65]]))
            a, b = np.concatenate([a, x.ravel()]), np.concatenate([b, y.ravel()])
        for x, y in ((a, b), (a.reshape(-1, 8)[:, :1], b.reshape(-1, 8)[:1, :])):
            got = sw.remainder(x, y, convention=convention)
            want = ORACLES[convention](x, y)
            assert same_bits(got, want), mismatches(got, want, *np.broadcast_arrays(x, y))
            if convention == "numpy":
                for name in ("fmod", "floor_divide"):
                    got = getattr(sw, name)(x, y)
                    with np.errstate(all="ignore"):
                        want = getattr(np, name)(x.astype(np.float32), y.astype(np.float32)).astype(bf)
                    assert same_bits(got, want), (name, mismatches(got, want, *np.broadcast_arrays(x, y)))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "int8"])
def test_flat_tails_of_every_length_in_place_or_not(dtype):
    """A flat kernel's tail (cpu/loops.h flat_loop): a built-in op takes the last wide pack
    again over elements it already wrote, except where its output is one of its inputs, which
    must then see none of its own results. Every length up to three wide packs and more
    (float16's is 32 elements, int8 add's 64), contiguous, by a scalar and beside a periodic
    row (short_rows), into a new array and in place on either operand, against NumPy."""
    rng = np.random.default_rng(11)
    dt = np.dtype(NP.get(dtype, dtype))
    for n in list(range(1, 140)) + [1023, 4097]:
        if dt.kind == "i":
            a = rng.integers(-100, 100, n).astype(dt)
            b = rng.integers(1, 9, n).astype(dt) * rng.choice(np.array([-1, 1], dt), n)
        else:
            a = (rng.standard_normal(n) * 3e3).astype(dt)
            b = (rng.standard_normal(n) * 7).astype(dt)
        for op in ("remainder", "fmod", "floor_divide", "add"):
            fn, want_fn = getattr(sw, op), getattr(np, op)
            with np.errstate(all="ignore"):
                want = want_fn(a, b)
                want_scalar = want_fn(a, dt.type(5))
                row = b[:6] if n >= 6 else None
                want_rows = want_fn(a[: n // 6 * 6].reshape(-1, 6), row) if row is not None else None
            assert same_bits(fn(a, b), want), (op, n)
            x = a.copy()
            fn(x, b, out=x)
            assert same_bits(x, want), (op, n, "out=a")
            y = b.copy()
            fn(a, y, out=y)
            assert same_bits(y, want), (op, n, "out=b")
            assert same_bits(fn(a, dt.type(5)), want_scalar), (op, n, "scalar")
            if row is not None:
                assert same_bits(fn(a[: n // 6 * 6].reshape(-1, 6), row), want_rows), (op, n, "rows")
