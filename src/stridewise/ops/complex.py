"""complex64 and complex128 in the built-in ops: which ops define them, and the functors
whose complex form depends on the owning library (include/stridewise/complex.h).

An op neither NumPy nor torch defines for complex (remainder, fmod, floor_divide, the
ordering comparisons, floor, ...) raises UnsupportedDtypeError, a TypeError (NumPy raises
one: "ufunc 'remainder' not supported for the input types") and a RuntimeError (torch's
"not implemented for 'ComplexFloat'"), so each library's users catch what they expect.
"""
from __future__ import annotations

__all__ = ["COMPLEX", "COMPLEX_OPS", "NUMPY_ONLY", "ORDER", "UnsupportedDtypeError", "functor", "check"]

COMPLEX = ("complex64", "complex128")

# The ops that compute in complex; abs gives the real dtype; sigmoid is torch's (NumPy has
# none), 1 / (1 + exp(-z)) in complex arithmetic as torch computes it. NUMPY_ONLY: what torch does not
# define for complex and raises on: NumPy's lexicographic order of complex values, sign
# (z / |z|; torch has torch.sgn for it) and clip (by that order).
ORDER = ("less", "less_equal", "greater", "greater_equal", "maximum", "minimum")
NUMPY_ONLY = ORDER + ("sign", "clip")
COMPLEX_OPS = ("add", "subtract", "multiply", "divide", "pow", "where", "abs", "negative",
               "exp", "log", "sqrt", "sin", "cos", "tanh", "equal", "not_equal", "logical_and",
               "logical_or", "logical_xor", "logical_not", "isnan", "isinf", "isfinite",
               "square", "reciprocal", "sigmoid") + NUMPY_ONLY

# Where the complex formula differs between NumPy and torch (complex.h says how).
_FUNCTORS = {
    "multiply": "sw::ComplexMultiplyFunctor<{M}, {C}>",
    "square": "sw::ComplexSquareFunctor<{M}, {C}>",
    "abs": "sw::ComplexAbsFunctor<{M}, {C}>",
    "reciprocal": "sw::ComplexReciprocalFunctor<{M}, {C}>",
    "pow": "sw::ComplexPowFunctor<{M}, {C}>",
    "sign": "sw::ComplexSignFunctor<{M}>",
}


class UnsupportedDtypeError(TypeError, RuntimeError):
    """An op given a dtype it does not compute in (NumPy raises TypeError, torch RuntimeError)."""


def functor(name: str, compute, default: str) -> str:
    """The functor template of op `name` in `compute`: its complex form where it has one."""
    if compute.is_complex:
        return _FUNCTORS.get(name, default)
    return default


def real_of(dtype):
    """The real dtype of a complex one (abs's result); other dtypes unchanged."""
    from stridewise.operands.dtypes import ALL_DTYPES

    return ALL_DTYPES[{"complex64": "float32", "complex128": "float64"}.get(dtype.name, dtype.name)]


def check(name: str, lib: str, compute) -> None:
    """Raise where torch has no complex form of op `name` (the order-based ops)."""
    if compute.is_complex and lib == "torch" and name in NUMPY_ONLY:
        fix = ("use torch.sgn for z / |z|" if name == "sign" else
               "torch orders no complex values; NumPy's lexicographic order serves NumPy and "
               "CuPy arrays: compare the real parts (x.real) or the magnitudes (x.abs())")
        raise UnsupportedDtypeError(
            f"{name} is not defined for {compute.name} torch tensors (torch raises too): {fix}")
