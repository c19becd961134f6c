"""PyTorch's remainder and fmod tests, re-expressed against stridewise: inputs and expected
results from test/test_binary_ufuncs.py (TestBinaryUfuncs), our own test code, for every dtype
the upstream test loops over. Departures, asserted as such: an integer zero divisor gives 0
(NumPy's answer; torch raises on the CPU and returns an undefined pattern on CUDA), and out=
must already have the result's shape (stridewise never resizes an output)."""
from itertools import product

import numpy as np
import pytest

import stridewise as sw

torch = pytest.importorskip("torch")

INTEGRAL = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)   # integral_types()
FLOATING = (torch.float32, torch.float64, torch.float16)                    # floating_types_and(half)
ALL = INTEGRAL + FLOATING                                                    # all_types_and(half)


def make(shape, dtype, seed, low=-9, high=9):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)
    lo = max(low, 0) if dtype == torch.uint8 else low
    return torch.randint(lo, high, shape, generator=g, dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATING + (torch.bfloat16,))
def test_fmod_remainder_by_zero_float(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_fmod_remainder_by_zero_float: x % 0.0 and
    x % zeros are NaN."""
    x = make((10, 10), dtype, 0)
    for fn in (sw.fmod, sw.remainder):
        assert torch.all(fn(x, 0.0).isnan()) and torch.all(fn(x, torch.zeros_like(x)).isnan())


@pytest.mark.parametrize("dtype", INTEGRAL)
def test_fmod_remainder_by_zero_integral(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_fmod_remainder_by_zero_integral: torch
    raises ZeroDivisionError on the CPU; stridewise gives 0 on both backends (documented)."""
    x = make((10, 10), dtype, 1)
    zero = torch.zeros_like(x)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.remainder(x, zero)
    for fn in (sw.fmod, sw.remainder):
        assert torch.equal(fn(x, zero), zero)


def _check(fn, ref, x, mod):
    np_x = x.numpy() if torch.is_tensor(x) else x
    np_mod = mod.numpy() if torch.is_tensor(mod) else mod
    exp = torch.from_numpy(np.asarray(ref(np_x, np_mod)))
    res = fn(x, mod)
    torch.testing.assert_close(res, exp, check_dtype=False)
    if torch.is_tensor(x):
        out = torch.empty(res.shape, dtype=res.dtype)
        fn(x, mod, out=out)
        torch.testing.assert_close(out, exp, check_dtype=False)


@pytest.mark.parametrize("dtype", ALL)
def test_fmod_remainder(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_fmod_remainder: x in [-9, 9) against
    NumPy's fmod and remainder, with mods 3, 2.3, a tensor of x's dtype (zeros made 1), its
    transpose and, for integers, a float32 tensor; dividends x and x.t(); then scalar
    dividends 5 and 3.14 over the tensor mods. remainder_ in place where the result dtype is
    x's, and the upstream error where it cannot be cast."""
    x = make((10, 10), dtype, 2)
    mod = make((10, 10), dtype, 3)
    mod[mod == 0] = 1
    mods = [3, 2.3, mod, mod.t()]
    if dtype in INTEGRAL:
        mod_float = make((10, 10), torch.float32, 4)
        mod_float[mod_float == 0] = 1
        mods.append(mod_float)
    with np.errstate(all="ignore"):
        for dividend, m in product([x, x.t()], mods):
            for fn, ref in ((sw.fmod, np.fmod), (sw.remainder, np.remainder)):
                _check(fn, ref, dividend, m)
            y = dividend.clone()
            want = torch.remainder(dividend, m)
            if want.dtype == y.dtype:
                sw.remainder_(y, m)
                torch.testing.assert_close(y, want)
            else:
                with pytest.raises(TypeError, match="dtype"):
                    sw.remainder_(y, m)
        for dividend, m in product([5, 3.14], mods):
            if torch.is_tensor(m):
                _check(sw.remainder, np.remainder, dividend, m)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_remainder_fmod_large_dividend(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_remainder_fmod_large_dividend: +-1e9 by
    +-pi: remainder takes the divisor's sign, fmod the dividend's, both below |b|, and they
    agree or differ by one divisor."""
    pi = 3.14159265358979
    for av, bv in product([1e9, -1e9], [pi, -pi]):
        a, b = torch.tensor([av], dtype=dtype), torch.tensor([bv], dtype=dtype)
        c, d = sw.remainder(a, b), sw.fmod(a, b)
        assert (b[0] > 0) == (c[0] > 0) and (a[0] > 0) == (d[0] > 0)
        assert abs(c[0]) < abs(b[0]) and abs(d[0]) < abs(b[0])
        if (a[0] > 0) == (b[0] > 0):
            assert c[0] == d[0]
        else:
            assert abs(c[0] - d[0]) == abs(b[0])


def test_cremainder():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_cremainder (_test_cop): a 10 x 10 slice
    against Python's x % y per element, contiguous and non-contiguous."""
    g = torch.Generator().manual_seed(5)
    m1, m2 = torch.randn(10, 10, 10, generator=g), torch.randn(10, 100, generator=g)
    sm1, sm2 = m1[4], m2[4]
    res = sw.remainder(sm1, sm2.view(10, 10))
    for i, j in product(range(10), range(10)):
        assert res[i, j].item() == pytest.approx(float(sm1[i, j]) % float(sm2[i * 10 + j]), rel=1e-5, abs=1e-6)
    m1, m2 = torch.randn(10, 10, 10, generator=g), torch.randn(100, 100, generator=g)
    sm1 = m1[:, 4]
    sm2 = torch.as_strided(m2, (10, 10), (m2.stride(0) * 10, m2.stride(0)), 4)
    res = sw.remainder(sm1, sm2)
    for i, j in product(range(10), range(10)):
        assert res[i, j].item() == pytest.approx(float(sm1[i, j]) % float(sm2[i, j]), rel=1e-5, abs=1e-6)
