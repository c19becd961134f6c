"""NumPy's own ufunc tests for the ops stridewise offers, re-expressed against stridewise: inputs
and expected results from numpy/_core/tests/test_umath.py and TestClip in
numpy/_core/tests/test_numeric.py (NumPy 2.x), our own test code. The oracle is NumPy itself
(the same ufunc on the same inputs) or upstream's literals.

Remainder, fmod and integer division by MIN // -1 and by zero are tests/test_upstream_numpy.py's.
Not carried over: long double and complex long double (typecodes 'g', 'G'; stridewise has none),
object and datetime dtypes, np.errstate warnings and FloatingPointError (kernels raise no
floating-point flags), reductions and accumulations (stridewise's ops are elementwise), and
exact last-ulp values of transcendental functions (only their IEEE special values and exact
results are compared bit for bit; upstream's own tolerances are kept where it has them)."""
import operator

import numpy as np
import pytest

import stridewise as sw

INT = [np.int8, np.int16, np.int32, np.int64]
UINT = [np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT = [np.float16, np.float32, np.float64]       # sctypes['float'] without long double
ALL_INTEGER = "bBhHiIlLqQnNpP"                      # np.typecodes['AllInteger']
SIGNED = "bhilqnp"                                  # np.typecodes['Integer']
UNSIGNED = "BHIQ"     # np.typecodes['UnsignedInteger'] without its aliases of uint64 (L, N, P)

COMPARISONS = [
    (operator.lt, "less"), (operator.le, "less_equal"), (operator.gt, "greater"),
    (operator.ge, "greater_equal"), (operator.eq, "equal"), (operator.ne, "not_equal"),
]


def _parts(x):
    x = np.asarray(x)
    return (x.real, x.imag) if x.dtype.kind == "c" else (x,)


def check(got, want, msg=""):
    """Strict equality (dtype, shape, values; NaN matches NaN) and, for floating and
    complex results, part by part: the same NaN positions and the same sign bit wherever the
    expected part is not NaN (signed zeros). NaN payloads and signs are not compared."""
    np.testing.assert_array_equal(got, want, strict=True, err_msg=msg)
    for g, w in zip(_parts(got), _parts(want)):
        if w.dtype.kind == "f":
            np.testing.assert_array_equal(g, w, err_msg=f"{msg} (parts)")
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{msg} (NaN parts)")
            keep = ~np.isnan(w)
            np.testing.assert_array_equal(np.signbit(g)[keep], np.signbit(w)[keep],
                                          err_msg=f"{msg} (sign bits)")


def numpy(ufunc, *args, **kwargs):
    with np.errstate(all="ignore"):
        return ufunc(*args, **kwargs)


def unary_alignments(dtype, max_size):
    """Input and output views at several offsets and lengths, as upstream's alignment helper
    lays them out: out of place, in place, and shifted by one element either way."""
    for off in range(3):
        for n in range(off + 2, max(off + 3, max_size)):
            def fresh():
                return np.arange(n, dtype=dtype)[off:]
            out = np.empty(n, dtype)[off:]
            yield out, fresh(), f"offset {off} size {n} out of place"
            d = fresh()
            yield d, d, f"offset {off} size {n} in place"
            yield out[1:], fresh()[:-1], f"offset {off}+1 size {n - 1}"
            yield out[:-1], fresh()[1:], f"offset {off} size {n - 1}, input +1"
            yield fresh()[:-1], fresh()[1:], f"offset {off} size {n - 1}, other buffer"


# ----------------------------------------------------------------------------- comparisons

# one dtype of each width and kind (upstream loops over all; tests/test_builtin_ops.py
# holds every comparison of every dtype to NumPy's)
@pytest.mark.parametrize("py_comp,name", COMPARISONS, ids=[n for _, n in COMPARISONS])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint64, np.int16, np.int64, np.float16, np.float64,
                                   np.bool_], ids=lambda d: np.dtype(d).name)
def test_comparison_functions(dtype, py_comp, name):
    """test_umath.py::TestComparisons::test_comparison_functions: 1000 random values in [1, 10)
    (bools for bool), array with array, NumPy scalar with array and array with NumPy scalar,
    against Python's operator on the elements; the bool bytes are 0 or 1."""
    rng = np.random.default_rng(1234)
    if dtype is np.bool_:
        a, b = rng.choice([False, True], 1000), rng.choice([False, True], 1000)
        scalar = True
    else:
        a = rng.integers(1, 10, 1000).astype(dtype)
        b = rng.integers(1, 10, 1000).astype(dtype)
        scalar = 5
    np_scalar = np.dtype(dtype).type(scalar)
    op, ufunc = getattr(sw, name), getattr(np, name)
    al, bl = a.tolist(), b.tolist()
    cases = [
        ((a, b), [int(py_comp(x, y)) for x, y in zip(al, bl)]),
        ((np_scalar, b), [int(py_comp(scalar, y)) for y in bl]),
        ((a, np_scalar), [int(py_comp(x, scalar)) for x in al]),
    ]
    for (x, y), want in cases:
        got = op(x, y)
        check(got, ufunc(x, y))
        assert got.view(np.uint8).tolist() == want


@pytest.mark.parametrize("dtypes", ["qQ", "Qq"])
@pytest.mark.parametrize("py_comp,name", COMPARISONS, ids=[n for _, n in COMPARISONS])
@pytest.mark.parametrize("vals", [(2**60, 2**60 + 1), (2**60 + 1, 2**60)])
def test_large_integer_direct_comparison(dtypes, py_comp, name, vals):
    """test_umath.py::TestComparisons::test_large_integer_direct_comparison: int64 against
    uint64 near 2**60, where float64 (their common type) cannot tell 2**60 from 2**60 + 1;
    arrays and NumPy scalars."""
    a1 = np.array([vals[0]], dtype=dtypes[0])
    a2 = np.array([vals[1]], dtype=dtypes[1])
    expected = py_comp(*vals)
    op = getattr(sw, name)
    check(op(a1, a2), np.array([expected]))
    s1, s2 = a1[0], a2[0]
    assert isinstance(s1, np.integer) and isinstance(s2, np.integer)
    check(op(s1, s2), np.bool_(expected))


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("py_comp,name", COMPARISONS, ids=[n for _, n in COMPARISONS])
@pytest.mark.parametrize("flip", [True, False])
def test_unsigned_signed_direct_comparison(dtype, py_comp, name, flip):
    """test_umath.py::TestComparisons::test_unsigned_signed_direct_comparison: an unsigned
    dtype's maximum against the Python int -1, either side, array and NumPy scalar."""
    arr = np.array([np.iinfo(dtype).max], dtype=dtype)
    op = getattr(sw, name)
    args = (lambda x: (-1, x)) if flip else (lambda x: (x, -1))
    expected = py_comp(*args(int(arr[0])))
    check(op(*args(arr)), np.array([expected]))
    scalar = arr[0]
    assert isinstance(scalar, np.integer)
    check(op(*args(scalar)), np.bool_(expected))


def test_complex_nan_comparisons():
    """test_umath.py::test_complex_nan_comparisons: a complex NaN (in either part) is unordered
    and unequal to everything."""
    nans = [complex(np.nan, 0), complex(0, np.nan), complex(np.nan, np.nan)]
    fins = [complex(1, 0), complex(-1, 0), complex(0, 1), complex(0, -1),
            complex(1, 1), complex(-1, -1), complex(0, 0)]
    for x in nans + fins:
        for y in nans + fins:
            if x in fins and y in fins:
                continue
            xa, ya = np.array([x]), np.array([y])
            for name in ("less", "greater", "less_equal", "greater_equal", "equal"):
                check(getattr(sw, name)(xa, ya), np.array([False]), f"{name}({x!r}, {y!r})")


# -------------------------------------------------------------------------------- division

def test_division_int():
    """test_umath.py::TestDivision::test_division_int: true, floor and modulo division of
    int64 by 100 follow Python."""
    x = np.array([5, 10, 90, 100, -5, -10, -90, -100, -120])
    check(sw.divide(x, 100), np.array([0.05, 0.1, 0.9, 1, -0.05, -0.1, -0.9, -1, -1.2]))
    check(sw.floor_divide(x, 100), np.array([0, 0, 0, 1, -1, -1, -1, -1, -2]))
    check(sw.remainder(x, 100), np.array([5, 10, 90, 0, 95, 90, 10, 0, 80]))


