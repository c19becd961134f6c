"""CUDA backend: NVRTC builds the generated C++ into a cubin that the driver launches.

Same shape as every backend: entry_point, compile, load, configure, launch (plus bind, the
warm path's launcher). A warm call is the owning library's current device and stream
lookups, a store of the pointers into a buffer that already holds the static slots and the
launch facts, and one `cuLaunchKernelEx` (the slot record goes as one by-value struct
parameter): from C where stridewise.launch._warm is built, else through ctypes.

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

from stridewise import cache as _cache
from stridewise.codegen.source import record_template
from stridewise.launch.compiled import torch_ext

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
def _kernel(spec):
    """The mode's CUDA kernel (stridewise.modes)."""
    from stridewise import modes
    return modes.get(spec.mode).kernel("cuda")


def _extra_slots(spec, kernels=None) -> int:
    """Slots after the record: the Geometry, then the mode's launch facts (its Kernel.slots)."""
    return 1 + _kernel(spec).slots(spec, _tables(kernels))


def _tables(kernels):
    """The kernel tables to build with: a device's tuning's, else the backend default's (the
    one home of these values is tuning.py)."""
    if kernels is not None:
        return kernels
    from stridewise.tuning import elementwise_tuning
    return elementwise_tuning("cuda").kernels


def _fast_div(spec, kernels=None) -> bool:
    """Whether short_rows takes i mod period as a multiply-high (kernels.cuh flat_offsets)."""
    return bool(_tables(kernels).lookup("fast_div", spec, False))


def _max_registers(spec, kernels=None) -> int | None:
    """The register cap of spec's kernel (None: uncapped)."""
    return _tables(kernels).lookup("max_registers", spec)


def entry_point(spec, kernels=None) -> str:
    """The extern "C" kernel: one by-value struct holding the record and the launch facts.

    __grid_constant__ lets the body take the struct's address without a local copy.
    `kernels`: the device tuning's KernelTables (default: the backend's).
    """
    n = spec.nslots
    caps = [c for c in (_max_registers(spec, kernels), spec.max_registers) if c]
    cap = f"__maxnreg__({min(caps)}) " if caps else ""
    k = _kernel(spec)
    include = f"#include <{k.header}>\n" if k.header else ""
    return (f"{include}{k.source}"
            f"struct SwArgs {{ sw::Slot s[{n + _extra_slots(spec, kernels)}]; }};\n"
            f'extern "C" __global__ void {cap}{spec.entry}(const __grid_constant__ SwArgs a) {{\n'
            f"  {k.template}<Op{_template_args(spec, kernels)}>(a.s, a.s + {n});\n}}\n")


def tile_width(alg, pack: int) -> int:
    """tiled's tile width in packs: whole P x P blocks, at least 8 per warp row
    (kernels.cuh kBlockCols), at most a block's threads."""
    return max(min(alg.tile, alg.block_size), pack, 8)


def _template_args(spec, kernels=None) -> str:
    """The kernel's mode-specific template arguments after Op (its Kernel.args)."""
    return _kernel(spec).args(spec, _tables(kernels))


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


@functools.cache
def device_key(device) -> tuple[str, str]:
    """(name, arch) of a CUDA device, as tunings are keyed: ("NVIDIA H200", "sm_90")."""
    buf = ctypes.create_string_buffer(256)
    try:
        fn = _cu().cuDeviceGetName
    except AttributeError:   # a driver (or stand-in) without it: tunings by arch still apply
        return "CUDA device", _arch(device)
    fn.argtypes, fn.restype = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int], ctypes.c_int
    _check(fn(buf, 256, _device(device[1])), "cuDeviceGetName")
    return buf.value.decode(), _arch(device)


def _options(arch: str, extra=()):
    """ProgramOptions for `arch`; `extra`: a user kernel's (field, value) pairs, its
    include paths after stridewise's own."""
    fields = {**OPTIONS, **dict(extra)}
    paths = [str(_cache.INCLUDE_DIR), *fields.pop("include_path", ())]
    return _core().ProgramOptions(arch=arch, include_path=paths, **fields)


def _key(source: str, arch: str, nvrtc: str, extra=()) -> str:
    return _cache.cache_key(source, sorted({**OPTIONS, **dict(extra)}.items()), arch, nvrtc)


