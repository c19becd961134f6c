"""The CPU backend's support library: code every kernel of a kind would otherwise compile
again, built once per compiler, flags and header version, and loaded before the kernels.

Today that is the host's outlined exact packs (functors.h `fmod_double_steps_pack`: float32
remainder, fmod and floor_divide, and 16-bit float ops computed through them;
`int64_divide_pack`: int64's, where the CPU lacks AVX-512DQ): a call from every such kernel
anyway, and a third of its build. The library is a verified cache entry
like any kernel, loaded RTLD_GLOBAL so that kernels bind to it. Its functions live in an
inline namespace named after its own cache key (`-DSW_SUPPORT=...`, which the kernels are
built with too), so a kernel binds only to the library of its headers and flags, whatever
else the process has loaded; everything else in it is hidden. Only a disk cache keeps it
past a process (without one, each process would build it first), so without one, with
`STRIDEWISE_SUPPORT=0`, or where its build fails, kernels instantiate the packs themselves.
"""
from __future__ import annotations

import collections
import os
import threading

from stridewise import cache as _cache

__all__ = ["flags"]

SOURCE = ("#include <stridewise/functors.h>\n"
          "#define SW_DEFINE_PACK(P) template void sw::fmod_double_steps_pack<P>"
          "(float*, const float*, const float*);\n"
          "SW_SUPPORT_WIDTHS(SW_DEFINE_PACK)\n"
          "#if !SW_HOST_INT64_DIVISION\n"
          "#define SW_DEFINE_INT64(P) template void sw::int64_divide_pack<sw::kInt64Remainder, P>"
          "(sw::i64*, const sw::i64*, const sw::i64*); template void sw::int64_divide_pack<"
          "sw::kInt64Fmod, P>(sw::i64*, const sw::i64*, const sw::i64*); template void "
          "sw::int64_divide_pack<sw::kInt64FloorDivide, P>(sw::i64*, const sw::i64*, const sw::i64*);\n"
          "SW_SUPPORT_WIDTHS(SW_DEFINE_INT64)\n"
          "#endif\n")

_loaded: dict = {}        # (compiler, fingerprint, flags, libs, headers) -> the -D flags, or ()
builds: collections.Counter = collections.Counter()   # key -> builds by this process
_libraries: list = []     # the loaded libraries, kept for the process
_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get("STRIDEWISE_SUPPORT", "1") != "0" and _cache.enabled()


def flags(cxx: str, version: str, build_flags: tuple, libs: tuple) -> tuple[str, ...]:
    """("-DSW_SUPPORT=<namespace>",) once the support library of these build flags is loaded
    in this process (from the cache, or built); () where there is none."""
    if not enabled():
        return ()
    key = (cxx, version, build_flags, libs, _cache.header_digest())
    with _lock:
        found = _loaded.get(key)
        if found is None:
            found = _loaded[key] = _load(cxx, version, build_flags, libs)
    return found


def _load(cxx: str, version: str, build_flags: tuple, libs: tuple) -> tuple[str, ...]:
    from stridewise.backends import cpu

    key = _cache.cache_key("support", SOURCE, build_flags, libs, "cpu", version, cpu.host_cpu())
    define = (f"-DSW_SUPPORT=sw_support_{key[:16]}",)

    def build() -> bytes:
        return cpu.build_library(cxx, build_flags + define + ("-fvisibility=hidden",), libs,
                                 SOURCE, "the support library")
    try:
        data = _cache.fetch("cpu", key, ".so", build, builds)   # not one of the kernels
        _libraries.append(cpu._dlopen_bytes(data, os.RTLD_GLOBAL | os.RTLD_NOW))
    except (cpu.CompileError, OSError):
        return ()         # the kernels instantiate the packs themselves
    return define
