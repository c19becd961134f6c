"""CuPy's and PyCUDA's ElementwiseKernel tests and examples, re-expressed against
sw.ElementwiseKernel: their inputs and expected results, our own test code. Each test names
the upstream file::test it comes from.

Every test runs with NumPy arrays on the CPU, and (marked gpu, run on the device) with CuPy
arrays and with CUDA torch tensors. Every dtype CuPy's loops cover is one of stridewise's
(complex64 and complex128 included); `dtypes` would mark one that is not as xfail. Left out, as agreed: texture objects,
structured and vector dtypes (float3), CuPy's private kernel caches, PyCUDA's complex header,
multi-GPU copies.
"""
import numpy as np
import pytest

import stridewise as sw
from stridewise.operands.dtypes import ALL_DTYPES

CUPY_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128")   # for_all_dtypes


def dtypes(names):
    """Parameters over `names`; those stridewise lacks are xfail until the dtype lands."""
    return [n if n in ALL_DTYPES else pytest.param(
        n, marks=pytest.mark.xfail(reason=f"stridewise has no {n} yet", strict=False))
        for n in names]


class Lib:
    """One array library on its device: NumPy (CPU), CuPy or torch (CUDA)."""

    def __init__(self, name):
        self.name = name

    def asarray(self, a):
        a = np.asarray(a)
        if self.name == "cupy":
            import cupy
            return cupy.asarray(a)
        if self.name == "torch":
            import torch
            return torch.from_numpy(np.ascontiguousarray(a)).cuda()
        return a

    def get(self, x):
        if self.name == "cupy":
            return x.get()
        if self.name == "torch":
            return x.cpu().numpy()
        return np.asarray(x)

    def empty(self, shape, dtype):
        return self.asarray(np.zeros(shape, dtype))


@pytest.fixture(params=["numpy", pytest.param("cupy", marks=pytest.mark.gpu),
                        pytest.param("torch", marks=pytest.mark.gpu)])
def xp(request):
    if request.param != "numpy":
        pytest.importorskip(request.param)
    return Lib(request.param)


def add_kernel():
    return sw.ElementwiseKernel("T x, T y", "T z", "z = x + y")


# -- CuPy tests/cupy_tests/core_tests/test_userkernel.py -------------------------------------

def test_manual_indexing(xp):
    """test_userkernel.py::TestUserkernel::test_manual_indexing: raw arrays indexed by i,
    with a raw output allocated by size=, equal the elementwise kernel."""
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, 100).astype(np.float32) for _ in range(2))
    k1 = sw.ElementwiseKernel("T x, T y", "T z", "\n    z = x + y;\n", "uesr_kernel_1")
    k2 = sw.ElementwiseKernel("raw T x, raw T y", "raw T z", "\n    z[i] = x[i] + y[i];\n",
                              "uesr_kernel_2")
    out1 = k1(xp.asarray(a), xp.asarray(b))
    out2 = k2(xp.asarray(a), xp.asarray(b), size=100)
    np.testing.assert_array_equal(xp.get(out2), xp.get(out1))
    np.testing.assert_array_equal(xp.get(out2), a + b)


@pytest.mark.parametrize("typ", [int, float, bool])
def test_python_scalar(xp, typ):
    """test_userkernel.py::TestUserkernel::test_python_scalar: a Python scalar takes the
    array's type (bool included)."""
    dtype = np.dtype(typ)
    x = (np.arange(20).reshape(4, 5) % 3).astype(dtype)
    z = add_kernel()(xp.asarray(x), typ(2))
    got = xp.get(z)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, x + dtype.type(2))


@pytest.mark.parametrize("dtype", dtypes(CUPY_DTYPES))
def test_numpy_scalar(xp, dtype):
    """test_userkernel.py::TestUserkernel::test_numpy_scalar: a NumPy scalar of the array's
    dtype is a scalar, whatever library the array comes from."""
    x = (np.arange(20).reshape(4, 5) % 3).astype(dtype)
    z = add_kernel()(xp.asarray(x), np.dtype(dtype).type(2))
    got = xp.get(z)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, x + np.dtype(dtype).type(2))


