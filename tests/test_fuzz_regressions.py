"""Bugs a differential fuzz against NumPy and torch found (tools/fuzz.py, tests/test_fuzz.py):
each case here is the input that showed it, checked against the library's own op."""
import itertools
import math

import ml_dtypes
import numpy as np
import pytest

import stridewise as sw
from oracle import numpy_op, same_bits
from stridewise.ops.builtins import COMPLEX_TOLERANCE_ULP, TOLERANCE_ULP
from test_fuzz import ulps

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("a, b", [
    (torch.tensor([True, False]), torch.tensor([1, 2], dtype=torch.int8)),
    (torch.tensor([1, 2], dtype=torch.int32), torch.tensor(True)),
    (torch.tensor([1.0, 2.0]), True),
    (True, torch.tensor([1.0, 2.0])),
    (torch.tensor([True, False]), 1),
])
def test_torch_subtract_refuses_a_bool_operand_as_torch_does(a, b):
    """torch.sub raises on a bool tensor or a bool number on either side, even where the
    result dtype is not bool; stridewise computed int8 - bool and the like."""
    with pytest.raises(RuntimeError, match="bool"):
        torch.sub(a, b) if isinstance(a, torch.Tensor) else torch.rsub(b, a)
    out = torch.full((2,), 7.0)
    with pytest.raises(RuntimeError, match="logical_xor"):
        sw.subtract(a, b)
    with pytest.raises(RuntimeError, match="bool"):
        sw.subtract(a, b, out=out)
    assert torch.equal(out, torch.full((2,), 7.0))


def test_numpy_subtract_takes_bool_with_a_number_as_numpy_does():
    """NumPy refuses only bool - bool; bool with an integer promotes."""
    x = np.array([True, False, True])
    y = np.array([3, -4, 0], np.int8)
    assert same_bits(sw.subtract(x, y), np.subtract(x, y))
    assert same_bits(sw.subtract(y, x), np.subtract(y, x))
    with pytest.raises(TypeError):
        sw.subtract(x, x)


EXACT_OUT = ["where", "abs", "negative", "bitwise_not", "floor", "ceil", "trunc", "sign"]


@pytest.mark.parametrize("name", EXACT_OUT)
@pytest.mark.parametrize("dtype, out_dtype", [(torch.int8, torch.int16), (torch.float32, torch.float64),
                                              (torch.int32, torch.float32)])
def test_torch_ops_whose_out_must_have_the_result_dtype(name, dtype, out_dtype):
    """These torch ops check out.dtype == result dtype where the others cast by can_cast;
    stridewise cast into such an out. An out of the result's dtype still works."""
    args = [torch.arange(-3, 3).to(dtype)]
    if name == "where":
        args = [args[0] > 0, args[0], args[0]]
    fn = getattr(torch, name)
    with pytest.raises(RuntimeError):
        fn(*args, out=torch.zeros(6, dtype=out_dtype))
    if dtype.is_floating_point and name == "bitwise_not":
        return                                   # torch has no float bitwise_not at all
    out = torch.zeros(6, dtype=out_dtype)
    with pytest.raises(TypeError, match=f"of dtype {str(dtype)[6:]}"):
        getattr(sw, name)(*args, out=out)
    assert not out.any()
    want, got = torch.zeros(6, dtype=dtype), torch.zeros(6, dtype=dtype)
    fn(*args, out=want)
    assert getattr(sw, name)(*args, out=got) is got and torch.equal(got, want)


@pytest.mark.parametrize("x, lo, hi, out_dtype", [
    (torch.ones(3), 0.0, 1.0, torch.float64), (torch.ones(3, dtype=torch.int8), 0, 1, torch.int32),
    (torch.tensor([True]), True, 1, torch.int32), (torch.tensor([True]), True, 1, torch.int64),
    (torch.ones(3, dtype=torch.int32), torch.tensor(0), torch.tensor(5), torch.int64),
    (torch.ones(3, dtype=torch.bfloat16), None, -1, torch.complex64),
    (torch.tensor([True]), None, -float("inf"), torch.float16),
    (torch.tensor([True]), None, -float("inf"), torch.float32),
    (torch.ones(3, dtype=torch.int8), 3, None, torch.int16),
    (torch.ones(3, dtype=torch.int16), True, None, torch.int8),     # a bool bound is a number too
    (torch.ones(3), None, torch.tensor(0.5), torch.float64)])
def test_torch_clamp_by_numbers_takes_an_out_of_its_result_dtype_only(x, lo, hi, out_dtype):
    """torch.clamp with number bounds (its Scalar overload) refuses an out of another dtype,
    with one bound too; with tensor bounds it casts into one (found by tools/fuzz_calls.py)."""
    want_out, got_out = torch.zeros(x.shape, dtype=out_dtype), torch.zeros(x.shape, dtype=out_dtype)
    try:
        want = torch.clamp(x, lo, hi, out=want_out)
    except RuntimeError:
        with pytest.raises(TypeError, match="result's dtype only"):
            sw.clip(x, lo, hi, out=got_out)
        assert not got_out.any()
        return
    got = sw.clip(x, lo, hi, out=got_out)
    assert got is got_out and torch.equal(got, want)


