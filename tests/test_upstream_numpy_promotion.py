"""NumPy's own promotion and ufunc-calling tests, re-expressed against stridewise: inputs and
expected results from numpy/_core/tests/test_nep50_promotions.py (NEP 50: weak Python
scalars, NumPy scalars beside arrays, Python ints out of a dtype's range),
numpy/_core/tests/test_ufunc.py (keywords, casting=, dtype=, out= in its forms, where=,
broadcasting of out, result types, layouts), numpy/_core/tests/test_umath.py::TestOut and
numpy/_core/tests/test_mem_overlap.py (out= and where= overlapping the inputs; the 1-d cases
without masks are tests/test_call_conventions.py's). Our own test code; the oracle is NumPy
itself on the same arguments (values, dtypes, strides and result types), or upstream's
literals; where NumPy raises, stridewise must raise the same exception class.

Not carried over: long double ('g', 'G'; stridewise has no long double), object, string,
void and datetime dtypes (not among stridewise's fifteen), gufuncs, reductions, ufunc.at,
signature=, and NumPy's warnings (overflow RuntimeWarnings, "'where' used without 'out'"),
which are not asserted either way (kernels raise no floating-point flags). Where upstream's main
branch has changed since the installed NumPy (ufunc.outer's Python scalars, gh-32076), the
installed NumPy is the oracle and the docstring says so."""
import itertools
import operator
import pickle
import warnings

import numpy as np
import pytest

import stridewise as sw
from oracle import same_bits


def check(got, want):
    """NumPy's result: the same Python type, dtype, shape, values bit for bit (signed zeros
    included; any NaN matches any NaN) and, for arrays, strides."""
    assert type(got) is type(want), (type(got), type(want))
    np.testing.assert_array_equal(got, want, strict=True)
    assert same_bits(np.asarray(got), np.asarray(want)), (got, want)
    if isinstance(want, np.ndarray):
        assert got.strides == want.strides, (got.strides, want.strides)


def quiet(fn, *args, **kwargs):
    """NumPy's result with its floating-point warnings silenced (stridewise has none)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]

# stridewise op -> the NumPy ufunc it follows
NP_NAMES = {"abs": "absolute", "bitwise_not": "invert", "pow": "power"}
UFUNCS = {name: getattr(np, NP_NAMES.get(name, name))
          for name in ("abs add bitwise_and bitwise_not bitwise_or bitwise_xor ceil copysign cos "
                       "divide equal exp floor floor_divide fmod greater greater_equal isfinite "
                       "isinf isnan left_shift less less_equal log logical_and logical_not "
                       "logical_or logical_xor maximum minimum multiply negative not_equal pow "
                       "reciprocal remainder right_shift sign sin sqrt square subtract tanh "
                       "trunc").split()}

COMPARISONS = {operator.eq: sw.equal, operator.ne: sw.not_equal, operator.le: sw.less_equal,
               operator.lt: sw.less, operator.ge: sw.greater_equal, operator.gt: sw.greater}


# -- test_nep50_promotions.py ------------------------------------------------------------------

def test_nep50_examples():
    """test_nep50_promotions.py::test_nep50_examples: a Python int keeps a uint8 scalar's
    dtype; an int64 scalar or 0-d array raises a uint8 array's; a uint8 scalar wraps
    (100 + 200 is 44); float32(1) + 3e100 is a float32 inf; float32 0.1 is not float64 0.1,
    and float32 arrays with float64 or int64 scalars compute in float64."""
    cases = [
        (sw.add, np.add, (np.uint8(1), 2), np.uint8),
        (sw.add, np.add, (np.array([1], np.uint8), np.int64(1)), np.int64),
        (sw.add, np.add, (np.array([1], np.uint8), np.array(1, dtype=np.int64)), np.int64),
        (sw.add, np.add, (np.uint8(100), 200), np.uint8),
        (sw.add, np.add, (np.float32(1), 3e100), np.float32),
        (sw.equal, np.equal, (np.array([0.1], np.float32), np.float64(0.1)), np.bool_),
        (sw.add, np.add, (np.array([0.1], np.float32), np.float64(0.1)), np.float64),
        (sw.add, np.add, (np.array([1.0], np.float32), np.int64(3)), np.float64),
    ]
    for fn, np_fn, args, dtype in cases:
        got, want = fn(*args), quiet(np_fn, *args)
        assert got.dtype == dtype, (args, got.dtype)
        check(got, want)
    assert sw.add(np.uint8(100), 200) == 44
    assert np.isinf(sw.add(np.float32(1), 3e100))
    assert not sw.equal(np.array([0.1], np.float32), np.float64(0.1))[0]


@pytest.mark.parametrize("dtype", INTS)
def test_nep50_weak_integers(dtype):
    """test_nep50_promotions.py::test_nep50_weak_integers: a scalar or 0-d array of every
    integer dtype plus the dtype's largest value as a Python int keeps the dtype (and wraps,
    as NumPy's result does)."""
    maxint = int(np.iinfo(dtype).max)
    for x in (dtype(100), np.array(100, dtype=dtype)):
        got = sw.add(x, maxint)
        assert got.dtype == dtype
        check(got, quiet(np.add, x, maxint))


