"""On the GPU: allocated outputs take torch's (CUDA) and CuPy's own strides, and misaligned
or odd-length views keep full packs in every mode, bit for bit against torch on CUDA."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import stridewise as sw
from stridewise import algorithms
from test_layout import make_torch, operand_pair

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


def _values(shape, dtype, seed, divisor=False):
    g = torch.Generator(device="cuda").manual_seed(seed)
    if dtype.is_floating_point:
        v = (torch.rand(shape, generator=g, device="cuda") * 100 - 50).to(dtype)
        return torch.where(v.abs() < 0.5, torch.full_like(v, 3), v) if divisor else v
    lo, hi = {torch.int8: (-127, 128), torch.uint8: (0, 256)}.get(dtype, (-1000, 1000))
    v = torch.randint(lo, hi, shape, generator=g, device="cuda", dtype=dtype)
    return torch.where(v == 0, torch.full_like(v, 7), v) if divisor else v


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape and got.stride() == want.stride()
    ints = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[got.element_size()]
    assert torch.equal(got.contiguous().view(ints), want.contiguous().view(ints))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operand_pair(negative=False))
def test_torch_cuda_strides_match(case):
    shape, how, s2, how2 = case
    a = make_torch(shape, how, torch.float32, "cuda")
    b = make_torch(s2, how2, torch.float32, "cuda")
    _same(sw.remainder(a, b), torch.remainder(a, b))


def test_torch_cuda_channels_last_and_transposed():
    x = _values((4, 32, 9, 7), torch.float16, 1).contiguous(memory_format=torch.channels_last)
    bias = _values((1, 32, 1, 1), torch.float16, 2, divisor=True)
    _same(sw.remainder(x, bias), torch.remainder(x, bias))
    m = _values((300, 200), torch.float32, 3)
    d = _values((300, 200), torch.float32, 4, divisor=True)
    _same(sw.remainder(m.t(), d.t()), torch.remainder(m.t(), d.t()))


def test_short_rows_and_empty_tiles_take_autos_mode_and_match_torch():
    """The layouts that leave `rows` and `tiled` on the GPU (test_resolve.cliff_layouts),
    with values (none zero, so either can divide), in the mode Auto picks: torch's values
    and strides."""
    from test_resolve import cliff_layouts
    seeds = iter(range(100, 200))
    for dtype, a, b, want in cliff_layouts(torch, lambda s, dt: _values(s, dt, next(seeds), divisor=True)):
        assert sw.explain(sw.remainder, a, b).mode == want, (dtype, a.stride(), b.stride())
        _same(sw.remainder(a, b), torch.remainder(a, b))


def test_cupy_strides_are_cupys():
    cupy = pytest.importorskip("cupy")
    a = cupy.asfortranarray(cupy.arange(1, 61, dtype=cupy.float32).reshape(6, 10))
    for x, y in [(a, a), (a.T, a.T), (a[::-1], a), (a, 3.0)]:
        got, want = sw.remainder(x, y), cupy.remainder(x, y)
        assert got.strides == want.strides
        assert bool((got == want).all())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operand_pair(negative=False))
def test_torch_cuda_strides_of_comparisons_casts_and_scalar_overloads(case):
    """The departures from TensorIterator's rule over every operand, on CUDA: comparisons,
    .to() (empty_like), clamp with number bounds and pow with a number either side."""
    shape, how, s2, how2 = case
    a = make_torch(shape, how, torch.float32, "cuda")
    b = make_torch(s2, how2, torch.float32, "cuda")
    for got, want in [(sw.less(a, b), torch.lt(a, b)), (sw.cast(a, torch.float16), a.to(torch.float16)),
                      (sw.clip(a, 2.0, 5.0), torch.clamp(a, 2.0, 5.0)), (sw.pow(a, 2.0), torch.pow(a, 2.0)),
                      (sw.pow(2.0, a), torch.pow(2.0, a))]:
        _same(got, want)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operand_pair(negative=True))
def test_cupy_astype_strides_are_cupys(case):
    """CuPy's astype keeps the input's order (order='K'); its ufuncs allocate C-contiguous."""
    cupy = pytest.importorskip("cupy")
    shape, (perm, steps, flips, bcast), _, _ = case
    own = [1 if bc else n for n, bc in zip(shape, bcast)]
    big = [own[d] * steps[d] for d in perm]
    x = (cupy.arange(int(np.prod(big))).reshape(big) % 7 + 1).astype(cupy.float32)
    x = x.transpose(np.argsort(perm).tolist())
    x = x[tuple(slice(None, None, -s if f else s) for s, f in zip(steps, flips))]
    x = cupy.broadcast_to(x, shape) if any(bcast) else x
    got, want = sw.cast(x, "float16"), x.astype(cupy.float16)
    assert got.strides == want.strides, (x.shape, x.strides)
    assert bool((got == want).all())


DT = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32, torch.int64]
# 1-byte elements shift by any byte within a word (pack.h load_shifted)
BYTES = [torch.int8, torch.uint8]


@pytest.mark.parametrize("dtype", DT + BYTES, ids=str)
def test_every_mode_every_offset_cuda(dtype):
    """Offsets 1..pack-1 and odd row lengths in contiguous, scalar, rows (shared or not),
    short_rows, tiled and general, against torch on CUDA; full packs where the plan says."""
    isz = torch.empty((), dtype=dtype).element_size()
    pack = 16 // isz
    r, c = 37, 16 * 8 + 5
    big = _values((r + pack, c + pack), dtype, 5)
    div = _values((c + pack,), dtype, 6, divisor=True)
    flat = _values((4099 + pack,), dtype, 7)
    fdiv = _values((4099 + pack,), dtype, 8, divisor=True)
    tdiv = _values((c + pack, r + pack), dtype, 9, divisor=True)
    for off in range(0, pack):
        cases = [
            ((flat[off:off + 4099], fdiv[:4099]), algorithms.Contiguous(), True),
            ((flat[off:off + 4099], fdiv[3]), algorithms.Scalar(), True),
            ((big[off:off + r, off:off + c], div[off:off + c]), algorithms.Rows(), True),
            ((big[off:off + r, off:off + c], div[off:off + c]), algorithms.Rows(share_rows=True), True),
            ((big[off:off + r, :1], div[off:off + c]), algorithms.Rows(share_rows=True), True),
            ((flat[off:off + 6 * 600].view(600, 6), fdiv[off:off + 6]), algorithms.ShortRows(), True),
            ((big[off:off + r, off:off + c], tdiv[off:off + c, :r].t()), algorithms.Tiled(), False),
            ((big[off:off + r, off:off + c], tdiv[off:off + c, :r].t()), algorithms.General(), False),
        ]
        for args, alg, full in cases:
            e = sw.explain(sw.remainder, *args, algorithm=alg)
            if full:
                assert e.pack == pack, (off, alg, e.kinds)
            # divisors are never 0: torch's own result is the oracle, strides included
            _same(sw.remainder(*args, algorithm=alg), torch.remainder(*args))
    # in place on a misaligned view: output and input misaligned alike
    x = flat.clone()[1:1 + 4096]
    want = torch.remainder(x, fdiv[:4096])
    sw.remainder_(x, fdiv[:4096])
    _same(x, want)


def test_misaligned_gpu_shapes_of_the_issue():
    """a[1:, 1:] of an (8193, 16385) half array with a row divisor, and (8191, 16381) rows."""
    for dtype in (torch.float16, torch.bfloat16, torch.int32):
        a = _values((8193, 16385), dtype, 10)[1:, 1:]
        d = _values((16385,), dtype, 11, divisor=True)[1:]
        assert sw.explain(sw.remainder, a, d).pack == 16 // a.element_size()
        _same(sw.remainder(a, d), torch.remainder(a, d))
        a = _values((8191, 16381), dtype, 12)
        d = _values((16381,), dtype, 13, divisor=True)
        _same(sw.remainder(a, d), torch.remainder(a, d))


@pytest.mark.parametrize("convention", ["torch", "numpy"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32", "int64"])
def test_broadcast_divisor_is_prepared_exactly(dtype, convention):
    """A divisor broadcast along the rows (a column; a 3-d outer product's, with the dividend
    a shared row), prepared once per pack in float16, and in bfloat16 beside a shared row
    (two lanes per instruction), and read as it is elsewhere: every pair of special values,
    bit for bit, in rows and in rows sharing its dividend row."""
    from oracle import special_values
    from test_cuda import check, tt

    v = special_values(dtype)
    n = v.size
    # every pair, in rows of at least 512 bytes (shorter ones run `general` on the GPU)
    reps = -(-512 // (n * v.itemsize))
    rows = np.ascontiguousarray(np.broadcast_to(np.tile(v, reps)[None, :], (n, n * reps)))
    assert check(tt(rows), tt(v[:, None].copy()), convention) == "rows"
    shared = np.ascontiguousarray(np.broadcast_to(v, (4, 1, n)))
    assert check(tt(shared), tt(v.reshape(1, n, 1).copy()), convention) == "rows"
    src = sw.explain(sw.remainder, tt(shared), tt(v.reshape(1, n, 1).copy())).source
    # two lanes: float16, and bfloat16 beside a shared row (codegen/source.py _prepared)
    kinds = sw.explain(sw.remainder, tt(shared), tt(v.reshape(1, n, 1).copy())).kinds
    pairs = dtype == "float16" or dtype == "bfloat16" and any(k.startswith("repeated") for k in kinds)
    assert ("in.d2_2 = sw::Fast2" in src) == pairs, kinds


@pytest.mark.parametrize("dtype", DT + BYTES, ids=str)
def test_shared_rows_that_peel_apart_cuda(dtype):
    """Rows(share_rows=True) with the repeated row off the output's packs: a misaligned row
    beside aligned output rows (spacing 1), and output rows of every length mod the pack (a
    shared batch's rows P / gcd apart, kernels.cuh rows_kernel G), over heights that leave the
    slab's last sets short or empty, in 2-d and 3-d, as outer products too; against torch on
    CUDA, strides included, and the row read once per column of rows (repeated_shifted)."""
    pack = 16 // torch.empty((), dtype=dtype).element_size()
    div = _values((10 * pack + 64,), dtype, 21, divisor=True)
    for c in (8 * pack, 8 * pack + 1, 8 * pack + pack // 2, 8 * pack + pack - 1, 3):
        for off in sorted({0, 1, pack - 1}):
            d = div[off:off + c]
            for h in (1, 3, 4 * pack - 1, 4 * pack + 1, 9 * pack + 5):
                a = _values((h + 1, c + 1), dtype, 22 + h)[1:, 1:]
                fresh = _values((2, h, c), dtype, 23 + h)
                col = _values((h, 1), dtype, 24 + h, divisor=True)
                for x, y in ((a, d), (fresh, d), (col, d), (fresh[:, :, :1], d)):
                    alg = algorithms.Rows(share_rows=True)
                    e = sw.explain(sw.remainder, x, y, algorithm=alg)
                    if h > 1 and c >= pack and (off or c % pack):   # one row: no row vector
                        assert e.kinds[-1] == "repeated_shifted" and e.pack == pack, (c, off, e.kinds)
                    _same(sw.remainder(x, y, algorithm=alg), torch.remainder(x, y))


def _device_view(x, to_device, strided):
    """The view `x` of its NumPy buffer, over a copy of that buffer on the device."""
    base = x
    while base.base is not None:
        base = base.base
    offset = (x.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // 8
    return strided(to_device(np.ascontiguousarray(base).ravel()), x.shape,
                   [st // 8 for st in x.strides], offset)


def test_more_dims_than_a_kernel_holds_on_cuda():
    """A 10-dim layout no merge brings to 8 (test_layout.py's): torch's CUDA values and strides,
    and CuPy's, through the split along the outermost dim."""
    from test_layout import _unmergeable
    rng = np.random.default_rng(5)
    a = _unmergeable((2, 3, 2, 2, 3, 2, 2, 3, 2, 2), rng.permutation(10), 1)
    b = _unmergeable(a.shape[1:], rng.permutation(9), 1)
    on_torch = lambda x: _device_view(x, lambda v: torch.from_numpy(v).cuda(),
                                      lambda buf, sh, st, off: buf.as_strided(sh, st, off))
    ta, tb = on_torch(a), on_torch(b)
    assert torch.equal(ta.cpu(), torch.from_numpy(a))
    _same(sw.remainder(ta, tb), torch.remainder(ta, tb))
    cp = pytest.importorskip("cupy")
    on_cupy = lambda x: _device_view(
        x, cp.asarray, lambda buf, sh, st, off: cp.lib.stride_tricks.as_strided(
            buf[off:], sh, [v * 8 for v in st]))
    ca, cb = on_cupy(a), on_cupy(b)
    assert ca.strides == a.strides
    got, want = sw.remainder(ca, cb), cp.remainder(ca, cb)
    assert got.strides == want.strides and bool((got == want).all())
