"""PyTorch's type-promotion tests (test/test_type_promotion.py, TestTypePromotion), re-expressed
against stridewise's ops on CPU tensors. Inputs and expected results are upstream's; the code
is ours.

The oracle is torch itself on the CPU: each stridewise call is checked against the same torch
function on the same inputs -- dtype, shape, strides and values bit for bit (NaN where torch
has NaN, the sign of every zero) -- and against upstream's literal where it gives one. Where
torch raises, stridewise must raise too. Departures documented in docs/semantics.md are
asserted as documented:

- an out= (or an in-place target) of a dtype torch's can_cast refuses, or of another dtype
  than the result for the ops whose torch kernels insist on it (negative, floor, ceil), raises
  TypeError, where torch raises RuntimeError;
- torch's complex32 (ComplexHalf) is not a stridewise dtype: a call whose torch result would
  be complex32 raises TypeError;
- Python numbers alone compute as NumPy arrays (`sw.add(True, True)` is NumPy's `np.True_`);
- complex products and quotients of torch tensors are held to `COMPLEX_TOLERANCE_ULP`
  (torch's CPU vector kernels round their own way).

torch's in-place methods (`x.add_(y)`) are `torch.add(x, y, out=x)`; stridewise has only
`remainder_` in place, so the other in-place cases pass `out=` the first operand.

Float-valued promotions depend on torch's default dtype, and upstream runs those tests under
float32 and then float64 in one test (its float_double_default_dtype); `float_then_double`
does the same. Left out, as they test no elementwise op stridewise has: test_mixed_type_backward
(gradients), test_non_promoting_ops (lerp), test_create_bool_tensors (arange, linspace),
test_indexing's index assignment, test_sparse_*, test_integer_addcdiv_deprecated,
test_ternary_out_promotion (addcdiv, addcmul), test_cat*, and
test_numpy_array_binary_ufunc_promotion (stridewise refuses a torch tensor beside a NumPy
array: "move them to one library").
"""
import functools
import inspect
import operator
from itertools import product

import numpy as np
import pytest

import stridewise as sw
from stridewise.ops.builtins import COMPLEX_TOLERANCE_ULP
from test_upstream_torch_ops import assert_complex_ulp as assert_complex_close, assert_same

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")

ALL_TORCH_STRIDEWISE = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                        torch.uint16, torch.uint32, torch.uint64, torch.float16, torch.bfloat16,
                        torch.float32, torch.float64, torch.complex64, torch.complex128)
# all_types_and_complex_and(half, bfloat16, bool)
ALL_AND_HALF_BF16_BOOL = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                          torch.float16, torch.bfloat16, torch.float32, torch.float64,
                          torch.complex64, torch.complex128)
CORRESPONDING_COMPLEX = {torch.float16: torch.complex32, torch.float32: torch.complex64,
                         torch.float64: torch.complex128}


def _id(value):
    if isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    if isinstance(value, tuple) and all(isinstance(v, torch.dtype) for v in value):
        return "-".join(_id(v) for v in value)
    return None


def float_then_double(test):
    """Runs `test` with torch's default dtype float32, then float64, in one test (upstream's
    float_double_default_dtype), passing it as `default_dtype`; restores the default after."""
    @functools.wraps(test)
    def run(*args, **kwargs):
        saved = torch.get_default_dtype()
        try:
            for default in (torch.float32, torch.float64):
                torch.set_default_dtype(default)
                try:
                    test(*args, default_dtype=default, **kwargs)
                except AssertionError as e:
                    e.add_note(f"with torch's default dtype {default}")
                    raise
        finally:
            torch.set_default_dtype(saved)
    sig = inspect.signature(test)
    run.__signature__ = sig.replace(parameters=[p for n, p in sig.parameters.items() if n != "default_dtype"])
    return run


# ----------------------------------------------------------------------------- helpers

def assert_op(op_name, got, want, msg=""):
    """assert_same, or for a complex product or quotient the documented tolerance."""
    ulps = COMPLEX_TOLERANCE_ULP.get(op_name, {}).get(f"torch {_id(want.dtype)}")
    if want.is_complex() and ulps is not None:
        assert_complex_close(got, want, ulps, msg)
    else:
        assert_same(got, want, msg)


def torch_raises(fn, match=None):
    """torch's own call raises RuntimeError (the oracle for an error case)."""
    with pytest.raises(RuntimeError, match=match):
        fn()


def gen(seed):
    return torch.Generator().manual_seed(seed)


def make_test_tensor(dtype, seed, remove_zeros=False, shape=(5, 5, 5)):
    """A tensor as upstream's _get_test_tensor draws one: bools 0/1 (1 only with remove_zeros),
    floats and complex numbers from randn (|x| < 0.05 made 5 with remove_zeros), integers in
    [-5, 10) ([0, 10) unsigned; 0 made 5 with remove_zeros)."""
    g = gen(seed)
    if dtype == torch.bool:
        return torch.randint(int(remove_zeros), 2, shape, generator=g).to(torch.bool)
    if dtype.is_floating_point or dtype.is_complex:
        t = torch.randn(shape, generator=g, dtype=torch.complex128 if dtype.is_complex else torch.float64)
        t = t.to(dtype)
        if remove_zeros:
            t[t.abs() < 0.05] = 5
        return t
    signed = dtype not in (torch.uint8, torch.uint16, torch.uint32, torch.uint64)
    t = torch.randint(-5 if signed else 0, 10, shape, generator=g).to(dtype)
    if remove_zeros:
        t[t == 0] = 5
    return t


# ----------------------------------------------------------------------------- in place, out=

