"""Reliability figures in one table: bad input, cache faults, concurrency, size, sanitizers, fuzz.

    python tools/reliability.py [--quick] [--out DIR] [--fuzz N] [--gpu-fuzz N] [--large N]
                                [--seed S] [--no-sanitize] [--sanitize-args "PYTEST ARGS"]
                                [--only SECTIONS]
    python tools/reliability.py --table CPU/reliability.json GPU/reliability.json

Sections (each row: tried, held, detail):
  bad input      classes of wrong arguments: each must raise a clear error (TypeError,
                 ValueError or RuntimeError naming a fix) and leave a sentinel `out` untouched
  cache faults   an entry truncated, garbage, wrong-architecture, a directory, a symlink, a
                 foreign library, swapped, owned by someone else; the cache cleared mid-call,
                 read-only, writable by others: each must be survived in a new process (right
                 results, the entry rebuilt once, no foreign code run)
  concurrency    threads and processes asking for one cold kernel: compiles per kernel
  largest array  one int8 remainder with a broadcast divisor row over N elements (default
                 2**32 + 7, where memory allows: 2N bytes + 2 GiB), CPU and GPU, checked
                 everywhere chunk by chunk and at sampled indices from a formula
  sanitizers     ASan + UBSan over the CPU suite (tools/sanitize_cpu.py); on a GPU host,
                 compute-sanitizer memcheck and racecheck over tools/sanitize_modes.py
  fuzz           tools/fuzz.py: random kernel keys (op, dtypes, ranks, layouts, broadcasts,
                 out=) and many random cases per key, bit for bit: NumPy arrays against NumPy
                 (default 10^5 cases); on a GPU host torch CUDA tensors against torch and CuPy
                 arrays against NumPy (--gpu-fuzz each, default 10^4)
--quick is the bounded slice CI runs (tests/test_reliability.py): about a minute on 2 cores.
Rows that need a GPU print as skipped elsewhere; on a GPU host (each a few minutes):
    python3 setup.py -q build_ext --inplace
    python3 tools/reliability.py --only fuzz --fuzz 0 --out DIR1       # torch, CuPy: 10^4 each
    python3 tools/reliability.py --only large --out DIR2                # 2^32 + 7, CPU and GPU
    python3 tools/reliability.py --only sanitize --sanitize-args "" --out DIR3  # GPU's only
--table merges recorded runs into one table (a later run's row replaces a skipped one).
The table goes to stdout and, with --out, to DIR/reliability.txt and DIR/reliability.json.
Exit status 1 when any row did not hold.
"""
from __future__ import annotations

import argparse
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
from stridewise import cache as _cache  # noqa: E402
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
    print(f"  {mark} {section:14} {what:44} {held:>7}/{tried:<7} {detail}", flush=True)


