"""CPU backend: g++ builds the generated C++ into a shared library that ctypes loads.

Same shape as every backend: entry_point, compile, load, configure, launch, bind.
"""
from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

from .. import _cache

__all__ = ["entry_point", "compile", "load", "configure", "launch", "bind", "compiler",
           "CompileError"]

# -march=native: kernels are built on the machine that runs them, and the fast fmod needs a
# hardware FMA (1.75 ns an element, 3.5 without); the cache key carries the host CPU so a shared cache stays
# correct. -ffp-contract=off keeps every rounding where the source puts it (exact results).
FLAGS = ("-O3", "-std=c++17", "-fopenmp", "-shared", "-fPIC", "-fno-math-errno", "-march=native",
         "-ffp-contract=off")


class CompileError(RuntimeError):
    """The C++ compiler rejected a generated or user-written kernel."""


def device_key(device) -> None:
    """The CPU has one tuning (its kernels size themselves): no device key."""
    return None


def entry_point(spec, kernels=None) -> str:
    return (f'#include <stridewise/cpu/loops.h>\n'
            f'extern "C" void {spec.entry}(const sw::Slot* s) {{ sw::cpu::{spec.mode}_loop<Op>(s); }}\n')


@functools.cache
def compiler() -> tuple[str, str]:
    """(path, fingerprint) of the C++ compiler; `CXX` overrides g++.

    The fingerprint (resolved path, size, mtime) changes with any compiler upgrade and costs
    one stat, so a warm process never runs the compiler, not even for its version.
    """
    name = os.environ.get("CXX", "g++")
    import shutil   # (with bz2, lzma) not at `import stridewise`: only the CPU backend needs it
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(
            f"no C++ compiler: {name!r} is not on PATH. The CPU backend compiles kernels with g++; "
            "install it (apt-get install g++) or point CXX at one"
        )
    real = os.path.realpath(path)
    st = os.stat(real)
    return path, f"{real}:{st.st_size}:{st.st_mtime_ns}"


@functools.cache
def host_cpu() -> str:
    """The CPU model and feature flags that -march=native compiles for."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags"))][:2]
        return "".join(lines)
    except OSError:
        import platform
        return platform.machine() + platform.processor()


def compile(source: str, name: str, device, options=()) -> Path:
    """Build `source` into a shared library (or find it in the cache) and return its path.

    `options`: NVRTC's fields from a user kernel, which g++ has no use for (its -D macros
    reach g++ through the source)."""
    cxx, version = compiler()
    key = _cache.cache_key(source, FLAGS, "cpu", version, host_cpu())
    hit = _cache.read("cpu", key, ".so")
    if hit is not None:
        return hit
    import subprocess   # only a cold build needs these; a warm first call stays cheap
    import tempfile

    with tempfile.TemporaryDirectory(prefix="stridewise-build-") as tmp:
        src, lib = Path(tmp) / f"{name}.cpp", Path(tmp) / f"{name}.so"
        src.write_text(source)
        cmd = [cxx, *FLAGS, f"-I{_cache.INCLUDE_DIR}", str(src), "-o", str(lib)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"g++ failed on {name}:\n{proc.stderr}")
        # Each build has a content-hash name: dlopen caches by path, and a loaded
        # library must never be overwritten in place.
        return _cache.write("cpu", key, ".so", lib.read_bytes())


def load(path: Path, name: str, device):
    fn = getattr(ctypes.CDLL(str(path)), name)
    fn.argtypes = [ctypes.c_char_p]
    fn.restype = None
    return fn


def configure(spec, plan, alg, device, lib):
    """Launch geometry: the OpenMP loops size themselves, so there is none to fix."""
    return None


def launch(kernel, config, slots: bytes) -> None:
    """Run one kernel over its slot record; ctypes releases the GIL for the call."""
    kernel(slots)


def bind(kernel, config, record, static: tuple):
    """The warm path's launcher for one call signature: run(pointers, scalar values)."""
    pack = record.pack

    def run(ptrs, values):
        kernel(pack(*ptrs, *static, *values))
    return run
