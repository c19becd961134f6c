"""Built-in elementwise ops: the op table, and everything generated from it.

Each row of `_TABLE` is one op: its inputs, functor, compute dtypes, promotion, NumPy and
torch counterparts, tolerance and docstring. From the rows come the public functions
(`sw.add`, with real signatures, in `__all__`), what `explain` knows, the README's table and
the type stub `ops/builtins.pyi` (tools/op_table.py writes both), and the tests that hold every
row to its NumPy and torch counterparts (tests/test_builtin_ops.py). A new op is one row,
plus a functor in include/stridewise/ops.h where its math is new (CuPy's create_ufunc
pattern). `cast` is the one op outside the table: its target dtype selects the kernel.

Every op runs on the same pipeline as user kernels (broadcasting, every mode, out=, torch /
CuPy / NumPy arrays). The functors live in include/stridewise/ops.h, remainder's in
functors.h (its exact fmod fast paths are most of that header).

Semantics, where the libraries leave room:

- Dtypes follow the owning library's promotion (torch.result_type / the NumPy ufunc's loop).
  Ops marked "float" compute integer inputs in the library's default float (NumPy float64,
  torch's default dtype: float32 unless torch.set_default_dtype changed it). float16 and
  bfloat16 compute in float32 and round once on store.
- maximum / minimum: a NaN operand wins (NumPy and torch agree); a +-0 tie returns the
  second operand, as NumPy's float32 and float64 loops and torch's vector paths do
  (maximum(-0.0, 0.0) is 0.0), and the first for NumPy's float16, as its float16 loop does.
  clip keeps x on a tie with a bound, except for NumPy's float32 and float64 clipped by
  arrays of more than one element (the bound; _clip_ties).
- relu is torch's clamp_min(x, 0): NaN stays NaN and -0.0 stays -0.0.
- floor_divide: NumPy's and torch's float definition (through fmod, exact); integer division
  by zero gives 0 and never traps (NumPy; torch raises); INT_MIN // -1 wraps to INT_MIN.
- fmod: integer division by zero gives 0 (NumPy).
- pow on integers: a negative exponent given as a Python int raises ValueError, as both
  libraries do, and so does one inside a NumPy array (NumPy's loop raises); inside a torch or
  CuPy array it gives trunc(a ** b) (torch's definition: 1 for a = 1, +-1 for a = -1, 0
  otherwise, 0 ** -1 included).
- where(condition, x, y): condition must have dtype bool for torch tensors; NumPy and CuPy
  arrays of any real dtype, and Python numbers, count where nonzero (NaN included), as NumPy's
  where does; x and y promote, and the selected branch's bits pass as they are (NaN payloads).
- cast(x, dtype): float64 -> float16 rounds once (NumPy; torch rounds through float32 and can
  differ on rare ties); float -> int of NaN, inf or out-of-range values is undefined.
- fma(x, y, z) = x * y + z with one rounding for float32 and float64; integers wrap.
- remainder: the sign of the divisor; a zero result keeps the dividend's sign under the
  torch convention (torch on CUDA) and takes the divisor's under NumPy's.
"""
from __future__ import annotations

import functools
import math
import numbers
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from stridewise.launch import pipeline as _ops
from stridewise.integrations import torch_ops as _torch_ops
from stridewise.operands import arrays as _arrays
from stridewise.ops import complex as _complex
from stridewise.ops import keywords as _keywords
from stridewise.launch.pipeline import ElementwiseOp, _call
from stridewise._typing import AlgorithmLike, Array, Convention, Operand
from stridewise.operands.dtypes import dtype_of
from stridewise.operands.promote import torch_default_float

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_ALL = _FLOATS + _INTS
_BOOL = _ALL + ("bool",)   # where bool is closed under the op in NumPy and torch (or, and)
_BITS = _INTS + ("bool",)

_X, _X2 = ("x",), ("x1", "x2")
_MATH = "stridewise/math.h"    # the math functors, with the host's vector math
# The transcendentals come from different libraries (glibc here, NumPy's SIMD loops, Sleef in
# torch, CUDA's libdevice on the GPU), each accurate to about 1 ulp of the true value; 16-bit
# results can land one ulp apart when float32 results straddle a rounding boundary.
_LIBM = {"float64": 2, "float32": 4, "float16": 1, "bfloat16": 1}


