"""The device's branch-free fast paths (functors.h `fast`) where they are most fragile.

float32 and float64 remainder take their quotient from a reciprocal (float64's refined by a
Newton step); int32 remainder is branch-free; int64 remainder takes two double quotient
steps. Each is exact by an argument in functors.h; these cases sit where the arguments are
tight: quotients at and around the fast-path limits, dividends at exact multiples of the
divisor and one ulp either side, divisors at the range limits and subnormal, and full-range
integer operands with zero, -1 and the extremes as divisors; each once per element and
once as a row of divisors that share_rows prepares once per batch. Oracles: torch.remainder
on CUDA and np.remainder on the host.
"""
import re

import numpy as np
import pytest

import stridewise as sw
from oracle import same_bits

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


def _float_cases(dtype, n=1 << 16, seed=0, width=None):
    """(a, b) of n pairs; with `width`, b is one row of `width` divisors and a holds the
    n // width rows of dividends against it."""
    rng = np.random.default_rng(seed)
    f = np.dtype(dtype)
    info = np.finfo(f)
    w = width or n
    lo_exp, hi_exp = (-140, 120) if f == np.float32 else (-1060, 1000)
    b = (rng.uniform(1, 2, w) * np.exp2(rng.integers(lo_exp, hi_exp, w))).astype(f)
    b[: w // 16] = np.exp2(rng.integers(-101, -99, w // 16)).astype(f)       # the 2^-100 edge
    b[w // 16: w // 8] = np.exp2(rng.integers(99, 101, w // 16)).astype(f)   # the 2^100 edge
    b[w // 8: w // 8 + 64] = info.smallest_subnormal * rng.integers(1, 1000, 64)
    b *= rng.choice(np.array([-1, 1], f), w)
    # quotients up to 2^24 (float) and 2^53 (double), most of them small, and a quarter within
    # a factor of two of the fast path's limit (2^20 float, 2^40 double)
    bits, limit = (53, 40) if f == np.float64 else (24, 20)
    k = np.floor(np.exp2(rng.uniform(0, bits, n))).astype(np.float64)
    k[n // 4: n // 2] = np.floor(np.exp2(rng.uniform(limit - 1, limit + 1, n // 4)))
    with np.errstate(over="ignore", invalid="ignore"):
        a = (k * np.tile(b, n // w)).astype(f)
        a = np.where(rng.random(n) < 0.5, a, -a).astype(f)
        step = rng.integers(-1, 2, n)
        a = np.where(step < 0, np.nextafter(a, -np.inf), np.where(step > 0, np.nextafter(a, np.inf), a))
    return a.astype(f).reshape(-1, w), b


def _int_cases(dtype, n=1 << 18, width=None):
    """Full-range (a, b) with zero, -1 and the extremes among the divisors; `width` as above."""
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    lo, hi, bw = info.min, info.max, info.bits - 1
    w = width or n
    bits = rng.integers(0, bw, w)
    b = ((rng.integers(1, hi, w, dtype=dtype) >> (bw - 1 - np.minimum(bits, bw - 1))) | 1).astype(dtype)
    b *= rng.choice(np.array([-1, 1], dtype), w)
    b[:10] = [1, -1, 2, -2, 0, 3, lo, hi, (1 << min(50, bw)) - 1, 1 << min(50, bw - 1)]
    a = rng.integers(lo, hi, n, dtype=dtype, endpoint=True)
    bb = np.tile(b, n // w)
    k = rng.integers(-(hi // 4), hi // 4, n, dtype=dtype) // np.abs(bb).clip(1)
    a[n // 2:] = (k * bb + rng.integers(-2, 3, n).astype(dtype))[n // 2:]
    a[:4] = [lo, hi, 0, -1]
    return a.reshape(-1, w), b


# "shared": the divisors are one row that Rows(share_rows=True) reads once per column of 4
# rows, prepared once for all of them (functors.h Prepared); "dense": prepared per element.
LAYOUTS = {"dense": (None, sw.Auto()), "shared": (1024, sw.Rows(share_rows=True))}


def _run(a, b, layout, **kw):
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    alg = LAYOUTS[layout][1]
    assert sw.explain(sw.remainder, ta, tb, algorithm=alg).kinds[-1] == (
        "repeated" if layout == "shared" else "dense")
    return ta, tb, sw.remainder(ta, tb, algorithm=alg, **kw).cpu().numpy()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_remainder_near_the_fast_path_limits(dtype, layout):
    a, b = _float_cases(dtype, width=LAYOUTS[layout][0])
    ta, tb, got = _run(a, b, layout, convention="torch")
    assert same_bits(got, torch.remainder(ta, tb).cpu().numpy())
    got = _run(a, b, layout, convention="numpy")[2]
    with np.errstate(all="ignore"):
        assert same_bits(got, np.remainder(a, b))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_int_remainder_over_the_whole_range(dtype, layout):
    a, b = _int_cases(dtype, width=LAYOUTS[layout][0])
    # 253 rows: the last batch of a shared layout holds one row of 4, so the other three
    # compute and are not stored (kernels.cuh run_packs, kBatch in int64)
    for rows in ((a, a[:-3]) if layout == "shared" else (a,)):
        got = _run(np.ascontiguousarray(rows), b, layout)[2]
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(got, np.remainder(rows, b))


def _outer_operands(rng, rows, cols):
    """Dividends (rows) and divisors (cols) for a float32 outer product whose quotients cross
    the short form's range (2^39 |b|) and the fast path's (2^59 |b|) within a warp's lanes:
    half of the rows hold dividends whose quotients stay below 2^38 for every divisor (whole
    warps in the short form), the rest range up to 2^80 (warps that mix the three ranges);
    specials on both sides and divisors at the range edges, subnormal among them."""
    b = (rng.uniform(1, 2, cols) * np.exp2(rng.integers(-10, 11, cols))).astype(np.float32)
    b[:8] = [0.0, np.inf, -np.inf, np.nan, 2.0 ** -100, 2.0 ** 100, 2.0 ** 87, 1e-40]
    b *= rng.choice(np.array([-1, 1], np.float32), cols)
    a = (rng.uniform(1, 2, rows) * np.exp2(rng.uniform(-20, 27, rows))).astype(np.float32)
    wide = rng.random(rows) < 0.5
    a[wide] = (rng.uniform(1, 2, wide.sum()) * np.exp2(rng.uniform(20, 80, wide.sum()))).astype(np.float32)
    a[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** 39]
    a *= rng.choice(np.array([-1, 1], np.float32), rows)
    return a, b


@pytest.mark.parametrize("shape", ["outer", "outer_3d"])
def test_float32_outer_products_take_the_short_form_by_warp(shape):
    """Outer products run float32 remainder's short form (no step 0, functors.h ShortForm)
    where every lane of a warp allows it, else the checked fast path or the exact form; the
    tuning compiles it into the rows kernel of outer products (tuning.py short_form)."""
    rng = np.random.default_rng(7)
    a, b = _outer_operands(rng, 512, 512)
    if shape == "outer":
        x, y = a.reshape(-1, 1), b.reshape(1, -1)
    else:
        x, y = a.reshape(8, 1, 64), b.reshape(1, 512, 1)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    e = sw.explain(sw.remainder, tx, ty)
    assert e.mode == "rows" and "repeated" in e.kinds and "bcast" in e.kinds
    # kShort compiled in (the last argument; the third, packs in flight, is the tuning's)
    assert re.search(r"rows_kernel<Op, false, \d+, true>", e.source)
    assert same_bits(sw.remainder(tx, ty).cpu().numpy(), torch.remainder(tx, ty).cpu().numpy())
    with np.errstate(all="ignore"):
        want = np.remainder(x, y)
    assert same_bits(sw.remainder(tx, ty, convention="numpy").cpu().numpy(), want)