def test_numpy_and_torch_cast_into_out_where_they_do():
    """NumPy's abs takes any same_kind out, and torch's add any can_cast one."""
    x = np.arange(-3, 3, dtype=np.int8)
    want, got = np.zeros(6, np.int16), np.zeros(6, np.int16)
    np.abs(x, out=want)
    assert sw.abs(x, out=got) is got and same_bits(got, want)
    t = torch.from_numpy(x)
    want, got = torch.zeros(6, dtype=torch.int16), torch.zeros(6, dtype=torch.int16)
    torch.add(t, 1, out=want)
    assert sw.add(t, 1, out=got) is got and torch.equal(got, want)


@pytest.mark.parametrize("shape", [(0,), (0, 1, 1, 1), (3, 0)])
@pytest.mark.parametrize("number", [255, -129, 2**70])
def test_numpy_empty_array_with_a_number_beyond_its_dtype_raises(shape, number):
    """NumPy 2 raises OverflowError for a Python int beyond an int8 array's range even when
    the array is empty; stridewise returned an empty result (nothing launched, nothing read)."""
    x = np.zeros(shape, np.int8)
    with pytest.raises(OverflowError):
        np.add(x, number)
    with pytest.raises(OverflowError):
        sw.add(x, number)
    with pytest.raises(OverflowError):
        sw.multiply(number, x)
    assert same_bits(sw.add(x, 100), np.add(x, 100))
    assert same_bits(sw.less(x, number), np.less(x, number))   # comparisons: exact, no raise


def test_torch_empty_tensor_with_a_number_wraps_as_torch_does():
    x = torch.zeros((0, 2), dtype=torch.int8)
    assert torch.equal(sw.add(x, 255), torch.add(x, 255)) and sw.add(x, 255).dtype == torch.int8
    with pytest.raises(OverflowError):
        sw.add(x, 2**70)


@pytest.mark.parametrize("args", [(np.float32(1), 2), (np.ones(3, np.float32), 2.0), (np.True_, True)])
def test_numpy_scalar_as_out_is_refused_as_numpy_does(args):
    """A NumPy scalar is immutable: NumPy's ufuncs refuse it as out ("return arrays must be of
    ArrayType"); stridewise returned the scalar unchanged, the result lost."""
    with pytest.raises(TypeError):
        np.add(*args, out=np.float32(0))
    with pytest.raises(TypeError, match="out must be an array"):
        sw.add(*args, out=np.float32(0))
    out = np.zeros((), np.float32)       # a 0-d array is an out, as in NumPy
    assert sw.add(np.float32(1), 2, out=out) is out and out == 3


def _permuted(shape, perm, dtype=torch.float32):
    """A dense tensor of `shape` laid out with dims in `perm` order, outermost first."""
    t = torch.arange(math.prod(shape), dtype=torch.float32).reshape([shape[p] for p in perm])
    return t.permute(*[perm.index(i) for i in range(len(shape))]).to(dtype)


@pytest.mark.parametrize("shape, perm", [((1, 2, 2, 1), (3, 2, 1, 0)), ((1, 3, 1, 2), (0, 2, 3, 1)),
                                         ((1, 3, 3, 1), (3, 0, 2, 1))])
def test_torch_channels_last_contiguous_with_extent_one_dims(shape, perm):
    """A (1, C, H, 1) tensor whose strides do not suggest channels_last can still be
    is_contiguous(memory_format=torch.channels_last), which is what TensorIterator's fast
    setup asks: torch's output is then channels_last. stridewise kept the input's strides."""
    for dtype in (torch.float32, torch.bool):
        x = _permuted(shape, perm, dtype)
        assert x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()
        for name in ("exp", "sigmoid", "negative", "isnan"):
            if dtype == torch.bool and name == "negative":
                continue
            want, got = getattr(torch, name)(x), getattr(sw, name)(x)
            assert got.stride() == want.stride() and got.dtype == want.dtype, name
            # exp and sigmoid within their documented ulps of torch's (Sleef against libmvec)
            tol = TOLERANCE_ULP.get(name, {}).get(str(got.dtype).split(".")[-1], 0)
            assert ulps(got.numpy(), want.numpy()) <= tol, name
        want, got = torch.add(x, x), sw.add(x, x)
        assert got.stride() == want.stride() and torch.equal(got, want)


def test_torch_output_strides_every_small_4d_layout():
    """Every 4-d shape of extents 1 to 3 in every dense dim order, one or two operands:
    stridewise's rule (operands/layout.py) against TensorIterator's own output strides."""
    from stridewise.operands.layout import output_strides

    for shape in itertools.product((1, 2, 3), repeat=4):
        for p1 in itertools.permutations(range(4)):
            for p2 in (p1, (0, 1, 2, 3), (0, 2, 3, 1)):
                x, y = _permuted(shape, p1), _permuted(shape, p2)
                for ts in ((x,), (x, y)):
                    want = (torch.exp(*ts) if len(ts) == 1 else torch.add(*ts)).stride()
                    got = output_strides("torch", shape, tuple((t.shape, t.stride(), "float32")
                                                               for t in ts), "float32", "cpu")
                    assert tuple(got) == want, (shape, [t.stride() for t in ts])


