"""CPU backend: g++ builds the generated C++ into a shared library that ctypes loads.

Same shape as every backend: entry_point, compile, load, configure, launch, bind.
"""
from __future__ import annotations

import ctypes
import functools
import os
import re
import threading
from pathlib import Path

from stridewise import cache as _cache
from stridewise.backends import _pch, _support
from stridewise.codegen.source import record_template

__all__ = ["entry_point", "compile", "load", "configure", "launch", "bind", "compiler",
           "CompileError"]

# -march=native: kernels are built on the machine that runs them, and the fast fmod needs a
# hardware FMA (1.75 ns an element, 3.5 without); the cache key carries the host CPU so a shared cache stays
# correct. -ffp-contract=off keeps every rounding where the source puts it (exact results).
# -fno-trapping-math: no kernel reads the floating-point exception flags, and without it GCC
# keeps floor, ceil and trunc scalar (float32 floor at 2^16: 0.17x torch CPU); it changes no
# result. -mprefer-vector-width=512: GCC's vectors as wide as the headers' own (types.h
# HostLanes: 16 lanes where AVX-512 is on), whatever -mtune's preference; where they differed,
# every pack stalled on store forwarding. Without AVX-512 it changes nothing.
FLAGS = ("-O3", "-std=c++17", "-fopenmp", "-shared", "-fPIC", "-fno-math-errno",
         "-fno-trapping-math", "-march=native", "-mprefer-vector-width=512", "-ffp-contract=off")


class CompileError(RuntimeError):
    """The C++ compiler rejected a generated or user-written kernel."""


def device_key(device) -> None:
    """The CPU has one tuning (its kernels size themselves): no device key."""
    return None


def entry_point(spec, kernels=None) -> str:
    """The extern "C" loop: the mode's CPU template over the slot record."""
    from stridewise import modes

    k = modes.get(spec.mode).kernel("cpu")
    include = f"#include <{k.header}>\n" if k.header else ""
    return (f'{include}{k.source}'
            f'extern "C" void {spec.entry}(const sw::Slot* s) {{ {k.template}<Op>(s); }}\n')


@functools.cache
def compiler() -> tuple[str, str]:
    """(path, fingerprint) of the C++ compiler; `CXX` overrides g++.

    The fingerprint of the default g++ (resolved path, size, mtime) changes with any compiler
    upgrade and costs one stat, so a warm process never runs the compiler. A `CXX` the user
    set, or a compiler that resolves to a wrapper (a script, ccache), may hide the real
    compiler behind it: its version output and its cc1plus are fingerprinted too.
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
    fingerprint = f"{real}:{st.st_size}:{st.st_mtime_ns}"
    if "CXX" in os.environ or not _plain_compiler(real):
        fingerprint += ";" + _probe(path)
    return path, fingerprint


def _plain_compiler(real: str) -> bool:
    """Whether `real` is an ELF compiler driver itself, not a script or a caching wrapper."""
    base = os.path.basename(real)
    if any(w in base for w in ("ccache", "distcc", "icecc")):
        return False
    try:
        with open(real, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _probe(cxx: str) -> str:
    """What the compiler behind `cxx` says it is: --version, -dumpfullversion and the stat of
    the cc1plus it runs (the same wrapper can front another compiler tomorrow)."""
    import subprocess

    def ask(*args):
        try:
            return subprocess.run([cxx, *args], capture_output=True, text=True,
                                  timeout=60).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    parts = [ask("--version"), ask("-dumpfullversion")]
    cc1 = ask("-print-prog-name=cc1plus")
    if os.path.isabs(cc1) and os.path.exists(cc1):
        real = os.path.realpath(cc1)
        st = os.stat(real)
        parts.append(f"{real}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def extra_flags() -> tuple[str, ...]:
    """`STRIDEWISE_CXXFLAGS`, split like a shell would: appended to every build (and to its
    cache key), e.g. "-fsanitize=address,undefined" for a sanitizer run."""
    import shlex

    return tuple(shlex.split(os.environ.get("STRIDEWISE_CXXFLAGS", "")))


@functools.cache
def vector_math() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(defines, link flags) that give user kernels glibc's vector math (cpu/vmath.h): where
    libmvec loads and has the routines vmath.h calls, and STRIDEWISE_VMATH is not "0";
    ((), ()) elsewhere, and the operation calls libm as written. A dlopen, not a compile: a
    warm process pays no build for the probe."""
    if os.environ.get("STRIDEWISE_VMATH", "1") == "0":
        return (), ()
    try:
        lib = ctypes.CDLL("libmvec.so.1")
        for name in ("_ZGVbN4v_tanhf", "_ZGVbN2vv_pow", "_ZGVdN8v_expf", "_ZGVeN16v_sinf"):
            getattr(lib, name)
    except (OSError, AttributeError):
        return (), ()
    return ("-DSW_VMATH=1",), ("-l:libmvec.so.1",)


