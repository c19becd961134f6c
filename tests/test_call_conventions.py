"""How each library's own op is called, beyond dtypes: what a NumPy ufunc returns for 0-d
inputs, the array_likes it takes, an out= that overlaps an input or broadcasts past the
inputs, torch's out= of another shape, and clip's missing bound. Each case runs the library's
own op on the same arguments and compares types, values, dtypes and strides."""
import array
import itertools
import warnings

import numpy as np
import pytest
import torch

import stridewise as sw
from oracle import same_bits


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert same_bits(np.asarray(got), np.asarray(want))


# --- ndarray subclasses: NumPy's ufunc protocol ----------------------------------------------

class Tagged(np.ndarray):
    """A user's subclass, as libraries write them (units, masks): ufuncs return its type."""


class Louder(np.ndarray):
    __array_priority__ = 5.0


SUBCLASS_CASES = {
    "matrix": lambda: (np.matrix([[1.5, -2.5], [3.5, 7.0]]), 2.0),
    "user subclass": lambda: (np.arange(-3.0, 5.0).view(Tagged), np.float64(2.0)),
    "recarray view": lambda: (np.arange(-3.0, 5.0).view(np.recarray), np.arange(1.0, 9.0)),
    "memmap": lambda: (np.arange(-3.0, 5.0).view(np.memmap), 3.0),      # a memmap's ufunc result is an ndarray
    "priority decides": lambda: (np.arange(1.0, 9.0).view(Tagged), np.arange(2.0, 10.0).view(Louder)),
}


@pytest.mark.parametrize("case", SUBCLASS_CASES)
@pytest.mark.parametrize("op", ["add", "remainder", "less", "negative"])
def test_numpy_subclass_inputs_give_the_ufuncs_result_type(case, op):
    args = SUBCLASS_CASES[case]()[: 1 if op == "negative" else 2]
    want = getattr(np, op)(*args)
    got = getattr(sw, op)(*args)
    _same(got, want)


# --- a ufunc's 0-d result is a NumPy scalar ------------------------------------------------

ZERO_D = [
    ("add", (np.float32(1.5), np.float32(2.25))),
    ("remainder", (np.float64(-7.5), np.float64(2.0))),
    ("remainder", (np.array(7, np.int8), np.array(-3, np.int8))),
    ("floor_divide", (np.array(7, np.int64), 2)),              # a 0-d array and a number
    ("divide", (np.int8(1), np.int8(0))),                      # 1 / 0 = inf, a float64
    ("less", (np.float16(1), np.float16(2))),                  # a bool scalar
    ("sqrt", (np.array(2.0, np.float32),)),
    ("multiply", (np.complex64(1 + 2j), np.complex64(3 - 1j))),
    ("where", (np.array(True), np.float32(1), np.float32(2))),
]


@pytest.mark.parametrize("op,args", ZERO_D, ids=lambda v: v if isinstance(v, str) else "")
def test_numpy_zero_d_inputs_give_a_numpy_scalar(op, args):
    """numpy/_core/tests/test_ufunc.py::TestUfunc::test_scalar_reduction's premise, on plain
    calls: a ufunc of 0-d operands returns a NumPy scalar of the result dtype, not a 0-d array."""
    with np.errstate(all="ignore"):
        want = getattr(np, "where" if op == "where" else op)(*args)
    _same(getattr(sw, op)(*args), want)
    _same(getattr(sw, op)(*args), want)      # a second, warm-keyed call returns the same


def test_numpy_zero_d_with_out_returns_the_out_array():
    out = np.zeros((), np.float64)
    r = sw.add(np.float64(1), np.float64(2), out=out)
    assert r is out and out[()] == 3.0


def test_bfloat16_zero_d_is_an_ml_dtypes_scalar():
    import ml_dtypes

    a = np.array(3.5, ml_dtypes.bfloat16)
    r = sw.add(a, a)
    assert type(r) is ml_dtypes.bfloat16 and float(r) == 7.0


def test_torch_and_one_d_numpy_results_stay_arrays():
    assert isinstance(sw.add(torch.tensor(1.0), torch.tensor(2.0)), torch.Tensor)
    r = sw.add(np.ones(1), 1)
    assert isinstance(r, np.ndarray) and r.shape == (1,)


