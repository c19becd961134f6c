"""Comparison, logical, bitwise, test, rounding and the other table ops added with the new
dtypes, against NumPy and torch: values and result dtypes bit for bit (tanh and sigmoid within
TOLERANCE_ULP). Each op runs in a 16-bit float (special values included), a narrow integer
and bool where the op takes it."""
import numpy as np
import pytest

import stridewise as sw
from oracle import same_bits
from stridewise._builtins import OPS, TOLERANCE_ULP
from test_builtin_ops import ulp_diff

torch = pytest.importorskip("torch")

NEW = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
       "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
       "bitwise_not", "left_shift", "right_shift", "isnan", "isinf", "isfinite", "floor", "ceil",
       "trunc", "sign", "copysign", "square", "reciprocal", "tanh", "sigmoid", "clip")
NUMPY_NAME = {"bitwise_not": "invert"}
TORCH_NAME = {"left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift",
              "clip": "clamp", "equal": "eq", "not_equal": "ne"}


def sample_dtypes(op):
    have = OPS[op].dtypes
    picks = [next((d for d in ("float16", "float32") if d in have), None),
             next((d for d in (("int8", "uint16") if op < "m" else ("uint16", "int8")) if d in have), None),
             "bool" if "bool" in have else None]
    return [d for d in picks if d]


CASES = [(op, dt) for op in NEW for dt in sample_dtypes(op)]


def operand(op, dt, rng, n=515, k=0):
    if dt == "bool":
        return rng.random(n) < 0.5
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        if op in ("left_shift", "right_shift") and k == 1:   # counts, some outside [0, bits)
            lo = -2 if info.min < 0 else 0
            return rng.integers(lo, 8 * np.dtype(dt).itemsize + 3, n).astype(dt)
        x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        x[:4] = [info.min, info.max, 0, 1]
        x[4:40] = rng.integers(-3 if info.min else 0, 4, 36)   # small values meet often
        return x
    x = (rng.standard_normal(n) * 4).astype(dt)
    x[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5]
    x[8:60] = np.round(x[8:60])                                 # equal values meet often
    return x


def numpy_oracle(op, args):
    with np.errstate(all="ignore"):
        if op == "sigmoid":
            x = args[0]
            return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(x.dtype)
        if op == "clip":
            return np.clip(*args)
        return getattr(np, NUMPY_NAME.get(op, op))(*args)


def args_for(op, dt, rng):
    nin = OPS[op].nin
    args = [operand(op, dt, rng, k=k) for k in range(nin)]
    if op == "clip":   # lo <= hi mostly, with crossings
        args[1], args[2] = np.minimum(args[1], args[2]), np.maximum(args[1], args[2])
        args[2][:20] = args[1][:20] - (1 if dt != "bool" else 0)
    return args


@pytest.mark.parametrize("op,dt", CASES)
def test_new_op_matches_numpy(op, dt):
    rng = np.random.default_rng(11)
    args = args_for(op, dt, rng)
    want = numpy_oracle(op, args)
    got = getattr(sw, op)(*args)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if op in TOLERANCE_ULP:
        assert ulp_diff(got, want) <= TOLERANCE_ULP[op][str(got.dtype)]
    elif want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
    else:
        assert same_bits(got, want)


@pytest.mark.parametrize("op,dt", [(op, dt) for op, dt in CASES if dt != "uint16"])
def test_new_op_matches_torch(op, dt):
    """torch tensors in and out; torch's own result dtype (sign(NaN) is 0 there)."""
    rng = np.random.default_rng(12)
    args = [torch.from_numpy(a) for a in args_for(op, dt, rng)]
    fn = getattr(torch, TORCH_NAME.get(op, op))
    try:
        want = fn(*args)
    except (RuntimeError, TypeError):
        pytest.skip(f"torch has no {op} for {dt}")   # e.g. clamp, sign of bool
    got = getattr(sw, op)(*args)
    assert got.dtype == want.dtype
    if op in TOLERANCE_ULP:
        assert ulp_diff(got.numpy(), want.numpy()) <= TOLERANCE_ULP[op][str(got.dtype).removeprefix("torch.")]
    else:
        assert same_bits(got.numpy(), want.numpy()) if got.dtype != torch.bool else torch.equal(got, want)


def test_comparisons_give_bool_with_promotion():
    a = np.arange(10, dtype=np.int8)
    assert sw.less(a, 4.5).dtype == np.bool_
    np.testing.assert_array_equal(sw.less(a, 4.5), a < 4.5)
    t = torch.arange(10, dtype=torch.int16)
    assert torch.equal(sw.greater_equal(t, torch.tensor(3.5, dtype=torch.float64)), t >= 3.5)
    # the condition of where now comes from a comparison
    x = np.linspace(-3, 3, 13)
    np.testing.assert_array_equal(sw.where(sw.greater(x, 0), x, 0.0), np.where(x > 0, x, 0.0))


def test_float_only_ops_raise_the_librarys_error():
    with pytest.raises(TypeError):
        sw.bitwise_and(np.ones(3), np.ones(3))
    with pytest.raises(TypeError):
        sw.left_shift(torch.ones(3), torch.ones(3))
    with pytest.raises(TypeError, match="reciprocal"):
        sw.reciprocal(np.ones(3, np.int32))     # NumPy's integer reciprocal is not provided
    assert sw.reciprocal(torch.ones(3, dtype=torch.int32)).dtype == torch.float32