BOUNDARY_CASES = {
    "max-arange-range15": lambda fo, neg, n, dt: (
        np.array(range(fo.max - n, fo.max)).astype(dt), np.arange(n).astype(dt), range(15)),
    "min-symmetric-min15": lambda fo, neg, n, dt: (
        np.arange(fo.min, fo.min + n).astype(dt), np.arange(n // -2, n // 2).astype(dt),
        range(fo.min, fo.min + 15)),
    "max-arange-picked": lambda fo, neg, n, dt: (
        np.array(range(fo.max - n, fo.max)).astype(dt), np.arange(n).astype(dt),
        [1, 3, 9, 13, neg, fo.min + 1, fo.min // 2, fo.max // 3, fo.max // 4]),
}


@pytest.mark.parametrize("dtype", INT + UINT, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", list(BOUNDARY_CASES))
def test_division_int_boundary(dtype, case):
    """test_umath.py::TestDivision::test_division_int_boundary: 519 dividends at either end of
    the dtype by arrays of divisors (zero included) and by Python ints, out of place and in
    place (out= the dividend); x // 0 is 0 and MIN // -1 is MIN, Python's // otherwise."""
    fo = np.iinfo(dtype)
    neg = -1 if fo.min < 0 else 1
    a, b, divisors = BOUNDARY_CASES[case](fo, neg, 512 + 7, dtype)

    def c_div(n, d):
        return 0 if d == 0 else (fo.min if (n and n == fo.min and d == -1) else n // d)

    want = np.array([c_div(x, y) for x, y in zip(a.tolist(), b.tolist())], dtype=dtype)
    check(sw.floor_divide(a, b), want, "a // b")
    ac = a.copy()
    assert sw.floor_divide(ac, b, out=ac) is ac
    check(ac, want, "a //= b")
    for divisor in divisors:
        want = np.array([c_div(x, divisor) for x in a.tolist()], dtype=dtype)
        check(sw.floor_divide(a, divisor), want, f"a // {divisor}")
        ac = a.copy()
        sw.floor_divide(ac, divisor, out=ac)
        check(ac, want, f"a //= {divisor}")
    check(sw.floor_divide(np.array([], dtype=dtype), 0), np.array([], dtype=dtype))


def test_floor_division_signed_zero():
    """test_umath.py::TestDivision::test_floor_division_signed_zero: +0.0 // 1 and -0.0 // 1
    keep their signs."""
    x = np.zeros(10)
    assert not np.signbit(sw.floor_divide(x, 1)).any()
    assert np.signbit(sw.floor_divide(-x, 1)).all()


@pytest.mark.parametrize("dtype", "efd")
def test_floor_division_corner_cases(dtype):
    """test_umath.py::TestDivision::test_floor_division_corner_cases: NaN // 1, 1 // NaN and
    NaN // 0 are NaN; 1.0 // 0.0 is inf."""
    x, y = np.zeros(10, dtype=dtype), np.ones(10, dtype=dtype)
    fnan, fone, fzer = (np.array(v, dtype=dtype) for v in (np.nan, 1.0, 0.0))
    for p, q in ((fnan, fone), (fone, fnan), (fnan, fzer)):
        div = sw.floor_divide(p, q)
        assert div.dtype == dtype and np.isnan(div), (p, q, div)
    check(sw.floor_divide(y, x), np.full(10, np.inf, dtype))


def test_floor_division_complex():
    """test_umath.py::TestDivision::test_floor_division_complex: floor division and remainder
    of complex operands raise TypeError."""
    x = np.array([.9 + 1j, -.1 + 1j, .9 + .5 * 1j, .9 + 2. * 1j], dtype=np.complex128)
    with pytest.raises(TypeError):
        sw.floor_divide(x, 7)
    with pytest.raises(TypeError):
        sw.remainder(x, 7)


def test_division_complex():
    """test_umath.py::TestDivision::test_division_complex: x**2 / x is x (to 7 decimals), also
    where x**2 is near over- or underflow; bit for bit NumPy's."""
    x = np.array([1. + 1. * 1j, 1. + .5 * 1j, 1. + 2. * 1j], dtype=np.complex128)
    sq = sw.pow(x, 2)
    check(sq, numpy(np.power, x, 2))
    got = sw.divide(sq, x)
    check(got, numpy(np.divide, np.power(x, 2), x))
    np.testing.assert_almost_equal(got, x)
    x = np.array([1.e+110, 1.e-110], dtype=np.complex128)
    y = sw.divide(sw.pow(x, 2), x)
    check(y, numpy(np.divide, numpy(np.power, x, 2), x))
    np.testing.assert_almost_equal(sw.divide(y, x), [1, 1])


def test_zero_division_complex():
    """test_umath.py::TestDivision::test_zero_division_complex: a nonzero (or infinite) number
    over complex zero is infinite; 0 / 0 is NaN."""
    x = np.array([0.0], dtype=np.complex128)
    for num in (1.0, complex(np.inf, np.nan), complex(np.nan, np.inf), complex(np.inf, np.inf)):
        y = sw.divide(num, x)
        assert y.dtype == np.complex128 and np.isinf(y)[0], (num, y)
    y = sw.divide(0.0, x)
    assert np.isnan(y)[0], y


def test_float_remainder_overflow():
    """test_umath.py::TestRemainder::test_float_remainder_overflow: divmod(4, tiny) gives an
    infinite quotient and a zero remainder."""
    a = np.finfo(np.float64).tiny
    div, mod = sw.floor_divide(4, a), sw.remainder(4, a)
    check(div, np.float64(np.inf))
    check(mod, np.float64(0.0))


@pytest.mark.parametrize("dtype", "efd")
def test_float_divmod_corner_cases(dtype):
    """test_umath.py::TestRemainder::test_float_divmod_corner_cases: divmod's NaN and inf cases
    through floor_divide and remainder (quotient, remainder): (1, 0) -> (inf, NaN),
    (0, 0) -> (NaN, NaN), (inf, inf) -> (NaN, NaN), (inf, 0) -> (inf, NaN), and NaN in."""
    fnan, fone, fzer, finf = (np.array(v, dtype=dtype) for v in (np.nan, 1.0, 0.0, np.inf))
    cases = [((fone, fzer), "inf"), ((fzer, fzer), "nan"), ((finf, finf), "nan"),
             ((finf, fzer), "inf"), ((fnan, fone), "nan"), ((fone, fnan), "nan"),
             ((fnan, fzer), "nan")]
    for (p, q), quotient in cases:
        div, rem = sw.floor_divide(p, q), sw.remainder(p, q)
        assert div.dtype == rem.dtype == dtype
        assert (np.isinf(div) if quotient == "inf" else np.isnan(div)), (p, q, div)
        assert np.isnan(rem), (p, q, rem)


@pytest.mark.parametrize("dtype", "efd")
def test_float_remainder_corner_cases(dtype):
    """test_umath.py::TestRemainder::test_float_remainder_corner_cases: the remainder of the
    smallest negative subnormal by 1 is at most 1 (and by -1, negated, at least -1), bit for
    bit NumPy's; remainder and fmod with an inf dividend, a zero divisor or a NaN are NaN."""
    b = np.array(1.0, dtype=dtype)
    a = np.nextafter(np.array(0.0, dtype=dtype), -b)
    rem = sw.remainder(a, b)
    check(rem, np.remainder(a, b))
    assert rem <= b
    rem = sw.remainder(-a, -b)
    check(rem, np.remainder(-a, -b))
    assert rem >= -b

    fone, fzer, finf, fnan = (np.array(v, dtype=dtype) for v in (1.0, 0.0, np.inf, np.nan))
    assert np.isnan(sw.remainder(fone, fzer))
    for p, q in ((finf, fone), (finf, finf), (finf, fzer), (fone, fnan), (fnan, fzer),
                 (fnan, fone)):
        assert np.isnan(sw.remainder(p, q)), ("remainder", p, q)
    for p, q in ((finf, fone), (finf, fzer), (fone, fnan), (fnan, fzer), (fnan, fone)):
        assert np.isnan(sw.fmod(p, q)), ("fmod", p, q)


@pytest.mark.parametrize("dtype", "efd")
def test_divide_spurious_fpexception(dtype):
    """test_umath.py::TestSpecialFloats::test_divide_spurious_fpexception (values only; no
    warnings exist here): 129 zeros over the smallest subnormal are zeros (gh-25097)."""
    subnorm = np.finfo(dtype).smallest_subnormal
    x = np.zeros(128 + 1, dtype=dtype)
    check(sw.divide(x, subnorm), np.zeros(129, dtype=dtype))


# ----------------------------------------------------------------------------------- power

def test_power_float():
    """test_umath.py::TestPower::test_power_float: x**0, x**1 and x**2 exact (also in place),
    x**-1 and x**0.5 to 7 decimals; for float32 and float64 views at several offsets,
    x**0.5 to 7 decimals and sqrt(x, out=...) exactly the correctly rounded square root."""
    x = np.array([1., 2., 3.])
    check(sw.pow(x, 0), np.array([1., 1., 1.]))
    check(sw.pow(x, 1), x)
    check(sw.pow(x, 2), np.array([1., 4., 9.]))
    y = x.copy()
    sw.pow(y, 2, out=y)
    check(y, np.array([1., 4., 9.]))
    np.testing.assert_almost_equal(sw.pow(x, -1), [1., 0.5, 1. / 3])
    np.testing.assert_almost_equal(sw.pow(x, 0.5), [1., np.sqrt(2), np.sqrt(3)])

    for dtype, max_size in ((np.float32, 11), (np.float64, 7)):
        for out, inp, msg in unary_alignments(dtype, max_size):
            want = np.sqrt(inp.copy())
            np.testing.assert_almost_equal(sw.pow(inp, 0.5), want, err_msg=msg)
            assert sw.sqrt(inp, out=out) is out
            check(out, want, msg)


def test_power_complex():
    """test_umath.py::TestPower::test_power_complex: complex integer powers (to 7 decimals),
    x**0 and x**1 exactly; (0 + inf j) and (1 + inf j) to the powers 1, 2 and 3 are z, z*z and
    z*z*z part for part (ticket #836)."""
    x = np.array([1 + 2j, 2 + 3j, 3 + 4j])
    check(sw.pow(x, 0), np.array([1., 1., 1.], dtype=complex))
    check(sw.pow(x, 1), x)
    close = np.testing.assert_almost_equal
    close(sw.pow(x, 2), [-3 + 4j, -5 + 12j, -7 + 24j])
    close(sw.pow(x, 3), [(1 + 2j)**3, (2 + 3j)**3, (3 + 4j)**3])
    close(sw.pow(x, 4), [(1 + 2j)**4, (2 + 3j)**4, (3 + 4j)**4])
    close(sw.pow(x, -1), [1 / (1 + 2j), 1 / (2 + 3j), 1 / (3 + 4j)])
    close(sw.pow(x, -2), [1 / (1 + 2j)**2, 1 / (2 + 3j)**2, 1 / (3 + 4j)**2])
    close(sw.pow(x, -3), [(-11 + 2j) / 125, (-46 - 9j) / 2197, (-117 - 44j) / 15625])
    close(sw.pow(x, 0.5), [np.sqrt(1 + 2j), np.sqrt(2 + 3j), np.sqrt(3 + 4j)])
    p14 = sw.pow(x, 14)
    norm = 1. / p14[0]
    close(p14 * norm, [i * norm for i in [-76443 + 16124j, 23161315 + 58317492j,
                                          5583548873 + 2465133864j]])

    for z in (complex(0, np.inf), complex(1, np.inf)):
        z = np.array([z], dtype=np.complex128)
        zz = numpy(np.multiply, z, z)
        for p, want in ((1, z), (2, zz), (3, numpy(np.multiply, zz, z))):
            got = sw.pow(z, p)
            np.testing.assert_array_equal(got.real, want.real, err_msg=f"{z} ** {p}")
            np.testing.assert_array_equal(got.imag, want.imag, err_msg=f"{z} ** {p}")


def _complex_equal(got, want, msg=""):
    got, want = np.asarray(got), np.asarray(want)
    np.testing.assert_array_equal(got.real, want.real, err_msg=msg)
    np.testing.assert_array_equal(got.imag, want.imag, err_msg=msg)


def test_power_zero():
    """test_umath.py::TestPower::test_power_zero (ticket #1271): complex zero to a positive
    power is zero, to the power 0 one, to an imaginary or negative power NaN + NaN j; part for
    part, and bit for bit NumPy's where not NaN."""
    zero, one = np.array([0j]), np.array([1 + 0j])
    cnan = np.array([complex(np.nan, np.nan)])
    for p, want in ([(p, zero) for p in (0.33, 0.5, 1, 1.5, 2, 3, 4, 5, 6.6)]
                    + [(0, one), (0 + 1j, cnan), (-1 + 0.2j, cnan)]
                    + [(-p, cnan) for p in (0.33, 0.5, 1, 1.5, 2, 3, 4, 5, 6.6)]):
        got = sw.pow(zero, p)
        _complex_equal(got, want, f"0j ** {p}")
        check(got, numpy(np.power, zero, p), f"0j ** {p}")


def test_zero_power_nonzero():
    """test_umath.py::TestPower::test_zero_power_nonzero (gh-18378): complex zero to a complex
    power with positive real part is zero; with a negative or zero real part, NaN + NaN j."""
    zero = np.array([0.0 + 0.0j])
    cnan = np.array([complex(np.nan, np.nan)])
    for p in (1 + 4j, 2 - 3j, 1 + 1j, 1 + 0j, 1 - 1j):
        got = sw.pow(zero, p)
        _complex_equal(got, zero, f"0j ** {p}")
        check(got, numpy(np.power, zero, p), f"0j ** {p}")
    for p in (-1 + 1j, -2 - 3j, -7 + 0j, 0 + 1j, 0 - 1j):
        _complex_equal(sw.pow(zero, p), cnan, f"0j ** {p}")


def test_fast_power():
    """test_umath.py::TestPower::test_fast_power: int16 ** 2.0 has the dtype of int16 ** 2.00001
    (NumPy's: float64) and the values 1, 4, 9 in a new array, x left alone; a 1-element 3-d
    exponent broadcasts (shape (1, 1, 3))."""
    x = np.array([1, 2, 3], np.int16)
    res = sw.pow(x, 2.0)
    assert sw.pow(x, 2.00001).dtype == res.dtype == np.power(x, 2.0).dtype
    check(res, np.array([1., 4., 9.]))
    assert not np.may_share_memory(res, x)
    check(x, np.array([1, 2, 3], np.int16))
    res = sw.pow(x, np.array([[[2]]]))
    assert res.shape == (1, 1, 3)
    check(res, np.power(x, np.array([[[2]]])))


def test_integer_power():
    """test_umath.py::TestPower::test_integer_power: 15 ** 15 in int64."""
    a = np.array([15, 15], "i8")
    check(sw.pow(a, a), np.array([437893890380859375, 437893890380859375], "i8"))


def test_integer_power_with_integer_zero_exponent():
    """test_umath.py::TestPower::test_integer_power_with_integer_zero_exponent: x ** 0 is 1 in
    every integer dtype, negative bases included."""
    for dt in SIGNED:
        arr = np.arange(-10, 10, dtype=dt)
        check(sw.pow(arr, 0), np.ones_like(arr), dt)
    for dt in UNSIGNED:
        arr = np.arange(10, dtype=dt)
        check(sw.pow(arr, 0), np.ones_like(arr), dt)


def test_integer_power_of_1():
    """test_umath.py::TestPower::test_integer_power_of_1: 1 ** x is 1, in x's dtype."""
    for dt in ALL_INTEGER:
        arr = np.arange(10, dtype=dt)
        check(sw.pow(1, arr), np.ones_like(arr), dt)


def test_integer_power_of_zero():
    """test_umath.py::TestPower::test_integer_power_of_zero: 0 ** x is 0 for x >= 1, in x's
    dtype."""
    for dt in ALL_INTEGER:
        arr = np.arange(1, 10, dtype=dt)
        check(sw.pow(0, arr), np.zeros_like(arr), dt)


def test_integer_to_negative_power_python_int():
    """test_umath.py::TestPower::test_integer_to_negative_power, with the negative exponent as
    a Python int: integers to negative integer powers raise ValueError."""
    for dt in SIGNED:
        a = np.array([0, 1, 2, 3], dtype=dt)
        with pytest.raises(ValueError):
            np.power(a, -1)
        with pytest.raises(ValueError):
            sw.pow(a, -1)
        with pytest.raises(ValueError):
            sw.pow(a, -3)


def test_integer_to_negative_power():
    """test_umath.py::TestPower::test_integer_to_negative_power: NumPy raises ValueError for a
    negative exponent inside an integer array (or 0-d array), and so does stridewise, before
    it writes anything; NumPy's answer for non-negative exponents."""
    for dt in SIGNED:
        a = np.array([0, 1, 2, 3], dtype=dt)
        b = np.array([0, 1, 2, -3], dtype=dt)
        one, minusone = np.array(1, dtype=dt), np.array(-1, dtype=dt)
        for x, y in ((a, b), (a, minusone), (one, b), (one, minusone)):
            with pytest.raises(ValueError):
                np.power(x, y)
            out = np.full(np.broadcast_shapes(x.shape, y.shape), 7, dt)
            with pytest.raises(ValueError, match="negative integer powers"):
                sw.pow(x, y, out=out)
            assert (out == 7).all()
        check(sw.pow(a, np.abs(b)), np.power(a, np.abs(b)))


def test_float_to_inf_power():
    """test_umath.py::TestPower::test_float_to_inf_power: 1 ** +-inf is 1, 2 and -2 ** inf are
    inf and ** -inf 0, inf ** inf is inf and -inf ** -inf 0."""
    for dt in (np.float32, np.float64):
        a = np.array([1, 1, 2, 2, -2, -2, np.inf, -np.inf], dt)
        b = np.array([np.inf, -np.inf, np.inf, -np.inf, np.inf, -np.inf, np.inf, -np.inf], dt)
        check(sw.pow(a, b), np.array([1, 1, np.inf, 0, np.inf, 0, np.inf, 0], dt))


def test_power_fast_paths():
    """test_umath.py::TestPower::test_power_fast_paths (gh-26055): x ** 2. within 1 ulp of the
    square (inf for both infinities), x ** 0.5 within 1 ulp of sqrt(x)."""
    for dt in (np.float32, np.float64):
        a = np.array([0, 1.1, 2, 12e12, -10., np.inf, -np.inf], dt)
        expected = np.array([0.0, 1.21, 4., 1.44e+26, 100, np.inf, np.inf])
        result = sw.pow(a, 2.)
        assert result.dtype == dt
        np.testing.assert_array_max_ulp(result, expected.astype(dt), maxulp=1)
        a = np.array([0, 1.1, 2, 12e12], dt)
        result = sw.pow(a, 0.5)
        assert result.dtype == dt
        np.testing.assert_array_max_ulp(result, np.sqrt(a).astype(dt), maxulp=1)


# ----------------------------------------------------------------- special floating values

@pytest.mark.parametrize("dt", "efd")
def test_exp_values(dt):
    """test_umath.py::TestSpecialFloats::test_exp_values: exp(NaN), exp(-NaN) are NaN,
    exp(inf) is inf, exp(-inf) is +0."""
    y = np.array([np.nan, -np.nan, np.inf, -np.inf], dtype=dt)
    check(sw.exp(y), np.array([np.nan, np.nan, np.inf, 0.], dtype=dt))


@pytest.mark.parametrize("dt", "efd")
def test_log_special_values(dt):
    """test_umath.py::TestSpecialFloats::test_log_values: log(NaN), log(-NaN), log(-inf) and
    log(-1) are NaN, log(inf) is inf, log(0) is -inf."""
    y = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -1.0], dtype=dt)
    check(sw.log(y), np.array([np.nan, np.nan, np.inf, np.nan, -np.inf, np.nan], dtype=dt))


def _powers_of_two_and_logs(dt):
    """2**0 .. 2**10 and their natural logs k log 2, in dtype dt (TestLog's and TestExp's)."""
    k = np.arange(11)
    return (2.0 ** k).astype(dt), k.astype(dt) * 0.69314718055994530943


def test_log_values():
    """test_umath.py::TestLog::test_log_values: log(2**k) is k log 2 to 7 decimals in float32
    and float64; log(x, out=x) in place gives log(x) (issue #17761)."""
    for dt in "fd":
        xf, yf = _powers_of_two_and_logs(dt)
        np.testing.assert_almost_equal(sw.log(xf), yf, err_msg=dt)
    x = np.array([2, 0.937500, 3, 0.947500, 1.054697])
    xf = sw.log(x)
    assert sw.log(x, out=x) is x
    check(x, xf)
    np.testing.assert_almost_equal(x, np.log(np.array([2, 0.937500, 3, 0.947500, 1.054697])))


def test_exp_values_of_logs():
    """test_umath.py::TestExp::test_exp_values: exp(k log 2) is 2**k to 7 decimals in float32
    and float64."""
    for dt in "fd":
        xf, yf = _powers_of_two_and_logs(dt)
        np.testing.assert_almost_equal(sw.exp(yf), xf, err_msg=dt)


@pytest.mark.parametrize("dtype", "efd")
def test_sincos_values(dtype):
    """test_umath.py::TestSpecialFloats::test_sincos_values: sin and cos of NaN, -NaN, inf
    and -inf are NaN."""
    y = np.array([np.nan, -np.nan, np.inf, -np.inf], dtype=dtype)
    want = np.full(4, np.nan, dtype=dtype)
    check(sw.sin(y), want)
    check(sw.cos(y), want)


@pytest.mark.parametrize("op", ["sin", "cos"])
@pytest.mark.parametrize("dtype", "fd")
@pytest.mark.parametrize("stride", [-1, 1, 2, 4, 5])
def test_sincos_overlaps(op, dtype, stride):
    """test_umath.py::TestSpecialFloats::test_sincos_overlaps: f(x[::stride], out=x[:M]), out
    overlapping its input, gives what f(x[::stride]) gives into a fresh array."""
    n = 100
    m = n // abs(stride)
    x = np.random.default_rng(42).standard_normal(n, dtype)
    fn = getattr(sw, op)
    y = fn(x[::stride])
    fn(x[::stride], out=x[:m])
    check(x[:m], y)


@pytest.mark.parametrize("dt", "efd")
def test_sqrt_values(dt):
    """test_umath.py::TestSpecialFloats::test_sqrt_values: sqrt of NaN, -NaN and -inf is NaN,
    of inf inf, of 0 0."""
    y = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.], dtype=dt)
    check(sw.sqrt(y), np.array([np.nan, np.nan, np.inf, np.nan, 0.], dtype=dt))


@pytest.mark.parametrize("dt", "efd")
def test_abs_values(dt):
    """test_umath.py::TestSpecialFloats::test_abs_values, with test_umath.py::
    test_abs_nan_signbit and test_abs_nan_signbit_array (#31421): abs of NaN and -NaN is NaN
    with the sign bit clear, of +-inf inf, of +-0 +0, of +-1 1."""
    y = np.array([np.nan, -np.nan, np.inf, -np.inf, 0., -0., -1.0, 1.0], dtype=dt)
    got = sw.abs(y)
    check(got, np.array([np.nan, np.nan, np.inf, np.inf, 0., 0., 1.0, 1.0], dtype=dt))
    assert not np.signbit(got).any(), got
    for v in (np.nan, -np.nan):
        assert not np.signbit(sw.abs(np.dtype(dt).type(v)))


@pytest.mark.parametrize("dt", "efd")
def test_square_values(dt):
    """test_umath.py::TestSpecialFloats::test_square_values: square of +-NaN is NaN, of +-inf
    inf."""
    y = np.array([np.nan, -np.nan, np.inf, -np.inf], dtype=dt)
    check(sw.square(y), np.array([np.nan, np.nan, np.inf, np.inf], dtype=dt))


@pytest.mark.parametrize("dt", "efd")
def test_reciprocal_values(dt):
    """test_umath.py::TestSpecialFloats::test_reciprocal_values: 1 / +-NaN is NaN, 1 / +-inf
    is +-0, 1 / +-0 is +-inf (signs checked)."""
    y = np.array([np.nan, -np.nan, np.inf, -np.inf, 0., -0.], dtype=dt)
    check(sw.reciprocal(y), np.array([np.nan, np.nan, 0.0, -0.0, np.inf, -np.inf], dtype=dt))


@pytest.mark.parametrize("dt", "efd")
def test_tanh(dt):
    """test_umath.py::TestSpecialFloats::test_tanh: tanh of +-NaN is NaN, of +-inf exactly +-1
    (upstream allows 3 ulp; C's Annex F defines the exact value)."""
    y = np.array([np.nan, -np.nan, np.inf, -np.inf], dtype=dt)
    check(sw.tanh(y), np.array([np.nan, np.nan, 1.0, -1.0], dtype=dt))


AVX_UFUNCS = {"sqrt": (0., 100.), "abs": (-100., 100.), "reciprocal": (1., 100.),
              "square": (-100., 100.), "floor": (-100., 100.), "ceil": (-100., 100.),
              "trunc": (-100., 100.)}


@pytest.mark.parametrize("func", list(AVX_UFUNCS))
def test_avx_based_ufunc(func):
    """test_umath.py::TestAVXUfuncs::test_avx_based_ufunc (rint is not a stridewise op): for
    1 to 31 random float32 values and their float64 copies, the correctly rounded result (bit
    for bit NumPy's: these ops are exact or one IEEE rounding; upstream compares with long
    double within 0 or 1 ulp), and strided views (-4 to 4) give the contiguous result's
    elements."""
    lo, hi = AVX_UFUNCS[func]
    rng = np.random.RandomState(42)
    fn, ufunc = getattr(sw, func), getattr(np, "absolute" if func == "abs" else func)
    for size in range(1, 32):
        x_f32 = rng.uniform(low=lo, high=hi, size=size).astype(np.float32)
        x_f64 = x_f32.astype(np.float64)
        y32, y64 = fn(x_f32), fn(x_f64)
        check(y32, ufunc(x_f32), f"{func} float32 size {size}")
        check(y64, ufunc(x_f64), f"{func} float64 size {size}")
        if size > 1:
            for jj in (-4, -3, -2, -1, 1, 2, 3, 4):
                check(fn(x_f64[::jj]), y64[::jj], f"{func} float64 stride {jj}")
                check(fn(x_f32[::jj]), y32[::jj], f"{func} float32 stride {jj}")


def test_exp_float32():
    """test_umath.py::TestAVXFloat32Transcendental::test_exp_float32: float32 exp of 10**6
    values in [0, 88.1] within 3 ulp of float64's exp rounded to float32."""
    x_f32 = np.float32(np.random.RandomState(42).uniform(low=0.0, high=88.1, size=1000000))
    np.testing.assert_array_max_ulp(sw.exp(x_f32), np.float32(np.exp(np.float64(x_f32))),
                                    maxulp=3)


def test_log_float32():
    """test_umath.py::TestAVXFloat32Transcendental::test_log_float32: float32 log of 10**6
    values in [0, 1000] within 4 ulp of float64's log rounded to float32."""
    x_f32 = np.float32(np.random.RandomState(42).uniform(low=0.0, high=1000, size=1000000))
    np.testing.assert_array_max_ulp(sw.log(x_f32), np.float32(np.log(np.float64(x_f32))),
                                    maxulp=4)


def test_sincos_float32():
    """test_umath.py::TestAVXFloat32Transcendental::test_sincos_float32: float32 sin and cos of
    10**6 values in [-100, 100], one in 20 replaced by values up to 1e11, within 2 ulp of
    float64's rounded to float32; also in place (out= the input, issue #17761)."""
    rng = np.random.RandomState(42)
    n = 1000000
    m = np.int_(n / 20)
    index = rng.randint(low=0, high=n, size=m)
    x_f32 = np.float32(rng.uniform(low=-100., high=100., size=n))
    x_f32[index] = np.float32(10E+10 * rng.rand(m))
    x_f64 = np.float64(x_f32)
    sin_ref, cos_ref = np.float32(np.sin(x_f64)), np.float32(np.cos(x_f64))
    np.testing.assert_array_max_ulp(sw.sin(x_f32), sin_ref, maxulp=2)
    np.testing.assert_array_max_ulp(sw.cos(x_f32), cos_ref, maxulp=2)
    tx_f32 = x_f32.copy()
    np.testing.assert_array_max_ulp(sw.sin(x_f32, out=x_f32), sin_ref, maxulp=2)
    np.testing.assert_array_max_ulp(sw.cos(tx_f32, out=tx_f32), cos_ref, maxulp=2)


STRIDES = (-4, -3, -2, -1, 1, 2, 3, 4)


def test_strided_float32():
    """test_umath.py::TestAVXFloat32Transcendental::test_strided_float32: float32 exp, log, sin
    and cos of strided views (-4 to 4) of 2 to 99 values (sin and cos with 120000.0 mixed in)
    within 2 ulp of the contiguous results' elements."""
    rng = np.random.RandomState(42)
    for ii in range(2, 100):
        x_f32 = np.float32(rng.uniform(low=0.01, high=88.1, size=ii))
        x_f32_large = x_f32.copy()
        x_f32_large[3:-1:4] = 120000.0
        exp_true, log_true = sw.exp(x_f32), sw.log(x_f32)
        sin_true, cos_true = sw.sin(x_f32_large), sw.cos(x_f32_large)
        for jj in STRIDES:
            x_slice, x_large = x_f32[::jj], x_f32_large[::jj]
            nulp = np.testing.assert_array_almost_equal_nulp
            nulp(sw.exp(x_slice), exp_true[::jj], nulp=2)
            nulp(sw.log(x_slice), log_true[::jj], nulp=2)
            nulp(sw.sin(x_large), sin_true[::jj], nulp=2)
            nulp(sw.cos(x_large), cos_true[::jj], nulp=2)


def test_log_strides():
    """test_umath.py::TestLog::test_log_strides: float64 log of strided views (-4 to 4) of 2 to
    99 values in [0.01, 100] (and with every fourth value 1.0) within 2 ulp of the contiguous
    results' elements."""
    rng = np.random.RandomState(42)
    for ii in range(2, 100):
        x_f64 = np.float64(rng.uniform(low=0.01, high=100.0, size=ii))
        x_special = x_f64.copy()
        x_special[3:-1:4] = 1.0
        y_true, y_special = sw.log(x_f64), sw.log(x_special)
        for jj in STRIDES:
            np.testing.assert_array_almost_equal_nulp(sw.log(x_f64[::jj]), y_true[::jj], nulp=2)
            np.testing.assert_array_almost_equal_nulp(sw.log(x_special[::jj]), y_special[::jj],
                                                      nulp=2)


def test_exp_strides():
    """test_umath.py::TestExp::test_exp_strides: float64 exp of strided views (-4 to 4) of 2
    to 99 values in [0.01, 709.1] within 2 ulp of the contiguous results' elements."""
    rng = np.random.RandomState(42)
    for ii in range(2, 100):
        x_f64 = np.float64(rng.uniform(low=0.01, high=709.1, size=ii))
        y_true = sw.exp(x_f64)
        for jj in STRIDES:
            np.testing.assert_array_almost_equal_nulp(sw.exp(x_f64[::jj]), y_true[::jj], nulp=2)


@pytest.mark.parametrize("z, wref", [
    (1 + 1e-12j, 5e-25 + 1e-12j),
    (1.000000000000001 + 3e-08j, 1.5602230246251546e-15 + 2.999999999999996e-08j),
    (0.9999995000000417 + 0.0009999998333333417j, 7.831475869017683e-18 + 0.001j),
    (0.9999999999999996 + 2.999999999999999e-08j, 5.9107901499372034e-18 + 3e-08j),
    (0.99995000042 - 0.009999833j, -7.015159763822903e-15 - 0.009999999665816696j)])
def test_log_precision_float64(z, wref):
    """test_umath.py::TestLog::test_log_precision_float64: complex128 log near 1 against
    mpmath's values (upstream's), relative tolerance 1e-15."""
    w = sw.log(z)
    assert w.dtype == np.complex128
    np.testing.assert_allclose(w, wref, rtol=1e-15)


@pytest.mark.parametrize("z, wref", [
    (np.complex64(1.0 + 3e-6j), np.complex64(4.5e-12 + 3e-06j)),
    (np.complex64(1.0 - 2e-5j), np.complex64(1.9999999e-10 - 2e-5j)),
    (np.complex64(0.9999999 + 1e-06j), np.complex64(-1.192088e-07 + 1.0000001e-06j))])
def test_log_precision_float32(z, wref):
    """test_umath.py::TestLog::test_log_precision_float32: complex64 log near 1 against
    mpmath's values (upstream's), relative tolerance 1e-6."""
    w = sw.log(z)
    assert w.dtype == np.complex64
    np.testing.assert_allclose(w, wref, rtol=1e-6)


COMPLEX_FUNCS = ["sin", "cos", "exp", "log", "sqrt"]


def test_complex_functions_it():
    """test_umath.py::TestComplexFunctions::test_it (the functions stridewise offers): f of
    complex(0.5) has f(0.5) as its real part and 0 as its imaginary part (7 decimals)."""
    for name in COMPLEX_FUNCS:
        f = getattr(sw, name)
        fr, fz = f(0.5), f(complex(0.5))
        np.testing.assert_almost_equal(fz.real, fr, err_msg=f"real part {name}")
        np.testing.assert_almost_equal(fz.imag, 0., err_msg=f"imag part {name}")


def test_complex_precisions_consistent():
    """test_umath.py::TestComplexFunctions::test_precisions_consistent (no complex long
    double): f(1 + 1j) in complex64 agrees with complex128 to 6 decimals."""
    z = 1 + 1j
    for name in COMPLEX_FUNCS:
        f = getattr(sw, name)
        fcf, fcd = f(np.csingle(z)), f(np.cdouble(z))
        assert fcf.dtype == np.complex64 and fcd.dtype == np.complex128
        np.testing.assert_almost_equal(fcf, fcd, decimal=6, err_msg=f"fcf-fcd {name}")


def _check_branch_cut(f, x0, dx, re_sign, im_sign, sig_zero_ok, dtype):
    """x0 lies on a branch cut of f: f is continuous from the direction dx, and from -dx the
    parts change by re_sign and im_sign; with sig_zero_ok a signed zero (-0.0 in the part dx
    moves) stands for the displacement."""
    x0 = np.atleast_1d(x0).astype(dtype)
    dx = np.atleast_1d(dx).astype(dtype)
    if np.dtype(dtype) == np.complex64:
        scale, atol = np.finfo(dtype).eps * 1e2, np.float32(1e-2)
    else:
        scale, atol = np.finfo(dtype).eps * 1e3, 1e-4
    y0 = f(x0)
    step = dx * scale * np.absolute(x0) / np.absolute(dx)
    yp, ym = f(x0 + step), f(x0 - step)
    assert np.all(np.absolute(y0.real - yp.real) < atol), (y0, yp)
    assert np.all(np.absolute(y0.imag - yp.imag) < atol), (y0, yp)
    assert np.all(np.absolute(y0.real - ym.real * re_sign) < atol), (y0, ym)
    assert np.all(np.absolute(y0.imag - ym.imag * im_sign) < atol), (y0, ym)
    if sig_zero_ok:
        jr = (x0.real == 0) & (dx.real != 0)
        ji = (x0.imag == 0) & (dx.imag != 0)
        for j, part in ((jr, "real"), (ji, "imag")):
            if np.any(j):
                x = x0[j]
                setattr(x, part, -0.0)
                ym = f(x)
                assert np.all(np.absolute(y0[j].real - ym.real * re_sign) < atol), (y0[j], ym)
                assert np.all(np.absolute(y0[j].imag - ym.imag * im_sign) < atol), (y0[j], ym)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64], ids=["complex128", "complex64"])
