"""Reliability figures in one table: bad input, cache faults, concurrency, size, sanitizers, fuzz.

    python tools/reliability.py [--quick] [--out DIR] [--fuzz N] [--gpu-fuzz N] [--large N]
                                [--no-sanitize] [--sanitize-args "PYTEST ARGS"]

Sections (each row: tried, held, detail):
  bad input      classes of wrong arguments: each must raise a clear error (TypeError,
                 ValueError or RuntimeError naming a fix) and leave a sentinel `out` untouched
  cache faults   an entry truncated, garbage, wrong-architecture, a directory, a symlink, a
                 foreign library, swapped, owned by someone else; the cache cleared mid-call,
                 read-only, writable by others: each must be survived in a new process (right
                 results, the entry rebuilt once, no foreign code run)
  concurrency    threads and processes asking for one cold kernel: compiles per kernel
  largest array  one add over N elements (default 2**32 + 7 float16 where memory allows)
  sanitizers     ASan + UBSan over the CPU suite (tools/sanitize_cpu.py); on a GPU host,
                 compute-sanitizer memcheck and racecheck over tools/sanitize_modes.py
  fuzz           random shapes, strides, broadcasts, dtypes and ops against NumPy (CPU) and
                 torch (GPU), bit for bit
--quick is the bounded slice CI runs (tests/test_reliability.py): under a minute on 2 cores.
On a GPU host the GPU rows join in by themselves; one command for the whole table there:
    python3 setup.py -q build_ext --inplace; python3 tools/reliability.py --out DIR
(--only and --sanitize-args bound a run; --fuzz / --gpu-fuzz set the case counts).
The table goes to stdout and, with --out, to DIR/reliability.txt and DIR/reliability.json.
Exit status 1 when any row did not hold.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

import stridewise as sw  # noqa: E402
from stridewise import _cache  # noqa: E402
from stridewise.backends import cpu  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

ROWS: list = []


def row(section: str, what: str, tried: int, held: int, detail: str = "") -> None:
    ROWS.append({"section": section, "what": what, "tried": tried, "held": held,
                 "detail": detail})
    mark = "ok " if held == tried else "FAIL"
    print(f"  {mark} {section:14} {what:34} {held:>7}/{tried:<7} {detail}", flush=True)


# -- bad input ------------------------------------------------------------------------------
def _bad_cases():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    k = sw.ElementwiseKernel
    cases = {
        "too few arrays": lambda o: sw.add(a, out=o),
        "a string argument": lambda o: sw.add(a, "x", out=o),
        "None argument": lambda o: sw.add(a, None, out=o),
        "a list argument": lambda o: sw.add(a, [1, 2, 3, 4], out=o),
        "a complex scalar": lambda o: sw.add(a, 1j, out=o),
        "a long double array": lambda o: sw.add(np.ones((3, 4), np.longdouble), a, out=o),
        "object array": lambda o: sw.add(np.ones((3, 4), object), a, out=o),
        "string array": lambda o: sw.add(np.full((3, 4), "s"), a, out=o),
        "datetime array": lambda o: sw.add(np.zeros((3, 4), "M8[s]"), a, out=o),
        "complex array": lambda o: sw.add(np.ones((3, 4), np.complex64), a, out=o),
        "out of another shape": lambda o: sw.add(np.ones((3, 4), np.int8), a, out=o[:2]),
        "non-native byte order": lambda o: sw.add(a.astype(">f4"), a, out=o),
        "misaligned buffer": lambda o: sw.add(
            np.frombuffer(bytes(49), np.float32, 12, 1).reshape(3, 4), a, out=o),
        "masked array input": lambda o: sw.add(np.ma.array(a, mask=a > 3), a, out=o),
        "masked array out": lambda o: sw.add(a, a, out=np.ma.array(o)),
        "shapes that do not broadcast": lambda o: sw.add(a, np.ones(5, np.float32), out=o),
        "out of the wrong shape": lambda o: sw.add(a, a, out=o.reshape(4, 3)),
        "read-only out": lambda o: sw.add(a, a, out=_readonly(o)),
        "out partly overlapping an input": lambda o: sw.add(o[:, 1:], a[:, :3], out=o[:, :3]),
        "out of a lossy dtype": lambda o: sw.add(a.astype(np.float64), a,
                                                 out=np.zeros((3, 4), np.int32)),
        "in-place that would expand": lambda o: sw.remainder_(np.ones((1, 4), np.float32), a),
        "scalars only": lambda o: sw.add(1.0, 2.0),
        "an unknown algorithm": lambda o: sw.add(a, a, out=o, algorithm="fast"),
        "Tiled() without a transposed input": lambda o: sw.add(a, a, out=o, algorithm=sw.Tiled()),
        "block_size not a power of two": lambda o: sw.add(
            a, a, out=o, algorithm=sw.Contiguous(block_size=3)),
        "pack too wide": lambda o: sw.add(a, a, out=o, algorithm=sw.Contiguous(pack=64)),
        "kernel: C++ keyword parameter": lambda o: k("T return", "T y", "y = 1", name="kw"),
        "kernel: punctuation placeholder": lambda o: k("} x", "T y", "y = 1", name="ph"),
        "kernel: raw parameter given a number": lambda o: k("raw T x", "T y", "y = x[i]",
                                                            name="raw")(2.5, o),
        "kernel: unknown dtype": lambda o: k("quad x", "T y", "y = x", name="ud"),
        "kernel: reserved name": lambda o: k("T _x", "T y", "y = _x", name="rn"),
        "kernel: bad identifier": lambda o: k("T 2x", "T y", "y = 1", name="bi"),
        "kernel: an operation that does not compile":
            lambda o: k("T x", "T y", "y = x +* 1;", name="nc")(a, out=o),
        "kernel: output type nothing determines":
            lambda o: k("float32 x", "T y", "y = x", name="ot")(a),
        "kernel: wrong argument count":
            lambda o: k("T x, T z", "T y", "y = x + z", name="ac")(a, out=o),
    }
    if torch is not None:
        t = torch.arange(12.0).reshape(3, 4)
        c = torch.tensor([1 + 2j, 3 - 4j, 5 + 6j, 7j]).repeat(3, 1)
        cases.update({
            "torch: negative bit (c.conj().imag)": lambda o: sw.add(c.conj().imag, t),
            "torch: negative-bit out": lambda o: sw.add(t, t, out=torch._neg_view(_t(o))),
            "torch: conjugate bit": lambda o: sw.add(c.conj(), 1.0),
            "torch: sparse tensor": lambda o: sw.add(t.to_sparse(), t, out=_t(o)),
            "torch: nested tensor": lambda o: sw.add(_nested(), 1.0),
            "torch: quantized tensor": lambda o: sw.add(
                torch.quantize_per_tensor(t, 0.1, 0, torch.qint8), t, out=_t(o)),
            "torch: requires_grad input": lambda o: sw.add(t.clone().requires_grad_(), t,
                                                           out=_t(o)),
            "torch: meta tensor into a CPU out": lambda o: sw.add(t.to("meta"), 1.0, out=_t(o)),
            "torch: mixed with numpy": lambda o: sw.add(t, a, out=_t(o)),
            "torch: complex tensor": lambda o: sw.add(c, c),
        })
    return cases


def _readonly(o):
    o.flags.writeable = False
    return o


_T_OUT: dict = {}


def _t(o):
    """A torch view of the sentinel (shares its memory, so a write would show)."""
    return torch.from_numpy(o) if o.flags.writeable else torch.from_numpy(o.copy())


def _nested():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])


def bad_inputs() -> None:
    cases = _bad_cases()
    held, failed = 0, []
    for label, fn in cases.items():
        out = np.full((3, 4), -7.0, np.float32)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(out)
            failed.append(f"{label}: no error")
            continue
        except (TypeError, ValueError, RuntimeError) as e:
            clear = len(str(e)) >= 30
        except Exception as e:      # StopIteration, OSError, AttributeError...: not clear
            failed.append(f"{label}: {type(e).__name__}")
            continue
        if not clear:
            failed.append(f"{label}: terse message")
        elif not (out == -7.0).all():
            failed.append(f"{label}: out written")
        else:
            held += 1
    row("bad input", "classes", len(cases), held, "; ".join(failed))


# -- cache faults ---------------------------------------------------------------------------
# A child process: float64 then float32 remainder against NumPy; prints what it saw.
CHILD = r"""
import json, warnings
import numpy as np
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    import stridewise as sw
    from stridewise import _cache
    ok = True
    for dt in (np.float64, np.float32):
        a = np.linspace(-9, 9, 1001).astype(dt)
        b = np.linspace(1, 4, 1001).astype(dt)
        ok &= np.array_equal(sw.remainder(a, b), np.remainder(a, b))