def test_inplace():
    """test_type_promotion.py::TestTypePromotion::test_inplace: in-place ops don't promote.
    int32 += 1.5 raises (stridewise: TypeError, nothing written); int32 += int64, then += 1,
    gives 3 in int32; bool += uint8 raises (bool is its own category); uint8 *= int16 is
    allowed (signed into unsigned), computing in int16 and wrapping into uint8."""
    ones = torch.ones([4, 4, 4], dtype=torch.int32)
    int_tensor = ones.clone()
    torch_raises(lambda: int_tensor.clone().add_(1.5), "can't be cast to")
    with pytest.raises(TypeError, match="int32"):
        sw.add(int_tensor, 1.5, out=int_tensor)
    torch_raises(lambda: int_tensor.clone().remainder_(1.5), "can't be cast to")
    with pytest.raises(TypeError):
        sw.remainder_(int_tensor, 1.5)
    assert torch.equal(int_tensor, ones), "a refused in-place op wrote its target"

    long_tensor = torch.ones([4, 4, 4], dtype=torch.int64)
    want = ones.clone()
    want.add_(long_tensor)
    want.add_(1)
    assert sw.add(int_tensor, long_tensor, out=int_tensor) is int_tensor
    assert sw.add(int_tensor, 1, out=int_tensor) is int_tensor
    assert_same(int_tensor, want, "int32 += int64; int32 += 1")
    assert_same(int_tensor, torch.full([4, 4, 4], 3, dtype=torch.int32), "upstream's expected + 2")

    sevens = torch.full([4, 4, 4], 7, dtype=torch.int32)
    want = sevens.clone().remainder_(torch.full([4, 4, 4], -3, dtype=torch.int64))
    got = sevens.clone()
    sw.remainder_(got, torch.full([4, 4, 4], -3, dtype=torch.int64))
    assert_same(got, want, "int32.remainder_(int64)")

    bool_tensor = torch.tensor([1, 1, 1], dtype=torch.bool)
    uint8_tensor = torch.tensor([1, 1, 1], dtype=torch.uint8)
    torch_raises(lambda: bool_tensor.clone().add_(uint8_tensor), "can't be cast to")
    with pytest.raises(TypeError, match="bool"):
        sw.add(bool_tensor, uint8_tensor, out=bool_tensor)
    assert torch.equal(bool_tensor, torch.tensor([True, True, True]))

    u8 = torch.tensor([200, 3, 255], dtype=torch.uint8)
    i16 = torch.tensor([2, -1, 300], dtype=torch.int16)
    want = u8.clone()
    want *= i16
    got = u8.clone()
    assert sw.multiply(got, i16, out=got) is got
    assert_same(got, want, "uint8 *= int16")
    assert_same(got, torch.tensor([144, 253, 212], dtype=torch.uint8), "400, -3, 76500 (int16: 10964) into uint8")


def test_alternate_result():
    """test_type_promotion.py::TestTypePromotion::test_alternate_result: float32 + float32 into
    an int64 out raises (stridewise: TypeError, nothing written); into a float64 out it is
    the float64 of the float32 sum."""
    x = torch.tensor([1, 1, 1, 1], dtype=torch.float)
    o = torch.tensor([0, 0, 0, 0], dtype=torch.long)
    torch_raises(lambda: torch.add(x, x, out=o.clone()), "can't be cast to")
    with pytest.raises(TypeError, match="int64"):
        sw.add(x, x, out=o)
    assert torch.equal(o, torch.zeros(4, dtype=torch.long))
    d = torch.tensor([1, 1, 1, 1], dtype=torch.double)
    want = torch.add(x, x, out=d.clone())
    assert sw.add(x, x, out=d) is d
    assert_same(d, want, "add into float64 out")
    assert_same(d, x.double() + x.double(), "upstream's x + x in float64")


def test_can_cast():
    """test_type_promotion.py::TestTypePromotion::test_can_cast: can_cast(double, float) holds,
    can_cast(float, int) does not -- as out= dtypes: a float64 result goes into a float32 out,
    a float32 result into an int32 out raises (stridewise: TypeError)."""
    assert torch.can_cast(torch.double, torch.float) and not torch.can_cast(torch.float, torch.int)
    d = torch.tensor([1.25, -3.5, 1e300], dtype=torch.double)
    want = torch.add(d, d, out=torch.empty(3, dtype=torch.float))
    assert_same(sw.add(d, d, out=torch.empty(3, dtype=torch.float)), want, "float64 result into float32")
    f = d.float()
    torch_raises(lambda: torch.add(f, f, out=torch.empty(3, dtype=torch.int)), "can't be cast to")
    with pytest.raises(TypeError):
        sw.add(f, f, out=torch.empty(3, dtype=torch.int))


def test_computation_ignores_out():
    """test_type_promotion.py::TestTypePromotion::test_computation_ignores_out: out= of
    float64 does not change the computation: float16 33000 + 33000 is inf (not 66000), the
    float16 quotient 1.5 / 0.666 is float16's, uint8 5 - 8 is 253 (not -3)."""
    out = torch.empty(0, dtype=torch.float64)
    t = torch.tensor(33000, dtype=torch.float16)
    want = torch.add(t, t, out=out.clone())
    got = sw.add(t, t, out=out.clone())
    assert_same(got, want, "float16 add into float64 out")
    assert got.item() == (t + t).item() == float("inf") and got.item() != (t.double() + t).item()

    a = torch.tensor(1.5, dtype=torch.float16)
    b = torch.tensor(0.666, dtype=torch.float16)
    want = torch.true_divide(a, b, out=out.clone())
    got = sw.divide(a, b, out=out.clone())
    assert_same(got, want, "float16 divide into float64 out")
    assert got.item() == (a / b).item() and got.item() != (a.double() / a).item()

    a = torch.tensor(5, dtype=torch.uint8)
    b = torch.tensor(8, dtype=torch.uint8)
    want = torch.sub(a, b, out=out.clone())
    got = sw.subtract(a, b, out=out.clone())
    assert_same(got, want, "uint8 subtract into float64 out")
    assert got.item() == 253.0 and got.item() != (a.double() - b).item()


_UNARY_OUT_DTYPES = (torch.int64, torch.float32, torch.float64, torch.complex64, torch.complex128)


