"""stridewise: elementwise kernels over broadcast, strided arrays, at the memory roofline."""
from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

from stridewise.algorithms import Auto, Contiguous, General, Rows, Scalar, ShortRows, Tiled  # noqa: E402
from stridewise.capabilities import Capabilities, capabilities  # noqa: E402
from stridewise.tuning import ElementwiseTuning, elementwise_tuning, register_tuning  # noqa: E402
from stridewise.launch.pipeline import explain  # noqa: E402
from stridewise.ops import builtins as _builtins  # noqa: E402
from stridewise.ops.builtins import *  # noqa: E402,F401,F403 - every op of the table, and cast

if TYPE_CHECKING:
    from stridewise.kernels.fuse import evaluate, fuse
    from stridewise.kernels.elementwise import ElementwiseKernel

__all__ = [
    "explain", "ElementwiseKernel", "fuse", "evaluate",
    "Auto", "Contiguous", "Scalar", "Rows", "ShortRows", "Tiled", "General",
    "ElementwiseTuning", "elementwise_tuning", "register_tuning",
    "Capabilities", "capabilities",
]
__all__ += _builtins.__all__

# User kernels and fusion (their parsers, the hoisting pass) load on first use: a process
# that only calls built-in ops never pays for them at import.
_LAZY = {"ElementwiseKernel": ".kernels.elementwise", "fuse": ".kernels.fuse",
         "evaluate": ".kernels.fuse"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
