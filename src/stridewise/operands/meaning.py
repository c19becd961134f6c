"""Arrays whose meaning a raw data pointer would lose: refused with the fix, never run.

A kernel sees a pointer, a dtype, a shape and strides. Anything more an array library keeps
(a mask, a lazy negation or conjugation, a sparse or nested layout, an autograd graph) would
be silently dropped, so such arrays are refused here, on the full path; the warm path's keys
mark torch's lazy bits and autograd (`torch_mark`) so those calls come here too. Built-in ops
resolve the lazy bits into a copy before they get here (pipeline._buffered_call).
"""
from __future__ import annotations

import sys

import numpy as np

from stridewise.operands.promote import torch_default_float

__all__ = ["check_numpy", "check_torch", "check_autograd", "torch_mark"]


def check_numpy(a: np.ndarray) -> None:
    # np.ma costs about 25 ms to import, and no masked array exists before it is imported
    ma = sys.modules.get("numpy.ma")
    if ma is not None and isinstance(a, ma.MaskedArray):
        raise TypeError("masked arrays are not supported: a kernel would read the masked "
                        "elements and drop the mask; pass a.filled(value) or np.asarray(a) "
                        "(and apply the mask to the result yourself)")


def check_torch(t) -> None:
    import torch

    if t.layout != torch.strided:
        raise TypeError(f"a {t.layout} tensor has no strided data to read; pass t.to_dense()")
    if t.is_nested:
        raise TypeError("nested tensors are not supported; pass each component, or "
                        "torch.nested.to_padded_tensor(t, padding)")
    if t.is_quantized:
        raise TypeError("quantized tensors are not supported; pass t.dequantize()")
    if t.is_neg():
        raise TypeError("this tensor is a lazy negation (torch's negative bit is set, e.g. by "
                        "c.conj().imag): its memory holds the negated values; pass t.resolve_neg()")
    if t.is_conj():
        raise TypeError("this tensor is a lazy conjugate (torch's conjugate bit is set); pass "
                        "t.resolve_conj()")
    check_autograd(t)


def check_autograd(t) -> None:
    """Autograd is not recorded through stridewise's kernels: refuse rather than detach."""
    import torch

    if t.requires_grad and torch.is_grad_enabled():
        raise RuntimeError("this tensor requires grad, and this call path records no autograd "
                           "graph (the result would be silently detached); call it under "
                           "torch.no_grad(), or pass t.detach() if no gradient should flow")


def torch_mark(t) -> int:
    """16 for a tensor the warm path must not take, else 0: one check_torch refuses for its
    lazy bits, or one torch's dispatcher takes (_torch_ops.declines: autograd, meta and other
    devices, dispatch modes); plus torch_default_mark(). Added to the warm key's alignment
    item (0-15), so such a tensor never matches a plain one's entry."""
    from stridewise.integrations import torch_ops as _torch_ops

    return (16 if t.is_neg() or t.is_conj() or _torch_ops.declines(t) else 0) + torch_default_mark()


_DEFAULT_MARKS = {"float32": 0, "float64": 32, "float16": 64, "bfloat16": 96}


def torch_default_mark() -> int:
    """torch's default float in the warm key (launch/_torch.cpp adds the same): integer
    tensors' true division and a Python float beside them compute in it, so a call is typed
    again after torch.set_default_dtype."""
    return _DEFAULT_MARKS.get(torch_default_float(), 128)
