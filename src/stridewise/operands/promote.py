"""torch's type promotion for a call's operands, as torch.result_type defines it.

torch ranks operands in three groups: tensors with dimensions, 0-d tensors, and Python
numbers. A group takes part only where its category (bool < integer < floating < complex)
is higher than every group before it, so a 0-d float64 tensor does not raise a float32
tensor, and int32 % 0-d int64 stays int32. torch.result_type takes two operands at a time,
so each group is folded on its own and the groups are then combined in rank order.
"""
from __future__ import annotations

import sys

__all__ = ["ZeroDim", "HostScalar", "torch_result_type", "torch_default_float", "host_scalars"]


class ZeroDim(str):
    """The dtype name of a 0-d tensor in a call's promotion key (equal to the plain name, so
    everything that looks dtypes up by name still works)."""

    __slots__ = ()


class HostScalar(ZeroDim):
    """A CPU 0-d tensor in a call on CUDA tensors: promoted as a 0-d tensor, passed by value."""

    __slots__ = ()


def torch_default_float() -> str:
    """torch's default float dtype (torch.set_default_dtype), by name, or "float32" where torch
    is not loaded. torch computes integer tensors' true division and a Python float beside
    integer tensors in it, so every cache of torch typing is keyed by it too."""
    torch = sys.modules.get("torch")
    return str(torch.get_default_dtype())[6:] if torch is not None else "float32"


def torch_result_type(key: tuple):
    """The torch dtype of an op over `key`: per operand a dtype name (a tensor with
    dimensions), a ZeroDim (a 0-d tensor) or a Python number type."""
    try:
        return _torch_result_type(key)
    except RuntimeError as e:   # torch promotes uint16, uint32 and uint64 with no other dtype
        raise TypeError(f"{e}; cast the operands to one dtype first (x.to(y.dtype))") from None


def _torch_result_type(key: tuple):
    import torch

    def fold(items, shape):
        probes = [torch.empty(shape, dtype=getattr(torch, k)) for k in items]
        acc = probes[0]
        for p in probes[1:]:
            acc = torch.empty(shape, dtype=torch.result_type(acc, p))
        return acc.dtype

    dims = [k for k in key if isinstance(k, str) and not isinstance(k, ZeroDim)]
    zeros = [k for k in key if isinstance(k, ZeroDim)]
    numbers = [k for k in key if isinstance(k, type)]
    dt = None
    for group, shape in ((dims, (0,)), (zeros, ())):
        if not group:
            continue
        g = fold(group, shape)
        dt = g if dt is None else torch.result_type(torch.empty((0,), dtype=dt), torch.empty((), dtype=g))
    if numbers:
        top = max(numbers, key=_CATEGORY.index)
        value = top(1)
        dt = torch.result_type(torch.empty((0,), dtype=dt), value) if dt is not None else \
            torch.result_type(torch.tensor(value), value)
    return dt


_CATEGORY = [bool, int, float, complex]


def host_scalars(operands: list) -> list:
    """operands with each CPU 0-d torch tensor made a Scalar where another operand is a CUDA
    tensor (torch's rule; its value is read once, on the host, as torch does)."""
    from stridewise.operands.arrays import Scalar, View

    if not any(isinstance(o, View) and o.backend == "cuda" for o in operands):
        return operands
    return [Scalar(o.obj.item(), o.dtype.name)
            if isinstance(o, View) and o.lib == "torch" and o.backend == "cpu" and not o.shape
            else o for o in operands]
