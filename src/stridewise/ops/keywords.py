"""The keywords NumPy and torch users pass to an op, each computed in one kernel.

Which op takes which keyword is the op table's (builtins.Row.keywords); the generated
function hands a call that uses one to `call`, and a call that uses none never comes here.
A keyword turns the op into a derived op, which the pipeline runs as any other (warm path,
explain, torch.compile):

- where= (NumPy's and CuPy's ufunc keyword; torch has none): out keeps its values where the
  mask is False. The op's functor is wrapped (keywords.h MaskedInto) so that the kernel reads
  out and writes the op's value where the mask holds, whatever out's dtype: one pass. The
  mask must be bool (NumPy casts it by the rule "safe"; a Python bool is a 0-d mask). Without
  out=, NumPy leaves the masked-off elements uninitialized; stridewise gives 0 there.
- dtype= (NumPy's and CuPy's): the loop's output dtype, resolved by NumPy itself
  (ufunc.resolve_dtypes with that signature and the casting rule, so a cast NumPy refuses
  raises NumPy's UFuncTypeError, a TypeError); the inputs convert in the kernel's loads.
- casting= (NumPy's and CuPy's): the rule for the casts of the inputs to the loop and of the
  result into out, checked by NumPy's own resolve_dtypes ("same_kind", the default, is the
  call without it); CuPy's ufuncs hold only the result's cast into out to it. "unsafe" lets
  a result into any out (a float result into an integer out converts as NumPy's astype does;
  NaN, inf and values out of range are undefined there).
- order= (NumPy's): the layout of a new output, "C", "F", "A" (as NumPy's trivial loop or
  iterator gives it) or "K" (the default, the inputs' order). An out given ignores it.
- subok= (NumPy's): False returns a base ndarray for ndarray subclasses (np.matrix, a user's
  subclass), which are otherwise wrapped back through their __array_wrap__.
- alpha= (add and subtract: torch.add's and torch.sub's): x1 + alpha * x2 (x1 - alpha * x2),
  one fused multiply-add in the math type as torch computes it, with torch's checks (a float
  alpha with integer inputs, a bool alpha with non-bool ones), for every library's arrays.
- rounding_mode= (divide: torch.div's): None is true division, "floor" is floor_divide (for
  integers the result keeps their dtype), "trunc" rounds the quotient toward zero, in
  torch's forms (keywords.h TruncDivideFunctor and its torch variants). An integer x / 0 gives
  0 as floor_divide does, where torch raises ZeroDivisionError on the CPU.
"""
from __future__ import annotations

import dataclasses
import numbers
import sys
from dataclasses import dataclass

import numpy as np

from stridewise.launch import pipeline as _ops
from stridewise.launch.pipeline import ElementwiseOp, Typing, _opmath
from stridewise.operands import arrays as _arrays
from stridewise.operands.dtypes import ALL_DTYPES as DTYPES, DType, dtype_of
from stridewise.operands.promote import HostScalar, ZeroDim, host_scalars

__all__ = ["KEYWORDS", "AlphaError", "call", "resolve", "signature", "doc"]

# keyword -> (annotation in the generated signature, docstring line)
KEYWORDS = {
    "where": ("Array | bool | None",
              "where: (NumPy, CuPy) a bool mask: out keeps its values where it is False (0 there\n"
              "without out=, where NumPy leaves them uninitialized)."),
    "dtype": ("object | None",
              "dtype: (NumPy, CuPy) the loop's dtype; inputs cast to it by NumPy's \"same_kind\" rule."),
    "casting": ("str | None",
                'casting: (NumPy, CuPy) "no", "equiv", "safe", "same_kind" (the default) or\n'
                '"unsafe": the casts NumPy\'s ufunc allows, into the loop and into out.'),
    "order": ("str | None",
              'order: (NumPy) a new output\'s layout: "K" (default), "C", "F" or "A".'),
    "subok": ("bool | None",
              "subok: (NumPy) False returns a base ndarray for ndarray subclasses."),
    "alpha": ("complex | None",
              "alpha: x2's multiplier, as torch's alpha= (a float alpha needs float inputs)."),
    "rounding_mode": ("str | None",
                      'rounding_mode: None (true division), "floor" or "trunc", as torch.div\'s;\n'
                      "integer inputs keep their dtype under floor and trunc (x / 0 gives 0)."),
}


