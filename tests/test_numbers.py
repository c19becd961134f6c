"""Python numbers (and torch's CPU 0-d tensors) in the built-in ops, each library's way.

- torch converts a Python int into an integer tensor's dtype as a cast (it wraps) in its
  arithmetic and comparisons; an int no 64-bit integer holds raises OverflowError.
- torch's float16 and bfloat16 kernels read a number in float32 (x * 0.1 multiplies by 0.1f)
  in mul, div and floor_divide on the CPU, and add and sub too on CUDA; the others round it to
  16 bits. On CUDA, division by a number multiplies by its float reciprocal.
- NumPy 2 (NEP 50) compares an integer array with a Python int beyond the dtype's range
  exactly, and takes the truth of such an int in logical ops; other ops raise OverflowError.
Oracle: the library's own op on the same arguments, bit for bit, dtype included.
"""
import numpy as np
import pytest
import torch

import stridewise as sw
from oracle import same_bits

TORCH = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
         "floor_divide": "floor_divide", "remainder": "remainder", "equal": "eq", "less": "lt",
         "bitwise_and": "bitwise_and", "left_shift": "bitwise_left_shift"}


def _same(got, want):
    assert got.dtype == want.dtype and got.device == want.device
    assert torch.equal(got.nan_to_num(), want.nan_to_num()) and torch.equal(got.isnan(), want.isnan())


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int64])
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "remainder", "floor_divide", "equal",
                                "less", "bitwise_and", "left_shift"])
def test_torch_python_ints_wrap_into_the_tensors_dtype(op, dtype):
    x = torch.tensor([1, 5, 100, 7, 3], dtype=dtype)
    for c in (-2, 300, -300, 2**40 + 7, 2**63 - 1, -2**63 + 3):
        want = getattr(torch, TORCH[op])(x, c)
        _same(getattr(sw, op)(x, c), want)
    for c in (2**64, -2**63 - 1):
        with pytest.raises(OverflowError):
            getattr(torch, TORCH[op])(x, c)
        with pytest.raises(OverflowError):
            getattr(sw, op)(x, c)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "floor_divide", "remainder"])
def test_torch_cpu_numbers_in_16_bit_arithmetic(op, dtype):
    x = (torch.from_numpy(np.random.default_rng(3).standard_normal(4099)) * 100).to(dtype)
    for c in (0.1, 1 / 3, 7.3, 3, 70000, torch.tensor(0.1), torch.tensor(0.1, dtype=torch.float64),
              torch.tensor(2.7, dtype=dtype)):
        _same(getattr(sw, op)(x, c), getattr(torch, TORCH[op])(x, c))
    if op == "multiply":                        # c * x is x.__rmul__(c): the number second
        _same(sw.multiply(0.1, x), 0.1 * x)
        _same(sw.multiply(torch.tensor(0.1), x), torch.mul(torch.tensor(0.1), x))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "floor_divide"])
def test_torch_cuda_numbers(op, dtype):
    x = (torch.from_numpy(np.random.default_rng(4).standard_normal(1 << 16)) * 100).to(dtype).cuda()
    for c in (0.1, 1 / 3, 7.3, 255, torch.tensor(0.1), torch.tensor(0.3, dtype=torch.float64)):
        want = getattr(torch, TORCH[op])(x, c)
        got = getattr(sw, op)(x, c)
        print(op, dtype, c, "differ:", int((got != want).sum()))
        _same(got, want)
    if op in ("add", "multiply"):               # c + x, c * x: the number second
        _same(getattr(sw, op)(0.1, x), getattr(torch, TORCH[op])(x, 0.1))


