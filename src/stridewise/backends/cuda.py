"""CUDA backend: NVRTC builds the generated C++ into a cubin that the driver launches.

Same shape as every backend: entry_point, compile, load, configure, launch (plus bind, the
warm path's launcher). A warm call is the owning library's current device and stream
lookups, a store of the pointers into a buffer that already holds the static slots and the
launch facts, and one `cuLaunchKernelEx` (the slot record goes as one by-value struct
parameter): from C where stridewise._warm is built, else through ctypes.

The driver is reached through ctypes libcuda only, and nothing here changes the calling
thread's current context: device facts come from attributes, kernels load context-free
(CUlibrary / CUkernel), and a launch for a device the library does not have current pushes
that device's primary context and pops it. A warm disk cache needs neither cuda.core nor
NVRTC (the cache key stats the NVRTC library; see nvrtc_identity).
"""
from __future__ import annotations

import ctypes
import functools
import os
import sys
import threading

from .. import _cache
from .._compiled import torch_ext

__all__ = ["entry_point", "compile", "load", "configure", "launch", "bind", "pointer_device",
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
    """Slots after the record: the Geometry, then per-mode launch facts (see kernels.cuh):
    general's magic and shift per dim, short_rows' per periodic operand's period, rows' work
    units (four counts and three magic-shift pairs), tiled's tiles per group."""
    if spec.mode == "general":
        return 1 + 2 * spec.ndim
    if _fast_div(spec):
        return 1 + 2 * spec.kinds.count("periodic")
    if spec.mode == "rows":
        return 11
    if spec.mode == "tiled":
        return 2
    return 1


def _fast_div(spec) -> bool:
    """Whether short_rows takes i mod period as a multiply-high (kernels.cuh flat_offsets).

    H200, 2026-11-30 (bench/NOTES.md G20): where the kernel is instruction-bound, 16-bit
    (eight elements per pack) and int64 (its remainder), it gained 5-13%; the others run at
    96-99% of copy with the `%` and measured 2-5% slower with it.
    """
    return spec.mode == "short_rows" and (spec.compute.itemsize == 2 or spec.compute.name == "int64")


# Register caps per mode (__maxnreg__): more resident warps hide the remainder's latency
# better than the spared registers would. H200, 2026-11-30, caps {none, 64, 72, 80} at block
# 128 over six dtypes (bench/NOTES.md G11): tiled at 80 gained 5-10% in four dtypes (float16
# +1%, float64 -2%), short_rows at 72 gained 2-10% in four (int32 -1%, int64 -2.5%); rows moved
# both ways (row float64 +4%, column int32 -7%), so it stays uncapped. The register-block
# tiled kernel (G15) re-checked: 80 beat none in five dtypes. A (mode, dtype) entry overrides
# its mode's: short_rows re-swept after G20 (caps 56-80, two runs each): int32 and int64 at 56
# +3-4% and +9% over 72, bfloat16 at 80 +5%; float16, float32 and float64 flat from 72 to 80.
# Session 12 (G36): int64 and float16 had come to spill 16 bytes in the loop at 56 and 72;
# int64 at 64 ran 2.5-5.5% faster than 56, float16 at 80 1-2% faster than 72 (no spills).
# A (mode, dtype, "repeated") entry holds for rows kernels that share a repeated row (outer
# products): int64 at 56 (a ninth resident block; one spilled word per unit) ran 1-3.4%
# faster than uncapped (58), where the dense rows kernels would spill 48 bytes (G37); batched
# (_BATCHED below) it needs 64: 56 spilled 24 bytes and lost 10-13%, 72 lost 1-3% (G38).
# 16-bit tiles of 128 rows (_TILE_ROWS below) take 96: bfloat16 spilled 32 bytes at 80, and
# float16 at 104 lost 3% (G39).
_MAX_REGISTERS = {"tiled": 80, "short_rows": 72, ("short_rows", "int32"): 56,
                  ("short_rows", "int64"): 64, ("short_rows", "float16"): 80,
                  ("short_rows", "bfloat16"): 80, ("rows", "int64", "repeated"): 64,
                  ("tiled", "float16"): 96, ("tiled", "bfloat16"): 96}


def _lookup(table: dict, spec, default=None):
    """spec's entry in a table keyed by (mode, dtype, "repeated"), (mode, dtype) or mode,
    most specific first."""
    key = (spec.mode, spec.compute.name)
    keys = ((*key, "repeated"),) if "repeated" in spec.kinds else ()
    return next((table[k] for k in (*keys, key, spec.mode) if k in table), default)


def _max_registers(spec) -> int | None:
    """The register cap of spec's kernel (None: uncapped)."""
    return _lookup(_MAX_REGISTERS, spec)


# rows kernels whose batches go through the fast path together (kernels.cuh run_packs
# kBatch), keyed as the caps. H200, 2026-11-30 (bench/NOTES.md G38): outer products in int64
# gained 2-5% (with the cap of 64 above); batched everywhere, uncapped, the other kernels lost
# up to 45%, their interleaved packs' registers costing occupancy.
_BATCHED = {("rows", "int64", "repeated"): True}

# Rows per tile of the tiled kernels (kernels.cuh tiled_kernel kRows; square tiles where
# absent), keyed as the caps; the tuning makes these tiles 8 packs wide. H200, 2026-11-30
# (bench/NOTES.md G39, tools/auto_ab.py rounds against square tiles of 32): 16-bit at 128 rows
# (block 128, with the cap of 96 above) +2-3%; float32, float64 and int64 at 64 rows +1-2%.
# int32 measured slower at 64 and 128 (tools/tune_gpu.py --tile-rows) and stays square.
_TILE_ROWS = {("tiled", "float16"): 128, ("tiled", "bfloat16"): 128, ("tiled", "float32"): 64,
              ("tiled", "float64"): 64, ("tiled", "int64"): 64}


# Packs in flight compiled into the flat kernels (kernels.cuh flat_kernel L; kLoads where
# absent), keyed as the caps: contiguous at its tuning's 2 packs per thread (G32) takes 32
# registers in int32 where 4 took 56. H200, 2026-11-30 (bench/NOTES.md G43, tools/auto_ab.py
# --anchor): against torch eager, int32 0.984-0.985 -> 0.990-0.993 and int64 0.986-0.990 ->
# 0.996-0.997 in one call, both within 0.2% in another; scalar kernels measured no better.
_FLAT_LOADS = {"contiguous": 2}


def entry_point(spec) -> str:
    """The extern "C" kernel: one by-value struct holding the record and the launch facts.

    __grid_constant__ lets the body take the struct's address without a local copy.
    """
    n = spec.nslots
    cap = _max_registers(spec)
    cap = f"__maxnreg__({cap}) " if cap else ""
    return (f"#include <stridewise/cuda/kernels.cuh>\n"
            f"struct SwArgs {{ sw::Slot s[{n + _extra_slots(spec)}]; }};\n"
            f'extern "C" __global__ void {cap}{spec.entry}(const __grid_constant__ SwArgs a) {{\n'
            f"  sw::cuda::{spec.mode}_kernel<Op{_template_args(spec)}>(a.s, a.s + {n});\n}}\n")


def tile_width(alg, pack: int) -> int:
    """tiled's tile width in packs: whole P x P blocks, at least 8 per warp row
    (kernels.cuh kBlockCols), at most a block's threads."""
    return max(min(alg.tile, alg.block_size), pack, 8)


def _template_args(spec) -> str:
    """The kernel's mode-specific template arguments after Op: short_rows' fast division,
    rows' batches, tiled's rows per tile (and width, staged), contiguous's packs in flight."""
    if _fast_div(spec) or _lookup(_BATCHED, spec, False):
        return ", true"
    if spec.tile:   # the staged tile's width is compiled in: it sizes the shared memory
        return f", {_lookup(_TILE_ROWS, spec) or 0}, {spec.tile}"
    n = _lookup(_TILE_ROWS, spec) or _lookup(_FLAT_LOADS, spec)
    return f", {n}" if n else ""


# -- compile ----------------------------------------------------------------------------
OPTIONS = {"std": "c++17"}   # no ftz, precise division and sqrt: remainder must be exact


@functools.cache
def nvrtc_version() -> tuple:
    """(major, minor) of the NVRTC a compile uses (loads it: not on the warm path)."""
    from cuda.bindings import nvrtc

    err, major, minor = nvrtc.nvrtcVersion()
    return (major, minor)


def _fingerprint(path: str) -> str:
    real = os.path.realpath(path)
    st = os.stat(real)
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


def _nvrtc_wheel_files() -> list:
    """NVRTC libraries in NVIDIA wheels on sys.path (where cuda.pathfinder looks first)."""
    found = set()
    for entry in sys.path:
        root = os.path.join(entry or ".", "nvidia")
        try:
            wheels = os.listdir(root)
        except OSError:
            continue
        for wheel in wheels:
            lib = os.path.join(root, wheel, "lib")
            try:
                found.update(os.path.join(lib, n) for n in os.listdir(lib) if n.startswith("libnvrtc"))
            except OSError:
                pass
    return sorted(found)


def _nvrtc_loaded() -> str:
    """Path of the NVRTC that cuda.bindings uses, found (and loaded) as it does."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        return load_nvidia_dynamic_lib("nvrtc").abs_path
    except Exception as e:   # ImportError, DynamicLibNotFoundError
        raise ImportError(f"{_MISSING} ({type(e).__name__}: {e})") from None


@functools.cache
def nvrtc_identity() -> str:
    """The compiler in the cache key: (path, size, mtime) of each NVRTC library file.

    Stat only, as the CPU backend does for g++: a warm process neither imports cuda.core
    nor loads NVRTC. Wheels are found on sys.path (the first place cuda.pathfinder looks);
    without one, the library cuda.pathfinder would load is loaded and stat'ed.
    """
    files = _nvrtc_wheel_files() or [_nvrtc_loaded()]
    return ";".join(_fingerprint(f) for f in files)


@functools.cache
def _arch(device) -> str:
    """sm_XY of `device` (("cuda", index) or an "sm_XY" string for GPU-less builds)."""
    if isinstance(device, str):
        return device
    dev = _device(device[1])
    return f"sm_{_attribute(dev, _CC_MAJOR)}{_attribute(dev, _CC_MINOR)}"


def _options(arch: str):
    return _core().ProgramOptions(arch=arch, include_path=[str(_cache.INCLUDE_DIR)], **OPTIONS)


def _key(source: str, arch: str, nvrtc: str) -> str:
    return _cache.cache_key(source, sorted(OPTIONS.items()), arch, nvrtc)


def compile(source: str, name: str, device) -> bytes:
    """Compile `source` to a cubin for `device` (or find it, verified, in the disk cache).

    `device` is ("cuda", index) or an explicit "sm_XY"; NVRTC itself needs no GPU. A disk
    cache hit needs neither cuda.core nor NVRTC: only stats and libcuda for the arch.
    """
    arch = _arch(device)
    identity = nvrtc_identity()
    key = _key(source, arch, identity)
    data = _cache.read("cuda", key, ".cubin")
    if data is not None:
        return data
    core = _core()
    loaded = _fingerprint(_nvrtc_loaded())
    if loaded not in identity.split(";"):
        # Another NVRTC was already in the process (loaded by someone else): key by it.
        key = _key(source, arch, loaded)

    def build() -> bytes:
        try:
            oc = core.Program(source, "c++", options=_options(arch)).compile("cubin")
        except Exception as e:  # NVRTCError is public only from cuda.core 1.3
            raise CompileError(f"NVRTC failed on {name} for {arch}:\n{e}") from None
        return bytes(oc.code)
    return _cache.fetch("cuda", key, ".cubin", build)


# -- load -------------------------------------------------------------------------------
def load(cubin: bytes, name: str, device):
    """The kernel `name` of `cubin`, context-free: cuLibraryLoadData + cuLibraryGetKernel.

    A CUkernel launches in whichever context is current (the driver loads it into that
    context on first use), so loading touches no context and changes nothing current. The
    library stays loaded for the process (the kernel memo keeps every kernel anyway).
    """
    cu = _cu()
    library, kernel = ctypes.c_void_p(), ctypes.c_void_p()
    _check(cu.cuLibraryLoadData(ctypes.byref(library), cubin, None, None, 0, None, None, 0),
           f"cuLibraryLoadData ({name})")
    err = cu.cuLibraryGetKernel(ctypes.byref(kernel), library, name.encode())
    if err:
        cu.cuLibraryUnload(library)
        _check(err, f"cuLibraryGetKernel ({name})")
    return _Kernel(library.value, kernel.value)


class _Kernel:
    """A loaded kernel (a plain class: a dataclass costs a first call a millisecond)."""

    __slots__ = ("library", "handle")

    def __init__(self, library: int, handle: int):
        self.library = library   # the CUlibrary (never unloaded: the kernel memo lives as long)
        self.handle = handle     # its CUkernel, which cuLaunchKernel takes in place of a CUfunction


# -- driver -----------------------------------------------------------------------------
# Everything through ctypes libcuda: no cuda.core on the warm path, and no call here ever
# changes the calling thread's current context (the owning library's current device).
_SM_COUNT, _THREADS_PER_SM, _CC_MAJOR, _CC_MINOR = 16, 39, 75, 76   # CUdevice_attribute
_POINTER_DEVICE_ORDINAL = 9                                         # CUpointer_attribute


@functools.cache
def _cu():
    """libcuda.so.1 with the entry points stridewise uses, initialised (cuInit)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise RuntimeError(f"the CUDA backend needs the NVIDIA driver, but libcuda.so.1 does "
                           f"not load ({e}); install the driver or use CPU arrays") from None
    P, V, I, U = ctypes.POINTER, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
    signatures = {
        "cuInit": [U],
        "cuDeviceGet": [P(I), I],
        "cuDeviceGetAttribute": [P(I), I, I],
        "cuDevicePrimaryCtxRetain": [P(V), I],
        "cuCtxGetCurrent": [P(V)],
        "cuCtxPushCurrent_v2": [V],
        "cuCtxPopCurrent_v2": [P(V)],
        "cuLibraryLoadData": [P(V), ctypes.c_char_p, V, V, U, V, V, U],
        "cuLibraryGetKernel": [P(V), V, ctypes.c_char_p],
        "cuLibraryUnload": [V],
        "cuPointerGetAttribute": [V, I, ctypes.c_uint64],
        "cuGetErrorName": [I, P(ctypes.c_char_p)],
    }
    for name, argtypes in signatures.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise RuntimeError(f"the NVIDIA driver is too old: libcuda.so.1 has no {name} "
                               "(the CUDA backend needs a CUDA 12 or newer driver)") from None
        fn.argtypes, fn.restype = argtypes, I
    err = lib.cuInit(0)
    if err:
        raise RuntimeError(f"cuInit failed: {_error_name(err, lib)}; no usable CUDA device")
    return lib


def _check(err: int, what: str) -> None:
    if err:
        raise RuntimeError(f"{what} failed: {_error_name(err)}")


@functools.cache
def _device(index: int) -> int:
    dev = ctypes.c_int()
    _check(_cu().cuDeviceGet(ctypes.byref(dev), index), f"cuDeviceGet({index})")
    return dev.value


def _attribute(dev: int, attribute: int) -> int:
    value = ctypes.c_int()
    _check(_cu().cuDeviceGetAttribute(ctypes.byref(value), attribute, dev), "cuDeviceGetAttribute")
    return value.value


# -- configure --------------------------------------------------------------------------
class Config:
    """Launch geometry and per-plan launch facts, built once per plan.

    A plain slotted class, not a dataclass: building a dataclass costs the module import
    (and so a CUDA process's first call) about a millisecond.

    Attributes
    ----------
    grid, block : the launch geometry (no kernel uses dynamic shared memory).
    extra : the launch facts appended to every call's record (the Geometry, then the
        per-mode slots `_extra_slots` counts).
    stream : () -> the owning library's current stream handle on this device.
    ctx : the device's primary context.
    geometry : (items, group) for explain and tests.
    index : the device ordinal.
    current : () -> the library's current device ordinal.
    native : the compiled launcher's C reader of both (stridewise._torch's cuda_current
        capsule), or None.
    """

    __slots__ = ("grid", "block", "extra", "stream", "ctx", "geometry", "index", "current", "native")

    def __init__(self, grid: int, block: int, extra: bytes, stream, ctx: int,
                 geometry: tuple, index: int = 0, current=None, native=None):
        self.grid, self.block, self.extra = grid, block, extra
        self.stream, self.ctx, self.geometry, self.index = stream, ctx, geometry, index
        self.current, self.native = current, native

    def replace(self, **changes) -> "Config":
        """A copy with `changes` applied (as dataclasses.replace)."""
        kw = {name: getattr(self, name) for name in self.__slots__}
        kw.update(changes)
        return Config(**kw)

    def __repr__(self) -> str:
        return (f"Config(grid={self.grid}, block={self.block}, "
                f"geometry={self.geometry}, index={self.index})")


@functools.cache
def _device_facts(index: int) -> tuple[int, int, int]:
    """(SMs, max resident threads per SM, primary context) of device `index`.

    The primary context is retained, never made current (the caller's stays), and kept for
    the process: launches push it when the owning library has another device current.
    """
    dev = _device(index)
    ctx = ctypes.c_void_p()
    _check(_cu().cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), f"cuDevicePrimaryCtxRetain({index})")
    return _attribute(dev, _SM_COUNT), _attribute(dev, _THREADS_PER_SM), ctx.value


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


