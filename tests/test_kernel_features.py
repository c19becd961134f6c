"""ElementwiseKernel as CuPy and PyCUDA users write it: scalars typed as CuPy types them, raw
arrays and the flat index, size=, PyCUDA's keywords and ranges, outputs (none, tuples,
no_return), preambles that see the placeholders, options, streams, block_size, loop_prep.
CPU tests use NumPy (and CPU torch) oracles; `nvrtc` tests compile the same kernels for the
GPU (no GPU needed); `gpu` tests run on the device."""
import numpy as np
import pytest

import stridewise as sw
import test_kernel
from oracle import NP, same_bits
from stridewise.codegen import source as _codegen
from stridewise.kernels import usercall as _usercall
from stridewise.backends.cpu import CompileError


# -- scalars --------------------------------------------------------------------------------

@pytest.mark.parametrize("scalar", [np.float64(0.5), np.float16(0.5), np.int64(2), 0.5, True])
def test_a_scalar_takes_the_placeholder_its_array_bound(scalar):
    """CuPy's rule: a scalar (Python or NumPy, of any dtype) never fixes T once an array has."""
    k = sw.ElementwiseKernel("T x, T a", "T z", "z = x + a")
    x = np.arange(6, dtype=np.float32)
    z = k(x, scalar)
    assert z.dtype == np.float32
    assert same_bits(z, x + np.float32(scalar))


def test_unbound_placeholders_take_numpy_scalar_dtypes_then_python_defaults():
    k = sw.ElementwiseKernel("T x, U a, U b, V c", "T z, U u, V v", "z = x; u = a + b; v = c")
    z, u, v = k(np.ones(3, np.float32), 2, np.int32(5), True)
    assert u.dtype == np.int32 and np.all(u == 7)          # the NumPy scalar binds U first
    assert v.dtype == np.bool_ and np.all(v)               # a Python bool is bool


def test_fixed_dtype_scalars_and_numpy_scalar_values():
    k = sw.ElementwiseKernel("T x, float32 a, int32 n", "T z", "z = x * a + n")
    x = np.arange(4.0)
    z = k(x, np.float64(1 / 3), np.int64(2**33 + 3))       # converted as NumPy casts them
    assert same_bits(z, x * np.float64(np.float32(1 / 3)) + np.int64(np.int64(2**33 + 3).astype(np.int32)))


def test_numpy_scalars_with_torch_tensors():
    torch = pytest.importorskip("torch")
    k = sw.ElementwiseKernel("T x, T a", "T z", "z = x * a")
    x = torch.arange(6, dtype=torch.float32)
    z = k(x, np.float64(0.25))
    assert isinstance(z, torch.Tensor) and z.dtype == torch.float32
    assert torch.equal(z, x * 0.25)
    b = torch.tensor([True, False, True])
    assert torch.equal(sw.ElementwiseKernel("T x, T a", "T z", "z = x && a")(b, True), b)


# -- PyCUDA's keywords, outputs and returns -------------------------------------------------

def test_pycuda_keywords():
    seven = sw.ElementwiseKernel(arguments="float *z", operation="z[i] = 7", name="seven",
                                 keep=True, options=["-DSEVEN=7"], preamble="", loop_prep="",
                                 after_loop="")
    z = np.zeros(5, np.float32)
    seven(z)
    np.testing.assert_array_equal(z, 7)
    pos = sw.ElementwiseKernel("float *z, float a", "z[i] = a * SCALE", "scaled", False,
                               ["-DSCALE=2"], "", "", "")   # PyCUDA's positional order
    pos(z, 1.5)
    np.testing.assert_array_equal(z, 3)
    with pytest.raises(TypeError, match="PyCUDA form"):
        sw.ElementwiseKernel(arguments="float *z", operation="z[i] = 7", bogus=1)


