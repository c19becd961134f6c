"""Supported dtypes: NumPy, torch and C++ names, sizes and argument-slot formats."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

__all__ = ["DType", "DTYPES", "ALL_DTYPES", "BOOL", "dtype_of", "supported_names"]


@dataclass(frozen=True)
class DType:
    """One element type as every stage of the pipeline names it."""

    name: str          # canonical name: "float32"
    numpy: np.dtype = field(compare=False)   # NumPy (or ml_dtypes) dtype; the name decides
    ctype: str = ""    # C++ type in the header library
    slot: str = ""     # struct format of a scalar parameter in an 8-byte slot
    is_float: bool = False
    itemsize: int = 0
    wrap: bool = False  # scalars convert as NumPy's astype (CuPy's user kernels), not raise
    slots: int = 1     # 8-byte argument slots a scalar parameter fills (complex128: two)
    limit: float = 0.0  # a finite number beyond +-limit raises OverflowError (0: no check;
                        # inf: only an int no 64-bit integer holds)
    int64: bool = False  # a Python int is read as an int64 first (NumPy's logical ops)
    truth: bool = False  # a number stands for its truth (NumPy's logical ops): 1 or 0

    @property
    def is_complex(self) -> bool:
        return self.name.startswith("complex")

    def __getattr__(self, attr: str):
        # Only reached for bfloat16's `numpy`, left unset at import: ml_dtypes costs 0.1-1 s
        # to import, so it loads on first use, and the attribute is a plain one after that.
        if attr != "numpy":
            raise AttributeError(attr)
        import ml_dtypes
        value = np.dtype(getattr(ml_dtypes, self.name))
        object.__setattr__(self, "numpy", value)
        return value

    def slot_value(self, value):
        """The Python value `struct` packs for a scalar parameter of this dtype."""
        top = _FLOAT_TOP.get(self.name)
        if top is not None and type(value) is float and not self.truth \
                and -top <= value <= top and (not self.limit or abs(value) <= self.limit):
            # a float the dtype holds rounds as below without NumPy's overflow warning, so
            # without an errstate (most of a warm call's host time: 9 -> 6 us a torch call)
            if self.itemsize == 2:
                return int(np.asarray(value, dtype=self.numpy).view(np.uint16))
            return value if top == _INF else self.numpy.type(value).item()
        if self.int64 and type(value) is int and not -2**63 <= value < 2**63:
            raise OverflowError(f"Python integer {value} out of bounds for int64: NumPy's logical "
                                "ops, and torch with bool tensors, read an int as int64 (torch "
                                "refuses uint64's promotion); pass bool(value) or a float")
        if self.truth:
            value = bool(value)
        if self.limit:
            if type(value) is int and not -2**63 <= value < 2**64:
                raise OverflowError(f"Python int {value} is too big to convert to {self.name}")
            if type(value) in (int, float) and self.limit < abs(value) < float("inf"):
                raise OverflowError(f"value {value} cannot be converted to {self.name} without "
                                    f"overflow (beyond +-{self.limit:.6g}); pass a number in range")
            if type(value) is int and value < 0 and self.numpy.kind == "u":   # checked(): wraps
                value %= 1 << (8 * self.itemsize)
        if self.wrap:
            if type(value) is int and not -2**63 <= value < 2**64:   # no 64-bit integer holds it
                raise OverflowError(f"Python int {value} is too big to convert to {self.name}")
            with np.errstate(all="ignore"):
                value = np.array(value).astype(self.numpy)
        if self.ctype in ("sw::half", "sw::bfloat16"):
            if type(value) is int:     # through a 64-bit integer array: an older ml_dtypes
                value = np.array(value)    # takes no Python int past a C long
            return int(np.asarray(value, dtype=self.numpy).view(np.uint16))
        if self.is_complex:     # struct has no complex format: the value's bytes
            return self.numpy.type(value).tobytes()
        try:
            return self.numpy.type(value).item()
        except OverflowError:
            if type(value) is not int:
                raise
            # NumPy's own words at any size (past a C long it quoted C's)
            raise OverflowError(f"Python integer {value} out of bounds for {self.name}") from None

    def limited(self, limit: float) -> "DType":
        """This dtype with scalars beyond +-limit refused, as torch's clamp, pow and where do."""
        return dataclasses.replace(self, limit=limit)

    def checked(self) -> "DType":
        """This dtype with scalars converted as torch's c10::checked_convert does (clamp's and
        where's numbers, alpha=): a float within the finite range (inf and NaN pass), a signed
        int within the range, an unsigned one within +-max, a negative one wrapping (so
        clamp(uint8, -5, 9) bounds below by 251). NumPy's conversion refuses the rest."""
        if self.is_float or self.is_complex:
            return self.limited(FLOAT_MAX.get(self.name, float("inf")))
        if self.numpy.kind == "u":
            return self.limited(float(np.iinfo(self.numpy).max))
        return self.limited(float("inf")) if self.numpy.kind == "i" else self

    def as_int64(self) -> "DType":
        """This dtype with a Python int read as an int64 first, as NumPy's logical ops read
        its truth (and torch an int beside bool tensors): one outside int64 raises
        OverflowError, whatever the array's dtype."""
        return dataclasses.replace(self, int64=True)

    def as_truth(self) -> "DType":
        """This dtype with a number read as NumPy's logical ops read it: an int as an int64
        first (as_int64), then any number's truth as a Python bool, so 1e-310 is true beside
        float32 arrays, where the number cast to float32 would be 0."""
        return dataclasses.replace(self, int64=True, truth=True)

    def wrapping(self) -> "DType":
        """This dtype with scalars converted as astype does: wrapped, or rounded to +-inf."""
        return dataclasses.replace(self, wrap=True)

    def __repr__(self) -> str:
        return self.name