def test_numpy_clip_of_bool_arrays_and_torch_refusal():
    """np.clip takes bool arrays (bool bounds keep bool, int bounds promote); stridewise
    refused bool. torch.clamp raises on bool tensors, and so does stridewise."""
    x = np.array([True, False, True, False, True])
    lo = np.array([False, False, True, True, False])
    hi = np.array([True, False, False, True, False])
    for args in ((x, lo, hi), (x, True, True), (x, False, hi), (x, 0, 1), (x, lo, 2.5)):
        want, got = np.clip(*args), sw.clip(*args)
        assert got.dtype == want.dtype and same_bits(got, want), args
    t = torch.from_numpy(x)
    with pytest.raises(RuntimeError):
        torch.clamp(t, torch.from_numpy(lo), torch.from_numpy(hi))
    with pytest.raises(RuntimeError, match="bool"):
        sw.clip(t, torch.from_numpy(lo), torch.from_numpy(hi))


def test_bool_to_a_negative_integer_power_raises_as_both_libraries_do():
    """bool ** -1 promotes to int64 in NumPy and torch, which refuse a negative integer
    exponent; stridewise computed it."""
    x = np.array([True, False])
    with pytest.raises(ValueError):
        np.power(x, -1)
    with pytest.raises(RuntimeError):
        torch.pow(torch.from_numpy(x), -1)
    for arr in (x, torch.from_numpy(x)):
        with pytest.raises((ValueError, RuntimeError), match="negative integer powers"):
            sw.pow(arr, -1)
    assert same_bits(sw.pow(x, 2), np.power(x, 2))
    with np.errstate(divide="ignore"):          # 0.0 ** -1.0 is inf
        assert same_bits(sw.pow(x, -1.0), np.power(x, -1.0))


def test_empty_integer_array_to_a_negative_power_is_empty_in_numpy():
    """NumPy's integer power raises from its loop, which an empty array never runs; torch
    checks the exponent first and raises even so."""
    for dtype in (np.int8, np.int64, np.bool_):
        x = np.zeros((0, 3), dtype)
        want, got = np.power(x, -2), sw.pow(x, -2)
        assert got.dtype == want.dtype and got.shape == want.shape
        with pytest.raises(RuntimeError):
            sw.pow(torch.from_numpy(x), -2)


NUMBERS = [65504.0, 65519.0, 7e4, 3.39e38, 3.5e38, 1e308, -1e300, math.inf, 10**39, 2**64, 70000, 3]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64,
                                   torch.int32, torch.complex64])
def test_torch_checked_ops_refuse_a_number_beyond_the_range_as_torch_does(dtype):
    """torch.clamp, torch.pow and torch.where check a Python number against the range they
    convert it to (clamp: the dtype's; pow: 16-bit floats only; where: float32 and complex64,
    not 16-bit floats) and raise beyond it; stridewise made it inf. An int no 64-bit integer
    holds raises in all three."""
    x = torch.tensor([1.0, -2.0]).to(dtype)
    for v in NUMBERS:
        calls = [(lambda: torch.where(x != 0, x, v), lambda: sw.where(x != 0, x, v)),
                 (lambda: torch.pow(x, v), lambda: sw.pow(x, v))]
        if not dtype.is_complex:
            calls.append((lambda: torch.clamp(x, -v, v), lambda: sw.clip(x, -v, v)))
        for theirs, ours in calls:
            try:
                with np.errstate(all="ignore"):
                    want = theirs()
            except (RuntimeError, OverflowError):
                with pytest.raises(OverflowError):
                    ours()
                continue
            with np.errstate(all="ignore"):
                got = ours()
            assert got.dtype == want.dtype and torch.equal(got.isnan(), want.isnan()), v
            assert torch.equal(got.nan_to_num(), want.nan_to_num()) or dtype.is_complex, v


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int64, torch.float16,
                                   torch.float32])
def test_torch_clamp_and_where_numbers_convert_as_torch_checks_them(dtype):
    """torch.clamp and torch.where convert a Python number by c10's checked_convert: an
    unsigned dtype takes down to -max and wraps (clamp(uint8, -5, 9) bounds below by 251), a
    number beyond the range raises, with one bound as with two. stridewise refused the
    wrapping ones, and with one bound (clamp(x, max=300), through minimum) wrapped the rest:
    clamp(uint8 100, max=300) gave 44."""
    x = torch.tensor([0, 1, 5, 9, 100], dtype=dtype)
    c = x % 2 == 0
    bounds = [(None, 300), (-5, None), (-5, 9), (-300, 9), (2, 300), (None, -1), (300, None),
              (-200, 5), (None, 200), (None, 70000.0), (-1e39, None), (None, 2**63), (-2**63, 3)]
    calls = [(lambda lo=lo, hi=hi: torch.clamp(x, lo, hi), lambda lo=lo, hi=hi: sw.clip(x, lo, hi))
             for lo, hi in bounds]
    calls += [(lambda v=v: torch.where(c, x, v), lambda v=v: sw.where(c, x, v))
              for v in (300, -5, -300, 200, 2**63, -2**63, 3)]
    for theirs, ours in calls:
        try:
            with np.errstate(all="ignore"):
                want = theirs()
        except RuntimeError:
            with pytest.raises(OverflowError):
                ours()
            continue
        with np.errstate(all="ignore"):
            got = ours()
        assert got.dtype == want.dtype and torch.equal(got, want)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor", "less", "equal"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32])
