"""Compile cache: verified artifacts on disk plus an in-process memo.

Keys hash everything that changes the binary: source, options, target, compiler identity,
the header library's contents and the package version. An entry is a header (magic, the key
it was built for, the sha256 of the payload) followed by the payload; a read checks all of
it on the bytes in memory, so a truncated, garbage, foreign or swapped entry is a miss that
is rebuilt and replaced (one CacheWarning), never loaded. Writes are fsynced temp files
renamed into place. Builds are deduplicated: one per key in a process (other threads wait)
and across processes (an flock'ed lock file per key; the kernel drops a dead holder's lock).

`STRIDEWISE_CACHE_DIR` moves the cache; `STRIDEWISE_DISABLE_CACHE=1` turns the disk cache
off (artifacts then live only in memory: nothing is left behind). A directory that is not
the user's own, or is writable by group or others, is not used (one warning): anyone who
can write it could plant code. A read-only directory is read, and builds stay in memory.
"""
from __future__ import annotations

import collections
import contextlib
import os
import stat
import threading
import time
import warnings
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["cache_key", "cache_dir", "read", "write", "fetch", "header_digest", "INCLUDE_DIR",
           "CacheWarning", "builds"]

INCLUDE_DIR = Path(__file__).parent / "include"

# the entry format; part of every key too, so entries of an older format are never looked up
# (an upgrade is a quiet miss, not a warning per kernel)
MAGIC = b"stridew\x01"
_HEADER = len(MAGIC) + 32 + 32          # magic, key (32 hex digits), sha256 of the payload
_MAX_ENTRY = 1 << 30                     # larger than any kernel: a damaged or foreign file
_LOCK_WAIT = 600.0                       # seconds to wait on another process's build

builds: collections.Counter = collections.Counter()   # key -> builds done by this process


def _sha256(data: bytes = b""):
    import hashlib   # OpenSSL's start-up: paid by the first kernel, not by `import stridewise`

    return hashlib.sha256(data)


class CacheWarning(RuntimeWarning):
    """A cache entry or directory could not be used; stridewise rebuilt or skipped it."""


def _header_files() -> list:
    """(relative path, path) of every file under INCLUDE_DIR, in pathlib's sorted order."""
    found, stack = [], [(str(INCLUDE_DIR), "")]
    while stack:
        root, rel = stack.pop()
        with os.scandir(root) as entries:
            for e in entries:
                if e.is_dir():
                    stack.append((e.path, rel + e.name + "/"))
                elif e.is_file():
                    found.append((rel + e.name, e.path))
    return sorted(found, key=lambda f: f[0].split("/"))


_digest: list = [None, None]     # [the headers' stamp, their digest]


def header_digest() -> str:
    """sha256 over the header library's relative file names and contents.

    Every process hashes the contents (88 KB: about 0.1 ms), so the key follows any edit;
    os.scandir, not Path.rglob, keeps the walk itself cheap on a first call. The digest is
    computed again when a header's size or modification time changes, so a header edited
    while a process runs gets kernels (and a precompiled header) of its own text, not the
    text the process started with.
    """
    files = _header_files()
    stamp = tuple((rel, st.st_mtime_ns, st.st_size) for rel, st in ((r, os.stat(p)) for r, p in files))
    if _digest[0] != stamp:
        h = _sha256()
        for rel, path in files:
            h.update(rel.encode())
            with open(path, "rb") as f:
                h.update(f.read())
        _digest[:] = [stamp, h.hexdigest()]
    return _digest[1]