def test_return_tuple_no_return_and_kernels_without_outputs():
    x = np.arange(4.0)
    one = sw.ElementwiseKernel("T x", "T z", "z = x + 1", return_tuple=True)
    (z,) = one(x)
    np.testing.assert_array_equal(z, x + 1)
    out = np.empty(4)
    assert sw.ElementwiseKernel("T x", "T z", "z = x + 1", no_return=True)(x, out) is None
    np.testing.assert_array_equal(out, x + 1)
    scatter = sw.ElementwiseKernel("T x, raw T y", "", "y[i] = 2 * x")    # no outputs: CuPy's ()
    y = np.zeros(4)
    assert scatter(x, y) == ()
    np.testing.assert_array_equal(y, 2 * x)
    side = sw.ElementwiseKernel("raw T x", "", "x[i] = x.size() - i")     # all raw, size=
    x2 = np.zeros(6)
    side(x2, size=6)
    np.testing.assert_array_equal(x2, 6 - np.arange(6))


def test_preamble_sees_the_placeholders():
    k = sw.ElementwiseKernel("T x, U n", "T z", "z = scale(x, n)",
                             preamble="__device__ T scale(T v, U k) { return v * (T)k; }")
    x = np.arange(5, dtype=np.float32)
    assert same_bits(k(x, np.int32(3)), x * np.float32(3))
    h = np.arange(5, dtype=np.float16)                      # 16-bit T is float in the code
    assert same_bits(k(h, np.int32(3)), (h.astype(np.float32) * 3).astype(np.float16))


def test_define_options_reach_the_host_compiler():
    k = sw.ElementwiseKernel("T x", "T z", "z = x * ALPHA + BETA", options=("-DALPHA=3", "-DBETA"))
    np.testing.assert_array_equal(k(np.arange(4.0)), np.arange(4.0) * 3 + 1)
    assert _usercall.compile_options(["-DA=1", "-UB", "--use_fast_math", "-O3", "-std=c++20",
                                      "--fmad=false", "-I/x"]) == (
        "#define A 1\n#undef B", (("fma", False), ("include_path", ("/x",)),
                                  ("std", "c++20"), ("use_fast_math", True)))


# -- raw arrays, the flat index, size=, range= -----------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32", "int64"])
def test_raw_arrays_every_dtype(dtype):
    k = sw.ElementwiseKernel("raw T x, raw T w", "T y", "y = x[x.size() - 1 - i]; w[i] = x[i]; w[i] += 1")
    a = np.arange(8).astype(NP[dtype])
    w = np.zeros(8, NP[dtype])
    y = k(a, w, np.empty(8, NP[dtype]))
    assert same_bits(y, a[::-1]) and same_bits(w, (a.astype(np.float64) + 1).astype(NP[dtype]))


def test_raw_broadcast_operands_are_not_materialized():
    """A kernel with raw arguments still reads its other arguments at broadcast offsets."""
    k = sw.ElementwiseKernel("raw T table, T x, int32 j", "T z", "z = x + table[j] + i")
    table = np.array([10.0, 20.0, 30.0])
    x = np.arange(4.0).reshape(4, 1)
    j = np.array([[0, 2, 1]], np.int32)
    z = k(table, x, j)
    np.testing.assert_array_equal(z, x + table[j] + np.arange(12).reshape(4, 3))
    ex = sw.explain(k, table, x, j)
    assert ex.shape == (4, 3) and ex.strides[2:] == ((1, 0), (0, 1))   # x and j: stride 0


def _mode_cases():
    """test_kernel's case per mode, with a Python number as the scalar."""
    cases = test_kernel._mode_cases()
    cases["scalar"] = ((cases["scalar"][0][0], 3.0), None)
    return cases


@pytest.mark.parametrize("mode", list(_mode_cases()))
def test_flat_index_in_every_mode(mode):
    k = sw.ElementwiseKernel("T x, T y", "T z, int64 n", "z = x * y + (T)(i % 7); n = i + _ind.size()")
    (x, y), alg = _mode_cases()[mode]
    assert sw.explain(k, x, y, algorithm=alg).mode == mode
    z, n = k(x, y, algorithm=alg)
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    assert same_bits(z, (x * np.float32(y) + (idx % 7).astype(np.float32)).astype(np.float32))
    np.testing.assert_array_equal(n, idx + idx.size)


