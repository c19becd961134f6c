"""What a user pays before any kernel runs: imports, the CLI's errors, the package's metadata.

Import time itself is measured, not asserted (a timed test on a shared machine cannot be
trusted); what is asserted is that optional libraries stay unimported until needed.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import stridewise as sw
from stridewise import cli

SRC = Path(sw.__file__).parent
OPTIONAL = ("ml_dtypes", "torch", "cupy", "rich", "matplotlib", "cuda.core", "cuda.bindings",
            "numpy.ma", "dask")


def _run(code: str, **env: str) -> str:
    """`code` in a fresh Python process (its environment: this one's, then `env`): its output."""
    env = {**os.environ, "PYTHONPATH": str(SRC.parent), **env}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_import_and_float_ops_load_no_optional_library():
    code = ("import sys, numpy as np, stridewise as sw\n"
            "loaded = lambda: [m for m in %r if m in sys.modules]\n"
            "print(loaded())\n"
            "a = np.arange(24, dtype=np.float32).reshape(4, 6) - 11\n"
            "assert (sw.remainder(a, 5) == np.remainder(a, np.float32(5))).all()\n"
            "assert (sw.add(a, a[0]) == a + a[0]).all()\n"
            "print(loaded())\n" % (OPTIONAL,))
    assert _run(code).splitlines() == ["[]", "[]"]


# What `import stridewise` leaves for first use: user kernels and fusion (their parsers, the
# hoisting pass), and the build machinery (hashlib, subprocess, json) a warm cache never needs.
ON_FIRST_USE = ("stridewise.kernels.elementwise", "stridewise.kernels.usercall", "stridewise.codegen.hoist",
                "stridewise.kernels.fuse", "hashlib", "json", "subprocess")


def test_import_leaves_user_kernels_fusion_and_the_build_for_first_use():
    code = ("import sys, numpy\n"
            "before = set(sys.modules)\n"
            "import stridewise as sw\n"
            "new = lambda: [m for m in %r if m in sys.modules and m not in before]\n"
            "print(new())\n"
            "from stridewise import ElementwiseKernel, fuse\n"
            "from stridewise.kernels.elementwise import ElementwiseKernel as K\n"
            "assert ElementwiseKernel is K is sw.ElementwiseKernel and sw.evaluate.__module__ == 'stridewise.kernels.fuse'\n"
            "assert {'ElementwiseKernel', 'fuse', 'evaluate'} <= set(dir(sw))\n"
            "print(new())\n" % (ON_FIRST_USE,))
    first, after = _run(code).splitlines()
    assert first == "[]"
    assert after == "['stridewise.kernels.elementwise', 'stridewise.kernels.usercall', 'stridewise.codegen.hoist', 'stridewise.kernels.fuse']"


COLD = r"""
import json, os, subprocess, sys, tempfile
from pathlib import Path
import numpy as np
import stridewise as sw
from stridewise import cache as _cache
from stridewise.codegen import source as _codegen
from stridewise.launch import pipeline as _ops
from stridewise.ops import builtins as _builtins
from stridewise.backends import _pch
from stridewise.backends import cpu
a = np.linspace(-9, 9, 1001)
assert (sw.remainder(a, 2.5) == np.remainder(a, 2.5)).all()
assert np.allclose(sw.sin(a.astype(np.float32)), np.sin(a.astype(np.float32)), atol=1e-6)   # vector math
used = None
if os.environ["STRIDEWISE_PCH"] == "1":     # g++ reads it: -H marks a used header with "!"
    cxx, version = cpu.compiler()
    flags, libs = cpu.build_flags()
    used = []
    for op, args in (("remainder", (a, 2.5)), ("sin", (a.astype(np.float32),))):
        spec = _ops._call(_builtins.OPS[op], args, dry=True).spec
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "k.cpp"
            src.write_text(_codegen.generate(spec, cpu.entry_point))
            inc = _pch.include(cxx, version, flags, src.read_text())
            log = subprocess.run([cxx, *flags, *inc, "-H", f"-I{_cache.INCLUDE_DIR}", str(src),
                                  "-o", str(Path(d) / "k.so"), *libs],
                                 capture_output=True, text=True).stderr
            # read, and <immintrin.h>'s own headers (vector math's) not parsed again
            used.append(log.splitlines()[0] == "! " + inc[1] + ".gch"
                        and "avx2intrin.h" not in log)
print(json.dumps({"pch": sum(_pch.builds.values()), "kernels": sum(_cache.builds.values()),
                  "used": used}))
"""


def test_cold_builds_read_the_precompiled_header_and_build_the_same_library(tmp_path):
    """The header library is precompiled once into the cache, g++ reads it for a kernel, and
    each kernel's library, one with vector math (cpu/vmath.h) among them, is byte for byte
    the one built without it."""
    from stridewise.backends import _pch
    from stridewise.backends import cpu

    if not _pch.enabled(cpu.compiler()[0]):
        pytest.skip("the precompiled header is GCC's (CXX is another compiler)")
    seen = {}
    for pch in ("1", "0"):
        cache = tmp_path / pch
        seen[pch] = json.loads(_run(COLD, STRIDEWISE_CACHE_DIR=str(cache), STRIDEWISE_PCH=pch))
        seen[pch]["entries"] = {p.name: p.read_bytes() for p in (cache / "cpu").iterdir()
                                if not p.name.endswith(".lock")}
    on, off = seen["1"], seen["0"]
    # two headers: the plain one, and the one with vector math's intrinsics for sin's kernel
    assert on["pch"] == 2 and on["kernels"] == off["kernels"] == 2 and off["pch"] == 0
    assert on["used"] == [True, True]
    # and the support library (backends/_support.py), one entry like a kernel's
    assert len([n for n in on["entries"] if n.endswith(".gch")]) == 2 and len(on["entries"]) == 5
    for kernel in off["entries"]:
        assert on["entries"][kernel] == off["entries"][kernel]     # same key, same bytes


SUPPORT = r"""
import json, sys
import numpy as np
import stridewise as sw
from stridewise import cache as _cache
from stridewise.backends import _support
rng = np.random.default_rng(5)
# huge quotients, subnormal divisors, specials: packs the fast path leaves, for the exact
# packs; (4099,) leaves a tail, (64, 33) runs rows
a = np.concatenate([rng.standard_normal(4000) * 1e35, [np.inf, -0.0, np.nan] * 33]).astype(np.float32)
b = np.concatenate([rng.standard_normal(4000) * 1e-40, [2.0, np.inf, 0.0] * 33]).astype(np.float32)
got = [sw.remainder(a, b), sw.fmod(a, b), sw.floor_divide(a[:2112].reshape(64, 33), b[:33]),
       sw.fmod(a[::3], b[::3])]
want = [np.remainder(a, b), np.fmod(a, b), np.floor_divide(a[:2112].reshape(64, 33), b[:33]),
        np.fmod(a[::3], b[::3])]
same = [g.dtype == w.dtype and g.tobytes() == w.tobytes() for g, w in zip(got, want)]
kernels = [p for p in (_cache.cache_dir() / "cpu").glob("*.so")]
bound = sum(b"sw_support_" in _cache.read("cpu", p.stem, ".so") for p in kernels)
print(json.dumps({"same": same, "support": sum(_support.builds.values()),
                  "kernels": sum(_cache.builds.values()), "bound": bound}))
"""


def test_kernels_bind_the_exact_packs_of_the_support_library_built_once(tmp_path):
    """The host's exact packs are built once into the support library, which the float32
    remainder, fmod (dense and strided) and floor_divide kernels call (their libraries name
    its namespace); the next process reads it from the cache; and with
    STRIDEWISE_SUPPORT=0 the kernels instantiate the packs themselves. Results are NumPy's,
    bit for bit, every way."""
    first, again, off = (json.loads(_run(SUPPORT, STRIDEWISE_SUPPORT=support,
                                         STRIDEWISE_CACHE_DIR=str(tmp_path / cache)))
                         for support, cache in (("1", "one"), ("1", "one"), ("0", "off")))
    assert all(first["same"]) and all(again["same"]) and all(off["same"])
    assert (first["support"], first["kernels"]) == (1, 4)
    # 4 kernels and the library itself name the namespace
    assert first["bound"] == 5
    assert (again["support"], again["kernels"], again["bound"]) == (0, 0, 5)
    assert (off["support"], off["kernels"], off["bound"]) == (0, 4, 0)


def test_the_precompiled_header_is_written_again_where_its_directory_went(tmp_path, monkeypatch):
    """A process writes the header once into a private directory; one removed under it (a
    temporary-file cleaner) is written again from the cache, not a failed build."""
    import shutil

    from stridewise.backends import _pch
    from stridewise.backends import cpu

    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    cxx, version = cpu.compiler()
    if not _pch.enabled(cxx):
        pytest.skip("the precompiled header is GCC's (CXX is another compiler)")
    flags = cpu.build_flags()[0]
    first = _pch.include(cxx, version, flags)
    assert first == _pch.include(cxx, version, flags)          # once a process
    assert Path(first[1] + ".gch").read_bytes().startswith(b"gpch")   # GCC's header
    shutil.rmtree(Path(first[1]).parent)
    again = _pch.include(cxx, version, flags)
    assert again != first and Path(again[1]).read_text() == _pch.TEXT
    assert Path(again[1] + ".gch").read_bytes().startswith(b"gpch")


def test_a_killed_process_precompiled_header_is_removed_by_the_next(tmp_path, monkeypatch):
    """A process killed by a signal runs no exit handler; its header directory goes when the
    next process places one. A live process's directory stays, and so does its children's
    use of it after the parent has gone (they hold the lock they forked with); one without
    a lock (an older version's) stays for a day."""
    import signal
    import tempfile

    from stridewise.backends import _pch

    place = ("import sys, time, os\n"
             "from stridewise.backends import _pch\n"
             "where = _pch._place('// text', b'gpch')\n"
             "child = os.fork() if sys.argv[1] == 'fork' else 1\n"
             "if child == 0:\n"
             "    time.sleep(60); os._exit(0)\n"
             "print(where, child, flush=True)\n"
             "time.sleep(60)\n")
    env = {**os.environ, "PYTHONPATH": str(SRC.parent), "TMPDIR": str(tmp_path)}
    procs = {how: subprocess.Popen([sys.executable, "-c", place, how], stdout=subprocess.PIPE,
                                   text=True, env=env) for how in ("killed", "alive", "fork")}
    child = None
    try:
        dirs = {}
        for how, p in procs.items():
            where, pid = p.stdout.readline().split()
            dirs[how], child = Path(where), int(pid) if how == "fork" else child
        assert all((d / (_pch.NAME + ".gch")).read_bytes() == b"gpch" for d in dirs.values())
        procs["killed"].send_signal(signal.SIGKILL)
        procs["fork"].send_signal(signal.SIGKILL)       # its forked child lives on
        procs["killed"].wait(60), procs["fork"].wait(60)
        assert dirs["killed"].is_dir()                  # no exit handler ran
        unlocked = {age: tmp_path / f"{_pch.PREFIX}{age}" for age in ("old", "new")}
        for age, d in unlocked.items():                # an older version's: no lock file
            d.mkdir()
            os.utime(d, (0, 0) if age == "old" else None)
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
        mine = _pch._place("// text", b"gpch")
        assert not dirs["killed"].exists() and not unlocked["old"].exists()
        assert unlocked["new"].is_dir()
        assert dirs["alive"].is_dir() and dirs["fork"].is_dir() and mine.is_dir()
        assert (dirs["fork"] / (_pch.NAME + ".gch")).read_bytes() == b"gpch"
    finally:
        for p in procs.values():
            p.kill()
            p.wait(60)
        if child:
            os.kill(child, signal.SIGKILL)


def test_bfloat16_loads_ml_dtypes_on_first_use():
    """A process that never imported ml_dtypes still gets bfloat16 outputs, bit for bit."""
    code = ("import sys, numpy as np, stridewise as sw\n"
            "x = np.linspace(-3, 3, 37, dtype=np.float32)\n"
            "y = sw.cast(x, 'bfloat16')\n"
            "import ml_dtypes\n"
            "assert y.dtype == ml_dtypes.bfloat16\n"
            "assert (y.view(np.uint16) == x.astype(ml_dtypes.bfloat16).view(np.uint16)).all()\n"
            "print('ok')\n")
    assert _run(code) == "ok"


def test_the_package_runs_without_rich():
    code = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('rich', 'matplotlib'):\n"
            "            raise ImportError('blocked: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import numpy as np, stridewise as sw\n"
            "a = np.arange(10.0) - 5\n"
            "assert (sw.remainder(a, 3.0) == np.remainder(a, 3.0)).all()\n"
            "from stridewise import cli\n"
            "assert cli.main(['info']) == 0\n"
            "print('ok')\n")
    assert _run(code).splitlines()[-1] == "ok"