def test_branch_cuts(dtype):
    """test_umath.py::TestComplexFunctions::test_branch_cuts and test_branch_cuts_complex64
    (log and sqrt; the others are not stridewise ops): the cut along the negative real axis,
    continuous from above, the imaginary part flipping from below and for -0.0j."""
    _check_branch_cut(sw.log, -0.5, 1j, 1, -1, True, dtype)
    _check_branch_cut(sw.sqrt, -0.5, 1j, 1, -1, True, dtype)


def test_against_cmath():
    """test_umath.py::TestComplexFunctions::test_against_cmath (the functions stridewise
    offers): complex128 f at +-1 +-1j within 4 eps of cmath's."""
    import cmath
    atol = 4 * np.finfo(complex).eps
    for name in COMPLEX_FUNCS:
        for p in [-1 - 1j, -1 + 1j, +1 - 1j, +1 + 1j]:
            a = complex(getattr(sw, name)(np.complex128(p)))
            b = getattr(cmath, name)(p)
            assert abs(a - b) < atol, f"{name} {p}: {a}; cmath: {b}"


# ------------------------------------------------------------------ floating-point classes

FPCLASS = {
    "d": [np.nan, -np.nan, np.inf, -np.inf, -1.0, 1.0, -0.0, 0.0, 2.2251e-308, -2.2251e-308],
    "f": [np.nan, -np.nan, np.inf, -np.inf, -1.0, 1.0, -0.0, 0.0, 1.4013e-045, -1.4013e-045],
}
IS_NAN = np.array([True, True] + [False] * 8)
IS_INF = np.array([False, False, True, True] + [False] * 6)
IS_FINITE = np.array([False] * 4 + [True] * 6)