@pytest.mark.parametrize("value", [-1, 2**32, 2**63 - 1, -(2**63)])
@pytest.mark.parametrize("dtype", dtypes(CUPY_DTYPES))
def test_scalar(xp, value, dtype):
    """test_userkernel.py::TestUserkernelScalar::test_scalar: NumPy scalars at the edges of
    each dtype (cast there by NumPy), added to a (2, 3, 4) array, as NumPy adds them."""
    x = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    with np.errstate(all="ignore"):
        y = np.array(value).astype(dtype)[()]
        want = x + y
    got = xp.get(add_kernel()(xp.asarray(x), y))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def _size_kernel(input_raw, output_raw):
    ins = ", ".join(f"{'raw ' if r else ''}float32 x{i}" for i, r in enumerate(input_raw))
    outs = ", ".join(f"{'raw ' if r else ''}float32 y{i}" for i, r in enumerate(output_raw))
    return sw.ElementwiseKernel(ins, outs, "", "kernel")


SIZE_NOT_ALLOWED = "size= can be given only when every array argument is raw"
SIZE_REQUIRED = "the loop size is undecided"


def _arrs(xp):
    return xp.asarray(np.array([1, 2], np.float32)), xp.asarray(np.array([3, 4], np.float32))


def test_size_all_raws(xp):
    """test_userkernel.py::TestElementwiseKernelSize::test_all_raws"""
    a1, a2 = _arrs(xp)
    for k in (_size_kernel((True, True), (False,)), _size_kernel((True, True), (True,))):
        k(a1, a2, size=2)
        with pytest.raises(ValueError, match=SIZE_REQUIRED):
            k(a1, a2)


def test_size_all_nonraws(xp):
    """test_userkernel.py::TestElementwiseKernelSize::test_all_nonraws"""
    a1, a2 = _arrs(xp)
    for k in (_size_kernel((False, False), (False,)), _size_kernel((False, False), (True,))):
        with pytest.raises(ValueError, match=SIZE_NOT_ALLOWED):
            k(a1, a2, size=2)


def test_size_some_nonraws(xp):
    """test_userkernel.py::TestElementwiseKernelSize::test_some_nonraws"""
    a1, a2 = _arrs(xp)
    for ins in ((True, False), (False, True)):
        for outs in ((False,), (True,)):
            with pytest.raises(ValueError, match=SIZE_NOT_ALLOWED):
                _size_kernel(ins, outs)(a1, a2, size=2)


def test_size_scalars_and_nonraws(xp):
    """test_userkernel.py::TestElementwiseKernelSize::test_scalars_and_nonraws"""
    a1, _ = _arrs(xp)
    for outs in ((False,), (True,)):
        k = _size_kernel((False, False), outs)
        for args in ((a1, 7), (7, a1)):
            with pytest.raises(ValueError, match=SIZE_NOT_ALLOWED):
                k(*args, size=2)


def test_size_scalars_and_raws_and_nonraws(xp):
    """test_userkernel.py::TestElementwiseKernelSize::test_scalars_and_raws_and_nonraws"""
    a1, a2 = _arrs(xp)
    for outs in ((False,), (True,)):
        with pytest.raises(ValueError, match=SIZE_NOT_ALLOWED):
            _size_kernel((False, False, True), outs)(a1, 7, a2, size=2)


def test_size_scalars_and_raws(xp):
    """test_userkernel.py::TestElementwiseKernelSize::test_scalars_and_raws"""
    a1, _ = _arrs(xp)
    for ins, args in (((True, False), (a1, 7)), ((False, True), (7, a1))):
        for outs in ((False,), (True,)):
            k = _size_kernel(ins, outs)
            k(*args, size=2)
            with pytest.raises(ValueError, match=SIZE_REQUIRED):
                k(*args)


