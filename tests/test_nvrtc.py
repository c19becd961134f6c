"""Every generated CUDA kernel variant compiles with NVRTC (no GPU needed).

Variants: every mode (and its operand kinds) x six dtypes x every legal pack x both index
widths, each (mode, dtype) with keep_loads and tiled with staged tiles of three widths,
compiled in threads (NVRTC releases the GIL) for sm_90.
"""
import dataclasses
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

pytest.importorskip("cuda.core", reason="needs the cuda extra (cuda.core + NVRTC wheels)")

from stridewise import algorithms, modes  # noqa: E402
from stridewise.codegen import source as _codegen  # noqa: E402
from stridewise.launch import pipeline as _ops  # noqa: E402
from stridewise.ops import builtins as _builtins
from stridewise.operands.dtypes import DTYPES  # noqa: E402

pytestmark = pytest.mark.nvrtc

try:
    from cuda.bindings import nvrtc

    nvrtc.nvrtcVersion()
except Exception as e:  # pragma: no cover
    pytest.skip(f"NVRTC is not loadable: {e}", allow_module_level=True)

from stridewise.backends import cuda  # noqa: E402
from nvrtc_batch import FAST, MID, compile_batched  # noqa: E402

ARCH = "sm_90"
# The layout variants run over the six original dtypes (2-, 4- and 8-byte elements); the
# other dtypes' variants compile batched into a few NVRTC programs (test_new_dtype_variants).
SIX = ("float16", "bfloat16", "float32", "float64", "int32", "int64")


def _base_specs():
    """One planned float32 problem per (mode, operand kinds) worth compiling."""
    f = np.float32
    a = np.ones((64, 256), f)
    cases = {
        "contiguous": ((a, a), None),
        "scalar/device": ((a, np.ones((), f)), None),
        "scalar/host": ((a, 2.5), None),
        "rows/dense": ((np.ones((64, 512), f)[:, :256], a), algorithms.Rows()),
        "rows/repeated": ((a, np.ones(256, f)), algorithms.Rows(share_rows=True)),
        "rows/outer": ((np.ones((64, 1), f), np.ones((1, 256), f)), algorithms.Rows(share_rows=True)),
        "rows/strided+bcast": ((np.ones((64, 512), f)[:, ::2], np.ones((64, 1), f)), algorithms.Rows()),
        "contiguous/shifted": ((np.ones(1025, f)[1:], np.ones(1024, f)), None),
        "rows/shifted": ((np.ones((64, 257), f)[:, 1:], a), algorithms.Rows()),
        "rows/repeated+shifted": ((np.ones((64, 257), f)[:, 1:], np.ones(257, f)[1:]),
                                  algorithms.Rows(share_rows=True)),
        "rows/heads+shifted": ((np.ones((64, 255), f), np.ones(255, f)), algorithms.Rows()),
        # a shared row beside rows of odd length: the batch's rows P apart (kRowSpacing)
        "rows/spaced+heads": ((np.ones((64, 255), f), np.ones(255, f)), algorithms.Rows(share_rows=True)),
        "short_rows": ((np.ones((100, 6), f), np.ones((1, 6), f)), None),
        # a period of whole packs, resident: read once per thread (kernels.cuh resident_kernel)
        "short_rows/repeated": ((np.ones((100, 64), f), np.ones((1, 64), f)),
                                algorithms.ShortRows(share_rows=True)),
        "tiled": ((np.ones((256, 64), f).T, a), algorithms.Tiled()),
        "general": ((np.ones((64, 512), f)[:, ::2], a.T.copy().T), algorithms.General()),
    }
    for m in modes.registered():   # a mode without a case here: its registered example
        if m.example and not any(name.split("/")[0] == m.name for name in cases):
            cases[m.name] = (m.example(lambda shape: np.ones(shape, f)), m.algorithm())
    specs = {}
    for name, (args, alg) in cases.items():
        prepared = _ops._call(_builtins.OPS["remainder"], args, algorithm=alg, dry=True)
        # planned on the host, whose kernels read a shifted input as a dense one
        # (capabilities.CPU.alike): the device's spec keeps the plan's kinds
        spec = dataclasses.replace(prepared.spec, kinds=prepared.layout.kinds)
        assert spec.mode == name.split("/")[0], (name, spec.mode)
        assert ("shifted" in name) == ("shifted" in spec.kinds), (name, spec.kinds)
        assert ("heads" in name) == spec.row_heads, name
        specs[name] = spec
    return specs