@pytest.mark.parametrize("dtype", "efdFD")
def test_nep50_weak_integers_with_inexact(dtype):
    """test_nep50_promotions.py::test_nep50_weak_integers_with_inexact: twice the largest
    finite value as a Python int beside a float or complex scalar (or 0-d array, with
    dtype= the same): float64 and complex128 raise OverflowError (the int does not convert
    to a float), float16, float32 and complex64 give inf of their own dtype."""
    scalar_type = np.dtype(dtype).type
    too_big_int = int(np.finfo(dtype).max) * 2
    if dtype in "dD":
        with pytest.raises(OverflowError):
            sw.add(scalar_type(1), too_big_int)
        with pytest.raises(OverflowError):
            sw.add(np.array(1, dtype=dtype), too_big_int)
        return
    res = sw.add(scalar_type(1), too_big_int)
    assert res.dtype == dtype and res == np.inf
    check(res, quiet(np.add, scalar_type(1), too_big_int))
    res = sw.add(np.array(1, dtype=dtype), too_big_int, dtype=dtype)
    assert res.dtype == dtype and res == np.inf
    check(res, quiet(np.add, np.array(1, dtype=dtype), too_big_int, dtype=dtype))


@pytest.mark.parametrize("op", ["add", "pow"])
def test_weak_promotion_scalar_path(op):
    """test_nep50_promotions.py::test_weak_promotion_scalar_path (add, power): uint8(3) with
    5 is op(3, 5) in uint8; with 1000 it raises OverflowError; float32(3) with 5.0 is
    op(3.0, 5.0) in float32."""
    fn, np_fn, py = getattr(sw, op), UFUNCS[op], {"add": operator.add, "pow": operator.pow}[op]
    res = fn(np.uint8(3), 5)
    assert res == py(3, 5) and res.dtype == np.uint8
    check(res, np_fn(np.uint8(3), 5))
    with pytest.raises(OverflowError):
        fn(np.uint8(3), 1000)
    res = fn(np.float32(3), 5.0)
    assert res == py(3.0, 5.0) and res.dtype == np.float32
    check(res, np_fn(np.float32(3), 5.0))


def test_nep50_complex_promotion():
    """test_nep50_promotions.py::test_nep50_complex_promotion: complex64(3) plus a Python
    complex past float32's range is a complex64 scalar (overflowed)."""
    res = sw.add(np.complex64(3), complex(2**300))
    assert type(res) is np.complex64
    check(res, quiet(np.add, np.complex64(3), complex(2**300)))


def test_nep50_integer_conversion_errors():
    """test_nep50_promotions.py::test_nep50_integer_conversion_errors: 300 beside a uint8
    array or scalar, and -1 beside a uint8 scalar, raise OverflowError."""
    with pytest.raises(OverflowError):
        sw.add(np.array([1], np.uint8), 300)
    with pytest.raises(OverflowError):
        sw.add(np.uint8(1), 300)
    with pytest.raises(OverflowError):
        sw.add(np.uint8(1), -1)


@pytest.mark.parametrize("op", ["add", "pow"])
def test_nep50_huge_integers(op):
    """test_nep50_promotions.py::test_nep50_huge_integers (add, power): 2**63 beside an
    int64 scalar and 2**64 beside a uint64 one raise OverflowError, as do 2**63 and 2**100
    beside int64(1); 2**63 beside uint64(1) is uint64 and Python's exact result; a Python
    float with 2**100 is a float64 scalar (NumPy's value)."""
    fn, np_fn, py = getattr(sw, op), UFUNCS[op], {"add": operator.add, "pow": operator.pow}[op]
    with pytest.raises(OverflowError):
        fn(np.int64(0), 2**63)
    with pytest.raises(OverflowError):
        fn(np.uint64(0), 2**64)
    res = fn(np.uint64(1), 2**63)
    assert res.dtype == np.uint64 and int(res) == py(1, 2**63)
    check(res, np_fn(np.uint64(1), 2**63))
    with pytest.raises(OverflowError):
        fn(np.int64(1), 2**63)
    with pytest.raises(OverflowError):
        fn(np.int64(1), 2**100)
    want = np_fn(1.0, 2**100)
    assert isinstance(want, np.float64)
    res = fn(1.0, 2**100)
    assert isinstance(res, np.float64)
    check(res, want)


@pytest.mark.parametrize("scalar", [1, 1.0, 1j])
def test_nep50_in_ufunc_outer(scalar):
    """test_nep50_promotions.py::test_nep50_in_ufunc_outer (gh-32076), against the installed
    NumPy: add.outer of a Python scalar and a float32 (3, 2) array, on either side. Upstream's
    main branch (after NumPy 2.4) takes the scalar as weak there (float32, complex64); NumPy
    2.4 converts it to an array first (float64, complex128). stridewise gives the installed
    NumPy's dtype and values."""
    arr = np.arange(6, dtype="float32").reshape(3, 2)
    check(sw.add.outer(scalar, arr), np.add.outer(scalar, arr))
    check(sw.add.outer(arr, scalar), np.add.outer(arr, scalar))


def test_nep50_in_ufunc_outer_strong_operands():
    """test_nep50_promotions.py::test_nep50_in_ufunc_outer_strong_operands: a float64 scalar
    or 0-d array in add.outer with a float32 array gives float64."""
    arr = np.arange(6, dtype="float32").reshape(3, 2)
    for s in (np.float64(1), np.array(1.0)):
        got = sw.add.outer(s, arr)
        assert got.dtype == np.float64
        check(got, np.add.outer(s, arr))


def test_nep50_in_ufunc_outer_huge_integer():
    """test_nep50_promotions.py::test_nep50_in_ufunc_outer_huge_integer: add.outer(2**100, 1)
    raises OverflowError, as add(2**100, 1) does (upstream's main branch; NumPy 2.4 computes
    it in its object loop, a dtype stridewise does not have)."""
    with pytest.raises(OverflowError):
        sw.add(2**100, 1)
    with pytest.raises(OverflowError):
        sw.add.outer(2**100, 1)