def test_size_determined_by_output(xp):
    """test_userkernel.py::TestElementwiseKernelSize::test_size_determined_by_output"""
    a1, a2 = _arrs(xp)
    k = _size_kernel((True,), (False,))           # raw input, the output sizes the loop
    k(a1, a2)
    with pytest.raises(ValueError, match=SIZE_NOT_ALLOWED):
        k(a1, a2, size=2)
    k = _size_kernel((False,), (False,))          # scalar input
    k(a1, a2)
    with pytest.raises(ValueError, match=SIZE_NOT_ALLOWED):
        k(7, a2, size=2)
    k = _size_kernel((), (False,))                # no input
    k(a1)
    with pytest.raises(ValueError, match=SIZE_NOT_ALLOWED):
        k(a1, size=2)


def test_size_no_input_and_raw_output(xp):
    """test_userkernel.py::TestElementwiseKernelSize::test_no_input_and_raw_output"""
    a1, _ = _arrs(xp)
    k = _size_kernel((), (True,))
    k(a1, size=2)
    with pytest.raises(ValueError, match=SIZE_REQUIRED):
        k(a1)


def test_invalid_block_size(xp):
    """test_userkernel.py::TestUserkernelManualBlockSize::test_invalid_block_size"""
    x = xp.asarray(np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4))
    with pytest.raises(ValueError, match=r"block_size=0\): block_size must be a power of two"):
        add_kernel()(x, 1, block_size=0)


def test_block_size(xp):
    """test_userkernel.py::TestUserkernelManualBlockSize::test_block_size. block_size is the
    algorithm's field, whose domain is powers of two from 32 to 1024: CuPy's block_size=1 is
    refused with that range named, and 64 runs and is the resolved algorithm's."""
    a = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)
    k = add_kernel()
    np.testing.assert_array_equal(xp.get(k(xp.asarray(a), 1, block_size=64)), a + 1)
    assert sw.explain(k, xp.asarray(a), 1, block_size=64).algorithm.block_size == 64
    with pytest.raises(ValueError, match="from 32 to 1024"):
        k(xp.asarray(a), 1, block_size=1)


# -- CuPy tests/cupy_tests/core_tests/test_carray.py -----------------------------------------

def test_carray_size(xp):
    """test_carray.py::TestCArray::test_size"""
    x = xp.asarray(np.arange(3, dtype=np.int32))
    y = sw.ElementwiseKernel("raw int32 x", "int32 y", "y = x.size()", "test_carray_size")(x, size=1)
    assert int(xp.get(y)[0]) == 3


def test_carray_shape(xp):
    """test_carray.py::TestCArray::test_shape"""
    x = xp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    y = sw.ElementwiseKernel("raw int32 x", "int32 y", "y = x.shape()[i]", "test_carray_shape")(x, size=2)
    np.testing.assert_array_equal(xp.get(y), (2, 3))


def test_carray_strides(xp):
    """test_carray.py::TestCArray::test_strides (bytes, as CuPy's CArray)"""
    x = xp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    y = sw.ElementwiseKernel("raw int32 x", "int32 y", "y = x.strides()[i]",
                             "test_carray_strides")(x, size=2)
    np.testing.assert_array_equal(xp.get(y), (12, 4))


def test_carray_getitem_int(xp):
    """test_carray.py::TestCArray::test_getitem_int"""
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    y = sw.ElementwiseKernel("raw T x", "int32 y", "y = x[i]", "test_carray_getitem_int")(
        xp.asarray(a), xp.empty(a.shape, np.int32))
    np.testing.assert_array_equal(xp.get(y), a)


def test_carray_getitem_idx(xp):
    """test_carray.py::TestCArray::test_getitem_idx"""
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    y = sw.ElementwiseKernel("raw T x", "int32 y",
                             "ptrdiff_t idx[] = {i / 12, i / 4 % 3, i % 4}; y = x[idx]",
                             "test_carray_getitem_idx")(xp.asarray(a), xp.empty(a.shape, np.int32))
    np.testing.assert_array_equal(xp.get(y), a)


def test_carray_getitem_int_strided(xp):
    """test_carray.py::TestCArray::test_getitem_int over a transposed x: x[i] is the element
    at flat index i of x's own (logical) shape, whatever its strides, as CuPy's CArray."""
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    x = xp.asarray(a).T
    y = sw.ElementwiseKernel("raw T x", "int32 y", "y = x[i]")(x, xp.empty((6, 4), np.int32))
    np.testing.assert_array_equal(xp.get(y), a.T)