@dataclass(frozen=True)
class Row:
    """One built-in op: everything its function, its README row and its tests come from.

    Attributes
    ----------
    name : the public function's name (and the kernel's).
    params : the inputs' names, in order; their number is the op's arity.
    functor : C++ functor template; "{T}" is the compute type, "{M}" its OpMath type, "{C}"
        the convention (sw::kTorch or sw::kNumpy).
    dtypes : the compute dtypes the op supports.
    ufunc : the NumPy ufunc whose dtype resolution the op follows, and the tests' NumPy
        oracle (None: NumPy's result_type, and an oracle the tests declare).
    doc : the docstring's first lines.
    torch : the torch function of the same meaning (the tests' torch oracle); "" is `name`,
        None is none.
    promote : "same", "float", "bool" or "where" (ElementwiseOp.promote).
    ulp : per result dtype, the largest distance from NumPy and torch in units in the last
        place; a dtype not listed is exact (bit for bit).
    check : called with the inputs before anything runs; raises on arguments the libraries
        refuse (pow's negative integer exponent).
    convention : the function takes convention= ("torch" or "numpy").
    inplace : there is also `name_`, which writes into its first input.
    header : the header the functor lives in ("": functors.h, always included).
    code : C++ the functor needs, placed before the kernel (an op whose functor is not in a
        header: a test's toy op).
    cheap : its arithmetic costs less than moving its bytes: the host starts threads by the
        bytes a call moves, not by its elements (cpu/loops.h worth_threads). Most ops are;
        divisions and the C library's functions are not.
    keywords : the library keywords the function takes beyond NumPy's ufunc keywords
        (where=, dtype=, casting=, order=, subok=), which every op with a NumPy ufunc takes,
        with out= positional too, as a ufunc's (`takes`; ops/keywords.py computes them).
    """

    name: str
    params: tuple[str, ...]
    functor: str
    dtypes: tuple[str, ...]
    ufunc: str | None
    doc: str
    torch: str | None = ""
    promote: str = "same"
    ulp: dict[str, int] = field(default_factory=dict)
    check: Callable[..., None] | None = None
    convention: bool = False
    inplace: bool = False
    header: str = "stridewise/ops.h"
    code: str = ""
    cheap: bool = True
    keywords: tuple[str, ...] = ()

    @property
    def takes(self) -> tuple[str, ...]:
        return ("where", "dtype", "casting", "order", "subok") * bool(self.ufunc) + self.keywords

    @property
    def torch_name(self) -> str | None:
        return self.name if self.torch == "" else self.torch


class IntegerPowerError(ValueError, RuntimeError):
    """An integer array to a negative integer power: NumPy's ValueError, torch's RuntimeError."""


def _no_negative_int_power(x1: object, x2: object) -> None:
    if isinstance(x2, numbers.Integral) and x2 < 0 and _is_int_array(x1):
        if _arrays.library_name(x1) in ("numpy", "cupy") and x1.size == 0:
            return               # NumPy's loop raises, and an empty array runs none (torch checks first)
        raise IntegerPowerError("Integers to negative integer powers are not allowed; "
                                "cast the base to a float dtype first")
    if _numpy_negative_exponents(x1, x2):
        raise IntegerPowerError("Integers to negative integer powers are not allowed: the "
                                "exponents hold a negative value; cast the base to a float dtype first")


def _numpy_negative_exponents(x1, x2) -> bool:
    """NumPy's integer power loop raises on a negative exponent anywhere in its operands (a
    NumPy scalar, a 0-d or any array), where the loop is an integer one: found before the
    kernel writes anything. (torch and CuPy compute such elements: trunc(a ** b).)"""
    if not isinstance(x2, (np.ndarray, np.signedinteger)) or x2.dtype.kind != "i" or x2.size == 0:
        return False
    if not (isinstance(x1, (np.ndarray, np.generic, int)) and getattr(x1, "size", 1)):
        return False
    return np.result_type(x1, x2).kind in "iu" and x2.min() < 0


def _is_int_array(x) -> bool:
    """Whether x ** (negative int) is refused: bool and integer arrays (bool ** int is int64's);
    NumPy's unsigned ones raise OverflowError for the negative int instead, torch's this."""
    dt = str(getattr(x, "dtype", ""))
    unsigned = "uint" in dt and _arrays.library_name(x) != "torch"
    return "int" in dt and not unsigned or dt.endswith("bool")