class AlphaError(TypeError, RuntimeError):
    """An alpha= torch refuses (its RuntimeError), a TypeError too."""


def signature(keywords: tuple[str, ...]) -> list[str]:
    """The generated signature's parameters for `keywords`."""
    return [f"{k}: {KEYWORDS[k][0]} = None" for k in keywords]


def doc(keywords: tuple[str, ...]) -> str:
    return "".join(KEYWORDS[k][1] + "\n" for k in keywords)


def _is_torch(args, out) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and any(isinstance(x, torch.Tensor) for x in (*args, out))


def _is_cupy(args, out) -> bool:
    return any(type(x).__module__.startswith("cupy") for x in (*args, out))


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_ORDERS = ("C", "F", "A", "K")      # either case, as NumPy takes them


def resolve(op: ElementwiseOp, args: tuple, out, kw: dict) -> tuple[ElementwiseOp, tuple, object]:
    """(op, args, out) that compute `op`(args, out=out, **kw) as one op; kw: the keywords
    given (a value of None is the keyword left out)."""
    where, dtype, casting, order, subok, alpha, rounding = (kw.get(k) for k in KEYWORDS)
    torch = _is_torch(args, out)
    for name in ("casting", "order", "subok"):    # torch has none; CuPy's ufuncs take casting=
        if kw.get(name) is not None and (torch or name != "casting" and _is_cupy(args, out)):
            owners = "NumPy's and CuPy's" if name == "casting" else "NumPy's"
            raise TypeError(f"{name}= is {owners} ufunc keyword; {'torch' if torch else 'CuPy'} "
                            f"has no {name}=: leave it out")
    if subok is not None and not subok:      # NumPy's subok=False: a base ndarray back
        args = tuple(np.asarray(a) if isinstance(a, np.ndarray) and type(a) is not np.ndarray
                     else a for a in args)
    if rounding is not None:
        if rounding not in ("floor", "trunc"):
            raise ValueError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                             f"but found {rounding!r}")
        op = _derived(_FloorDivide, _ops_builtin("floor_divide")) if rounding == "floor" \
            else _derived(_TruncDivide, None)
    if alpha is not None:
        if isinstance(alpha, np.generic):
            alpha = alpha.item()
        if not isinstance(alpha, numbers.Number):
            raise TypeError(f"alpha must be a Python number, got {type(alpha).__name__}")
        if op.name == "subtract":      # torch's sub is add with -alpha
            alpha = -alpha if not isinstance(alpha, bool) else alpha
        # numbers alone are NumPy arrays first (as without alpha); alpha stays a number
        op, args = _derived(_Scaled, op), (*_arrays.array_likes(args), alpha)
    if dtype is not None and torch:
        raise TypeError(f"dtype= is NumPy's and CuPy's ufunc keyword; torch.{op.name} has none: "
                        "cast the tensors first (x.to(torch.float64))")
    for name, value, allowed in (("casting", casting, _CASTINGS), ("order", order, _ORDERS)):
        if value is not None and not isinstance(value, str):     # NumPy's errors
            raise TypeError(f"{name} must be str, not {type(value).__name__}")
        if value is not None and (value.upper() if name == "order" else value) not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))} (got {value!r})")
    if isinstance(dtype, np.dtype) and not dtype.isnative:
        raise TypeError(f"dtype={dtype!r} is not in the machine's byte order, which NumPy's ufuncs "
                        "refuse there; pass the native dtype")
    if casting == "no" and any(isinstance(a, np.ndarray) and not a.dtype.isnative for a in args):
        raise TypeError("casting='no' refuses an array not in the machine's byte order (its loop "
                        "reads native values); pass casting='equiv' or a native array")
    if dtype is not None or casting not in (None, "same_kind"):
        op = _derived(_Typed, op, (dtype_of(dtype).name if dtype is not None else None,
                                   casting or "same_kind"))
    if order is not None and order.upper() != "K":
        op = _derived(_Ordered, op, order.upper())
    if where is not None:
        if torch:
            raise TypeError("where= is NumPy's and CuPy's ufunc keyword, for NumPy and CuPy arrays; "
                            "torch has none: use torch.where(mask, result, out)")
        if where is True:
            return op, args, out
        if not hasattr(where, "dtype"):    # a list or Python bool converts to bool, as in NumPy
            xp = next((sys.modules["cupy"] for x in (*args, out)
                       if type(x).__module__.startswith("cupy")), np)
            where = xp.asarray(where, dtype=bool)
        op, args = _derived(_Masked, op), (where, *args)
        args, out = _masked_out(op, args, out, kw)
    return op, args, out


