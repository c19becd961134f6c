"""Outputs for producers stridewise does not allocate with: the DLPack export of its own
buffers (checked on the CPU against torch's and NumPy's DLPack import), the stream each
protocol asks for, and on the GPU bare __cuda_array_interface__ producers and JAX arrays."""
import gc

import ml_dtypes
import numpy as np
import pytest

from stridewise.operands import foreign as _foreign

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_,
                                   np.float16, ml_dtypes.bfloat16])
def test_dlpack_capsule_reads_back_in_torch(dtype):
    """A strided view exported by stridewise's capsule is the same view in torch: values,
    dtype, strides, shared memory; the exporter is released once torch lets go."""
    base = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
    a = base[:, ::2]
    strides = tuple(s // a.itemsize for s in a.strides)
    t = torch.from_dlpack(_foreign.dlpack_capsule(a.ctypes.data, ("cpu", 0), a.shape, strides,
                                                  a.dtype, a))
    assert t.stride() == strides and t.data_ptr() == a.ctypes.data
    want = torch.from_numpy(a.view(np.int16) if dtype is ml_dtypes.bfloat16 else a)
    if dtype is ml_dtypes.bfloat16:
        assert t.dtype == torch.bfloat16 and torch.equal(t.view(torch.int16), want)
    else:
        assert torch.equal(t, want)
    n = len(_foreign._EXPORTED)
    del t
    gc.collect()
    assert len(_foreign._EXPORTED) == n - 1


def test_unconsumed_capsule_releases_its_exporter():
    a = np.ones(3)
    n = len(_foreign._EXPORTED)
    cap = _foreign.dlpack_capsule(a.ctypes.data, ("cpu", 0), (3,), (1,), a.dtype, a)
    assert len(_foreign._EXPORTED) == n + 1
    del cap
    gc.collect()
    assert len(_foreign._EXPORTED) == n


def test_array_interfaces_describe_the_buffer():
    """The output object's interface: C-contiguous strides in bytes, the legacy default
    stream it was written on, DLPack device kDLCUDA."""
    arr = _foreign.Array(None, 4096, 1, (2, 3, 0), np.dtype(np.float32))
    cai = arr.__cuda_array_interface__
    assert cai["shape"] == (2, 3, 0) and cai["typestr"] == "<f4" and cai["data"] == (4096, False)
    assert cai["strides"] == (12, 4, 4) and cai["version"] == 3 and cai["stream"] == 1
    assert arr.__dlpack_device__() == (2, 1)


def test_dlpack_inputs_ask_for_the_launch_stream():
    """DLPack's stream codes: 1 is the legacy default stream (where the launch goes); -1
    would mean no synchronization at all."""
    assert _foreign.DLPACK_STREAM == 1


def test_interface_streams_that_need_no_wait():
    _foreign.sync_interface_stream({"stream": None})     # nothing to wait for: no driver call
    _foreign.sync_interface_stream({})
    _foreign.sync_interface_stream({"stream": 1})


class _BareInterface:
    """A producer with __cuda_array_interface__ only (as numba's arrays), over a torch tensor."""

    def __init__(self, t):
        self._t = t
        self.__cuda_array_interface__ = t.__cuda_array_interface__


class _BareDLPack:
    """A producer with DLPack only."""

    def __init__(self, t):
        self._t = t

    def __dlpack__(self, **kw):
        return self._t.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()


@pytest.mark.gpu
@pytest.mark.parametrize("wrap", [_BareInterface, _BareDLPack])
def test_bare_producers_get_an_array_back(wrap):
    import stridewise as sw

    a = torch.rand(64, 33, device="cuda") + 1
    b = torch.rand(33, device="cuda") + 1
    out = sw.remainder(wrap(a), wrap(b))
    assert isinstance(out, _foreign.Array) and out.shape == (64, 33)
    torch.cuda.synchronize()
    assert torch.equal(torch.from_dlpack(out), torch.remainder(a, b))
    assert torch.equal(torch.as_tensor(out, device="cuda"), torch.remainder(a, b))


@pytest.mark.gpu
def test_jax_arrays_get_a_jax_array_back():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    import stridewise as sw

    gpu = jax.devices("gpu")[0]
    x = jax.device_put(jnp.arange(-50, 50, dtype=jnp.float32) * 0.37, gpu)
    y = jax.device_put(jnp.full((100,), 1.5, dtype=jnp.float32), gpu)
    out = sw.remainder(x, y)
    assert isinstance(out, jax.Array) and out.devices() == {gpu}
    np.testing.assert_array_equal(np.asarray(out), np.remainder(np.asarray(x), np.asarray(y)))
    out = sw.add(x, 2.0)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) + 2.0)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "int8", "uint8", "bool"])