def test_flat_index_with_a_transposed_out():
    k = sw.ElementwiseKernel("T x", "int64 n, T z", "n = i; z = x")
    n, z = np.empty((40, 30), np.int64).T, np.empty((30, 40))
    k(np.ones((30, 40)), n, z)
    np.testing.assert_array_equal(n, np.arange(1200).reshape(30, 40))


def test_pycuda_range_step_and_all_raw_size():
    rev = sw.ElementwiseKernel("double *out, double *a", "out[a.size() - 1 - i] = a[i]")
    a, out = np.arange(7.0), np.zeros(7)
    assert rev(out, a) is None                 # every array raw: the loop is the first's size
    np.testing.assert_array_equal(out, a[::-1])
    k = sw.ElementwiseKernel("float *z, float s", "z[i] = s * i")
    z = np.zeros(20, np.float32)
    k(z, 0.5, range=range(3, 17, 4))
    want = np.zeros(20, np.float32)
    want[3:17:4] = 0.5 * np.arange(3, 17, 4)
    np.testing.assert_array_equal(z, want)
    with pytest.raises(TypeError, match="range= and slice= belong to PyCUDA"):
        sw.ElementwiseKernel("T x", "T z", "z = x")(np.ones(3), range=range(2))


def test_raw_errors():
    k = sw.ElementwiseKernel("raw T x", "T y", "y = x[i]")
    with pytest.raises(TypeError, match="raw, so it takes an array"):
        k(3.0, np.empty(3))
    fixed = sw.ElementwiseKernel("raw float32 x", "float32 y", "y = x[i]")
    with pytest.raises(TypeError, match="a raw array is not converted"):
        fixed(np.ones(3), np.empty(3, np.float32))
    with pytest.raises(ValueError, match="the loop's length is an int >= 0"):
        k(np.ones(3), size=-1)


# -- launch control -------------------------------------------------------------------------

def test_stream_handles():
    class Torchy:
        cuda_stream = 7

    class Cupyish:
        ptr = 9

    class Core:
        def __cuda_stream__(self):
            return (0, 11)

    assert [_usercall.stream_handle(s) for s in (5, Torchy(), Cupyish(), Core())] == [5, 7, 9, 11]
    with pytest.raises(TypeError, match="raw CUstream handle"):
        _usercall.stream_handle("default")
    k = sw.ElementwiseKernel("T x", "T z", "z = x + 1")
    np.testing.assert_array_equal(k(np.arange(3.0), stream=0), [1, 2, 3])   # the host is synchronous


def test_block_size_is_the_algorithms_field():
    k = sw.ElementwiseKernel("T x", "T z", "z = x + 1")
    x = np.ones((8, 64))
    assert sw.explain(k, x, block_size=256).algorithm.block_size == 256
    alg = sw.explain(k, x, algorithm=sw.Rows(), block_size=128).algorithm
    assert isinstance(alg, sw.Rows) and alg.block_size == 128
    with pytest.raises(ValueError, match="conflicts with Rows"):
        k(x, algorithm=sw.Rows(block_size=512), block_size=128)
    with pytest.raises(ValueError, match="power of two from 32 to 1024"):
        k(x, block_size=48)


def test_loop_prep_and_after_loop_run_per_element():
    """cupyx.scipy.signal's style: constants from the parameters, then the operation."""
    k = sw.ElementwiseKernel("T x, int64 numtaps", "T z", "z = alpha * x + shift",
                             loop_prep="const double alpha { 0.5 * ( numtaps - 1 ) }; double shift = i;",
                             after_loop="shift = 0;")
    x = np.arange(5.0)
    np.testing.assert_array_equal(k(x, 5), 2.0 * x + np.arange(5))
    bad = sw.ElementwiseKernel("T x", "T z", "z = x", loop_prep="T t = ;")
    with pytest.raises(CompileError, match="loop_prep line 1"):
        bad(x)


