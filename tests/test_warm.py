"""The compiled warm path (stridewise.launch._warm) against its Python reference: the same keys,
the same launches and results from the same calls, and the same launcher bytes (no GPU)."""
import ctypes
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stridewise.operands import arrays as _arrays
from stridewise.launch import compiled as _compiled
from stridewise.launch import pipeline as _ops
from stridewise.ops import builtins as _builtins
from stridewise.operands.dtypes import ALL_DTYPES as DTYPES
from stridewise.backends import cpu, cuda

warm = _compiled.warm
needs_warm = pytest.mark.skipif(warm is None, reason="stridewise.launch._warm is not built")
R = _builtins.OPS["remainder"]


def test_compiled_warm_path_is_built():
    if os.environ.get("STRIDEWISE_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("STRIDEWISE_PURE_PYTHON=1 chooses the Python warm path")
    assert warm is not None, ("stridewise.launch._warm is not built, or built from older sources: "
                              "install with a C compiler (pip install -e .) or run "
                              "python setup.py build_ext --inplace")


class _CAI:    # an array-like with no fast keyer: the full pipeline takes it
    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (1 << 20, False), "version": 3}


class _Cupy:    # what the CuPy keyer reads, under cupy.ndarray's module and name (no GPU)
    def __init__(self, ptr, shape, strides, dtype="float32", device=0):
        self.data = type("MemoryPointer", (), {"ptr": ptr})()
        self.device = type("Device", (), {"id": device})()
        self.shape, self.strides, self.dtype = shape, strides, np.dtype(dtype)


_Cupy.__module__, _Cupy.__name__ = "cupy._core.core", "ndarray"


def _pool():
    base = np.arange(64, dtype=np.float32)
    items = [base, base[::2], base.reshape(8, 8).T, base[1:17], base[2:], np.zeros(3, np.int64),
             np.ones((2, 3), np.float16), 2, 2.5, -1, True, 1j, np.float32(3), "x", None,
             [1.0, 2.0], _CAI(), _Cupy(1 << 20, (4, 8), (32, 4)), _Cupy((1 << 20) + 8, (8,), (4,)),
             _Cupy(1 << 20, (4, 8), (32, 4), device=1), _Cupy(1 << 21, (4,), (8,), "int64")]
    ro = np.arange(8.0)
    ro.flags.writeable = False
    import ml_dtypes
    items += [ro, np.array(2.5), np.zeros((0, 3)), base[::-3], np.broadcast_to(base[:4], (3, 4)),
              base[:8].astype(ml_dtypes.bfloat16), np.ones((3, 4), np.float32, order="F")]
    try:
        import torch
    except ImportError:
        return items
    t = torch.arange(64, dtype=torch.float32)
    return items + [t, t[::3], t.reshape(8, 8).t(), t.to(torch.bfloat16), t[1:9], t[3:],
                    torch.nn.Parameter(t.clone()), torch.tensor(3.0), torch.empty(0, 4),
                    t[:8].expand(3, 8), t.to(torch.int64)[5:], t.to(torch.float16)[::2][1:],
                    t.to(torch.bool), torch.ones(2, 3, dtype=torch.int32).t()]


POOL = _pool()
_args = st.lists(st.sampled_from(range(len(POOL))), min_size=1, max_size=4)
_outs = st.one_of(st.none(), st.sampled_from(range(len(POOL))),
                  st.tuples(st.sampled_from(["list", "tuple"]), st.lists(
                      st.sampled_from(range(len(POOL))), min_size=0, max_size=2)))


def _out(spec):
    if spec is None:
        return None
    if isinstance(spec, int):
        return POOL[spec]
    kind, idx = spec
    return (list if kind == "list" else tuple)(POOL[i] for i in idx)


@needs_warm
@settings(max_examples=300, deadline=None)
@given(_args, _outs, st.booleans(), st.sampled_from([None, "numpy"]), st.booleans())
def test_keys_match_the_python_reference(args, out, inplace, convention, as_list):
    args = [POOL[i] for i in args]
    args = args if as_list else tuple(args)
    out = _out(out)
    want = _ops._fast_key(R, args, out, convention, None, inplace)
    got = warm.fast_call(R, args, out, convention, None, inplace, None)
    assert got == want
    if want is not None:   # the same objects in the key, so the same dict entry
        assert hash(got[0]) == hash(want[0])