def call(op: ElementwiseOp, args: tuple, out, convention, algorithm, **kw):
    """`op`(args) with the keywords `kw`: the generated functions' way in."""
    kop, kargs, kout = resolve(op, args, out, kw)
    return _ops._call(kop, kargs, kout, convention, algorithm)


def _ops_builtin(name: str) -> ElementwiseOp:
    from stridewise.ops.builtins import OPS
    return OPS[name]


DERIVED: dict = {}     # (kind, base op name, extra) -> derived op; torch's custom ops find them here


def _derived(kind, base, extra=None):
    key = (kind.__name__, base and base.name, extra)
    op = DERIVED.get(key)
    if op is None:
        op = DERIVED[key] = kind.make(base, extra)
    return op


def make_traceable() -> None:
    """Make the derived ops torch.compile traces (alpha=, rounding_mode=) up front:
    Dynamo defers a traced call's dict insertions, so an op first made inside a trace is not
    yet in DERIVED when torch's custom op looks it up by name (KeyError: add_alpha)."""
    for name in ("add", "subtract"):
        _derived(_Scaled, _ops_builtin(name))
    _derived(_TruncDivide, None)
    _derived(_FloorDivide, _ops_builtin("floor_divide"))


def _masked_out(op, args, out, kw):
    """(args, out) for a where= call: the given out, with inputs that overlap it otherwise
    than as the same view copied first (the kernel reads out, so it cannot take the buffered
    path); or a new array of the result, 0 everywhere."""
    if out is not None:
        xp = sys.modules[type(out).__module__.split(".")[0]]
        share = getattr(xp, "may_share_memory", None)
        if share is not None:
            same = lambda x: (x.shape, x.strides, x.dtype) == (out.shape, out.strides, out.dtype) \
                and _arrays.as_operand(x, 0).ptr == _arrays.as_operand(out, -1).ptr
            args = tuple(x.copy() if isinstance(x, type(out)) and share(x, out) and not same(x)
                         else x for x in args)
        return args, out
    operands = host_scalars(_ops._operands(op, _arrays.array_likes(args)))
    lib, device, typing, shape, _ = _ops._prepare(op, operands, (None,), kw.get("convention"), False)
    strides = _ops._new_strides(lib, shape, operands, typing.compute.name, device[0],
                                alloc=typing.alloc)[0]
    new = _arrays.allocator(lib, device, shape, typing.outs[0], strides)()[0]
    new[...] = 0
    return args, new


_HEADER = "#include <stridewise/keywords.h>"


@dataclass(frozen=True, eq=False)
class _Derived(ElementwiseOp):
    base: ElementwiseOp | None = None
    extra: object = None

    @classmethod
    def make(cls, base, extra):
        raise NotImplementedError

    @property
    def names(self):          # the base's operand names, where a kind adds none
        return self.base.names if self.base is not None else ElementwiseOp.names.fget(self)

    @property
    def casting(self) -> str:
        return self.base.casting if self.base is not None else "same_kind"

    def numpy_numbers(self, typing, operands):
        """The base op's reading of its own operands (ElementwiseOp.numpy_numbers; a where=
        mask comes first); a kind of its own (no base) reads them as they are."""
        if self.base is None:
            return typing
        return self.base.numpy_numbers(typing, operands[len(operands) - self.base.nin:])

    def _base_typing(self, lib, key, out_key, convention) -> Typing:
        t = self.base.typing(lib, key, out_key, convention)
        return dataclasses.replace(t, preamble="\n".join(filter(None, (t.preamble, _HEADER))))

    def _arg_types(self, t: Typing, n: int) -> tuple:
        return t.arg_types or ((t.compute.ctype, _opmath(t.compute)),) * n