# (expected, required operands, optional operands): any mix holding the required ones
# promotes to `expected`; drawn here as pairs (add) and triples (fma, which has no complex).
EXPECTED_PROMOTION = [
    (np.float32, [np.float32], [np.float16, 0.0, np.uint16, np.int16, np.int8, 0]),
    (np.complex64, [np.float32, 0j], [np.float16, 0.0, np.uint16, np.int16, np.int8, 0]),
    (np.float32, [np.int16, np.uint16, np.float16], [np.int8, np.uint8, np.float32, 0.0, 0]),
    (np.int32, [np.int16, np.uint16], [np.int8, np.uint8, 0, np.bool_]),
]


def _operand(kind):
    return np.ones(3, kind) if isinstance(kind, type) else kind


@pytest.mark.parametrize("case", range(len(EXPECTED_PROMOTION)))
def test_expected_promotion(case):
    """test_nep50_promotions.py::test_expected_promotion (np.result_type of any mix that
    holds the required dtypes and Python scalars), through ops: the required operands with
    each optional one in add (two operands, both orders) or fma (three, rotated), and the
    required ones alone; the result dtype is upstream's."""
    expected, required, optional = EXPECTED_PROMOTION[case]
    draws = [required] if len(required) > 1 else []
    if len(required) < 3:
        draws += [required + [extra] for extra in optional]
    checked = 0
    for kinds in draws:
        if len(kinds) == 2:
            orders, fn = [kinds, kinds[::-1]], sw.add
        elif np.complex64 != expected:
            orders, fn = [kinds[k:] + kinds[:k] for k in range(3)], sw.fma
        else:
            continue
        for order in orders:
            got = fn(*[_operand(k) for k in order])
            assert got.dtype == expected, (order, got.dtype)
            checked += 1
    assert checked >= 2


@pytest.mark.parametrize("sctype", [np.int8, np.uint8, np.int64, np.uint64])
@pytest.mark.parametrize("comp", list(COMPARISONS), ids=lambda c: c.__name__)
def test_integer_comparison(sctype, comp):
    """test_nep50_promotions.py::test_integer_comparison: a scalar and an array of 10 in an
    integer dtype compared (either side) with ints in and out of its range (-200, -1, 0, 9,
    10, 11, 2**63, 200) give Python's answer for 10; the scalar's result is a NumPy bool."""
    fn = COMPARISONS[comp]
    for other in [-2 * 100, -1, 0, 9, 10, 11, 2**63, 2 * 100]:
        res = fn(sctype(10), other)
        assert type(res) is np.bool_ and res == comp(10, other), other
        check(res, comp(sctype(10), other))
        arr = np.array([10, 10]).astype(sctype)
        check(fn(arr, other), np.array([comp(10, other)] * 2))
        check(fn(other, arr), np.array([comp(other, 10)] * 2))


@pytest.mark.parametrize("arr", [np.ones((100, 100), dtype=np.uint8)[::2],
                                 np.ones(20000, dtype=">u4"), np.ones(100, dtype=">u4")],
                         ids=["strided uint8", "big-endian long", "big-endian short"])
def test_integer_comparison_with_cast(arr):
    """test_nep50_promotions.py::test_integer_comparison_with_cast: unsigned arrays (a
    strided one, big-endian ones shorter and longer than NumPy's buffer) against -1: >= is
    all True, < all False."""
    got = sw.greater_equal(arr, -1)
    np.testing.assert_array_equal(got, np.ones_like(arr, dtype=bool), strict=True)
    check(got, np.greater_equal(arr, -1))
    got = sw.less(arr, -1)
    np.testing.assert_array_equal(got, np.zeros_like(arr, dtype=bool), strict=True)
    check(got, np.less(arr, -1))


@pytest.mark.parametrize("comp", list(COMPARISONS), ids=lambda c: c.__name__)
def test_integer_integer_comparison(comp):
    """test_nep50_promotions.py::test_integer_integer_comparison: NumPy compares the Python
    ints 2**200 and -2**200 alone in its object loop (Python's answer, a NumPy bool). A
    documented departure (docs/semantics.md): stridewise has no object dtype, and Python
    ints alone past 64 bits raise OverflowError; within 64 bits it gives NumPy's answer."""
    want = getattr(np, COMPARISONS[comp].__name__)(2**200, -2**200)
    assert want == comp(2**200, -2**200)
    with pytest.raises(OverflowError, match="out of bounds for int64 and uint64"):
        COMPARISONS[comp](2**200, -2**200)
    check(COMPARISONS[comp](2**63 - 1, -2**63), getattr(np, COMPARISONS[comp].__name__)(2**63 - 1, -2**63))


# -- test_ufunc.py: keywords, casting=, dtype= -----------------------------------------------------

def test_kwarg_exact():
    """test_ufunc.py::TestUfuncKwargs::test_kwarg_exact: a misspelt keyword (castingx,
    dtypex, extobjx, outx, sigx, signaturex, subokx, wherex) is a TypeError."""
    for kw, value in (("castingx", "safe"), ("dtypex", int), ("extobjx", [4096]), ("outx", None),
                      ("sigx", "ii->i"), ("signaturex", "ii->i"), ("subokx", False),
                      ("wherex", [True])):
        with pytest.raises(TypeError):
            np.add(1, 2, **{kw: value})
        with pytest.raises(TypeError):
            sw.add(1, 2, **{kw: value})


def test_sig_dtype_and_extobj():
    """test_ufunc.py::TestUfuncKwargs::test_sig_signature, test_sig_dtype and
    test_extobj_removed: sig= with signature= or dtype=, and extobj=, are TypeErrors."""
    for kw in ({"sig": "ii->i", "signature": "ii->i"}, {"sig": "ii->i", "dtype": int},
               {"signature": "ii->i", "dtype": int}, {"extobj": [4096]}):
        with pytest.raises(TypeError):
            np.add(1, 2, **kw)
        with pytest.raises(TypeError):
            sw.add(1, 2, **kw)


