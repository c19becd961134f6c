"""stridewise: elementwise kernels over broadcast, strided arrays, at the memory roofline."""
from __future__ import annotations

__version__ = "0.1.0"

from .algorithms import Auto, Contiguous, General, Rows, Scalar, ShortRows, Tiled  # noqa: E402
from .capabilities import Capabilities, capabilities  # noqa: E402
from .tuning import ElementwiseTuning, elementwise_tuning, register_tuning  # noqa: E402
from ._ops import explain, remainder, remainder_  # noqa: E402
from ._kernel import ElementwiseKernel  # noqa: E402
from ._fuse import evaluate, fuse  # noqa: E402
from ._builtins import (  # noqa: E402
    abs, add, cast, cos, divide, exp, floor_divide, fma, fmod, log, maximum, minimum, multiply,
    negative, pow, relu, sin, sqrt, subtract, where,
    equal, not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or,
    logical_xor, logical_not, bitwise_and, bitwise_or, bitwise_xor, bitwise_not, left_shift,
    right_shift, isnan, isinf, isfinite, floor, ceil, trunc, sign, copysign, square,
    reciprocal, tanh, sigmoid, clip,
)
from ._builtins import _DOCS  # noqa: E402

__all__ = [
    "remainder", "remainder_", "explain", "ElementwiseKernel", "fuse", "evaluate",
    "add", "subtract", "multiply", "divide", "fmod", "floor_divide", "maximum", "minimum", "pow",
    "where", "relu", "abs", "negative", "exp", "log", "sqrt", "sin", "cos", "cast", "fma",
    *_DOCS,
    "Auto", "Contiguous", "Scalar", "Rows", "ShortRows", "Tiled", "General",
    "ElementwiseTuning", "elementwise_tuning", "register_tuning",
    "Capabilities", "capabilities",
]