@pytest.mark.parametrize("dtypes", list(product(_UNARY_OUT_DTYPES, repeat=2)), ids=_id)
def test_unary_op_out_casting(dtypes):
    """test_type_promotion.py::TestTypePromotion::test_unary_op_out_casting: neg, floor and
    ceil of a 0-d tensor of 1 take an out of the input's dtype only (stridewise: TypeError, as
    documented), floor and ceil of a complex tensor raise (UnsupportedDtypeError, a
    RuntimeError), and int64 floor / ceil into int64 work; otherwise op(t, out=out) is op(t)
    and is out."""
    t = torch.tensor(1, dtype=dtypes[0])
    for sw_op, torch_op in ((sw.negative, torch.neg), (sw.floor, torch.floor), (sw.ceil, torch.ceil)):
        out = torch.empty(0, dtype=dtypes[1])
        real_only = torch_op is not torch.neg
        if dtypes[0] is not dtypes[1]:
            torch_raises(lambda: torch_op(t, out=torch.empty(0, dtype=dtypes[1])))
            with pytest.raises(TypeError):
                sw_op(t, out=out)
        elif real_only and dtypes[0].is_complex:
            torch_raises(lambda: torch_op(t, out=torch.empty(0, dtype=dtypes[1])))
            with pytest.raises(RuntimeError):
                sw_op(t, out=out)
        else:
            want = torch_op(t)
            assert_same(sw_op(t), want, f"{torch_op.__name__}({dtypes[0]})")
            assert sw_op(t, out=out) is out
            assert_same(out, want, f"{torch_op.__name__}({dtypes[0]}, out=)")


# ----------------------------------------------------------------------------- basic examples

def test_unsigned():
    """test_type_promotion.py::TestTypePromotion::test_unsigned: uint8 + 5 stays uint8."""
    u = torch.ones(3, dtype=torch.uint8)
    got = sw.add(u, 5)
    assert_same(got, u + 5, "uint8 + 5")
    assert got.dtype == torch.uint8


def test_int_promotion():
    """test_type_promotion.py::TestTypePromotion::test_int_promotion: int32 + int64 is int64,
    equal to int64 + int64."""
    a = torch.ones([4, 4, 4], dtype=torch.int32)
    b = torch.ones([4, 4, 4], dtype=torch.int64)
    got = sw.add(a, b)
    assert_same(got, a + b, "int32 + int64")
    assert_same(got, b + b, "upstream's b + b")


def test_float_promotion():
    """test_type_promotion.py::TestTypePromotion::test_float_promotion: float32 + float64 is
    float64 in either order."""
    a = torch.ones([4, 4, 4], dtype=torch.float)
    b = torch.ones([4, 4, 4], dtype=torch.double)
    assert_same(sw.add(a, b), a + b, "float32 + float64")
    assert_same(sw.add(b, a), b + a, "float64 + float32")
    assert_same(sw.add(a, b), b + b, "upstream's b + b")


def test_add_wrapped():
    """test_type_promotion.py::TestTypePromotion::test_add_wrapped: int32 + 1 stays int32."""
    a = torch.ones([4, 4, 4], dtype=torch.int)
    got = sw.add(a, 1)
    assert_same(got, a + 1, "int32 + 1")
    assert_same(got, a + a, "upstream's a + a")


def test_int_to_float():
    """test_type_promotion.py::TestTypePromotion::test_int_to_float: int32 + float32 is float32."""
    a = torch.ones([4, 4, 4], dtype=torch.int32)
    b = torch.ones([4, 4, 4], dtype=torch.float)
    got = sw.add(a, b)
    assert_same(got, a + b, "int32 + float32")
    assert got.dtype == torch.float32


@float_then_double
def test_from_issue(default_dtype):
    """test_type_promotion.py::TestTypePromotion::test_from_issue (pytorch#9515): float32 * 5
    is float32; uint8 + 1 and uint8 + 1000 are uint8 (1000 wraps); uint8 + 5.5 is the default
    dtype; uint8 + a 0-d float64 tensor is float64; float32 + a 0-d float64 is float32."""
    a = torch.rand(3, generator=gen(1), dtype=torch.float32)
    u = torch.tensor([0, 0, 1], dtype=torch.uint8)
    other = torch.tensor(5.5, dtype=torch.double)
    assert_same(sw.multiply(a, 5), a * 5, "float32 * 5")
    assert_same(sw.add(u, 1), u + 1, "uint8 + 1")
    assert_same(sw.add(u, 1000), u + 1000, "uint8 + 1000")
    assert_same(sw.add(u, 1000), torch.tensor([232, 232, 233], dtype=torch.uint8), "1000 wraps to 232")
    got = sw.add(u, 5.5)
    assert_same(got, u + 5.5, "uint8 + 5.5")
    assert got.dtype == default_dtype
    assert_same(sw.add(u, other), u + other, "uint8 + 0-d float64")
    assert sw.add(u, other).dtype == torch.double
    assert_same(sw.add(a, other), a + other, "float32 + 0-d float64")
    assert sw.add(a, other).dtype == torch.float32


@float_then_double
def test_half(default_dtype):
    """test_type_promotion.py::TestTypePromotion::test_half: a 0-d float16 + 2.2 and + 100000
    (inf) stay float16; + a 0-d tensor of the default dtype is the default dtype."""
    half = torch.tensor(5.5, dtype=torch.float16)
    assert_same(sw.add(half, 2.2), half + 2.2, "half + 2.2")
    got = sw.add(half, 100000)
    assert_same(got, half + 100000, "half + 100000")
    assert got.dtype == torch.float16 and got.item() == float("inf")
    default_tensor = torch.tensor(100000.0)
    got = sw.add(half, default_tensor)
    assert_same(got, half + default_tensor, "half + 0-d default")
    assert got.dtype == default_dtype


def test_bfloat16():
    """test_type_promotion.py::TestTypePromotion::test_bfloat16: a 0-d bfloat16 with 2.2, 5 and
    100000 (inf) stays bfloat16, and with complex numbers is complex64, the same in either
    order; with a 0-d tensor of every dtype it is promote_types(dtype, bfloat16) (float16:
    float32), the same in either order."""
    bf = torch.tensor(5.5, dtype=torch.bfloat16)
    for scalar in (2.2, 5, 100000, complex(1, 1), complex(-2, 0), complex(0, -3)):
        got = sw.add(bf, scalar)
        assert_same(got, bf + scalar, f"bf + {scalar}")
        assert_same(sw.add(scalar, bf), scalar + bf, f"{scalar} + bf")
        assert_same(sw.add(scalar, bf), got, f"{scalar} + bf vs bf + {scalar}")
        assert got.dtype == (torch.complex64 if isinstance(scalar, complex) else torch.bfloat16)
    for dtype in ALL_AND_HALF_BF16_BOOL:
        t = torch.tensor(1, dtype=dtype)
        if dtype in (torch.float32, torch.float64, torch.complex64, torch.complex128):
            expected = dtype
        elif dtype == torch.float16:
            expected = torch.float32
        else:
            expected = torch.bfloat16
        got = sw.add(bf, t)
        assert_same(got, bf + t, f"bf + 0-d {dtype}")
        assert_same(sw.add(t, bf), t + bf, f"0-d {dtype} + bf")
        assert got.dtype == expected == torch.promote_types(dtype, torch.bfloat16)