print(json.dumps({"ok": bool(ok), "builds": list(_cache.builds.items()),
                  "warnings": [str(w.message) for w in seen
                               if issubclass(w.category, _cache.CacheWarning)]}))
"""

FAULTS = ["truncated-half", "truncated-4k", "garbage", "wrong-arch", "directory", "symlink",
          "foreign-library", "swapped", "foreign-owner"]


def child(cache: Path, **env) -> dict:
    """Run CHILD against `cache`; its report, or {"crash": ...}."""
    e = dict(os.environ, STRIDEWISE_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT / "src"), **env)
    proc = subprocess.run([sys.executable, "-c", CHILD], env=e, capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        return {"crash": f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def foreign_library(d: Path, marker: Path) -> Path:
    """A stand-in library whose constructor leaves `marker` behind if it is ever loaded."""
    (d / "foreign.cpp").write_text(
        '#include <cstdio>\n'
        f'__attribute__((constructor)) static void planted() {{ fopen("{marker}", "w"); }}\n'
        'extern "C" void sw_remainder(const char*) {}\n')
    subprocess.run([cpu.compiler()[0], "-shared", "-fPIC", str(d / "foreign.cpp"), "-o",
                    str(d / "foreign.so")], check=True)
    return d / "foreign.so"


def damage(kind: str, entry: Path, other: Path, scratch: Path, marker: Path) -> None:
    """Do fault `kind` to cache entry `entry` (`other`: a second entry, for swaps)."""
    raw = entry.read_bytes()
    if kind == "truncated-half":
        os.truncate(entry, len(raw) // 2)
    elif kind == "truncated-4k":
        os.truncate(entry, 4096)
    elif kind == "garbage":
        entry.write_bytes(os.urandom(len(raw)))
    elif kind == "wrong-arch":             # the ELF alone, its e_machine made aarch64's
        elf = bytearray(raw[_cache._HEADER:])
        elf[18:20] = (183).to_bytes(2, "little")
        entry.write_bytes(bytes(elf))
    elif kind == "directory":
        entry.unlink()
        (entry / "sub").mkdir(parents=True)
    elif kind == "symlink":
        entry.unlink()
        entry.symlink_to(foreign_library(scratch, marker))
    elif kind == "foreign-library":        # a planted library with the same symbol
        shutil.copyfile(foreign_library(scratch, marker), entry)
    elif kind == "swapped":                # the float32 entry under the float64 key and back
        a, b = entry.read_bytes(), other.read_bytes()
        entry.write_bytes(b)
        other.write_bytes(a)
    elif kind == "foreign-owner":
        os.chown(entry, 65534, 65534)
    else:
        raise ValueError(kind)


def pristine_cache(where: Path) -> tuple[Path, list]:
    """A cache holding CHILD's two kernels, and their keys (float64's first)."""
    cache = where / "pristine"
    r = child(cache)
    if not r.get("ok") or len(r["builds"]) != 2 or r["warnings"]:
        raise RuntimeError(f"the pristine run failed: {r}")
    return cache, [k for k, _ in r["builds"]]


def fault_survived(kind: str, pristine: tuple, scratch: Path) -> str:
    """'' when a new process survives `kind` and replaces the entry, else what went wrong."""
    cache = scratch / "cache"
    shutil.copytree(pristine[0], cache)
    f64, f32 = (cache / "cpu" / f"{k}.so" for k in pristine[1])
    marker = scratch / "constructor-ran"
    damage(kind, f64, f32, scratch, marker)
    r = child(cache)
    rebuilt = 2 if kind == "swapped" else 1
    if "crash" in r:
        return r["crash"]
    if not r["ok"]:
        return "wrong results"
    if marker.exists():
        return "foreign code ran"
    if len(r["builds"]) != rebuilt or len(r["warnings"]) > rebuilt:
        return f"{len(r['builds'])} builds, {len(r['warnings'])} warnings"
    if child(cache) != {"ok": True, "builds": [], "warnings": []}:
        return "not replaced"
    return ""


def cache_faults(quick: bool) -> None:
    kinds = ["truncated-half", "garbage", "swapped"] if quick else FAULTS
    with tempfile.TemporaryDirectory() as tmp:
        pristine = pristine_cache(Path(tmp))
        for kind in kinds:
            if kind == "foreign-owner" and os.geteuid() != 0:
                row("cache faults", kind, 0, 0, "skipped: only root can give a file away")
                continue
            scratch = Path(tmp) / kind
            scratch.mkdir()
            why = fault_survived(kind, pristine, scratch)
            row("cache faults", kind, 1, int(not why), why)
        if not quick:
            others_writable(Path(tmp))
            read_only(Path(tmp))
    cleared_mid_call(4 if quick else 32)


def others_writable(tmp: Path) -> None:
    shared = tmp / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    r = child(shared)
    ok = r.get("ok") and len(r["warnings"]) == 1 and "writable by others" in r["warnings"][0] \
        and not list(shared.iterdir())
    row("cache faults", "others-writable dir", 1, int(bool(ok)),
        "" if ok else json.dumps(r)[:200])


def read_only(tmp: Path) -> None:
    """A read-only cache: entries are read, builds stay in memory. Root ignores modes, so
    there the directory's writes are made to fail (EACCES) instead."""
    cache, keys = pristine_cache(tmp / "ro")
    for k in keys:
        (cache / "cpu" / f"{k}.so").unlink()
    (cache / "cpu").chmod(0o500)
    simulated = os.access(cache / "cpu", os.W_OK)
    env = {}
    if simulated:                # a sitecustomize that makes mkstemp in the cache fail
        site = tmp / "ro-site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(
            "import tempfile\nreal = tempfile.mkstemp\n"
            "def mkstemp(*a, dir=None, **k):\n"
            f"    if dir is not None and str(dir).startswith({str(cache)!r}):\n"
            "        raise PermissionError(13, 'Permission denied')\n"
            "    return real(*a, dir=dir, **k)\n"
            "tempfile.mkstemp = mkstemp\n")
        env["PYTHONPATH"] = f"{site}{os.pathsep}{ROOT / 'src'}"
    e = dict(os.environ, STRIDEWISE_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT / "src"))
    e.update(env)
    proc = subprocess.run([sys.executable, "-c", CHILD], env=e, capture_output=True, text=True)
    r = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {}
    ok = r.get("ok") and len(r["builds"]) == 2 and not list((cache / "cpu").glob("*.so"))
    (cache / "cpu").chmod(0o700)
    row("cache faults", "read-only dir", 1, int(bool(ok)),
        ("(simulated EACCES: root) " if simulated else "") + ("" if ok else proc.stderr[-200:]))