@dataclass(frozen=True, eq=False)
class _Masked(_Derived):
    """op(x...) written into out only where the mask holds (where=)."""

    @classmethod
    def make(cls, base, extra):
        return cls(f"{base.name}_where", base.nin + 1, base.functor, base.ufunc, base.dtypes,
                   base.promote, base.header, cheap=base.cheap, base=base)

    @property
    def names(self):
        return ["where", *self.base.names[0]], ["out"]

    def typing(self, lib, key, out_key, convention):
        mask = key[0]
        if mask != "bool":
            shown = mask.__name__ if isinstance(mask, type) else mask
            raise TypeError(f"Cannot cast array data from dtype('{shown}') to dtype('bool') "
                            "according to the rule 'safe' (where= needs a bool mask): pass "
                            "mask.astype(bool) or mask != 0")
        t = self._base_typing(lib, key[1:], out_key, convention)
        result = t.outs[0]
        into = DTYPES[out_key[0]] if out_key and out_key[0] else result
        if into is not result and not _ops._castable(lib, result, into, self.casting):
            raise TypeError(f"{self.base.name}'s result has dtype {result.name}, which the casting "
                            f"rule \"{self.casting}\" does not cast to out's {into.name}; pass an "
                            f"out of dtype {result.name}")
        n = len(key) - 1
        return dataclasses.replace(
            t, outs=(into,), functor=f"sw::MaskedInto<{t.functor}, {result.ctype}>",
            arg_types=(("bool", "bool"),) + self._arg_types(t, n), out_types=(into.ctype,),
            reads=(True,), order=tuple(("in", i) for i in range(n + 1)) + (("out", 0),))


@dataclass(frozen=True, eq=False)
class _Typed(_Derived):
    """op with NumPy's type resolution keywords: `extra` is (dtype= or None, casting=). The
    loop is the one NumPy's resolve_dtypes picks for them, and NumPy checks the casts into it
    and into out by the casting rule (its UFuncTypeError where it refuses one)."""

    @classmethod
    def make(cls, base, extra):
        dtype, casting = extra
        name = "_".join([base.name] + [dtype] * bool(dtype) + [casting] * (casting != "same_kind"))
        return cls(name, base.nin, base.functor, base.ufunc, base.dtypes,
                   base.promote, base.header, cheap=base.cheap, base=base, extra=extra)

    @property
    def casting(self) -> str:
        return self.extra[1]

    @property
    def kernel_name(self) -> str:      # casting= alone checks; the base's loop computes
        return self.base.kernel_name if self.extra[0] is None else self.name

    def typing(self, lib, key, out_key, convention):
        dtype, casting = self.extra
        ufunc = getattr(np, self.ufunc or "", None)
        if not isinstance(ufunc, np.ufunc) and dtype is None:
            # an op whose NumPy counterpart is no public ufunc (np.clip calls its own): its
            # loop is its promotion's, each array input cast into it by the rule
            t = self._base_typing(lib, key, out_key, convention)
            for k in key:
                if not isinstance(k, type) and not np.can_cast(dtype_of(k).numpy, t.compute.numpy, casting):
                    raise TypeError(f"{self.base.name} computes in {t.compute.name}, which the casting "
                                    f"rule \"{casting}\" does not cast {dtype_of(k).name} to; cast the "
                                    f"inputs first or pass casting=\"same_kind\"")
            return t
        if not isinstance(ufunc, np.ufunc):
            raise TypeError(f"{self.base.name} takes no dtype= or casting=; cast the inputs first")
        args = tuple(np.dtype(bool) if k is bool else k if isinstance(k, type) else dtype_of(k).numpy
                     for k in key)
        outs = tuple(DTYPES[o].numpy if o else None for o in out_key or ()) or (None,) * ufunc.nout
        fixed = {} if dtype is None else {"signature": (None,) * ufunc.nin + (DTYPES[dtype].numpy,)}
        if lib == "cupy":   # CuPy's ufuncs hold only the result's cast into out to the rule
            loop = ufunc.resolve_dtypes(args + (None,) * ufunc.nout, casting="same_kind", **fixed)
            for made, into in zip(loop[ufunc.nin:], outs):
                if into is not None and not np.can_cast(made, into, casting):
                    raise TypeError(f"Cannot cast ufunc '{ufunc.__name__}' output from {made!r} to "
                                    f"{into!r} with casting rule {casting!r}; pass an out of "
                                    f"dtype {made}")
        else:
            loop = ufunc.resolve_dtypes(args + outs, casting=casting, **fixed)
        if dtype is None:      # the op's own loop (NumPy's, by the op table), NumPy's checks
            return self._base_typing(lib, key, out_key, convention)
        keys = tuple(k if isinstance(k, type) else dtype_of(d).name for k, d in zip(key, loop))
        return self._base_typing(lib, keys, out_key, convention)

    def torch_numbers(self, typing, key, backend, one_value=False):
        return typing