@pytest.mark.parametrize("op", ["add", "sqrt"])
def test_cast_safety(op):
    """test_ufunc.py::TestUfunc::test_cast_safety: a native float32 array under casting="no"
    is the plain result; a byte-swapped one is refused under "no" (a TypeError) and allowed
    under "equiv"; dtype=float64 is refused under "equiv" and under "safe" is the float64
    computation."""
    fn, np_fn = getattr(sw, op), UFUNCS[op]
    n = 2 if op == "add" else 1
    arr = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    arr_bs = arr.astype(arr.dtype.newbyteorder())
    expected = np_fn(*(arr,) * n)
    check(fn(*(arr,) * n, casting="no"), expected)
    with pytest.raises(TypeError):
        np_fn(*(arr_bs,) * n, casting="no")
    with pytest.raises(TypeError):
        fn(*(arr_bs,) * n, casting="no")
    check(fn(*(arr_bs,) * n, casting="equiv"), expected)
    with pytest.raises(TypeError):
        fn(*(arr_bs,) * n, dtype=np.float64, casting="equiv")
    got = fn(*(arr_bs,) * n, dtype=np.float64, casting="safe")
    check(got, np_fn(*(arr.astype(np.float64),) * n))


@pytest.mark.parametrize("op", ["add", "equal"])
def test_cast_safety_scalar(op):
    """test_ufunc.py::TestUfunc::test_cast_safety_scalar (add, equal; not its object dtype):
    3.0 and 4.0 with dtype=int under "safe", or dtype=float32 under "equiv", are refused; a
    float64 array with 3.0 under "equiv", with 3 under "safe", and an int64 array with 3
    under "equiv" run, with NumPy's results."""
    fn, np_fn = getattr(sw, op), UFUNCS[op]
    with pytest.raises(TypeError):
        fn(3.0, 4.0, dtype=int, casting="safe")
    with pytest.raises(TypeError):
        fn(3.0, 4.0, dtype="float32", casting="equiv")
    for args, casting in (((np.array([3.0]), 3.0), "equiv"), ((np.array([3.0]), 3), "safe"),
                          ((np.array([3]), 3), "equiv")):
        check(fn(*args, casting=casting), np_fn(*args, casting=casting))


def test_cast_safety_scalar_special():
    """test_ufunc.py::TestUfunc::test_cast_safety_scalar_special: an int64 array equal to
    2**300 under casting="equiv" runs (all False, as NumPy)."""
    check(sw.equal(np.array([3]), 2**300, casting="equiv"),
          np.equal(np.array([3]), 2**300, casting="equiv"))


def test_use_output_signature_for_all_arguments():
    """test_ufunc.py::TestUfunc::test_use_output_signature_for_all_arguments (dtype=): power
    of 1.5 and 2.8 with dtype=intp under "unsafe" casts the inputs first (1 ** 2 is 1); under
    the default "same_kind" it is refused."""
    res = sw.pow(1.5, 2.8, dtype=np.intp, casting="unsafe")
    assert res == 1
    check(res, np.power(1.5, 2.8, dtype=np.intp, casting="unsafe"))
    with pytest.raises(TypeError):
        sw.pow(1.5, 2.8, dtype=np.intp)


def test_signature_dtype_instances_allowed():
    """test_ufunc.py::TestUfunc::test_signature_dtype_instances_allowed (dtype=, not its
    timedelta cases): an int64 dtype instance that is not the singleton selects int64; a
    byte-swapped int64 is refused with a TypeError (dtype= selects the DType only, not
    details such as the byte order)."""
    int64_2 = pickle.loads(pickle.dumps(np.dtype("int64")))
    assert int64_2 is not np.dtype("int64")
    got = sw.add(1, 2, dtype=int64_2)
    assert got.dtype == np.int64
    check(got, np.add(1, 2, dtype=int64_2))
    with pytest.raises(TypeError):
        np.add(3, 5, dtype=np.dtype("int64").newbyteorder())
    with pytest.raises(TypeError):
        sw.add(3, 5, dtype=np.dtype("int64").newbyteorder())


@pytest.mark.parametrize("tc", "bIQefdFD")
def test_true_divide(tc):
    """test_ufunc.py::TestUfunc::test_true_divide (a representative of each kind of 'bhilqBHIL
    QefdFD'): 0-d 10 / 20 with either sign, as 0.5 (float64 for integers, the input's float or
    complex type otherwise; NumPy's scalar, bit for bit); dtype= an integer is refused;
    dtype= a real float is refused for complex inputs, else NumPy's result in that dtype;
    dtype= a complex type is NumPy's result in it."""
    dt = np.dtype(tc)
    aa, bb = np.array(10).astype(dt), np.array(20).astype(dt)
    for x, y in itertools.product([aa, -aa], [bb, -bb]):
        res = sw.divide(x, y)
        assert res.dtype.name == ("float64" if tc in "bIQ" else dt.name)
        check(res, quiet(np.true_divide, x, y))
        for tcout in "bhilqBHILQ":
            with pytest.raises(TypeError):
                sw.divide(x, y, dtype=np.dtype(tcout))
        for tcout in "efd":
            if tc in "FD":
                with pytest.raises(TypeError):
                    sw.divide(x, y, dtype=np.dtype(tcout))
                continue
            res = sw.divide(x, y, dtype=np.dtype(tcout))
            assert res.dtype.name == np.dtype(tcout).name
            check(res, quiet(np.true_divide, x, y, dtype=np.dtype(tcout)))
        for tcout in "FD":
            res = sw.divide(x, y, dtype=np.dtype(tcout))
            assert res.dtype.name == np.dtype(tcout).name
            check(res, quiet(np.true_divide, x, y, dtype=np.dtype(tcout)))
    a = np.ones((), dtype=np.bool_)
    for x, want in ((a, 1.0), (~a, 0.0)):
        res = sw.divide(x, a)
        assert res == want and res.dtype.name == "float64"
        check(res, np.true_divide(x, a))