def cleared_mid_call(n: int) -> None:
    """n cold calls while another thread removes the whole cache every 2 ms."""
    cache = Path(tempfile.mkdtemp(prefix="stridewise-cleared-"))
    stop, errors, good = threading.Event(), [], 0
    saved = os.environ.get("STRIDEWISE_CACHE_DIR")
    os.environ["STRIDEWISE_CACHE_DIR"] = str(cache)

    def clear():
        while not stop.is_set():
            shutil.rmtree(cache, ignore_errors=True)
            time.sleep(0.002)
    t = threading.Thread(target=clear)
    t.start()
    tag = uuid.uuid4().hex
    try:
        a = np.arange(64, dtype=np.float32)
        for i in range(n):
            k = sw.ElementwiseKernel("T x", "T y", f"y = x + {i}; // {tag}", name=f"cleared{i}")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    good += np.array_equal(k(a), a + i)
            except Exception as e:
                errors.append(f"{type(e).__name__}: {e}"[:100])
    finally:
        stop.set()
        t.join()
        _restore("STRIDEWISE_CACHE_DIR", saved)
        shutil.rmtree(cache, ignore_errors=True)
    row("cache faults", "cleared mid-call (cold calls)", n, good, "; ".join(errors[:2]))


def _restore(name, value):
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