# -- NVRTC: the same kernels compile for the GPU ---------------------------------------------

def _cuda_source(k, *args, **kw):
    from stridewise.backends import cuda

    prepared = k._explain(args, kw)
    return cuda, _codegen.generate(prepared.spec, cuda.entry_point), prepared.spec


NVRTC_CASES = {
    "raw+index": (sw.ElementwiseKernel("raw T x, T y", "T z", "z = x[x.size() - 1 - i] + y"),
                  (np.ones(16, np.float32), np.ones((4, 16), np.float32)), {}),
    "raw-strided-3d": (sw.ElementwiseKernel("raw T x", "int32 y",
                                            "ptrdiff_t idx[] = {i / 12, i / 4 % 3, i % 4}; y = x[idx] + x[i]"),
                       (np.ones((4, 3, 2), np.int32).transpose(2, 1, 0), np.empty(24, np.int32)), {}),
    "raw-half": (sw.ElementwiseKernel("raw T x", "T y", "y = x[i] + x[0]; x[i] += 1"),
                 (np.ones(8, np.float16), np.empty(8, np.float16)), {}),
    "no-outputs-size": (sw.ElementwiseKernel("raw T x", "", "x[i] = i"), (np.ones(8),), {"size": 8}),
    "index-tiled": (sw.ElementwiseKernel("T x, T y", "T z", "z = x + y * i"),
                    (np.ones((256, 64), np.float32).T, np.ones((64, 256), np.float32)), {}),
    "index-short-rows": (sw.ElementwiseKernel("T x, T y", "T z", "z = x + y * _ind.size()"),
                         (np.ones((100, 6), np.float32), np.ones((1, 6), np.float32)), {}),
    "preamble-T-defines": (sw.ElementwiseKernel("T x", "T z", "z = twice(x) * ALPHA",
                                                preamble="__device__ T twice(T v) { return v + v; }",
                                                options=("-DALPHA=3",)), (np.ones(8),), {}),
    "placeholders-named-like-kernel-internals": (
        sw.ElementwiseKernel("P x, E y, L w", "P z", "z = x + (P)y + (P)w"),
        (np.ones((256, 64), np.float32).T, np.ones((64, 256), np.int32), 2), {}),
    "pycuda-range": (sw.ElementwiseKernel("float *z", "z[i] = 7")._range_kernel(),
                     (np.ones(50, np.float32), 5, 2), {"size": 10}),
}


@pytest.mark.nvrtc
@pytest.mark.parametrize("case", list(NVRTC_CASES))
def test_user_kernels_compile_with_nvrtc(case):
    pytest.importorskip("cuda.core")
    k, args, kw = NVRTC_CASES[case]
    cuda, source, spec = _cuda_source(k, *args, **kw)
    assert len(cuda.compile(source, spec.entry, "sm_90", spec.options)) > 0


@pytest.mark.nvrtc
def test_nvrtc_flags_reach_nvrtc():
    """-std=c++20 reaches NVRTC: a C++20 preamble compiles with it and fails without."""
    pytest.importorskip("cuda.core")
    pre = "__device__ consteval int three() { return 3; }"
    with_flag = sw.ElementwiseKernel("T x", "T z", "z = x * three()", preamble=pre,
                                     options=("-std=c++20",))
    cuda, source, spec = _cuda_source(with_flag, np.ones(8))
    assert spec.options == (("std", "c++20"),)
    assert len(cuda.compile(source, spec.entry, "sm_90", spec.options)) > 0
    with pytest.raises(cuda.CompileError):
        cuda.compile(source, spec.entry, "sm_90", ())