# --- array_likes ----------------------------------------------------------------------------

PY_ONLY = [("add", (1, 2.5)), ("remainder", (7, -3)), ("floor_divide", (-7, 2)),
           ("less", (1, 2)), ("add", (True, True)), ("multiply", (2, 1j)),
           ("remainder", (-7.5, 2)), ("bitwise_xor", (12, 10))]


@pytest.mark.parametrize("op,args", PY_ONLY, ids=lambda v: v if isinstance(v, str) else "")
def test_python_numbers_alone_compute_as_numpy_does(op, args):
    """NEP 50: with no array among the operands, Python numbers take their default dtypes
    (int64, float64, complex128, bool)."""
    _same(getattr(sw, op)(*args), getattr(np, op)(*args))


LISTS = [
    ("add", ([1, 2, 3], 2)),
    ("add", ([1.5, 2], [[3], [4]])),
    ("remainder", ([7, -7, 7, -7], [3, 3, -3, -3])),
    ("multiply", ((1, 2), np.float32(3))),
    ("less", ([1, 2, 3], np.arange(3, dtype=np.int8))),
    ("where", ([True, False], [1, 2], [3.5, 4])),
    ("sqrt", ([4.0, 2.0],)),
    ("add", (memoryview(np.arange(4.0)), 1.0)),                    # a buffer
    ("remainder", (memoryview(np.arange(-6, 6, dtype=np.int16)), np.int16(5))),
    ("add", (range(5), 1)),                                         # a range
    ("remainder", (array.array("f", [7.5, -7.5, 2.0]), 2)),          # the buffers of array
    ("multiply", (bytearray(b"\x01\xff"), 3)),                       # and bytearray (uint8)
]


class _ArrayProtocol:
    """A container NumPy converts by its __array__ (as a pandas Series or a user's class)."""

    def __init__(self, data):
        self.data = data

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.data, dtype=dtype)


class _ArrayInterface:
    """An object NumPy reads through its __array_interface__ (a foreign buffer)."""

    def __init__(self, data):
        self.data = np.ascontiguousarray(data)
        self.__array_interface__ = self.data.__array_interface__


LISTS += [
    ("remainder", (_ArrayProtocol(np.arange(-6.0, 6.0).reshape(3, 4)), 4.0)),
    ("add", (_ArrayProtocol(np.float32([1, 2])), 1)),
    ("multiply", (_ArrayInterface(np.arange(1, 4, dtype=np.int32)), np.ones((2, 3), np.int8))),
]


@pytest.mark.parametrize("op,args", LISTS, ids=lambda v: v if isinstance(v, str) else "")
def test_lists_and_tuples_are_numpy_array_likes(op, args):
    _same(getattr(sw, op)(*args), getattr(np, op)(*args))


def test_out_of_nones_allocates_as_numpy_does():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    _same(sw.add(a, b, out=(None,)), np.add(a, b, out=(None,)))


def test_a_python_int_past_64_bits_alone_is_refused_with_its_bounds():
    """Python ints alone must fit a 64-bit integer (NumPy raises too); beside a Python float
    one is that float, as NumPy 2's weak promotion makes it."""
    with pytest.raises(OverflowError, match="out of bounds for int64 and uint64"):
        sw.add(2**70, 1)
    with pytest.raises(OverflowError):
        np.add(2**70, 1)
    for a, b in ((2**70, 1.0), (1.0, -2**100), (2**64, 2.5j)):
        want, got = np.add(a, b), sw.add(a, b)
        assert type(got) is type(want) and got == want


def test_a_list_beside_a_torch_tensor_is_refused_as_torch_does():
    with pytest.raises(TypeError):
        torch.remainder(torch.ones(2), [1.0, 2.0])
    with pytest.raises(TypeError, match="argument 1 has type list"):
        sw.remainder(torch.ones(2), [1.0, 2.0])


# --- NumPy scalars beside another library's arrays ---------------------------------------------

NP_SCALARS = [np.True_, np.int8(-2), np.uint8(200), np.int64(-3), np.float16(1.5),
              np.float32(2.5), np.float64(0.1), np.float64(1e300), np.complex64(1 + 2j)]


