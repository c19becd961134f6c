"""Derivatives of the built-in ops: the formulas torch defines for its own ops
(tools/autograd/derivatives.yaml), written with torch ops so they run on any device, under
torch.compile and twice differentiated.

Each formula takes (grad, inputs, output): inputs are the call's operands as given (tensors
or Python numbers) and returns one gradient per input, or None where there is none. The
caller reduces each gradient to its input's shape and dtype (broadcasting and promotion).
"""
from __future__ import annotations

import math

import torch

__all__ = ["FORMULAS", "JVPS", "SAVES"]


def _pow(g, ins, out):
    x, y = ins
    gx = gy = None
    if isinstance(x, torch.Tensor):     # pow_backward_self: 0 where the exponent is 0
        less = float(y) - 1 if type(y) is int and y == -2**63 else y - 1   # past int64: a double
        gx = torch.where(torch.as_tensor(y, device=g.device) == 0, 0.0, g * y * torch.pow(x, less))
    if isinstance(y, torch.Tensor):     # pow_backward_exponent: 0 where 0 ** (y >= 0)
        xv = torch.as_tensor(x, dtype=out.dtype, device=g.device)
        yr = y.real if y.is_complex() else y      # torch compares the exponent's real part
        gy = g * torch.where((xv == 0) & (yr >= 0), 0.0, out * torch.log(xv))
    return gx, gy


def _maxmin(sign):
    def formula(g, ins, out):
        x, y = ins
        # derivatives.yaml: ties split the gradient in halves; the other side gets 0
        xv, yv = (torch.as_tensor(v, device=g.device) for v in ins)
        half = torch.where(xv == yv, g / 2, g)
        gx = half.masked_fill(sign * (xv - yv) < 0, 0) if isinstance(x, torch.Tensor) else None
        gy = half.masked_fill(sign * (xv - yv) > 0, 0) if isinstance(y, torch.Tensor) else None
        return gx, gy
    return formula


def _clip(g, ins, out):
    # clamp_backward and clamp_backward_min_max: x takes the gradient inside [lo, hi]; a bound
    # where x is past it (lo only while lo < hi; hi also where hi < lo, where hi wins)
    x, lo, hi = (torch.as_tensor(v, device=g.device) for v in ins)
    zero = torch.zeros_like(g)
    glo = torch.where((x < lo) & (lo < hi), g, zero) if isinstance(ins[1], torch.Tensor) else None
    ghi = torch.where((x > hi) | (hi < lo), g, zero) if isinstance(ins[2], torch.Tensor) else None
    return torch.where((x >= lo) & (x <= hi), g, zero), glo, ghi


def _clip_jvp(tangents, ins, out):
    # clamp_jvp, torch's forward formula for clamp with tensor bounds, which is not the
    # backward's transpose on a tie: with one bound x's tangent only strictly inside it (a tie
    # takes the bound's); with both, the bound's only strictly past it, hi's where lo > hi. A
    # bound of None comes here as an infinity (builtins._one_bound), so an infinite bound counts
    # as none. With number bounds torch's clamp.Scalar transposes its backward: None, the
    # transpose's.
    if not (isinstance(ins[1], torch.Tensor) or isinstance(ins[2], torch.Tensor)):
        return None
    x, lo, hi = (torch.as_tensor(v, device=out.device) for v in ins)
    tx, tlo, thi = (torch.zeros_like(out) if t is None else t for t in tangents)
    has_lo, has_hi = not bool(torch.all(lo == -math.inf)), not bool(torch.all(hi == math.inf))
    if has_lo and has_hi:
        return torch.where(lo > hi, thi, torch.where(x < lo, tlo, torch.where(x > hi, thi, tx)))
    if has_lo:
        return torch.where(x > lo, tx, tlo)
    return torch.where(x < hi, tx, thi) if has_hi else tx


def _copysign(g, ins, out):
    # copysign_tensor_self_backward: grad * result / self, 0 where self is 0; other gets 0
    x, y = ins
    ratio = (out / x).masked_fill(x == 0, 0)
    return g * ratio, torch.zeros_like(y) if isinstance(y, torch.Tensor) else None


def _where(g, ins, out):
    c = ins[0]
    zero = torch.zeros_like(g)
    return None, torch.where(c, g, zero), torch.where(c, zero, g)