_TABLE = (
    Row("remainder", _X2, "sw::RemainderFunctor<{T}, {C}>", _ALL, "remainder",
        "Elementwise remainder with the sign of the divisor, broadcast without copies.",
        convention=True, inplace=True, header="", cheap=False),
    Row("add", _X2, "sw::AddFunctor<{M}>", _BOOL, "add", "x1 + x2, broadcast; integers wrap.",
        keywords=("alpha",)),
    Row("subtract", _X2, "sw::SubtractFunctor<{M}>", _ALL, "subtract",
        "x1 - x2, broadcast; integers wrap.", keywords=("alpha",)),
    Row("multiply", _X2, "sw::MultiplyFunctor<{M}>", _BOOL, "multiply",
        "x1 * x2, broadcast; integers wrap."),
    Row("divide", _X2, "sw::DivideFunctor<{M}>", _FLOATS, "divide",
        "True division; integers compute in the library's default float.", promote="float",
        keywords=("rounding_mode",), cheap=False),
    Row("fmod", _X2, "sw::FmodOf<{T}>", _ALL, "fmod",
        "C's fmod (the dividend's sign); integer x % 0 is 0.", cheap=False),
    Row("floor_divide", _X2, "sw::FloorDivideOf<{T}, {C}>", _ALL, "floor_divide",
        "floor(x1 / x2) as NumPy and torch define it; integer x // 0 is 0 (never traps).",
        cheap=False),
    Row("maximum", _X2, "sw::MaximumFunctor<{M}, sw::TieFirst<{T}, {C}>::value>", _BOOL, "maximum",
        "Elementwise maximum; a NaN operand gives NaN."),
    Row("minimum", _X2, "sw::MinimumFunctor<{M}, sw::TieFirst<{T}, {C}>::value>", _BOOL, "minimum",
        "Elementwise minimum; a NaN operand gives NaN."),
    Row("pow", _X2, "sw::PowFunctor<{M}>", _ALL, "power",
        "x1 ** x2. Integer bases with a negative Python-int exponent raise ValueError.",
        ulp=_LIBM, check=_no_negative_int_power, cheap=False,
        header=_MATH),      # float pow is the C library's
    Row("where", ("condition", "x", "y"), "sw::WhereFunctor<{T}>", _BOOL, None,
        "x where condition is true, else y; x and y promote. torch: a bool condition; NumPy and "
        "CuPy: any real dtype, true where nonzero.", promote="where"),
    Row("relu", _X, "sw::ReluFunctor<{M}>", _ALL, None,
        "max(x, 0) as torch.relu: NaN and -0.0 pass through."),
    Row("abs", _X, "sw::AbsFunctor<{M}>", _BOOL, "absolute",
        "|x|; |INT_MIN| wraps to INT_MIN; a bool is its own (NumPy; torch raises)."),
    Row("negative", _X, "sw::NegativeFunctor<{M}>", _ALL, "negative", "-x; integers wrap."),
    Row("exp", _X, "sw::ExpFunctor<{M}>", _FLOATS, "exp",
        "e ** x (within TOLERANCE_ULP['exp'] of NumPy and torch).", promote="float", ulp=_LIBM,
        cheap=False, header=_MATH),
    Row("log", _X, "sw::LogFunctor<{M}, {T}>", _FLOATS, "log",
        "Natural logarithm (within TOLERANCE_ULP['log']).", promote="float", ulp=_LIBM,
        cheap=False, header=_MATH),
    Row("sqrt", _X, "sw::SqrtFunctor<{M}>", _FLOATS, "sqrt",
        "Square root, correctly rounded.", promote="float", cheap=False),
    Row("sin", _X, "sw::SinFunctor<{M}>", _FLOATS, "sin",
        "Sine (within TOLERANCE_ULP['sin']).", promote="float", ulp=_LIBM, cheap=False,
        header=_MATH),
    Row("cos", _X, "sw::CosFunctor<{M}>", _FLOATS, "cos",
        "Cosine (within TOLERANCE_ULP['cos']).", promote="float", ulp=_LIBM, cheap=False,
        header=_MATH),
    Row("fma", ("x", "y", "z"), "sw::FmaFunctor<{M}>", _ALL, None,
        "x * y + z in one rounding (float32, float64); integers wrap.", torch=None,
        ulp={"float16": 1, "bfloat16": 1}),           # 16-bit: float32's fma, rounded again
    Row("equal", _X2, "sw::EqualFunctor<{M}>", _BOOL, "equal", "x1 == x2 (bool).",
        torch="eq", promote="bool"),
    Row("not_equal", _X2, "sw::NotEqualFunctor<{M}>", _BOOL, "not_equal", "x1 != x2 (bool).",
        torch="ne", promote="bool"),
    Row("less", _X2, "sw::LessFunctor<{M}>", _BOOL, "less", "x1 < x2 (bool).", promote="bool"),
    Row("less_equal", _X2, "sw::LessEqualFunctor<{M}>", _BOOL, "less_equal", "x1 <= x2 (bool).",
        promote="bool"),
    Row("greater", _X2, "sw::GreaterFunctor<{M}>", _BOOL, "greater", "x1 > x2 (bool).",
        promote="bool"),
    Row("greater_equal", _X2, "sw::GreaterEqualFunctor<{M}>", _BOOL, "greater_equal",
        "x1 >= x2 (bool).", promote="bool"),
    Row("logical_and", _X2, "sw::LogicalAndFunctor<{M}>", _BOOL, "logical_and",
        "x1 and x2, nonzero meaning true (bool).", promote="bool"),
    Row("logical_or", _X2, "sw::LogicalOrFunctor<{M}>", _BOOL, "logical_or",
        "x1 or x2, nonzero meaning true (bool).", promote="bool"),
    Row("logical_xor", _X2, "sw::LogicalXorFunctor<{M}>", _BOOL, "logical_xor",
        "Exactly one of x1, x2 nonzero (bool).", promote="bool"),
    Row("logical_not", _X, "sw::LogicalNotFunctor<{M}>", _BOOL, "logical_not", "x == 0 (bool).",
        promote="bool"),
    Row("bitwise_and", _X2, "sw::BitwiseAndFunctor<{M}>", _BITS, "bitwise_and",
        "x1 & x2 on integers and bool."),
    Row("bitwise_or", _X2, "sw::BitwiseOrFunctor<{M}>", _BITS, "bitwise_or",
        "x1 | x2 on integers and bool."),
    Row("bitwise_xor", _X2, "sw::BitwiseXorFunctor<{M}>", _BITS, "bitwise_xor",
        "x1 ^ x2 on integers and bool."),
    Row("bitwise_not", _X, "sw::InvertFunctor<{M}>", _BITS, "invert",
        "~x on integers; not x on bool (NumPy's invert)."),
    Row("left_shift", _X2, "sw::LeftShiftFunctor<{M}>", _INTS, "left_shift",
        "x1 << x2; a count outside [0, bits) gives 0.", torch="bitwise_left_shift"),
    Row("right_shift", _X2, "sw::RightShiftFunctor<{M}>", _INTS, "right_shift",
        "x1 >> x2 (arithmetic for signed); a count outside [0, bits) gives 0 or -1.",
        torch="bitwise_right_shift"),
    Row("isnan", _X, "sw::IsNanFunctor<{M}>", _BOOL, "isnan",
        "x is NaN (bool; False for integers).", promote="bool"),
    Row("isinf", _X, "sw::IsInfFunctor<{M}>", _BOOL, "isinf", "x is +-inf (bool).",
        promote="bool"),
    Row("isfinite", _X, "sw::IsFiniteFunctor<{M}>", _BOOL, "isfinite",
        "x is neither NaN nor +-inf (bool; True for integers).", promote="bool"),
    Row("floor", _X, "sw::FloorFunctor<{M}>", _BOOL, "floor",
        "Largest integer <= x; integers unchanged."),
    Row("ceil", _X, "sw::CeilFunctor<{M}>", _BOOL, "ceil",
        "Smallest integer >= x; integers unchanged."),
    Row("trunc", _X, "sw::TruncFunctor<{M}>", _BOOL, "trunc",
        "x rounded toward zero; integers unchanged."),
    Row("sign", _X, "sw::SignFunctor<{M}, {C}>", _BOOL, "sign",
        "-1, 0 or 1; NaN gives NaN for NumPy arrays and 0 for torch tensors, as each does."),
    Row("copysign", _X2, "sw::CopysignFunctor<{M}>", _FLOATS, "copysign",
        "|x1| with the sign of x2; integers compute in the library's float.", promote="float"),
    Row("square", _X, "sw::SquareFunctor<{M}>", _ALL, "square", "x * x; integers wrap."),
    Row("reciprocal", _X, "sw::ReciprocalFunctor<{M}>", _FLOATS, "reciprocal",
        "1 / x, floats (integers: torch's float32).", promote="float", cheap=False),
    Row("tanh", _X, "sw::TanhFunctor<{M}>", _FLOATS, "tanh",
        "Hyperbolic tangent (within TOLERANCE_ULP['tanh']).", promote="float", ulp=_LIBM,
        cheap=False, header=_MATH),
    Row("sigmoid", _X, "sw::SigmoidFunctor<{M}>", _FLOATS, None,
        "1 / (1 + exp(-x)) (within TOLERANCE_ULP['sigmoid']).", promote="float", ulp=_LIBM,
        cheap=False, header=_MATH),
    Row("clip", ("x", "lo", "hi"), "sw::ClipFunctor<{M}, sw::TieBound<{T}, {C}>::value>", _BOOL, None,
        "clip(x, lo, hi) = minimum(maximum(x, lo), hi) (np.clip, torch.clamp); a bound of None\n"
        "is not applied (np.clip(x, None, hi), torch.clamp(x, max=hi)).", keywords=("casting",)),
)

