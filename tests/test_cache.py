"""Compile cache and CPU backend: atomic writes, misses on bad entries, env switches, memo."""
import os
import subprocess
import sys

import numpy as np
import pytest

from stridewise import cache as _cache
from stridewise.backends import cpu

SRC = 'extern "C" void f(const char* s) {}\n'


def test_write_is_atomic_and_read_misses_on_bad_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    key = _cache.cache_key("x")
    assert _cache.read("cpu", key, ".so") is None
    path = _cache.write("cpu", key, ".so", b"abc")
    assert path.read_bytes().endswith(b"abc") and _cache.read("cpu", key, ".so") == b"abc"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")]
    path.write_bytes(b"")                                      # truncated entry: a miss
    with pytest.warns(_cache.CacheWarning, match="truncated"):
        assert _cache.read("cpu", key, ".so") is None


def test_key_covers_source_options_and_headers():
    assert _cache.cache_key("a", ("-O3",)) != _cache.cache_key("b", ("-O3",))
    assert _cache.cache_key("a", ("-O3",)) != _cache.cache_key("a", ("-O2",))
    assert len(_cache.header_digest()) == 64


def test_read_only_dir_is_read_and_builds_stay_in_memory(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(ro))
    key = _cache.cache_key("ro")
    _cache.write("cpu", key, ".so", b"x")
    (ro / "cpu").chmod(0o500)
    if os.access(ro / "cpu", os.W_OK):                         # root ignores permissions
        pytest.skip("running as root: a read-only directory is still writable")
    assert _cache.read("cpu", key, ".so") == b"x"
    assert _cache.write("cpu", _cache.cache_key("ro2"), ".so", b"y") is None
    assert _cache.fetch("cpu", _cache.cache_key("ro3"), ".so", lambda: b"z") == b"z"


def test_disable_switch_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("STRIDEWISE_DISABLE_CACHE", "1")
    assert _cache.write("cpu", _cache.cache_key("off"), ".so", b"x") is None
    assert _cache.fetch("cpu", _cache.cache_key("off"), ".so", lambda: b"x") == b"x"
    assert not list(tmp_path.iterdir())


def test_cpu_build_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    # the kernels' entries alone: a process's first build in a cache also builds the support
    # library there (an entry of its own: tests/test_costs.py)
    monkeypatch.setenv("STRIDEWISE_SUPPORT", "0")
    first = cpu.compile(SRC, "f", None)
    (entry,) = (tmp_path / "cpu").glob("*.so")
    mtime = entry.stat().st_mtime_ns
    assert cpu.compile(SRC, "f", None) == first and entry.stat().st_mtime_ns == mtime
    assert cpu.compile(SRC + "// other\n", "f", None) == first   # same binary, second entry
    assert len(list((tmp_path / "cpu").glob("*.so"))) == 2
    assert first[:4] == b"\x7fELF"


def test_compile_error_and_missing_compiler(monkeypatch, tmp_path):
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    with pytest.raises(cpu.CompileError, match="g\\+\\+ failed"):
        cpu.compile("this is not C++", "bad", None)
    cpu.compiler.cache_clear()
    monkeypatch.setenv("CXX", "no-such-compiler-xyz")
    try:
        with pytest.raises(RuntimeError, match="no C\\+\\+ compiler.*install it"):
            cpu.compiler()
    finally:
        cpu.compiler.cache_clear()


def test_warm_process_does_not_recompile(tmp_path):
    """A second process finds every kernel on disk: no compiler call."""
    code = ("import numpy as np, stridewise as sw; "
            "r = sw.remainder(np.arange(10.0).reshape(2, 5), np.arange(1.0, 6.0)); "
            "assert r[1, 4] == 4.0")
    env = dict(os.environ, STRIDEWISE_CACHE_DIR=str(tmp_path))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    trap = ("import subprocess\n"
            "def run(*a, **k): raise AssertionError('compiler called in a warm process')\n"
            "subprocess.run = run\n")
    subprocess.run([sys.executable, "-c", trap + code], env=env, check=True)


def test_in_process_memo():
    import stridewise as sw
    from stridewise.launch import pipeline as _ops

    a, b = np.ones((3, 700), np.float32), np.ones(700, np.float32)
    sw.remainder(a, b)
    n = len(_ops._KERNELS)
    for _ in range(3):
        sw.remainder(a, b)
    assert len(_ops._KERNELS) == n


# -- the warm path: a repeated signature launches from the raw arguments --------------------
def _libs():
    libs = [("numpy", np.asarray)]
    try:
        import torch
        libs.append(("torch", torch.from_numpy))
    except ImportError:
        pass
    return libs