def test_numpy_logical_ops_lay_out_by_their_bool_loop(name, dtype):
    """NumPy's logical ops cast mixed inputs to bool: a bool F-ordered array with a number
    takes the trivial loop (F strides, extent-1 dims included), an int8 one the iterator.
    stridewise reasoned from the inputs' result_type (int64, int8) and got them swapped."""
    x = np.asfortranarray(np.array([[[[True, True], [True, False]]]]).astype(dtype))
    for other in (0, 2.5, True, np.int8(3), x):
        want, got = getattr(np, name)(x, other), getattr(sw, name)(x, other)
        assert got.strides == want.strides and same_bits(got, want), other


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint64, np.int64])
@pytest.mark.parametrize("lo, hi", [(-1, True), (-1, 300), (0, 256), (-200, 200), (None, 300),
                                    (-5, None), (-2**70, 2**70), (300, 400), (0, -1), (None, -1)])
def test_numpy_clip_with_int_bounds_beyond_the_range(dtype, lo, hi):
    """NumPy 2's np.clip takes a Python int lower bound below an integer array's range, or an
    upper one above it, as no bound (np.clip(uint8, 0, 256) is common image code); one beyond
    the other end raises OverflowError. stridewise raised for all of them."""
    x = np.array([0, 1, 100, 254, 255, 127, 3]).astype(dtype)
    try:
        want = np.clip(x, lo, hi)
    except OverflowError:
        with pytest.raises(OverflowError):
            sw.clip(x, lo, hi)
        return
    assert same_bits(sw.clip(x, lo, hi), want)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8])
def test_numpy_clip_int_bound_beyond_the_range_beside_an_array_bound(dtype):
    """A Python int bound beyond the array's range is no bound even where the other bound, an
    array, promotes past that range: np.clip(int16, uint32 [2^32 - 2], 2**31) is 2^32 - 2
    (found by the CuPy fuzz; stridewise clamped 2**31 to int16's 32767)."""
    x = np.array([3, 7, -1 if np.dtype(dtype).kind == "i" else 1]).astype(dtype)
    for lo, hi in [(np.array([4294967294], np.uint32), 2**31), (-2**40, np.array([2**40], np.int64)),
                   (np.array([-5], np.int64), 70000), (-70000, np.array([9], np.uint32))]:
        want = np.clip(x, lo, hi)
        got = sw.clip(x, lo, hi)
        assert got.dtype == want.dtype and same_bits(got, want), (lo, hi)


def test_numpy_compares_int64_with_uint64_exactly():
    """NumPy 2 compares an int64 with a uint64 in exact loops (qQ->?, Qq->?) where its
    resolve_dtypes says so; stridewise computed in float64, their common type, so 2^62 + 1 ==
    2^62 (found by tools/fuzz_calls.py). Both orders, broadcasts and NumPy scalars."""
    rng = np.random.default_rng(3)
    a = np.concatenate([np.array([0, -7, 2**62 + 1, -1, 2**53 + 1, -2**63, 2**63 - 1], np.int64),
                        rng.integers(-2**63, 2**63 - 1, 500, dtype=np.int64)])
    b = np.concatenate([np.array([0, 2**64 - 7, 2**62, 2**64 - 1, 2**53, 0, 2**63 - 1], np.uint64),
                        rng.integers(0, 2**64 - 1, 500, dtype=np.uint64, endpoint=True)])
    b[::3] = a[::3].astype(np.uint64)
    for op in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        for x, y in ((a, b), (b, a), (a[:40, None], b[None, :40]), (a, np.uint64(2**63)), (np.int64(-1), b)):
            want, got = getattr(np, op)(x, y), getattr(sw, op)(x, y)
            assert got.dtype == want.dtype and np.array_equal(got, want), op


def test_torch_abs_of_complex_into_a_real_out_casts_and_into_a_complex_out_must_match():
    """torch's abs of a complex tensor casts its real result into any real out (can_cast)
    and writes |z| + 0j into a complex out of the input's own dtype only."""
    z = torch.tensor([3 + 4j, -1e-45 + 2.5j, complex("nan+1j")], dtype=torch.complex64)
    for dtype in (torch.float32, torch.float64, torch.float16, torch.complex64,
                  torch.complex128, torch.int32):
        want, got = torch.zeros(3, dtype=dtype), torch.zeros(3, dtype=dtype)
        try:
            torch.abs(z, out=want)
        except RuntimeError:
            with pytest.raises(TypeError):
                sw.abs(z, out=got)
            assert not got.any()
            continue
        assert sw.abs(z, out=got) is got
        assert torch.equal(got.isnan(), want.isnan())
        assert torch.equal(got.nan_to_num(), want.nan_to_num()), dtype