def test_jax_arrays_of_every_width(dtype):
    """JAX's interface gives bfloat16 as raw bytes ("<V2"): the array's dtype names it. The
    result is bit for bit NumPy's (ml_dtypes' for bfloat16), broadcast, as a JAX array."""
    jax = pytest.importorskip("jax")
    import ml_dtypes
    import stridewise as sw

    gpu = jax.devices("gpu")[0]
    rng = np.random.default_rng(11)
    npdt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    magnitude = np.abs if npdt.kind == "u" else (lambda v: v)
    a, b = (magnitude(rng.standard_normal(s) * 20).astype(npdt) for s in ((64, 1), (33,)))
    if npdt.kind in "iu":
        b[b == 0] = 3
    for op in ("add", "multiply") + (() if dtype == "bool" else ("remainder",)):
        with np.errstate(all="ignore"):
            want = getattr(np, op)(a, b)
        got = getattr(sw, op)(jax.device_put(a, gpu), jax.device_put(b, gpu))
        assert isinstance(got, jax.Array) and got.dtype == want.dtype, (op, got.dtype)
        got = np.asarray(got)
        assert got.shape == want.shape
        assert got.tobytes() == want.tobytes(), op


@pytest.mark.gpu
def test_jax_arrays_still_being_computed_are_waited_for():
    """JAX dispatches asynchronously: operands whose computation is still queued when the call
    comes (a loop of 2000 passes over 2^24 elements) must be read once written, not before."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    import stridewise as sw

    gpu = jax.devices("gpu")[0]
    n = 1 << 24

    @jax.jit
    def slow(seed):     # about 50 ms of queued work on an H200
        body = lambda i, v: jnp.sin(v) * 0.5 + v          # noqa: E731
        return jax.lax.fori_loop(0, 2000, body, jnp.arange(n, dtype=jnp.float32) * seed)

    for trial in range(3):
        x = slow(jax.device_put(jnp.float32(0.001 * (trial + 1)), gpu))
        y = slow(jax.device_put(jnp.float32(0.002), gpu)) + 1.0
        out = sw.remainder(x, y)
        np.testing.assert_array_equal(np.asarray(out), np.remainder(np.asarray(x), np.asarray(y)))


def test_interface_bytes_take_the_producers_own_dtype():
    """__cuda_array_interface__ has no bfloat16: JAX gives "<V2", and the array's own dtype
    names it; raw bytes with no dtype of their size stay refused, naming the fix."""
    import ml_dtypes

    from stridewise.operands.arrays import interface_dtype

    class Typed:
        def __init__(self, dtype):
            self.dtype = dtype

    assert interface_dtype(Typed(ml_dtypes.bfloat16), {"typestr": "<V2"}).name == "bfloat16"
    assert interface_dtype(Typed(np.float32), {"typestr": "<f4"}).name == "float32"
    assert interface_dtype(object(), {"typestr": "<i8"}).name == "int64"
    for producer in (object(), Typed(np.float32), Typed("not a dtype")):
        with pytest.raises(TypeError, match="unsupported dtype void16.*cast the array first"):
            interface_dtype(producer, {"typestr": "<V2"})