def test_bench_without_its_extra_is_one_line_naming_the_install(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "rich" else real(name, *a))
    assert cli.main(["bench", "--quick"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "pip install 'stridewise[bench]'" in err


def test_cli_errors_are_one_line_and_debug_shows_the_traceback(capsys):
    assert cli.main(["explain", "8x8", "8x3"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "do not broadcast" in err and "--debug" in err
    with pytest.raises(ValueError, match="do not broadcast"):
        cli.main(["explain", "8x8", "8x3", "--debug"])


def test_cli_rejects_an_unknown_dtype_naming_the_choices(capsys):
    with pytest.raises(SystemExit):
        cli.main(["explain", "8", "8", "--dtype", "float8"])
    err = capsys.readouterr().err
    assert "invalid choice: 'float8'" in err and "float32" in err


def test_info_names_the_compiler_and_its_version():
    from stridewise.backends import cpu
    path, fingerprint = cpu.compiler()
    line = cli.info()["cpu backend"]
    name_version = cli.compiler_version(path)
    want = subprocess.run([path, "-dumpfullversion"], capture_output=True, text=True).stdout.strip()
    assert name_version == f"{os.path.basename(path)} {want}"
    assert line.startswith(name_version + " (") and fingerprint not in line and "-O3" in line


def test_the_package_is_typed():
    assert (SRC / "py.typed").is_file()
    toml = (SRC.parent.parent / "pyproject.toml").read_text()
    assert '"py.typed"' in toml
    public = [getattr(sw, n) for n in sw.__all__]
    functions = [f for f in public if callable(f) and not isinstance(f, type)]
    functions += [sw.ElementwiseKernel.__init__, sw.ElementwiseKernel.__call__]
    assert len(functions) > 20
    for f in functions:
        hints = typing.get_type_hints(f)
        assert "return" in hints, f
        params = [p for p in __import__("inspect").signature(f).parameters if p != "self"]
        assert set(params) <= set(hints), (f, set(params) - set(hints))


def test_rich_and_matplotlib_are_in_the_bench_extra_only():
    import tomllib
    meta = tomllib.loads((SRC.parent.parent / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith(("rich", "matplotlib")) for d in meta["dependencies"])
    bench = meta["optional-dependencies"]["bench"]
    assert any(d.startswith("rich") for d in bench) and any(d.startswith("matplotlib") for d in bench)


LINKER_CHILD = r"""
import json
import numpy as np
import stridewise as sw
from stridewise import cache
from stridewise.backends import _pch, _support, cpu
cpu.fast_linker = lambda: ("-fuse-ld=no-such-linker",)    # found on the PATH, yet failing
before = cpu.build_flags()
x = np.arange(1, 40, 2, dtype=np.float32)     # float32 remainder calls the support library
ok = bool(np.array_equal(sw.remainder(x * 7, 20 - x), np.remainder(x * 7, 20 - x)))
print(json.dumps({"ok": ok, "fell_back": cpu._linker_failed, "same_flags": cpu.build_flags() == before,
                  "builds": [sum(c.values()) for c in (cache.builds, _support.builds, _pch.builds)]}))
"""


def test_a_fast_linker_that_fails_falls_back_to_gnu_ld_under_the_same_keys(tmp_path):
    """A build the fast linker (cpu.fast_linker) fails is retried with GNU ld, which the
    process then keeps. The linker is no part of any cache key (kernels, the support library,
    the precompiled header), so the next process, which tries the fast linker again, finds
    everything built: where ld.gold was installed but failed (the H200 machine's image), each
    process had built one kernel again under the other linker's key, and the support library."""
    first, again = (json.loads(_run(LINKER_CHILD, STRIDEWISE_CACHE_DIR=str(tmp_path)))
                    for _ in range(2))
    assert first == {"ok": True, "fell_back": True, "same_flags": True, "builds": [1, 1, 1]}
    assert again == {"ok": True, "fell_back": False, "same_flags": True, "builds": [0, 0, 0]}