# -- CuPy tests/cupy_tests/core_tests/test_elementwise.py ------------------------------------

def test_invalid_shape(xp):
    """test_elementwise.py::TestElementwiseInvalidShape::test_invalid_shape"""
    f = sw.ElementwiseKernel("T x", "T y", "y += x")
    x = xp.asarray(np.arange(12).reshape(3, 4))
    y = xp.asarray(np.arange(4))
    with pytest.raises(ValueError, match="out has shape"):
        f(x, y)


def test_invalid_kernel_name():
    """test_elementwise.py::TestElementwiseInvalidArgument::test_invalid_kernel_name"""
    with pytest.raises(ValueError, match="Invalid kernel name"):
        sw.ElementwiseKernel("T x", "", "", "1")


COPY = sw.ElementwiseKernel("T x", "T y", "y = x", "copy")


def _shaped_arange(shape, dtype):
    """testing.shaped_arange's values: 1, 2, ... (bool: even ones True; complex: k + kj)."""
    a = np.arange(1, int(np.prod(shape)) + 1)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        a = a % 2 == 0
    elif dtype.kind == "c":
        a = a + a * 1j
    return a.astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", dtypes(CUPY_DTYPES))
def test_copy(xp, dtype):
    """test_elementwise.py::TestElementwise::test_copy (for_all_dtypes): the copy kernel into
    a given (2, 3, 4) dst of the same dtype leaves dst equal to src."""
    src = _shaped_arange((2, 3, 4), dtype)
    dst = xp.empty((2, 3, 4), dtype)
    COPY(xp.asarray(src), dst)
    got = xp.get(dst)
    assert got.dtype == np.dtype(dtype) and got.shape == (2, 3, 4)
    np.testing.assert_array_equal(got, src)


@pytest.mark.parametrize("shape", [(0,), (1, 0, 2)], ids=["array1", "array2"])
@pytest.mark.parametrize("dtype", dtypes(CUPY_DTYPES))
def test_copy_zero_sized_array(xp, dtype, shape):
    """test_elementwise.py::TestElementwise::test_copy_zero_sized_array1 and ::..._array2
    (for_all_dtypes): a copy of a zero-sized array is a new array of its shape and dtype.
    (Upstream loops over copy's order= too; a user kernel has no order= to pass.)"""
    src = xp.asarray(np.empty(shape, dtype))
    res = COPY(src)
    assert res is not src
    got = xp.get(res)
    assert got.shape == shape and got.dtype == np.dtype(dtype) and got.size == 0


INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _large_int_case(case, dtype):
    """(array, scalar) of TestElementwiseType's test_large_int_<case>."""
    info = np.iinfo(dtype)
    return {
        "upper_1": (np.array([0], np.int8), int(info.max)),
        "upper_2": (np.array([1], np.int8), int(info.max) - 1),
        "upper_3": (np.array([info.max], dtype), np.int8(0)),
        "upper_4": (np.array([info.max - 1], dtype), np.int8(1)),
        "lower_1": (np.array([0], np.int8), int(info.min)),
        "lower_2": (np.array([-1], np.int8), int(info.min) + 1),
        "lower_3": (np.array([info.min], dtype), np.int8(0)),
        "lower_4": (np.array([info.min + 1], dtype), np.int8(-1)),
    }[case]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("case", ["upper_1", "upper_2", "upper_3", "upper_4",
                                  "lower_1", "lower_2", "lower_3", "lower_4"])
