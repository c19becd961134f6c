"""CUDA backend: NVRTC builds the generated C++ into a cubin that the driver launches.

Same shape as every backend: entry_point, compile, load, configure, launch. The per-call
path is the owning library's current-stream lookup, one bytes concatenation and one
`cuLaunchKernel` through ctypes (the slot record goes as one by-value struct parameter).
"""
from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass

from .. import _cache

__all__ = ["entry_point", "compile", "load", "configure", "launch", "pointer_device",
           "CompileError", "Config", "OPTIONS"]

_MISSING = ("the CUDA backend needs cuda.core and the NVRTC wheels; install them with "
            "pip install stridewise[cuda]")


class CompileError(RuntimeError):
    """NVRTC rejected a generated or user-written kernel."""


def _core():
    try:
        import cuda.core as core
    except ImportError as e:
        raise ImportError(f"{_MISSING} ({e})") from None
    return core


# -- entry point ------------------------------------------------------------------------
def _extra_slots(spec) -> int:
    """Slots after the record: the Geometry, then per-mode launch facts (see kernels.cuh)."""
    if spec.mode == "general":
        return 1 + 2 * spec.ndim
    if spec.mode == "tiled":
        return 1 + len(spec.arrays)
    return 1


def entry_point(spec) -> str:
    """The extern "C" kernel: one by-value struct holding the record and the launch facts.

    __grid_constant__ lets the body take the struct's address without a local copy.
    """
    n = spec.nslots
    return (f"#include <stridewise/cuda/kernels.cuh>\n"
            f"struct SwArgs {{ sw::Slot s[{n + _extra_slots(spec)}]; }};\n"
            f'extern "C" __global__ void {spec.entry}(const __grid_constant__ SwArgs a) {{\n'
            f"  sw::cuda::{spec.mode}_kernel<Op>(a.s, a.s + {n});\n}}\n")


# -- compile ----------------------------------------------------------------------------
OPTIONS = {"std": "c++17"}   # no ftz, precise division and sqrt: remainder must be exact


@functools.cache
def nvrtc_version() -> tuple:
    from cuda.bindings import nvrtc

    err, major, minor = nvrtc.nvrtcVersion()
    return (major, minor)


@functools.cache
def _arch(device) -> str:
    """sm_XY of `device` (("cuda", index) or an "sm_XY" string for GPU-less builds)."""
    if isinstance(device, str):
        return device
    return f"sm_{_core().Device(device[1]).arch}"


def _options(arch: str):
    return _core().ProgramOptions(arch=arch, include_path=[str(_cache.INCLUDE_DIR)], **OPTIONS)


def compile(source: str, name: str, device) -> bytes:
    """Compile `source` to a cubin for `device` (or find it in the disk cache).

    `device` is ("cuda", index) or an explicit "sm_XY"; NVRTC itself needs no GPU.
    """
    core = _core()
    arch = _arch(device)
    key = _cache.cache_key(source, sorted(OPTIONS.items()), arch, nvrtc_version())
    hit = _cache.read("cuda", key, ".cubin")
    if hit is not None:
        try:
            return hit.read_bytes()
        except OSError:
            pass
    try:
        oc = core.Program(source, "c++", options=_options(arch)).compile("cubin")
    except Exception as e:  # NVRTCError is public only from cuda.core 1.3
        raise CompileError(f"NVRTC failed on {name} for {arch}:\n{e}") from None
    data = bytes(oc.code)
    _cache.write("cuda", key, ".cubin", data)
    return data


def load(cubin: bytes, name: str, device):
    """The kernel `name` of `cubin`, loaded for `device` (its primary context made current)."""
    core = _core()
    core.Device(device[1]).set_current()
    kernel = core.ObjectCode.from_cubin(cubin).get_kernel(name)
    return _Kernel(kernel, int(kernel.handle))


@dataclass(frozen=True)
class _Kernel:
    obj: object      # the cuda.core Kernel (keeps the library loaded)
    handle: int      # its CUkernel, which cuLaunchKernel takes in place of a CUfunction