def test_numpy_ints_beyond_the_dtype_in_comparisons_and_logical_ops():
    arrays = [np.array([0, 5, 250], np.uint8), np.array([-2**63, 2**63 - 1], np.int64),
              np.array([[1, 0], [3, -4]], np.int16).T, np.int8(-7), np.uint8(200),   # scalars too
              np.array([3, 0], np.uint64), np.array([0.5, 0.0])]   # logical ops: an int64's truth
    ops = ["less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
           "logical_or", "logical_xor"]
    for x in arrays:
        for c in (-2, -129, 256, 300, 2**63, 2**64, -2**70, 5):
            for op in ops:
                for args in ((x, c), (c, x)):
                    try:
                        want = getattr(np, op)(*args)
                    except OverflowError:
                        with pytest.raises(OverflowError):
                            getattr(sw, op)(*args)
                        continue
                    got = getattr(sw, op)(*args)
                    assert type(got) is type(want) and got.dtype == want.dtype and got.strides == want.strides
                    assert (got == want).all(), (x.dtype, c, op)
    with pytest.raises(OverflowError):          # arithmetic keeps NumPy's OverflowError
        sw.add(arrays[0], -2)


@pytest.mark.gpu
def test_cupy_ints_beyond_the_dtype_in_comparisons_and_logical_ops():
    """CuPy arrays take NumPy 2's rule for a Python int beyond their dtype: comparisons exact,
    logical ops its truth as an int64 (CuPy 14 itself raises on some, a negative int beside an
    unsigned array, and reads an int past int64 as a uint64 beside uint64 arrays); NumPy on
    host copies is the oracle. A float in logical ops is cast to the arrays' dtype, as CuPy's
    own ops do (1e-310 beside float32 is False): CuPy's op is the oracle there."""
    cupy = pytest.importorskip("cupy")
    arrays = [np.array([0, 5, 250], np.uint8), np.array([-2**63, 2**63 - 1], np.int64),
              np.array([[1, 0], [3, -4]], np.int16).T, np.array([3, 0], np.uint64),
              np.array([0.5, 0.0], np.float32), np.zeros((2, 0), np.int8)]
    ops = ["less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
           "logical_or", "logical_xor"]
    for host in arrays:
        x = cupy.asarray(host)
        for c in (-2, -129, 256, 300, 2**63, 2**64, -2**70, 5, 1e-310, 1e300):
            for op in ops:
                for args, host_args in (((x, c), (host, c)), ((c, x), (c, host))):
                    try:
                        if type(c) is float and op.startswith("logical"):
                            want = getattr(cupy, op)(*args)
                        else:
                            want = cupy.asarray(getattr(np, op)(*host_args))
                    except OverflowError:
                        with pytest.raises(OverflowError):
                            getattr(sw, op)(*args)
                        continue
                    got = getattr(sw, op)(*args)
                    assert isinstance(got, cupy.ndarray) and got.dtype == want.dtype
                    assert (cupy.asnumpy(got) == cupy.asnumpy(want)).all(), (x.dtype, c, op)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float32, np.complex64, np.int8, np.bool_])
def test_numpy_logical_ops_take_a_float_numbers_own_truth(dtype):
    """NumPy's logical ops take their bool loop: a Python float's truth is its own, so 1e-310
    is true beside a float32 array, though the number cast to float32 is 0 (found by
    tools/fuzz_calls.py); NaN is true, -0.0 false; 1e300 beside float16 is true and warns of
    no overflow."""
    import ml_dtypes
    dtype = np.dtype(getattr(ml_dtypes, dtype) if isinstance(dtype, str) else dtype)
    x = np.array([[0, 1], [2, 0]]).astype(dtype).T
    for c in (1e-310, 1e-46, 1e-8, -0.0, 0.0, float("nan"), -float("inf"), 1e300, 1e-310j, 0j):
        for op in ("logical_and", "logical_or", "logical_xor"):
            for args in ((x, c), (c, x)):
                with np.errstate(all="raise"):
                    got = getattr(sw, op)(*args)
                want = getattr(np, op)(*args)
                assert got.dtype == want.dtype and got.strides == want.strides
                assert (got == want).all(), (dtype, c, op)


def _floor_divide_cases(x, y):
    """torch's 16-bit floor_divide takes three forms by its divisor: two tensors (rounded to
    16 bits between steps, which steps by device), a number (in float32; on CUDA by its
    reciprocal), and on the CPU a tensor of one value broadcast (TensorIterator's is_scalar:
    in float32 too)."""
    return {"tensors": (x, y), "strided": (x[::3], y[::3]), "row": (x.reshape(-1, 64), y[:64]),
            "one element": (x, y[7:8]), "0-d": (x, y[7]), "expanded one": (x.reshape(-1, 64), y[7:8].expand(64)),
            "number": (x, 3.7), "tiny number": (x, 1e-3)}


