"""Built-in elementwise ops: the op table, its tolerances, and one public function per op.

Every op runs on the same pipeline as remainder and user kernels (broadcasting, every mode,
out=, torch / CuPy / NumPy arrays). The functors live in include/stridewise/ops.h.

Semantics, where the libraries leave room:

- Dtypes follow the owning library's promotion (torch.result_type / the NumPy ufunc's loop).
  Ops marked "float" compute integer inputs in the library's default float (NumPy float64,
  torch float32). float16 and bfloat16 compute in float32 and round once on store.
- maximum / minimum: a NaN operand wins (NumPy and torch agree); on a tie the second operand
  is returned, as NumPy does, so maximum(-0.0, 0.0) is 0.0 (torch's vector and scalar CPU
  paths disagree with each other here).
- relu is torch's clamp_min(x, 0): NaN stays NaN and -0.0 stays -0.0.
- floor_divide: NumPy's and torch's float definition (through fmod, exact); integer division
  by zero gives 0 and never traps (NumPy; torch raises); INT_MIN // -1 wraps to INT_MIN.
- fmod: integer division by zero gives 0 (NumPy).
- pow on integers: a negative exponent given as a Python int raises ValueError, as both
  libraries do; inside an array it gives trunc(a ** b) (torch's definition: 1 for a = 1,
  +-1 for a = -1, 0 otherwise, 0 ** -1 included).
- where(condition, x, y): condition must have dtype bool (the only use of bool in the
  built-ins); x and y promote.
- cast(x, dtype): float64 -> float16 rounds once (NumPy; torch rounds through float32 and can
  differ on rare ties); float -> int of NaN, inf or out-of-range values is undefined.
- fma(x, y, z) = x * y + z with one rounding for float32 and float64; integers wrap.
"""
from __future__ import annotations

import numbers

from . import _ops
from ._complex import COMPLEX, COMPLEX_OPS
from ._ops import ElementwiseOp, _call
from ._typing import AlgorithmLike, Array, Operand

__all__ = ["OPS", "SUPPORTED", "TOLERANCE_ULP", "COMPLEX_TOLERANCE_ULP", "add", "subtract", "multiply", "divide", "fmod",
           "floor_divide", "maximum", "minimum", "pow", "where", "relu", "abs", "negative",
           "exp", "log", "sqrt", "sin", "cos", "cast", "fma"]

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_ALL = _FLOATS + _INTS
_BOOL = _ALL + ("bool",)   # where bool is closed under the op in NumPy and torch (or, and)