def test_large_int(xp, case, dtype):
    """test_elementwise.py::TestElementwiseType::test_large_int_upper_1 ... _4 and
    ::test_large_int_lower_1 ... _4 (for_int_dtypes, no bool): an int8 array plus a Python int
    at (or one inside) the edge of each integer dtype, and an array at that edge plus an int8
    NumPy scalar, through stridewise's add (CuPy's `+`). The oracle is NumPy 2's `a + b`, which both NumPy
    and CuPy arrays follow (OverflowError for a Python int outside int8, as upstream accepts;
    a NumPy scalar promotes: uint64 with int8 is float64). torch tensors take torch's rule
    (a Python int wraps), which these cases do not cover."""
    if xp.name == "torch":
        pytest.skip("torch's scalar rule is torch's (wraps); upstream's oracle is NumPy's")
    a, b = _large_int_case(case, dtype)
    try:
        want = a + b
    except OverflowError:
        with pytest.raises(OverflowError):
            sw.add(xp.asarray(a), b)
        return
    got = xp.get(sw.add(xp.asarray(a), b))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# -- CuPy docs/source/user_guide/kernel.rst (doctests) and examples/ -----------------------

SQ_X = np.arange(10, dtype=np.float32).reshape(2, 5)
SQ_Y = np.arange(5, dtype=np.float32)
SQ_XY = np.array([[0, 0, 0, 0, 0], [25, 25, 25, 25, 25]], np.float32)   # the doctest's output


def test_guide_squared_diff(xp):
    """kernel.rst::Basics of elementwise kernels: squared_diff on arrays that broadcast
    ((2, 5) with (5,)), with a scalar (5), and into an explicit out next to the inputs."""
    squared_diff = sw.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                        "z = (x - y) * (x - y)", "squared_diff")
    x, y = xp.asarray(SQ_X), xp.asarray(SQ_Y)
    got = xp.get(squared_diff(x, y))
    assert got.dtype == np.float32 and got.shape == (2, 5)
    np.testing.assert_array_equal(got, SQ_XY)
    got = xp.get(squared_diff(x, 5))
    assert got.dtype == np.float32 and got.shape == (2, 5)
    np.testing.assert_array_equal(got, [[25, 16, 9, 4, 1], [0, 1, 4, 9, 16]])
    z = xp.empty((2, 5), np.float32)
    r = squared_diff(x, y, z)
    np.testing.assert_array_equal(xp.get(z), SQ_XY)
    np.testing.assert_array_equal(xp.get(r), SQ_XY)


def test_guide_squared_diff_generic(xp):
    """kernel.rst::Type-generic kernels: squared_diff_generic, the placeholder T used in the
    body (`T diff`), bound by the arrays' dtype (int16 here: float32 is squared_diff's); T is
    checked against the outputs first, so an input of another dtype than the given out is a
    TypeError (CuPy's 'Type is mismatched')."""
    dtype = "int16"
    generic = sw.ElementwiseKernel("T x, T y", "T z", "T diff = x - y;\nz = diff * diff;",
                                   "squared_diff_generic")
    x, y = xp.asarray(SQ_X.astype(dtype)), xp.asarray(SQ_Y.astype(dtype))
    got = xp.get(generic(x, y))
    assert got.dtype == np.dtype(dtype) and got.shape == (2, 5)
    np.testing.assert_array_equal(got, SQ_XY.astype(dtype))
    z = xp.empty((2, 5), dtype)
    generic(x, y, z)
    np.testing.assert_array_equal(xp.get(z), SQ_XY.astype(dtype))
    with pytest.raises(TypeError):
        generic(x, y, xp.empty((2, 5), np.float32))


def test_guide_squared_diff_super_generic(xp):
    """kernel.rst::Type-generic kernels: squared_diff_super_generic (X x, Y y, Z z) needs its
    output passed, since no input determines Z; given one, each placeholder takes its
    argument's dtype."""
    sg = sw.ElementwiseKernel("X x, Y y", "Z z", "z = (x - y) * (x - y)",
                              "squared_diff_super_generic")
    x, y = xp.asarray(SQ_X.astype(np.int32)), xp.asarray(SQ_Y)
    with pytest.raises(TypeError):
        sg(x, y)
    z = xp.empty((2, 5), np.float64)
    sg(x, y, z)
    got = xp.get(z)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, SQ_XY.astype(np.float64))


