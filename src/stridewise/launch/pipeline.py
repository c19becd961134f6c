"""Ops: the elementwise pipeline from arguments to a launched kernel, and the built-in ops.

A call turns its arguments into operands, plans, resolves, generates, compiles and
launches. Everything after the operands depends only on the call's layout signature, so a
warm call is one dict lookup, one struct pack and one launch.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import struct
from dataclasses import dataclass

import numpy as np

from stridewise.operands import arrays as _arrays
from stridewise.codegen import source as _codegen
from stridewise.ops import complex as _complex
from stridewise.integrations import dask as _dask
from stridewise.operands import foreign as _foreign
from stridewise.operands import layout as _layout
from stridewise import plan as _plan
from stridewise import resolve as _resolve
from stridewise.integrations import torch_ops as _torch_ops
from stridewise.operands.arrays import Scalar, View
from stridewise.launch.compiled import warm as _WARM
from stridewise.operands.dtypes import ALL_DTYPES as DTYPES, FLOAT_MAX, DType, dtype_of
from stridewise.operands.promote import HostScalar, ZeroDim, host_scalars, torch_default_float
from stridewise.algorithms import Auto
from stridewise.backends import get_backend
from stridewise.capabilities import capabilities
from stridewise.tuning import elementwise_tuning, field_origins, tuning_device
from stridewise._explain import Explanation
from stridewise._typing import Operand

__all__ = ["ElementwiseOp", "Typing", "explain", "Prepared"]

CONVENTIONS = ("torch", "numpy")


@dataclass(frozen=True)
class Typing:
    """How one call signature computes: the dtypes and C++ types codegen needs.

    Attributes
    ----------
    compute : the dtype naming the computation (tuning; `T` in the generated Op).
    outs : dtype of each output.
    params : dtype of each host scalar input, in order.
    functor : C++ type of the element functor.
    arg_types : per input, the (storage, OpMath) C types it is converted through; empty: the
        compute dtype's (the built-in binary ops).
    out_types, reads : reference form (user kernels): each output's local C type, and whether
        the functor reads it.
    order : functor argument order, ("in", i), ("out", k) or ("index", 0) (the flat loop index
        operand of a user kernel's call); empty: the inputs in order.
    preamble : C++ placed before the Op (user code, the functor's definition).
    label : user kernels: the object whose .message(log) turns a compiler log into an error
        that quotes the user's own lines.
    alloc : how the library allocates the result where its op departs from its ufunc or
        TensorIterator rule over every operand (operands/layout.py output_strides, _alloc):
        "like" its one input (torch's `.to()`, complex abs, and isfinite and isinf of
        integers: empty_like; NumPy's astype),
        "unary" (a TensorIterator over the first input alone: torch's Scalar overloads, whose
        other inputs are numbers), "real" (a TensorIterator over the input's real view: torch's
        complex isinf), "contiguous" (torch's pow of a number), "iterator" (NumPy's
        nditer in order K, without the ufunc's trivial loop: np.where); "" otherwise.
    """

    compute: DType
    outs: tuple
    params: tuple
    functor: str
    arg_types: tuple = ()
    out_types: tuple = ()
    reads: tuple = ()
    order: tuple = ()
    preamble: str = ""
    label: object = None
    options: tuple = ()      # user kernels: NVRTC ProgramOptions fields, (name, value) pairs
    alloc: str = ""
    loop: str = ""           # NumPy's loop dtype where it is not compute's (the output layout)
    constant: bool = False   # reads no input (ops.h kConstant): _build plans them as unread


@dataclass(frozen=True, eq=False)   # identity hashing: ops key the warm-call memo
class ElementwiseOp:
    """A built-in elementwise op.

    Attributes
    ----------
    name : public name, also the kernel's.
    nin : number of inputs.
    functor : C++ functor template; "{T}" is the compute type, "{M}" its OpMath type,
        "{C}" the convention.
    ufunc : the NumPy ufunc whose dtype resolution the op follows (None: NumPy's result_type).
    dtypes : compute dtypes the op supports (plain data that tests and docs enumerate).
    header : the header the functor lives in, when not functors.h.
    cheap : its arithmetic costs less than moving its bytes (the host's threads start by
        bytes; Row.cheap).
    promote : "same" (the library's promotion), "float" (integers compute in the library's
        default float: NumPy float64, torch float32), "bool" (compute as "same", output
        bool), "where" (bool condition, then "same"), or a dtype name (cast to it).
    """

    name: str
    nin: int
    functor: str
    ufunc: str | None
    dtypes: tuple
    promote: str = "same"
    header: str = ""            # header library file the functor lives in, beyond functors.h
    code: str = ""              # C++ the functor needs, placed before the kernel
    cheap: bool = False
    nout = 1
    broadcast_outputs = False   # out must have the inputs' broadcast shape
    casting = "same_kind"       # the rule its result casts into out by (NumPy's casting=)

    @property
    def kernel_name(self) -> str:
        """The name its kernels carry: its own, or (a keyword that changes no arithmetic, such
        as casting= or order=) its base op's, whose compiled kernels it then shares."""
        return self.name

    def functor_for(self, compute, convention: str) -> str:
        functor = _complex.functor(self.name, compute, self.functor)
        return functor.format(T=compute.ctype, M=_opmath(compute),
                                   C="sw::kTorch" if convention == "torch" else "sw::kNumpy")

    def numpy_numbers(self, typing: Typing, operands: list) -> Typing:
        """How NumPy's float32 and float64 power reads one exponent value (a number, or an
        array of one element broadcast: its loop's exponent stride is 0): 0.5 is sqrt, so
        np.power(-0.0, 0.5) is -0.0 and np.power(-inf, 0.5) NaN, where C's pow gives +0.0 and
        +inf (bfloat16 as float32, by ml_dtypes' definition as the tests' oracle writes it).
        Older NumPy releases call pow there: the installed one is asked once."""
        if self.name != "pow" or typing.compute.name not in ("float32", "float64", "bfloat16") \
                or not _numpy_pow_half_is_sqrt():
            return typing
        b = operands[1]
        if isinstance(b, View) and any(s != 0 for n, s in zip(b.shape, b.strides) if n > 1):
            return typing
        return dataclasses.replace(typing, functor=typing.functor.replace(
            "sw::PowFunctor<", "sw::NumpyPowByOneValueFunctor<"))

    def torch_numbers(self, typing: Typing, key: tuple, backend: str, one_value: bool = False) -> Typing:
        """How torch reads a number (a Python scalar or a CPU 0-d tensor), which differs by op
        and device (measured with tools/torch_numbers_probe.py):
        - as a cast into the computing dtype (an int wraps, a float past float16's range is
          inf) where its ops take the number as a tensor; clamp, where and pow check it
          (OverflowError), as NumPy does everywhere;
        - in float32, not rounded to 16 bits, in some float16 and bfloat16 kernels
          (_TORCH_NUMBERS: x * 0.1 multiplies by 0.1f);
        - CUDA's division by a number multiplies by its float reciprocal, in every float dtype;
        - float16 and bfloat16 floor_divide rounds each step to 16 bits between two tensors
          (bf16_ops.h TorchFloorDivide16), but computes in float32 on the CPU where the divisor
          is a number or `one_value` (a tensor of one element broadcast: TensorIterator's
          is_scalar), and by the number's reciprocal on CUDA (TorchFloorDivideByNumber16);
        - pow by 0.5 and -0.5 is sqrt and one over it (TorchPowByNumberFunctor); a complex
          tensor's takes torch's special exponents, 0 and 1 included (TorchComplexPowByNumber);
        - an int beside bool tensors decides the dtype, and torch refuses one past int64."""
        if self.name not in _TORCH_CHECKED:
            typing = dataclasses.replace(typing, params=tuple(p.wrapping() for p in typing.params))
        elif typing.compute.is_float or typing.compute.is_complex:
            limit = _torch_number_limit(self.name, typing.compute.name)
            typing = dataclasses.replace(typing, params=tuple(p.limited(limit) for p in typing.params))
        elif self.name in ("clip", "where"):    # integers: c10's rule (DType.checked)
            typing = dataclasses.replace(typing, params=tuple(p.checked() for p in typing.params))
        elif self.name == "pow" and isinstance(key[0], type):   # pow(number, tensor): the base wraps
            typing = dataclasses.replace(typing, params=tuple(p.wrapping() for p in typing.params))
        promoted = [k for k in (key[1:] if self.promote == "where" else key) if k is not None]
        arrays = [k for k in promoted if isinstance(k, str)]
        if int in promoted and arrays and all(k == "bool" for k in arrays) \
                and float not in promoted and complex not in promoted:
            # an int beside bool tensors (where's condition takes no part) is promoted as a
            # tensor of its own: one of 2^63 or more would be torch's uint64, whose promotion
            # it refuses in every op (true divide's float result too); read it as an int64
            # (DType.as_int64). A float number beside it makes the result float first
            # (torch.clamp(bool_tensor, 0.0, 2**64 - 1) is float32).
            typing = dataclasses.replace(typing, params=tuple(p.as_int64() for p in typing.params))
        float32_ops = _TORCH_NUMBERS.get(backend, ())   # meta tensors: no values to read
        # pow by a number: sqrt for 0.5 (math.h TorchPowByNumberFunctor), in every float
        # dtype but float16 on the CPU (torch 2.13's CPU float16 kernel calls pow)
        if self.name == "pow" and typing.compute.is_float and len(key) == 2 and not (
                backend == "cpu" and typing.compute.name == "float16") and (
                isinstance(key[1], type) or backend == "cuda" and isinstance(key[1], HostScalar)):
            return dataclasses.replace(typing, functor=typing.functor.replace(
                "sw::PowFunctor<", "sw::TorchPowByNumberFunctor<"))
        if self.name == "pow" and typing.compute.is_complex and len(key) == 2 and (
                isinstance(key[1], type) or backend == "cuda" and isinstance(key[1], HostScalar)):
            # at::pow's Scalar overload and its special exponents (complex.h)
            return dataclasses.replace(typing, functor=typing.functor.replace(
                "sw::ComplexPowFunctor<", "sw::TorchComplexPowByNumber<"))
        if self.name not in float32_ops + ("divide",) or len(key) != 2:
            return typing
        short = typing.compute.name in ("float16", "bfloat16")
        # a CPU scalar: a number, or a 0-d tensor on the CPU (on CUDA, a CPU one only)
        scalar = (type, ZeroDim) if backend == "cpu" else (type, HostScalar)
        number = tuple(isinstance(k, scalar) for k in key)
        # torch's kernels test operand 2 (whatever operand 1 is: a 0-d tensor too); a Python
        # number first in add or multiply is still x op number (Python's c * x calls
        # x.__rmul__), so it is the one tested
        at = 0 if self.name in ("add", "multiply") and isinstance(key[0], type) else 1
        if short and backend == "cpu" and one_value and at == 1 and not number[1]:
            typing = _one_value_in_float(typing, key)
            if self.name == "floor_divide":
                typing = dataclasses.replace(typing, functor="sw::FloorDivideFunctor<float>")
            return typing
        if not number[at]:
            return typing
        if self.name in float32_ops and short:
            array = (typing.compute.ctype, "float")      # loaded as ever; the scalar not narrowed
            # the values passed by value (numbers, and CUDA's CPU 0-d tensors) in operand
            # order: the one torch reads in float32 goes as a float32
            by_value = [i for i, k in enumerate(key) if isinstance(k, (type, HostScalar))]
            typing = dataclasses.replace(
                typing, params=tuple(DTYPES["float32"].wrapping() if i == at else p
                                     for i, p in zip(by_value, typing.params)),
                arg_types=tuple(("float", "float") if i == at else array for i in range(2)))
            if self.name == "floor_divide":
                typing = dataclasses.replace(typing, functor=(
                    f"sw::TorchFloorDivideByNumber16<{typing.compute.ctype}>" if backend == "cuda"
                    else "sw::FloorDivideFunctor<float>"))
        if backend == "cuda" and self.name == "divide" and not typing.compute.is_complex:
            typing = dataclasses.replace(
                typing, functor=typing.functor.replace("sw::DivideFunctor<", "sw::DivideByNumberFunctor<"))
        return typing

    @property
    def names(self) -> tuple[list[str], list[str]]:
        if self.promote == "where":
            return ["condition", "x", "y"], ["out"]
        return [f"x{i + 1}" for i in range(self.nin)], ["out"]

    def typing(self, lib: str, key: tuple, out_key: tuple, convention: str) -> Typing:
        """Promote by the owning library's rules and check the op supports the result."""
        arg_types, loop, params = (), "", ()
        if self.promote == "where":
            # NumPy takes any real condition's truth, a Python number's too (a parameter of
            # dtype bool, so 0.5 and NaN are true); torch only a bool tensor
            number = key[0] in (bool, int, float)
            cond = DTYPES["bool"] if number else DTYPES.get(key[0]) if isinstance(key[0], str) else None
            if lib == "torch" and (cond is None or cond.name != "bool" or number):
                raise TypeError(f"torch's where needs a bool condition (a bool tensor), got "
                                f"{_key_name(key[0])} (torch.where raises too); pass a comparison "
                                "result, cond.bool() or torch.tensor(cond)")
            if cond is None or cond.is_complex:
                raise TypeError(f"where's condition must be real, got {_key_name(key[0])}; "
                                "pass a comparison result or cond.astype(bool)")
            params = (cond,) * number
            compute, out = _arrays.result_dtypes(lib, None, key[1:])
            # a number is true where nonzero (NaN too), as NumPy's where reads it; the branches
            # stay in storage, so the select moves their bits (a float16 NaN's payload too)
            arg_types = ((cond.ctype, _opmath(cond)),) + ((compute.ctype, compute.ctype),) * 2
        elif self.promote in DTYPES:
            compute, out = _arrays.result_dtypes(lib, None, key)[0], DTYPES[self.promote]
            if out.name not in self.dtypes:
                raise TypeError(f"cast does not produce {out.name}; it casts to {', '.join(self.dtypes)}")
            if self.ufunc and lib != "torch":   # NumPy's logical ops cast mixed inputs to bool
                try:
                    loop = _arrays.result_dtypes(lib, self.ufunc, key)[0].name
                except TypeError:                # no NumPy loop (bfloat16's): compute's
                    pass
        else:
            compute, out = _arrays.result_dtypes(lib, self.ufunc, key)
            if self.promote == "bool":     # comparisons and tests: bool whatever the inputs
                out = DTYPES["bool"]
            inexact = compute.is_float or compute.is_complex
            if self.promote == "float" and not inexact and self.ufunc and lib != "torch":
                raise TypeError(f"{self.name} of NumPy's integer arrays is NumPy's integer "
                                f"{self.ufunc}, which stridewise does not provide; cast to a "
                                "float dtype first (x.astype(np.float64))")
            if self.promote == "float" and not inexact:
                compute = out = DTYPES[torch_default_float() if lib == "torch" else "float64"]
            if lib == "torch" and compute.name == "bool" and self.name in ("floor", "ceil", "trunc"):
                raise _complex.UnsupportedDtypeError(
                    f'"{self.name}" is not implemented for torch bool tensors (torch raises too); '
                    "a bool is already whole")
            if lib == "torch" and compute.name == "bool" and self.name == "clip":
                raise _complex.UnsupportedDtypeError(
                    '"clip" (torch.clamp) is not implemented for torch bool tensors (torch raises '
                    "too); use logical_and / logical_or with the bounds")
            if (lib == "torch" and self.name == "subtract" and compute.name != "bool"
                    and any(k == "bool" or k is bool for k in key)):
                # torch refuses a bool on either side, even where the result is not bool
                raise _complex.UnsupportedDtypeError(
                    '"subtract" with a bool tensor or a Python bool is not supported for torch '
                    "tensors (torch raises too); use logical_xor, or bitwise_not to invert a mask")
            if lib == "torch" and compute.name == "bool" and self.name == "square":
                compute = out = DTYPES["int64"]      # torch's square is pow(x, 2): bool -> int64
            if self.name == "abs":         # |complex| is real, in both libraries
                # (a bool is its own: NumPy's answer and torch's CUDA kernel's; its CPU one raises)
                out = _complex.real_of(out)
        if compute.name not in self.dtypes:
            raise _complex.UnsupportedDtypeError(f"unsupported dtype {compute.name} for {self.name}: "
                            f"it computes in {', '.join(self.dtypes)}")
        _complex.check(self.name, lib, compute)
        nparams = sum(isinstance(k, (type, HostScalar)) for k in key) - len(params)
        number = compute
        if self.name in _TRUTH_NUMBERS and lib in ("numpy", "cupy"):
            number = compute.as_truth() if lib == "numpy" else compute.as_int64()
        functor = self.functor_for(compute, convention)
        if self.name in _BITS16 and compute.name in ("float16", "bfloat16"):
            # NumPy's 16-bit loops move these ops' bits, torch's and CuPy's quiet a NaN too
            # (ops.h AbsBits16): on the storage
            quiet = "false" if lib == "numpy" else "true"
            functor = f"sw::{_BITS16[self.name]}<{compute.ctype}, {quiet}>"
            arg_types = ((compute.ctype, compute.ctype),) * self.nin
        if lib != "torch" and self.name in _MIXED_INTS and len(key) == 2 and set(key) == {"int64", "uint64"} \
                and getattr(np, self.ufunc).resolve_dtypes((*(DTYPES[k].numpy for k in key), None))[:2] \
                == tuple(DTYPES[k].numpy for k in key):
            functor = f"sw::MixedIntCompare<{self.functor_for(DTYPES['int32'], convention)} >"
            arg_types = tuple((DTYPES[k].ctype, DTYPES[k].ctype) for k in key)
        return Typing(compute, (out,), params + (number,) * nparams, functor,
                      arg_types, preamble="\n".join(
                          filter(None, (self.header and f"#include <{self.header}>", self.code))),
                      loop=loop, alloc=self._alloc(lib, key, compute),
                      constant=self.name in _CONSTANT_OF_INTEGERS and not (compute.is_float or compute.is_complex))

    def _alloc(self, lib: str, key: tuple, compute: DType) -> str:
        """Typing.alloc: where the library's own op allocates its result otherwise."""
        if self.name.startswith("cast_") or lib == "torch" and self.name == "abs" and compute.is_complex:
            return "like"
        if lib == "torch" and self.name in ("isfinite", "isinf") and not (compute.is_float or compute.is_complex):
            return "like"            # ones_like / zeros_like of an integer or bool tensor
        if lib == "torch" and self.name == "isinf" and compute.is_complex:
            return "real"            # isinf(x.real) | isinf(x.imag)
        if lib == "torch" and self.name == "pow" and isinstance(key[0], type):
            return "contiguous"      # pow.Scalar's meta sets its output without strides
        if lib == "torch" and self.name == "pow" and isinstance(key[1], type):
            return "unary"           # at::pow(Tensor, Scalar)
        if lib == "torch" and self.name == "clip" and any(isinstance(k, type) for k in key[1:]):
            return "unary"           # a number picks at::clamp(Tensor, Scalar?, Scalar?): 0-d bounds too
        if lib == "numpy" and self.name == "where":
            return "iterator"        # np.where: an nditer in order K always, no ufunc trivial loop
        return ""


# Tests whose result is a constant for integers and bools (ops.h kConstant): the kernel reads
# no input, so the plan takes the inputs as uniform and sizes packs by the output (isinf of
# int64 on CUDA wrote 2-byte packs: 0.64x torch's fill at 2^24).
_CONSTANT_OF_INTEGERS = ("isnan", "isfinite", "isinf")

# NumPy's logical ops read a number's truth (DType.as_truth): its bool loop takes the number
# itself, an int as an int64, whatever the arrays. CuPy's read an int as an int64 too, but cast
# a float to the arrays' dtype first (logical_and(float32_array, 1e-310) is all False there).
_TRUTH_NUMBERS = ("logical_and", "logical_or", "logical_xor")

# NumPy 2's exact loops comparing an int64 with a uint64 (qQ->?, Qq->?, where its NumPy has
# them): float64, their common type, would round both (ops.h MixedIntCompare).
_MIXED_INTS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")

# The ops whose numbers torch checks against the dtype's range rather than casting them.
_TORCH_CHECKED = ("clip", "where", "pow", "fma")

def _torch_number_limit(op: str, compute: str) -> float:
    """The magnitude beyond which torch's checked ops refuse a finite float number computing
    in `compute` (torch 2.11-2.13): clamp the dtype's range, pow only 16-bit floats', where
    float32's and complex64's (16-bit floats it casts). inf: only ints no 64-bit integer holds."""
    short = compute in ("float16", "bfloat16")
    if op == "clip" or (op == "pow" and short) or (op == "where" and not short):
        return FLOAT_MAX.get(compute, math.inf)
    return math.inf

# The ops whose torch out= must have the result's dtype (their out kernels check it, where
# the others cast by can_cast).
_TORCH_EXACT_OUT = ("where", "abs", "negative", "bitwise_not", "floor", "ceil", "trunc", "sign")
# The ops whose float16 and bfloat16 kernels read a number in float32, per backend (torch 2.11
# on an H200, 2.13 on the CPU; tools/torch_numbers_probe.py): the others round it to 16 bits.
# floor_divide's forms are bf16_ops.h's (TorchFloorDivide16, TorchFloorDivideByNumber16).
_TORCH_NUMBERS = {"cpu": ("multiply", "divide", "floor_divide"),
                  "cuda": ("add", "subtract", "multiply", "divide", "floor_divide")}


@functools.cache
def _numpy_pow_half_is_sqrt() -> bool:
    """Whether the installed NumPy's power by one exponent of 0.5 is sqrt (ElementwiseOp.numpy_numbers)."""
    with np.errstate(all="ignore"):
        return bool(np.signbit(np.power(np.array([-0.0]), 0.5))[0])


def _one_value(operands: list, compute: DType) -> bool:
    """Whether operand 2 is what torch's CPU kernels read as TensorIterator's is_scalar(2): a
    view of one element broadcast. One of another dtype is cast to the computing dtype
    first, into a copy of its own shape, so only a tensor of one element stays one; one of
    the computing dtype may be any view whose elements all share one address."""
    if len(operands) != 2 or not isinstance(operands[1], View):
        return False
    v = operands[1]
    if v.dtype.name != compute.name:
        return all(n == 1 for n in v.shape)
    return all(s == 0 for n, s in zip(v.shape, v.strides) if n > 1)


def _one_value_in_float(typing: Typing, key: tuple) -> Typing:
    """torch's CPU mul, div and floor_divide of float16 or bfloat16 by a one-element tensor
    (`_one_value`) read its value from its own dtype into float32 (TensorIterator's
    original_scalar_value), not rounded to 16 bits: `f16 * torch.tensor([2049])` multiplies
    by 2049, where a cast would give 2048. One of the computing dtype keeps the loads of its
    dtype (its value is the same)."""
    if key[1] == typing.compute.name:
        return typing
    return dataclasses.replace(typing, arg_types=(
        (typing.compute.ctype, "float"), (DTYPES[key[1]].ctype, "float")))


def _opmath(dt: DType) -> str:
    return "float" if dt.ctype in ("sw::half", "sw::bfloat16") else dt.ctype


def _key_name(k) -> str:
    return f"a Python {k.__name__}" if isinstance(k, type) else k


@dataclass
class Prepared:
    """A resolved call: everything needed to launch, and to explain it."""

    backend: str
    lib: str
    device: tuple
    plan: _plan.Plan
    layout: _plan.Layout
    algorithm: object
    spec: _codegen.KernelSpec
    source: str
    static: tuple          # slot values after the pointers: n, aux, shape, strides, periods
    record: struct.Struct  # packs pointers + static + params
    kernel: object = None
    config: object = None
    label: object = None   # user kernels: how compile errors name them
    origins: tuple = ()    # (field, value, "caller" / "tuning for ..." / "default ...")
    out_layout: str = ""   # the output's strides and the rule that chose them (explain)


_CALLS: dict = {}      # call signature -> (lib, device, typing, shape, convention), and
                       # raw argument signature -> _Fast (the warm path); user kernels keep their own
_MEMO: dict = {}       # (call signature, out alignment) -> Prepared
_KERNELS: dict = {}    # (backend, device, source) -> loaded kernel


def _operands(op, args):
    if len(args) != op.nin:
        raise TypeError(f"{op.name} takes {op.nin} arrays or scalars, got {len(args)}")
    return [_arrays.as_operand(a, i) for i, a in enumerate(args)]


def _sig(o):
    if isinstance(o, View):
        return (o.lib, o.device, o.dtype.name, o.shape, o.strides, o.ptr % 16)
    return o.pytype if o.tensor is None else (o.pytype, o.tensor)


def _key(o):
    """An operand as promotion sees it: its dtype's name (marked for a 0-d torch tensor, which
    ranks below tensors with dimensions) or a Python number's type."""
    if not isinstance(o, View):
        return o.pytype if o.tensor is None else HostScalar(o.tensor)
    return ZeroDim(o.dtype.name) if o.lib == "torch" and not o.shape else o.dtype.name


def _prepare(op, operands, out_views, convention, inplace, index=None):
    """Check and promote once per signature: (lib, device, typing, shape, convention)."""
    names, out_names = op.names
    given = [(v, nm) for v, nm in zip(out_views, out_names) if v is not None]
    views = [o for o in operands if isinstance(o, View)]
    vnames = [nm for o, nm in zip(operands, names) if isinstance(o, View)]
    if index is not None:   # a user kernel's loop: its extent joins the broadcast
        views, vnames = views + [index], vnames + ["the loop (size=)"]
    lib, device = _arrays.resolve_backend(views + [v for v, _ in given],
                                          vnames + [nm for _, nm in given])
    conv = convention or ("torch" if lib == "torch" else "numpy")
    key = tuple(_key(o) for o in operands)
    typing = op.typing(lib, key, tuple(v and v.dtype.name for v in out_views), conv)
    if lib == "torch" and isinstance(op, ElementwiseOp):
        typing = op.torch_numbers(typing, key, device[0], _one_value(operands, typing.compute))
    elif lib == "numpy" and isinstance(op, ElementwiseOp):
        typing = op.numpy_numbers(typing, operands)
    # User kernels broadcast their outputs too (an out may fix extents no input has), and so
    # do NumPy's and CuPy's ufuncs: np.add(row, 1, out=matrix) fills every row.
    given = [(v, nm, op.broadcast_outputs or lib in ("numpy", "cupy")) for v, nm in given]
    shapes = [v.shape for v in views] + [v.shape for v, _, joins in given if joins]
    if not getattr(op, "broadcasting", True) and len(set(shapes)) > 1:
        raise ValueError(f"{op.name} was made with broadcasting=False, but the arguments have "
                         f"shapes {', '.join(map(str, shapes))}; pass equal shapes or drop the flag")
    shape = _plan.broadcast_shapes(shapes, vnames + [nm for _, nm, joins in given if joins])
    if inplace and shape != views[0].shape:
        raise ValueError(
            f"in-place {op.name}_ would expand {names[0]} from {views[0].shape} to {shape}; "
            f"use {op.name}(..., out=...) with an output of shape {shape}")
    for v, nm, _ in given:
        if (v.lib, v.device) != (lib, device):
            raise ValueError(f"{nm} is a {v.lib} array on {v.device} but the inputs are "
                             f"{lib} arrays on {device}; pass an {nm} from the same library and device")
    return lib, device, typing, shape, conv


def _register_budget(block_size: int | None) -> int:
    """Registers per thread that let a block of `block_size` threads launch (an SM's 65536),
    where that bounds the kernel below the 255 it may use anyway; 0 for no bound."""
    if not block_size or 65536 // block_size >= 255:
        return 0
    return 65536 // block_size


def _new_strides(lib: str, shape: tuple, operands, common: str, backend: str,
                 loop_dtype: str | None = None, nout: int = 1, alloc: str = ""):
    """(strides, input layouts) of a new output of `shape`, by `lib`'s rule (_layout): the
    one place eager allocation and torch's fake implementations take them from."""
    ins = tuple((o.shape, o.strides, o.dtype.name) if isinstance(o, View) else ((), (), "")
                for o in operands)[:1 if alloc == "unary" else None]
    if alloc == "real":     # TensorIterator over the input's real view: strides doubled, in floats
        ins = tuple((s, tuple(2 * t for t in st), _complex.real_of(DTYPES[dt]).name) for s, st, dt in ins)
        common = _complex.real_of(DTYPES[common]).name
    return _layout.output_strides(lib, shape, ins, common, backend, loop_dtype, nout, alloc), ins


def _build(op, operands, outs: list, info, algorithm, index=None) -> Prepared:
    lib, device, typing, shape, convention = info
    # A user kernel's flat index goes right after the outputs, and the plan counts it as one:
    # an output is never staged, gathered or uniform, so its offset is always the index.
    lead = outs + ([] if index is None else [index])
    views = lead + [o for o in operands if isinstance(o, View)]
    # a constant result's inputs are never read (Typing.constant): planned as one element of
    # the output's size, so that neither their strides nor their width size the packs
    p = _plan.plan(shape, [(v.shape, (0,) * len(v.shape), lead[0].dtype.itemsize, v.ptr)
                           if typing.constant and k >= len(lead) else (v.shape, v.strides, v.dtype.itemsize, v.ptr)
                           for k, v in enumerate(views)],
                   nout=len(lead), nparams=len(typing.params))
    backend = device[0]
    be, caps = get_backend(backend), capabilities(backend, device)
    key = be.device_key(device)
    tuning = elementwise_tuning(backend, key, typing.compute.name)
    alg = _resolve._resolve_elementwise(algorithm, p, tuning, caps, [v.dtype for v in views])
    layout = p.layout(alg.mode, alg.pack, getattr(alg, "share_rows", False))
    staged = caps._reads("stage") and getattr(alg, "stage", None)   # the host never stages
    inputs, na, npar = [], len(lead), 0
    for o in operands:
        if isinstance(o, View):
            inputs.append(("array", na))
            na += 1
        else:
            inputs.append(("param", npar))
            npar += 1
    order = typing.order or tuple(("in", i) for i in range(len(operands)))
    args = tuple(inputs[i] if src == "in" else ("index", len(outs)) if src == "index" else ("out", i)
                 for src, i in order)
    spec = _codegen.KernelSpec(
        op=getattr(op, "kernel_name", op.name), functor=typing.functor,
        arrays=tuple(v.dtype for v in views),
        params=typing.params, args=args, compute=typing.compute, mode=alg.mode,
        kinds=caps._kernel_kinds(layout.kinds), pack=layout.pack, index_bits=p.index_bits, ndim=p.ndim,
        nout=len(outs), preamble=typing.preamble, arg_types=typing.arg_types,
        out_types=typing.out_types, reads=typing.reads, keep_loads=bool(alg.keep_loads),
        tile=be.tile_width(alg, layout.pack) if staged else 0,
        index=-1 if index is None else len(outs), options=typing.options,
        row_heads=layout.row_heads, row_spacing=layout.row_spacing, wrapped=layout.wrapped,
        max_registers=_register_budget(getattr(alg, "block_size", None)),
        cheap=getattr(op, "cheap", False))
    source = _codegen.generate(spec, lambda s: be.entry_point(s, tuning.kernels))
    periods = layout.periods or (0,) * len(views)
    static = (p.n, layout.aux, *p.shape, *(s for st in p.strides for s in st), *periods)
    prepared = Prepared(backend, lib, device, p, layout, alg, spec, source, static,
                        struct.Struct(_codegen.slot_format(spec)), label=typing.label)
    prepared.config = be.configure(spec, p, alg, device, lib)
    prepared.origins = field_origins(algorithm, alg, tuning.for_mode(alg.mode),
                                     tuning_device(backend, key, typing.compute.name))
    return prepared


def _kernel(prepared: Prepared):
    key = (prepared.backend, prepared.device, prepared.source)
    kernel = _KERNELS.get(key)
    if kernel is None:
        be = get_backend(prepared.backend)
        try:
            extra = {"options": prepared.spec.options} if prepared.spec.options else {}
            artifact = be.compile(prepared.source, prepared.spec.entry, prepared.device, **extra)
        except getattr(be, "CompileError", ()) as e:
            if prepared.label is None:
                raise
            raise type(e)(prepared.label.message(str(e))) from None
        kernel = _KERNELS[key] = be.load(artifact, prepared.spec.entry, prepared.device)
    return kernel


@dataclass(frozen=True, slots=True)
class _Fast:
    """A warm call: launch straight from the raw arguments' pointers.

    extents: per input array of the call, (below, above, same): the byte ranges of that
    array and of the output intersect exactly when below < its pointer - the output's
    pointer < above, and same says it is a view identical to the output (allowed at the
    output's own pointer). The overlap test on a warm call is one chained comparison per
    input. A range overlap that is not an identical view goes back to the full check.
    alloc: () -> (new output, its pointer), or None when the caller passes out; out_mod:
    the output pointer mod 16 the plan assumed.
    """

    prepared: Prepared
    launch: object
    alloc: object
    out_mod: int
    extents: tuple
    params: tuple          # per Python scalar, the dtype it converts to


def _fast_key(op, args, out, convention, algorithm, inplace):
    """(key, pointers, scalars) of a call whose arguments all have fast keys, or None.

    The key is flat: (op, convention, algorithm, inplace, then out's key segment or None,
    then each argument's segment); a segment (_arrays keyers) starts with a marker that fixes
    its length (a torch dtype: 5 items, np.ndarray or cupy.ndarray: 6, a Python number's
    type: 1), so the flat tuple reads back one way. pointers: the output's (when passed),
    then the arrays'; scalars: the Python numbers, or None. _fast_call builds it (the cold
    path remembers a call under it).
    """
    return _fast_call(op, args, out, convention, algorithm, inplace, None)


def _fast_call(op, args, out, convention, algorithm, inplace, calls,
               keyers=_arrays._KEYERS, torch_key=_arrays._torch_key,
               torch_mark=_arrays._meaning.torch_mark):
    """The warm path, or None when this call must go through the full pipeline.

    With calls None, only _fast_key's answer. Torch tensors are keyed inline, as _torch_key
    would: a keyer call per tensor was a quarter of the keying time.
    """
    scalars = None
    if out is None:
        key = [op, convention, algorithm, inplace, None]
        ptrs = []
    else:
        if type(out) is list or type(out) is tuple:
            if len(out) != 1:
                return None
            out = out[0]
        keyer = keyers.get(type(out))
        if keyer is torch_key:
            try:
                p = out.data_ptr()
                key = [op, convention, algorithm, inplace, out.dtype, out.shape, out.stride(),
                       out.get_device(), p % 16 + torch_mark(out)]
            except RuntimeError:     # sparse, nested: the full path refuses them by name
                return None
        else:
            keyer = keyer or _arrays.keyer(out)
            if keyer is None:
                return None
            k, p = keyer(out)
            if p is None:
                return None
            key = [op, convention, algorithm, inplace, *k]
        ptrs = [p]
    for x in args:
        keyer = keyers.get(type(x))
        if keyer is torch_key:
            try:
                p = x.data_ptr()
                key += x.dtype, x.shape, x.stride(), x.get_device(), p % 16 + torch_mark(x)
            except RuntimeError:
                return None
            ptrs.append(p)
            continue
        keyer = keyer or _arrays.keyer(x)
        if keyer is None:
            return None
        k, p = keyer(x)
        key += k
        if p is not None:
            ptrs.append(p)
        elif scalars is None:
            scalars = [x]
        else:
            scalars.append(x)
    key = tuple(key)
    if calls is None:
        return key, ptrs, scalars
    fast = calls.get(key)
    if fast is None:
        return None
    alloc = fast.alloc
    written = False
    if alloc is None:
        if inplace:
            result = args[0]
            ptrs.insert(0, ptrs[0])
        else:
            result = out
        written = keyers.get(type(result)) is torch_key
        o, i = ptrs[0], 1
        for below, above, same in fast.extents:   # indexing: half the time of zip(ptrs, ...)
            d = ptrs[i] - o
            if below < d < above and not (same and d == 0):
                return None          # may overlap: the full check decides, or raises
            i += 1
    else:
        result, o = alloc()
        if o % 16 != fast.out_mod:
            return None
        ptrs.insert(0, o)
    if scalars is None:
        fast.launch(ptrs, ())
    else:
        fast.launch(ptrs, [dt.slot_value(v) for dt, v in zip(fast.params, scalars)])
    if written:          # an in-place write counts, as torch's own do
        _torch_ops.bump(result)
    return result


if _WARM is not None:   # the same steps compiled (tests compare the two)
    _WARM.configure(_arrays._KEYERS, _arrays._torch_key, _arrays._numpy_key, _arrays.keyer)
    _warm_call = _WARM.fast_call
else:
    _warm_call = _fast_call


def _remember(calls, key, prepared, out_views, in_views, allocated, info):
    """Make the call just run a warm one (only when every argument had a fast key)."""
    lib, device, typing, shape, _ = info
    out0 = out_views[0]
    olo, ohi = (e - out0.ptr for e in out0.extent())
    extents = []
    for v in in_views:
        lo, hi = (e - v.ptr for e in v.extent())
        # [p + lo, p + hi) meets [o + olo, o + ohi) iff olo - hi < p - o < ohi - lo; an
        # empty range meets nothing
        below, above = (olo - hi, ohi - lo) if lo < hi and olo < ohi else (0, 0)
        extents.append((below, above, v.dtype is out0.dtype
                        and _arrays._broadcast_strides(v, shape) == out0.strides))
    alloc = _arrays.allocator(lib, device, shape, typing.outs[0], out0.strides) if allocated else None
    p = prepared   # bind: a launcher that keeps everything but pointers and values
    run = get_backend(p.backend).bind(p.kernel, p.config, p.record, p.static)
    calls[key] = _Fast(prepared, run, alloc, out0.ptr % 16, tuple(extents), typing.params)


def _call(op, args, out=None, convention=None, algorithm=None, inplace=False, dry=False,
          calls=_CALLS, memo=_MEMO, index=None, stream=None):
    """Run `op` on `args`. `out`: None (allocate), one array, or one per output.

    User kernels' calls may add `index` (_usercall.index_view: the flat loop index operand,
    whose shape joins the broadcast) and `stream` (a CUDA stream handle to launch on in place
    of the owning library's current one); such calls take the full path.
    """
    if not dry and index is None and stream is None:
        result = _warm_call(op, args, out, convention, algorithm, inplace, calls)
        if result is not None:
            return result
    if isinstance(op, ElementwiseOp):      # (a user kernel's NumPy scalar keeps its type)
        args = _arrays.numpy_scalars(args)
    if not dry and index is None and stream is None and _torch_ops.routed(args, out):
        # autograd, fake or meta tensors, dispatch modes
        return _torch_ops.call(op, args, out, convention, algorithm, inplace)
    if _dask.has_dask(args, out):
        return _dask.call(op, args, out, convention, algorithm, inplace, dry)
    keep_0d = out is Ellipsis          # NumPy's out=...: allocate, and a 0-d result stays an array
    if keep_0d:
        out = None
    if isinstance(op, ElementwiseOp):
        args = _arrays.array_likes(args)
        if isinstance(out, tuple) and len(out) != op.nout:    # NumPy's checks, and its errors
            raise ValueError(f"The 'out' tuple must have exactly one entry per output of "
                             f"{op.name} ({op.nout}); got {len(out)}")
        if isinstance(out, list) and not out:
            raise TypeError("out must be an array or a tuple of them, got an empty list")
        if isinstance(out, (tuple, list)) and all(o is None for o in out):
            out = None                 # NumPy's out=(None,): allocate
        given = out if isinstance(out, (tuple, list)) else () if out is None else (out,)
        if any(_arrays.unreadable(x) for x in (*args, *given)):
            return _buffered_call(op, args, out, convention, algorithm, inplace, dry)
        wrap = _arrays.subclass_wrap(args) if op.ufunc and out is None and not inplace else None
        if wrap is not None:     # NumPy's ufunc protocol: computed on the plain arrays, then wrapped
            plain = tuple(np.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
            result = _call(op, plain, ... if keep_0d else None, convention, algorithm, dry=dry)
            return wrap(result, None, False) if isinstance(result, np.ndarray) else result
    fast = None if dry or op.nout != 1 or index is not None or stream is not None \
        else _fast_key(op, args, out, convention, algorithm, inplace)
    allocated = out is None and not inplace
    algorithm = Auto() if algorithm is None else algorithm
    operands = _operands(op, args)
    if isinstance(op, ElementwiseOp):
        operands = host_scalars(operands)
        if any(isinstance(o, Scalar) and o.tensor for o in operands):
            fast = None     # the warm path would pass the CPU tensor's pointer
    if inplace:
        if not isinstance(operands[0], View):
            raise TypeError(f"{op.name}_ works in place on x1, which must be an array")
        out = args[0]
    if out is None:
        outs = None
        out_views = (None,) * op.nout
    else:
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(outs) != op.nout:
            raise TypeError(f"{op.name} has {op.nout} outputs; got {len(outs)} out arrays")
        out_views = tuple(_arrays.as_operand(o, -1) for o in outs)
        for o, v in zip(outs, out_views):
            if not isinstance(v, View) or isinstance(o, np.generic):   # a NumPy scalar: immutable
                raise TypeError(f"out must be an array, got a {type(o).__name__}; pass a NumPy, "
                                "torch or CuPy array of the result's shape, or leave out unset")
    # Everything but the pointers is fixed by this signature: promotion, shape checks and
    # the plan run once per signature, the overlap check (pointers) on every call with out.
    sig = (op.name, convention, algorithm, tuple(v and _sig(v) for v in out_views),
           tuple(_sig(o) for o in operands), index and index.shape, torch_default_float())
    info = calls.get(sig)
    if info is None:
        if convention is not None and convention not in CONVENTIONS:
            raise ValueError(f"convention must be 'torch' or 'numpy', got {convention!r}")
        info = calls[sig] = _prepare(op, operands, out_views, convention, inplace, index)
    lib, device, typing, shape, _ = info
    if lib == "torch" and outs is not None and not inplace and isinstance(op, ElementwiseOp) \
            and out_views[0].shape != shape:
        if dry:          # explain writes nothing: the kernel a resized out would run
            return _call(op, args, None, convention, algorithm, dry=True)
        strides = _new_strides(lib, shape, operands, typing.compute.name, device[0],
                               alloc=typing.alloc)[0]
        _torch_ops.resize_out(outs[0], shape, strides)   # torch's out= rule
        return _call(op, args, outs[0], convention, algorithm)
    layout_note = "given by the caller (out=)"
    if outs is None and typing.outs:
        strides, ins = _new_strides(lib, shape, operands, typing.compute.name, device[0],
                                    typing.loop or typing.compute.name, len(typing.outs), typing.alloc)
        layout_note = _layout.layout_reason(lib, shape, ins, strides, typing.alloc)
        outs = [_arrays.allocator(lib, device, shape, dt, strides)()[0] for dt in typing.outs]
        out_views = [_arrays.as_operand(o, -1) for o in outs]
    elif outs is None:                       # a user kernel without outputs
        outs = out_views = []
    elif isinstance(op, ElementwiseOp) and (
            any(v.dtype is not dt for v, dt in zip(out_views, typing.outs))
            or lib in ("numpy", "cupy") and _arrays.partial_overlap(
                out_views[0], shape, [o for o in operands if isinstance(o, View)]) is not None):
        # another dtype, or (NumPy and CuPy buffer it; torch refuses) memory an input still
        # needs: the result first, then into out
        if lib == "torch":   # torch refuses an out partially overlapping an input, of any dtype
            _check_outs(op, operands, out_views, shape, [v.dtype for v in out_views])
        return _into_outs(op, args, outs, out_views, lib, shape, typing.outs, convention, algorithm,
                          inplace, dry)
    else:
        _check_outs(op, operands, out_views, shape, typing.outs)
    result = outs[0] if op.nout == 1 else tuple(outs)
    if _arrays._prod(shape) == 0 and not dry:
        # nothing to compute, but a number beyond its dtype's range raises, as in the library
        for dt, o in zip(typing.params, (o for o in operands if isinstance(o, Scalar))):
            dt.slot_value(o.value)
        return result
    key = (sig, tuple(v.ptr % 16 for v in out_views))
    prepared = memo.get(key)
    if prepared is None:
        try:
            prepared = _build(op, operands, list(out_views), info, algorithm, index)
        except _plan.TooManyDims:
            if dry or index is not None or stream is not None or not isinstance(op, ElementwiseOp):
                raise
            return _split_call(op, args, outs, shape, convention, algorithm, inplace)
        prepared.out_layout = layout_note
        if dry:
            return prepared
        prepared.kernel = _kernel(prepared)
        memo[key] = prepared
    elif dry:
        return prepared
    in_views = [o for o in operands if isinstance(o, View)]
    values = [dt.slot_value(o.value) for dt, o in
              zip(prepared.spec.params, (o for o in operands if isinstance(o, Scalar)))]
    slots = prepared.record.pack(*(v.ptr for v in out_views), *([] if index is None else [0]),
                                 *(v.ptr for v in in_views), *prepared.static, *values)
    config = prepared.config
    if stream is not None and config is not None:   # the host has no streams: done on return
        config = config.replace(stream=lambda: stream)
    get_backend(prepared.backend).launch(prepared.kernel, config, slots)
    if lib == "torch" and out is not None:   # an in-place write counts, as torch's own do
        for o in outs:
            _torch_ops.bump(o)
    elif lib == "cuda" and allocated and in_views:   # a JAX input's output is a JAX array
        result = _foreign.finish(result, _foreign.producer_of(in_views[0].obj))
    if lib == "numpy" and allocated and not shape and isinstance(op, ElementwiseOp) \
            and op.promote in ("same", "float", "bool") and not keep_0d:
        # a ufunc's 0-d result is a NumPy scalar (np.where's and astype's stay 0-d arrays);
        # not remembered warm, whose calls return what they allocate
        return result[()]
    if fast is not None:
        _remember(calls, fast[0], prepared, list(out_views), in_views, allocated, info)
    return result


def _buffered_call(op, args, out, convention, algorithm, inplace, dry):
    """A built-in op over arrays the kernels cannot read in place (_arrays.unreadable: NumPy's
    non-native or misaligned ones, torch's lazy conjugates), as NumPy's iterator buffers them
    and torch's ops resolve them: such inputs as readable copies, and such an out (or x1 in
    place) through a readable copy of itself that takes the result, then the library's copy
    back into it."""
    readable = lambda x: _arrays.readable(x) if _arrays.unreadable(x) else x
    for o in (args[:1] if inplace else out if isinstance(out, (tuple, list)) else (out,)):
        if isinstance(o, np.ndarray) and _arrays.unreadable(o) and not o.flags.writeable:
            raise ValueError(f"{'x1' if inplace else 'out'} is read-only; pass a writeable array")
    if inplace:
        first = readable(args[0])
        result = _call(op, (first, *map(readable, args[1:])), None, convention, algorithm,
                       inplace=True, dry=dry)
        if first is args[0] or dry:
            return result
        _arrays.write_back(args[0], first)
        return args[0]
    many = isinstance(out, (tuple, list))
    outs = list(out) if many else [] if out is None else [out]
    temps = [readable(o) for o in outs]
    result = _call(op, tuple(map(readable, args)), (tuple(temps) if many else temps[0]) if temps
                   else None, convention, algorithm, dry=dry)
    if not temps or dry:
        return result
    for o, t in zip(outs, temps):
        if t is not o:
            _arrays.write_back(o, t)
    return tuple(outs) if many else outs[0]


def _split_call(op, args, outs, shape, convention, algorithm, inplace):
    """A built-in op over a layout of more than MAX_DIMS dims after merging (NumPy allows 64):
    one call per index of the outermost dim, each with one dim less (and again, recursively),
    into the outs already allocated or given. Rare layouts (nine or more dims, none mergeable),
    so a Python loop over their outermost extent."""
    def part(x, i):     # x's part at index i of the outermost dim, where x spans that dim
        if getattr(x, "ndim", 0) == len(shape) and not isinstance(x, np.generic):
            return x[i if x.shape[0] != 1 else 0]
        return x

    for i in range(shape[0]):
        sub_outs = [o[i] for o in outs]
        sub_args = tuple(part(a, i) for a in args)
        if inplace:
            _call(op, (sub_outs[0],) + sub_args[1:], None, convention, algorithm, inplace=True)
        else:
            _call(op, sub_args, sub_outs[0] if op.nout == 1 else tuple(sub_outs), convention,
                  algorithm)
    return outs[0] if op.nout == 1 else tuple(outs)


# ops whose NumPy float16 loop (and ml_dtypes' bfloat16 one) moves bits: their bit functors
_BITS16 = {"abs": "AbsBits16", "negative": "NegativeBits16", "copysign": "CopysignBits16"}


def _castable(lib: str, frm: DType, to: DType, casting: str = "same_kind") -> bool:
    """Whether `lib` casts an op's result of dtype `frm` into an out of dtype `to`: torch's
    can_cast (no float to integer, no complex to real, nothing to bool but bool), NumPy's and
    CuPy's by the casting rule (their ufuncs' default: "same_kind")."""
    if lib == "torch":
        import torch
        return _torch_ops.can_cast(getattr(torch, frm.name), getattr(torch, to.name))
    if lib in ("numpy", "cupy"):
        return bool(np.can_cast(frm.numpy, to.numpy, casting=casting))
    return False


def _into_outs(op, args, outs, out_views, lib, shape, results, convention, algorithm, inplace,
               dry):
    """A built-in op whose out has another dtype than its result, or (NumPy, CuPy) shares
    memory that an input still needs: the result in its own dtype first, then cast or copied
    into out, as NumPy's ufuncs and torch's out= do (the loop runs in the result's dtype, so
    float16 sums are rounded to float16 before a float32 out sees them). Two passes: the cast
    in the op's own store would skip that rounding. `explain` (dry) shows the op's own
    kernel."""
    from stridewise.ops.builtins import cast

    names = op.names[1]
    for v, dt, nm in zip(out_views, results, names):
        # (clamp by numbers is at::clamp(Tensor, Scalar, Scalar): its out too)
        exact = op.name in _TORCH_EXACT_OUT or op.name == "clip" and any(
            type(a) in (bool, int, float) for a in args[1:])
        if op.name == "abs" and getattr(getattr(args[0], "dtype", None), "is_complex", False):
            # torch's abs of a complex tensor casts into a real out, and takes a complex out of
            # the input's dtype only
            exact, dt = v.dtype.is_complex, dtype_of(args[0].dtype) if v.dtype.is_complex else dt
        if v.dtype is not dt and lib == "torch" and exact:
            raise TypeError(f"torch's {op.name} takes an {nm} of its result's dtype only, "
                            f"{dt.name} (got {v.dtype.name}); pass an {nm} of dtype {dt.name}")
        if v.dtype is not dt and not _castable(lib, dt, v.dtype, op.casting):
            rule = "torch's can_cast" if lib == "torch" else f'the casting rule "{op.casting}"'
            fix = (f"call {op.name}(...) out of place, or cast x1 to {dt.name} first" if inplace
                   else f"pass an {nm} of dtype {dt.name}")
            raise TypeError(f"{op.name}'s result has dtype {dt.name}, which {rule} does not "
                            f"cast to {'x1' if inplace else nm}'s {v.dtype.name}; {fix}")
        _arrays.check_out(v, shape, v.dtype, [], [])   # shape, writeable, no self-overlap
    result = _call(op, args, None, convention, algorithm, dry=dry)   # the library's layout
    if dry:
        how = "cast" if any(v.dtype is not dt for v, dt in zip(out_views, results)) else "copied"
        return dataclasses.replace(result, out_layout=f"{result.out_layout}: a temporary, then "
                                   f"{how} into the given out (a second pass)")
    for r, o, v in zip([result] if op.nout == 1 else result, outs, out_views):
        cast(r, v.dtype.name, out=o)
    return outs[0] if op.nout == 1 else tuple(outs)


def _check_outs(op, operands, out_views, shape, dtypes):
    """Each out against the inputs, and the outs against each other (no overlap at all)."""
    names, out_names = op.names
    pairs = [(o, nm) for o, nm in zip(operands, names) if isinstance(o, View)]
    inputs, in_names = [o for o, _ in pairs], [nm for _, nm in pairs]
    for k, (v, dt) in enumerate(zip(out_views, dtypes)):
        try:
            _arrays.check_out(v, shape, dt, inputs, in_names)
        except (ValueError, TypeError) as e:
            if op.nout == 1:
                raise
            raise type(e)(f"{out_names[k]}: {e}") from None
        for w, nm in zip(out_views[:k], out_names):
            lo, hi = v.extent()
            wlo, whi = w.extent()
            if lo < whi and wlo < hi:
                raise ValueError(f"outputs {nm} and {out_names[k]} overlap; pass separate arrays")


# name -> (op, in place): what explain knows; the op table (_builtins) fills it.
_OPS: dict = {}


def _warm_user(kernel, args, out, algorithm, calls):
    """A user kernel's warm call, or None where the call takes the full path (_call)."""
    return _warm_call(kernel, args, out, None, algorithm, False, calls)


# Dynamo traces these in place of the eager entry points: a compiled graph holds the op's
# torch.library custom op (_torch_ops).
_call._torchdynamo_inline = _torch_ops.traced_call
_warm_user._torchdynamo_inline = lambda *args: None     # traced calls go through _call


def explain(op: object, *args: Operand, **kw: object) -> Explanation:
    """Plan and resolve a call without running it.

    `op` is a built-in op (the function or its name) or an ElementwiseKernel.

    Returns
    -------
    Explanation with .mode, .shape, .strides, .algorithm, .source and more; it prints readably.
    """
    from stridewise.ops import keywords as _keywords

    if hasattr(op, "_explain"):
        return Explanation.from_prepared(op.name, op._explain(args, kw))
    name = getattr(op, "__name__", op)
    if name not in _OPS:
        raise ValueError(f"explain knows {', '.join(_OPS)} and ElementwiseKernel objects; got {op!r}")
    eop, inplace = _OPS[name]
    out = kw.get("out")
    if any(kw.get(k) is not None for k in _keywords.KEYWORDS):   # the derived op that runs
        eop, args, out = _keywords.resolve(eop, args, out, kw)
    prepared = _call(eop, args, out, kw.get("convention"), kw.get("algorithm"),
                     inplace=inplace, dry=True)
    return Explanation.from_prepared(eop.name, prepared)