# -- bad input ------------------------------------------------------------------------------
def _bad_cases():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    k = sw.ElementwiseKernel
    cases = {
        "too few arrays": lambda o: sw.add(a, out=o),
        "a string argument": lambda o: sw.add(a, "x", out=o),
        "None argument": lambda o: sw.add(a, None, out=o),
        "a ragged list": lambda o: sw.add(a, [[1, 2, 3, 4], [1]], out=o),
        "a complex scalar": lambda o: sw.add(a, 1j, out=o),
        "a long double array": lambda o: sw.add(np.ones((3, 4), np.longdouble), a, out=o),
        "object array": lambda o: sw.add(np.ones((3, 4), object), a, out=o),
        "string array": lambda o: sw.add(np.full((3, 4), "s"), a, out=o),
        "datetime array": lambda o: sw.add(np.zeros((3, 4), "M8[s]"), a, out=o),
        "complex array": lambda o: sw.add(np.ones((3, 4), np.complex64), a, out=o),
        "out of another shape": lambda o: sw.add(np.ones((3, 4), np.int8), a, out=o[:2]),
        # built-in ops buffer these two as NumPy does; user kernels refuse them
        "kernel: non-native byte order": lambda o: k("T x", "T y", "y = x", name="nb")(
            a.astype(">f4"), o),
        "kernel: misaligned buffer": lambda o: k("T x", "T y", "y = x", name="ma")(
            np.frombuffer(bytes(49), np.float32, 12, 1).reshape(3, 4), o),
        "masked array input": lambda o: sw.add(np.ma.array(a, mask=a > 3), a, out=o),
        "masked array out": lambda o: sw.add(a, a, out=np.ma.array(o)),
        "shapes that do not broadcast": lambda o: sw.add(a, np.ones(5, np.float32), out=o),
        "out of the wrong shape": lambda o: sw.add(a, a, out=o.reshape(4, 3)),
        "read-only out": lambda o: sw.add(a, a, out=_readonly(o)),
        "out of a lossy dtype": lambda o: sw.add(a.astype(np.float64), a,
                                                 out=np.zeros((3, 4), np.int32)),
        "in-place that would expand": lambda o: sw.remainder_(np.ones((1, 4), np.float32), a),
        "a number as out": lambda o: sw.add(a, a, out=1.0),
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
            # built-in ops resolve the lazy bits as torch does; user kernels refuse them
            "torch: negative bit (c.conj().imag), kernel": lambda o: k(
                "T x", "T y", "y = x", name="nn")(c.conj().imag, _t(o)),
            "torch: negative-bit out, kernel": lambda o: k("T x", "T y", "y = x", name="no")(
                t, torch._neg_view(_t(o))),
            "torch: conjugate bit, kernel": lambda o: k("T x", "T y", "y = x", name="cj")(
                c.conj()),
            "torch: sparse tensor": lambda o: sw.add(t.to_sparse(), t, out=_t(o)),
            "torch: nested tensor": lambda o: sw.add(_nested(), 1.0),
            "torch: quantized tensor": lambda o: sw.add(
                torch.quantize_per_tensor(t, 0.1, 0, torch.qint8), t, out=_t(o)),
            "torch: requires_grad input": lambda o: sw.add(t.clone().requires_grad_(), t,
                                                           out=_t(o)),
            "torch: meta tensor into a CPU out": lambda o: sw.add(t.to("meta"), 1.0, out=_t(o)),
            "torch: mixed with numpy": lambda o: sw.add(t, a, out=_t(o)),
            "torch: a list argument": lambda o: sw.add(t, [1.0, 2.0, 3.0, 4.0], out=_t(o)),
            "torch: out partly overlapping an input": lambda o: sw.add(
                _t(o)[:, 1:], t[:, :3], out=_t(o)[:, :3]),
            "torch: complex32 tensor": lambda o: sw.add(c.to(torch.complex32), c.to(torch.complex32)),
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
    from stridewise import cache as _cache
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
from stridewise import cache as _cache
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
LARGE_COLS = 4099      # odd: rows start at every alignment


def large_operands(n: int):
    """x: int8 of shape (rows, LARGE_COLS), rows * LARGE_COLS >= n, filled chunk by chunk from
    its flat index (x = (i * 2654435761) >> 13, wrapped); b: one int8 row of divisors with
    every value -128..127 in it (0, -1 and -128 included), broadcast over the rows."""
    rows = -(-n // LARGE_COLS)
    x = np.empty((rows, LARGE_COLS), np.int8)
    flat = x.reshape(-1)
    step = 1 << 26
    for i in range(0, flat.size, step):
        idx = np.arange(i, min(i + step, flat.size), dtype=np.uint64)
        flat[i:i + step] = ((idx * np.uint64(2654435761)) >> np.uint64(13)).astype(np.int8)
    b = (np.arange(LARGE_COLS) % 256 - 128).astype(np.int8)
    return x, b


def large_value(i: int) -> int:
    """x's flat element i from its formula alone (the sampled oracle)."""
    v = ((i * 2654435761) % (1 << 64)) >> 13 & 0xFF
    return v - 256 if v >= 128 else v


def check_large(x: np.ndarray, b: np.ndarray, got: np.ndarray) -> tuple[bool, str]:
    """got == np.remainder(x, b) everywhere, chunk by chunk (bounded memory), and at sampled
    flat indices around 2^31 and 2^32 against Python's own % on the formula's values."""
    flat, gflat = x.reshape(-1), got.reshape(-1)
    ok = got.shape == x.shape and got.dtype == np.int8
    rows = 1 << 14
    with np.errstate(all="ignore"):
        for r in range(0, x.shape[0], rows):
            ok = ok and np.array_equal(got[r:r + rows], np.remainder(x[r:r + rows], b))
    n = flat.size
    sample = sorted({i for c in (0, 1 << 31, 1 << 32, n - 1) for i in range(c - 3, c + 4)
                     if 0 <= i < n})
    for i in sample:
        xi, bi = large_value(i), int(b[i % LARGE_COLS])
        want = 0 if bi == 0 else xi % bi                  # Python's %: the divisor's sign
        ok = ok and int(flat[i]) == xi and int(gflat[i]) == want
    return bool(ok), f"{len(sample)} sampled indices up to {sample[-1]}"


def largest(n: int, gpu: bool | None) -> None:
    """sw.remainder(x, b) over n int8 elements with a broadcast divisor row, on the CPU and,
    on a GPU host, on torch CUDA tensors: exact everywhere (bounded-memory oracle). gpu None:
    no GPU row at all (the CI slice)."""
    need = 2 * n + (2 << 30)
    avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    what = f"{n} int8 remainder, bcast row"
    if need > avail:
        row("largest array", f"CPU: {what}", 0, 0,
            f"skipped: needs {need / 2**30:.1f} GiB, {avail / 2**30:.1f} GiB available")
        return
    x, b = large_operands(n)
    size = f"{x.size} elements {x.shape}" if x.size < 2**32 else \
        f"{x.size} = 2^32 + {x.size - 2**32} elements {x.shape}"
    t0 = time.perf_counter()
    got = sw.remainder(x, b)
    secs = time.perf_counter() - t0
    ok, how = check_large(x, b, got)
    row("largest array", f"CPU: {what}", 1, int(ok), f"{size}; {secs:.2f} s; all checked + {how}")
    del got
    if gpu is None:
        return
    if not gpu:
        row("largest array", f"GPU: {what}", 0, 0, f"skipped: no CUDA GPU; on one: {GPU_COMMAND}")
        return
    xt, bt = torch.from_numpy(x).cuda(), torch.from_numpy(b).cuda()
    sw.remainder(xt[:2], bt)                    # compile outside the timing
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    gt = sw.remainder(xt, bt)
    torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    del xt
    ok, how = check_large(x, b, gt.cpu().numpy())
    row("largest array", f"GPU: {what}", 1, int(ok), f"{size}; {secs:.3f} s; all checked + {how}")


# -- sanitizers -----------------------------------------------------------------------------
def sanitizers(out: Path, pytest_args: list[str], gpu: bool) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    import sanitize_cpu

    if pytest_args:              # an empty selection: the GPU's sanitizers only
        r = sanitize_cpu.run(pytest_args, out / "sanitize-cpu")
        fired = r["control"]["fired"]
        row("sanitizers", "ASan (CPU suite)", 1, int(r["asan"] == 0 and fired),
            f"{r['asan']} errors; {r['pytest']}; control fired: {fired}")
        row("sanitizers", "UBSan (CPU suite)", 1, int(r["ubsan"] == 0 and fired),
            f"{r['ubsan']} errors; selection: {' '.join(pytest_args)}")
    if not gpu:
        for tool in ("memcheck", "racecheck"):
            row("sanitizers", f"compute-sanitizer {tool} (GPU)", 0, 0,
                f"skipped: no CUDA GPU; on one: {GPU_COMMAND}")
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
def fuzz_rows(n: int, seed: int, gpu_n: int, gpu: bool | None, per_key: int = 1000) -> None:
    """tools/fuzz.py: n cases against NumPy on the CPU; on a GPU host gpu_n more with torch
    CUDA tensors (against torch) and gpu_n with CuPy arrays (against NumPy). gpu None: no
    GPU rows at all (the CI slice)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import fuzz

    def add(what, r):
        first = r["failures"][0].replace("\n", " ") if r["failures"] else ""
        row("fuzz", what, r["cases"], r["cases"] - r["mismatches"],
            fuzz.summary(r).split(": ", 1)[1] + (f"; first: {first}" if first else ""))
    if n > 0:
        add("CPU: NumPy arrays vs NumPy", fuzz.fuzz(n, seed, per_key))
    runs = [("torch", "GPU: torch CUDA vs torch"), ("cupy", "GPU: CuPy vs NumPy")]
    for lib, what in runs if gpu is not None else []:
        if not gpu:
            row("fuzz", what, 0, 0, f"skipped: no CUDA GPU; on one: {GPU_COMMAND}")
            continue
        try:
            runner = fuzz.runner_for(lib)
        except ImportError:
            row("fuzz", what, 0, 0, f"skipped: {lib} is not installed")
            continue
        add(what, fuzz.fuzz(gpu_n, seed, max(1, gpu_n // 50), runner=runner, lib=lib))


GPU_COMMAND = "tools/reliability.py --only fuzz|large|sanitize, see --help"


# -- the run --------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the bounded CI slice")
    ap.add_argument("--out", type=Path, help="write reliability.txt/.json (and logs) here")
    ap.add_argument("--fuzz", type=int, help="CPU fuzz cases (default 100000; quick 1000; "
                    "0: none)")
    ap.add_argument("--gpu-fuzz", type=int, default=10000,
                    help="GPU fuzz cases, each for torch and for CuPy")
    ap.add_argument("--large", type=int, help="elements of the largest array "
                    "(default 2**32 + 7; quick 2**22 + 7)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--no-sanitize", action="store_true")
    ap.add_argument("--sanitize-args", default="-m 'not gpu and not nvrtc' tests/",
                    help="the pytest selection run under ASan + UBSan (\"\": none)")
    ap.add_argument("--only", help="comma-separated sections: bad,cache,concurrency,large,"
                    "sanitize,fuzz")
    ap.add_argument("--table", nargs="+", type=Path, metavar="JSON",
                    help="run nothing: print one table from recorded reliability.json files "
                    "(a later file's row replaces an earlier skipped one: CPU run, then GPU run)")
    args = ap.parse_args(argv)
    if args.table:
        print(merged_table(args.table))
        return 0
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
        largest(args.large or ((1 << 22) + 7 if quick else (1 << 32) + 7), None if quick else gpu)
    if want("sanitize") and not quick and not args.no_sanitize:
        import shlex
        sanitizers(out, shlex.split(args.sanitize_args), gpu)
    if want("fuzz"):
        if quick:
            fuzz_rows(args.fuzz or 1000, args.seed, 0, None, per_key=200)
        else:
            fuzz_rows(100_000 if args.fuzz is None else args.fuzz, args.seed, args.gpu_fuzz, gpu)
    failed = [r for r in ROWS if r["held"] != r["tried"]]
    table = _table()
    print(table)
    (out / "reliability.txt").write_text(table + "\n")
    (out / "reliability.json").write_text(json.dumps(ROWS, indent=1))
    print(f"written to {out}")
    return 1 if failed else 0


def merged_table(files: list) -> str:
    """One table from several runs' rows: each row's latest run where it ran (tried > 0),
    else its skipped row; in first-seen order."""
    merged: dict = {}
    for f in files:
        for r in json.loads(Path(f).read_text()):
            k = (r["section"], r["what"])
            if k not in merged or r["tried"] > 0:
                merged[k] = dict(r, detail=r["detail"] + (f" [{Path(f).parent.name}]"
                                                          if r["tried"] else ""))
    ROWS[:] = list(merged.values())
    return _table()


def _table() -> str:
    lines = [f"{'section':14} {'what':44} {'held/tried':>14}  detail", "-" * 110]
    for r in ROWS:
        held = f"{r['held']}/{r['tried']}"
        lines.append(f"{r['section']:14} {r['what']:44} {held:>14}  {r['detail'][:400]}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