def test_guide_add_reverse(xp):
    """kernel.rst::Raw argument specifiers: add_reverse, z = x + y[_ind.size() - i - 1] with a
    raw y (not broadcast; any shape and strides: y[j] is flat index j of y's own shape), and
    _ind.size() the loop's size after broadcasting; the guide's own equivalent is x + y[::-1]."""
    add_reverse = sw.ElementwiseKernel("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]",
                                       "add_reverse")
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    y = np.arange(10, dtype=np.float32) * 10
    got = xp.get(add_reverse(xp.asarray(x), xp.asarray(y)))
    assert got.dtype == np.float32 and got.shape == (2, 5)
    np.testing.assert_array_equal(got, x + y[::-1].reshape(2, 5))
    yt = np.arange(10, dtype=np.float32).reshape(2, 5) * 10     # y as a transposed (5, 2) view
    got = xp.get(add_reverse(xp.asarray(x), xp.asarray(yt).T))
    np.testing.assert_array_equal(got, x + yt.T.ravel()[::-1].reshape(2, 5))


def test_example_kmeans_var_kernel(xp):
    """examples/kmeans/kmeans.py::fit_custom: var_kernel over column views of X ((n, 1),
    strided) and of the centers ((1, k)), broadcast to (n, k) distances."""
    var_kernel = sw.ElementwiseKernel("T x0, T x1, T c0, T c1", "T out",
                                      "out = (x0 - c0) * (x0 - c0) + (x1 - c1) * (x1 - c1)",
                                      "var_kernel")
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 2))
    centers = X[[3, 17, 29]]
    gx, gc = xp.asarray(X), xp.asarray(centers)
    got = xp.get(var_kernel(gx[:, None, 0], gx[:, None, 1], gc[None, :, 1], gc[None, :, 0]))
    x0, x1, c0, c1 = X[:, None, 0], X[:, None, 1], centers[None, :, 1], centers[None, :, 0]
    want = (x0 - c0) * (x0 - c0) + (x1 - c1) * (x1 - c1)
    assert got.dtype == np.float64 and got.shape == (40, 3)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


def _black_scholes_numpy(s, x, t, r, v):
    """The example's naive implementation (NumPy), its oracle."""
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t

    def cnd(d):
        k = 1 / (1 + 0.2316419 * np.abs(d))
        c = 0.39894228040143267793994605993438 * np.exp(-d * d / 2) * (
            k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978
                                                                          + k * 1.330274429)))))
        return np.where(d > 0, 1 - c, c)

    exp_rt = np.exp(-r * t)
    return s * cnd(d1) - x * exp_rt * cnd(d2), x * exp_rt * (1 - cnd(d2)) - s * (1 - cnd(d1))


def test_example_black_scholes(xp):
    """examples/finance/black_scholes.py: two outputs, a preamble __device__ function over the
    placeholder T, Python float scalars (risk free rate, volatility) typed as T; equal to the
    NumPy implementation within the example's assert_allclose (rtol 1e-7; see atol below)."""
    kernel = sw.ElementwiseKernel(
        "T s, T x, T t, T r, T v", "T call, T put",
        """
        const T sqrt_t = sqrt(t);
        const T d1 = (log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t);
        const T d2 = d1 - v * sqrt_t;
        const T cnd_d1 = get_cumulative_normal_distribution(d1);
        const T cnd_d2 = get_cumulative_normal_distribution(d2);
        const T exp_rt = exp(- r * t);
        call = s * cnd_d1 - x * exp_rt * cnd_d2;
        put = x * exp_rt * (1 - cnd_d2) - s * (1 - cnd_d1);
        """, "black_scholes_kernel",
        preamble="""
        __device__ inline T get_cumulative_normal_distribution(T x) {
            const T A1 = 0.31938153;
            const T A2 = -0.356563782;
            const T A3 = 1.781477937;
            const T A4 = -1.821255978;
            const T A5 = 1.330274429;
            const T RSQRT2PI = 0.39894228040143267793994605993438;
            const T W = 0.2316419;
            const T k = 1 / (1 + W * abs(x));
            T cnd = RSQRT2PI * exp(- x * x / 2) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
            if (x > 0) {
                cnd = 1 - cnd;
            }
            return cnd;
        }
        """)
    rng = np.random.default_rng(4)
    s, x, t = (m + (M - m) * rng.random(1000) for m, M in ((5, 30), (1, 100), (0.25, 10)))
    call, put = kernel(xp.asarray(s), xp.asarray(x), xp.asarray(t), 0.02, 0.3)
    want_call, want_put = _black_scholes_numpy(s, x, t, 0.02, 0.3)
    # On the CPU the kernel rounds as NumPy does (no contraction): upstream's rtol alone. On the
    # GPU, NVRTC contracts into fmas and CUDA's exp and log may differ by an ulp; the prices of
    # options deep in or out of the money are differences of nearly equal terms of size up to
    # 100 (some 1e-63, or 0), whose absolute error is then ~1e-14: an atol far below any price.
    atol = 0 if xp.name == "numpy" else 1e-12
    for got, want in ((xp.get(call), want_call), (xp.get(put), want_put)):
        assert got.dtype == np.float64 and got.shape == (1000,)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=atol)