# -- configure --------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    """Launch geometry and per-plan launch facts, built once per plan."""

    grid: int
    block: int
    smem: int
    extra: bytes       # slots appended to every call's record (Geometry, magics, sizes)
    stream: object     # () -> the owning library's current stream handle on this device
    ctx: int           # the device's primary context
    geometry: tuple    # (items, group) for explain and tests
    index: int = 0     # the device ordinal
    current: object = None   # () -> the library's current device ordinal
    params: object = None    # kernelParams: one pointer, reset to each call's record


@functools.cache
def _device_facts(index: int) -> tuple[int, int, int]:
    """(SMs, max resident threads per SM, primary context) of device `index`."""
    from cuda.bindings import driver

    core = _core()
    dev = core.Device(index)
    dev.set_current()
    props = dev.properties
    err, ctx = driver.cuCtxGetCurrent()
    return props.multiprocessor_count, props.max_threads_per_multiprocessor, int(ctx)


def _pow2_at_least(x: int) -> int:
    return 1 << max(0, (int(x) - 1).bit_length())


def _magic(d: int, bits: int) -> tuple[int, int]:
    """(multiplier, shift) so that n // d == (mulhi(n, m) + n) >> s for 0 <= n < 2^(bits-1)."""
    s = (d - 1).bit_length()
    return ((1 << bits) * ((1 << s) - d)) // d + 1, s


def _stream_getter(lib: str, index: int):
    """() -> the owning library's current stream handle on device `index` (no object built)."""
    if lib == "torch":
        import torch

        return functools.partial(torch._C._cuda_getCurrentRawStream, index)
    if lib == "cupy":
        import cupy

        def current(get=cupy.cuda.get_current_stream, index=index):
            return get(index).ptr
        return current
    return lambda: 0   # a bare __cuda_array_interface__ producer: the legacy default stream


def _device_getter(lib: str):
    """() -> the library's current device index (it keeps that device's primary context current)."""
    if lib == "torch":
        import torch

        return torch._C._cuda_getDevice
    if lib == "cupy":
        import cupy

        return cupy.cuda.runtime.getDevice
    return lambda: -1  # unknown: always enter the device's context explicitly


_ROW_UNIT_PACKS = 16   # kRowUnitPacks in cuda/kernels.cuh