# -- concurrency ----------------------------------------------------------------------------
PROC = r"""
import json, sys, time
import numpy as np
import stridewise as sw
from stridewise import _cache
ks = [sw.ElementwiseKernel("T x", "T y", f"y = x - {j}; // " + sys.argv[2], name=f"p{j}")
      for j in range(2)]
while time.time() < float(sys.argv[1]):
    time.sleep(0.001)
a = np.arange(100.0)
ok = all(np.array_equal(k(a), a - j) for j, k in enumerate(ks))
print(json.dumps({"ok": ok, "builds": dict(_cache.builds)}))
"""


def concurrency(quick: bool) -> None:
    nthreads = 4 if quick else 16
    k = sw.ElementwiseKernel("T x", "T y", f"y = x * 3 + 1; // {uuid.uuid4().hex}",
                             name="threads")
    a = np.arange(1000, dtype=np.float64)
    before = dict(_cache.builds)
    barrier, results = threading.Barrier(nthreads), [None] * nthreads

    def work(i):
        barrier.wait()
        results[i] = np.array_equal(k(a), a * 3 + 1)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    builds = [n - before.get(key, 0) for key, n in _cache.builds.items() if n != before.get(key)]
    row("concurrency", f"{nthreads} threads, 1 cold kernel", nthreads, sum(map(bool, results)),
        f"compiles per kernel: {builds}")
    if quick:
        return
    nproc = 4
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, STRIDEWISE_CACHE_DIR=cache, PYTHONPATH=str(ROOT / "src"))
        start, tag = str(time.time() + 4.0), uuid.uuid4().hex
        procs = [subprocess.Popen([sys.executable, "-c", PROC, start, tag], env=env,
                                  stdout=subprocess.PIPE, text=True) for _ in range(nproc)]
        reports = [json.loads(p.communicate(timeout=600)[0].strip().splitlines()[-1])
                   for p in procs]
    per_kernel: dict = {}
    for r in reports:
        for key, n in r["builds"].items():
            per_kernel[key] = per_kernel.get(key, 0) + n
    row("concurrency", f"{nproc} processes, 2 cold kernels", nproc,
        sum(r["ok"] for r in reports), f"compiles per kernel: {sorted(per_kernel.values())}")


