"""stridewise: elementwise kernels over broadcast, strided arrays, at the memory roofline."""
from __future__ import annotations

__version__ = "0.1.0"

from .algorithms import Auto, Contiguous, General, Rows, Scalar, ShortRows, Tiled  # noqa: E402
from .capabilities import Capabilities, capabilities  # noqa: E402
from .tuning import ElementwiseTuning, elementwise_tuning, register_tuning  # noqa: E402
from ._ops import explain  # noqa: E402
from ._kernel import ElementwiseKernel  # noqa: E402
from ._fuse import evaluate, fuse  # noqa: E402
from . import _builtins  # noqa: E402
from ._builtins import *  # noqa: E402,F401,F403 - every op of the table, and cast

__all__ = [
    "explain", "ElementwiseKernel", "fuse", "evaluate",
    "Auto", "Contiguous", "Scalar", "Rows", "ShortRows", "Tiled", "General",
    "ElementwiseTuning", "elementwise_tuning", "register_tuning",
    "Capabilities", "capabilities",
]
__all__ += _builtins.__all__