@pytest.mark.parametrize("stride", [-5, -4, -3, -2, -1, 1, 2, 4, 5, 6, 7, 8, 9, 10])
def test_fpclass(stride):
    """test_umath.py::TestFPClass::test_fpclass: isnan, isinf and isfinite of NaN, inf, +-1,
    +-0 and subnormals in float32 and float64, through strided views (signbit is not a
    stridewise op)."""
    for dt, values in FPCLASS.items():
        arr = np.array(values, dtype=dt)[::stride]
        check(sw.isnan(arr), IS_NAN[::stride], dt)
        check(sw.isinf(arr), IS_INF[::stride], dt)
        check(sw.isfinite(arr), IS_FINITE[::stride], dt)


@pytest.mark.parametrize("dtype", ["d", "f"])
def test_fp_noncontiguous(dtype):
    """test_umath.py::TestFPClass::test_fp_noncontiguous: isnan, isinf and isfinite with a
    non-contiguous input and/or out=, and of a contiguous 2-d array."""
    data = np.array(FPCLASS["d"], dtype=dtype)
    out = np.ndarray(data.shape, dtype="bool")
    ncontig_in, ncontig_out = data[1::3], out[1::3]
    contig_in = np.array(ncontig_in)
    assert not ncontig_in.flags.c_contiguous and not ncontig_out.flags.c_contiguous
    assert contig_in.flags.c_contiguous
    cases = (("isnan", IS_NAN), ("isinf", IS_INF), ("isfinite", IS_FINITE))
    for name, want in cases:
        fn = getattr(sw, name)
        for x in (ncontig_in, contig_in):
            assert fn(x, out=ncontig_out) is ncontig_out
            check(ncontig_out, want[1::3], name)
        check(fn(ncontig_in), want[1::3], name)
        check(fn(np.array(np.array_split(data, 2))), np.array(np.array_split(want, 2)), name)