ROWS: dict[str, Row] = {}                 # name -> row
OPS: dict[str, ElementwiseOp] = {}        # name -> the pipeline's op
__all__: list[str] = []                   # the public functions (stridewise exports these)

# Largest difference from NumPy and torch on the CPU, in units in the last place of the
# result dtype, per op; an op not listed is exact (bit for bit; sqrt is correctly rounded).
TOLERANCE_ULP: dict[str, dict[str, int]] = {}
# Complex results (TOLERANCE_ULP's own entries are real dtypes'), norm-wise: the largest part
# difference in ulps of the result's larger part. On the CPU every complex op is NumPy's bit
# for bit (its formulas; the C library's cexp, clog, ... for the transcendentals, which torch
# calls too). "torch <dtype>": where torch's CPU kernels round otherwise (a reciprocal-based
# vector division, a fused scalar tail, abs). "cuda <dtype>": the device's transcendentals
# are formulas (complex.h), not the C library's; pow = exp(b log a) carries log's rounding
# times |b log a| (|a| <= 10, |b| <= 3: 30-38 ulp for the formula in NumPy's own float
# arithmetic), integer exponents below 100 are exact; sqrt measured 3 ulp on the H200.
# torch's pow by the numbers -0.5, -1 and -2 divides by its vector kernel's reciprocal: 2 ulp.
COMPLEX_TOLERANCE_ULP: dict[str, dict[str, int]] = {
    op: {k: t for k, t in zip(("torch complex64", "torch complex128", "cuda complex64",
                               "cuda complex128"), tol) if t}
    for op, tol in {"multiply": (1, 1, 0, 0), "square": (1, 1, 0, 0), "abs": (1, 1, 0, 0),
                    "divide": (6, 6, 0, 0), "reciprocal": (3, 3, 0, 0), "exp": (0, 0, 4, 4),
                    "log": (0, 0, 8, 8), "sqrt": (0, 0, 4, 4), "sin": (0, 0, 4, 4),
                    "cos": (0, 0, 4, 4), "tanh": (0, 0, 8, 8), "pow": (2, 2, 64, 64),
                    "sign": (0, 0, 2, 2), "sigmoid": (2, 2, 8, 8)}.items()}

_COMMON_DOC = """
Inputs are NumPy, torch or CuPy arrays of any strides, or Python numbers (at least one
array); they broadcast, and promote by the owning library's rules.
{dtypes}
{convention}out: an array of the broadcast shape and result dtype, any strides.
algorithm: Auto() (default) or an explicit algorithm such as Rows(block_size=512).
Returns the output array, from the same library and device as the inputs.
"""
_CONVENTION_DOC = ('convention: "torch" (a zero result keeps the dividend\'s sign, as torch on '
                   'CUDA) or\n"numpy" (it takes the divisor\'s sign); default: the owning '
                   "library's.\n")


def _signature(row: Row, inplace: bool) -> str:
    """`def name(inputs, /, out=None, *, convention=, algorithm=, ...) -> Array`, annotated:
    the inputs positional, then out (not in place; positional too where the op is a NumPy
    ufunc, as the ufunc's), convention= where the row has one, algorithm=, the keywords."""
    ins = ", ".join(f"{p}: {'Array' if inplace and i == 0 else 'Operand'}"
                    for i, p in enumerate(row.params))
    out = [] if inplace else ["out: Array | None = None"]
    kws = ["convention: Convention | None = None"] * row.convention
    kws += ["algorithm: AlgorithmLike | None = None"]
    kws += [] if inplace else _keywords.signature(row.takes)
    positional, keyword = (out, kws) if row.ufunc else ([], out + kws)
    return f"def {row.name + '_' * inplace}({', '.join([ins, '/', *positional, '*', *keyword])}) -> Array:"