@pytest.mark.parametrize("dtype", [torch.bool, torch.int8, torch.int64, torch.float16,
                                   torch.bfloat16, torch.float64])
def test_numpy_scalars_beside_torch_tensors_are_numbers_as_torch_reads_them(dtype):
    """torch reads a NumPy scalar as a Python number: an integer one as an int, any other as a
    float (np.True_ as 1.0, a complex one without its imaginary part), so a float16 tensor
    times np.float64(0.1) stays float16 (it was refused as a mix of libraries)."""
    x = torch.tensor([0, 1, 3], dtype=torch.int64).to(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        for s, (op, top) in itertools.product(NP_SCALARS, [("add", torch.add), ("multiply", torch.mul),
                                                           ("less", torch.lt)]):
            for args in ((x, s), (s, x)) if op != "less" else ((x, s),):
                try:     # s * x is x.__rmul__(s): the number second (test_numbers.py)
                    want = top(x, s)
                except (RuntimeError, TypeError) as e:
                    with pytest.raises(type(e)):
                        getattr(sw, op)(*args)
                    continue
                got = getattr(sw, op)(*args)
                assert got.dtype == want.dtype, (s, op)
                torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def test_numpy_scalar_in_a_compiled_function_is_refused_with_the_fix():
    """Dynamo traces a NumPy scalar as an array, whose value it cannot hand over as a number."""
    f = torch.compile(lambda x: sw.multiply(x, np.float32(0.5)), fullgraph=True)
    with pytest.raises(Exception, match="NumPy scalar in a compiled function"):
        f(torch.ones(3))


# --- NumPy's out= that overlaps an input: computed as if from copies -------------------------

def _slices(n, k, steps):
    s = []
    for p in steps:
        s += [np.index_exp[:p * n:p], np.index_exp[k:k + p * n:p],
              np.index_exp[p * n - 1::-p], np.index_exp[k + p * n - 1:k - 1:-p]]
    return s


@pytest.mark.parametrize("dtype", ["int8", "int16", "int64", "float32", "float64", "complex128"])
def test_numpy_binary_out_overlapping_inputs(dtype):
    """numpy/_core/tests/test_mem_overlap.py::TestUFunc::test_binary_ufunc_1d_manual: np.add
    with x, y and out views of one array, forward, shifted, reversed and stepped, and 0-d and
    1-element operands; every combination gives what copies of the inputs give."""
    n, k = 200, 10
    idx = _slices(n, k, (1, 2))
    combos = list(itertools.product(idx, idx, idx))[::11]
    for xi, yi, zi in combos:
        v = np.arange(6 * n).astype(dtype)
        x, y, z = v[xi], v[yi], v[zi]
        for a, b in ((x, y), (x[:1], y), (x[-1:].reshape(()), y), (x, y[-1:])):
            want = np.add(a.copy(), b.copy())
            r = sw.add(a, b, out=z)
            assert r is z
            assert same_bits(z, np.broadcast_to(want, z.shape)), (xi, yi, zi)
            v[:] = np.arange(6 * n).astype(dtype)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float32", "float64", "complex64"])
def test_numpy_unary_out_overlapping_input(dtype):
    """numpy/_core/tests/test_mem_overlap.py::TestUFunc::test_unary_ufunc_1d_manual (without
    its where= masks): np.invert for integers, np.reciprocal for floats, in and out views of
    one array in every order and step."""
    n, k = 200, 10
    idx = [np.index_exp[:n], np.index_exp[k:k + n], np.index_exp[n - 1::-1],
           np.index_exp[k + n - 1:k - 1:-1], np.index_exp[:2 * n:2],
           np.index_exp[k:k + 2 * n:2], np.index_exp[2 * n - 1::-2],
           np.index_exp[k + 2 * n - 1:k - 1:-2]]
    integer = np.dtype(dtype).kind in "iu"
    ours, theirs = (sw.bitwise_not, np.invert) if integer else (sw.reciprocal, np.reciprocal)
    for xi, yi in itertools.product(idx, idx):
        v = np.arange(1, 1 + 2 * n + k, dtype=dtype)
        x, y = v[xi], v[yi]
        want = theirs(x.copy())
        ours(x, out=y)
        assert same_bits(y, want), (xi, yi)


def test_explain_names_the_temporary_of_an_overlapping_out():
    x = np.arange(10.0)
    assert "a temporary, then copied into the given out" in str(sw.explain(sw.add, x[:-1], x[1:], out=x[1:]))
    assert "temporary" not in str(sw.explain(sw.add, x[:-1], x[1:], out=np.empty(9)))


def test_numpy_inplace_add_of_the_transpose():
    """numpy/_core/tests/test_mem_overlap.py::TestUFunc::test_inplace_op_simple_manual:
    x += x.T with x larger than NumPy's buffer leaves x symmetric."""
    x = np.random.RandomState(1234).rand(200, 200)
    want = x + x.T
    sw.add(x, x.T, out=x)
    assert same_bits(x, want)
    assert not np.any(x - x.T)


def test_torch_partial_overlap_is_refused_and_nothing_is_written():
    """torch refuses an out that partly overlaps an input (assert_no_partial_overlap)."""
    t = torch.arange(100.0)
    with pytest.raises(RuntimeError):
        torch.add(t[:-1], 1, out=t[1:])
    before = t.clone()
    with pytest.raises(RuntimeError, match="partially overlaps.*refer to a single memory location"):
        sw.add(t[:-1], 1, out=t[1:])
    assert torch.equal(t, before)
    x = torch.rand(4, 4)
    with pytest.raises(RuntimeError):
        torch.add(x, x.t(), out=x)
    with pytest.raises(RuntimeError, match="partially overlaps x2"):
        sw.add(x, x.t(), out=x)
    o = torch.zeros(1).expand(4)
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.add(torch.ones(4), 1, out=o)
    with pytest.raises(RuntimeError, match="overlaps itself"):
        sw.add(torch.ones(4), 1, out=o)


# --- NumPy's out= joins the broadcast -----------------------------------------------------------

OUT_BROADCAST = [
    ("add", [(3,), ()], (4, 3)),
    ("remainder", [(1, 3), (2, 1)], (5, 2, 3)),
    ("less", [(3,), (3,)], (2, 3)),
    ("sqrt", [(1,)], (2, 2)),
]


@pytest.mark.parametrize("op,shapes,out_shape", OUT_BROADCAST)
def test_numpy_out_may_be_larger_than_the_inputs_broadcast(op, shapes, out_shape):
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s) + 3 for s in shapes]
    dt = getattr(np, op)(*args).dtype
    want, got = np.zeros(out_shape, dt), np.zeros(out_shape, dt)
    getattr(np, op)(*args, out=want)
    assert getattr(sw, op)(*args, out=got) is got
    assert same_bits(got, want)