# name: (inputs, functor, NumPy ufunc, compute dtypes, promotion)
_TABLE = {
    "add": (2, "sw::AddFunctor<{M}>", "add", _BOOL, "same"),
    "subtract": (2, "sw::SubtractFunctor<{M}>", "subtract", _ALL, "same"),
    "multiply": (2, "sw::MultiplyFunctor<{M}>", "multiply", _BOOL, "same"),
    "divide": (2, "sw::DivideFunctor<{M}>", "divide", _FLOATS, "float"),
    "fmod": (2, "sw::FmodFunctor<{M}>", "fmod", _ALL, "same"),
    "floor_divide": (2, "sw::FloorDivideFunctor<{M}>", "floor_divide", _ALL, "same"),
    "maximum": (2, "sw::MaximumFunctor<{M}>", "maximum", _BOOL, "same"),
    "minimum": (2, "sw::MinimumFunctor<{M}>", "minimum", _BOOL, "same"),
    "pow": (2, "sw::PowFunctor<{M}>", "power", _ALL, "same"),
    "where": (3, "sw::WhereFunctor<{M}>", None, _BOOL, "where"),
    "relu": (1, "sw::ReluFunctor<{M}>", None, _ALL, "same"),
    "abs": (1, "sw::AbsFunctor<{M}>", "absolute", _ALL, "same"),
    "negative": (1, "sw::NegativeFunctor<{M}>", "negative", _ALL, "same"),
    "exp": (1, "sw::ExpFunctor<{M}>", "exp", _FLOATS, "float"),
    "log": (1, "sw::LogFunctor<{M}>", "log", _FLOATS, "float"),
    "sqrt": (1, "sw::SqrtFunctor<{M}>", "sqrt", _FLOATS, "float"),
    "sin": (1, "sw::SinFunctor<{M}>", "sin", _FLOATS, "float"),
    "cos": (1, "sw::CosFunctor<{M}>", "cos", _FLOATS, "float"),
    "fma": (3, "sw::FmaFunctor<{M}>", None, _ALL, "same"),
    "equal": (2, "sw::EqualFunctor<{M}>", "equal", _BOOL, "bool"),
    "not_equal": (2, "sw::NotEqualFunctor<{M}>", "not_equal", _BOOL, "bool"),
    "less": (2, "sw::LessFunctor<{M}>", "less", _BOOL, "bool"),
    "less_equal": (2, "sw::LessEqualFunctor<{M}>", "less_equal", _BOOL, "bool"),
    "greater": (2, "sw::GreaterFunctor<{M}>", "greater", _BOOL, "bool"),
    "greater_equal": (2, "sw::GreaterEqualFunctor<{M}>", "greater_equal", _BOOL, "bool"),
    "logical_and": (2, "sw::LogicalAndFunctor<{M}>", "logical_and", _BOOL, "bool"),
    "logical_or": (2, "sw::LogicalOrFunctor<{M}>", "logical_or", _BOOL, "bool"),
    "logical_xor": (2, "sw::LogicalXorFunctor<{M}>", "logical_xor", _BOOL, "bool"),
    "logical_not": (1, "sw::LogicalNotFunctor<{M}>", "logical_not", _BOOL, "bool"),
    "bitwise_and": (2, "sw::BitwiseAndFunctor<{M}>", "bitwise_and", _INTS + ("bool",), "same"),
    "bitwise_or": (2, "sw::BitwiseOrFunctor<{M}>", "bitwise_or", _INTS + ("bool",), "same"),
    "bitwise_xor": (2, "sw::BitwiseXorFunctor<{M}>", "bitwise_xor", _INTS + ("bool",), "same"),
    "bitwise_not": (1, "sw::InvertFunctor<{M}>", "invert", _INTS + ("bool",), "same"),
    "left_shift": (2, "sw::LeftShiftFunctor<{M}>", "left_shift", _INTS, "same"),
    "right_shift": (2, "sw::RightShiftFunctor<{M}>", "right_shift", _INTS, "same"),
    "isnan": (1, "sw::IsNanFunctor<{M}>", "isnan", _BOOL, "bool"),
    "isinf": (1, "sw::IsInfFunctor<{M}>", "isinf", _BOOL, "bool"),
    "isfinite": (1, "sw::IsFiniteFunctor<{M}>", "isfinite", _BOOL, "bool"),
    "floor": (1, "sw::FloorFunctor<{M}>", "floor", _BOOL, "same"),
    "ceil": (1, "sw::CeilFunctor<{M}>", "ceil", _BOOL, "same"),
    "trunc": (1, "sw::TruncFunctor<{M}>", "trunc", _BOOL, "same"),
    "sign": (1, "sw::SignFunctor<{M}, {C}>", "sign", _ALL, "same"),
    "copysign": (2, "sw::CopysignFunctor<{M}>", "copysign", _FLOATS, "float"),
    "square": (1, "sw::SquareFunctor<{M}>", "square", _ALL, "same"),
    "reciprocal": (1, "sw::ReciprocalFunctor<{M}>", "reciprocal", _FLOATS, "float"),
    "tanh": (1, "sw::TanhFunctor<{M}>", "tanh", _FLOATS, "float"),
    "sigmoid": (1, "sw::SigmoidFunctor<{M}>", None, _FLOATS, "float"),
    "clip": (3, "sw::ClipFunctor<{M}>", None, _ALL, "same"),
}
OPS = {name: ElementwiseOp(name, nin, functor, ufunc,
                          dtypes + (COMPLEX if name in COMPLEX_OPS else ()), promote, "stridewise/ops.h")
       for name, (nin, functor, ufunc, dtypes, promote) in _TABLE.items()}

# cast: one op per target dtype (the target is part of what selects the kernel).
CAST_DTYPES = _BOOL + COMPLEX
_CASTS = {dt: ElementwiseOp(f"cast_{dt}", 1, "sw::CastFunctor<{M}>", None, CAST_DTYPES, dt,
                            "stridewise/ops.h")
          for dt in CAST_DTYPES}

_ops._OPS.update({name: (op, False) for name, op in OPS.items()})  # explain() knows them

# (op, compute dtype) pairs that run: plain data for tests and docs.
SUPPORTED = {name: op.dtypes for name, op in OPS.items()} | {"cast": CAST_DTYPES}


def op_table() -> str:
    """The README's table of ops and their compute dtypes, generated from SUPPORTED."""
    rows = [f"| `{name}` | {', '.join(dtypes)} |" for name, dtypes in SUPPORTED.items()]
    return "\n".join(["| op | compute dtypes |", "|---|---|", *rows])

