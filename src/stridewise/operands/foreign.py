"""Arrays from libraries stridewise does not allocate with: JAX arrays, and any other
__cuda_array_interface__ or DLPack producer on a CUDA device.

Streams. stridewise launches a foreign producer's call on the legacy default stream, so:

- DLPack inputs are imported with stream=1, the protocol's code for the legacy default
  stream: the producer makes its pending writes visible to that stream (-1 would tell it
  not to synchronize at all).
- A __cuda_array_interface__ (v3) input that names a stream other than the legacy default
  (1, or absent / None: nothing pending) is synchronized before the launch.
- A JAX array is waited for (`block_until_ready`): JAX dispatches asynchronously, and its
  interface names no stream, so nothing else orders its pending writes before the launch.
- Outputs: an `Array` (a cuda.core buffer) that exports both protocols. Its interface names
  the legacy default stream (1); its __dlpack__(stream=s) makes the consumer's stream s wait
  for the legacy default stream's work so far (s = -1: no synchronization, as the protocol
  says). A JAX input's output is a JAX array on the same device, imported from that buffer
  once the kernel is done.
"""
from __future__ import annotations

import ctypes

import numpy as np

__all__ = ["Array", "DLPACK_STREAM", "producer_of", "wait_for_jax", "sync_interface_stream",
           "allocator", "finish"]

DLPACK_STREAM = 1          # the legacy default stream, in DLPack's stream codes
_KDL_CPU, _KDL_CUDA = 1, 2
_DL_CODE = {"i": 0, "u": 1, "f": 2, "b": 6}   # DLDataTypeCode: kDLInt, kDLUInt, kDLFloat, kDLBool


def producer_of(obj):
    """The array a view was made from (a StridedMemoryView remembers its exporter)."""
    return getattr(obj, "exporting_obj", obj)


def is_jax(obj) -> bool:
    return type(obj).__module__.split(".", 1)[0] in ("jax", "jaxlib")


def wait_for_jax(obj) -> None:
    """Block until a JAX array's pending computation has written it (see the module's note)."""
    if is_jax(obj):
        obj.block_until_ready()


def sync_interface_stream(cai: dict) -> None:
    """Wait for the stream a __cuda_array_interface__ (v3) names, unless it is the legacy
    default stream the launch goes on, or none."""
    stream = cai.get("stream")
    if stream is None or stream == 1:
        return
    from cuda.bindings import driver

    (err,) = driver.cuStreamSynchronize(driver.CUstream(stream))   # 2: CU_STREAM_PER_THREAD
    if int(err):
        raise RuntimeError(f"could not synchronize the producer's stream {stream}: {err}")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DELETER)]
_EXPORTED: dict = {}      # id -> (managed tensor, its shape and strides arrays, owner)


@_DELETER
def _delete(managed):
    _EXPORTED.pop(managed.contents.manager_ctx, None)


# the capsule as a raw pointer: a py_object would take a reference to a dying object
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@_CAPSULE_DESTRUCTOR
def _capsule_gone(capsule):
    # an unconsumed capsule ("dltensor") still owns its tensor; a consumer renames it
    if _API.PyCapsule_IsValid(capsule, b"dltensor"):
        ptr = _API.PyCapsule_GetPointer(capsule, b"dltensor")
        _delete(ctypes.cast(ptr, ctypes.POINTER(_DLManagedTensor)))


_API = ctypes.PyDLL(None)   # our own handle: ctypes.pythonapi's prototypes are everyone's
_API.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_API.PyCapsule_GetPointer.restype = ctypes.c_void_p
_API.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_API.PyCapsule_New.restype = ctypes.py_object
_API.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]


def dlpack_capsule(ptr: int, device: tuple, shape: tuple, strides: tuple, dtype: np.dtype,
                   owner) -> object:
    """A DLPack capsule ("dltensor") over memory `owner` keeps alive; strides in elements."""
    n = len(shape)
    sh, st = (ctypes.c_int64 * max(n, 1))(*shape), (ctypes.c_int64 * max(n, 1))(*strides)
    managed = _DLManagedTensor()
    kind = _KDL_CPU if device[0] == "cpu" else _KDL_CUDA
    managed.dl_tensor = _DLTensor(ptr, _DLDevice(kind, device[1] if kind == _KDL_CUDA else 0), n,
                                  _DLDataType(4 if dtype.name == "bfloat16" else _DL_CODE[dtype.kind],
                                              dtype.itemsize * 8, 1),          # 4: kDLBfloat
                                  sh, st, 0)
    key = id(managed)
    managed.manager_ctx = key
    managed.deleter = _delete
    _EXPORTED[key] = (managed, sh, st, owner)
    return _API.PyCapsule_New(ctypes.addressof(managed), b"dltensor", _capsule_gone)


class Array:
    """An output in device memory stridewise allocated (a cuda.core buffer), for producers
    without an allocator of their own; read it through either protocol
    (torch.from_dlpack, cupy.asarray, jax.dlpack.from_dlpack, numba.cuda.as_cuda_array)."""

    def __init__(self, buffer, ptr: int, index: int, shape: tuple, dtype: np.dtype):
        self._buffer, self.ptr, self.index = buffer, ptr, index
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        strides, acc = [], 1
        for n in reversed(self.shape):
            strides.append(acc)
            acc *= max(n, 1)
        self.strides = tuple(reversed(strides))      # in elements, C order

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "strides": tuple(s * self.dtype.itemsize for s in self.strides), "version": 3,
                "stream": 1}

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_KDL_CUDA, self.index)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if stream is not None and stream not in (-1, 1):   # the consumer's stream waits
            from cuda.bindings import driver
            from cuda.core import Device

            Device(self.index).set_current()
            err, event = driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DISABLE_TIMING)
            for err in (err, driver.cuEventRecord(event, driver.CUstream(0))[0],
                        driver.cuStreamWaitEvent(driver.CUstream(stream), event, 0)[0],
                        driver.cuEventDestroy(event)[0]):
                if int(err):
                    raise RuntimeError(f"could not order stream {stream} after the kernel: {err}")
        return dlpack_capsule(self.ptr, ("cuda", self.index), self.shape, self.strides,
                              self.dtype, self)

    def __repr__(self) -> str:
        return f"stridewise.Array(shape={self.shape}, dtype={self.dtype}, device=cuda:{self.index})"


def allocator(device: tuple, shape: tuple, dtype):
    """() -> (new Array, its pointer) on CUDA device `device`."""
    def alloc():
        from cuda.core import Device

        dev = Device(device[1])
        dev.set_current()
        nbytes = max(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, 1)
        buf = dev.allocate(nbytes, stream=dev.default_stream)   # ordered before the launch
        ptr = int(buf.handle)
        return Array(buf, ptr, device[1], shape, dtype.numpy), ptr
    return alloc


def finish(result, first):
    """The output in the first operand's library: a JAX array for JAX inputs (once the kernel
    is done: JAX's streams do not order after the legacy default stream)."""
    if not isinstance(result, Array) or not is_jax(first):
        return result
    import jax.dlpack
    from cuda.core import Device

    dev = Device(result.index)
    dev.set_current()
    dev.sync()
    return jax.dlpack.from_dlpack(result)
