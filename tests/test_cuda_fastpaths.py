"""The device's branch-free fast paths (functors.h `fast`) where they are most fragile.

float32 and float64 remainder take their quotient from a reciprocal (float64's refined by a
Newton step); int32 remainder is branch-free; int64 remainder takes two double quotient
steps. Each is exact by an argument in functors.h; these cases sit where the arguments are
tight: quotients at and around the fast-path limits, dividends at exact multiples of the
divisor and one ulp either side, divisors at the range limits and subnormal, and full-range
integer operands with zero, -1 and the extremes as divisors. Oracles: torch.remainder on CUDA and np.remainder on the host.
"""
import numpy as np
import pytest

import stridewise as sw
from oracle import same_bits

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


def _float_cases(dtype, n=1 << 16, seed=0):
    rng = np.random.default_rng(seed)
    f = np.dtype(dtype)
    info = np.finfo(f)
    lo_exp, hi_exp = (-140, 120) if f == np.float32 else (-1060, 1000)
    b = (rng.uniform(1, 2, n) * np.exp2(rng.integers(lo_exp, hi_exp, n))).astype(f)
    b[: n // 16] = np.exp2(rng.integers(-101, -99, n // 16)).astype(f)       # the 2^-100 edge
    b[n // 16: n // 8] = np.exp2(rng.integers(99, 101, n // 16)).astype(f)   # the 2^100 edge
    b[n // 8: n // 8 + 64] = info.smallest_subnormal * rng.integers(1, 1000, 64)
    b *= rng.choice(np.array([-1, 1], f), n)
    # quotients up to 2^24 (float) and 2^53 (double), most of them small, and a quarter within
    # a factor of two of the fast path's limit (2^20 float, 2^40 double)
    bits, limit = (53, 40) if f == np.float64 else (24, 20)
    k = np.floor(np.exp2(rng.uniform(0, bits, n))).astype(np.float64)
    k[n // 4: n // 2] = np.floor(np.exp2(rng.uniform(limit - 1, limit + 1, n // 4)))
    with np.errstate(over="ignore", invalid="ignore"):
        a = (k * b).astype(f)
        a = np.where(rng.random(n) < 0.5, a, -a).astype(f)
        step = rng.integers(-1, 2, n)
        a = np.where(step < 0, np.nextafter(a, -np.inf), np.where(step > 0, np.nextafter(a, np.inf), a))
    return a.astype(f), b


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_remainder_near_the_fast_path_limits(dtype):
    a, b = _float_cases(dtype)
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    got = sw.remainder(ta, tb, convention="torch").cpu().numpy()
    assert same_bits(got, torch.remainder(ta, tb).cpu().numpy())
    got = sw.remainder(ta, tb, convention="numpy").cpu().numpy()
    with np.errstate(all="ignore"):
        assert same_bits(got, np.remainder(a, b))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_int_remainder_over_the_whole_range(dtype):
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    lo, hi, w = info.min, info.max, info.bits - 1
    n = 1 << 18
    bits = rng.integers(0, w, n)
    b = ((rng.integers(1, hi, n, dtype=dtype) >> (w - 1 - np.minimum(bits, w - 1))) | 1).astype(dtype)
    b *= rng.choice(np.array([-1, 1], dtype), n)
    b[:10] = [1, -1, 2, -2, 0, 3, lo, hi, (1 << min(50, w)) - 1, 1 << min(50, w - 1)]
    a = rng.integers(lo, hi, n, dtype=dtype, endpoint=True)
    k = rng.integers(-(hi // 4), hi // 4, n, dtype=dtype) // np.abs(b).clip(1)
    a[n // 2:] = (k * b + rng.integers(-2, 3, n).astype(dtype))[n // 2:]
    a[:4] = [lo, hi, 0, -1]
    got = sw.remainder(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()).cpu().numpy()
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, np.remainder(a, b))
