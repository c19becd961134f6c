"""Outer products whose divisor is a column (one value per row: a 3-d outer product's
1xKx1 divisor, Kx1 against 1xK's dividend row), in the shared batches Auto runs them in
(`Rows(share_rows=True)`: one pack column of the dividend row over 4 rows, each row with its
own divisor), and unshared.

Checked on the GPU (marked `gpu`) bit for bit, dtype and strides included, against
torch.remainder on CUDA, np.remainder on the host and the independent fmodf kernel of
test_cuda.py (every 16-bit pair); on the host against oracle.py's formulas of both conventions.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stridewise as sw
from conftest import DTYPES
from oracle import numpy_remainder, random_values, same_bits, special_values, torch_remainder

torch = pytest.importorskip("torch")
from test_cuda import host, reference_kernel, torch_oracle, tt  # noqa: E402,F401 (a fixture)

SHARED = sw.Rows(share_rows=True)
UNSHARED = sw.Rows(share_rows=False)


def _check(a, b, convention="torch"):
    """Shared (Auto's choice here) and unshared against torch (or NumPy): values, dtype, shape
    and strides."""
    e = sw.explain(sw.remainder, a, b, algorithm=SHARED)
    assert e.mode == "rows" and "repeated" in "".join(e.kinds) and "bcast" in e.kinds, e.kinds
    want = torch_oracle(a, b) if convention == "torch" else None
    got = {h: sw.remainder(a, b, algorithm=alg, convention=convention)
           for h, alg in (("shared", SHARED), ("unshared", UNSHARED))}
    for h, g in got.items():
        if convention == "torch":
            assert g.dtype == want.dtype and g.shape == want.shape and g.stride() == want.stride(), h
            assert same_bits(host(g), host(want)), (h, a.dtype, tuple(a.shape), tuple(b.shape))
        else:
            with np.errstate(all="ignore"):
                ref = np.remainder(host(a), host(b))
            assert same_bits(host(g), ref), (h, a.dtype, tuple(a.shape), tuple(b.shape))


# Shapes: slabs of rows not a multiple of the batch's 4 (the last batch short), rows of odd
# length (each peels a head; the batch's rows G apart), several slabs, and 2-d products with
# the column as divisor and as dividend.
SHAPES = [((64, 1, 64), (1, 64, 1)), ((3, 1, 130), (1, 7, 1)), ((2, 1, 1031), (1, 9, 1)),
          ((5, 1, 8195), (1, 5, 1)), ((1, 1, 33), (1, 3, 1)), ((4, 1, 255), (1, 13, 1)),
          ((1, 1031), (301, 1)), ((301, 1), (1, 1030))]


@pytest.mark.parametrize("dtype", DTYPES)
def test_divisor_column_on_the_host(dtype):
    """The host's shared outer products (the dividend row read once per column of rows, a
    divisor per row): every special value against every special value (dividends along the
    row, divisors down the column) in both conventions, unshared too, and random values over a
    3-d product with a short last batch, rows of odd length and a column dividend (NumPy's
    convention); values, dtype and strides. (The host compiles a kernel per case: CI's time.)"""
    rng = np.random.default_rng(36)
    v = special_values(dtype)
    conventions = (("numpy", numpy_remainder), ("torch", torch_remainder))
    cases = [(np.tile(v, 9)[None, :], v[:, None], conventions, (SHARED, UNSHARED))]
    cases += [(random_values(rng, dtype, sa), random_values(rng, dtype, sb), conventions[:1], (SHARED,))
              for sa, sb in (SHAPES[1], SHAPES[2], SHAPES[-1])]
    for a, b, convs, algs in cases:
        assert "repeated" in "".join(sw.explain(sw.remainder, a, b, algorithm=SHARED).kinds)
        for alg in algs:
            for convention, oracle in convs:
                got, want = sw.remainder(a, b, algorithm=alg, convention=convention), oracle(a, b)
                assert got.strides == np.empty_like(want).strides, (dtype, a.shape, b.shape)
                assert same_bits(got, want), (dtype, convention, alg, a.shape, b.shape)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_divisor_column_against_torch(dtype):
    """SHAPES and a misaligned row and column, shared and unshared, in both conventions."""
    rng = np.random.default_rng(35)
    for sa, sb in SHAPES:
        a, b = tt(random_values(rng, dtype, sa)), tt(random_values(rng, dtype, sb))
        _check(a, b)
        _check(a, b, "numpy")
    # a misaligned dividend row and divisor column (views one element in)
    a = tt(random_values(rng, dtype, (3, 1, 1032)))[:, :, 1:]
    b = tt(random_values(rng, dtype, (1, 12, 1)))[:, 1:, :]
    _check(a, b)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_divisor_column_at_the_fast_path_limits(dtype):
    """test_cuda_fastpaths' hard cases with the divisors down a column: each column of the
    dividend row is built for one divisor (quotients at the fast path's limits, exact
    multiples and one ulp either side; full-range integers with 0, -1 and the extremes as
    divisors), and every other divisor meets it too."""
    from test_cuda_fastpaths import _float_cases, _int_cases
    if dtype.startswith("float"):
        a, b = _float_cases(dtype, n=1 << 14, width=256)
    else:
        a, b = _int_cases(dtype, n=1 << 14, width=256)
    row, col = a.reshape(1, 1, -1), b.reshape(1, -1, 1)
    ta, tb = torch.from_numpy(np.ascontiguousarray(row)).cuda(), torch.from_numpy(np.ascontiguousarray(col)).cuda()
    e = sw.explain(sw.remainder, ta, tb, algorithm=SHARED)
    assert e.kinds[1:] == ("repeated", "bcast"), e.kinds
    for alg in (SHARED, UNSHARED):
        got = sw.remainder(ta, tb, algorithm=alg).cpu().numpy()
        with np.errstate(all="ignore"):
            want = np.remainder(row, col)
        if dtype.startswith("float"):
            assert same_bits(got, torch.remainder(ta, tb).cpu().numpy())
            got = sw.remainder(ta, tb, algorithm=alg, convention="numpy").cpu().numpy()
            assert same_bits(got, want)
        else:
            np.testing.assert_array_equal(got, np.where(col == 0, 0, want))


@pytest.mark.gpu
@pytest.mark.parametrize("convention", ["torch", "numpy"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_16bit_pair_with_the_divisors_down_a_shared_batchs_column(dtype, convention, reference_kernel):
    """Every (dividend, divisor) pair: all dividends as the shared row, the divisors down the
    column, a divisor per row of each batch, against test_cuda.py's fmodf kernel (independent
    of stridewise; test_cuda.py runs this layout unshared)."""
    from cuda.core import LaunchConfig, launch
    dev, kernel = reference_kernel
    stream = dev.create_stream(torch.cuda.current_stream())
    tdt = getattr(torch, dtype)
    bits = torch.arange(-32768, 32768, dtype=torch.int32, device="cuda").to(torch.int16)
    row = bits.view(tdt)[None, :]
    chunk = 4096
    out = torch.empty((chunk, 65536), dtype=tdt, device="cuda")
    ref = torch.empty((chunk, 65536), dtype=torch.int16, device="cuda")
    n = chunk * 65536
    cfg = LaunchConfig(grid=n // 256, block=256)
    bad = torch.zeros((), dtype=torch.int64, device="cuda")
    for start in range(0, 65536, chunk):
        col = bits[start:start + chunk].view(tdt)[:, None]
        sw.remainder(row, col, out=out, convention=convention, algorithm=SHARED)
        launch(stream, cfg, kernel, row.data_ptr(), col.data_ptr(), ref.data_ptr(), np.int64(65536), np.int64(n),
               np.int32(dtype == "bfloat16"), np.int32(convention == "numpy"), np.int32(0))
        nan = torch.isnan(out) & torch.isnan(ref.view(tdt))
        bad += ((out.view(torch.int16) != ref) & ~nan).sum()
    e = sw.explain(sw.remainder, row, col, out=out, algorithm=SHARED)
    assert e.mode == "rows" and e.kinds[1:] == ("repeated", "bcast")
    assert int(bad) == 0


@st.composite
def _outer_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    slabs, height = draw(st.integers(1, 4)), draw(st.integers(1, 11))
    length = draw(st.sampled_from([1, 7, 8, 31, 64, 129, 257, 1030]))
    head = draw(st.integers(0, 3))   # the row starts this many elements into its allocation
    seed = draw(st.integers(0, 2**16))
    return dtype, slabs, height, length, head, seed


@pytest.mark.gpu
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(_outer_case())
def test_divisor_column_hypothesis(case):
    dtype, slabs, height, length, head, seed = case
    rng = np.random.default_rng(seed)
    a = tt(random_values(rng, dtype, (slabs, 1, length + head)))[:, :, head:]
    b = tt(random_values(rng, dtype, (1, height + head, 1)))[:, head:, :]
    kinds = sw.explain(sw.remainder, a, b, algorithm=SHARED).kinds
    if "repeated" not in "".join(kinds) or "bcast" not in kinds:
        return   # one element along a dim merges it away: no longer an outer product
    _check(a, b)