# -- the largest array ----------------------------------------------------------------------
def largest(n: int) -> None:
    """sw.add(x, 1) over n float16 elements, checked chunk by chunk against NumPy."""
    need = 2 * 2 * n + (1 << 30)
    avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if need > avail:
        row("largest array", f"{n} float16 elements", 0, 0,
            f"skipped: needs {need / 2**30:.1f} GiB, {avail / 2**30:.1f} GiB available")
        return
    x = np.empty(n, np.float16)
    pattern = (np.arange(1 << 20) % 2039).astype(np.float16)
    for i in range(0, n, 1 << 20):
        x[i:i + (1 << 20)] = pattern[:min(1 << 20, n - i)]
    t0 = time.perf_counter()
    got = sw.add(x, 1.0)
    secs = time.perf_counter() - t0
    ok = got.dtype == np.float16 and got.shape == x.shape
    step = 1 << 24
    for i in range(0, n, step):
        ok = ok and np.array_equal(got[i:i + step], x[i:i + step] + np.float16(1))
    row("largest array", f"{n} float16 elements", 1, int(bool(ok)),
        f"{n / 2**32:.3f} x 2^32, add in {secs:.2f} s")
    del x, got


# -- sanitizers -----------------------------------------------------------------------------
def sanitizers(out: Path, pytest_args: list[str], gpu: bool) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    import sanitize_cpu

    r = sanitize_cpu.run(pytest_args, out / "sanitize-cpu")
    fired = r["control"]["fired"]
    row("sanitizers", "ASan (CPU suite)", 1, int(r["asan"] == 0 and fired),
        f"{r['asan']} errors; {r['pytest']}; control fired: {fired}")
    row("sanitizers", "UBSan (CPU suite)", 1, int(r["ubsan"] == 0 and fired),
        f"{r['ubsan']} errors; selection: {' '.join(pytest_args)}")
    if not gpu:
        return
    cs = shutil.which("compute-sanitizer") or next(
        iter(sorted(Path("/usr/local").glob("cuda*/bin/compute-sanitizer"))), None)
    if cs is None:
        row("sanitizers", "compute-sanitizer", 0, 0, "skipped: compute-sanitizer not found")
        return
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1", PYTHONPATH=str(ROOT / "src"))
    script = str(ROOT / "tools" / "sanitize_modes.py")
    subprocess.run([sys.executable, script], env=env, capture_output=True)   # compile first
    for tool, summary in (("memcheck", "ERROR SUMMARY:"), ("racecheck", "RACECHECK SUMMARY:")):
        args = [str(cs), "--tool", tool]
        if tool == "memcheck":
            args += ["--leak-check", "no", "--report-api-errors", "no"]
        proc = subprocess.run(args + [sys.executable, script], env=env, capture_output=True,
                              text=True)
        text = proc.stdout + proc.stderr
        (out / f"compute-sanitizer-{tool}.log").write_text(text)
        lines = [ln for ln in text.splitlines() if summary in ln]
        errors = _first_int(lines[-1].split(summary)[1]) if lines else -1
        row("sanitizers", f"compute-sanitizer {tool} (GPU)", 1,
            int(errors == 0 and proc.returncode == 0),
            f"{errors} {'hazards' if tool == 'racecheck' else 'errors'}; "
            f"{'every mode x dtype' if proc.returncode == 0 else 'exit ' + str(proc.returncode)}")


