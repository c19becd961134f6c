"""Operands: every argument becomes a strided view or a host scalar, and the backend,
result dtype and output come from the library that owns the arrays."""
from __future__ import annotations

import array
import functools
import numbers
import sys
from dataclasses import dataclass

import numpy as np

from stridewise.operands import meaning as _meaning
from stridewise.launch.compiled import torch_ext, warm
from stridewise.operands.dtypes import DType, dtype_of
from stridewise.operands.promote import ZeroDim, torch_default_float, torch_result_type

__all__ = [
    "View", "Scalar", "as_operand", "resolve_backend", "result_dtypes",
    "check_out", "partial_overlap", "array_likes", "library_name", "keyer", "allocator",
]


@dataclass(frozen=True, slots=True)
class View:
    """A strided array as the kernels see it: pointer, shape, strides in elements."""

    lib: str                 # "numpy", "torch", "cupy" or "cuda" (any CUDA array interface)
    device: tuple            # ("cpu", 0) or ("cuda", index)
    ptr: int
    shape: tuple
    strides: tuple
    dtype: DType
    obj: object
    writeable: bool = True

    @property
    def backend(self) -> str:
        return self.device[0]

    @property
    def size(self) -> int:
        return _prod(self.shape)

    def extent(self) -> tuple[int, int]:
        """Byte range [lo, hi) this view touches (empty views touch nothing)."""
        if self.size == 0:
            return (self.ptr, self.ptr)
        lo = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s > 0)
        isz = self.dtype.itemsize
        return (self.ptr + lo * isz, self.ptr + (hi + 1) * isz)


@dataclass(frozen=True, slots=True)
class Scalar:
    """A Python number; it becomes a kernel parameter in the compute dtype. `tensor`: the
    dtype name of the array scalar it was read from, which promotes as a 0-d array of that
    dtype: a CPU 0-d torch tensor in an op on CUDA tensors (torch takes one as a scalar), a
    NumPy scalar beside CuPy arrays (numpy_scalars)."""

    value: object
    tensor: str | None = None

    @property
    def pytype(self) -> type:
        if isinstance(self.value, np.generic):   # a user kernel's NumPy scalar keeps its type
            return type(self.value)
        return (bool if isinstance(self.value, bool) else int if isinstance(self.value, int)
                else float if isinstance(self.value, numbers.Real) else complex)


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def library_name(obj) -> str | None:
    """The owning library of an array-like, without importing that library: its type's, or
    the first base's that a library owns (a user's subclass of np.ndarray or torch.Tensor)."""
    for t in type(obj).__mro__[:-1]:
        mod = t.__module__.split(".", 1)[0]
        if mod in ("numpy", "torch", "cupy"):
            return mod
    if isinstance(obj, np.generic):      # ml_dtypes scalars live outside numpy's module
        return "numpy"
    if hasattr(obj, "__cuda_array_interface__"):
        return "cuda"
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return "dlpack"
    return None


def subclass_wrap(args):
    """What NumPy's ufuncs hand their result to where an input is an ndarray subclass
    (np.matrix, a user's subclass): the __array_wrap__ of the subclass input with the highest
    __array_priority__, the first of equals. None where every array is a plain ndarray."""
    subs = [a for a in args if isinstance(a, np.ndarray) and type(a) is not np.ndarray]
    if not subs:
        return None
    for a in subs:
        _meaning.check_numpy(a)          # what a plain view would lose (a mask) is refused
    return max(subs, key=lambda a: getattr(a, "__array_priority__", 0.0)).__array_wrap__


