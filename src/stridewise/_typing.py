"""Type aliases of the public signatures (annotations only; nothing here runs per call)."""
from __future__ import annotations

from typing import Any, Literal, Union

from stridewise.algorithms import Algorithm, Auto

__all__ = ["Array", "Operand", "Convention", "AlgorithmLike"]

# A torch tensor, CuPy array or NumPy array, or anything exporting DLPack or
# __cuda_array_interface__: the operands stage decides at run time, so the alias stays open.
Array = Any
# An array or a Python number (a number becomes a kernel parameter).
Operand = Union[Array, bool, int, float]
# Which sign a zero remainder takes: the dividend's (torch) or the divisor's (numpy).
Convention = Literal["torch", "numpy"]
AlgorithmLike = Union[Algorithm, Auto]