def _floor_divide_operands(dtype, device):
    rng = np.random.default_rng(5)
    n = 1 << 14
    x = torch.from_numpy(rng.standard_normal(n) * rng.choice([1e-3, 1, 1e3, 1e5], n)).to(dtype)
    y = torch.from_numpy(rng.standard_normal(n) * rng.choice([1e-3, 1, 1e2], n)).to(dtype)
    y[:40] = 0
    x[40:50], y[50:60], x[60:70] = float("inf"), float("nan"), 0
    return x.to(device), y.to(device)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_torch_16_bit_floor_divide_in_each_of_torchs_forms(dtype, device):
    x, y = _floor_divide_operands(dtype, device)
    for name, (a, b) in _floor_divide_cases(x, y).items():
        got, want = sw.floor_divide(a, b), torch.floor_divide(a, b)
        _same(got, want)
        assert torch.equal(got.signbit() & ~got.isnan(), want.signbit() & ~want.isnan()), name


def _torch_cuda_floor_divide(a, b, dtype, reciprocal):
    """torch's CUDA floor_divide of 16-bit values in NumPy float32 steps: c10's definition
    with the quotient in float (or by b's float reciprocal, for a number) and only its floor
    stored in the 16-bit type before the +1 fix (the form that matched torch 2.11 on an H200
    for every one of 2^20 random pairs, in float16 and bfloat16)."""
    rnd = lambda v: v.astype(dtype).astype(np.float32)
    a, b = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        mod = np.fmod(a, b)
        q = (a - mod) * (np.float32(1) / b) if reciprocal else (a - mod) / b
        div = np.where((mod != 0) & ((b < 0) != (mod < 0)), q - np.float32(1), q).astype(np.float32)
        fl = rnd(np.floor(div))
        fl = np.where(div - fl > 0.5, rnd(fl + np.float32(1)), fl)
        basic = a * (np.float32(1) / b) if reciprocal else a / b
        out = np.where(b == 0, a / b, np.where(div == 0, np.copysign(np.float32(0), basic), fl))
    return out.astype(dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_torchs_cuda_floor_divide_forms_compiled_on_the_host(dtype):
    """The device's forms (bf16_ops.h TorchFloorDivide16<T, false>, TorchFloorDivideByNumber16)
    built for the host through a user kernel, against their definition above."""
    import ml_dtypes

    np_dtype = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    ctype = "sw::half" if dtype == "float16" else "sw::bfloat16"
    rng = np.random.default_rng(9)
    n = 1 << 15
    a = (rng.standard_normal(n) * rng.choice([1e-3, 1, 1e3, 1e5], n)).astype(np.float32).astype(np_dtype)
    b = (rng.standard_normal(n) * rng.choice([1e-3, 1, 1e2], n)).astype(np.float32).astype(np_dtype)
    b[:40], a[40:50], b[50:60], a[60:70] = 0, np.inf, np.nan, 0
    tensors = sw.ElementwiseKernel(
        "T x, T y", "T z", f"z = sw::TorchFloorDivide16<{ctype}, false>()((float)x, (float)y)",
        name=f"torch_cuda_floor_divide_{dtype}", preamble="#include <stridewise/bf16_ops.h>")
    by_number = sw.ElementwiseKernel(
        "T x, float32 c", "T z", f"z = sw::TorchFloorDivideByNumber16<{ctype}>()((float)x, c)",
        name=f"torch_cuda_floor_divide_number_{dtype}", preamble="#include <stridewise/bf16_ops.h>")
    assert same_bits(tensors(a, b), _torch_cuda_floor_divide(a, b, np_dtype, False))
    for c in (3.7, 1e-3, 0.1, 255.0, 0.0):
        want = _torch_cuda_floor_divide(a, np.full(n, c, np.float32), np_dtype, True)
        assert same_bits(by_number(a, c), want), c