# ---------------------------------------------------------------------- maximum and minimum

@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_float_nans(name):
    """test_umath.py::TestMaximum::test_float_nans and TestMinimum::test_float_nans: a NaN on
    either side wins."""
    nan = np.nan
    arg1, arg2 = np.array([0, nan, nan]), np.array([nan, 0, nan])
    check(getattr(sw, name)(arg1, arg2), np.array([nan, nan, nan]))


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_complex_nans(name):
    """test_umath.py::TestMaximum::test_complex_nans and TestMinimum::test_complex_nans: a
    complex value with a NaN in either part wins; bit for bit NumPy's where not NaN."""
    nan = np.nan
    for cnan in [complex(nan, 0), complex(0, nan), complex(nan, nan)]:
        arg1 = np.array([0, cnan, cnan], dtype=complex)
        arg2 = np.array([cnan, 0, cnan], dtype=complex)
        got = getattr(sw, name)(arg1, arg2)
        np.testing.assert_equal(got, np.array([nan, nan, nan], dtype=complex))
        check(got, getattr(np, name)(arg1, arg2), repr(cnan))


STRIDED = {
    "maximum": ([-2.0, 1.0, np.nan, 1.0, np.nan, np.nan, np.inf, -3.0],
                [-2.0, np.nan, 10.0, 1.0], [-2.0, 0.0, np.nan], [-2.0, 10.0, np.nan],
                [-2.0, 1.0, 1.0, 10.0, 1.0, 1.0, np.nan, 1.0]),
    "minimum": ([-4.0, -1.0, np.nan, 0.0, np.nan, np.nan, 1.0, -np.inf],
                [-4.0, np.nan, 0.0, 0.0], [-4.0, -1.0, np.nan], [-4.0, 1.0, np.nan],
                [-4.0, 1.0, 1.0, 1.0, 1.0, 1.0, np.nan, 1.0]),
}


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_strided_array(name):
    """test_umath.py::TestMaximum::test_strided_array and TestMinimum::test_strided_array:
    strided and sliced operands, and a strided out= that leaves the other elements alone."""
    arr1 = np.array([-4.0, 1.0, 10.0, 0.0, np.nan, -np.nan, np.inf, -np.inf])
    arr2 = np.array([-2.0, -1.0, np.nan, 1.0, 0.0, np.nan, 1.0, -3.0])
    full, sliced, thirds, into_out, out_after = (np.array(v) for v in STRIDED[name])
    fn = getattr(sw, name)
    out = np.ones(8)
    check(fn(arr1, arr2), full)
    check(fn(arr1[::2], arr2[::2]), full[::2])
    check(fn(arr1[:4:], arr2[::2]), sliced)
    check(fn(arr1[::3], arr2[:3:]), thirds)
    check(fn(arr1[:6:2], arr2[::3], out=out[::3]), into_out)
    check(out, out_after)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64], ids=lambda d: d.__name__)
def test_precision(name, dt):
    """test_umath.py::TestMaximum::test_precision and TestMinimum::test_precision: the extreme
    finite values against an infinity, two neighbouring values, and NaN, kept exactly."""
    dtmin, dtmax = np.finfo(dt).min, np.finfo(dt).max
    d1 = dt(0.1)
    d1_next = np.nextafter(d1, np.inf)
    if name == "maximum":
        cases = [(dtmin, -np.inf, dtmin), (dtmax, -np.inf, dtmax), (d1, d1_next, d1_next),
                 (dtmax, np.nan, np.nan)]
    else:
        cases = [(dtmin, np.inf, dtmin), (dtmax, np.inf, dtmax), (d1, d1_next, d1),
                 (dtmin, np.nan, np.nan)]
    for v1, v2, expected in cases:
        a, b = np.array([v1], dt), np.array([v2], dt)
        check(getattr(sw, name)(a, b), np.array([expected], dt), f"{v1} {v2}")


def test_minimize_no_warns():
    """test_umath.py::TestMinMax::test_minimize_no_warns: minimum(nan, 1) is NaN."""
    a = sw.minimum(np.nan, 1)
    check(a, np.minimum(np.nan, 1))
    assert np.isnan(a)


# ------------------------------------------------------------------ bool, logical, bitwise

def test_bool_exceptions():
    """test_umath.py::TestBool::test_exceptions: negative and subtract of bool arrays raise
    TypeError (positive is not a stridewise op)."""
    a = np.ones(1, dtype=np.bool_)
    with pytest.raises(TypeError):
        sw.negative(a)
    with pytest.raises(TypeError):
        sw.subtract(a, a)


@pytest.mark.parametrize("dtype", "efdFD" + "bBhHiIlLqQ" + "?")
def test_truth_table_logical(dtype):
    """test_umath.py::TestBool::test_truth_table_logical: 2, 3 and 4 are true: logical_or and
    maximum are OR, logical_and and minimum AND, logical_xor and not_equal XOR, in every
    dtype; each also against NumPy's own result (dtype included)."""
    arg1 = np.asarray([0, 0, 3, 2], dtype=dtype)
    arg2 = np.asarray([0, 4, 0, 2], dtype=dtype)
    tables = {
        "logical_or": [False, True, True, True], "maximum": [False, True, True, True],
        "logical_and": [False, False, False, True], "minimum": [False, False, False, True],
        "logical_xor": [False, True, True, False], "not_equal": [False, True, True, False],
    }
    for name, want in tables.items():
        got = getattr(sw, name)(arg1, arg2)
        check(got, getattr(np, name)(arg1, arg2), name)
        np.testing.assert_equal(got.astype(bool), want, err_msg=name)


def test_truth_table_bitwise():
    """test_umath.py::TestBool::test_truth_table_bitwise: bitwise or, and, xor of bool lists."""
    arg1 = [False, False, True, True]
    arg2 = [False, True, False, True]
    check(sw.bitwise_or(arg1, arg2), np.array([False, True, True, True]))
    check(sw.bitwise_and(arg1, arg2), np.array([False, False, False, True]))
    check(sw.bitwise_xor(arg1, arg2), np.array([False, True, True, False]))


@pytest.mark.parametrize("dt", "?" + ALL_INTEGER)
def test_bitwise_values_and_types(dt):
    """test_umath.py::TestBitwiseUFuncs::test_values and test_types: not, or, xor and and of
    all-zero and all-one bit patterns, in the operands' dtype."""
    dt = np.dtype(dt)
    zeros = np.array([0], dtype=dt)
    ones = np.array([-1]).astype(dt)
    check(sw.bitwise_not(zeros), ones)
    check(sw.bitwise_not(ones), zeros)
    table = {
        "bitwise_or": [zeros, ones, ones, ones],
        "bitwise_xor": [zeros, ones, ones, zeros],
        "bitwise_and": [zeros, zeros, zeros, ones],
    }
    for name, wants in table.items():
        for (x, y), want in zip([(zeros, zeros), (zeros, ones), (ones, zeros), (ones, ones)],
                                wants):
            got = getattr(sw, name)(x, y)
            assert got.dtype == dt, name
            check(got, want, name)


@pytest.mark.parametrize("dt", ALL_INTEGER)
@pytest.mark.parametrize("name", ["left_shift", "right_shift"])
def test_shift_all_bits(dt, name):
    """test_scalarmath.py::TestBitShifts::test_shift_all_bits (gh-2449): 5 and -5 (wrapped
    into an unsigned dtype) shifted by the dtype's width and by 4 more give 0, except a
    negative value shifted right, which keeps its sign: -1. Upstream's 32-element arrays,
    and here also a shift count given as a NumPy scalar, and 31 elements (a pack's tail)."""
    dt = np.dtype(dt)
    width = 8 * dt.itemsize
    for value in (5, -5):
        for shift in (width, width + 4):
            want = -1 if value < 0 and dt.kind == "i" and name == "right_shift" else 0
            x = np.array([value] * 32).astype(dt)
            s = np.array([shift] * 32).astype(dt)
            for got in (getattr(sw, name)(x, s), getattr(sw, name)(x, dt.type(shift)),
                        getattr(sw, name)(x[1:], s[1:])):
                check(got, np.full(got.shape, want, dtype=dt), f"{value} {name} {shift}")


def test_int_logical_not():
    """test_umath.py::TestInt::test_logical_not: logical_not of int16 ones into every other
    element of a bool array; the others untouched."""
    x = np.ones(10, dtype=np.int16)
    o = np.ones(10 * 2, dtype=bool)
    tgt = o.copy()
    tgt[::2] = False
    os_ = o[::2]
    res = sw.logical_not(x, out=os_)
    assert res is os_
    np.testing.assert_array_equal(res, False)
    check(o, tgt)


# -------------------------------------------------------------------- sign, abs, negative