def _variants():
    out = []
    for name, base in _base_specs().items():
        for dt in (DTYPES[n] for n in SIX):
            wide = 1 if base.mode == "general" else 16 // dt.itemsize
            # every pack with 32-bit indices; 64-bit indices (the Index type alone) at the widest
            for pack, bits in [(p, 32) for p in (1, 2, 4, 8) if p <= wide] + [(wide, 64)]:
                spec = dataclasses.replace(
                    base, arrays=(dt,) * len(base.arrays), params=(dt,) * len(base.params),
                    compute=dt, functor=_builtins.OPS["remainder"].functor_for(dt, "torch"),
                    pack=pack, index_bits=bits)
                out.append((f"{name}/{dt.name}/p{pack}/i{bits}", spec))
            widest = out[-1][1]
            # dense loads under an L2 policy (pack.h load_kept), at the widest pack
            out.append((f"{name}/{dt.name}/keep", dataclasses.replace(widest, keep_loads=True)))
            if base.mode == "tiled":   # staged tiles (kernels.cuh Stage): narrow, fitting, too wide
                out.extend((f"{name}/{dt.name}/stage{tile}", dataclasses.replace(widest, tile=tile))
                           for tile in (8, 32, 64))
    return out


def test_kept_loads_reach_dense_operands_only():
    """keep_loads reads dense and repeated operands through load_kept, never a staged block
    or a period's table (pointers into registers or shared memory, where a global load
    faults), and changes nothing else in the source."""
    for name, spec in _base_specs().items():
        plain = _codegen.generate(spec, cuda.entry_point)
        kept = _codegen.generate(dataclasses.replace(spec, keep_loads=True), cuda.entry_point)
        dense = [k for k, kind in enumerate(spec.kinds) if kind in ("dense", "repeated") and k >= spec.nout]
        want = plain
        for k in dense:
            want = want.replace(f"in.a{k} = sw::load_pack<", f"in.a{k} = sw::load_kept<")
        assert kept == want, name
        assert ("load_kept" in kept) == bool(dense), name


def test_bfloat16_remainder_checks_its_range_two_lanes_at_a_time():
    """The range check first (FlagsFirst) takes the pair form (functors.h Wide2) wherever
    every operand is a 16-bit pack and the divisor is not prepared (compiled where the
    functor has it: bfloat16 remainder), and a prepared divisor's check stays on its limit
    (a shared row's, or a scalar's prepared once with the uniforms); other kernels have no
    pair form to reach."""
    for name, spec in _base_specs().items():
        dt = DTYPES["bfloat16"]
        s = dataclasses.replace(spec, arrays=(dt,) * len(spec.arrays), params=(dt,) * len(spec.params),
                                compute=dt, functor=_builtins.OPS["remainder"].functor_for(dt, "torch"),
                                pack=1 if spec.mode == "general" else 8)
        src = _codegen.generate(s, cuda.entry_point)
        k = _codegen._prepared(s)
        if k is not None:   # the main branch checks the prepared divisor (one value along
            # the pack where it is broadcast), and the pair form first checks its pairs
            pick = "" if s.kinds[k] == "bcast" else "[e]"
            assert f"sw::call_wide<F, P>(slow, " in src and f", in.d{k}{pick})" in src, name
            assert f"F2::begin(" in src and f", in.d2_{k}{pick and '[e / 2]'}, flag)" in src, name
        elif _codegen._uniform_last(s):
            assert "sw::call_wide<F, P>(slow, " in src and ", u.dp)" in src, name
            assert "W2::wide(" not in src, name
            assert "F2::begin(" in src and ", u.d2, flag)" in src, name
        elif _codegen._pairs(s):
            assert "W2::wide(sw::pair(" in src, name
        else:
            assert "W2::wide(" not in src, name


