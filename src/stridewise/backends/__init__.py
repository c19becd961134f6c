"""Backends: each compiles generated C++, loads the result and launches it (same file shape)."""
from __future__ import annotations

import importlib

from . import cpu  # noqa: F401 - stdlib only; imported with the package so a first call pays no imports

__all__ = ["get_backend"]


def get_backend(name: str):
    """The backend module for "cpu" or "cuda"."""
    if name not in ("cpu", "cuda"):
        raise ValueError(f"no backend for device type {name!r}; stridewise runs on cpu and cuda")
    return importlib.import_module(f".{name}", __name__)