def _native_getter(lib: str):
    """The C reader of the library's current device and stream for the compiled launcher
    (stridewise._torch's, for torch), or None: the Python getters serve."""
    ext = torch_ext() if lib == "torch" else None
    return ext.cuda_current if ext is not None else None


# rows_kernel's work units. A unit is often a block's whole work (the grid has a block per
# unit up to the tuning's waves), so its size trades the unit's own setup against a short
# last wave and blocks in flight on a compact stretch of the output. Since a unit's setup is
# a few multiply-highs (G31), small units win: H200, 2026-11-30 (bench/NOTES.md G30, G31,
# 2^27 outputs), 4 packs per thread against 8 gained 1-3% in row, column and crossed 3-d
# (int64 column equal). Outer products that do not share their divisor row keep 16 (G21).
_ROW_UNIT_PACKS, _ROW_UNIT_PACKS_OUTER = 4, 16
# Where kLoads rows share a repeated row, a unit is a number of batches (one pack column in
# those rows) per thread: 2 against the 4-8 that suited the old setup gained 3-7% in float16,
# bfloat16, int32 and int64 outer products, and float64's were fastest at 1 (+3% over 2).
_ROW_UNIT_BATCHES, _ROW_UNIT_BATCHES_OUTER = 2, {"float64": 1}
_LOADS = 4   # kLoads in cuda/kernels.cuh