def test_the_variants_cover_every_mode():
    variants = _variants()
    assert {spec.mode for _, spec in variants} == set(_ops._plan.MODES)
    assert len({label for label, _ in variants}) == len(variants) > 200


# one test per mode, so that the test workers share the compiles; each mode's variants in
# two NVRTC programs (nvrtc_batch: the headers parsed once a program, not once a variant),
# with nvrtc_batch.FAST (101 -> 67 s of CPU on 2 cores)
@pytest.mark.parametrize("mode", sorted(_ops._plan.MODES))
def test_every_variant_compiles(mode, monkeypatch):
    monkeypatch.setenv("STRIDEWISE_DISABLE_CACHE", "1")
    specs = [spec for _, spec in _variants() if spec.mode == mode]
    assert specs
    assert compile_batched(specs, options=FAST) == len(specs)


def test_compile_error_names_the_kernel():
    with pytest.raises(cuda.CompileError, match="broken"):
        cuda.compile('extern "C" __global__ void broken() { nope; }', "broken", ARCH)


def test_cubin_is_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    src = 'extern "C" __global__ void k(float* o) { o[0] = 1.0f; }'
    first = cuda.compile(src, "k", ARCH)
    assert list((tmp_path / "cuda").glob("*.cubin"))
    assert cuda.compile(src, "k", ARCH) == first


# -- the warm path: a disk cache hit needs neither cuda.core nor NVRTC -----------------------
WARM = r"""
import sys
from stridewise.backends import cuda
src = 'extern "C" __global__ void k(float* o) { o[0] = 2.0f; }'
cubin = cuda.compile(src, "k", "sm_90")
assert cubin[:4] == b"\x7fELF", cubin[:4]
loaded = [m for m in sys.modules if m.startswith("cuda.core") or "nvrtc" in m]
with open("/proc/self/maps") as f:
    libs = sorted({ln.split()[-1] for ln in f if "libnvrtc" in ln})
print(sys.argv[1], loaded, libs)
if sys.argv[1] == "warm":
    assert not loaded and not libs, (loaded, libs)
"""


def test_warm_cache_imports_neither_cuda_core_nor_nvrtc(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, STRIDEWISE_CACHE_DIR=str(tmp_path))
    for phase in ("cold", "warm"):
        proc = subprocess.run([sys.executable, "-c", WARM, phase], env=env,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / "cuda").glob("*.cubin"))) == 1


def test_key_follows_nvrtc_arch_and_options(tmp_path, monkeypatch):
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    src = 'extern "C" __global__ void k(float* o) { o[0] = 3.0f; }'

    def entries():
        return len(list((tmp_path / "cuda").glob("*.cubin")))

    cuda.compile(src, "k", ARCH)
    cuda.compile(src, "k", ARCH)
    assert entries() == 1
    cuda.compile(src, "k", "sm_80")                               # arch
    assert entries() == 2
    real = cuda.nvrtc_identity()
    monkeypatch.setattr(cuda, "nvrtc_identity", lambda: real + ";upgraded")   # NVRTC
    cuda.compile(src, "k", ARCH)
    assert entries() == 3
    monkeypatch.setattr(cuda, "OPTIONS", dict(cuda.OPTIONS, std="c++20"))    # options
    cuda.compile(src, "k", ARCH)
    assert entries() == 4