def test_sign():
    """test_umath.py::TestSign::test_sign: sign of +-inf, NaN, 0, +-3, also into out=."""
    a = np.array([np.inf, -np.inf, np.nan, 0.0, 3.0, -3.0])
    out = np.zeros(a.shape)
    tgt = np.array([1., -1., np.nan, 0.0, 1.0, -1.0])
    check(sw.sign(a), tgt)
    res = sw.sign(a, out)
    assert res is out
    check(out, tgt)


def test_sign_complex():
    """test_umath.py::TestSign::test_sign_complex: NumPy 2's complex sign z / |z|: the unit
    along an axis for one infinite part, NaN for two infinite parts or any NaN, 0 for 0; also
    into out= (the result is out). Part for part NumPy's, signed zeros included."""
    a = np.array([
        np.inf, -np.inf, complex(0, np.inf), complex(0, -np.inf),
        complex(np.inf, np.inf), complex(np.inf, -np.inf),
        np.nan, complex(0, np.nan), complex(np.nan, np.nan),
        0.0, 3.0, -3.0, -2j, 3.0 + 4.0j, -8.0 + 6.0j])
    out = np.zeros(a.shape, a.dtype)
    tgt = np.array([1., -1., 1j, -1j] + [complex(np.nan, np.nan)] * 5
                   + [0.0, 1.0, -1.0, -1j, 0.6 + 0.8j, -0.8 + 0.6j])
    res = sw.sign(a)
    np.testing.assert_equal(res, tgt)
    check(res, numpy(np.sign, a))
    res = sw.sign(a, out)
    assert res is out
    np.testing.assert_equal(res, tgt)
    check(res, numpy(np.sign, a))


def test_abs_neg_blocked():
    """test_umath.py::TestAbsoluteNegative::test_abs_neg_blocked: abs and negative into out=
    at several offsets (in place included), and with NaN or +-inf at each position."""
    for dt, sz in [(np.float32, 11), (np.float64, 5)]:
        for out, inp, msg in unary_alignments(dt, sz):
            want = np.absolute(inp)
            sw.abs(inp, out=out)
            check(out, want, msg)
            assert (out >= 0).all()
            want = -1 * inp
            sw.negative(inp, out=out)
            check(out, want, msg)
            for v in [np.nan, -np.inf, np.inf]:
                for i in range(inp.size):
                    d = np.arange(inp.size, dtype=dt)
                    inp[:] = -d
                    inp[i] = v
                    d[i] = -v if v == -np.inf else v
                    check(sw.abs(inp), d, msg)
                    sw.abs(inp, out=out)
                    check(out, d, msg)
                    check(sw.negative(inp), -1 * inp, msg)
                    want = -1 * inp
                    sw.negative(inp, out=out)
                    check(out, want, msg)


def test_abs_neg_lower_align():
    """test_umath.py::TestAbsoluteNegative::test_lower_align: float64 elements off their
    alignment (a view at byte offset 4), in and out (in place included)."""
    d = np.zeros(23 * 8, dtype=np.int8)[4:-4].view(np.float64)
    assert not d.flags.aligned
    check(sw.abs(d), np.abs(d))
    check(sw.negative(d), np.negative(d))
    ref = d.copy()
    for fn, ufunc, src in ((sw.negative, np.negative, "self"), (sw.negative, np.negative, "ones"),
                           (sw.abs, np.abs, "self"), (sw.abs, np.abs, "ones")):
        x = d if src == "self" else np.ones_like(d)
        want = ufunc(ref if src == "self" else np.ones_like(ref))
        fn(x, out=d)
        check(d, want, f"{fn.__name__} {src}")
        ref = want


@pytest.mark.parametrize("dtype", ["d", "f", "int32", "int64"])
@pytest.mark.parametrize("big", [True, False])
def test_negative_noncontiguous(dtype, big):
    """test_umath.py::TestAbsoluteNegative::test_noncontiguous: negative with contiguous and
    strided inputs and outputs, and of a contiguous 2-d array."""
    data = np.array([-1.0, 1.0, -0.0, 0.0, 2.2251e-308, -2.5, 2.5, -6,
                     6, -2.2251e-308, -8, 10], dtype=dtype)
    expect = np.array([1.0, -1.0, 0.0, -0.0, -2.2251e-308, 2.5, -2.5, 6,
                       -6, 2.2251e-308, 8, -10], dtype=dtype)
    if big:
        data, expect = np.repeat(data, 10), np.repeat(expect, 10)
    out = np.ndarray(data.shape, dtype=dtype)
    ncontig_in, ncontig_out = data[1::2], out[1::2]
    contig_in = np.array(ncontig_in)
    check(sw.negative(contig_in), expect[1::2])
    check(sw.negative(contig_in, out=ncontig_out), expect[1::2])
    check(sw.negative(ncontig_in), expect[1::2])
    check(sw.negative(ncontig_in, out=ncontig_out), expect[1::2])
    check(sw.negative(np.array(np.array_split(data, 2))), np.array(np.array_split(expect, 2)))


@pytest.mark.parametrize("func", ["floor", "ceil", "trunc"])
@pytest.mark.parametrize("dtype", [np.bool_, np.float64, np.float32, np.int64, np.uint32],
                         ids=lambda d: np.dtype(d).name)
def test_rounding_output_dtype(func, dtype):
    """test_umath.py::TestRoundingFunctions::test_output_dtype: floor, ceil and trunc of
    integral values are the values, in the input's dtype (bool and integers included)."""
    arr = np.array([-2, 0, 4, 8]).astype(dtype)
    result = getattr(sw, func)(arr)
    assert result.dtype == dtype
    check(result, arr)
    check(result, getattr(np, func)(arr))


def test_copysign():
    """test_umath.py::test_copysign: copysign(1, -1) is -1; copysign(0, -1) is -0.0 and
    copysign(0, 1) +0.0; copysign(NaN, -1) has the sign bit set, copysign(NaN, 1) clear."""
    check(sw.copysign(1, -1), np.copysign(1, -1))
    assert sw.copysign(1, -1) == -1
    assert np.signbit(sw.copysign(0, -1)) and not np.signbit(sw.copysign(0, 1))
    assert np.signbit(sw.copysign(np.nan, -1))
    assert not np.signbit(sw.copysign(np.nan, 1))
    assert np.isnan(sw.copysign(np.nan, -1))


# ------------------------------------------------------------ test_numeric.py::TestClip

NR, NC = 5, 3


@pytest.fixture
def rs():
    return np.random.RandomState(20240917)


def _neg_byteorder(a):
    a = np.asarray(a)
    return a.astype(a.dtype.newbyteorder(">" if np.little_endian else "<"))


def strict_clip_equal(got, want, msg=""):
    """test_numeric.py's assert_array_strict_equal: values and dtype, the same flags
    (contiguity, ownership, alignment, writeability) and byte order as NumPy's result."""
    check(got, want, msg)
    assert got.flags == want.flags, (msg, got.flags, want.flags)
    assert got.dtype.isnative == want.dtype.isnative, msg


def _data(rs, kind, n=NR, m=NC):
    if kind == "double":
        return rs.randn(n, m)
    if kind == "complex":
        return rs.randn(n, m) + 1.j * rs.rand(n, m)
    if kind == "nonnative":
        return _neg_byteorder(rs.randn(n, m))
    if kind == "int":
        return (10 * rs.rand(n, m)).astype(np.int64)
    if kind == "int32":
        return (10 * rs.rand(n, m)).astype(np.int32)
    raise ValueError(kind)


@pytest.mark.parametrize("dtype", "?bhilqpBHILQPefdFD")
def test_clip_ones_pathological(dtype):
    """test_numeric.py::TestClip::test_ones_pathological (gh-12519): clip(ones, 1, 0) is zeros
    (the upper bound wins), in NumPy's result dtype."""
    arr = np.ones(10, dtype=dtype)
    got = sw.clip(arr, 1, 0)
    check(got, np.clip(arr, 1, 0))
    np.testing.assert_equal(got, np.zeros(10, dtype=dtype))


# (upstream test, data kind, lower bound, upper bound): clip(a, m, M) with no out=
CLIP_SIMPLE = [
    ("test_simple_double", "double", 0.1, 0.6),
    ("test_simple_int", "int", -2, 4),
    ("test_array_double", "double", "zeros", "zeros+0.5"),
    ("test_simple_nonnative[input]", "nonnative", -0.5, 0.6),
    ("test_simple_nonnative[bound]", "double", -0.5, "nonnative 0.6"),
    ("test_simple_complex[complex input]", "3*complex", -0.5, 1.),
    ("test_simple_complex[complex bounds]", "3*double", -0.5 + 1.j, 1. + 2.j),
    ("test_type_cast_01", "double", -0.5, 0.6),
    ("test_type_cast_02", "int->int32", -2, 4),
    ("test_type_cast_03", "int32", np.float64(-2), np.float64(4)),
    ("test_type_cast_04", "int32", np.float32(-2), np.float32(4)),
    ("test_type_cast_05", "int", "-0.5*zeros", 1.),
    ("test_type_cast_06", "double", "nonnative 0.5", 1.),
    ("test_type_cast_07", "nonnative", "-0.5*ones", 1.),
    ("test_type_cast_08", "nonnative", -0.5, 1.),
    ("test_type_cast_09", "double", "nonnative -0.5*ones", 1.),
]


def _bound(spec, a):
    if not isinstance(spec, str):
        return spec
    return {
        "zeros": lambda: np.zeros(a.shape),
        "zeros+0.5": lambda: np.zeros(a.shape) + 0.5,
        "nonnative 0.6": lambda: _neg_byteorder(0.6),
        "-0.5*zeros": lambda: -0.5 * np.zeros(a.shape),
        "nonnative 0.5": lambda: _neg_byteorder(0.5),
        "-0.5*ones": lambda: -0.5 * np.ones(a.shape),
        "nonnative -0.5*ones": lambda: _neg_byteorder(-0.5 * np.ones(a.shape)),
    }[spec]()


@pytest.mark.parametrize("name,kind,m,M", CLIP_SIMPLE, ids=[c[0] for c in CLIP_SIMPLE])
def test_clip_simple(rs, name, kind, m, M):
    """test_numeric.py::TestClip::<name>: clip of native and non-native, int, double and
    complex arrays by scalar, array, non-native and complex bounds (one line per upstream
    test: see CLIP_SIMPLE), strictly NumPy's clip (dtype, flags, byte order)."""
    if kind.startswith("3*"):
        a = 3 * _data(rs, kind[2:])
    elif kind == "int->int32":
        a = _data(rs, "int").astype(np.int32)
    else:
        a = _data(rs, kind)
    m, M = _bound(m, a), _bound(M, a)
    strict_clip_equal(sw.clip(a, m, M), np.clip(a, m, M), name)


def test_clip_complex():
    """test_numeric.py::TestClip::test_clip_complex (gh-5354): complex ones clipped by their
    own min with no upper bound, and by their max with no lower bound, are unchanged."""
    a = np.ones(10, dtype=complex)
    m, M = a.min(), a.max()
    strict_clip_equal(sw.clip(a, m, None), a)
    strict_clip_equal(sw.clip(a, None, M), a)


def test_clip_non_contig(rs):
    """test_numeric.py::TestClip::test_clip_non_contig: a view neither C- nor F-contiguous."""
    a = _data(rs, "double", NR * 2, NC * 3)[::2, ::3]
    assert not a.flags["F_CONTIGUOUS"] and not a.flags["C_CONTIGUOUS"]
    strict_clip_equal(sw.clip(a, -1.6, 1.7), np.clip(a, -1.6, 1.7))


