"""PyTorch's binary-ufunc tests (test/test_binary_ufuncs.py, TestBinaryUfuncs) and the
special-value cases of its unary-ufunc tests (test/test_unary_ufuncs.py, TestUnaryUfuncs),
re-expressed against stridewise for the ops it offers (remainder and fmod are in
tests/test_upstream_torch.py). Inputs and expected results are upstream's; the code is ours.

The oracle is torch itself on the CPU: stridewise's result must equal torch's on the same
inputs bit for bit -- values (NaN where torch has NaN, and the sign of every other result,
zeros included), dtype, shape and strides -- or upstream's literals. Where torch's result is a
transcendental function's last bits (pow, exp, ...), only special values and exact results are
compared exactly; the rest is held to stridewise's documented TOLERANCE_ULP, or to upstream's
own tolerance where upstream gives one. Departures documented in docs/semantics.md are asserted
as documented: an integer division by zero gives 0 (torch raises on the CPU), and an out= of a
dtype torch's can_cast refuses raises TypeError (torch: RuntimeError)."""
import math
import operator
from itertools import product

import numpy as np
import pytest

import stridewise as sw
from stridewise.ops.builtins import COMPLEX_TOLERANCE_ULP, TOLERANCE_ULP

torch = pytest.importorskip("torch")

nan, inf = math.nan, math.inf

INTEGRAL = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)        # integral_types()
FLOATING = (torch.float32, torch.float64)
LOWP = (torch.float16, torch.bfloat16)
ALL_TYPES_HALF_BF16 = INTEGRAL + FLOATING + LOWP                                     # all_types_and(half, bfloat16)
_INT_VIEW = {torch.float16: torch.int16, torch.bfloat16: torch.int16,
             torch.float32: torch.int32, torch.float64: torch.int64}
_NAME = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
         torch.float64: "float64"}

pytestmark = pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")


# ----------------------------------------------------------------------------- helpers

def _id(value):
    """Readable test ids: float32, not dtype0."""
    return str(value).replace("torch.", "") if isinstance(value, torch.dtype) else None


def make(shape, dtype, seed, low=None, high=None, noncontiguous=False):
    """A tensor as upstream's make_tensor draws one: floats (and complex parts) uniform in
    [low, high) (default [-9, 9)), integers in [low, high) (default [-9, 10), uint8 from 0),
    bools 0 or 1. noncontiguous: every other element of a buffer twice as long in the last dim."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        t = torch.randint(0, 2, shape, generator=g).bool()
    elif dtype.is_floating_point or dtype.is_complex:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        real = torch.float64

        def uniform():
            u = torch.rand(shape, generator=g, dtype=real)
            return u * hi + (1 - u) * lo          # no hi - lo: that overflows at finfo's ends
        t = torch.complex(uniform(), uniform()) if dtype.is_complex else uniform()
        t = t.to(dtype)
    else:
        info = torch.iinfo(dtype)
        lo = (0 if dtype == torch.uint8 else -9) if low is None else max(int(low), info.min)
        hi = 10 if high is None else min(int(high), info.max)
        t = torch.randint(lo, hi, shape, generator=g, dtype=torch.int64).to(dtype)
    if noncontiguous and t.dim() > 0 and t.numel() > 1:
        t = torch.repeat_interleave(t, 2, dim=-1)[..., ::2]
    return t


def _parts(t):
    return torch.view_as_real(t) if t.is_complex() else t


def assert_same(got, want, msg=""):
    """got is want bit for bit: dtype, shape, strides, values (NaN where NaN), and the sign
    bit of every non-NaN float (zeros included)."""
    assert isinstance(got, torch.Tensor), f"{msg}: got {type(got).__name__}, not a tensor"
    assert got.dtype == want.dtype, f"{msg}: dtype {got.dtype} != torch's {want.dtype}"
    assert got.shape == want.shape, f"{msg}: shape {tuple(got.shape)} != torch's {tuple(want.shape)}"
    assert got.stride() == want.stride(), f"{msg}: strides {got.stride()} != torch's {want.stride()}"
    g, w = _parts(got), _parts(want)
    if want.is_floating_point() or want.is_complex():
        same = bool(((g == w) | (g.isnan() & w.isnan())).all())
    else:
        same = torch.equal(g, w)
    if not same:          # assert_close says where and by how much
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True, msg=lambda m: f"{msg}: {m}")
    if want.is_floating_point() or want.is_complex():
        keep = ~torch.isnan(w)
        assert torch.equal(torch.signbit(g)[keep], torch.signbit(w)[keep]), \
            f"{msg}: signs differ: got {got}, torch {want}"


def _ordered(t):
    """Floats as integers in the floats' order (adjacent floats differ by 1)."""
    i = t.contiguous().view(_INT_VIEW[t.dtype]).to(torch.int64)
    bits = torch.finfo(t.dtype).bits
    magnitude = i & ((1 << (bits - 1)) - 1)
    return torch.where(i < 0, -magnitude, magnitude)


def assert_ulp(got, want, ulps, msg=""):
    """As assert_same, except that finite results may differ by `ulps` units in the last place
    (NaN and infinities still match exactly)."""
    assert isinstance(got, torch.Tensor), f"{msg}: got {type(got).__name__}, not a tensor"
    assert got.dtype == want.dtype, f"{msg}: dtype {got.dtype} != torch's {want.dtype}"
    assert got.shape == want.shape, f"{msg}: shape {tuple(got.shape)} != torch's {tuple(want.shape)}"
    assert got.stride() == want.stride(), f"{msg}: strides {got.stride()} != torch's {want.stride()}"
    if not want.is_floating_point():
        return assert_same(got, want, msg)
    assert torch.equal(got.isnan(), want.isnan()), f"{msg}: NaNs differ: got {got}, torch {want}"
    special = want.isinf() | got.isinf()
    assert torch.equal(got[special], want[special]), f"{msg}: infinities differ: got {got}, torch {want}"
    finite = ~(want.isnan() | special)
    zeros = finite & (got == 0) & (want == 0)
    assert torch.equal(got[zeros].signbit(), want[zeros].signbit()), f"{msg}: signs of zeros differ"
    diff = (_ordered(got) - _ordered(want)).abs()[finite]
    worst = int(diff.max()) if diff.numel() else 0
    assert worst <= ulps, f"{msg}: {worst} ulp from torch (allowed {ulps}): got {got}, torch {want}"


def assert_complex_ulp(got, want, ulps, msg=""):
    """As assert_same for complex results, except that finite parts may differ by `ulps` units
    in the last place of the result's larger part (docs/semantics.md's norm-wise measure, for
    the complex ops it documents a tolerance for); NaN and infinite parts still match exactly."""
    assert isinstance(got, torch.Tensor), f"{msg}: got {type(got).__name__}, not a tensor"
    assert got.dtype == want.dtype, f"{msg}: dtype {got.dtype} != torch's {want.dtype}"
    assert got.shape == want.shape, f"{msg}: shape {tuple(got.shape)} != torch's {tuple(want.shape)}"
    assert got.stride() == want.stride(), f"{msg}: strides {got.stride()} != torch's {want.stride()}"
    g, w = torch.view_as_real(got).double(), torch.view_as_real(want).double()
    assert torch.equal(g.isnan(), w.isnan()), f"{msg}: NaNs differ: got {got}, torch {want}"
    special = g.isinf() | w.isinf()
    assert torch.equal(g[special], w[special]), f"{msg}: infinities differ: got {got}, torch {want}"
    mantissa = 24 if want.dtype == torch.complex64 else 53
    scale = w.abs().nan_to_num(0, 0, 0).amax(dim=-1)
    ulp = torch.ldexp(torch.ones_like(scale), torch.frexp(scale).exponent - mantissa)
    ulp = ulp.clamp_min(torch.finfo(torch.float32 if mantissa == 24 else torch.float64).smallest_normal
                        * 2.0 ** (1 - mantissa))
    diff = (g - w).abs().nan_to_num(0, 0, 0).masked_fill(special | g.isnan(), 0).amax(dim=-1)
    worst = float((diff / ulp).max()) if diff.numel() else 0.0
    assert worst <= ulps, f"{msg}: {worst} ulp from torch (allowed {ulps}): got {got}, torch {want}"


def complex_ulps(op, dtype):
    return COMPLEX_TOLERANCE_ULP.get(op, {}).get(f"torch {str(dtype).replace('torch.', '')}", 0)


def pow_ulps(dtype):
    return TOLERANCE_ULP["pow"][_NAME[dtype]]


# ----------------------------------------------------------------------------- division

@pytest.mark.parametrize("dtype", ALL_TYPES_HALF_BF16, ids=_id)
def test_div_rounding_modes(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_div_rounding_modes: 100 values over the
    dtype's range (floats: [-10, 10), divisors nudged off (-0.1, 0.1); integers: the whole
    range, no zero divisor, negative dividends moved up by the divisor); true, "trunc" and
    "floor" division as torch's, also into out=; for integers floor(a / b) * b + a % b == a."""
    if dtype.is_floating_point:
        low, high = -10.0, 10.0
    else:
        low, high = torch.iinfo(dtype).min, torch.iinfo(dtype).max
    a = make((100,), dtype, 10, low, high)
    b = make((100,), dtype, 11, low, high)
    if dtype.is_floating_point:
        b[(-0.1 < b) & (b < 0.1)] = 0.1
    else:
        b[b == 0] = 1
        a = torch.where(a < 0, a + b, a)
    for mode in (None, "trunc", "floor"):
        want = torch.divide(a, b, rounding_mode=mode)
        assert_same(sw.divide(a, b, rounding_mode=mode), want, f"rounding_mode={mode}")
        out = torch.empty_like(want)
        sw.divide(a, b, rounding_mode=mode, out=out)
        assert_same(out, want, f"rounding_mode={mode}, out=")
    assert sw.divide(a, b).is_floating_point()
    if not dtype.is_floating_point:
        d_floor = sw.divide(a, b, rounding_mode="floor")
        assert torch.equal(sw.add(sw.multiply(d_floor, b), sw.remainder(a, b)), a)