@needs_warm
def test_data_pointer_is_the_array_interfaces():
    """The NumPy allocator's pointer (the buffer protocol) is the array interface's, for
    every NumPy array of the pool (views, read-only, 0-d, empty, bfloat16)."""
    arrays = [x for x in POOL if type(x) is np.ndarray]
    assert len(arrays) > 10
    for x in arrays:
        assert warm.data_pointer(x) == x.__array_interface__["data"][0]
    with pytest.raises(TypeError):
        warm.data_pointer(2.5)


def _recording_fast(alloc, out_mod, extents, params, log):
    return _ops._Fast(None, lambda ptrs, values: log.append((list(ptrs), list(values))), alloc,
                      out_mod, tuple(extents), tuple(params))


@needs_warm
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.booleans()),
                min_size=2, max_size=2),
       st.sampled_from(["out", "inplace", "alloc", "alloc-misaligned"]), st.booleans())
def test_calls_run_as_the_python_reference(bounds, how, scalar):
    """Same result, same launch (pointers, slot values), or both None: overlap bounds
    around each input's real offset from the output, in place, allocating (aligned or not),
    with and without a scalar argument."""
    from stridewise.operands.dtypes import ALL_DTYPES

    base = np.zeros(64, np.float32)
    a, b, o = base[0:8], base[8:16], base[16:24]
    args = (a, 2.5) if scalar else (a, b)
    out = None if how != "out" else o
    inplace = how == "inplace"
    key = _ops._fast_key(R, args, out, None, None, inplace)[0]
    ptr = lambda x: x.__array_interface__["data"][0]   # noqa: E731
    target = a if inplace else o
    inputs = [a] if scalar else [a, b]
    extents = [(ptr(x) - ptr(target) + lo, ptr(x) - ptr(target) + hi, same)
               for x, (lo, hi, same) in zip(inputs, bounds)]
    alloc = None
    if how.startswith("alloc"):
        extents = []
        alloc = lambda: (o, ptr(o))   # noqa: E731
    out_mod = (ptr(target if how != "alloc-misaligned" else o) + (how == "alloc-misaligned")) % 16
    params = [ALL_DTYPES["float32"]] if scalar else []
    results = []
    for fast_call in (_ops._fast_call, warm.fast_call):
        log = []
        calls = {key: _recording_fast(alloc, out_mod, extents, params, log)}
        results.append((fast_call(R, args, out, None, None, inplace, calls), log))
    (want, want_log), (got, got_log) = results
    assert got is want and got_log == want_log


@needs_warm
@pytest.mark.parametrize("n", [37, 5000])            # below and above the GIL's release
@pytest.mark.parametrize("scalar", [False, True])
def test_host_launcher_runs_the_kernel_as_pythons(monkeypatch, n, scalar):
    """backends.cpu.bind's compiled launcher: the same kernel over the same record as the
    Python launcher (packing, then ctypes), scalar values packed after the static slots, a
    private record per call (threads share one signature), and bad pointers refused."""
    import threading

    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32) * 50
    b = 2.5 if scalar else rng.standard_normal(n).astype(np.float32) + 3
    out = np.empty(n, np.float32)
    prepared = _ops._call(R, (a, b), out, dry=True)
    kernel = _ops._kernel(prepared)
    host = cpu.bind(kernel, prepared.config, prepared.record, prepared.static)
    monkeypatch.setattr(_compiled, "warm", None)
    python = cpu.bind(kernel, prepared.config, prepared.record, prepared.static)
    assert type(host).__name__ == "HostLauncher" and type(python).__name__ == "function"
    values = [prepared.spec.params[0].slot_value(b)] if scalar else []
    ptr = lambda x: x.__array_interface__["data"][0]   # noqa: E731
    outs = [np.full(n, np.nan, np.float32) for _ in range(8)]
    python([ptr(outs[0]), ptr(a)] + ([] if scalar else [ptr(b)]), values)
    want = np.remainder(a, np.float32(b) if scalar else b)
    assert outs[0].tobytes() == want.tobytes()
    threads = [threading.Thread(target=host, args=([ptr(o), ptr(a)] + ([] if scalar else [ptr(b)]),
                                                   values)) for o in outs[1:]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(o.tobytes() == want.tobytes() for o in outs[1:])
    with pytest.raises(ValueError, match="takes 3 pointers" if not scalar else "takes 2 pointers"):
        host([ptr(out)], values)
    with pytest.raises(ValueError, match="out of range"):
        warm.HostLauncher(0, kernel, b"\0" * 64, 2, 16, struct.Struct("<").pack)


# -- stridewise.launch._torch: torch tensors keyed and allocated in C++ -----------------------------
# (its keys are test_keys_match_the_python_reference's torch items, once it is built)
def _torch_ext():
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    return _compiled.torch_ext()


needs_torch_ext = pytest.mark.skipif(_torch_ext() is None, reason="stridewise.launch._torch is not built")


def test_torch_extension_is_built_for_this_torch():
    torch = pytest.importorskip("torch")
    if os.environ.get("STRIDEWISE_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("STRIDEWISE_PURE_PYTHON=1 chooses the Python warm path")
    ext = _torch_ext()
    assert ext is not None, ("stridewise.launch._torch is not built: install torch first, then "
                             "pip install --no-build-isolation -e . (README.md)")
    assert ext.built_for == torch.__version__
    alloc = _arrays.allocator("torch", ("cpu", -1), (2, 3), DTYPES["float32"])
    assert type(alloc) is ext.Allocator


@needs_torch_ext
@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=4),
       st.sampled_from(["float16", "bfloat16", "float32", "float64", "int32", "int64", "bool"]),
       st.booleans())
