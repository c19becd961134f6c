"""8-, 16-bit and unsigned integers and bool through every built-in op and user kernels.

Integer remainder, fmod and floor_divide follow NumPy's formula at every width: x % 0, x // 0
and fmod(x, 0) are 0, MIN % -1 is 0, MIN // -1 wraps to MIN, unsigned types have no sign
fix-up. The small dtypes are checked on every pair of values (all 2^16 pairs of int8 and
uint8 here; int16 and uint16 on all 2^32 pairs on the GPU, a strided subsample here), through
both a flat kernel and an outer product (the kernels whose divisor is prepared once per row).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stridewise as sw

torch = pytest.importorskip("torch")

NEW_INTS = ("int8", "int16", "uint8", "uint16", "uint32", "uint64")
DIVISION = ("remainder", "floor_divide", "fmod")


def formula(op: str, a: np.ndarray, b: np.ndarray, dtype) -> np.ndarray:
    """NumPy's integer division ops written out in wide (Python-int exact) arithmetic: floor
    division and its remainder, or C's truncated fmod; a zero divisor gives 0; the quotient
    wraps to the dtype (MIN // -1 is MIN)."""
    dtype = np.dtype(dtype)
    wide = object if dtype.itemsize == 8 else np.int64    # Python ints where int64 may overflow
    a, b = np.broadcast_arrays(a.astype(wide), b.astype(wide))
    safe = np.where(b == 0, 1, b)
    q = a // safe                                   # floor division
    if op == "floor_divide":
        r = q
    elif op == "remainder":
        r = a - q * safe
    else:                                           # fmod: the dividend's sign
        mag = abs(a) % abs(safe)
        r = np.where(a < 0, -mag, mag)
    r = np.where(b == 0, 0, r)
    bits = 8 * dtype.itemsize
    top = 1 << bits
    wrapped = r % top if dtype.kind == "u" else (r + top // 2) % top - top // 2
    return np.asarray(wrapped).astype(dtype)


def every_value(name):
    info = np.iinfo(name)
    return np.arange(info.min, info.max + 1, dtype=np.int64).astype(name)


def divisor_sample(name, step):
    """Every `step`-th value with the edges the formula distinguishes."""
    info = np.iinfo(name)
    edges = [info.min, info.min + 1, -2, -1, 0, 1, 2, info.max - 1, info.max]
    vals = np.arange(info.min, info.max + 1, step, dtype=np.int64)
    return np.unique(np.concatenate([vals, [e for e in edges if info.min <= e <= info.max]])).astype(name)


def run_pairs(op, a, b):
    """The op over all pairs, as an outer product (a[:, None], b[None, :]) and flat."""
    fn = getattr(sw, op)
    outer = fn(a[:, None], b[None, :])
    aa, bb = np.broadcast_arrays(a[:, None], b[None, :])
    flat = fn(aa.ravel().copy(), bb.ravel().copy()).reshape(outer.shape)
    return outer, flat


@pytest.mark.parametrize("name", ["int8", "uint8"])
@pytest.mark.parametrize("op", DIVISION)
def test_every_8bit_pair_matches_numpys_formula(op, name):
    a = b = every_value(name)
    want = formula(op, a[:, None], b[None, :], name)
    with np.errstate(all="ignore"):
        assert np.array_equal(getattr(np, op)(a[:, None], b[None, :]), want)   # the oracle is NumPy's
    for got in run_pairs(op, a, b):
        assert got.dtype == np.dtype(name)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("op", DIVISION)
def test_pairs_element_by_element(op, name):
    """Every 8-bit pair (an int16 subsample), zero divisors included, through the element
    paths: rows of 15, shorter than a pack, by a strided divisor (the rows loop's tail) and the
    same by General(), against NumPy's formula. The int32 division there once chained each
    element to the one before (docs/decisions.md); its zero divisor is formed from bits."""
    v = every_value(name)
    if v.size > 256:
        v = v[::257]
    a, b = np.repeat(v, v.size), np.tile(v, v.size)
    pad = -a.size % 15
    a, b = np.concatenate([a, a[:pad]]), np.concatenate([b, b[:pad]])
    rows = np.empty((a.size // 15, 30), dtype=b.dtype)
    rows[:, ::2] = b.reshape(-1, 15)
    A, B = a.reshape(-1, 15), rows[:, ::2]
    want = formula(op, A, B, name)
    for alg in (sw.Rows(), sw.General()):
        got = getattr(sw, op)(A, B, algorithm=alg)
        assert got.dtype == np.dtype(name)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["int16", "uint16"])
@pytest.mark.parametrize("op", DIVISION)
def test_16bit_pairs_subsample_match_numpys_formula(op, name):
    """Every dividend against every 251st divisor and the edges (the full square runs on the GPU)."""
    a, b = every_value(name), divisor_sample(name, 251)
    want = formula(op, a[:, None], b[None, :], name)
    got = getattr(sw, op)(a[:, None], b[None, :])
    assert got.dtype == np.dtype(name)
    np.testing.assert_array_equal(got, want)
    fa, fb = a[::97].copy(), np.resize(b, a[::97].shape)
    np.testing.assert_array_equal(getattr(sw, op)(fa, fb), formula(op, fa, fb, name))


@pytest.mark.parametrize("name", ["uint32", "uint64"])
@pytest.mark.parametrize("op", DIVISION)
def test_wide_ints_edges_and_random(op, name):
    info = np.iinfo(name)
    rng = np.random.default_rng(7)
    edges = np.array(sorted({info.min, info.min + 1, 0, 1, 2, 3, 7, info.max - 1, info.max}
                            | ({-1, -2, -7} if info.min < 0 else set())), dtype=name)
    rand = rng.integers(info.min, info.max, 400, dtype=name, endpoint=True)
    small = rng.integers(max(info.min, -300), 300, 400).astype(name)
    a = np.concatenate([edges, rand, small])
    b = np.concatenate([edges, small, rand])
    np.testing.assert_array_equal(getattr(sw, op)(a[:, None], b[None, :]),
                                  formula(op, a[:, None], b[None, :], name))


@pytest.mark.parametrize("name", ["int8", "int16", "uint8"])
@pytest.mark.parametrize("op", DIVISION)
def test_torch_small_ints_match_torch_where_it_defines_them(op, name):
    """torch raises on an integer zero divisor; elsewhere it agrees bit for bit (MIN // -1 and
    MIN % -1 included), with torch tensors in and out."""
    a = torch.from_numpy(every_value(name))
    b = torch.from_numpy(divisor_sample(name, 1 if name != "int16" else 251))
    b = b[b != 0]
    got = getattr(sw, op)(a[:, None], b[None, :])
    want = getattr(torch, op)(a[:, None], b[None, :])
    assert got.dtype == want.dtype
    assert torch.equal(got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["int16", "uint16"])
@pytest.mark.parametrize("op", DIVISION)
def test_every_16bit_pair_on_the_gpu(op, name):
    """All 2^32 pairs of int16 and uint16 on CUDA, against NumPy's formula computed on the GPU
    in int32 (exact for 16-bit operands), in blocks of 4096 dividends."""
    dev = "cuda"
    dt = getattr(torch, name)
    info = np.iinfo(name)
    b = torch.arange(info.min, info.max + 1, device=dev, dtype=torch.int32)
    safe = torch.where(b == 0, torch.ones_like(b), b)
    for lo in range(info.min, info.max + 1, 4096):
        a = torch.arange(lo, lo + 4096, device=dev, dtype=torch.int32)[:, None]
        q = torch.div(a, safe, rounding_mode="floor")
        want = {"floor_divide": q, "remainder": a - q * safe,
                "fmod": torch.fmod(a, safe)}[op]
        want = torch.where(b == 0, torch.zeros_like(want), want)
        want = (want & 0xFFFF).to(torch.int32)
        got = getattr(sw, op)(a.to(dt), b.to(dt)[None, :])
        assert got.dtype == dt
        assert torch.equal(got.to(torch.int32) & 0xFFFF, want), (op, name, lo)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["int8", "uint8"])
@pytest.mark.parametrize("op", DIVISION)
def test_every_8bit_pair_on_the_gpu(op, name):
    a = b = every_value(name)
    want = formula(op, a[:, None], b[None, :], name)
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    got = getattr(sw, op)(ta[:, None], tb[None, :])
    np.testing.assert_array_equal(got.cpu().numpy(), want)
    flat = getattr(sw, op)(*(x.contiguous().ravel() for x in torch.broadcast_tensors(ta[:, None], tb[None, :])))
    np.testing.assert_array_equal(flat.cpu().numpy().reshape(want.shape), want)


# -- every existing op in the new dtypes, against NumPy and torch ----------------------------

def int_values(name, rng, n=1031):
    info = np.iinfo(name)
    x = rng.integers(info.min, info.max, n, dtype=name, endpoint=True)
    edges = [info.min, info.max, 0, 1]
    x[:4] = edges[:n]
    return x


ARITH = ("add", "subtract", "multiply", "maximum", "minimum", "fmod", "floor_divide")


@pytest.mark.parametrize("name", ["int16", "uint8", "uint32", "uint64"])
@pytest.mark.parametrize("op", ARITH[:5])
def test_binary_ops_match_numpy(op, name):
    rng = np.random.default_rng(1)
    a, b = int_values(name, rng), int_values(name, rng)
    got = getattr(sw, op)(a, b)
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", NEW_INTS)
@pytest.mark.parametrize("op", ["abs", "negative"])
def test_unary_ops_match_numpy(op, name):
    a = int_values(name, np.random.default_rng(2))
    with np.errstate(all="ignore"):
        want = getattr(np, {"abs": "absolute"}.get(op, op))(a)
    got = getattr(sw, op)(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["int8", "uint8"])
@pytest.mark.parametrize("op", ["add", "multiply", "maximum", "abs", "negative", "relu", "pow"])
def test_ops_match_torch(op, name):
    rng = np.random.default_rng(3)
    a = torch.from_numpy(int_values(name, rng))
    b = torch.from_numpy(rng.integers(0, 5, a.shape[0]).astype(name)) if op == "pow" \
        else torch.from_numpy(int_values(name, rng))
    fn = {"subtract": torch.sub, "multiply": torch.mul, "negative": torch.neg}.get(op, getattr(torch, op, None))
    args = (a,) if op in ("abs", "negative", "relu") else (a, b)
    got, want = getattr(sw, op)(*args), fn(*args)
    assert got.dtype == want.dtype
    assert torch.equal(got, want)


@pytest.mark.parametrize("name", ["int8", "uint16", "uint64"])
def test_pow_fma_where_cast(name):
    rng = np.random.default_rng(4)
    a = int_values(name, rng)
    e = rng.integers(0, 9, a.shape[0]).astype(name)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(sw.pow(a, e), np.power(a, e))
        want = (a.astype(np.uint64) * e.astype(np.uint64) + a.astype(np.uint64)).astype(name)
    np.testing.assert_array_equal(sw.fma(a, e, a), want)
    c = a % 2 == 0
    np.testing.assert_array_equal(sw.where(c, a, e), np.where(c, a, e))
    for dst in ("float64", "bool", "int8", "uint32"):
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(sw.cast(a, dst), a.astype(dst))


@pytest.mark.parametrize("name", ["int8", "int16", "uint32"])
@pytest.mark.parametrize("op", ["divide", "sqrt"])
def test_float_ops_take_the_librarys_float(op, name):
    """NumPy: int8 and uint8 sqrt compute in float16 (its loop), divide in float64; torch in float32."""
    a = np.arange(1, 100).astype(name)
    args = (a, a[::-1].copy()) if op == "divide" else (a,)
    want = getattr(np, op)(*args)
    got = getattr(sw, op)(*args)
    assert got.dtype == want.dtype
    assert np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-3)
    targs = tuple(torch.from_numpy(x) for x in args)
    if name in ("int8", "int16", "uint8"):
        assert getattr(sw, op)(*targs).dtype == getattr(torch, op)(*targs).dtype == torch.float32


def test_bool_ops_follow_each_library():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    for op in ("add", "multiply", "maximum", "minimum"):
        want = getattr(np, op)(a, b)
        got = getattr(sw, op)(a, b)
        assert got.dtype == np.bool_ and np.array_equal(got, want), op
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        tgot = getattr(sw, op)(ta, tb)
        assert tgot.dtype == torch.bool and torch.equal(tgot, getattr(torch, op if op != "multiply" else "mul")(ta, tb))
    # NumPy computes bool remainder in its int8 loop; torch defines none
    assert sw.remainder(a, b).dtype == np.remainder(a, b).dtype == np.int8
    with pytest.raises(TypeError, match="bool"):
        sw.remainder(torch.from_numpy(a), torch.from_numpy(b))
    with pytest.raises(TypeError):
        sw.subtract(a, b)
    np.testing.assert_array_equal(sw.where(a, b, a), np.where(a, b, a))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["int8", "uint16"]), st.sampled_from(["add", "remainder"]),
       st.integers(1, 40), st.integers(1, 40), st.integers(1, 3), st.booleans(), st.data())