def _source(row: Row, inplace: bool) -> str:
    """The public function of `row`. It starts with the warm path, as every entry point does,
    then takes the full one (_ops._call); both are read per call, since tests swap the warm
    path and fuse's tracing swaps _call."""
    args = ", ".join(row.params) + ("," if len(row.params) == 1 else "")
    convention = "convention" if row.convention else "_clip_ties(x, lo, hi)" if row.name == "clip" else "None"
    call = f"_op_{row.name}, ({args}), {'None' if inplace else 'out'}, {convention}, algorithm, {inplace}"
    body = (f"    r = _ops._warm_call({call}, _CALLS)\n"
            + f"    return _ops._call({call}) if r is None else r\n")
    if row.takes and not inplace:   # one test when no keyword is given (ops/keywords.py)
        given = ", ".join(f"{k}={k}" for k in row.takes)
        body = (f"    if {' or '.join(f'{k} is not None' for k in row.takes)}:\n"
                f"        return _keywords.call(_op_{row.name}, ({args}), out, {convention}, "
                f"algorithm, {given})\n" + body)
    if row.name == "clip":          # np.clip and torch.clamp take None for one bound
        body = ("    if type(lo) is int or type(hi) is int:\n        lo, hi = _int_bounds(x, lo, hi)\n"
                "    if lo is None or hi is None:\n        return _one_bound(x, lo, hi, out, algorithm"
                + ", casting" * (not inplace) + ")\n" + body)
    if row.name in _BEYOND_RANGE:   # a try costs nothing until it catches
        body = ("    try:\n" + textwrap.indent(body, "    ")
                + "    except OverflowError:\n"
                + f"        r = _beyond_range({row.name!r}, ({args}), out, algorithm)\n"
                + "        if r is None:\n            raise\n        return r\n")
    return (_signature(row, inplace) + "\n"
            + (f"    _check_{row.name}({args})\n" if row.check else "") + body)


# NumPy 2 (NEP 50) compares an integer array with a Python int beyond the dtype's range
# exactly, and takes such an int's truth in its logical ops, where other ops raise
# OverflowError; CuPy arrays take the same rule here (CuPy 14's own ops raise on some). The
# same answers come from an int in range: a comparison beyond the range is all True or all
# False, which x >= lo, x < lo, x <= hi or x > hi give; a logical op sees 1.
_FLIP = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
         "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}
_BEYOND_RANGE = tuple(_FLIP) + ("logical_and", "logical_or", "logical_xor")


def _beyond_range(name: str, args: tuple, out, algorithm):
    """`name`(args) of a NumPy or CuPy integer array (or NumPy scalar) and a Python int beyond
    its dtype's range, by NumPy 2's rule, or None where that rule does not apply (the
    OverflowError stands)."""
    k = [i for i, a in enumerate(args) if type(a) is int]
    if len(k) != 1:
        return None
    x = args[1 - k[0]]
    if not (type(x) is np.ndarray or isinstance(x, np.integer) or _arrays.library_name(x) == "cupy") \
            or x.dtype.kind not in "iu":
        return None
    c = args[k[0]]
    info = np.iinfo(x.dtype)
    if info.min <= c <= info.max:
        return None
    fn = getattr(sys.modules[__name__], name)
    if name.startswith("logical"):     # NumPy takes the truth of an int64 there
        if not -2**63 <= c < 2**63:
            return None
        return fn(*[1 if i == k[0] else a for i, a in enumerate(args)], out=out, algorithm=algorithm)
    op = name if k[0] == 1 else _FLIP[name]           # x op c
    true = op in (("greater", "greater_equal", "not_equal") if c < info.min
                  else ("less", "less_equal", "not_equal"))
    if c < info.min:
        bound, cmp = info.min, greater_equal if true else less
    else:
        bound, cmp = info.max, less_equal if true else greater
    return cmp(x, x.dtype.type(bound), out=out, algorithm=algorithm)


_INT_RANGES: dict = {}


def _int_bounds(x, lo, hi):
    """np.clip's Python int bounds beyond an integer array's range, as NumPy 2 takes them: a
    lower bound below the range or an upper one above it bounds nothing (np.clip(uint8_array,
    -1, 300) is the array); one beyond the other end still raises OverflowError. Beside another
    bound it is no bound at all (None), as that bound may promote past the array's range
    (np.clip(int16_array, uint32_array, 2**31) is np.maximum(int16_array, uint32_array)).
    CuPy arrays take NumPy's rule."""
    if not (type(x) is np.ndarray or isinstance(x, np.integer) or _arrays.library_name(x) == "cupy") \
            or x.dtype.kind not in "iu":
        return lo, hi
    r = _INT_RANGES.get(x.dtype)
    if r is None:
        info = np.iinfo(x.dtype)
        r = _INT_RANGES[x.dtype] = (int(info.min), int(info.max))
    below, above = type(lo) is int and lo < r[0], type(hi) is int and hi > r[1]
    if below != above and lo is not None and hi is not None:
        return (None, hi) if below else (lo, None)
    return (max(lo, r[0]) if type(lo) is int else lo), (min(hi, r[1]) if type(hi) is int else hi)