@float_then_double
def test_complex_promotion(default_dtype):
    """test_type_promotion.py::TestTypePromotion::test_complex_promotion: complex64 + complex128
    is complex128 either way; complex64 * 5 and complex64 + a 0-d float64 stay complex64; a
    complex 0-d tensor or Python complex times a 1-d tensor: a float tensor takes the complex
    type of its own precision (float16: complex32, which stridewise refuses with TypeError;
    bfloat16: complex64), an integral one the 0-d tensor's dtype, or the default dtype's
    complex for a Python complex."""
    a = torch.ones([4, 4, 4], dtype=torch.complex64)
    b = torch.ones([4, 4, 4], dtype=torch.complex128)
    assert_same(sw.add(a, b), a + b, "complex64 + complex128")
    assert_same(sw.add(b, a), b + a, "complex128 + complex64")
    assert_same(sw.add(a, b), b + b, "upstream's b + b")

    a = torch.randn(3, generator=gen(2), dtype=torch.complex64)
    assert_op("multiply", sw.multiply(a, 5), a * 5, "complex64 * 5")
    other = torch.tensor(5.5, dtype=torch.double)
    assert_same(sw.add(a, other), a + other, "complex64 + 0-d float64")
    assert sw.add(a, other).dtype == torch.complex64

    def scalar_times_tensor(s, t):
        if t.dtype.is_floating_point:
            expected = CORRESPONDING_COMPLEX.get(t.dtype, torch.complex64)
        elif isinstance(s, torch.Tensor):
            expected = s.dtype
        else:
            expected = CORRESPONDING_COMPLEX[torch.get_default_dtype()]
        assert torch.result_type(s, t) == torch.result_type(t, s) == expected
        for x, y in ((s, t), (t, s)):
            want = torch.mul(x, y)
            assert want.dtype == expected
            if expected == torch.complex32:
                with pytest.raises(TypeError, match="complex32"):
                    sw.multiply(x, y)
            else:
                assert_op("multiply", sw.multiply(x, y), want, f"{x!r} * {y!r}")

    def one_d(dtype, seed):
        return (torch.rand(3, generator=gen(seed), dtype=torch.float64) * 18 - 9).to(dtype) \
            if dtype.is_floating_point else torch.randint(-9, 10, (3,), generator=gen(seed)).to(dtype)

    for s_dtype, t_dtypes in ((torch.complex64, (torch.float16, torch.float64, torch.int64)),
                              (torch.complex128, (torch.float32, torch.bfloat16))):
        s = torch.complex(*(torch.rand((), generator=gen(3 + i), dtype=torch.float64) * 18 - 9
                            for i in range(2))).to(s_dtype)
        for k, t_dtype in enumerate(t_dtypes):
            t = one_d(t_dtype, 10 + k)
            scalar_times_tensor(s, t)            # 0-d tensor x 1-d tensor
            scalar_times_tensor(s.item(), t)     # Python complex x 1-d tensor


def test_complex_half():
    """test_type_promotion.py::TestTypePromotion::test_complex_half: complex32 (ComplexHalf) is
    not a stridewise dtype (docs/semantics.md): a complex32 tensor, and a float16 tensor times
    a Python complex (complex32 in torch), raise TypeError."""
    chalf = torch.tensor(5.5, dtype=torch.chalf)
    assert (chalf * 2.2).dtype == torch.chalf
    with pytest.raises(TypeError):
        sw.multiply(chalf, 2.2)
    half = torch.tensor(5.5, dtype=torch.float16)
    assert (half * complex(1, 1)).dtype == torch.chalf
    with pytest.raises(TypeError, match="complex32"):
        sw.multiply(half, complex(1, 1))


@float_then_double
def test_complex_scalar_mult_tensor_promotion(default_dtype):
    """test_type_promotion.py::TestTypePromotion::test_complex_scalar_mult_tensor_promotion:
    1j * ones(2) + 1j is [2j, 2j] of the default dtype's complex type."""
    ones = torch.ones(2)
    got = sw.multiply(1j, ones)
    assert_op("multiply", got, 1j * ones, "1j * ones")
    got = sw.add(got, 1j)
    want = 1j * ones + 1j
    assert_same(got, want, "1j * ones + 1j")
    assert_same(got, torch.tensor([2j, 2j]), "upstream's [2j, 2j]")


# ----------------------------------------------------------------------------- many promotions

_MANY_PAIRS = (
    (torch.uint8, torch.int8), (torch.int8, torch.int16), (torch.int16, torch.int64),
    (torch.uint8, torch.int32), (torch.int32, torch.float32), (torch.int64, torch.float64),
    (torch.uint8, torch.float16), (torch.int16, torch.bfloat16), (torch.float16, torch.bfloat16),
    (torch.bfloat16, torch.float32), (torch.float16, torch.float64), (torch.float32, torch.float64),
    (torch.int64, torch.complex64), (torch.float16, torch.complex64), (torch.float64, torch.complex64),
    (torch.complex64, torch.complex128), (torch.bfloat16, torch.complex128),
)

# op name, stridewise call, torch call
_MANY_OPS = (
    ("add", sw.add, torch.add),
    ("multiply", sw.multiply, torch.mul),
    ("divide", sw.divide, torch.div),
    ("subtract", lambda a, b: sw.subtract(b, a), torch.rsub),      # rsub(a, b) is b - a
)