def unreadable(x) -> bool:
    """Whether x is an array the kernels cannot read in place: a NumPy array of a non-native
    byte order or with elements off their alignment (a misaligned buffer, a field of a packed
    record), or a torch tensor whose memory holds other values than it means (a lazy
    conjugate or negation, which torch's own ops resolve)."""
    if isinstance(x, np.ndarray):
        dt = x.dtype     # NumPy's aligned flag holds strides to the alignment (complex: half)
        return (not dt.isnative or not x.flags.aligned or dt.alignment != dt.itemsize
                and any(s % dt.itemsize for s in x.strides)) and dt.kind in "biufcV"
    if type(x) in _PLAIN:
        return False
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor) and (x.is_conj() or x.is_neg())


def readable(x):
    """A copy of x the kernels read in place, in x's layout: NumPy's native and aligned (its
    iterator buffers such arrays), torch's with its lazy bits resolved."""
    if isinstance(x, np.ndarray):
        return np.array(x, dtype=x.dtype.newbyteorder("="), order="K")
    return x.resolve_conj().resolve_neg()


def write_back(out, copy) -> None:
    """copy's values into out, an array `readable` copied (the library's own copy)."""
    if isinstance(out, np.ndarray):
        np.copyto(out, copy, casting="unsafe")
    else:
        out.copy_(copy)