# (upstream test, data kind, lower bound, upper bound, out dtype): clip(a, m, M, out=) where
# NumPy's default casting ('same_kind') allows the out
CLIP_OUT = [
    ("test_simple_out", "double", -0.5, 0.6, np.float64),
    ("test_clip_with_out_simple", "double", -0.5, 0.6, np.float64),
    ("test_simple_int64_out", "int32", np.int32(-1), np.int32(1), np.int64),
    ("test_clip_with_out_simple_int32", "int32", np.int32(-1), np.int32(1), np.int64),
    ("test_type_cast_10", "int", np.float32(-0.5), np.float32(1), np.float32),
    ("test_type_cast_12", "int", np.int32(0), np.int32(1), np.float32),
]


@pytest.mark.parametrize("name,kind,m,M,out_dtype", CLIP_OUT, ids=[c[0] for c in CLIP_OUT])
def test_clip_out(rs, name, kind, m, M, out_dtype):
    """test_numeric.py::TestClip::<name>: clip into an out= of the result's dtype or a wider
    one (one line per upstream test: see CLIP_OUT); the call returns out."""
    a = _data(rs, kind)
    got, want = np.zeros(a.shape, out_dtype), np.zeros(a.shape, out_dtype)
    assert sw.clip(a, m, M, out=got) is got
    np.clip(a, m, M, out=want)
    strict_clip_equal(got, want, name)


def test_clip_type_cast_11(rs):
    """test_numeric.py::TestClip::test_type_cast_11: a non-native input clipped into a
    big-endian out=."""
    a = _data(rs, "nonnative")
    b = a.copy().astype(a.dtype.newbyteorder(">"))
    bt = b.copy()
    sw.clip(a, -0.5, 1., out=b)
    np.clip(a, -0.5, 1., out=bt)
    strict_clip_equal(b, bt)


def test_simple_int32_inout_default_casting(rs):
    """test_numeric.py::TestClip::test_simple_int32_inout[None]: int32 clipped by float64
    scalars (a float64 result) into an int32 out= raises TypeError under the default casting;
    out is left alone."""
    a = _data(rs, "int32")
    ac = np.zeros(a.shape, dtype=np.int32)
    with pytest.raises(TypeError):
        np.clip(a, np.float64(0), np.float64(2), out=ac.copy())
    with pytest.raises(TypeError):
        sw.clip(a, np.float64(0), np.float64(2), out=ac)
    check(ac, np.zeros(a.shape, dtype=np.int32))


# (upstream test, data kind, lower bound, upper bound): clip(a, m, M, out=int32 array,
# casting="unsafe")
CLIP_UNSAFE = [
    ("test_simple_int32_inout[unsafe]", "int32", np.float64(0), np.float64(2)),
    ("test_simple_int64_inout", "int32", "zeros", np.float64(1)),
    ("test_simple_int32_out", "double", -1.0, 2.0),
    ("test_clip_with_out_simple2", "int32", np.float64(0), np.float64(2)),
    ("test_clip_with_out_array_int32", "int32", "zeros", np.float64(1)),
    ("test_clip_with_out_array_outint32", "double", -1.0, 2.0),
]


@pytest.mark.parametrize("name,kind,m,M", CLIP_UNSAFE, ids=[c[0] for c in CLIP_UNSAFE])
def test_clip_out_casting_unsafe(rs, name, kind, m, M):
    """test_numeric.py::TestClip::<name>: clip into an int32 out= that only casting='unsafe'
    allows (a float64 result), as NumPy's clip takes that keyword."""
    a = _data(rs, kind)
    m = _bound(m, a)
    got, want = np.zeros(a.shape, np.int32), np.zeros(a.shape, np.int32)
    np.clip(a, m, M, out=want, casting="unsafe")
    sw.clip(a, m, M, out=got, casting="unsafe")
    strict_clip_equal(got, want, name)


@pytest.mark.parametrize("name,m", [("test_simple_inplace_01", "zeros"),
                                    ("test_clip_inplace_array", "zeros"),
                                    ("test_simple_inplace_02", -0.5),
                                    ("test_clip_inplace_simple", -0.5)])
def test_clip_inplace(rs, name, m):
    """test_numeric.py::TestClip::test_simple_inplace_01, _02, test_clip_inplace_array and
    test_clip_inplace_simple: clip(a, m, M, out=a) by array or scalar bounds."""
    a = _data(rs, "double")
    ac = a.copy()
    m = _bound(m, a)
    M = 1.0 if isinstance(m, np.ndarray) else 0.6
    sw.clip(a, m, M, out=a)
    np.clip(ac, m, M, out=ac)
    strict_clip_equal(a, ac, name)


def test_noncontig_inplace(rs):
    """test_numeric.py::TestClip::test_noncontig_inplace: in place on a non-contiguous view."""
    a = _data(rs, "double", NR * 2, NC * 3)[::2, ::3]
    assert not a.flags["F_CONTIGUOUS"] and not a.flags["C_CONTIGUOUS"]
    ac = a.copy()
    sw.clip(a, -0.5, 0.6, out=a)
    np.clip(ac, -0.5, 0.6, out=ac)
    check(a, ac)


def test_clip_with_out_transposed():
    """test_numeric.py::TestClip::test_clip_with_out_transposed: a transposed out=."""
    a = np.arange(16).reshape(4, 4)
    out = np.empty_like(a).T
    sw.clip(a, 4, 10, out=out)
    check(out, np.clip(a, 4, 10))


def test_clip_with_out_memory_overlap():
    """test_numeric.py::TestClip::test_clip_with_out_memory_overlap: out= overlapping the
    input one row further on gives the clip of the original rows."""
    a = np.arange(16).reshape(4, 4)
    ac = a.copy()
    sw.clip(a[:-1], 4, 10, out=a[1:])
    check(a[1:], np.clip(ac[:-1], 4, 10))
    check(a[0], ac[0])


def test_clip_func_takes_out(rs):
    """test_numeric.py::TestClip::test_clip_func_takes_out: clip(a, m, M, out=a) returns a."""
    a = _data(rs, "double")
    ac = a.copy()
    a2 = sw.clip(a, -0.5, 0.6, out=a)
    np.clip(ac, -0.5, 0.6, out=ac)
    strict_clip_equal(a2, ac)
    assert a2 is a


def test_clip_nan():
    """test_numeric.py::TestClip::test_clip_nan: a NaN bound (either, or both) makes every
    element NaN."""
    d = np.arange(7.)
    for lo, hi in ((np.nan, None), (None, np.nan), (np.nan, np.nan), (-2, np.nan),
                   (np.nan, 10)):
        got = sw.clip(d, lo, hi)
        np.testing.assert_equal(got, np.full(7, np.nan))
        check(got, np.clip(d, lo, hi), f"{lo} {hi}")


def test_clip_all_none():
    """test_numeric.py::TestClip::test_clip_all_none (object there, int64 here): clip with no
    bound at all is the identity."""
    arr = np.arange(10)
    check(sw.clip(arr, None, None), np.clip(arr, None, None))


@pytest.mark.parametrize("amin, amax", [(1, 0), (1, np.zeros(10)), (np.ones(10), np.zeros(10))],
                         ids=["scalars", "scalar-array", "arrays"])
def test_clip_value_min_max_flip(amin, amax):
    """test_numeric.py::TestClip::test_clip_value_min_max_flip: with min above max the result
    is minimum(maximum(a, min), max)."""
    a = np.arange(10, dtype=np.int64)
    expected = np.minimum(np.maximum(a, amin), amax)
    got = sw.clip(a, amin, amax)
    check(got, expected)
    check(got, np.clip(a, amin, amax))


def test_clip_scalar_nan_propagation():
    """test_numeric.py::TestClip::test_clip_scalar_nan_propagation: int64 zeros clipped by a
    0-d float64 NaN and int32 zeros: NaN, as minimum(maximum(...)) gives."""
    arr, amin, amax = np.zeros(10, dtype=np.int64), np.array(np.nan), np.zeros(10, np.int32)
    expected = np.minimum(np.maximum(arr, amin), amax)
    got = sw.clip(arr, amin, amax)
    check(got, expected)
    check(got, np.clip(arr, amin, amax))


@pytest.mark.parametrize("dtype,lo,hi", [
    ("int32", -2**32 - 1, 2**32), ("int32", -2**320, None), ("int32", None, 2**300),
    ("int32", -1000, 2**32), ("int32", -2**32 - 1, 1000), ("uint8", -1, 129)])
def test_out_of_bound_pyints(dtype, lo, hi):
    """test_numeric.py::TestClip::test_out_of_bound_pyints: Python int bounds beyond the
    array's dtype clip in that dtype (a new array) without error."""
    a = np.arange(10000).astype(dtype)
    c = sw.clip(a, lo, hi)
    assert not np.may_share_memory(a, c)
    assert c.dtype == a.dtype
    if lo is not None:
        assert (c >= lo).all()
    if hi is not None:
        assert (c <= hi).all()
    check(c, np.clip(a, lo, hi))


def test_clip_property():
    """test_numeric.py::TestClip::test_clip_property, as a deterministic Hypothesis run:
    integer and float arrays (either byte order) clipped by scalars or mutually broadcastable
    arrays of integer and float dtypes, no NaN bounds; the result has result_type(a, min,
    max) and equals minimum(max, maximum(a, min)) in that dtype, and NumPy's clip."""
    pytest.importorskip("hypothesis")
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hynp

    numeric = hynp.integer_dtypes() | hynp.floating_dtypes()

    @settings(max_examples=60, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data(), arr=hynp.arrays(dtype=numeric, shape=hynp.array_shapes()))
    def run(data, arr):
        in_shapes, _ = data.draw(hynp.mutually_broadcastable_shapes(num_shapes=2,
                                                                     base_shape=arr.shape))
        s = numeric.flatmap(lambda x: hynp.from_dtype(x, allow_nan=False))
        amin = data.draw(s | hynp.arrays(dtype=numeric, shape=in_shapes[0],
                                         elements={"allow_nan": False}))
        amax = data.draw(s | hynp.arrays(dtype=numeric, shape=in_shapes[1],
                                         elements={"allow_nan": False}))
        result = sw.clip(arr, amin, amax)
        t = np.result_type(arr, amin, amax)
        expected = np.minimum(amax, np.maximum(arr, amin, dtype=t), dtype=t)
        assert result.dtype == t
        np.testing.assert_array_equal(result, expected)
        # values, dtype and shape; the sign of a zero tie is test_clip_signed_zero_ties's
        np.testing.assert_array_equal(result, np.clip(arr, amin, amax), strict=True)

    run()


ZERO_TIES = [(0.0, -0.0), (-0.0, 0.0), (0.0, 0.0), (-0.0, -0.0)]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("bounds", ["python floats", "numpy scalars", "0-d arrays",
                                    "1-element arrays", "arrays"])