# -- CuPy tests/cupy_tests/core_tests/test_ndarray_cuda_array_interface.py -------------------

class _Interface:
    """An object that only has __cuda_array_interface__ (version 2 or 3), over a CuPy array."""

    def __init__(self, a, ver):
        cai = dict(a.__cuda_array_interface__)
        cai["version"] = ver
        if ver == 3:
            cai["stream"] = 1
        self.__cuda_array_interface__ = cai
        self.base = a


def _cai_case(xp, dtype, trans, ver, stream):
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype)
    if trans:
        a = a.T
    want = a + np.dtype(dtype).type(3)
    f = sw.ElementwiseKernel("T x, T y", "T z", "z = x + y")
    if xp.name != "cupy":
        return xp.get(f(xp.asarray(a) if not trans else xp.asarray(a.T).T, np.dtype(dtype).type(3))), want
    import cupy
    s = cupy.cuda.Stream.null if stream == "null" else cupy.cuda.Stream()
    with s:
        x = cupy.asarray(a.T).T if trans else cupy.asarray(a)
        out = cupy.empty(a.shape, dtype)
        f(_Interface(x, ver), np.dtype(dtype).type(3), _Interface(out, ver), stream=s)
        s.synchronize()
    return out.get(), want


@pytest.mark.parametrize("ver", [2, 3])
@pytest.mark.parametrize("stream", ["null", "new"])
@pytest.mark.parametrize("trans", [False, True], ids=["add_scalar", "add_scalar_with_strides"])
@pytest.mark.parametrize("dtype", dtypes(CUPY_DTYPES))
def test_cuda_array_interface_add_scalar(xp, dtype, trans, stream, ver):
    """test_ndarray_cuda_array_interface.py::TestElementwiseKernel::test_add_scalar and
    ::test_add_scalar_with_strides: a bare __cuda_array_interface__ producer (v2, v3) with a
    NumPy scalar, on the null and a new stream. (Its output is passed: stridewise cannot
    allocate one for a bare producer.)"""
    if xp.name == "torch":
        pytest.skip("the interface objects wrap CuPy arrays")
    got, want = _cai_case(xp, dtype, trans, ver, stream)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got.dtype == want.dtype


# -- PyCUDA test/test_gpuarray.py -------------------------------------------------------------

def test_elwise_kernel(xp):
    """test_gpuarray.py::TestGPUArray::test_elwise_kernel"""
    rng = np.random.default_rng(1)
    a, b = (rng.random(50).astype(np.float32) for _ in range(2))
    lin_comb = sw.ElementwiseKernel("float a, float *x, float b, float *y, float *z",
                                    "z[i] = a*x[i] + b*y[i]", "linear_combination")
    c = xp.empty(a.shape, np.float32)
    lin_comb(5, xp.asarray(a), 6, xp.asarray(b), c)
    want = np.float32(5) * a + np.float32(6) * b
    if xp.name == "numpy":                   # g++ builds with -ffp-contract=off: exact
        np.testing.assert_array_equal(xp.get(c), want)
    else:   # NVRTC contracts a*x + b*y into an fma, as nvcc does for PyCUDA: upstream's bound
        assert np.linalg.norm(xp.get(c) - want) < 1e-5