def test_nvrtc_identity_is_a_stat_of_the_library(tmp_path):
    ident = cuda.nvrtc_identity()
    assert "libnvrtc" in ident and ident.count(":") >= 2
    lib = tmp_path / "libnvrtc.so.99"
    lib.write_bytes(b"x" * 10)
    before = cuda._fingerprint(str(lib))
    os.utime(lib, ns=(1, 2))                                      # a reinstall: new mtime
    assert cuda._fingerprint(str(lib)) != before
    lib.write_bytes(b"y" * 11)
    assert cuda._fingerprint(str(lib)).split(":")[1] == "11"


def test_unpredicted_nvrtc_keys_by_the_loaded_one(tmp_path, monkeypatch):
    """An NVRTC that the stat did not predict (loaded from elsewhere) keys the cubin itself."""
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cuda, "nvrtc_identity", lambda: "/elsewhere/libnvrtc.so:1:1")
    src = 'extern "C" __global__ void k(float* o) { o[0] = 4.0f; }'
    first = cuda.compile(src, "k", ARCH)
    core = cuda._core()
    monkeypatch.setattr(core, "Program", None)                    # a second compile would fail
    assert cuda.compile(src, "k", ARCH) == first


# -- the whole warm CUDA path against a stand-in driver (no GPU) -----------------------------
FAKE_LIBCUDA = r"""
/* A stand-in libcuda.so.1 for CPU tests: the driver entry points stridewise calls, with a
   per-thread context stack, device ordinal 1 for every pointer, and a log of launches. */
#include <stdint.h>
#include <string.h>
extern "C" {
typedef int CUresult;
typedef struct { unsigned gx, gy, gz, bx, by, bz, smem; void* stream; void* attrs; unsigned nattrs; } CUlaunchConfig;
static __thread void* stack[16];
static __thread int depth = 0;
static int launches = 0, libraries = 0, nbytes = 24;
static struct { unsigned grid, block; void* stream; void* ctx; unsigned char args[512]; } log_[64];

CUresult cuInit(unsigned flags) { return 0; }
CUresult cuDeviceGet(int* d, int i) { *d = i; return i < 2 ? 0 : 101; }
CUresult cuDeviceGetAttribute(int* v, int a, int d) {
  *v = a == 16 ? 132 : a == 39 ? 2048 : a == 75 ? 9 : a == 76 ? 0 : -1; return *v < 0; }
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { *c = (void*)(uintptr_t)(0x1000 + d); return 0; }
CUresult cuCtxGetCurrent(void** c) { *c = depth ? stack[depth - 1] : 0; return 0; }
CUresult cuCtxPushCurrent_v2(void* c) { stack[depth++] = c; return 0; }
CUresult cuCtxPopCurrent_v2(void** c) { if (!depth) return 201; --depth; if (c) *c = stack[depth]; return 0; }
CUresult cuLibraryLoadData(void** lib, const void* code, void* a, void* b, unsigned n, void* c, void* d, unsigned m) {
  if (memcmp(code, "\x7f" "ELF", 4)) return 200; *lib = (void*)(uintptr_t)(0x2000 + ++libraries); return 0; }
CUresult cuLibraryGetKernel(void** k, void* lib, const char* name) { *k = (void*)((uintptr_t)lib + 0x10000); return 0; }
CUresult cuLibraryUnload(void* lib) { return 0; }
CUresult cuPointerGetAttribute(void* data, int attr, uint64_t ptr) {
  if (attr != 9 || ptr < 0x100000) return 1; *(int*)data = 1; return 0; }
CUresult cuGetErrorName(CUresult e, const char** s) { *s = "CUDA_ERROR_FAKE"; return 0; }
static CUresult record(unsigned grid, unsigned block, void* stream, void** params) {
  if (!depth) return 201;
  int i = launches++ % 64;
  log_[i].grid = grid; log_[i].block = block; log_[i].stream = stream; log_[i].ctx = stack[depth - 1];
  memcpy(log_[i].args, params[0], nbytes);
  return 0;
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, void* stream, void** params, void** extra) {
  return gy != 1 || gz != 1 || by != 1 || bz != 1 || extra ? 1 : record(gx, bx, stream, params); }
CUresult cuLaunchKernelEx(const CUlaunchConfig* c, void* f, void** params, void** extra) {
  return c->gy != 1 || c->gz != 1 || c->by != 1 || c->bz != 1 || c->nattrs || extra ? 1
         : record(c->gx, c->bx, c->stream, params); }
/* test hooks */
int fake_launches(void) { return launches; }
int fake_depth(void) { return depth; }
void fake_copy(int n) { nbytes = n; }
void fake_launch(int i, unsigned* grid, unsigned* block, void** stream, void** ctx, unsigned char* args) {
  *grid = log_[i].grid; *block = log_[i].block; *stream = log_[i].stream; *ctx = log_[i].ctx;
  memcpy(args, log_[i].args, nbytes); }
}
"""