def configure(spec, plan, alg, device, lib) -> Config:
    """Grid = min(work / block, SMs x resident blocks x waves), plus the per-mode launch facts."""
    import struct

    from ..tuning import elementwise_tuning

    sms, threads_per_sm, ctx = _device_facts(device[1])
    tuning = elementwise_tuning("cuda", None, spec.compute.name)
    block, items, pack = alg.block_size, alg.items_per_thread, spec.pack
    group, smem, extra = 0, 0, []
    if spec.mode in ("contiguous", "scalar", "short_rows"):
        work = -(-max(1, (plan.n - 0) // pack) // (block * items))
    elif spec.mode == "rows":
        length = plan.shape[-1]
        packs = length // pack
        group = min(block, max(32, _pow2_at_least(-(-max(packs, 1) // items))))
        chunks = -(-packs // (group * items)) if packs else 1
        span = min(chunks, max(1, _ROW_UNIT_PACKS // items))   # as rows_kernel's units
        units = -(-chunks // span)
        work = -(-(plan.n // length) * units // (block // group))
    elif spec.mode == "tiled":
        group = min(alg.tile or tuning.tile, block)
        jd, id_ = plan.layout("tiled").aux, plan.ndim - 1
        work = plan.n // (plan.shape[jd] * plan.shape[id_]) * \
            -(-plan.shape[jd] // group) * -(-plan.shape[id_] // group)
        for k, dt in enumerate(spec.arrays):
            st = plan.strides[k]
            staged = k >= spec.nout and st[jd] == 1 and st[id_] != 1
            if staged:
                smem += (group * (group + 1) * dt.itemsize + 15) & ~15
            extra.append(dt.itemsize + 256 * staged)
    else:  # general
        work = -(-plan.n // (block * items))
        bits = spec.index_bits
        for d in plan.shape:
            extra.extend(_magic(d, bits))
    resident = max(1, threads_per_sm // block)
    grid = max(1, min(work, sms * resident * tuning.waves, 2**31 - 1))
    geometry = struct.pack("<ii", items, group)
    record = geometry + struct.pack(f"<{len(extra)}Q", *extra)
    return Config(grid, block, smem, record, _stream_getter(lib, device[1]), ctx, (items, group),
                  device[1], _device_getter(lib), (ctypes.c_char_p * 1)())


# -- launch -----------------------------------------------------------------------------
_INVALID_CONTEXT = 201   # CUDA_ERROR_INVALID_CONTEXT: this thread has no context yet


@functools.cache
def _driver():
    """libcuda's cuLaunchKernel and context calls through ctypes: the cheapest launch path.

    cuLaunchKernel goes through PyDLL, so the GIL stays held: the launch only enqueues, and
    holding it makes reusing the per-config kernelParams array safe across threads.
    """
    _core()
    launch_ = ctypes.PyDLL("libcuda.so.1").cuLaunchKernel
    launch_.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    launch_.restype = ctypes.c_int
    lib = ctypes.CDLL("libcuda.so.1")
    get = lib.cuCtxGetCurrent
    get.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    push = lib.cuCtxPushCurrent_v2
    push.argtypes = [ctypes.c_void_p]
    pop = lib.cuCtxPopCurrent_v2
    pop.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    return launch_, get, push, pop


def launch(kernel: _Kernel, config: Config, slots: bytes) -> None:
    """Launch over one slot record on the owning library's current stream of its device."""
    launch_ = _driver()[0]
    params = config.params
    params[0] = slots + config.extra          # the struct parameter's bytes
    if config.current() == config.index:
        err = launch_(kernel.handle, config.grid, 1, 1, config.block, 1, 1, config.smem,
                      config.stream(), params, None)
        if err != _INVALID_CONTEXT:
            if err:
                _launch_failed(err, config)
            return
    _launch_in_context(kernel, config, params)


def _launch_in_context(kernel, config, params) -> None:
    """Slow path: another device (or no context) is current; enter ours for this launch."""
    launch_, get, push, pop = _driver()
    ctx = ctypes.c_void_p()
    get(ctypes.byref(ctx))
    foreign = ctx.value != config.ctx
    if foreign:
        push(config.ctx)
    try:
        err = launch_(kernel.handle, config.grid, 1, 1, config.block, 1, 1, config.smem,
                      config.stream(), params, None)
    finally:
        if foreign:
            pop(ctypes.byref(ctx))
    if err:
        _launch_failed(err, config)


_OUT_OF_RESOURCES = 701   # CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES


def _launch_failed(err: int, config: Config):
    # Kernels are built without launch bounds (block size stays out of the source), so a
    # register-heavy variant (float64 rows: 90 registers) cannot run 1024-thread blocks.
    hint = ("; this kernel needs more registers per block than the SM has: use a smaller "
            "block_size (256 is the default) or Auto()") if err == _OUT_OF_RESOURCES else ""
    raise RuntimeError(f"cuLaunchKernel failed: {_error_name(err)} (grid {config.grid}, "
                       f"block {config.block}, shared memory {config.smem} bytes){hint}")


def _error_name(err: int) -> str:
    from cuda.bindings import driver

    try:
        return driver.cuGetErrorName(driver.CUresult(err))[1].decode()
    except Exception:
        return f"CUresult {err}"


def pointer_device(ptr: int) -> int:
    """The device ordinal that owns device pointer `ptr`."""
    try:
        from cuda.bindings import driver
    except ImportError as e:
        raise ImportError(f"{_MISSING} ({e})") from None
    err, ordinal = driver.cuPointerGetAttribute(
        driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise ValueError(f"pointer {ptr:#x} is not device memory the CUDA driver knows "
                         f"({_error_name(int(err))}); pass a CUDA array")
    return int(ordinal)