def test_invalid_args():
    """test_ufunc.py::TestUfunc::test_invalid_args (gh-7961): sqrt(None) is a TypeError."""
    with pytest.raises(TypeError):
        sw.sqrt(None)


def test_NotImplemented_not_returned():
    """test_ufunc.py::TestUfunc::test_NotImplemented_not_returned (gh-5964, gh-2091): the
    binary ufuncs with a string array on either side raise TypeError (never return
    NotImplemented)."""
    names = ["pow", "add", "subtract", "multiply", "divide", "floor_divide", "bitwise_and",
             "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "fmod", "maximum",
             "minimum", "remainder", "greater", "greater_equal", "less", "less_equal", "equal",
             "not_equal"]
    a, b, c = np.array("1"), 1, np.array([1.0, 2.0])
    for name in names:
        with pytest.raises(TypeError):
            getattr(sw, name)(a, b)
        with pytest.raises(TypeError):
            getattr(sw, name)(c, a)


# -- test_ufunc.py: out= ---------------------------------------------------------------------------

def test_out_broadcasts():
    """test_ufunc.py::TestUfunc::test_out_broadcasts: an out of (5, 4, 3) broadcasts (1, 3)
    inputs along a dim of 1 and a new one (int64 sums cast into float64)."""
    arr = np.arange(3).reshape(1, 3)
    out, want = np.empty((5, 4, 3)), np.empty((5, 4, 3))
    assert sw.add(arr, arr, out=out) is out
    assert (out == np.arange(3) * 2).all()
    np.add(arr, arr, out=want)
    check(out, want)


@pytest.mark.parametrize("arr,out", [([2], np.empty(())), ([1, 2], np.empty(1)),
                                     (np.ones((4, 3)), np.empty((4, 1)))],
                         ids=["(1,)->()", "(2,)->(1,)", "(4, 3)->(4, 1)"])
def test_out_broadcast_errors(arr, out):
    """test_ufunc.py::TestUfunc::test_out_broadcast_errors: an out smaller than the result
    is a ValueError, for a unary op (np.positive upstream; stridewise has negative) and for
    add with a 0-d operand."""
    with pytest.raises(ValueError):
        np.negative(arr, out=out)
    with pytest.raises(ValueError):
        sw.negative(arr, out=out)
    with pytest.raises(ValueError):
        sw.add(np.ones(()), arr, out=out)


def test_endian():
    """test_ufunc.py::TestUfunc::test_endian (its elementwise part): sums of big- and
    little-endian float64 arrays, and abs and negative of either, are native float64."""
    ba, la = np.arange(1, dtype=">f8"), np.arange(1, dtype="<f8")
    for x, y in itertools.product((ba, la), repeat=2):
        got = sw.add(x, y)
        assert got.dtype == np.dtype("f8")
        check(got, np.add(x, y))
    for x in (la, ba):
        for fn in (sw.abs, sw.negative):
            got = fn(x)
            assert got.dtype == np.dtype("f8")
            check(got, UFUNCS[fn.__name__](x))


class _Subclass(np.ndarray):
    def __array_wrap__(self, obj, context=None, return_scalar=False):
        return super().__array_wrap__(obj, context, return_scalar)


@pytest.mark.parametrize("arg", ["array", "scalar", "subclass"])
def test_output_ellipsis(arg):
    """test_ufunc.py::TestUfunc::test_output_ellipsis (the call, not reduce or divmod):
    out=... returns an array for 0-d operands, never a scalar: an ndarray for a Python int or
    a 0-d array, the subclass for a 0-d subclass."""
    one = {"array": lambda: np.array(1), "scalar": lambda: 1,
           "subclass": lambda: np.array(1).view(_Subclass)}[arg]()
    expected_type = _Subclass if arg == "subclass" else np.ndarray
    want = np.add(one, 2, out=...)
    assert type(want) is expected_type
    check(sw.add(one, 2, out=...), want)


def test_output_ellipsis_errors():
    """test_ufunc.py::TestUfunc::test_output_ellipsis_errors (the call): ... inside an out
    tuple is a TypeError. NumPy refuses ... given positionally too; a documented departure
    (docs/semantics.md): stridewise's out is one positional-or-keyword parameter, which cannot
    tell the two apart, so it takes ... either way."""
    with pytest.raises(TypeError):
        np.add(1, 2, ...)
    want = np.add(1, 2, out=...)
    np.testing.assert_array_equal(sw.add(1, 2, ...), want, strict=True)
    assert type(sw.add(1, 2, ...)) is np.ndarray
    with pytest.raises(TypeError):
        sw.negative(1, out=(...,))


def test_casting_out_param():
    """test_ufunc.py::TestUfunc::test_casting_out_param: int64 sums cast into a float64 out;
    a float64 difference into a float32 out longer than NumPy's buffer."""
    a, b = np.ones((200, 100), np.int64), np.ones((200, 100), np.int64)
    c = np.ones((200, 100), np.float64)
    assert sw.add(a, b, out=c) is c
    np.testing.assert_array_equal(c, np.full((200, 100), 2.0), strict=True)
    a, b = np.zeros(65536), np.zeros(65536, dtype=np.float32) + 7
    assert sw.subtract(a, 0, out=b) is b
    np.testing.assert_array_equal(b, np.zeros(65536, np.float32), strict=True)