@functools.cache
def fast_divider() -> tuple[str, ...]:
    """("-DSW_FAST_IDIV=1",) on the CPUs whose integer divider beats int64's vector forms for
    the lanes they leave (functors.h int64_divide_pack), else (). Measured: AMD Zen 4 (family
    0x19, models 0x10-0x1f, 0x60-0x7f, 0xa0-0xaf), `/` 24-31% faster; Zen 3, the vector form
    13% faster. Other CPUs keep the vector form until measured. STRIDEWISE_CXXFLAGS (appended
    after) overrides either way: -DSW_FAST_IDIV=0 or 1."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if not line.strip():
                    break                      # the first processor's block
                fields[key.strip()] = value.strip()
        vendor, family, model = fields["vendor_id"], int(fields["cpu family"]), int(fields["model"])
    except (OSError, KeyError, ValueError):
        return ()
    zen4 = vendor == "AuthenticAMD" and family == 0x19 and (
        0x10 <= model <= 0x1f or 0x60 <= model <= 0x7f or 0xa0 <= model <= 0xaf)
    return ("-DSW_FAST_IDIV=1",) if zen4 else ()


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


# GCC 12.2 at -O3 miscompiles a vectorized select over bool lanes (a user kernel's
# `z = x < y ? x : y` in rows mode gave true for every element; tools/fuzz.py --case 1:12:0):
# a kernel that reads bool operands builds without SLP vectorization, which the packs of the
# other dtypes keep. A bool result alone (the comparisons, isnan, the logical ops of numbers)
# keeps it: without SLP their 4- and 8-byte operands were read element by element into a
# stack copy that the vector compares read back whole (float32 less 0.4x torch CPU).
# SW_NO_SLP tells the headers: such a kernel moves every pack as one vector of bytes and
# widens its packs to 64 bytes of bool (pack.h, cpu/loops.h wide_elements).
_BOOL_LANES = re.compile(r"= f\([^)]*\bbool\b")
_NO_SLP = ("-fno-tree-slp-vectorize", "-DSW_NO_SLP=1")


@functools.cache
def fast_linker() -> tuple[str, ...]:
    """-fuse-ld= for a linker faster than GNU ld where one is installed (mold, lld, gold), else
    (). Linking is a fifth of a cold kernel build with GNU ld (0.05-0.07 of 0.27 s; gold 0.01:
    docs/decisions.md); the code it links is the compiler's either way, so the linker is no
    part of any cache key. A build the linker fails retries with GNU ld (`build_library`)."""
    import shutil

    for name in ("mold", "lld", "gold"):
        if shutil.which(f"ld.{name}"):
            return (f"-fuse-ld={name}",)
    return ()


_linker_failed = False      # a build failed with fast_linker() and passed without: use ld


def build_flags() -> tuple[tuple, tuple]:
    """(g++ flags, libraries to link) of every kernel build: FLAGS, vector math where the host
    has it, STRIDEWISE_CXXFLAGS, and `-DSW_SUPPORT=...` naming the support library built with
    the rest (_support; loaded here, before any kernel that calls it). What the cache keys
    hold; the linker is build_library's."""
    defines, libs = vector_math()
    flags = FLAGS + defines + fast_divider() + extra_flags()
    return flags + _support.flags(*compiler(), flags, libs), libs


def compile(source: str, name: str, device, options=()) -> bytes:
    """Build `source` into a shared library (or find it, verified, in the cache): its bytes.

    `options`: NVRTC's fields from a user kernel, which g++ has no use for (its -D macros
    reach g++ through the source)."""
    cxx, version = compiler()
    flags, libs = build_flags()
    if _BOOL_LANES.search(source.split("\n", 1)[0]):    # codegen's first line: the operands
        flags += _NO_SLP
    key = _cache.cache_key(source, flags + libs, "cpu", version, host_cpu())

    def build() -> bytes:
        pch = _pch.include(cxx, version, flags, source)   # the headers, parsed once
        return build_library(cxx, flags + pch, libs, source, name)
    return _cache.fetch("cpu", key, ".so", build)