# every other pair (each kind of promotion once): each pair builds its own mixed kernels,
# and CI's 15 minutes hold no more
@pytest.mark.parametrize("dtypes", _MANY_PAIRS[::2], ids=_id)
def test_many_promotions(dtypes):
    """test_type_promotion.py::TestTypePromotion::test_many_promotions: add, mul, div and rsub
    of 5x5x5 tensors of two dtypes (divisors without zeros), contiguous and non-contiguous
    (transposed (0, 2) and (2, 1)): the result dtype is promote_types, the values are the op's
    on both operands converted to it. Representative pairs of get_all_math_dtypes (float16 and
    bfloat16 included: torch's CPU kernels have them now)."""
    dt1, dt2 = dtypes
    common = torch.promote_types(dt1, dt2)
    for (name, sw_op, torch_op), non_contiguous in product(_MANY_OPS, (True, False)):
        first = make_test_tensor(dt1, 20)
        second = make_test_tensor(dt2, 21, remove_zeros=torch_op is torch.div)
        if non_contiguous:
            first, second = first.transpose(0, 2), second.transpose(2, 1)
            assert first.stride() != second.stride()
        assert first.is_contiguous() != non_contiguous and second.is_contiguous() != non_contiguous
        msg = f"{torch_op.__name__} with {dt1}, {dt2}, non_contiguous={non_contiguous}"
        want = torch_op(first, second)
        got = sw_op(first, second)
        assert_op(name, got, want, msg)
        assert got.dtype == torch_op(first.to(common), second.to(common)).dtype
        if not want.is_complex():
            torch.testing.assert_close(got, torch_op(first.to(common), second.to(common)),
                                       rtol=0, atol=0, equal_nan=True, check_stride=False)


# ----------------------------------------------------------------------------- alpha, booleans

def test_alpha_mismatch():
    """test_type_promotion.py::TestTypePromotion::test_alpha_mismatch: a float alpha with int32
    or bool tensors raises ("alpha must not be"; stridewise's AlphaError is a RuntimeError);
    bool + bool equals add(alpha=True)."""
    x = torch.ones(4, dtype=torch.int)
    for t in (x, x.to(torch.bool)):
        torch_raises(lambda: torch.add(t, t, alpha=1.1), "alpha must not be")
        with pytest.raises(RuntimeError, match="alpha must not be"):
            sw.add(t, t, alpha=1.1)
    x = x.to(torch.bool)
    want = torch.add(x, x, alpha=True)
    assert_same(sw.add(x, x, alpha=True), want, "bool + bool, alpha=True")
    assert_same(sw.add(x, x), x + x, "bool + bool")
    assert_same(sw.add(x, x), want, "bool + bool vs alpha=True")


def test_booleans():
    """test_type_promotion.py::TestTypePromotion::test_booleans: [True] + [True] and [True] +
    True are [True]; add of Python bools is their or (stridewise: NumPy's np.bool_, as
    documented for numbers alone); a bool alpha with non-bool results raises ("Boolean alpha
    only supported"), also for numbers alone (alpha= follows torch for every library); 0-d
    True + True with alpha=True is True."""
    onedim = torch.tensor([True])
    assert_same(sw.add(onedim, onedim), onedim + onedim, "[True] + [True]")
    assert_same(sw.add(onedim, onedim), onedim, "upstream's [True]")
    assert_same(sw.add(onedim, True), onedim + True, "[True] + True")
    for a, b, expected in ((True, True, True), (False, False, False), (False, True, True)):
        assert torch.add(a, b).item() is expected
        got = sw.add(a, b)
        assert type(got) is np.bool_ and got == expected, f"add({a}, {b}) gave {got!r}"

    torch_raises(lambda: torch.add(1, 1, alpha=True), "Boolean alpha only supported")
    with pytest.raises(RuntimeError, match="Boolean alpha only supported"):
        sw.add(1, 1, alpha=True)
    one = torch.tensor(1)
    torch_raises(lambda: torch.add(one, one, alpha=True), "Boolean alpha only supported")
    with pytest.raises(RuntimeError, match="Boolean alpha only supported"):
        sw.add(one, one, alpha=True)
    t = torch.tensor(True)
    want = torch.add(t, t, alpha=True)
    assert_same(sw.add(t, t, alpha=True), want, "0-d True + True, alpha=True")
    assert_same(sw.add(t, t, alpha=True), torch.tensor(True), "upstream's True")


# ----------------------------------------------------------------------------- result types

_RESULT_TYPE_PAIRS = (
    (torch.bool, torch.bool), (torch.bool, torch.uint8), (torch.bool, torch.float16),
    (torch.uint8, torch.int8), (torch.int8, torch.bfloat16), (torch.int16, torch.int32),
    (torch.int32, torch.float16), (torch.int64, torch.float32), (torch.float16, torch.bfloat16),
    (torch.bfloat16, torch.float64), (torch.float16, torch.complex128), (torch.float64, torch.complex64),
    (torch.complex64, torch.complex128), (torch.bool, torch.complex128),
)


@pytest.mark.parametrize("dtypes", _RESULT_TYPE_PAIRS, ids=_id)
def test_result_type(dtypes):
    """test_type_promotion.py::TestTypePromotion::test_result_type: a + b for each of a 1-d
    tensor (0, 1), a 0-d tensor of 1 and its Python number against the same three of a second
    dtype (two Python numbers left out: stridewise computes them as NumPy does): the result
    dtype is torch.result_type(a, b), and for two of one kind promote_types. Where torch's
    result is complex32 (a float16 tensor with a Python complex) stridewise raises TypeError.
    Representative pairs of all_types_and_complex_and(half, bfloat16, bool)."""
    def kind_dtype(x):
        if torch.is_tensor(x):
            return x.dtype
        return {bool: torch.bool, int: torch.int64, float: torch.float32, complex: torch.complex64}[type(x)]

    a_tensor = torch.tensor((0, 1), dtype=dtypes[0])
    a_single = torch.tensor(1, dtype=dtypes[0])
    b_tensor = torch.tensor((1, 0), dtype=dtypes[1])
    b_single = torch.tensor(1, dtype=dtypes[1])
    combo = ((a_tensor, a_single, a_single.item()), (b_tensor, b_single, b_single.item()))
    for (i, a), (j, b) in product(enumerate(combo[0]), enumerate(combo[1])):
        if i == 2 and j == 2:
            continue
        msg = f"{a!r} + {b!r}"
        want = a + b
        assert want.dtype == torch.result_type(a, b), msg
        if i == j:
            assert want.dtype == torch.promote_types(kind_dtype(a), kind_dtype(b)), msg
        if want.dtype == torch.complex32:
            with pytest.raises(TypeError, match="complex32"):
                sw.add(a, b)
            continue
        assert_same(sw.add(a, b), want, msg)