FORMULAS = {
    "add": lambda g, ins, out: (g, g),
    "subtract": lambda g, ins, out: (g, -g),
    "multiply": lambda g, ins, out: (g * ins[1], g * ins[0]),
    "divide": lambda g, ins, out: (g / ins[1], -g * ((ins[0] / ins[1]) / ins[1])),
    "remainder": lambda g, ins, out: (g, -g * torch.div(torch.as_tensor(ins[0], device=g.device),
                                                         ins[1], rounding_mode="floor")),
    "fmod": lambda g, ins, out: (g, -g * torch.div(torch.as_tensor(ins[0], device=g.device),
                                                    ins[1], rounding_mode="trunc")),
    "maximum": _maxmin(1),
    "minimum": _maxmin(-1),
    "pow": _pow,
    "where": _where,
    "relu": lambda g, ins, out: (torch.where(out <= 0, 0.0, g),),   # threshold_backward(grad, result, 0)
    "abs": lambda g, ins, out: (g * torch.sgn(ins[0]),),
    "negative": lambda g, ins, out: (-g,),
    "exp": lambda g, ins, out: (g * out,),
    "log": lambda g, ins, out: (g / ins[0],),
    "sqrt": lambda g, ins, out: (g / (2 * out),),
    "sin": lambda g, ins, out: (g * torch.cos(ins[0]),),
    "cos": lambda g, ins, out: (g * -torch.sin(ins[0]),),
    "fma": lambda g, ins, out: (g * ins[1], g * ins[0], g),
    "square": lambda g, ins, out: (g * 2 * ins[0],),
    "reciprocal": lambda g, ins, out: (-g * out * out,),
    "tanh": lambda g, ins, out: (g * (1 - out * out),),
    "sigmoid": lambda g, ins, out: (g * ((1 - out) * out),),
    "clip": _clip,
    "copysign": _copysign,
    **{name: (lambda g, ins, out: (torch.zeros_like(g),)) for name in ("floor", "ceil", "trunc", "sign")},
    # the keywords' ops (ops/keywords.py): alpha= (subtract's comes negated), and a rounded
    # quotient, whose gradient torch defines as zero
    "add_alpha": lambda g, ins, out: (g, g * ins[2], None),
    "subtract_alpha": lambda g, ins, out: (g, g * ins[2], None),
    "divide_trunc": lambda g, ins, out: (torch.zeros_like(g), torch.zeros_like(g)),
    "divide_floor": lambda g, ins, out: (torch.zeros_like(g), torch.zeros_like(g)),
}


def _conjugated(formula):
    """A holomorphic op's formula for complex values: torch's convention is
    grad * conj(f'(z)), and the formulas above give grad * f'(z), so the complex form is
    conj(formula(conj(grad))). A real input of a complex op keeps the real part (the caller's
    reduction to its dtype), as torch does."""
    def complex_formula(g, ins, out):
        if not g.is_complex():
            return formula(g, ins, out)
        return tuple(None if r is None else r.conj() for r in formula(g.conj(), ins, out))
    return complex_formula


for _name in ("multiply", "divide", "pow", "exp", "log", "sqrt", "sin", "cos", "fma", "add_alpha",
              "subtract_alpha", "square", "reciprocal", "tanh", "sigmoid"):
    FORMULAS[_name] = _conjugated(FORMULAS[_name])

# Forward formulas (tangents, inputs, output) -> the output's tangent, or None for the
# backward's transpose (torch_ops.py derives that from FORMULAS), where torch's differs.
JVPS = {"clip": _clip_jvp}

# casts: the gradient goes back in the input's dtype (the caller's reduction does that)
FORMULAS.update({f"cast_{dt}": (lambda g, ins, out: (g,))
                 for dt in ("float16", "bfloat16", "float32", "float64")})

# What each formula reads: "i" the inputs, "o" the output (the rest are not saved). An op
# without a formula (floor_divide: torch defines none either; an integer or bool cast has no
# differentiable output) raises "derivative ... is not implemented" at backward, as torch does.
SAVES = {"multiply": "i", "divide": "i", "remainder": "i", "fmod": "i", "maximum": "i",
         "minimum": "i", "pow": "io", "where": "i", "relu": "o", "abs": "i", "exp": "o",
         "log": "i", "sqrt": "o", "sin": "i", "cos": "i", "fma": "i", "square": "i",
         "reciprocal": "o", "tanh": "o", "sigmoid": "o", "clip": "i", "copysign": "io"}
