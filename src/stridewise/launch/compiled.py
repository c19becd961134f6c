"""The compiled warm path: the stridewise.launch._warm extension module, or None; and
stridewise.launch._torch (torch tensors keyed and allocated in C++), through `torch_ext()`.

setup.py builds both, optionally: a checkout on PYTHONPATH, an install without a C compiler,
or (for _torch) one without torch at build time has none, and the Python warm path runs
instead. STRIDEWISE_PURE_PYTHON=1 chooses the Python path too. They do the same steps as
_ops._fast_call, backends.cuda.bind's launcher and _arrays' torch keyer and allocator.
"""
from __future__ import annotations

import functools
import os

__all__ = ["warm", "torch_ext"]

_PURE = os.environ.get("STRIDEWISE_PURE_PYTHON", "") not in ("", "0")

# stridewise.launch._warm's interface version (its ABI constant): a module built from older sources
# (an in-place or editable build not rebuilt since) is not used, and the Python path runs.
_WARM_ABI = 5

warm = None
if not _PURE:
    try:
        from stridewise.launch import _warm as warm
    except ImportError:
        pass
    if warm is not None and getattr(warm, "ABI", None) != _WARM_ABI:
        warm = None


@functools.cache
def torch_ext():
    """stridewise.launch._torch, or None (not built, built for another torch, or the pure path).

    Loaded on first use, once a torch tensor is in hand: it imports torch."""
    if _PURE:
        return None
    try:
        from stridewise.launch import _torch
    except ImportError:
        return None
    return _torch
