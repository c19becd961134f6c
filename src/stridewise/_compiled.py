"""The compiled warm path: the stridewise._warm extension module, or None.

setup.py builds it (optionally: a checkout on PYTHONPATH, or an install without a C compiler,
has none) and the Python warm path runs instead; STRIDEWISE_PURE_PYTHON=1 chooses the Python
path too. It does the same steps as _ops._fast_call and backends.cuda.bind's launcher.
"""
from __future__ import annotations

import os

__all__ = ["warm"]

warm = None
if os.environ.get("STRIDEWISE_PURE_PYTHON", "") in ("", "0"):
    try:
        from . import _warm as warm
    except ImportError:
        pass