def test_numpy_out_smaller_than_the_inputs_raises_and_is_untouched():
    out = np.full(3, 7.0)
    with pytest.raises(ValueError):
        np.add(np.ones((2, 3)), 1, out=out)
    with pytest.raises(ValueError, match="out has shape"):
        sw.add(np.ones((2, 3)), 1, out=out)
    assert (out == 7).all()


# --- torch's out= of another shape is resized ------------------------------------------------

def _torch_pair(make_out, *args, op="add"):
    want_out, got_out = make_out(), make_out()
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        getattr(torch, op)(*args, out=want_out)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        r = getattr(sw, op)(*args, out=got_out)
    assert r is got_out
    assert got_out.shape == want_out.shape and got_out.stride() == want_out.stride()
    assert got_out.dtype == want_out.dtype and torch.equal(got_out, want_out)
    return len(theirs), len(ours)


def test_torch_empty_out_is_resized_silently():
    a = torch.randn(3, 4)
    assert _torch_pair(lambda: torch.empty(0), a, 1.5) == (0, 0)


def test_torch_out_of_another_shape_is_resized_with_a_warning():
    a = torch.randn(3, 4)
    theirs, ours = _torch_pair(lambda: torch.empty(5), a, torch.randn(4), op="remainder")
    assert theirs == 1 and ours == 1


def test_torch_resized_out_takes_the_inputs_layout():
    """A channels_last input: torch restrides a resized out as it would allocate one."""
    a = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    _torch_pair(lambda: torch.empty(0), a, 2.0, op="multiply")


