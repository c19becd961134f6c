"""Backends: each compiles generated C++, loads the result and launches it (same file shape)."""
from __future__ import annotations

# Both stdlib only (the driver and compilers load on first use): imported with the package,
# so a first call pays no module import (compiling cuda.py without a .pyc: about 3 ms).
from stridewise.backends import cpu, cuda  # noqa: F401

__all__ = ["get_backend"]


def get_backend(name: str):
    """The backend module for "cpu" or "cuda"."""
    backend = _BACKENDS.get(name)
    if backend is None:
        raise ValueError(f"no backend for device type {name!r}; stridewise runs on cpu and cuda")
    return backend


_BACKENDS = {"cpu": cpu, "cuda": cuda}
