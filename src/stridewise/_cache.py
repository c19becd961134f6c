"""Compile cache: content-addressed artifacts on disk plus an in-process memo.

Keys hash everything that changes the binary: source, options, target, compiler version,
the header library's contents and the package version. Writes go to a temp file and are
renamed into place, so readers never see half an entry; an unreadable entry is a miss.
`STRIDEWISE_CACHE_DIR` moves the cache; `STRIDEWISE_DISABLE_CACHE=1` turns the disk cache
off; a read-only directory falls back to a private temporary one.
"""
from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

__all__ = ["cache_key", "cache_dir", "read", "write", "header_digest", "INCLUDE_DIR"]

INCLUDE_DIR = Path(__file__).parent / "include"


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


@functools.cache
def header_digest() -> str:
    """sha256 over the header library's relative file names and contents.

    Every process hashes the contents (88 KB: about 0.1 ms), so the key follows any edit;
    os.scandir, not Path.rglob, keeps the walk itself cheap on a first call.
    """
    h = hashlib.sha256()
    for rel, path in _header_files():
        h.update(rel.encode())
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def cache_key(*parts) -> str:
    """A hex digest over `parts`, the header library and the package version."""
    from . import __version__

    h = hashlib.sha256()
    for part in (*parts, header_digest(), __version__):
        h.update(repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def enabled() -> bool:
    return os.environ.get("STRIDEWISE_DISABLE_CACHE", "") not in ("1", "true", "yes")


@functools.cache
def _private_dir() -> Path:
    import tempfile   # only writes need it; `import stridewise` stays cheap
    return Path(tempfile.mkdtemp(prefix="stridewise-"))


def cache_dir() -> Path:
    """The directory artifacts live in (a private temp dir when the disk cache is off)."""
    if not enabled():
        return _private_dir()
    env = os.environ.get("STRIDEWISE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "stridewise"


def _path(backend: str, key: str, suffix: str) -> Path:
    return cache_dir() / backend / f"{key}{suffix}"


def read(backend: str, key: str, suffix: str) -> Path | None:
    """Path of a readable, non-empty entry, or None (any problem is a miss)."""
    path = _path(backend, key, suffix)
    try:
        if path.stat().st_size > 0 and os.access(path, os.R_OK):
            return path
    except OSError:
        pass
    return None


def write(backend: str, key: str, suffix: str, data: bytes) -> Path:
    """Store `data` atomically and return its path; fall back to a private directory."""
    for root in (None, _private_dir()):
        path = _path(backend, key, suffix) if root is None else root / backend / f"{key}{suffix}"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            import tempfile
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
            return path
        except OSError:
            continue
    raise OSError(f"cannot write the compiled kernel anywhere (tried {cache_dir()})")