def _check_torch_bound(dtype, bound, out_dtype=None) -> bool:
    """Raise where torch.clamp refuses a number bound of a tensor of `dtype`: the number in
    the result's dtype by c10's checked_convert (DType.checked), as clip's own call takes it,
    and an out of another dtype (at::clamp(Tensor, Scalar, Scalar) casts into none, where
    maximum and minimum would; two bounds: pipeline._into_outs). Dynamo runs this at trace
    time (marked constant below): torch.result_type is no graph op."""
    result = _torch_bound_dtype(dtype, type(bound), torch_default_float())
    result.slot_value(bound)
    if out_dtype is not None and dtype_of(out_dtype).name != result.name:
        raise TypeError(f"torch's clip takes an out of its result's dtype only, {result.name} "
                        f"(got {dtype_of(out_dtype).name}); pass an out of dtype {result.name}")
    return True


@functools.lru_cache(maxsize=None)
def _torch_bound_dtype(dtype, kind, default):
    """The checked dtype a number of Python type `kind` converts to beside a `dtype` tensor
    (once per pair and torch default float: the promotion and the checked copy cost ~5 us a
    call)."""
    from stridewise.operands.arrays import result_dtypes
    return result_dtypes("torch", None, (dtype_of(dtype).name, kind))[1].checked()


_check_torch_bound._dynamo_marked_constant = True   # torch._dynamo.assume_constant_result's mark


def _clip_ties(x, lo, hi) -> str | None:
    """The convention whose tie rule clip takes (TieBound in ops.h): NumPy's float32 and
    float64 clip loop returns the bound on a tie (+0 against a bound of -0), except in its
    branch for bounds constant along the loop (clip.cpp's strict x < lo, x > hi), which keeps
    x, as torch does. A NumPy call takes that branch where each bound is one value: a number,
    a NumPy scalar or an array of one element (NumPy 2.4)."""
    if isinstance(x, (np.ndarray, np.generic)) and all(
            isinstance(b, (numbers.Number, np.generic))
            or (b.size if isinstance(b, np.ndarray) else np.size(b)) == 1 for b in (lo, hi)):
        return "torch"
    return None


def _one_bound(x, lo, hi, out, algorithm, casting=None):
    """clip with one bound None: maximum(x, lo) or minimum(x, hi), as np.clip computes it
    (the bound on a +-0 tie) and torch.clamp of integers means it; torch's floats clip
    between the bound and an infinity, as clamp keeps x on a tie; with both None NumPy's clip
    is np.positive(x) (a copy), and torch's and CuPy's refuse it."""
    if lo is None and hi is None:
        if isinstance(x, (np.ndarray, np.generic)) and x.dtype != np.bool_:
            to = x.dtype if out is None else out.dtype      # positive's out casts by the rule
            if not np.can_cast(x.dtype, to, casting or "same_kind"):
                raise TypeError(f"clip of a {x.dtype} array with no bounds is a copy, which the "
                                f"casting rule {casting or 'same_kind'!r} does not cast into an out "
                                f"of dtype {to}; pass an out of dtype {x.dtype}")
            r = cast(x, to, out=out, algorithm=algorithm)
            return r[()] if out is None and isinstance(x, np.generic) else r   # a scalar, as positive
        if isinstance(x, (np.ndarray, np.generic)):     # np.positive has no bool loop
            raise TypeError("clip of a bool array needs lo or hi; got None for both")
        raise ValueError("clip needs lo or hi (NumPy arrays of numbers take neither); got None for both")
    torch = sys.modules.get("torch")
    bound = hi if lo is None else lo
    if torch is not None and isinstance(x, torch.Tensor):
        if x.dtype == torch.bool and type(bound) is bool:     # clamp_min / clamp_max's Scalar kernels
            raise _complex.UnsupportedDtypeError(
                '"clip" (torch.clamp) by a Python bool is not implemented for torch bool tensors '
                "(torch raises too); use logical_and / logical_or with the bound")
        if type(bound) in (bool, int, float):
            # torch.clamp checks it, where minimum would wrap it, and its out's dtype
            _check_torch_bound(x.dtype, bound, out.dtype if isinstance(out, torch.Tensor) else None)
        floats = [v for v in (x, bound) if isinstance(v, torch.Tensor) and v.is_floating_point()]
        if floats or type(bound) is float:
            # torch.clamp with one bound is its clamp: x kept on a +-0 tie (maximum gives the
            # second operand), and clamp's derivative (x's gradient within the bound, none for
            # NaN). The infinity joins as the bound came (a number, or a 0-d tensor of the
            # float dtype there, which keeps clamp's Tensor overload: its out= casts)
            def inf(sign):
                if isinstance(bound, torch.Tensor):
                    return torch.full((), sign * math.inf, dtype=floats[-1].dtype, device=x.device)
                return sign * math.inf
            return clip(x, inf(-1) if lo is None else lo, inf(1) if hi is None else hi, out=out,
                        algorithm=algorithm)
    if hi is None:
        return maximum(x, lo, out=out, algorithm=algorithm, casting=casting)
    return minimum(x, hi, out=out, algorithm=algorithm, casting=casting)


def _doc(row: Row, op: ElementwiseOp, inplace: bool) -> str:
    if inplace:
        first = row.params[0]
        return (f"In-place {row.name}: {first} = {row.name}({', '.join(row.params)}); "
                f"the others must broadcast to {first}'s shape.")
    dtypes, line = [], "Computes in"        # wrapped by hand: textwrap costs 1 ms an op
    for i, dt in enumerate(op.dtypes):      # the row's, and complex where the op has it
        word = f" {dt}{'.' if i == len(op.dtypes) - 1 else ','}"
        if len(line) + len(word) > 92:
            dtypes.append(line)
            line = ""
        line += word
    dtypes = "\n".join(dtypes + [line]).replace("\n ", "\n")
    return row.doc + "\n" + _COMMON_DOC.format(
        dtypes=dtypes, convention=_CONVENTION_DOC if row.convention else "") + _keywords.doc(row.takes)