def test_strided_layouts(name, op, m, n, step, transpose, data):
    """Shapes, strides and transposes, so every kernel mode sees the narrow dtypes (packs of 16
    int8 or 8 int16 values where the layout allows)."""
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    a = int_values(name, rng, m * n * step * 2).reshape(m * 2, n * step)[::2, ::step]
    b = int_values(name, rng, m * n).reshape(n, m).T if transpose else int_values(name, rng, n)
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a, b)
    np.testing.assert_array_equal(getattr(sw, op)(a, b), want)


@pytest.mark.parametrize("name", NEW_INTS)
def test_packs_of_16_bytes(name):
    """A contiguous 1- or 2-byte operand moves in 16-byte packs: 16 int8 values a pack."""
    a = np.ones(4096, name)
    e = sw.explain(sw.remainder, a, a)
    assert e.mode == "contiguous" and e.algorithm.pack * np.dtype(name).itemsize == 16


@pytest.mark.parametrize("spelling,name", [("int8", "int8"), ("uint16", "uint16"), ("uint64", "uint64"),
                                           ("unsigned char", "uint8"), ("int16_t", "int16")])
def test_user_kernels_take_the_new_dtypes(spelling, name):
    rng = np.random.default_rng(5)
    x = int_values(name, rng)
    k = sw.ElementwiseKernel(f"{spelling} x, T y", "T z", "z = x * 3 + y", name="lin")
    y = int_values(name, rng)
    got = k(x, y)
    with np.errstate(all="ignore"):
        want = (x.astype(np.uint64) * 3 + y.astype(np.uint64)).astype(name)
    assert got.dtype == np.dtype(name)
    np.testing.assert_array_equal(got, want)
    # a placeholder bound by such an array, and a Python scalar in its type
    k2 = sw.ElementwiseKernel("T x, T s", "T z", "z = x + s", name="plus")
    np.testing.assert_array_equal(k2(x, 1), (x.astype(np.uint64) + 1).astype(name))