def test_allocator_makes_what_new_empty_strided_makes(shape, dtype, inference):
    """The same tensor facts, dispatch keys included, also under torch.inference_mode."""
    import contextlib

    import torch

    shape = tuple(shape)
    template = torch.empty((0,), dtype=getattr(torch, dtype))
    strides = _arrays._dense_strides(shape)
    with torch.inference_mode() if inference else contextlib.nullcontext():
        t, p = _torch_ext().Allocator(template, shape, strides)()
        want = template.new_empty_strided(shape, strides)
    facts = lambda x: (type(x), x.shape, x.stride(), x.dtype, x.device, x.layout,  # noqa: E731
                       x.requires_grad, x.storage_offset(), x.is_inference(),
                       torch._C._dispatch_keys(x))
    assert facts(t) == facts(want) and p == t.data_ptr()


@needs_torch_ext
@pytest.mark.gpu
def test_allocator_on_each_gpu_keeps_the_current_device():
    """On every GPU, with device 0 current: the tensor new_empty_strided makes, on that
    device, and device 0 still current afterwards."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    with torch.cuda.device(0):
        for index in range(torch.cuda.device_count()):
            template = torch.empty((0,), dtype=torch.float16, device=f"cuda:{index}")
            t, p = _torch_ext().Allocator(template, (3, 5), (5, 1))()
            want = template.new_empty_strided((3, 5), (5, 1))
            facts = lambda x: (x.device, x.shape, x.stride(), x.dtype)  # noqa: E731
            assert facts(t) == facts(want)
            assert p == t.data_ptr() and torch.cuda.current_device() == 0


@needs_torch_ext
def test_allocator_rejects_bad_arguments():
    import torch

    ext, template = _torch_ext(), torch.empty(0)
    with pytest.raises(TypeError, match="template must be a torch.Tensor"):
        ext.Allocator(np.empty(0), (2,), (1,))
    with pytest.raises(ValueError, match="shape and strides differ in length"):
        ext.Allocator(template, (2, 3), (1,))
    with pytest.raises(TypeError):
        ext.Allocator(template, (2, "x"), (1, 1))
    with pytest.raises(TypeError, match="takes no arguments"):
        ext.Allocator(template, (2,), (1,))(1)
    with pytest.raises(RuntimeError):              # torch's own error, through its handler
        ext.Allocator(template, (-1,), (1,))()
    with pytest.raises(TypeError, match="strided tensor with storage"):
        ext.Allocator(template.to_sparse(), (2,), (1,))


@needs_warm
@needs_torch_ext
def test_a_fresh_process_keys_torch_tensors_in_cpp(tmp_path):
    """A process's first call loads stridewise.launch._torch for the keys, so warm calls make no
    accessor call (a process that had not imported it first once keyed through them)."""
    code = ("import sys, torch, stridewise as sw\n"
            "a = torch.rand(8, 16) + 1\n"
            "o = torch.empty_like(a)\n"
            "assert 'stridewise.launch._torch' not in sys.modules\n"
            "sw.remainder(a, a + 1, out=o)\n"
            "calls, data_ptr = [], torch.Tensor.data_ptr\n"
            "torch.Tensor.data_ptr = lambda t: calls.append(t) or data_ptr(t)\n"
            "sw.remainder(a, a + 1, out=o)\n"
            "assert not calls, f'{len(calls)} data_ptr calls on a warm call'\n"
            "assert torch.equal(o, torch.remainder(a, a + 1))\n")
    _run_fresh(code, tmp_path)


def test_a_warm_module_from_older_sources_is_not_used(tmp_path):
    """A stridewise.launch._warm without this source's ABI (an in-place build not rebuilt since) is
    left out: the import works and calls take the Python warm path."""
    code = ("import sys, types\n"
            "sys.modules['stridewise.launch._warm'] = types.ModuleType('stridewise.launch._warm')\n"
            "import numpy as np, stridewise as sw\n"
            "from stridewise import _explain\n"
            "from stridewise.launch import compiled as _compiled, pipeline as _ops\n"
            "assert _compiled.warm is None and _ops._warm_call is _ops._fast_call\n"
            "a = np.arange(1.0, 9.0)\n"
            "for _ in range(2):\n"
            "    assert (sw.remainder(a, 3.0) == np.remainder(a, 3.0)).all()\n"
            "assert _explain._warm_path().startswith('Python')\n")
    _run_fresh(code, tmp_path)


def _run_fresh(code: str, cache_dir) -> None:
    """Run `code` in a fresh Python process with its own kernel cache; it must succeed."""
    env = dict(os.environ, STRIDEWISE_CACHE_DIR=str(cache_dir))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# -- the launcher, against a recording stand-in for cuLaunchKernelEx ------------------------
RECORDER = r"""
#include <string.h>
extern "C" {
typedef struct { unsigned grid[3], block[3], smem; void *stream, *attrs; unsigned nattrs; } Config;
static Config seen; static void* kernel; static unsigned char args[512];
static int result = 0, nbytes = 0, count = 0;
int launch_ex(const Config* c, void* f, void** params, void** extra) {
  seen = *c; kernel = f; memcpy(args, params[0], nbytes); count++; return extra ? 1 : result; }
void set_up(int r, int n) { result = r; nbytes = n; count = 0; }
int launched(unsigned* geometry, void** stream, void** f, unsigned char* out) {
  memcpy(geometry, seen.grid, 7 * sizeof(unsigned)); *stream = seen.stream; *f = kernel;
  memcpy(out, args, nbytes); return count; }
}
"""


@pytest.fixture(scope="module")
def recorder(tmp_path_factory):
    d = tmp_path_factory.mktemp("recorder")
    (d / "rec.cpp").write_text(RECORDER)
    subprocess.run([cpu.compiler()[0], "-shared", "-fPIC", "-O1", str(d / "rec.cpp"), "-o",
                    str(d / "rec.so")], check=True)
    return ctypes.CDLL(str(d / "rec.so"))


def _launchers():
    return ["python"] + (["compiled"] if warm is not None else [])


@pytest.mark.parametrize("which", _launchers())
@pytest.mark.parametrize("err", [0, 201, 700])
@pytest.mark.parametrize("device", [0, 1])
def test_launcher_sends_the_record(recorder, monkeypatch, which, err, device):
    """A bound launcher (Python or compiled) sends the slot record, the launch facts, the
    library's current stream and the grid; another device current or an invalid context
    goes to the context-pushing launch, any other error raises."""
    monkeypatch.setattr(cuda, "_driver_ex", lambda: recorder.launch_ex)
    monkeypatch.setattr(_compiled, "warm", warm if which == "compiled" else None)
    slow = []
    monkeypatch.setattr(cuda, "launch", lambda kernel, config, slots: slow.append(slots))
    record = struct.Struct("<QQqqqqd")      # 2 pointers, 4 static slots, 1 value
    static, extra = (1000, 7, 10, 100), b"\x04\0\0\0\x20\0\0\0"
    config = cuda.Config(37, 128, extra, lambda: 0x5150, 0x1000, (4, 32), 0, lambda: device)
    run = cuda.bind(cuda._Kernel(0x2000, 0x3000), config, record, static)
    recorder.set_up(err, record.size + len(extra))
    ptrs, values = [0x7f0000000000, 0x7f0000100040], [2.5]
    want = record.pack(*ptrs, *static, *values) + extra
    if device == 0 and err == 700:
        with pytest.raises(RuntimeError, match="cuLaunchKernel failed.*grid 37, block 128"):
            run(ptrs, values)
    else:
        run(ptrs, values)
    geometry, stream, f = (ctypes.c_uint * 7)(), ctypes.c_void_p(), ctypes.c_void_p()
    got = (ctypes.c_ubyte * len(want))()
    count = recorder.launched(geometry, ctypes.byref(stream), ctypes.byref(f), got)
    assert count == (device == 0)
    if device == 0:
        assert list(geometry) == [37, 1, 1, 128, 1, 1, 0] and stream.value == 0x5150
        assert f.value == 0x3000 and bytes(got) == want
    assert slow == ([want[:record.size]] if device == 1 or err == 201 else [])
    with pytest.raises((ValueError, struct.error)):
        run(ptrs[:1], values)             # a pointer short: an error, nothing launched
    assert recorder.launched(geometry, ctypes.byref(stream), ctypes.byref(f), got) == count


needs_native = pytest.mark.skipif(warm is None or _torch_ext() is None,
                                  reason="stridewise.launch._warm or _torch not built")


def _native_launcher(recorder, monkeypatch, index):
    """bind's compiled launcher with stridewise.launch._torch's cuda_current, against the recorder;
    its Python getters fail the test if called. -> (run, record bytes, launched(), slow)."""
    monkeypatch.setattr(cuda, "_driver_ex", lambda: recorder.launch_ex)
    slow = []
    monkeypatch.setattr(cuda, "launch", lambda kernel, config, slots: slow.append(slots))
    record, static, extra = struct.Struct("<QQqq"), (1000, 7), b"\x04\0\0\0\x20\0\0\0"
    unused = lambda: pytest.fail("a Python getter was called")   # noqa: E731
    config = cuda.Config(37, 128, extra, unused, 0x1000, (4, 32), index, unused,
                         _torch_ext().cuda_current)
    run = cuda.bind(cuda._Kernel(0x2000, 0x3000), config, record, static)
    recorder.set_up(0, record.size + len(extra))
    ptrs = [0x7f0000000000, 0x7f0000100040]

    def launched():
        geometry, stream, f = (ctypes.c_uint * 7)(), ctypes.c_void_p(), ctypes.c_void_p()
        got = (ctypes.c_ubyte * (record.size + len(extra)))()
        return recorder.launched(geometry, ctypes.byref(stream), ctypes.byref(f), got), stream.value or 0
    return lambda: run(ptrs, []), record.pack(*ptrs, *static), launched, slow


@needs_native
@pytest.mark.gpu
@pytest.mark.parametrize("index", [0, 1])
def test_launcher_reads_torchs_device_and_stream_natively(recorder, monkeypatch, index):
    """With device 0 current and a side stream: the launcher for device 0 launches on that
    stream; the one for device 1 takes the context-pushing path."""
    import torch

    run, want, launched, slow = _native_launcher(recorder, monkeypatch, index)
    with torch.cuda.device(0):
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            run()
    if index == 0:
        assert launched() == (1, side.cuda_stream) and not slow
    else:
        assert launched()[0] == 0 and slow == [want]


@needs_native
def test_launcher_reading_torchs_device_without_cuda_raises(recorder, monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("torch has CUDA here (the GPU test covers it)")
    run, _, launched, slow = _native_launcher(recorder, monkeypatch, 0)
    with pytest.raises(RuntimeError):
        run()
    assert launched()[0] == 0 and not slow


def test_explain_names_the_warm_path(monkeypatch):
    import stridewise as sw

    a, b = np.ones((4, 8), np.float32), np.ones(8, np.float32)
    text = str(sw.explain(sw.remainder, a, b))
    assert "warm calls" in text and ("compiled" in text) == (warm is not None)
    monkeypatch.setattr(_compiled, "warm", None)
    assert "warm calls  Python" in str(sw.explain(sw.remainder, a, b))