def cache_key(*parts) -> str:
    """A hex digest over `parts`, the header library and the package version."""
    from stridewise import __version__

    h = _sha256()
    for part in (*parts, header_digest(), __version__, MAGIC):
        h.update(repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def enabled() -> bool:
    return os.environ.get("STRIDEWISE_DISABLE_CACHE", "") not in ("1", "true", "yes")


def cache_dir() -> Path:
    """The configured cache directory (whether or not it is usable)."""
    env = os.environ.get("STRIDEWISE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "stridewise"


_warned: set = set()
_warn_lock = threading.Lock()


def _warn(what, message: str) -> None:
    """One CacheWarning per `what` per process."""
    with _warn_lock:
        if what in _warned:
            return
        _warned.add(what)
    warnings.warn(f"stridewise: {message}", CacheWarning, stacklevel=4)


def _unsafe(st: os.stat_result, what: str) -> str | None:
    """Why a directory or entry with this stat may hold files someone else wrote, or None."""
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{what} is owned by uid {st.st_uid}, not by you (uid {os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{what} is writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _root() -> Path | None:
    """The cache directory if it may be used: enabled, the user's own, not writable by others."""
    if not enabled():
        return None
    root = cache_dir()
    for attempt in range(2):     # a directory removed between mkdir and stat is made again
        try:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
            reason = _unsafe(root.stat(), f"the cache directory {root}")
            break
        except FileNotFoundError:
            reason = f"the cache directory {root} keeps disappearing"
        except OSError as e:
            reason = f"the cache directory {root} cannot be used ({e.strerror})"
            break
    if reason is None:
        return root
    _warn(("root", str(root)), f"{reason}; compiled kernels are not cached. Fix: "
          f"chmod go-w {root} (and own it), or set STRIDEWISE_CACHE_DIR to a private directory")
    return None


def _backend_dir(backend: str, create: bool) -> Path | None:
    root = _root()
    if root is None:
        return None
    d = root / backend
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(d, 0o700)
        st = os.lstat(d)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        _warn(("dir", str(d)), f"{d} is not a directory; compiled kernels are not cached. "
              f"Fix: remove it")
        return None
    reason = _unsafe(st, str(d))
    if reason is not None:
        _warn(("dir", str(d)), f"{reason}; compiled kernels are not cached. Fix: chmod go-w {d}")
        return None
    return d


def _entry(backend: str, key: str, suffix: str, create: bool = False) -> Path | None:
    d = _backend_dir(backend, create)
    return None if d is None else d / f"{key}{suffix}"


def _verify(blob: bytes, key: str) -> tuple[bytes | None, str]:
    """(payload, "") when `blob` is an intact entry built for `key`, else (None, why not)."""
    if len(blob) < _HEADER or not blob.startswith(MAGIC):
        return None, "not a stridewise cache entry (truncated, garbage or foreign)"
    stored = blob[len(MAGIC):len(MAGIC) + 32]
    if stored != key.encode():
        return None, f"an entry built for another key ({stored.decode('ascii', 'replace')})"
    payload = memoryview(blob)[_HEADER:]
    if _sha256(payload).digest() != blob[len(MAGIC) + 32:_HEADER]:
        return None, "damaged (its content hash does not match)"
    return bytes(payload), ""


def read(backend: str, key: str, suffix: str) -> bytes | None:
    """The verified payload of entry `key`, read once into memory, or None (a miss).

    A missing entry is a quiet miss; any other problem (not a regular file, not the
    user's, unreadable, damaged, built for another key) is a miss with one warning.
    """
    path = _entry(backend, key, suffix)
    if path is None:
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as e:
        _warn(path, f"cache entry {path} cannot be opened ({e.strerror}); rebuilding it")
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            why = "not a regular file"
        elif st.st_size > _MAX_ENTRY:
            why = f"implausibly large ({st.st_size} bytes)"
        else:
            why = _unsafe(st, "it")
        if why is None:
            with os.fdopen(fd, "rb", closefd=False) as f:
                data, why = _verify(f.read(_MAX_ENTRY + 1), key)
            if data is not None:
                return data
    except OSError as e:
        why = f"unreadable ({e.strerror})"
    finally:
        os.close(fd)
    _warn(path, f"cache entry {path} is {why}; rebuilding it")
    return None


def write(backend: str, key: str, suffix: str, data: bytes) -> Path | None:
    """Store `data` as entry `key` (fsynced, then renamed into place); None where the cache
    is off or cannot be written (the caller keeps its bytes in memory)."""
    for attempt in range(2):     # a directory cleared underneath is made again, once
        path = _entry(backend, key, suffix, create=True)
        if path is None:
            return None
        try:
            import tempfile   # only writes need it; `import stridewise` stays cheap
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        except FileNotFoundError:
            continue
        except OSError:
            return None          # read-only: readers still find what is there
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + key.encode() + _sha256(data).digest())
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            _clear_non_file(path)
            os.replace(tmp, path)
            return path
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return None


def _clear_non_file(path: Path) -> None:
    """A directory under an entry's name cannot be renamed over: move it aside and drop it."""
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            import shutil

            import tempfile
            aside = Path(tempfile.mkdtemp(dir=path.parent, prefix=".trash-"))
            os.replace(path, aside / "entry")
            shutil.rmtree(aside, ignore_errors=True)


_locks: dict = {}
_locks_guard = threading.Lock()


@contextlib.contextmanager
def _building(backend: str, key: str, suffix: str) -> Iterator[None]:
    """Hold the build of `key`: a thread lock in this process, an flock across processes.

    flock locks die with their process, so a crashed builder leaves no stale lock; a lock
    held past _LOCK_WAIT (a hung builder) is given up on, and this process builds too.
    """
    with _locks_guard:
        lock = _locks.setdefault((backend, key), threading.Lock())
    with lock:
        fd = _flock(backend, key, suffix)
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)     # releases the flock


def _flock(backend: str, key: str, suffix: str) -> int | None:
    try:
        import fcntl
    except ImportError:
        return None
    path = _entry(backend, key, suffix + ".lock", create=True)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    deadline, pause = time.monotonic() + _LOCK_WAIT, 0.002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                _warn(path, f"{path} has been locked for {_LOCK_WAIT:.0f} s; building anyway")
                os.close(fd)
                return None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        except OSError:          # no flock on this filesystem: build unlocked
            os.close(fd)
            return None


_built: dict = {}    # (backend, key) -> bytes built while the disk cache is off or read-only


def fetch(backend: str, key: str, suffix: str, build: Callable[[], bytes],
          counter: collections.Counter | None = None) -> bytes:
    """The verified bytes of entry `key`, built by `build()` on a miss, once per key across
    threads and processes (a waiter reads what the builder stored). A build is counted in
    `counter` (default `builds`, the kernels')."""
    data = read(backend, key, suffix)
    if data is not None:
        return data
    with _building(backend, key, suffix):
        data = _built.get((backend, key)) or read(backend, key, suffix)
        if data is None:
            data = build()
            (builds if counter is None else counter)[key] += 1
            if write(backend, key, suffix, data) is None:
                _built[(backend, key)] = data   # no disk cache: other threads take it here
    return data