def _first_int(text: str) -> int:
    digits = "".join(c if c.isdigit() else " " for c in text).split()
    return int(digits[0]) if digits else -1


# -- fuzz -----------------------------------------------------------------------------------
BINARY = ["add", "subtract", "multiply", "divide", "remainder", "fmod", "floor_divide",
          "maximum", "minimum"]
UNARY = ["negative", "abs"]
DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64"]
DIVIDES = {"divide", "remainder", "fmod", "floor_divide"}


def _np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _values(rng, dt: np.dtype, shape, nonzero: bool):
    if dt.kind in "iu":
        v = np.asarray(rng.integers(-1000, 1000, size=shape))
        if nonzero:
            v[v == 0] = 7
        return v.astype(dt)
    v = np.asarray(rng.standard_normal(size=shape) * 30)
    special = np.asarray(rng.random(size=shape) < 0.05)
    v[special] = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan], size=int(special.sum()))
    return v.astype(np.float32).astype(dt) if dt.itemsize == 2 else v.astype(dt)


def _layout(rng, arr):
    """The same values in another memory layout: transposed, strided or reversed."""
    kind = rng.integers(4)
    if kind == 1 and arr.ndim >= 2:
        return np.ascontiguousarray(arr.T).T
    if kind == 2 and arr.ndim >= 1:
        ax = int(rng.integers(arr.ndim))
        big = np.repeat(arr, 2, axis=ax)
        return big[tuple(slice(None, None, 2) if d == ax else slice(None)
                         for d in range(arr.ndim))]
    if kind == 3 and arr.ndim >= 1:
        ax = int(rng.integers(arr.ndim))
        flipped = np.ascontiguousarray(np.flip(arr, ax))
        return np.flip(flipped, ax)
    return arr


def fuzz_case(rng, ops, dtypes, simple=False):
    """(op name, args, use_out): a random call and its operands (NumPy arrays or scalars).
    simple: contiguous operands of one shape or a scalar (a handful of kernels, for CI)."""
    op = ops[int(rng.integers(len(ops)))]
    nd = int(rng.integers(0, 4))
    shape = tuple(int(s) for s in rng.integers(1, 7, size=nd))
    da = _np_dtype(dtypes[int(rng.integers(len(dtypes)))])
    db = _np_dtype(dtypes[int(rng.integers(len(dtypes)))]) if rng.random() < 0.25 else da
    layout = (lambda r, x: x) if simple else _layout
    a = layout(rng, _values(rng, da, shape, False))
    if op in UNARY:
        return op, (a,), not simple and rng.random() < 0.3
    r = rng.random()
    if r < 0.1:
        b = float(rng.integers(1, 9)) + 0.5 if da.kind == "f" or db.kind == "f" else \
            int(rng.integers(1, 9))
    else:
        bshape = shape if simple else tuple(
            s if rng.random() < 0.7 else 1 for s in shape)[int(rng.integers(0, nd + 1)):]
        b = layout(rng, _values(rng, db, bshape, op in DIVIDES))
    args = (b, a) if rng.random() < 0.2 and not np.isscalar(b) else (a, b)
    if op in DIVIDES and not np.isscalar(args[1]) and args[1].dtype.kind in "iu":
        args = (args[0], np.where(args[1] == 0, 7, args[1]).astype(args[1].dtype))
    return op, args, not simple and rng.random() < 0.3


