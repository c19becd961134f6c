"""Reliability and security: each failure once found on the CPU backend, reproduced.

A damaged, foreign or swapped cache entry is a miss that is rebuilt (never loaded, never a
crash); builds are deduplicated across threads and processes; nothing is left in TMPDIR;
arrays whose meaning a raw pointer loses are refused; small input-validation gaps.
"""
import dataclasses
import importlib.util
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
import warnings
from pathlib import Path

import numpy as np
import pytest

import stridewise as sw
from stridewise import cache as _cache
from stridewise.backends import cpu
from oracle import same_bits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import reliability  # noqa: E402  (the fault injection lives with the figures it produces)

FAULTS = reliability.FAULTS


def _child(cache):
    r = reliability.child(cache)
    assert "crash" not in r, r["crash"]
    return r


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A cache holding the child's two kernels, and their keys (float64's first)."""
    return reliability.pristine_cache(tmp_path_factory.mktemp("pristine"))


@pytest.mark.parametrize("kind", FAULTS)
def test_a_damaged_entry_is_a_miss_rebuilt_once(kind, pristine, tmp_path):
    """Issue reproductions: truncate -s 50% C/cpu/*.so used to SIGBUS every later process;
    garbage / wrong-arch / directory / symlink raised in every process; a swapped entry gave
    garbage (or wrote out of bounds); a planted library's constructor ran."""
    if kind == "foreign-owner" and os.geteuid() != 0:
        pytest.skip("only root can give a file away")
    cache = tmp_path / "cache"
    shutil.copytree(pristine[0], cache)
    f64, f32 = (cache / "cpu" / f"{k}.so" for k in pristine[1])
    marker = tmp_path / "constructor-ran"
    reliability.damage(kind, f64, f32, tmp_path, marker)
    r = _child(cache)
    assert r["ok"], r
    assert not marker.exists(), "a foreign library was loaded"
    rebuilt = 2 if kind == "swapped" else 1
    assert len(r["builds"]) == rebuilt and all(n == 1 for _, n in r["builds"]), r
    assert len(r["warnings"]) == rebuilt and all("rebuilding" in w for w in r["warnings"]), r
    assert f64.is_file() and not f64.is_symlink()
    again = _child(cache)                  # replaced: the next process neither builds nor warns
    assert again == {"ok": True, "builds": [], "warnings": []}


def test_verification_checks_key_and_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    k1, k2 = _cache.cache_key("one"), _cache.cache_key("two")
    p1 = _cache.write("cpu", k1, ".so", b"payload one")
    p2 = _cache.write("cpu", k2, ".so", b"payload two")
    assert _cache.read("cpu", k1, ".so") == b"payload one"
    blob = bytearray(p1.read_bytes())
    blob[-1] ^= 1                                              # one flipped bit
    p1.write_bytes(bytes(blob))
    with pytest.warns(_cache.CacheWarning, match="content hash"):
        assert _cache.read("cpu", k1, ".so") is None
    k3 = _cache.cache_key("three")
    shutil.copyfile(p2, tmp_path / "cpu" / f"{k3}.so")          # another key's intact entry
    with pytest.warns(_cache.CacheWarning, match="another key"):
        assert _cache.read("cpu", k3, ".so") is None


def test_one_warning_per_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    k = _cache.cache_key(uuid.uuid4().hex)
    _cache.write("cpu", k, ".so", b"x")
    (tmp_path / "cpu" / f"{k}.so").write_bytes(b"junk")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):
            assert _cache.read("cpu", k, ".so") is None
    assert len([w for w in seen if issubclass(w.category, _cache.CacheWarning)]) == 1


def test_others_writable_cache_dir_is_not_used(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(shared))
    k = _cache.cache_key(uuid.uuid4().hex)
    with pytest.warns(_cache.CacheWarning, match="writable by others.*chmod go-w"):
        assert _cache.fetch("cpu", k, ".so", lambda: b"built") == b"built"
    assert not list(shared.iterdir())
    # an entry planted there is never read
    (shared / "cpu").mkdir()
    (shared / "cpu" / f"{k}.so").write_bytes(b"planted")
    assert _cache.read("cpu", k, ".so") is None


def test_entries_are_private_and_fsynced(tmp_path, monkeypatch):
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path / "c"))
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    path = _cache.write("cpu", _cache.cache_key("p"), ".so", b"x")
    assert synced
    assert (tmp_path / "c").stat().st_mode & 0o077 == 0
    assert path.stat().st_mode & 0o077 == 0


def test_loaded_code_is_a_private_copy(tmp_path, monkeypatch):
    """Loading reads the entry once: clearing the cache after load changes nothing, and two
    libraries loaded one after the other through memfds are two libraries (glibc would hand
    back the first for a reused /proc/self/fd/N path)."""
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    tag = uuid.uuid4().hex
    libs = []
    for value in (11, 22, 33):
        data = cpu.compile(f'extern "C" int v() {{ return {value}; }} // {tag}\n', "v", None)
        libs.append(cpu._dlopen_bytes(data))
        shutil.rmtree(tmp_path / "cpu")
    assert [lib.v() for lib in libs] == [11, 22, 33]


def test_cache_cleared_mid_call(tmp_path, monkeypatch):
    """Issue reproduction: a thread running rmtree on the cache every 2 ms made 27 of 32 cold
    calls raise OSError."""
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    stop = threading.Event()

    def clear():
        while not stop.is_set():
            shutil.rmtree(tmp_path, ignore_errors=True)
            time.sleep(0.002)
    t = threading.Thread(target=clear)
    t.start()
    tag, got = uuid.uuid4().hex, []
    try:
        for value in range(8):
            data = cpu.compile(f'extern "C" int v() {{ return {value}; }} // {tag}\n', "v", None)
            got.append(cpu._dlopen_bytes(data).v())
    finally:
        stop.set()
        t.join()
    assert got == list(range(8))


def test_threads_build_once():
    """Issue reproduction: 16 threads asking for one cold kernel ran g++ 16 times."""
    k = sw.ElementwiseKernel("T x", "T y", f"y = x * 3 + 1; // {uuid.uuid4().hex}", name="t16")
    a = np.arange(1000, dtype=np.float64)
    before = dict(_cache.builds)
    barrier, results = threading.Barrier(16), [None] * 16

    def work(i):
        barrier.wait()
        results[i] = k(a)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(r, a * 3 + 1) for r in results)
    new = {key: n - before.get(key, 0) for key, n in _cache.builds.items() if n != before.get(key)}
    assert list(new.values()) == [1]


PROC = r"""
import json, sys, time
import numpy as np
import stridewise as sw
from stridewise import cache as _cache
k = sw.ElementwiseKernel("T x", "T y", "y = x - 5; // " + sys.argv[2], name="p4")
while time.time() < float(sys.argv[1]):
    time.sleep(0.001)
a = np.arange(100.0)
assert np.array_equal(k(a), a - 5)
print(json.dumps(sum(_cache.builds.values())))
"""


def test_processes_build_once(tmp_path):
    """Issue reproduction: 4 processes sharing a cold cache ran g++ 4 times per kernel."""
    env = dict(os.environ, STRIDEWISE_CACHE_DIR=str(tmp_path))
    start, tag = str(time.time() + 3.0), uuid.uuid4().hex
    procs = [subprocess.Popen([sys.executable, "-c", PROC, start, tag], env=env,
                              stdout=subprocess.PIPE, text=True) for _ in range(4)]
    counts = [int(p.communicate(timeout=300)[0].strip()) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sum(counts) == 1, counts


def test_a_dead_lock_holder_does_not_block(tmp_path, monkeypatch):
    """flock dies with its process: a builder killed mid-build leaves no stale lock."""
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    k = _cache.cache_key(uuid.uuid4().hex)
    lock = _cache._entry("cpu", k, ".so.lock", create=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], "
         "os.O_RDWR | os.O_CREAT); fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); "
         "time.sleep(120)", str(lock)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    done = []
    t = threading.Thread(target=lambda: done.append(_cache.fetch("cpu", k, ".so", lambda: b"b")))
    t.start()
    time.sleep(0.5)
    assert not done                        # waiting on the live holder
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    t.join(timeout=10)
    assert done == [b"b"]


TMP_CHILD = ("import numpy as np, stridewise as sw; "
             "k = sw.ElementwiseKernel('T x', 'T y', 'y = x + 2; // {tag}', name='tmpk'); "
             "assert k(np.ones(3))[0] == 3.0")


@pytest.mark.parametrize("disabled", [False, True], ids=["cache", "disabled-cache"])
def test_no_temporary_directory_is_left(tmp_path, disabled):
    """Issue reproduction: every compiling process left an empty stridewise-XXXX in TMPDIR,
    and STRIDEWISE_DISABLE_CACHE=1 left its private directory with the .so files in it."""
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), STRIDEWISE_CACHE_DIR=str(cache))
    if disabled:
        env["STRIDEWISE_DISABLE_CACHE"] = "1"
    subprocess.run([sys.executable, "-c", TMP_CHILD.format(tag=uuid.uuid4().hex)], env=env,
                   check=True)
    assert not list(tmp.iterdir())
    assert not cache.exists() if disabled else list((cache / "cpu").glob("*.so"))


# -- meanings a raw pointer loses ------------------------------------------------------------
def test_masked_arrays_are_refused():
    """Issue reproduction: sw.add(np.ma.array([1., 2., 3.], mask=[0, 1, 0]), 1.0) returned a
    plain ndarray, the mask dropped."""
    m = np.ma.array([1., 2., 3.], mask=[0, 1, 0])
    with pytest.raises(TypeError, match="masked arrays.*filled"):
        sw.add(m, 1.0)
    out = np.ma.array(np.full(3, -7.0))
    with pytest.raises(TypeError, match="masked"):
        sw.add(np.ones(3), 1.0, out=out)
    assert (out.data == -7.0).all()


try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")


@needs_torch
def test_torch_negative_bit_is_resolved_even_on_the_warm_path(warm_path):
    """Issue reproduction: x = c.conj().imag has the negative bit; sw.add(x, 1.0) gave
    [3, -3, 7] where torch gives [-1, 5, -5]. Built-in ops now compute what torch's own ops
    do with such tensors (the bit resolved into a copy first), as inputs, after a warm entry
    for the same layout, and as out (torch writes the negated values into its memory)."""
    c = torch.tensor([1 + 2j, 3 - 4j, 5 + 6j])
    x = c.conj().imag
    assert x.is_neg()
    assert torch.equal(sw.add(x, 1.0), torch.add(x, 1.0))
    plain = torch.arange(3.0)
    sw.add(plain, 1.0)
    sw.add(plain, 1.0)                     # a warm entry for this layout
    assert torch.equal(sw.add(torch._neg_view(plain), 1.0), torch.add(torch._neg_view(plain), 1.0))
    mine, theirs = torch.full((3,), -7.0), torch.full((3,), -7.0)
    sw.add(plain, 1.0, out=torch._neg_view(mine))
    torch.add(plain, 1.0, out=torch._neg_view(theirs))
    assert torch.equal(mine, theirs) and not torch.equal(mine, torch.full((3,), -7.0))


@needs_torch
def test_torch_conjugate_bit_is_resolved():
    c = torch.tensor([1 + 2j, 3 - 4j])
    for f, g in ((sw.add, torch.add), (sw.multiply, torch.mul)):
        assert torch.equal(f(c.conj(), 1.0), g(c.conj(), 1.0))
        assert torch.equal(f(c, c.conj()), g(c, c.conj()))
    mine, theirs = torch.zeros(2, dtype=c.dtype), torch.zeros(2, dtype=c.dtype)
    sw.multiply(c, 2.0, out=mine.conj())
    torch.mul(c, 2.0, out=theirs.conj())
    assert torch.equal(mine, theirs)
    assert torch.equal(sw.abs(c.conj()), torch.abs(c.conj()))


@needs_torch
def test_requires_grad_is_never_detached_silently(warm_path):
    a = torch.arange(4.0)
    sw.add(a, 1.0)
    sw.add(a, 1.0)
    g = torch.arange(4.0, requires_grad=True)
    r = sw.add(g, 1.0)                     # after warm calls on a plain tensor of the same key
    assert r.requires_grad and r.grad_fn is not None
    r.sum().backward()
    assert torch.equal(g.grad, torch.ones(4))
    with torch.no_grad():
        assert torch.equal(sw.add(g, 1.0), torch.arange(4.0) + 1)
    assert sw.add(g, 1.0).requires_grad    # and again once a no_grad call was remembered


@needs_torch
def test_torch_keyer_fallback_marks_too():
    """stridewise.launch._warm keys tensors through the Python keyer where stridewise.launch._torch is not
    built: a negated view must still miss a plain tensor's warm entry (and get torch's value,
    not the plain one's)."""
    code = ("import sys; sys.modules['stridewise.launch._torch'] = None\n"
            "import torch, stridewise as sw\n"
            "x = torch.arange(3.0); sw.add(x, 1.0); sw.add(x, 1.0)\n"
            "got, want = sw.add(torch._neg_view(x), 1.0), torch.add(torch._neg_view(x), 1.0)\n"
            "assert torch.equal(got, want), (got, want)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@needs_torch
@pytest.mark.parametrize("make,match", [
    (lambda: torch.ones(3).to_sparse(), "to_dense"),
    (lambda: torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8), "dequantize"),
    (lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]), "nested"),
], ids=["sparse", "quantized", "nested"])
def test_tensors_without_plain_strided_data_are_refused(make, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # nested tensors are a prototype
        t = make()
    with pytest.raises(TypeError, match=match):
        sw.add(t, 1.0)


# -- small failures -------------------------------------------------------------------------
def test_tiled_without_a_transposed_operand_is_a_value_error():
    """Issue reproduction: a = np.ones((3, 4), np.float32); sw.add(a, a, algorithm=sw.Tiled())
    leaked StopIteration."""
    a = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="Tiled\\(\\) cannot run this problem.*Auto\\(\\)"):
        sw.add(a, a, algorithm=sw.Tiled())


def test_very_long_kernel_name_builds():
    """Issue reproduction: a very long kernel name raised OSError: File name too long."""
    k = sw.ElementwiseKernel("T x", "T y", "y = x * 2", name="k" * 400)
    a = np.arange(5.0)
    assert np.array_equal(k(a), a * 2)


@pytest.mark.parametrize("params", ["T return", "float and", "T class"])
def test_cpp_keyword_parameter_names_are_refused(params):
    """Issue reproduction: a parameter named `return` gave a misleading compile error."""
    with pytest.raises(ValueError, match="C\\+\\+ keyword"):
        sw.ElementwiseKernel(params, "T y", "y = 1", name="kw")


@pytest.mark.parametrize("params", ["} x", "? x", "1 x"])
def test_punctuation_placeholder_is_refused(params):
    """Issue reproduction: a one-character placeholder accepted punctuation (`} x`)."""
    with pytest.raises(ValueError, match="placeholder letter"):
        sw.ElementwiseKernel(params, "T y", "y = 1", name="ph")


def test_cxx_wrapper_fingerprints_the_compiler_behind_it(tmp_path, monkeypatch):
    """Issue reproduction: with CXX set to a wrapper, the key fingerprinted the wrapper only."""
    wrapper = tmp_path / "cxx"
    wrapper.write_text('#!/bin/sh\nexec "$REAL_CXX" "$@"\n')
    wrapper.chmod(0o755)
    fake = tmp_path / "fake-g++"
    fake.write_text('#!/bin/sh\necho "fake 99.1"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("CXX", str(wrapper))
    prints = []
    for real in (shutil.which("g++"), str(fake)):
        monkeypatch.setenv("REAL_CXX", real)
        cpu.compiler.cache_clear()
        try:
            prints.append(cpu.compiler()[1])
        finally:
            cpu.compiler.cache_clear()
    assert prints[0] != prints[1]
    version = subprocess.run(["g++", "-dumpfullversion"], capture_output=True, text=True).stdout
    assert version.strip() in prints[0] and "fake 99.1" in prints[1]


@pytest.mark.parametrize("level", ["-O0", "-Og"])
def test_kernels_build_unoptimized(tmp_path, monkeypatch, level):
    """STRIDEWISE_CXXFLAGS may lower the optimization (a debugging user): the flat and rows
    loops still compile (their prefetch hints must be constants without unrolling) and stay
    exact."""
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("STRIDEWISE_CXXFLAGS", level)
    a = np.arange(-3000.0, 3000.0).reshape(60, 100)
    b = np.arange(1.0, 101.0)
    assert same_bits(sw.remainder(a, b), np.remainder(a, b))            # rows
    assert same_bits(sw.remainder(a, 7.5), np.remainder(a, 7.5))        # flat


def test_cxxflags_hook_reaches_the_build_and_the_key(tmp_path, monkeypatch):
    from stridewise.backends import _support

    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    src = 'extern "C" int v() { return SW_VALUE; }\n'
    values = []
    before = sum(_cache.builds.values()), sum(_support.builds.values())
    for flag in ("-DSW_VALUE=5", "-DSW_VALUE=6"):
        monkeypatch.setenv("STRIDEWISE_CXXFLAGS", flag)
        values.append(cpu._dlopen_bytes(cpu.compile(src, "v", None)).v())
    # a kernel and a support library (backends/_support.py) each
    assert values == [5, 6] and len(list((tmp_path / "cpu").glob("*.so"))) == 4
    assert (sum(_cache.builds.values()), sum(_support.builds.values())) == (before[0] + 2, before[1] + 2)
    monkeypatch.setenv("STRIDEWISE_CXXFLAGS", "-fno-such-flag-xyz")
    with pytest.raises(cpu.CompileError, match="no-such-flag"):
        cpu.compile(src + "// x\n", "v", None)


@pytest.mark.nvrtc
def test_cubin_entries_are_verified_too(tmp_path, monkeypatch):
    from stridewise.backends import cuda

    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    src = 'extern "C" __global__ void k(float* o) { o[0] = %s; }'
    one, two = cuda.compile(src % "1.0f", "k", "sm_90"), cuda.compile(src % "2.0f", "k", "sm_90")
    e1, e2 = sorted((tmp_path / "cuda").glob("*.cubin"), key=lambda p: p.stat().st_mtime_ns)
    b1, b2 = e1.read_bytes(), e2.read_bytes()
    e1.write_bytes(b2)                                         # swapped
    e2.write_bytes(b1[: len(b1) // 2])                         # truncated
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert cuda.compile(src % "1.0f", "k", "sm_90") == one
        assert cuda.compile(src % "2.0f", "k", "sm_90") == two
    assert len([w for w in seen if issubclass(w.category, _cache.CacheWarning)]) == 2


import fuzz  # noqa: E402  (tools/fuzz.py)


def _key(op="add", dtype="float32", ndim=2):
    return fuzz.Key(op, (dtype, dtype), None, ndim, (("contiguous", 0, (False,) * ndim),) * 2, None)


def test_fuzz_sees_a_wrong_result(monkeypatch):
    """The fuzzer counts a mismatch when a result is off (here: subtract for add), and its
    report says where and how to replay the case."""
    monkeypatch.setattr(fuzz, "keys_for", lambda *a: [_key()])
    monkeypatch.setattr(fuzz.sw, "add", sw.subtract)
    r = fuzz.fuzz(40, 7, per_key=40, log=lambda s: None)
    assert r["cases"] == 40 and r["mismatches"] > 30 and r["bad_keys"] == 1
    assert "at (" in r["failures"][0] and "--case 7:0:" in r["failures"][0]


def test_fuzz_slice_matches_numpy():
    """A bounded slice of the CPU fuzz (fixed seed: 6 kernel keys, 100 cases each)."""
    r = fuzz.fuzz(600, 11, per_key=100, log=print)
    assert r["cases"] == 600 and r["mismatches"] == 0, r["failures"]


def test_fuzz_values_hold_the_hard_ones():
    rng = np.random.default_rng(0)
    f = fuzz.value_pool(rng, "float16", divisor=True)
    assert np.isnan(f).any() and np.isinf(f).any() and (f == 0).any()
    assert ((f != 0) & (np.abs(f) < np.finfo(np.float16).tiny)).any()          # subnormals
    assert (np.abs(f) == np.finfo(np.float16).max).any()
    i = fuzz.value_pool(rng, "int32", divisor=True)
    assert {np.iinfo(np.int32).min, -1, 0} <= set(i.tolist())
    keys = fuzz.keys_for(2026, 100_000, 1000)
    assert {k.op for k in keys} == set(fuzz.OPS)
    assert set(fuzz.DTYPES) <= {d for k in keys for d in k.dtypes}


def test_fuzz_replays_one_case(capsys):
    assert fuzz.replay("11:0:3") == 0
    assert "match" in capsys.readouterr().out


def test_fuzz_cupy_harness(monkeypatch):
    """The CuPy runner's layouts and oracle, with NumPy standing in for CuPy."""
    r = fuzz.fuzz(300, 12, per_key=60, runner=fuzz.cupy_runner(np), lib="cupy", log=print)
    assert r["cases"] == 300 and r["mismatches"] == 0, r["failures"]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_fuzz_torch_harness_on_cpu_tensors():
    """The torch runner (layouts, dtypes, torch's own ops as the oracle) on CPU tensors; the
    GPU run is the same with device="cuda"."""
    r = fuzz.fuzz(300, 13, per_key=60, runner=fuzz.torch_runner("cpu"), lib="torch", log=print)
    assert r["cases"] + r["skipped"] == 300 and r["cases"] > 150 and r["mismatches"] == 0, r


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_fuzz_torch_harness_sees_a_wrong_result(monkeypatch):
    key = dataclasses.replace(_key(), lib="torch")
    monkeypatch.setattr(fuzz, "keys_for", lambda *a: [key])
    monkeypatch.setattr(fuzz.sw, "add", sw.subtract)
    r = fuzz.fuzz(20, 7, per_key=20, runner=fuzz.torch_runner("cpu"), lib="torch", log=lambda s: None)
    assert r["mismatches"] > 15


def test_where_of_uniform_operands_only_compiles():
    """Found by the fuzzer: where() whose operands are all one value broadcast (the scalar
    mode) failed to compile: F::fast was instantiated in a discarded branch."""
    c = np.broadcast_to(np.array(True), (1, 6))
    x = np.broadcast_to(np.array([2], np.int16), (1,))
    y = np.array(-3, np.int16)
    got = sw.where(c, x, y)
    assert got.dtype == np.int16 and np.array_equal(got, np.where(c, x, y))


BOOL_SELECT = r"""
import numpy as np, stridewise as sw
k = sw.ElementwiseKernel("T x, T y", "T z", "z = x < y ? x : y", name="bool_select")
x = np.repeat(np.zeros((1, 6, 7), bool), 2, axis=-1)[..., ::2]
y = np.array([True])
assert np.array_equal(k(x, y), np.where(x < y, x, y)), k(x, y)
"""


@pytest.mark.parametrize("vmath", ["1", "0"])
def test_bool_select_in_a_user_kernel(vmath, tmp_path):
    """Found by the fuzzer (python tools/fuzz.py --case 1:12:0): rows mode, strided x, y one
    broadcast value. GCC 12.2's SLP vectorizer miscompiled it (every element true) in the
    unrolled loop, which user kernels take without vector math (STRIDEWISE_VMATH=0)."""
    env = dict(os.environ, STRIDEWISE_VMATH=vmath, STRIDEWISE_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", BOOL_SELECT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_large_array_oracle_sees_one_wrong_element():
    x, b = reliability.large_operands(3 * reliability.LARGE_COLS + 5)
    assert [reliability.large_value(i) for i in range(50)] == x.reshape(-1)[:50].tolist()
    got = sw.remainder(x, b)
    assert reliability.check_large(x, b, got)[0]
    got[2, 17] += 1
    assert not reliability.check_large(x, b, got)[0]


def x86_cast(v: float, dtype: str) -> int:
    """A float -> integer conversion as x86's truncating conversions define it (Intel SDM,
    CVTTSS2SI: NaN and out-of-range give the "integer indefinite" 0x80...0), in Python
    integers: narrower targets through int32 and wrapped; uint32 / uint64 through the
    signed type of their width, values from 2^(w-1) up after subtracting it."""
    info = np.iinfo(dtype)

    def cvtt(v, bits):
        lo = -(1 << (bits - 1))
        if not math.isfinite(v):
            return lo
        t = math.trunc(v)
        return t if lo <= t < -lo else lo
    if info.bits < 32:
        r = cvtt(v, 32)
    elif info.min < 0:
        r = cvtt(v, info.bits)
    else:
        half = 1 << (info.bits - 1)
        r = cvtt(v - half, info.bits) ^ -half if v >= half else cvtt(v, info.bits)
    r &= (1 << info.bits) - 1                                  # wrap to the width
    return r - (1 << info.bits) if info.min < 0 and r >= 1 << (info.bits - 1) else r


@pytest.mark.parametrize("src", ["float32", "float64", "float16"])
@pytest.mark.parametrize("dst", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                 "uint32", "uint64"])
def test_float_to_int_cast_is_defined(src, dst):
    """UBSan reported float-cast-overflow: NaN -> int was undefined behaviour in C++. The host
    now defines every such cast as x86 does (which is also what NumPy gives on x86): checked
    against that definition written out in Python, vectorized (contiguous), strided and in
    the scalar tail."""
    specials = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, -0.5, 0.5, -1.0, 300.0, -300.0,
                40000.0, -40000.0, 70000.0, 2.0**31, -2.0**31, -2.0**31 - 1e3, 2.0**31 - 128,
                2.0**32, 2.0**32 - 256, 2.0**63, -2.0**63, 2.0**63 - 1024, 2.0**64, -2.0**64,
                1e10, -1e10, 1e30, -1e30, 2147483647.0, -2147483648.5, 4294967295.0]
    rng = np.random.default_rng(5)
    with np.errstate(over="ignore"):
        x = np.concatenate([np.array(specials * 2), rng.standard_normal(500) * 10.0 **
                            rng.integers(0, 22, 500)]).astype(src)
    for xs in (x, x[::-3], x[:7]):
        want = np.array([x86_cast(float(v), dst) for v in xs], dtype=object)
        got = sw.cast(xs, dst)
        assert got.dtype == np.dtype(dst)
        bad = [(xs[i], got[i], want[i]) for i in range(xs.size) if int(got[i]) != want[i]]
        assert not bad, bad[:5]


def test_bad_input_harness_sees_a_silent_run(monkeypatch):
    monkeypatch.setattr(reliability, "ROWS", [])
    cases = {"fine": lambda o: sw.add(o, 1.0, out=o)}
    monkeypatch.setattr(reliability, "_bad_cases", lambda: cases)
    reliability.bad_inputs()
    (r,) = reliability.ROWS
    assert r["held"] == 0 and "no error" in r["detail"]


def test_table_merges_a_gpu_run(tmp_path, monkeypatch):
    """--table: a GPU run's row replaces the CPU run's skipped one; the rest stay."""
    monkeypatch.setattr(reliability, "ROWS", [])
    cpu_run, gpu_run = tmp_path / "cpu" / "r.json", tmp_path / "gpu" / "r.json"
    for f, rows in ((cpu_run, [("fuzz", "CPU", 5, 5, "a"), ("fuzz", "GPU", 0, 0, "skipped")]),
                    (gpu_run, [("fuzz", "GPU", 7, 6, "1 mismatch")])):
        f.parent.mkdir()
        f.write_text(json.dumps([dict(zip(("section", "what", "tried", "held", "detail"), r))
                                 for r in rows]))
    table = reliability.merged_table([cpu_run, gpu_run])
    assert [(r["what"], r["tried"], r["held"]) for r in reliability.ROWS] == [("CPU", 5, 5),
                                                                           ("GPU", 7, 6)]
    assert "1 mismatch [gpu]" in table and "skipped" not in table


def test_reliability_quick_slice(tmp_path):
    """The CI slice of tools/reliability.py: every row holds."""
    proc = subprocess.run([sys.executable, str(Path(reliability.__file__)), "--quick",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    rows = json.loads((tmp_path / "reliability.json").read_text())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert {r["section"] for r in rows} == {"bad input", "cache faults", "concurrency",
                                            "largest array", "fuzz"}
    assert all(r["held"] == r["tried"] > 0 for r in rows), rows


def test_fuzz_runners_keep_0d_operands_0d():
    """The GPU run's CuPy runner once handed stridewise (1,)-shaped copies of 0-d operands
    (np.ascontiguousarray), so its 0-d keys compared a (1,) result with NumPy's (); here the
    CuPy runner (NumPy standing in) replays the 0-d keys of that run bit for bit."""
    keys = [(i, k) for i, k in enumerate(fuzz.keys_for(2026, 10000, 200, "cupy")) if k.ndim == 0]
    assert keys
    run = fuzz.cupy_runner(np)
    for i, key in keys[:4]:
        for j in range(3):
            case = fuzz.make_case(2026, i, j, key)
            assert all(getattr(a, "ndim", 0) == 0 for a in case.args)
            assert run(case) is None, (i, j, key)