# Largest difference, in units in the last place of the result dtype, from NumPy and torch on
# the CPU. Every op not listed is exact (bit for bit; sqrt is correctly rounded by IEEE 754).
# The transcendentals come from different libraries (glibc here, NumPy's SIMD loops, Sleef in
# torch, CUDA's libdevice on the GPU), each accurate to about 1 ulp of the true value; 16-bit
# results can land one ulp apart when float32 results straddle a rounding boundary. pow on
# floats is the C library's; fma on 16-bit floats rounds twice (float32, then 16-bit).
TOLERANCE_ULP = {
    "exp": {"float64": 2, "float32": 4, "float16": 1, "bfloat16": 1},
    "log": {"float64": 2, "float32": 4, "float16": 1, "bfloat16": 1},
    "sin": {"float64": 2, "float32": 4, "float16": 1, "bfloat16": 1},
    "cos": {"float64": 2, "float32": 4, "float16": 1, "bfloat16": 1},
    "pow": {"float64": 2, "float32": 4, "float16": 1, "bfloat16": 1},
    "fma": {"float16": 1, "bfloat16": 1},
    "tanh": {"float64": 2, "float32": 4, "float16": 1, "bfloat16": 1},
    "sigmoid": {"float64": 2, "float32": 4, "float16": 1, "bfloat16": 1},
}
# Complex results (TOLERANCE_ULP's own entries are real dtypes'), norm-wise: the largest part
# difference in ulps of the result's larger part. On the CPU every complex op is NumPy's bit
# for bit (its formulas; the C library's cexp, clog, ... for the transcendentals, which torch
# calls too). "torch <dtype>": where torch's CPU kernels round otherwise (a reciprocal-based
# vector division, a fused scalar tail, abs). "cuda <dtype>": the device's transcendentals
# are formulas (complex.h), not the C library's; pow = exp(b log a) carries log's rounding
# times |b log a| (|a| <= 10, |b| <= 3: 30-38 ulp for the formula in NumPy's own float
# arithmetic), integer exponents below 100 are exact.
COMPLEX_TOLERANCE_ULP = {
    op: {k: t for k, t in zip(("torch complex64", "torch complex128", "cuda complex64",
                               "cuda complex128"), tol) if t}
    for op, tol in {"multiply": (1, 1, 0, 0), "square": (1, 1, 0, 0), "abs": (1, 1, 0, 0),
                    "divide": (6, 6, 0, 0), "reciprocal": (3, 3, 0, 0), "exp": (0, 0, 4, 4),
                    "log": (0, 0, 8, 8), "sqrt": (0, 0, 2, 2), "sin": (0, 0, 4, 4),
                    "cos": (0, 0, 4, 4), "tanh": (0, 0, 8, 8), "pow": (0, 0, 64, 64)}.items()}


