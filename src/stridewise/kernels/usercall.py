"""What a CuPy or PyCUDA kernel call brings beyond elementwise operands, in pipeline terms.

NumPy and bool scalars become host parameters whatever library the arrays come from; a raw
array becomes one host parameter holding its whole record (include/stridewise/raw.h); the
flat loop index is a virtual operand whose offset *is* the index; a stream is a launch
setting; compiler options split into macros (both compilers, through the source) and NVRTC
fields. Each maps onto something the pipeline already has, so every mode, cache and backend
serves these kernels too.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from stridewise.operands.arrays import Scalar, View, _dense_strides
from stridewise.operands.dtypes import ALL_DTYPES, DType

__all__ = ["as_scalar", "RawArray", "RawType", "index_view", "stream_handle",
           "compile_options", "loop_range"]


def as_scalar(x):
    """NumPy scalars and Python bools as host parameters (CuPy's CScalar); x otherwise."""
    if isinstance(x, (np.generic, bool)):
        return Scalar(x)
    return x


def _c_contiguous(v: View) -> bool:
    return all(n == 1 or s == d for n, s, d in zip(v.shape, v.strides, _dense_strides(v.shape)))


@dataclass(frozen=True)
class RawType:
    """A raw parameter's type: sw::Raw<T, N, C> and the slots its record fills.

    `where` (library, device) keeps calls on another library or device apart.
    """

    dtype: DType
    ndim: int
    contiguous: bool
    where: tuple

    @property
    def name(self) -> str:
        return f"raw {self.dtype.name} ({self.ndim}-d)"

    @property
    def ctype(self) -> str:
        return f"sw::Raw<{self.dtype.ctype}, {self.ndim}, {str(self.contiguous).lower()}>"

    @property
    def slots(self) -> int:
        return 2 + 2 * max(self.ndim, 1)

    @property
    def slot(self) -> str:
        return f"{8 * self.slots}s"

    def slot_value(self, v: View) -> bytes:
        """pointer, size, shape, strides in bytes (raw.h Raw's layout)."""
        dims = max(self.ndim, 1)
        shape = tuple(v.shape) or (1,)
        strides = tuple(s * v.dtype.itemsize for s in v.strides) or (v.dtype.itemsize,)
        return struct.pack(f"<Qq{dims}q{dims}q", v.ptr, v.size, *shape, *strides)


@dataclass(frozen=True, slots=True)
class RawArray(Scalar):
    """A raw argument (value: its View): never broadcast or planned, passed whole."""

    @property
    def pytype(self) -> RawType:
        v = self.value
        return RawType(v.dtype, len(v.shape), _c_contiguous(v), (v.lib, v.device))


_INDEX = ALL_DTYPES["int64"]


def index_view(shape: tuple, lib: str, device: tuple) -> View:
    """The flat C-order index over `shape` as an operand: C-contiguous strides, so its offset
    in every mode's walk is the element's index; pointer 0, never dereferenced."""
    return View(lib, device, 0, tuple(shape), _dense_strides(shape), _INDEX, None, False)


def stream_handle(stream) -> int:
    """The CUDA stream handle of a CuPy, torch, cuda.core or PyCUDA stream, or of an int."""
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if callable(proto):
        return int(proto()[1])
    for attr in ("cuda_stream", "ptr", "handle"):   # torch, CuPy, PyCUDA
        handle = getattr(stream, attr, None)
        if handle is not None:
            return int(handle)
    raise TypeError(f"stream={stream!r}: pass a CuPy stream, a torch.cuda.Stream, a cuda.core "
                    "Stream or a raw CUstream handle (an int)")


# NVRTC flags and the cuda.core ProgramOptions field each sets (value: the flag's text after
# '=', or the constant given).
_FLAGS = {
    "use_fast_math": ("use_fast_math", True), "lineinfo": ("lineinfo", True),
    "G": ("debug", True), "device-debug": ("debug", True), "std": ("std", None),
    "ftz": ("ftz", "bool"), "prec-div": ("prec_div", "bool"), "prec-sqrt": ("prec_sqrt", "bool"),
    "fmad": ("fma", "bool"), "maxrregcount": ("max_register_count", "int"),
    "restrict": ("restrict", True), "extra-device-vectorization": ("extra_device_vectorization", True),
}


def compile_options(options) -> tuple[str, tuple]:
    """(#define lines, NVRTC fields) from CuPy's or PyCUDA's `options`.

    -D/-U macros go into the source, so both compilers see them (and the cache keys them);
    the other flags are NVRTC's and reach only it; -O levels are accepted (both compilers
    already optimize fully).

    Raises
    ------
    ValueError
        For a flag stridewise does not know, naming the ones it does.
    """
    if options is None:
        return "", ()
    if isinstance(options, str):
        options = (options,)
    lines, fields, includes = [], {}, []
    for opt in options:
        text = str(opt)
        if text.startswith(("-D", "--define-macro=")):
            macro = text[2:] if text.startswith("-D") else text.split("=", 1)[1]
            name, _, value = macro.partition("=")
            lines.append(f"#define {name} {value or 1}")
        elif text.startswith(("-U", "--undefine-macro=")):
            lines.append(f"#undef {text[2:] if text.startswith('-U') else text.split('=', 1)[1]}")
        elif text.startswith(("-I", "--include-path=")):
            includes.append(text[2:] if text.startswith("-I") else text.split("=", 1)[1])
        elif text.startswith("-O") and text[2:] in ("", "0", "1", "2", "3"):
            continue
        else:
            flag, _, value = text.lstrip("-").partition("=")
            if flag not in _FLAGS:
                raise ValueError(
                    f"options: {text!r} is not a flag stridewise passes on; it takes -D/-U macros "
                    f"(both backends), -I paths and these NVRTC flags: "
                    f"{', '.join('--' + f for f in _FLAGS)}, and -O levels")
            field, kind = _FLAGS[flag]
            if kind == "bool":
                value = value.lower() not in ("false", "0")
            elif kind == "int":
                value = int(value)
            elif kind is not None:
                value = kind
            fields[field] = value
    if includes:
        fields["include_path"] = tuple(includes)
    return "\n".join(lines), tuple(sorted(fields.items()))


def loop_range(range_, slice_, size: int) -> tuple[int, int, int]:
    """(start, step, count) of PyCUDA's range= (a slice, or a range) or slice= (indices of
    an array of `size` elements)."""
    if range_ is not None and slice_ is not None:
        raise TypeError("pass range= or slice=, not both")
    if slice_ is not None:
        start, stop, step = slice_.indices(size)
    else:
        start, stop, step = range_.start or 0, range_.stop, range_.step or 1
        if stop is None:
            raise ValueError("range= needs a stop (range(start, stop, step) or a slice with one)")
    if step == 0:
        raise ValueError("range= and slice= need a nonzero step")
    return start, step, len(range(start, stop, step))