FAKE_RUN = r"""
import ctypes, dataclasses, json, sys
import stridewise as sw
from stridewise.launch import pipeline as _ops
from stridewise.ops import builtins as _builtins
from stridewise.backends import cuda
from stridewise.codegen.source import record_template
fake = ctypes.CDLL("libcuda.so.1")


class CAI:
    def __init__(self, ptr, shape):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (ptr, False),
                                         "version": 3, "strides": None}


def launched(i, size):
    grid, block, stream, ctx = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_void_p(), ctypes.c_void_p()
    args = (ctypes.c_ubyte * size)()
    fake.fake_launch(i, ctypes.byref(grid), ctypes.byref(block), ctypes.byref(stream), ctypes.byref(ctx), args)
    return grid.value, block.value, stream.value, ctx.value, bytes(args)


fake.cuCtxPushCurrent_v2(ctypes.c_void_p(0x1000))            # "device 0 is current"
a, b, out = CAI(0x7f0000000000, (64, 256)), CAI(0x7f0000100000, (256,)), CAI(0x7f0000200000, (64, 256))
p = _ops._call(_builtins.OPS["remainder"], (a, b), out, dry=True)
if sys.argv[1] == "source":
    json.dump([p.source, p.spec.entry], open(sys.argv[2], "w"))
    raise SystemExit
size = p.record.size + len(p.config.extra)
fake.fake_copy(size)
record = lambda *ptrs: p.record.pack(*ptrs, *p.static) + p.config.extra  # noqa: E731
ptrs = (0x7f0000200000, 0x7f0000000000, 0x7f0000100000)
for _ in range(2):
    sw.remainder(a, b, out=out)
p = _ops._call(_builtins.OPS["remainder"], (a, b), out, dry=True)       # the memo's, with its kernel
# a bound warm-path launcher, with the device current (cuLaunchKernelEx) and without
other = (0x7f0000300000, 0x7f0000400000, 0x7f0000500000)
cuda.bind(p.kernel, p.config.replace(current=lambda: 1), p.record, p.static)(other, ())
cuda.bind(p.kernel, p.config, p.record, p.static)(other, ())
assert fake.fake_launches() == 4, fake.fake_launches()
logs = [launched(i, size) for i in range(4)]
for grid, block, stream, ctx, args in logs:
    assert stream is None and grid == p.config.grid > 0 and block == p.config.block
for _, _, _, ctx, args in logs[:2] + logs[3:]:                # pushed: device 1's primary context
    assert ctx == 0x1001, hex(ctx or 0)
assert logs[2][3] == 0x1000                                   # "device 1 current" (the fake's 0)
assert [log[4] for log in logs] == [record(*ptrs)] * 2 + [record(*other)] * 2
# a scalar parameter: the bound launcher packs the value after the pre-packed static slots
q = _ops._call(_builtins.OPS["remainder"], (a, 2.5), out, dry=True)
assert record_template(p.record, p.static) and record_template(q.record, q.static)
qsize = q.record.size + len(q.config.extra)
fake.fake_copy(qsize)
value = q.spec.params[0].slot_value(2.5)
cuda.bind(p.kernel, q.config.replace(current=lambda: 1), q.record, q.static)(list(other[:2]), [value])
assert fake.fake_launches() == 5, fake.fake_launches()
assert launched(4, qsize)[4] == q.record.pack(*other[:2], *q.static, value) + q.config.extra
cur = ctypes.c_void_p()
fake.cuCtxGetCurrent(ctypes.byref(cur))
assert cur.value == 0x1000 and fake.fake_depth() == 1, (cur.value, fake.fake_depth())
print(sys.argv[1], "cuda.core" in sys.modules, any("nvrtc" in m for m in sys.modules),
      type(cuda.bind(p.kernel, p.config, p.record, p.static)).__name__)
"""