@pytest.mark.parametrize("dtype", [torch.bfloat16])     # (float16 holds no such number)
@pytest.mark.parametrize("number", [2**64 - 1, 2**63, -2**63])
def test_16bit_tensors_with_python_ints_past_a_c_long(dtype, number):
    """A Python int past a C long as a 16-bit float operand (where's branch, pow's exponent):
    the GPU machine's ml_dtypes raised "expected number, got int" converting it directly."""
    x = torch.tensor([0.5, 1.0, -3.0], dtype=dtype)
    c = torch.tensor([True, False, True])
    for got, want in ((sw.where(c, number, x), torch.where(c, number, x)),
                      (sw.add(x, number), torch.add(x, number))):
        assert got.dtype == want.dtype
        assert torch.equal(got.view(torch.int16), want.view(torch.int16)), (got, want)


def _pow_by_half_cases(device):
    dtypes = [torch.float32, torch.float64, torch.bfloat16] + (
        [torch.float16] if device == "cuda" else [])     # torch's CPU float16 pow calls pow
    for dtype in dtypes:
        x = torch.tensor([-0.0, 0.0, 4.0, 2.0, float("inf")], dtype=dtype, device=device)
        for e in (0.5, -0.5):
            yield x, e


def _check_pow_by_half(x, e):
    got, want = sw.pow(x, e), torch.pow(x, e)
    assert got.dtype == want.dtype
    assert torch.equal(torch.signbit(got), torch.signbit(want)), (e, got, want)   # -0.0, -inf
    torch.testing.assert_close(got.double(), want.double(), rtol=2**-7, atol=0)   # 16-bit's ulp


def test_torch_pow_by_a_half_is_its_square_root():
    """torch.pow(x, 0.5) is sqrt(x) and pow(x, -0.5) one over it: pow(-0.0, 0.5) is -0.0 and
    pow(-0.0, -0.5) is -inf, where C's pow gives +0.0 and +inf. A NumPy array's -0.5 keeps
    pow (NumPy's own, whichever its release: test_numpy_power_by_one_exponent_value_...)."""
    for x, e in _pow_by_half_cases("cpu"):
        _check_pow_by_half(x, e)
    with np.errstate(all="ignore"):
        want = np.power(np.array([-0.0, -0.0]), np.array([0.5, -0.5]))
    got = sw.pow(np.array([-0.0, -0.0]), np.array([0.5, -0.5]))
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.gpu
def test_torch_pow_by_a_half_is_its_square_root_on_cuda():
    for x, e in _pow_by_half_cases("cuda"):
        _check_pow_by_half(x, e)


@pytest.mark.parametrize("number", [2**63, 2**64 - 1])
def test_torch_bool_tensor_with_an_int_past_int64_raises_as_torch_does(number):
    """The int decides the dtype of bool tensors, and torch types one of 2^63 or more as
    uint64, whose promotion it refuses; stridewise wrapped it into int64. Both the first call
    and a warm one (its signature already compiled by a small int) raise, writing nothing."""
    x = torch.tensor([True, False])
    with pytest.raises(RuntimeError, match="Promotion"):
        torch.add(x, number)
    assert torch.equal(sw.add(x, 1), torch.add(x, 1))          # the warm signature
    out = torch.zeros(2, dtype=torch.int64)
    for call in (lambda: sw.add(x, number), lambda: sw.equal(x, number),
                 lambda: sw.add(x, number, out=out)):
        with pytest.raises(OverflowError, match="out of bounds for int64"):
            call()
    assert not out.any()
    assert torch.equal(sw.add(x, 2**63 - 1), torch.add(x, 2**63 - 1))
    # ops whose result is not the int's dtype refuse it too (tools/fuzz_calls.py on CUDA found
    # true divide returning float32): torch promotes the int before the op's own rule
    for sw_op, torch_op, args in ((sw.divide, torch.divide, (x, number)),
                                  (sw.fmod, torch.fmod, (x, number)),
                                  (sw.bitwise_and, torch.bitwise_and, (x, number)),
                                  (sw.where, torch.where, (x, number, x))):
        with pytest.raises(RuntimeError, match="Promotion"):
            torch_op(*args)
        with pytest.raises(OverflowError, match="out of bounds for int64"):
            sw_op(*args)
    assert torch.equal(sw.divide(x, 2**62), torch.divide(x, 2**62))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("other", ["int32", "int64", "int16", "bool", "float16"])
def test_torch_cpu_one_element_tensor_of_another_dtype_is_read_in_float32(dtype, other):
    """torch's CPU mul, div (true, trunc) and floor_divide of 16-bit floats by a tensor of one
    element read its value from its own dtype into float32 (TensorIterator's
    original_scalar_value): `f16 * torch.tensor([2049])` multiplies by 2049, where the cast
    to float16 gives 2048 (tools/fuzz_calls.py found it with -2147483647, which float16 reads
    as -inf). An expanded view of another dtype is cast into a copy first, and is no scalar."""
    a = torch.tensor([1.0, 3.0, 65504.0, -7.0, 4097.0, 0.3, 100.7, -0.0, float("inf")],
                     dtype=getattr(torch, dtype))
    value = {"bool": True, "float16": 0.1}.get(other, 2049)
    b = torch.tensor([value], dtype=getattr(torch, other))
    ops = ((sw.multiply, torch.mul), (sw.divide, torch.div), (sw.floor_divide, torch.floor_divide),
           (lambda x, y: sw.divide(x, y, rounding_mode="trunc"),
            lambda x, y: torch.div(x, y, rounding_mode="trunc")),
           (sw.add, torch.add), (sw.remainder, torch.remainder))
    for divisor in (b, b.reshape(1, 1), b.expand(9), b.reshape(())):
        for sw_op, torch_op in ops:
            for x, y in ((a, divisor), (divisor, a)):
                want = torch_op(x, y)
                got = sw_op(x, y)
                assert got.dtype == want.dtype and got.shape == want.shape
                # float32 holds each 16-bit value exactly, the sign of a zero too
                assert same_bits(got.float().numpy(), want.float().numpy()), (sw_op, x, y)