def _traced(row: Row, op: ElementwiseOp, inplace: bool) -> Callable:
    """What Dynamo traces in place of the function: the op's torch.library custom op."""
    traced = _torch_ops.traced(op, inplace)
    if row.name == "clip":          # a bound of None: maximum or minimum, traced in turn
        def clip(x, lo, hi, **kw):
            if lo is None or hi is None:
                return _one_bound(x, lo, hi, kw.get("out"), kw.get("algorithm"))
            return traced(x, lo, hi, **kw)
        return clip
    if row.check is None:
        return traced

    def checked(*args, **kw):
        row.check(*args)
        return traced(*args, **kw)
    return checked


def _traced_keywords(row: Row, op: ElementwiseOp, inplace: bool) -> Callable:
    """_traced, and a call with keywords as the derived op they make (ops/keywords.py)."""
    traced = _traced(row, op, inplace)
    if not row.takes or inplace:
        return traced

    def keyed(*args, out=None, convention=None, algorithm=None, **kw):
        if len(args) > op.nin:      # out given positionally, as a ufunc's
            (out,), args = args[op.nin:], args[:op.nin]
        if all(v is None for v in kw.values()):
            return traced(*args, out=out, convention=convention, algorithm=algorithm)
        kop, args, out = _keywords.resolve(op, args, out, kw)
        return _torch_ops.call(kop, args, out, convention, algorithm)
    return keyed


@functools.cache
def _outer_numbers_weak() -> bool:
    """Whether the installed NumPy's ufunc.outer reads a Python number as weak (NEP 50; from
    NumPy 2.6, numpy#32090) rather than as an array of its default dtype."""
    return np.add.outer(1.0, np.ones(1, np.float32)).dtype == np.float32


def _outer(fn: Callable) -> Callable:
    """`fn.outer(x1, x2, ...)`, as NumPy's ufunc.outer: fn of every element of x1 with every
    element of x2, shape x1.shape + x2.shape, by broadcasting: x1 viewed with x2's dims
    appended as extent-1 dims (a view in every library), never a copy. Keywords pass to fn."""
    def outer(x1, x2, /, *args, **kw):
        if all(_arrays.library_name(x) in (None, "numpy") for x in (x1, x2)):
            # NumPy's outer takes its operands as arrays: a Python int is an int64 array, not
            # a number that adapts to the other operand's dtype (NumPy 2.6 reads numbers as
            # weak there, as its other calls do: _outer_numbers_weak)
            arrays = (list, tuple) if _outer_numbers_weak() else (list, tuple, numbers.Number)
            # (a number as add's numbers alone: an int past 64 bits raises OverflowError)
            x1, x2 = (_arrays.array_likes((x,))[0] if isinstance(x, arrays) else x for x in (x1, x2))
        extra = (1,) * np.ndim(x2)
        if extra and getattr(x1, "ndim", 0):
            x1 = x1.reshape(tuple(x1.shape) + extra)
        return fn(x1, x2, *args, **kw)
    outer.__name__ = outer.__qualname__ = f"{fn.__name__}.outer"
    outer.__doc__ = (f"{fn.__name__} of every element of x1 with every element of x2 (NumPy's "
                     f"{fn.__name__}.outer): shape x1.shape + x2.shape, no copies.")
    return outer


def register(*rows: Row) -> Callable:
    """Add `rows` to the table: their ops, their functions (in this module and `__all__`),
    what `explain` and torch's custom ops know. Returns the last row's function."""
    namespace = {"__name__": __name__, "_ops": _ops, "_CALLS": _ops._CALLS, "Array": Array,
                 "Operand": Operand, "Convention": Convention, "AlgorithmLike": AlgorithmLike,
                 "_beyond_range": _beyond_range, "_one_bound": _one_bound, "_clip_ties": _clip_ties,
                 "_int_bounds": _int_bounds, "_keywords": _keywords}
    sources, made = ["from __future__ import annotations"], []
    for row in rows:
        if row.name in ROWS or any(r.name == row.name for r, *_ in made):
            raise ValueError(f"an op named {row.name!r} is already in the table")
        # complex64/128 where the op defines them (_complex: their tolerances and tests)
        dtypes = row.dtypes + (_complex.COMPLEX if row.name in _complex.COMPLEX_OPS else ())
        op = ElementwiseOp(row.name, len(row.params), row.functor, row.ufunc, dtypes,
                           row.promote, row.header, code=row.code, cheap=row.cheap)
        namespace[f"_op_{row.name}"], namespace[f"_check_{row.name}"] = op, row.check
        for inplace in (False, True)[:1 + row.inplace]:
            sources.append(_source(row, inplace))
            made.append((row, op, inplace))
    # one compile for all the rows: import pays for it once, not per op
    exec(compile("\n".join(sources), "<stridewise op table>", "exec"), namespace)
    module = sys.modules[__name__]
    for row, op, inplace in made:
        ROWS[row.name], OPS[row.name] = row, op
        if row.ulp:
            TOLERANCE_ULP[row.name] = dict(row.ulp)
        fn = namespace[row.name + "_" * inplace]
        fn.__doc__ = _doc(row, op, inplace)
        fn._torchdynamo_inline = _traced_keywords(row, op, inplace)
        if row.ufunc and len(row.params) == 2 and not inplace:
            fn.outer = _outer(fn)
        setattr(module, fn.__name__, fn)
        __all__.append(fn.__name__)
        _ops._OPS[fn.__name__] = (op, inplace)
    return getattr(module, rows[-1].name)