@pytest.mark.parametrize("slc", [slice(5, 20000), slice(5, 20000, 17), slice(3000, 5, -1),
                                 slice(1000, -1)])
def test_ranged_elwise_kernel(xp, slc):
    """test_gpuarray.py::TestGPUArray::test_ranged_elwise_kernel"""
    set_to_seven = sw.ElementwiseKernel("float *z", "z[i] = 7", "set_to_seven")
    a = xp.asarray(np.zeros(50000, np.float32))
    want = np.zeros(50000, np.float32)
    want[slc] = 7
    set_to_seven(a, slice=slc)
    np.testing.assert_array_equal(xp.get(a), want)


def test_ranged_elwise_kernel_range(xp):
    """test_gpuarray.py::TestGPUArray::test_ranged_elwise_kernel with range= (PyCUDA's other
    spelling: i runs over range(start, stop, step) itself)."""
    k = sw.ElementwiseKernel("float *z", "z[i] = i", "set_to_i")
    a = xp.asarray(np.zeros(100, np.float32))
    k(a, range=slice(90, 10, -7))
    want = np.zeros(100, np.float32)
    want[90:10:-7] = np.arange(90, 10, -7)
    np.testing.assert_array_equal(xp.get(a), want)


@pytest.mark.parametrize("dtype", dtypes(["uint8"]))
def test_big_array_elementwise(xp, dtype):
    """test_gpuarray.py::test_big_array_elementwise: i as a value, wrapped to a byte (2**32
    elements on the GPU; 2**16 + 11 on the CPU, where the pattern is the same)."""
    n = 2**32 if xp.name != "numpy" else 2**16 + 11
    eltwise = sw.ElementwiseKernel("unsigned char* d_arr",
                                   "d_arr[i] = (unsigned char) (i & 0b11111111)", "mod_linspace")
    d = xp.empty(n, dtype)
    eltwise(d)
    got = xp.get(d)
    assert np.array_equal(got[:1024], np.arange(1024) % 256) and got[-1] == (n - 1) % 256
    assert np.array_equal(got.reshape(-1)[: n // 256 * 256].reshape(-1, 256),
                          np.broadcast_to(np.arange(256, dtype=np.uint8), (n // 256, 256)))


# -- PyCUDA examples/ --------------------------------------------------------------------------

def test_demo_elementwise(xp):
    """examples/demo_elementwise.py: lin_comb with a __device__ helper in the preamble."""
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal(50).astype(np.float32) for _ in range(2))
    lin_comb = sw.ElementwiseKernel(
        "float a, float *x, float b, float *y, float *z", "z[i] = my_f(a*x[i], b*y[i])",
        "linear_combination",
        preamble="__device__ float my_f(float x, float y)\n{\n  return sin(x*y);\n}\n")
    c = xp.empty(a.shape, np.float32)
    lin_comb(5, xp.asarray(a), 6, xp.asarray(b), c)
    # float32 products, then sin of a float (the float overload): within 2 ulp of the truth
    want = np.sin(((np.float32(5) * a) * (np.float32(6) * b)).astype(np.float64))
    np.testing.assert_allclose(xp.get(c), want, rtol=3e-7, atol=3e-7)


def test_simple_speed_test(xp):
    """examples/from-wiki/simple_speed_test.py: a loop inside the operation, with an int
    parameter, and the same loop run from Python."""
    n_iter = 100
    looped = sw.ElementwiseKernel("float *a, int n_iter",
                                  "for(int n = 0; n < n_iter; n++) { a[i] = sin(a[i]);}", "gpusin")
    once = sw.ElementwiseKernel("float *a", "a[i] = sin(a[i]);", "gpusin")
    a1, a2 = xp.asarray(np.ones(8192, np.float32)), xp.asarray(np.ones(8192, np.float32))
    looped(a1, int(n_iter))
    for _ in range(n_iter):
        once(a2)
    want = np.float64(1.0)
    for _ in range(n_iter):
        want = np.sin(want)
    np.testing.assert_array_equal(xp.get(a1), xp.get(a2))
    np.testing.assert_allclose(xp.get(a1), np.full(8192, want), rtol=1e-5)