def add(x1: Operand, x2: Operand, /, *,
        out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """x1 + x2, broadcast; integers wrap."""
    return _call(OPS["add"], (x1, x2), out, None, algorithm)


def subtract(x1: Operand, x2: Operand, /, *,
             out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """x1 - x2, broadcast; integers wrap."""
    return _call(OPS["subtract"], (x1, x2), out, None, algorithm)


def multiply(x1: Operand, x2: Operand, /, *,
             out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """x1 * x2, broadcast; integers wrap."""
    return _call(OPS["multiply"], (x1, x2), out, None, algorithm)


def divide(x1: Operand, x2: Operand, /, *,
           out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """True division; integers compute in the library's default float."""
    return _call(OPS["divide"], (x1, x2), out, None, algorithm)


def fmod(x1: Operand, x2: Operand, /, *,
         out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """C's fmod (the dividend's sign); integer x % 0 is 0."""
    return _call(OPS["fmod"], (x1, x2), out, None, algorithm)


def floor_divide(x1: Operand, x2: Operand, /, *,
                 out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """floor(x1 / x2) as NumPy and torch define it; integer x // 0 is 0 (never traps)."""
    return _call(OPS["floor_divide"], (x1, x2), out, None, algorithm)


def maximum(x1: Operand, x2: Operand, /, *,
            out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """Elementwise maximum; a NaN operand gives NaN."""
    return _call(OPS["maximum"], (x1, x2), out, None, algorithm)


def minimum(x1: Operand, x2: Operand, /, *,
            out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """Elementwise minimum; a NaN operand gives NaN."""
    return _call(OPS["minimum"], (x1, x2), out, None, algorithm)


def pow(x1: Operand, x2: Operand, /, *,  # noqa: A001 - NumPy's name
        out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """x1 ** x2. Integer bases with a negative Python-int exponent raise ValueError."""
    if isinstance(x2, numbers.Integral) and x2 < 0 and _is_int_array(x1):
        raise ValueError("Integers to negative integer powers are not allowed; "
                         "cast the base to a float dtype first")
    return _call(OPS["pow"], (x1, x2), out, None, algorithm)


def _is_int_array(x) -> bool:
    dt = str(getattr(x, "dtype", ""))
    return "int" in dt and "uint" not in dt


def where(condition: Operand, x: Operand, y: Operand, /, *,
          out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """x where condition (dtype bool) is true, else y; x and y promote."""
    return _call(OPS["where"], (condition, x, y), out, None, algorithm)


def relu(x: Operand, /, *,
         out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """max(x, 0) as torch.relu: NaN and -0.0 pass through."""
    return _call(OPS["relu"], (x,), out, None, algorithm)


def abs(x: Operand, /, *,  # noqa: A001 - NumPy's name
        out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """|x|; |INT_MIN| wraps to INT_MIN."""
    return _call(OPS["abs"], (x,), out, None, algorithm)


def negative(x: Operand, /, *,
             out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """-x; integers wrap."""
    return _call(OPS["negative"], (x,), out, None, algorithm)


def exp(x: Operand, /, *,
        out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """e ** x (within TOLERANCE_ULP["exp"] of NumPy and torch)."""
    return _call(OPS["exp"], (x,), out, None, algorithm)


def log(x: Operand, /, *,
        out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """Natural logarithm (within TOLERANCE_ULP["log"])."""
    return _call(OPS["log"], (x,), out, None, algorithm)


def sqrt(x: Operand, /, *,
         out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """Square root, correctly rounded."""
    return _call(OPS["sqrt"], (x,), out, None, algorithm)


def sin(x: Operand, /, *,
        out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """Sine (within TOLERANCE_ULP["sin"])."""
    return _call(OPS["sin"], (x,), out, None, algorithm)


def cos(x: Operand, /, *,
        out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """Cosine (within TOLERANCE_ULP["cos"])."""
    return _call(OPS["cos"], (x,), out, None, algorithm)


def fma(x: Operand, y: Operand, z: Operand, /, *,
        out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """x * y + z in one rounding (float32, float64); integers wrap."""
    return _call(OPS["fma"], (x, y, z), out, None, algorithm)


def cast(x: Operand, dtype: object, /, *,
         out: Array | None = None, algorithm: AlgorithmLike | None = None) -> Array:
    """x converted to `dtype` (a name, NumPy dtype or torch dtype) in registers."""
    from ._dtypes import dtype_of

    target = dtype_of(dtype).name
    if target not in _CASTS:
        raise TypeError(f"cast supports {', '.join(CAST_DTYPES)}; got {target}")
    return _call(_CASTS[target], (x,), out, None, algorithm)


def _op_function(name: str, doc: str):
    """The public function of table op `name` (its inputs positional, then out and algorithm)."""
    op = OPS[name]

    def f(*args: object, out: object = None, algorithm: object = None) -> object:
        return _call(op, args, out, None, algorithm)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


# Ops of NumPy's and torch's own meaning; each takes its inputs positionally, then out= and
# algorithm=, and returns the library's result dtype (bool for comparisons and tests).
_DOCS = {
    "equal": "x1 == x2 (bool).", "not_equal": "x1 != x2 (bool).", "less": "x1 < x2 (bool).",
    "less_equal": "x1 <= x2 (bool).", "greater": "x1 > x2 (bool).",
    "greater_equal": "x1 >= x2 (bool).",
    "logical_and": "x1 and x2, nonzero meaning true (bool).",
    "logical_or": "x1 or x2, nonzero meaning true (bool).",
    "logical_xor": "Exactly one of x1, x2 nonzero (bool).", "logical_not": "x == 0 (bool).",
    "bitwise_and": "x1 & x2 on integers and bool.", "bitwise_or": "x1 | x2 on integers and bool.",
    "bitwise_xor": "x1 ^ x2 on integers and bool.",
    "bitwise_not": "~x on integers; not x on bool (NumPy's invert).",
    "left_shift": "x1 << x2; a count outside [0, bits) gives 0.",
    "right_shift": "x1 >> x2 (arithmetic for signed); a count outside [0, bits) gives 0 or -1.",
    "isnan": "x is NaN (bool; False for integers).", "isinf": "x is +-inf (bool).",
    "isfinite": "x is neither NaN nor +-inf (bool; True for integers).",
    "floor": "Largest integer <= x; integers unchanged.",
    "ceil": "Smallest integer >= x; integers unchanged.",
    "trunc": "x rounded toward zero; integers unchanged.",
    "sign": "-1, 0 or 1; NaN gives NaN for NumPy arrays and 0 for torch tensors, as each does.",
    "copysign": "|x1| with the sign of x2; integers compute in the library's float.",
    "square": "x * x; integers wrap.", "reciprocal": "1 / x, floats (integers: torch's float32).",
    "tanh": "Hyperbolic tangent (within TOLERANCE_ULP['tanh']).",
    "sigmoid": "1 / (1 + exp(-x)) (within TOLERANCE_ULP['sigmoid']).",
    "clip": "clip(x, lo, hi) = minimum(maximum(x, lo), hi) (np.clip, torch.clamp).",
}
for _name, _doc in _DOCS.items():
    globals()[_name] = _op_function(_name, _doc)
__all__ += list(_DOCS)
