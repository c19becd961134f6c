"""A precompiled header for the CPU backend: g++ parses the header library (and libstdc++'s
<cmath> under it) once per compiler, flags and header version, not once per kernel.

Parsing those headers is about half of a cold kernel build (docs/decisions.md has the
figures). The header is built once into the kernel cache, a verified entry like any kernel,
and each process writes the verified bytes once into a private directory that its builds
-include from (g++ reads a .gch from the directory of the header it stands for; reading one
straight from a shared cache directory would bypass the verification; a copy per build cost
6-17 ms of writing 12-36 MB). g++ generates the same code with or without it, and skips a
precompiled header it cannot use (it parses the headers instead), so it changes build time
only. `STRIDEWISE_PCH=0` turns it off.
"""
from __future__ import annotations

import collections
import os
import threading
from pathlib import Path

from stridewise import cache as _cache

__all__ = ["include"]

# What every generated kernel includes. Not user.h: with vector math it defines the libmvec
# wrappers (cpu/vmath.h), which a precompiled header would put into every kernel's library;
# user kernels include it themselves.
HEADERS = ("functors.h", "pack.h", "ops.h", "cpu/loops.h")
TEXT = "".join(f"#include <stridewise/{h}>\n" for h in HEADERS)
# A kernel with vector math (math.h's ops, user kernels: cpu/vmath.h) gets a second header that
# adds the intrinsics vmath.h includes, on vmath.h's own condition: parsing <immintrin.h> was
# three quarters of such a kernel's build (0.85 -> 0.24 s). The others keep the smaller one,
# as loading the larger costs them 15-20 ms (0.18 s builds). Its functions are always-inline,
# so a kernel's library is the same bytes with either header or none (tests/test_costs.py).
VECTOR_MATH = ("<stridewise/math.h>", "<stridewise/user.h>")
INTRINSICS = ("#if defined(SW_VMATH) && defined(__x86_64__) && defined(__AVX2__)\n"
              "#include <immintrin.h>\n#endif\n")
NAME = "stridewise_pch.h"

_made: dict = {}          # (compiler, its fingerprint, flags, text, headers) -> the directory
                          # holding the header and its verified .gch, or None
builds: collections.Counter = collections.Counter()   # key -> builds by this process
_lock = threading.Lock()


def enabled(cxx: str) -> bool:
    """Only GCC reads a .gch beside an -include'd header, and only a disk cache keeps the
    precompiled header past this process (without one, building it would cost each process
    more than it saves)."""
    name = os.path.basename(os.path.realpath(cxx))
    return (os.environ.get("STRIDEWISE_PCH", "1") != "0" and _cache.enabled()
            and "g++" in name and "clang" not in name)


def include(cxx: str, version: str, flags: tuple, source: str = "") -> tuple[str, ...]:
    """The flags that make g++ read the precompiled header for `source`; () where there is
    none (turned off, not GCC, or its build failed)."""
    if not enabled(cxx):
        return ()
    text = TEXT + INTRINSICS if any(h in source for h in VECTOR_MATH) else TEXT
    key = (cxx, version, flags, text, _cache.header_digest())   # a header edited mid-process: a new one
    with _lock:
        where = _made.get(key, False)
        if where is False or where is not None and not (where / (NAME + ".gch")).is_file():
            data = _fetch(cxx, version, flags, text)   # first use, or its directory was removed
            where = _made[key] = None if data is None else _place(text, data)
    return () if where is None else ("-include", str(where / NAME))


def _place(text: str, data: bytes) -> Path:
    """A private directory holding the header and the verified .gch beside it, removed when
    the process that made it exits (not a forked child), and by a later process where it
    could not be: a process killed by a signal (a restarted notebook kernel, a timeout, the
    OOM killer) runs no exit handler and would leave its 12-36 MB behind for good."""
    import atexit
    import shutil
    import tempfile

    where = Path(tempfile.mkdtemp(prefix=PREFIX))
    _hold(where)
    _sweep(where)
    (where / NAME).write_text(text)
    (where / (NAME + ".gch")).write_bytes(data)
    pid = os.getpid()
    atexit.register(lambda: os.getpid() == pid and shutil.rmtree(where, ignore_errors=True))
    return where


PREFIX = "stridewise-pch-"
_held: list = []          # the open lock files of this process's directories


def _hold(where: Path) -> None:
    """A shared flock on `where/lock`, held until this process and every child it forked have
    exited (the kernel drops it then, however they ended): the mark of a directory in use."""
    try:
        import fcntl

        fd = os.open(where / "lock.new", os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(fd, fcntl.LOCK_SH)
        os.rename(where / "lock.new", where / "lock")     # only ever seen held
        _held.append(fd)
    except (ImportError, OSError):    # no flock here: the directory is never swept
        pass


def _sweep(mine: Path) -> None:
    """Remove this user's other header directories whose lock no process holds. One without a
    lock file (mid-creation, or a version before the lock, whose live process re-places a
    removed header but could lose a build it had started) goes once it is a day old."""
    import shutil
    import time

    try:
        import fcntl

        entries = list(os.scandir(mine.parent))
    except (ImportError, OSError):
        return
    for e in entries:
        if not e.name.startswith(PREFIX) or e.path == str(mine):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if not e.is_dir(follow_symlinks=False) or st.st_uid != os.getuid():
                continue
        except OSError:
            continue
        try:
            fd = os.open(os.path.join(e.path, "lock"), os.O_RDWR)
        except FileNotFoundError:
            if time.time() - st.st_mtime > 86400:
                shutil.rmtree(e.path, ignore_errors=True)
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)   # no holder left: its owner died
            shutil.rmtree(e.path, ignore_errors=True)
        except OSError:
            pass                                           # in use
        finally:
            os.close(fd)


def _fetch(cxx: str, version: str, flags: tuple, text: str) -> bytes | None:
    import subprocess
    import tempfile

    from stridewise.backends.cpu import host_cpu

    def build() -> bytes:
        with tempfile.TemporaryDirectory(prefix="stridewise-build-") as tmp:
            header, out = Path(tmp) / NAME, Path(tmp) / (NAME + ".gch")
            header.write_text(text)
            cmd = [cxx, *(f for f in flags if f != "-shared"), f"-I{_cache.INCLUDE_DIR}",
                   "-x", "c++-header", str(header), "-o", str(out)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise _Failed(proc.stderr)
            return out.read_bytes()

    key = _cache.cache_key("pch", text, flags, "cpu", version, host_cpu())
    try:
        return _cache.fetch("cpu", key, ".gch", build, builds)   # not one of the kernels
    except _Failed:
        return None        # every kernel parses the headers itself, as without one


class _Failed(Exception):
    """g++ could not precompile the header library."""