OUT_ERRORS = {   # (extra positional arguments, keywords, NumPy's exception); "o" is the out
    "None positionally and out=": ((None,), {"out": "o"}, TypeError),
    "out=(o, o)": ((), {"out": ("o", "o")}, ValueError),
    "out=()": ((), {"out": ()}, ValueError),
    "[] positionally": (([],), {}, TypeError),
    "out=[]": ((), {"out": []}, TypeError),
    "out=([],)": ((), {"out": ([],)}, TypeError),
}


@pytest.mark.parametrize("case", list(OUT_ERRORS))
def test_out_subok_errors(case):
    """test_umath.py::TestOut::test_out_subok (the cases tests/test_keywords.py's
    test_out_positional_upstream leaves out): None positionally with out=, out=(o, o),
    out=(), and a list for out (positional, keyword, in a tuple) raise NumPy's exception
    class, for either subok."""
    args, kw, err = OUT_ERRORS[case]
    for subok in (True, False):
        a, o = np.array(0.5), np.empty(())

        def fill(v):
            if type(v) is tuple:
                return tuple(fill(e) for e in v)
            return o if isinstance(v, str) else v

        args_, kw_ = tuple(fill(v) for v in args), {k: fill(v) for k, v in kw.items()}
        with pytest.raises(err):
            np.add(a, 2, *args_, subok=subok, **kw_)
        with pytest.raises(err):
            sw.add(a, 2, *args_, subok=subok, **kw_)


def test_out_subok_read_only():
    """test_umath.py::TestOut::test_out_subok (its read-only out): positional, by keyword or
    in a tuple, a read-only out is a ValueError, for either subok."""
    for subok in (True, False):
        a, o = np.array(0.5), np.empty(())
        o.flags.writeable = False
        for args, kw in (((o,), {}), ((), {"out": o}), ((), {"out": (o,)})):
            with pytest.raises(ValueError):
                np.add(a, 2, *args, subok=subok, **kw)
            with pytest.raises(ValueError):
                sw.add(a, 2, *args, subok=subok, **kw)


class _ArrayWrap(np.ndarray):
    __array_priority__ = 10

    def __new__(cls, arr):
        return np.asarray(arr).view(cls).copy()

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        return arr.view(type(self))


def test_out_wrap_subok():
    """test_umath.py::TestOut::test_out_wrap_subok (add; frexp is not a stridewise op): a
    subclass with __array_wrap__ comes back as itself with subok=True and as a base ndarray
    with subok=False, with no out, None positionally, out=None and out=(None,)."""
    for subok in (True, False):
        a = _ArrayWrap([0.5])
        for args, kw in (((), {}), ((None,), {}), ((), {"out": None}), ((), {"out": (None,)})):
            want = np.add(a, 2, *args, subok=subok, **kw)
            got = sw.add(a, 2, *args, subok=subok, **kw)
            assert (type(got) is _ArrayWrap) if subok else (type(got) is np.ndarray)
            check(got, want)


def test_array_wrap_array_priority():
    """test_ufunc.py::TestUfunc::test_array_wrap_array_priority: the input of the highest
    __array_priority__ wraps the result (the first on a tie; priority 0 beats a base
    ndarray's); an out given positionally returns the base ndarray."""
    class Base(np.ndarray):
        @classmethod
        def __array_wrap__(cls, array, context=None, return_scalar=False):
            return cls

    class Minus0(Base):
        __array_priority__ = 0

    class Minus1000(Base):
        __array_priority__ = -1000

    class Minus1000b(Base):
        __array_priority__ = -1000

    class Minus2000(Base):
        __array_priority__ = -2000

    x, xb, y = np.ones(2).view(Minus1000), np.ones(2).view(Minus1000b), np.ones(2).view(Minus2000)
    assert sw.add(x, y) is Minus1000
    assert sw.add(y, x) is Minus1000
    assert sw.add(x, xb) is Minus1000
    assert sw.add(xb, x) is Minus1000b
    assert sw.add(np.zeros(2), np.zeros(2).view(Minus0)) is Minus0
    assert type(sw.add(xb, x, np.zeros(2))) is np.ndarray


# -- test_ufunc.py: where= -------------------------------------------------------------------------

def test_where_with_broadcasting():
    """test_ufunc.py::TestUfunc::test_where_with_broadcasting (gh-17198): less of a (5000, 4)
    array and a (5000, 1) one, into a float64 out where a > 0.3: the comparison there, the
    out's zeros elsewhere."""
    rng = np.random.default_rng(17198)
    a, b = rng.random((5000, 4)), rng.random((5000, 1))
    where = a > 0.3
    out, want = np.full_like(a, 0), np.full_like(a, 0)
    sw.less(a, b, where=where, out=out)
    b_where = np.broadcast_to(b, a.shape)[where]
    np.testing.assert_array_equal(a[where] < b_where, out[where].astype(bool))
    assert not out[~where].any()
    np.less(a, b, where=where, out=want)
    check(out, want)


def test_where_warns_values():
    """test_ufunc.py::TestUfunc::test_where_warns (values only: stridewise does not warn,
    and gives 0 where the mask is False, docs/semantics.md): add with where= and no out, or
    out=None, holds a + a where the mask holds; where=True is a + a."""
    a = np.arange(7)
    mask = a % 2 == 0
    for kw in ({}, {"out": None}):
        got = sw.add(a, a, where=mask, **kw)
        assert np.all(got[::2] == [0, 4, 8, 12]) and got.dtype == np.add(a, a).dtype
        assert not got[1::2].any()
    check(sw.add(a, a, where=True), np.add(a, a, where=True))


# -- test_ufunc.py: result types, layouts, special values ------------------------------------------

def _type_cases():
    for name, uf in UFUNCS.items():
        for typ in uf.types:
            inp, out = typ.split("->")
            if set(inp) & set("O?mMgG") or set(out) & set("OmMgG"):
                continue
            if name == "reciprocal" and inp in np.typecodes["AllInteger"]:
                continue    # docs: NumPy's integer reciprocal is not provided (it raises)
            yield name, inp, out