@dataclass(frozen=True, eq=False)
class _Ordered(_Derived):
    """op whose new output takes NumPy's order= layout `extra` ("C", "F" or "A")."""

    @classmethod
    def make(cls, base, extra):
        return cls(f"{base.name}_order{extra}", base.nin, base.functor, base.ufunc, base.dtypes,
                   base.promote, base.header, cheap=base.cheap, base=base, extra=extra)

    @property
    def kernel_name(self) -> str:      # the layout is the call's; the kernel is the base's
        return self.base.kernel_name

    def typing(self, lib, key, out_key, convention):
        return dataclasses.replace(self.base.typing(lib, key, out_key, convention), alloc=self.extra)

    def torch_numbers(self, typing, key, backend, one_value=False):
        return typing


@dataclass(frozen=True, eq=False)
class _Scaled(_Derived):
    """add (or subtract, given -alpha) as x1 + alpha * x2 (alpha=)."""

    @classmethod
    def make(cls, base, extra):
        return cls(f"{base.name}_alpha", 3, base.functor, base.ufunc, base.dtypes, base.promote,
                   base.header, cheap=base.cheap, base=base)

    @property
    def names(self):
        return ["x1", "x2", "alpha"], ["out"]

    def typing(self, lib, key, out_key, convention):
        t = self._base_typing(lib, key[:2], out_key, convention)
        c, kind = t.compute, key[2]
        if kind is bool and c.name != "bool":
            raise AlphaError("Boolean alpha only supported for Boolean results.")
        if kind is float and not (c.is_float or c.is_complex):
            raise AlphaError("For integral input tensors, argument alpha must not be a floating "
                             "point number.")
        if kind is complex and not c.is_complex:
            raise AlphaError("For non-complex input tensors, argument alpha must not be a complex "
                             "number.")
        # alpha in the compute dtype (torch's CPU kernels cast it to scalar_t; torch_numbers
        # keeps it float32 for CUDA's 16-bit ones), then the math type
        a, m = _alpha_type(c.name), _opmath(c)
        return dataclasses.replace(t, params=t.params + (a,), functor=f"sw::AddScaledFunctor<{m}>",
                                   arg_types=self._arg_types(t, 2) + ((a.ctype, m),))

    def torch_numbers(self, typing, key, backend, one_value=False):
        """The base op's reading of x1 and x2 (ElementwiseOp.torch_numbers); alpha as
        torch's kernels take it: in the compute dtype on the CPU, in the math type (float32
        for 16-bit floats) on CUDA (opmath_t)."""
        inner = dataclasses.replace(typing, params=typing.params[:-1],
                                    arg_types=typing.arg_types[:-1])
        inner = self.base.torch_numbers(inner, key[:2], backend, one_value)
        alpha, types = typing.params[-1], typing.arg_types[-1]
        if backend == "cuda" and typing.compute.name in _SHORT:
            alpha, types = _alpha_type("float32"), ("float", "float")
        return dataclasses.replace(inner, params=inner.params + (alpha,),
                                   arg_types=self._arg_types(inner, 2) + (types,))