@pytest.mark.parametrize("dtype", FLOATING + LOWP, ids=_id)
def test_floor_div_extremal(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_floor_div_extremal: 0.7 * finfo.max
    floor-divided by 0.5, -0.5 and 0.0 is inf, -inf and inf (NumPy's floor_divide, clipped to
    the dtype), for a 0-d tensor and 32 elements."""
    num = torch.finfo(dtype).max * 0.7
    for denom, expect in ((0.5, inf), (-0.5, -inf), (0.0, inf)):
        for shape in ((), (32,)):
            a = torch.full(shape, num, dtype=dtype)
            b = torch.full(shape, denom, dtype=dtype)
            want = torch.div(a, b, rounding_mode="floor")
            assert_same(want, torch.full(shape, expect, dtype=dtype), "torch vs upstream literal")
            assert_same(sw.divide(a, b, rounding_mode="floor"), want, f"{num} // {denom}")
            assert_same(sw.floor_divide(a, b), want, f"floor_divide {num} // {denom}")


_NONFINITE = [1.0, -1.0, 0.0, 0.1, -0.1, math.pi, -math.pi, inf, -inf, nan]


@pytest.mark.parametrize("dtype", LOWP + FLOATING, ids=_id)
def test_div_rounding_nonfinite(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_div_rounding_nonfinite: every pair of
    1, -1, 0, 0.1, -0.1, pi, -pi, inf, -inf, nan (divisors without 0) as a 10 x 9 outer
    division, in the three rounding modes; then the same through every-other-element views
    (which must give the contiguous values, in torch's layout for those views)."""
    num = torch.tensor(_NONFINITE, dtype=dtype)
    denom = num[num != 0]
    a, b = num[None, :].clone(), denom[:, None].clone()
    for mode in (None, "trunc", "floor"):
        assert_same(sw.divide(a, b, rounding_mode=mode), torch.divide(a, b, rounding_mode=mode),
                    f"rounding_mode={mode}")
    if dtype in FLOATING:          # upstream's NumPy reference, where NumPy has the dtype
        an, bn = a.numpy(), b.numpy()
        with np.errstate(all="ignore"):
            for mode, ref in ((None, np.true_divide), ("floor", np.floor_divide)):
                want = torch.from_numpy(ref(an, bn))
                torch.testing.assert_close(sw.divide(a, b, rounding_mode=mode), want, equal_nan=True)
    a_nc = torch.empty([2 * n for n in a.shape], dtype=dtype)[::2, ::2]
    a_nc[:] = a
    b_nc = torch.empty([2 * n for n in b.shape], dtype=dtype)[::2, ::2]
    b_nc[:] = b
    for mode in (None, "trunc", "floor"):
        got = sw.divide(a_nc, b_nc, rounding_mode=mode)
        assert_same(got, torch.divide(a_nc, b_nc, rounding_mode=mode), f"strided, {mode}")
        assert_same(got.contiguous(), sw.divide(a, b, rounding_mode=mode), f"strided vs contiguous, {mode}")


@pytest.mark.parametrize("dtype", LOWP + FLOATING, ids=_id)
def test_divide_by_zero_rounding(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_divide_by_zero_rounding: the ten values
    above divided by the number 0 and by a zero tensor, true and "floor" division, give
    NumPy's x / 0 (inf, -inf, nan, inf, -inf, inf, -inf, inf, -inf, nan)."""
    a = torch.tensor(_NONFINITE, dtype=dtype)
    expect = torch.tensor([inf, -inf, nan, inf, -inf, inf, -inf, inf, -inf, nan], dtype=dtype)
    for mode in (None, "floor"):
        for zero, what in ((0, "the number 0"), (torch.zeros_like(a), "a zeros tensor")):
            want = torch.divide(a, zero, rounding_mode=mode)
            assert_same(want, expect, "torch vs upstream literal")
            assert_same(sw.divide(a, zero, rounding_mode=mode), want, f"rounding_mode={mode}, {what}")


@pytest.mark.parametrize("dtype", INTEGRAL + FLOATING + (torch.float16,), ids=_id)
def test_div_rounding_numpy(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_div_rounding_numpy: 4096 pairs over the
    dtype's whole range (zero divisors made 1), the three rounding modes, contiguous and every
    other element, as torch (and NumPy's floor_divide values, but for float16, whose torch
    floor division rounds to 16 bits between its steps)."""
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    a = make((4096,), dtype, 20, info.min, info.max)
    b = make((4096,), dtype, 21, info.min, info.max)
    b[b == 0] = 1
    for mode in (None, "trunc", "floor"):
        for x, y, where in ((a, b, "contiguous"), (a[::2], b[::2], "every other")):
            assert_same(sw.divide(x, y, rounding_mode=mode), torch.divide(x, y, rounding_mode=mode),
                        f"rounding_mode={mode}, {where}")
    if dtype != torch.float16:     # torch's float16 floor division rounds between steps
        with np.errstate(all="ignore"):
            want = torch.from_numpy(np.floor_divide(a.numpy(), b.numpy()))
        torch.testing.assert_close(sw.divide(a, b, rounding_mode="floor"), want, equal_nan=True)


@pytest.mark.parametrize("dtype", INTEGRAL + FLOATING + LOWP, ids=_id)
def test_floor_divide_tensor(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_floor_divide_tensor: randn * 30 in the
    dtype floor-divided by arange(1, 11): x's dtype, torch's values (for integers also
    floor(x / y) in float64)."""
    g = torch.Generator().manual_seed(30)
    x = (torch.randn(10, generator=g) * 30).to(dtype)
    y = torch.arange(1, 11, dtype=dtype)
    z = sw.floor_divide(x, y)
    assert z.dtype == x.dtype
    assert_same(z, torch.floor_divide(x, y))
    if not dtype.is_floating_point:
        assert torch.equal(z, torch.floor(x.double() / y.double()).to(dtype))


@pytest.mark.parametrize("dtype", INTEGRAL + FLOATING + LOWP, ids=_id)
def test_floor_divide_scalar(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_floor_divide_scalar: randn * 10 in the
    dtype floor-divided by the number 3, against math.floor(v / 3.0) per element and torch."""
    g = torch.Generator().manual_seed(31)
    x = (torch.randn(100, generator=g) * 10).to(dtype)
    z = sw.floor_divide(x, 3)
    assert z.dtype == x.dtype
    assert_same(z, torch.floor_divide(x, 3))
    if dtype not in LOWP:          # floor(v / 3.0) in double is the exact answer there
        assert torch.equal(z, torch.tensor([math.floor(v.item() / 3.0) for v in x], dtype=dtype))


@pytest.mark.parametrize("dtype", INTEGRAL, ids=_id)
def test_floor_divide_zero(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_floor_divide_zero: [0, 1] // [0, 1]
    raises ZeroDivisionError in torch on the CPU; stridewise gives 0 for x // 0 (documented),
    so [0, 1]."""
    a = torch.tensor([0, 1], dtype=dtype)
    b = torch.tensor([0, 1], dtype=dtype)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.floor_divide(a, b)
    assert_same(sw.floor_divide(a, b), torch.tensor([0, 1], dtype=dtype))


def _halves_and_floors():
    """upstream's operand pairs: (a * 0.5, b * 0.5), then their floors, a, b in [-10, 10)."""
    for a, b in product(range(-10, 10), range(-10, 10)):
        a, b = a * 0.5, b * 0.5
        yield a, b
        yield math.floor(a), math.floor(b)


def test_div_and_floordiv_vs_python():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_div_and_floordiv_vs_python: true and
    floor division of 0-d tensors, a 0-d tensor and a number, and a number and a 0-d tensor,
    against Python's a / b and math.floor(a / b) (zero divisors skipped), each as torch's;
    two numbers give the value (stridewise computes them as NumPy scalars, documented)."""
    for a, b in _halves_and_floors():
        if b == 0:
            continue
        a_t, b_t = torch.tensor(a), torch.tensor(b)
        for sw_op, torch_op, expected in ((sw.divide, torch.true_divide, a / b),
                                          (sw.floor_divide, torch.floor_divide, math.floor(a / b))):
            both = sw_op(a_t, b_t)
            assert both.item() == pytest.approx(expected, rel=1e-6), (sw_op.__name__, a, b)
            assert_same(both, torch_op(a_t, b_t), f"{sw_op.__name__}({a!r}, {b!r}) tensors")
            assert_same(sw_op(a_t, b), torch_op(a_t, b), f"{sw_op.__name__}(tensor {a!r}, {b!r})")
            assert_same(sw_op(a, b_t), torch_op(a, b_t), f"{sw_op.__name__}({a!r}, tensor {b!r})")
            assert float(sw_op(a, b)) == expected


def test_binary_ops_with_scalars():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_binary_ops_with_scalars: add, sub, mul
    and div of every pairing of a, b and their 0-d tensors (not two numbers), a and b the
    halves and floors of [-10, 10) (zeros skipped), against Python's op and torch's."""
    for python_op, sw_op, torch_op in ((operator.add, sw.add, torch.add),
                                       (operator.sub, sw.subtract, torch.sub),
                                       (operator.mul, sw.multiply, torch.mul),
                                       (operator.truediv, sw.divide, torch.div)):
        for a, b in _halves_and_floors():
            if a == 0 or b == 0:
                continue
            vals = (a, b, torch.tensor(a), torch.tensor(b))
            for first, second in product(vals, vals):
                if not (torch.is_tensor(first) or torch.is_tensor(second)):
                    continue
                f = first.item() if torch.is_tensor(first) else first
                s = second.item() if torch.is_tensor(second) else second
                got = sw_op(first, second)
                assert math.isclose(got.item(), python_op(f, s), rel_tol=1e-6), (sw_op.__name__, first, second)
                assert_same(got, torch_op(first, second), f"{sw_op.__name__}({first!r}, {second!r})")


@pytest.mark.parametrize("dtype", (torch.bfloat16, torch.float32), ids=_id)
def test_div(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_div (and test_inplace_division,
    test_true_divide_out): column 3 of a 10 x 10 divided by 2 in place (out= the column) is
    each element / 2; bfloat16 [4.2, 6.2] / [2, 2] is about [2.1, 3.1], and torch's."""
    g = torch.Generator().manual_seed(40)
    m1 = torch.randn(10, 10, generator=g).to(dtype)
    res1 = m1.clone()
    col = res1[:, 3]
    assert sw.divide(col, 2, out=col) is col
    res2 = m1.clone()
    for i in range(10):
        res2[i, 3] = res2[i, 3] / 2
    assert_same(res1, res2)
    a1 = torch.tensor([4.2, 6.2], dtype=dtype)
    a2 = torch.tensor([2.0, 2.0], dtype=dtype)
    got = sw.divide(a1, a2)
    torch.testing.assert_close(got, torch.tensor([2.1, 3.1], dtype=dtype), atol=0.01, rtol=0)
    assert_same(got, torch.div(a1, a2))
    out = torch.empty_like(a1)
    sw.divide(a1, a2, out=out)
    assert_same(out, torch.div(a1, a2))


def test_divmul_scalar():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_divmul_scalar: a 0-d float16 100 divided
    by the number 1e5, and 1e-5 times 1e5, are float32's results rounded once to float16
    (upstream's x.div(scale), x.mul(scale) and scale * x, which is x.mul(scale)), as torch.div
    and torch.mul give them. The number first is upstream's scale * x: stridewise's add and
    multiply take a Python number first as Python's operators do (x.__rmul__, the number
    second; docs/semantics.md), where torch.mul(1e5, x) casts it to float16 first (inf)."""
    scale = 1e5
    x = torch.tensor(100.0, dtype=torch.float16)
    want = torch.div(x, scale)
    assert_same(want, x.float().div(scale).half(), "torch vs upstream literal")
    assert_same(sw.divide(x, scale), want, "divide(x, 1e5)")
    x = torch.tensor(1e-5, dtype=torch.float16)
    want = torch.mul(x, scale)
    assert_same(want, x.float().mul(scale).half(), "torch vs upstream literal")
    assert_same(sw.multiply(x, scale), want, "multiply(x, 1e5)")
    assert_same(sw.multiply(scale, x), scale * x, "multiply(1e5, x)")


@pytest.mark.parametrize("dtype", (torch.bool, torch.uint8, torch.int32, torch.int64, torch.float16,
                                   torch.bfloat16, torch.float32, torch.float64, torch.complex64), ids=_id)
def test_muldiv_scalar(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_muldiv_scalar: x * s, s * x, x / s and
    s / x for a number s drawn in the dtype, and the same ops with s as a full tensor, are
    torch's (complex: within docs/semantics.md's COMPLEX_TOLERANCE_ULP of torch's kernels)."""
    x = make((10, 3), dtype, 50)
    s = make((1,), dtype, 51).item()
    y = torch.full_like(x, s)
    for sw_op, torch_op, name in ((sw.multiply, torch.mul, "multiply"), (sw.divide, torch.div, "divide")):
        for a, b, what in ((x, s, f"(x, {s!r})"), (s, x, f"({s!r}, x)"), (x, y, "(x, full)"), (y, x, "(full, x)")):
            want = torch_op(a, b)
            if want.is_complex():      # documented: torch's complex kernels round otherwise
                assert_complex_ulp(sw_op(a, b), want, complex_ulps(name, want.dtype), name + what)
            else:
                assert_same(sw_op(a, b), want, name + what)


@pytest.mark.parametrize("dtype", (torch.uint8, torch.int8, torch.int32, torch.int64,
                                   torch.bfloat16, torch.float32, torch.float64, torch.complex64), ids=_id)
def test_rdiv(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_rdiv: 30 / x for x in [4, 8) (float16
    is skipped upstream) is 30 / v per element, and torch's (complex64: within
    COMPLEX_TOLERANCE_ULP['divide'])."""
    g = torch.Generator().manual_seed(60)
    if dtype.is_complex:
        x = torch.rand(100, generator=g, dtype=dtype).add(1).mul(4)
    else:
        x = torch.rand(100, generator=g).add(1).mul(4).to(dtype)
    got = sw.divide(30, x)
    want = torch.div(30, x)
    if want.is_complex():              # documented: torch's complex division rounds otherwise
        assert_complex_ulp(got, want, complex_ulps("divide", want.dtype))
    else:
        assert_same(got, want)
    ref = torch.tensor([30 / v.item() for v in x])
    torch.testing.assert_close(got, ref, check_dtype=False)


# ----------------------------------------------------------------------------- pow

_EXPONENTS = [-2.8, -2, -1, -0.5, 0, 0.5, 1, 2, 3, 4, 3.3, True, False]


def _is_one_or_zero(num):
    return isinstance(num, bool) or num in (0, 1)


def _exact_power(want, num):
    """Whether stridewise documents tensor ** num as torch's exactly (docs/semantics.md):
    integer results; exponents 0 and 1 (True, False): ones and the base; 0.5: sqrt, as torch's
    pow by 0.5 is (not float16, whose torch 2.13 CPU kernel calls pow; complex: the C library's
    csqrt on the CPU, as torch's). One over sqrt for -0.5 rounds twice, and torch's vector and
    scalar paths round it differently (bfloat16), so -0.5 is held to the tolerance. float32
    and float64 by 0.5 are compared apart: torch's CPU sqrt is Sleef's u05 routine, within 1
    ulp and not correctly rounded (tests/test_builtin_ops.py's TORCH_DEPARTURES)."""
    if not (want.is_floating_point() or want.is_complex()) or _is_one_or_zero(num):
        return True
    return num == 0.5 and want.dtype not in (torch.float16, torch.float32, torch.float64)


def _compare_power(got, want, exact, what, base=None):
    if base is not None:        # x ** 0.5 in float32 or float64: sqrt
        assert_ulp(got, want, 1, what)
        assert_same(got, torch.from_numpy(np.sqrt(base.to(want.dtype).numpy())), what)   # correctly rounded
    elif exact:
        assert_same(got, want, what)
    elif want.is_complex():          # upstream's own tolerance for complex powers
        assert got.dtype == want.dtype and got.stride() == want.stride(), what
        torch.testing.assert_close(got, want, atol=1e-3, rtol=0, equal_nan=True, msg=what)
    else:
        assert_ulp(got, want, pow_ulps(want.dtype), what)


@pytest.mark.parametrize("dtype", INTEGRAL + FLOATING + LOWP + (torch.complex64, torch.complex128),
                         ids=_id)
def test_pow(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_pow (its real exponents): a 100 x 100
    base (floats and complex in [0.5, 1.5), integers in [1, 4) for 8-bit types, else [1, 10)),
    row 4 and column 4 to the powers -2.8, -2, -1, -0.5, 0, 0.5, 1, 2, 3, 4, 3.3, True, False:
    integer bases to negative integer powers raise; otherwise torch's result (exact for 0, 1,
    True, False and, but for float16, 0.5, torch's sqrt; else within TOLERANCE_ULP['pow'],
    complex within upstream's atol 1e-3); then each exponent as the base of row 4 (num **
    tensor, in torch.result_type(num, m1); 1 and 0 exact, and integer results), and 3 ** row 4,
    3 ** column 4."""
    if dtype.is_floating_point or dtype.is_complex:
        m1 = make((100, 100), dtype, 70, 0, 1) + 0.5
    else:
        m1 = make((100, 100), dtype, 70, 1, 4 if dtype in (torch.int8, torch.uint8) else 10)
    for num in _EXPONENTS:
        if isinstance(num, int) and not isinstance(num, bool) and num < 0 and not (
                dtype.is_floating_point or dtype.is_complex):
            with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
                torch.pow(m1[4], num)
            with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
                sw.pow(m1[4], num)
            continue
        for base, where in ((m1[4], "row 4"), (m1[:, 4], "column 4")):
            want = torch.pow(base, num)
            sqrt = num == 0.5 and want.dtype in (torch.float32, torch.float64)
            _compare_power(sw.pow(base, num), want, _exact_power(want, num), f"pow({where}, {num!r})",
                           base if sqrt else None)
        want = torch.pow(num, m1[4])
        assert want.dtype == torch.result_type(num, m1)
        exact = (not (want.is_floating_point() or want.is_complex())
                 or (num == 1 if want.is_complex() else _is_one_or_zero(num)))
        _compare_power(sw.pow(num, m1[4]), want, exact, f"pow({num!r}, row 4)")
    for base, where in ((m1[4], "row 4"), (m1[:, 4], "column 4")):
        want = torch.pow(3, base)
        _compare_power(sw.pow(3, base), want, not (want.is_floating_point() or want.is_complex()),
                       f"pow(3, {where})")


def test_int_tensor_pow_neg_ints():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_int_tensor_pow_neg_ints: an int32 tensor
    (INT_MIN, -3 .. 3, INT_MAX) to the powers INT_MIN, -3, -2, -1 raises "Integers to negative
    integer powers are not allowed", with and without out=."""
    ints = [torch.iinfo(torch.int32).min, -3, -2, -1, 0, 1, 2, 3, torch.iinfo(torch.int32).max]
    t = torch.tensor(ints, dtype=torch.int32)
    for p in (torch.iinfo(torch.int32).min, -3, -2, -1):
        with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
            sw.pow(t, p)
        out = torch.empty_like(t)
        with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
            sw.pow(t, p, out=out)


def test_long_tensor_pow_floats():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_long_tensor_pow_floats: int64
    [0, 1, 23, 4567] to the powers 0, 1/3, 1/2, 1, 3/2, 2: float32 results as torch's (exact
    for 0, 1/2 and 1), also into out=."""
    t = torch.tensor([0, 1, 23, 4567], dtype=torch.int64)
    for p in (0.0, 1 / 3, 1 / 2, 1.0, 3 / 2, 2.0):
        want = torch.pow(t, p)
        assert want.dtype == torch.float32
        got = sw.pow(t, p)
        out = torch.empty_like(want)
        sw.pow(t, p, out=out)
        for res in (got, out):
            if p in (0.0, 0.5, 1.0):
                assert_same(res, want, f"int64 ** {p}")
            else:
                assert_ulp(res, want, pow_ulps(torch.float32), f"int64 ** {p}")
        with np.errstate(all="ignore"):
            ref = torch.from_numpy(np.power(t.numpy(), p)).to(torch.float32)
        torch.testing.assert_close(got, ref)


@pytest.mark.parametrize("dtype", FLOATING, ids=_id)
def test_float_scalar_pow_float_tensor(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_float_scalar_pow_float_tensor: the bases
    2, -3/2, -1, -1/2, -1/3, 0, 1/3, 1/2, 1, 3/2, 2 to a tensor of the same numbers and to
    tensors in [0, 9) of shapes (1,), (2, 2), (2, 1), (2, 2, 2): torch's result (NaN for a
    negative base to a fractional power, inf for 0 to a negative one; base 0 and 1 exact)."""
    floats = [2.0, -3 / 2, -1.0, -1 / 2, -1 / 3, 0.0, 1 / 3, 1 / 2, 1.0, 3 / 2, 2.0]
    tensors = [make(s, dtype, 80 + i, 0) for i, s in enumerate(((1,), (2, 2), (2, 1), (2, 2, 2)))]
    exps = [torch.tensor(floats, dtype=dtype)] + tensors
    for base in floats:
        for e in exps:
            want = torch.pow(base, e)
            got = sw.pow(base, e)
            if base in (0.0, 1.0):
                assert_same(got, want, f"{base} ** {e}")
            else:
                assert_ulp(got, want, pow_ulps(dtype), f"{base} ** {e}")
            with np.errstate(all="ignore"):
                ref = torch.from_numpy(np.power(np.asarray(base, dtype=e.numpy().dtype), e.numpy()))
            torch.testing.assert_close(got, ref, equal_nan=True)


def test_tensor_pow_tensor():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_tensor_pow_tensor: [0, 1, 2, 3] to each of
    its rotations in the five integer dtypes (exact), and [-3, -2, -1, -1/2, -1/3, 0, 1/3, 1/2,
    1, 2, 3] to each of its rotations in float16, float32, float64 (NumPy's and torch's
    values: NaN and inf exact, finite ones within TOLERANCE_ULP['pow'])."""
    def rotations(values):
        return [values[-i:] + values[:-i] for i in range(len(values))]

    ints = [0, 1, 2, 3]
    for dtype in INTEGRAL:
        base = torch.tensor(ints, dtype=dtype)
        for r in rotations(ints):
            e = torch.tensor(r, dtype=dtype)
            want = torch.pow(base, e)
            assert_same(sw.pow(base, e), want, f"{dtype} {ints} ** {r}")
            assert torch.equal(want, torch.from_numpy(np.power(base.numpy(), e.numpy())))
    floats = [-3.0, -2.0, -1.0, -1 / 2, -1 / 3, 0.0, 1 / 3, 1 / 2, 1.0, 2.0, 3.0]
    for dtype in (torch.float16, torch.float32, torch.float64):
        base = torch.tensor(floats, dtype=dtype)
        for r in rotations(floats):
            e = torch.tensor(r, dtype=dtype)
            got = sw.pow(base, e)
            assert_ulp(got, torch.pow(base, e), pow_ulps(dtype), f"{dtype} ** {r}")
            with np.errstate(all="ignore"):
                ref = torch.from_numpy(np.power(base.numpy(), e.numpy()))
            torch.testing.assert_close(got, ref, equal_nan=True)


def test_pow_scalar_type_promotion():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_pow_scalar_type_promotion: 2 ** uint8 17
    into an int64 out= computes in uint8 (wrapping to 0), 2 ** int64 17 does not (131072); the
    two agree modulo 256. For a 0-d input and a one-element one."""
    for value in (17, [17]):
        u8 = sw.pow(2, torch.tensor(value, dtype=torch.uint8), out=torch.tensor(0, dtype=torch.int64))
        i64 = sw.pow(2, torch.tensor(value, dtype=torch.int64), out=torch.tensor(0, dtype=torch.int64))
        want_u8 = torch.pow(2, torch.tensor(value, dtype=torch.uint8), out=torch.tensor(0, dtype=torch.int64))
        assert_same(u8, want_u8, f"2 ** uint8 {value}")
        assert not torch.equal(u8, i64)
        assert torch.equal(u8.to(torch.uint8), i64.to(torch.uint8))
        assert i64.flatten()[0].item() == 131072 and u8.flatten()[0].item() == 0


# upstream's ten cases, one of each dtype kind and range kept (each builds its own kernels)
@pytest.mark.parametrize("dt, low, high", [(torch.int8, -2, 2), (torch.uint8, 0, 3),
                                           (torch.int64, -10, 10), (torch.float16, 0.0, 5.0),
                                           (torch.float64, -10.0, 10.0)], ids=_id)
def test_int_and_float_pow(dt, low, high):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_int_and_float_pow: bases of shapes (4, 4),
    (3, 1), (2,), (1,), (513, 513), (5, 5, 5), () to the numbers 0, 4, 4, 2, 4, 5, 2 and to
    tensors of shapes (4, 1), (3, 1), (1,), (), (513,), (5,), () (integer exponents from 0),
    contiguous and not: torch's result, also into out= (integers exact, floats within
    TOLERANCE_ULP['pow'])."""
    cases = (((4, 4), 0, (4, 1)), ((3, 1), 4, (3, 1)), ((2,), 4, (1,)), ((1,), 2, ()),
             ((513, 513), 4, (513,)), ((5, 5, 5), 5, (5,)), ((), 2, ()))
    ulps = pow_ulps(dt) if dt.is_floating_point else 0
    for i, (base_shape, exp_scalar, exp_shape) in enumerate(cases):
        for nc in (False, True):
            base = make(base_shape, dt, 90 + i, low, high, noncontiguous=nc)
            exp = make(exp_shape, dt, 190 + i, low if dt.is_floating_point else 0, high, noncontiguous=nc)
            for e in (exp_scalar, exp):
                want = torch.pow(base, e)
                assert_ulp(sw.pow(base, e), want, ulps, f"{base_shape} ** {e if isinstance(e, int) else exp_shape}")
                out = torch.empty_like(want)
                sw.pow(base, e, out=out)
                assert_ulp(out, want, ulps, "out=")


# ----------------------------------------------------------------------------- copysign

# all_types_and(half, bfloat16, bool) squared, narrowed to one integer type: every integer
# pair computes in the default float alike
_COPYSIGN_TYPES = (torch.bool, torch.int64, torch.bfloat16, torch.float64)   # each kind once (CI time)


@pytest.mark.parametrize("dtypes", list(product(_COPYSIGN_TYPES, _COPYSIGN_TYPES)),
                         ids=lambda d: f"{d[0]}-{d[1]}".replace("torch.", ""))
def test_copysign(dtypes):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_copysign (its dtype pairs over bool, int64,
    bfloat16 and float64: a 16-bit float, a wide one, an integer and bool): operands in [-9, 9) of the two dtypes as 10 x 10 pairs and broadcast (10, 1, 10) with (10, 10) either way; then one of
    0.0, -0.0, inf, -inf, nan against a 10 x 10 of the other dtype, on either side where that
    side is a float: torch's values, dtype and signs (NaNs' signs included: copysign sets the
    sign bit)."""
    d0, d1 = dtypes

    def both(a, b, what):
        want = torch.copysign(a, b)
        got = sw.copysign(a, b)
        assert_same(got, want, what)
        assert torch.equal(torch.signbit(got), torch.signbit(want)), f"{what}: NaN signs differ"

    both(make((10, 10), d0, 100), make((10, 10), d1, 101), "10 x 10")
    both(make((10, 1, 10), d0, 102), make((10, 10), d1, 103), "(10, 1, 10) with (10, 10)")
    both(make((10, 10), d0, 104), make((10, 1, 10), d1, 105), "(10, 10) with (10, 1, 10)")
    cases = [0.0, -0.0, inf, -inf, nan]
    if d0 in (torch.float32, torch.float64, torch.float16):
        b = make((10, 10), d1, 106)
        for case in cases:
            both(torch.tensor([case], dtype=d0), b, f"copysign({case}, ...)")
    if d1.is_floating_point:
        a = make((10, 10), d0, 107)
        for case in cases:
            both(a, torch.tensor([case], dtype=d1), f"copysign(..., {case})")


# ----------------------------------------------------------------------------- maximum, minimum

@pytest.mark.parametrize("dtype", FLOATING + LOWP, ids=_id)
def test_maximum_minimum_float_nan_and_inf(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_maximum_minimum_float_nan_and_inf:
    a = (inf, -inf, nan, inf, nan, nan, 1, nan), b = (-inf, inf, inf, nan, nan, 0, nan, -5):
    maximum is (inf, inf, nan x 6), minimum (-inf, -inf, nan x 6), as NumPy and torch, also
    into out=."""
    a = torch.tensor((inf, -inf, nan, inf, nan, nan, 1, nan), dtype=dtype)
    b = torch.tensor((-inf, inf, inf, nan, nan, 0, nan, -5), dtype=dtype)
    for sw_op, torch_op, first_two in ((sw.maximum, torch.maximum, inf), (sw.minimum, torch.minimum, -inf)):
        literal = torch.tensor([first_two, first_two] + [nan] * 6, dtype=dtype)
        want = torch_op(a, b)
        assert_same(want, literal, "torch vs upstream literal")
        assert_same(sw_op(a, b), want, sw_op.__name__)
        out = torch.empty_like(a)
        assert sw_op(a, b, out=out) is out
        assert_same(out, want, f"{sw_op.__name__} out=")


@pytest.mark.parametrize("dtype", INTEGRAL + (torch.bool,), ids=_id)
def test_maximum_minimum_int_and_bool(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_maximum_minimum_int_and_bool: ten
    integers in [-100, 100) converted to the dtype as NumPy converts them, maximum and minimum
    as np.maximum / np.minimum and torch, also into out=."""
    np_dtype = torch.empty(0, dtype=dtype).numpy().dtype
    rng = np.random.default_rng(110)
    a_np = np.array(rng.integers(-100, 100, size=10), dtype=np_dtype)
    b_np = np.array(rng.integers(-100, 100, size=10), dtype=np_dtype)
    a, b = torch.from_numpy(a_np), torch.from_numpy(b_np)
    for sw_op, torch_op, np_op in ((sw.maximum, torch.maximum, np.maximum),
                                   (sw.minimum, torch.minimum, np.minimum)):
        want = torch_op(a, b)
        assert torch.equal(want, torch.from_numpy(np_op(a_np, b_np)))
        assert_same(sw_op(a, b), want, sw_op.__name__)
        out = torch.empty_like(a)
        sw_op(a, b, out=out)
        assert_same(out, want, f"{sw_op.__name__} out=")


@pytest.mark.parametrize("dtype", FLOATING + LOWP, ids=_id)
def test_maximum_minimum_float(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_maximum_minimum_float: ten randn pairs,
    maximum and minimum as torch (and NumPy's values), also into out=."""
    rng = np.random.default_rng(111)
    a_np, b_np = rng.standard_normal(10), rng.standard_normal(10)
    a, b = torch.from_numpy(a_np).to(dtype), torch.from_numpy(b_np).to(dtype)
    for sw_op, torch_op, np_op in ((sw.maximum, torch.maximum, np.maximum),
                                   (sw.minimum, torch.minimum, np.minimum)):
        want = torch_op(a, b)
        got = sw_op(a, b)
        assert_same(got, want, sw_op.__name__)
        assert torch.equal(got.double(), torch.from_numpy(np_op(a.double().numpy(), b.double().numpy())))
        out = torch.empty_like(a)
        sw_op(a, b, out=out)
        assert_same(out, want, f"{sw_op.__name__} out=")


_PROMOTION_PAIRS = [(torch.bool, torch.uint8), (torch.uint8, torch.int8), (torch.int16, torch.float16),
                    (torch.float16, torch.bfloat16), (torch.bfloat16, torch.float32),
                    (torch.int64, torch.float64), (torch.bool, torch.bfloat16), (torch.int32, torch.int64)]


@pytest.mark.parametrize("dtypes", _PROMOTION_PAIRS, ids=lambda d: f"{d[0]}-{d[1]}".replace("torch.", ""))
def test_maximum_minimum_type_promotion(dtypes):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_maximum_minimum_type_promotion (a
    selection of its dtype pairs, both orders): (0, 1) against (1, 0) gives
    torch.result_type's dtype, and torch's values."""
    for d0, d1 in (dtypes, dtypes[::-1]):
        a = torch.tensor((0, 1), dtype=d0)
        b = torch.tensor((1, 0), dtype=d1)
        for sw_op, torch_op in ((sw.maximum, torch.maximum), (sw.minimum, torch.minimum)):
            got = sw_op(a, b)
            assert got.dtype == torch.result_type(a, b)
            assert_same(got, torch_op(a, b), f"{sw_op.__name__}({d0}, {d1})")


@pytest.mark.parametrize("dtype", FLOATING, ids=_id)
def test_min_max_binary_op_nan(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_min_max_binary_op_nan: 1000 pairs in
    [0, 1) with NaN in a only, b only, both, neither (250 each): maximum and minimum are NaN
    in the first 750 and not in the last 250, as torch."""
    g = torch.Generator().manual_seed(120)
    a = torch.rand(1000, generator=g, dtype=dtype)
    b = torch.rand(1000, generator=g, dtype=dtype)
    a[:250] = nan
    b[250:500] = nan
    a[500:750] = nan
    b[500:750] = nan
    for sw_op, torch_op in ((sw.maximum, torch.maximum), (sw.minimum, torch.minimum)):
        got = sw_op(a, b)
        assert got[:750].isnan().all() and not got[750:].isnan().any()
        assert_same(got, torch_op(a, b), sw_op.__name__)


# ----------------------------------------------------------------------------- bitwise, shifts

@pytest.mark.parametrize("dtype", INTEGRAL + (torch.bool,), ids=_id)
def test_bitwise_ops(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_bitwise_ops: and, or, xor on shapes (5,),
    (15, 15), (500, 500): tensor with tensor (and NumPy's values), tensor with a number of the
    dtype, a number with a tensor, and in place (out= the first operand) with a tensor and with
    a number, as torch."""
    ops = ((sw.bitwise_and, operator.and_, operator.iand), (sw.bitwise_or, operator.or_, operator.ior),
           (sw.bitwise_xor, operator.xor, operator.ixor))
    seed = 130
    for (sw_op, op, iop), shape in product(ops, ((5,), (15, 15), (500, 500))):
        seed += 10
        a, b = make(shape, dtype, seed), make(shape, dtype, seed + 1)
        s = make((), dtype, seed + 2).item()
        want = op(a, b)
        assert_same(sw_op(a, b), want, f"{sw_op.__name__} tensors {shape}")
        assert np.array_equal(want.numpy(), op(a.numpy(), b.numpy()))
        assert_same(sw_op(a, s), op(a, s), f"{sw_op.__name__}(tensor, {s!r})")
        assert_same(sw_op(s, b), op(s, b), f"{sw_op.__name__}({s!r}, tensor)")
        for other in (b, s):
            mine, theirs = a.clone(), a.clone()
            assert sw_op(mine, other, out=mine) is mine
            theirs = iop(theirs, other)
            assert_same(mine, theirs, f"{sw_op.__name__} in place with {'tensor' if other is b else other}")


@pytest.mark.parametrize("dtype", (torch.int8, torch.int16, torch.int32, torch.int64), ids=_id)
def test_signed_shift(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_signed_shift: [-10, 10] << 2 is
    [-40, 40] and >> 1 is [-5, 5] (arithmetic), as torch and NumPy."""
    a = torch.tensor([-10, 10], dtype=dtype)
    for got, want, np_want, literal in (
            (sw.left_shift(a, 2), a << 2, np.left_shift(a.numpy(), 2), [-40, 40]),
            (sw.right_shift(a, 1), a >> 1, np.right_shift(a.numpy(), 1), [-5, 5])):
        assert_same(want, torch.tensor(literal, dtype=dtype))
        assert_same(got, want)
        assert np.array_equal(got.numpy(), np_want)


@pytest.mark.parametrize("dtype", INTEGRAL, ids=_id)
def test_shift_limits(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_shift_limits: shifting [-1, 0, 1],
    [min, max] and a 64 x 64 x 64 tensor over the whole range by counts from the bit width to
    99, and by -100 .. -2 (which torch on the CPU treats alike): left gives 0, right gives
    clamp(x, -1, 0) (the sign), as torch; NumPy agrees for counts from the bit width up."""
    info = torch.iinfo(dtype)
    inputs = (torch.tensor([-1, 0, 1]).to(dtype), torch.tensor([info.min, info.max], dtype=dtype),
              make((64, 64, 64), dtype, 150, info.min, info.max))
    for x in inputs:
        left_expected = torch.zeros_like(x)
        right_expected = torch.where(x < 0, -1, 0).to(dtype)
        for shift in list(range(info.bits, 100)) + list(range(-100, -1)):
            want_l, want_r = x << shift, x >> shift
            assert_same(want_l, left_expected, f"torch << {shift}")
            assert_same(want_r, right_expected, f"torch >> {shift}")
            assert_same(sw.left_shift(x, shift), want_l, f"{dtype} << {shift}")
            assert_same(sw.right_shift(x, shift), want_r, f"{dtype} >> {shift}")
            if shift >= 0 and x.numel() <= 2:
                assert np.array_equal(sw.left_shift(x, shift).numpy(), np.left_shift(x.numpy(), shift))
                assert np.array_equal(sw.right_shift(x, shift).numpy(), np.right_shift(x.numpy(), shift))


# ----------------------------------------------------------------------------- logical, comparison

_LOGICAL_PAIRS = [(d, d) for d in (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32,
                                   torch.int64, torch.float16, torch.bfloat16, torch.float32,
                                   torch.float64, torch.complex64, torch.complex128)] + [
    (torch.bool, torch.float32), (torch.uint8, torch.int64), (torch.float16, torch.bfloat16),
    (torch.int32, torch.complex64), (torch.float64, torch.bool), (torch.bfloat16, torch.int8)]


@pytest.mark.parametrize("op, expected", [("logical_xor", [0, 0, 1, 1]), ("logical_and", [1, 0, 0, 0]),
                                          ("logical_or", [1, 0, 1, 1])])
@pytest.mark.parametrize("dtypes", _LOGICAL_PAIRS, ids=lambda d: f"{d[0]}-{d[1]}".replace("torch.", ""))
def test_logical(op, expected, dtypes):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_logical_xor / test_logical_and /
    test_logical_or (a selection of their dtype pairs): [10, 0, 1, 0] with [1, 0, 0, 10] gives
    xor [0, 0, 1, 1], and [1, 0, 0, 0], or [1, 0, 1, 1]: as a new bool tensor, into an empty
    bool out= (resized), and in place into the first operand's dtype."""
    d0, d1 = dtypes
    sw_op, torch_op = getattr(sw, op), getattr(torch, op)
    want = torch.tensor(expected, dtype=d0)
    a = torch.tensor([10, 0, 1, 0], dtype=d0)
    b = torch.tensor([1, 0, 0, 10], dtype=d1)
    assert_same(sw_op(a, b), want.bool(), "new tensor")
    assert_same(sw_op(a, b), torch_op(a, b), "new tensor vs torch")
    c = torch.empty(0, dtype=torch.bool)
    sw_op(a, b, out=c)
    assert_same(c, want.bool(), "out=")
    assert sw_op(a, b, out=a) is a
    assert_same(a, want, "in place")


def test_logical_xor_with_nontrivial_alignment():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_logical_xor_with_nontrivial_alignment:
    bool slices of 100 starting at offsets 1, 2, 4, 8, 15 of 128 (all 125 combinations for the
    two inputs and out=): out holds x ^ y."""
    g = torch.Generator().manual_seed(160)
    a, b, c = (torch.randn(128, generator=g) > 0 for _ in range(3))
    offsets = (1, 2, 4, 8, 15)
    for i, j, k in product(offsets, offsets, offsets):
        a_, b_, c_ = a[i:100 + i], b[j:100 + j], c[k:100 + k]
        sw.logical_xor(a_, b_, out=c_)
        assert c_.tolist() == [x ^ y for x, y in zip(a_.tolist(), b_.tolist())], (i, j, k)


_COMPARISONS = (("less", torch.lt, operator.lt), ("less_equal", torch.le, operator.le),
                ("greater", torch.gt, operator.gt), ("greater_equal", torch.ge, operator.ge),
                ("equal", torch.eq, operator.eq), ("not_equal", torch.ne, operator.ne))


def test_comparison_ops():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_comparison_ops (and
    test_comparison_ops_must_take_bool_output): 5 x 5 randn pairs, each comparison per element
    as Python's and as torch's; comparisons and logical ops of bool tensors give bool."""
    g = torch.Generator().manual_seed(170)
    x, y = torch.randn(5, 5, generator=g), torch.randn(5, 5, generator=g)
    for name, torch_op, py_op in _COMPARISONS:
        got = getattr(sw, name)(x, y)
        assert_same(got, torch_op(x, y), name)
        for i, j in product(range(5), range(5)):
            assert bool(got[i, j]) == py_op(x[i, j].item(), y[i, j].item())
    t, f = torch.tensor([True]), torch.tensor([False])
    for name in [c[0] for c in _COMPARISONS] + ["logical_and", "logical_or", "logical_xor"]:
        assert getattr(sw, name)(t, f).dtype == torch.bool, name


def test_bool_tensor_comparison_ops():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_bool_tensor_comparison_ops: bool
    a = [T, F, T, F, T, F], b = [T, F, T, T, T, T]: == [1, 1, 1, 0, 1, 0], != [0, 0, 0, 1, 0, 1],
    < [0, 0, 0, 1, 0, 1], > all 0, >= [1, 1, 1, 0, 1, 0], <= all 1; a > False is a;
    a == tensor(True) is a, a == tensor(0, bool) is not a."""
    a = torch.tensor([True, False, True, False, True, False])
    b = torch.tensor([True, False, True, True, True, True])
    cases = ((sw.equal, b, [1, 1, 1, 0, 1, 0]), (sw.not_equal, b, [0, 0, 0, 1, 0, 1]),
             (sw.less, b, [0, 0, 0, 1, 0, 1]), (sw.greater, b, [0, 0, 0, 0, 0, 0]),
             (sw.greater_equal, b, [1, 1, 1, 0, 1, 0]), (sw.less_equal, b, [1, 1, 1, 1, 1, 1]),
             (sw.greater, False, [1, 0, 1, 0, 1, 0]),
             (sw.equal, torch.tensor(True), [1, 0, 1, 0, 1, 0]),
             (sw.equal, torch.tensor(0, dtype=torch.bool), [0, 1, 0, 1, 0, 1]))
    for fn, other, expected in cases:
        assert_same(fn(a, other), torch.tensor(expected, dtype=torch.bool), f"{fn.__name__}(a, {other!r})")


@pytest.mark.parametrize("dtype", (torch.uint8, torch.int8, torch.int64, torch.float16, torch.bfloat16,
                                   torch.float64, torch.bool), ids=_id)
def test_logical_comparisons_literal(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_logical: [1, 2, 3, 4] against the number
    2 and against the tensor [2]: < [T, F, F, F], <= [T, T, F, F], >= [F, T, T, T],
    > [F, F, T, T], == [F, T, F, F], != [T, F, T, T]; for bool [T, F, T, F] against True:
    < [F, T, F, T], <= all T, >= [T, F, T, F], > all F, == [T, F, T, F], != [F, T, F, T]."""
    if dtype != torch.bool:
        x = torch.tensor([1, 2, 3, 4], dtype=dtype)
        others = (2, torch.tensor([2], dtype=dtype))
        expect = {"less": [1, 0, 0, 0], "less_equal": [1, 1, 0, 0], "greater_equal": [0, 1, 1, 1],
                  "greater": [0, 0, 1, 1], "equal": [0, 1, 0, 0], "not_equal": [1, 0, 1, 1]}
    else:
        x = torch.tensor([True, False, True, False])
        others = (True,)
        expect = {"less": [0, 1, 0, 1], "less_equal": [1, 1, 1, 1], "greater_equal": [1, 0, 1, 0],
                  "greater": [0, 0, 0, 0], "equal": [1, 0, 1, 0], "not_equal": [0, 1, 0, 1]}
    for other in others:
        for name, values in expect.items():
            assert_same(getattr(sw, name)(x, other), torch.tensor(values, dtype=torch.bool),
                        f"{name}({dtype}, {other!r})")


def _extremal_input(shape, dtype, g, with_extremal):
    """upstream's _generate_input: floats randn * k (k in [30, 100)), about a third zeroed,
    NaN / inf / -inf sprinkled in when asked; integers in [15, 100); bools at random."""
    if dtype == torch.bool:
        return torch.randn(shape, generator=g) > 0.5
    if not (dtype.is_floating_point or dtype.is_complex):
        return torch.randint(15, 100, shape, generator=g, dtype=torch.int64).to(dtype)
    k = int(torch.randint(30, 100, (), generator=g))
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * k)
    if dtype.is_complex:
        x = torch.complex(x, torch.randn(shape, generator=g, dtype=torch.float64) * k)
    x = x.to(dtype)
    x[torch.randn(shape, generator=g) > 0.5] = 0
    if with_extremal:
        for v in (nan, inf, -inf):
            x[torch.randn(shape, generator=g) > 0.5] = complex(v, v) if dtype.is_complex else v
    return x


_CMP_PAIRS = [(torch.float16, torch.bfloat16), (torch.int64, torch.float64), (torch.bool, torch.uint8),
              (torch.complex64, torch.complex128)]


@pytest.mark.parametrize("dtypes", _CMP_PAIRS, ids=lambda d: f"{d[0]}-{d[1]}".replace("torch.", ""))
def test_comparison_ops_type_promotion_and_broadcasting(dtypes):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_comparison_ops_type_promotion_and_broadcasting
    (a selection of its dtype pairs and sizes): x of shape s against y of shape (2,) + s, with
    and without NaN / inf / -inf, in every comparison (not the ordering ones for complex) and
    logical op: a bool result as torch's; into a one-element complex128 out= (resized) too."""
    g = torch.Generator().manual_seed(180)
    ops = [c[:2] for c in _COMPARISONS] + [("logical_and", torch.logical_and),
                                           ("logical_or", torch.logical_or),
                                           ("logical_xor", torch.logical_xor)]
    for size, with_extremal in product(((10,), (4, 10)), (False, True)):
        a = _extremal_input(size, dtypes[0], g, with_extremal)
        b = _extremal_input((2,) + size, dtypes[1], g, with_extremal)
        for name, torch_op in ops:
            if (a.is_complex() or b.is_complex()) and name in ("less", "less_equal", "greater",
                                                               "greater_equal"):
                continue
            sw_op = getattr(sw, name)
            got = sw_op(a, b)
            assert got.dtype == torch.bool
            assert_same(got, torch_op(a, b), f"{name} {size} extremal={with_extremal}")
            mine, theirs = torch.zeros(1, dtype=torch.complex128), torch.zeros(1, dtype=torch.complex128)
            sw_op(a, b, out=mine)
            torch_op(a, b, out=theirs)
            assert_same(mine, theirs, f"{name} out=complex128")


# ----------------------------------------------------------------------------- add, sub, mul

@pytest.mark.parametrize("dtype", (torch.float32, torch.float64, torch.complex64, torch.complex128), ids=_id)
def test_add(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_add (its per-dtype part): row 4 and
    column 4 of a 100 x 100 plus a vector, element by element; row 3 and column 3 of a 10 x 10
    plus 2 in place (out= the view); m1 + 3 equals m1 + tensor(3) and 3 + m1 tensor(3) + m1;
    a contiguous plus a transposed operand gives a contiguous result; [1.0] + [] is empty."""
    g = torch.Generator().manual_seed(190)
    m1 = torch.randn(100, 100, generator=g, dtype=dtype)
    v1 = torch.randn(100, generator=g, dtype=dtype)
    for row, where in ((m1[4], "row"), (m1[:, 4], "column")):
        res = sw.add(row, v1)
        assert_same(res, torch.add(row, v1), f"{where} + vector")
        assert_same(res, torch.stack([row[i] + v1[i] for i in range(100)]), f"{where} element by element")
    m1 = torch.randn(10, 10, generator=g, dtype=dtype)
    for index in ((3,), (slice(None), 3)):
        res1 = m1.clone()
        view = res1[index]
        sw.add(view, 2, out=view)
        res2 = m1.clone()
        res2[index] = res2[index] + 2
        assert_same(res1, res2, f"add 2 in place at {index}")
    assert_same(sw.add(m1, 3), sw.add(m1, torch.tensor(3)), "m1 + 3 vs m1 + tensor(3)")
    assert_same(sw.add(m1, 3), torch.add(m1, 3))
    assert_same(sw.add(3, m1), sw.add(torch.tensor(3), m1), "3 + m1 vs tensor(3) + m1")
    assert_same(sw.add(3, m1), torch.add(3, m1))
    m2 = torch.randn(10, 10, generator=g, dtype=dtype).t()
    res = sw.add(m1, m2)
    assert res.is_contiguous()
    assert_same(res, torch.add(m1, m2))
    assert_same(res, sw.add(m1, m2.contiguous()))
    one, empty = torch.tensor([1.0], dtype=dtype), torch.tensor([], dtype=dtype)
    assert_same(sw.add(one, empty), torch.add(one, empty))
    assert sw.add(one, empty).shape == (0,)


def test_add_mixed():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_add (its dtype-independent part): uint8 1
    + 1 is uint8 2; bool + bool is or; add(bool zeros, bool zeros, alpha=0) is False; bfloat16
    [1, 2] + [3, 4] is [4, 6]; complex64 [2+3j, 4+5j] + alpha * [4+5j, 2+3j] for alpha 0.1,
    0.1+0.2j and 2 is about [2.4+3.5j, 4.2+5.3j], [1.4+4.3j, 3.6+5.7j] and exactly
    [10+13j, 8+11j]; a bool alpha or a float alpha with int8, and a complex alpha with real
    floats, raise torch's RuntimeError; complex64 into a float64 out= raises TypeError
    (documented; torch: RuntimeError "can't be cast")."""
    one = torch.tensor(1, dtype=torch.uint8)
    assert_same(sw.add(one, 1), torch.tensor(2, dtype=torch.uint8))
    m1 = torch.tensor([True, False, False, True, False, False])
    m2 = torch.tensor([True, True, False, False, False, True])
    assert_same(sw.add(m1, m2), torch.tensor([True, True, False, True, False, True]))
    a = torch.zeros(2, 3, dtype=torch.bool)
    assert_same(sw.add(a, a, alpha=0), torch.zeros(2, 3).bool())
    b1, b2 = torch.tensor([1.0, 2.0], dtype=torch.bfloat16), torch.tensor([3.0, 4.0], dtype=torch.bfloat16)
    assert_same(sw.add(b1, b2), torch.tensor([4.0, 6.0], dtype=torch.bfloat16))
    c1 = torch.tensor([2 + 3j, 4 + 5j], dtype=torch.complex64)
    c2 = torch.tensor([4 + 5j, 2 + 3j], dtype=torch.complex64)
    for alpha, expected in ((0.1, [2.4 + 3.5j, 4.2 + 5.3j]), (complex(0.1, 0.2), [1.4 + 4.3j, 3.6 + 5.7j]),
                            (2, [10 + 13j, 8 + 11j])):
        got = sw.add(c1, c2, alpha=alpha)
        torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.complex64))
        assert_same(got, torch.add(c1, c2, alpha=alpha), f"alpha={alpha}")
    i1, i2 = torch.tensor([1], dtype=torch.int8), torch.tensor([2], dtype=torch.int8)
    with pytest.raises(RuntimeError, match=r"Boolean alpha only supported for Boolean results\."):
        sw.add(i1, i2, alpha=True)
    with pytest.raises(RuntimeError, match=r"For integral input tensors, argument alpha must not be a floating point number\."):
        sw.add(i1, i2, alpha=1.0)
    for dtype in (torch.float32, torch.float64):
        f1 = torch.tensor([3.0, 4.0], dtype=dtype)
        f2 = torch.tensor([4.0, 3.0], dtype=dtype)
        with pytest.raises(RuntimeError, match=r"For non-complex input tensors, argument alpha must not be a complex number\."):
            sw.add(f1, f2, alpha=complex(0.1, 0.2))
    c = torch.tensor(4 + 4j, dtype=torch.complex64)
    out = torch.tensor(4.0, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        torch.add(c, c, out=out)
    with pytest.raises(TypeError, match="complex64"):
        sw.add(c, c, out=out)
    assert out.item() == 4.0


@pytest.mark.parametrize("dtype", INTEGRAL + FLOATING + LOWP + (torch.complex64, torch.complex128, torch.bool),
                         ids=_id)
def test_sub(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_sub: integers [2, 4] - [1, 2] is [1, 2];
    floats and complex [2.34, 4.44] - [1.23, 2.33] is about [1.11, 2.11] (bfloat16 and half
    within 0.01), as torch; bool tensors raise RuntimeError."""
    if dtype == torch.bool:
        m1 = torch.tensor([True, False])
        with pytest.raises(RuntimeError):
            torch.sub(m1, m1)
        with pytest.raises(RuntimeError):
            sw.subtract(m1, m1)
        return
    if dtype in INTEGRAL:
        m1, m2 = torch.tensor([2, 4], dtype=dtype), torch.tensor([1, 2], dtype=dtype)
        diff = torch.tensor([1, 2], dtype=dtype)
    else:
        m1, m2 = torch.tensor([2.34, 4.44], dtype=dtype), torch.tensor([1.23, 2.33], dtype=dtype)
        diff = torch.tensor([1.11, 2.11], dtype=dtype)
    got = sw.subtract(m1, m2)
    if dtype in LOWP:
        torch.testing.assert_close(got, diff, atol=0.01, rtol=0)
    else:
        torch.testing.assert_close(got, diff)
    assert_same(got, torch.sub(m1, m2))


def test_sub_typing():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_sub_typing: bool - bool, 1 - bool and
    bool - 1 raise RuntimeError (torch's message is its own; stridewise's type is checked); int8 with a bool alpha or a float
    alpha raises torch's RuntimeError."""
    m1 = torch.tensor([True, False, False, True, False, False])
    m2 = torch.tensor([True, True, False, False, False, True])
    for x, y in ((m1, m2), (1, m1), (m2, 1)):
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with .* not supported"):
            x - y
        with pytest.raises(RuntimeError):
            sw.subtract(x, y)
    i1, i2 = torch.tensor([1], dtype=torch.int8), torch.tensor([2], dtype=torch.int8)
    with pytest.raises(RuntimeError, match=r"Boolean alpha only supported for Boolean results\."):
        sw.subtract(i1, i2, alpha=True)
    with pytest.raises(RuntimeError, match=r"For integral input tensors, argument alpha must not be a floating point number\."):
        sw.subtract(i1, i2, alpha=1.0)


def test_csub():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_csub: add(a, b, alpha=-1) equals
    a - b in place (out= a), and add(a, -123.5) equals a - 123.5 in place, as torch."""
    g = torch.Generator().manual_seed(200)
    a = torch.randn(100, 90, generator=g)
    b = torch.randn(100, 90, generator=g)
    res_add = sw.add(a, b, alpha=-1)
    assert_same(res_add, torch.add(a, b, alpha=-1))
    res_csub = a.clone()
    sw.subtract(res_csub, b, out=res_csub)
    assert_same(res_add, res_csub)
    a = torch.randn(100, 100, generator=g)
    res_add = sw.add(a, -123.5)
    res_csub = a.clone()
    sw.subtract(res_csub, 123.5, out=res_csub)
    assert_same(res_add, res_csub)
    assert_same(res_csub, a.clone().sub_(123.5))


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64), ids=_id)
def test_mul_intertype_scalar(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_mul_intertype_scalar: 0-d 1.5 times 0-d
    int32 3 is 4.5 in either order; the product into the int32 tensor raises (TypeError,
    documented; torch: RuntimeError "can't be cast"), into the float one gives 4.5."""
    x = torch.tensor(1.5, dtype=dtype)
    y = torch.tensor(3, dtype=torch.int32)
    assert_same(sw.multiply(x, y), torch.tensor(4.5, dtype=dtype))
    assert_same(sw.multiply(y, x), torch.tensor(4.5, dtype=dtype))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        torch.mul(y, x, out=y.clone())
    with pytest.raises(TypeError, match=str(dtype).replace("torch.", "")):
        sw.multiply(y, x, out=y)
    assert y.item() == 3
    assert sw.multiply(x, y, out=x) is x
    assert_same(x, torch.tensor(4.5, dtype=dtype))


def test_mul():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_mul: column 3 of a 10 x 10 times 2 in
    place; bool [T, F, F, T] * [T, F, T, F] is [T, F, F, F]; bfloat16 [0.1, 0.1] * [1.1, 0.1]
    is about [0.11, 0.01], as torch."""
    g = torch.Generator().manual_seed(210)
    m1 = torch.randn(10, 10, generator=g)
    res1 = m1.clone()
    col = res1[:, 3]
    sw.multiply(col, 2, out=col)
    res2 = m1.clone()
    for i in range(10):
        res2[i, 3] = res2[i, 3] * 2
    assert_same(res1, res2)
    a1 = torch.tensor([True, False, False, True])
    a2 = torch.tensor([True, False, True, False])
    assert_same(sw.multiply(a1, a2), torch.tensor([True, False, False, False]))
    b1 = torch.tensor([0.1, 0.1], dtype=torch.bfloat16)
    b2 = torch.tensor([1.1, 0.1], dtype=torch.bfloat16)
    got = sw.multiply(b1, b2)
    torch.testing.assert_close(got, torch.tensor([0.11, 0.01], dtype=torch.bfloat16), atol=0.01, rtol=0)
    assert_same(got, torch.mul(b1, b2))


@pytest.mark.parametrize("tail", (1, 63, 67, 130))
def test_add_with_tail(tail):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_add_with_tail: float32 sums of 4096 +
    tail elements are x + y element by element (float32 rounding), as torch."""
    g = torch.Generator().manual_seed(220 + tail)
    a = torch.randn(4096 + tail, generator=g)
    b = torch.randn(4096 + tail, generator=g)
    c = sw.add(a, b)
    assert_same(c, torch.add(a, b))
    assert c.tolist() == [float(np.float32(x) + np.float32(y)) for x, y in zip(a.tolist(), b.tolist())]


# ----------------------------------------------------------------------------- unary special values

_UNARY_SPECIAL = {
    "abs": [(nan, nan), (inf, inf), (-inf, inf), (0.0, 0.0), (-0.0, 0.0), (-2.5, 2.5), (2.5, 2.5)],
    "negative": [(nan, nan), (inf, -inf), (-inf, inf), (0.0, -0.0), (-0.0, 0.0), (-2.5, 2.5)],
    "ceil": [(nan, nan), (inf, inf), (-inf, -inf), (0.0, 0.0), (-0.0, -0.0), (-0.5, -0.0), (0.5, 1.0),
             (-2.5, -2.0), (2.5, 3.0)],
    "floor": [(nan, nan), (inf, inf), (-inf, -inf), (0.0, 0.0), (-0.0, -0.0), (0.5, 0.0), (-0.5, -1.0),
              (-2.5, -3.0), (2.5, 2.0)],
    "trunc": [(nan, nan), (inf, inf), (-inf, -inf), (0.0, 0.0), (-0.0, -0.0), (0.5, 0.0), (-0.5, -0.0),
              (-2.5, -2.0), (2.5, 2.0)],
    # torch's sign: 0 for NaN (documented in docs/semantics.md), +0 for -0.0
    "sign": [(nan, 0.0), (inf, 1.0), (-inf, -1.0), (0.0, 0.0), (-0.0, 0.0), (-2.5, -1.0), (0.5, 1.0)],
    "sqrt": [(nan, nan), (inf, inf), (-inf, nan), (0.0, 0.0), (-0.0, -0.0), (-1.0, nan), (4.0, 2.0),
             (0.25, 0.5)],
    "reciprocal": [(nan, nan), (inf, 0.0), (-inf, -0.0), (0.0, inf), (-0.0, -inf), (2.0, 0.5),
                   (-0.5, -2.0)],
    "square": [(nan, nan), (inf, inf), (-inf, inf), (-0.0, 0.0), (-2.5, 6.25)],
    "exp": [(nan, nan), (inf, inf), (-inf, 0.0), (0.0, 1.0), (-0.0, 1.0)],
    "log": [(nan, nan), (inf, inf), (-inf, nan), (0.0, -inf), (-0.0, -inf), (1.0, 0.0), (-1.0, nan)],
    "sigmoid": [(nan, nan), (inf, 1.0), (-inf, 0.0), (0.0, 0.5), (-0.0, 0.5)],
    "tanh": [(nan, nan), (inf, 1.0), (-inf, -1.0), (0.0, 0.0), (-0.0, -0.0)],
    # torch.relu is clamp_min(x, 0): NaN and -0.0 pass through (documented)
    "relu": [(nan, nan), (inf, inf), (-inf, 0.0), (0.0, 0.0), (-0.0, -0.0), (-2.5, 0.0), (2.5, 2.5)],
    "sin": [(nan, nan), (inf, nan), (-inf, nan), (0.0, 0.0), (-0.0, -0.0)],
    "cos": [(nan, nan), (inf, nan), (-inf, nan), (0.0, 1.0), (-0.0, 1.0)],
}
_TORCH_UNARY = {"negative": torch.neg}


@pytest.mark.parametrize("dtype", FLOATING + LOWP, ids=_id)
@pytest.mark.parametrize("op", sorted(_UNARY_SPECIAL))
def test_reference_numerics_extremal(op, dtype):
    """test_unary_ufuncs.py::TestUnaryUfuncs::test_reference_numerics_extremal (its NaN, inf,
    -inf inputs, with signed zeros and exact cases added): each op on the values where IEEE
    754 (or torch's documented definition) fixes the result, repeated to 67 elements so vector
    body and tail both see each: the literal results, signs of zeros included, and torch's."""
    inputs, expected = zip(*_UNARY_SPECIAL[op])
    reps = -(-67 // len(inputs))
    x = torch.tensor(list(inputs) * reps, dtype=dtype)[:67]
    want_literal = torch.tensor(list(expected) * reps, dtype=dtype)[:67]
    torch_fn = _TORCH_UNARY.get(op, getattr(torch, op))
    want = torch_fn(x)
    assert_same(want, want_literal, f"torch.{op} vs literal")
    assert_same(getattr(sw, op)(x), want, f"{op}({dtype})")


@pytest.mark.parametrize("dtype", FLOATING + LOWP, ids=_id)
def test_reference_numerics_extremal_predicates(dtype):
    """test_unary_ufuncs.py::TestUnaryUfuncs::test_reference_numerics_extremal (isnan, isinf,
    isfinite, logical_not): NaN, inf, -inf, 0.0, -0.0, 1.0, -2.5, finfo.max, finfo.tiny as
    literal bools, and torch's."""
    info = torch.finfo(dtype)
    x = torch.tensor([nan, inf, -inf, 0.0, -0.0, 1.0, -2.5, info.max, info.tiny], dtype=dtype)
    cases = {"isnan": [1, 0, 0, 0, 0, 0, 0, 0, 0], "isinf": [0, 1, 1, 0, 0, 0, 0, 0, 0],
             "isfinite": [0, 0, 0, 1, 1, 1, 1, 1, 1], "logical_not": [0, 0, 0, 1, 1, 0, 0, 0, 0]}
    for op, values in cases.items():
        want = getattr(torch, op)(x)
        assert_same(want, torch.tensor(values, dtype=torch.bool), f"torch.{op} vs literal")
        assert_same(getattr(sw, op)(x), want, f"{op}({dtype})")


@pytest.mark.parametrize("dtype", FLOATING + LOWP, ids=_id)
@pytest.mark.parametrize("op", ("sqrt", "log"))
def test_float_domains(op, dtype):
    """test_unary_ufuncs.py::TestUnaryUfuncs::test_float_domains (sqrt and log, whose domain
    starts at 0): 0 - eps for eps in 1e-5, 1e-3, 0.1, 1, 2, 10, 20, 50, 100 (where the
    difference is representable) gives NaN."""
    low = torch.tensor(0.0, dtype=dtype)
    for eps in (1e-5, 1e-3, 1e-1, 1, 2, 10, 20, 50, 100):
        lower = low - eps
        if lower.item() == low.item():
            continue
        got = getattr(sw, op)(lower)
        assert math.isnan(got.item()), f"{op}({lower.item()}) is {got.item()}"
        assert_same(got, getattr(torch, op)(lower))


@pytest.mark.parametrize("dtype", FLOATING, ids=_id)
def test_abs_signed_zero(dtype):
    """test_unary_ufuncs.py::TestUnaryUfuncs::test_abs_signed_zero (and test_abs_zero): 129
    zeros, every other one -0.0: abs gives +0.0 everywhere."""
    x = torch.zeros(129, dtype=dtype)
    x[::2] = -0.0
    got = sw.abs(x)
    assert not torch.signbit(got).any()
    assert_same(got, torch.abs(x))
    assert_same(sw.abs(torch.tensor([0.0, -0.0], dtype=dtype)), torch.tensor([0.0, 0.0], dtype=dtype))


def test_abs_big_number():
    """test_unary_ufuncs.py::TestUnaryUfuncs::test_abs_big_number: abs of int64 2**31 + 1 is
    positive (2**31 + 1)."""
    got = sw.abs(torch.tensor([2 ** 31 + 1], dtype=torch.int64))
    assert got[0] > 0
    assert_same(got, torch.tensor([2 ** 31 + 1], dtype=torch.int64))


def test_op_invert():
    """test_unary_ufuncs.py::TestUnaryUfuncs::test_op_invert: bitwise_not of arange(127) in
    each integer dtype is 0xFFFF - arange(127) computed in int8, cast to the dtype; not of bool
    [F, T] is [T, F]; float tensors raise (TypeError, as upstream's ~)."""
    res = 0xFFFF - torch.arange(127, dtype=torch.int8)
    for dtype in INTEGRAL:
        a = torch.arange(127, dtype=dtype)
        assert_same(sw.bitwise_not(a), res.to(dtype), str(dtype))
        assert_same(sw.bitwise_not(a), torch.bitwise_not(a))
    assert_same(sw.bitwise_not(torch.tensor([False, True])), torch.tensor([True, False]))
    for dtype in (torch.half, torch.float, torch.double):
        with pytest.raises(TypeError):
            sw.bitwise_not(torch.zeros(10, dtype=dtype))


# ----------------------------------------------------------------------------- more binary ops

def _cop(sw_op, torch_op, reference, tolerance):
    """_test_cop's two layouts: a contiguous 10 x 10 slice with a viewed row, and column slices
    re-strided (sm2 as set_ lays it out), each against torch's own op and Python per element."""
    g = torch.Generator().manual_seed(17)
    m1, m2 = torch.randn(10, 10, 10, generator=g), torch.randn(10, 100, generator=g)
    cases = [(m1[4], m2[4].view(10, 10))]
    m1, m2 = torch.randn(10, 10, 10, generator=g), torch.randn(100, 100, generator=g)
    sm1 = m1[:, 4]
    sm2 = torch.as_strided(m2, (10, 10), (m2.stride(0) * 10, m2.stride(0)), 4)
    cases.append((sm1, sm2))
    for x, y in cases:
        got = sw_op(x, y)
        tolerance(got, torch_op(x, y))
        for i, j in product(range(10), range(10)):
            want = reference(float(x[i, j]), float(y[i, j]))
            assert got[i, j].item() == pytest.approx(want, rel=1e-5, abs=1e-6, nan_ok=True), (i, j)


def test_cdiv():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_cdiv (_test_cop): float32 x / y, contiguous
    and over re-strided slices, against Python's / per element and torch.div bit for bit."""
    _cop(sw.divide, torch.div, operator.truediv, assert_same)


def test_cmul():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_cmul (_test_cop): float32 x * y."""
    _cop(sw.multiply, torch.mul, operator.mul, assert_same)


def test_cpow():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_cpow (_test_cop): float32 x ** y, NaN for a
    negative base (upstream's reference), torch.pow's within TOLERANCE_ULP."""
    _cop(sw.pow, torch.pow, lambda x, y: nan if x < 0 else math.pow(x, y),
         lambda got, want: assert_ulp(got, want, pow_ulps(torch.float32)))


@pytest.mark.parametrize("dtype", (torch.complex64, torch.complex128), ids=_id)
def test_complex_div_underflow_overflow(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_complex_div_underflow_overflow: quotients
    of values near finfo.max / 2 and finfo.tiny whose naive intermediates over- or underflow:
    (1, 0), (1, 0), (1, 0), (0, -1), and 0 / tiny(1 + 1j) = 0; to torch's default tolerance of
    the literals, and within COMPLEX_TOLERANCE_ULP of torch's own quotient."""
    fi = torch.finfo(dtype)
    num = [complex(fi.min / 2, fi.min / 2), complex(fi.max / 2, fi.max / 2),
           complex(fi.tiny, fi.tiny), complex(fi.tiny, 0.0), complex(0.0, 0.0)]
    den = [complex(fi.min / 2, fi.min / 2), complex(fi.max / 2, fi.max / 2),
           complex(fi.tiny, fi.tiny), complex(0.0, fi.tiny), complex(fi.tiny, fi.tiny)]
    want = torch.tensor([1, 1, 1, -1j, 0], dtype=dtype)
    n, d = torch.tensor(num, dtype=dtype), torch.tensor(den, dtype=dtype)
    got = sw.divide(n, d)
    torch.testing.assert_close(got, want)
    assert_complex_ulp(got, torch.div(n, d), complex_ulps("divide", dtype))


@pytest.mark.parametrize("dtype", (torch.bfloat16, torch.float32), ids=_id)
def test_true_divide_out(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_true_divide_out: [4.2, 6.2] / [2, 2] into
    out= is [2.1, 3.1] (to 0.01), torch.true_divide's bits, and the call returns out."""
    a1 = torch.tensor([4.2, 6.2], dtype=dtype)
    a2 = torch.tensor([2.0, 2.0], dtype=dtype)
    res = torch.empty_like(a1)
    got = sw.true_divide(a1, a2, out=res)
    assert got is res
    torch.testing.assert_close(res, torch.tensor([2.1, 3.1], dtype=dtype), atol=0.01, rtol=0)
    assert_same(res, torch.true_divide(a1, a2))


@pytest.mark.parametrize("dtype", (torch.int32, torch.int64), ids=_id)
def test_fmod_remainder_overflow(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_fmod_remainder_overflow (int32 and int64,
    the widths whose hardware division traps on MIN % -1; int8 and int16 compute in int):
    MIN fmod and remainder -1 are 0, by a broadcast (3,) tensor of -1 over a (2, 3) dividend
    and by the number -1 (torch's CPU kernels and stridewise give 0)."""
    lo = torch.iinfo(dtype).min
    dividend = torch.full((2, 3), lo, dtype=dtype)
    divisor = torch.full((3,), -1, dtype=dtype)
    zeros = torch.zeros_like(dividend)
    for sw_op, torch_op in ((sw.fmod, torch.fmod), (sw.remainder, torch.remainder)):
        assert_same(sw_op(dividend, divisor), zeros, f"{sw_op.__name__} tensor")
        assert_same(sw_op(dividend, -1), zeros, f"{sw_op.__name__} number")
        assert_same(sw_op(dividend, divisor), torch_op(dividend, divisor))


@pytest.mark.parametrize("dtype", (torch.int8, torch.int16, torch.int32, torch.int64), ids=_id)
def test_floor_divide_int_min(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_floor_divide_int_min: MIN // -1 wraps to
    MIN, in torch.floor_divide's dtype."""
    a = torch.tensor([torch.iinfo(dtype).min], dtype=dtype)
    b = torch.tensor([-1], dtype=dtype)
    assert_same(sw.floor_divide(a, b), a)
    assert_same(sw.floor_divide(a, b), torch.floor_divide(a, b))


def test_remainder_overflow():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_remainder_overflow: int64 0-d 23500 and
    -23500 modulo +-392486996410368 (no overflow in the sign fix-up): x, q - x, x - q, -x."""
    q = 392486996410368
    x = torch.tensor(23500, dtype=torch.int64)
    for a, b, want in ((x, q, 23500), (-x, q, q - 23500), (x, -q, 23500 - q), (-x, -q, -23500)):
        got = sw.remainder(a, b)
        assert_same(got, torch.tensor(want, dtype=torch.int64), f"{int(a)} % {b}")
        assert_same(got, torch.remainder(a, b))


def test_idiv_and_ifloordiv_vs_python():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_idiv_and_ifloordiv_vs_python, with out=
    the dividend for the in-place forms: for a, b in [-10, 10)^2 (halved: float32 0-d tensors;
    floored: int64), a / b in place by a number and by a 0-d tensor is Python's a / b for
    floats (to torch's float32 tolerance; torch's own in-place result bit for bit), also by 5,
    and raises for integers (a float result into an int64 out, TypeError here where torch
    raises RuntimeError); floor division in place is Python's a // b; in place by 5,
    math.floor(a / 5)."""
    for a0, b0 in product(range(-10, 10), range(-10, 10)):
        for op in (lambda v: v * 0.5, lambda v: math.floor(v)):
            a, b = op(a0), op(b0)
            if b == 0:
                continue
            a_t, b_t = torch.tensor(a), torch.tensor(b)
            if a_t.is_floating_point():
                for divisor in (b, b_t, 5):
                    tmp, ref = a_t.clone(), a_t.clone()
                    assert sw.divide(tmp, divisor, out=tmp) is tmp
                    ref /= divisor
                    assert_same(tmp, ref, f"{a} /= {divisor}")
                    assert tmp.item() == pytest.approx(a / float(divisor), rel=1.3e-6), (a, divisor)
            else:
                for divisor in (b, b_t, 5):
                    tmp = a_t.clone()
                    with pytest.raises(TypeError):
                        sw.divide(tmp, divisor, out=tmp)
                    assert tmp.item() == a          # nothing written
            tmp = a_t.clone()
            sw.floor_divide(tmp, b_t, out=tmp)
            assert tmp.item() == a // b and tmp.dtype == a_t.dtype, (a, b)
            tmp = a_t.clone()
            sw.floor_divide(tmp, 5, out=tmp)
            assert tmp.item() == math.floor(a / 5), (a, 5)


_REAL_AND_BOOL = INTEGRAL + FLOATING + LOWP + (torch.bool,)


@pytest.mark.parametrize("cdtype", (torch.complex64, torch.complex128), ids=_id)
def test_maximum_minimum_complex(cdtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_maximum_minimum_complex: maximum and
    minimum of a complex tensor with a tensor of any dtype, either order, raise: upstream's
    newer torch raises TypeError, the pinned torch 2.13 RuntimeError; stridewise's error is
    both (UnsupportedDtypeError)."""
    for other in _REAL_AND_BOOL + (torch.complex64, torch.complex128):
        a, b = torch.ones(1, dtype=cdtype), torch.ones(1, dtype=other)
        for sw_op, torch_op in ((sw.maximum, torch.maximum), (sw.minimum, torch.minimum)):
            for x, y in ((a, b), (b, a)):
                with pytest.raises((TypeError, RuntimeError), match="not implemented"):
                    torch_op(x, y)
                with pytest.raises(TypeError) as err:
                    sw_op(x, y)
                assert isinstance(err.value, RuntimeError), (x.dtype, y.dtype)


def test_not_broadcastable():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_not_broadcastable (binary ops of
    stridewise, float32): shapes that do not broadcast raise (ValueError, as torch raises
    RuntimeError) before anything is computed."""
    pairs = (((2,), (3,)), ((3, 1), (2, 1)), ((1, 3, 2), (3,)), ((3, 1, 2), (2, 1, 2)))
    ops = (sw.add, sw.subtract, sw.multiply, sw.divide, sw.remainder, sw.fmod, sw.floor_divide,
           sw.maximum, sw.minimum, sw.pow, sw.copysign, sw.equal, sw.less, sw.logical_and)
    for (sa, sb), op in product(pairs, ops):
        a, b = make(sa, torch.float32, 1), make(sb, torch.float32, 2)
        with pytest.raises(RuntimeError):
            torch.add(a, b)
        with pytest.raises(ValueError):
            op(a, b)


def test_add_broadcast_empty():
    """test_binary_ufuncs.py::TestBinaryUfuncsDevice::test_add_broadcast_empty: (5, 0) + (0, 5)
    and (7, 0) + (2, 1) raise; (0,) + (5, 0) is (5, 0), (0,) + (5, 0, 1) is (5, 0, 0), a 0-d
    tensor + (5, 0, 6) is (5, 0, 6), (0,) + (1,) is (0,), and (0, 7, 0, 6, 5, 0, 7) comes from
    (0, 7, 0, 6, 5, 0, 1) + (1, 1, 5, 1, 7); each torch.add's shape, dtype and strides."""
    for sa, sb in (((5, 0), (0, 5)), ((7, 0), (2, 1))):
        with pytest.raises(ValueError):
            sw.add(torch.randn(sa), torch.randn(sb))
    for sa, sb, shape in (((0,), (5, 0), (5, 0)), ((0,), (5, 0, 1), (5, 0, 0)),
                          ((), (5, 0, 6), (5, 0, 6)), ((0,), (1,), (0,)),
                          ((0, 7, 0, 6, 5, 0, 1), (1, 1, 5, 1, 7), (0, 7, 0, 6, 5, 0, 7))):
        a, b = torch.randn(sa), torch.randn(sb)
        got = sw.add(a, b)
        assert tuple(got.shape) == shape
        assert_same(got, torch.add(a, b), f"{sa} + {sb}")


# in-place (out= the first input) and out= forms of the binary ops upstream lists, and the
# number-exponent pow; the comparisons and logical ops write their bool result into a float64
# out (torch casts it there)
_OVERLAP_BINARY = {
    "add": (sw.add, torch.add), "mul": (sw.multiply, torch.mul), "sub": (sw.subtract, torch.sub),
    "div": (sw.divide, torch.div), "pow": (sw.pow, torch.pow), "fmod": (sw.fmod, torch.fmod),
    "le": (sw.less_equal, torch.le), "lt": (sw.less, torch.lt), "ge": (sw.greater_equal, torch.ge),
    "gt": (sw.greater, torch.gt), "eq": (sw.equal, torch.eq), "ne": (sw.not_equal, torch.ne),
    "logical_and": (sw.logical_and, torch.logical_and), "logical_or": (sw.logical_or, torch.logical_or),
    "logical_xor": (sw.logical_xor, torch.logical_xor),
}


def _check_mem_overlap(sw_op, torch_op, data, sz, msg, ulps=0, values=True):
    """unary_check_input_output_mem_overlap: out identical to the input and out independent
    of it give torch's result for the same operands (within `ulps` for transcendental ops;
    values=False skips these two, which compile the op's kernel); out overlapping the input
    one element further on raises (OverlapError: a RuntimeError, torch's type; torch's
    words), whatever out's dtype, before any kernel is built."""
    for out, inp in ((data[0:sz], data[0:sz]), (data[0:sz], data[sz:2 * sz])) if values else ():
        want = torch.empty_like(out)
        torch_op(inp.clone(), out=want)
        got = sw_op(inp, out=out)
        assert got is out, msg
        assert_ulp(out, want, ulps, msg)
    with pytest.raises(RuntimeError, match="single memory location"):
        sw_op(data[1:sz + 1], out=data[0:sz])
    with pytest.raises(RuntimeError):
        torch_op(data[1:sz + 1], out=data[0:sz])


def _check_internal_overlap(sw_inplace, n_inputs, msg):
    """check_internal_mem_overlap: an in-place call into a (3, 3) expansion of one element
    (every element the same memory) raises, as torch's in-place op does."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(1, dtype=torch.float64, generator=g).expand(3, 3)
    others = [torch.randn(3, 3, dtype=torch.float64, generator=g) for _ in range(n_inputs - 1)]
    with pytest.raises(RuntimeError, match="single memory location"):
        sw_inplace(x, *others)


# the ops whose out= identical to / independent of an input are also computed (a kernel each;
# the comparisons' bool result goes through the cast into a float64 out); all raise alike
_OVERLAP_VALUES = {"add", "div", "pow", "lt", "logical_xor", "abs", "bitwise_not", "exp", "sqrt",
                   "trunc"}


@pytest.mark.parametrize("name", sorted(_OVERLAP_BINARY))
def test_binary_op_mem_overlap(name):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_binary_op_mem_overlap (the ops stridewise
    offers): float64, in place into an internally overlapping tensor raises; out= partially
    overlapping either input raises, with the other operand first and second; out= identical
    to that input and independent of it give torch's values (for _OVERLAP_VALUES: a kernel
    compile each, CI's time)."""
    sw_op, torch_op = _OVERLAP_BINARY[name]
    _check_internal_overlap(lambda x, y: sw_op(x, y, out=x), 2, name)
    g = torch.Generator().manual_seed(4)
    sz = 3
    data = torch.randn(2 * sz, dtype=torch.float64, generator=g)
    other = torch.randn(sz, dtype=torch.float64, generator=g)
    out_dtype = torch.float64

    def first(inp, out):
        return sw_op(other, inp, out=out)

    def second(inp, out):
        return sw_op(inp, other, out=out)

    def t_first(inp, out):
        return torch_op(other, inp, out=out)

    def t_second(inp, out):
        return torch_op(inp, other, out=out)
    assert data.dtype == out_dtype
    ulps = pow_ulps(torch.float64) if name == "pow" else 0
    values = name in _OVERLAP_VALUES
    _check_mem_overlap(first, t_first, data, sz, f"{name}(other, x)", ulps, values)
    _check_mem_overlap(second, t_second, data, sz, f"{name}(x, other)", ulps, values)


def test_pow_scalar_overloads_mem_overlap():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_pow_scalar_overloads_mem_overlap: x ** 42
    in place into an internally overlapping tensor raises; pow(x, 42) and pow(42, x) into an
    out identical to x, independent of it, or overlapping it (raises)."""
    _check_internal_overlap(lambda x: sw.pow(x, 42, out=x), 1, "pow_(42)")
    data = torch.randn(6, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    _check_mem_overlap(lambda inp, out: sw.pow(inp, 42, out=out),
                       lambda inp, out: torch.pow(inp, 42, out=out), data, 3, "pow(x, 42)",
                       pow_ulps(torch.float64))
    _check_mem_overlap(lambda inp, out: sw.pow(42, inp, out=out),
                       lambda inp, out: torch.pow(42, inp, out=out), data, 3, "pow(42, x)",
                       pow_ulps(torch.float64))


@pytest.mark.parametrize("dtype", (torch.complex64, torch.complex128), ids=_id)
def test_pow_cuda_complex_extremal_passing(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_pow_cuda_complex_extremal_passing, on the
    CPU: (-1 + inf j) ** 2 is torch's CPU result, part for part (its special exponent 2 is a
    product: NaN + NaN j here)."""
    t = torch.tensor(complex(-1.0, inf), dtype=dtype)
    assert_same(sw.pow(t, 2), t.pow(2))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", (torch.complex64, torch.complex128), ids=_id)
def test_pow_cuda_complex_extremal_passing_cuda(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_pow_cuda_complex_extremal_passing: on CUDA,
    (-1 + inf j) ** 2 is torch's CPU result (stridewise gives one answer on both devices)."""
    t = torch.tensor(complex(-1.0, inf), dtype=dtype)
    assert_same(sw.pow(t.cuda(), 2).cpu(), t.pow(2))


def _signed_nans(dtype):
    bits = (0x7E00, 0xFE00 - 0x10000) if dtype == torch.float16 else (0x7FC0, 0xFFC0 - 0x10000)
    return [torch.tensor([b, b], dtype=torch.int16).view(dtype) for b in bits]


@pytest.mark.parametrize("dtype", LOWP, ids=_id)
def test_copysign_nan_sign(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncsCUDA::test_copysign_nan_sign (issue 181804), on
    the CPU: copysign(1, NaN) takes the NaN's sign bit, made from bits: +1 for 0x7E00 / 0x7FC0,
    -1 for their negative twins."""
    pos_nan, neg_nan = _signed_nans(dtype)
    mag = torch.ones(2, dtype=dtype)
    assert_same(sw.copysign(mag, pos_nan), torch.ones(2, dtype=dtype))
    assert_same(sw.copysign(mag, neg_nan), -torch.ones(2, dtype=dtype))
    assert_same(sw.copysign(mag, neg_nan), torch.copysign(mag, neg_nan))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", LOWP, ids=_id)
def test_copysign_nan_sign_cuda(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncsCUDA::test_copysign_nan_sign on CUDA."""
    pos_nan, neg_nan = (t.cuda() for t in _signed_nans(dtype))
    mag = torch.ones(2, dtype=dtype, device="cuda")
    assert_same(sw.copysign(mag, pos_nan).cpu(), torch.ones(2, dtype=dtype))
    assert_same(sw.copysign(mag, neg_nan).cpu(), -torch.ones(2, dtype=dtype))


# ----------------------------------------------------------------------------- gradients

def _grads(fn, *values, dtypes):
    leaves = [torch.tensor(v, dtype=dt, requires_grad=True) for v, dt in zip(values, dtypes)]
    fn(*leaves).sum().backward()
    return [leaf.grad for leaf in leaves]


_SUBGRAD_PAIRS = ((torch.float32, torch.float32), (torch.float16, torch.bfloat16))


@pytest.mark.parametrize("dtypes", _SUBGRAD_PAIRS, ids=lambda d: f"{_id(d[0])}-{_id(d[1])}")
def test_min_max_and_clamp_subgradient(dtypes):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_min_max_and_clamp_subgradient (two of
    upstream's dtype pairs): maximum and minimum of [0, 1, 2] and [1, 1, 1] split a tie's
    gradient in halves: a gets [0, .5, 1] (max) / [1, .5, 0] (min), b the rest -- upstream's
    literals. Upstream's clamp by a tensor bound now splits ties too, which the pinned torch
    2.13 does not (x keeps the whole gradient there, the bound none); clip is held to torch
    2.13's own gradients, the owning library's answer."""
    a, b = [0.0, 1.0, 2.0], [1.0, 1.0, 1.0]
    for op, ga, gb in ((sw.maximum, [0.0, 0.5, 1.0], [1.0, 0.5, 0.0]),
                       (sw.minimum, [1.0, 0.5, 0.0], [0.0, 0.5, 1.0])):
        got_a, got_b = _grads(op, a, b, dtypes=dtypes)
        assert got_a.tolist() == ga and got_b.tolist() == gb, op.__name__
        assert got_a.dtype == dtypes[0] and got_b.dtype == dtypes[1]
    for sw_op, torch_op in ((lambda x, t: sw.clip(x, t, None), lambda x, t: torch.clamp(x, min=t)),
                            (lambda x, t: sw.clip(x, None, t), lambda x, t: torch.clamp(x, max=t))):
        got = _grads(sw_op, a, b, dtypes=dtypes)
        want = _grads(torch_op, a, b, dtypes=dtypes)
        for g, w in zip(got, want):
            assert_same(g, w, "clip")


@pytest.mark.parametrize("dtype", FLOATING, ids=_id)
def test_min_max_nan_gradients(dtype):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_min_max_nan_gradients (maximum, minimum):
    a NaN upstream gradient reaches the side that won or tied: a gets [NaN, NaN, 0], b [0, NaN,
    NaN]; torch's own gradients bit for bit."""
    for sw_op, torch_op, a_values in ((sw.maximum, torch.maximum, [2.0, 1.0, 0.0]),
                                      (sw.minimum, torch.minimum, [0.0, 1.0, 2.0])):
        grads = []
        for op in (sw_op, torch_op):
            a = torch.tensor(a_values, dtype=dtype, requires_grad=True)
            b = torch.ones(3, dtype=dtype, requires_grad=True)
            op(a, b).backward(torch.full_like(a, nan))
            grads.append((a.grad, b.grad))
        (ga, gb), (wa, wb) = grads
        assert_same(ga, torch.tensor([nan, nan, 0.0], dtype=dtype))
        assert_same(gb, torch.tensor([0.0, nan, nan], dtype=dtype))
        assert_same(ga, wa)
        assert_same(gb, wb)


def test_min_max_and_clamp_forward_ad():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_min_max_and_clamp_forward_ad (maximum,
    minimum, clip) and the forward half of test_scalar_clamp_subgradient: tangents through
    [0, 1, 2] vs [1, 1, 1] with tangents [2, 4, 6] and [10, 20, 30]: maximum gives [10, 12, 6]
    and minimum [2, 12, 30] (a tie averages them); clip by a tensor bound and by number bounds
    gives torch 2.13's clamp tangent (upstream's newer torch averages ties there too)."""
    import torch.autograd.forward_ad as fwAD

    def tangent(op, *duals):
        with fwAD.dual_level():
            out = op(*(fwAD.make_dual(p, t) for p, t in duals))
            return fwAD.unpack_dual(out).tangent

    a = (torch.tensor([0.0, 1.0, 2.0]), torch.tensor([2.0, 4.0, 6.0]))
    b = (torch.tensor([1.0, 1.0, 1.0]), torch.tensor([10.0, 20.0, 30.0]))
    got = tangent(sw.maximum, a, b)
    assert got is not None and got.tolist() == [10.0, 12.0, 6.0]
    assert tangent(sw.minimum, a, b).tolist() == [2.0, 12.0, 30.0]
    assert_same(tangent(lambda x, t: sw.clip(x, t, None), a, b),
                tangent(lambda x, t: torch.clamp(x, min=t), a, b))
    assert_same(tangent(lambda x, t: sw.clip(x, None, t), a, b),
                tangent(lambda x, t: torch.clamp(x, max=t), a, b))
    v = (torch.tensor([-1.0, 0.0, 1.0]), torch.tensor([2.0, 4.0, 6.0]))
    for lo, hi in ((0.0, None), (None, 0.0), (-1.0, 1.0), (0.0, 0.0), (1.0, 0.0)):
        assert_same(tangent(lambda x: sw.clip(x, lo, hi), v), tangent(lambda x: torch.clamp(x, lo, hi), v))


def test_scalar_clamp_subgradient():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_scalar_clamp_subgradient (float32; its
    forward tangents are in test_min_max_and_clamp_forward_ad): clip of [-1, 0, 1] by number
    bounds (min 0; max 0; [-1, 1]; [0, 0]; [1, 0]): the gradient is torch 2.13's clamp's
    (upstream's newer torch gives a tie no gradient; 2.13 gives x the whole gradient on a
    tie), and a NaN upstream gradient passes where x is inside."""
    values = torch.tensor([-1.0, 0.0, 1.0])
    for lo, hi in ((0.0, None), (None, 0.0), (-1.0, 1.0), (0.0, 0.0), (1.0, 0.0)):
        for seed in (torch.ones(3), torch.full((3,), nan)):
            got, want = [], []
            for op, into in ((lambda x: sw.clip(x, lo, hi), got), (lambda x: torch.clamp(x, lo, hi), want)):
                x = values.clone().requires_grad_()
                op(x).backward(seed)
                into.append(x.grad)
            for g, w in zip(got, want):
                assert_same(g, w, f"clip({lo}, {hi})")


def test_tensor_clamp_subgradient():
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_tensor_clamp_subgradient (float64): clip
    of [0, 1, 2, 3] by tensor bounds 1 and 2, of [0, 1, 2] by [1, 1] and by [2, 1] (hi < lo),
    and of a (2, 3) x by a broadcast (3,) bound: x's and each bound's gradients are torch 2.13's
    clamp's (upstream's newer torch splits ties between x and the bound)."""
    cases = [([0.0, 1.0, 2.0, 3.0], [1.0] * 4, [2.0] * 4), ([0.0, 1.0, 2.0], [1.0] * 3, [1.0] * 3),
             ([0.0, 1.0, 2.0], [2.0] * 3, [1.0] * 3)]
    for xs, los, his in cases:
        got = _grads(sw.clip, xs, los, his, dtypes=(torch.float64,) * 3)
        want = _grads(torch.clamp, xs, los, his, dtypes=(torch.float64,) * 3)
        for g, w in zip(got, want):
            assert_same(g, w, f"clip({xs}, {los}, {his})")
    x = [[0.0, 1.0, 2.0], [1.0, 1.0, 0.0]]
    got = _grads(lambda a, b: sw.clip(a, b, None), x, [1.0] * 3, dtypes=(torch.float64,) * 2)
    want = _grads(lambda a, b: torch.clamp(a, min=b), x, [1.0] * 3, dtypes=(torch.float64,) * 2)
    for g, w in zip(got, want):
        assert_same(g, w, "clip by a broadcast bound")


_COPYSIGN_GRAD_PAIRS = ((torch.float32, torch.float32), (torch.float64, torch.float16),
                        (torch.bfloat16, torch.float32))


@pytest.mark.parametrize("dtypes", _COPYSIGN_GRAD_PAIRS, ids=lambda d: f"{_id(d[0])}-{_id(d[1])}")
def test_copysign_subgradient(dtypes):
    """test_binary_ufuncs.py::TestBinaryUfuncs::test_copysign_subgradient (three of upstream's
    dtype pairs): x = +-0 gives x and y zero gradients; y = +0 gives x sign(x) ([-1, 0, 1]),
    y = -0 gives -sign(x) ([1, 0, -1]); y's gradient is always 0."""
    for xs, ys, gx in (([0.0] * 3, [-1.0, 0.0, 1.0], [0.0] * 3), ([-0.0] * 3, [-1.0, 0.0, 1.0], [0.0] * 3),
                       ([-1.0, 0.0, 1.0], [0.0] * 3, [-1.0, 0.0, 1.0]),
                       ([-1.0, 0.0, 1.0], [-0.0] * 3, [1.0, 0.0, -1.0])):
        got_x, got_y = _grads(sw.copysign, xs, ys, dtypes=dtypes)
        assert got_x.tolist() == gx and got_y.tolist() == [0.0] * 3, (xs, ys)


# ----------------------------------------------------------------------------- more unary ops

_OVERLAP_UNARY = {
    "abs": sw.abs, "bitwise_not": sw.bitwise_not, "ceil": sw.ceil, "cos": sw.cos, "exp": sw.exp,
    "floor": sw.floor, "log": sw.log, "neg": sw.negative, "reciprocal": sw.reciprocal,
    "sin": sw.sin, "sigmoid": sw.sigmoid, "sqrt": sw.sqrt, "tanh": sw.tanh, "trunc": sw.trunc,
}


_OVERLAP_UNARY_TOLERANCE = {"neg": "negative"}


@pytest.mark.parametrize("name", sorted(_OVERLAP_UNARY))
def test_unary_out_op_mem_overlap(name):
    """test_unary_ufuncs.py::TestUnaryUfuncs::test_unary_out_op_mem_overlap (the ops stridewise
    offers, on the CPU): float64 randn (log: positive integers as doubles; bitwise_not: int64
    in [-100, 100)) into an out one element off the input raises, and in place into an
    internally overlapping tensor raises; into an out identical to the input and independent
    of it, torch's values (for _OVERLAP_VALUES: a kernel compile each, CI's time)."""
    sw_op, torch_op = _OVERLAP_UNARY[name], getattr(torch, name)
    g = torch.Generator().manual_seed(6)
    if name == "bitwise_not":
        data = torch.randint(-100, 100, (6,), generator=g)
    elif name == "log":
        data = torch.randint(1, 100, (6,), generator=g).double()
    else:
        data = torch.randn(6, dtype=torch.float64, generator=g)
    ulps = TOLERANCE_ULP.get(_OVERLAP_UNARY_TOLERANCE.get(name, name), {}).get("float64", 0)
    _check_mem_overlap(lambda inp, out: sw_op(inp, out=out), lambda inp, out: torch_op(inp, out=out),
                       data, 3, name, ulps, name in _OVERLAP_VALUES)
    if name == "bitwise_not":          # upstream's in-place check takes a double: no kernel
        x = torch.zeros(1, dtype=torch.int64).expand(3, 3)
    else:
        x = torch.randn(1, dtype=torch.float64, generator=g).expand(3, 3)
    with pytest.raises(RuntimeError, match="single memory location"):
        sw_op(x, out=x)


def test_complex_edge_values():
    """test_unary_ufuncs.py::TestUnaryUfuncs::test_complex_edge_values (sqrt; acos is not a
    stridewise op): complex128 sqrt of 0 - 1e20j and of -1e60 - 4988429.2j, NumPy's result part
    for part and torch's."""
    for z in (0.0 - 1.0e20j, -1.0e60 - 4988429.2j):
        x = torch.tensor(z, dtype=torch.complex128)
        got = sw.sqrt(x)
        want = np.sqrt(x.numpy())
        assert_same(got, torch.from_numpy(np.asarray(want)), str(z))
        assert_same(got, torch.sqrt(x), str(z))


@pytest.mark.parametrize("dtype", (torch.complex64, torch.complex128), ids=_id)
def test_abs_angle_complex_to_float(dtype):
    """test_unary_ufuncs.py::TestUnaryUfuncs::test_abs_angle_complex_to_float (abs; angle is not
    a stridewise op): 60 random complex values and none: abs is NumPy's real result (within
    COMPLEX_TOLERANCE_ULP of torch's hypot); into a float out, a resized one-element float out,
    a complex out, a resized empty complex out (the real result cast); an int64 out raises."""
    import random
    rng = random.Random(7)
    vals = [complex(rng.random() * m, rng.random() * m) for m in (-1, 1, -10, 10, -100, 100)
            for _ in range(10)]
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    ulps = complex_ulps("abs", dtype)
    for values in (vals, []):
        t = torch.tensor(values, dtype=dtype)
        want = torch.abs(t)
        got = sw.abs(t)
        assert_ulp(got, want, ulps)
        for out in (torch.empty_like(t, dtype=real), torch.empty(1, dtype=real)):
            assert sw.abs(t, out=out) is out
            assert_same(out, got)
        for out in (torch.empty_like(t), torch.empty(0, dtype=dtype)):
            sw.abs(t, out=out)
            assert_same(out, got.to(dtype))
        with pytest.raises(TypeError):
            sw.abs(t, out=torch.empty(0, dtype=torch.int64))
        with pytest.raises(RuntimeError):
            torch.abs(t, out=torch.empty(0, dtype=torch.int64))


@pytest.mark.parametrize("dtype", FLOATING + (torch.complex64, torch.complex128), ids=_id)
def test_exp(dtype):
    """test_unary_ufuncs.py::TestUnaryUfuncs::test_exp (the CPU dtypes; bfloat16 returns before
    comparing upstream): exp of v * arange(18) / 3 * pi for v in 2, -2 (and 1j, 1 + 1j for
    complex) to NumPy within torch's default tolerance and TOLERANCE_ULP of torch; exp(0 + inf
    j) and exp(NaN + inf j) are NaN + NaN j, and NumPy's (the cases upstream compares on the
    CPU)."""
    for v in (2, -2) + ((1j, 1 + 1j) if dtype.is_complex else ()):
        a = (torch.tensor(v, dtype=dtype) * torch.arange(18) / 3 * math.pi).to(dtype)
        got = sw.exp(a)
        torch.testing.assert_close(got, torch.from_numpy(np.exp(a.numpy())))
        if dtype.is_complex:
            assert_complex_ulp(got, torch.exp(a), 2)
        else:
            assert_ulp(got, torch.exp(a), TOLERANCE_ULP["exp"][_NAME[dtype]])
    if dtype.is_complex:
        for z in (complex(0, inf), complex(nan, inf)):
            x = torch.tensor(z, dtype=dtype)
            got = sw.exp(x).item()
            assert math.isnan(got.real) and math.isnan(got.imag), z
            with np.errstate(invalid="ignore"):
                want = torch.from_numpy(np.asarray(np.exp(x.numpy())))
            assert_same(sw.exp(x), want, str(z))