def _same(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind == "f" or want.dtype.itemsize == 2 and want.dtype.kind not in "iu":
        gn, wn = np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
        if not np.array_equal(gn, wn):
            return False
        bits = np.dtype(f"u{want.dtype.itemsize}")
        return np.array_equal(got.view(bits)[~gn], want.view(bits)[~wn])
    return np.array_equal(got, want)


def _fuzz_one(i, op, args, use_out, rng):
    """None when sw matches NumPy bit for bit (or NumPy has no loop: 'skip'), else a note."""
    with np.errstate(all="ignore"):
        try:
            want = np.asarray(getattr(np, "absolute" if op == "abs" else op)(*args))
        except TypeError:            # no NumPy loop (e.g. some bfloat16 ops): no oracle
            return "skip"
    try:
        if use_out:
            out = _layout(rng, np.zeros(want.shape, want.dtype))
            got = getattr(sw, op)(*args, out=out)
            ok = got is out and _same(out, want)
        else:
            ok = _same(getattr(sw, op)(*args), want)
    except Exception as e:
        return f"case {i} {op}: {type(e).__name__}: {str(e)[:80]}"
    return None if ok else f"case {i} {op} {[str(getattr(x, 'dtype', type(x))) for x in args]}"


def fuzz_cpu(n: int, seed: int, ops=None, dtypes=None, simple=False, jobs=None) -> None:
    """n random calls against NumPy, on `jobs` threads (cold kernels compile in parallel;
    each case draws from its own seeded generator, so a run is reproducible)."""
    from concurrent.futures import ThreadPoolExecutor

    ops, dtypes = ops or BINARY + UNARY, dtypes or DTYPES
    t0 = time.perf_counter()

    def one(i):
        rng = np.random.default_rng([seed, i])
        return _fuzz_one(i, *fuzz_case(rng, ops, dtypes, simple), rng)
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count()) as pool:
        notes = list(pool.map(one, range(n), chunksize=64))
    skipped = notes.count("skip")
    bad = [x for x in notes if x not in (None, "skip")]
    done = n - skipped
    row("fuzz", "CPU vs NumPy (cases)", done, done - len(bad),
        f"{len(bad)} mismatches, seed {seed}, {time.perf_counter() - t0:.0f} s"
        + (f", {skipped} without a NumPy loop" if skipped else "")
        + ("; " + "; ".join(bad[:3]) if bad else ""))


TORCH_OPS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
             "remainder": "remainder", "fmod": "fmod", "floor_divide": "floor_divide",
             "maximum": "maximum", "minimum": "minimum", "negative": "neg", "abs": "abs"}