def build_library(cxx: str, flags: tuple, libs: tuple, source: str, name: str) -> bytes:
    """g++ `flags` over `source`, linked with `libs` (by fast_linker() until it fails once in
    this process, then GNU ld): the shared library's bytes."""
    global _linker_failed
    import subprocess   # only a cold build needs these; a warm first call stays cheap
    import tempfile

    with tempfile.TemporaryDirectory(prefix="stridewise-build-") as tmp:
        # fixed file names: a kernel's name may be longer than a file name can be
        src, lib = Path(tmp) / "kernel.cpp", Path(tmp) / "kernel.so"
        src.write_text(source)
        # the output named relative to the build directory: gold writes the name it is
        # given into the library, and the same source must give the same bytes
        cmd = [cxx, *flags, f"-I{_cache.INCLUDE_DIR}", str(src), "-o", lib.name, *libs]
        linker = () if _linker_failed else fast_linker()
        proc = subprocess.run([cxx, *linker, *cmd[1:]], capture_output=True, text=True, cwd=tmp)
        if proc.returncode != 0 and linker and str(src) not in proc.stderr:
            # not an error in the source: the same build with GNU ld, once a process
            retry = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
            if retry.returncode == 0:
                _linker_failed = True
            proc = retry
        if proc.returncode != 0:
            raise CompileError(f"g++ failed on {name}:\n{proc.stderr}")
        return lib.read_bytes()


def load(data: bytes, name: str, device):
    """The entry `name` of the shared library `data` (verified bytes, loaded from a private
    in-memory copy: no later change to the cache can reach the loaded code)."""
    fn = getattr(_dlopen_bytes(data), name)
    fn.argtypes = [ctypes.c_char_p]
    fn.restype = None
    return fn


_fd_uses: dict = {}          # memfd number -> times a library was loaded through it
_dl_lock = threading.Lock()


def _dlopen_bytes(data: bytes, mode: int = ctypes.DEFAULT_MODE) -> ctypes.CDLL:
    """dlopen a library from memory: a memfd (Linux), else a private temp file, unlinked.

    glibc's dlopen returns an already-loaded library whose name matches, and a closed memfd's
    number comes back for the next one, so each load through a reused number spells its path
    differently ("/proc/self/fd/../fd/N"): the same file, a name never seen before.
    """
    with _dl_lock:
        if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
            try:
                fd = os.memfd_create("stridewise-kernel", os.MFD_CLOEXEC)
            except OSError:
                fd = -1
            if fd >= 0:
                try:
                    _write_all(fd, data)
                    uses = _fd_uses.get(fd, 0)
                    if uses < 500:   # PATH_MAX bounds the spellings
                        path = "/proc/self/fd" + "/../fd" * uses + f"/{fd}"
                        lib = ctypes.CDLL(path, mode)
                        _fd_uses[fd] = uses + 1
                        return lib
                except OSError:
                    pass     # a kernel that forbids executing memfds: the temp file below
                finally:
                    os.close(fd)
        import tempfile

        with tempfile.TemporaryDirectory(prefix="stridewise-load-") as tmp:
            path = os.path.join(tmp, "kernel.so")
            with open(path, "wb") as f:
                f.write(data)
            return ctypes.CDLL(path, mode)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def configure(spec, plan, alg, device, lib):
    """Launch geometry: the OpenMP loops size themselves, so there is none to fix."""
    return None


def launch(kernel, config, slots: bytes) -> None:
    """Run one kernel over its slot record; ctypes releases the GIL for the call."""
    kernel(slots)


def bind(kernel, config, record, static: tuple):
    """The warm path's launcher for one call signature: run(pointers, scalar values).

    stridewise.launch._warm's HostLauncher where that is built: the record with its static
    slots packed once, the kernel's entry called from C (a warm out= call 1.3 -> 0.8 us);
    else packing and a ctypes call per call."""
    from stridewise.launch.compiled import warm

    if warm is not None:
        template, nptr, values, at = record_template(record, static)
        return warm.HostLauncher(ctypes.cast(kernel, ctypes.c_void_p).value, kernel,
                                 bytes(template), nptr, at, values.pack)
    pack = record.pack

    def run(ptrs, values):
        kernel(pack(*ptrs, *static, *values))
    return run