def test_torch_resized_out_of_another_dtype_is_cast_into():
    a = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    _torch_pair(lambda: torch.empty(0, dtype=torch.float64), a, a)


# --- clip with one bound ------------------------------------------------------------------------

@pytest.mark.parametrize("lo,hi", [(None, 0.5), (-0.25, None)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int32"])
def test_clip_with_a_bound_of_none(lo, hi, dtype):
    x = np.array([-2, -0.5, 0, 0.25, 1, 3, np.nan, -np.inf], np.float64)
    if dtype == "int32":
        x = np.array([-5, -1, 0, 1, 7], np.int32)
    x = x.astype(dtype)
    _same(sw.clip(x, lo, hi), np.clip(x, lo, hi))
    t = torch.from_numpy(x)
    want = torch.clamp(t, lo, hi)
    got = sw.clip(t, lo, hi)
    assert got.dtype == want.dtype and torch.equal(got.nan_to_num(), want.nan_to_num())
    assert torch.equal(got.isnan(), want.isnan())


def test_clip_with_a_bound_of_none_traces_in_one_graph():
    """Under torch.compile(fullgraph=True) a None bound becomes maximum or minimum's custom op."""
    t = torch.randn(16)
    for lo, hi, want in ((None, 0.5, torch.clamp(t, max=0.5)), (-0.5, None, torch.clamp(t, min=-0.5))):
        f = torch.compile(lambda x: sw.clip(x, lo, hi), backend="eager", fullgraph=True)
        assert torch.equal(f(t), want)


def test_clip_with_no_bound_is_numpys_copy_and_torchs_error():
    """np.clip(x, None, None) is np.positive(x), a copy (NumPy 2; bool arrays refused);
    torch.clamp with neither bound raises."""
    x = np.arange(6.0).reshape(2, 3).T
    want, got = np.clip(x, None, None), sw.clip(x, None, None)
    assert got.strides == want.strides and not np.shares_memory(got, x)
    np.testing.assert_array_equal(got, want, strict=True)
    with pytest.raises(TypeError):
        np.clip(np.ones(3, bool), None, None)
    with pytest.raises(TypeError, match="lo or hi"):
        sw.clip(np.ones(3, bool), None, None)
    with pytest.raises(RuntimeError):
        torch.clamp(torch.ones(3), None, None)
    with pytest.raises(ValueError, match="lo or hi"):
        sw.clip(torch.ones(3), None, None)


def test_negative_integer_power_is_both_libraries_error():
    with pytest.raises(RuntimeError):
        torch.pow(torch.tensor([2]), -1)
    with pytest.raises(RuntimeError, match="negative integer powers"):
        sw.pow(torch.tensor([2]), -1)
    with pytest.raises(ValueError, match="negative integer powers"):
        sw.pow(np.array([2]), -1)


# --- the same rules on the GPU ------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "complex64"])
def test_cupy_out_overlapping_an_input_and_joining_the_broadcast(dtype):
    """CuPy copies an input that shares memory with out (_kernel.pyx _copy_in_args_if_needed)
    and broadcasts out with the inputs: the same calls through CuPy's own add."""
    import cupy

    for xi, yi, zi in [(np.index_exp[:-1], np.index_exp[1:], np.index_exp[1:]),
                       (np.index_exp[::-1], np.index_exp[:], np.index_exp[:]),
                       (np.index_exp[10:110], np.index_exp[::2][:100], np.index_exp[5:105])]:
        ours = cupy.arange(1, 201).astype(dtype)
        theirs = ours.copy()
        cupy.add(theirs[xi][:100], theirs[yi][:100], out=theirs[zi][:100])
        sw.add(ours[xi][:100], ours[yi][:100], out=ours[zi][:100])
        assert same_bits(cupy.asnumpy(ours), cupy.asnumpy(theirs)), (xi, yi, zi)
    row = cupy.arange(3).astype(dtype)
    want, got = cupy.zeros((4, 3), dtype), cupy.zeros((4, 3), dtype)
    cupy.add(row, row, out=want)
    assert sw.add(row, row, out=got) is got
    assert same_bits(cupy.asnumpy(got), cupy.asnumpy(want))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", "float16", "float32", "complex64"])
def test_numpy_scalars_beside_cupy_arrays_promote_as_cupys_own_ops(dtype):
    """A NumPy scalar beside CuPy arrays is a number of its own dtype (NumPy 2's rule, which
    CuPy's ufuncs follow): the dtype and values of CuPy's own op (it was refused as a mix of
    libraries)."""
    import cupy

    x = cupy.asarray(np.array([0, 1, 3]).astype(dtype))
    for s in NP_SCALARS:
        for op in ("add", "multiply", "less", "maximum"):
            for args in ((x, s), (s, x)):
                try:
                    want = getattr(cupy, op)(*args)
                except Exception as e:     # noqa: BLE001 -- CuPy's refusal, kind compared
                    with pytest.raises((TypeError, ValueError, OverflowError)):
                        getattr(sw, op)(*args)
                    continue
                got = getattr(sw, op)(*args)
                assert isinstance(got, cupy.ndarray) and got.dtype == want.dtype, (s, op)
                assert same_bits(cupy.asnumpy(got), cupy.asnumpy(want)), (s, op)


@pytest.mark.gpu
def test_torch_cuda_out_is_resized_as_torch_resizes_it():
    a = torch.randn(2, 3, 4, 5, device="cuda").to(memory_format=torch.channels_last)
    _torch_pair(lambda: torch.empty(0, device="cuda"), a, 0.5, op="multiply")


def test_explain_leaves_a_torch_out_of_another_shape_as_it_was():
    out = torch.empty(5)
    e = sw.explain(sw.add, torch.randn(3, 4), 1.5, out=out)
    assert out.shape == (5,) and e.shape


# -- NumPy arrays the kernels cannot read in place: buffered, as NumPy's iterator buffers them --

def _misaligned(values, dtype):
    """A writeable view of `values` one byte off its dtype's alignment."""
    raw = np.zeros(len(values) * np.dtype(dtype).itemsize + 1, np.uint8)
    view = raw[1:].view(dtype)
    view[...] = values
    return view


@pytest.mark.parametrize("dtype", ["float64", "int16", "complex128"])
def test_non_native_and_misaligned_numpy_arrays_are_buffered(dtype):
    """Big-endian and misaligned NumPy arrays (binary files, packed records) as inputs, out=,
    where= and in place: NumPy's values, dtypes and strides, bit for bit; a read-only one of
    them refused before anything is written."""
    rng = np.random.default_rng(33)
    a = (rng.standard_normal((3, 8)) * 10 + 20).astype(dtype)
    b = (rng.standard_normal(8) * 3 + 7).astype(dtype)
    swapped = np.dtype(dtype).newbyteorder(">" if np.little_endian else "<")
    inputs = [(a.astype(swapped), b), (np.asfortranarray(a).astype(swapped), b.astype(swapped)),
              (a, _misaligned(b, dtype)), (a[:, ::2].astype(swapped), b[::2])]
    ops = [(sw.add, np.add), (sw.multiply, np.multiply)]
    if np.dtype(dtype).kind != "c":
        ops.append((sw.remainder, np.remainder))
    for (x, y), (fn, np_fn) in itertools.product(inputs, ops):
        got, want = fn(x, y), np_fn(x, y)
        assert got.dtype == want.dtype and got.strides == want.strides
        assert same_bits(got, want)
        mine, theirs = np.zeros(want.shape, swapped), np.zeros(want.shape, swapped)
        assert fn(x, y, out=mine) is mine
        np_fn(x, y, out=theirs)
        assert same_bits(mine, theirs)
        if fn is not sw.add:
            continue
        mask = np.arange(want.shape[-1]) % 3 != 0
        mine, theirs = np.full(want.shape, 5, swapped), np.full(want.shape, 5, swapped)
        fn(x, y, out=mine, where=mask)
        np_fn(x, y, out=theirs, where=mask)
        assert same_bits(mine, theirs)
    x = a.astype(swapped)
    want = np.remainder(a, b) if np.dtype(dtype).kind != "c" else None
    if want is not None:
        sw.remainder_(x, b)
        assert x.dtype == swapped and same_bits(x.astype(dtype), want)
    locked = np.zeros(a.shape, swapped)
    locked.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        sw.add(a, b, out=locked)
    assert not locked.any()