@dataclass(frozen=True)
class _AlphaType(DType):
    """alpha's dtype: torch's range check (DType.checked: an unsigned type also takes down to
    -max, which wraps, so sub(x, y, alpha=1) of uint8 is add with 255), torch's error."""

    def slot_value(self, value):
        try:
            return DType.slot_value(self, value)
        except OverflowError:
            raise AlphaError(f"value cannot be converted to type {self.name} without overflow "
                             f"(alpha={value!r})") from None


def _alpha_type(name: str) -> DType:
    dt = DTYPES[name].checked()
    return _AlphaType(**{f.name: getattr(dt, f.name) for f in dataclasses.fields(DType)})


_SHORT = ("float16", "bfloat16")


@dataclass(frozen=True, eq=False)
class _FloorDivide(_Derived):
    """divide(x1, x2, rounding_mode="floor"): floor_divide, computed as it is, under a name of
    its own for autograd: torch.div(rounding_mode="floor") has a zero gradient, while
    torch.floor_divide has no derivative (integrations/grads.py)."""

    @classmethod
    def make(cls, base, extra):
        return cls("divide_floor", base.nin, base.functor, base.ufunc, base.dtypes, base.promote,
                   base.header, base.code, cheap=base.cheap, base=base)

    def typing(self, lib, key, out_key, convention):
        return self.base.typing(lib, key, out_key, convention)

    def torch_numbers(self, typing, key, backend, one_value=False):
        return self.base.torch_numbers(typing, key, backend, one_value)


@dataclass(frozen=True, eq=False)
class _TruncDivide(_Derived):
    """divide(x1, x2, rounding_mode="trunc"): floor_divide's dtypes, the quotient toward zero."""

    @classmethod
    def make(cls, base, extra):
        from stridewise.ops.builtins import ROWS
        return cls("divide_trunc", 2, "sw::TruncDivideFunctor<{M}>", "floor_divide",
                   ROWS["floor_divide"].dtypes, "same", "stridewise/keywords.h")

    def typing(self, lib, key, out_key, convention):
        """16-bit floats: the quotient rounded to 16 bits before trunc, as NumPy's
        np.trunc(a / b) and torch's division of two tensors compute it."""
        t = ElementwiseOp.typing(self, lib, key, out_key, convention)
        if t.compute.name in _SHORT:
            t = dataclasses.replace(t, functor=f"sw::TruncDivideRounded16<{t.compute.ctype}>")
        return t

    def torch_numbers(self, typing, key, backend, one_value=False):
        """torch's forms (BinaryOpsKernel.cpp div_trunc_kernel, BinaryDivTruncKernel.cu;
        tools/trunc_div_probe.py): a 16-bit quotient of two tensors rounds to 16 bits before
        trunc (typing); on the CPU a number or one-element divisor stays float32 and divides
        in float32; on CUDA a number divides as a times its reciprocal in the math type."""
        typing = dataclasses.replace(typing, params=tuple(p.wrapping() for p in typing.params))
        c = typing.compute
        if not c.is_float:
            return typing
        scalar = (type, ZeroDim) if backend == "cpu" else (type, HostScalar)
        number = isinstance(key[1], scalar)
        m = _opmath(c)
        if number and (c.name in _SHORT):      # the number not narrowed to 16 bits
            typing = dataclasses.replace(
                typing, params=(DTYPES["float32"].wrapping(),) * len(typing.params),
                arg_types=tuple(("float", "float") if isinstance(k, scalar) else (c.ctype, "float")
                                for k in key))
        if number and backend == "cuda":
            return dataclasses.replace(typing, functor=f"sw::TruncDivideByNumberFunctor<{m}>")
        if c.name in _SHORT and one_value and backend == "cpu" and not number:
            typing = _ops._one_value_in_float(typing, key)
        if c.name in _SHORT and (number or one_value and backend == "cpu"):
            return dataclasses.replace(typing, functor="sw::TruncDivideFunctor<float>")
        return typing