@float_then_double
def test_result_type_tensor_vs_scalar(default_dtype):
    """test_type_promotion.py::TestTypePromotion::test_result_type_tensor_vs_scalar: spot checks
    in either order: float16 [1, 2] with a 0-d int64 is float16; a 0-d float32 with float64
    [1, 2] is float64; a 0-d int32 with 1 is int32; a 0-d int64 with 1.0 is the default dtype;
    a 0-d int64 with int32 [1, 1] is int32; float32 [1, 1] with 1.0 is float32; complex64
    [1, 1] with a 0-d complex128 is complex64 and complex128 [1, 1] with a 0-d complex64
    complex128; bool [1, 1] with 1.0 is the default dtype."""
    spots = (
        (torch.tensor([1, 2], dtype=torch.half), torch.tensor(1, dtype=torch.long), torch.half),
        (torch.tensor(1, dtype=torch.float), torch.tensor([1, 2], dtype=torch.double), torch.double),
        (torch.tensor(1, dtype=torch.int), 1, torch.int),
        (torch.tensor(1), 1.0, default_dtype),
        (torch.tensor(1, dtype=torch.long), torch.tensor([1, 1], dtype=torch.int), torch.int),
        (torch.tensor([1.0, 1.0], dtype=torch.float), 1.0, torch.float),
        (torch.tensor([1.0, 1.0], dtype=torch.complex64), torch.tensor(1.0, dtype=torch.complex128),
         torch.complex64),
        (torch.tensor([1.0, 1.0], dtype=torch.complex128), torch.tensor(1.0, dtype=torch.complex64),
         torch.complex128),
        (torch.tensor([1, 1], dtype=torch.bool), 1.0, default_dtype),
    )
    for a, b, res_dtype in spots:
        for x, y in ((a, b), (b, a)):
            assert torch.result_type(x, y) == res_dtype
            got = sw.add(x, y)
            assert_same(got, torch.add(x, y), f"{x!r} + {y!r}")
            assert got.dtype == res_dtype


def test_promote_types():
    """test_type_promotion.py::TestTypePromotion::test_promote_types: float32 with int32 is
    float32, float32 with float64 float64, int32 with uint8 int32 (as results of add); float8
    does not promote (torch: RuntimeError; stridewise: TypeError, not a stridewise dtype)."""
    for d1, d2, expected in ((torch.float, torch.int, torch.float), (torch.float, torch.double, torch.double),
                             (torch.int, torch.uint8, torch.int)):
        a = torch.tensor([3, -2, 7]).to(d1)
        b = torch.tensor([5, 4, 250]).to(d2)
        for x, y in ((a, b), (b, a)):
            got = sw.add(x, y)
            assert_same(got, torch.add(x, y), f"{x.dtype} + {y.dtype}")
            assert got.dtype == expected == torch.promote_types(x.dtype, y.dtype)
    f = torch.ones(2)
    for f8 in (torch.float8_e5m2, torch.float8_e4m3fn):
        e = torch.ones(2, dtype=f8)
        for x, y in ((e, f), (f, e)):
            torch_raises(lambda: torch.add(x, y), "Promotion for Float8 Types is not supported")
            with pytest.raises(TypeError):
                sw.add(x, y)


def test_promote_self():
    """test_type_promotion.py::TestTypePromotion::test_promote_self: promote_types(d, d) is d for
    every dtype -- here the dtype of a product of two tensors of d, for each of stridewise's 15
    dtypes (mul: torch's CPU kernel has the unsigned 16-64 bit types too)."""
    for dtype in ALL_TORCH_STRIDEWISE:
        assert torch.promote_types(dtype, dtype) == dtype
        x = torch.tensor([0, 1, 3, 200, 7]).to(dtype)
        y = torch.tensor([1, 1, 250, 2, 0]).to(dtype)
        got = sw.multiply(x, y)
        assert_op("multiply", got, torch.mul(x, y), f"{dtype} * {dtype}")
        assert got.dtype == dtype


def test_indexing():
    """test_type_promotion.py::TestTypePromotion::test_indexing (its elementwise part,
    pytorch#27824): float32 ones(9, 9) + a uint8 ones(10, 10)[1:, 1:] view is float32 twos."""
    tmp = torch.ones(9, 9, dtype=torch.float)
    mask = torch.ones(10, 10, dtype=torch.uint8)
    got = sw.add(tmp, mask[1:, 1:])
    assert_same(got, tmp + mask[1:, 1:], "float32 + uint8 view")
    assert_same(got, torch.full([9, 9], 2.0, dtype=torch.float), "upstream's twos")


def test_transpose():
    """test_type_promotion.py::TestTypePromotion::test_transpose (pytorch#28502): a transposed
    bool tensor == 0 is the same as == False."""
    a = torch.tensor([[True, True], [False, True]])
    by_int = sw.equal(a.t(), 0)
    by_bool = sw.equal(a.t(), False)
    assert_same(by_int, a.t() == 0, "a.t() == 0")
    assert_same(by_bool, a.t() == False, "a.t() == False")  # noqa: E712
    assert_same(by_int, by_bool, "== 0 vs == False")


# ----------------------------------------------------------------------------- comparisons