def _numpy_view(a: np.ndarray, lib="numpy") -> View:
    _meaning.check_numpy(a)
    dt = dtype_of(a.dtype)
    isz = dt.itemsize
    if unreadable(a):       # reached by user kernels only: built-in ops buffer such arrays
        if not a.dtype.isnative:
            raise TypeError(f"array has non-native byte order ({a.dtype.str}); kernels read "
                            "native values: pass a.astype(a.dtype.newbyteorder('='))")
        raise ValueError(
            "array is not aligned to its element size; pass a copy (np.ascontiguousarray(a))"
        )
    return View(lib, ("cpu", 0), _numpy_data(a), a.shape, tuple(s // isz for s in a.strides),
                dt, a, bool(a.flags.writeable))


def _torch_view(t) -> View:
    _meaning.check_torch(t)
    dev = t.device
    return View("torch", (dev.type, dev.index or 0), t.data_ptr(), tuple(t.shape), t.stride(),
                dtype_of(t.dtype), t)


def _cupy_view(a) -> View:
    dt = dtype_of(a.dtype)
    return View("cupy", ("cuda", a.device.id), a.data.ptr, a.shape,
                tuple(s // dt.itemsize for s in a.strides), dt, a)


def _dlpack_view(obj) -> View:
    """Any other DLPack producer on a CUDA device; it is treated like a CAI producer."""
    kind, index = obj.__dlpack_device__()
    if int(kind) not in (2, 13):          # kDLCUDA, kDLCUDAManaged
        raise TypeError(f"{type(obj).__name__} lives on DLPack device type {int(kind)}; stridewise "
                        "takes DLPack producers on CUDA devices (or NumPy and torch arrays)")
    from cuda.core.utils import StridedMemoryView

    from stridewise.operands.foreign import DLPACK_STREAM

    # the launch goes on the legacy default stream: the producer orders its writes before it
    smv = StridedMemoryView.from_dlpack(obj, DLPACK_STREAM)
    dt = dtype_of(smv.dtype)
    shape = tuple(smv.shape)
    strides = smv.strides if smv.strides is not None else _dense_strides(shape)
    return View("cuda", ("cuda", int(index)), int(smv.ptr), shape, tuple(strides), dt, smv,
                not smv.readonly)


def _dense_strides(shape) -> tuple:
    """C-contiguous strides in elements, as torch gives them (a 0 extent counts as 1); for
    interfaces that leave strides out of dense arrays and for allocated outputs."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def interface_dtype(obj, cai: dict) -> DType:
    """The element type of a __cuda_array_interface__ producer. The interface has no code for
    bfloat16: JAX (and others) describe it as raw bytes ("<V2"), and then the object's own
    `dtype` (ml_dtypes' bfloat16) names it."""
    dt = np.dtype(cai["typestr"])
    own = getattr(obj, "dtype", None)
    if dt.kind == "V" and own is not None:
        try:
            own = np.dtype(own)
        except TypeError:
            return dtype_of(dt)        # refused, naming the bytes the interface gives
        if own.itemsize == dt.itemsize:
            dt = own
    return dtype_of(dt)


def _interface_view(obj) -> View:
    from stridewise.operands.foreign import sync_interface_stream, wait_for_jax

    wait_for_jax(obj)
    cai = obj.__cuda_array_interface__
    dt = interface_dtype(obj, cai)
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    strides = _dense_strides(shape) if strides is None else tuple(s // dt.itemsize for s in strides)
    ptr, readonly = cai["data"]
    from stridewise.backends.cuda import pointer_device

    sync_interface_stream(cai)

    return View("cuda", ("cuda", pointer_device(ptr)), ptr, shape, strides, dt, obj, not readonly)


def as_operand(x, position: int):
    """Turn one argument into a View or a Scalar.

    Raises
    ------
    TypeError
        For anything that is neither an array of a supported library nor a real number.
    """
    if isinstance(x, Scalar):            # wrapped by its op (user kernels: scalars, raw arrays)
        return x
    lib = library_name(x)
    if lib == "numpy":
        if isinstance(x, np.ndarray):
            return _numpy_view(x)
        if isinstance(x, np.generic):    # a NumPy scalar keeps its dtype: a 0-d array
            return _numpy_view(np.asarray(x))
    if lib == "torch":
        import torch

        if isinstance(x, torch.Tensor):
            return _torch_view(x)
    if lib == "cupy":
        return _cupy_view(x)
    if lib == "cuda":
        return _interface_view(x)
    if lib == "dlpack":
        return _dlpack_view(x)
    if isinstance(x, numbers.Complex):   # bool included: weak like int in every library
        return Scalar(x)
    raise TypeError(
        f"argument {position} has type {type(x).__name__}: pass a NumPy, torch or CuPy array, "
        "an object with __cuda_array_interface__, or a Python int, float or complex"
    )


def resolve_backend(views: list[View], names: list[str]) -> tuple[str, tuple]:
    """The (library, device) every array agrees on; scalars abstain.

    Raises
    ------
    ValueError
        If there is no array, or two arrays come from different libraries or devices.
    """
    if not views:
        raise ValueError("at least one argument must be an array; got only Python scalars")
    first = views[0]
    for v, name in zip(views[1:], names[1:]):
        if (v.lib, v.device) != (first.lib, first.device):
            raise ValueError(
                f"{names[0]} is a {first.lib} array on {_device_str(first.device)} but {name} is a "
                f"{v.lib} array on {_device_str(v.device)}; move them to one library and device"
            )
    return first.lib, first.device


def _device_str(device) -> str:
    return device[0] if device[0] == "cpu" else f"{device[0]}:{device[1]}"


def result_dtypes(lib: str, ufunc: str | None, key: tuple) -> tuple[DType, DType]:
    """(compute dtype, output dtype) by the owning library's promotion rules.

    `key` holds, per argument, a dtype name (a _promote.ZeroDim for a 0-d torch tensor) or a
    Python scalar type (weak in every library): torch.result_type's rules for torch
    (_promote), the NumPy ufunc's own resolution otherwise (NumPy 2's rules, which CuPy follows).
    """
    return _result_dtypes(lib, ufunc, key, tuple(isinstance(k, ZeroDim) for k in key),
                          torch_default_float() if lib == "torch" else None)


@functools.lru_cache(maxsize=4096)
def _result_dtypes(lib: str, ufunc: str | None, key: tuple, zero_d: tuple,
                   default: str | None) -> tuple[DType, DType]:
    # default: torch's default float, which torch.result_type reads (a key of the cache only)
    if lib == "torch":
        dt = dtype_of(torch_result_type(key))
        return dt, dt
    # a Python bool is no weak scalar in NumPy 2 (bool is the lowest kind anyway): np.bool_
    np_args = tuple(np.dtype(bool) if k is bool else k if isinstance(k, type) else dtype_of(k).numpy
                    for k in key)
    uf = getattr(np, ufunc, None) if ufunc else None
    if isinstance(uf, np.ufunc):
        try:
            resolved = uf.resolve_dtypes(np_args + (None,) * uf.nout)
        except TypeError as e:
            names = ", ".join(k.__name__ if isinstance(k, type) else str(k) for k in key)
            raise TypeError(f"unsupported dtype for {ufunc}: NumPy's {ufunc} has no loop for "
                            f"({names}) ({e})") from None
        return dtype_of(resolved[0]), dtype_of(resolved[-1])
    # the arrays first, then the weak numbers (where bfloat16 takes part, result_type's answer
    # depends on the order); bfloat16 as float32 but where that is the answer (ml_dtypes'
    # promotion: np.clip(int8, -1j, bfloat16) is complex64, result_type's complex128)
    ordered = sorted(np_args, key=lambda k: isinstance(k, type))
    dt = np.result_type(*(k(0) if isinstance(k, type) else np.float32 if k.name == "bfloat16" else k
                          for k in ordered))
    if dt == np.float32:
        dt = np.result_type(*(k(0) if isinstance(k, type) else k for k in ordered))
    dt = dtype_of(dt)
    return dt, dt


def keyer(x):
    """The fast keyer of x's type (x -> (layout key, pointer)), or None; a torch.Tensor type
    registers itself in _KEYERS (torch is never imported for this).

    The warm call path keys its memo on these without building Views: the key holds
    everything the plan depends on (type, dtype, shape, strides, device, alignment). A key
    is a flat tuple whose first item fixes its length (_ops splices keys into one tuple):
    a torch dtype (5 items), np.ndarray or cupy.ndarray (6) or a Python number's type (1).
    cupy.ndarray registers itself like torch.Tensor.
    """
    t = type(x)
    if t.__module__ == "torch" and t.__name__ == "Tensor":
        _KEYERS[t] = _torch_key
        return _torch_key
    if t.__module__.split(".", 1)[0] == "cupy" and t.__name__ == "ndarray":
        _KEYERS[t] = _cupy_key
        return _cupy_key
    return None


def _number_key(x):
    return (type(x),), None


def _interface_data(x) -> int:
    """The data pointer of NumPy array x, through the array interface (about 1 us)."""
    return x.__array_interface__["data"][0]


# where stridewise.launch._warm is built, the same pointer through the buffer protocol, without the
# interface's dict (a tenth of the time)
_numpy_data = _interface_data if warm is None else warm.data_pointer


def _numpy_key(x):
    ptr = _numpy_data(x)
    return (np.ndarray, x.dtype, x.shape, x.strides, x.flags.writeable, ptr % 16), ptr


def _torch_key(x):
    try:
        ptr = x.data_ptr()
        return (x.dtype, x.shape, x.stride(), x.get_device(), ptr % 16 + _meaning.torch_mark(x)), ptr
    except RuntimeError:         # sparse, nested: a key no call has; the full path refuses it
        return (None,), None


def _cupy_key(x):
    ptr = x.data.ptr
    return (type(x), x.dtype, x.shape, x.strides, x.device.id, ptr % 16), ptr


_KEYERS = {float: _number_key, int: _number_key, np.ndarray: _numpy_key}


def allocator(lib: str, device: tuple, shape: tuple, dtype: DType, strides: tuple | None = None):
    """A zero-argument callable returning (new uninitialised output, its pointer), from the
    owning library's allocator, with `strides` (elements; None: C-contiguous, as _layout
    chooses them); bound once per signature for the warm path."""
    if strides is None:
        strides = _dense_strides(shape)
    if lib == "numpy":
        if strides != _dense_strides(shape):
            # a dense buffer seen through the strides (_layout gives a permuted dense layout)
            size = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if _prod(shape) else 0
            byte_strides = tuple(s * dtype.itemsize for s in strides)

            def numpy_strided(empty=np.empty, nd=np.ndarray, shape=shape, dt=dtype.numpy,
                              size=size, st=byte_strides, data=_numpy_data):
                a = nd(shape, dt, empty(size, dt), 0, st)
                return a, data(a)
            return numpy_strided

        def numpy_alloc(empty=np.empty, shape=shape, dt=dtype.numpy, data=_numpy_data):
            a = empty(shape, dt)
            return a, data(a)
        return numpy_alloc
    if lib == "torch":
        import torch

        # new_empty_strided on an empty tensor of the dtype and device: half the argument
        # parsing of torch.empty(shape, dtype=, device=)
        template = torch.empty((0,), dtype=getattr(torch, dtype.name),
                               device=torch.device(_device_str(device)))
        ext = torch_ext()
        if ext is not None:         # the same call in C++: no argument parsing
            return ext.Allocator(template, shape, strides)

        def torch_alloc(new=template.new_empty_strided, shape=shape, strides=strides):
            t = new(shape, strides)
            return t, t.data_ptr()
        return torch_alloc
    if lib == "cupy":
        import cupy

        def cupy_alloc(shape=shape, dt=dtype.numpy, index=device[1], strides=strides):
            with cupy.cuda.Device(index):
                a = cupy.empty(shape, dtype=dt)
            if strides != _dense_strides(shape) and _prod(shape):
                # a dense layout in another order (astype's order='K'): the same bytes
                a = cupy.ndarray(shape, dt, a.data, tuple(s * a.itemsize for s in strides))
            return a, a.data.ptr
        return cupy_alloc
    from stridewise.operands import foreign as _foreign

    return _foreign.allocator(device, shape, dtype)   # any other CUDA producer


class OverlapError(ValueError, RuntimeError):
    """An out that overlaps itself or an input: NumPy's and CuPy's callers catch ValueError,
    torch's RuntimeError (what torch raises there)."""


def check_out(out: View, shape: tuple, dtype: DType, inputs: list[View], names: list[str]):
    """Reject an `out` that is the wrong shape or dtype, read-only, or overlapping.

    An `out` identical to an input (same pointer, same strides once broadcast) is allowed,
    because every element is read before it is written.
    """
    if out.shape != shape:
        raise ValueError(f"out has shape {out.shape} but the broadcast result is {shape}")
    if out.dtype is not dtype:
        raise TypeError(f"out has dtype {out.dtype} but the result dtype is {dtype}; "
                        f"pass an out of dtype {dtype}")
    if not out.writeable:
        raise ValueError("out is read-only; pass a writeable array")
    if out.size and any(s == 0 and n > 1 for n, s in zip(out.shape, out.strides)):
        raise OverlapError("out overlaps itself (a stride of 0 over a dim longer than 1: more "
                           "than one element refers to a single memory location); pass a fresh "
                           "array or out.copy()")
    k = partial_overlap(out, shape, inputs)
    if k is not None:
        raise OverlapError(
            f"out partially overlaps {names[k]} (some elements of the input and the written-to "
            "array refer to a single memory location); writing it would change inputs still to "
            "be read. Pass a separate out (out.clone()), or out identical to that input"
        )


def partial_overlap(out: View, shape: tuple, inputs: list[View]) -> int | None:
    """The index of the first input whose memory `out` may meet other than as an identical
    view (same pointer, same strides once broadcast: each element is read before it is
    written), or None."""
    lo, hi = out.extent()
    if lo == hi:
        return None
    for k, v in enumerate(inputs):
        vlo, vhi = v.extent()
        if vlo >= hi or lo >= vhi:
            continue
        if v.ptr == out.ptr and v.dtype is out.dtype and _broadcast_strides(v, shape) == out.strides:
            continue
        if v.lib == "numpy" and not _shares_memory(v.obj, out.obj):
            continue
        return k
    return None


_SEQUENCES = (list, tuple, memoryview, range, array.array, bytearray)   # NumPy reads the buffers
_PLAIN = (int, float, bool, complex, np.ndarray, type(None))   # neither array_like nor buffered


def _array_like(a) -> bool:
    """One of NumPy's array_likes that no array library owns: a list, tuple, range or buffer,
    or an object NumPy converts by its __array__ or __array_interface__ (a pandas Series, a
    user's container)."""
    t = type(a)
    if t in _SEQUENCES:
        return True
    if t in _PLAIN or isinstance(a, (np.ndarray, np.generic, numbers.Number)):
        return False
    return ((hasattr(t, "__array__") or hasattr(a, "__array_interface__"))
            and library_name(a) is None)


def array_likes(args: tuple) -> tuple:
    """NumPy's array_like arguments as NumPy arrays, where no array of another library takes
    part: lists, tuples, ranges, buffers and objects with __array__ (np.asarray), and Python
    numbers when nothing else is an array (np.add(7, 3) computes in int64, the numbers'
    default dtypes). Anything else is returned as it came, for as_operand to take or refuse."""
    likes = [_array_like(a) for a in args]
    if not any(likes) and not all(
            isinstance(a, numbers.Number) and not isinstance(a, np.generic) for a in args):
        return args
    if any(library_name(a) not in (None, "numpy") for a in args):
        return args          # torch and CuPy take no lists: as_operand says what they take
    numbers_only = all(isinstance(a, numbers.Number) for a in args)
    if numbers_only:
        # beside a float or complex, an int past 64 bits is that float (NumPy 2's weak
        # promotion: np.add(1.0, 2**100) is float64); ints alone must fit a 64-bit integer
        inexact = any(isinstance(a, (float, complex)) for a in args)
        for a in args:
            if type(a) is int and not -2**63 <= a < 2**64 and not inexact:
                raise OverflowError(f"Python integer {a} out of bounds for int64 and uint64; pass "
                                    "it as a float, or in an array of a float dtype")
        args = tuple(float(a) if type(a) is int and not -2**63 <= a < 2**64 else a for a in args)
    return tuple(np.asarray(a) if like or numbers_only else a for a, like in zip(args, likes))


def torch_number(x: np.generic):
    """NumPy scalar x as torch reads it: an integer one as a Python int, any other as a
    Python float (np.True_ is 1.0; a complex one loses its imaginary part, with NumPy's
    ComplexWarning), so a float16 tensor plus np.float64(0.5) stays float16."""
    return int(x) if isinstance(x, np.integer) else float(x)


def numpy_scalars(args: tuple) -> tuple:
    """args with each NumPy scalar beside torch tensors or CuPy arrays read as that library
    reads it: torch as a Python number (torch_number), CuPy as a number of its own dtype,
    promoted as a 0-d array (NumPy 2's rule, which CuPy's ufuncs follow). Beside NumPy arrays
    a NumPy scalar is a 0-d array (as_operand)."""
    if not any(isinstance(a, np.generic) for a in args):
        return args
    libs = {library_name(a) for a in args if not isinstance(a, np.generic)}
    if "torch" in libs:
        return tuple(torch_number(a) if isinstance(a, np.generic) else a for a in args)
    if "cupy" in libs:
        return tuple(Scalar(a.item(), dtype_of(a.dtype).name) if isinstance(a, np.generic) else a
                     for a in args)
    return args


def _broadcast_strides(v: View, shape: tuple) -> tuple:
    pad = len(shape) - len(v.shape)
    return (0,) * pad + tuple(0 if n == 1 and m != 1 else s
                              for n, s, m in zip(v.shape, v.strides, shape[pad:]))


def _shares_memory(a, b) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=10**6))
    except np.exceptions.TooHardError:
        return True