# The largest finite value of each float dtype below float64 (complex: of its parts); written
# out, as np.finfo does not take ml_dtypes' bfloat16 in every NumPy release.
FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
             "float32": 3.4028234663852886e38, "complex64": 3.4028234663852886e38}
_INF = float("inf")
# the real float dtypes: a Python float within +-top converts quietly
_FLOAT_TOP = {**{k: v for k, v in FLOAT_MAX.items() if not k.startswith("complex")}, "float64": _INF}

DTYPES = {
    d.name: d
    for d in (
        DType("float16", np.dtype(np.float16), "sw::half", "H6x", True, 2),
        DType("bfloat16", None, "sw::bfloat16", "H6x", True, 2),
        DType("float32", np.dtype(np.float32), "float", "f4x", True, 4),
        DType("float64", np.dtype(np.float64), "double", "d", True, 8),
        DType("int32", np.dtype(np.int32), "sw::i32", "i4x", False, 4),
        DType("int64", np.dtype(np.int64), "sw::i64", "q", False, 8),
        DType("int8", np.dtype(np.int8), "sw::i8", "b7x", False, 1),
        DType("int16", np.dtype(np.int16), "sw::i16", "h6x", False, 2),
        DType("uint8", np.dtype(np.uint8), "sw::u8", "B7x", False, 1),
        DType("uint16", np.dtype(np.uint16), "sw::u16", "H6x", False, 2),
        DType("uint32", np.dtype(np.uint32), "sw::u32", "I4x", False, 4),
        DType("uint64", np.dtype(np.uint64), "sw::u64", "Q", False, 8),
        DType("complex64", np.dtype(np.complex64), "sw::complex<float>", "8s", False, 8),
        DType("complex128", np.dtype(np.complex128), "sw::complex<double>", "16s", False, 16,
              slots=2),
    )
}
object.__delattr__(DTYPES["bfloat16"], "numpy")     # resolved by __getattr__ on first use
# bool is a storage and condition type only (where's condition, cast, masks in user kernels):
# no built-in arithmetic computes in it, so it stays out of DTYPES, the compute dtypes.
BOOL = DType("bool", np.dtype(np.bool_), "bool", "?7x", False, 1)
ALL_DTYPES = {**DTYPES, "bool": BOOL}


def supported_names() -> tuple[str, ...]:
    """Every dtype an operand may have (the compute dtypes and bool)."""
    return tuple(ALL_DTYPES)


def dtype_of(obj) -> DType:
    """Map a NumPy, ml_dtypes, torch or CuPy dtype (or its name) to a DType.

    Raises
    ------
    TypeError
        If the dtype is not one stridewise computes in.
    """
    try:                           # a warm call must not pay for str() and np.dtype()
        dt = _SEEN_TORCH.get(obj) or _SEEN.get(obj)
        if dt is not None:
            return dt
    except TypeError:
        pass
    name = str(obj)
    seen = _SEEN
    if name.startswith("torch."):
        name, seen = name[len("torch."):], _SEEN_TORCH
    else:
        try:
            name = np.dtype(obj).name
        except TypeError:
            pass
    if name not in ALL_DTYPES:
        if name in ("longdouble", "float128", "float96", "clongdouble", "complex256", "complex192"):
            raise TypeError(
                f"unsupported dtype {name}: stridewise does not compute in long double (no GPU "
                "has it, and the CPU backend keeps one set of kernels for both); cast to float64 "
                "(or complex128) first, e.g. x.astype(np.float64)")
        raise TypeError(
            f"unsupported dtype {name}: stridewise computes in {', '.join(DTYPES)}; "
            "cast the array first (for example with .astype or .to)"
        )
    dt = seen[obj] = ALL_DTYPES[name]
    return dt


_SEEN: dict = {}
# torch dtypes apart: Dynamo traces dtype_of for torch.compile and cannot hash a NumPy dtype
# among a dict's keys (torch 2.11: "NumpyDTypeVariable"), which a NumPy call may have put there
_SEEN_TORCH: dict = {}