def test_warm_path_against_a_stand_in_driver(tmp_path, monkeypatch):
    """A bare CAI producer on device 1 while device 0's context is current, warm disk cache:
    the launch runs in device 1's primary context with the right record, the caller's
    context is current again afterwards, and neither cuda.core nor NVRTC is imported. The
    warm path's bound launcher (cuLaunchKernelEx), Python and compiled, sends the same bytes."""
    from stridewise.launch import compiled as _compiled

    def type_name(pure):
        return "function" if pure == "1" or _compiled.warm is None else "Launcher"
    import json
    import subprocess
    import sys

    from stridewise.backends import cpu

    (tmp_path / "fake.cpp").write_text(FAKE_LIBCUDA)
    subprocess.run([cpu.compiler()[0], "-shared", "-fPIC", "-O1", str(tmp_path / "fake.cpp"),
                    "-o", str(tmp_path / "libcuda.so.1")], check=True)
    (tmp_path / "run.py").write_text(FAKE_RUN)
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path), STRIDEWISE_CACHE_DIR=str(tmp_path / "cache"))

    def run(*args):
        proc = subprocess.run([sys.executable, str(tmp_path / "run.py"), *args], env=env,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    run("source", str(tmp_path / "src.json"))          # the kernel the call needs
    source, entry = json.loads((tmp_path / "src.json").read_text())
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", env["STRIDEWISE_CACHE_DIR"])
    cuda.compile(source, entry, "sm_90")               # here: cuda.core needs the real driver
    for pure in ("1", "0"):                            # the Python launcher, then the compiled one
        env["STRIDEWISE_PURE_PYTHON"] = pure
        assert run("warm").split() == ["warm", "False", "False", type_name(pure)]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([32, 64]), st.integers(1, 2**20) | st.integers(1, 2**31 - 1), st.data())
def test_magic_division_matches_floor_division(bits, d, data):
    """fast_div's magic and shift (general's dims, short_rows' periods, rows' units) against //:
    random dividends and the edges below 2^(bits - 1), as the device computes it (mulhi in `bits`;
    mulhi(n, m) + n stays below 2^bits there)."""
    from stridewise.backends import cuda

    m, s = cuda._magic(d, bits)
    assert 0 < m < 2**bits
    top = 2 ** (bits - 1) - 1
    ns = data.draw(st.lists(st.integers(0, top), min_size=1, max_size=16))
    for n in ns + [0, d - 1, d, top, top - top % d, top - top % d - 1]:
        assert ((n * m >> bits) + n) >> s == n // d, (n, d, bits)


NEW = ("int8", "int16", "uint8", "uint16", "uint32", "uint64")


def test_new_dtype_variants(monkeypatch):
    """Every mode of the remainder kernel in each dtype beyond the six, at the widest pack
    (16 int8 values) and pack 1, both index widths, plus keep_loads: batched programs."""
    monkeypatch.setenv("STRIDEWISE_DISABLE_CACHE", "1")
    specs = []
    for name, base in _base_specs().items():
        for dt in (DTYPES[n] for n in NEW):
            wide = 1 if base.mode == "general" else 16 // dt.itemsize
            for pack, bits in ((wide, 32), (1, 64)):
                specs.append(dataclasses.replace(
                    base, arrays=(dt,) * len(base.arrays), params=(dt,) * len(base.params),
                    compute=dt, functor=_builtins.OPS["remainder"].functor_for(dt, "torch"),
                    pack=pack, index_bits=bits, keep_loads=pack == wide and bits == 32))
    # MID: under FAST ptxas rejects an outlined 16-byte pack return (alignment)
    assert compile_batched(specs, options=MID) == len(specs) > 100


