"""Result dtypes against each library's own promotion, over many operand combinations:
torch.result_type on the real operands (tensors with dimensions, 0-d tensors, Python numbers),
NumPy 2's ufunc results (NEP 50: Python numbers are weak, 0-d arrays are not). Dry calls:
the plan and the typing, no compile."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stridewise as sw
from oracle import numpy_op
from stridewise.launch import pipeline as _ops
from stridewise.ops import builtins as _builtins
from stridewise.ops.builtins import OPS

torch = pytest.importorskip("torch")

NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "bfloat16", "float32", "float64")



def out_dtype(op, args):
    return _ops._call(op, args, dry=True).spec.arrays[0].name


def torch_operand(kind, name):
    if kind == "dims":
        return torch.ones(3, dtype=getattr(torch, name))
    if kind == "0-d":
        return torch.ones((), dtype=getattr(torch, name))
    return {"bool": True, "int": 3, "float": 2.5}[kind]


def operand_kinds():
    return st.one_of(st.tuples(st.sampled_from(["dims", "0-d"]), st.sampled_from(NAMES)),
                     st.tuples(st.sampled_from(["bool", "int", "float"]), st.just("")))


@settings(max_examples=400, deadline=None)
@given(operand_kinds(), operand_kinds())
def test_torch_binary_promotion_is_torch_result_type(a, b):
    x, y = torch_operand(*a), torch_operand(*b)
    if not any(isinstance(v, torch.Tensor) for v in (x, y)):
        return
    try:
        want = str(torch.result_type(x, y)).removeprefix("torch.")
    except RuntimeError:          # torch promotes its uint16/32/64 with nothing else
        with pytest.raises(TypeError, match="cast the operands"):
            out_dtype(OPS["maximum"], (x, y))
        return
    assert out_dtype(OPS["maximum"], (x, y)) == want if want in OPS["maximum"].dtypes else True
    assert sw.operands.arrays.result_dtypes("torch", None, (_ops._key(_ops._arrays.as_operand(x, 0)),
                                                    _ops._key(_ops._arrays.as_operand(y, 1))))[0].name == want


def test_torch_zero_dim_rule_examples():
    """The cases where reasoning from 1-d tensors went wrong."""
    f64 = torch.tensor(2.5, dtype=torch.float64)
    assert sw.remainder(torch.randn(5), f64).dtype == torch.float32
    assert sw.remainder(f64, torch.randn(5)).dtype == torch.float32
    i64 = torch.tensor(3)
    a = torch.arange(-6, 6, dtype=torch.int32)
    assert sw.remainder(a, i64).dtype == torch.int32
    assert torch.equal(sw.remainder(a, i64), torch.remainder(a, i64))
    for dt in (torch.float16, torch.bfloat16):
        h = torch.randn(7).to(dt)
        got = sw.remainder(h, torch.tensor(0.75))
        assert got.dtype == dt and torch.equal(got, torch.remainder(h, torch.tensor(0.75)))
    x = torch.randn(9) * 10
    want = torch.remainder(x, f64)
    sw.remainder_(x, f64)
    assert x.dtype == torch.float32 and torch.equal(x, want)
    # a 0-d tensor of a higher category still counts: int32 % 0-d float64 is float64
    assert sw.remainder(a, f64).dtype == torch.result_type(a, f64) == torch.float64


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["dims", "0-d"]), st.sampled_from(NAMES[1:])),
                min_size=3, max_size=3))
def test_torch_three_operands(kinds):
    """fma's three operands promote as torch.addcmul's (one promotion over all three, 0-d
    tensors ranked below those with dimensions)."""
    args = [torch_operand(*k) for k in kinds]
    try:
        want = torch.addcmul(*args).dtype
    except RuntimeError:
        return      # torch's unsigned promotion (tested above)
    key = tuple(_ops._key(_ops._arrays.as_operand(v, i)) for i, v in enumerate(args))
    assert sw.operands.arrays.result_dtypes("torch", None, key)[0].name == str(want).removeprefix("torch.")


def numpy_operand(kind, name):
    if kind == "dims":
        return np.ones(3, dtype=name)
    if kind == "0-d":
        return np.ones((), dtype=name)
    return {"bool": True, "int": 3, "float": 2.5, "complex": -1j}[kind]


NP_NAMES = tuple(n for n in NAMES if n != "bfloat16")


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["add", "multiply", "maximum", "fmod", "floor_divide", "remainder", "pow"]),
       st.tuples(st.sampled_from(["dims", "0-d"]), st.sampled_from(NP_NAMES)),
       st.one_of(st.tuples(st.sampled_from(["dims", "0-d"]), st.sampled_from(NP_NAMES)),
                 st.tuples(st.sampled_from(["bool", "int", "float"]), st.just(""))),
       st.booleans())
def test_numpy_promotion_is_the_ufuncs(op, a, b, swap):
    """NumPy 2 (NEP 50): a Python number never raises an array's dtype; its kind can."""
    x, y = numpy_operand(*a), numpy_operand(*b)
    args = (y, x) if swap else (x, y)
    uf = getattr(np, {"pow": "power"}.get(op, op))
    try:
        with np.errstate(all="ignore"):
            want = np.asarray(uf(*args)).dtype.name
    except (TypeError, OverflowError):
        return
    fn = OPS[op] if op in OPS else _builtins.OPS["remainder"]
    if want not in fn.dtypes:
        with pytest.raises(TypeError):
            out_dtype(fn, args)
        return
    assert out_dtype(fn, args) == want