@pytest.mark.parametrize("name", list(UFUNCS))
def test_ufunc_types(name):
    """test_ufunc.py::test_ufunc_types: for each of the ufunc's loops (not object, datetime
    or long double, nor bool inputs; upstream also leaves out bool outputs, so comparisons and
    predicates, which are kept here), operands of the loop's input types give the loop's
    output type (an equal dtype: stridewise's int64 is 'l' where the loop may say 'q').
    Planned with sw.explain (no kernel built); the ops run on such operands in
    test_ufunc_noncontiguous."""
    cases = [c for c in _type_cases() if c[0] == name]
    assert cases
    for _, inp, out in cases:
        args = [np.ones((3, 3), t) for t in inp]
        e = sw.explain(getattr(sw, name), *args)
        assert np.dtype(e.dtypes[0]) == np.dtype(out), (name, inp, e.dtypes)


def _misaligned_field(t):
    """A (6, 6) array of type t one alignment unit off its natural place (a packed struct's
    field), so alignment != itemsize is exercised as upstream does."""
    dt = np.dtype(t)
    packed = np.dtype([("_", f"S{dt.alignment}"), ("t", dt)], align=False)
    return np.empty((6, 6), dtype=packed)["t"]


TOLERANT = {"exp", "log", "sin", "cos", "tanh", "pow"}     # docs: within TOLERANCE_ULP of NumPy


NONCONTIGUOUS = ["add", "divide", "floor_divide", "remainder", "fmod", "pow", "bitwise_xor",
                 "left_shift", "maximum", "copysign", "equal", "less", "greater_equal",
                 "logical_and", "negative", "abs", "sign", "sqrt", "exp", "tanh", "floor", "isnan",
                 "bitwise_not", "reciprocal"]


@pytest.mark.parametrize("name", NONCONTIGUOUS)
def test_ufunc_noncontiguous(name):
    """test_ufunc.py::test_ufunc_noncontiguous (a representative op of each family, one loop
    per op, the loops spread over the dtypes, bool inputs left out as upstream does):
    operands holding 1..36 as (6, 6) contiguous arrays, (12, 18)[::2, ::3] views and fields
    of a packed struct give the same results; each against NumPy on the same operands (bit
    for bit; exp, log, sin, cos, tanh and float pow within upstream's 3 eps)."""
    cases = [c for c in _type_cases() if c[0] == name]
    k = sorted(UFUNCS).index(name)
    _, inp, out = cases[(7 * k) % len(cases)]
    args_c = [np.empty((6, 6), t) for t in inp]
    args_n = [np.empty((12, 18), t)[::2, ::3] for t in inp]
    args_o = [_misaligned_field(t) for t in inp]
    for a in args_c + args_n + args_o:
        a.flat = range(1, 37)
    results = []
    for args in (args_c, args_n, args_o):
        got, want = getattr(sw, name)(*args), quiet(UFUNCS[name], *args)
        assert got.dtype == np.dtype(out), (name, inp, got.dtype)
        if name in TOLERANT and want.dtype.kind in "fc":
            tol = 3 * np.finfo(want.dtype).eps
            np.testing.assert_allclose(got, want, atol=tol, rtol=tol, err_msg=f"{name} {inp}")
        else:
            assert same_bits(got, want), (name, inp)
        results.append(got)
    assert same_bits(results[0], results[1]) and same_bits(results[0], results[2]), (name, inp)