def fuzz_torch(n: int, seed: int, device: str = "cuda", jobs=None, ops=None) -> None:
    """The same kind of cases as torch tensors on `device` against torch's own ops (torch's
    conventions); "cpu" runs the harness where there is no GPU."""
    what = "GPU vs torch (cases)" if device == "cuda" else f"torch {device} vs torch (cases)"
    if torch is None or device == "cuda" and not torch.cuda.is_available():
        row("fuzz", what, 0, 0, "skipped: no CUDA GPU")
        return
    from concurrent.futures import ThreadPoolExecutor

    t0 = time.perf_counter()

    def to_cuda(x):
        if np.isscalar(x):
            return x
        if x.dtype.name == "bfloat16":
            t = torch.from_numpy(np.ascontiguousarray(x).view(np.int16)).view(torch.bfloat16)
            return t.to(device)
        return torch.from_numpy(np.ascontiguousarray(x)).to(device)

    def one(i):
        rng = np.random.default_rng([seed, i])
        op, args, _ = fuzz_case(rng, ops or list(TORCH_OPS), DTYPES)
        # device layouts: a transposed copy viewed back, or a strided slice of a wider tensor
        targs = []
        for x in args:
            t = to_cuda(x)
            if isinstance(t, torch.Tensor) and t.dim() >= 2 and rng.random() < 0.3:
                t = t.transpose(-1, -2).contiguous().transpose(-1, -2)
            elif isinstance(t, torch.Tensor) and t.dim() >= 1 and rng.random() < 0.3:
                t = torch.repeat_interleave(t, 2, dim=-1)[..., ::2]
            targs.append(t)
        try:
            want = getattr(torch, TORCH_OPS[op])(*targs)
        except (RuntimeError, TypeError):
            return "skip"            # no torch kernel for this dtype pair, or for a number there
        try:
            got = getattr(sw, op)(*targs)
            ok = got.dtype == want.dtype and got.shape == want.shape and bool(
                ((got == want) | (got.isnan() & want.isnan())).all()
                if want.dtype.is_floating_point else (got == want).all())
        except Exception as e:
            return f"case {i} {op}: {type(e).__name__}: {str(e)[:80]}"
        return None if ok else f"case {i} {op} {[getattr(x, 'dtype', type(x)) for x in targs]}"
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count()) as pool:
        notes = list(pool.map(one, range(n), chunksize=64))
    if device == "cuda":
        torch.cuda.synchronize()
    skipped = notes.count("skip")
    bad = [x for x in notes if x not in (None, "skip")]
    done = n - skipped
    row("fuzz", what, done, done - len(bad),
        f"{len(bad)} mismatches, seed {seed}, {time.perf_counter() - t0:.0f} s"
        + (f", {skipped} that torch does not define" if skipped else "")
        + ("; " + "; ".join(bad[:3]) if bad else ""))


# -- the run --------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the bounded CI slice")
    ap.add_argument("--out", type=Path, help="write reliability.txt/.json (and logs) here")
    ap.add_argument("--fuzz", type=int, help="CPU fuzz cases (default 100000; quick 1000)")
    ap.add_argument("--gpu-fuzz", type=int, default=10000, help="GPU fuzz cases")
    ap.add_argument("--large", type=int, help="elements of the largest array "
                    "(default 2**32 + 7; quick 2**22 + 7)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--no-sanitize", action="store_true")
    ap.add_argument("--sanitize-args", default="-m 'not gpu and not nvrtc' tests/",
                    help="the pytest selection run under ASan + UBSan")
    ap.add_argument("--only", help="comma-separated sections: bad,cache,concurrency,large,"
                    "sanitize,fuzz")
    args = ap.parse_args(argv)
    quick = args.quick
    out = args.out or Path(tempfile.mkdtemp(prefix="stridewise-reliability-"))
    out.mkdir(parents=True, exist_ok=True)
    gpu = torch is not None and torch.cuda.is_available()
    only = set(args.only.split(",")) if args.only else None

    def want(section):
        return only is None or section in only
    print(f"stridewise reliability ({'quick' if quick else 'full'}; "
          f"{'GPU' if gpu else 'no GPU'}; {os.cpu_count()} cores)")
    if want("bad"):
        bad_inputs()
    if want("cache"):
        cache_faults(quick)
    if want("concurrency"):
        concurrency(quick)
    if want("large"):
        largest(args.large or ((1 << 22) + 7 if quick else (1 << 32) + 7))
    if want("sanitize") and not quick and not args.no_sanitize:
        import shlex
        sanitizers(out, shlex.split(args.sanitize_args), gpu)
    if want("fuzz"):
        if quick:
            fuzz_cpu(args.fuzz or 1000, args.seed, ops=["add", "remainder"],
                     dtypes=["float32"], simple=True)
        else:
            fuzz_cpu(args.fuzz or 100_000, args.seed)
            if gpu:
                fuzz_torch(args.gpu_fuzz, args.seed)
    failed = [r for r in ROWS if r["held"] != r["tried"]]
    table = _table()
    print(table)
    (out / "reliability.txt").write_text(table + "\n")
    (out / "reliability.json").write_text(json.dumps(ROWS, indent=1))
    print(f"written to {out}")
    return 1 if failed else 0


def _table() -> str:
    lines = [f"{'section':14} {'what':36} {'held/tried':>14}  detail", "-" * 100]
    for r in ROWS:
        held = f"{r['held']}/{r['tried']}"
        lines.append(f"{r['section']:14} {r['what']:36} {held:>14}  {r['detail'][:160]}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