# -- GPU (run on the device) ------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_stream_on_cuda(lib):
    """stream= takes the library's stream: the kernel runs on it, ordered after its work."""
    if lib == "cupy":
        cupy = pytest.importorskip("cupy")
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            x = cupy.arange(1 << 20, dtype=cupy.float32)
        k = sw.ElementwiseKernel("T x", "T z", "z = x * 2 + i")
        z = k(x, stream=s)
        s.synchronize()
        want = np.arange(1 << 20, dtype=np.float32) * 2 + np.arange(1 << 20)
        np.testing.assert_array_equal(z.get(), want)
        k(x, stream=s.ptr)                     # a raw handle
        s.synchronize()
    else:
        torch = pytest.importorskip("torch")
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            x = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
        k = sw.ElementwiseKernel("T x", "T z", "z = x * 2 + i")
        z = k(x, stream=s)
        s.synchronize()
        want = np.arange(1 << 20, dtype=np.float32) * 2 + np.arange(1 << 20)
        np.testing.assert_array_equal(z.cpu().numpy(), want)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_raw_index_and_scalars_on_cuda(lib):
    mod = pytest.importorskip(lib)
    k = sw.ElementwiseKernel("raw T table, T x, T a", "T z", "z = x * a + table[i % table.size()]")
    t, x = np.arange(5.0), np.arange(24.0).reshape(4, 6)
    dev = (lambda a: mod.asarray(a)) if lib == "cupy" else (lambda a: mod.from_numpy(a).cuda())
    z = k(dev(t), dev(x)[:, ::2], np.float64(0.5))
    got = z.get() if lib == "cupy" else z.cpu().numpy()
    np.testing.assert_array_equal(got, x[:, ::2] * 0.5 + t[np.arange(12).reshape(4, 3) % 5])


# -- hypothesis: layouts ----------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402


@st.composite
def _strided(draw, max_dims=3):
    """A float64 view with a random shape, a random slice step per dim and maybe transposed."""
    nd = draw(st.integers(1, max_dims))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(nd))
    steps = tuple(draw(st.sampled_from([1, 1, 2, -1])) for _ in range(nd))
    base = np.arange(np.prod([n * abs(s) for n, s in zip(shape, steps)]), dtype=np.float64)
    v = base.reshape([n * abs(s) for n, s in zip(shape, steps)])[tuple(slice(None, None, s) for s in steps)]
    return v.T if draw(st.booleans()) else v


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=_strided(), y=_strided(2))
def test_index_and_raw_over_random_layouts(x, y):
    """i is the C-order index over the broadcast shape and raw x[j] the element at flat index
    j of x's own shape, whatever the strides (oracle: NumPy's C-order ravel)."""
    try:
        shape = np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        shape = x.shape
        y = y.ravel()[:1].reshape(())
    k = sw.ElementwiseKernel("T x, T y, raw T r", "T z", "z = x - y * i + r[i % r.size()]")
    z = k(x, y, x)
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    flat = x.ravel()
    assert same_bits(z, x - y * idx.astype(np.float64) + flat[idx % flat.size])


def test_plain_calls_stay_on_the_warm_path(monkeypatch, warm_path):
    """Kernels without raw arrays or the index go straight to the warm path once warm, in
    both forms and with positional outputs; calls that need more take the full path."""
    from stridewise.launch import pipeline as _ops

    cupy_form = sw.ElementwiseKernel("T x, T a", "T z", "z = x * a")
    pycuda_form = sw.ElementwiseKernel("double *z, double *x, double a", "z[i] = x[i] * a")
    x, z = np.arange(8.0), np.empty(8)
    cupy_form(x, 2.0, z)
    pycuda_form(z, x, 2.0)
    cupy_form(x, 2.0)

    def cold(*a, **k):
        raise AssertionError("a warm call took the full path")

    monkeypatch.setattr(_ops, "_operands", cold)
    assert cupy_form(x, 3.0, z) is z and np.array_equal(z, 3 * x)
    assert pycuda_form(z, x, 4.0) is z and np.array_equal(z, 4 * x)
    assert np.array_equal(cupy_form(x, 5.0), 5 * x)
    with pytest.raises(AssertionError, match="full path"):
        cupy_form(x, np.float64(2.0))          # a NumPy scalar: a host parameter, cold