def compile(source: str, name: str, device, options=()) -> bytes:
    """Compile `source` to a cubin for `device` (or find it, verified, in the disk cache).

    `device` is ("cuda", index) or an explicit "sm_XY"; NVRTC itself needs no GPU. A disk
    cache hit needs neither cuda.core nor NVRTC: only stats and libcuda for the arch.
    `options`: extra ProgramOptions fields, (name, value) pairs (a user kernel's flags).
    """
    arch = _arch(device)
    identity = nvrtc_identity()
    key = _key(source, arch, identity, options)
    data = _cache.read("cuda", key, ".cubin")
    if data is not None:
        return data
    with _first_compile():
        core = _core()
        loaded = _fingerprint(_nvrtc_loaded())
        if loaded not in identity.split(";"):
            # Another NVRTC was already in the process (loaded by someone else): key by it.
            key = _key(source, arch, loaded, options)

        def build() -> bytes:
            try:
                oc = core.Program(source, "c++", options=_options(arch, options)).compile("cubin")
            except Exception as e:  # NVRTCError is public only from cuda.core 1.3
                raise CompileError(f"NVRTC failed on {name} for {arch}:\n{e}") from None
            return bytes(oc.code)
        return _cache.fetch("cuda", key, ".cubin", build)


_NVRTC_READY = threading.Event()
_NVRTC_FIRST = threading.Lock()


class _first_compile:
    """Holds other threads back while a process's first compile imports cuda.core, loads
    NVRTC and compiles: two threads doing that at once failed, one of them with "failed to
    open libnvrtc-builtins.so.13.0" or with a half-imported cuda.core (no `Program`)."""

    def __enter__(self):
        self.held = not _NVRTC_READY.is_set() and _NVRTC_FIRST.acquire()
        if self.held and _NVRTC_READY.is_set():    # another thread's first compile finished
            _NVRTC_FIRST.release()
            self.held = False

    def __exit__(self, *exc):
        if self.held:
            _NVRTC_READY.set()
            _NVRTC_FIRST.release()


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
    native : the compiled launcher's C reader of both (stridewise.launch._torch's cuda_current
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
    (stridewise.launch._torch's, for torch), or None: the Python getters serve."""
    ext = torch_ext() if lib == "torch" else None
    return ext.cuda_current if ext is not None else None


_LOADS = 4   # kLoads in cuda/kernels.cuh


def configure(spec, plan, alg, device, lib) -> Config:
    """Grid = min(work / block, SMs x resident blocks x waves), plus the mode's launch facts
    (its Kernel.grid)."""
    import struct

    from stridewise.tuning import elementwise_tuning

    sms, threads_per_sm, ctx = _device_facts(device[1])
    tuning = elementwise_tuning("cuda", device_key(device), spec.compute.name).for_mode(spec.mode)
    k = tuning.kernels
    block = alg.block_size
    work, items, group, extra = _kernel(spec).grid(spec, plan, alg, k)
    resident = max(1, threads_per_sm // block)
    grid = max(1, min(work, sms * resident * tuning.waves, 2**31 - 1))
    geometry = struct.pack("<ii", items, group)
    record = geometry + struct.pack(f"<{len(extra)}Q", *extra)
    assert len(record) == 8 * _extra_slots(spec, k), (spec.mode, len(record))   # the entry's SwArgs
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


def bind(kernel: _Kernel, config: Config, record, static: tuple):
    """The warm path's launcher for one call signature: run(pointers, scalar values).

    Built once: a slot buffer already holding the static slots (n, shape, strides) and the
    launch facts, and cuLaunchKernelEx's CUlaunchConfig with the geometry. A call reads the
    library's current device and stream, stores the pointers (and packs scalar values) into
    the buffer and launches; the driver copies the parameters before cuLaunchKernelEx
    returns. Another device (or no context) current: the context-pushing path of launch().
    The launcher is stridewise.launch._warm's Launcher where that is built, else the Python one.
    """
    from stridewise.launch.compiled import warm

    template, nptr, value_part, at = record_template(record, static)
    template += config.extra
    pack = record.pack

    def slow(ptrs, values):
        launch(kernel, config, pack(*ptrs, *static, *values))

    if warm is not None:
        return warm.Launcher(ctypes.cast(_driver_ex(), ctypes.c_void_p).value, kernel.handle,
                             config.grid, config.block, bytes(template), nptr, at,
                             config.index, config.current, config.stream, value_part.pack,
                             slow, lambda err: _launch_failed(err, config), config.native)
    return _python_launcher(kernel, config, template, nptr, value_part, at, slow)


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