def test_numpy_python_int_beside_bfloat16_takes_bfloat16_first():
    """NEP 50: a Python int beside a bfloat16 array is bfloat16 first, so `x % 70000` divides
    by 70144. The fuzz's oracle had divided by 70000 in float32; exact rationals decide
    (each remainder here is a bfloat16 value, so the exact one is the answer)."""
    from fractions import Fraction

    x = np.array([3.3895313892515355e38, 1.0002555517425873e30, 2.5, -3e30, 70000],
                 dtype=ml_dtypes.bfloat16)
    got = sw.remainder(x, 70000)
    want = [float(Fraction(float(v)) % 70144) for v in x]
    assert got.dtype == x.dtype and got.astype(np.float64).tolist() == want
    assert same_bits(got, numpy_op(np.remainder, x, 70000))


def test_numpy_where_allocates_by_the_iterator_alone():
    """np.where allocates through an nditer in order K and has no ufunc trivial loop: an
    F-contiguous view whose extent-1 dims step oddly gets the iterator's strides for them,
    not F order's (tools/fuzz_calls.py: bfloat16 (2, 1, 67, 1) with byte strides
    (2, 268, 4, 268), beside a Python bool)."""
    from numpy.lib.stride_tricks import as_strided

    for dtype in (ml_dtypes.bfloat16, np.float32):
        base = np.arange(1, 1001).astype(dtype)
        n = base.itemsize
        a = as_strided(base, (2, 1, 67, 1), (n, 134 * n, 2 * n, 134 * n))
        for y in (False, a, 1.5):
            want, got = np.where(a, a, y), sw.where(a, a, y)
            assert got.strides == want.strides and got.dtype == want.dtype, (dtype, y)
            assert same_bits(got, want)