@pytest.mark.parametrize("op", ["sign", "equal"])
def test_ufunc_warn_with_nan(op):
    """test_ufunc.py::test_ufunc_warn_with_nan (gh-15127): sign of, and equal between, float64
    signaling NaNs emit no warning (and give NumPy's results)."""
    b = np.array([0x7FF0000000000001], "i8").view("f8")
    assert np.isnan(b)
    args = (b,) if op == "sign" else (b, b.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(sw, op)(*args)
    check(got, quiet(UFUNCS[op], *args))


@pytest.mark.parametrize("dtype", "efdFD")
def test_addition_negative_zero(dtype):
    """test_ufunc.py::test_addition_negative_zero: -0.0 + -0.0 is -0.0 (both parts for
    complex), out of place (a scalar from 0-d arrays) and in place (out= the first operand)."""
    dt = np.dtype(dtype)
    neg_zero = dt.type(complex(-0.0, -0.0)) if dt.kind == "c" else dt.type(-0.0)

    def negative_zero(v):
        v = np.asarray(v)
        return np.signbit(v.real) and (dt.kind != "c" or np.signbit(v.imag))

    arr, arr2 = np.array(neg_zero), np.array(neg_zero)
    got = sw.add(arr, arr2)
    assert negative_zero(got)
    check(got, np.add(arr, arr2))
    assert sw.add(arr, arr2, out=arr) is arr
    assert negative_zero(arr)


def _identityless_layouts():
    """test_ufunc.py::TestUfunc::identityless_reduce_arrs: C, F, mixed, reversed, strided
    and strided-misaligned float64 layouts of 24 to 60 elements."""
    yield np.empty((2, 3, 4), order="C")
    yield np.empty((2, 3, 4), order="F")
    yield np.empty((2, 4, 3), order="C").swapaxes(1, 2)
    yield np.empty((2, 3, 4), order="C")[::-1, ::-1, ::-1]
    yield np.empty((3, 5, 4), order="C").swapaxes(1, 2)[1:, 1:, 1:]
    raw = np.empty((3 * 4 * 5 * 8 + 1,), dtype="i1")
    yield raw[1:].view(dtype="f8").reshape((3, 4, 5))[1:, 1:, 1:]


@pytest.mark.parametrize("order", "KCFA")
def test_order_on_identityless_reduce_layouts(order):
    """test_ufunc.py::TestUfunc::test_identityless_reduction's operand layouts (from
    identityless_reduce_arrs), elementwise with each order=: negative of one, and add of one
    to a C-contiguous copy, have NumPy's strides and values."""
    for k, a in enumerate(_identityless_layouts()):
        a[...] = np.arange(a.size).reshape(a.shape) - 7.5
        check(sw.negative(a, order=order), np.negative(a, order=order))
        c = np.ascontiguousarray(a)
        check(sw.add(a, c, order=order), np.add(a, c, order=order))


# -- test_mem_overlap.py: out= and where= overlapping the inputs -----------------------------------

class _Interface:
    """Holds an __array_interface__ (and the array it views, to keep it alive)."""

    def __init__(self, interface, base):
        self.__array_interface__ = interface
        self.base = base


def _first_bytes(x):
    """A bool view of the first byte of each element of x (a mask that overlaps x)."""
    interface = dict(x.__array_interface__)
    interface.update(typestr="|b1", descr=[("", "|b1")], strides=x.strides)
    return np.asarray(_Interface(interface, x))


@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "complex128"])
def test_unary_ufunc_1d_manual_where(dtype):
    """test_mem_overlap.py::TestUFunc::test_unary_ufunc_1d_manual (its where= part): invert
    (integers) or reciprocal (floats) of views of one array, out another view of it, and a
    where= mask that is a bool view of the out's first bytes (so the mask overlaps the out
    too): the same as from copies of the input, out and mask (NumPy's own answer there)."""
    integer = np.dtype(dtype).kind in "iu"
    fn, np_fn = (sw.bitwise_not, np.invert) if integer else (sw.reciprocal, np.reciprocal)
    n, k = 200, 10
    indices = [np.index_exp[:n], np.index_exp[k:k + n], np.index_exp[n - 1::-1],
               np.index_exp[k + n - 1:k - 1:-1], np.index_exp[:2 * n:2],
               np.index_exp[k:k + 2 * n:2], np.index_exp[2 * n - 1::-2],
               np.index_exp[k + 2 * n - 1:k - 1:-2]]
    for xi, yi in itertools.product(indices, indices):
        for shrink in (lambda v: v, lambda v: v[:1], lambda v: v[-1:].reshape(())):
            v = np.arange(1, 1 + n * 2 + k, dtype=dtype)
            x, y = shrink(v[xi]), v[yi]
            mask = _first_bytes(y)
            want = y.copy()
            quiet(np_fn, x.copy(), out=want, where=mask.copy())
            for copy_mask in (True, False):
                v[:] = np.arange(1, 1 + n * 2 + k, dtype=dtype)
                got = fn(x, out=y, where=mask.copy() if copy_mask else mask)
                assert got is y
                assert same_bits(y, want), (xi, yi, x.shape, copy_mask)


def test_unary_ufunc_where_same():
    """test_mem_overlap.py::TestUFunc::test_unary_ufunc_where_same: invert of a bool array
    with out and the mask being that array itself (or copies of one of them) is what copies
    give."""
    def run(fn, a, out, mask):
        return fn(a, out=out, where=mask)

    for variant in range(3):
        results = []
        for fn in (np.invert, sw.bitwise_not):
            x = np.arange(100).astype(bool)
            a, out, mask = x, (x, x.copy(), x)[variant], (x, x, x.copy())[variant]
            want = np.invert(x.copy(), out=out.copy(), where=mask.copy())
            results.append(run(fn, a, out, mask).copy())
            assert same_bits(results[-1], want), (variant, fn)
        assert same_bits(results[0], results[1])


def _random_view_pairs(x, rng, count):
    """Pairs of views of x of one shape, each dim sliced at a random start and a random step
    of either sign (so that they overlap in every way)."""
    for _ in range(count):
        views = []
        sizes = [int(rng.integers(1, n // 2 + 1)) for n in x.shape]
        for _ in range(2):
            sl = []
            for n, size in zip(x.shape, sizes):
                step = int(rng.integers(1, max(1, (n - 1) // max(size - 1, 1)) + 1))
                span = step * (size - 1) + 1
                start = int(rng.integers(0, n - span + 1))
                s = slice(start, start + span, step)
                if rng.random() < 0.5:
                    s = slice(start + span - 1, start - 1 if start > 0 else None, -step)
                sl.append(s)
            views.append(x[tuple(sl)])
        yield views


@pytest.mark.parametrize("op,dtype,count", [("bitwise_not", "int16", 40),
                                            ("negative", "complex128", 20)])
def test_unary_ufunc_call_fuzz(op, dtype, count):
    """test_mem_overlap.py::TestUFunc::test_unary_ufunc_call_fuzz (invert of int16) and
    test_unary_ufunc_call_complex_fuzz (negative of complex128, whose alignment is below its
    itemsize), at fewer draws: random pairs of equally shaped views of one 1-d to 5-d array,
    one the input and the other the out, give what a copy of the input gives."""
    rng = np.random.default_rng(1234)
    shapes = [7, 13, 8, 21, 29, 32]
    fn, np_fn = getattr(sw, op), UFUNCS[op]
    overlapping = 0
    for ndim in range(1, 6):
        x = rng.integers(0, 2**16, size=shapes[:ndim]).astype(dtype)
        for a, b in _random_view_pairs(x, rng, count):
            overlapping += np.shares_memory(a, b)
            want = np_fn(a.copy())
            base = x.copy()
            assert fn(a, out=b) is b
            assert same_bits(b, want), (ndim, a.strides, b.strides)
            x[...] = base
    assert overlapping > 10