@pytest.mark.parametrize("lib,wrap", _libs(), ids=[n for n, _ in _libs()])
def test_warm_calls_take_the_fast_path(lib, wrap, warm_path):
    """After one call, the same signature runs through the warm path (out=, allocating, in
    place, a Python scalar, a user kernel's out list), with the results of the full path."""
    import stridewise as sw
    from stridewise.launch import pipeline as _ops
    from stridewise.ops import builtins as _builtins

    R = _builtins.OPS["remainder"]
    a = wrap(np.linspace(-7, 7, 3 * 700, dtype=np.float32).reshape(3, 700))
    b = wrap(np.linspace(1, 3, 700, dtype=np.float32))
    want = np.remainder(np.asarray(a), np.asarray(b)) if lib == "numpy" else None
    out = wrap(np.zeros((3, 700), np.float32))
    for call, fast in (
            (lambda: sw.remainder(a, b, out=out),
             lambda: warm_path(R, (a, b), out, None, None, False, _ops._CALLS)),
            (lambda: sw.remainder(a, b),
             lambda: warm_path(R, (a, b), None, None, None, False, _ops._CALLS)),
            (lambda: sw.remainder(a, 2.5, out=out),
             lambda: warm_path(R, (a, 2.5), out, None, None, False, _ops._CALLS))):
        first = call()
        got = fast()
        assert got is not None and type(got) is type(first)
        assert np.array_equal(np.asarray(got), np.asarray(first))
    if want is not None:
        assert np.array_equal(np.asarray(sw.remainder(a, b)), want)
    x = wrap(np.linspace(-7, 7, 3 * 700, dtype=np.float32).reshape(3, 700))
    sw.remainder_(x, b)
    assert warm_path(R, (x, b), None, None, None, True, _ops._CALLS) is x
    k = sw.ElementwiseKernel("T x, T y", "T z", "z = x + y", name="warm_add")
    z = wrap(np.zeros((3, 700), np.float32))
    assert k(a, b, out=z) is z
    assert warm_path(k, [a, b], [z], None, None, False, k._calls) is z
    assert np.array_equal(np.asarray(z), np.asarray(a) + np.asarray(b))


@pytest.mark.parametrize("lib,wrap", _libs(), ids=[n for n, _ in _libs()])
def test_warm_path_still_rejects_partial_overlap(lib, wrap, warm_path):
    """A warm signature (same layout and alignment) with an out that partially overlaps an
    input goes to the full check: torch raises, NumPy computes as if from copies of the
    inputs (its ufuncs buffer); an out identical to the input runs."""
    import stridewise as sw

    base = wrap(np.full(256, 42, np.float32))
    b = wrap(np.ones(5, np.float32) * 3)
    x, ok = base[0:20].reshape(4, 5), base[128:148].reshape(4, 5)   # 512 bytes apart
    sw.remainder(x, b, out=ok)
    sw.remainder(x, b, out=ok)                                        # warm
    bad = base[4:24].reshape(4, 5)                                    # 16 bytes on: same key
    if lib == "numpy":
        want = np.remainder(np.asarray(x).copy(), np.asarray(b))
        assert sw.remainder(x, b, out=bad) is bad
        assert np.array_equal(np.asarray(bad), want)
        base[:24] = 42
    else:
        with pytest.raises(ValueError, match="partially overlaps"):
            sw.remainder(x, b, out=bad)
        assert np.all(np.asarray(base)[20:24] == 42)
    xx = base[64:84].reshape(4, 5)
    assert sw.remainder(xx, b, out=xx) is xx                          # identical: allowed
    assert np.all(np.asarray(xx) == 0)


def test_header_edited_mid_process_builds_from_its_new_text(tmp_path):
    """A header library edited while a process runs: the digest follows the edit, and the next
    kernel builds against a precompiled header of the new text (with the first one's, g++ saw
    both versions: 'multiple definition of enum Convention')."""
    code = f"""
import os, shutil, time
from pathlib import Path
import numpy as np
from stridewise import cache
inc = Path({str(tmp_path)!r}) / "include"
shutil.copytree(cache.INCLUDE_DIR, inc)
cache.INCLUDE_DIR = inc
import stridewise as sw
before = cache.header_digest()
assert (sw.add(np.arange(5.0), 1.0) == np.arange(5.0) + 1).all()
time.sleep(0.01)
with open(inc / "stridewise" / "types.h", "a") as f:
    f.write("\\nnamespace sw {{ enum EditedMidProcess {{ kEdited = 1 }}; }}\\n")
assert cache.header_digest() != before
assert (sw.multiply(np.arange(5.0), 3.0) == np.arange(5.0) * 3).all()
print("ok")
"""
    env = {**os.environ, "STRIDEWISE_CACHE_DIR": str(tmp_path / "cache"), "STRIDEWISE_PCH": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