CLIP_NAMES = NAMES + ("complex64", "complex128")


CLIP_BOUNDS = [("dims", n) for n in CLIP_NAMES] + [("0-d", "bfloat16"), ("0-d", "int64")] + [
    (k, "") for k in ("bool", "int", "float", "complex")]


@pytest.mark.parametrize("x", CLIP_NAMES)
def test_numpy_clip_promotion_is_np_clips(x):
    """np.clip's dtype, every pair of bounds: its ufunc's loop, the arrays and the weak
    numbers together, whatever their order (np.clip(int8, -1j, bfloat16) is complex64, not
    result_type's complex128); bfloat16 by ml_dtypes' promotion (oracle.numpy_op)."""
    for lo, hi in itertools.product(CLIP_BOUNDS, CLIP_BOUNDS):
        args = tuple(numpy_operand(*k) for k in (("dims", x), lo, hi))
        try:
            want = numpy_op(np.clip, *args).dtype.name
        except (TypeError, OverflowError):
            continue
        if want in OPS["clip"].dtypes:
            assert out_dtype(OPS["clip"], args) == want, (x, lo, hi)


def test_numpy_python_int_out_of_range_raises_like_numpy():
    a = np.ones(3, np.int8)
    with pytest.raises(OverflowError):
        np.add(a, 300)
    with pytest.raises(OverflowError):
        sw.add(a, 300)
    # NumPy's words at any size: past 2^63 too, where a C long cannot hold the int
    for dtype, value in ((np.int8, 2**63), (np.int64, 2**63), (np.int64, -2**63 - 1),
                         (np.uint64, 2**64), (np.int16, -2**70)):
        with pytest.raises(OverflowError, match=f"Python integer {value} out of bounds for {np.dtype(dtype).name}"):
            sw.add(np.ones(3, dtype), value)
        with pytest.raises(OverflowError, match=f"Python integer {value} out of bounds"):
            sw.where(np.ones(3, bool), np.ones(3, dtype), value)


@pytest.mark.gpu
def test_cpu_zero_dim_tensor_with_cuda_tensors_is_a_scalar():
    """torch takes a CPU 0-d tensor in an op on CUDA tensors as a scalar, promoted as a 0-d
    tensor: float32 % cpu 0-d float64 stays float32, int32 % cpu 0-d float64 is float64."""
    x = torch.randn(1000, device="cuda") * 10
    for s in (torch.tensor(2.5, dtype=torch.float64), torch.tensor(3), torch.tensor(1.5, dtype=torch.float16)):
        got, want = sw.remainder(x, s), torch.remainder(x, s)
        assert got.dtype == want.dtype and got.device == want.device
        assert torch.equal(got, want)
    a = torch.arange(-50, 50, dtype=torch.int32, device="cuda")
    s = torch.tensor(2.5, dtype=torch.float64)
    assert sw.remainder(a, s).dtype == torch.remainder(a, s).dtype == torch.float64
    assert torch.equal(sw.remainder(a, s), torch.remainder(a, s))
    y = x.clone()
    sw.remainder_(y, torch.tensor(2.5, dtype=torch.float64))
    assert torch.equal(y, torch.remainder(x, torch.tensor(2.5, dtype=torch.float64)))
    with pytest.raises(ValueError, match="device"):
        sw.remainder(x, torch.ones(3))      # a CPU tensor with dimensions is no scalar