def unregister(name: str) -> None:
    """Remove op `name` and its functions (a test's toy op)."""
    row = ROWS.pop(name)
    del OPS[name]
    TOLERANCE_ULP.pop(name, None)
    for fname in (name, name + "_")[:1 + row.inplace]:
        delattr(sys.modules[__name__], fname)
        __all__.remove(fname)
        del _ops._OPS[fname]


register(*_TABLE)
_keywords.make_traceable()

# The libraries' other names for ops of the table, with the same arguments: each is the
# op's own function (sw.power is sw.pow).
ALIASES = {
    "power": "pow", "absolute": "abs", "invert": "bitwise_not", "mod": "remainder",   # NumPy
    "true_divide": "divide",                                                             # both
    "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",  # torch
    "ge": "greater_equal", "sub": "subtract", "mul": "multiply", "div": "divide",
    "neg": "negative", "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
}
for _alias, _name in ALIASES.items():
    globals()[_alias] = globals()[_name]
    __all__.append(_alias)

# cast: one op per target dtype (the target is part of what selects the kernel).
CAST_DTYPES = _BOOL + _complex.COMPLEX
_CASTS = {dt: ElementwiseOp(f"cast_{dt}", 1, "sw::CastFunctor<{M}>", None, CAST_DTYPES, dt,
                            "stridewise/ops.h", cheap=True)
          for dt in CAST_DTYPES}


def cast(x: Operand, dtype: object, /, *,
         out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """x converted to `dtype` (a name, NumPy dtype or torch dtype) in registers."""
    target = dtype_of(dtype).name
    if target not in _CASTS:
        raise TypeError(f"cast supports {', '.join(CAST_DTYPES)}; got {target}")
    if out is not None and getattr(out, "dtype", None) is not None and dtype_of(out.dtype).name != target:
        raise TypeError(f"cast to {target} got an out of dtype {dtype_of(out.dtype).name}; "
                        f"pass an out of dtype {target}, or cast to {dtype_of(out.dtype).name}")
    return _call(_CASTS[target], (x,), out, None, algorithm)


__all__.append("cast")


def supported() -> dict[str, tuple]:
    """(op, compute dtypes) of every op that runs, cast included: plain data."""
    return {name: op.dtypes for name, op in OPS.items()} | {"cast": CAST_DTYPES}


SUPPORTED = supported()   # the table as imported (a toy op registered later is not in it)

README_BEGIN = "<!-- ops table: generated from the op table by tools/op_table.py -->"
README_END = "<!-- end of ops table -->"


def op_table() -> str:
    """The README's table of ops and their compute dtypes, generated from the table."""
    rows = [f"| `{name}` | {', '.join(dtypes)} |" for name, dtypes in supported().items()]
    return "\n".join(["| op | compute dtypes |", "|---|---|", *rows])


def readme_section() -> str:
    """The README's generated section, its markers included."""
    return f"{README_BEGIN}\n{op_table()}\n{README_END}"


# The module as type checkers see it (ops/builtins.pyi, which tools/op_table.py writes): the
# table's functions are made at import, so only a stub can name them to a checker.
_STUB_HEAD = """\
# Generated from the op table (ops/builtins.py) by tools/op_table.py --write: do not edit.
from typing import Callable

from stridewise.launch.pipeline import ElementwiseOp
from stridewise._typing import AlgorithmLike, Array, Convention, Operand

class IntegerPowerError(ValueError, RuntimeError): ...

class Row:
{fields}
    def __init__(self, {init}) -> None: ...
    @property
    def torch_name(self) -> str | None: ...
    @property
    def takes(self) -> tuple[str, ...]: ...

ROWS: dict[str, Row]
OPS: dict[str, ElementwiseOp]
TOLERANCE_ULP: dict[str, dict[str, int]]
COMPLEX_TOLERANCE_ULP: dict[str, dict[str, int]]
CAST_DTYPES: tuple[str, ...]
ALIASES: dict[str, str]
SUPPORTED: dict[str, tuple[str, ...]]
README_BEGIN: str
README_END: str

def register(*rows: Row) -> Callable[..., Array]: ...
def unregister(name: str) -> None: ...
def supported() -> dict[str, tuple[str, ...]]: ...
def op_table() -> str: ...
def readme_section() -> str: ...
def stub() -> str: ...
def cast(x: Operand, dtype: object, /, *, out: Array | None = None,
         algorithm: AlgorithmLike | None = None) -> Array: ...

"""


def stub() -> str:
    """The text of ops/builtins.pyi: this module's public names, each op of the table a function
    of its own signature."""
    import dataclasses

    fields = dataclasses.fields(Row)
    body = "\n".join(f"    {f.name}: {f.type}" for f in fields)
    init = ", ".join(f"{f.name}: {f.type}"
                     + ("" if f.default is dataclasses.MISSING
                        and f.default_factory is dataclasses.MISSING else " = ...")
                     for f in fields)
    defs = [_signature(row, inplace) + " ..."
            for row in ROWS.values() for inplace in (False, True)[:1 + row.inplace]]
    defs += [f"{alias} = {name}" for alias, name in ALIASES.items()]
    names = ",\n".join(f"    {n!r}" for n in __all__)
    return (_STUB_HEAD.format(fields=body, init=init) + f"__all__ = [\n{names},\n]\n\n"
            + "\n".join(defs) + "\n")