def configure(spec, plan, alg, device, lib) -> Config:
    """Grid = min(work / block, SMs x resident blocks x waves), plus the per-mode launch facts."""
    import struct

    from ..tuning import elementwise_tuning

    sms, threads_per_sm, ctx = _device_facts(device[1])
    tuning = elementwise_tuning("cuda", None, spec.compute.name).for_mode(spec.mode)
    block, items, pack = alg.block_size, alg.items_per_thread, spec.pack
    group, extra = 0, []
    if spec.mode in ("contiguous", "scalar", "short_rows"):
        work = -(-max(1, (plan.n - 0) // pack) // (block * items))
        if _fast_div(spec):   # flat_offsets: i mod period as a multiply-high
            periods = plan.layout("short_rows").periods
            for kind, period in zip(spec.kinds, periods):
                if kind == "periodic":
                    extra.extend(_magic(period, spec.index_bits))
    elif spec.mode == "rows":
        length = plan.shape[-1]
        packs = length // pack
        # as rows_kernel's units: R rows of one slab of dim -2 where an operand is repeated
        r = _LOADS if "repeated" in spec.kinds else 1
        height = plan.shape[-2] if r > 1 else 1
        if r > 1:
            batches = _ROW_UNIT_BATCHES_OUTER.get(spec.compute.name, _ROW_UNIT_BATCHES) \
                if plan.outer() else _ROW_UNIT_BATCHES
            items, unit = min(items, batches), batches * r
        else:
            unit = _ROW_UNIT_PACKS_OUTER if plan.outer() else _ROW_UNIT_PACKS
        group = min(block, max(32, _pow2_at_least(-(-max(packs, 1) // items))))
        chunks = -(-packs // (group * items)) if packs else 1
        span = min(chunks, max(1, unit // (items * r)))
        units = -(-chunks // span)
        per_slab = -(-height // r)
        total, groups = plan.n // length // height * per_slab * units, block // group
        bits = spec.index_bits
        extra.extend([span, units, total, groups, *_magic(units, bits), *_magic(per_slab, bits),
                      *_magic(group, bits)])
        work = -(-total // groups)
    elif spec.mode == "tiled":   # tiles of `rows` rows by `group` packs, as tiled_kernel's
        group = tile_width(alg, pack)
        rows = _lookup(_TILE_ROWS, spec) or group
        jd, id_ = plan.layout("tiled").aux, plan.ndim - 1
        work = plan.n // (plan.shape[jd] * plan.shape[id_]) * \
            -(-plan.shape[jd] // rows) * -(-plan.shape[id_] // (group * pack))
        extra.append(alg.tile_group)
    else:  # general
        work = -(-plan.n // (block * items))
        bits = spec.index_bits
        for d in plan.shape:
            extra.extend(_magic(d, bits))
    resident = max(1, threads_per_sm // block)
    grid = max(1, min(work, sms * resident * tuning.waves, 2**31 - 1))
    geometry = struct.pack("<ii", items, group)
    record = geometry + struct.pack(f"<{len(extra)}Q", *extra)
    assert len(record) == 8 * _extra_slots(spec), (spec.mode, len(record))   # the entry's SwArgs
    return Config(grid, block, record, _stream_getter(lib, device[1]), ctx, (items, group),
                  device[1], _device_getter(lib), _native_getter(lib))


# -- launch -----------------------------------------------------------------------------
_INVALID_CONTEXT = 201   # CUDA_ERROR_INVALID_CONTEXT: this thread has no context yet


@functools.cache
def _driver():
    """libcuda's cuLaunchKernel and context calls through ctypes: the cheapest launch path.

    cuLaunchKernel goes through PyDLL, so the GIL stays held: the launch only enqueues.
    """
    cu = _cu()
    launch_ = ctypes.PyDLL("libcuda.so.1").cuLaunchKernel
    launch_.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    launch_.restype = ctypes.c_int
    return launch_, cu.cuCtxPushCurrent_v2, cu.cuCtxPopCurrent_v2


def launch(kernel: _Kernel, config: Config, slots: bytes) -> None:
    """Launch over one slot record on the owning library's current stream of its device.

    The cold path's launch (the warm path uses bind()); its kernelParams array is its own,
    so concurrent launches never see each other's record.
    """
    launch_ = _driver()[0]
    params = (ctypes.c_char_p * 1)(slots + config.extra)   # the struct parameter's bytes
    if config.current() == config.index:
        err = launch_(kernel.handle, config.grid, 1, 1, config.block, 1, 1, 0,
                      config.stream(), params, None)
        if err != _INVALID_CONTEXT:
            if err:
                _launch_failed(err, config)
            return
    _launch_in_context(kernel, config, params)


class _LaunchConfig(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("smem", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("nattrs", ctypes.c_uint)]   # CUlaunchConfig


def _record_parts(record, static: tuple):
    """Split a slot record's format into (pointers, values) Structs around the static slots.

    The record (_codegen.slot_format) is the array pointers ("Q" each), the static slots
    ("q" each: n, aux, shape, strides, periods), then the scalar parameters. Returns the
    two Structs and the values' byte offset.
    """
    import struct

    body = record.format.lstrip("<")
    nptr = len(body) - len(body.lstrip("Q"))
    assert body[nptr:nptr + len(static)] == "q" * len(static), record.format
    ptrs = struct.Struct("<" + "Q" * nptr)
    values = struct.Struct("<" + body[nptr + len(static):])
    return ptrs, values, ptrs.size + 8 * len(static)


def bind(kernel: _Kernel, config: Config, record, static: tuple):
    """The warm path's launcher for one call signature: run(pointers, scalar values).

    Built once: a slot buffer already holding the static slots (n, shape, strides) and the
    launch facts, and cuLaunchKernelEx's CUlaunchConfig with the geometry. A call reads the
    library's current device and stream, stores the pointers (and packs scalar values) into
    the buffer and launches; the driver copies the parameters before cuLaunchKernelEx
    returns. Another device (or no context) current: the context-pushing path of launch().
    The launcher is stridewise._warm's Launcher where that is built, else the Python one.
    """
    import struct

    from .._compiled import warm

    ptr_part, value_part, at = _record_parts(record, static)
    template = bytearray(record.size)
    struct.pack_into(f"<{len(static)}q", template, ptr_part.size, *static)
    template += config.extra
    pack = record.pack

    def slow(ptrs, values):
        launch(kernel, config, pack(*ptrs, *static, *values))

    if warm is not None:
        return warm.Launcher(ctypes.cast(_driver_ex(), ctypes.c_void_p).value, kernel.handle,
                             config.grid, config.block, bytes(template), ptr_part.size // 8, at,
                             config.index, config.current, config.stream, value_part.pack,
                             slow, lambda err: _launch_failed(err, config), config.native)
    return _python_launcher(kernel, config, template, ptr_part.size // 8, value_part, at, slow)


def _python_launcher(kernel, config, template, nptr, value_part, at, slow):
    """bind's launcher in Python: cuLaunchKernelEx's four arguments as ctypes objects (no
    argtypes: the cheapest ctypes call, measured against cuLaunchKernel with argtypes and a
    CFUNCTYPE pointer), the pointers stored by one slice into a uint64 array over the buffer,
    and a lock, since threads may share a signature."""
    ex = _driver_ex()
    buf = ctypes.create_string_buffer(bytes(template))
    slots = (ctypes.c_uint64 * nptr).from_buffer(buf)   # a slice store: 0.6x pack_into
    pack_values = value_part.pack_into
    params = (ctypes.c_void_p * 1)(ctypes.addressof(buf))
    lc = _LaunchConfig((ctypes.c_uint * 3)(config.grid, 1, 1), (ctypes.c_uint * 3)(config.block, 1, 1),
                       0, None, None, 0)
    plc, handle = ctypes.pointer(lc), ctypes.c_void_p(kernel.handle)
    current, stream, index = config.current, config.stream, config.index
    last = [0]   # the stream in lc (0: the legacy default stream, as lc starts)

    lock = threading.Lock()
    acquire, release = lock.acquire, lock.release   # half the cost of a with statement

    def run(ptrs, values):
        if current() == index:
            s = stream()
            acquire()
            try:
                if s != last[0]:
                    lc.stream = last[0] = s
                slots[:] = ptrs
                if values:
                    pack_values(buf, at, *values)
                err = ex(plc, handle, params, None)
            finally:
                release()
            if not err:
                return
            if err != _INVALID_CONTEXT:
                _launch_failed(err, config)
        slow(ptrs, values)
    return run


@functools.cache
def _driver_ex():
    ex = ctypes.PyDLL("libcuda.so.1").cuLaunchKernelEx   # no argtypes: ctypes objects only
    ex.restype = ctypes.c_int
    return ex


def _launch_in_context(kernel, config, params) -> None:
    """Slow path: the library has another device current (or no context, or it is a bare
    interface producer): push the device's primary context for this launch, pop it after.

    The stream handle is read inside the push, so the legacy default stream (0) means this
    device's, and the caller's current context is what it was before.
    """
    launch_, push, pop = _driver()
    _check(push(config.ctx), "cuCtxPushCurrent")
    try:
        err = launch_(kernel.handle, config.grid, 1, 1, config.block, 1, 1, 0,
                      config.stream(), params, None)
    finally:
        pop(ctypes.byref(ctypes.c_void_p()))
    if err:
        _launch_failed(err, config)


_OUT_OF_RESOURCES = 701   # CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES


def _launch_failed(err: int, config: Config):
    # Kernels are built without launch bounds (block size stays out of the source), so a
    # register-heavy variant (float64 rows: ~100 registers) cannot run 1024-thread blocks.
    hint = ("; this kernel needs more registers per block than the SM has: use a smaller "
            "block_size (the tuned default is 128) or Auto()") if err == _OUT_OF_RESOURCES else ""
    raise RuntimeError(f"cuLaunchKernel failed: {_error_name(err)} (grid {config.grid}, "
                       f"block {config.block}){hint}")


def _error_name(err: int, lib=None) -> str:
    name = ctypes.c_char_p()
    try:
        if not (lib or _cu()).cuGetErrorName(err, ctypes.byref(name)) and name.value:
            return name.value.decode()
    except Exception:  # noqa: BLE001 - a name is a courtesy; the number is the fact
        pass
    return f"CUresult {err}"


def pointer_device(ptr: int) -> int:
    """The device ordinal that owns device pointer `ptr`."""
    ordinal = ctypes.c_int(-1)
    err = _cu().cuPointerGetAttribute(ctypes.byref(ordinal), _POINTER_DEVICE_ORDINAL, ptr)
    if err:
        raise ValueError(f"pointer {ptr:#x} is not device memory the CUDA driver knows "
                         f"({_error_name(err)}); pass a CUDA array")
    return ordinal.value