_COMPARISONS = (
    ("lt", sw.less, torch.lt, operator.lt), ("le", sw.less_equal, torch.le, operator.le),
    ("gt", sw.greater, torch.gt, operator.gt), ("ge", sw.greater_equal, torch.ge, operator.ge),
    ("eq", sw.equal, torch.eq, operator.eq), ("ne", sw.not_equal, torch.ne, operator.ne),
)
_VALUE_FOR_TYPE = {
    torch.uint8: 1 << 5, torch.int8: 1 << 5, torch.int16: 1 << 10, torch.int32: 1 << 20,
    torch.int64: 1 << 35, torch.float16: 1 << 10, torch.float32: 1 << 20, torch.float64: 1 << 35,
    torch.complex64: 1 << 20, torch.complex128: 1 << 35,
}
_COMPARISON_PAIRS = (
    (torch.uint8, torch.int8), (torch.int8, torch.int16), (torch.int64, torch.int16),
    (torch.int32, torch.float16), (torch.int64, torch.float32), (torch.float16, torch.float64),
    (torch.float64, torch.float32), (torch.int32, torch.float32), (torch.uint8, torch.complex64),
    (torch.float32, torch.complex128), (torch.complex128, torch.complex64),
)


@pytest.mark.parametrize("op", _COMPARISONS, ids=[c[0] for c in _COMPARISONS])
def test_comparison_ops_with_type_promotion(op):
    """test_type_promotion.py::TestTypePromotion::test_comparison_ops_with_type_promotion: lt,
    le, gt, ge, eq and ne of one-element tensors holding 2^5 (uint8, int8), 2^10 (int16,
    float16), 2^20 (int32, float32, complex64), 2^35 (int64, float64, complex128), into an
    empty bool out= (resized) and returned, 1-d and 0-d: bool results equal to comparing the
    Python ints; the inputs keep their dtypes. Complex only for eq and ne. Representative
    pairs of get_all_math_dtypes (float16 included)."""
    name, sw_op, torch_op, compare = op
    for dt1, dt2 in _COMPARISON_PAIRS:
        if (dt1.is_complex or dt2.is_complex) and name not in ("eq", "ne"):
            continue
        val1, val2 = _VALUE_FOR_TYPE[dt1], _VALUE_FOR_TYPE[dt2]
        for shape in ((1,), ()):
            t1 = torch.full(shape, val1, dtype=dt1)
            t2 = torch.full(shape, val2, dtype=dt2)
            expected = torch.full(shape, compare(val1, val2), dtype=torch.bool)
            msg = f"{name}({dt1} {val1}, {dt2} {val2}), shape {shape}"
            torch_out = torch.empty(0, dtype=torch.bool)
            want = torch_op(t1, t2, out=torch_out)
            assert_same(want, expected, "torch vs upstream literal: " + msg)
            out = torch.empty(0, dtype=torch.bool)
            assert sw_op(t1, t2, out=out) is out
            assert_same(out, want, msg + ", out=")
            assert_same(sw_op(t1, t2), torch_op(t1, t2), msg)
            assert t1.dtype == dt1 and t2.dtype == dt2


def test_complex_assertraises():
    """test_type_promotion.py::TestTypePromotion::test_complex_assertraises: lt, le, gt and ge
    with a complex operand raise (stridewise: UnsupportedDtypeError, a RuntimeError)."""
    dtypes = (torch.int64, torch.float32, torch.complex64, torch.complex128)
    for (name, sw_op, torch_op, _), dt1, dt2 in product(_COMPARISONS[:4], dtypes, dtypes):
        if not (dt1.is_complex or dt2.is_complex):
            continue
        u = torch.tensor([1], dtype=dt1)
        v = torch.tensor([2], dtype=dt2)
        torch_raises(lambda: torch_op(u, v))
        with pytest.raises(RuntimeError):
            sw_op(u, v)


@float_then_double
def test_lt_with_type_promotion(default_dtype):
    """test_type_promotion.py::TestTypePromotion::test_lt_with_type_promotion: a tensor [0] or
    0-d 0 of each real math dtype < 0.5, and < a 0-d tensor of 0.5 of the default dtype, is
    True (bool). float16 and bfloat16 added: torch's CPU kernels have them."""
    dtypes = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
              torch.bfloat16, torch.float32, torch.float64)
    half = torch.tensor(0.5)
    for dt, shape in product(dtypes, ((1,), ())):
        x = torch.zeros(shape, dtype=dt)
        expected = torch.ones(shape, dtype=torch.bool)
        for other in (0.5, half):
            want = x < other
            assert_same(want, expected, f"torch vs upstream literal: {dt} {shape} < {other!r}")
            assert_same(sw.less(x, other), want, f"{dt} {shape} < {other!r}")


# ----------------------------------------------------------------------------- division

_INTEGRAL_AND_BOOL = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _dividend_divisor(dtype, seed):
    dividend = (torch.randn(5, generator=gen(seed)) * 100).to(dtype)
    divisor = torch.arange(1, 6).to(dtype)
    return dividend, divisor


@pytest.mark.parametrize("dtype", _INTEGRAL_AND_BOOL, ids=_id)
@float_then_double
def test_div_promotion(dtype, default_dtype):
    """test_type_promotion.py::TestTypePromotion::test_div_promotion: true division of integral
    and bool tensors (randn * 100 by arange(1, 6)), and by 2.0, is the division of their
    default-dtype conversions (div and true_divide alike)."""
    dividend, divisor = _dividend_divisor(dtype, 30)
    for torch_op in (torch.div, torch.true_divide):
        want = torch_op(dividend, divisor)
        got = sw.divide(dividend, divisor)
        assert_same(got, want, f"{torch_op.__name__}({dtype}, {dtype})")
        assert_same(got, dividend.to(default_dtype) / divisor.to(default_dtype), "upstream's casting_result")
        want = torch_op(dividend, 2.0)
        got = sw.divide(dividend, 2.0)
        assert_same(got, want, f"{torch_op.__name__}({dtype}, 2.0)")
        assert_same(got, dividend.to(default_dtype) / 2, "upstream's casting_result / 2")


_DIV_OUT_DTYPES = (torch.float, torch.double) + _INTEGRAL_AND_BOOL