def test_numpy_clip_of_an_integer_scalar_by_ints_beyond_its_range():
    """np.clip of a NumPy integer scalar takes NumPy 2's rule for Python int bounds beyond the
    dtype's range as an array does (a bound past its end is no bound): clip(uint8(254),
    -2**63, True) is minimum(254, True) = 1, and clip(int32(-2), uint32(0), 2**70) is
    maximum(-2, uint32 0) = int64 0; stridewise had passed the int on and overflowed."""
    for x, lo, hi, into in ((np.uint8(254), -2**63, True, np.uint8),
                            (np.int32(-2), np.uint32(0), 2**70, ml_dtypes.bfloat16),
                            (np.int16(7), -2**40, 2**40, np.int16)):
        want, got = np.zeros((), into), np.zeros((), into)
        np.clip(x, lo, hi, out=want)
        sw.clip(x, lo, hi, out=got)
        assert same_bits(got, want), (x, lo, hi)
        assert same_bits(np.asarray(sw.clip(x, lo, hi)), np.asarray(np.clip(x, lo, hi)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_torch_cpu_zero_dim_16_bit_tensor_by_a_number_reads_it_in_float32(dtype):
    """A 0-d float16 or bfloat16 tensor times or over a Python number (or a CPU 0-d tensor of
    another dtype): torch's CPU kernel reads operand 2 in float32 whatever operand 1 is, so
    `x * 1e5` for a 0-d x = 1e-5 is 1.0009765625, where rounding 1e5 to float16 first gives inf
    (tests/test_upstream_torch_ops.py::test_divmul_scalar found it)."""
    t = getattr(torch, dtype)
    for value in (1e-5, 100.0, -3.3):
        x = torch.tensor(value, dtype=t)
        for other in (1e5, 70000, 0.1, torch.tensor(1e5, dtype=torch.float64)):
            for sw_op, torch_op in ((sw.multiply, torch.mul), (sw.divide, torch.div),
                                    (sw.floor_divide, torch.floor_divide)):
                want, got = torch_op(x, other), sw_op(x, other)
                assert got.dtype == want.dtype and got.shape == want.shape
                assert same_bits(got.float().numpy(), want.float().numpy()), (sw_op, value, other)


def test_torch_integer_pow_takes_torchs_number_rules():
    """torch.pow of integer tensors: a negative exponent raises for unsigned tensors too (its
    RuntimeError; stridewise's IntegerPowerError is one), and a number base wraps into the
    tensor's dtype (`torch.pow(300, uint8)` is 44 ** x), where stridewise had raised
    OverflowError for both (tests/test_upstream_torch_ops.py found the first)."""
    x = torch.tensor([1, 2, 3, 5], dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="negative integer powers"):
        sw.pow(x, -1)
    for base, dtype in ((300, torch.uint8), (-2, torch.uint8), (300, torch.int8), (-129, torch.int8),
                        (2**40 + 3, torch.int8), (2**64 - 1, torch.uint8), (7, torch.int32)):
        e = x.to(dtype)
        want, got = torch.pow(base, e), sw.pow(base, e)
        assert got.dtype == want.dtype and torch.equal(got, want), (base, dtype)


def test_torch_default_float_types_each_call_again():
    """torch.set_default_dtype(torch.float64) makes integer tensors' true division and a Python
    float beside integer tensors float64; stridewise had typed every call once (its memo and
    its warm key held no default), so a call first made under float32 stayed float32
    (tests/test_upstream_torch_promotion.py found it)."""
    u = torch.tensor([0, 0, 1], dtype=torch.uint8)
    i = torch.tensor([47, -45, 17], dtype=torch.int16)
    before = torch.get_default_dtype()
    try:
        for default in (torch.float32, torch.float64, torch.float32):
            torch.set_default_dtype(default)
            for _ in range(2):         # the first call and a warm one
                for got, want in ((sw.add(u, 5.5), torch.add(u, 5.5)), (sw.divide(i, i), torch.div(i, i)),
                                  (sw.multiply(i, 1j), torch.mul(i, 1j)),
                                  (sw.clip(i, 0.5, 9.5), torch.clamp(i, 0.5, 9.5))):
                    assert got.dtype == want.dtype and torch.equal(got, want), (default, got, want)
    finally:
        torch.set_default_dtype(before)


def test_alpha_with_python_numbers_alone():
    """add and subtract with alpha= of Python numbers alone compute as NumPy arrays of the
    numbers' default dtypes, as without alpha (alpha had joined them as an array: a crash in
    the kernel's argument packing)."""
    assert sw.add(1, 1, alpha=2) == np.int64(3) and sw.subtract(1.0, 2.0, alpha=2) == np.float64(-3.0)
    assert type(sw.add(1, 1, alpha=2)) is np.int64


def test_torch_clamp_with_one_bound_keeps_x_on_a_signed_zero_tie():
    """torch.clamp(x, min=0.0) of -0.0 is -0.0 (clamp keeps x on a tie, one bound or two);
    stridewise took maximum's answer, the bound, as np.clip does. Values, NaN places and
    signs of zero against torch in every float dtype, with number and tensor bounds; and
    NumPy's one-bound clip keeps maximum's answer."""
    x = torch.tensor([-0.0, 0.0, math.nan, -1.0, 2.0, math.inf, -math.inf])
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        t = x.to(dt)
        for lo, hi in ((0.0, None), (-0.0, None), (None, 0.0), (None, -0.0), (3, None),
                       (torch.zeros(7, dtype=dt), None), (None, -torch.zeros(7, dtype=torch.float64))):
            got, want = sw.clip(t, lo, hi), torch.clamp(t, lo, hi)
            real = ~torch.isnan(want)
            assert got.dtype == want.dtype and torch.equal(torch.isnan(got), torch.isnan(want))
            assert torch.equal(got[real], want[real]) and torch.equal(got[real].signbit(), want[real].signbit()), (dt, lo, hi)
    a = np.array([-0.0, 0.0, 1.0])
    assert same_bits(sw.clip(a, 0.0, None), np.clip(a, 0.0, None))


def test_torch_clamp_of_bool_tensors_by_one_bound():
    """torch.clamp of a bool tensor by a Python bool raises (its Scalar kernels have no bool
    loop), one bound or two; by a bool tensor bound it is maximum / minimum (the fuzz found
    stridewise computing the first)."""
    x, t = torch.tensor([True, False]), torch.tensor([False, True])
    for lo, hi in ((None, True), (False, None), (False, True)):
        with pytest.raises(NotImplementedError):
            torch.clamp(x, lo, hi)
        with pytest.raises(TypeError, match="not implemented for torch bool tensors"):
            sw.clip(x, lo, hi)
    for lo, hi in ((None, t), (t, None), (None, 2)):
        got, want = sw.clip(x, lo, hi), torch.clamp(x, lo, hi)
        assert got.dtype == want.dtype and torch.equal(got, want)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_torch_complex_isinf_takes_the_real_views_layout(dtype):
    """torch's isinf of a complex tensor is isinf(x.real) | isinf(x.imag): its TensorIterator
    reads the real view, whose layout can order the output otherwise than one over x itself
    (the fuzz found (1, 17, 5, 1) with strides (1, 1, 17, 85): torch (1, 1, 17, 85), where
    isnan's is (85, 1, 17, 17)). Values and strides against torch, over permuted views."""
    base = torch.tensor([complex(math.inf, 1), complex(0, math.nan), 2 + 3j] * 60, dtype=dtype)
    views = [torch.as_strided(base, (1, 17, 5, 1), (1, 1, 17, 85))]
    for shape, perm in (((1, 3, 1, 5), (2, 0, 3, 1)), ((5, 1, 3), (1, 2, 0)), ((2, 1, 1, 3), (3, 1, 2, 0))):
        views.append(base[: math.prod(shape)].reshape(shape).permute(perm))
        views.append(base[: 2 * math.prod(shape)].reshape(shape + (2,))[..., 0].permute(perm))
    for x in views:
        got, want = sw.isinf(x), torch.isinf(x)
        assert got.stride() == want.stride() and torch.equal(got, want), (x.shape, x.stride())


def test_torch_where_of_two_ints_past_int64():
    """torch.where(c, 2**63, 2**64 - 1) is uint64 (each int typed alone); stridewise raises a
    clear OverflowError (docs/semantics.md) and nothing else, and takes them as uint64
    tensors. Found by tools/fuzz_calls.py --lib torch, seed 3102."""
    c = torch.tensor([True, False])
    with pytest.raises(OverflowError, match="out of bounds for int64"):
        sw.where(c, 2**63, 2**64 - 1)
    x, y = (torch.tensor(v, dtype=torch.uint64) for v in (2**63, 2**64 - 1))
    got, want = sw.where(c, x, y), torch.where(c, x, y)
    assert got.dtype == want.dtype == torch.uint64 and torch.equal(got, want)


def test_torch_multiply_into_complex32_refuses():
    """float16 times a complex number is torch's complex32, which stridewise does not compute:
    a TypeError naming the dtype (the fuzz's torch-loop check had failed on it first)."""
    x = torch.tensor([[2.5], [7.0], [0.5]], dtype=torch.float16)
    with pytest.raises(TypeError, match="complex32"):
        sw.multiply(x, 1 + 2j)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_numpy_power_by_one_exponent_value_as_the_installed_numpy(dtype):
    """NumPy 2's float32 and float64 power takes sqrt for an exponent of 0.5 that is one
    value along its loop (a number, a NumPy scalar, a 0-d or one-element array, a broadcast
    view of one), so -0.0 ** 0.5 is -0.0 and -inf ** 0.5 NaN, where pow gives +0.0 and +inf;
    an exponent array of several elements, and float16, keep pow. Compared with the
    installed NumPy itself, whichever its release does. Found by tools/fuzz_calls.py --lib
    numpy, seed 3206 (a (17, 1, 1, 2) view by a 0-d exponent)."""
    x = np.array([-0.0, 0.0, -np.inf, np.inf, -4.0, 4.0, 2.0, np.nan, 1e-30], dtype=dtype)
    x2 = np.broadcast_to(x, (3, x.size)).T.copy().T            # a transposed 2-d view
    for e in (0.5, np.float64(0.5), np.float32(0.5), np.array(0.5), np.array([0.5]),
              np.broadcast_to(np.array(0.5), x.shape), np.full(x.shape, 0.5), 0.25, -0.5, 2.0):
        for base in (x, x2):
            with np.errstate(all="ignore"):
                want = np.power(base, e)
            got = sw.pow(base, e)
            assert got.dtype == want.dtype, (e, base.shape)
            assert np.array_equal(np.isnan(got), np.isnan(want)), (e, base.shape, got, want)
            finite = ~np.isnan(want)
            assert np.array_equal(np.signbit(got[finite]), np.signbit(want[finite])), (e, got, want)
            assert ulps(got, want) <= TOLERANCE_ULP["pow"].get(str(want.dtype), 0), (e, got, want)
    # the keywords' ops read the exponent as the plain call does
    mask = np.arange(x.size) % 3 != 2
    with np.errstate(all="ignore"):
        for kw in ({"where": mask, "out": np.full(x.shape, 7.0, dtype)}, {"dtype": np.float64}, {"order": "F"}):
            want = np.power(x, 0.5, **{k: v.copy() if k == "out" else v for k, v in kw.items()})
            got = sw.pow(x, 0.5, **kw)
            assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), kw
            assert np.array_equal(np.signbit(got), np.signbit(want)), kw


def test_torch_clamp_of_bool_by_a_float_and_an_int_past_int64():
    """A float number beside bool tensors makes torch's result float32 first, so an int
    bound of 2^63 or more is a float there, not a refused uint64 (found by
    tools/fuzz_calls.py --lib torch, seed 3209); without a float torch refuses, as stridewise."""
    t = torch.tensor([True, False])
    for lo, hi in ((0.0, 2**64 - 1), (0.5, 2**63), (-2.5, 2**63 + 5)):
        got, want = sw.clip(t, lo, hi), torch.clamp(t, lo, hi)
        assert got.dtype == want.dtype and torch.equal(got, want), (lo, hi)
    with pytest.raises(RuntimeError, match="uint64"):
        torch.clamp(t, 0, 2**64 - 1)
    with pytest.raises(OverflowError, match="out of bounds for int64"):
        sw.clip(t, 0, 2**64 - 1)


def test_torch_complex64_divide_near_the_float_maximum():
    """A quotient one part of which overflows: the inf parts as torch's, the finite part
    within divide's tolerance of torch's CPU kernel (which scales by an approximate
    reciprocal; complex.h), as for finite quotients (tools/fuzz_calls.py --lib torch, seed
    3209, read the finite part exactly)."""
    from oracle import complex_ulps

    big = 3.4028234663852886e38
    a = torch.tensor([complex(big, big), complex(big, -big), complex(-big, big)], dtype=torch.complex64)
    b = torch.tensor([2.5 - 3j, -3 + 2.5j], dtype=torch.complex64)
    got, want = sw.divide(a[:, None], b[None, :]), torch.divide(a[:, None], b[None, :])
    assert not torch.isfinite(want).all()
    assert complex_ulps(got.numpy(), want.numpy()) <= COMPLEX_TOLERANCE_ULP["divide"]["torch complex64"]