FIRST_COMPILES = r"""
from concurrent.futures import ThreadPoolExecutor
from stridewise.backends import cuda
src = 'extern "C" __global__ void k{}(float* x) {{ x[0] = {}; }}'
with ThreadPoolExecutor(4) as pool:
    cubins = list(pool.map(lambda i: cuda.compile(src.format(i, i), "k", "sm_90"), range(4)))
assert all(b"k%d" % i in c for i, c in enumerate(cubins))
"""


def test_concurrent_first_compiles_in_a_fresh_process(tmp_path):
    """A process's first compiles, from four threads at once: each one succeeds (two at once
    used to fail with "failed to open libnvrtc-builtins.so.13.0" or a half-imported cuda.core)."""
    import subprocess
    import sys

    for attempt in range(3):     # the race it guards against hit about every other process
        env = dict(os.environ, STRIDEWISE_CACHE_DIR=str(tmp_path / str(attempt)))
        proc = subprocess.run([sys.executable, "-c", FIRST_COMPILES], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]


def test_complex_variants(monkeypatch):
    """Every mode in complex64 (8-byte elements, two a pack) and complex128 (16 bytes, one a
    pack: staged and periodic operands copy them as 16-byte words), multiply in both
    conventions, both index widths, plus keep_loads: batched programs."""
    from stridewise.ops.builtins import OPS

    monkeypatch.setenv("STRIDEWISE_DISABLE_CACHE", "1")
    specs = []
    for name, base in _base_specs().items():
        for dt in (DTYPES["complex64"], DTYPES["complex128"]):
            wide = 1 if base.mode == "general" else 16 // dt.itemsize
            for pack, bits, conv in ((wide, 32, "numpy"), (1, 64, "torch")):
                specs.append(dataclasses.replace(
                    base, arrays=(dt,) * len(base.arrays), params=(dt,) * len(base.params),
                    compute=dt, functor=OPS["multiply"].functor_for(dt, conv),
                    pack=pack, index_bits=bits, keep_loads=pack == wide and bits == 32))
    # user kernels: CuPy's and PyCUDA's spellings, the math names, a complex<float> argument
    # widened to T = complex<double>
    import stridewise as sw
    k = sw.ElementwiseKernel("complex<float> x, T y", "T z",
                             "z = T(x) * y + exp(y) / sqrt(y) + pycuda::conj(y) * abs(y) + pow(y, 2.0)")
    x, y = np.ones(64, np.complex64), np.ones(64, np.complex128)
    specs.append(k._explain((x, y), {}).spec)
    k2 = sw.ElementwiseKernel("pycuda::complex<float> *z, float *w", "z[i] = z[i] * w[i] + real(z[i])")
    specs.append(k2._explain((x, np.ones(64, np.float32)), {}).spec)
    assert compile_batched(specs, options=FAST) == len(specs) >= 50


def test_one_and_two_byte_types_move_in_16_byte_packs():
    """int8, uint8 and bool: 16 values a pack; int16, float16: 8 (the plan and the source)."""
    from stridewise.ops.builtins import OPS

    for dtype, pack in (("int8", 16), ("uint8", 16), ("bool", 16), ("int16", 8), ("float16", 8)):
        a = np.ones((64, 256), dtype)
        for args in ((a, a), (a, a[0]), (np.ones((64, 1), dtype), a[:1])):
            op = _builtins.OPS["remainder"] if dtype != "bool" else OPS["logical_xor"]
            prepared = _ops._call(op, args, dry=True)
            assert prepared.spec.pack == pack, (dtype, prepared.spec.mode)
            assert f"kPack = {pack}," in prepared.source