def test_clip_signed_zero_ties(dtype, bounds):
    """test_numeric.py::TestClip::test_clip_property's falsifying example (int8 [0] clipped by
    int8(0) and float32(-0.0)) taken further: [+0.0, -0.0] clipped by each pair of bounds from
    +-0.0, sign bits compared with NumPy's clip of the same operands (all four pairs in one
    assertion). NumPy's float32 and float64 loops keep x on a tie when both bounds are constant
    along the loop (scalars, 0-d arrays, a broadcast 1-element array) and return the bound
    when they are arrays; its float16 loop keeps x."""
    x = np.array([0.0, -0.0], dtype)
    got, want = [], []
    for lo, hi in ZERO_TIES:
        m, M = {"python floats": (lo, hi),
                "numpy scalars": (dtype(lo), dtype(hi)),
                "0-d arrays": (np.array(lo, dtype), np.array(hi, dtype)),
                "1-element arrays": (np.full(1, lo, dtype), np.full(1, hi, dtype)),
                "arrays": (np.full(2, lo, dtype), np.full(2, hi, dtype))}[bounds]
        got.append(sw.clip(x, m, M))
        want.append(np.clip(x, m, M))
    check(np.stack(got), np.stack(want),
          "rows: clip([+0.0, -0.0], lo, hi) for (lo, hi) in " + repr(ZERO_TIES))


# ----------------------------------------------------------------------------- log, promotion

@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_log_values_maxofdtype(dtype):
    """test_umath.py::TestLog::test_log_values_maxofdtype (no long double; no floating-point
    flags exist here): log of the dtype's largest finite value is finite, NumPy's within
    TOLERANCE_ULP, for a one-element array and a NumPy scalar."""
    from stridewise.ops.builtins import TOLERANCE_ULP
    x = np.finfo(dtype).max
    for arg in (np.array([x]), x):
        got, want = sw.log(arg), numpy(np.log, arg)
        assert np.isfinite(got).all() and np.asarray(got).dtype == dtype
        np.testing.assert_array_max_ulp(got, want, TOLERANCE_ULP["log"][np.dtype(dtype).name])
        assert type(got) is type(want)


@pytest.mark.parametrize("name", ["exp", "sqrt"])
def test_promotion_corner_cases(name):
    """test_umath.py::TestComplexFunctions::test_promotion_corner_cases (exp and sqrt of the
    functions stridewise offers; log, sin and cos share their promotion and cost a float16
    kernel each): f(float16(1)) and f(uint8(1)) are float16 (NumPy's smallest loop an 8-bit integer
    casts to safely), f(int16(1)) float32; NumPy scalars in, NumPy scalars out, NumPy's values
    (transcendental ones within TOLERANCE_ULP)."""
    from stridewise.ops.builtins import TOLERANCE_ULP
    op, ufunc = getattr(sw, name), getattr(np, name)
    for x, dt in ((np.float16(1), np.float16), (np.uint8(1), np.float16), (np.int16(1), np.float32)):
        got, want = op(x), numpy(ufunc, x)
        assert type(got) is type(want) is dt, (name, x.dtype, type(got))
        ulps = TOLERANCE_ULP.get(name, {}).get(np.dtype(dt).name, 0)
        np.testing.assert_array_max_ulp(got, want, ulps)


# ----------------------------------------------------------------------------- test_scalarmath's array ops

def binary_alignments(dtype, max_size):
    """Output and input views as upstream's binary alignment helper lays them out: out of
    place, in place into either input, each operand shifted by one, and out aliasing x1 one
    element either way."""
    for off in range(3):
        for n in range(off + 2, max(off + 3, max_size)):
            def fresh():
                return np.arange(n, dtype=dtype)[off:]
            out = np.empty(n, dtype)[off:]
            yield out, fresh(), fresh(), f"offset {off} size {n} out of place"
            d = fresh()
            yield d, d, fresh(), f"offset {off} size {n} in place 1"
            d = fresh()
            yield d, fresh(), d, f"offset {off} size {n} in place 2"
            yield out[1:], fresh()[:-1], fresh()[:-1], f"offset {off} size {n - 1}, out +1"
            yield out[:-1], fresh()[1:], fresh()[:-1], f"offset {off} size {n - 1}, x1 +1"
            yield out[:-1], fresh()[:-1], fresh()[1:], f"offset {off} size {n - 1}, x2 +1"
            a = fresh()
            yield a[1:], a[:-1], fresh()[:-1], f"offset {off} size {n - 1}, out aliases x1 +1"
            a = fresh()
            yield a[:-1], a[1:], fresh()[:-1], f"offset {off} size {n - 1}, out aliases x1 -1"
            a = fresh()
            yield a[:-1], a[:-1], fresh()[1:], f"offset {off} size {n - 1}, aliased, x2 +1"


def test_blocked():
    """test_scalarmath.py::TestBaseMath::test_blocked: at every alignment of the binary helper
    (float32 up to 11 elements): ones + zeros, ones + 2,
    1 + zeros, and into out=; square(x) against multiply(x, x) and (floats) reciprocal(x)
    against divide(1, x) for x = 1, 2, 3, ...; 2 + ones into out=. Each result is NumPy's for
    the same operands, exactly (upstream: to 7 decimals). float64's 7-element and int32's
    11-element sweeps are left out: they run float32's kernels in other dtypes, and each
    kernel is a compile on CI's clock."""
    for dt, sz in ((np.float32, 11),):
        for out, x1, x2, msg in binary_alignments(dt, sz):
            ones = np.ones_like(x1)
            x1[...] = 1
            x2[...] = 0
            check(sw.add(x1, x2), ones, msg)
            check(sw.add(x1, 2), ones + 2, msg)
            check(sw.add(1, x2), ones, msg)
            sw.add(x1, x2, out=out)
            check(out, ones, msg)
            x2[...] += np.arange(x2.size, dtype=dt) + 1
            check(sw.square(x2), np.multiply(x2, x2), msg)
            check(sw.square(x2), sw.multiply(x2, x2), msg)
            check(sw.reciprocal(x2), numpy(np.divide, 1, x2), msg)
            check(sw.reciprocal(x2), sw.divide(1, x2), msg)
            x1[...] = 1
            sw.add(x1, 2, out=out)
            check(out, ones + 2, msg)
            x2[...] = 1
            sw.add(2, x2, out=out)
            check(out, ones + 2, msg)


def test_lower_align_scalarmath():
    """test_scalarmath.py::TestBaseMath::test_lower_align: float64 views at byte offset 4
    (unaligned), in and out: d + d is d * 2, and add into an unaligned out= with d and ones in
    either order gives NumPy's sums."""
    d = np.zeros(23 * 8, dtype=np.int8)[4:-4].view(np.float64)
    o = np.zeros(23 * 8, dtype=np.int8)[4:-4].view(np.float64)
    assert not d.flags.aligned and not o.flags.aligned
    d[...] = np.arange(d.size) * 0.75
    check(sw.add(d, d), d * 2)
    check(sw.add(d, d), sw.multiply(d, 2))
    for x, y in ((d, d), (np.ones_like(d), d), (d, np.ones_like(d))):
        assert sw.add(x, y, out=o) is o
        check(o, np.add(x, y))
        check(sw.add(x, y), np.add(x, y))


def test_inplace_floordiv_handling():
    """test_scalarmath.py::TestModulus::test_inplace_floordiv_handling (gh-12927): int64 //=
    uint64 in place (out= x1) promotes to float64, which same_kind casting refuses into the
    int64 x1: TypeError (NumPy's UFuncTypeError), and x1 is left alone."""
    a = np.array([1, 2], np.int64)
    b = np.array([1, 2], np.uint64)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'floor_divide' output"):
        np.floor_divide(a, b, out=a)
    with pytest.raises(TypeError):
        sw.floor_divide(a, b, out=a)
    check(a, np.array([1, 2], np.int64))


@pytest.mark.parametrize("t", [np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_complex_scalar_division(t):
    """test_scalarmath.py::TestComplexDivision::test_zero_division, test_signed_zeros and
    test_branches, through sw.divide of NumPy complex scalars: over complex zero, 1, inf + inf j,
    inf + NaN j and NaN + inf j are infinite, NaN + NaN j and 0 NaN; eight signed-zero quotients
    part for part with upstream's signs; (2 + 1j) / (2 + 1j) and (1 + 2j) / (1 + 2j) are 1 + 0j
    (both of Smith's branches). Each a NumPy scalar of t, NumPy's value part for part."""
    a = t(0.0)
    for num, kind in ((1.0, "inf"), (complex(np.inf, np.inf), "inf"), (complex(np.inf, np.nan), "inf"),
                      (complex(np.nan, np.inf), "inf"), (complex(np.nan, np.nan), "nan"), (0.0, "nan")):
        got = sw.divide(t(num), a)
        assert type(got) is t
        assert (np.isinf(got) if kind == "inf" else np.isnan(got)), (num, got)
        check(got, numpy(np.divide, t(num), a), repr(num))
    signed = (((0.0, -1.0), (0.0, 1.0), (-1.0, -0.0)), ((0.0, -1.0), (0.0, -1.0), (1.0, -0.0)),
              ((0.0, -1.0), (-0.0, -1.0), (1.0, 0.0)), ((0.0, -1.0), (-0.0, 1.0), (-1.0, 0.0)),
              ((0.0, 1.0), (0.0, -1.0), (-1.0, 0.0)), ((0.0, -1.0), (0.0, -1.0), (1.0, -0.0)),
              ((-0.0, -1.0), (0.0, -1.0), (1.0, -0.0)), ((-0.0, 1.0), (0.0, -1.0), (-1.0, -0.0)),
              ((2.0, 1.0), (2.0, 1.0), (1.0, 0.0)), ((1.0, 2.0), (1.0, 2.0), (1.0, 0.0)))
    for n, d, ex in signed:
        x, y = t(complex(*n)), t(complex(*d))
        got = sw.divide(x, y)
        check(got, np.divide(x, y), f"{n} / {d}")
        assert (got.real, got.imag) == ex, (n, d, got)
        assert np.signbit(got.real) == np.signbit(ex[0]) and np.signbit(got.imag) == np.signbit(ex[1]), \
            (n, d, got)


def test_negative_scalars():
    """test_scalarmath.py::TestNegative::test_result and test_exceptions: -1 of the 8- and
    64-bit integer, every float and complex128 NumPy scalar type (upstream: all of
    AllInteger and AllFloat; each is a kernel compile): the unsigned maximum for unsigned types (wrapping),
    else a value whose sum with 1 is 0; NumPy's negative part for part; negative of a bool
    scalar raises TypeError."""
    for dt in "bqBQefdD":
        a = np.ones((), dtype=dt)[()]
        got = sw.negative(a)
        assert isinstance(got, np.generic) and got.dtype == a.dtype   # (int64 for longlong: one dtype)
        check(got, numpy(np.negative, a), dt)
        if dt in "BQ":
            assert got == np.iinfo(dt).max
        else:
            assert got + a == 0
    with pytest.raises(TypeError):
        sw.negative(np.ones((), dtype=np.bool_)[()])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_numpy_abs(dtype):
    """test_scalarmath.py::TestAbs::test_numpy_abs: abs of a NumPy scalar -1.5 is 1.5; of 0.0
    and -0.0 +0.0; of finfo's max, tiny (smallest normal) and min (negated) exactly their
    magnitude; a real scalar of the part's type, NumPy's bits."""
    real = np.finfo(dtype).dtype.type
    fi = np.finfo(dtype)
    for x, want in ((-1.5, 1.5), (0.0, 0.0), (-0.0, 0.0), (fi.max, fi.max), (fi.tiny, fi.tiny),
                    (fi.min, -fi.min)):
        v = dtype(x)
        got = sw.abs(v)
        assert type(got) is real, (dtype, type(got))
        check(got, np.abs(v), repr(x))
        assert got == real(want) and not np.signbit(got), (x, got)