@pytest.mark.parametrize("dtype", _DIV_OUT_DTYPES, ids=_id)
def test_div_promotion_out(dtype):
    """test_type_promotion.py::TestTypePromotion::test_div_promotion_out: true division into
    an out of an integral or bool dtype raises (stridewise: TypeError, nothing written), by a
    tensor and by 2; into a float out of the inputs' dtype it is the quotient."""
    dividend, divisor = _dividend_divisor(dtype, 31)
    for torch_op in (torch.div, torch.true_divide):
        for d in (divisor, 2):
            if not dtype.is_floating_point:
                torch_raises(lambda: torch_op(dividend, d, out=torch.empty(5, dtype=dtype)))
                out = torch.zeros(5, dtype=dtype)
                with pytest.raises(TypeError):
                    sw.divide(dividend, d, out=out)
                assert torch.equal(out, torch.zeros(5, dtype=dtype)), "a refused out was written"
            else:
                want = torch_op(dividend, d, out=torch.empty(5, dtype=dtype))
                out = torch.empty(5, dtype=dtype)
                assert sw.divide(dividend, d, out=out) is out
                assert_same(out, want, f"{torch_op.__name__}({dtype}, {d!r}, out=)")
                assert_same(out, dividend / d, "upstream's dividend / divisor")


@pytest.mark.parametrize("dtype", _DIV_OUT_DTYPES, ids=_id)
def test_div_promotion_inplace(dtype):
    """test_type_promotion.py::TestTypePromotion::test_div_promotion_inplace: in-place true
    division (div_, true_divide_; here divide(x, y, out=x)) of an integral or bool tensor
    raises (stridewise: TypeError, x unchanged), by a tensor and by 2; of a float tensor it is
    div_'s result."""
    dividend, divisor = _dividend_divisor(dtype, 32)
    for torch_op in (torch.Tensor.div_, torch.Tensor.true_divide_):
        for d in (divisor, 2):
            x = dividend.clone()
            if not dtype.is_floating_point:
                torch_raises(lambda: torch_op(dividend.clone(), d))
                with pytest.raises(TypeError):
                    sw.divide(x, d, out=x)
                assert torch.equal(x, dividend), "a refused in-place divide wrote its target"
            else:
                want = torch_op(dividend.clone(), d)
                assert sw.divide(x, d, out=x) is x
                assert_same(x, want, f"{torch_op.__name__}({dtype}, {d!r})")
                assert_same(x, dividend.clone().div_(d), "upstream's div_")


# ----------------------------------------------------------------------------- clamp

_CLAMP_DTYPES = (
    (torch.int, torch.int, torch.int), (torch.int, torch.float, torch.double),
    (torch.float, torch.int, torch.float), (torch.double, torch.float, torch.int),
    (torch.bool, torch.int, torch.float), (torch.float, torch.bool, torch.double),
    (torch.bool, torch.bool, torch.int), (torch.int, torch.bool, torch.bool),
)


def _clamp_tensor(size, dtype, seed):
    g = gen(seed)
    if dtype == torch.bool:
        return torch.randint(2, size, generator=g).to(dtype)
    if dtype == torch.int:
        return torch.randint(10, size, generator=g).to(dtype)
    return torch.randn(size, generator=g, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("dtypes", _CLAMP_DTYPES, ids=_id)
def test_clamp_type_promotion(dtypes):
    """test_type_promotion.py::TestTypePromotion::test_clamp_type_promotion: clamp of a 4-element
    tensor by bounds given as tensors, one-element 0-d tensors or Python numbers of other
    dtypes (a pair of 0-d tensors left out, as upstream) promotes as the two-step result_type
    and equals clamp of the converted operands; in place where the promoted result casts back
    (floats, or the same dtype); clamp_min and clamp_max (clip with one bound) likewise.
    Results whose type is bool are left out, as upstream. Representative triples of (bool,
    int32, float32, float64)."""
    dtype0, dtype1, dtype2 = dtypes
    min_t, max_t = _clamp_tensor((4,), dtype1, 40), _clamp_tensor((4,), dtype2, 41)
    mins, maxs = (min_t, min_t[0], min_t[0].item()), (max_t, max_t[0], max_t[0].item())
    inp = _clamp_tensor((4,), dtype0, 42)
    floating = (torch.float32, torch.float64)

    def expected_type(x, lo, hi):      # a 0-d lower bound is taken after the upper one
        first, second = (hi, lo) if isinstance(lo, torch.Tensor) and lo.ndim == 0 else (lo, hi)
        return torch.result_type(torch.empty_like(x, dtype=torch.result_type(x, first)), second)

    def converted(values, dtype):
        return [v.to(dtype) if isinstance(v, torch.Tensor) else v for v in values]

    for lo, hi in product(mins, maxs):
        if type(lo) is not type(hi) or (isinstance(lo, torch.Tensor) and lo.ndim == 0 and hi.ndim == 0):
            continue
        exp_type = expected_type(inp, lo, hi)
        if exp_type == torch.bool:
            continue
        msg = f"clamp({dtype0}, {lo!r}, {hi!r})"
        want = torch.clamp(inp, lo, hi)
        assert_same(sw.clip(inp, lo, hi), want, msg)
        assert want.dtype == exp_type
        torch.testing.assert_close(want, torch.clamp(*converted((inp, lo, hi), exp_type)), rtol=0, atol=0)
        if inp.dtype in floating or exp_type == inp.dtype:
            want = torch.clamp_(inp.clone(), lo, hi)
            x = inp.clone()
            assert sw.clip(x, lo, hi, out=x) is x
            assert_same(x, want, msg + " in place")

    for val in mins:
        exp_type = torch.result_type(inp, val)
        if exp_type == torch.bool:
            continue
        for one_sided, lo, hi in ((torch.clamp_min, val, None), (torch.clamp_max, None, val)):
            msg = f"{one_sided.__name__}({dtype0}, {val!r})"
            want = one_sided(inp, val)
            assert_same(sw.clip(inp, lo, hi), want, msg)
            assert want.dtype == exp_type
            torch.testing.assert_close(want, one_sided(*converted((inp, val), exp_type)), rtol=0, atol=0)
            in_place = inp.dtype == exp_type if one_sided is torch.clamp_min \
                else inp.dtype in floating or exp_type == inp.dtype
            if in_place:
                want = getattr(torch, one_sided.__name__ + "_")(inp.clone(), val)
                x = inp.clone()
                assert sw.clip(x, lo, hi, out=x) is x
                assert_same(x, want, msg + " in place")
